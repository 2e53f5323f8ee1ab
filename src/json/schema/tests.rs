//! Replays `tests/fixtures/schema/vectors.json` (generated from the reference by
//! `scripts/gen-schema-vectors.mjs`) against the port.

use super::{pattern, validate_arguments, CompiledSchema, RustHost, SchemaError};
use crate::json::{Map, Value};
use crate::prelude::*;
use std::eprintln;

/// A minimal JSON reader for the fixture (test-only).
struct Reader<'a> {
    b: &'a [u8],
    i: usize,
}

impl Reader<'_> {
    fn ws(&mut self) {
        while self.i < self.b.len() && self.b[self.i].is_ascii_whitespace() {
            self.i += 1;
        }
    }
    fn eat(&mut self, c: u8) -> bool {
        self.ws();
        if self.b.get(self.i) == Some(&c) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn value(&mut self) -> Value {
        self.ws();
        match self.b[self.i] {
            b'{' => {
                self.i += 1;
                let mut m = Map::new();
                if !self.eat(b'}') {
                    loop {
                        self.ws();
                        let k = self.string();
                        assert!(self.eat(b':'));
                        let v = self.value();
                        m.insert(k, v);
                        if self.eat(b'}') {
                            break;
                        }
                        assert!(self.eat(b','));
                    }
                }
                Value::Object(m)
            }
            b'[' => {
                self.i += 1;
                let mut a = Vec::new();
                if !self.eat(b']') {
                    loop {
                        a.push(self.value());
                        if self.eat(b']') {
                            break;
                        }
                        assert!(self.eat(b','));
                    }
                }
                Value::Array(a)
            }
            b'"' => Value::String(self.string()),
            b't' => {
                self.i += 4;
                Value::Bool(true)
            }
            b'f' => {
                self.i += 5;
                Value::Bool(false)
            }
            b'n' => {
                self.i += 4;
                Value::Null
            }
            _ => {
                let s = self.i;
                while self.i < self.b.len() && b"+-.eE0123456789".contains(&self.b[self.i]) {
                    self.i += 1;
                }
                let t = core::str::from_utf8(&self.b[s..self.i]).unwrap();
                Value::Number(t.parse().unwrap())
            }
        }
    }
    fn hex4(&mut self) -> u32 {
        let t = core::str::from_utf8(&self.b[self.i..self.i + 4]).unwrap();
        self.i += 4;
        u32::from_str_radix(t, 16).unwrap()
    }
    fn string(&mut self) -> String {
        assert_eq!(self.b[self.i], b'"');
        self.i += 1;
        let mut out: Vec<u8> = Vec::new();
        loop {
            let c = self.b[self.i];
            self.i += 1;
            match c {
                b'"' => break,
                b'\\' => {
                    let e = self.b[self.i];
                    self.i += 1;
                    let ch = match e {
                        b'n' => '\n',
                        b't' => '\t',
                        b'r' => '\r',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'u' => {
                            let mut v = self.hex4();
                            if (0xD800..0xDC00).contains(&v)
                                && self.b[self.i] == b'\\'
                                && self.b[self.i + 1] == b'u'
                            {
                                self.i += 2;
                                let lo = self.hex4();
                                v = 0x10000 + ((v - 0xD800) << 10) + (lo - 0xDC00);
                            }
                            char::from_u32(v).unwrap_or('\u{FFFD}')
                        }
                        other => other as char,
                    };
                    let mut buf = [0; 4];
                    out.extend(ch.encode_utf8(&mut buf).as_bytes());
                }
                c => out.push(c),
            }
        }
        String::from_utf8(out).unwrap()
    }
}

fn parse(text: &str) -> Value {
    Reader {
        b: text.as_bytes(),
        i: 0,
    }
    .value()
}

fn node_mut<'v>(v: &'v mut Value, path: &[Value]) -> Option<&'v mut Value> {
    let mut cur = v;
    for seg in path {
        cur = match (cur, seg) {
            (Value::Object(m), Value::String(k)) => m.get_mut(k)?,
            (Value::Array(a), Value::Number(i)) => a.get_mut(*i as usize)?,
            _ => return None,
        };
    }
    Some(cur)
}

#[test]
fn reference_vectors() {
    // SCHEMA_VECTORS=<file> replays another file in the same format (fuzzing).
    let path = std::env::var("SCHEMA_VECTORS").unwrap_or_else(|_| {
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/schema/vectors.json"
        )
        .to_string()
    });
    let text = std::fs::read_to_string(path).expect("fixture");
    let vectors = match parse(&text) {
        Value::Array(a) => a,
        _ => panic!("fixture is not an array"),
    };
    let (mut pass, mut skipped, mut failures) = (0, 0, Vec::new());
    for v in &vectors {
        let name = v.get("name").and_then(Value::as_str).unwrap_or("?");
        if v.get("diverges").is_some() {
            skipped += 1;
            continue;
        }
        let mut schema = v.get("schema").cloned().unwrap_or(Value::Null);
        if let Some(Value::Array(hidden)) = v.get("hidden") {
            for h in hidden {
                if let (Some(Value::Array(path)), Some(Value::Object(marks))) = (
                    h.as_array().and_then(|a| a.first()),
                    h.as_array().and_then(|a| a.get(1)),
                ) {
                    if let Some(Value::Object(node)) = node_mut(&mut schema, path) {
                        for (k, x) in marks.iter() {
                            node.insert(k.clone(), x.clone());
                        }
                    }
                }
            }
        }
        let legacy = v.get("legacy") == Some(&Value::Bool(true));
        let input = v.get("input").cloned().unwrap_or(Value::Null);
        change_reported(&schema, &input, legacy);
        let got = validate_arguments(&schema, input, legacy);
        let ok = match (&got, v.get("ok"), v.get("lines"), v.get("error")) {
            (Ok(Ok(x)), Some(want), _, _) => x == want,
            (Ok(Err(f)), _, Some(Value::Array(want)), _) => {
                f.lines.len() == want.len()
                    && f.lines.iter().zip(want).all(|(a, b)| b.as_str() == Some(a))
            }
            (Err(SchemaError::Compile(m)), _, _, Some(Value::String(want))) => m == want,
            _ => false,
        };
        if ok {
            pass += 1;
        } else {
            let want = v.get("ok").or(v.get("lines")).or(v.get("error"));
            failures.push(format!("{name}\n    got:  {got:?}\n    want: {want:?}"));
        }
    }
    eprintln!(
        "schema vectors: {} total, {pass} pass, {skipped} skipped (known divergences), {} fail",
        vectors.len(),
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "{} failing vectors:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn pattern_compile_errors_do_not_panic() {
    for src in [
        "(", "[", "\\", "a{", "(?<", "(?<a", "[\\", "\\u{", "\\p{", "x{2,1}", "(?", "[a-", "\\c",
        "\\k<", "(?<=", "a**", "a|*",
    ] {
        let _ = pattern::compile(src, true, false);
        let _ = pattern::compile(src, false, false);
    }
}

#[test]
fn pattern_budget_gives_up() {
    let r = pattern::compile("^(a|a)*b$", true, false).unwrap();
    assert!(!r.test(&"a".repeat(60)));
    let r = pattern::compile("^(ab)+$", true, false).unwrap();
    assert!(r.test(&"ab".repeat(40)));
    assert!(!r.test(&"ab".repeat(100_000)));
}

#[test]
fn deep_values_do_not_overflow() {
    let mut v = Value::Null;
    for _ in 0..2000 {
        v = Value::Array(vec![v]);
    }
    let schema = parse(r##"{"type":"array","items":{"$ref":"#"},"uniqueItems":true}"##);
    let r = validate_arguments(&schema, v, false);
    assert_eq!(
        r,
        Err(SchemaError::Compile(super::TOO_DEEP_FOR_SCHEMA.into()))
    );
}

/// Random, mostly malformed schemas and arguments: nothing may panic.
#[test]
fn random_inputs_do_not_panic() {
    struct Rng(u64);
    impl Rng {
        fn n(&mut self, k: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % k
        }
    }
    const WORDS: &[&str] = &[
        "type",
        "properties",
        "required",
        "items",
        "anyOf",
        "oneOf",
        "allOf",
        "not",
        "const",
        "enum",
        "minimum",
        "maximum",
        "pattern",
        "format",
        "additionalProperties",
        "patternProperties",
        "dependencies",
        "dependentRequired",
        "if",
        "then",
        "else",
        "$ref",
        "$id",
        "$anchor",
        "prefixItems",
        "contains",
        "minContains",
        "maxContains",
        "uniqueItems",
        "multipleOf",
        "unevaluatedProperties",
        "unevaluatedItems",
        "propertyNames",
        "minLength",
        "~kind",
        "object",
        "array",
        "string",
        "number",
        "integer",
        "boolean",
        "null",
        "Object",
        "Union",
        "Array",
        "Number",
        "String",
        "Literal",
        "Cyclic",
        "Ref",
        "#",
        "#/$defs/a",
        "a",
        "b",
        "(",
        "^a+$",
        "[",
        "email",
        "uri",
        "date-time",
        "1",
        "true",
        "",
    ];
    fn gen(r: &mut Rng, d: u32) -> Value {
        match r.n(if d > 3 { 5 } else { 8 }) {
            0 => Value::Null,
            1 => Value::Bool(r.n(2) == 0),
            2 => Value::Number([0.0, 1.0, -1.5, 2.0, 1e300, 0.1, 3.0][r.n(7) as usize]),
            3 | 4 => Value::String(WORDS[r.n(WORDS.len() as u64) as usize].to_string()),
            5 => Value::Array((0..r.n(4)).map(|_| gen(r, d + 1)).collect()),
            _ => Value::Object(
                (0..r.n(5))
                    .map(|_| {
                        (
                            WORDS[r.n(WORDS.len() as u64) as usize].to_string(),
                            gen(r, d + 1),
                        )
                    })
                    .collect(),
            ),
        }
    }
    let mut r = Rng(0x1234_5678_9abc_def1);
    for _ in 0..3000 {
        let schema = gen(&mut r, 0);
        let args = gen(&mut r, 0);
        let legacy = r.n(2) == 0;
        change_reported(&schema, &args, legacy);
        let _ = validate_arguments(&schema, args, legacy);
    }
}

/// `validate_arguments_changed` gives what `validate_arguments_with` gives, and
/// reports every change: unreported, the result is the input.
fn change_reported(schema: &Value, input: &Value, legacy: bool) {
    let Ok(compiled) = CompiledSchema::compile(schema) else {
        return;
    };
    let plain = compiled.validate_arguments_with(input.clone(), legacy, &RustHost);
    let reported = compiled.validate_arguments_changed(input.clone(), legacy, &RustHost);
    match (plain, reported) {
        (Ok(Ok(a)), Ok(Ok((b, changed)))) => {
            assert_eq!(a, b, "{schema:?} on {input:?}");
            assert!(
                changed || b == *input,
                "unreported change: {schema:?} on {input:?} gave {b:?}"
            );
        }
        (a, b) => assert_eq!(a, b.map(|r| r.map(|(v, _)| v)), "{schema:?} on {input:?}"),
    }
}
