//! The stateless agent loop: two nested loops of turns (`run`), one provider
//! request per turn (`request`), tool calls in batches (`tools`), and tool
//! loadout declarations written into the transcript (`declare`). What follows a
//! turn is decided in the pure `turn` module.
//!
//! Everything the loop reads or passes on stays a JS value; Rust decides what
//! happens next and when.

pub mod declare;
mod join;
mod request;
mod run;
pub mod tools;
mod turn;

use alloc::rc::Rc;
use core::cell::RefCell;
use js_sys::{Array, Function};
use wasm_bindgen::prelude::*;

use crate::js::call;
use crate::js::errors::{self, msg};
use crate::js::events;
use crate::js::settle::{settle_from, Done, Settling};
use crate::js::values;
use crate::js::view;

pub use run::run_loop;

crate::local::local! {
    static DEFAULT_STREAM_FN: RefCell<Option<Function>> = const { RefCell::new(None) };
}

/// `setDefaultStreamFn`: the module-wide fallback stream function.
pub fn set_default_stream_fn(f: Option<Function>) {
    DEFAULT_STREAM_FN.with(|slot| *slot.borrow_mut() = f);
}

/// The default stream function, if one is set.
pub fn default_stream_fn() -> Option<Function> {
    DEFAULT_STREAM_FN.with(|slot| slot.borrow().clone())
}

/// Where the loop's events go.
#[derive(Clone)]
pub enum Sink {
    /// `runAgentLoop`'s `emit` callback, awaited per event.
    Callback(Function),
    /// `agentLoop`'s `EventStream`: pushed without waiting for the consumer.
    Stream(JsValue),
    /// A stateful owner of the run (an `Agent`: reduce its state, then await
    /// its listeners), as 1.4.0's `runAgentLoop(emit)` is handed the Agent's
    /// `processEvents`; one virtual call per event.
    Deliver(Rc<dyn Deliver>),
}

/// A receiver of a run's events that is not a plain JS callback.
pub trait Deliver {
    /// Runs the synchronous part of delivering `event` and returns what is
    /// left to await: `undefined`, or a promise.
    fn start(&self, event: &JsValue) -> Result<JsValue, JsValue>;
    /// [`start`](Self::start), then watches what is left to await in `slot`
    /// (see `settle::settle_from`); false when nothing is.
    fn start_watch(&self, event: &JsValue, slot: u32) -> Result<bool, JsValue>;
    /// A JS function doing [`start`](Self::start), for the streaming fast path.
    fn deliver_fn(&self) -> Function;
    /// Called once, just before the run's `agent_end` is delivered.
    fn ending(&self) {}
}

#[wasm_bindgen(module = "/src/js/glue.js")]
extern "C" {
    #[wasm_bindgen(js_name = streamDeliver)]
    fn stream_deliver(stream: &JsValue) -> Function;
    #[wasm_bindgen(js_name = EventStream)]
    pub type EventStreamHandle;
    #[wasm_bindgen(method)]
    pub fn push(this: &EventStreamHandle, event: &JsValue);
    #[wasm_bindgen(method)]
    pub fn end(this: &EventStreamHandle, result: &JsValue);
}

impl Sink {
    /// Runs the synchronous part of delivering `event` now (the reducer and
    /// every listener up to the first that returns a promise) and returns what
    /// is left to await: `undefined`, or a promise.
    pub fn start(&self, event: &JsValue) -> Result<JsValue, JsValue> {
        match self {
            Sink::Callback(f) => f.call1(&JsValue::UNDEFINED, event),
            Sink::Stream(stream) => {
                stream.unchecked_ref::<EventStreamHandle>().push(event);
                Ok(JsValue::UNDEFINED)
            }
            Sink::Deliver(target) => target.start(event),
        }
    }

    /// A JS function doing [`start`](Self::start), for the streaming fast path.
    pub fn deliver_fn(&self) -> Function {
        match self {
            Sink::Callback(f) => f.clone(),
            Sink::Stream(stream) => stream_deliver(stream),
            Sink::Deliver(target) => target.deliver_fn(),
        }
    }

    /// Delivers `event` now and waits until every listener has settled;
    /// await it at once.
    pub fn emit(&self, event: JsValue) -> Done {
        Done(match self {
            // Delivery and the check for a promise in one call.
            Sink::Deliver(target) => settle_from(|slot| target.start_watch(&event, slot)),
            _ => match self.start(&event) {
                Ok(rest) => call::settle(rest),
                Err(e) => Settling::ready(Err(e)),
            },
        })
    }
}

/// The hooks and options of an `AgentLoopConfig`, read once per run.
pub struct Hooks {
    pub convert_to_llm: Function,
    pub transform_context: Option<Function>,
    pub get_api_key: Option<Function>,
    pub finish_turn: Option<Function>,
    pub prepare_request: Option<Function>,
    pub prepare_next_turn: Option<Function>,
    pub get_steering: Option<Function>,
    pub get_follow_up: Option<Function>,
    pub before_tool_call: Option<Function>,
    pub after_tool_call: Option<Function>,
    pub sequential: bool,
}

#[wasm_bindgen(module = "/src/agent_loop/loop.js")]
extern "C" {
    #[wasm_bindgen(js_name = readHooks, catch)]
    fn read_hooks(config: &JsValue) -> Result<Array, JsValue>;
    /// `defaultConvertToLlm`, the one function object (an Agent's default too).
    #[wasm_bindgen(js_name = getDefaultConvertToLlm)]
    fn default_convert_to_llm() -> Function;
    /// `{ ...context, messages }`.
    #[wasm_bindgen(js_name = contextWith, catch)]
    fn context_with(context: &JsValue, messages: &JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = noDefaultStreamFn)]
    fn no_default_stream_fn() -> JsValue;
    /// `config.reasoning ?? "off"`.
    #[wasm_bindgen(js_name = thinkingLevelOf, catch)]
    pub(crate) fn thinking_level(config: &JsValue) -> Result<JsValue, JsValue>;
}

impl Hooks {
    /// Reads the hooks of `config`; a non-function where a hook belongs is a
    /// `TypeError` naming it. The reads and checks are JS (loop.js `readHooks`):
    /// one call instead of a getter and a check per hook.
    pub fn read(config: &JsValue) -> Result<Hooks, JsValue> {
        let hooks = read_hooks(config)?;
        let set = hooks.get(10).as_f64().unwrap_or(0.0) as u32;
        let hook =
            |i: u32| (set & (1 << i) != 0).then(|| hooks.get(i).unchecked_into::<Function>());
        Ok(Hooks {
            convert_to_llm: hook(0).unwrap_or_else(default_convert_to_llm),
            transform_context: hook(1),
            get_api_key: hook(2),
            finish_turn: hook(3),
            prepare_request: hook(4),
            prepare_next_turn: hook(5),
            get_steering: hook(6),
            get_follow_up: hook(7),
            before_tool_call: hook(8),
            after_tool_call: hook(9),
            sequential: set & (1 << 10) != 0,
        })
    }
}

/// One run of the loop: what the two loops share.
pub struct Run {
    pub sink: Sink,
    /// The run's `AbortSignal`, or `undefined`.
    pub signal: JsValue,
    pub hooks: Hooks,
    /// The current `AgentLoopConfig` (replaced by a copy when hooks change the model or level).
    pub config: RefCell<JsValue>,
    /// `currentContext`; replaced by `prepareNextTurn`/`prepareRequest`.
    pub context: RefCell<JsValue>,
    pub new_messages: Array,
    /// The transcript's replayed tool set, kept up to date incrementally.
    pub replay: declare::ReplayCache,
    /// Convert the transcript for requests incrementally (see [`Carry::llm_view`]).
    pub llm_view: bool,
}

/// What a run is given beyond the loop's arguments: state an `Agent` carries
/// from run to run. The stateless entry points use the default.
#[derive(Clone, Default)]
pub struct Carry {
    pub replay: declare::ReplayCache,
    /// The context's `messages` array is the caller's private copy: prompts are
    /// appended to it in place instead of to a new array.
    pub private_messages: bool,
    /// No hook sees the context and `convertToLlm` is the default: the LLM view
    /// of the transcript is kept between requests and only extended (the
    /// transcript is not scanned per request); each request gets a copy of it.
    pub llm_view: bool,
}

impl Run {
    pub fn new(
        sink: Sink,
        signal: JsValue,
        config: JsValue,
        context: JsValue,
        new_messages: Array,
        carry: Carry,
    ) -> Result<Run, JsValue> {
        let hooks = Hooks::read(&config)?;
        let llm_view = carry.llm_view && hooks.transform_context.is_none();
        Ok(Run {
            sink,
            signal,
            hooks,
            config: RefCell::new(config),
            context: RefCell::new(context),
            new_messages,
            replay: carry.replay,
            llm_view,
        })
    }

    pub fn emit(&self, event: JsValue) -> Done {
        self.sink.emit(event)
    }

    pub fn aborted(&self) -> bool {
        is_aborted(&self.signal)
    }

    pub fn context(&self) -> JsValue {
        self.context.borrow().clone()
    }

    pub fn config(&self) -> JsValue {
        self.config.borrow().clone()
    }

    /// `currentContext.messages`, read live (hooks may swap the context).
    pub fn messages(&self) -> Result<Array, JsValue> {
        messages_of(&self.context())
    }

    /// `(await poll?.()) || []`.
    pub async fn poll(&self, poll: &Option<Function>) -> Result<Array, JsValue> {
        let Some(f) = poll else {
            return Ok(Array::new());
        };
        let config = self.config();
        let value = call::call_until_abort(f, &config, &[], &self.signal).await?;
        if value.is_truthy() {
            values::to_array(&value)
        } else {
            Ok(Array::new())
        }
    }
}

/// `signal?.aborted`.
pub fn is_aborted(signal: &JsValue) -> bool {
    values::is_aborted(signal)
}

/// `context.messages` as an array, or a `TypeError` saying what is wrong.
pub fn messages_of(context: &JsValue) -> Result<Array, JsValue> {
    let messages = view::field(context, |c| c.messages())?;
    if Array::is_array(&messages) {
        Ok(messages.unchecked_into())
    } else {
        Err(errors::type_error("context.messages must be an array"))
    }
}

/// The checks `agentLoopContinue`/`runAgentLoopContinue` make before starting.
pub fn check_continue(context: &JsValue) -> Result<(), JsValue> {
    let messages = messages_of(context)?;
    let len = messages.length();
    if len == 0 {
        return Err(errors::error(msg::CONTINUE_NO_MESSAGES));
    }
    let last = messages.get(len - 1);
    if view::is_str(&view::field(&last, |m| m.role())?, "assistant") {
        return Err(errors::error(msg::CONTINUE_FROM_ASSISTANT));
    }
    Ok(())
}

/// `runAgentLoop` (with `prompts`: they are declared, announced, then the loop
/// runs) and `runAgentLoopContinue` (without: the loop continues the caller's
/// transcript in place). One function for both: one state machine.
pub async fn run_agent_loop(
    prompts: Option<JsValue>,
    context: JsValue,
    config: JsValue,
    sink: Sink,
    signal: JsValue,
    stream_fn: JsValue,
    carry: Carry,
) -> Result<Array, JsValue> {
    let (run, initial) = start(prompts, context, config, sink, signal, carry)?;
    run.emit(events::ev_agent_start()).await?;
    run.emit(events::ev_turn_start()).await?;
    for message in initial.iter() {
        run.emit(events::ev_message_start(&message)).await?;
        run.emit(events::ev_message_end(&message)).await?;
    }
    let stream_fn = resolve_stream_fn(stream_fn)?;
    run_loop(&run, &stream_fn).await?;
    Ok(run.new_messages)
}

/// What a run starts from: the run, and the prompts to announce.
fn start(
    prompts: Option<JsValue>,
    context: JsValue,
    config: JsValue,
    sink: Sink,
    signal: JsValue,
    carry: Carry,
) -> Result<(Run, Array), JsValue> {
    let Some(prompts) = prompts else {
        check_continue(&context)?;
        // A shallow copy that shares `messages` with the caller, as in the reference.
        let current = values::shallow(&context)?;
        let run = Run::new(sink, signal, config, current, Array::new(), carry)?;
        return Ok((run, Array::new()));
    };
    let prompts = if Array::is_array(&prompts) {
        prompts.unchecked_into::<Array>()
    } else {
        return Err(errors::type_error("prompts must be an array of messages"));
    };
    let base = messages_of(&context)?;
    let initial = declare::declare_tool_changes(&context, &prompts, &carry.replay)?;
    let current = if carry.private_messages {
        for message in initial.iter() {
            base.push(&message);
        }
        context
    } else {
        context_with(&context, &base.concat(&initial))?
    };
    let run = Run::new(sink, signal, config, current, Array::from(&initial), carry)?;
    Ok((run, initial))
}

fn resolve_stream_fn(stream_fn: JsValue) -> Result<Function, JsValue> {
    if stream_fn.is_undefined() || stream_fn.is_null() {
        default_stream_fn().ok_or_else(no_default_stream_fn)
    } else if stream_fn.is_function() {
        Ok(stream_fn.unchecked_into())
    } else {
        Err(errors::type_error("streamFn must be a function"))
    }
}

/// Ends an `agentLoop` stream whose run failed with the same events an `Agent`
/// emits for a failed run, instead of leaving its consumers waiting forever
/// (the reference never ends the stream; see docs/deviations.md).
pub fn fail_stream(stream: &JsValue, config: &JsValue, error: &JsValue, aborted: bool) {
    let model = view::field(config, |c| c.model()).unwrap_or(JsValue::UNDEFINED);
    let stream: &EventStreamHandle = stream.unchecked_ref();
    let failure = failure_message(&model, error, aborted);
    stream.push(&events::ev_message_start(&failure));
    stream.push(&events::ev_message_end(&failure));
    stream.push(&events::ev_turn_end(&failure, &Array::new()));
    let messages = Array::of1(&failure);
    stream.push(&events::ev_agent_end(&messages));
    stream.end(&messages);
}

/// The text of a failure whose error could not even be turned into a string.
pub const UNDESCRIBED: &str = msg::UNCONVERTIBLE;

/// The assistant message that records a failed run (`handleRunFailure`). Never
/// fails, so a failed run always gets its closing events: an error that cannot
/// be turned into text (its `toString` or `message` throws) reads as
/// [`msg::UNCONVERTIBLE`], and a model whose fields cannot be read is left out
/// (1.4.0 throws from its failure handler there, and the run ends without
/// `agent_end`).
pub fn failure_message(model: &JsValue, error: &JsValue, aborted: bool) -> JsValue {
    let text = errors::describe(error);
    let reason = if aborted { "aborted" } else { "error" };
    let usage = events::empty_usage();
    let model = if view::is_object(model) {
        model.clone()
    } else {
        js_sys::Object::new().into()
    };
    events::failure_message(&model, reason, &text, &usage).unwrap_or_else(|_| {
        events::failure_message(&js_sys::Object::new().into(), reason, &text, &usage)
            .unwrap_or(text)
    })
}
