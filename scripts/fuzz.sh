#!/usr/bin/env bash
# Fuzzes the crate's pure parsers for about a minute each (FUZZ_SECONDS, default 60):
#   sse_framer       src/sse.rs SseFramer (chunking invariance + a plain model)
#   partial_json     src/json/partial.rs PartialJson (incremental == one-shot, == JSON.parse when complete)
#   schema_validate  src/json/schema validate_arguments (no panic, compiled == one-off, error layout)
#   tool_changes     src/transcript.rs tool_changes (the reference's formula)
#
# With a nightly toolchain, cargo-fuzz (libFuzzer, coverage-guided) runs the targets in fuzz/
# (cargo-fuzz is installed from crates.io if missing). Without nightly, the same checks run as
# a time-bounded random smoke: `FUZZ_SECONDS=… cargo test --release --test fuzz_regressions`.
# A crash input ends up in fuzz/artifacts/<target>/ (or the temp dir for the smoke run): keep it
# under fuzz/regressions/<target>/ so `cargo test` replays it from then on.
#
#   bash scripts/fuzz.sh                   all targets, 60 s each
#   FUZZ_SECONDS=10 bash scripts/fuzz.sh partial_json
#   FUZZ_ENGINE=smoke bash scripts/fuzz.sh  force the stable fallback
set -euo pipefail
cd "$(dirname "$0")/.."

SECONDS_EACH="${FUZZ_SECONDS:-60}"
TARGETS=("$@")
[ ${#TARGETS[@]} -eq 0 ] && TARGETS=(sse_framer partial_json schema_validate tool_changes)

engine="${FUZZ_ENGINE:-}"
if [ -z "$engine" ]; then
  if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
    engine=libfuzzer
  else
    engine=smoke
  fi
fi

if [ "$engine" = libfuzzer ] && ! cargo fuzz --version >/dev/null 2>&1; then
  echo "cargo-fuzz not found: installing it from crates.io"
  cargo install cargo-fuzz --locked || engine=smoke
fi

status=0
if [ "$engine" = libfuzzer ]; then
  node fuzz/seeds.mjs
  for t in "${TARGETS[@]}"; do
    echo "==== cargo fuzz: $t (${SECONDS_EACH}s)"
    if ! (cd fuzz && cargo +nightly fuzz run "$t" -- -max_total_time="$SECONDS_EACH" -max_len=8192 -print_final_stats=1 2>&1 | grep -E '^(#[0-9]+ +DONE|Done|stat::number_of_executed_units|SUMMARY|==[0-9]+== ERROR|thread .* panicked|Test unit written)|assert'); then
      :
    fi
    if [ -n "$(ls -A "fuzz/artifacts/$t" 2>/dev/null)" ]; then
      echo "!!!! $t: crash inputs in fuzz/artifacts/$t/ (keep them under fuzz/regressions/$t/)"
      status=1
    fi
  done
else
  echo "==== no nightly/cargo-fuzz: random smoke of the same checks, ${SECONDS_EACH}s per target"
  filter=()
  [ $# -gt 0 ] && filter=("$1")
  FUZZ_SECONDS="$SECONDS_EACH" cargo test --release --test fuzz_regressions -- --nocapture --test-threads=1 "${filter[@]}" || status=1
fi

# The kept crash inputs, replayed (cheap).
cargo test --test fuzz_regressions -q || status=1
exit $status
