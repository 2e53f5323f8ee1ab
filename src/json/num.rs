//! Decimal text to the nearest `f64` (ties to even), as `JSON.parse` and
//! `Number(text)` round it, without `core`'s `str::parse::<f64>`: its
//! Eisel-Lemire tables and slow path cost about 15 kB of the gzipped wasm.
//!
//! Short inputs (up to 2^53 with a power of ten up to 10^22) take Clinger's
//! exact fast path. Everything else starts from a floating-point estimate and
//! is corrected one unit in the last place at a time by comparing the decimal
//! value with the midpoints around the candidate in exact big-integer
//! arithmetic; the estimate is within a few units, so this ends after a few
//! comparisons.

use crate::prelude::*;
use core::cmp::Ordering;

/// Significant digits kept; any further non-zero digit becomes a sticky `1`.
/// Midpoints between doubles have at most 767 significant digits, so no
/// rounding boundary can fall between the kept prefix and the full value.
const MAX_DIGITS: usize = 800;

/// Parses `[+-]? (digits [. digits?] | . digits) ([eE] [+-]? digits)?`; `None`
/// for anything else (no blanks, no `Infinity`, no hex).
pub fn parse_f64(s: &str) -> Option<f64> {
    let b = s.as_bytes();
    let mut i = 0;
    let neg = sign(b, &mut i);
    let mut digits: Vec<u8> = Vec::new();
    let mut exp: i64 = 0;
    let mut sticky = false;
    let mut seen = false;
    let mut fraction = false;
    loop {
        match b.get(i) {
            Some(c @ b'0'..=b'9') => {
                seen = true;
                let d = c - b'0';
                if digits.len() < MAX_DIGITS {
                    if d != 0 || !digits.is_empty() {
                        digits.push(d);
                    }
                    if fraction {
                        exp -= 1;
                    }
                } else {
                    sticky |= d != 0;
                    if !fraction {
                        exp += 1;
                    }
                }
            }
            Some(b'.') if !fraction => fraction = true,
            _ => break,
        }
        i += 1;
    }
    if !seen {
        return None;
    }
    if let Some(b'e' | b'E') = b.get(i) {
        i += 1;
        let eneg = sign(b, &mut i);
        let start = i;
        let mut e: i64 = 0;
        while let Some(c @ b'0'..=b'9') = b.get(i) {
            e = (e * 10 + (c - b'0') as i64).min(1 << 40);
            i += 1;
        }
        if i == start {
            return None;
        }
        exp += if eneg { -e } else { e };
    }
    if i != b.len() {
        return None;
    }
    if sticky {
        digits.push(1);
        exp -= 1;
    }
    let v = digits_to_f64(&digits, exp);
    Some(if neg { -v } else { v })
}

/// An optional `+` or `-` at `i` (consumed); whether it was `-`.
fn sign(b: &[u8], i: &mut usize) -> bool {
    match b.get(*i) {
        Some(b'-') => {
            *i += 1;
            true
        }
        Some(b'+') => {
            *i += 1;
            false
        }
        _ => false,
    }
}

/// The double nearest to `D × 10^exp`, `D` being the decimal digits (values
/// 0–9, most significant first; leading zeros allowed).
pub(crate) fn digits_to_f64(digits: &[u8], exp: i64) -> f64 {
    let lead = digits.iter().take_while(|d| **d == 0).count();
    let digits = digits.get(lead..).unwrap_or_default();
    let n = digits.len() as i64;
    if n == 0 {
        return 0.0;
    }
    // The value lies in [10^(n-1+exp), 10^(n+exp)).
    if n + exp > 310 {
        return f64::INFINITY;
    }
    if n + exp < -325 {
        return 0.0;
    }
    let taken = digits.len().min(19);
    let w = digits
        .iter()
        .take(taken)
        .fold(0u64, |w, d| w * 10 + *d as u64);
    if n <= 19 && w < (1 << 53) && (-22..=22).contains(&exp) {
        let p = pow10_exact(exp.unsigned_abs() as u32);
        return if exp < 0 { w as f64 / p } else { w as f64 * p };
    }
    // Estimate, then correct in exact arithmetic.
    let e2 = exp + (n - taken as i64);
    let half = (e2 / 2) as i32;
    let mut x =
        w as f64 * crate::float::powi(10.0, half) * crate::float::powi(10.0, e2 as i32 - half);
    if x.is_infinite() {
        x = f64::MAX;
    }
    let big = Big::from_digits(digits);
    loop {
        let c = cmp_midpoint(&big, exp, x);
        if c == Ordering::Greater || (c == Ordering::Equal && odd(x)) {
            if x == f64::MAX {
                return f64::INFINITY;
            }
            x = f64::from_bits(x.to_bits() + 1);
            continue;
        }
        if x > 0.0 {
            let below = f64::from_bits(x.to_bits() - 1);
            let c = cmp_midpoint(&big, exp, below);
            if c == Ordering::Less || (c == Ordering::Equal && odd(x)) {
                x = below;
                continue;
            }
        }
        return x;
    }
}

/// 10^k for k ≤ 22 (exact in `f64`).
fn pow10_exact(k: u32) -> f64 {
    let mut p = 1.0;
    for _ in 0..k {
        p *= 10.0;
    }
    p
}

fn odd(x: f64) -> bool {
    x.to_bits() & 1 == 1
}

/// Compares `d × 10^exp` with the midpoint between `x` (finite, ≥ 0) and the
/// next double up, `(2m + 1) × 2^(e - 1)`.
fn cmp_midpoint(d: &Big, exp: i64, x: f64) -> Ordering {
    let bits = x.to_bits();
    let be = ((bits >> 52) & 0x7ff) as i64;
    let frac = bits & ((1 << 52) - 1);
    let (m, e) = if be == 0 {
        (frac, -1074)
    } else {
        (frac | (1 << 52), be - 1075)
    };
    let mut left = d.clone();
    let mut right = Big::from_u64(2 * m + 1);
    // d × 5^exp × 2^exp  vs  M × 2^(e-1): move the fives to whichever side
    // keeps them integral, then line up the twos.
    if exp >= 0 {
        left.mul_pow5(exp as u32);
    } else {
        right.mul_pow5((-exp) as u32);
    }
    let (l2, r2) = (exp, e - 1);
    let t = l2.min(r2);
    left.shl((l2 - t) as u32);
    right.shl((r2 - t) as u32);
    left.cmp(&right)
}

/// A little-endian unsigned big integer in base 2^32.
#[derive(Clone)]
pub(crate) struct Big(pub(crate) Vec<u32>);

impl Big {
    pub(crate) fn from_u64(v: u64) -> Big {
        Big(vec![v as u32, (v >> 32) as u32])
    }

    fn from_digits(digits: &[u8]) -> Big {
        let mut b = Big(Vec::new());
        for chunk in digits.chunks(9) {
            let (mut scale, mut add) = (1u32, 0u32);
            for d in chunk {
                scale *= 10;
                add = add * 10 + *d as u32;
            }
            b.mul_add(scale, add);
        }
        b
    }

    /// `self = self × k + add`.
    pub(crate) fn mul_add(&mut self, k: u32, add: u32) {
        let mut carry = add as u64;
        for l in self.0.iter_mut() {
            let x = *l as u64 * k as u64 + carry;
            *l = x as u32;
            carry = x >> 32;
        }
        if carry != 0 {
            self.0.push(carry as u32);
        }
    }

    fn mul_pow5(&mut self, mut k: u32) {
        while k > 0 {
            let step = k.min(13);
            self.mul_add(5u32.pow(step), 0);
            k -= step;
        }
    }

    fn shl(&mut self, bits: u32) {
        let rest = bits % 32;
        let mut out = vec![0u32; (bits / 32) as usize];
        let mut carry = 0u64;
        for &l in &self.0 {
            let x = ((l as u64) << rest) | carry;
            out.push(x as u32);
            carry = x >> 32;
        }
        if carry != 0 {
            out.push(carry as u32);
        }
        self.0 = out;
    }

    fn trimmed(&self) -> &[u32] {
        let n = self.0.iter().rposition(|l| *l != 0).map_or(0, |p| p + 1);
        self.0.get(..n).unwrap_or_default()
    }

    fn cmp(&self, other: &Big) -> Ordering {
        let (a, b) = (self.trimmed(), other.trimmed());
        a.len()
            .cmp(&b.len())
            .then_with(|| a.iter().rev().cmp(b.iter().rev()))
    }
}

/// `n` in decimal, without `core::fmt`.
pub(crate) fn usize_to_string(mut n: usize) -> String {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        if let Some(slot) = buf.get_mut(i) {
            *slot = b'0' + (n % 10) as u8;
        }
        n /= 10;
        if n == 0 || i == 0 {
            break;
        }
    }
    buf.get(i..)
        .and_then(|d| core::str::from_utf8(d).ok())
        .unwrap_or_default()
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, k: u64) -> u64 {
            self.next() % k
        }
    }

    fn check(s: &str) {
        let want: f64 = s.parse().unwrap();
        let got = parse_f64(s).unwrap_or_else(|| panic!("rejected {s}"));
        assert_eq!(
            got.to_bits(),
            want.to_bits(),
            "{s}: got {got:e}, want {want:e}"
        );
    }

    #[test]
    fn edge_cases() {
        for s in [
            "0",
            "-0",
            "0.0",
            "00012",
            "1",
            "1.5",
            ".5",
            "5.",
            "+5",
            "1e3",
            "1E+3",
            "1e-3",
            "123456789012345678901234567890",
            "0.1",
            "0.2",
            "0.3",
            "0.30000000000000004",
            "9007199254740993",
            "9007199254740992.5",
            "1.7976931348623157e308",
            "1.7976931348623158e308",
            "1.7976931348623159e308",
            "179769313486231580793728971405301e276",
            "2e308",
            "1e309",
            "4.9406564584124654e-324",
            "2.4703282292062327e-324",
            "2.4703282292062328e-324",
            "2.4703282292062327208828439643411068618252990130716238221279284125033775363510437593264991818081799618989828234772285886546332835517796989819938739800539093906315035659515570226392290858392449105184435931802849936536152500319370457678249219365623669863658480757001585769269903706311928279558551332927834338409351978015531246597263579574622766465272827220056374006485499977096599470454020828166226237857393450736339007967761930577506740176324673600968951340535537458516661134223766678604162159680461914467291840300530057530849048765391711386591646239524912623653881879636239373280423891018672348497668235089863388587925628302755995657524455507255189313690836254779186948667994968324049705821028513185451396213837722826145437693412532098591327667236328125e-324",
            "2.2250738585072011e-308",
            "2.2250738585072012e-308",
            "2.2250738585072014e-308",
            "1e-400",
            "1e400",
            "0e400",
            "1e-99999999999999999999",
            "1e99999999999999999999",
            "7.038531e-26",
            "123456789e-30",
            "8.98846567431158e307",
            "0.000000000000000000000000000000000000000000000000000001",
            "100000000000000000000000",
            "1e23",
            "8.589973e9",
            "2.2250738585072011360574097967091319759348195463516456480234261098902" ,
        ] {
            check(s);
        }
        for s in [
            "", "-", "+", ".", "e5", "1e", "1e+", "1.2.3", "1x", " 1", "--1", "0x10", "Infinity",
            "NaN",
        ] {
            assert_eq!(parse_f64(s), None, "{s}");
        }
        let long = format!("0.{}1", "0".repeat(900));
        check(&long);
        let long = format!("{}e-1000", "1".repeat(1200));
        check(&long);
        let long = format!("1{}1e-1000", "0".repeat(1200));
        check(&long);
    }

    #[test]
    fn shortest_and_long_forms_of_random_doubles() {
        let mut r = Rng(0x9E37_79B9_7F4A_7C15);
        for _ in 0..20_000 {
            let x = f64::from_bits(r.next() & !(1 << 63));
            if !x.is_finite() {
                continue;
            }
            check(&format!("{x:e}"));
            check(&format!("{x}"));
            check(&format!("{x:.20e}"));
            check(&format!("{x:.3e}"));
        }
    }

    #[test]
    fn random_digit_strings() {
        let mut r = Rng(0x2545_F491_4F6C_DD1D);
        for _ in 0..20_000 {
            let len = 1 + r.below(40) as usize;
            let digits: String = (0..len)
                .map(|_| (b'0' + r.below(10) as u8) as char)
                .collect();
            let e = r.below(700) as i64 - 350;
            check(&format!("{digits}e{e}"));
            let cut = r.below(len as u64) as usize;
            check(&format!("{}.{}", &digits[..cut], &digits[cut..]));
        }
    }

    /// Exact decimal form of the midpoint between `x` and the next double up.
    fn midpoint_digits(x: f64) -> (String, i64) {
        let bits = x.to_bits();
        let be = ((bits >> 52) & 0x7ff) as i64;
        let frac = bits & ((1 << 52) - 1);
        let (m, e) = if be == 0 {
            (frac, -1074)
        } else {
            (frac | (1 << 52), be - 1075)
        };
        let mut b = Big::from_u64(2 * m + 1);
        let f = e - 1;
        let dexp = if f >= 0 {
            b.shl(f as u32);
            0
        } else {
            b.mul_pow5((-f) as u32);
            f
        };
        // Big to decimal by repeated division.
        let mut digits = Vec::new();
        while !b.trimmed().is_empty() {
            let mut rem = 0u64;
            for l in b.0.iter_mut().rev() {
                let x = (rem << 32) | *l as u64;
                *l = (x / 10) as u32;
                rem = x % 10;
            }
            digits.push((b'0' + rem as u8) as char);
        }
        digits.reverse();
        (digits.into_iter().collect(), dexp)
    }

    #[test]
    fn exact_midpoints_round_to_even() {
        let mut r = Rng(0xDEAD_BEEF_CAFE_F00D);
        for i in 0..3_000 {
            let x = match i {
                0 => f64::MAX,
                1 => 0.0,
                2 => f64::MIN_POSITIVE,
                3 => 5e-324,
                _ => f64::from_bits(r.next() & !(1 << 63)),
            };
            if !x.is_finite() {
                continue;
            }
            let (d, e) = midpoint_digits(x);
            check(&format!("{d}e{e}"));
            // Just above and just below the midpoint.
            check(&format!("{d}1e{}", e - 1));
            let last = d.len() - 1;
            if d.as_bytes()[last] > b'0' {
                let mut lower = d.clone().into_bytes();
                lower[last] -= 1;
                check(&format!("{}9e{}", String::from_utf8(lower).unwrap(), e - 1));
            }
        }
    }

    #[test]
    fn usize_digits() {
        for n in [0usize, 7, 10, 99, 1234567890, usize::MAX] {
            assert_eq!(usize_to_string(n), n.to_string());
        }
    }
}
