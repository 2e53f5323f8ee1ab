//! Conversion between JS values and the pure [`Value`], used only where Rust
//! must understand the data: tool arguments during validation, and schemas.

use js_sys::{Array, Object, Reflect};
use wasm_bindgen::prelude::*;

use super::values::{self, own_keys};
use super::view::{type_tag, TypeTag};
use crate::json::{Map, Value};

/// Nesting beyond this is treated as a cycle rather than risking the stack.
const MAX_DEPTH: u32 = 256;

/// Why a JS value has no JSON form.
pub enum ConvertError {
    /// A function, symbol or bigint, which `structuredClone` would also reject.
    NotCloneable(&'static str),
    /// Deeper than [`MAX_DEPTH`], which in practice means a cycle.
    TooDeep,
    /// Reading it threw (a getter, or a `Proxy` trap), as `structuredClone` would.
    Threw,
}

impl ConvertError {
    pub fn message(&self) -> String {
        match self {
            ConvertError::NotCloneable(what) => {
                let mut s = String::from(*what);
                s.push_str(" could not be cloned.");
                s
            }
            ConvertError::Threw => String::from("#<Object> could not be cloned."),
            ConvertError::TooDeep => {
                String::from("Tool arguments are nested too deeply (or cyclic).")
            }
        }
    }
}

/// Copies a JS value. `hidden` names non-enumerable keys to copy as ordinary
/// keys (TypeBox marks schema kinds with a non-enumerable `~kind`).
pub fn to_value(value: &JsValue, hidden: &[&str]) -> Result<Value, ConvertError> {
    convert(value, hidden, 0)
}

fn convert(value: &JsValue, hidden: &[&str], depth: u32) -> Result<Value, ConvertError> {
    if depth > MAX_DEPTH {
        return Err(ConvertError::TooDeep);
    }
    // One call to learn the type, then (for a scalar) one to read it.
    let tag = type_tag(value);
    match tag {
        TypeTag::Nullish => return Ok(Value::Null),
        TypeTag::Bool => return Ok(Value::Bool(value.is_truthy())),
        TypeTag::Number => return Ok(Value::Number(value.as_f64().unwrap_or(f64::NAN))),
        TypeTag::String => return Ok(Value::String(value.as_string().unwrap_or_default())),
        TypeTag::Function => return Err(ConvertError::NotCloneable("A function")),
        TypeTag::Symbol => return Err(ConvertError::NotCloneable("A symbol")),
        TypeTag::BigInt => return Err(ConvertError::NotCloneable("A bigint")),
        TypeTag::Array | TypeTag::Object => {}
    }
    if tag == TypeTag::Array {
        let array: &Array = value.unchecked_ref();
        let mut out = Vec::with_capacity(array.length() as usize);
        for item in array.iter() {
            out.push(convert(&item, hidden, depth + 1)?);
        }
        return Ok(Value::Array(out));
    }
    let object: &Object = value.unchecked_ref();
    let mut map = Map::new();
    let keys = own_keys(value).map_err(|_| ConvertError::Threw)?;
    for key in keys.iter() {
        let Some(name) = key.as_string() else {
            continue;
        };
        let item = Reflect::get(object, &key).map_err(|_| ConvertError::Threw)?;
        if item.is_undefined() {
            // JSON drops undefined members; validation treats them as absent.
            continue;
        }
        map.insert(name, convert(&item, hidden, depth + 1)?);
    }
    for key in hidden {
        if map.contains_key(key) {
            continue;
        }
        let item =
            Reflect::get(object, &JsValue::from_str(key)).map_err(|_| ConvertError::Threw)?;
        if !item.is_undefined() {
            map.insert(*key, convert(&item, hidden, depth + 1)?);
        }
    }
    Ok(Value::Object(map))
}

/// Builds fresh JS data from a [`Value`] (keys that look like `__proto__` stay data).
pub fn to_js(value: &Value) -> JsValue {
    match value {
        Value::Null => JsValue::NULL,
        Value::Bool(b) => JsValue::from_bool(*b),
        Value::Number(n) => JsValue::from_f64(*n),
        Value::String(s) => JsValue::from_str(s),
        Value::Array(items) => {
            let array = Array::new_with_length(items.len() as u32);
            for (i, item) in items.iter().enumerate() {
                array.set(i as u32, to_js(item));
            }
            array.into()
        }
        Value::Object(map) => {
            let object: JsValue = Object::new().into();
            for (key, item) in map.iter() {
                values::set_key(&object, key, &to_js(item));
            }
            object
        }
    }
}
