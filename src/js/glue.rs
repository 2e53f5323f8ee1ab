//! The streams and the provider request's helpers in glue.js: our
//! `EventStream`s, opening and reading a stream function's iterator, and the
//! event kinds the request dispatches on.

use wasm_bindgen::prelude::*;

// The request (src/agent_loop/request.rs) reaches these constructors through
// `glue::`; they are defined once, in events.rs.
pub(crate) use super::events::{ev_message_end, ev_message_start_copy, ev_message_update};

#[wasm_bindgen(module = "/src/js/glue.js")]
extern "C" {
    #[wasm_bindgen(js_name = agentEventStream)]
    pub fn agent_event_stream() -> JsValue;
    #[wasm_bindgen(js_name = createAssistantMessageEventStream)]
    pub fn create_assistant_message_event_stream() -> JsValue;

    #[wasm_bindgen(js_name = openIterator, catch)]
    pub(crate) fn open_iterator(stream: &JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = nextResult, catch)]
    pub(crate) fn next_result(iterator: &JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = stampThinking, catch)]
    pub(crate) fn stamp_thinking(message: &JsValue, level: &JsValue) -> Result<JsValue, JsValue>;
    /// Event kinds the loop dispatches on, as small integers (one call instead of a string copy).
    #[wasm_bindgen(js_name = eventKind, catch)]
    pub(crate) fn event_kind(event: &JsValue) -> Result<u32, JsValue>;
}
