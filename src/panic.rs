//! The panic policy: nothing in this crate should panic on input from JS (bad
//! input becomes a JS error, an `isError` tool result or an error message). If
//! a panic happens anyway, the module is poisoned for every agent on the page,
//! so say so loudly, once, with what is known.

use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/panic.js")]
extern "C" {
    #[wasm_bindgen(js_name = reportPanic)]
    fn report_panic(message: &str);
}

thread_local! {
    static INSTALLED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Installs the hook once; called by every entry point (cheap after the first).
pub fn install() {
    if INSTALLED.with(|i| i.replace(true)) {
        return;
    }
    std::panic::set_hook(Box::new(|info| {
        let mut text = String::from("pi-agent-wasm: internal error (a bug; please report it): ");
        if let Some(s) = info.payload().downcast_ref::<&str>() {
            text.push_str(s);
        } else if let Some(s) = info.payload().downcast_ref::<String>() {
            text.push_str(s);
        }
        if let Some(location) = info.location() {
            text.push_str(" at ");
            text.push_str(location.file());
        }
        report_panic(&text);
    }));
}
