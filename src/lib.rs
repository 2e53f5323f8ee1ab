//! pi-agent-wasm: the agent loop of `@earendil-works/pi-agent-core` 1.4.0 in Rust.
//!
//! The crate has two halves. Pure modules (`json`, `sse`, `transcript`, `queue`)
//! hold the parsing, validation and bookkeeping, with no JavaScript in sight, and
//! are tested natively. The rest drives JavaScript values: `js` is the binding
//! layer (views over JS objects, calling user functions, errors), `agent_loop` is
//! the stateless loop, `agent` the stateful `Agent`, `proxy` the built-in
//! `streamProxy`.

pub mod json;
pub mod sse;
