//! wasm-bindgen tests that run in Node (the default target of the runner).
#![cfg(target_arch = "wasm32")]

mod common;

use common::*;
use pi_agent_wasm::js::convert::{to_js, to_value};
use wasm_bindgen::prelude::*;
use wasm_bindgen_test::*;

#[wasm_bindgen_test]
async fn a_prompt_produces_the_canonical_event_order() {
    assert_eq!(prompt_event_types().await, CANONICAL);
}

#[wasm_bindgen_test]
fn proto_keys_stay_data_and_never_reach_a_prototype() {
    let parsed = js("", r#"return JSON.parse('{"__proto__": {"polluted": true}, "constructor": {"prototype": {"x": 1}}}');"#)
        .call0(&JsValue::NULL)
        .unwrap();
    let value = to_value(&parsed, &[]).ok().unwrap();
    let back = to_js(&value);
    let check = js(
        "o",
        r#"return Object.getPrototypeOf(o) === Object.prototype && ({}).polluted === undefined
            && Object.keys(o).join() === "__proto__,constructor" && o.__proto__ !== Object.prototype;"#,
    );
    assert_eq!(check.call1(&JsValue::NULL, &back).unwrap(), JsValue::TRUE);
}

#[wasm_bindgen_test]
fn functions_and_cycles_are_reported_not_panicked() {
    let f = js("", "return { a: () => 1 };")
        .call0(&JsValue::NULL)
        .unwrap();
    assert!(to_value(&f, &[]).is_err());
    let cyclic = js("", "const o = {}; o.self = o; return o;")
        .call0(&JsValue::NULL)
        .unwrap();
    assert!(to_value(&cyclic, &[]).is_err());
}

#[wasm_bindgen_test]
async fn continue_refuses_an_assistant_tail_with_the_reference_error() {
    let context = js(
        "",
        r#"return { messages: [{ role: "assistant", content: [], timestamp: 1 }] };"#,
    )
    .call0(&JsValue::NULL)
    .unwrap();
    let err = pi_agent_wasm::api::agent_loop_continue(
        context,
        JsValue::UNDEFINED,
        JsValue::UNDEFINED,
        JsValue::UNDEFINED,
    )
    .err()
    .unwrap();
    assert_eq!(
        get(&err, "message"),
        JsValue::from_str("Cannot continue from message role: assistant")
    );
}
