//! The `f64` methods std adds to core's (the crate is `no_std`, see lib.rs):
//! the few it uses, exact for every input, checked against std natively.

/// 2^52: from here on every `f64` is an integer.
const INTEGRAL: f64 = 4_503_599_627_370_496.0;

/// `x.trunc()`.
pub fn trunc(x: f64) -> f64 {
    // Also NaN and the infinities, which the cast would change.
    if x.is_nan() || x.abs() >= INTEGRAL {
        return x;
    }
    (x as i64 as f64).copysign(x)
}

/// `x.fract()`.
pub fn fract(x: f64) -> f64 {
    x - trunc(x)
}

/// `x.powi(n)`, by the same repeated squaring as the wasm build's
/// `__powidf2` (compiler-builtins), so results do not change.
pub fn powi(mut x: f64, n: i32) -> f64 {
    let mut b = n;
    let mut r = 1.0;
    loop {
        if b & 1 != 0 {
            r *= x;
        }
        b /= 2;
        if b == 0 {
            break;
        }
        x *= x;
    }
    if n < 0 {
        1.0 / r
    } else {
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLES: &[f64] = &[
        0.0,
        -0.0,
        0.3,
        -0.3,
        0.5,
        -0.5,
        1.5,
        -1.5,
        2.5,
        -2.5,
        0.49999999999999994,
        -0.49999999999999994,
        1e15 + 0.5,
        4503599627370495.5,
        -4503599627370495.5,
        4503599627370497.0,
        1e300,
        -1e300,
        123.456,
        f64::MIN_POSITIVE,
        f64::MAX,
        f64::MIN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
    ];

    fn same(a: f64, b: f64) -> bool {
        a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
    }

    #[test]
    fn as_std() {
        for &x in SAMPLES {
            assert!(same(trunc(x), x.trunc()), "trunc {x}");
            assert!(same(fract(x), x.fract()), "fract {x}");
        }
        for n in -330..=330 {
            let (p, want) = (powi(10.0, n), 10f64.powi(n));
            assert!(p == want || (p - want).abs() <= want * 1e-15, "powi {n}");
        }
    }
}
