//! Typed read-only views over JS objects.
//!
//! The loop reads a handful of fields (a message's `role`, a block's `type`, a
//! tool call's `id`/`name`/`arguments`, …) and nothing else, so messages and
//! results stay JS objects owned by JS. Each getter is a direct property read in
//! the generated glue: no string keys cross the boundary.

use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    /// Any JS value whose properties the loop reads. Every getter catches: a
    /// getter or Proxy trap that throws becomes an `Err`, never an exception
    /// unwinding through wasm (which would leave a run stuck mid-step).
    #[wasm_bindgen(js_name = Object)]
    pub type View;

    #[wasm_bindgen(method, getter, structural, catch)]
    pub fn role(this: &View) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, getter, structural, catch, js_name = type)]
    pub fn kind(this: &View) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, getter, structural, catch)]
    pub fn content(this: &View) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, getter, structural, catch)]
    pub fn id(this: &View) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, getter, structural, catch)]
    pub fn name(this: &View) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, getter, structural, catch)]
    pub fn arguments(this: &View) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, getter, structural, catch, js_name = argumentsError)]
    pub fn arguments_error(this: &View) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, getter, structural, catch, js_name = stopReason)]
    pub fn stop_reason(this: &View) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, getter, structural, catch, js_name = errorMessage)]
    pub fn error_message(this: &View) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, getter, structural, catch)]
    pub fn partial(this: &View) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, getter, structural, catch)]
    pub fn messages(this: &View) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, getter, structural, catch)]
    pub fn tools(this: &View) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, getter, structural, catch)]
    pub fn context(this: &View) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, getter, structural, catch)]
    pub fn model(this: &View) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, getter, structural, catch)]
    pub fn provider(this: &View) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, getter, structural, catch)]
    pub fn reasoning(this: &View) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, getter, structural, catch, js_name = thinkingLevel)]
    pub fn thinking_level(this: &View) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, getter, structural, catch)]
    pub fn parameters(this: &View) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, getter, structural, catch)]
    pub fn execute(this: &View) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, getter, structural, catch, js_name = prepareArguments)]
    pub fn prepare_arguments(this: &View) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, getter, structural, catch, js_name = executionMode)]
    pub fn execution_mode(this: &View) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, getter, structural, catch)]
    pub fn block(this: &View) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, getter, structural, catch)]
    pub fn reason(this: &View) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, getter, structural, catch)]
    pub fn terminate(this: &View) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, getter, structural, catch, js_name = isError)]
    pub fn is_error(this: &View) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, getter, structural, catch)]
    pub fn action(this: &View) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, getter, structural, catch)]
    pub fn done(this: &View) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, getter, structural, catch)]
    pub fn value(this: &View) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, getter, structural, catch)]
    pub fn result(this: &View) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, getter, structural, catch, js_name = toolsAdded)]
    pub fn tools_added(this: &View) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, getter, structural, catch, js_name = toolsRemoved)]
    pub fn tools_removed(this: &View) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, getter, structural, catch)]
    pub fn sections(this: &View) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, getter, structural, catch)]
    pub fn timestamp(this: &View) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, getter, structural, catch)]
    pub fn aborted(this: &View) -> Result<JsValue, JsValue>;
}

/// Views any JS value; reads on `undefined`/`null` must be guarded by the caller
/// (use [`field`] helpers below, which check first).
pub fn view(value: &JsValue) -> &View {
    value.unchecked_ref::<View>()
}

use super::values::{is_object_like, type_tag as type_tag_js};

/// True when `value` is an object or function whose properties can be read.
pub fn is_object(value: &JsValue) -> bool {
    is_object_like(value)
}

/// `value == null` (undefined or null), in one call.
pub fn is_nullish(value: &JsValue) -> bool {
    value.loose_eq(&JsValue::NULL)
}

/// What `typeof` (and `Array.isArray`) say about a value, in one call.
#[derive(PartialEq, Eq, Clone, Copy)]
pub enum TypeTag {
    Nullish,
    Bool,
    Number,
    String,
    Function,
    Symbol,
    BigInt,
    Array,
    Object,
}

pub fn type_tag(value: &JsValue) -> TypeTag {
    match type_tag_js(value) {
        0 => TypeTag::Nullish,
        1 => TypeTag::Bool,
        2 => TypeTag::Number,
        3 => TypeTag::String,
        4 => TypeTag::Function,
        5 => TypeTag::Symbol,
        6 => TypeTag::BigInt,
        7 => TypeTag::Array,
        _ => TypeTag::Object,
    }
}

/// `value?.field`: `undefined` for null/undefined; a throwing getter is an
/// `Err`. `read` is a function pointer, not a generic closure, so there is one
/// copy of this function instead of one per field read (smaller wasm).
pub fn field(
    value: &JsValue,
    read: fn(&View) -> Result<JsValue, JsValue>,
) -> Result<JsValue, JsValue> {
    if is_nullish(value) {
        Ok(JsValue::UNDEFINED)
    } else {
        read(view(value))
    }
}

/// `value === "literal"` without copying the JS string into Rust.
pub fn is_str(value: &JsValue, literal: &str) -> bool {
    value.as_string().is_some_and(|s| s == literal)
}
