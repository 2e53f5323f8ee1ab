//! The binding layer: the only place that knows about JavaScript.
//!
//! `glue` imports the small JS module that builds objects in one call each,
//! `view` reads the few fields the loop needs from JS objects, `call` calls user
//! functions (sync or async) without ever panicking, `convert` turns tool
//! arguments and schemas into the pure `json::Value`, and `errors` makes real JS
//! `Error`/`TypeError` objects with the reference's messages.

pub mod call;
pub mod convert;
pub mod errors;
pub mod glue;
pub mod settle;
pub mod spawn;
pub mod validate;
pub mod view;
