//! JavaScript number semantics the validator needs: `Number(string)` and
//! `Number.prototype.toString()` (used in coercions and in error messages such
//! as `must be <= 1.5`).

use super::pattern::is_space;

/// `String.prototype.trim` (ECMAScript white space and line terminators).
pub(crate) fn js_trim(s: &str) -> &str {
    s.trim_matches(|c: char| is_space(c as u32))
}

/// `Number(s)`: NaN when `s` is not a StringNumericLiteral.
pub(crate) fn str_to_number(s: &str) -> f64 {
    let t = js_trim(s);
    if t.is_empty() {
        return 0.0;
    }
    let b = t.as_bytes();
    if b.len() > 2 && b[0] == b'0' {
        let radix = match b[1] {
            b'x' | b'X' => 16,
            b'o' | b'O' => 8,
            b'b' | b'B' => 2,
            _ => 0,
        };
        if radix != 0 {
            let mut v = 0.0f64;
            for c in t[2..].chars() {
                match c.to_digit(radix) {
                    Some(d) => v = v * radix as f64 + d as f64,
                    None => return f64::NAN,
                }
            }
            return v;
        }
    }
    let body = t.strip_prefix(['+', '-']).unwrap_or(t);
    if body == "Infinity" {
        return if t.starts_with('-') {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        };
    }
    // StrUnsignedDecimalLiteral: digits [. digits] [e[+-]digits] or . digits [...]
    let bb = body.as_bytes();
    let mut i = 0;
    let digits = |i: &mut usize| {
        let s = *i;
        while *i < bb.len() && bb[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - s
    };
    let mut n = digits(&mut i);
    if i < bb.len() && bb[i] == b'.' {
        i += 1;
        n += digits(&mut i);
    }
    if n == 0 {
        return f64::NAN;
    }
    if i < bb.len() && (bb[i] == b'e' || bb[i] == b'E') {
        i += 1;
        if i < bb.len() && (bb[i] == b'+' || bb[i] == b'-') {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return f64::NAN;
        }
    }
    if i != bb.len() {
        return f64::NAN;
    }
    t.parse::<f64>().unwrap_or(f64::NAN)
}

/// `Number.prototype.toString()` in radix 10.
pub fn num_to_string(v: f64) -> String {
    if v.is_nan() {
        return "NaN".into();
    }
    if v == 0.0 {
        return "0".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    // Rust's shortest round-trip digits, re-laid out by ECMA-262 Number::toString.
    let e = format!("{:e}", v.abs());
    let (mant, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let digits: String = mant.chars().filter(|c| *c != '.').collect();
    let k = digits.len() as i32;
    let n = exp.parse::<i32>().unwrap_or(0) + 1;
    let mut out = String::new();
    if v < 0.0 {
        out.push('-');
    }
    if k <= n && n <= 21 {
        out.push_str(&digits);
        out.extend(std::iter::repeat_n('0', (n - k) as usize));
    } else if 0 < n && n <= 21 {
        let (a, b) = digits.split_at(n as usize);
        out.push_str(a);
        out.push('.');
        out.push_str(b);
    } else if -6 < n && n <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-n) as usize));
        out.push_str(&digits);
    } else {
        let (a, b) = digits.split_at(1);
        out.push_str(a);
        if !b.is_empty() {
            out.push('.');
            out.push_str(b);
        }
        out.push('e');
        out.push(if n - 1 < 0 { '-' } else { '+' });
        out.push_str(&(n - 1).abs().to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_like_js() {
        for (v, s) in [
            (1e21, "1e+21"),
            (1e-7, "1e-7"),
            (123e-20, "1.23e-18"),
            (0.1 + 0.2, "0.30000000000000004"),
            (-1.5e-10, "-1.5e-10"),
            (9007199254740992.0, "9007199254740992"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (5e-324, "5e-324"),
            (123456789012345680000.0, "123456789012345680000"),
            (1.5, "1.5"),
            (-0.0, "0"),
            (100.0, "100"),
            (0.000001, "0.000001"),
            (-7.0, "-7"),
        ] {
            assert_eq!(num_to_string(v), s);
        }
    }

    #[test]
    fn parses_like_js() {
        for (s, v) in [
            ("0x10", 16.0),
            (" 12 ", 12.0),
            ("", 0.0),
            (".5", 0.5),
            ("5.", 5.0),
            ("+5", 5.0),
            ("1e3", 1000.0),
            ("0b101", 5.0),
            ("0o17", 15.0),
        ] {
            assert_eq!(str_to_number(s), v, "{s}");
        }
        for s in [
            "- 5", "1_0", "0x", "1e", "e1", "--1", "12n", "inf", "NaN", "+0x10", ".",
        ] {
            assert!(str_to_number(s).is_nan(), "{s}");
        }
        assert_eq!(str_to_number("-Infinity"), f64::NEG_INFINITY);
    }
}
