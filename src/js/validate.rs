//! `validateToolArguments` at the boundary, in one call per tool call
//! (validate.js `validateToolArguments`, which also words its errors): the live
//! schema object is read once per schema (TypeBox marks kinds with hidden keys
//! that a JSON copy would lose), compiled in Rust, and cached; arguments are
//! copied once per call. Arguments that are plain JSON data, what a model's
//! stream produces, are copied in JS and cross as their JSON text: one string
//! instead of a call per member each way.
//!
//! The cache (in validate.js) maps each schema object to a JS function that owns its compiled
//! validator. The map is a `WeakMap` and the package is built with wasm-bindgen's
//! weak references, so a schema that is no longer used (an app that re-creates its
//! tools on every render) frees its validator with it.

use crate::prelude::*;
use js_sys::{Array, Function};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::prelude::*;

use super::convert::{to_js, to_value, to_value_exotic};
use super::errors;
use crate::json::schema::{CompiledSchema, Host, SchemaError};

/// The error of arguments that hold what JSON cannot carry and that the schema would coerce.
const UNCOERCIBLE: &str = "Tool arguments hold values JSON cannot carry (undefined, a Date, Map, Set or typed array) where the schema would coerce them.";

/// Non-enumerable TypeBox markers that change coercion; copied as plain keys.
pub const HIDDEN_SCHEMA_KEYS: &[&str] = &["~kind", "~optional", "~readonly"];

crate::local::local! {
    /// `compile(schema, cacheable)` for validate.js: the schema's validator function.
    static COMPILER: Function = Closure::<dyn Fn(JsValue, bool) -> Result<JsValue, JsValue>>::new(
        |schema: JsValue, cacheable: bool| compile(&schema, cacheable).map(JsValue::from),
    )
    .into_js_value()
    .unchecked_into();
}

#[wasm_bindgen(module = "/src/js/validate.js")]
extern "C" {
    /// `structuredClone(args)`, as 1.4.0 copies tool arguments (same errors).
    #[wasm_bindgen(js_name = cloneArguments, catch)]
    fn clone_arguments(args: &JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = hasLegacyTypeBoxKind, catch)]
    fn has_legacy_kind(schema: &JsValue) -> Result<bool, JsValue>;
    #[wasm_bindgen(js_name = regexTest)]
    fn regex_test(pattern: &str, flags: &str, text: &str) -> JsValue;
    #[wasm_bindgen(js_name = numberToString)]
    fn number_to_string(n: f64) -> String;
    #[wasm_bindgen(js_name = stringToNumber)]
    fn string_to_number(text: &str) -> f64;
    #[wasm_bindgen(js_name = urlCanParse)]
    fn url_can_parse(url: &str, base: Option<&str>) -> bool;
}

/// The validator's [`Host`]: the JavaScript engine's own `RegExp`, `String(n)`,
/// `Number(s)` and `URL.canParse`, so patterns and formats behave exactly as in
/// the reference and none of the Rust fallbacks are linked.
struct JsHost;

impl Host for JsHost {
    fn regex_test(&self, pattern: &str, flags: &str, text: &str) -> Result<bool, String> {
        let r = regex_test(pattern, flags, text);
        match r.as_bool() {
            Some(hit) => Ok(hit),
            None => Err(r.as_string().unwrap_or_default()),
        }
    }
    fn number_to_string(&self, n: f64) -> String {
        number_to_string(n)
    }
    fn string_to_number(&self, text: &str) -> f64 {
        string_to_number(text)
    }
    fn url_can_parse(&self, url: &str, base: Option<&str>) -> bool {
        url_can_parse(url, base)
    }
}

/// What a validator function returns: the coerced arguments (`undefined` when
/// they are the JSON text's data unchanged: JS holds a copy of it), or (thrown)
/// an array of error lines, or an `Error` for a schema the validator cannot use.
/// `legacy` (the schema carries TypeBox's old kind marker) is read once with the
/// schema: like the compiled rules, it is taken to stay as it was.
fn make_validator(compiled: CompiledSchema, legacy: bool) -> Function {
    let validate = move |args: JsValue, json: Option<String>| -> Result<JsValue, JsValue> {
        // Plain JSON data, what a model's stream produces, comes as JSON text, of a
        // copy JS made: 1.4.0's `structuredClone` would add nothing but its cost
        // (most of a tool call's in Chromium). Anything else is first copied as
        // 1.4.0 copies it, with its errors (a function, a symbol) and what the copy
        // keeps (a `Date`, a `Map`, `undefined`).
        // `input`: for arguments holding what JSON cannot carry, the data to
        // compare the coerced arguments with.
        let (args, value, input, from_text) =
            match json.as_deref().and_then(crate::json::text::parse) {
                Some(value) => (JsValue::UNDEFINED, value, None, true),
                // Not plain JSON data (or text that did not parse, which JS never
                // sends): whatever a walk of these arguments would read, they are
                // copied first.
                None => {
                    let args = clone_arguments(&args)?;
                    let (value, exotic) =
                        to_value_exotic(&args).map_err(|e| errors::error(&e.message()))?;
                    let input = exotic.then(|| value.clone());
                    (args, value, input, false)
                }
            };
        match compiled.validate_arguments_changed(value, legacy, &JsHost) {
            Ok(Ok((coerced, changed))) => match input {
                // Unchanged: JS's copy of the text (`undefined` says so).
                _ if from_text && !changed => Ok(JsValue::UNDEFINED),
                // Coerced text data, or a clone of plain data: built afresh.
                None => Ok(to_js(&coerced)),
                // Unchanged `undefined`, a `Date`, a `Map`...: the clone, what
                // 1.4.0 hands `execute`.
                Some(input) if !changed || input == coerced => Ok(args),
                // Otherwise coercion would change what the clone's JSON copy
                // cannot say faithfully.
                Some(_) => Err(errors::error(UNCOERCIBLE)),
            },
            Ok(Err(failure)) => Err(failure
                .lines
                .iter()
                .map(|l| JsValue::from_str(l))
                .collect::<Array>()
                .into()),
            Err(SchemaError::Compile(m)) => Err(errors::error(&m)),
        }
    };
    Closure::<dyn FnMut(JsValue, Option<String>) -> Result<JsValue, JsValue>>::new(validate)
        .into_js_value()
        .unchecked_into()
}

/// The validator of `schema`, read and compiled (validate.js caches it per
/// schema object, `cacheable`).
fn compile(schema: &JsValue, cacheable: bool) -> Result<Function, JsValue> {
    let value = to_value(schema, HIDDEN_SCHEMA_KEYS).map_err(|e| errors::error(&e.message()))?;
    let compiled = CompiledSchema::compile_with(&value, &JsHost)
        .map_err(|SchemaError::Compile(m)| errors::error(&m))?;
    let legacy = cacheable && has_legacy_kind(schema)?;
    Ok(make_validator(compiled, legacy))
}

/// `compile(schema, cacheable)` for validate.js `validateToolArguments`, which
/// returns the validated (coerced, cloned) arguments or throws the reference's
/// error, in the same call as the rest of a tool call's preparation (tools.js).
pub fn compiler() -> Function {
    COMPILER.with(Function::clone)
}
