//! Tool-argument validation and coercion: steps 3–7 of pi-ai 1.4.0's
//! `validateToolArguments`, i.e. pi-ai's optional-null
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
//! Regular expressions, number printing and parsing, and `URL.canParse` come
//! from a [`Host`]: the wasm binding passes one backed by the JavaScript engine
//! (exact V8 semantics, none of that code in the wasm), native code and tests
//! use [`RustHost`].
//!
//! Known divergences from the reference are listed in the modules' docs:
//! with [`RustHost`], regex features ([`pattern`]) and URL parsing
//! ([`format`]); formats ([`format`]), `Value.Convert` corner cases
//! ([`typebox`]), and these:
//! - property names found on `Object.prototype` (`toString`, `valueOf`, ...)
//!   count as absent; JS's `in` finds them on the prototype chain;
//! - `undefined` (not representable in [`Value`]) never occurs, so TypeBox's
//!   `~optional` marker is not needed;
//! - `$ref` resolution handles `#`, JSON pointers, `$id` and `$anchor` by
//!   exact text, without base-URI resolution; `$recursiveRef`/`$dynamicRef`
//!   resolve like `$ref`;
//! - a `null` where a sub-schema is expected does not throw;
//! - TypeBox `Refine` checks (`'~refine'`, functions) are not applied;
//! - recursion that uses more than 512 KiB of stack (a `$ref` cycle applied
//!   to deep arguments) fails with "Tool arguments are nested too deeply for
//!   the schema." (V8 goes deeper and then reports its own stack overflow).

use crate::prelude::*;
mod coerce;
mod format;
mod host;
mod jsnum;
mod pattern;
mod rust_host;
mod typebox;
mod validate;

#[cfg(test)]
mod tests;

use crate::json::Value;

pub use host::Host;
pub use jsnum::num_to_string;
pub use rust_host::RustHost;

/// A failed validation: the lines of the error message, each already laid out
/// as `"  - path: message"` (or the single line `Unknown validation error`).
#[derive(Clone, Debug, PartialEq)]
pub struct ValidationFailure {
    pub lines: Vec<String>,
}

impl ValidationFailure {
    /// `lines.join("\n")` (without instantiating `alloc`'s `join` for `String`).
    pub fn joined(&self) -> String {
        let mut s = String::new();
        for (i, l) in self.lines.iter().enumerate() {
            if i > 0 {
                s.push('\n');
            }
            s.push_str(l);
        }
        s
    }
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
    use core::cell::Cell;

    crate::local::local! {
        static BASE: Cell<usize> = const { Cell::new(0) };
    }
    /// Half of the wasm stack (`.cargo/config.toml`), leaving the rest to the
    /// frames below the validator and to the error path.
    #[cfg(target_arch = "wasm32")]
    const LIMIT: usize = 128 * 1024;
    /// Native threads (tests, fuzzing) have at least 2 MiB, and unoptimised
    /// frames are several times larger than the wasm build's.
    #[cfg(not(target_arch = "wasm32"))]
    const LIMIT: usize = 512 * 1024;

    fn here() -> usize {
        let marker = 0u8;
        core::hint::black_box(&marker) as *const u8 as usize
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

/// `s.split_once(sep)` (or `rsplit_once` when `last`) for an ASCII `sep`: a
/// byte scan, where `core`'s char searchers cost about 1 KB of wasm.
pub(crate) fn split_once_ascii(s: &str, sep: u8, last: bool) -> Option<(&str, &str)> {
    let mut b = s.as_bytes().iter();
    let i = if last {
        b.rposition(|c| *c == sep)
    } else {
        b.position(|c| *c == sep)
    }?;
    Some((s.get(..i)?, s.get(i + 1..)?))
}

/// `s.split(sep)` for an ASCII `sep` (see [`split_once_ascii`]).
pub(crate) fn split_ascii(s: &str, sep: u8) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = s;
    while let Some((head, tail)) = split_once_ascii(rest, sep, false) {
        out.push(head);
        rest = tail;
    }
    out.push(rest);
    out
}

/// `parts.concat()`: string building without `core::fmt`.
pub(crate) fn cat(parts: &[&str]) -> String {
    let mut s = String::with_capacity(parts.iter().map(|p| p.len()).sum());
    for p in parts {
        s.push_str(p);
    }
    s
}

/// `parts.join(sep)`, one small loop instead of `alloc`'s `join` per slice type.
pub(crate) fn join(parts: &[&str], sep: &str) -> String {
    let mut s = String::new();
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            s.push_str(sep);
        }
        s.push_str(p);
    }
    s
}

/// `String(b)`.
pub(crate) fn bool_str(b: bool) -> &'static str {
    if b {
        "true"
    } else {
        "false"
    }
}

/// What validation reports when its recursion reaches the stack limit.
pub const TOO_DEEP_FOR_SCHEMA: &str = "Tool arguments are nested too deeply for the schema.";

pub(crate) fn overflow() -> SchemaError {
    SchemaError::Compile(TOO_DEEP_FOR_SCHEMA.into())
}

/// A schema checked once (TypeBox's `Compile`), reusable for every call of a tool.
#[derive(Clone, Debug)]
pub struct CompiledSchema {
    schema: Value,
    /// The compiled validator's shortcuts apply (no `unevaluated*` keywords).
    fast: bool,
}

/// [`compile_with`] with [`RustHost`].
pub fn compile(schema: &Value) -> Result<CompiledSchema, SchemaError> {
    compile_with(schema, &RustHost)
}

/// `Compile(schema)`: fails like the reference for regexes the host's `RegExp`
/// rejects and for parameters that are not objects.
pub fn compile_with(schema: &Value, host: &dyn Host) -> Result<CompiledSchema, SchemaError> {
    let bad = |what: &str| {
        Err(SchemaError::Compile(cat(&[
            "Cannot use 'in' operator to search for 'type' in ",
            what,
        ])))
    };
    match schema {
        Value::Object(_) | Value::Array(_) => {}
        Value::Bool(_) => {
            return Err(SchemaError::Compile(
                "Invalid value used as weak map key".into(),
            ))
        }
        Value::Null => return bad("null"),
        Value::Number(n) => return bad(&host.number_to_string(*n)),
        Value::String(s) => return bad(s),
    }
    let _entry = stack::enter();
    validate::compile_check(schema, host).map_err(SchemaError::Compile)?;
    Ok(CompiledSchema {
        schema: schema.clone(),
        fast: !validate::has_unevaluated(schema),
    })
}

/// [`validate_arguments_with`] with [`RustHost`].
pub fn validate_arguments(
    schema: &Value,
    args: Value,
    legacy_typebox_kind: bool,
) -> Result<Result<Value, ValidationFailure>, SchemaError> {
    validate_arguments_with(schema, args, legacy_typebox_kind, &RustHost)
}

/// Steps 3–7 of `validateToolArguments` on already-cloned arguments: returns the coerced and
/// validated value, or the error lines (the binding formats
/// `Validation failed for tool "${name}":\n${lines.join("\n")}\n\nReceived arguments:\n${JSON.stringify(original, null, 2)}`).
pub fn validate_arguments_with(
    schema: &Value,
    args: Value,
    legacy_typebox_kind: bool,
    host: &dyn Host,
) -> Result<Result<Value, ValidationFailure>, SchemaError> {
    compile_with(schema, host)?.validate_arguments_with(args, legacy_typebox_kind, host)
}

impl CompiledSchema {
    /// [`compile`]: with [`RustHost`].
    pub fn compile(schema: &Value) -> Result<CompiledSchema, SchemaError> {
        compile(schema)
    }

    /// [`compile_with`].
    pub fn compile_with(schema: &Value, host: &dyn Host) -> Result<CompiledSchema, SchemaError> {
        compile_with(schema, host)
    }

    /// The compiled validator's `Check`.
    fn check(&self, v: &Value, host: &dyn Host) -> Result<bool, SchemaError> {
        let e = validate::Engine::new(&self.schema, None, host);
        let r = e.schema(
            &mut validate::Cx::new(false, self.fast, host),
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
    fn errors(&self, v: &Value, host: &dyn Host) -> Result<Vec<String>, SchemaError> {
        let e = validate::Engine::new(&self.schema, None, host);
        let mut cx = validate::Cx::new(true, false, host);
        e.schema(&mut cx, &validate::Path::Root, &self.schema, v);
        if e.overflowed() {
            return Err(overflow());
        }
        Ok(cx.into_errors())
    }

    /// [`Self::validate_arguments_with`] with [`RustHost`].
    pub fn validate_arguments(
        &self,
        args: Value,
        legacy_typebox_kind: bool,
    ) -> Result<Result<Value, ValidationFailure>, SchemaError> {
        self.validate_arguments_with(args, legacy_typebox_kind, &RustHost)
    }

    /// See [`validate_arguments`]. `host` must be the one the schema was
    /// compiled with (it decides which regular expressions compile).
    pub fn validate_arguments_with(
        &self,
        args: Value,
        legacy_typebox_kind: bool,
        host: &dyn Host,
    ) -> Result<Result<Value, ValidationFailure>, SchemaError> {
        let r = self.run(args, legacy_typebox_kind, host, &mut false)?;
        Ok(r)
    }

    /// [`Self::validate_arguments_with`], also telling whether the validated
    /// arguments may differ from `args`: `false` means they are `args` as given,
    /// so a caller holding a copy of them can hand out that copy.
    pub fn validate_arguments_changed(
        &self,
        args: Value,
        legacy_typebox_kind: bool,
        host: &dyn Host,
    ) -> Result<Result<(Value, bool), ValidationFailure>, SchemaError> {
        // TypeBox's conversion does not track its edits: compare instead.
        let input = typebox::converts(&self.schema).then(|| args.clone());
        let mut changed = false;
        let r = self.run(args, legacy_typebox_kind, host, &mut changed)?;
        Ok(r.map(|v| {
            let changed = match &input {
                Some(input) => *input != v,
                None => changed,
            };
            (v, changed)
        }))
    }

    /// The steps of `validateToolArguments`; `changed` is set when the result
    /// may differ from `args` (TypeBox's conversion aside).
    fn run(
        &self,
        args: Value,
        legacy_typebox_kind: bool,
        host: &dyn Host,
        changed: &mut bool,
    ) -> Result<Result<Value, ValidationFailure>, SchemaError> {
        let _entry = stack::enter();
        let h = host;
        let s = &self.schema;
        let mut args = args;
        coerce::normalize(h, &mut args, s, 0, changed)?;
        typebox::convert_root(h, s, &mut args)?;
        if !legacy_typebox_kind {
            if matches!(args, Value::Object(_) | Value::Array(_)) {
                // Objects are coerced in place or replaced by a coerced copy,
                // which pi-ai assigns back into the same object.
                args = coerce::coerce(h, args, s, 0, changed)?;
            } else {
                let coerced = coerce::coerce(h, args.clone(), s, 0, &mut false)?;
                if !validate::strict_eq(&coerced, &args) {
                    // pi-ai returns here without reporting errors.
                    return Ok(Ok(if self.check(&coerced, h)? {
                        *changed = true;
                        coerced
                    } else {
                        args
                    }));
                }
            }
        }
        if self.check(&args, h)? {
            return Ok(Ok(args));
        }
        let mut lines = self.errors(&args, h)?;
        if lines.is_empty() {
            lines.push("Unknown validation error".into());
        }
        Ok(Err(ValidationFailure { lines }))
    }
}
