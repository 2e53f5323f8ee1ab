//! wasm-bindgen tests that run in headless Chromium (through chromedriver).
#![cfg(target_arch = "wasm32")]

mod common;

use common::*;
use wasm_bindgen::prelude::*;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen_test]
async fn a_prompt_produces_the_canonical_event_order_in_a_page() {
    assert!(js(
        "",
        "return typeof window === 'object' && typeof document === 'object';"
    )
    .call0(&JsValue::NULL)
    .unwrap()
    .is_truthy());
    assert_eq!(prompt_event_types().await, CANONICAL);
}
