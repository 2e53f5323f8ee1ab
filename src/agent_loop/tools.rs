//! The tool pipeline: look-up, `prepareArguments`, validation,
//! `beforeToolCall`, `execute` with progress updates, `afterToolCall`, and the
//! sequential, parallel and truncated batches that turn calls into results.
//!
//! Deviations from 1.4.0 (see docs/deviations.md), all so that no tool call is left
//! without a result: as in 1.6.0, an aborted signal is checked before anything
//! else and an abort no longer stops a batch half-way; a tool (or tool hook)
//! that ignores the abort is abandoned with an `Operation aborted` result
//! instead of being waited for (see glue.js `watchSettleUntilAbort`); and when
//! delivering an event fails (a listener threw), the batch still finishes every
//! call and emits every result message before the run fails.
//!
//! Errors follow the reference's `try` blocks: a failure inside preparation,
//! `execute` or `afterToolCall` becomes an error result; reading the call itself
//! (its `name`, `id`) or turning an error into text failing ends the run.

use crate::prelude::*;
use js_sys::{Array, Function};
use wasm_bindgen::prelude::*;

use super::join::join_all;
use super::{is_aborted, Run};
use crate::js::call;
use crate::js::errors::{self, msg};
use crate::js::events;
use crate::js::settle::{settle_from, Done};
use crate::js::validate;
use crate::js::values::js_string;
use crate::js::view::{self, view};

/// The tool-result messages of one batch and whether they end the inner loop.
pub struct Batch {
    pub messages: Array,
    pub terminate: bool,
}

/// A call's outcome, `runToolCall`'s outcome object (tools.js `toolCallOutcome`):
/// its tool call, result object, error flag (whatever value `afterToolCall` gave,
/// as in the reference) and `durationMs` when it ran. Built and read in JS: the
/// hooks, the events and the result message take it whole.
pub struct Finalized(pub JsValue);

enum Preparation {
    Immediate(JsValue),
    Prepared {
        tool_call: JsValue,
        tool: JsValue,
        args: JsValue,
    },
}

/// The hooks a tool call uses and the object they are called on.
pub struct ToolHooks<'a> {
    pub this: &'a JsValue,
    pub before: Option<&'a Function>,
    pub after: Option<&'a Function>,
}

#[wasm_bindgen(module = "/src/agent_loop/tools.js")]
extern "C" {
    /// The tool a call names (its `name` read once), if any.
    #[wasm_bindgen(js_name = toolFor, catch)]
    fn tool_for(tools: &JsValue, tool_call: &JsValue) -> Result<Option<JsValue>, JsValue>;
    /// `prepareArguments`, then `validateToolArguments` (see tools.js).
    #[wasm_bindgen(js_name = checkedArguments, catch)]
    fn checked_arguments_js(
        tool: &JsValue,
        tool_call: &JsValue,
        compile: &Function,
    ) -> Result<JsValue, JsValue>;
    /// A call's tool-result message, also appended to `messages`.
    #[wasm_bindgen(js_name = resultMessageInto, catch)]
    fn result_message_into(outcome: &JsValue, messages: &Array) -> Result<JsValue, JsValue>;
    /// Calls `beforeToolCall` and settles `slot` with the call's immediate
    /// result, else `undefined` (see tools.js).
    #[wasm_bindgen(js_name = callBeforeToolCall, catch)]
    #[allow(clippy::too_many_arguments)]
    fn call_before_tool_call(
        hook: &Function,
        config: &JsValue,
        assistant: &JsValue,
        tool_call: &JsValue,
        args: &JsValue,
        context: &JsValue,
        signal: &JsValue,
        slot: u32,
    ) -> Result<(), JsValue>;
    /// Calls `afterToolCall` on an outcome and settles `slot` with the final one.
    #[wasm_bindgen(js_name = callAfterToolCall, catch)]
    #[allow(clippy::too_many_arguments)]
    fn call_after_tool_call(
        hook: &Function,
        config: &JsValue,
        assistant: &JsValue,
        outcome: &JsValue,
        args: &JsValue,
        context: &JsValue,
        signal: &JsValue,
        slot: u32,
    ) -> Result<(), JsValue>;
    /// Calls the tool's `execute` and settles `slot` with its timed outcome;
    /// returns its `onUpdate` gate.
    #[wasm_bindgen(js_name = callExecute, catch)]
    #[allow(clippy::too_many_arguments)]
    fn call_execute(
        tool: &JsValue,
        tool_call: &JsValue,
        args: &JsValue,
        signal: &JsValue,
        deliver: &JsValue,
        event_call: &JsValue,
        slot: u32,
    ) -> Result<JsValue, JsValue>;
    /// What a closed gate's update deliveries left to await, if anything.
    #[wasm_bindgen(js_name = pendingUpdates)]
    fn pending_updates(gate: &JsValue) -> Option<Array>;
    #[wasm_bindgen(js_name = terminates, catch)]
    fn result_terminates(outcome: &JsValue) -> Result<bool, JsValue>;
    /// Whether any called tool declares `executionMode: "sequential"`.
    #[wasm_bindgen(js_name = anySequential, catch)]
    fn any_sequential(tools: &JsValue, tool_calls: &JsValue) -> Result<bool, JsValue>;
    #[wasm_bindgen(js_name = toolCallsOf, catch)]
    fn tool_calls_js(message: &JsValue) -> Result<Array, JsValue>;
    #[wasm_bindgen(js_name = toolCallOutcome)]
    fn tool_call_outcome(
        tool_call: &JsValue,
        result: &JsValue,
        is_error: &JsValue,
        duration_ms: Option<f64>,
    ) -> JsValue;
}

/// `message.content.filter(c => c.type === "toolCall")`, failing where the
/// reference's `filter` fails (content that is missing or not an array).
pub fn tool_calls_of(message: &JsValue) -> Result<Array, JsValue> {
    tool_calls_js(message)
}

fn error_result(text: &str) -> JsValue {
    events::error_tool_result(&JsValue::from_str(text))
}

/// An error result whose text is the reference's errText of `error`.
fn error_result_of(error: &JsValue) -> Result<JsValue, JsValue> {
    Ok(events::error_tool_result(&errors::err_text(error)?))
}

async fn prepare_tool_call(
    context: &JsValue,
    assistant: &JsValue,
    tool_call: &JsValue,
    hooks: &ToolHooks<'_>,
    signal: &JsValue,
    tools: &JsValue,
) -> Result<Preparation, JsValue> {
    if is_aborted(signal) {
        return Ok(Preparation::Immediate(error_result(msg::OPERATION_ABORTED)));
    }
    let Some(tool) = tool_for(tools, tool_call)? else {
        // The name is read again, as the reference's message reads it.
        let name = view::field(tool_call, |c| c.name())?;
        let mut text = String::from("Tool ");
        text.push_str(&js_string(&name)?);
        text.push_str(" not found");
        return Ok(Preparation::Immediate(error_result(&text)));
    };
    let args = match checked_arguments(tool_call, &tool) {
        Ok(args) => args,
        Err(error) => return Ok(Preparation::Immediate(error_result_of(&error)?)),
    };
    if let Some(before) = hooks.before {
        // Once the run is aborted the call ends with `Operation aborted` whatever
        // the hook returns, so a hook that ignores the abort is not waited for.
        let immediate = settle_from(|slot| {
            call_before_tool_call(
                before, hooks.this, assistant, tool_call, &args, context, signal, slot,
            )
            .map(|()| true)
        })
        .await?;
        if !immediate.is_undefined() {
            return Ok(Preparation::Immediate(immediate));
        }
    }
    Ok(Preparation::Prepared {
        tool_call: tool_call.clone(),
        tool,
        args,
    })
}

/// `prepareArguments`, then validation: the arguments `execute` gets (one call).
fn checked_arguments(tool_call: &JsValue, tool: &JsValue) -> Result<JsValue, JsValue> {
    checked_arguments_js(tool, tool_call, &validate::compiler())
}

/// What `execute` produced, before `afterToolCall`.
struct Executed {
    outcome: JsValue,
    /// The first failure of an update's sink (a listener that threw). The call
    /// still gets its result; the batch reports this error once every call has one.
    update_error: Option<JsValue>,
}

/// Where `onUpdate` partial results go.
pub enum UpdateSink {
    /// The loop: each update becomes a `tool_execution_update` event, given to
    /// this delivery function (the run sink's, made once per batch).
    Run(JsValue),
    /// `runToolCall`'s `onUpdate` option, or nothing.
    Callback(Option<Function>),
}

async fn execute_prepared(
    tool_call: &JsValue,
    tool: &JsValue,
    args: &JsValue,
    signal: &JsValue,
    updates: UpdateSink,
) -> Result<Executed, JsValue> {
    // Each accepted update is delivered at once (its event emitted synchronously,
    // as in the reference) and what is left of it is awaited after `execute`
    // settles. The gate lives in JS: no Rust closure per call. A tool that
    // ignores the abort is abandoned: its late result is dropped, its late
    // updates too (the gate is closed when the call settles).
    let (deliver, event_call) = match updates {
        UpdateSink::Run(deliver) => (deliver, tool_call.clone()),
        UpdateSink::Callback(f) => (
            f.as_ref().map(JsValue::from).unwrap_or(JsValue::UNDEFINED),
            JsValue::UNDEFINED,
        ),
    };
    let mut gate = None;
    let settled = settle_from(|slot| {
        gate = Some(call_execute(
            tool,
            tool_call,
            args,
            signal,
            &deliver,
            &event_call,
            slot,
        )?);
        Ok(true)
    })
    .await;
    let mut update_error = None;
    if let Some(pending) = gate.as_ref().and_then(pending_updates) {
        for w in pending.iter() {
            if let Err(e) = call::settle(w).await {
                update_error.get_or_insert(e);
            }
        }
    }
    Ok(Executed {
        outcome: settled?,
        update_error,
    })
}

async fn finalize(
    context: &JsValue,
    assistant: &JsValue,
    args: &JsValue,
    executed: Executed,
    hooks: &ToolHooks<'_>,
    signal: &JsValue,
) -> Result<(Finalized, Option<JsValue>), JsValue> {
    let mut outcome = executed.outcome;
    if let Some(after) = hooks.after {
        outcome = settle_from(|slot| {
            call_after_tool_call(
                after, hooks.this, assistant, &outcome, args, context, signal, slot,
            )
            .map(|()| true)
        })
        .await?;
    }
    Ok((Finalized(outcome), executed.update_error))
}

fn emit_end(run: &Run, f: &Finalized) -> Done {
    match events::ev_tool_end_of(&f.0) {
        Ok(event) => run.emit(event),
        Err(e) => Done::failed(e),
    }
}

fn emit_start(run: &Run, tool_call: &JsValue) -> Done {
    match events::ev_tool_start_of(tool_call) {
        Ok(event) => run.emit(event),
        Err(e) => Done::failed(e),
    }
}

/// Emits every call's tool-result message, in order. A message whose delivery
/// fails still reaches the transcript (an `Agent` reduces before it calls
/// listeners); the first failure is returned after all of them.
async fn emit_result_messages(run: &Run, all: &[Finalized]) -> (Array, Option<JsValue>) {
    let messages = Array::new();
    let mut first_error = None;
    for f in all {
        let message = match result_message_into(&f.0, &messages) {
            Ok(m) => m,
            Err(e) => {
                first_error.get_or_insert(e);
                continue;
            }
        };
        if let Err(e) = run.emit(events::ev_message_start(&message)).await {
            first_error.get_or_insert(e);
        }
        if let Err(e) = run.emit(events::ev_message_end(&message)).await {
            first_error.get_or_insert(e);
        }
    }
    (messages, first_error)
}

fn immediate(tool_call: &JsValue, result: JsValue) -> Finalized {
    Finalized(tool_call_outcome(tool_call, &result, &JsValue::TRUE, None))
}

fn terminates(all: &[Finalized]) -> Result<bool, JsValue> {
    if all.is_empty() {
        return Ok(false);
    }
    for f in all {
        if !result_terminates(&f.0)? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// After a `length` stop every tool call fails, unrun: its arguments may be truncated.
fn truncated_result(tool_call: &JsValue) -> Result<JsValue, JsValue> {
    let mut text = String::from("Tool call \"");
    text.push_str(&js_string(&view(tool_call).name()?)?);
    text.push_str("\" was not executed: the response hit the output token limit, so its arguments may be truncated. Re-issue the tool call with complete arguments.");
    Ok(error_result(&text))
}

fn is_sequential(run: &Run, tools: &JsValue, tool_calls: &Array) -> Result<bool, JsValue> {
    Ok(run.hooks.sequential || any_sequential(tools, tool_calls)?)
}

/// What the calls of a batch share.
struct Calls<'a> {
    run: &'a Run,
    context: &'a JsValue,
    tools: &'a JsValue,
    assistant: &'a JsValue,
    hooks: &'a ToolHooks<'a>,
    /// Every call fails unrun, one call at a time (nothing about the
    /// tools is read); the model is asked again.
    truncated: bool,
}

/// The tool calls of an assistant message, to their result messages.
pub async fn execute_tool_calls(
    run: &Run,
    assistant: &JsValue,
    tool_calls: &Array,
    truncated: bool,
) -> Result<Batch, JsValue> {
    let (context, tools) = if truncated {
        (JsValue::UNDEFINED, JsValue::UNDEFINED)
    } else {
        let context = run.context();
        let tools = view::field(&context, |c| c.tools())?;
        (context, tools)
    };
    let config = run.config();
    let hooks = ToolHooks {
        this: &config,
        before: run.hooks.before_tool_call.as_ref(),
        after: run.hooks.after_tool_call.as_ref(),
    };
    let calls = Calls {
        run,
        context: &context,
        tools: &tools,
        assistant,
        hooks: &hooks,
        truncated,
    };
    let mut all = Vec::new();
    let messages = if truncated || is_sequential(run, &tools, tool_calls)? {
        // Each call is a batch of its own: it runs to its result message
        // before the next starts, and the first failure ends the run.
        let mut messages = Array::new();
        for tool_call in tool_calls.iter() {
            let emitted = batch(&calls, &Array::of1(&tool_call), truncated, &mut all).await?;
            messages = messages.concat(&emitted);
        }
        messages
    } else {
        batch(&calls, tool_calls, true, &mut all).await?
    };
    Ok(Batch {
        messages,
        terminate: terminates(&all)?,
    })
}

/// Runs one prepared call to its finalized outcome and first delivery error.
#[allow(clippy::too_many_arguments)]
async fn run_prepared(
    context: &JsValue,
    assistant: &JsValue,
    tool_call: &JsValue,
    tool: &JsValue,
    args: &JsValue,
    hooks: &ToolHooks<'_>,
    signal: &JsValue,
    updates: UpdateSink,
) -> Result<(Finalized, Option<JsValue>), JsValue> {
    let executed = execute_prepared(tool_call, tool, args, signal, updates).await?;
    finalize(context, assistant, args, executed, hooks, signal).await
}

enum Recorded {
    /// Known at preparation, `tool_execution_end` delivered.
    Ended(Finalized),
    /// Known at preparation, `tool_execution_end` still to deliver.
    Immediate(Finalized),
    Ready {
        tool_call: JsValue,
        tool: JsValue,
        args: JsValue,
    },
}

/// Prepares every call in order, runs the prepared ones concurrently, then
/// emits every result message; adds the outcomes to `all` and returns the
/// messages. In parallel mode a result known at preparation is announced at
/// once, and a call is not started once the run is aborted.
async fn batch(
    calls: &Calls<'_>,
    tool_calls: &Array,
    parallel: bool,
    all: &mut Vec<Finalized>,
) -> Result<Array, JsValue> {
    let Calls {
        run,
        context,
        tools,
        assistant,
        hooks,
        truncated,
    } = *calls;
    let mut recorded = Vec::new();
    for tool_call in tool_calls.iter() {
        emit_start(run, &tool_call).await?;
        let preparation = if truncated {
            Preparation::Immediate(truncated_result(&tool_call)?)
        } else {
            prepare_tool_call(context, assistant, &tool_call, hooks, &run.signal, tools).await?
        };
        match preparation {
            Preparation::Immediate(result) => {
                let f = immediate(&tool_call, result);
                if parallel {
                    emit_end(run, &f).await?;
                    recorded.push(Recorded::Ended(f));
                } else {
                    recorded.push(Recorded::Immediate(f));
                }
            }
            Preparation::Prepared {
                tool_call,
                tool,
                args,
            } => {
                recorded.push(Recorded::Ready {
                    tool_call,
                    tool,
                    args,
                });
            }
        }
    }
    // One delivery function for the updates of every call that runs.
    let deliver = &if recorded.iter().any(|r| matches!(r, Recorded::Ready { .. })) {
        JsValue::from(run.sink.deliver_fn())
    } else {
        JsValue::UNDEFINED
    };
    let outcomes = join_all(recorded.into_iter().map(|entry| async move {
        let (f, update_error) = match entry {
            Recorded::Ended(f) => return Ok((f, None)),
            Recorded::Immediate(f) => (f, None),
            Recorded::Ready {
                tool_call,
                tool,
                args,
            } => {
                if parallel && run.aborted() {
                    (
                        immediate(&tool_call, error_result(msg::OPERATION_ABORTED)),
                        None,
                    )
                } else {
                    run_prepared(
                        context,
                        assistant,
                        &tool_call,
                        &tool,
                        &args,
                        hooks,
                        &run.signal,
                        UpdateSink::Run(deliver.clone()),
                    )
                    .await?
                }
            }
        };
        let end_error = emit_end(run, &f).await.err();
        Ok::<_, JsValue>((f, update_error.or(end_error)))
    }))
    .await;
    // Every tool has settled here, and each call gets its result message before
    // a failed delivery (a listener that threw) fails the run.
    let mut first_error = None;
    let start = all.len();
    for outcome in outcomes {
        match outcome {
            Ok((f, error)) => {
                if first_error.is_none() {
                    first_error = error;
                }
                all.push(f);
            }
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    let (messages, error) = emit_result_messages(run, all.get(start..).unwrap_or_default()).await;
    match first_error.or(error) {
        Some(e) => Err(e),
        None => Ok(messages),
    }
}

/// `runToolCall`: the pipeline for one call, without events or messages.
pub async fn run_tool_call(
    tool_call: &JsValue,
    tools: &JsValue,
    assistant: &JsValue,
    context: &JsValue,
    signal: &JsValue,
    on_update: Option<Function>,
    hooks: &ToolHooks<'_>,
) -> Result<Finalized, JsValue> {
    match prepare_tool_call(context, assistant, tool_call, hooks, signal, tools).await? {
        Preparation::Immediate(result) => Ok(immediate(tool_call, result)),
        Preparation::Prepared {
            tool_call,
            tool,
            args,
        } => {
            match run_prepared(
                context,
                assistant,
                &tool_call,
                &tool,
                &args,
                hooks,
                signal,
                UpdateSink::Callback(on_update),
            )
            .await?
            {
                (_, Some(e)) => Err(e),
                (f, None) => Ok(f),
            }
        }
    }
}
