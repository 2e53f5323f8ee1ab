//! The binding layer: the only place that knows about JavaScript.
//!
//! Each Rust module here holds the extern block of the JS file beside it (see
//! src/js/README.md): `values` the plain-value helpers, `events` the event and
//! message constructors, `glue` the streams; `view` reads the few fields the loop needs from JS objects, `call` calls user
//! functions (sync or async) without ever panicking, `convert` turns tool
//! arguments and schemas into the pure `json::Value`, and `errors` makes real JS
//! `Error`/`TypeError` objects with the reference's messages.

pub(crate) mod call;
pub mod convert;
pub(crate) mod errors;
pub(crate) mod events;
pub mod glue;
pub(crate) mod settle;
pub(crate) mod spawn;
pub(crate) mod validate;
pub(crate) mod values;
pub(crate) mod view;
