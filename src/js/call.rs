//! Calling user JS functions: sync values and promises alike, thrown values
//! becoming `Err`, never a panic.

use crate::prelude::*;
use js_sys::Function;
use wasm_bindgen::prelude::*;

/// Awaits a value if it is a thenable. The reference `await`s every hook
/// result; skipping the microtask for plain values keeps per-event cost down
/// and does not change the order of events.
pub use super::settle::settle;
use super::settle::{settle_until_abort, Settling};

/// Calls `f` with `this` and up to three arguments (now), then settles the
/// result; await it at once. For user code the run must not wait for once
/// `signal` aborts (hooks, a tool's `execute`, the stream function): still pending two
/// macrotasks after the abort, it settles as an `Operation aborted` error and
/// is left to itself (see [`settle_until_abort`]). Listeners are not called
/// this way: they are the app's own and are awaited, as in 1.4.0. A value
/// that is not a promise is not awaited.
pub fn call_until_abort(
    f: &Function,
    this: &JsValue,
    args: &[&JsValue],
    signal: &JsValue,
) -> Settling {
    match call_sync(f, this, args) {
        Ok(value) => settle_until_abort(value, signal),
        Err(e) => Settling::ready(Err(e)),
    }
}

/// Calls `f` without awaiting its result.
pub fn call_sync(f: &Function, this: &JsValue, args: &[&JsValue]) -> Result<JsValue, JsValue> {
    match args {
        [] => f.call0(this),
        [a] => f.call1(this, a),
        [a, b] => f.call2(this, a, b),
        [a, b, c] => f.call3(this, a, b, c),
        [a, b, c, d, ..] => f.call4(this, a, b, c, d),
    }
}

/// Reads an optional callback. `undefined`/`null` mean absent; anything else
/// that is not a function is a `TypeError` naming the option.
pub fn optional_fn(value: JsValue, option: &str) -> Result<Option<Function>, JsValue> {
    if super::view::is_nullish(&value) {
        Ok(None)
    } else if value.is_function() {
        Ok(Some(value.unchecked_into()))
    } else {
        Err(super::errors::type_error(&format_option(option)))
    }
}

fn format_option(option: &str) -> String {
    let mut s = String::with_capacity(option.len() + 24);
    s.push_str(option);
    s.push_str(" must be a function");
    s
}
