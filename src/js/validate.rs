//! `validateToolArguments` (§4.4) at the boundary: the live schema object is
//! read once per schema (TypeBox marks kinds with hidden keys that a JSON copy
//! would lose), compiled in Rust, and cached; arguments are copied once per call.

use js_sys::WeakMap;
use std::cell::RefCell;
use wasm_bindgen::prelude::*;

use super::convert::{to_js, to_value};
use super::errors;
use super::glue;
use super::view::{self, view};
use crate::json::schema::{CompiledSchema, SchemaError};

/// Non-enumerable TypeBox markers that change coercion; copied as plain keys.
pub const HIDDEN_SCHEMA_KEYS: &[&str] = &["~kind", "~optional", "~readonly"];

thread_local! {
    /// Schema object → index into `COMPILED`.
    static CACHE: WeakMap = WeakMap::new();
    static COMPILED: RefCell<Vec<CompiledSchema>> = const { RefCell::new(Vec::new()) };
}

#[wasm_bindgen(module = "/src/js/glue.js")]
extern "C" {
    #[wasm_bindgen(js_name = hasLegacyTypeBoxKind)]
    fn has_legacy_kind(schema: &JsValue) -> bool;
}

fn compiled_index(schema: &JsValue) -> Result<u32, JsValue> {
    let cacheable = view::is_object(schema);
    if cacheable {
        let hit = CACHE.with(|c| c.get(schema.unchecked_ref()));
        if let Some(i) = hit.as_f64() {
            return Ok(i as u32);
        }
    }
    let value = to_value(schema, HIDDEN_SCHEMA_KEYS).map_err(|e| errors::error(&e.message()))?;
    let compiled =
        CompiledSchema::compile(&value).map_err(|SchemaError::Compile(m)| errors::error(&m))?;
    let index = COMPILED.with(|c| {
        let mut c = c.borrow_mut();
        c.push(compiled);
        (c.len() - 1) as u32
    });
    if cacheable {
        CACHE.with(|c| c.set(schema.unchecked_ref(), &JsValue::from(index)));
    }
    Ok(index)
}

/// Returns the validated (coerced, cloned) arguments, or throws the reference's error.
pub fn validate_tool_arguments(tool: &JsValue, tool_call: &JsValue) -> Result<JsValue, JsValue> {
    let name = view::get(tool, |t| t.name());
    let name = name.as_string().unwrap_or_default();
    let arguments_error = view(tool_call).arguments_error();
    if arguments_error.is_truthy() {
        let mut text = String::from("Invalid arguments for tool \"");
        text.push_str(&name);
        text.push_str("\": ");
        text.push_str(
            &js_sys::JsString::from(arguments_error)
                .as_string()
                .unwrap_or_default(),
        );
        return Err(errors::error(&text));
    }
    let original = view(tool_call).arguments();
    let args = to_value(&original, &[]).map_err(|e| errors::error(&e.message()))?;
    let schema = view(tool).parameters();
    let legacy = view::is_object(&schema) && has_legacy_kind(&schema);
    let index = compiled_index(&schema)?;
    let outcome = COMPILED.with(|c| {
        c.borrow()
            .get(index as usize)
            .map(|compiled| compiled.validate_arguments(args, legacy))
    });
    match outcome {
        Some(Ok(Ok(value))) => Ok(to_js(&value)),
        Some(Ok(Err(failure))) => {
            let mut text = String::from("Validation failed for tool \"");
            text.push_str(&name);
            text.push_str("\":\n");
            text.push_str(&failure.lines.join("\n"));
            text.push_str("\n\nReceived arguments:\n");
            let json = glue::json_stringify(&original, 2).unwrap_or(JsValue::UNDEFINED);
            text.push_str(
                &json
                    .as_string()
                    .unwrap_or_else(|| String::from("undefined")),
            );
            Err(errors::error(&text))
        }
        Some(Err(SchemaError::Compile(m))) => Err(errors::error(&m)),
        None => Err(errors::error("schema cache lost its entry")),
    }
}
