//! Plain-value helpers in JS (src/js/values.js) that every part of the binding
//! layer uses: type tests, string conversion, own keys, the clock, array copies.

use crate::prelude::*;
use js_sys::Array;
use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/js/values.js")]
extern "C" {
    #[wasm_bindgen(js_name = isObjectLike)]
    pub(crate) fn is_object_like(value: &JsValue) -> bool;
    /// See view.rs `TypeTag`.
    #[wasm_bindgen(js_name = typeTag)]
    pub(crate) fn type_tag(value: &JsValue) -> u32;
    /// `signal?.aborted` as a boolean; a throwing getter reads as not aborted.
    #[wasm_bindgen(js_name = isAborted)]
    pub(crate) fn is_aborted(signal: &JsValue) -> bool;
    /// `error.message` of an `Error`, else `String(error)`.
    #[wasm_bindgen(js_name = errText, catch)]
    pub(crate) fn err_text(error: &JsValue) -> Result<JsValue, JsValue>;
    /// `{ ...object }`.
    #[wasm_bindgen(catch)]
    pub(crate) fn shallow(object: &JsValue) -> Result<JsValue, JsValue>;
    /// `performance.now()`.
    pub(crate) fn mono() -> f64;
    /// `value` itself when it is an array, else `Array.from(value)`.
    #[wasm_bindgen(js_name = toArray, catch)]
    pub(crate) fn to_array(value: &JsValue) -> Result<Array, JsValue>;
    /// Appends every element of `source` to `target`.
    #[wasm_bindgen(js_name = pushAll)]
    pub(crate) fn push_all(target: &Array, source: &Array);
    /// Own-property assignment that cannot reach a prototype.
    #[wasm_bindgen(js_name = setKey)]
    pub(crate) fn set_key(object: &JsValue, key: &str, value: &JsValue);
    #[wasm_bindgen(js_name = jsonStringify, catch)]
    pub(crate) fn json_stringify(value: &JsValue, indent: u32) -> Result<JsValue, JsValue>;
    /// `String(value)`; throws what a `toString` throws.
    #[wasm_bindgen(js_name = jsString, catch)]
    pub(crate) fn js_string(value: &JsValue) -> Result<String, JsValue>;
    /// `Object.keys(object)`.
    #[wasm_bindgen(js_name = ownKeys, catch)]
    pub(crate) fn own_keys(object: &JsValue) -> Result<Array, JsValue>;
}
