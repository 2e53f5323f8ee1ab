//! The one place futures are handed to the JS event loop.
//!
//! `future_to_promise` and `spawn_local` are generic: every future type given
//! to them compiles its own copy of the promise executor, the task wrapper and
//! (inlined) the future's whole state machine. Behind a `dyn Future` there is
//! one copy of each, and each entry point's future stays a function of its own.

use js_sys::{Array, Function, Promise};
use std::future::Future;
use std::pin::Pin;
use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/js/glue.js")]
extern "C" {
    /// `[promise, resolve, reject]`.
    pub fn deferred() -> Array;
}

pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + 'a>>;

/// A promise settled by `future`: resolved with `Ok`, rejected with `Err`.
#[inline(never)]
pub fn promise(future: BoxFuture<'static, Result<JsValue, JsValue>>) -> Promise {
    // As `future_to_promise` does (the future first runs in a microtask), but
    // through `spawn`'s one task type and without a Rust closure for the executor.
    let parts = deferred();
    let (resolve, reject) = (parts.get(1), parts.get(2));
    spawn(Box::pin(async move {
        let (settle, value) = match future.await {
            Ok(value) => (resolve, value),
            Err(error) => (reject, error),
        };
        let _ = settle
            .unchecked_ref::<Function>()
            .call1(&JsValue::UNDEFINED, &value);
    }));
    parts.get(0).unchecked_into()
}

/// Runs `future` to completion on the JS microtask queue.
#[inline(never)]
pub fn spawn(future: BoxFuture<'static, ()>) {
    wasm_bindgen_futures::spawn_local(future)
}
