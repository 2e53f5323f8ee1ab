#!/usr/bin/env bash
# `npm test`: every layer of tests, from a fresh clone. Each layer prints its
# own summary; the script stops at the first failing layer.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never

step() { printf '\n==== %s ====\n' "$*"; }

step "bootstrap"
bash scripts/bootstrap.sh

step "lint: cargo fmt --check, cargo clippy -D warnings (incl. the no-panic lints)"
cargo fmt --all -- --check
cargo clippy --lib --target wasm32-unknown-unknown -q -- -D warnings
cargo clippy --all-targets -q -- -D warnings

step "native: cargo test"
cargo test --lib --tests

step "build: npm run build (release pkg/)"
node scripts/build.mjs

step "wasm: wasm-bindgen-test in Node and headless Chromium"
bash scripts/test-wasm.sh

step "types: tsc --strict over the consumer files"
node tests/types/run.mjs

step "js: node --test against pkg/ (smoke, differential, proxy, robustness, server, browser, end to end)"
# Node 20's --test takes no globs: list the files.
mapfile -t files < <(find tests/js tests/server tests/browser tests/coding-agent -name '*.test.mjs' 2>/dev/null | sort)
node --test --test-concurrency=1 --test-timeout=300000 "${files[@]}"

step "e2e: the www/ chat demo in headless Chromium (installs www/ deps and builds it when needed)"
node --test --test-concurrency=1 --test-timeout=600000 tests/e2e/
