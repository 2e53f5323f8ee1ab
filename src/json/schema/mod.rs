//! Tool-argument validation and coercion: steps 3–7 of pi-ai 1.4.0's
//! `validateToolArguments` (contract §4.4), i.e. pi-ai's optional-null
//! normalisation, TypeBox 1.3.27's `Value.Convert`, pi-ai's JSON-Schema
//! coercion, and TypeBox's compiled `Check` / `Errors` with en_US messages.
//!
//! The schema is the tool's `parameters` converted to a [`Value`]. TypeBox 1.x
//! marks every schema node it builds with a non-enumerable `'~kind'` property;
//! the binding must copy it into the `Value` as an ordinary `"~kind"` key on
//! every nested schema object (`Value.Convert` dispatches on it, and only on
//! it). The legacy `Symbol.for("TypeBox.Kind")` test of step 6 is passed in as
//! a boolean.
//!
//! Known divergences from the reference are listed in the modules' docs:
//! regex features ([`pattern`]), formats ([`format`]), `Value.Convert` corner
//! cases ([`typebox`]), and these:
//! - property names found on `Object.prototype` (`toString`, `valueOf`, ...)
//!   count as absent; JS's `in` finds them on the prototype chain;
//! - `undefined` (not representable in [`Value`]) never occurs, so TypeBox's
//!   `~optional` marker is not needed;
//! - `$ref` resolution handles `#`, JSON pointers, `$id` and `$anchor` by
//!   exact text, without base-URI resolution; `$recursiveRef`/`$dynamicRef`
//!   resolve like `$ref`;
//! - a `null` where a sub-schema is expected does not throw;
//! - TypeBox `Refine` checks (`'~refine'`, functions) are not applied;
//! - recursion that uses more than 512 KiB of stack reports V8's
//!   `Maximum call stack size exceeded` (V8 goes deeper).

mod coerce;
mod format;
mod jsnum;
mod pattern;
mod typebox;
mod validate;

#[cfg(test)]
mod tests;

use crate::json::Value;

pub use jsnum::num_to_string;

/// A failed validation: the lines of the error message, each already laid out
/// as `"  - path: message"` (or the single line `Unknown validation error`).
#[derive(Clone, Debug, PartialEq)]
pub struct ValidationFailure {
    pub lines: Vec<String>,
}

/// An error thrown while validating other than a validation failure (schema
/// compile errors such as an invalid `pattern`, and the few runtime errors the
/// reference throws). The text is the JS error's `message`.
#[derive(Clone, Debug, PartialEq)]
pub enum SchemaError {
    Compile(String),
}

impl SchemaError {
    pub fn message(&self) -> &str {
        match self {
            SchemaError::Compile(m) => m,
        }
    }
}

/// Recursion guard by stack bytes used since the public entry point, so that
/// deep schemas or values end in an error instead of overflowing the (1 MiB on
/// wasm32) stack, whatever the frame sizes of the build.
pub(crate) mod stack {
    use std::cell::Cell;

    thread_local! {
        static BASE: Cell<usize> = const { Cell::new(0) };
    }
    const LIMIT: usize = 512 * 1024;

    fn here() -> usize {
        let marker = 0u8;
        std::hint::black_box(&marker) as *const u8 as usize
    }

    /// Marks the entry frame (if none is marked yet) until dropped.
    pub(crate) struct Entry(bool);

    pub(crate) fn enter() -> Entry {
        BASE.with(|b| {
            if b.get() == 0 {
                b.set(here());
                Entry(true)
            } else {
                Entry(false)
            }
        })
    }

    impl Drop for Entry {
        fn drop(&mut self) {
            if self.0 {
                BASE.with(|b| b.set(0));
            }
        }
    }

    /// True once the stack has grown more than the budget since the entry.
    pub(crate) fn exhausted() -> bool {
        BASE.with(|b| b.get() != 0 && b.get().abs_diff(here()) > LIMIT)
    }
}

/// `set.contains(c)` without pulling in `str`'s substring searcher.
pub(crate) fn one_of(set: &str, c: char) -> bool {
    set.chars().any(|x| x == c)
}

pub(crate) fn overflow() -> SchemaError {
    SchemaError::Compile("Maximum call stack size exceeded".into())
}

/// A schema checked once (TypeBox's `Compile`), reusable for every call of a tool.
#[derive(Clone, Debug)]
pub struct CompiledSchema {
    schema: Value,
    /// The compiled validator's shortcuts apply (no `unevaluated*` keywords).
    fast: bool,
}

/// `Compile(schema)`: fails like the reference for regexes V8 rejects and for
/// parameters that are not objects.
pub fn compile(schema: &Value) -> Result<CompiledSchema, SchemaError> {
    let bad = |what: String| {
        Err(SchemaError::Compile(format!(
            "Cannot use 'in' operator to search for 'type' in {what}"
        )))
    };
    match schema {
        Value::Object(_) | Value::Array(_) => {}
        Value::Bool(_) => {
            return Err(SchemaError::Compile(
                "Invalid value used as weak map key".into(),
            ))
        }
        Value::Null => return bad("null".into()),
        Value::Number(n) => return bad(num_to_string(*n)),
        Value::String(s) => return bad(s.clone()),
    }
    let _entry = stack::enter();
    validate::compile_check(schema).map_err(SchemaError::Compile)?;
    Ok(CompiledSchema {
        schema: schema.clone(),
        fast: !validate::has_unevaluated(schema),
    })
}

/// Steps 3–7 of §4.4 on already-cloned arguments: returns the coerced and
/// validated value, or the error lines (the binding formats
/// `Validation failed for tool "${name}":\n${lines.join("\n")}\n\nReceived arguments:\n${JSON.stringify(original, null, 2)}`).
pub fn validate_arguments(
    schema: &Value,
    args: Value,
    legacy_typebox_kind: bool,
) -> Result<Result<Value, ValidationFailure>, SchemaError> {
    compile(schema)?.validate_arguments(args, legacy_typebox_kind)
}

impl CompiledSchema {
    /// Same as the free function [`compile`].
    pub fn compile(schema: &Value) -> Result<CompiledSchema, SchemaError> {
        compile(schema)
    }

    /// The compiled validator's `Check`.
    fn check(&self, v: &Value) -> Result<bool, SchemaError> {
        let e = validate::Engine::new(&self.schema, None);
        let r = e.schema(
            &mut validate::Cx::new(false, self.fast),
            &validate::Path::Root,
            &self.schema,
            v,
        );
        if e.overflowed() {
            return Err(overflow());
        }
        Ok(r)
    }

    /// `Errors(value)` as pi-ai lays them out.
    fn errors(&self, v: &Value) -> Result<Vec<String>, SchemaError> {
        let e = validate::Engine::new(&self.schema, None);
        let mut cx = validate::Cx::new(true, false);
        e.schema(&mut cx, &validate::Path::Root, &self.schema, v);
        if e.overflowed() {
            return Err(overflow());
        }
        Ok(cx.into_errors())
    }

    /// See [`validate_arguments`].
    pub fn validate_arguments(
        &self,
        args: Value,
        legacy_typebox_kind: bool,
    ) -> Result<Result<Value, ValidationFailure>, SchemaError> {
        let _entry = stack::enter();
        let s = &self.schema;
        let mut args = args;
        coerce::normalize(&mut args, s, 0)?;
        typebox::convert_root(s, &mut args)?;
        if !legacy_typebox_kind {
            if matches!(args, Value::Object(_) | Value::Array(_)) {
                // Objects are coerced in place or replaced by a coerced copy,
                // which pi-ai assigns back into the same object.
                args = coerce::coerce(args, s, 0)?;
            } else {
                let coerced = coerce::coerce(args.clone(), s, 0)?;
                if !validate::strict_eq(&coerced, &args) {
                    // pi-ai returns here without reporting errors.
                    return Ok(Ok(if self.check(&coerced)? { coerced } else { args }));
                }
            }
        }
        if self.check(&args)? {
            return Ok(Ok(args));
        }
        let mut lines = self.errors(&args)?;
        if lines.is_empty() {
            lines.push("Unknown validation error".into());
        }
        Ok(Err(ValidationFailure { lines }))
    }
}
