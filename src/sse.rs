//! Server-Sent Events line framing over byte chunks, as the reference proxy client does it.
//!
//! The reference (`streamProxy`) decodes bytes with one streaming
//! `TextDecoder` (UTF-8, non-fatal, BOM stripped at stream start), splits the text on
//! `"\n"`, keeps the last piece buffered, and for each complete line: ignores it unless it
//! starts with exactly `"data: "`; takes `line.slice(6).trim()`; ignores it if empty. At end
//! of stream the decoder is flushed and the remaining piece is processed as a line.
//!
//! [`SseFramer`] does the same on bytes. Splitting on byte `0x0A` before decoding is
//! equivalent to splitting the decoded text: `0x0A` never occurs inside a multi-byte UTF-8
//! sequence, and it ends any incomplete one, which the decoder then replaces with U+FFFD
//! exactly as a per-line lossy decode does (one U+FFFD per maximal invalid subpart).
//! The buffer never holds a `\n`, so each byte is scanned once. A line's bytes are
//! decoded only when asked for ([`DataLine::text`]): [`delta_line`] reads the common
//! text/thinking delta lines straight from the bytes, which is most of a stream's work.

use crate::prelude::*;
use alloc::borrow::Cow;

/// JavaScript's `String.prototype.trim` whitespace (WhiteSpace + LineTerminator).
pub(crate) fn is_js_ws(c: char) -> bool {
    matches!(
        c,
        '\t'..='\r'
            | ' '
            | '\u{a0}'
            | '\u{1680}'
            | '\u{2000}'..='\u{200a}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202f}'
            | '\u{205f}'
            | '\u{3000}'
            | '\u{feff}'
    )
}

/// Incremental `data: ` line extractor. See the module documentation.
#[derive(Default)]
pub struct SseFramer {
    /// Bytes of the current, not yet terminated line (never contains `\n`).
    line: Vec<u8>,
    /// Whether the first line of the stream has been processed (BOM stripping).
    past_first: bool,
}

impl SseFramer {
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds the next chunk; appends the payload of every completed `data: ` line to `out`.
    pub fn push(&mut self, chunk: &[u8], out: &mut Vec<String>) {
        let _ = self.push_with(chunk, |line| {
            out.extend(line.text().map(Cow::into_owned));
            Ok::<(), core::convert::Infallible>(())
        });
    }

    /// Ends the stream: the remaining bytes (a final line without `\n`) are processed.
    pub fn finish(&mut self, out: &mut Vec<String>) {
        let _ = self.finish_with(|line| {
            out.extend(line.text().map(Cow::into_owned));
            Ok::<(), core::convert::Infallible>(())
        });
    }

    /// Feeds the next chunk and hands every completed `data: ` line to `each`, in order,
    /// without allocating per line (lines whose [`text`](DataLine::text) is `None` too).
    /// The first error stops the stream: the rest of the chunk is dropped (the caller
    /// ends the stream with that error).
    pub fn push_with<E>(
        &mut self,
        chunk: &[u8],
        mut each: impl FnMut(DataLine<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut rest = chunk;
        while let Some(p) = find::<NEWLINE>(rest) {
            let head = rest.get(..p).unwrap_or_default();
            rest = rest.get(p + 1..).unwrap_or_default();
            if self.line.is_empty() {
                self.line_done(head, &mut each)?;
            } else {
                self.line.extend_from_slice(head);
                let line = core::mem::take(&mut self.line);
                let done = self.line_done(&line, &mut each);
                self.line = line;
                self.line.clear();
                done?;
            }
        }
        self.line.extend_from_slice(rest);
        Ok(())
    }

    /// [`finish`](Self::finish) with a callback, like [`push_with`](Self::push_with).
    pub fn finish_with<E>(
        &mut self,
        mut each: impl FnMut(DataLine<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        let line = core::mem::take(&mut self.line);
        let done = if line.is_empty() {
            Ok(())
        } else {
            self.line_done(&line, &mut each)
        };
        self.past_first = false;
        done
    }

    fn line_done<E>(
        &mut self,
        mut line: &[u8],
        each: &mut impl FnMut(DataLine<'_>) -> Result<(), E>,
    ) -> Result<(), E> {
        if !self.past_first {
            self.past_first = true;
            if let Some(rest) = line.strip_prefix(b"\xEF\xBB\xBF") {
                line = rest;
            }
        }
        match (line.get(..6), line.get(6..)) {
            (Some(head), Some(raw)) if same(head, b"data: ") => each(DataLine { raw }),
            _ => Ok(()),
        }
    }
}

/// The payload of one `data: ` line (what follows the prefix), not yet decoded.
#[derive(Clone, Copy, Debug)]
pub struct DataLine<'a> {
    raw: &'a [u8],
}

impl<'a> DataLine<'a> {
    /// The payload's bytes as sent.
    pub fn raw(&self) -> &'a [u8] {
        self.raw
    }

    /// The payload as the reference parses it: decoded (U+FFFD for invalid UTF-8) and
    /// trimmed like `String.prototype.trim`; `None` when nothing is left (the line is
    /// skipped).
    pub fn text(&self) -> Option<Cow<'a, str>> {
        // `from_utf8` checks ASCII a word at a time; the lossy decoder goes char by char.
        let text = match core::str::from_utf8(self.raw) {
            Ok(text) => Cow::Borrowed(trim_js(text)),
            Err(_) => Cow::Owned(trim_js(&String::from_utf8_lossy(self.raw)).to_owned()),
        };
        (!text.is_empty()).then_some(text)
    }
}

/// `text.trim()` in JavaScript; lines that start and end with visible ASCII (all
/// JSON ones) skip the char-by-char search.
#[inline(never)]
fn trim_js(text: &str) -> &str {
    let b = text.as_bytes();
    if matches!(b.first(), Some(0x21..=0x7E)) && matches!(b.last(), Some(0x21..=0x7E)) {
        text
    } else {
        text.trim_matches(is_js_ws)
    }
}

/// Which delta a [`DeltaLine`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeltaKind {
    Text,
    Thinking,
}

/// A `text_delta` or `thinking_delta` line, recognised by [`delta_line`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeltaLine {
    pub kind: DeltaKind,
    pub index: u32,
    /// The length of the delta text in UTF-16 code units (its JavaScript `length`).
    pub units: usize,
}

/// Recognises the lines that make up almost all of a stream,
/// `{"type":"text_delta"|"thinking_delta","contentIndex":N,"delta":"…"}` (members in any
/// order, JSON whitespace anywhere), from a [`DataLine::raw`] payload and without building
/// a JSON value: on a match the delta text is appended to `out` as UTF-8. The match is
/// deliberately narrow, so that whatever it accepts `JSON.parse` gives the same event from
/// the line's [`text`](DataLine::text): exactly those three members, each once, plain keys
/// and type, `contentIndex` a non-negative integer of at most 9 digits in plain notation,
/// a delta without lone surrogates, valid UTF-8, and no whitespace at the ends other than
/// JSON's. Anything else (including malformed JSON) is `None`, `out` is left as it was,
/// and the caller parses the line's text in full.
pub fn delta_line(raw: &[u8], out: &mut Vec<u8>) -> Option<DeltaLine> {
    let start = out.len();
    // Servers write `JSON.stringify` output: try that exact form first.
    if let Some(found) = (Scanner { s: raw, i: 0 }).compact_delta_event(out) {
        return Some(found);
    }
    out.truncate(start);
    let found = Scanner { s: raw, i: 0 }.delta_event(out);
    if found.is_none() {
        out.truncate(start);
    }
    found
}

/// The number of UTF-16 code units of `s` (a JavaScript string's `length`).
// Byte by byte: the runs it counts start at a non-ASCII byte.
pub fn utf16_len(s: &str) -> usize {
    let mut n = 0;
    for c in s.bytes() {
        // Every char has one lead byte; four-byte chars are surrogate pairs.
        n += usize::from(c & 0xC0 != 0x80) + usize::from(c >= 0xF0);
    }
    n
}

// Byte searches a word at a time (SWAR): every streamed byte passes through them.
// In a word `hit` marks, the lowest marked byte is the first match (the marks of
// higher bytes may be spurious; that of the lowest never is). The release build
// optimises for size, so the per-word helpers are forced inline and written as
// plain loops (iterator adapters would stay calls); the search itself is one
// function, called once per line or string run.

#[inline(always)]
const fn splat(b: u8) -> u64 {
    u64::from_ne_bytes([b; 8])
}

/// The 8 bytes of `b` at `i`, little-endian.
#[inline(always)]
fn word_at(b: &[u8], i: usize) -> Option<u64> {
    match b.get(i..i.wrapping_add(8)) {
        Some(&[b0, b1, b2, b3, b4, b5, b6, b7]) => {
            Some(u64::from_le_bytes([b0, b1, b2, b3, b4, b5, b6, b7]))
        }
        _ => None,
    }
}

/// Marks the zero bytes of `w`.
#[inline(always)]
fn zero_byte(w: u64) -> u64 {
    w.wrapping_sub(splat(1)) & !w & splat(0x80)
}

/// Marks the bytes of `w` below `n` (`n` ≤ 0x80).
#[inline(always)]
fn below(w: u64, n: u8) -> u64 {
    w.wrapping_sub(splat(n)) & !w & splat(0x80)
}

/// `\n`.
const NEWLINE: u8 = 0;
/// What ends a run of string characters: `"`, `\\`, a control character.
const STRING_STOP: u8 = 1;
/// The same, and any byte that is not ASCII.
const ASCII_STOP: u8 = 2;

#[inline(always)]
fn hit(w: u64, what: u8) -> u64 {
    if what == NEWLINE {
        return zero_byte(w ^ splat(b'\n'));
    }
    let stop = zero_byte(w ^ splat(b'"')) | zero_byte(w ^ splat(b'\\')) | below(w, 0x20);
    if what == STRING_STOP {
        stop
    } else {
        stop | (w & splat(0x80))
    }
}

/// `a == b` for short slices.
fn same(a: &[u8], b: &[u8]) -> bool {
    a == b
}

/// The position of the first byte of `hay` that `hit(_, WHAT)` marks.
#[inline(always)]
fn find<const WHAT: u8>(hay: &[u8]) -> Option<usize> {
    find_what(hay, WHAT)
}

// One copy for the three searches; a call per line or string run costs little.
#[inline(never)]
fn find_what(hay: &[u8], what: u8) -> Option<usize> {
    let mut i = 0;
    while let Some(w) = word_at(hay, i) {
        let m = hit(w, what);
        if m != 0 {
            return Some(i + (m.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    // The last few bytes one at a time (the mark of a word's lowest byte is never spurious).
    while let Some(&b) = hay.get(i) {
        if hit(u64::from(b), what) & 0x80 != 0 {
            return Some(i);
        }
        i += 1;
    }
    None
}

/// A reader of JSON tokens over bytes (also json::text's).
pub(crate) struct Scanner<'a> {
    pub(crate) s: &'a [u8],
    pub(crate) i: usize,
}

// The release build optimises for size, which would leave the per-byte helpers
// (`peek`, `skip_ascii`) as calls on the path of every streamed line; those used
// once per token stay single functions.
impl<'a> Scanner<'a> {
    #[inline(always)]
    pub(crate) fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    // Per token, not per byte (like `eat` and `lit`): one copy serves all callers.
    #[inline(never)]
    pub(crate) fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }

    #[inline(never)]
    pub(crate) fn eat(&mut self, b: u8) -> Option<()> {
        self.ws();
        (self.peek()? == b).then(|| self.i += 1)
    }

    /// Moves to the next byte that is `"`, `\\`, a control character, or not ASCII.
    #[inline(always)]
    fn skip_ascii(&mut self) -> Option<u8> {
        let rest = self.s.get(self.i..)?;
        let n = find::<ASCII_STOP>(rest)?;
        self.i += n;
        rest.get(n).copied()
    }

    /// `{"type":"…_delta","contentIndex":N,"delta":"…"}` without whitespace, in this order.
    #[inline(always)]
    fn compact_delta_event(&mut self, out: &mut Vec<u8>) -> Option<DeltaLine> {
        if !self.lit(b"{\"type\":\"") {
            return None;
        }
        let kind = if self.lit(b"text_delta\",\"contentIndex\":") {
            DeltaKind::Text
        } else if self.lit(b"thinking_delta\",\"contentIndex\":") {
            DeltaKind::Thinking
        } else {
            return None;
        };
        let index = self.index()?;
        if !self.lit(b",\"delta\":\"") {
            return None;
        }
        let units = self.string(out)?;
        if !self.lit(b"}") {
            return None;
        }
        // A line ending in `\r\n` keeps its `\r` here.
        self.ws();
        (self.i == self.s.len()).then_some(DeltaLine { kind, index, units })
    }

    fn delta_event(&mut self, out: &mut Vec<u8>) -> Option<DeltaLine> {
        let (mut kind, mut index, mut delta) = (None, None, None);
        self.eat(b'{')?;
        loop {
            self.eat(b'"')?;
            // Keys and the type are matched with their closing quote, so a key that
            // merely starts like one, or holds an escape, is not taken for it.
            if self.lit(b"type\"") && kind.is_none() {
                self.eat(b':')?;
                self.eat(b'"')?;
                kind = Some(if self.lit(b"text_delta\"") {
                    DeltaKind::Text
                } else if self.lit(b"thinking_delta\"") {
                    DeltaKind::Thinking
                } else {
                    return None;
                });
            } else if self.lit(b"contentIndex\"") && index.is_none() {
                self.eat(b':')?;
                self.ws();
                index = Some(self.index()?);
            } else if self.lit(b"delta\"") && delta.is_none() {
                self.eat(b':')?;
                self.eat(b'"')?;
                delta = Some(self.string(out)?);
            } else {
                return None;
            }
            self.ws();
            match self.peek()? {
                b',' => self.i += 1,
                b'}' => break,
                _ => return None,
            }
        }
        self.i += 1;
        self.ws();
        if self.i != self.s.len() {
            return None;
        }
        Some(DeltaLine {
            kind: kind?,
            index: index?,
            units: delta?,
        })
    }

    /// Consumes `lit` if the text continues with it.
    // Called a dozen times per line shape, once per key: a call each keeps one copy.
    #[inline(never)]
    pub(crate) fn lit(&mut self, lit: &[u8]) -> bool {
        if let Some(b) = self.s.get(self.i..self.i + lit.len()) {
            if same(b, lit) {
                self.i += lit.len();
                return true;
            }
        }
        false
    }

    /// `0` or `[1-9][0-9]{0,8}`, not followed by more of a number.
    fn index(&mut self) -> Option<u32> {
        let from = self.i;
        let mut n: u32 = 0;
        while let Some(d @ b'0'..=b'9') = self.peek() {
            // At most 9 digits (no overflow), and no leading zero (not JSON).
            if self.i - from == 9 || (self.i > from && n == 0) {
                return None;
            }
            n = n * 10 + u32::from(d - b'0');
            self.i += 1;
        }
        if self.i == from || matches!(self.peek(), Some(b'.' | b'e' | b'E')) {
            return None;
        }
        Some(n)
    }

    /// The rest of a JSON string (after its opening quote), decoded onto `out`; returns
    /// its length in UTF-16 code units.
    pub(crate) fn string(&mut self, out: &mut Vec<u8>) -> Option<usize> {
        let mut units = 0;
        loop {
            let run = self.i;
            let stop = self.skip_ascii()?;
            let ascii = self.s.get(run..self.i)?;
            out.extend_from_slice(ascii);
            units += ascii.len();
            let c = match stop {
                b'"' => {
                    self.i += 1;
                    return Some(units);
                }
                b'\\' => {
                    self.i += 1;
                    self.escape()?
                }
                0x80.. => {
                    // Up to the next `"`, `\\` or control character, which no valid UTF-8
                    // sequence straddles; invalid bytes are left to the full decode.
                    let rest = self.s.get(self.i..)?;
                    let text =
                        core::str::from_utf8(rest.get(..find::<STRING_STOP>(rest)?)?).ok()?;
                    out.extend_from_slice(text.as_bytes());
                    units += utf16_len(text);
                    self.i += text.len();
                    continue;
                }
                _ => return None,
            };
            let mut buf = [0; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            units += c.len_utf16();
        }
    }

    /// The character of the escape after a `\\`.
    fn escape(&mut self) -> Option<char> {
        let c = match self.peek()? {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                self.i += 1;
                let unit = self.hex4()?;
                let code = if (0xD800..0xDC00).contains(&unit) {
                    if self.s.get(self.i..self.i + 2)? != b"\\u" {
                        return None;
                    }
                    self.i += 2;
                    let low = self.hex4()?;
                    if !(0xDC00..0xE000).contains(&low) {
                        return None;
                    }
                    0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                } else {
                    unit
                };
                // A lone low surrogate has no `char`: left to `JSON.parse`.
                return char::from_u32(code);
            }
            _ => return None,
        };
        self.i += 1;
        Some(c)
    }

    fn hex4(&mut self) -> Option<u32> {
        let mut n = 0;
        for &b in self.s.get(self.i..self.i + 4)? {
            n = (n << 4) | char::from(b).to_digit(16)?;
        }
        self.i += 4;
        Some(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn all(chunks: &[&[u8]]) -> Vec<String> {
        let mut f = SseFramer::new();
        let mut out = Vec::new();
        for c in chunks {
            f.push(c, &mut out);
        }
        f.finish(&mut out);
        out
    }

    #[test]
    fn basic_lines() {
        let s = b"data: {\"a\":1}\n\ndata: x \r\n: comment\nevent: foo\ndata:nospace\ndata:  \ndata: last";
        assert_eq!(all(&[s]), ["{\"a\":1}", "x", "last"]);
    }

    #[test]
    fn prefix_must_be_exact() {
        assert_eq!(all(&[b" data: a\nDATA: b\ndata:\tc\ndata: d\n"]), ["d"]);
        // One line is one event: no multi-line joining.
        assert_eq!(all(&[b"data: a\ndata: b\n\n"]), ["a", "b"]);
    }

    #[test]
    fn js_trim_whitespace() {
        let s = "data: \u{a0}\u{feff}x y\u{2028}\u{3000}\t\r\n".as_bytes();
        assert_eq!(all(&[s]), ["x y"]);
        // U+0085 is not JS whitespace; U+001F is not either.
        let s = "data: \u{85}x\u{1f}\n".as_bytes();
        assert_eq!(all(&[s]), ["\u{85}x\u{1f}"]);
        assert_eq!(all(&["data: \u{a0}\n".as_bytes()]), Vec::<String>::new());
    }

    #[test]
    fn split_everywhere() {
        let s = "data: é😀\r\ndata: b\n".as_bytes();
        for i in 0..=s.len() {
            for j in i..=s.len() {
                assert_eq!(all(&[&s[..i], &s[i..j], &s[j..]]), ["é😀", "b"], "{i} {j}");
            }
        }
    }

    #[test]
    fn invalid_utf8_like_text_decoder() {
        // Expectations taken from Node's TextDecoder (non-fatal).
        let cases: &[(&[u8], &str)] = &[
            (b"\xE2\x82", "\u{fffd}"),
            (b"\xE2\x82A", "\u{fffd}A"),
            (b"\xF0\x9F\x98", "\u{fffd}"),
            (b"\xC0\xAF", "\u{fffd}\u{fffd}"),
            (b"\xED\xA0\x80", "\u{fffd}\u{fffd}\u{fffd}"),
            (b"\xF4\x90\x80\x80", "\u{fffd}\u{fffd}\u{fffd}\u{fffd}"),
            (b"\x80\x80", "\u{fffd}\u{fffd}"),
            (b"\xFFA", "\u{fffd}A"),
        ];
        for (bytes, want) in cases {
            let mut line = b"data: ".to_vec();
            line.extend_from_slice(bytes);
            let mut nl = line.clone();
            nl.extend_from_slice(b"\ndata: z");
            assert_eq!(all(&[&line]), [*want]);
            assert_eq!(all(&[&nl]), [*want, "z"]);
        }
        // An incomplete sequence cut by the newline is replaced, not joined across lines.
        assert_eq!(
            all(&[b"data: a\xE2\x82", b"\n\xACdata: b\n"]),
            ["a\u{fffd}"]
        );
    }

    #[test]
    fn bom_only_at_stream_start() {
        assert_eq!(
            all(&[b"\xEF", b"\xBB\xBFdata: a\n\xEF\xBB\xBFdata: b\n"]),
            ["a"]
        );
        assert_eq!(all(&[b"data: \xEF\xBB\xBFa\xEF\xBB\xBF\n"]), ["a"]);
    }

    #[test]
    fn final_line_without_newline_and_reuse() {
        let mut f = SseFramer::new();
        let mut out = Vec::new();
        f.push(b"data: 1\ndata: 2", &mut out);
        assert_eq!(out, ["1"]);
        f.finish(&mut out);
        assert_eq!(out, ["1", "2"]);
        f.finish(&mut out);
        assert_eq!(out, ["1", "2"]);
        f.push(b"data: 3\r", &mut out);
        f.finish(&mut out);
        assert_eq!(out, ["1", "2", "3"]);
    }

    /// `delta_line` on `line`'s bytes: the event and its text (checked to be UTF-8 of
    /// `units` UTF-16 code units), with `units` zeroed for comparisons.
    fn delta_raw(line: &[u8]) -> Option<(DeltaLine, String)> {
        let mut out = b"kept:".to_vec();
        let found = delta_line(line, &mut out);
        let Some(d) = found else {
            assert_eq!(
                out, b"kept:",
                "a miss leaves the buffer as it was: {line:?}"
            );
            return None;
        };
        let text = String::from_utf8(out.split_off(5)).expect("UTF-8");
        assert_eq!(out, b"kept:");
        assert_eq!(d.units, text.encode_utf16().count(), "{text:?}");
        Some((DeltaLine { units: 0, ..d }, text))
    }

    fn delta(line: &str) -> Option<(DeltaLine, String)> {
        delta_raw(line.as_bytes())
    }

    const TEXT0: DeltaLine = DeltaLine {
        kind: DeltaKind::Text,
        index: 0,
        units: 0,
    };

    #[test]
    fn delta_lines_taken() {
        let cases: &[(&str, DeltaLine, &str)] = &[
            (r#"{"type":"text_delta","contentIndex":0,"delta":"hi"}"#, TEXT0, "hi"),
            (
                r#"{"type":"thinking_delta","contentIndex":12,"delta":""}"#,
                DeltaLine {
                    kind: DeltaKind::Thinking,
                    index: 12,
                    units: 0,
                },
                "",
            ),
            (
                "{ \"delta\" :\t\"x\" ,\r\n\"contentIndex\" : 0 , \"type\" : \"text_delta\" }",
                TEXT0,
                "x",
            ),
            (
                r#"{"type":"text_delta","contentIndex":0,"delta":"\" \\ \/ \b \f \n \r \t \u0041\u00E9\u20ac\ud83d\uDE00\u0000"}"#,
                TEXT0,
                "\" \\ / \u{8} \u{c} \n \r \t Aé€😀\0",
            ),
            (
                "{\"type\":\"text_delta\",\"contentIndex\":999999999,\"delta\":\"é😀\u{2028}\u{7f}\"}",
                DeltaLine {
                    kind: DeltaKind::Text,
                    index: 999_999_999,
                    units: 0,
                },
                "é😀\u{2028}\u{7f}",
            ),
        ];
        for (line, want, text) in cases {
            assert_eq!(delta(line), Some((*want, text.to_string())), "{line}");
        }
        // JSON whitespace at the ends (a `\r\n` line keeps its `\r`), non-ASCII runs
        // between escapes and at the end.
        let line = "{\"type\":\"text_delta\",\"contentIndex\":0,\"delta\":\"é\\n😀x\\u0041€\"}\r";
        assert_eq!(delta(line), Some((TEXT0, "é\n😀xA€".into())));
        assert_eq!(
            delta(&format!(" \t{line} ")),
            Some((TEXT0, "é\n😀xA€".into()))
        );
    }

    #[test]
    fn delta_lines_need_valid_utf8_and_json_ends() {
        let line = |middle: &[u8], end: &[u8]| {
            [
                br#"{"type":"text_delta","contentIndex":0,"delta":"a"#,
                middle,
                br#"b"}"#,
                end,
            ]
            .concat()
        };
        assert!(delta_raw(&line("é".as_bytes(), b"")).is_some());
        for bad in [
            &b"\xff"[..],
            b"\xC3",
            b"\xE2\x82",
            b"\xED\xA0\x80",
            b"\xC0\xAF",
            b"\x80",
        ] {
            assert_eq!(delta_raw(&line(bad, b"")), None, "{bad:?}");
        }
        // Whitespace String.prototype.trim removes but JSON.parse does not take.
        for end in [
            &b"\x0b"[..],
            b"\x0c",
            "\u{a0}".as_bytes(),
            "\u{feff}".as_bytes(),
        ] {
            assert_eq!(delta_raw(&line(b"", end)), None, "{end:?}");
        }
    }

    #[test]
    fn delta_lines_left_to_json_parse() {
        let misses = [
            // Other events, other shapes.
            r#"{"type":"text_start","contentIndex":0}"#,
            r#"{"type":"text_deltas","contentIndex":0,"delta":"x"}"#,
            r#"{"type":"toolcall_delta","contentIndex":0,"delta":"x"}"#,
            r#"{"type":"text_delta","contentIndex":0}"#,
            r#"{"contentIndex":0,"delta":"x"}"#,
            r#"{"type":"text_delta","delta":"x"}"#,
            r#"["type","text_delta"]"#,
            "",
            // JSON.parse gives something we do not reproduce here.
            r#"{"type":"text_delta","contentIndex":0,"delta":"a","delta":"b"}"#,
            r#"{"type":"text_delta","type":"text_delta","contentIndex":0,"delta":"a"}"#,
            r#"{"type":"text_delta","contentIndex":0,"contentIndex":0,"delta":"a"}"#,
            r#"{"type":"text_delta","contentIndex":0,"delta":"a","x":1}"#,
            r#"{"__proto__":1,"type":"text_delta","contentIndex":0,"delta":"a"}"#,
            r#"{"type":"text\u005fdelta","contentIndex":0,"delta":"a"}"#,
            r#"{"typ\u0065":"text_delta","contentIndex":0,"delta":"a"}"#,
            r#"{"type":"text_delta","contentIndex":"0","delta":"a"}"#,
            r#"{"type":"text_delta","contentIndex":0.0,"delta":"a"}"#,
            r#"{"type":"text_delta","contentIndex":0e0,"delta":"a"}"#,
            r#"{"type":"text_delta","contentIndex":1E2,"delta":"a"}"#,
            r#"{"type":"text_delta","contentIndex":-0,"delta":"a"}"#,
            r#"{"type":"text_delta","contentIndex":1000000000,"delta":"a"}"#,
            r#"{"type":"text_delta","contentIndex":0,"delta":5}"#,
            r#"{"type":"text_delta","contentIndex":0,"delta":null}"#,
            r#"{"type":"text_delta","contentIndex":0,"delta":"\ud800"}"#,
            r#"{"type":"text_delta","contentIndex":0,"delta":"\udc00"}"#,
            r#"{"type":"text_delta","contentIndex":0,"delta":"\ud800\u0041"}"#,
            r#"{"type":"text_delta","contentIndex":0,"delta":"\ud800x"}"#,
            // Not JSON: JSON.parse throws.
            r#"{"type":"text_delta","contentIndex":00,"delta":"a"}"#,
            r#"{"type":"text_delta","contentIndex":01,"delta":"a"}"#,
            r#"{"type":"text_delta","contentIndex":,"delta":"a"}"#,
            "{\"type\":\"text_delta\",\"contentIndex\":0,\"delta\":\"a\tb\"}",
            r#"{"type":"text_delta","contentIndex":0,"delta":"\x"}"#,
            r#"{"type":"text_delta","contentIndex":0,"delta":"\u12"}"#,
            r#"{"type":"text_delta","contentIndex":0,"delta":"\u12g4"}"#,
            r#"{"type":"text_delta","contentIndex":0,"delta":"a"} x"#,
            r#"{"type":"text_delta","contentIndex":0,"delta":"a""#,
            r#"{"type":"text_delta","contentIndex":0,"delta":"a}"#,
            r#"{"type":"text_delta","contentIndex":0,"delta":"a",}"#,
            r#"{"type":"text_delta","contentIndex":0 "delta":"a"}"#,
            r#"{"type":"text_delta","contentIndex":0,"delta""a"}"#,
            r#"{,"type":"text_delta","contentIndex":0,"delta":"a"}"#,
            "{\"type\":\"text_delta\",\"contentIndex\":0,\"delta\":\"a\"}\u{a0}",
        ];
        for line in misses {
            assert_eq!(delta(line), None, "{line}");
        }
    }

    #[test]
    fn search_helpers() {
        for len in 0..40 {
            for at in 0..=len {
                let mut v = vec![b'a'; len];
                if let Some(b) = v.get_mut(at) {
                    *b = b'\n';
                }
                let want = (at < len).then_some(at);
                assert_eq!(find::<NEWLINE>(&v), want);
                for stop in [b'"', b'\\', 0, 0x1f] {
                    if let Some(b) = v.get_mut(at) {
                        *b = stop;
                    }
                    assert_eq!(find::<STRING_STOP>(&v), want);
                    assert_eq!(find::<ASCII_STOP>(&v), want);
                }
                for high in [0x80, 0xc3, 0xff] {
                    if let Some(b) = v.get_mut(at) {
                        *b = high;
                    }
                    assert_eq!(find::<ASCII_STOP>(&v), want);
                }
                // Bytes around the marks that must not match.
                for other in [0x20, 0x7f, 0x80, 0xff, b'#', b'[', b']', 0x0b, 0x09 + 0x80] {
                    let w = vec![other; len];
                    if other != b'\n' {
                        assert_eq!(find::<NEWLINE>(&w), None);
                    }
                    if other >= 0x20 {
                        assert_eq!(find::<STRING_STOP>(&w), None, "{other:#x}");
                    }
                    if (0x20..0x80).contains(&other) {
                        assert_eq!(find::<ASCII_STOP>(&w), None, "{other:#x}");
                    }
                }
            }
        }
        assert!(same(b"", b""));
        assert!(same(b"contentIndex\"", b"contentIndex\""));
        assert!(!same(b"contentIndex\"", b"contentIndeX\""));
        assert!(!same(b"contentIndeX\"", b"contentIndex\""));
        assert!(!same(b"type", b"typ"));
    }

    /// `JSON.stringify` of a string.
    fn js_quote(s: &str) -> String {
        let mut out = String::from("\"");
        for c in s.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                '\u{8}' => out.push_str("\\b"),
                '\u{c}' => out.push_str("\\f"),
                c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
                c => out.push(c),
            }
        }
        out.push('"');
        out
    }

    proptest! {
        #[test]
        fn any_delta_text_round_trips(text in any::<String>(), index in 0u32..1_000_000_000, thinking: bool, order in 0usize..6) {
            let kind = if thinking { "thinking_delta" } else { "text_delta" };
            let members = [
                format!("\"type\":\"{kind}\""),
                format!("\"contentIndex\":{index}"),
                format!("\"delta\":{}", js_quote(&text)),
            ];
            let [a, b, c] = [[0, 1, 2], [0, 2, 1], [1, 0, 2], [1, 2, 0], [2, 0, 1], [2, 1, 0]][order];
            let line = format!("{{{},{},{}}}", members[a], members[b], members[c]);
            let want = DeltaLine { kind: if thinking { DeltaKind::Thinking } else { DeltaKind::Text }, index, units: 0 };
            prop_assert_eq!(delta(&line), Some((want, text)));
        }

        #[test]
        fn utf16_len_is_js_length(text in any::<String>()) {
            prop_assert_eq!(utf16_len(&text), text.encode_utf16().count());
        }
    }

    fn stream() -> impl Strategy<Value = Vec<u8>> {
        let piece = prop_oneof![
            Just(b"data: ".to_vec()),
            Just(b"data:".to_vec()),
            Just(b"\n".to_vec()),
            Just(b"\r\n".to_vec()),
            Just(b": c\n".to_vec()),
            Just(" é😀\u{a0}".as_bytes().to_vec()),
            Just(b"\xEF\xBB\xBF".to_vec()),
            Just(b"{\"a\":1}".to_vec()),
            proptest::collection::vec(any::<u8>(), 0..6),
        ];
        proptest::collection::vec(piece, 0..24).prop_map(|v| v.concat())
    }

    proptest! {
        #[test]
        fn any_split_same_output(s in stream(), cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..8)) {
            let whole = all(&[&s]);
            let mut idx: Vec<usize> = cuts.iter().map(|c| c.index(s.len() + 1)).collect();
            idx.sort_unstable();
            let mut parts: Vec<&[u8]> = Vec::new();
            let mut prev = 0;
            for i in idx { parts.push(&s[prev..i]); prev = i; }
            parts.push(&s[prev..]);
            prop_assert_eq!(all(&parts), whole);
        }
    }
}
