//! Our `EventStream`s, from glue.js.

use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/js/glue.js")]
extern "C" {
    #[wasm_bindgen(js_name = agentEventStream)]
    pub fn agent_event_stream() -> JsValue;
    #[wasm_bindgen(js_name = createAssistantMessageEventStream)]
    pub fn create_assistant_message_event_stream() -> JsValue;
}
