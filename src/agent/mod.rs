//! The stateful `Agent`: transcript state, steering and follow-up queues,
//! listeners, and the lifecycle of one run at a time, on top of the loop.
//!
//! State lives in a plain JS object (the reference's `agent.state`, with the
//! same accessors) so that apps read and assign it as before; the option
//! fields are JS too (options.js; the state and its reducer in state.js).
//! Rust keeps the steering and follow-up queues (the pure `queue` module) and
//! the run, and never holds a borrow across an
//! await or a call into JS, because listeners, hooks and tools may call back
//! into the agent.

use crate::prelude::*;
use alloc::rc::{Rc, Weak};
use core::cell::{Cell, RefCell};
use js_sys::{Array, Function, Promise};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::prelude::*;
use web_sys::AbortController;

use crate::agent_loop::{self, Carry, Deliver, Sink};
use crate::js::call;
use crate::js::errors::{self, msg};
use crate::js::view;
use crate::queue::{PendingQueue, QueueMode};

#[wasm_bindgen(module = "/src/agent/state.js")]
extern "C" {
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
    #[wasm_bindgen(js_name = agentDeliver)]
    fn agent_deliver(state: &JsValue, listeners: &JsValue, signal: &JsValue) -> Function;
    #[wasm_bindgen(js_name = stateMessages)]
    fn state_messages(state: &JsValue) -> JsValue;
    #[wasm_bindgen(js_name = dropRunMirror)]
    fn drop_run_mirror(state: &JsValue);
    #[wasm_bindgen(js_name = lastRole, catch)]
    fn last_role(messages: &JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = allSystem, catch)]
    fn all_system(messages: &JsValue) -> Result<bool, JsValue>;
    /// The run's transcript copy (see `runContext`).
    #[wasm_bindgen(js_name = runContext, catch)]
    fn run_context(state: &JsValue, persistent: bool) -> Result<JsValue, JsValue>;
    /// The delivery of an event, then a watch on the listener promise left, if any.
    #[wasm_bindgen(js_name = agentProcessWatch, catch)]
    fn agent_process_watch(
        state: &JsValue,
        listeners: &JsValue,
        event: &JsValue,
        signal: &JsValue,
        slot: u32,
    ) -> Result<bool, JsValue>;
}

#[wasm_bindgen(module = "/src/agent/options.js")]
extern "C" {
    #[wasm_bindgen(js_name = agentInit, catch)]
    fn agent_init(options: &JsValue, fallback: &JsValue) -> Result<Array, JsValue>;
    #[wasm_bindgen(js_name = promptMessages, catch)]
    fn prompt_messages(input: &JsValue, images: &JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = privateTranscript, catch)]
    fn private_transcript(fields: &JsValue) -> Result<bool, JsValue>;
    #[wasm_bindgen(js_name = agentLoopConfig)]
    fn agent_loop_config(
        state: &JsValue,
        next_turn: &JsValue,
        steering: &JsValue,
        follow_up: &JsValue,
    ) -> JsValue;
}

#[wasm_bindgen(module = "/src/agent/failure.js")]
extern "C" {
    #[wasm_bindgen(js_name = unansweredToolCalls, catch)]
    fn unanswered_tool_calls(messages: &JsValue) -> Result<Array, JsValue>;
    #[wasm_bindgen(js_name = unansweredEvents)]
    fn unanswered_events(call: &JsValue, failure: &JsValue, pending: &JsValue) -> Array;
    #[wasm_bindgen(js_name = failureEvents)]
    fn failure_events(failure: &JsValue) -> Array;
}

type NextTurnClosure = Closure<dyn FnMut(JsValue) -> Promise>;
type PollClosure = Closure<dyn FnMut() -> Promise>;

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
    steering: RefCell<PendingQueue<JsValue>>,
    follow_up: RefCell<PendingQueue<JsValue>>,
    /// The running run's `agent_end` has been handed to the listeners: whatever
    /// fails after that, the run gets no second one.
    ended: Cell<bool>,
    /// A run started by `continue()` from queued steering delivers nothing at
    /// its first steering poll.
    skip_initial_steering: Cell<bool>,
    /// The loop config's `prepareNextTurn` and queue polls; created once per agent.
    next_turn: RefCell<Option<NextTurnClosure>>,
    poll_steering: RefCell<Option<PollClosure>>,
    poll_follow_up: RefCell<Option<PollClosure>>,
}

/// The loop delivers an Agent's events through this: reduce, then listeners.
impl Deliver for Core {
    fn start(&self, event: &JsValue) -> Result<JsValue, JsValue> {
        self.start_event(event)
    }

    fn start_watch(&self, event: &JsValue, slot: u32) -> Result<bool, JsValue> {
        let signal = self.signal();
        agent_process_watch(&self.state, &self.listeners, event, &signal, slot)
    }

    fn deliver_fn(&self) -> Function {
        agent_deliver(&self.state, &self.listeners, &self.signal())
    }

    fn ending(&self) {
        self.mark_ended();
    }
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
    fn start_event(&self, event: &JsValue) -> Result<JsValue, JsValue> {
        let signal = self.signal();
        agent_process(&self.state, &self.listeners, event, &signal)
    }

    /// The Agent's event sink: reduce, then await listeners in order.
    pub fn process_event(&self, event: JsValue) -> crate::js::settle::Done {
        crate::js::settle::Done(match self.start_event(&event) {
            Ok(pending) => call::settle(pending),
            Err(e) => crate::js::settle::Settling::ready(Err(e)),
        })
    }

    /// Records that the run's `agent_end` is being delivered (see `ended`).
    pub fn mark_ended(&self) {
        self.ended.set(true);
    }

    fn field(&self, name: &str) -> JsValue {
        js_sys::Reflect::get(&self.fields, &JsValue::from_str(name)).unwrap_or(JsValue::UNDEFINED)
    }

    /// What one poll of a queue takes; the reference tests the first entry's
    /// truthiness in one-at-a-time mode.
    fn drain(queue: &RefCell<PendingQueue<JsValue>>) -> Array {
        queue
            .borrow_mut()
            .drain_while(JsValue::is_truthy)
            .into_iter()
            .collect()
    }

    fn drain_steering(&self) -> Array {
        if self.skip_initial_steering.replace(false) {
            return Array::new();
        }
        Self::drain(&self.steering)
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
// write the `fields` object: defined in JS (options.js `defineAgent`, called
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
        // Read and checked in JS (options.js `agentInit`): the options are a
        // dozen property reads, cheaper there than as wasm code.
        // The error for a missing stream function is made only when it is thrown: an `Error` costs
        // its stack trace, which through wasm frames is most of an Agent's construction.
        let fallback = agent_loop::default_stream_fn().map_or(JsValue::UNDEFINED, JsValue::from);
        let init = agent_init(&options, &fallback)?;
        let mode = |i: u32| {
            RefCell::new(PendingQueue::new(QueueMode::parse(
                init.get(i).as_string().as_deref(),
            )))
        };
        let core = Rc::new(Core {
            fields: init.get(0),
            state: init.get(1),
            listeners: init.get(2),
            active: RefCell::new(None),
            replay: Default::default(),
            steering: mode(3),
            follow_up: mode(4),
            ended: Cell::new(false),
            skip_initial_steering: Cell::new(false),
            next_turn: RefCell::new(None),
            poll_steering: RefCell::new(None),
            poll_follow_up: RefCell::new(None),
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
        self.clear_all_queues();
        Ok(())
    }

    /// How many queued steering messages one poll delivers: `"one-at-a-time"`
    /// (the default) or `"all"`.
    #[wasm_bindgen(getter = steeringMode, unchecked_return_type = "QueueMode")]
    pub fn steering_mode(&self) -> String {
        self.core.steering.borrow().mode.as_str().into()
    }
    #[wasm_bindgen(setter = steeringMode)]
    pub fn set_steering_mode(
        &self,
        #[wasm_bindgen(unchecked_param_type = "QueueMode")] mode: JsValue,
    ) {
        self.core.steering.borrow_mut().mode = QueueMode::parse(mode.as_string().as_deref());
    }
    /// How many queued follow-up messages one poll delivers.
    #[wasm_bindgen(getter = followUpMode, unchecked_return_type = "QueueMode")]
    pub fn follow_up_mode(&self) -> String {
        self.core.follow_up.borrow().mode.as_str().into()
    }
    #[wasm_bindgen(setter = followUpMode)]
    pub fn set_follow_up_mode(
        &self,
        #[wasm_bindgen(unchecked_param_type = "QueueMode")] mode: JsValue,
    ) {
        self.core.follow_up.borrow_mut().mode = QueueMode::parse(mode.as_string().as_deref());
    }

    /// Queues a message delivered after the current turn's tool calls.
    pub fn steer(&self, #[wasm_bindgen(unchecked_param_type = "AgentMessage")] message: JsValue) {
        self.core.steering.borrow_mut().enqueue(message);
    }
    /// Queues a message delivered when the agent would otherwise stop.
    #[wasm_bindgen(js_name = followUp)]
    pub fn follow_up(
        &self,
        #[wasm_bindgen(unchecked_param_type = "AgentMessage")] message: JsValue,
    ) {
        self.core.follow_up.borrow_mut().enqueue(message);
    }
    #[wasm_bindgen(js_name = clearSteeringQueue)]
    pub fn clear_steering_queue(&self) {
        self.core.steering.borrow_mut().clear();
    }
    #[wasm_bindgen(js_name = clearFollowUpQueue)]
    pub fn clear_follow_up_queue(&self) {
        self.core.follow_up.borrow_mut().clear();
    }
    #[wasm_bindgen(js_name = clearAllQueues)]
    pub fn clear_all_queues(&self) {
        self.clear_steering_queue();
        self.clear_follow_up_queue();
    }
    #[wasm_bindgen(js_name = hasQueuedMessages)]
    pub fn has_queued_messages(&self) -> bool {
        !self.core.steering.borrow().is_empty() || !self.core.follow_up.borrow().is_empty()
    }
    /// What the next poll would deliver: steering first, else follow-ups.
    #[wasm_bindgen(js_name = peekQueuedMessages, unchecked_return_type = "AgentMessage[]")]
    pub fn peek_queued_messages(&self) -> Array {
        let steering = self.core.steering.borrow().peek_while(JsValue::is_truthy);
        let list = if steering.is_empty() {
            self.core.follow_up.borrow().peek_while(JsValue::is_truthy)
        } else {
            steering
        };
        list.into_iter().collect()
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
            let steering = Core::drain(&self.core.steering);
            if steering.length() > 0 {
                return Ok(RunKind::Prompt(steering.into(), true));
            }
            let follow_ups = Core::drain(&self.core.follow_up);
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
    let weak: Weak<Core> = Rc::downgrade(core);
    let w = weak.clone();
    let steering = Closure::<dyn FnMut() -> Promise>::new(move || {
        let drained = w.upgrade().map(|c| c.drain_steering()).unwrap_or_default();
        Promise::resolve(&JsValue::from(drained))
    });
    let w = weak.clone();
    let follow_up = Closure::<dyn FnMut() -> Promise>::new(move || {
        let drained = w
            .upgrade()
            .map(|c| Core::drain(&c.follow_up))
            .unwrap_or_default();
        Promise::resolve(&JsValue::from(drained))
    });
    let w = weak;
    let next_turn = Closure::<dyn FnMut(JsValue) -> Promise>::new(move |context: JsValue| {
        let core = w.upgrade();
        crate::js::spawn::promise(Box::pin(async move {
            let Some(core) = core else {
                return Ok(JsValue::UNDEFINED);
            };
            let signal = core.signal();
            let with_context = core.field("prepareNextTurnWithContext");
            // Abort-aware here too, so an abandoned hook does not keep this
            // future (and the agent) alive.
            if let Some(f) = with_context.dyn_ref::<Function>() {
                return call::call_until_abort(f, &core.fields, &[&context, &signal], &signal)
                    .await;
            }
            let legacy = core.field("prepareNextTurn");
            if let Some(f) = legacy.dyn_ref::<Function>() {
                return call::call_until_abort(f, &core.fields, &[&signal], &signal).await;
            }
            Ok(JsValue::UNDEFINED)
        }))
    });
    *core.poll_steering.borrow_mut() = Some(steering);
    *core.poll_follow_up.borrow_mut() = Some(follow_up);
    *core.next_turn.borrow_mut() = Some(next_turn);
}

fn loop_config(core: &Core) -> JsValue {
    fn js<T: ?Sized>(c: &RefCell<Option<Closure<T>>>) -> JsValue {
        c.borrow()
            .as_ref()
            .map(|c| c.as_ref().clone())
            .unwrap_or(JsValue::UNDEFINED)
    }
    agent_loop_config(
        &core.state,
        &js(&core.next_turn),
        &js(&core.poll_steering),
        &js(&core.poll_follow_up),
    )
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
    core.ended.set(false);
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
    // ended with is reused and its LLM view only extended (the stream function
    // gets a copy of it), so a prompt does not filter a long transcript again.
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
    let sink = Sink::Deliver(core.clone());
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
    core.skip_initial_steering.set(skip);
    agent_loop::run_agent_loop(prompts, context, config, sink, signal, stream_fn, carry).await?;
    Ok(())
}

/// `handleRunFailure`: the failure events an ended run gets. Before them, every
/// tool call of the last assistant message that has no result gets one (and a
/// `tool_execution_end` if it was started), so the transcript stays valid for the
/// next request (a deviation: 1.4.0 leaves such calls unanswered).
///
/// Every started run gets exactly one `agent_end` (deviations from 1.4.0, which
/// delivers a second one when a listener fails on the first, and none when a
/// listener fails on a failure event): a run that failed while its `agent_end`
/// was being delivered gets no failure events, and a listener that throws here
/// does not stop the delivery. `prompt()` then rejects with the first such error.
async fn handle_run_failure(
    core: &Rc<Core>,
    error: &JsValue,
    aborted: bool,
) -> Result<(), JsValue> {
    // The failed run's transcript copy no longer matches what the agent records.
    drop_run_mirror(&core.state);
    if core.ended.get() {
        return Err(error.clone());
    }
    let model = get(&core.state, "model");
    let failure = agent_loop::failure_message(&model, error, aborted);
    // Best effort: a transcript whose tool calls cannot even be read (a throwing
    // getter) gets no answers.
    let messages = state_messages(&core.state);
    let unanswered = unanswered_tool_calls(&messages).unwrap_or_default();
    let pending = get(&core.state, "pendingToolCalls");
    let mut first_error = None;
    // Each call's events are made just before they are delivered (whether its
    // `tool_execution_end` is due depends on what listeners did before).
    for i in 0..=unanswered.length() {
        let events = if i < unanswered.length() {
            unanswered_events(&unanswered.get(i), &failure, &pending)
        } else {
            core.mark_ended();
            failure_events(&failure)
        };
        for event in events.iter() {
            if let Err(e) = core.process_event(event).await {
                first_error.get_or_insert(e);
            }
        }
    }
    first_error.map_or(Ok(()), Err)
}

fn finish_run(core: &Core) {
    finish_run_state(&core.state);
    let active = core.active.borrow_mut().take();
    if let Some(active) = active {
        let _ = active.resolve.call0(&JsValue::UNDEFINED);
    }
}
