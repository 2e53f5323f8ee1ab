//! The panic policy: nothing in this crate should panic on input from JS (bad
//! input becomes a JS error, an `isError` tool result or an error message). If
//! a panic happens anyway, the module is poisoned for every agent on the page,
//! so say so loudly, with what is known, then trap (the call that panicked
//! throws a `WebAssembly.RuntimeError`).
//!
//! This is the shipped wasm's panic handler (the crate links no std there, see
//! lib.rs). It reads the message only when it is a plain string (formatting
//! one would link `core::fmt`); the location says where a formatted one (an
//! index out of bounds, a `RefCell` already borrowed) came from. It allocates
//! nothing: panic.js builds the text.

use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/panic.js")]
extern "C" {
    #[wasm_bindgen(js_name = reportPanic)]
    fn report_panic(message: &str, file: &str, line: u32, column: u32);
}

#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    let (file, line, column) = info
        .location()
        .map_or(("", 0, 0), |l| (l.file(), l.line(), l.column()));
    report_panic(info.message().as_str().unwrap_or(""), file, line, column);
    core::arch::wasm32::unreachable()
}
