//! The events and messages that several parts of the loop and the Agent emit,
//! built in JS (src/js/events.js) in one call each with the reference's key
//! order.

use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/js/events.js")]
extern "C" {
    #[wasm_bindgen(js_name = evAgentStart)]
    pub(crate) fn ev_agent_start() -> JsValue;
    #[wasm_bindgen(js_name = evAgentEnd)]
    pub(crate) fn ev_agent_end(messages: &JsValue) -> JsValue;
    #[wasm_bindgen(js_name = evTurnStart)]
    pub(crate) fn ev_turn_start() -> JsValue;
    #[wasm_bindgen(js_name = evTurnEnd)]
    pub(crate) fn ev_turn_end(message: &JsValue, tool_results: &JsValue) -> JsValue;
    #[wasm_bindgen(js_name = evMessageStart)]
    pub(crate) fn ev_message_start(message: &JsValue) -> JsValue;
    #[wasm_bindgen(js_name = evMessageStartCopy, catch)]
    pub(crate) fn ev_message_start_copy(message: &JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = evMessageEnd)]
    pub(crate) fn ev_message_end(message: &JsValue) -> JsValue;
    #[wasm_bindgen(js_name = evToolStartOf, catch)]
    pub(crate) fn ev_tool_start_of(tool_call: &JsValue) -> Result<JsValue, JsValue>;
    /// The end event of a tool call's outcome (tools.js `toolCallOutcome`).
    #[wasm_bindgen(js_name = evToolEndOf, catch)]
    pub(crate) fn ev_tool_end_of(outcome: &JsValue) -> Result<JsValue, JsValue>;

    /// `{ content: [{ type: "text", text }], details: {} }`.
    #[wasm_bindgen(js_name = errorToolResult)]
    pub(crate) fn error_tool_result(text: &JsValue) -> JsValue;
    /// The assistant message a failed request or run ends with.
    #[wasm_bindgen(js_name = failureMessage, catch)]
    pub(crate) fn failure_message(
        model: &JsValue,
        stop_reason: &str,
        error_message: &JsValue,
        usage: &JsValue,
    ) -> Result<JsValue, JsValue>;
    /// `EMPTY_USAGE`: one shared zero-usage object, as in the reference.
    #[wasm_bindgen(js_name = getEmptyUsage)]
    pub(crate) fn empty_usage() -> JsValue;
}
