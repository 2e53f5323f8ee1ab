//! [`RustHost`]: the validator's engine services in pure Rust, for native
//! tests and tools, where there is no JavaScript engine to borrow them from.

use super::host::Host;
use super::{format, jsnum, pattern};
use crate::prelude::*;

/// The pure-Rust [`Host`]. See the module documentation.
#[derive(Clone, Copy, Debug, Default)]
pub struct RustHost;

impl Host for RustHost {
    fn regex_test(&self, src: &str, flags: &str, text: &str) -> Result<bool, String> {
        let unicode = flags.contains('u');
        match pattern::compile(src, unicode, flags.contains('i')) {
            Ok(r) => Ok(r.test(text)),
            Err(reason) => Err(pattern::error_message(src, flags, &reason)),
        }
    }

    fn number_to_string(&self, n: f64) -> String {
        jsnum::num_to_string(n)
    }

    fn string_to_number(&self, text: &str) -> f64 {
        jsnum::str_to_number(text)
    }

    fn url_can_parse(&self, url: &str, base: Option<&str>) -> bool {
        format::url(self, url, base.is_some())
    }
}
