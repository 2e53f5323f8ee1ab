//! What the validator borrows from the JavaScript engine it runs in.
//!
//! The reference evaluates `pattern`, `patternProperties` and most string
//! formats with the engine's own `RegExp`, prints numbers with
//! `Number.prototype.toString`, converts strings with `Number(text)` and checks
//! `url`/`iri` formats with `URL.canParse`. The wasm binding implements
//! [`Host`] with exactly those JavaScript calls, so the package gets V8's
//! semantics and ships none of this code; [`RustHost`] is the pure-Rust
//! implementation (a small backtracking regex engine, exact number
//! conversions, a reduced URL parser) used by native tests and tools
//! (`rust_host.rs`). Its approximations are listed in [`super::pattern`] and
//! [`super::format`].

use crate::prelude::*;

/// JavaScript engine services used by schema validation.
pub trait Host {
    /// `new RegExp(pattern, flags).test(text)`. `flags` is one of `""`, `"u"`,
    /// `"i"`, `"iu"`. `Err` carries the `message` of the `SyntaxError` the
    /// constructor throws (V8: `Invalid regular expression: /src/flags: reason`).
    fn regex_test(&self, pattern: &str, flags: &str, text: &str) -> Result<bool, String>;
    /// `String(n)` (`Number.prototype.toString()` in radix 10).
    fn number_to_string(&self, n: f64) -> String;
    /// `Number(text)`: `NaN` when `text` is not a StringNumericLiteral.
    fn string_to_number(&self, text: &str) -> f64;
    /// `URL.canParse(url)`, or `URL.canParse(url, base)` with a base.
    fn url_can_parse(&self, url: &str, base: Option<&str>) -> bool;
}
