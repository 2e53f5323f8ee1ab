//! The two loops: the inner loop runs one request per turn while tool
//! calls or steering messages remain; the outer loop picks up follow-ups (or one
//! context-only turn after an explicit `continue`) when the agent would stop.

use crate::prelude::*;
use js_sys::{Array, Function};
use wasm_bindgen::prelude::*;

use super::turn::{self, Action, Idle, Stop};
use super::{declare, request, thinking_level, tools, Run, Sink};
use crate::js::call;
use crate::js::events;
use crate::js::spawn::BoxFuture;
use crate::js::values::{push_all, to_array};
use crate::js::view::{self, view};

#[wasm_bindgen(module = "/src/agent_loop/run.js")]
extern "C" {
    /// `config` with a hook update's `model` and `thinkingLevel` applied.
    #[wasm_bindgen(js_name = updatedConfig, catch)]
    fn updated_config(update: &JsValue, config: &JsValue) -> Result<JsValue, JsValue>;
    /// `finishTurn`'s and `prepareNextTurn`'s context.
    #[wasm_bindgen(js_name = turnContext)]
    fn turn_context(
        message: &JsValue,
        tool_results: &JsValue,
        context: &JsValue,
        new_messages: &JsValue,
    ) -> JsValue;
    /// `prepareRequest`'s context.
    #[wasm_bindgen(js_name = requestContext)]
    fn request_context(context: &JsValue, model: &JsValue, thinking_level: &JsValue) -> JsValue;
}

/// What a hook's `{ context?, model?, thinkingLevel? }` update changes. The
/// context is taken first: it stays taken if reading the rest throws.
fn apply_update(run: &Run, update: &JsValue) -> Result<(), JsValue> {
    let context = view(update).context()?;
    if !view::is_nullish(&context) {
        *run.context.borrow_mut() = context;
    }
    let config = updated_config(update, &run.config())?;
    *run.config.borrow_mut() = config;
    Ok(())
}

pub async fn run_loop(run: &Run, stream_fn: &Function) -> Result<(), JsValue> {
    let hooks = &run.hooks;
    let mut last_turn: Option<JsValue> = None;
    let mut explicit_continuation = false;
    let mut pending = run.poll(&hooks.get_steering).await?;

    'run: loop {
        let mut more_tool_calls = true;
        while more_tool_calls || pending.length() > 0 {
            let mut prepared = Array::new();
            if let Some(turn) = &last_turn {
                if let Some(f) = &hooks.prepare_next_turn {
                    let update =
                        call::call_until_abort(f, &run.config(), &[turn], &run.signal).await?;
                    if update.is_truthy() {
                        let messages = view(&update).messages()?;
                        if !messages.is_undefined() && !messages.is_null() {
                            prepared = to_array(&messages)?;
                        }
                        apply_update(run, &update)?;
                    }
                }
                if pending.length() == 0 {
                    pending = run.poll(&hooks.get_steering).await?;
                }
                run.emit(events::ev_turn_start()).await?;
            }

            let queued = prepared.concat(&pending);
            let declared = declare::declare_tool_changes(&run.context(), &queued, &run.replay)?;
            for message in declared.iter() {
                run.emit(events::ev_message_start(&message)).await?;
                run.emit(events::ev_message_end(&message)).await?;
                run.messages()?.push(&message);
                run.new_messages.push(&message);
            }

            if let Some(f) = &hooks.prepare_request {
                let config = run.config();
                let request = request_context(
                    &run.context(),
                    &view(&config).model()?,
                    &thinking_level(&config)?,
                );
                let update =
                    call::call_until_abort(f, &config, &[&request, &run.signal], &run.signal)
                        .await?;
                if update.is_truthy() {
                    apply_update(run, &update)?;
                }
            }

            // Boxed, as are the tool batches below: the turn's state machine
            // then holds a pointer instead of inlining theirs (smaller wasm).
            let response: BoxFuture<'_, _> =
                Box::pin(request::stream_assistant_response(run, stream_fn));
            let message = response.await?;
            run.new_messages.push(&message);

            let stop = view::field(&message, |m| m.stop_reason())?;
            let stop = Stop::parse(stop.as_string().as_deref());
            if stop == Stop::Failed {
                let turn = turn_context(&message, &Array::new(), &run.context(), &run.new_messages);
                if let Some(f) = &hooks.finish_turn {
                    call::call_until_abort(f, &run.config(), &[&turn, &run.signal], &run.signal)
                        .await?;
                }
                run.emit(events::ev_turn_end(&message, &Array::new()))
                    .await?;
                break 'run;
            }

            let tool_calls = tools::tool_calls_of(&message)?;
            let mut tool_results = Array::new();
            more_tool_calls = false;
            if tool_calls.length() > 0 {
                let batch: BoxFuture<'_, _> = Box::pin(tools::execute_tool_calls(
                    run,
                    &message,
                    &tool_calls,
                    stop == Stop::Length,
                ));
                let batch = batch.await?;
                more_tool_calls = !batch.terminate;
                // The batch's array is new and used nowhere else.
                tool_results = batch.messages;
                push_all(&run.messages()?, &tool_results);
                push_all(&run.new_messages, &tool_results);
            }

            let turn = turn_context(&message, &tool_results, &run.context(), &run.new_messages);
            let decision = match &hooks.finish_turn {
                Some(f) => {
                    call::call_until_abort(f, &run.config(), &[&turn, &run.signal], &run.signal)
                        .await?
                }
                None => JsValue::UNDEFINED,
            };
            last_turn = Some(turn);
            run.emit(events::ev_turn_end(&message, &tool_results))
                .await?;

            let action = view::field(&decision, |d| d.action())?;
            let action = Action::parse(action.as_string().as_deref());
            // An aborted run makes no further request (1.4.0 and 1.6.0 make one more, with the
            // aborted signal, after a batch the abort cut short); queued messages stay queued.
            if action == Action::End || run.aborted() {
                break 'run;
            }
            pending = run.poll(&hooks.get_steering).await?;
            explicit_continuation =
                turn::explicit_continuation(action, more_tool_calls, pending.length() > 0);
        }

        let follow_ups = run.poll(&hooks.get_follow_up).await?;
        explicit_continuation =
            match turn::when_idle(follow_ups.length() > 0, explicit_continuation) {
                Idle::FollowUps => {
                    pending = follow_ups;
                    false
                }
                Idle::ContinueOnce => false,
                Idle::Stop => break,
            };
    }
    if let Sink::Deliver(sink) = &run.sink {
        sink.ending();
    }
    run.emit(events::ev_agent_end(&run.new_messages)).await
}
