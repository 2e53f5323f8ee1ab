//! Typed read-only views over JS objects.
//!
//! The loop reads a handful of fields (a message's `role`, a block's `type`, a
//! tool call's `id`/`name`/`arguments`, …) and nothing else, so messages and
//! results stay JS objects owned by JS. Each getter is a direct property read in
//! the generated glue: no string keys cross the boundary.

use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    /// Any JS value whose properties the loop reads. Getters never throw into
    /// Rust unless marked `catch`: values come from `structural` property reads.
    #[wasm_bindgen(js_name = Object)]
    pub type View;

    #[wasm_bindgen(method, getter, structural)]
    pub fn role(this: &View) -> JsValue;
    #[wasm_bindgen(method, getter, structural, js_name = type)]
    pub fn kind(this: &View) -> JsValue;
    #[wasm_bindgen(method, getter, structural)]
    pub fn content(this: &View) -> JsValue;
    #[wasm_bindgen(method, getter, structural)]
    pub fn id(this: &View) -> JsValue;
    #[wasm_bindgen(method, getter, structural)]
    pub fn name(this: &View) -> JsValue;
    #[wasm_bindgen(method, getter, structural)]
    pub fn arguments(this: &View) -> JsValue;
    #[wasm_bindgen(method, getter, structural, js_name = argumentsError)]
    pub fn arguments_error(this: &View) -> JsValue;
    #[wasm_bindgen(method, getter, structural, js_name = stopReason)]
    pub fn stop_reason(this: &View) -> JsValue;
    #[wasm_bindgen(method, getter, structural, js_name = errorMessage)]
    pub fn error_message(this: &View) -> JsValue;
    #[wasm_bindgen(method, getter, structural)]
    pub fn partial(this: &View) -> JsValue;
    #[wasm_bindgen(method, getter, structural)]
    pub fn messages(this: &View) -> JsValue;
    #[wasm_bindgen(method, getter, structural)]
    pub fn tools(this: &View) -> JsValue;
    #[wasm_bindgen(method, getter, structural)]
    pub fn context(this: &View) -> JsValue;
    #[wasm_bindgen(method, getter, structural)]
    pub fn model(this: &View) -> JsValue;
    #[wasm_bindgen(method, getter, structural)]
    pub fn provider(this: &View) -> JsValue;
    #[wasm_bindgen(method, getter, structural)]
    pub fn reasoning(this: &View) -> JsValue;
    #[wasm_bindgen(method, getter, structural, js_name = thinkingLevel)]
    pub fn thinking_level(this: &View) -> JsValue;
    #[wasm_bindgen(method, getter, structural)]
    pub fn parameters(this: &View) -> JsValue;
    #[wasm_bindgen(method, getter, structural)]
    pub fn execute(this: &View) -> JsValue;
    #[wasm_bindgen(method, getter, structural, js_name = prepareArguments)]
    pub fn prepare_arguments(this: &View) -> JsValue;
    #[wasm_bindgen(method, getter, structural, js_name = executionMode)]
    pub fn execution_mode(this: &View) -> JsValue;
    #[wasm_bindgen(method, getter, structural)]
    pub fn block(this: &View) -> JsValue;
    #[wasm_bindgen(method, getter, structural)]
    pub fn reason(this: &View) -> JsValue;
    #[wasm_bindgen(method, getter, structural)]
    pub fn terminate(this: &View) -> JsValue;
    #[wasm_bindgen(method, getter, structural, js_name = isError)]
    pub fn is_error(this: &View) -> JsValue;
    #[wasm_bindgen(method, getter, structural)]
    pub fn action(this: &View) -> JsValue;
    #[wasm_bindgen(method, getter, structural)]
    pub fn done(this: &View) -> JsValue;
    #[wasm_bindgen(method, getter, structural)]
    pub fn value(this: &View) -> JsValue;
    #[wasm_bindgen(method, getter, structural)]
    pub fn result(this: &View) -> JsValue;
    #[wasm_bindgen(method, getter, structural, js_name = toolsAdded)]
    pub fn tools_added(this: &View) -> JsValue;
    #[wasm_bindgen(method, getter, structural, js_name = toolsRemoved)]
    pub fn tools_removed(this: &View) -> JsValue;
    #[wasm_bindgen(method, getter, structural)]
    pub fn sections(this: &View) -> JsValue;
    #[wasm_bindgen(method, getter, structural)]
    pub fn timestamp(this: &View) -> JsValue;
    #[wasm_bindgen(method, getter, structural)]
    pub fn aborted(this: &View) -> JsValue;
}

/// Views any JS value; reads on `undefined`/`null` must be guarded by the caller
/// (use [`field`] helpers below, which check first).
pub fn view(value: &JsValue) -> &View {
    value.unchecked_ref::<View>()
}

/// True when `value` is an object or function whose properties can be read.
pub fn is_object(value: &JsValue) -> bool {
    value.is_object() || value.is_function()
}

/// `value?.field`: `undefined` for null/undefined/primitives that have no such field.
pub fn get(value: &JsValue, read: impl FnOnce(&View) -> JsValue) -> JsValue {
    if value.is_undefined() || value.is_null() {
        JsValue::UNDEFINED
    } else {
        read(view(value))
    }
}

/// JS truthiness.
pub fn truthy(value: &JsValue) -> bool {
    value.is_truthy()
}

/// `value === "literal"` without copying the JS string into Rust.
pub fn is_str(value: &JsValue, literal: &str) -> bool {
    value.as_string().is_some_and(|s| s == literal)
}
