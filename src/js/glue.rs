//! Imports from `glue.js`, the JS half of the binding layer.

use js_sys::{Array, Function};
use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/js/glue.js")]
extern "C" {
    #[wasm_bindgen(js_name = agentEventStream)]
    pub fn agent_event_stream() -> JsValue;
    #[wasm_bindgen(js_name = createAssistantMessageEventStream)]
    pub fn create_assistant_message_event_stream() -> JsValue;

    #[wasm_bindgen(js_name = isAborted)]
    pub fn is_aborted(signal: &JsValue) -> bool;

    #[wasm_bindgen(js_name = errText, catch)]
    pub fn err_text(error: &JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(catch)]
    pub fn shallow(object: &JsValue) -> Result<JsValue, JsValue>;
    pub fn mono() -> f64;

    #[wasm_bindgen(js_name = evAgentStart)]
    pub fn ev_agent_start() -> JsValue;
    #[wasm_bindgen(js_name = evAgentEnd)]
    pub fn ev_agent_end(messages: &JsValue) -> JsValue;
    #[wasm_bindgen(js_name = evTurnStart)]
    pub fn ev_turn_start() -> JsValue;
    #[wasm_bindgen(js_name = evTurnEnd)]
    pub fn ev_turn_end(message: &JsValue, tool_results: &JsValue) -> JsValue;
    #[wasm_bindgen(js_name = evMessageStart)]
    pub fn ev_message_start(message: &JsValue) -> JsValue;
    #[wasm_bindgen(js_name = evMessageStartCopy, catch)]
    pub fn ev_message_start_copy(message: &JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = evMessageEnd)]
    pub fn ev_message_end(message: &JsValue) -> JsValue;
    #[wasm_bindgen(js_name = evToolStartOf, catch)]
    pub fn ev_tool_start_of(tool_call: &JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = evToolEndOf, catch)]
    pub fn ev_tool_end_of(
        tool_call: &JsValue,
        result: &JsValue,
        is_error: &JsValue,
        duration_ms: Option<f64>,
    ) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = anySequential, catch)]
    pub fn any_sequential(tools: &JsValue, tool_calls: &JsValue) -> Result<bool, JsValue>;
    #[wasm_bindgen(js_name = toolCallsOf, catch)]
    pub fn tool_calls_of(message: &JsValue) -> Result<Array, JsValue>;
    #[wasm_bindgen(js_name = pushAll)]
    pub fn push_all(target: &Array, source: &Array);
    #[wasm_bindgen(js_name = agentProcessWatch, catch)]
    pub fn agent_process_watch(
        state: &JsValue,
        listeners: &JsValue,
        event: &JsValue,
        signal: &JsValue,
        slot: u32,
    ) -> Result<bool, JsValue>;
    #[wasm_bindgen(js_name = evToolEnd)]
    pub fn ev_tool_end(
        id: &JsValue,
        name: &JsValue,
        result: &JsValue,
        is_error: &JsValue,
        duration_ms: Option<f64>,
    ) -> JsValue;

    #[wasm_bindgen(js_name = errorToolResult)]
    pub fn error_tool_result(text: &JsValue) -> JsValue;
    #[wasm_bindgen(js_name = toolResultMessage, catch)]
    pub fn tool_result_message(
        tool_call: &JsValue,
        result: &JsValue,
        is_error: &JsValue,
        duration_ms: Option<f64>,
    ) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = failureMessage, catch)]
    pub fn failure_message(
        model: &JsValue,
        stop_reason: &str,
        error_message: &JsValue,
        usage: &JsValue,
    ) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = applyAfterToolCall, catch)]
    pub fn apply_after_tool_call(
        result: &JsValue,
        is_error: &JsValue,
        r: &JsValue,
    ) -> Result<Array, JsValue>;

    #[wasm_bindgen(js_name = contextWith, catch)]
    pub fn context_with(context: &JsValue, messages: &JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = stampThinking, catch)]
    pub fn stamp_thinking(message: &JsValue, level: &JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = withArguments, catch)]
    pub fn with_arguments(tool_call: &JsValue, args: &JsValue) -> Result<JsValue, JsValue>;

    #[wasm_bindgen(js_name = toolDeclaration, catch)]
    pub fn tool_declaration(tool: &JsValue) -> Result<Array, JsValue>;
    #[wasm_bindgen(js_name = withToolChanges, catch)]
    pub fn with_tool_changes(
        message: &JsValue,
        added: &Array,
        removed: &Array,
    ) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = toolUpdateMessage)]
    pub fn tool_update_message(added: &Array, removed: &Array) -> JsValue;
    #[wasm_bindgen(js_name = toolRef)]
    pub fn tool_ref(name: &JsValue) -> JsValue;
    #[wasm_bindgen(js_name = getDefaultConvertToLlm)]
    pub fn default_convert_to_llm() -> Function;
}

#[wasm_bindgen(module = "/src/js/glue.js")]
extern "C" {
    #[wasm_bindgen(js_name = setKey)]
    pub fn set_key(object: &JsValue, key: &str, value: &JsValue);
    #[wasm_bindgen(js_name = jsonStringify, catch)]
    pub fn json_stringify(value: &JsValue, indent: u32) -> Result<JsValue, JsValue>;
}

#[wasm_bindgen(module = "/src/js/glue.js")]
extern "C" {
    #[wasm_bindgen(js_name = turnContext)]
    pub fn turn_context(
        message: &JsValue,
        tool_results: &JsValue,
        context: &JsValue,
        new_messages: &JsValue,
    ) -> JsValue;
    #[wasm_bindgen(js_name = requestContext)]
    pub fn request_context(context: &JsValue, model: &JsValue, thinking_level: &JsValue)
        -> JsValue;
    #[wasm_bindgen(js_name = beforeContext)]
    pub fn before_context(
        assistant: &JsValue,
        tool_call: &JsValue,
        args: &JsValue,
        context: &JsValue,
    ) -> JsValue;
    #[wasm_bindgen(js_name = afterContext)]
    pub fn after_context(
        assistant: &JsValue,
        tool_call: &JsValue,
        args: &JsValue,
        result: &JsValue,
        is_error: &JsValue,
        context: &JsValue,
    ) -> JsValue;
    #[wasm_bindgen(js_name = toArray, catch)]
    pub fn to_array(value: &JsValue) -> Result<Array, JsValue>;
}
