//! A small backtracking matcher for the ECMAScript regular expressions that JSON
//! Schemas carry (`pattern`, `patternProperties`, TypeBox's property-key regexes
//! and the built-in format checks): [`super::RustHost`]'s `RegExp`, for native
//! code and tests. The wasm build uses the JavaScript engine's `RegExp` through
//! its [`super::Host`] and links none of this.
//!
//! Supported, with V8's syntax rules for the `u` flag (and Annex B leniency
//! without it): literals, `.`, classes `[...]`/`[^...]` with ranges,
//! `\d \D \w \W \s \S`, `\b \B`, `^ $` (no multiline flag), capturing,
//! non-capturing and named groups, back-references `\1`/`\k<n>`, lookahead and
//! lookbehind, alternation, greedy and lazy `* + ? {n} {n,} {n,m}`, escapes
//! `\t \n \v \f \r \0 \cX \xHH \uHHHH \u{H..}`, and `\p{..}`/`\P{..}` for
//! `L Lu Ll N Nd Alphabetic White_Space ASCII Any` (approximated with Rust's
//! `char` predicates: `L` is `Alphabetic`, `Nd` is `N`).
//!
//! Not supported: other property escapes (`\p{Script=Greek}`, ...) are reported
//! as `Invalid property name`, where V8 accepts them; the `v` flag; captures
//! are not reset between iterations of a quantified group. Matching gives up
//! (reports no match) after a step budget, where V8 would keep
//! going (catastrophic patterns mostly fail to match anyway), and when the
//! recursion would use more stack than the validator's budget (long inputs
//! against quantified groups, e.g. `^(ab)+$` on ~10^4 repetitions).
//!
//! Compile errors carry V8's reason text (`Unterminated group`, `Nothing to
//! repeat`, ...); [`error_message`] formats them like V8's `SyntaxError`.

use crate::prelude::*;
const STEP_LIMIT: u32 = 1_000_000;

#[derive(Debug)]
enum Node {
    Empty,
    Char(u32),
    Any,
    Set(Box<Set>),
    Start,
    End,
    WordB(bool),
    Group(Box<Node>, Option<usize>),
    Look(Box<Node>, bool, bool), // inner, ahead, negate
    BackRef(usize),
    Alt(Vec<Node>),
    Seq(Vec<Node>),
    Rep(Box<Node>, u32, u32, bool), // inner, min, max, greedy
}

#[derive(Debug, Clone, Copy)]
enum Item {
    Range(u32, u32),
    Digit(bool),
    Word(bool),
    Space(bool),
    Prop(u8, bool),
}

#[derive(Debug)]
struct Set {
    neg: bool,
    items: Vec<Item>,
}

/// A compiled regular expression.
#[derive(Debug)]
pub(crate) struct Regex {
    root: Node,
    ncap: usize,
    icase: bool,
    unicode: bool,
    anchored: bool,
}

/// `Invalid regular expression: /src/flags: reason`, as V8 words it.
pub(crate) fn error_message(src: &str, flags: &str, reason: &str) -> String {
    super::cat(&[
        "Invalid regular expression: /",
        src,
        "/",
        flags,
        ": ",
        reason,
    ])
}

/// Compiles `src`; `unicode` selects the `u` flag's rules, `icase` the `i` flag
/// (ASCII case folding only). The error is V8's reason text.
pub(crate) fn compile(src: &str, unicode: bool, icase: bool) -> Result<Regex, String> {
    let chars: Vec<char> = src.chars().collect();
    let (ncap, names) = scan_groups(&chars);
    let mut p = Parser {
        s: chars,
        i: 0,
        u: unicode,
        ncap,
        names,
        seen: Vec::new(),
        next_cap: 0,
        pending: None,
        deferred: None,
    };
    let root = p.alt()?;
    if p.i < p.s.len() {
        // Only a stray ')' stops the top-level disjunction early.
        return Err("Unmatched ')'".into());
    }
    if let Some(e) = p.deferred {
        return Err(e.into());
    }
    let anchored = match &root {
        Node::Seq(v) => matches!(v.first(), Some(Node::Start)),
        Node::Start => true,
        _ => false,
    };
    Ok(Regex {
        root,
        ncap,
        icase,
        unicode,
        anchored,
    })
}

/// Counts capturing groups and collects group names (needed before parsing to
/// tell back-references from other escapes).
fn scan_groups(s: &[char]) -> (usize, Vec<(String, usize)>) {
    let (mut n, mut names, mut i, mut class) = (0, Vec::new(), 0, false);
    while let Some(&c) = s.get(i) {
        match c {
            '\\' => i += 1,
            '[' => class = true,
            ']' => class = false,
            '(' if !class => {
                if s.get(i + 1) != Some(&'?') {
                    n += 1;
                } else if s.get(i + 2) == Some(&'<')
                    && !matches!(s.get(i + 3), Some('=') | Some('!'))
                {
                    n += 1;
                    let name: String = s.iter().skip(i + 3).take_while(|c| **c != '>').collect();
                    names.push((name, n));
                }
            }
            _ => {}
        }
        i += 1;
    }
    (n, names)
}

struct Parser {
    s: Vec<char>,
    i: usize,
    u: bool,
    ncap: usize,
    names: Vec<(String, usize)>,
    seen: Vec<String>,
    next_cap: usize,
    /// Without `u` an astral character is two UTF-16 units: the low one waits here.
    pending: Option<u32>,
    /// Errors V8 reports only after parsing the whole pattern.
    deferred: Option<&'static str>,
}

type R<T> = Result<T, String>;

fn err<T>(m: &str) -> R<T> {
    Err(m.into())
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.s.get(self.i).copied()
    }
    fn at(&self, off: usize) -> Option<char> {
        self.s.get(self.i + off).copied()
    }
    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn alt(&mut self) -> R<Node> {
        let mut alts = vec![self.seq()?];
        while self.eat('|') {
            alts.push(self.seq()?);
        }
        Ok(if alts.len() == 1 {
            alts.pop().unwrap_or(Node::Empty)
        } else {
            Node::Alt(alts)
        })
    }

    fn seq(&mut self) -> R<Node> {
        let mut items = Vec::new();
        loop {
            if self.pending.is_none() && matches!(self.peek(), None | Some('|') | Some(')')) {
                break;
            }
            let (atom, quantifiable) = self.term()?;
            let atom = self.quantifier(atom, quantifiable)?;
            items.push(atom);
        }
        Ok(Node::Seq(items))
    }

    /// Parses `{n}`, `{n,}`, `{n,m}` at the cursor (on `{`); None if malformed.
    fn braces(&mut self) -> Option<(u32, u32)> {
        let start = self.i;
        self.i += 1;
        let min = self.number();
        let r = match min {
            None => None,
            Some(min) => {
                if self.eat('}') {
                    Some((min, min))
                } else if self.eat(',') {
                    if self.eat('}') {
                        Some((min, u32::MAX))
                    } else {
                        match self.number() {
                            Some(max) if self.eat('}') => Some((min, max)),
                            _ => None,
                        }
                    }
                } else {
                    None
                }
            }
        };
        if r.is_none() {
            self.i = start;
        }
        r
    }

    fn number(&mut self) -> Option<u32> {
        let start = self.i;
        let mut n: u64 = 0;
        while let Some(d) = self.peek().and_then(|c| c.to_digit(10)) {
            n = (n * 10 + d as u64).min(u32::MAX as u64);
            self.i += 1;
        }
        if self.i == start {
            None
        } else {
            Some(n as u32)
        }
    }

    /// `quantifiable`: Some(false) for assertions, None for lookarounds.
    fn quantifier(&mut self, atom: Node, quantifiable: Option<bool>) -> R<Node> {
        if self.pending.is_some() {
            return Ok(atom);
        }
        let (min, max) = match self.peek() {
            Some('*') => {
                self.i += 1;
                (0, u32::MAX)
            }
            Some('+') => {
                self.i += 1;
                (1, u32::MAX)
            }
            Some('?') => {
                self.i += 1;
                (0, 1)
            }
            Some('{') => match self.braces() {
                Some(b) => b,
                // After an assertion a stray `{` is a term of its own.
                None if self.u && quantifiable != Some(false) => {
                    return err("Incomplete quantifier")
                }
                None => return Ok(atom),
            },
            _ => return Ok(atom),
        };
        if quantifiable == Some(false) {
            return err("Nothing to repeat");
        }
        if min > max {
            return err("numbers out of order in {} quantifier");
        }
        if quantifiable.is_none() {
            return err("Invalid quantifier");
        }
        let greedy = !self.eat('?');
        Ok(Node::Rep(Box::new(atom), min, max, greedy))
    }

    /// One term: an assertion (not quantifiable) or an atom.
    fn term(&mut self) -> R<(Node, Option<bool>)> {
        if let Some(lo) = self.pending.take() {
            return Ok((Node::Char(lo), Some(true)));
        }
        let c = match self.peek() {
            Some(c) => c,
            None => return Ok((Node::Empty, Some(false))),
        };
        self.i += 1;
        let atom = match c {
            '^' => return Ok((Node::Start, Some(false))),
            '$' => return Ok((Node::End, Some(false))),
            '.' => Node::Any,
            '(' => return self.group(),
            '[' => self.class()?,
            '*' | '+' | '?' => return err("Nothing to repeat"),
            '{' => {
                self.i -= 1;
                if self.braces().is_some() {
                    return err("Nothing to repeat");
                }
                self.i += 1;
                if self.u {
                    return err("Lone quantifier brackets");
                }
                Node::Char('{' as u32)
            }
            '}' | ']' if self.u => return err("Lone quantifier brackets"),
            '\\' => match self.peek() {
                Some('b') => {
                    self.i += 1;
                    return Ok((Node::WordB(true), Some(false)));
                }
                Some('B') => {
                    self.i += 1;
                    return Ok((Node::WordB(false), Some(false)));
                }
                _ => self.atom_escape()?,
            },
            c => Node::Char(self.unit(c)),
        };
        Ok((atom, Some(true)))
    }

    /// The matching unit for a literal: the code point under `u`, else the
    /// high surrogate of an astral character (its low half becomes pending).
    fn unit(&mut self, c: char) -> u32 {
        let v = c as u32;
        if self.u || v < 0x10000 {
            return v;
        }
        self.pending = Some(0xDC00 + ((v - 0x10000) & 0x3FF));
        0xD800 + ((v - 0x10000) >> 10)
    }

    fn group(&mut self) -> R<(Node, Option<bool>)> {
        let mut cap = None;
        let mut look = None;
        if self.eat('?') {
            match (self.peek(), self.at(1)) {
                (Some(':'), _) => self.i += 1,
                (Some('='), _) => {
                    self.i += 1;
                    look = Some((true, false));
                }
                (Some('!'), _) => {
                    self.i += 1;
                    look = Some((true, true));
                }
                (Some('<'), Some('=')) => {
                    self.i += 2;
                    look = Some((false, false));
                }
                (Some('<'), Some('!')) => {
                    self.i += 2;
                    look = Some((false, true));
                }
                (Some('<'), _) => {
                    self.i += 1;
                    let name = self.group_name()?;
                    if self.seen.contains(&name) {
                        return err("Duplicate capture group name");
                    }
                    self.seen.push(name);
                    self.next_cap += 1;
                    cap = Some(self.next_cap);
                }
                _ => return err("Invalid group"),
            }
        } else {
            self.next_cap += 1;
            cap = Some(self.next_cap);
        }
        let inner = self.alt()?;
        if !self.eat(')') {
            return err("Unterminated group");
        }
        Ok(match look {
            // Lookaheads are quantifiable only without the u flag (Annex B).
            Some((ahead, neg)) => (
                Node::Look(Box::new(inner), ahead, neg),
                if ahead && !self.u { Some(true) } else { None },
            ),
            None => (Node::Group(Box::new(inner), cap), Some(true)),
        })
    }

    fn group_name(&mut self) -> R<String> {
        let mut name = String::new();
        loop {
            match self.peek() {
                Some('>') if !name.is_empty() => {
                    self.i += 1;
                    return Ok(name);
                }
                Some(c)
                    if c == '$'
                        || c == '_'
                        || c.is_alphabetic()
                        || (!name.is_empty() && c.is_alphanumeric()) =>
                {
                    name.push(c);
                    self.i += 1;
                }
                _ => return err("Invalid capture group name"),
            }
        }
    }

    /// After `\` outside a class.
    fn atom_escape(&mut self) -> R<Node> {
        let c = match self.peek() {
            Some(c) => c,
            None => return err("\\ at end of pattern"),
        };
        if let Some(item) = self.class_escape()? {
            return Ok(Node::Set(Box::new(Set {
                neg: false,
                items: vec![item],
            })));
        }
        if ('1'..='9').contains(&c) {
            let start = self.i;
            let n = self.number().unwrap_or(0) as usize;
            if n <= self.ncap {
                return Ok(Node::BackRef(n));
            }
            if self.u {
                return err("Invalid escape");
            }
            self.i = start;
            return Ok(Node::Char(self.legacy_octal()));
        }
        if c == 'k' && (self.u || !self.names.is_empty()) {
            self.i += 1;
            if !self.eat('<') {
                return err("Invalid named reference");
            }
            let name = self.group_name()?;
            return Ok(match self.names.iter().find(|(n, _)| *n == name) {
                Some((_, idx)) => Node::BackRef(*idx),
                None => {
                    self.deferred
                        .get_or_insert("Invalid named capture referenced");
                    Node::Empty
                }
            });
        }
        Ok(Node::Char(self.char_escape(false)?))
    }

    fn legacy_octal(&mut self) -> u32 {
        let mut v = 0;
        let mut n = 0;
        while n < 3 {
            match self.peek().and_then(|c| c.to_digit(8)) {
                Some(d) if v * 8 + d <= 0o377 => {
                    v = v * 8 + d;
                    self.i += 1;
                    n += 1;
                }
                _ => break,
            }
        }
        if n == 0 {
            // \8 or \9: the digit itself.
            let c = self.peek().map(|c| c as u32).unwrap_or(0);
            self.i += 1;
            return c;
        }
        v
    }

    /// `\d \D \w \W \s \S \p{..} \P{..}` at the cursor (after `\`).
    fn class_escape(&mut self) -> R<Option<Item>> {
        let item = match self.peek() {
            Some('d') => Item::Digit(false),
            Some('D') => Item::Digit(true),
            Some('w') => Item::Word(false),
            Some('W') => Item::Word(true),
            Some('s') => Item::Space(false),
            Some('S') => Item::Space(true),
            Some(c @ ('p' | 'P')) if self.u => {
                self.i += 1;
                if !self.eat('{') {
                    return err("Invalid property name");
                }
                let mut name = String::new();
                while let Some(ch) = self.peek() {
                    self.i += 1;
                    if ch == '}' {
                        return Ok(Some(Item::Prop(prop_id(&name)?, c == 'P')));
                    }
                    name.push(ch);
                }
                return err("Invalid property name");
            }
            _ => return Ok(None),
        };
        self.i += 1;
        Ok(Some(item))
    }

    /// A character escape (after `\`), shared by atoms and classes.
    fn char_escape(&mut self, in_class: bool) -> R<u32> {
        let c = match self.peek() {
            Some(c) => c,
            None => return err("\\ at end of pattern"),
        };
        self.i += 1;
        Ok(match c {
            't' => 9,
            'n' => 10,
            'v' => 11,
            'f' => 12,
            'r' => 13,
            '0' if !self.peek().is_some_and(|d| d.is_ascii_digit()) => 0,
            '0' if self.u && !in_class => return err("Invalid decimal escape"),
            '0'..='7' if !self.u => {
                self.i -= 1;
                self.legacy_octal()
            }
            'c' => match self.peek() {
                Some(l) if l.is_ascii_alphabetic() => {
                    self.i += 1;
                    l as u32 % 32
                }
                Some(l) if !self.u && in_class && (l.is_ascii_digit() || l == '_') => {
                    self.i += 1;
                    l as u32 % 32
                }
                _ if self.u => return err("Invalid Unicode escape"),
                _ => {
                    self.i -= 1;
                    '\\' as u32
                }
            },
            'x' => match self.hex(2) {
                Some(v) => v,
                None if self.u => return err("Invalid escape"),
                None => 'x' as u32,
            },
            'u' => match self.unicode_escape()? {
                Some(v) => v,
                None if self.u => return err("Invalid Unicode escape"),
                None => 'u' as u32,
            },
            '-' if in_class => '-' as u32,
            '^' | '$' | '\\' | '.' | '*' | '+' | '?' | '(' | ')' | '[' | ']' | '{' | '}' | '|'
            | '/' => c as u32,
            _ if self.u => {
                return err(if in_class {
                    "Invalid class escape"
                } else {
                    "Invalid escape"
                })
            }
            c => c as u32,
        })
    }

    fn hex(&mut self, n: usize) -> Option<u32> {
        let mut v = 0;
        for k in 0..n {
            v = v * 16 + self.at(k)?.to_digit(16)?;
        }
        self.i += n;
        Some(v)
    }

    /// After `\u`: `HHHH` (pairing surrogates under u) or `{H..}` under u.
    fn unicode_escape(&mut self) -> R<Option<u32>> {
        if self.u && self.peek() == Some('{') {
            let start = self.i;
            self.i += 1;
            let mut v: u32 = 0;
            let mut n = 0;
            while let Some(d) = self.peek().and_then(|c| c.to_digit(16)) {
                v = v.saturating_mul(16).saturating_add(d);
                self.i += 1;
                n += 1;
            }
            if n == 0 || !self.eat('}') || v > 0x10FFFF {
                self.i = start;
                return err("Invalid Unicode escape");
            }
            return Ok(Some(v));
        }
        let v = match self.hex(4) {
            Some(v) => v,
            None => return Ok(None),
        };
        if self.u
            && (0xD800..0xDC00).contains(&v)
            && self.peek() == Some('\\')
            && self.at(1) == Some('u')
        {
            let save = self.i;
            self.i += 2;
            match self.hex(4) {
                Some(lo) if (0xDC00..0xE000).contains(&lo) => {
                    return Ok(Some(0x10000 + ((v - 0xD800) << 10) + (lo - 0xDC00)))
                }
                _ => self.i = save,
            }
        }
        Ok(Some(v))
    }

    fn class(&mut self) -> R<Node> {
        let neg = self.eat('^');
        let mut items = Vec::new();
        loop {
            if self.pending.is_none() {
                match self.peek() {
                    None => return err("Unterminated character class"),
                    Some(']') => {
                        self.i += 1;
                        break;
                    }
                    _ => {}
                }
            }
            let a = self.class_atom()?;
            if self.pending.is_none()
                && self.peek() == Some('-')
                && self.at(1).is_some_and(|c| c != ']')
            {
                self.i += 1;
                let b = self.class_atom()?;
                match (a, b) {
                    (Item::Range(lo, _), Item::Range(hi, _)) => {
                        if lo > hi {
                            return err("Range out of order in character class");
                        }
                        items.push(Item::Range(lo, hi));
                    }
                    _ if self.u => return err("Invalid character class"),
                    _ => {
                        items.push(a);
                        items.push(Item::Range('-' as u32, '-' as u32));
                        items.push(b);
                    }
                }
            } else {
                items.push(a);
            }
        }
        Ok(Node::Set(Box::new(Set { neg, items })))
    }

    fn class_atom(&mut self) -> R<Item> {
        if let Some(lo) = self.pending.take() {
            return Ok(Item::Range(lo, lo));
        }
        let c = match self.peek() {
            Some(c) => c,
            None => return err("Unterminated character class"),
        };
        self.i += 1;
        if c != '\\' {
            let v = self.unit(c);
            return Ok(Item::Range(v, v));
        }
        if let Some(item) = self.class_escape()? {
            return Ok(item);
        }
        let v = match self.peek() {
            Some('b') => {
                self.i += 1;
                8
            }
            Some(d)
                if self.u
                    && d.is_ascii_digit()
                    && (d != '0' || self.at(1).is_some_and(|x| x.is_ascii_digit())) =>
            {
                return err("Invalid class escape")
            }
            Some('1'..='9') if !self.u => self.legacy_octal(),
            _ => self.char_escape(true)?,
        };
        Ok(Item::Range(v, v))
    }
}

/// Property names accepted by `\p{..}`; see the module docs.
fn prop_id(name: &str) -> R<u8> {
    let name = name
        .strip_prefix("General_Category=")
        .or_else(|| name.strip_prefix("gc="))
        .unwrap_or(name);
    Ok(match name {
        "L" | "Letter" | "Alphabetic" | "Alpha" => 0,
        "Lu" | "Uppercase_Letter" | "Uppercase" | "Upper" => 1,
        "Ll" | "Lowercase_Letter" | "Lowercase" | "Lower" => 2,
        "N" | "Number" | "Nd" | "Decimal_Number" | "digit" => 3,
        "White_Space" | "space" => 4,
        "ASCII" => 5,
        "Any" => 6,
        "ASCII_Hex_Digit" | "AHex" => 7,
        _ => return err("Invalid property name"),
    })
}

fn prop_has(id: u8, c: char) -> bool {
    match id {
        0 => c.is_alphabetic(),
        1 => c.is_uppercase(),
        2 => c.is_lowercase(),
        3 => c.is_numeric(),
        4 => is_space(c as u32),
        5 => c.is_ascii(),
        6 => true,
        _ => c.is_ascii_hexdigit(),
    }
}

/// ECMAScript `WhiteSpace` and `LineTerminator` (what `\s` and `trim` use).
pub(crate) fn is_space(c: u32) -> bool {
    matches!(
        c,
        9..=13 | 0x20 | 0xA0 | 0x1680 | 0x2000..=0x200A | 0x2028 | 0x2029 | 0x202F | 0x205F | 0x3000 | 0xFEFF
    )
}

fn is_word(c: u32) -> bool {
    matches!(c, 0x30..=0x39 | 0x41..=0x5A | 0x61..=0x7A | 0x5F)
}

fn fold(c: u32) -> u32 {
    if (0x41..=0x5A).contains(&c) {
        c + 32
    } else {
        c
    }
}

impl Set {
    fn has(&self, v: u32, icase: bool) -> bool {
        let hit = self.items.iter().any(|it| match *it {
            Item::Range(lo, hi) => {
                (lo..=hi).contains(&v)
                    || (icase && {
                        let (l, u) = (
                            fold(v),
                            if (0x61..=0x7A).contains(&v) {
                                v - 32
                            } else {
                                v
                            },
                        );
                        (lo..=hi).contains(&l) || (lo..=hi).contains(&u)
                    })
            }
            Item::Digit(n) => (0x30..=0x39).contains(&v) != n,
            Item::Word(n) => is_word(v) != n,
            Item::Space(n) => is_space(v) != n,
            Item::Prop(id, n) => char::from_u32(v).is_some_and(|c| prop_has(id, c)) != n,
        });
        hit != self.neg
    }
}

struct M<'s> {
    s: &'s [u32],
    caps: Vec<Option<(usize, usize)>>,
    steps: u32,
    icase: bool,
    dead: bool,
}

type K<'k, 's> = &'k mut dyn FnMut(&mut M<'s>, usize) -> bool;

impl<'s> M<'s> {
    fn single(&self, n: &Node, c: u32) -> Option<bool> {
        Some(match n {
            Node::Char(x) => *x == c || (self.icase && fold(*x) == fold(c)),
            Node::Any => !matches!(c, 10 | 13 | 0x2028 | 0x2029),
            Node::Set(set) => set.has(c, self.icase),
            _ => return None,
        })
    }

    fn m(&mut self, n: &Node, i: usize, k: K<'_, 's>) -> bool {
        self.steps += 1;
        if self.dead || self.steps > STEP_LIMIT || super::stack::exhausted() {
            self.dead = true;
            return false;
        }
        self.node(n, i, k)
    }

    fn node(&mut self, n: &Node, i: usize, k: K<'_, 's>) -> bool {
        let len = self.s.len();
        match n {
            Node::Empty => k(self, i),
            Node::Char(_) | Node::Any | Node::Set(_) => match self.s.get(i) {
                Some(&c) if self.single(n, c) == Some(true) => k(self, i + 1),
                _ => false,
            },
            Node::Start => i == 0 && k(self, i),
            Node::End => i == len && k(self, i),
            Node::WordB(b) => {
                let before = i > 0 && self.s.get(i - 1).is_some_and(|c| is_word(*c));
                let after = self.s.get(i).is_some_and(|c| is_word(*c));
                (before != after) == *b && k(self, i)
            }
            Node::Group(inner, cap) => match *cap {
                None => self.m(inner, i, k),
                Some(c) => self.m(inner, i, &mut |m, j| {
                    let old = m.caps.get(c).copied().flatten();
                    if let Some(slot) = m.caps.get_mut(c) {
                        *slot = Some((i, j));
                    }
                    if k(m, j) {
                        return true;
                    }
                    if let Some(slot) = m.caps.get_mut(c) {
                        *slot = old;
                    }
                    false
                }),
            },
            Node::Look(inner, ahead, neg) => {
                let saved = self.caps.clone();
                let hit = if *ahead {
                    self.m(inner, i, &mut |_, _| true)
                } else {
                    (0..=i).rev().any(|j| self.m(inner, j, &mut |_, e| e == i))
                };
                if hit == *neg {
                    self.caps = saved;
                    return false;
                }
                if k(self, i) {
                    return true;
                }
                self.caps = saved;
                false
            }
            Node::BackRef(c) => match self.caps.get(*c).copied().flatten() {
                None => k(self, i),
                Some((a, b)) => {
                    let n = b - a;
                    if i + n > len {
                        return false;
                    }
                    let same = (0..n).all(|d| match (self.s.get(a + d), self.s.get(i + d)) {
                        (Some(&x), Some(&y)) => x == y || (self.icase && fold(x) == fold(y)),
                        _ => false,
                    });
                    same && k(self, i + n)
                }
            },
            Node::Alt(list) => {
                for a in list {
                    if self.m(a, i, &mut *k) {
                        return true;
                    }
                }
                false
            }
            Node::Seq(list) => self.seq(list, i, k),
            Node::Rep(inner, min, max, greedy) => {
                if matches!(**inner, Node::Char(_) | Node::Any | Node::Set(_)) {
                    let mut n = 0usize;
                    while (n as u64) < *max as u64 {
                        match self.s.get(i + n) {
                            Some(&c) if self.single(inner, c) == Some(true) => n += 1,
                            _ => break,
                        }
                    }
                    let min = *min as usize;
                    if n < min {
                        return false;
                    }
                    if *greedy {
                        for c in (min..=n).rev() {
                            if self.tick() && k(self, i + c) {
                                return true;
                            }
                        }
                    } else {
                        for c in min..=n {
                            if self.tick() && k(self, i + c) {
                                return true;
                            }
                        }
                    }
                    return false;
                }
                self.rep(inner, *min, *max, *greedy, 0, i, k)
            }
        }
    }

    fn tick(&mut self) -> bool {
        self.steps += 1;
        if self.steps > STEP_LIMIT {
            self.dead = true;
        }
        !self.dead
    }

    fn seq(&mut self, list: &[Node], i: usize, k: K<'_, 's>) -> bool {
        // Single-character nodes cannot backtrack: match them without recursing.
        let (mut i, mut rest) = (i, list);
        while let Some((h, t)) = rest.split_first() {
            let c = match self.s.get(i) {
                Some(&c) => c,
                None => break,
            };
            match self.single(h, c) {
                Some(true) => {
                    i += 1;
                    rest = t;
                }
                Some(false) => return false,
                None => break,
            }
        }
        match rest.split_first() {
            None => k(self, i),
            Some((h, t)) => self.m(h, i, &mut |m, j| m.seq(t, j, &mut *k)),
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn rep(
        &mut self,
        n: &Node,
        min: u32,
        max: u32,
        greedy: bool,
        count: u32,
        i: usize,
        k: K<'_, 's>,
    ) -> bool {
        if count < min {
            return self.m(n, i, &mut |m, j| {
                m.rep(n, min, max, greedy, count + 1, j, &mut *k)
            });
        }
        if count >= max {
            return k(self, i);
        }
        if greedy {
            if self.m(n, i, &mut |m, j| {
                j != i && m.rep(n, min, max, greedy, count + 1, j, &mut *k)
            }) {
                return true;
            }
            k(self, i)
        } else {
            if k(self, i) {
                return true;
            }
            self.m(n, i, &mut |m, j| {
                j != i && m.rep(n, min, max, greedy, count + 1, j, &mut *k)
            })
        }
    }
}

impl Regex {
    /// `RegExp.prototype.test` without the `g`/`y` flags: a match anywhere.
    pub(crate) fn test(&self, s: &str) -> bool {
        let _entry = super::stack::enter();
        let chars: Vec<u32> = if self.unicode {
            s.chars().map(u32::from).collect()
        } else {
            s.encode_utf16().map(u32::from).collect()
        };
        let mut m = M {
            s: &chars,
            caps: vec![None; self.ncap + 1],
            steps: 0,
            icase: self.icase,
            dead: false,
        };
        let last = if self.anchored { 0 } else { chars.len() };
        for start in 0..=last {
            if m.m(&self.root, start, &mut |_, _| true) {
                return true;
            }
            if m.dead {
                return false;
            }
        }
        false
    }
}
