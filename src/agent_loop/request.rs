//! One provider request (R31–R38): build the LLM context, call the stream
//! function, and forward its events as `message_*` events while keeping the
//! streaming message as the last transcript entry.

use js_sys::{Array, Function};
use wasm_bindgen::prelude::*;

use super::run::thinking_level;
use super::Run;
use crate::js::call;
use crate::js::glue;
use crate::js::view::{self, view};

const PUMP_AWAIT: u32 = 2;

#[wasm_bindgen(module = "/src/js/glue.js")]
extern "C" {
    #[wasm_bindgen(js_name = pumpUpdates, catch)]
    fn pump_updates_js(
        iterator: &JsValue,
        target: &Array,
        deliver: &Function,
    ) -> Result<u32, JsValue>;
    #[wasm_bindgen(js_name = takePumped)]
    fn take_pumped() -> JsValue;
}

const KIND_START: u32 = 1;
const KIND_UPDATE: u32 = 2;
const KIND_TERMINAL: u32 = 3;

#[wasm_bindgen(module = "/src/js/glue.js")]
extern "C" {
    #[wasm_bindgen(js_name = finalResult, catch)]
    fn final_result(stream: &JsValue) -> Result<JsValue, JsValue>;
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
        call::call_until_abort(&hooks.convert_to_llm, &config, &[&messages], &run.signal).await?
    };
    let llm_context = js_sys::Object::new();
    js_sys::Reflect::set(&llm_context, &JsValue::from_str("messages"), &llm_messages)?;

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
        &[&model, &llm_context.into(), &options],
        &run.signal,
    )
    .await?;

    let level = thinking_level(&config)?;
    let target = super::messages_of(&context)?;
    let iterator = glue::open_iterator(&response)?;
    let mut partial: Option<JsValue> = None;

    let deliver = run.sink.deliver_fn();
    loop {
        if partial.is_some() && pump_updates_js(&iterator, &target, &deliver)? == PUMP_AWAIT {
            call::settle(take_pumped()).await?;
            continue;
        }
        let step = call::settle(glue::next_result(&iterator)?).await?;
        if view(&step).done()?.is_truthy() {
            break;
        }
        let event = view(&step).value()?;
        match glue::event_kind(&event)? {
            KIND_START => {
                let p = view(&event).partial()?;
                target.push(&p);
                run.emit(glue::ev_message_start_copy(&p)?).await?;
                partial = Some(p);
            }
            KIND_UPDATE if partial.is_some() => {
                let p = view(&event).partial()?;
                replace_last(&target, &p);
                run.emit(glue::ev_message_update(&p, &event)?).await?;
                partial = Some(p);
            }
            KIND_TERMINAL => break,
            _ => {}
        }
    }
    finish(run, &response, &target, partial.is_some(), &level).await
}

async fn finish(
    run: &Run,
    response: &JsValue,
    target: &Array,
    added_partial: bool,
    level: &JsValue,
) -> Result<JsValue, JsValue> {
    let pending = final_result(response)?;
    // Always one microtask hop, as `await stream.result()` takes.
    let message = call::settle(js_sys::Promise::resolve(&pending).into()).await?;
    let message = glue::stamp_thinking(&message, level)?;
    if added_partial {
        replace_last(target, &message);
    } else {
        target.push(&message);
        run.emit(glue::ev_message_start_copy(&message)?).await?;
    }
    run.emit(glue::ev_message_end(&message)).await?;
    Ok(message)
}

fn replace_last(array: &Array, value: &JsValue) {
    let len = array.length();
    if len > 0 {
        array.set(len - 1, value.clone());
    } else {
        array.push(value);
    }
}
