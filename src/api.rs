//! The low-level functions the package exports, as in 1.4.0's `agent-loop.ts`.

use crate::prelude::*;
use js_sys::{Function, Promise};
use wasm_bindgen::prelude::*;

use crate::agent_loop::{self, tools, EventStreamHandle, Sink};
use crate::js::call::optional_fn;
use crate::js::glue;
use crate::js::spawn::{promise, spawn};
use crate::js::view;

/// `agentLoop` (with `prompts`) and `agentLoopContinue` (without): the run's
/// event stream, returned at once; the stream ends with the new messages or,
/// when the run fails, with the failure events an `Agent` would emit.
#[inline(never)]
fn stream_run(
    prompts: Option<JsValue>,
    context: JsValue,
    config: JsValue,
    signal: JsValue,
    stream_fn: JsValue,
) -> Result<JsValue, JsValue> {
    if prompts.is_none() {
        agent_loop::check_continue(&context)?;
    }
    let stream = glue::agent_event_stream();
    let sink = Sink::Stream(stream.clone());
    let run = agent_loop::run_agent_loop(
        prompts,
        context,
        config.clone(),
        sink,
        signal.clone(),
        stream_fn,
        Default::default(),
    );
    let s = stream.clone();
    spawn(Box::pin(async move {
        match run.await {
            Ok(messages) => s.unchecked_ref::<EventStreamHandle>().end(&messages),
            Err(error) => {
                agent_loop::fail_stream(&s, &config, &error, agent_loop::is_aborted(&signal))
            }
        }
    }));
    Ok(stream)
}

/// Starts a run with `prompts` and returns its event stream at once. Iterate it
/// for `AgentEvent`s; `result()` resolves with the run's new messages.
#[wasm_bindgen(js_name = agentLoop, unchecked_return_type = "EventStream<AgentEvent, AgentMessage[]>")]
pub fn agent_loop(
    #[wasm_bindgen(unchecked_param_type = "AgentMessage[]")] prompts: JsValue,
    #[wasm_bindgen(unchecked_param_type = "AgentContext")] context: JsValue,
    #[wasm_bindgen(unchecked_param_type = "AgentLoopConfig")] config: JsValue,
    #[wasm_bindgen(unchecked_param_type = "AbortSignal | undefined")] signal: JsValue,
    #[wasm_bindgen(js_name = streamFn, unchecked_param_type = "StreamFn | undefined")]
    stream_fn: JsValue,
) -> JsValue {
    // Only a continuation can fail before the run starts.
    stream_run(Some(prompts), context, config, signal, stream_fn).unwrap_or_else(|e| e)
}

/// Continues `context` (which must not end with an assistant message) and
/// returns the event stream at once. Throws when there is nothing to continue.
#[wasm_bindgen(js_name = agentLoopContinue, unchecked_return_type = "EventStream<AgentEvent, AgentMessage[]>")]
pub fn agent_loop_continue(
    #[wasm_bindgen(unchecked_param_type = "AgentContext")] context: JsValue,
    #[wasm_bindgen(unchecked_param_type = "AgentLoopConfig")] config: JsValue,
    #[wasm_bindgen(unchecked_param_type = "AbortSignal | undefined")] signal: JsValue,
    #[wasm_bindgen(js_name = streamFn, unchecked_param_type = "StreamFn | undefined")]
    stream_fn: JsValue,
) -> Result<JsValue, JsValue> {
    stream_run(None, context, config, signal, stream_fn)
}

fn emit_sink(emit: JsValue) -> Result<Sink, JsValue> {
    match optional_fn(emit, "emit")? {
        Some(f) => Ok(Sink::Callback(f)),
        None => Err(crate::js::errors::type_error("emit must be a function")),
    }
}

/// `runAgentLoop` (with `prompts`) and `runAgentLoopContinue` (without).
#[inline(never)]
fn run_promise(
    prompts: Option<JsValue>,
    context: JsValue,
    config: JsValue,
    emit: JsValue,
    signal: JsValue,
    stream_fn: JsValue,
) -> Promise {
    promise(Box::pin(async move {
        let sink = emit_sink(emit)?;
        agent_loop::run_agent_loop(
            prompts,
            context,
            config,
            sink,
            signal,
            stream_fn,
            Default::default(),
        )
        .await
        .map(JsValue::from)
    }))
}

/// Runs the loop with `prompts`, awaiting `emit` for every event; resolves with
/// the run's new messages.
#[wasm_bindgen(js_name = runAgentLoop, unchecked_return_type = "Promise<AgentMessage[]>")]
pub fn run_agent_loop(
    #[wasm_bindgen(unchecked_param_type = "AgentMessage[]")] prompts: JsValue,
    #[wasm_bindgen(unchecked_param_type = "AgentContext")] context: JsValue,
    #[wasm_bindgen(unchecked_param_type = "AgentLoopConfig")] config: JsValue,
    #[wasm_bindgen(unchecked_param_type = "AgentEventSink")] emit: JsValue,
    #[wasm_bindgen(unchecked_param_type = "AbortSignal | undefined")] signal: JsValue,
    #[wasm_bindgen(js_name = streamFn, unchecked_param_type = "StreamFn | undefined")]
    stream_fn: JsValue,
) -> Promise {
    run_promise(Some(prompts), context, config, emit, signal, stream_fn)
}

/// Continues `context` in place (new messages are appended to
/// `context.messages`), awaiting `emit` for every event.
#[wasm_bindgen(js_name = runAgentLoopContinue, unchecked_return_type = "Promise<AgentMessage[]>")]
pub fn run_agent_loop_continue(
    #[wasm_bindgen(unchecked_param_type = "AgentContext")] context: JsValue,
    #[wasm_bindgen(unchecked_param_type = "AgentLoopConfig")] config: JsValue,
    #[wasm_bindgen(unchecked_param_type = "AgentEventSink")] emit: JsValue,
    #[wasm_bindgen(unchecked_param_type = "AbortSignal | undefined")] signal: JsValue,
    #[wasm_bindgen(js_name = streamFn, unchecked_param_type = "StreamFn | undefined")]
    stream_fn: JsValue,
) -> Promise {
    run_promise(None, context, config, emit, signal, stream_fn)
}

/// Sets (or, with `undefined`, clears) the stream function used when none is given.
#[wasm_bindgen(js_name = setDefaultStreamFn)]
pub fn set_default_stream_fn(
    #[wasm_bindgen(js_name = streamFn, unchecked_param_type = "StreamFn | undefined")]
    stream_fn: JsValue,
) -> Result<(), JsValue> {
    let f = optional_fn(stream_fn, "streamFn")?;
    agent_loop::set_default_stream_fn(f);
    Ok(())
}

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_name = Object)]
    type RunToolCallOptions;
    #[wasm_bindgen(method, getter, structural)]
    fn tools(this: &RunToolCallOptions) -> JsValue;
    #[wasm_bindgen(method, getter, structural, js_name = assistantMessage)]
    fn assistant_message(this: &RunToolCallOptions) -> JsValue;
    #[wasm_bindgen(method, getter, structural)]
    fn context(this: &RunToolCallOptions) -> JsValue;
    #[wasm_bindgen(method, getter, structural)]
    fn signal(this: &RunToolCallOptions) -> JsValue;
    #[wasm_bindgen(method, getter, structural, js_name = onUpdate)]
    fn on_update(this: &RunToolCallOptions) -> JsValue;
    #[wasm_bindgen(method, getter, structural, js_name = beforeToolCall)]
    fn before_tool_call(this: &RunToolCallOptions) -> JsValue;
    #[wasm_bindgen(method, getter, structural, js_name = afterToolCall)]
    fn after_tool_call(this: &RunToolCallOptions) -> JsValue;
}

/// Runs one tool call through the whole pipeline (look-up, validation, hooks,
/// `execute`) without events or messages, as a tool that calls another tool
/// would. Never rejects for a tool failure: those become `isError` outcomes.
#[wasm_bindgen(js_name = runToolCall, unchecked_return_type = "Promise<AgentToolCallOutcome>")]
pub fn run_tool_call(
    #[wasm_bindgen(js_name = toolCall, unchecked_param_type = "AgentToolCall")] tool_call: JsValue,
    #[wasm_bindgen(unchecked_param_type = "RunToolCallOptions")] options: JsValue,
) -> Promise {
    promise(Box::pin(async move {
        if !view::is_object(&options) {
            return Err(crate::js::errors::type_error(
                "runToolCall(toolCall, options): options must be an object",
            ));
        }
        let o: &RunToolCallOptions = options.unchecked_ref();
        let before: Option<Function> = optional_fn(o.before_tool_call(), "options.beforeToolCall")?;
        let after: Option<Function> = optional_fn(o.after_tool_call(), "options.afterToolCall")?;
        let on_update = optional_fn(o.on_update(), "options.onUpdate")?;
        let hooks = tools::ToolHooks {
            this: &options,
            before: before.as_ref(),
            after: after.as_ref(),
        };
        // The outcome object is the pipeline's own, which nothing edits once it is made.
        let f = tools::run_tool_call(
            &tool_call,
            &o.tools(),
            &o.assistant_message(),
            &o.context(),
            &o.signal(),
            on_update,
            &hooks,
        )
        .await?;
        Ok(f.0)
    }))
}
