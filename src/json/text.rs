//! Reading JSON text into a [`Value`]: tool arguments that are plain JSON data
//! cross from JavaScript as their `JSON.stringify` text (one string instead of a
//! call per member, see src/js/validate.js `validateArguments`).
//!
//! Strict JSON only (`JSON.parse` would accept it), with the SSE reader's token
//! scanner; `None` for anything else, for text nested deeper than [`MAX_DEPTH`]
//! (JavaScript hands over nothing that deep) and for escaped lone surrogates,
//! which a `String` cannot hold. Numbers round as `JSON.parse` rounds them.

use super::num::parse_f64;
use super::value::{Map, Value};
use crate::prelude::*;
use crate::sse::Scanner;

/// Deeper nesting is refused rather than risking the stack.
const MAX_DEPTH: u32 = 300;

/// The one JSON value `text` holds, blanks around it allowed.
pub fn parse(text: &str) -> Option<Value> {
    let mut s = Scanner {
        s: text.as_bytes(),
        i: 0,
    };
    let v = value(&mut s, 0)?;
    s.ws();
    (s.i == s.s.len()).then_some(v)
}

/// A string's contents, after its opening quote.
fn string(s: &mut Scanner<'_>) -> Option<String> {
    let mut out = Vec::new();
    s.string(&mut out)?;
    String::from_utf8(out).ok()
}

/// `c`, then either `close` (true) or a `,` (false).
fn next(s: &mut Scanner<'_>, close: u8) -> Option<bool> {
    s.ws();
    let c = s.peek()?;
    s.i += 1;
    match c {
        b',' => Some(false),
        _ if c == close => Some(true),
        _ => None,
    }
}

fn value(s: &mut Scanner<'_>, depth: u32) -> Option<Value> {
    if depth > MAX_DEPTH {
        return None;
    }
    s.ws();
    let c = s.peek()?;
    match c {
        b'{' | b'[' => {
            s.i += 1;
            let close = if c == b'{' { b'}' } else { b']' };
            let mut map = Map::new();
            let mut items = Vec::new();
            s.ws();
            if s.peek()? == close {
                s.i += 1;
            } else {
                loop {
                    if c == b'{' {
                        s.eat(b'"')?;
                        let key = string(s)?;
                        s.eat(b':')?;
                        map.insert(key, value(s, depth + 1)?);
                    } else {
                        items.push(value(s, depth + 1)?);
                    }
                    if next(s, close)? {
                        break;
                    }
                }
            }
            Some(if c == b'{' {
                Value::Object(map)
            } else {
                Value::Array(items)
            })
        }
        b'"' => {
            s.i += 1;
            string(s).map(Value::String)
        }
        b't' => s.lit(b"true").then_some(Value::Bool(true)),
        b'f' => s.lit(b"false").then_some(Value::Bool(false)),
        b'n' => s.lit(b"null").then_some(Value::Null),
        _ => number(s),
    }
}

/// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
fn number(s: &mut Scanner<'_>) -> Option<Value> {
    let start = s.i;
    if s.peek() == Some(b'-') {
        s.i += 1;
    }
    let lead = s.peek()?;
    if !lead.is_ascii_digit() || (lead == b'0' && digits(s) > 1) {
        return None;
    }
    digits(s);
    if s.peek() == Some(b'.') {
        s.i += 1;
        if digits(s) == 0 {
            return None;
        }
    }
    if matches!(s.peek(), Some(b'e' | b'E')) {
        s.i += 1;
        if matches!(s.peek(), Some(b'+' | b'-')) {
            s.i += 1;
        }
        if digits(s) == 0 {
            return None;
        }
    }
    let text = core::str::from_utf8(s.s.get(start..s.i)?).ok()?;
    parse_f64(text).map(Value::Number)
}

/// Skips digits; how many.
fn digits(s: &mut Scanner<'_>) -> usize {
    let start = s.i;
    while matches!(s.peek(), Some(b'0'..=b'9')) {
        s.i += 1;
    }
    s.i - start
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(entries: &[(&str, Value)]) -> Value {
        let mut m = Map::new();
        for (k, v) in entries {
            m.insert(*k, v.clone());
        }
        Value::Object(m)
    }

    #[test]
    fn reads_json_stringify_output() {
        assert_eq!(parse("{}"), Some(obj(&[])));
        assert_eq!(parse("[]"), Some(Value::Array(Vec::new())));
        assert_eq!(
            parse(
                r#"{"i":3,"b":[true,false,null],"s":"a\"\\\/\b\f\n\r\t\u0001é😀","__proto__":{}}"#
            ),
            Some(obj(&[
                ("i", Value::Number(3.0)),
                (
                    "b",
                    Value::Array(vec![Value::Bool(true), Value::Bool(false), Value::Null])
                ),
                (
                    "s",
                    Value::String(String::from("a\"\\/\u{8}\u{c}\n\r\t\u{1}é😀"))
                ),
                ("__proto__", obj(&[])),
            ]))
        );
        assert_eq!(
            parse(" [ 1 , -0.5e-3, 0, 10 ] "),
            Some(Value::Array(vec![
                Value::Number(1.0),
                Value::Number(-0.0005),
                Value::Number(0.0),
                Value::Number(10.0)
            ]))
        );
        assert_eq!(
            parse(r#""\ud83d\ude00""#),
            Some(Value::String(String::from("😀")))
        );
        assert_eq!(parse("1e400"), Some(Value::Number(f64::INFINITY)));
        assert_eq!(parse("0.1"), Some(Value::Number(0.1)));
    }

    #[test]
    fn refuses_what_json_parse_refuses() {
        for bad in [
            "",
            "{",
            "[1,]",
            "[,1]",
            "{\"a\"}",
            "{\"a\":1,}",
            "{1:1}",
            "01",
            "-01",
            "1.",
            ".5",
            "+1",
            "1e",
            "-",
            "tru",
            "nul",
            "\"a",
            "\"\\x\"",
            "\"\u{1}\"",
            r#""\ud83d""#,
            r#""\ude00""#,
            "[1] 2",
            "NaN",
            "{a:1}",
            "[1}",
            "{\"a\":1]",
        ] {
            assert_eq!(parse(bad), None, "{bad:?}");
        }
        let deep = "[".repeat(400) + &"]".repeat(400);
        assert_eq!(parse(&deep), None);
        let ok = "[".repeat(200) + &"]".repeat(200);
        assert!(parse(&ok).is_some());
    }
}
