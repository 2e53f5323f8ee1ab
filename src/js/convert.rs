//! Conversion between JS values and the pure [`Value`], used only where Rust
//! must understand the data: tool arguments during validation, and schemas.

use crate::prelude::*;
use js_sys::{Array, Object, Reflect};
use wasm_bindgen::prelude::*;

use super::values::{self, own_keys};
use super::view::{type_tag, TypeTag};
use crate::json::schema::stack;
use crate::json::{Map, Value};

/// Nesting beyond this is treated as a cycle rather than risking the stack.
const MAX_DEPTH: u32 = 256;

/// Longer arrays are refused rather than walked (a sparse `[]` with a
/// `length` of 2³² − 1 would take minutes and the memory of its holes).
const MAX_ARRAY_LENGTH: u32 = 1 << 24;

/// Why a JS value has no JSON form.
pub enum ConvertError {
    /// A function or symbol, which `structuredClone` would also reject.
    NotCloneable(&'static str),
    /// Deeper than [`MAX_DEPTH`], which in practice means a cycle.
    TooDeep,
    /// Reading it threw (a getter, or a `Proxy` trap), as `structuredClone` would.
    Threw,
    /// An array longer than [`MAX_ARRAY_LENGTH`].
    TooLong,
    /// A bigint: no JSON form, so it fails as 1.4.0's error message for it does.
    BigInt,
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
            ConvertError::BigInt => String::from("Do not know how to serialize a BigInt"),
            ConvertError::TooLong => {
                String::from("Tool arguments hold an array too long to validate.")
            }
        }
    }
}

#[wasm_bindgen(module = "/src/js/validate.js")]
extern "C" {
    #[wasm_bindgen(js_name = isPlainObject, catch)]
    fn is_plain_object(object: &JsValue) -> Result<bool, JsValue>;
}

/// Copies a JS value. `hidden` names non-enumerable keys to copy as ordinary
/// keys (TypeBox marks schema kinds with a non-enumerable `~kind`).
pub fn to_value(value: &JsValue, hidden: &[&str]) -> Result<Value, ConvertError> {
    let _entry = stack::enter();
    let mut walk = Walk {
        hidden,
        exotic: None,
    };
    walk.convert(value, 0)
}

/// Copies tool arguments for validation, and says whether their JSON copy
/// misses something (`undefined`, an array hole, a `Date`, `Map`, `Set`, typed
/// array or other non-plain object, read as an object of its own enumerable
/// keys): then the arguments themselves, not the copy, are what `execute` gets.
pub fn to_value_exotic(value: &JsValue) -> Result<(Value, bool), ConvertError> {
    let _entry = stack::enter();
    let mut walk = Walk {
        hidden: &[],
        exotic: Some(value.is_undefined()),
    };
    let v = walk.convert(value, 0)?;
    Ok((v, walk.exotic == Some(true)))
}

struct Walk<'a> {
    hidden: &'a [&'a str],
    /// Tracked for arguments only: `Some(true)` once something JSON lacks is seen.
    exotic: Option<bool>,
}

impl Walk<'_> {
    fn mark(&mut self) {
        if self.exotic.is_some() {
            self.exotic = Some(true);
        }
    }

    fn convert(&mut self, value: &JsValue, depth: u32) -> Result<Value, ConvertError> {
        // The depth bound, and the stack's for unoptimised builds' larger frames.
        if depth > MAX_DEPTH || stack::exhausted() {
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
            TypeTag::BigInt => return Err(ConvertError::BigInt),
            TypeTag::Array | TypeTag::Object => {}
        }
        if tag == TypeTag::Array {
            let array: &Array = value.unchecked_ref();
            let len = array.length();
            if len > MAX_ARRAY_LENGTH {
                return Err(ConvertError::TooLong);
            }
            let mut out = Vec::with_capacity(len.min(1024) as usize);
            for i in 0..len {
                let item = array.get(i);
                if item.is_undefined() {
                    self.mark();
                }
                out.push(self.convert(&item, depth + 1)?);
            }
            return Ok(Value::Array(out));
        }
        if self.exotic.is_some() && !is_plain_object(value).map_err(|_| ConvertError::Threw)? {
            self.mark();
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
                self.mark();
                continue;
            }
            map.insert(name, self.convert(&item, depth + 1)?);
        }
        for key in self.hidden {
            if map.contains_key(key) {
                continue;
            }
            let item =
                Reflect::get(object, &JsValue::from_str(key)).map_err(|_| ConvertError::Threw)?;
            if !item.is_undefined() {
                map.insert(*key, self.convert(&item, depth + 1)?);
            }
        }
        Ok(Value::Object(map))
    }
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
