#!/usr/bin/env bash
# wasm-bindgen-test: tests/wasm_node.rs runs in Node, tests/wasm_browser.rs in
# headless Chromium through chromedriver (flags in webdriver.json).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner
export CHROMEDRIVER=/usr/bin/chromedriver
export WASM_BINDGEN_TEST_TIMEOUT=120
cargo test --target wasm32-unknown-unknown --test wasm_node
cargo test --target wasm32-unknown-unknown --test wasm_browser
