//! The tool pipeline (R39–R66): look-up, `prepareArguments`, validation,
//! `beforeToolCall`, `execute` with progress updates, `afterToolCall`, and the
//! sequential, parallel and truncated batches that turn calls into results.
//!
//! Deviation from 1.4.0, as in 1.6.0: an aborted signal is checked before
//! anything else, and an abort no longer stops a batch half-way, so every tool
//! call of an assistant message gets exactly one result.

use js_sys::{Array, Function};
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::prelude::*;

use super::join::join_all;
use super::{is_aborted, Run};
use crate::js::call;
use crate::js::errors::{self, msg};
use crate::js::glue;
use crate::js::validate;
use crate::js::view::{self, view};

/// The tool-result messages of one batch and whether they end the inner loop.
pub struct Batch {
    pub messages: Array,
    pub terminate: bool,
}

/// A call's outcome: the result object, its error flag, and `durationMs` when it ran.
pub struct Finalized {
    pub tool_call: JsValue,
    pub result: JsValue,
    pub is_error: bool,
    pub duration_ms: Option<f64>,
}

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

/// `message.content.filter(c => c.type === "toolCall")`.
pub fn tool_calls_of(message: &JsValue) -> Array {
    let out = Array::new();
    let content = view::get(message, |m| m.content());
    if Array::is_array(&content) {
        for block in content.unchecked_into::<Array>().iter() {
            if view::is_str(&view::get(&block, |b| b.kind()), "toolCall") {
                out.push(&block);
            }
        }
    }
    out
}

fn error_result(text: &str) -> JsValue {
    glue::error_tool_result(&JsValue::from_str(text))
}

fn find_tool(tools: &JsValue, name: &JsValue) -> Option<JsValue> {
    if !Array::is_array(tools) {
        return None;
    }
    let name = name.as_string();
    tools
        .unchecked_ref::<Array>()
        .iter()
        .find(|t| view::get(t, |t| t.name()).as_string() == name)
}

async fn prepare_tool_call(
    context: &JsValue,
    assistant: &JsValue,
    tool_call: &JsValue,
    hooks: &ToolHooks<'_>,
    signal: &JsValue,
    tools: &JsValue,
) -> Preparation {
    if is_aborted(signal) {
        return Preparation::Immediate(error_result(msg::OPERATION_ABORTED));
    }
    let name = view::get(tool_call, |c| c.name());
    let Some(tool) = find_tool(tools, &name) else {
        let mut text = String::from("Tool ");
        text.push_str(&name.as_string().unwrap_or_else(|| js_string(&name)));
        text.push_str(" not found");
        return Preparation::Immediate(error_result(&text));
    };
    match prepare_checked(context, assistant, tool_call, &tool, hooks, signal).await {
        Ok(p) => p,
        Err(error) => Preparation::Immediate(glue::error_tool_result(&errors::err_text(&error))),
    }
}

fn js_string(value: &JsValue) -> String {
    js_sys::JsString::from(value.clone())
        .as_string()
        .unwrap_or_default()
}

async fn prepare_checked(
    context: &JsValue,
    assistant: &JsValue,
    tool_call: &JsValue,
    tool: &JsValue,
    hooks: &ToolHooks<'_>,
    signal: &JsValue,
) -> Result<Preparation, JsValue> {
    let prepared_call =
        match call::optional_fn(view(tool).prepare_arguments(), "tool.prepareArguments")? {
            None => tool_call.clone(),
            Some(f) => {
                let original = view(tool_call).arguments();
                let p = f.call1(tool, &original)?;
                if p == original {
                    tool_call.clone()
                } else {
                    glue::with_arguments(tool_call, &p)
                }
            }
        };
    let args = validate::validate_tool_arguments(tool, &prepared_call)?;
    if let Some(before) = hooks.before {
        let ctx = glue::before_context(assistant, tool_call, &args, context);
        let r = call::call(before, hooks.this, &[&ctx, signal]).await?;
        if is_aborted(signal) {
            return Ok(Preparation::Immediate(error_result(msg::OPERATION_ABORTED)));
        }
        if view::is_object(&r) && view(&r).block().is_truthy() {
            let reason = view(&r).reason();
            let text = if reason.is_truthy() {
                reason
            } else {
                JsValue::from_str(msg::TOOL_BLOCKED)
            };
            let result = glue::error_tool_result(&text);
            if view(&r).terminate() == JsValue::TRUE {
                js_sys::Reflect::set(&result, &JsValue::from_str("terminate"), &JsValue::TRUE)?;
            }
            return Ok(Preparation::Immediate(result));
        }
    }
    Ok(Preparation::Prepared {
        tool_call: tool_call.clone(),
        tool: tool.clone(),
        args,
    })
}

/// What `execute` produced, before `afterToolCall`.
struct Executed {
    result: JsValue,
    is_error: bool,
    duration_ms: f64,
    /// The first failure of an update's sink (a listener that threw). The call
    /// still gets its result; the batch reports this error once every call has one.
    update_error: Option<JsValue>,
}

/// Where `onUpdate` partial results go.
pub enum UpdateSink {
    /// The loop: each update becomes a `tool_execution_update` event.
    Run(super::Sink),
    /// `runToolCall`'s `onUpdate` option, or nothing.
    Callback(Option<Function>),
}

#[wasm_bindgen(module = "/src/js/glue.js")]
extern "C" {
    /// `[onUpdate, close]`: a function safe to call at any time that forwards to
    /// `forward` only until `close()` (late calls are ignored, as in the reference).
    #[wasm_bindgen(js_name = updateGate)]
    fn update_gate(forward: &JsValue) -> Array;
}

async fn execute_prepared(
    tool_call: &JsValue,
    tool: &JsValue,
    args: &JsValue,
    signal: &JsValue,
    updates: UpdateSink,
) -> Executed {
    // Each accepted update is started at once (its event emitted synchronously, as
    // in the reference) and its promise awaited after `execute` settles.
    let pending: Rc<RefCell<Vec<JsValue>>> = Rc::new(RefCell::new(Vec::new()));
    let forward = {
        let pending = pending.clone();
        let tool_call = tool_call.clone();
        Closure::<dyn FnMut(JsValue)>::new(move |partial: JsValue| {
            let promise: JsValue = match &updates {
                UpdateSink::Run(sink) => {
                    let c = view(&tool_call);
                    let event = glue::ev_tool_update(&c.id(), &c.name(), &c.arguments(), &partial);
                    // Delivered synchronously, as the reference does; the rest is awaited later.
                    sink.start(&event)
                        .unwrap_or_else(|e| js_sys::Promise::reject(&e).into())
                }
                UpdateSink::Callback(Some(f)) => f
                    .call1(&JsValue::UNDEFINED, &partial)
                    .unwrap_or_else(|e| js_sys::Promise::reject(&e).into()),
                UpdateSink::Callback(None) => return,
            };
            pending.borrow_mut().push(promise);
        })
    };
    let gate = update_gate(forward.as_ref());
    let on_update = gate.get(0);
    let start = glue::mono();
    let outcome = match call::optional_fn(view(tool).execute(), "tool.execute") {
        Ok(Some(execute)) => {
            let id = view(tool_call).id();
            call::call(&execute, tool, &[&id, args, signal, &on_update]).await
        }
        Ok(None) => Err(errors::type_error("tool.execute is not a function")),
        Err(e) => Err(e),
    };
    let duration_ms = (glue::mono() - start).round();
    if let Some(close) = gate.get(1).dyn_ref::<Function>() {
        let _ = close.call0(&JsValue::UNDEFINED);
    }
    let waits: Vec<JsValue> = pending.borrow_mut().drain(..).collect();
    let mut update_error = None;
    for w in waits {
        if let Err(e) = call::settle(w).await {
            update_error.get_or_insert(e);
        }
    }
    drop(forward);
    let (result, is_error) = match outcome {
        Ok(result) if result.is_undefined() || result.is_null() => {
            let text = if result.is_null() {
                "Cannot read properties of null (reading 'isError')"
            } else {
                "Cannot read properties of undefined (reading 'isError')"
            };
            (error_result(text), true)
        }
        Ok(result) => {
            let is_error = view(&result).is_error() == JsValue::TRUE;
            (result, is_error)
        }
        Err(error) => (glue::error_tool_result(&errors::err_text(&error)), true),
    };
    Executed {
        result,
        is_error,
        duration_ms,
        update_error,
    }
}

async fn finalize(
    context: &JsValue,
    assistant: &JsValue,
    tool_call: &JsValue,
    args: &JsValue,
    executed: Executed,
    hooks: &ToolHooks<'_>,
    signal: &JsValue,
) -> (Finalized, Option<JsValue>) {
    let mut result = executed.result;
    let mut is_error = executed.is_error;
    if let Some(after) = hooks.after {
        let ctx = glue::after_context(assistant, tool_call, args, &result, is_error, context);
        match call::call(after, hooks.this, &[&ctx, signal]).await {
            Ok(r) if r.is_truthy() => {
                let merged = glue::apply_after_tool_call(&result, is_error, &r);
                result = merged.get(0);
                is_error = merged.get(1).is_truthy();
            }
            Ok(_) => {}
            Err(error) => {
                result = glue::error_tool_result(&errors::err_text(&error));
                is_error = true;
            }
        }
    }
    let finalized = Finalized {
        tool_call: tool_call.clone(),
        result,
        is_error,
        duration_ms: Some(executed.duration_ms),
    };
    (finalized, executed.update_error)
}

async fn emit_end(run: &Run, f: &Finalized) -> Result<(), JsValue> {
    let c = view(&f.tool_call);
    run.emit(glue::ev_tool_end(
        &c.id(),
        &c.name(),
        &f.result,
        f.is_error,
        f.duration_ms,
    ))
    .await
}

async fn emit_start(run: &Run, tool_call: &JsValue) -> Result<(), JsValue> {
    let c = view(tool_call);
    run.emit(glue::ev_tool_start(&c.id(), &c.name(), &c.arguments()))
        .await
}

async fn emit_result_message(run: &Run, f: &Finalized) -> Result<JsValue, JsValue> {
    let message = glue::tool_result_message(&f.tool_call, &f.result, f.is_error, f.duration_ms);
    run.emit(glue::ev_message_start(&message)).await?;
    run.emit(glue::ev_message_end(&message)).await?;
    Ok(message)
}

fn immediate(tool_call: &JsValue, result: JsValue) -> Finalized {
    Finalized {
        tool_call: tool_call.clone(),
        result,
        is_error: true,
        duration_ms: None,
    }
}

fn terminates(all: &[Finalized]) -> bool {
    !all.is_empty()
        && all
            .iter()
            .all(|f| view::get(&f.result, |r| r.terminate()) == JsValue::TRUE)
}

/// R63: a `length` stop fails every tool call; the model is asked again.
pub async fn fail_truncated(run: &Run, tool_calls: &Array) -> Result<Batch, JsValue> {
    let messages = Array::new();
    for tool_call in tool_calls.iter() {
        emit_start(run, &tool_call).await?;
        let mut text = String::from("Tool call \"");
        text.push_str(&view(&tool_call).name().as_string().unwrap_or_default());
        text.push_str("\" was not executed: the response hit the output token limit, so its arguments may be truncated. Re-issue the tool call with complete arguments.");
        let f = immediate(&tool_call, error_result(&text));
        emit_end(run, &f).await?;
        messages.push(&emit_result_message(run, &f).await?);
    }
    Ok(Batch {
        messages,
        terminate: false,
    })
}

fn is_sequential(run: &Run, tools: &JsValue, tool_calls: &Array) -> bool {
    run.hooks.sequential
        || tool_calls.iter().any(|c| {
            find_tool(tools, &view(&c).name())
                .is_some_and(|t| view::is_str(&view(&t).execution_mode(), "sequential"))
        })
}

pub async fn execute_tool_calls(
    run: &Run,
    assistant: &JsValue,
    tool_calls: &Array,
) -> Result<Batch, JsValue> {
    let context = run.context();
    let tools = view::get(&context, |c| c.tools());
    let config = run.config();
    let hooks = ToolHooks {
        this: &config,
        before: run.hooks.before_tool_call.as_ref(),
        after: run.hooks.after_tool_call.as_ref(),
    };
    if is_sequential(run, &tools, tool_calls) {
        sequential(run, &context, &tools, assistant, tool_calls, &hooks).await
    } else {
        parallel(run, &context, &tools, assistant, tool_calls, &hooks).await
    }
}

async fn sequential(
    run: &Run,
    context: &JsValue,
    tools: &JsValue,
    assistant: &JsValue,
    tool_calls: &Array,
    hooks: &ToolHooks<'_>,
) -> Result<Batch, JsValue> {
    let messages = Array::new();
    let mut all = Vec::new();
    let mut update_error = None;
    for tool_call in tool_calls.iter() {
        emit_start(run, &tool_call).await?;
        let finalized = match prepare_tool_call(
            context,
            assistant,
            &tool_call,
            hooks,
            &run.signal,
            tools,
        )
        .await
        {
            Preparation::Immediate(result) => immediate(&tool_call, result),
            Preparation::Prepared {
                tool_call,
                tool,
                args,
            } => {
                let executed = execute_prepared(
                    &tool_call,
                    &tool,
                    &args,
                    &run.signal,
                    UpdateSink::Run(run.sink.clone()),
                )
                .await;
                let (f, e) = finalize(
                    context,
                    assistant,
                    &tool_call,
                    &args,
                    executed,
                    hooks,
                    &run.signal,
                )
                .await;
                if update_error.is_none() {
                    update_error = e;
                }
                f
            }
        };
        emit_end(run, &finalized).await?;
        messages.push(&emit_result_message(run, &finalized).await?);
        all.push(finalized);
    }
    if let Some(e) = update_error {
        return Err(e);
    }
    Ok(Batch {
        messages,
        terminate: terminates(&all),
    })
}

enum Recorded {
    Done(Finalized),
    Ready {
        tool_call: JsValue,
        tool: JsValue,
        args: JsValue,
    },
}

async fn parallel(
    run: &Run,
    context: &JsValue,
    tools: &JsValue,
    assistant: &JsValue,
    tool_calls: &Array,
    hooks: &ToolHooks<'_>,
) -> Result<Batch, JsValue> {
    let mut recorded = Vec::new();
    for tool_call in tool_calls.iter() {
        emit_start(run, &tool_call).await?;
        match prepare_tool_call(context, assistant, &tool_call, hooks, &run.signal, tools).await {
            Preparation::Immediate(result) => {
                let f = immediate(&tool_call, result);
                emit_end(run, &f).await?;
                recorded.push(Recorded::Done(f));
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
    let outcomes = join_all(recorded.into_iter().map(|entry| async move {
        match entry {
            Recorded::Done(f) => (f, None),
            Recorded::Ready {
                tool_call,
                tool,
                args,
            } => {
                let (f, update_error) = if run.aborted() {
                    (
                        immediate(&tool_call, error_result(msg::OPERATION_ABORTED)),
                        None,
                    )
                } else {
                    let executed = execute_prepared(
                        &tool_call,
                        &tool,
                        &args,
                        &run.signal,
                        UpdateSink::Run(run.sink.clone()),
                    )
                    .await;
                    finalize(
                        context,
                        assistant,
                        &tool_call,
                        &args,
                        executed,
                        hooks,
                        &run.signal,
                    )
                    .await
                };
                let end_error = emit_end(run, &f).await.err();
                (f, update_error.or(end_error))
            }
        }
    }))
    .await;
    // Every tool has settled here, and each call gets its result message before
    // a failed delivery (a listener that threw) fails the run.
    let mut first_error = None;
    let mut all = Vec::with_capacity(outcomes.len());
    for (f, error) in outcomes {
        if first_error.is_none() {
            first_error = error;
        }
        all.push(f);
    }
    let messages = Array::new();
    for f in &all {
        messages.push(&emit_result_message(run, f).await?);
    }
    if let Some(e) = first_error {
        return Err(e);
    }
    Ok(Batch {
        messages,
        terminate: terminates(&all),
    })
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
    match prepare_tool_call(context, assistant, tool_call, hooks, signal, tools).await {
        Preparation::Immediate(result) => Ok(immediate(tool_call, result)),
        Preparation::Prepared {
            tool_call,
            tool,
            args,
        } => {
            let executed = execute_prepared(
                &tool_call,
                &tool,
                &args,
                signal,
                UpdateSink::Callback(on_update),
            )
            .await;
            match finalize(
                context, assistant, &tool_call, &args, executed, hooks, signal,
            )
            .await
            {
                (_, Some(e)) => Err(e),
                (f, None) => Ok(f),
            }
        }
    }
}
