//! Server-Sent Events line framing over byte chunks, as the reference proxy client does it.
//!
//! The reference (`streamProxy`, contract P6-P8) decodes bytes with one streaming
//! `TextDecoder` (UTF-8, non-fatal, BOM stripped at stream start), splits the text on
//! `"\n"`, keeps the last piece buffered, and for each complete line: ignores it unless it
//! starts with exactly `"data: "`; takes `line.slice(6).trim()`; ignores it if empty. At end
//! of stream the decoder is flushed and the remaining piece is processed as a line.
//!
//! [`SseFramer`] does the same on bytes. Splitting on byte `0x0A` before decoding is
//! equivalent to splitting the decoded text: `0x0A` never occurs inside a multi-byte UTF-8
//! sequence, and it ends any incomplete one, which the decoder then replaces with U+FFFD
//! exactly as a per-line lossy decode does (one U+FFFD per maximal invalid subpart).
//! The buffer never holds a `\n`, so each byte is scanned once.

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
        let mut rest = chunk;
        while let Some(p) = rest.iter().position(|&b| b == b'\n') {
            let (head, tail) = rest.split_at(p);
            if self.line.is_empty() {
                self.line_done(head, out);
            } else {
                self.line.extend_from_slice(head);
                let line = core::mem::take(&mut self.line);
                self.line_done(&line, out);
                self.line = line;
                self.line.clear();
            }
            rest = tail.get(1..).unwrap_or(&[]);
        }
        self.line.extend_from_slice(rest);
    }

    /// Ends the stream: the remaining bytes (a final line without `\n`) are processed.
    pub fn finish(&mut self, out: &mut Vec<String>) {
        let line = core::mem::take(&mut self.line);
        if !line.is_empty() {
            self.line_done(&line, out);
        }
        self.past_first = false;
    }

    fn line_done(&mut self, mut line: &[u8], out: &mut Vec<String>) {
        if !self.past_first {
            self.past_first = true;
            if let Some(rest) = line.strip_prefix(b"\xEF\xBB\xBF") {
                line = rest;
            }
        }
        if let Some(data) = line.strip_prefix(b"data: ") {
            let text = String::from_utf8_lossy(data);
            let text = text.trim_matches(is_js_ws);
            if !text.is_empty() {
                out.push(text.into());
            }
        }
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
