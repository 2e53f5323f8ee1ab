//! Port of TypeBox 1.3.27's schema engine (`schema/engine/*`): `Check` (the
//! compiled validator) and `Errors` (the dynamic error walk) over a schema
//! `Value`, with the en_US messages and TypeBox's keyword order.
//!
//! One walker serves both: a [`Cx`] without an error list short-circuits like
//! `Check`; with one it visits every keyword like `Errors`, keeping at most 8
//! errors per context (`Settings.maxErrors`). Evaluated keys/indices are
//! tracked per context for `unevaluated*`, including TypeBox's habit of not
//! popping a frame when a sub-schema fails.

use super::host::Host;
use super::jsnum::js_rem;
use super::{cat, format, join, one_of, split_ascii, split_once_ascii};
use crate::json::num::usize_to_string;
use crate::json::{Map, Value};
use crate::prelude::*;
use core::cell::Cell;

const MAX_ERRORS: usize = 8;
/// Nesting limit of the plain tree walks (hashing, `$id` search, compile walk).
const MAX_DEPTH: u32 = 256;
const TRUE: Value = Value::Bool(true);
const FALSE: Value = Value::Bool(false);

/// An instance location, rendered only when an error is recorded.
#[derive(Clone, Copy)]
pub(crate) enum Path<'a> {
    Root,
    Key(&'a Path<'a>, &'a str),
    Idx(&'a Path<'a>, usize),
}

impl Path<'_> {
    /// The JSON pointer with every `/` (in keys too) already turned into `.`.
    fn render(&self, out: &mut String) {
        match self {
            Path::Root => {}
            Path::Key(p, k) => {
                p.render(out);
                out.push('.');
                for c in k.chars() {
                    out.push(if c == '/' { '.' } else { c });
                }
            }
            Path::Idx(p, i) => {
                p.render(out);
                out.push('.');
                out.push_str(&usize_to_string(*i));
            }
        }
    }
}

/// pi-ai's `formatValidationPath` (`/` → `.` after dropping the leading `/`)
/// and line layout.
fn line(p: &Path, required: Option<&str>, msg: &str) -> String {
    let mut raw = String::new();
    p.render(&mut raw);
    let base = raw.strip_prefix('.').unwrap_or(&raw);
    let path = match required {
        Some(r) if !r.is_empty() && base.is_empty() => r,
        Some(r) if !r.is_empty() => return cat(&["  - ", base, ".", r, ": ", msg]),
        _ if base.is_empty() => "root",
        _ => base,
    };
    cat(&["  - ", path, ": ", msg])
}

/// An error message, rendered (en_US) only when errors are collected.
enum Msg<'a> {
    Text(&'static str),
    Type(&'a Value),
    Required(&'a [&'a str]),
    /// "fewer"/"more", limit, unit.
    Limit(&'static str, f64, &'static str),
    Cmp(&'static str, f64),
    MultipleOf(f64),
    Format(&'a str),
    Pattern(&'a str),
    Deps(&'a str, &'a [&'a str]),
    Names(&'a [&'a str]),
}

fn render(h: &dyn Host, m: &Msg) -> String {
    match m {
        Msg::Text(t) => (*t).into(),
        Msg::Type(Value::Array(l)) => {
            let names: Vec<&str> = l.iter().filter_map(Value::as_str).collect();
            cat(&["must be either ", &join(&names, " or ")])
        }
        Msg::Type(t) => cat(&["must be ", t.as_str().unwrap_or_default()]),
        Msg::Required(l) => cat(&["must have required properties ", &join(l, ", ")]),
        Msg::Limit(w, n, u) => cat(&[
            "must not have ",
            w,
            " than ",
            &h.number_to_string(*n),
            " ",
            u,
        ]),
        Msg::Cmp(op, n) => cat(&["must be ", op, " ", &h.number_to_string(*n)]),
        Msg::MultipleOf(n) => cat(&["must be multiple of ", &h.number_to_string(*n)]),
        Msg::Format(f) => cat(&["must match format \"", f, "\""]),
        Msg::Pattern(p) => cat(&["must match pattern \"", p, "\""]),
        Msg::Deps(k, l) => cat(&[
            "must have properties ",
            &join(l, ", "),
            " when property ",
            k,
            " is present",
        ]),
        Msg::Names(l) => cat(&["property names ", &join(l, ", "), " are invalid"]),
    }
}

const CONTAINS: Msg<'static> = Msg::Text("must contain at least 1 valid item");

#[derive(Default)]
struct Frame {
    idx: Vec<usize>,
    keys: Vec<String>,
}

/// A `CheckContext` (no error list) or an `ErrorContext`.
pub(crate) struct Cx<'h> {
    base: Frame,
    frames: Vec<Frame>,
    errs: Option<Vec<String>>,
    /// The compiled validator's `additionalProperties: false` shortcut applies.
    fast: bool,
    /// Prints the numbers in error messages.
    host: &'h dyn Host,
}

impl<'h> Cx<'h> {
    pub(crate) fn new(collect: bool, fast: bool, host: &'h dyn Host) -> Cx<'h> {
        Cx {
            base: Frame::default(),
            frames: Vec::new(),
            errs: if collect { Some(Vec::new()) } else { None },
            fast,
            host,
        }
    }
    fn sub(&self) -> Cx<'h> {
        Cx::new(self.errs.is_some(), self.fast, self.host)
    }
    fn all(&self) -> bool {
        self.errs.is_some()
    }
    fn full(&self) -> bool {
        self.errs.as_ref().is_some_and(|e| e.len() >= MAX_ERRORS)
    }
    /// `AddError`: records a message (built lazily) and returns false.
    fn fail(&mut self, p: &Path, req: Option<&str>, msg: Msg) -> bool {
        if let Some(e) = &mut self.errs {
            if e.len() < MAX_ERRORS {
                e.push(line(p, req, &render(self.host, &msg)));
            }
        }
        false
    }
    fn absorb(&mut self, other: Cx) {
        if let (Some(e), Some(o)) = (&mut self.errs, other.errs) {
            for l in o {
                if e.len() < MAX_ERRORS {
                    e.push(l);
                }
            }
        }
    }
    pub(crate) fn into_errors(self) -> Vec<String> {
        self.errs.unwrap_or_default()
    }
    fn top(&mut self) -> &mut Frame {
        match self.frames.last_mut() {
            Some(f) => f,
            None => &mut self.base,
        }
    }
    fn add_key(&mut self, k: &str) -> bool {
        let t = self.top();
        if !t.keys.iter().any(|x| x == k) {
            t.keys.push(k.to_string());
        }
        true
    }
    fn add_idx(&mut self, i: usize) -> bool {
        let t = self.top();
        if !t.idx.contains(&i) {
            t.idx.push(i);
        }
        true
    }
    fn merge(&mut self, mut other: Cx) {
        let o = core::mem::take(other.top());
        for k in o.keys {
            self.add_key(&k);
        }
        for i in o.idx {
            self.add_idx(i);
        }
    }
}

pub(crate) fn is_schema(v: &Value) -> bool {
    matches!(v, Value::Object(_) | Value::Bool(_))
}

fn strings(v: Option<&Value>) -> Option<Vec<&str>> {
    let mut out = Vec::new();
    for x in v?.as_array()? {
        out.push(x.as_str()?);
    }
    Some(out)
}

fn schemas(v: Option<&Value>) -> Option<&Vec<Value>> {
    match v {
        Some(Value::Array(a)) if a.iter().all(is_schema) => Some(a),
        _ => None,
    }
}

fn schema_map(v: Option<&Value>) -> Option<&Map> {
    match v {
        Some(Value::Object(m)) if m.iter().all(|(_, s)| is_schema(s)) => Some(m),
        _ => None,
    }
}

fn schema_kw<'v>(m: &'v Map, k: &str) -> Option<&'v Value> {
    m.get(k).filter(|s| is_schema(s))
}

fn num_kw(m: &Map, k: &str) -> Option<f64> {
    m.get(k).and_then(Value::as_f64).filter(|n| n.is_finite())
}

fn type_kw(m: &Map) -> Option<&Value> {
    m.get("type")
        .filter(|t| matches!(t, Value::String(_)) || strings(Some(t)).is_some())
}

fn dependencies(m: &Map) -> Option<&Map> {
    match m.get("dependencies") {
        Some(Value::Object(d))
            if d.iter()
                .all(|(_, v)| is_schema(v) || strings(Some(v)).is_some()) =>
        {
            Some(d)
        }
        _ => None,
    }
}

fn dependent_required(m: &Map) -> Option<&Map> {
    match m.get("dependentRequired") {
        Some(Value::Object(d)) if d.iter().all(|(_, v)| strings(Some(v)).is_some()) => Some(d),
        _ => None,
    }
}

fn items(m: &Map) -> Option<&Value> {
    m.get("items")
        .filter(|i| is_schema(i) || schemas(Some(i)).is_some())
}

/// `Guard.IsEqual` on JSON values (`===`: objects are never identical here).
pub(crate) fn strict_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Number(x), Value::Number(y)) => x == y,
        (Value::String(x), Value::String(y)) => x == y,
        _ => false,
    }
}

/// `Guard.IsDeepEqual(left, right)`.
fn deep_eq(l: &Value, r: &Value) -> bool {
    match (l, r) {
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| deep_eq(x, y))
        }
        (Value::Array(_), _) => false,
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len()
                && a.iter()
                    .all(|(k, x)| b.get(k).is_some_and(|y| deep_eq(x, y)))
        }
        (Value::Object(_), _) => false,
        _ => strict_eq(l, r),
    }
}

/// `const`/`enum` comparison: `===` for value-like options, else deep equality.
fn eq_option(v: &Value, opt: &Value) -> bool {
    match opt {
        Value::Array(_) | Value::Object(_) => deep_eq(v, opt),
        Value::Number(n) if !n.is_finite() => false,
        _ => strict_eq(v, opt),
    }
}

/// TypeBox's `Hash` (FNV-1a 64 over type markers and bytes), used by `uniqueItems`.
fn hash(v: &Value, h: &mut u64, depth: u32) {
    let mut eat = |bytes: &[u8]| {
        for b in bytes {
            *h = (*h ^ *b as u64).wrapping_mul(1_099_511_628_211);
        }
    };
    if depth > MAX_DEPTH {
        return;
    }
    match v {
        Value::Array(a) => {
            eat(&[0]);
            for x in a {
                hash(x, h, depth + 1);
            }
        }
        Value::Bool(b) => eat(&[2, *b as u8]),
        Value::Null => eat(&[6]),
        Value::Number(n) => {
            eat(&[7]);
            eat(&n.to_le_bytes());
        }
        Value::Object(o) => {
            eat(&[8]);
            // Keys in JS sort order (UTF-16 code units), by insertion sort.
            let mut keys: Vec<&String> = Vec::new();
            for k in o.keys() {
                let at = keys
                    .iter()
                    .position(|x| x.encode_utf16().cmp(k.encode_utf16()).is_gt())
                    .unwrap_or(keys.len());
                keys.insert(at, k);
            }
            for k in keys {
                hash(&Value::String(k.clone()), h, depth + 1);
                if let Some(x) = o.get(k) {
                    hash(x, h, depth + 1);
                }
            }
        }
        Value::String(s) => {
            eat(&[10]);
            eat(s.as_bytes());
        }
    }
}

fn has_duplicates(a: &[Value]) -> bool {
    let mut seen: Vec<u64> = Vec::with_capacity(a.len());
    a.iter().any(|v| {
        let mut h = 14_695_981_039_346_656_037;
        hash(v, &mut h, 0);
        let dup = seen.contains(&h);
        seen.push(h);
        dup
    })
}

/// `Guard.IsMultipleOf`.
fn is_multiple_of(n: f64, d: f64) -> bool {
    if crate::float::fract(n) == 0.0 && js_rem(1.0 / d, 1.0) == 0.0 {
        return true;
    }
    let m = js_rem(n, d);
    let c = [m.abs(), (m - d).abs(), (m + d).abs()];
    !c.iter().any(|x| x.is_nan()) && c.iter().any(|x| *x < 1e-10)
}

/// TypeBox's grapheme-cluster counting over UTF-16 code units.
mod graphemes {
    use crate::prelude::*;

    fn cp(u: &[u16], i: usize) -> u32 {
        match (u.get(i), u.get(i + 1)) {
            (Some(&h), Some(&l))
                if (0xD800..0xDC00).contains(&h) && (0xDC00..0xE000).contains(&l) =>
            {
                0x10000 + ((h as u32 - 0xD800) << 10) + (l as u32 - 0xDC00)
            }
            (Some(&h), _) => h as u32,
            _ => 0,
        }
    }
    fn width(c: u32) -> usize {
        if c > 0xFFFF {
            2
        } else {
            1
        }
    }
    fn modifier(c: u32) -> bool {
        matches!(c, 0x300..=0x36F | 0x1AB0..=0x1AFF | 0x1DC0..=0x1DFF | 0xFE20..=0xFE2F | 0xFE00..=0xFE0F)
    }
    fn consume(u: &[u16], mut i: usize) -> usize {
        while i < u.len() && modifier(cp(u, i)) {
            i += width(cp(u, i));
        }
        i
    }
    fn next(u: &[u16], start: usize) -> usize {
        let first = cp(u, start);
        let mut end = consume(u, start + width(first));
        while end + 1 < u.len() && cp(u, end) == 0x200D {
            end = consume(u, end + 1 + width(cp(u, end + 1)));
        }
        let regional = |c: u32| (0x1F1E6..=0x1F1FF).contains(&c);
        if regional(first) && end < u.len() && regional(cp(u, end)) {
            end += width(cp(u, end));
        }
        end
    }
    fn special(c: Option<&u16>) -> bool {
        c.is_some_and(|&c| c >= 0x300 && (matches!(c, 0xD800..=0xDBFF | 0x300..=0x36F | 0x1AB0..=0x1AFF | 0x1DC0..=0x1DFF | 0xFE20..=0xFE2F | 0xFE00..=0xFE0F | 0x200D)))
    }
    /// Counts clusters until `stop(count)` says so; returns whether it stopped.
    fn count_until(u: &[u16], stop: impl Fn(f64) -> bool) -> bool {
        let (mut n, mut i) = (0.0, 0);
        while i < u.len() {
            i = next(u, i);
            n += 1.0;
            if stop(n) {
                return true;
            }
        }
        false
    }
    pub(super) fn at_least(s: &str, min: f64) -> bool {
        let u: Vec<u16> = s.encode_utf16().collect();
        if min == 0.0 {
            return true;
        }
        if (u.len() as f64) < min {
            return false;
        }
        let mut i = 0usize;
        loop {
            if special(u.get(i)) {
                return count_until(&u, |n| n >= min);
            }
            i += 1;
            if i as f64 >= min {
                return true;
            }
        }
    }
    pub(super) fn at_most(s: &str, max: f64) -> bool {
        let u: Vec<u16> = s.encode_utf16().collect();
        if u.len() as f64 <= max {
            return true;
        }
        let mut i = 0usize;
        loop {
            if special(u.get(i)) {
                return !count_until(&u, |n| n > max);
            }
            i += 1;
            if i as f64 > max {
                return false;
            }
        }
    }
}

/// Whether the schema uses `unevaluatedItems`/`unevaluatedProperties` anywhere
/// (TypeBox's `HasUnevaluated`, which switches off the compiled shortcuts).
pub(crate) fn has_unevaluated(v: &Value) -> bool {
    match v {
        Value::Object(m) => {
            schema_kw(m, "unevaluatedItems").is_some()
                || schema_kw(m, "unevaluatedProperties").is_some()
                || m.iter().any(|(_, x)| has_unevaluated(x))
        }
        Value::Array(a) => a.iter().any(has_unevaluated),
        _ => false,
    }
}

/// `CanAdditionalPropertiesFast`: the compiled validator then only compares
/// the own key count with `required.length`.
fn fast_additional(m: &Map) -> Option<usize> {
    let req = strings(m.get("required"))?;
    let props = schema_map(m.get("properties"))?;
    (schema_map(m.get("patternProperties")).is_none()
        && matches!(m.get("additionalProperties"), Some(Value::Bool(false)))
        && props.len() == req.len())
    .then_some(req.len())
}

/// `GetPropertiesPattern`: the regex TypeBox builds for `additionalProperties`.
fn properties_pattern(m: &Map) -> String {
    let mut out = String::from("(");
    if let Some(pp) = schema_map(m.get("patternProperties")) {
        for k in pp.keys() {
            out.push_str(k);
            out.push('|');
        }
    }
    if let Some(props) = schema_map(m.get("properties")) {
        for k in props.keys() {
            out.push('^');
            for c in k.chars() {
                if one_of(".*+?^${}()|[]\\", c) {
                    out.push('\\');
                }
                out.push(c);
            }
            out.push_str("$|");
        }
    }
    if out.pop() == Some('|') {
        out.push(')');
        out
    } else {
        "(?!)".into()
    }
}

fn decode_pointer_token(t: &str) -> String {
    let mut out = String::new();
    let mut it = t.chars().peekable();
    while let Some(c) = it.next() {
        match (c, it.peek()) {
            ('~', Some('1')) => {
                it.next();
                out.push('/');
            }
            ('~', Some('0')) => {
                it.next();
                out.push('~');
            }
            _ => out.push(c),
        }
    }
    out
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        let hex = |j: usize| b.get(j).and_then(|c| (*c as char).to_digit(16));
        match (c, hex(i + 1), hex(i + 2)) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8(out).unwrap_or_else(|_| s.to_string())
}

fn pointer<'v>(doc: &'v Value, ptr: &str) -> Option<&'v Value> {
    let mut cur = doc;
    for tok in split_ascii(ptr, b'/').into_iter().skip(1) {
        let tok = decode_pointer_token(tok);
        cur = match cur {
            Value::Object(m) => m.get(&tok)?,
            Value::Array(a) => a.get(tok.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(cur)
}

/// `Resolve`'s tree search: a matching node wins over its children, and among
/// children the last match wins; `const`/`enum` values are skipped.
fn find<'v>(v: &'v Value, pred: &dyn Fn(&Map) -> bool, depth: u32) -> Option<&'v Value> {
    if depth > MAX_DEPTH {
        return None;
    }
    match v {
        Value::Object(m) => {
            if pred(m) {
                return Some(v);
            }
            let mut hit = None;
            for (k, x) in m.iter() {
                if k != "const" && k != "enum" {
                    hit = find(x, pred, depth + 1).or(hit);
                }
            }
            hit
        }
        Value::Array(a) => a
            .iter()
            .fold(None, |hit, x| find(x, pred, depth + 1).or(hit)),
        _ => None,
    }
}

pub(crate) struct Engine<'a> {
    pub(crate) root: &'a Value,
    /// TypeBox `Cyclic` conversion context: `$ref` names looked up first.
    pub(crate) defs: Option<&'a Map>,
    overflow: Cell<bool>,
    host: &'a dyn Host,
}

impl<'a> Engine<'a> {
    pub(crate) fn new(root: &'a Value, defs: Option<&'a Map>, host: &'a dyn Host) -> Self {
        Engine {
            root,
            defs,
            overflow: Cell::new(false),
            host,
        }
    }

    /// `new RegExp(pattern, "u").test(text)`; false when it does not compile.
    fn test(&self, pattern: &str, text: &str) -> bool {
        self.host.regex_test(pattern, "u", text).unwrap_or(false)
    }

    /// True when a walk hit the recursion limit (V8 would throw RangeError).
    pub(crate) fn overflowed(&self) -> bool {
        self.overflow.get()
    }

    /// Simplified `$ref` resolution: the conversion context, `#`, JSON
    /// pointers, `$id` (up to `#`) and `$anchor` matches; no base-URI
    /// resolution.
    pub(crate) fn resolve(&self, r: &str) -> Option<&'a Value> {
        if let Some(t) = self.defs.and_then(|d| d.get(r)) {
            return Some(t);
        }
        let (base, frag) = match split_once_ascii(r, b'#', false) {
            Some((b, f)) => (b, f),
            None => (r, ""),
        };
        let doc = if base.is_empty() {
            self.root
        } else {
            let id = |m: &Map| {
                m.get("$id").and_then(Value::as_str).is_some_and(|id| {
                    split_once_ascii(id, b'#', false).map_or(id, |(b, _)| b) == base
                })
            };
            find(self.root, &id, 0)?
        };
        let frag = percent_decode(frag);
        if frag.is_empty() {
            Some(doc)
        } else if frag.starts_with('/') {
            pointer(doc, &frag)
        } else {
            let hash = cat(&["#", &frag]);
            let anchor = |m: &Map| {
                m.get("$anchor").and_then(Value::as_str) == Some(frag.as_str())
                    || m.get("$id").and_then(Value::as_str) == Some(hash.as_str())
            };
            find(doc, &anchor, 0)
        }
    }

    /// `ErrorSchema` / `CheckSchema`.
    pub(crate) fn schema(&self, cx: &mut Cx, p: &Path, s: &Value, v: &Value) -> bool {
        if cx.full() {
            return false;
        }
        let m = match s {
            Value::Bool(b) => return *b || cx.fail(p, None, Msg::Text("schema is false")),
            Value::Object(m) => m,
            _ => return true,
        };
        if self.overflow.get() || super::stack::exhausted() {
            self.overflow.set(true);
            return false;
        }
        self.keywords(cx, p, m, v)
    }

    /// `*SchemaPushStack`: a fresh evaluation frame, popped only on success.
    fn push_schema(&self, cx: &mut Cx, p: &Path, s: &Value, v: &Value) -> bool {
        cx.frames.push(Frame::default());
        let r = self.schema(cx, p, s, v);
        if r {
            cx.frames.pop();
        }
        r
    }

    /// A property against its schema in a pushed frame, recorded as evaluated.
    fn prop(&self, cx: &mut Cx, p: &Path, k: &str, s: &Value, x: &Value) -> bool {
        self.push_schema(cx, &Path::Key(p, k), s, x) && cx.add_key(k)
    }

    /// Items from index `from` against `list[i]` (`Ok`, up to its length) or
    /// one schema (`Err`), each like [`Self::prop`]; after a failure only
    /// `keep_going` visits the rest.
    fn items_from(
        &self,
        cx: &mut Cx,
        p: &Path,
        a: &[Value],
        from: usize,
        schemas: Result<&[Value], &Value>,
        keep_going: bool,
    ) -> bool {
        let mut r = true;
        for (i, x) in a.iter().enumerate().skip(from) {
            let s = match schemas {
                Ok(list) => match list.get(i) {
                    Some(s) => s,
                    None => break,
                },
                Err(s) => s,
            };
            if (r || keep_going) && !(self.push_schema(cx, &Path::Idx(p, i), s, x) && cx.add_idx(i))
            {
                r = false;
            }
        }
        r
    }

    /// `CheckSchema` on the same context without recording errors.
    fn check_in(&self, cx: &mut Cx, s: &Value, v: &Value) -> bool {
        let errs = cx.errs.take();
        let r = self.schema(cx, &Path::Root, s, v);
        cx.errs = errs;
        r
    }

    fn keywords(&self, cx: &mut Cx, p: &Path, m: &Map, v: &Value) -> bool {
        let all = cx.all();
        let mut ok = true;
        macro_rules! kw {
            ($e:expr) => {
                if (ok || all) && !$e {
                    ok = false;
                }
            };
        }
        if let Some(t) = type_kw(m) {
            kw!(self.k_type(cx, p, t, v));
        }
        match v {
            Value::Object(o) => {
                if let Some(req) = strings(m.get("required")) {
                    kw!(self.k_required(cx, p, &req, o));
                }
                if let Some(ap) = schema_kw(m, "additionalProperties") {
                    kw!(self.k_additional(cx, p, m, ap, o));
                }
                if let Some(d) = dependencies(m) {
                    kw!(self.k_dependencies(cx, p, d, v, o));
                }
                if let Some(d) = dependent_required(m) {
                    kw!(self.k_dependent_required(cx, p, d, o));
                }
                if let Some(d) = schema_map(m.get("dependentSchemas")) {
                    let mut r = true;
                    for (k, s) in d.iter() {
                        if (r || all) && o.contains_key(k) && !self.schema(cx, p, s, v) {
                            r = false;
                        }
                    }
                    kw!(r);
                }
                if let Some(pp) = schema_map(m.get("patternProperties")) {
                    kw!(self.k_pattern_properties(cx, p, pp, o));
                }
                if let Some(props) = schema_map(m.get("properties")) {
                    let mut r = true;
                    for (k, s) in props.iter() {
                        if let Some(x) = o.get(k) {
                            if (r || all) && !self.prop(cx, p, k, s, x) {
                                r = false;
                            }
                        }
                    }
                    kw!(r);
                }
                if let Some(pn) = m
                    .get("propertyNames")
                    .filter(|x| matches!(x, Value::Object(_) | Value::Array(_) | Value::Bool(_)))
                {
                    kw!(self.k_property_names(cx, p, pn, o));
                }
                if let Some(n) = num_kw(m, "minProperties") {
                    kw!(o.len() as f64 >= n
                        || cx.fail(p, None, Msg::Limit("fewer", n, "properties")));
                }
                if let Some(n) = num_kw(m, "maxProperties") {
                    kw!(o.len() as f64 <= n
                        || cx.fail(p, None, Msg::Limit("more", n, "properties")));
                }
            }
            Value::Array(a) => {
                if let (Some(ai), Some(Value::Array(list))) =
                    (schema_kw(m, "additionalItems"), items(m))
                {
                    kw!(self.items_from(cx, p, a, list.len(), Err(ai), false));
                }
                let contains = schema_kw(m, "contains");
                if let Some(c) = contains {
                    if num_kw(m, "minContains") != Some(0.0) {
                        let mut any = false;
                        for (i, x) in a.iter().enumerate() {
                            if self.check_in(cx, c, x) && cx.add_idx(i) {
                                any = true;
                            }
                        }
                        kw!(any || cx.fail(p, None, CONTAINS));
                    }
                }
                if let Some(it) = items(m) {
                    let r = match it {
                        Value::Array(list) => self.items_from(cx, p, a, 0, Ok(list), all),
                        s => {
                            let off = schemas(m.get("prefixItems")).map_or(0, Vec::len);
                            self.items_from(cx, p, a, off, Err(s), all)
                        }
                    };
                    kw!(r);
                }
                if let (Some(c), Some(max)) = (contains, num_kw(m, "maxContains")) {
                    let n = a.iter().filter(|x| self.check_in(cx, c, x)).count();
                    kw!(n as f64 <= max || cx.fail(p, None, CONTAINS));
                }
                if let Some(n) = num_kw(m, "maxItems") {
                    kw!(a.len() as f64 <= n || cx.fail(p, None, Msg::Limit("more", n, "items")));
                }
                if let (Some(c), Some(min)) = (contains, num_kw(m, "minContains")) {
                    let mut n = 0;
                    for (i, x) in a.iter().enumerate() {
                        if self.check_in(cx, c, x) && cx.add_idx(i) {
                            n += 1;
                        }
                    }
                    kw!(n as f64 >= min || cx.fail(p, None, CONTAINS));
                }
                if let Some(n) = num_kw(m, "minItems") {
                    kw!(a.len() as f64 >= n || cx.fail(p, None, Msg::Limit("fewer", n, "items")));
                }
                if let Some(list) = schemas(m.get("prefixItems")) {
                    kw!(self.items_from(cx, p, a, 0, Ok(list), all));
                }
                if m.get("uniqueItems") == Some(&TRUE) {
                    kw!(!has_duplicates(a)
                        || cx.fail(p, None, Msg::Text("must not have duplicate items")));
                }
            }
            Value::String(s) => {
                if let Some(n) = num_kw(m, "maxLength") {
                    kw!(graphemes::at_most(s, n)
                        || cx.fail(p, None, Msg::Limit("more", n, "characters")));
                }
                if let Some(n) = num_kw(m, "minLength") {
                    kw!(graphemes::at_least(s, n)
                        || cx.fail(p, None, Msg::Limit("fewer", n, "characters")));
                }
                if let Some(f) = m.get("format").and_then(Value::as_str) {
                    kw!(format::test(self.host, f, s) || cx.fail(p, None, Msg::Format(f)));
                }
                if let Some(pat) = m.get("pattern").and_then(Value::as_str) {
                    let hit = self.test(pat, s);
                    kw!(hit || cx.fail(p, None, Msg::Pattern(pat)));
                }
            }
            // `G.IsNumber`: NaN and infinities skip the numeric keywords.
            Value::Number(n) if n.is_finite() => {
                let n = *n;
                for (k, op) in [
                    ("exclusiveMaximum", "<"),
                    ("exclusiveMinimum", ">"),
                    ("maximum", "<="),
                    ("minimum", ">="),
                ] {
                    if let Some(lim) = num_kw(m, k) {
                        let hit = match op {
                            "<" => n < lim,
                            ">" => n > lim,
                            "<=" => n <= lim,
                            _ => n >= lim,
                        };
                        kw!(hit || cx.fail(p, None, Msg::Cmp(op, lim)));
                    }
                }
                if let Some(d) = num_kw(m, "multipleOf") {
                    kw!(is_multiple_of(n, d) || cx.fail(p, None, Msg::MultipleOf(d)));
                }
            }
            _ => {}
        }
        for key in ["$ref", "$recursiveRef", "$dynamicRef"] {
            if let Some(r) = m.get(key).and_then(Value::as_str) {
                kw!(self.k_ref(cx, p, r, v));
            }
        }
        if let Some(c) = m.get("const") {
            kw!(eq_option(v, c) || cx.fail(p, None, Msg::Text("must be equal to constant")));
        }
        if let Some(Value::Array(opts)) = m.get("enum") {
            kw!(opts.iter().any(|o| eq_option(v, o))
                || cx.fail(
                    p,
                    None,
                    Msg::Text("must be equal to one of the allowed values")
                ));
        }
        if let Some(i) = schema_kw(m, "if") {
            kw!(self.k_if(cx, p, m, i, v));
        }
        if let Some(n) = schema_kw(m, "not") {
            let mut sub = Cx::new(false, cx.fast, self.host);
            let r = !self.schema(&mut sub, p, n, v);
            if r {
                cx.merge(sub);
            }
            kw!(r || cx.fail(p, None, Msg::Text("must not be valid")));
        }
        for (key, mode) in [("allOf", 0), ("anyOf", 1), ("oneOf", 2)] {
            if let Some(list) = schemas(m.get(key)) {
                kw!(self.k_logic(cx, p, list, mode, v));
            }
        }
        if let (Some(ue), Value::Array(a)) = (schema_kw(m, "unevaluatedItems"), v) {
            let entries: Vec<(String, &Value)> = a
                .iter()
                .enumerate()
                .map(|(i, x)| (usize_to_string(i), x))
                .collect();
            kw!(self.k_unevaluated(cx, p, ue, &entries, true));
        }
        if let Some(ue) = schema_kw(m, "unevaluatedProperties") {
            let entries: Vec<(String, &Value)> = match v {
                Value::Object(o) => o.iter().map(|(k, x)| (k.clone(), x)).collect(),
                Value::Array(a) => a
                    .iter()
                    .enumerate()
                    .map(|(i, x)| (usize_to_string(i), x))
                    .collect(),
                _ => Vec::new(),
            };
            if matches!(v, Value::Object(_) | Value::Array(_)) {
                kw!(self.k_unevaluated(cx, p, ue, &entries, false));
            }
        }
        ok
    }

    fn k_type(&self, cx: &mut Cx, p: &Path, t: &Value, v: &Value) -> bool {
        let is = |name: &str| match name {
            "object" => matches!(v, Value::Object(_)),
            "array" => matches!(v, Value::Array(_)),
            "boolean" => matches!(v, Value::Bool(_)),
            "integer" => v
                .as_f64()
                .is_some_and(|n| n.is_finite() && crate::float::fract(n) == 0.0),
            "number" => v.as_f64().is_some_and(f64::is_finite),
            "null" => v.is_null(),
            "string" => matches!(v, Value::String(_)),
            "bigint" | "constructor" | "function" | "symbol" | "undefined" | "void" => false,
            _ => true,
        };
        let ok = match t {
            Value::String(n) => is(n),
            Value::Array(l) => l.iter().any(|n| n.as_str().is_some_and(is)),
            _ => true,
        };
        ok || cx.fail(p, None, Msg::Type(t))
    }

    fn k_required(&self, cx: &mut Cx, p: &Path, req: &[&str], o: &Map) -> bool {
        let missing: Vec<&str> = if cx.all() {
            req.iter().copied().filter(|k| !o.contains_key(k)).collect()
        } else {
            req.iter()
                .copied()
                .find(|k| !o.contains_key(k))
                .into_iter()
                .collect()
        };
        missing.is_empty() || cx.fail(p, missing.first().copied(), Msg::Required(&missing))
    }

    fn k_additional(&self, cx: &mut Cx, p: &Path, m: &Map, ap: &Value, o: &Map) -> bool {
        if cx.fast && !cx.all() {
            if let Some(n) = fast_additional(m) {
                return o.len() == n;
            }
        }
        let props = schema_map(m.get("properties"));
        let pats = schema_map(m.get("patternProperties"));
        let mut ok = true;
        for (k, x) in o.iter() {
            // A pattern that does not compile matches nothing.
            if props.is_some_and(|pr| pr.contains_key(k))
                || pats.is_some_and(|pp| pp.keys().any(|r| self.test(r, k)))
            {
                continue;
            }
            if !self.prop(cx, p, k, ap, x) {
                ok = false;
                if !cx.all() {
                    break;
                }
            }
        }
        ok || cx.fail(p, None, Msg::Text("must not have additional properties"))
    }

    fn k_dependencies(&self, cx: &mut Cx, p: &Path, deps: &Map, v: &Value, o: &Map) -> bool {
        if o.is_empty() {
            return true;
        }
        let mut ok = true;
        for (k, d) in deps.iter() {
            if !(ok || cx.all()) || !o.contains_key(k) {
                continue;
            }
            match strings(Some(d)) {
                Some(list) => {
                    if list.iter().any(|x| !o.contains_key(x)) {
                        ok = cx.fail(p, None, Msg::Deps(k, &list));
                    }
                }
                _ => {
                    if !self.schema(cx, p, d, v) {
                        ok = false;
                    }
                }
            }
        }
        ok
    }

    fn k_dependent_required(&self, cx: &mut Cx, p: &Path, deps: &Map, o: &Map) -> bool {
        if o.is_empty() {
            return true;
        }
        let mut ok = true;
        for (k, d) in deps.iter() {
            if !o.contains_key(k) {
                continue;
            }
            let list = strings(Some(d)).unwrap_or_default();
            for x in &list {
                if (ok || cx.all()) && !o.contains_key(x) {
                    ok = cx.fail(p, None, Msg::Deps(k, &list));
                }
            }
        }
        ok
    }

    fn k_pattern_properties(&self, cx: &mut Cx, p: &Path, pp: &Map, o: &Map) -> bool {
        let mut ok = true;
        for (pat, s) in pp.iter() {
            for (k, x) in o.iter() {
                if (ok || cx.all()) && self.test(pat, k) && !self.prop(cx, p, k, s, x) {
                    ok = false;
                }
            }
        }
        ok
    }

    fn k_property_names(&self, cx: &mut Cx, p: &Path, pn: &Value, o: &Map) -> bool {
        let mut bad: Vec<&str> = Vec::new();
        for k in o.keys() {
            if (bad.is_empty() || cx.all())
                && !self.schema(cx, &Path::Key(p, k), pn, &Value::String(k.clone()))
            {
                bad.push(k);
            }
        }
        bad.is_empty() || cx.fail(p, None, Msg::Names(&bad))
    }

    fn k_ref(&self, cx: &mut Cx, p: &Path, r: &str, v: &Value) -> bool {
        let target = self.resolve(r).unwrap_or(&FALSE);
        let mut sub = cx.sub();
        let ok = is_schema(target) && self.schema(&mut sub, p, target, v);
        if ok {
            cx.merge(sub);
        } else {
            cx.absorb(sub);
        }
        ok
    }

    fn k_if(&self, cx: &mut Cx, p: &Path, m: &Map, i: &Value, v: &Value) -> bool {
        let then_s = schema_kw(m, "then").unwrap_or(&TRUE);
        let else_s = schema_kw(m, "else").unwrap_or(&TRUE);
        if !cx.all() {
            // `CheckIf` and the compiled validator share one context.
            return if self.schema(cx, p, i, v) {
                self.schema(cx, p, then_s, v)
            } else {
                self.schema(cx, p, else_s, v)
            };
        }
        let mut tc = cx.sub();
        let ok = if self.schema(&mut tc, p, i, v) {
            self.schema(&mut tc, p, then_s, v)
                || cx.fail(p, None, Msg::Text("must match \"then\" schema"))
        } else {
            self.schema(cx, p, else_s, v)
                || cx.fail(p, None, Msg::Text("must match \"else\" schema"))
        };
        if ok {
            cx.merge(tc);
        }
        ok
    }

    /// allOf (0), anyOf (1), oneOf (2).
    fn k_logic(&self, cx: &mut Cx, p: &Path, list: &[Value], mode: u8, v: &Value) -> bool {
        let mut pass = Vec::new();
        let mut failed = Vec::new();
        for s in list {
            let mut c = cx.sub();
            if self.schema(&mut c, p, s, v) {
                pass.push(c);
            } else {
                failed.push(c);
                if mode == 0 && !cx.all() {
                    break;
                }
            }
        }
        let ok = match mode {
            0 => failed.is_empty(),
            1 => !pass.is_empty(),
            _ => pass.len() == 1,
        };
        if ok {
            for c in pass {
                cx.merge(c);
            }
            return true;
        }
        if mode != 2 || pass.is_empty() {
            for c in failed {
                cx.absorb(c);
            }
        }
        match mode {
            0 => false,
            1 => cx.fail(p, None, Msg::Text("must match a schema in anyOf")),
            _ => cx.fail(p, None, Msg::Text("must match exactly one schema in oneOf")),
        }
    }

    fn k_unevaluated(
        &self,
        cx: &mut Cx,
        p: &Path,
        ue: &Value,
        entries: &[(String, &Value)],
        items: bool,
    ) -> bool {
        let top = cx.top();
        let (idx, keys) = (top.idx.clone(), top.keys.clone());
        let mut ok = true;
        for (i, (k, x)) in entries.iter().enumerate() {
            if !(ok || cx.all()) {
                break;
            }
            let seen = if items {
                idx.contains(&i)
            } else {
                keys.contains(k)
            };
            // Errors evaluates in a throwaway context, Check in the same one.
            let good = seen
                || if cx.all() {
                    self.schema(&mut cx.sub(), p, ue, x)
                } else {
                    self.schema(cx, p, ue, x)
                };
            if good {
                if items {
                    cx.add_idx(i);
                } else {
                    cx.add_key(k);
                }
            } else {
                ok = false;
            }
        }
        ok || cx.fail(
            p,
            None,
            Msg::Text(if items {
                "must not have unevaluated items"
            } else {
                "must not have unevaluated properties"
            }),
        )
    }
}

/// Build-time checks of `Compile(schema)`: every regex the compiled validator
/// would construct, in TypeBox's build order. Returns V8's SyntaxError message.
pub(crate) fn compile_check(root: &Value, h: &dyn Host) -> Result<(), String> {
    let unevaluated = has_unevaluated(root);
    let mut seen: Vec<*const Value> = Vec::new();
    walk(h, root, root, unevaluated, &mut seen, 0)
}

/// `new RegExp(src, "u")`: V8's SyntaxError message when it does not compile.
fn regex_ok(h: &dyn Host, src: &str) -> Result<(), String> {
    h.regex_test(src, "u", "").map(|_| ())
}

fn walk(
    h: &dyn Host,
    root: &Value,
    s: &Value,
    unev: bool,
    seen: &mut Vec<*const Value>,
    depth: u32,
) -> Result<(), String> {
    let m = match s {
        Value::Object(m) if depth < MAX_DEPTH => m,
        _ => return Ok(()),
    };
    let sub = |x: &Value, seen: &mut Vec<*const Value>| walk(h, root, x, unev, seen, depth + 1);
    if let Some(ap) = schema_kw(m, "additionalProperties") {
        let ignored = !unev && (ap == &TRUE || matches!(ap, Value::Object(o) if o.is_empty()));
        if !ignored && fast_additional(m).is_none() {
            regex_ok(h, &properties_pattern(m))?;
        }
        sub(ap, seen)?;
    }
    if let Some(d) = dependencies(m) {
        for (_, x) in d.iter() {
            sub(x, seen)?;
        }
    }
    for key in ["dependentSchemas", "patternProperties", "properties"] {
        if let Some(map) = schema_map(m.get(key)) {
            for (k, x) in map.iter() {
                if key == "patternProperties" {
                    regex_ok(h, k)?;
                }
                sub(x, seen)?;
            }
        }
    }
    for key in ["propertyNames", "additionalItems", "contains"] {
        if let Some(x) = m.get(key).filter(|x| is_schema(x)) {
            sub(x, seen)?;
        }
    }
    match items(m) {
        Some(Value::Array(list)) => {
            for x in list {
                sub(x, seen)?;
            }
        }
        Some(x) => sub(x, seen)?,
        None => {}
    }
    for x in schemas(m.get("prefixItems")).into_iter().flatten() {
        sub(x, seen)?;
    }
    if let Some(pat) = m.get("pattern").and_then(Value::as_str) {
        regex_ok(h, pat)?;
    }
    for key in ["$ref", "$recursiveRef", "$dynamicRef"] {
        if let Some(r) = m.get(key).and_then(Value::as_str) {
            if let Some(t) = Engine::new(root, None, h).resolve(r) {
                if !seen.contains(&(t as *const Value)) {
                    seen.push(t as *const Value);
                    sub(t, seen)?;
                }
            }
        }
    }
    for key in ["if", "then", "else", "not"] {
        if let Some(x) = schema_kw(m, key) {
            sub(x, seen)?;
        }
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        for x in schemas(m.get(key)).into_iter().flatten() {
            sub(x, seen)?;
        }
    }
    for key in ["unevaluatedItems", "unevaluatedProperties"] {
        if let Some(x) = schema_kw(m, key) {
            sub(x, seen)?;
        }
    }
    Ok(())
}
