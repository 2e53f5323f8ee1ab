//! TypeBox 1.3.27's default `format` registry (`Format.Test`): unknown formats
//! pass. The regex formats are TypeBox's own expressions, run by the [`Host`]'s
//! `RegExp`; `url`, `iri` and `iri-reference` use the host's `URL.canParse`,
//! as TypeBox does.
//!
//! Approximations (documented divergences): `hostname`/`idn-hostname` check
//! `xn--` labels by decoding punycode and accepting letters, digits, marks and
//! hyphens instead of the full IDNA2008 tables and Bidi rule; `idn-email` skips
//! NFC normalization. With [`super::RustHost`], `URL.canParse` is the reduced
//! WHATWG URL parser [`url`] (scheme, special-scheme host and port rules, no
//! IPv4 number parsing, no IDNA) and `regex` accepts what [`super::pattern`]
//! compiles.

use super::host::Host;
use super::{cat, one_of, split_ascii, split_once_ascii};
use crate::prelude::*;

const V4: &str =
    "(?:(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)";

/// RFC 3986 IPv6address, as TypeBox spells it (`H` = one hex group, `L` =
/// the last 32 bits, `V` = an IPv4 address).
fn v6() -> String {
    fn expand(out: &mut String, t: &str) {
        for c in t.chars() {
            match c {
                'L' => expand(out, "(?:H:H|V)"),
                'H' => out.push_str("[\\da-f]{1,4}"),
                'V' => out.push_str(V4),
                _ => out.push(c),
            }
        }
    }
    let mut out = String::new();
    expand(&mut out, "(?:(?:H:){6}L|::(?:H:){5}L|(?:H)?::(?:H:){4}L|(?:(?:H:){0,1}H)?::(?:H:){3}L|(?:(?:H:){0,2}H)?::(?:H:){2}L|(?:(?:H:){0,3}H)?::H:L|(?:(?:H:){0,4}H)?::L|(?:(?:H:){0,5}H)?::H|(?:(?:H:){0,6}H)?::)");
    out
}

/// TypeBox's `uri` (relative = false) and `uri-reference` (relative = true).
fn uri_regex(relative: bool) -> String {
    let u = "(?:[-a-z0-9._~!$&'()*+,;=:]|%[0-9a-f]{2})";
    let p = "(?:[-a-z0-9._~!$&'()*+,;=:@]|%[0-9a-f]{2})";
    let q = "(?:[-a-z0-9._~!$&'()*+,;=:@/?]|%[0-9a-f]{2})";
    let auth = cat(&[
        "\\/\\/(?:",
        u,
        "*@)?(?:\\[(?:",
        &v6(),
        "|v[0-9a-f]+\\.[-a-z0-9._~!$&'()*+,;=:]+)\\]|",
        V4,
        "|(?:[-a-z0-9._~!$&'()*+,;=]|%[0-9a-f]{2})*)(?::\\d*)?(?:\\/",
        p,
        "*)*",
    ]);
    let hier = |first: &str| {
        cat(&[
            "(?:", &auth, "|\\/(?:", p, "+(?:\\/", p, "*)*)?|", first, "+(?:\\/", p, "*)*)",
        ])
    };
    let abs = cat(&["[a-z][a-z0-9+\\-.]*:", &hier(p), "?"]);
    let head = if relative {
        let rel = hier("(?:[-a-z0-9._~!$&'()*+,;=@]|%[0-9a-f]{2})");
        cat(&["(?:", &abs, "|", &rel, "?)"])
    } else {
        abs
    };
    cat(&["^", &head, "(?:\\?", q, "*)?(?:#", q, "*)?$"])
}

const EMAIL: &str = "^(?:[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*|\"(?:[^\"\\\\]|\\\\[\\x20-\\x7e])*\")@(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*|\\[(?:IPv6:[a-f0-9:]+|(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])(?:\\.(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])){3})\\])$";
const IDN_EMAIL: &str = "^(?:[A-Za-z0-9!#$%&'*+\\/=?^_`{|}~\\u{0080}-\\u{10FFFF}-]+(?:\\.[A-Za-z0-9!#$%&'*+\\/=?^_`{|}~\\u{0080}-\\u{10FFFF}-]+)*|\"(?:[^\"\\\\]|\\\\.)*\")@[\\p{L}\\p{N}](?:[\\p{L}\\p{N}-]{0,62})(?<!-)(?:\\.[\\p{L}\\p{N}](?:[\\p{L}\\p{N}-]{0,62})(?<!-))*$";
const DURATION: &str = "^P((\\d+Y(\\d+M(\\d+D)?)?|\\d+M(\\d+D)?|\\d+D)(T(\\d+H(\\d+M(\\d+S)?)?|\\d+M(\\d+S)?|\\d+S))?|T(\\d+H(\\d+M(\\d+S)?)?|\\d+M(\\d+S)?|\\d+S)|\\d+W)$";
const URI_TEMPLATE: &str = "^(?:(?:[^\\x00-\\x20\"<>%\\\\^`{|}\\x7f]|%[0-9a-f]{2})|\\{[+#./;?&=,!@|]?(?:[a-z0-9_]|%[0-9a-f]{2})+(?:\\.(?:[a-z0-9_]|%[0-9a-f]{2})+)*(?::[1-9]\\d{0,3}|\\*)?(?:,(?:[a-z0-9_]|%[0-9a-f]{2})+(?:\\.(?:[a-z0-9_]|%[0-9a-f]{2})+)*(?::[1-9]\\d{0,3}|\\*)?)*\\})*$";

/// `new RegExp(src, flags).test(s)` for expressions known to compile.
fn re(h: &dyn Host, src: &str, flags: &str, s: &str) -> bool {
    h.regex_test(src, flags, s).unwrap_or(false)
}

/// How [`test`] checks a format.
#[derive(Clone, Copy)]
enum Check {
    /// One of TypeBox's expressions: source, flags.
    Re(&'static str, &'static str),
    DateTime,
    Date,
    Time,
    Hostname,
    IdnHostname,
    Ipv4,
    Ipv6,
    IriReference,
    Iri,
    Regex,
    UriReference,
    Uri,
    Url,
}

/// TypeBox's default registry, looked up by name (one table instead of a
/// string `match`, whose comparisons cost more code than the data).
const FORMATS: &[(&str, Check)] = &[
    ("date-time", Check::DateTime),
    ("date", Check::Date),
    ("time", Check::Time),
    ("duration", Check::Re(DURATION, "")),
    ("email", Check::Re(EMAIL, "i")),
    ("hostname", Check::Hostname),
    ("idn-email", Check::Re(IDN_EMAIL, "iu")),
    ("idn-hostname", Check::IdnHostname),
    ("ipv4", Check::Ipv4),
    ("ipv6", Check::Ipv6),
    ("iri-reference", Check::IriReference),
    ("iri", Check::Iri),
    (
        "json-pointer-uri-fragment",
        Check::Re(
            "^#(?:\\/(?:[a-z0-9_\\-.!$&'()*+,;:=@]|%[0-9a-f]{2}|~0|~1)*)*$",
            "i",
        ),
    ),
    ("json-pointer", Check::Re("^(?:\\/(?:[^~/]|~0|~1)*)*$", "")),
    ("regex", Check::Regex),
    (
        "relative-json-pointer",
        Check::Re("^(?:0|[1-9][0-9]*)(?:#|(?:\\/(?:[^~/]|~0|~1)*)*)$", ""),
    ),
    ("uri-reference", Check::UriReference),
    ("uri-template", Check::Re(URI_TEMPLATE, "i")),
    ("uri", Check::Uri),
    ("url", Check::Url),
    (
        "uuid",
        Check::Re("^[0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12}$", "i"),
    ),
];

/// `Format.Test(format, value)`.
pub(crate) fn test(h: &dyn Host, format: &str, s: &str) -> bool {
    let check = match FORMATS.iter().find(|(name, _)| *name == format) {
        Some((_, c)) => *c,
        None => return true,
    };
    match check {
        Check::Re(src, flags) => re(h, src, flags, s),
        // Exactly one `T`/`t`: `time` accepts neither.
        Check::DateTime => match s.bytes().position(|b| b == b'T' || b == b't') {
            Some(i) => {
                date(s.get(..i).unwrap_or_default()) && time(s.get(i + 1..).unwrap_or_default())
            }
            None => false,
        },
        Check::Date => date(s),
        Check::Time => time(s),
        Check::Hostname => hostname(h, s),
        Check::IdnHostname => idn_hostname(h, s),
        Check::Ipv4 => re(h, &cat(&["^", V4, "$"]), "", s),
        Check::Ipv6 => re(h, &cat(&["^", &v6(), "$"]), "i", s),
        Check::IriReference => {
            !s.chars().any(|c| c <= ' ' || c == '\u{7f}' || c == '\\')
                && percent_ok(s)
                && !re(h, MALFORMED_SCHEME, "", s)
                && h.url_can_parse(s, Some("http://example.com"))
        }
        Check::Iri => {
            !s.chars().any(|c| c <= ' ' || one_of("<>^`{|}\\", c))
                && percent_ok(s)
                && h.url_can_parse(&narrow_ipv_future(s), None)
        }
        Check::Regex => h.regex_test(s, "u", "").is_ok(),
        Check::UriReference => re(h, &uri_regex(true), "i", s),
        Check::Uri => re(h, &uri_regex(false), "i", s),
        Check::Url => h.url_can_parse(s, None),
    }
}

const MALFORMED_SCHEME: &str = "^[a-zA-Z][a-zA-Z0-9+\\-.]*\\/\\/";

/// TypeBox's `NarrowIpvFuture`: below 2048 UTF-16 units, the first
/// `\[[vV][0-9a-fA-F]+\.[^\]]+\]` becomes `[::1]` (URL parsers reject IPvFuture).
fn narrow_ipv_future(s: &str) -> String {
    if s.encode_utf16().count() >= 2048 {
        return s.into();
    }
    let b = s.as_bytes();
    for (i, _) in b.iter().enumerate().filter(|(_, c)| **c == b'[') {
        let rest = b.get(i + 1..).unwrap_or_default();
        if !matches!(rest.first(), Some(b'v' | b'V')) {
            continue;
        }
        let hex = rest
            .iter()
            .skip(1)
            .take_while(|c| c.is_ascii_hexdigit())
            .count();
        if hex == 0 || rest.get(1 + hex) != Some(&b'.') {
            continue;
        }
        let tail = rest.get(2 + hex..).unwrap_or_default();
        match tail.iter().position(|c| *c == b']') {
            Some(n) if n > 0 => {
                let end = i + 1 + 2 + hex + n + 1;
                return cat(&[
                    s.get(..i).unwrap_or_default(),
                    "[::1]",
                    s.get(end..).unwrap_or_default(),
                ]);
            }
            _ => continue,
        }
    }
    s.into()
}

/// A run of ASCII digits (at most 9) as a number.
fn digits(s: Option<&str>) -> Option<u32> {
    let s = s?;
    if s.is_empty() || s.len() > 9 {
        return None;
    }
    s.bytes().try_fold(0u32, |n, b| {
        b.is_ascii_digit().then(|| n * 10 + (b - b'0') as u32)
    })
}

/// `^(\d\d\d\d)-(\d\d)-(\d\d)$` plus the calendar check.
fn date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b.get(4) != Some(&b'-') || b.get(7) != Some(&b'-') {
        return false;
    }
    let (y, m, d) = match (digits(s.get(..4)), digits(s.get(5..7)), digits(s.get(8..))) {
        (Some(y), Some(m), Some(d)) => (y, m, d),
        _ => return false,
    };
    let leap = y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
    let days = [
        0,
        31,
        if leap { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    (1..=12).contains(&m) && d >= 1 && days.get(m as usize).is_some_and(|max| d <= *max)
}

/// `^(\d\d):(\d\d):(\d\d)(?:\.\d+)?(?:([Zz])|([+-])(\d\d):(\d\d))?$` with a
/// required zone, range checks and the leap-second rule.
fn time(s: &str) -> bool {
    if !s.is_ascii() || s.len() < 9 {
        return false;
    }
    let b = s.as_bytes();
    if b.get(2) != Some(&b':') || b.get(5) != Some(&b':') {
        return false;
    }
    let (hr, min, sec) = match (digits(s.get(..2)), digits(s.get(3..5)), digits(s.get(6..8))) {
        (Some(h), Some(m), Some(x)) => (h, m, x),
        _ => return false,
    };
    let mut rest = s.get(8..).unwrap_or_default();
    if let Some(frac) = rest.strip_prefix('.') {
        rest = frac.trim_start_matches(|c: char| c.is_ascii_digit());
        if rest.len() == frac.len() {
            return false;
        }
    }
    let (sign, tz_h, tz_m) = match rest {
        "Z" | "z" => (1i64, 0, 0),
        _ => {
            let rb = rest.as_bytes();
            let sign = rb.first().copied().unwrap_or(0);
            if rb.len() != 6 || !(sign == b'+' || sign == b'-') || rb.get(3) != Some(&b':') {
                return false;
            }
            match (digits(rest.get(1..3)), digits(rest.get(4..))) {
                (Some(h), Some(m)) if h <= 23 && m <= 59 => {
                    (if sign == b'-' { -1 } else { 1 }, h, m)
                }
                _ => return false,
            }
        }
    };
    if hr > 23 || min > 59 || sec > 60 {
        return false;
    }
    if sec < 60 {
        return true;
    }
    let total = (hr * 60 + min) as i64 - sign * (tz_h * 60 + tz_m) as i64;
    (total % 1440 + 1440) % 1440 == 1439
}

fn percent_ok(s: &str) -> bool {
    let b = s.as_bytes();
    b.iter().enumerate().all(|(i, c)| {
        *c != b'%'
            || (b.get(i + 1).is_some_and(|x| x.is_ascii_hexdigit())
                && b.get(i + 2).is_some_and(|x| x.is_ascii_hexdigit()))
    })
}

fn ascii_label(l: &str) -> bool {
    !l.starts_with('-')
        && !l.ends_with('-')
        && l.get(2..4) != Some("--")
        && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

/// A U-label, approximated: letters (`Alphabetic`), numbers (`N`), the
/// combining-mark blocks and `-+.,:/`; no hyphen at either end or in the third
/// and fourth positions; no mark first.
const UNICODE_LABEL: &str = "^(?!-)(?!..--)(?![\\u0300-\\u036f\\u1ab0-\\u1aff\\u1dc0-\\u1dff\\u20d0-\\u20ff\\ufe20-\\ufe2f])[\\p{Alphabetic}\\p{N}\\u0300-\\u036f\\u1ab0-\\u1aff\\u1dc0-\\u1dff\\u20d0-\\u20ff\\ufe20-\\ufe2f\\-+.,:/]+(?<!-)$";

fn unicode_label(h: &dyn Host, l: &str) -> bool {
    re(h, UNICODE_LABEL, "u", l)
}

/// RFC 3492 decoding, as TypeBox's `Decode` (lowercase digits only).
fn punycode(input: &str) -> Option<String> {
    let (mut n, mut i, mut bias) = (128u32, 0u32, 72u32);
    let mut out: Vec<u32> = Vec::new();
    let rest = match split_once_ascii(input, b'-', true) {
        Some((basic, rest)) => {
            if !basic.is_ascii() {
                return None;
            }
            out.extend(basic.bytes().map(u32::from));
            rest
        }
        None => input,
    };
    let mut it = rest.bytes().peekable();
    while it.peek().is_some() {
        let (oldi, mut w, mut k) = (i, 1u32, 36u32);
        loop {
            let ch = it.next()?;
            let digit = match ch {
                b'a'..=b'z' => ch - b'a',
                b'0'..=b'9' => ch - b'0' + 26,
                _ => return None,
            } as u32;
            i = i.checked_add(digit.checked_mul(w)?)?;
            let t = if k <= bias {
                1
            } else if k >= bias + 26 {
                26
            } else {
                k - bias
            };
            if digit < t {
                break;
            }
            w = w.checked_mul(36 - t)?;
            k += 36;
        }
        let len = out.len() as u32 + 1;
        let mut delta = if oldi == 0 {
            (i - oldi) / 700
        } else {
            (i - oldi) >> 1
        };
        delta += delta / len;
        let mut kk = 0;
        while delta > 455 {
            delta /= 35;
            kk += 36;
        }
        bias = kk + (36 * delta) / (delta + 38);
        n = n.checked_add(i / len)?;
        i %= len;
        out.insert(i as usize, n);
        i += 1;
    }
    let mut s = String::new();
    for c in out {
        s.push(char::from_u32(c)?);
    }
    Some(s)
}

fn puny_label(h: &dyn Host, l: &str) -> bool {
    if !l.get(..4).is_some_and(|p| p.eq_ignore_ascii_case("xn--")) {
        return false;
    }
    let body = l.get(4..).unwrap_or_default().to_ascii_lowercase();
    if body.bytes().rposition(|b| b == b'-') == Some(0) {
        return false;
    }
    punycode(&body).is_some_and(|d| !d.is_ascii() && unicode_label(h, &d))
}

fn hostname(h: &dyn Host, s: &str) -> bool {
    !s.is_empty()
        && s.encode_utf16().count() <= 253
        && !s.ends_with('.')
        && split_ascii(s, b'.').iter().all(|l| {
            let n = l.encode_utf16().count();
            n > 0 && n <= 63 && (puny_label(h, l) || ascii_label(l))
        })
}

fn idn_hostname(h: &dyn Host, s: &str) -> bool {
    if s.is_empty() || s.chars().any(|c| c == ' ') {
        return false;
    }
    let norm: String = s
        .chars()
        .filter(|c| !matches!(*c as u32, 0xAD | 0x34F | 0x180B..=0x180D | 0x200B | 0xFE00..=0xFE0F | 0xE0100..=0xE01EF))
        .map(|c| match c as u32 {
            0x3002 | 0xFF0E | 0xFF61 => '.',
            v @ 0xFF01..=0xFF5E => char::from_u32(v - 0xFEE0).unwrap_or(c),
            _ => c,
        })
        .collect();
    norm.encode_utf16().count() <= 253
        && split_ascii(&norm, b'.').iter().all(|l| {
            let n = l.encode_utf16().count();
            n > 0 && n <= 63 && (puny_label(h, l) || unicode_label(h, l))
        })
}

/// [`super::RustHost`]'s `URL.canParse(s)`, reduced (with a base: relative
/// references pass).
pub(crate) fn url(h: &dyn Host, s: &str, with_base: bool) -> bool {
    let s: String = s
        .trim_matches(|c: char| c <= ' ')
        .chars()
        .filter(|c| !matches!(c, '\t' | '\n' | '\r'))
        .collect();
    let (scheme, rest) = match s.split_once(':') {
        Some((sc, rest)) if re(h, "^[a-zA-Z][a-zA-Z0-9+\\-.]*$", "", sc) => {
            (sc.to_ascii_lowercase(), rest)
        }
        _ => return with_base,
    };
    let special = matches!(scheme.as_str(), "http" | "https" | "ws" | "wss" | "ftp");
    if scheme == "file" {
        return true;
    }
    let auth = if special {
        rest.trim_start_matches(['/', '\\'])
    } else if let Some(a) = rest.strip_prefix("//") {
        a
    } else {
        return true;
    };
    let auth = auth
        .split(|c: char| c == '/' || c == '?' || c == '#' || (special && c == '\\'))
        .next()
        .unwrap_or_default();
    let host_port = auth.rsplit_once('@').map_or(auth, |(_, h)| h);
    let (host, port) = if let Some(inner) = host_port.strip_prefix('[') {
        match inner.split_once(']') {
            Some((ip, p)) if re(h, &cat(&["^", &v6(), "$"]), "i", ip) => ("x", p),
            _ => return false,
        }
    } else {
        match host_port.rsplit_once(':') {
            Some((h, p)) => (h, p),
            None => (host_port, ""),
        }
    };
    let port = port.strip_prefix(':').unwrap_or(port);
    if !port.is_empty() && digits(Some(port)).is_none_or(|p| p > 65535) {
        return false;
    }
    if special && host.is_empty() {
        return false;
    }
    !host
        .chars()
        .any(|c| c < ' ' || one_of(" #/<>?@[\\]^|", c) || (special && c == '%'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::schema::RustHost;

    /// The label rule as it was written with `char` predicates.
    fn unicode_label_chars(l: &str) -> bool {
        let chars: Vec<char> = l.chars().collect();
        let mark = |c: char| matches!(c as u32, 0x300..=0x36F | 0x1AB0..=0x1AFF | 0x1DC0..=0x1DFF | 0x20D0..=0x20FF | 0xFE20..=0xFE2F);
        !chars.is_empty()
            && chars.first() != Some(&'-')
            && chars.last() != Some(&'-')
            && chars.get(2..4) != Some(&['-', '-'][..])
            && !chars.first().is_some_and(|c| mark(*c))
            && chars
                .iter()
                .all(|c| c.is_alphanumeric() || mark(*c) || one_of("-+.,:/", *c))
    }

    #[test]
    fn unicode_label_regex_matches_char_rule() {
        let pool: Vec<char> =
            "a-Z9.+,:/ _\n\u{300}\u{36f}\u{1ab0}\u{20d0}\u{fe2f}éß中٣Ⅻ½\u{200d}ـ\u{10400}\u{1f600}"
                .chars()
                .collect();
        let mut x: u64 = 0x1234_5678_9ABC_DEF1;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let len = (x % 7) as usize;
            let l: String = (0..len)
                .map(|i| pool[((x >> (8 + 5 * i)) % pool.len() as u64) as usize])
                .collect();
            assert_eq!(
                unicode_label(&RustHost, &l),
                unicode_label_chars(&l),
                "{l:?}"
            );
        }
    }

    #[test]
    fn ipv_future_is_narrowed_like_typebox() {
        assert_eq!(narrow_ipv_future("http://[v1.fe]/x"), "http://[::1]/x");
        assert_eq!(narrow_ipv_future("a[v.x][V1F.a:b]c"), "a[v.x][::1]c");
        assert_eq!(narrow_ipv_future("[v1.]"), "[v1.]");
        assert_eq!(narrow_ipv_future("[vg.x]"), "[vg.x]");
        let long = "x".repeat(2048) + "[v1.a]";
        assert_eq!(narrow_ipv_future(&long), long);
        assert!(test(&RustHost, "iri", "http://[v1.fe]/"));
    }
}
