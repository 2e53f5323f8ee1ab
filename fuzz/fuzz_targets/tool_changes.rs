#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    pi_agent_wasm_fuzz::checks::tool_changes(data);
});
