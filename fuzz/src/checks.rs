//! Properties checked on every fuzz input (a failed check panics, which libFuzzer
//! reports as a crash and keeps the input). Each parser is checked for: no panic,
//! termination, chunking invariance (the same bytes split differently give the same
//! result), and agreement with a small, independent model written here.
//!
//! Input layout, for the targets that stream: the first byte seeds the cut
//! positions of the chunks, the rest is the payload.
#![allow(dead_code)]

use pi_agent_wasm::json::partial::PartialJson;
use pi_agent_wasm::json::schema::{compile, validate_arguments};
use pi_agent_wasm::json::{Map, Value};
use pi_agent_wasm::sse::{delta_line, DataLine, DeltaKind, SseFramer};
use pi_agent_wasm::transcript::tool_changes as diff;

// ---- helpers ----------------------------------------------------------------------------

/// Splits `payload` at up to 15 positions derived from `seed` (sorted, may repeat).
fn cuts(seed: u8, len: usize) -> Vec<usize> {
    let mut state = u32::from(seed).wrapping_mul(2_654_435_761).wrapping_add(1);
    let n = (seed % 16) as usize;
    let mut out: Vec<usize> = (0..n)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 17;
            state ^= state << 5;
            if len == 0 {
                0
            } else {
                state as usize % (len + 1)
            }
        })
        .collect();
    out.sort_unstable();
    out
}

fn split_bytes(seed: u8, payload: &[u8]) -> Vec<&[u8]> {
    let mut parts = Vec::new();
    let mut prev = 0;
    for c in cuts(seed, payload.len()) {
        parts.push(&payload[prev..c]);
        prev = c;
    }
    parts.push(&payload[prev..]);
    parts
}

fn split_str(seed: u8, text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut prev = 0;
    for mut c in cuts(seed, text.len()) {
        while !text.is_char_boundary(c) {
            c -= 1;
        }
        if c < prev {
            continue;
        }
        parts.push(&text[prev..c]);
        prev = c;
    }
    parts.push(&text[prev..]);
    parts
}

fn seed_and_payload(data: &[u8]) -> (u8, &[u8]) {
    match data.split_first() {
        Some((s, rest)) => (*s, rest),
        None => (0, data),
    }
}

/// JavaScript's `String.prototype.trim` whitespace (WhiteSpace + LineTerminator).
fn js_ws(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202f}'
                | '\u{205f}'
                | '\u{3000}'
                | '\u{feff}'
    )
}

// ---- SSE framing --------------------------------------------------------------------------

fn frame(parts: &[&[u8]]) -> Vec<String> {
    let mut f = SseFramer::new();
    let mut out = Vec::new();
    for p in parts {
        f.push(p, &mut out);
    }
    f.finish(&mut out);
    out
}

/// The reference's algorithm, written plainly: decode everything (BOM stripped at the start),
/// split on "\n", keep `data: ` lines, trim, drop empty ones.
fn frame_model(payload: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    for (i, line) in payload.split(|&b| b == b'\n').enumerate() {
        let line = if i == 0 {
            line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line)
        } else {
            line
        };
        if let Some(data) = line.strip_prefix(b"data: ") {
            let text = String::from_utf8_lossy(data);
            let text = text.trim_matches(js_ws);
            if !text.is_empty() {
                out.push(text.to_string());
            }
        }
    }
    out
}

pub fn sse_framer(data: &[u8]) {
    let (seed, payload) = seed_and_payload(data);
    let whole = frame(&[payload]);
    let chunked = frame(&split_bytes(seed, payload));
    assert_eq!(whole, chunked, "chunking changed the SSE lines");
    assert_eq!(
        whole,
        frame_model(payload),
        "SSE lines differ from the plain model"
    );
    let mut f = SseFramer::new();
    for part in split_bytes(seed, payload) {
        let _ = f.push_with(part, delta_line_agrees);
    }
    let _ = f.finish_with(delta_line_agrees);
    for line in &whole {
        assert!(!line.is_empty() && !line.contains('\n'));
        assert!(!line.starts_with(js_ws) && !line.ends_with(js_ws));
    }
    // A framer is reusable after finish().
    let mut f = SseFramer::new();
    let mut a = Vec::new();
    f.push(payload, &mut a);
    f.finish(&mut a);
    let mut b = Vec::new();
    f.push(payload, &mut b);
    f.finish(&mut b);
    assert_eq!(a, b, "a finished framer behaves like a new one");
}

/// A line `delta_line` takes is one `JSON.parse` reads as the same event (from the line's
/// decoded, trimmed text): exactly the members `type` (`text_delta` / `thinking_delta`),
/// `contentIndex` (that integer) and `delta` (that text, appended as UTF-8 of `units`
/// UTF-16 code units).
fn delta_line_agrees(line: DataLine<'_>) -> Result<(), ()> {
    let mut out = b"before".to_vec();
    let Some(d) = delta_line(line.raw(), &mut out) else {
        assert_eq!(out, b"before", "a line not taken leaves the buffer alone");
        return Ok(());
    };
    let text = String::from_utf8(out.split_off(6)).expect("the delta is UTF-8");
    assert_eq!(out, b"before");
    assert_eq!(d.units, text.encode_utf16().count());
    let json = line.text().expect("a delta line has text");
    let Some(Value::Object(m)) = strict_json(&json) else {
        panic!("delta_line took a line JSON.parse rejects (or cannot represent): {json:?}");
    };
    let kind = match d.kind {
        DeltaKind::Text => "text_delta",
        DeltaKind::Thinking => "thinking_delta",
    };
    assert_eq!(m.len(), 3, "{json:?}");
    assert_eq!(
        m.get("type").and_then(Value::as_str),
        Some(kind),
        "{json:?}"
    );
    assert_eq!(
        m.get("contentIndex").and_then(Value::as_f64),
        Some(f64::from(d.index)),
        "{json:?}"
    );
    assert_eq!(
        m.get("delta").and_then(Value::as_str),
        Some(text.as_str()),
        "{json:?}"
    );
    Ok(())
}

// ---- partial JSON -----------------------------------------------------------------------------

/// Order-insensitive equality for objects (JavaScript enumerates integer-like keys first, the
/// parser keeps text order), exact for everything else; numbers compare as JS `Object.is`-free ==.
pub fn same_json(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_json(v, w)))
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(v, w)| same_json(v, w))
        }
        (Value::Number(x), Value::Number(y)) => x == y || (x.is_nan() && y.is_nan()),
        _ => a == b,
    }
}

/// An independent strict JSON parser with `JSON.parse` semantics (RFC 8259 grammar, duplicate
/// keys: last value wins). `None` for invalid documents and for lone surrogates (a Rust `String`
/// cannot hold them). Depth-limited to stay clear of the stack.
pub fn strict_json(text: &str) -> Option<Value> {
    struct P<'a> {
        s: &'a [u8],
        i: usize,
    }
    impl P<'_> {
        fn ws(&mut self) {
            while self.i < self.s.len() && matches!(self.s[self.i], b' ' | b'\t' | b'\n' | b'\r') {
                self.i += 1;
            }
        }
        fn eat(&mut self, b: u8) -> Option<()> {
            (self.s.get(self.i) == Some(&b)).then(|| self.i += 1)
        }
        fn lit(&mut self, w: &str, v: Value) -> Option<Value> {
            self.s[self.i..].starts_with(w.as_bytes()).then(|| {
                self.i += w.len();
                v
            })
        }
        fn value(&mut self, depth: u32) -> Option<Value> {
            if depth > 400 {
                return None;
            }
            self.ws();
            match *self.s.get(self.i)? {
                b'{' => {
                    self.i += 1;
                    let mut m = Map::new();
                    self.ws();
                    if self.eat(b'}').is_some() {
                        return Some(Value::Object(m));
                    }
                    loop {
                        self.ws();
                        let k = self.string()?;
                        self.ws();
                        self.eat(b':')?;
                        let v = self.value(depth + 1)?;
                        m.insert(k, v);
                        self.ws();
                        if self.eat(b',').is_some() {
                            continue;
                        }
                        self.eat(b'}')?;
                        return Some(Value::Object(m));
                    }
                }
                b'[' => {
                    self.i += 1;
                    let mut a = Vec::new();
                    self.ws();
                    if self.eat(b']').is_some() {
                        return Some(Value::Array(a));
                    }
                    loop {
                        a.push(self.value(depth + 1)?);
                        self.ws();
                        if self.eat(b',').is_some() {
                            continue;
                        }
                        self.eat(b']')?;
                        return Some(Value::Array(a));
                    }
                }
                b'"' => self.string().map(Value::String),
                b't' => self.lit("true", Value::Bool(true)),
                b'f' => self.lit("false", Value::Bool(false)),
                b'n' => self.lit("null", Value::Null),
                _ => self.number(),
            }
        }
        fn number(&mut self) -> Option<Value> {
            let start = self.i;
            self.eat(b'-');
            let digits = |p: &mut Self| {
                let s = p.i;
                while p.i < p.s.len() && p.s[p.i].is_ascii_digit() {
                    p.i += 1;
                }
                p.i - s
            };
            if self.eat(b'0').is_none() && digits(self) == 0 {
                return None;
            }
            if self.eat(b'.').is_some() && digits(self) == 0 {
                return None;
            }
            if self.eat(b'e').or_else(|| self.eat(b'E')).is_some() {
                let _ = self.eat(b'+').or_else(|| self.eat(b'-'));
                if digits(self) == 0 {
                    return None;
                }
            }
            std::str::from_utf8(&self.s[start..self.i])
                .ok()?
                .parse::<f64>()
                .ok()
                .map(Value::Number)
        }
        fn hex4(&mut self) -> Option<u32> {
            let h = std::str::from_utf8(self.s.get(self.i..self.i + 4)?).ok()?;
            if !h.bytes().all(|b| b.is_ascii_hexdigit()) {
                return None;
            }
            self.i += 4;
            u32::from_str_radix(h, 16).ok()
        }
        fn string(&mut self) -> Option<String> {
            self.eat(b'"')?;
            let mut out = Vec::new();
            loop {
                let b = *self.s.get(self.i)?;
                self.i += 1;
                match b {
                    b'"' => return String::from_utf8(out).ok(),
                    0..=0x1f => return None,
                    b'\\' => {
                        let e = *self.s.get(self.i)?;
                        self.i += 1;
                        let c = match e {
                            b'"' => '"',
                            b'\\' => '\\',
                            b'/' => '/',
                            b'b' => '\u{8}',
                            b'f' => '\u{c}',
                            b'n' => '\n',
                            b'r' => '\r',
                            b't' => '\t',
                            b'u' => {
                                let u = self.hex4()?;
                                if (0xD800..0xDC00).contains(&u) {
                                    self.eat(b'\\')?;
                                    self.eat(b'u')?;
                                    let l = self.hex4()?;
                                    if !(0xDC00..0xE000).contains(&l) {
                                        return None;
                                    }
                                    char::from_u32(0x10000 + ((u - 0xD800) << 10) + (l - 0xDC00))?
                                } else {
                                    char::from_u32(u)?
                                }
                            }
                            _ => return None,
                        };
                        let mut buf = [0u8; 4];
                        out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                    }
                    _ => out.push(b),
                }
            }
        }
    }
    let mut p = P {
        s: text.as_bytes(),
        i: 0,
    };
    let v = p.value(0)?;
    p.ws();
    (p.i == p.s.len()).then_some(v)
}

fn parse_all(parts: &[&str]) -> (PartialJson, Vec<Value>) {
    let mut p = PartialJson::new();
    let mut seen = Vec::new();
    let mut last_gen = p.generation();
    for part in parts {
        p.push(part);
        assert!(p.generation() != last_gen, "every push is a new generation");
        last_gen = p.generation();
        seen.push(p.to_value());
    }
    (p, seen)
}

pub fn partial_json(data: &[u8]) {
    let (seed, payload) = seed_and_payload(data);
    let text = String::from_utf8_lossy(payload);
    let parts = split_str(seed, &text);
    let (incremental, seen) = parse_all(&parts);
    assert_eq!(incremental.text(), &*text);
    // After each push, the visible value is what a fresh parser shows for the same prefix.
    let mut prefix = String::new();
    for (part, value) in parts.iter().zip(&seen) {
        prefix.push_str(part);
        let mut fresh = PartialJson::new();
        fresh.push(&prefix);
        assert!(
            same_json(&fresh.to_value(), value),
            "incremental and one-shot parses differ after {prefix:?}: {value:?} vs {:?}",
            fresh.to_value()
        );
        assert_eq!(fresh.is_complete(), {
            let mut again = PartialJson::new();
            for p in split_str(seed.wrapping_add(1), &prefix) {
                again.push(p);
            }
            again.is_complete()
        });
    }
    // A complete JSON document gives exactly what JSON.parse gives.
    if let Some(expected) = strict_json(&text) {
        assert!(
            incremental.is_complete(),
            "valid JSON {text:?} not seen as complete"
        );
        assert!(
            same_json(&incremental.to_value(), &expected),
            "valid JSON {text:?}: parsed {:?}, expected {expected:?}",
            incremental.to_value()
        );
    }
}

// ---- schema validation ------------------------------------------------------------------------

/// A complete JSON text as a Value, through the crate's own parser.
fn json(text: &str) -> Option<Value> {
    let mut p = PartialJson::new();
    p.push(text);
    p.is_complete().then(|| p.to_value())
}

/// Payload: `<schema JSON>\0<arguments JSON>`.
pub fn schema_validate(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let Some((schema_text, args_text)) = text.split_once('\0') else {
        return;
    };
    let (Some(schema), Some(args)) = (json(schema_text), json(args_text)) else {
        return;
    };
    let Ok(compiled) = compile(&schema) else {
        return;
    };
    for legacy in [false, true] {
        let a = compiled.validate_arguments(args.clone(), legacy);
        let b = validate_arguments(&schema, args.clone(), legacy);
        assert_eq!(
            format!("{a:?}"),
            format!("{b:?}"),
            "compiled and one-off validation agree"
        );
        if let Ok(Err(failure)) = &a {
            assert!(!failure.lines.is_empty(), "a failure has at least one line");
            for line in &failure.lines {
                assert!(
                    line.starts_with("  - ") || line == "Unknown validation error",
                    "line layout: {line:?}"
                );
            }
        }
    }
}

// ---- tool-set diffing ---------------------------------------------------------------------------

/// Byte -> (name, declaration): 4 names x 4 declarations, so collisions are frequent; 0xFF
/// separates the previous list from the current one (anything after a second 0xFF is ignored:
/// it drove the Rust tool-set replay, which is now `applyToolChanges` in declare.js).
fn tool_list(bytes: &[u8]) -> Vec<(String, String)> {
    bytes
        .iter()
        .map(|b| {
            (
                ((b'a' + (b & 3)) as char).to_string(),
                format!("{{\"v\":{}}}", (b >> 2) & 3),
            )
        })
        .collect()
}

fn last_wins(list: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut m: Vec<(String, String)> = Vec::new();
    for (n, d) in list {
        match m.iter_mut().find(|(k, _)| k == n) {
            Some(slot) => slot.1 = d.to_string(),
            None => m.push((n.to_string(), d.to_string())),
        }
    }
    m
}

fn lookup<'a>(m: &'a [(String, String)], n: &str) -> Option<&'a str> {
    m.iter().find(|(k, _)| k == n).map(|(_, d)| d.as_str())
}

pub fn tool_changes(data: &[u8]) {
    let mut it = data.splitn(3, |&b| b == 0xFF);
    let prev = tool_list(it.next().unwrap_or_default());
    let cur = tool_list(it.next().unwrap_or_default());
    let p: Vec<(&str, &str)> = prev.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    let c: Vec<(&str, &str)> = cur.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    let (added, removed) = diff(&p, &c);
    assert!(added.windows(2).all(|w| w[0] < w[1]) && added.iter().all(|&i| i < c.len()));
    assert!(removed.windows(2).all(|w| w[0] < w[1]) && removed.iter().all(|&i| i < p.len()));
    // The reference's formula, written plainly (maps are last-wins by name).
    let pm = last_wins(&p);
    let cm = last_wins(&c);
    let want_added: Vec<usize> = (0..c.len())
        .filter(|&i| lookup(&pm, c[i].0) != Some(c[i].1))
        .collect();
    let want_removed: Vec<usize> = (0..p.len())
        .filter(|&i| lookup(&cm, p[i].0) != Some(p[i].1))
        .collect();
    assert_eq!(added, want_added);
    assert_eq!(removed, want_removed);
    // With unique names: a list has no changes against itself, and replaying the changes on the
    // previous set gives the current one. (Duplicate names compare last-wins, as the reference does.)
    let unique = |l: &[(&str, &str)]| last_wins(l).len() == l.len();
    if unique(&c) {
        assert_eq!(
            diff(&c, &c),
            (vec![], vec![]),
            "a list has no changes against itself"
        );
    }
    if unique(&p) && unique(&c) {
        // A JS `Map` as the replay uses it: `delete`, then `set` (which keeps an existing slot).
        let mut got: Vec<(String, String)> = last_wins(&p);
        for &i in &removed {
            got.retain(|(n, _)| n != p[i].0);
        }
        for &i in &added {
            match got.iter_mut().find(|(n, _)| n == c[i].0) {
                Some(slot) => slot.1 = c[i].1.to_string(),
                None => got.push((c[i].0.to_string(), c[i].1.to_string())),
            }
        }
        let mut want = cm.clone();
        got.sort();
        want.sort();
        assert_eq!(got, want, "replaying the changes gives the current tools");
    }
}
