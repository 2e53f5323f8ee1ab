//! The one place futures are handed to the JS event loop.
//!
//! `future_to_promise` and `spawn_local` are generic: every future type given
//! to them compiles its own copy of the promise executor, the task wrapper and
//! (inlined) the future's whole state machine. Behind a `dyn Future` there is
//! one copy of each, and each entry point's future stays a function of its own.

use js_sys::Promise;
use std::future::Future;
use std::pin::Pin;
use wasm_bindgen::JsValue;

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + 'a>>;

/// A promise settled by `future`: resolved with `Ok`, rejected with `Err`.
#[inline(never)]
pub fn promise(future: BoxFuture<'static, Result<JsValue, JsValue>>) -> Promise {
    wasm_bindgen_futures::future_to_promise(future)
}

/// Runs `future` to completion on the JS microtask queue.
#[inline(never)]
pub fn spawn(future: BoxFuture<'static, ()>) {
    wasm_bindgen_futures::spawn_local(future)
}
