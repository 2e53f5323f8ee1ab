//! `streamProxy`: a stream function that POSTs the request to the
//! app's server and rebuilds the assistant message from its SSE events.
//!
//! Bytes are framed by the pure `sse` module; tool-call arguments are parsed
//! incrementally by `json::partial` and mirrored into JS objects with
//! structural sharing (only the path to what changed gets new objects, and a
//! growing string is extended rather than rebuilt), so a long argument costs
//! the same per delta at the end as at the start.

use crate::prelude::*;
use js_sys::{Array, JsString, Object, Promise, Uint8Array};
use wasm_bindgen::prelude::*;

use crate::agent_loop::EventStreamHandle;
use crate::js::errors;
use crate::js::glue;
use crate::js::settle::settle;
use crate::js::values::{self, js_string};
use crate::js::view::{self, view};
use crate::json::partial::{NodeId, NodeKind, PartialJson};
use crate::sse::{self, DataLine, DeltaKind, SseFramer};

#[wasm_bindgen(module = "/src/js/proxy.js")]
extern "C" {
    #[wasm_bindgen(js_name = proxyPartial, catch)]
    fn proxy_partial(model: &JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = proxyFetch, catch)]
    fn proxy_fetch(
        model: &JsValue,
        context: &JsValue,
        options: &JsValue,
    ) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = proxyErrorMessage)]
    fn proxy_error_message(response: &JsValue) -> Promise;
    #[wasm_bindgen(js_name = abortWatch)]
    fn abort_watch(signal: &JsValue) -> AbortWatch;
    type AbortWatch;
    #[wasm_bindgen(method, setter)]
    fn set_reader(this: &AbortWatch, reader: &JsValue);
    #[wasm_bindgen(method)]
    fn remove(this: &AbortWatch);
    #[wasm_bindgen(js_name = bodyReader, catch)]
    fn body_reader(response: &JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = proxyLine, catch)]
    fn proxy_line(text: &str, partial: &JsValue, stream: &JsValue) -> Result<JsValue, JsValue>;
    /// Applies and pushes queued text/thinking deltas (see `Deltas`).
    #[wasm_bindgen(js_name = proxyDeltas, catch)]
    fn proxy_deltas(
        text: &[u8],
        tape: &[u32],
        partial: &JsValue,
        stream: &JsValue,
    ) -> Result<(), JsValue>;
    #[wasm_bindgen(js_name = toolcallBlock, catch)]
    fn toolcall_block(partial: &JsValue, index: &JsValue) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = toolcallDelta, catch)]
    fn toolcall_delta(
        partial: &JsValue,
        index: &JsValue,
        block: &JsValue,
        delta: &JsValue,
        args: &JsValue,
    ) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = failPartial)]
    fn fail_partial(partial: &JsValue, reason: &str, message: &JsValue) -> JsValue;
    #[wasm_bindgen(js_name = newObject)]
    fn new_object() -> JsValue;
    #[wasm_bindgen(js_name = newArray)]
    fn new_array() -> Array;
    #[wasm_bindgen(js_name = cloneArray)]
    fn clone_array(array: &JsValue) -> Array;
    #[wasm_bindgen(js_name = cloneObject)]
    fn clone_object(object: &JsValue) -> JsValue;
}

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_name = Object)]
    type ProxyView;
    #[wasm_bindgen(method, getter, structural, catch)]
    fn signal(this: &ProxyView) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, getter, structural, catch)]
    fn ok(this: &ProxyView) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, getter, structural, catch, js_name = contentIndex)]
    fn content_index(this: &ProxyView) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, getter, structural, catch)]
    fn delta(this: &ProxyView) -> Result<JsValue, JsValue>;
    #[wasm_bindgen(method, catch, js_name = read)]
    fn read(this: &ProxyView) -> Result<Promise, JsValue>;
}

const ABORTED: &str = "Request aborted by user";
const CLOSED_EARLY: &str = "Connection closed by proxy server before the response completed";

/// Streams a response through the app's proxy server, so the browser never
/// holds a provider key. Returns an `AssistantMessageEventStream` at once;
/// failures become a final `error` event, never a thrown error.
#[wasm_bindgen(js_name = streamProxy, unchecked_return_type = "AssistantMessageEventStream")]
pub fn stream_proxy(
    #[wasm_bindgen(unchecked_param_type = "Model<any>")] model: JsValue,
    #[wasm_bindgen(unchecked_param_type = "TranscriptContext")] context: JsValue,
    #[wasm_bindgen(unchecked_param_type = "ProxyStreamOptions")] options: JsValue,
) -> JsValue {
    let stream = glue::create_assistant_message_event_stream();
    let model_object: JsValue = if view::is_object(&model) {
        model.clone()
    } else {
        Object::new().into()
    };
    // Reading the model or the signal may throw (getters): the stream then ends
    // with that error instead of never ending.
    let (partial, early) = match proxy_partial(&model_object) {
        Ok(p) => (p, None),
        Err(e) => (
            proxy_partial(&Object::new().into()).unwrap_or(JsValue::UNDEFINED),
            Some(e),
        ),
    };
    let (signal, early) = match if view::is_nullish(&options) {
        Ok(JsValue::UNDEFINED)
    } else {
        options.unchecked_ref::<ProxyView>().signal()
    } {
        Ok(signal) => (signal, early),
        Err(e) => (JsValue::UNDEFINED, early.or(Some(e))),
    };
    let s = stream.clone();
    crate::js::spawn::spawn(Box::pin(async move {
        let handle: &EventStreamHandle = s.unchecked_ref();
        let mut state = ProxyState::default();
        let outcome = match early {
            Some(e) => Err(e),
            None => {
                read_stream(
                    &model, &context, &options, &partial, &signal, handle, &mut state,
                )
                .await
            }
        };
        let failure = match outcome {
            Ok(()) if state.saw_terminal => None,
            Ok(()) => Some(("error", JsValue::from_str(CLOSED_EARLY))),
            Err(error) => {
                let reason = if crate::agent_loop::is_aborted(&signal) {
                    "aborted"
                } else {
                    "error"
                };
                let text = errors::err_text(&error)
                    .unwrap_or_else(|_| JsValue::from_str(crate::agent_loop::UNDESCRIBED));
                Some((reason, text))
            }
        };
        if let Some((reason, text)) = failure {
            handle.push(&fail_partial(&partial, reason, &text));
        }
        handle.end(&JsValue::UNDEFINED);
    }));
    stream
}

#[derive(Default)]
struct ProxyState {
    saw_terminal: bool,
    /// Argument parsers of the open tool calls, by content index.
    args: Vec<(u32, ArgsMirror)>,
}

async fn read_stream(
    model: &JsValue,
    context: &JsValue,
    options: &JsValue,
    partial: &JsValue,
    signal: &JsValue,
    stream: &EventStreamHandle,
    state: &mut ProxyState,
) -> Result<(), JsValue> {
    if !view::is_object(options) {
        return Err(errors::type_error(
            "streamProxy(model, context, options): options must be an object",
        ));
    }
    let watch = abort_watch(signal);
    let result = fetch_and_read(
        model, context, options, partial, signal, stream, state, &watch,
    )
    .await;
    watch.remove();
    result
}

#[allow(clippy::too_many_arguments)]
async fn fetch_and_read(
    model: &JsValue,
    context: &JsValue,
    options: &JsValue,
    partial: &JsValue,
    signal: &JsValue,
    stream: &EventStreamHandle,
    state: &mut ProxyState,
    watch: &AbortWatch,
) -> Result<(), JsValue> {
    let response = settle(Promise::resolve(&proxy_fetch(model, context, options)?).into()).await?;
    if !response.unchecked_ref::<ProxyView>().ok()?.is_truthy() {
        let message = settle(proxy_error_message(&response).into()).await?;
        return Err(errors::error(&message.as_string().unwrap_or_default()));
    }
    let reader = body_reader(&response)?;
    watch.set_reader(&reader);
    read_body(&reader, partial, signal, stream, state).await
}

async fn read_body(
    reader: &JsValue,
    partial: &JsValue,
    signal: &JsValue,
    stream: &EventStreamHandle,
    state: &mut ProxyState,
) -> Result<(), JsValue> {
    let mut framer = SseFramer::new();
    let mut deltas = Deltas::default();
    let reader_view: &ProxyView = reader.unchecked_ref();
    loop {
        let step = settle(reader_view.read()?.into()).await?;
        let done = view(&step).done()?.is_truthy();
        // Checked after every read, the last one included.
        if crate::agent_loop::is_aborted(signal) {
            return Err(errors::error(ABORTED));
        }
        if done {
            break;
        }
        let chunk = view(&step)
            .value()?
            .dyn_into::<Uint8Array>()
            .map_err(|_| errors::type_error("the response body yielded a non-byte chunk"))?;
        let bytes = chunk.to_vec();
        framer.push_with(&bytes, |line| {
            on_line(line, &mut deltas, partial, stream, state)
        })?;
        deltas.flush(partial, stream)?;
    }
    framer.finish_with(|line| on_line(line, &mut deltas, partial, stream, state))?;
    deltas.flush(partial, stream)
}

/// Text and thinking deltas recognised in Rust (`sse::delta_line`), applied and
/// pushed in one JS call per chunk: their texts go across as one UTF-8 buffer,
/// decoded once and sliced in JS, so each delta costs no JSON parse and no
/// boundary crossing of its own.
#[derive(Default)]
struct Deltas {
    text: Vec<u8>,
    /// Per delta: `index << 1 | thinking`, then the end of its text in UTF-16 units.
    tape: Vec<u32>,
    units: u32,
}

impl Deltas {
    fn flush(&mut self, partial: &JsValue, stream: &EventStreamHandle) -> Result<(), JsValue> {
        if self.tape.is_empty() {
            return Ok(());
        }
        let done = proxy_deltas(&self.text, &self.tape, partial, stream.as_ref());
        self.text.clear();
        self.tape.clear();
        self.units = 0;
        done
    }
}

/// Lines keep their order: queued deltas are applied before any other line.
fn on_line(
    line: DataLine,
    deltas: &mut Deltas,
    partial: &JsValue,
    stream: &EventStreamHandle,
    state: &mut ProxyState,
) -> Result<(), JsValue> {
    if let Some(d) = sse::delta_line(line.raw(), &mut deltas.text) {
        // Lengths in wasm32 memory fit in u32; the index has at most 9 digits.
        deltas.units += d.units as u32;
        let thinking = u32::from(d.kind == DeltaKind::Thinking);
        deltas.tape.push((d.index << 1) | thinking);
        deltas.tape.push(deltas.units);
        return Ok(());
    }
    let Some(text) = line.text() else {
        return Ok(());
    };
    deltas.flush(partial, stream)?;
    process_line(&text, partial, stream, state)
}

fn process_line(
    data: &str,
    partial: &JsValue,
    stream: &EventStreamHandle,
    state: &mut ProxyState,
) -> Result<(), JsValue> {
    let r = proxy_line(data, partial, stream.as_ref())?;
    if let Some(code) = r.as_f64() {
        if code == 2.0 {
            state.saw_terminal = true;
        }
        return Ok(());
    }
    if view::is_str(&view(&r).kind()?, "toolcall_delta") {
        let out = toolcall_delta_event(&r, partial, state)?;
        stream.push(&out);
    } else if let Some(i) = index_of(&r) {
        // toolcall_start or toolcall_end: the next arguments start afresh.
        state.args.retain(|(k, _)| *k != i);
    }
    Ok(())
}

fn index_of(event: &JsValue) -> Option<u32> {
    let i = event
        .unchecked_ref::<ProxyView>()
        .content_index()
        .ok()?
        .as_f64()?;
    (i >= 0.0 && crate::float::fract(i) == 0.0 && i <= u32::MAX as f64).then_some(i as u32)
}

fn toolcall_delta_event(
    event: &JsValue,
    partial: &JsValue,
    state: &mut ProxyState,
) -> Result<JsValue, JsValue> {
    let e: &ProxyView = event.unchecked_ref();
    let index = e.content_index()?;
    let block = toolcall_block(partial, &index)?;
    let delta = e.delta()?;
    // `partialJson += delta`, with JavaScript's string conversion of odd values.
    let text = match delta.as_string() {
        Some(text) => text,
        None => js_string(&delta)?,
    };
    // A parser starts from the block's `partialJson` as it stands (`""` after
    // `toolcall_start`; a delta after `toolcall_end` fails in `toolcall_block`).
    let prior = || {
        let text = js_sys::Reflect::get(&block, &JsValue::from_str("partialJson"))
            .unwrap_or(JsValue::UNDEFINED);
        match text.as_string() {
            Some(text) => Ok(text),
            None => js_string(&text),
        }
    };
    // A non-integer index cannot be tracked incrementally; parse from scratch.
    let mut scratch = None;
    let mirror = match index_of(event) {
        Some(i) => {
            if !state.args.iter().any(|(k, _)| *k == i) {
                state.args.push((i, ArgsMirror::starting_with(&prior()?)));
            }
            state.args.iter_mut().find(|(k, _)| *k == i).map(|(_, m)| m)
        }
        None => Some(scratch.insert(ArgsMirror::starting_with(&prior()?))),
    };
    let args = match mirror {
        Some(mirror) => {
            mirror.parser.push(&text);
            mirror.arguments()
        }
        None => JsValue::UNDEFINED,
    };
    toolcall_delta(partial, &index, &block, &delta, &args)
}

/// One tool call's parser and the JS objects last built from it, by node.
#[derive(Default)]
struct ArgsMirror {
    parser: PartialJson,
    /// By node id (ids are dense arena indices).
    built: Vec<Option<Built>>,
}

struct Built {
    version: u32,
    value: JsValue,
    /// For strings: how many bytes of the node's text `value` holds.
    text_len: usize,
    /// For containers: the child ids `value` was built from, in order.
    children: Vec<NodeId>,
}

/// How a container changed since it was last built.
enum Patch {
    /// Copy the previous JS container (a fast native copy) and set these
    /// positions: the tail that changed or was appended.
    Tail(Vec<(usize, NodeId)>),
    /// Build it from scratch (first build, a removed member, a replaced id).
    Full,
}

impl ArgsMirror {
    fn starting_with(prior: &str) -> Self {
        let mut m = ArgsMirror::default();
        m.parser.push(prior);
        m
    }

    /// `parseStreamingJson(text) || {}`, rebuilt only where it changed.
    fn arguments(&mut self) -> JsValue {
        let value = match self.parser.root() {
            Some(root) => self.build(root, 0),
            None => JsValue::UNDEFINED,
        };
        if value.is_truthy() {
            value
        } else {
            new_object()
        }
    }

    /// Compares a container's children with those it was last built from.
    /// Only members the last push touched (`version == generation`) or appended
    /// are rebuilt, so a wide container costs one native copy per delta, not one
    /// boundary crossing per member.
    fn patch(&self, id: NodeId, ids: &[NodeId]) -> Patch {
        let Some(prev) = self.built_of(id) else {
            return Patch::Full;
        };
        if prev.children.len() > ids.len() {
            return Patch::Full;
        }
        let generation = self.parser.generation();
        let mut changed = Vec::new();
        for (i, child) in ids.iter().enumerate() {
            match prev.children.get(i) {
                Some(old) if old != child => return Patch::Full,
                Some(_) => {
                    if self
                        .parser
                        .node(*child)
                        .is_some_and(|n| n.version == generation)
                    {
                        changed.push((i, *child));
                    }
                }
                None => changed.push((i, *child)),
            }
        }
        Patch::Tail(changed)
    }

    fn build(&mut self, id: NodeId, depth: u32) -> JsValue {
        let Some(node) = self.parser.node(id) else {
            return JsValue::UNDEFINED;
        };
        if let Some(b) = self.built_of(id) {
            if b.version == node.version {
                return b.value.clone();
            }
        }
        let version = node.version;
        let mut children = Vec::new();
        let (value, text_len) = match &node.kind {
            NodeKind::Null => (JsValue::NULL, 0),
            NodeKind::Bool(b) => (JsValue::from_bool(*b), 0),
            NodeKind::Number(n) => (JsValue::from_f64(*n), 0),
            NodeKind::String(text) => {
                let grown = self.built_of(id).and_then(|b| {
                    let suffix = text.get(b.text_len..)?;
                    let prev: &JsString = b.value.dyn_ref()?;
                    Some(JsValue::from(prev.concat(&JsValue::from_str(suffix))))
                });
                (grown.unwrap_or_else(|| JsValue::from_str(text)), text.len())
            }
            NodeKind::Array(_) | NodeKind::Object(_) => {
                let obj = matches!(node.kind, NodeKind::Object(_));
                children = match &node.kind {
                    NodeKind::Array(items) => items.clone(),
                    NodeKind::Object(members) => members.iter().map(|(_, v)| *v).collect(),
                    _ => Vec::new(),
                };
                // Arrays and objects share one path: a fresh container is filled
                // in order, a copied one gets its changed tail.
                let (container, todo) = match self.patch(id, &children) {
                    Patch::Tail(changed) => {
                        let prev = self.previous_value(id);
                        let copy = if obj {
                            clone_object(&prev)
                        } else {
                            clone_array(&prev).into()
                        };
                        (copy, changed)
                    }
                    Patch::Full => (
                        if obj {
                            new_object()
                        } else {
                            new_array().into()
                        },
                        children.iter().copied().enumerate().collect(),
                    ),
                };
                if depth < MAX_DEPTH {
                    for (i, child) in todo {
                        let key = if obj { self.member_key(id, i) } else { None };
                        let v = self.build(child, depth + 1);
                        match key {
                            Some(key) => values::set_key(&container, &key, &v),
                            None if !obj => container.unchecked_ref::<Array>().set(i as u32, v),
                            None => {}
                        }
                    }
                }
                (container, 0)
            }
        };
        let at = id as usize;
        while self.built.len() <= at {
            self.built.push(None);
        }
        if let Some(slot) = self.built.get_mut(at) {
            *slot = Some(Built {
                version,
                value: value.clone(),
                text_len,
                children,
            });
        }
        value
    }

    /// The JS value last built for `id` (`undefined` if none).
    fn previous_value(&self, id: NodeId) -> JsValue {
        self.built_of(id)
            .map(|b| b.value.clone())
            .unwrap_or(JsValue::UNDEFINED)
    }

    fn built_of(&self, id: NodeId) -> Option<&Built> {
        self.built.get(id as usize).and_then(Option::as_ref)
    }

    fn member_key(&self, id: NodeId, index: usize) -> Option<String> {
        match &self.parser.node(id)?.kind {
            NodeKind::Object(members) => members.get(index).map(|(k, _)| k.clone()),
            _ => None,
        }
    }
}

/// Nesting deeper than this is left empty rather than risk the stack.
const MAX_DEPTH: u32 = 512;
