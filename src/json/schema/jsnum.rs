//! JavaScript number semantics the validator needs: `Number(string)` and
//! `Number.prototype.toString()` (used in coercions and in error messages such
//! as `must be <= 1.5`) for [`super::RustHost`], and `%` and `trim`.

use super::pattern::is_space;
use crate::json::num::{digits_to_f64, parse_f64, usize_to_string};
use crate::prelude::*;

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
    if b.len() > 2 && b.first() == Some(&b'0') {
        let radix = match b.get(1).copied().unwrap_or(0) {
            b'x' | b'X' => 16,
            b'o' | b'O' => 8,
            b'b' | b'B' => 2,
            _ => 0,
        };
        if radix != 0 {
            let mut v = 0.0f64;
            for c in t.chars().skip(2) {
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
    let at = |i: usize| bb.get(i).copied().unwrap_or(0);
    let digits = |i: &mut usize| {
        let s = *i;
        while at(*i).is_ascii_digit() {
            *i += 1;
        }
        *i - s
    };
    let mut n = digits(&mut i);
    if at(i) == b'.' {
        i += 1;
        n += digits(&mut i);
    }
    if n == 0 {
        return f64::NAN;
    }
    if at(i) == b'e' || at(i) == b'E' {
        i += 1;
        if at(i) == b'+' || at(i) == b'-' {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return f64::NAN;
        }
    }
    if i != bb.len() {
        return f64::NAN;
    }
    parse_f64(t).unwrap_or(f64::NAN)
}

/// ECMAScript `%` on doubles: the exact remainder with the dividend's sign
/// (C's `fmod`, written out to avoid compiler-builtins' 128-bit version).
pub(crate) fn js_rem(x: f64, y: f64) -> f64 {
    if !x.is_finite() || y == 0.0 || y.is_nan() {
        return f64::NAN;
    }
    if y.is_infinite() || x == 0.0 || x.abs() < y.abs() {
        return x;
    }
    let parts = |v: f64| {
        let b = v.abs().to_bits();
        let e = ((b >> 52) & 0x7ff) as i32;
        let m = b & ((1u64 << 52) - 1);
        if e == 0 {
            (m, -1074)
        } else {
            (m | (1u64 << 52), e - 1075)
        }
    };
    let ((mx, ex), (my, ey)) = (parts(x), parts(y));
    let mut r = mx % my;
    for _ in ey..ex {
        r = (r << 1) % my;
    }
    // r × 2^ey, scaled in exact power-of-two steps.
    let (mut v, mut e) = (r as f64, ey);
    while e != 0 {
        let k = e.clamp(-1000, 1000);
        v *= f64::from_bits(((k + 1023) as u64) << 52);
        e -= k;
    }
    if x < 0.0 {
        -v
    } else {
        v
    }
}

/// Exact decimal expansion of a finite non-zero `|v|`: `(digits, point)` with
/// `|v| = 0.d1d2d3... × 10^point`, no leading or trailing zeros. Small bignum
/// arithmetic instead of `core::fmt`'s float machinery, which costs ~12 KB.
fn exact_digits(v: f64) -> (Vec<u8>, i32) {
    let bits = v.abs().to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1u64 << 52) - 1);
    let (m, e) = if exp == 0 {
        (frac, -1074)
    } else {
        (frac | (1u64 << 52), exp - 1075)
    };
    // value = n / 2^q, n a little-endian bignum of u32 limbs.
    let mut n: Vec<u32> = vec![m as u32, (m >> 32) as u32];
    let q = if e >= 0 {
        for _ in 0..e {
            mul_small(&mut n, 2);
        }
        0
    } else {
        (-e) as usize
    };
    // Integer part: n >> q, then its decimal digits.
    let mut int: Vec<u32> = shr(&n, q);
    let mut int_digits = Vec::new();
    while int.iter().any(|l| *l != 0) {
        int_digits.push(div_small(&mut int, 10) as u8);
    }
    int_digits.reverse();
    let point = int_digits.len() as i32;
    // Fraction: n mod 2^q, digits by multiplying by ten.
    let mut f = n;
    mask(&mut f, q);
    let mut digits = int_digits;
    while f.iter().any(|l| *l != 0) {
        mul_small(&mut f, 10);
        let d = shr(&f, q).first().copied().unwrap_or(0);
        digits.push(d as u8);
        mask(&mut f, q);
    }
    let lead = digits.iter().take_while(|d| **d == 0).count();
    let mut digits = digits.split_off(lead.min(digits.len()));
    while digits.last() == Some(&0) {
        digits.pop();
    }
    (digits, point - lead as i32)
}

fn mul_small(n: &mut Vec<u32>, k: u32) {
    let mut carry = 0u64;
    for l in n.iter_mut() {
        let x = *l as u64 * k as u64 + carry;
        *l = x as u32;
        carry = x >> 32;
    }
    if carry != 0 {
        n.push(carry as u32);
    }
}

fn div_small(n: &mut [u32], k: u32) -> u32 {
    let mut rem = 0u64;
    for l in n.iter_mut().rev() {
        let x = (rem << 32) | *l as u64;
        *l = (x / k as u64) as u32;
        rem = x % k as u64;
    }
    rem as u32
}

fn shr(n: &[u32], q: usize) -> Vec<u32> {
    let (w, b) = (q / 32, q % 32);
    let src: Vec<u32> = n.iter().skip(w).copied().collect();
    let mut out = Vec::with_capacity(src.len());
    for (i, l) in src.iter().enumerate() {
        let hi = if b == 0 {
            0
        } else {
            src.get(i + 1).map_or(0, |h| h << (32 - b))
        };
        out.push((l >> b) | hi);
    }
    out
}

fn mask(n: &mut [u32], q: usize) {
    let (w, b) = (q / 32, q % 32);
    for (i, l) in n.iter_mut().enumerate() {
        if i > w || (i == w && b == 0) {
            *l = 0;
        } else if i == w {
            *l &= (1u32 << b) - 1;
        }
    }
}

fn digit_str(d: &[u8]) -> String {
    d.iter().map(|x| (b'0' + x) as char).collect()
}

fn round_trips(d: &[u8], point: i32, v: f64) -> bool {
    digits_to_f64(d, point as i64 - d.len() as i64) == v
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
    let a = v.abs();
    let (all, point) = exact_digits(a);
    // Shortest digits that round-trip; between the two neighbours at that
    // length, the closer one (ties to even), as ECMA-262 Number::toString.
    let (mut digits, mut n) = (all.clone(), point);
    for k in 1..all.len() {
        let lower: Vec<u8> = all.iter().take(k).copied().collect();
        let mut upper = lower.clone();
        let mut up_point = point;
        let mut i = k;
        loop {
            if i == 0 {
                upper.insert(0, 1);
                upper.pop();
                up_point += 1;
                break;
            }
            i -= 1;
            match upper.get_mut(i) {
                Some(d) if *d == 9 => *d = 0,
                Some(d) => {
                    *d += 1;
                    break;
                }
                None => break,
            }
        }
        let (lo_ok, up_ok) = (
            round_trips(&lower, point, a),
            round_trips(&upper, up_point, a),
        );
        let pick_upper = match (lo_ok, up_ok) {
            (false, false) => continue,
            (true, false) => false,
            (false, true) => true,
            (true, true) => {
                let rest: Vec<u8> = all.iter().skip(k).copied().collect();
                let first = rest.first().copied().unwrap_or(0);
                let tail = rest.iter().skip(1).any(|d| *d != 0);
                first > 5 || (first == 5 && (tail || lower.last().is_some_and(|d| d % 2 == 1)))
            }
        };
        (digits, n) = if pick_upper {
            (upper, up_point)
        } else {
            (lower, point)
        };
        while digits.last() == Some(&0) {
            digits.pop();
        }
        break;
    }
    let k = digits.len() as i32;
    let s = digit_str(&digits);
    let mut out = String::new();
    if v < 0.0 {
        out.push('-');
    }
    if k <= n && n <= 21 {
        out.push_str(&s);
        out.extend(core::iter::repeat_n('0', (n - k) as usize));
    } else if -6 < n && n <= 21 {
        // A decimal point inside the digits or after "0." and zeros.
        if n <= 0 {
            out.push_str("0.");
            out.extend(core::iter::repeat_n('0', (-n) as usize));
        }
        for (i, c) in s.chars().enumerate() {
            if n > 0 && i == n as usize {
                out.push('.');
            }
            out.push(c);
        }
    } else {
        for (i, c) in s.chars().enumerate() {
            if i == 1 {
                out.push('.');
            }
            out.push(c);
        }
        out.push('e');
        out.push(if n - 1 < 0 { '-' } else { '+' });
        out.push_str(&usize_to_string((n - 1).unsigned_abs() as usize));
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
            (0.1, "0.1"),
            (2.2250738585072014e-308, "2.2250738585072014e-308"),
            (1e23, "1e+23"),
            (9.5, "9.5"),
            (0.3, "0.3"),
            (123.456, "123.456"),
            (1.0 / 3.0, "0.3333333333333333"),
            (2.0 / 3.0, "0.6666666666666666"),
            (4.35, "4.35"),
            (1e300, "1e+300"),
            (-1e-300, "-1e-300"),
            (5e-324 * 3.0, "1.5e-323"),
            (999999999999999900000.0, "999999999999999900000"),
            // A tie between two shortest candidates: V8 picks the even digit.
            (f64::from_bits(0x4317_9085_685D_83C9), "1658206780088562.2"),
            (2.5e-323, "2.5e-323"),
            (-0.0, "0"),
            (100.0, "100"),
            (0.000001, "0.000001"),
            (-7.0, "-7"),
        ] {
            assert_eq!(num_to_string(v), s);
        }
    }

    #[test]
    fn remainder_is_exact() {
        let mut x: u64 = 0x2545F4914F6CDD1D;
        for _ in 0..20000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let a = f64::from_bits(x);
            let b = f64::from_bits(x.rotate_left(17) ^ 0x5555);
            let (r, w) = (js_rem(a, b), a % b);
            assert!(
                r == w || (r.is_nan() && w.is_nan()),
                "{a:e} % {b:e}: {r:e} vs {w:e}"
            );
        }
        assert_eq!(js_rem(0.3, 0.1), 0.3 % 0.1);
        assert_eq!(js_rem(-7.5, 2.0), -1.5);
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
