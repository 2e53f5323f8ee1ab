//! TypeBox 1.3.27 `Value.Convert(schema, args)` (step 4 of `validateToolArguments`). It only
//! acts on TypeBox-built nodes, recognised by the `~kind` marker the binding
//! copies from the live schema object. pi-ai ignores Convert's return value, so
//! at the root only in-place mutations count ([`convert_root`]).
//!
//! Approximations: `Intersect` converts through each `allOf` member in turn
//! (TypeBox evaluates the intersection first); `TemplateLiteral` converts like
//! `String`; `Enum` like a union of its literal values; `BigInt`, `Undefined`
//! and `Void` conversions are skipped (a JSON value cannot hold their results).

use super::host::Host;
use super::validate::{strict_eq, Cx, Engine, Path};
use super::{bool_str, cat, one_of, overflow, SchemaError};
use crate::json::num::parse_f64;
use crate::json::{Map, Value};
use crate::prelude::*;

type Res<T> = Result<T, SchemaError>;

const MAX_DEPTH: u32 = 4096;
const NONE: Value = Value::Null;

fn kind(s: &Value) -> Option<&str> {
    s.get("~kind").and_then(Value::as_str)
}

fn take(v: &mut Value) -> Value {
    core::mem::replace(v, Value::Null)
}

/// Whether [`convert_root`] may change anything: only a root TypeBox built does.
pub(crate) fn converts(s: &Value) -> bool {
    kind(s).is_some()
}

/// Applies `Value.Convert` to `v` with the root's return value discarded.
pub(crate) fn convert_root(h: &dyn Host, s: &Value, v: &mut Value) -> Res<()> {
    in_place(h, s, v, None, 0)
}

fn in_place(h: &dyn Host, s: &Value, v: &mut Value, defs: Option<&Map>, depth: u32) -> Res<()> {
    if depth > MAX_DEPTH || super::stack::exhausted() {
        return Err(overflow());
    }
    match kind(s) {
        // These mutate the given object or array and return it.
        Some("Object" | "Record" | "Tuple") => {
            let x = take(v);
            *v = from_type(h, s, x, defs, depth + 1)?;
        }
        // A new array is returned, but object elements are mutated in place.
        Some("Array") => {
            let items = s.get("items").unwrap_or(&NONE);
            match v {
                Value::Array(a) => {
                    for e in a {
                        in_place(h, items, e, defs, depth + 1)?;
                    }
                }
                other => in_place(h, items, other, defs, depth + 1)?,
            }
        }
        Some("Intersect") => {
            if let Some(Value::Array(all)) = s.get("allOf") {
                for m in all {
                    in_place(h, m, v, defs, depth + 1)?;
                }
            }
        }
        Some("Cyclic") => {
            let ctx = cyclic_context(s, defs);
            if let Some(t) = s
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| ctx.get(r))
            {
                in_place(h, t, v, Some(&ctx), depth + 1)?;
            }
        }
        Some("Ref") => {
            if let Some(t) = s
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| defs?.get(r))
            {
                in_place(h, t, v, defs, depth + 1)?;
            }
        }
        _ => {}
    }
    Ok(())
}

fn cyclic_context(s: &Value, defs: Option<&Map>) -> Map {
    let mut ctx = defs.cloned().unwrap_or_default();
    if let Some(Value::Object(d)) = s.get("$defs") {
        for (k, x) in d.iter() {
            ctx.insert(k.clone(), x.clone());
        }
    }
    ctx
}

/// `FromType`.
fn from_type(h: &dyn Host, s: &Value, v: Value, defs: Option<&Map>, depth: u32) -> Res<Value> {
    if depth > MAX_DEPTH || super::stack::exhausted() {
        return Err(overflow());
    }
    let d = depth + 1;
    Ok(match kind(s) {
        Some("Array") => {
            let items = s.get("items").unwrap_or(&NONE);
            let mut list = match v {
                Value::Array(a) => a,
                other => vec![other],
            };
            for x in list.iter_mut() {
                *x = from_type(h, items, take(x), defs, d)?;
            }
            Value::Array(list)
        }
        Some("Boolean") => try_boolean(&v).unwrap_or(v),
        Some("Cyclic") => {
            let ctx = cyclic_context(s, defs);
            match s
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| ctx.get(r))
            {
                Some(t) => from_type(h, t, v, Some(&ctx), d)?,
                None => v,
            }
        }
        Some("Enum") => match s.get("enum") {
            Some(Value::Array(opts)) => {
                if opts.iter().any(|o| strict_eq(o, &v)) {
                    v
                } else {
                    opts.iter().find_map(|o| literal(h, o, &v)).unwrap_or(v)
                }
            }
            _ => v,
        },
        Some("Integer") => try_number(h, &v).map_or(v, |n| Value::Number(crate::float::trunc(n))),
        Some("Intersect") => {
            let mut v = v;
            if let Some(Value::Array(all)) = s.get("allOf") {
                for m in all {
                    v = from_type(h, m, v, defs, d)?;
                }
            }
            v
        }
        Some("Literal") => match s.get("const") {
            Some(c) if !strict_eq(c, &v) => literal(h, c, &v).unwrap_or(v),
            _ => v,
        },
        Some("Null") => try_null(&v).unwrap_or(v),
        Some("Number") => try_number(h, &v).map_or(v, Value::Number),
        // Object and Record differ only in where the known keys come from.
        Some(k @ ("Object" | "Record")) => match v {
            Value::Object(mut o) => {
                let known = if k == "Object" {
                    "properties"
                } else {
                    "patternProperties"
                };
                let props = match s.get(known) {
                    Some(Value::Object(p)) => p.iter().map(|(k, x)| (k.as_str(), x)).collect(),
                    _ => Vec::new(),
                };
                let entries = matchers(h, &props)?;
                let keys: Vec<String> = o.keys().cloned().collect();
                for (m, ps) in &entries {
                    for k in keys.iter().filter(|k| m.test(h, k)) {
                        if let Some(x) = o.get_mut(k) {
                            *x = from_type(h, ps, take(x), defs, d)?;
                        }
                    }
                }
                additional(h, s, &entries, &mut o, defs, d)?;
                Value::Object(o)
            }
            other => other,
        },
        Some("Ref") => match s
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| defs?.get(r))
        {
            Some(t) => from_type(h, t, v, defs, d)?,
            None => v,
        },
        Some("String" | "TemplateLiteral") => try_string(h, &v).unwrap_or(v),
        Some("Tuple") => match (v, s.get("items")) {
            (Value::Array(mut a), Some(Value::Array(items))) => {
                for (x, t) in a.iter_mut().zip(items) {
                    *x = from_type(h, t, take(x), defs, d)?;
                }
                Value::Array(a)
            }
            (v, _) => v,
        },
        Some("Union") => match s.get("anyOf") {
            Some(Value::Array(members)) => {
                let mut matched = false;
                for m in members {
                    if check(h, m, &v, defs)? {
                        matched = true;
                        break;
                    }
                }
                if matched {
                    v
                } else {
                    let mut found = None;
                    let mut cands = Vec::new();
                    for m in members {
                        cands.push(from_type(h, m, v.clone(), defs, d)?);
                    }
                    for c in cands {
                        if check(h, s, &c, defs)? {
                            found = Some(c);
                            break;
                        }
                    }
                    found.unwrap_or(v)
                }
            }
            _ => v,
        },
        _ => v,
    })
}

/// `Value.Check(context, type, value)`: the dynamic engine rooted at `root`.
fn check(h: &dyn Host, root: &Value, v: &Value, defs: Option<&Map>) -> Res<bool> {
    let e = Engine::new(root, defs, h);
    let r = e.schema(&mut Cx::new(false, false, h), &Path::Root, root, v);
    if e.overflowed() {
        return Err(overflow());
    }
    Ok(r)
}

/// `FromAdditionalProperties`: for every known entry, each key that entry does
/// not match is converted by `additionalProperties` (TypeBox's loop, known
/// properties included when there are several).
fn additional(
    h: &dyn Host,
    s: &Value,
    entries: &[(Matcher, &Value)],
    o: &mut Map,
    defs: Option<&Map>,
    d: u32,
) -> Res<()> {
    let ap = match s.get("additionalProperties") {
        Some(ap @ (Value::Object(_) | Value::Array(_))) => ap,
        _ => return Ok(()),
    };
    let keys: Vec<String> = o.keys().cloned().collect();
    for (m, _) in entries {
        for k in keys.iter().filter(|k| !m.test(h, k)) {
            if let Some(x) = o.get_mut(k) {
                *x = from_type(h, ap, take(x), defs, d)?;
            }
        }
    }
    Ok(())
}

/// `new RegExp('^' + key + '$')` (no flags), with plain keys compared directly.
enum Matcher<'s> {
    Exact(&'s str),
    Re(String),
}

impl Matcher<'_> {
    fn test(&self, h: &dyn Host, k: &str) -> bool {
        match self {
            Matcher::Exact(e) => *e == k,
            Matcher::Re(src) => h.regex_test(src, "", k).unwrap_or(false),
        }
    }
}

fn matchers<'s>(
    h: &dyn Host,
    entries: &[(&'s str, &'s Value)],
) -> Res<Vec<(Matcher<'s>, &'s Value)>> {
    let mut out = Vec::new();
    for (k, s) in entries {
        let m = if k.chars().any(|c| one_of("\\^$.|?*+()[]{}", c)) {
            let src = cat(&["^", k, "$"]);
            h.regex_test(&src, "", "").map_err(SchemaError::Compile)?;
            Matcher::Re(src)
        } else {
            Matcher::Exact(k)
        };
        out.push((m, *s));
    }
    Ok(out)
}

/// `FromLiteral` for a value not already equal to `c`: the converted value if
/// it then equals the literal.
fn literal(h: &dyn Host, c: &Value, v: &Value) -> Option<Value> {
    let r = match c {
        Value::Bool(_) => try_boolean(v),
        Value::Number(_) => try_number(h, v).map(Value::Number),
        Value::String(_) => try_string(h, v),
        _ => None,
    }?;
    strict_eq(&r, c).then_some(r)
}

fn try_boolean(v: &Value) -> Option<Value> {
    Some(Value::Bool(match v {
        Value::Bool(b) => *b,
        Value::Number(n) if *n == 0.0 => false,
        Value::Number(n) if *n == 1.0 => true,
        Value::Null => false,
        Value::String(s) if s.eq_ignore_ascii_case("false") || s == "0" => false,
        Value::String(s) if s.eq_ignore_ascii_case("true") || s == "1" => true,
        _ => return None,
    }))
}

fn try_number(h: &dyn Host, v: &Value) -> Option<f64> {
    match v {
        Value::Bool(b) => Some(if *b { 1.0 } else { 0.0 }),
        Value::Number(n) if n.is_finite() => Some(*n),
        Value::Null => Some(0.0),
        Value::String(s) => {
            let n = h.string_to_number(s);
            if n.is_finite() {
                Some(n)
            } else if s.eq_ignore_ascii_case("false") {
                Some(0.0)
            } else if s.eq_ignore_ascii_case("true") {
                Some(1.0)
            } else {
                bigint_literal(s)
            }
        }
        _ => None,
    }
}

/// `/^-?(0|[1-9]\d*)n$/` within the safe-integer range.
fn bigint_literal(s: &str) -> Option<f64> {
    let body = s.strip_suffix('n')?;
    let digits = body.strip_prefix('-').unwrap_or(body);
    let ok = digits == "0"
        || (!digits.starts_with('0')
            && !digits.is_empty()
            && digits.bytes().all(|b| b.is_ascii_digit()));
    if !ok || digits.len() > 16 {
        return None;
    }
    let n = parse_f64(digits)?;
    (n <= 9007199254740991.0).then_some(if body.starts_with('-') && n != 0.0 {
        -n
    } else {
        n
    })
}

fn try_string(h: &dyn Host, v: &Value) -> Option<Value> {
    Some(Value::String(match v {
        Value::Bool(b) => bool_str(*b).into(),
        Value::Number(n) if n.is_finite() => h.number_to_string(*n),
        Value::Null => "null".into(),
        Value::String(s) => s.clone(),
        _ => return None,
    }))
}

fn try_null(v: &Value) -> Option<Value> {
    match v {
        Value::Bool(false) | Value::Null => Some(Value::Null),
        Value::Number(n) if *n == 0.0 => Some(Value::Null),
        Value::String(s)
            if s.is_empty()
                || s == "0"
                || s.eq_ignore_ascii_case("null")
                || s.eq_ignore_ascii_case("undefined") =>
        {
            Some(Value::Null)
        }
        _ => None,
    }
}
