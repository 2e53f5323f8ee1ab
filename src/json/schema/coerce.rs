//! pi-ai's own passes around TypeBox: `normalizeOptionalNulls` (step 3 of
//! `validateToolArguments`) and `coerceWithJsonSchema` (its step 6), which use per-sub-schema
//! compiled validators (`getSubSchemaValidator`).

use super::host::Host;
use super::jsnum::js_trim;
use super::validate::{compile_check, has_unevaluated, Cx, Engine, Path};
use super::{bool_str, overflow, SchemaError};
use crate::json::Value;
use crate::prelude::*;

type Res<T> = Result<T, SchemaError>;

const MAX_DEPTH: u32 = 4096;

/// `getSubSchemaValidator(s)?.Check(v)`: None when no validator exists (the
/// schema is not an object, so the WeakMap cache rejects it, or it does not
/// compile).
pub(crate) fn sub_check(h: &dyn Host, s: &Value, v: &Value) -> Res<Option<bool>> {
    if !matches!(s, Value::Object(_) | Value::Array(_)) || compile_check(s, h).is_err() {
        return Ok(None);
    }
    let e = Engine::new(s, None, h);
    let r = e.schema(
        &mut Cx::new(false, !has_unevaluated(s), h),
        &Path::Root,
        s,
        v,
    );
    if e.overflowed() {
        return Err(overflow());
    }
    Ok(Some(r))
}

fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => *n != 0.0 && !n.is_nan(),
        Value::String(s) => !s.is_empty(),
        _ => true,
    }
}

/// `normalizeOptionalNulls`: drops `null` values of optional properties whose
/// schema rejects `null`; sets `changed` when it drops one.
pub(crate) fn normalize(
    h: &dyn Host,
    v: &mut Value,
    s: &Value,
    depth: u32,
    changed: &mut bool,
) -> Res<()> {
    if depth > MAX_DEPTH || super::stack::exhausted() {
        return Err(overflow());
    }
    match v {
        Value::Array(items) => match s.get("items") {
            Some(Value::Array(list)) => {
                for (x, t) in items.iter_mut().zip(list) {
                    if truthy(t) {
                        normalize(h, x, t, depth + 1, changed)?;
                    }
                }
            }
            Some(t) if truthy(t) => {
                for x in items {
                    normalize(h, x, t, depth + 1, changed)?;
                }
            }
            _ => {}
        },
        Value::Object(o) => {
            let props = match s.get("properties") {
                Some(Value::Object(p)) => p,
                _ => return Ok(()),
            };
            let required = match s.get("required") {
                Some(Value::Array(r)) => r.as_slice(),
                _ => &[],
            };
            for (k, ps) in props.iter() {
                let drop = match o.get(k) {
                    None => continue,
                    Some(Value::Null) => {
                        !required.iter().any(|r| r.as_str() == Some(k.as_str()))
                            && !matches!(ps.get("$ref"), Some(Value::String(_)))
                            && sub_check(h, ps, &Value::Null)? == Some(false)
                    }
                    Some(_) => false,
                };
                if drop {
                    o.remove(k);
                    *changed = true;
                } else if let Some(x) = o.get_mut(k) {
                    normalize(h, x, ps, depth + 1, changed)?;
                }
            }
        }
        _ => {}
    }
    Ok(())
}

fn types(s: &Value) -> Vec<&str> {
    match s.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(l)) => l.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

fn matches_type(v: &Value, t: &str) -> bool {
    match t {
        "number" => matches!(v, Value::Number(_)),
        "integer" => v
            .as_f64()
            .is_some_and(|n| n.is_finite() && crate::float::fract(n) == 0.0),
        "boolean" => matches!(v, Value::Bool(_)),
        "string" => matches!(v, Value::String(_)),
        "null" => v.is_null(),
        "array" => matches!(v, Value::Array(_)),
        "object" => matches!(v, Value::Object(_)),
        _ => false,
    }
}

/// `coercePrimitiveByType`: Some(new value) when it changes `v` (always to another type).
fn coerce_primitive(h: &dyn Host, v: &Value, t: &str) -> Option<Value> {
    let numeric = |integer: bool| match v {
        Value::Null => Some(Value::Number(0.0)),
        Value::String(s) if !js_trim(s).is_empty() => {
            let n = h.string_to_number(s);
            let ok = if integer {
                n.is_finite() && crate::float::fract(n) == 0.0
            } else {
                n.is_finite()
            };
            ok.then_some(Value::Number(n))
        }
        Value::Bool(b) => Some(Value::Number(if *b { 1.0 } else { 0.0 })),
        _ => None,
    };
    match t {
        "number" => numeric(false),
        "integer" => numeric(true),
        "boolean" => match v {
            Value::Null => Some(Value::Bool(false)),
            Value::String(s) if s == "true" => Some(Value::Bool(true)),
            Value::String(s) if s == "false" => Some(Value::Bool(false)),
            Value::Number(n) if *n == 1.0 => Some(Value::Bool(true)),
            Value::Number(n) if *n == 0.0 => Some(Value::Bool(false)),
            _ => None,
        },
        "string" => match v {
            Value::Null => Some(Value::String(String::new())),
            Value::Number(n) => Some(Value::String(h.number_to_string(*n))),
            Value::Bool(b) => Some(Value::String(bool_str(*b).into())),
            _ => None,
        },
        "null" => match v {
            Value::String(s) if s.is_empty() => Some(Value::Null),
            Value::Number(n) if *n == 0.0 => Some(Value::Null),
            Value::Bool(false) => Some(Value::Null),
            _ => None,
        },
        _ => None,
    }
}

/// `coerceWithJsonSchema`, by value (objects are rebuilt in place); sets
/// `changed` when the result may differ from `v` (it is left alone only when
/// the result is `v` unchanged).
pub(crate) fn coerce(
    h: &dyn Host,
    v: Value,
    s: &Value,
    depth: u32,
    changed: &mut bool,
) -> Res<Value> {
    if depth > MAX_DEPTH || super::stack::exhausted() {
        return Err(overflow());
    }
    let d = depth + 1;
    let mut v = v;
    if let Some(Value::Array(all)) = s.get("allOf") {
        for m in all {
            v = coerce(h, v, m, d, changed)?;
        }
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(members)) = s.get(key) {
            v = union(h, v, members, d, changed)?;
        }
    }
    let ts = types(s);
    let matches = ts.len() > 1 && ts.iter().any(|t| matches_type(&v, t));
    if !ts.is_empty() && !matches {
        if let Some(c) = ts.iter().find_map(|t| coerce_primitive(h, &v, t)) {
            v = c;
            *changed = true;
        }
    }
    if ts.contains(&"object") {
        if let Value::Object(o) = &mut v {
            if let Some(Value::Object(props)) = s.get("properties") {
                for (k, ps) in props.iter() {
                    if let Some(x) = o.get_mut(k) {
                        *x = coerce(h, core::mem::replace(x, Value::Null), ps, d, changed)?;
                    }
                }
            }
            if let Some(ap @ (Value::Object(_) | Value::Array(_))) = s.get("additionalProperties") {
                let known = |k: &str| matches!(s.get("properties"), Some(Value::Object(p)) if p.contains_key(k));
                for (k, x) in o.iter_mut() {
                    if !known(k) {
                        *x = coerce(h, core::mem::replace(x, Value::Null), ap, d, changed)?;
                    }
                }
            }
        }
    }
    if ts.contains(&"array") {
        if let Value::Array(a) = &mut v {
            match s.get("items") {
                Some(Value::Array(list)) => {
                    for (x, t) in a.iter_mut().zip(list) {
                        if truthy(t) {
                            *x = coerce(h, core::mem::replace(x, Value::Null), t, d, changed)?;
                        }
                    }
                }
                Some(t @ Value::Object(_)) => {
                    for x in a.iter_mut() {
                        *x = coerce(h, core::mem::replace(x, Value::Null), t, d, changed)?;
                    }
                }
                _ => {}
            }
        }
    }
    Ok(v)
}

/// `coerceWithUnionSchema`.
fn union(h: &dyn Host, v: Value, members: &[Value], d: u32, changed: &mut bool) -> Res<Value> {
    for m in members {
        if sub_check(h, m, &v)? == Some(true) {
            return Ok(v);
        }
    }
    for m in members {
        let mut coerced = false;
        let c = coerce(h, v.clone(), m, d, &mut coerced)?;
        if sub_check(h, m, &c)? == Some(true) {
            *changed |= coerced;
            return Ok(c);
        }
    }
    Ok(v)
}
