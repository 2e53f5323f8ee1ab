#!/usr/bin/env bash
# wasm-bindgen-test: tests/wasm_node.rs runs in Node, tests/wasm_browser.rs in
# headless Chromium.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner
export WASM_BINDGEN_TEST_TIMEOUT=120
# `--features std`: the harness links std, whose panic handler replaces src/panic.rs.
cargo test --target wasm32-unknown-unknown --features std --test wasm_node
# In a page: served by wasm-bindgen-test-runner, run in headless Chromium by
# scripts/wasm-browser-runner.mjs (why not the runner's chromedriver mode: see there).
CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER="node $PWD/scripts/wasm-browser-runner.mjs" \
  cargo test --target wasm32-unknown-unknown --features std --test wasm_browser
