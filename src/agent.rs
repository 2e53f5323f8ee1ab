//! The stateful `Agent`: transcript state, steering and follow-up queues,
//! listeners, and the lifecycle of one run at a time, on top of the loop.
//!
//! State lives in a plain JS object (the reference's `agent.state`, with the
//! same accessors) so that apps read and assign it as before; the option
//! fields and the steering and follow-up queues are JS too (glue.js). Rust keeps
//! the run, and never holds a borrow across an await or a call into JS, because
//! listeners, hooks and tools may call back into the agent.

use js_sys::{Array, Function, Promise};
use std::cell::RefCell;
use std::rc::{Rc, Weak};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::prelude::*;
use web_sys::AbortController;

use crate::agent_loop::{self, Carry, Sink};
use crate::js::call;
use crate::js::errors::{self, msg};
use crate::js::glue;
use crate::js::view;

#[wasm_bindgen(module = "/src/js/glue.js")]
extern "C" {
    #[wasm_bindgen(js_name = getEmptyUsage)]
    fn get_empty_usage() -> JsValue;
    #[wasm_bindgen(js_name = agentInit, catch)]
    fn agent_init(options: &JsValue, fallback: &JsValue) -> Result<Array, JsValue>;
    #[wasm_bindgen(js_name = resetState, catch)]
    fn reset_state(state: &JsValue) -> Result<(), JsValue>;
    #[wasm_bindgen(js_name = startRunState)]
    fn start_run_state(state: &JsValue);
    #[wasm_bindgen(js_name = finishRunState)]
    fn finish_run_state(state: &JsValue);
    #[wasm_bindgen(js_name = agentProcess, catch)]
    fn agent_process(
        state: &JsValue,
        listeners: &JsValue,
        event: &JsValue,
        signal: &JsValue,
    ) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = unansweredToolCalls, catch)]
    fn unanswered_tool_calls(messages: &JsValue) -> Result<Array, JsValue>;
    #[wasm_bindgen(js_name = unansweredEvents)]
    fn unanswered_events(call: &JsValue, failure: &JsValue, pending: &JsValue) -> Array;
    #[wasm_bindgen(js_name = failureEvents)]
    fn failure_events(failure: &JsValue) -> Array;
    #[wasm_bindgen(js_name = agentDeliver)]
    fn agent_deliver(state: &JsValue, listeners: &JsValue, signal: &JsValue) -> Function;
    #[wasm_bindgen(js_name = promptMessages, catch)]
    fn prompt_messages(input: &JsValue, images: &JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = agentLoopConfig)]
    fn agent_loop_config(state: &JsValue, next_turn: &JsValue) -> JsValue;
    #[wasm_bindgen(js_name = agentDrain)]
    fn agent_drain(state: &JsValue, which: u32) -> Array;
    #[wasm_bindgen(js_name = agentSkipSteering)]
    fn agent_skip_steering(state: &JsValue, skip: bool);
    #[wasm_bindgen(js_name = agentClearQueues)]
    fn agent_clear_queues(state: &JsValue);
    #[wasm_bindgen(js_name = runContext, catch)]
    fn run_context(state: &JsValue, persistent: bool) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = privateTranscript, catch)]
    fn private_transcript(fields: &JsValue) -> Result<bool, JsValue>;
    #[wasm_bindgen(js_name = stateMessages)]
    fn state_messages(state: &JsValue) -> JsValue;
    #[wasm_bindgen(js_name = dropRunMirror)]
    fn drop_run_mirror(state: &JsValue);
    #[wasm_bindgen(js_name = lastRole, catch)]
    fn last_role(messages: &JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = allSystem, catch)]
    fn all_system(messages: &JsValue) -> Result<bool, JsValue>;
}

/// `EMPTY_USAGE`: one shared zero-usage object, as in the reference.
pub fn empty_usage() -> JsValue {
    get_empty_usage()
}

type NextTurnClosure = Closure<dyn FnMut(JsValue) -> Promise>;

struct ActiveRun {
    controller: AbortController,
    /// `controller.signal`, read once: every event's delivery passes it on.
    signal: JsValue,
    promise: Promise,
    resolve: Function,
}

/// The shared inside of an `Agent`; the loop's sink holds it while a run lasts.
pub struct Core {
    state: JsValue,
    /// Hook and option fields, a plain JS object the `Agent` accessors read and write.
    fields: JsValue,
    listeners: JsValue,
    active: RefCell<Option<ActiveRun>>,
    /// The transcript's replayed tool set, carried from run to run.
    replay: crate::agent_loop::declare::ReplayCache,
    /// The loop config's `prepareNextTurn`; created once per agent.
    next_turn: RefCell<Option<NextTurnClosure>>,
}

impl Core {
    fn signal(&self) -> JsValue {
        self.active
            .borrow()
            .as_ref()
            .map(|a| a.signal.clone())
            .unwrap_or(JsValue::UNDEFINED)
    }

    /// The Agent's event sink, synchronous part: reduce, then call listeners in
    /// order until one returns a promise, which is returned for the rest.
    pub fn start_event(&self, event: &JsValue) -> Result<JsValue, JsValue> {
        let signal = self.signal();
        agent_process(&self.state, &self.listeners, event, &signal)
    }

    /// [`start_event`](Self::start_event), then watches what is left to await
    /// in `slot` (see `settle::settle_from`); false when nothing is.
    pub fn start_event_watch(&self, event: &JsValue, slot: u32) -> Result<bool, JsValue> {
        let signal = self.signal();
        glue::agent_process_watch(&self.state, &self.listeners, event, &signal, slot)
    }

    /// A JS function delivering an event as [`start_event`](Self::start_event) does.
    pub fn deliver_fn(&self) -> Function {
        agent_deliver(&self.state, &self.listeners, &self.signal())
    }

    /// The Agent's event sink: reduce, then await listeners in order.
    pub fn process_event(&self, event: JsValue) -> crate::js::settle::Done {
        crate::js::settle::Done(match self.start_event(&event) {
            Ok(pending) => call::settle(pending),
            Err(e) => crate::js::settle::Settling::ready(Err(e)),
        })
    }

    fn field(&self, name: &str) -> JsValue {
        js_sys::Reflect::get(&self.fields, &JsValue::from_str(name)).unwrap_or(JsValue::UNDEFINED)
    }
}

/// A stateful agent: holds the transcript, runs the loop for `prompt()` and
/// `continue()`, queues steering and follow-up messages, and notifies
/// subscribers of every event.
#[wasm_bindgen]
pub struct Agent {
    core: Rc<Core>,
}

// The option accessors (`agent.convertToLlm`, `agent.transport`, …) read and
// write the `fields` object: defined in JS (glue.js `defineAgentFields`, called
// by the package entry), they cost no wasm export each.

fn get(object: &JsValue, key: &str) -> JsValue {
    if view::is_object(object) {
        js_sys::Reflect::get(object, &JsValue::from_str(key)).unwrap_or(JsValue::UNDEFINED)
    } else {
        JsValue::UNDEFINED
    }
}

#[wasm_bindgen]
impl Agent {
    /// Creates an agent. `options` may be omitted; `streamFn` falls back to the
    /// default stream function (see `setDefaultStreamFn`), resolved now.
    #[wasm_bindgen(constructor)]
    pub fn new(
        #[wasm_bindgen(unchecked_optional_param_type = "AgentOptions")] options: JsValue,
    ) -> Result<Agent, JsValue> {
        crate::panic::install();
        // Read and checked in JS (glue.js `agentInit`): the options are a
        // dozen property reads, cheaper there than as wasm code.
        let fallback = agent_loop::default_stream_fn().map_or_else(|e| e, JsValue::from);
        let init = agent_init(&options, &fallback)?;
        let core = Rc::new(Core {
            fields: init.get(0),
            state: init.get(1),
            listeners: init.get(2),
            active: RefCell::new(None),
            replay: Default::default(),
            next_turn: RefCell::new(None),
        });
        install_closures(&core);
        Ok(Agent { core })
    }

    /// The agent's state object: `systemPrompt`, `model`, `thinkingLevel`,
    /// `tools`, `messages`, `isStreaming`, `streamingMessage`,
    /// `pendingToolCalls`, `errorMessage`.
    #[wasm_bindgen(getter, unchecked_return_type = "AgentState")]
    pub fn state(&self) -> JsValue {
        self.core.state.clone()
    }

    /// The running run's `AbortSignal`, or `undefined` when idle.
    #[wasm_bindgen(getter, unchecked_return_type = "AbortSignal | undefined")]
    pub fn signal(&self) -> JsValue {
        self.core.signal()
    }

    /// Aborts the running run, if any.
    pub fn abort(&self) {
        let controller = self
            .core
            .active
            .borrow()
            .as_ref()
            .map(|a| a.controller.clone());
        if let Some(c) = controller {
            c.abort();
        }
    }

    /// Resolves when the running run (and its `agent_end` listeners) finished.
    #[wasm_bindgen(js_name = waitForIdle, unchecked_return_type = "Promise<void>")]
    pub fn wait_for_idle(&self) -> Promise {
        let promise = self
            .core
            .active
            .borrow()
            .as_ref()
            .map(|a| a.promise.clone());
        promise.unwrap_or_else(|| Promise::resolve(&JsValue::UNDEFINED))
    }

    /// Clears the transcript down to its replayed system message and empties the queues.
    pub fn reset(&self) -> Result<(), JsValue> {
        if self.core.active.borrow().is_some() {
            return Err(errors::error(msg::ALREADY_RESETTING));
        }
        reset_state(&self.core.state)?;
        agent_clear_queues(&self.core.state);
        Ok(())
    }

    /// `prompt(text, images?)` or `prompt(message | message[])`.
    #[wasm_bindgen(skip_typescript)]
    pub fn prompt(&self, input: JsValue, images: JsValue) -> Promise {
        if self.core.active.borrow().is_some() {
            return Promise::reject(&errors::error(msg::ALREADY_PROMPTING));
        }
        let messages = match prompt_messages(&input, &images) {
            Ok(m) => m,
            Err(e) => return Promise::reject(&e),
        };
        run_with_lifecycle(self.core.clone(), RunKind::Prompt(messages, false))
    }

    /// Continues from the current transcript (see the README for the three cases).
    #[wasm_bindgen(js_name = continue, unchecked_return_type = "Promise<void>")]
    pub fn continue_(&self) -> Promise {
        match self.continue_kind() {
            Ok(kind) => run_with_lifecycle(self.core.clone(), kind),
            Err(e) => Promise::reject(&e),
        }
    }

    fn continue_kind(&self) -> Result<RunKind, JsValue> {
        if self.core.active.borrow().is_some() {
            return Err(errors::error(msg::ALREADY_CONTINUING));
        }
        let messages = state_messages(&self.core.state);
        if all_system(&messages)? {
            return Err(errors::error(msg::NO_MESSAGES_TO_CONTINUE));
        }
        if view::is_str(&last_role(&messages)?, "assistant") {
            let steering = agent_drain(&self.core.state, 0);
            if steering.length() > 0 {
                return Ok(RunKind::Prompt(steering.into(), true));
            }
            let follow_ups = agent_drain(&self.core.state, 1);
            if follow_ups.length() > 0 {
                return Ok(RunKind::Prompt(follow_ups.into(), false));
            }
            return Err(errors::error(msg::CONTINUE_FROM_ASSISTANT));
        }
        Ok(RunKind::Continue)
    }
}

enum RunKind {
    /// Messages to prompt with, and whether to skip the initial steering poll.
    Prompt(JsValue, bool),
    Continue,
}

fn install_closures(core: &Rc<Core>) {
    let w: Weak<Core> = Rc::downgrade(core);
    let next_turn = Closure::<dyn FnMut(JsValue) -> Promise>::new(move |context: JsValue| {
        let core = w.upgrade();
        crate::js::spawn::promise(Box::pin(async move {
            let Some(core) = core else {
                return Ok(JsValue::UNDEFINED);
            };
            let signal = core.signal();
            let with_context = core.field("prepareNextTurnWithContext");
            if let Some(f) = with_context.dyn_ref::<Function>() {
                return call::call(f, &core.fields, &[&context, &signal]).await;
            }
            let legacy = core.field("prepareNextTurn");
            if let Some(f) = legacy.dyn_ref::<Function>() {
                return call::call(f, &core.fields, &[&signal]).await;
            }
            Ok(JsValue::UNDEFINED)
        }))
    });
    *core.next_turn.borrow_mut() = Some(next_turn);
}

fn loop_config(core: &Core) -> JsValue {
    let next_turn = core
        .next_turn
        .borrow()
        .as_ref()
        .map(|c| c.as_ref().clone())
        .unwrap_or(JsValue::UNDEFINED);
    agent_loop_config(&core.state, &next_turn)
}

fn run_with_lifecycle(core: Rc<Core>, kind: RunKind) -> Promise {
    let controller = match AbortController::new() {
        Ok(c) => c,
        Err(e) => return Promise::reject(&e),
    };
    let parts = crate::js::spawn::deferred();
    let (promise, resolve) = (parts.get(0).unchecked_into(), parts.get(1).unchecked_into());
    *core.active.borrow_mut() = Some(ActiveRun {
        signal: controller.signal().into(),
        controller: controller.clone(),
        promise,
        resolve,
    });
    start_run_state(&core.state);
    let signal: JsValue = controller.signal().into();
    // The context and config are taken now, as the reference does inside
    // `prompt()`, not when the run's first step is polled.
    let prepared = prepare_run(&core, kind);
    crate::js::spawn::promise(Box::pin(async move {
        let outcome = match prepared {
            Ok(p) => execute(&core, p, signal.clone()).await,
            Err(e) => Err(e),
        };
        let result = match outcome {
            Ok(()) => Ok(()),
            Err(error) => {
                let aborted = agent_loop::is_aborted(&signal);
                handle_run_failure(&core, &error, aborted).await
            }
        };
        finish_run(&core);
        result.map(|_| JsValue::UNDEFINED)
    }))
}

struct PreparedRun {
    kind: RunKind,
    context: JsValue,
    config: JsValue,
    stream_fn: JsValue,
    carry: Carry,
}

fn prepare_run(core: &Rc<Core>, kind: RunKind) -> Result<PreparedRun, JsValue> {
    // Every run works on a private copy of the transcript (prompts are appended
    // to it in place). When no hook can see that copy, the copy the last run
    // ended with is reused and its LLM view only extended, so a prompt costs the
    // same on a long transcript as on a short one.
    let persistent = private_transcript(&core.fields)?;
    let context = run_context(&core.state, persistent)?;
    Ok(PreparedRun {
        kind,
        context,
        config: loop_config(core),
        stream_fn: core.field("streamFunction"),
        carry: Carry {
            replay: core.replay.clone(),
            private_messages: true,
            llm_view: persistent,
        },
    })
}

async fn execute(core: &Rc<Core>, run: PreparedRun, signal: JsValue) -> Result<(), JsValue> {
    let sink = Sink::Agent(core.clone());
    let PreparedRun {
        kind,
        context,
        config,
        stream_fn,
        carry,
    } = run;
    let (prompts, skip) = match kind {
        RunKind::Prompt(messages, skip) => (Some(messages), skip),
        RunKind::Continue => (None, false),
    };
    agent_skip_steering(&core.state, skip);
    agent_loop::run_agent_loop(prompts, context, config, sink, signal, stream_fn, carry).await?;
    Ok(())
}

/// `handleRunFailure`: the failure events an ended run gets. Before them, every
/// tool call of the last assistant message that has no result gets one (and a
/// `tool_execution_end` if it was started), so the transcript stays valid for the
/// next request (a deviation: 1.4.0 leaves such calls unanswered). As in the
/// reference, a listener that throws here stops the delivery and `prompt()`
/// rejects with its error.
async fn handle_run_failure(
    core: &Rc<Core>,
    error: &JsValue,
    aborted: bool,
) -> Result<(), JsValue> {
    // The failed run's transcript copy no longer matches what the agent records.
    drop_run_mirror(&core.state);
    let model = get(&core.state, "model");
    let failure = agent_loop::failure_message(&model, error, aborted)?;
    // Best effort: a transcript whose tool calls cannot even be read (a throwing
    // getter) gets no answers; only a listener's error stops the delivery.
    let messages = state_messages(&core.state);
    let unanswered = unanswered_tool_calls(&messages).unwrap_or_default();
    let pending = get(&core.state, "pendingToolCalls");
    // Each call's events are made just before they are delivered (whether its
    // `tool_execution_end` is due depends on what listeners did before).
    for i in 0..=unanswered.length() {
        let events = if i < unanswered.length() {
            unanswered_events(&unanswered.get(i), &failure, &pending)
        } else {
            failure_events(&failure)
        };
        for event in events.iter() {
            core.process_event(event).await?;
        }
    }
    Ok(())
}

fn finish_run(core: &Core) {
    finish_run_state(&core.state);
    let active = core.active.borrow_mut().take();
    if let Some(active) = active {
        let _ = active.resolve.call0(&JsValue::UNDEFINED);
    }
}
