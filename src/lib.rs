//! pi-agent-wasm: the agent loop of `@earendil-works/pi-agent-core` 1.4.0 in Rust.
//!
//! The crate has two halves. Pure modules (`json`, `sse`, `transcript`, `queue`)
//! hold the parsing, validation and bookkeeping, with no JavaScript in sight, and
//! are tested natively. The rest drives JavaScript values: `js` is the binding
//! layer (views over JS objects, calling user functions, errors), `agent_loop` is
//! the stateless loop, `agent` the stateful `Agent`, `api` the exported loop
//! functions, `proxy` the built-in `streamProxy`, and `types` the TypeScript
//! declarations that ship in the package.

// Panic policy, enforced by clippy in `npm test`: no unwrap, expect, panic or
// unchecked indexing outside tests. A panic in wasm poisons the module for every
// agent on the page; bad input must become a JS error or an error result.
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing,
        clippy::unreachable,
        clippy::todo,
        clippy::unimplemented
    )
)]
// No std in the shipped wasm: std's panic machinery formats every panic
// message with `core::fmt` before any hook runs (1.3 kB gzip of the wasm);
// panic.rs is the panic handler instead. Native builds (tests, fuzzing) and
// the wasm test harness (feature `std`) link std.
#![no_std]
extern crate alloc;
#[cfg(any(not(target_arch = "wasm32"), feature = "std"))]
extern crate std;

mod float;
mod local;
mod prelude;

pub mod json;
pub mod queue;
pub mod sse;
pub mod transcript;

mod agent;
mod agent_loop;
pub mod api;
pub mod js;
#[cfg(all(target_arch = "wasm32", not(feature = "std")))]
mod panic;
mod proxy;
mod types;

// talc instead of std's dlmalloc: about 3 kB less gzipped wasm.
#[cfg(all(target_arch = "wasm32", not(target_feature = "atomics")))]
#[global_allocator]
static TALC: talc::wasm::WasmDynamicTalc = talc::wasm::new_wasm_dynamic_allocator();
