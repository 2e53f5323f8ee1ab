//! Typed errors that become real JS `Error` objects.

use wasm_bindgen::prelude::*;

/// A JS `Error` with `message`.
pub fn error(message: &str) -> JsValue {
    js_sys::Error::new(message).into()
}

/// A JS `TypeError` with `message`.
pub fn type_error(message: &str) -> JsValue {
    js_sys::TypeError::new(message).into()
}

/// The reference's `error instanceof Error ? error.message : String(error)`.
/// `String(error)` runs user code (`toString`), which may throw in turn: that
/// error is the `Err`, as it propagates in the reference.
pub fn err_text(error: &JsValue) -> Result<JsValue, JsValue> {
    super::values::err_text(error)
}

/// [`err_text`], or [`msg::UNCONVERTIBLE`] when turning `error` into text
/// throws too (a null-prototype object, an `Error` whose `message` getter
/// throws): a run's failure message is always made.
pub fn describe(error: &JsValue) -> JsValue {
    err_text(error).unwrap_or_else(|_| JsValue::from_str(msg::UNCONVERTIBLE))
}

/// The message errors the package throws, word for word as in 1.4.0.
pub mod msg {
    pub const CONTINUE_NO_MESSAGES: &str = "Cannot continue: no messages in context";
    pub const CONTINUE_FROM_ASSISTANT: &str = "Cannot continue from message role: assistant";
    pub const ALREADY_PROMPTING: &str = "Agent is already processing a prompt. Use steer() or followUp() to queue messages, or wait for completion.";
    pub const ALREADY_CONTINUING: &str =
        "Agent is already processing. Wait for completion before continuing.";
    pub const ALREADY_RESETTING: &str =
        "Agent is already processing. Wait for completion before resetting.";
    pub const NO_MESSAGES_TO_CONTINUE: &str = "No messages to continue from";
    pub const OPERATION_ABORTED: &str = "Operation aborted";
    /// The error text of a failure whose thrown value cannot be turned into text.
    pub const UNCONVERTIBLE: &str = "a thrown value that cannot be converted to a string";
}
