//! Reading JSON text into a [`Value`]: tool arguments that are plain JSON data
//! cross from JavaScript as their `JSON.stringify` text (one string instead of a
//! call per member, see src/js/validate.js `validateArguments`).
//!
//! Strict JSON only (`JSON.parse` would accept it); `None` for anything else,
//! and for text nested deeper than [`MAX_DEPTH`] (JavaScript hands over
//! nothing that deep). Numbers round as `JSON.parse` rounds them.

use super::num::parse_f64;
use super::value::{Map, Value};
use crate::prelude::*;

/// Deeper nesting is refused rather than risking the stack.
const MAX_DEPTH: u32 = 300;

/// The one JSON value `text` holds, blanks around it allowed.
pub fn parse(text: &str) -> Option<Value> {
    let mut p = Parser {
        text,
        b: text.as_bytes(),
        i: 0,
    };
    let v = p.value(0)?;
    p.blanks();
    (p.i == p.b.len()).then_some(v)
}

struct Parser<'a> {
    text: &'a str,
    b: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    fn blanks(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) -> Option<()> {
        self.blanks();
        (self.peek()? == c).then(|| self.i += 1)
    }

    fn literal(&mut self, word: &[u8], v: Value) -> Option<Value> {
        let end = self.i + word.len();
        (self.b.get(self.i..end)? == word).then(|| {
            self.i = end;
            v
        })
    }

    fn value(&mut self, depth: u32) -> Option<Value> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.blanks();
        match self.peek()? {
            b'{' => {
                self.i += 1;
                let mut map = Map::new();
                self.blanks();
                if self.peek()? == b'}' {
                    self.i += 1;
                    return Some(Value::Object(map));
                }
                loop {
                    self.blanks();
                    let key = self.string()?;
                    self.eat(b':')?;
                    let v = self.value(depth + 1)?;
                    map.insert(key, v);
                    self.blanks();
                    match self.peek()? {
                        b',' => self.i += 1,
                        b'}' => {
                            self.i += 1;
                            return Some(Value::Object(map));
                        }
                        _ => return None,
                    }
                }
            }
            b'[' => {
                self.i += 1;
                let mut items = Vec::new();
                self.blanks();
                if self.peek()? == b']' {
                    self.i += 1;
                    return Some(Value::Array(items));
                }
                loop {
                    items.push(self.value(depth + 1)?);
                    self.blanks();
                    match self.peek()? {
                        b',' => self.i += 1,
                        b']' => {
                            self.i += 1;
                            return Some(Value::Array(items));
                        }
                        _ => return None,
                    }
                }
            }
            b'"' => self.string().map(Value::String),
            b't' => self.literal(b"true", Value::Bool(true)),
            b'f' => self.literal(b"false", Value::Bool(false)),
            b'n' => self.literal(b"null", Value::Null),
            _ => self.number(),
        }
    }

    fn number(&mut self) -> Option<Value> {
        let start = self.i;
        if self.peek() == Some(b'-') {
            self.i += 1;
        }
        // JSON's grammar: no leading zeros, digits on both sides of the point.
        match self.peek()? {
            b'0' => self.i += 1,
            b'1'..=b'9' => self.digits(),
            _ => return None,
        }
        if self.peek() == Some(b'.') {
            self.i += 1;
            self.digits1()?;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.i += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.i += 1;
            }
            self.digits1()?;
        }
        parse_f64(self.text.get(start..self.i)?).map(Value::Number)
    }

    fn digits(&mut self) {
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.i += 1;
        }
    }

    fn digits1(&mut self) -> Option<()> {
        let start = self.i;
        self.digits();
        (self.i > start).then_some(())
    }

    fn hex4(&mut self) -> Option<u32> {
        let mut n = 0;
        for _ in 0..4 {
            n = n * 16 + char::from(self.peek()?).to_digit(16)?;
            self.i += 1;
        }
        Some(n)
    }

    fn string(&mut self) -> Option<String> {
        if self.peek()? != b'"' {
            return None;
        }
        self.i += 1;
        let mut out = String::new();
        loop {
            let start = self.i;
            while !matches!(self.peek()?, b'"' | b'\\' | 0..=0x1f) {
                self.i += 1;
            }
            // The run stops only at ASCII bytes: whole characters.
            out.push_str(self.text.get(start..self.i)?);
            let c = self.peek()?;
            self.i += 1;
            match c {
                b'"' => return Some(out),
                b'\\' => {}
                _ => return None,
            }
            let e = self.peek()?;
            self.i += 1;
            let ch = match e {
                b'"' => '"',
                b'\\' => '\\',
                b'/' => '/',
                b'b' => '\u{8}',
                b'f' => '\u{c}',
                b'n' => '\n',
                b'r' => '\r',
                b't' => '\t',
                // `JSON.stringify` escapes control characters this way (and lone
                // surrogates, which JS does not send): an escaped surrogate,
                // even of a pair, is refused.
                b'u' => char::from_u32(self.hex4()?)?,
                _ => return None,
            };
            out.push(ch);
        }
    }
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
            parse(" [ 1 , -0.5e-3 ] "),
            Some(Value::Array(vec![
                Value::Number(1.0),
                Value::Number(-0.0005)
            ]))
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
            "{\"a\"}",
            "{\"a\":1,}",
            "01",
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
            r#""\ud83d\ude00""#,
            "[1] 2",
            "NaN",
            "{a:1}",
        ] {
            assert_eq!(parse(bad), None, "{bad:?}");
        }
        let deep = "[".repeat(400) + &"]".repeat(400);
        assert_eq!(parse(&deep), None);
        let ok = "[".repeat(200) + &"]".repeat(200);
        assert!(parse(&ok).is_some());
    }
}
