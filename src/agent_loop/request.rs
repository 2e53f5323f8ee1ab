//! One provider request (the reference's `streamAssistantResponse`): build the
//! LLM context (every tool call answered at once by its result, whatever the
//! transcript holds: pairing.js), call the stream function, and forward its events as
//! `message_*` events while keeping the streaming message as the last
//! transcript entry. Update events are forwarded by `stream.js` without
//! entering wasm; this module decides at `start`, at the end, and at an abort
//! the stream ignores.

use js_sys::{Array, Function};
use wasm_bindgen::prelude::*;

use super::thinking_level;
use super::Run;
use crate::js::call;
use crate::js::events;
use crate::js::settle::read_until_abort;
use crate::js::view::{self, view};

/// Reads one response's events (stream.js): update events are handled there,
/// in JS, and only the structural steps come back here.
#[wasm_bindgen(module = "/src/agent_loop/stream.js")]
extern "C" {
    type StreamReader;
    #[wasm_bindgen(js_name = openReader, catch)]
    fn open_reader(
        stream: &JsValue,
        target: &Array,
        deliver: &Function,
    ) -> Result<StreamReader, JsValue>;
    /// `END`, `START` or `TERMINAL`, or a promise of one.
    #[wasm_bindgen(method, catch)]
    fn step(this: &StreamReader) -> Result<JsValue, JsValue>;
    /// The streaming message: the last `partial` read.
    #[wasm_bindgen(method, getter)]
    fn partial(this: &StreamReader) -> JsValue;
    /// The `message_start` event, its copy of the message taken as `start` was read.
    #[wasm_bindgen(method, getter = startEvent)]
    fn start_event(this: &StreamReader) -> JsValue;
    /// Stops reading; returns the listener promise still to await, if any.
    #[wasm_bindgen(method)]
    fn stop(this: &StreamReader) -> JsValue;
    /// A copy of the streaming message with `stopReason: "aborted"`.
    #[wasm_bindgen(js_name = abortedMessage, catch)]
    fn aborted_message(partial: &JsValue, error_message: &JsValue) -> Result<JsValue, JsValue>;
}

const STEP_START: u32 = 1;

/// The `errorMessage` of a request that ended at the abort, as pi-ai's providers write it.
const REQUEST_ABORTED: &str = "Request was aborted";

#[wasm_bindgen(module = "/src/js/glue.js")]
extern "C" {
    #[wasm_bindgen(js_name = finalResult, catch)]
    fn final_result(stream: &JsValue) -> Result<JsValue, JsValue>;
}

#[wasm_bindgen(module = "/src/agent_loop/request.js")]
extern "C" {
    #[wasm_bindgen(js_name = stampThinking, catch)]
    fn stamp_thinking(message: &JsValue, level: &JsValue) -> Result<JsValue, JsValue>;
    /// `{ messages }`, the context a stream function gets.
    #[wasm_bindgen(js_name = llmContext)]
    fn llm_context(messages: &JsValue) -> JsValue;
    #[wasm_bindgen(js_name = llmView, catch)]
    fn llm_view(messages: &Array) -> Result<JsValue, JsValue>;

    /// The stream function's options: `apiKey` (the hook's, else the
    /// config's), the merged `identity`, the `signal`.
    #[wasm_bindgen(js_name = requestOptions, catch)]
    fn request_options(
        config: &JsValue,
        api_key: &JsValue,
        signal: &JsValue,
    ) -> Result<JsValue, JsValue>;
}

#[wasm_bindgen(module = "/src/agent_loop/pairing.js")]
extern "C" {
    /// `convertToLlm`'s messages with every tool call answered at once by its result.
    #[wasm_bindgen(js_name = pairedMessages)]
    fn paired_messages(messages: &JsValue) -> JsValue;
}

pub async fn stream_assistant_response(
    run: &Run,
    stream_fn: &Function,
) -> Result<JsValue, JsValue> {
    let hooks = &run.hooks;
    let config = run.config();
    let context = run.context();

    let messages = run.messages()?;
    let llm_messages = if run.llm_view {
        llm_view(&messages)?
    } else {
        let mut messages: JsValue = messages.into();
        if let Some(f) = &hooks.transform_context {
            messages =
                call::call_until_abort(f, &config, &[&messages, &run.signal], &run.signal).await?;
        }
        let converted =
            call::call_until_abort(&hooks.convert_to_llm, &config, &[&messages], &run.signal)
                .await?;
        paired_messages(&converted)
    };
    let llm_context = llm_context(&llm_messages);

    let model = view(&config).model()?;
    let api_key = match &hooks.get_api_key {
        Some(f) => {
            let provider = view::field(&model, |m| m.provider())?;
            call::call_until_abort(f, &config, &[&provider], &run.signal).await?
        }
        None => JsValue::UNDEFINED,
    };
    let options = request_options(&config, &api_key, &run.signal)?;
    let response = call::call_until_abort(
        stream_fn,
        &JsValue::UNDEFINED,
        &[&model, &llm_context, &options],
        &run.signal,
    )
    .await?;

    let level = thinking_level(&config)?;
    let target = super::messages_of(&context)?;
    let reader = open_reader(&response, &target, &run.sink.deliver_fn())?;
    let mut started = false;

    // The final message, or `None` at an abort the stream ignored.
    let settled = loop {
        // A stream that ignores the abort is not waited for: two macrotasks
        // after the abort the step settles as `undefined` (a step is a number).
        let step = read_until_abort(reader.step()?, &run.signal).await?;
        let Some(step) = step.as_f64() else {
            break None;
        };
        // `done`/`error` or the end of iteration: `result()` decides, as in the reference.
        if step as u32 != STEP_START {
            let pending = final_result(&response)?;
            // Always one microtask hop, as `await stream.result()` takes.
            let pending: JsValue = js_sys::Promise::resolve(&pending).into();
            let message = read_until_abort(pending, &run.signal).await?;
            break (!(message.is_undefined() && run.aborted())).then_some(message);
        }
        target.push(&reader.partial());
        run.emit(reader.start_event()).await?;
        started = true;
    };
    let message = match settled {
        Some(message) => message,
        None => {
            // A listener still running for the last update is the app's own: awaited.
            call::settle(reader.stop()).await?;
            aborted_response(run, &reader, started)?
        }
    };

    let message = stamp_thinking(&message, &level)?;
    if started {
        replace_last(&target, &message);
    } else {
        target.push(&message);
        run.emit(events::ev_message_start_copy(&message)?).await?;
    }
    run.emit(events::ev_message_end(&message)).await?;
    Ok(message)
}

/// The response of a request whose stream was still pending at the abort
/// (reading has stopped; its late events and result are dropped): the partial
/// message, or a fresh one, with `stopReason: "aborted"`.
fn aborted_response(run: &Run, reader: &StreamReader, started: bool) -> Result<JsValue, JsValue> {
    let text = JsValue::from_str(REQUEST_ABORTED);
    if started {
        aborted_message(&reader.partial(), &text)
    } else {
        let model = view(&run.config()).model()?;
        events::failure_message(&model, "aborted", &text, &events::empty_usage())
    }
}

fn replace_last(array: &Array, value: &JsValue) {
    let len = array.length();
    if len > 0 {
        array.set(len - 1, value.clone());
    } else {
        array.push(value);
    }
}
