//! The streams and the provider request's helpers in glue.js: our
//! `EventStream`s and the final message's thinking level.

use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/js/glue.js")]
extern "C" {
    #[wasm_bindgen(js_name = agentEventStream)]
    pub fn agent_event_stream() -> JsValue;
    #[wasm_bindgen(js_name = createAssistantMessageEventStream)]
    pub fn create_assistant_message_event_stream() -> JsValue;

    #[wasm_bindgen(js_name = stampThinking, catch)]
    pub(crate) fn stamp_thinking(message: &JsValue, level: &JsValue) -> Result<JsValue, JsValue>;
}
