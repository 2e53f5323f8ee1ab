//! Scenarios shared by the Node and Chromium wasm test binaries. They drive the
//! crate's exported functions exactly as JS would, with small JS helpers
//! compiled from source text.

#![allow(dead_code)]

use js_sys::{Array, Function, Promise, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

pub fn js(args: &str, body: &str) -> Function {
    Function::new_with_args(args, body)
}

pub fn get(v: &JsValue, key: &str) -> JsValue {
    Reflect::get(v, &JsValue::from_str(key)).unwrap()
}

pub async fn wait(p: JsValue) -> Result<JsValue, JsValue> {
    JsFuture::from(Promise::resolve(&p)).await
}

/// A stream function answering each request with the next scripted text reply,
/// built on the package's own `createAssistantMessageEventStream`.
pub fn scripted_stream_fn(replies: &[&str]) -> JsValue {
    let replies: Array = replies.iter().map(|s| JsValue::from_str(s)).collect();
    let factory = js(
        "make, replies",
        r#"
        let i = 0;
        return (model, context, options) => {
          const stream = make();
          const text = replies[i++] ?? "";
          const partial = { role: "assistant", content: [], api: model.api, provider: model.provider, model: model.id,
            usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
            stopReason: "stop", timestamp: Date.now() };
          queueMicrotask(() => {
            stream.push({ type: "start", partial });
            partial.content = [{ type: "text", text: "" }];
            stream.push({ type: "text_start", contentIndex: 0, partial });
            for (const ch of text) {
              partial.content[0].text += ch;
              stream.push({ type: "text_delta", contentIndex: 0, delta: ch, partial });
            }
            stream.push({ type: "text_end", contentIndex: 0, content: text, partial });
            stream.push({ type: "done", reason: "stop", message: partial });
          });
          return stream;
        };
        "#,
    );
    let make =
        Closure::<dyn Fn() -> JsValue>::new(pi_agent_wasm_glue::create_stream).into_js_value();
    factory.call2(&JsValue::NULL, &make, &replies).unwrap()
}

pub mod pi_agent_wasm_glue {
    use wasm_bindgen::prelude::*;
    pub fn create_stream() -> JsValue {
        pi_agent_wasm::js::glue::create_assistant_message_event_stream()
    }
}

pub fn model() -> JsValue {
    js("", r#"return { id: "m", name: "m", api: "test", provider: "test", baseUrl: "", reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1000, maxTokens: 100 };"#)
        .call0(&JsValue::NULL)
        .unwrap()
}

/// Runs one prompt through `runAgentLoop` and returns the event types in order.
pub async fn prompt_event_types() -> Vec<String> {
    let events = Array::new();
    let ev = events.clone();
    let emit = Closure::<dyn FnMut(JsValue)>::new(move |e: JsValue| {
        ev.push(&get(&e, "type"));
    })
    .into_js_value();
    let prompts = js(
        "",
        r#"return [{ role: "user", content: "hi", timestamp: 1 }];"#,
    )
    .call0(&JsValue::NULL)
    .unwrap();
    let context = js("", "return { messages: [], tools: [] };")
        .call0(&JsValue::NULL)
        .unwrap();
    let config = js("model", "return { model, convertToLlm: (m) => m };")
        .call1(&JsValue::NULL, &model())
        .unwrap();
    let p = pi_agent_wasm::api::run_agent_loop(
        prompts,
        context,
        config,
        emit,
        JsValue::UNDEFINED,
        scripted_stream_fn(&["ok"]),
    );
    wait(p.into()).await.unwrap();
    events.iter().map(|v| v.as_string().unwrap()).collect()
}

pub const CANONICAL: &[&str] = &[
    "agent_start",
    "turn_start",
    "message_start",
    "message_end",
    "message_start",
    "message_update",
    "message_update",
    "message_update",
    "message_update",
    "message_end",
    "turn_end",
    "agent_end",
];
