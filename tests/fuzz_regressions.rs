//! Fuzzing without nightly, and the fuzzers' crash inputs as regression tests.
//!
//! 1. Every file under `fuzz/regressions/<target>/` (inputs that once made a cargo-fuzz
//!    target fail; add new ones there, named after the bug) is replayed through the
//!    same checks the fuzz targets run (`fuzz/src/checks.rs`, included by path).
//! 2. A bounded random smoke run of each check on generated inputs, seeded from the
//!    project's vectors: a fraction of a second by default, so `cargo test` stays fast;
//!    `FUZZ_SECONDS=60 cargo test --release --test fuzz_regressions` runs each target for a
//!    minute (what `scripts/fuzz.sh` does where cargo-fuzz/nightly is unavailable), and
//!    `FUZZ_SEED` reproduces a run.
#![cfg(not(target_arch = "wasm32"))]

#[path = "../fuzz/src/checks.rs"]
mod checks;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Runs `f` on a thread with a large stack (deeply nested inputs are part of the corpus).
fn big_stack<F: FnOnce() + Send + 'static>(f: F) {
    let handle = std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(f)
        .expect("spawn");
    if let Err(panic) = handle.join() {
        std::panic::resume_unwind(panic);
    }
}

fn regression_dir(target: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/regressions")
        .join(target)
}

fn replay(target: &'static str, check: fn(&[u8])) {
    let Ok(entries) = std::fs::read_dir(regression_dir(target)) else {
        return;
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    for file in files {
        let data = std::fs::read(&file).expect("read regression input");
        let name = file.display().to_string();
        big_stack(move || {
            let outcome = std::panic::catch_unwind(|| check(&data));
            assert!(
                outcome.is_ok(),
                "regression input {name} fails its check again"
            );
        });
    }
}

// ---- random smoke ---------------------------------------------------------------------------

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

fn budget() -> Duration {
    match std::env::var("FUZZ_SECONDS")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
    {
        Some(s) => Duration::from_secs_f64(s),
        None => Duration::from_millis(300),
    }
}

fn seed() -> u64 {
    std::env::var("FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x9E37_79B9_7F4A_7C15)
}

/// Mutates `base`: truncation, byte flips, insertion of interesting pieces, duplication.
fn mutate(rng: &mut Rng, base: &[u8], pieces: &[&[u8]]) -> Vec<u8> {
    let mut v = base.to_vec();
    for _ in 0..=rng.below(4) {
        match rng.below(5) {
            0 if !v.is_empty() => {
                let n = rng.below(v.len());
                v.truncate(n);
            }
            1 if !v.is_empty() => {
                let i = rng.below(v.len());
                v[i] = rng.next() as u8;
            }
            2 => {
                let i = rng.below(v.len() + 1);
                let p = rng.pick(pieces);
                v.splice(i..i, p.iter().copied());
            }
            3 if !v.is_empty() && v.len() < 2048 => {
                let a = rng.below(v.len());
                let b = a + rng.below(v.len() - a);
                let chunk = v[a..b].to_vec();
                v.splice(b..b, chunk);
            }
            _ => v.push(rng.next() as u8),
        }
    }
    v
}

fn smoke(
    target: &'static str,
    seeds: Vec<Vec<u8>>,
    pieces: &'static [&'static [u8]],
    check: fn(&[u8]),
) {
    let budget = budget();
    let mut rng = Rng(seed() ^ (target.len() as u64 * 0x1000_0001));
    assert!(
        seeds.len() > 1 || target == "sse_framer" || target == "tool_changes",
        "{target}: the seed vectors were not found"
    );
    big_stack(move || {
        let start = Instant::now();
        let mut runs = 0u64;
        while start.elapsed() < budget || runs < 50 {
            let base = rng.pick(&seeds).clone();
            let input = mutate(&mut rng, &base, pieces);
            let outcome = std::panic::catch_unwind(|| check(&input));
            if outcome.is_err() {
                let dir = std::env::temp_dir().join(format!("fuzz-smoke-{target}"));
                let _ = std::fs::create_dir_all(&dir);
                let path = dir.join(format!("crash-{runs}"));
                let _ = std::fs::write(&path, &input);
                panic!("{target}: input {input:?} fails (saved to {}); keep it under fuzz/regressions/{target}/", path.display());
            }
            runs += 1;
        }
        eprintln!(
            "{target}: {runs} random inputs in {:?} ({} seeds)",
            start.elapsed(),
            seeds.len()
        );
    });
}

fn fixture(path: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap_or_default()
}

/// `"doc":"..."` strings of the partial-JSON fixture (decoded with the crate's own parser).
fn partial_docs() -> Vec<Vec<u8>> {
    let text = fixture("tests/fixtures/partial_json/vectors.json");
    let mut p = pi_agent_wasm::json::partial::PartialJson::new();
    p.push(&text);
    let mut out = vec![b"\x05{\"a\": [1, {\"b\": \"c\"}], \"n\": -1.5e3}".to_vec()];
    if let Some(docs) = p.to_value().get("docs").and_then(|d| d.as_array().cloned()) {
        for (i, d) in docs.iter().enumerate() {
            if let Some(s) = d.get("doc").and_then(|s| s.as_str()) {
                let mut v = vec![i as u8];
                v.extend_from_slice(s.as_bytes());
                out.push(v);
            }
        }
    }
    out
}

fn json_text(v: &pi_agent_wasm::json::Value) -> String {
    use pi_agent_wasm::json::Value;
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) if n.is_finite() => format!("{n}"),
        Value::Number(_) => "null".into(),
        Value::String(s) => json_string(s),
        Value::Array(a) => format!(
            "[{}]",
            a.iter().map(json_text).collect::<Vec<_>>().join(",")
        ),
        Value::Object(m) => format!(
            "{{{}}}",
            m.iter()
                .map(|(k, v)| format!("{}:{}", json_string(k), json_text(v)))
                .collect::<Vec<_>>()
                .join(",")
        ),
    }
}

fn json_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `schema \0 input` for every schema vector.
fn schema_seeds() -> Vec<Vec<u8>> {
    let text = fixture("tests/fixtures/schema/vectors.json");
    let mut p = pi_agent_wasm::json::partial::PartialJson::new();
    p.push(&text);
    let mut out = vec![
        b"{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"number\"}}}\0{\"a\":\"5\"}"
            .to_vec(),
    ];
    if let Some(list) = p.to_value().as_array() {
        for v in list {
            if let (Some(schema), Some(input)) = (v.get("schema"), v.get("input")) {
                out.push(format!("{}\0{}", json_text(schema), json_text(input)).into_bytes());
            }
        }
    }
    out
}

const SSE_PIECES: &[&[u8]] = &[
    b"data: ",
    b"data:",
    b"\n",
    b"\r\n",
    b": c\n",
    b"\xEF\xBB\xBF",
    b"\xE2\x82",
    b"\xF0\x9F\x98\x80",
    "\u{a0}\u{2028}".as_bytes(),
    b"{\"type\":\"start\"}",
    b"{\"type\":\"text_delta\",\"contentIndex\":0,\"delta\":\"a\"}",
    b"\"thinking_delta\"",
    b"\"contentIndex\":",
    b"\\u00e9\\ud83d\\ude00",
    b"\\ud800",
    b"\\\"",
];
const JSON_PIECES: &[&[u8]] = &[
    b"{",
    b"}",
    b"[",
    b"]",
    b"\"",
    b"\\",
    b"\\u",
    b"\\ud83d",
    b":",
    b",",
    b"1e",
    b"-0.",
    b"tru",
    b"nul",
    b"\n",
    b" ",
    b"\"__proto__\"",
    b"\x01",
];
const SCHEMA_PIECES: &[&[u8]] = &[
    b"\"type\":",
    b"\"string\"",
    b"\"integer\"",
    b"\"anyOf\":[",
    b"\"$ref\":\"#\"",
    b"\"pattern\":\"(a|b)+$\"",
    b"\"format\":\"email\"",
    b"\"~kind\":\"Number\"",
    b"\"items\":",
    b"null",
    b"\"1\"",
    b"{}",
    b",",
];
const TOOL_PIECES: &[&[u8]] = &[b"\xFF", b"\x00\x04\x08", b"\x05\x06\x07"];

#[test]
fn sse_framer_regressions_and_smoke() {
    replay("sse_framer", checks::sse_framer);
    let seeds = vec![
        b"\x11data: {\"a\":1}\n\ndata: x \r\n: c\ndata: last".to_vec(),
        b"\x03\xEF\xBB\xBFdata: a\n".to_vec(),
        b"\x07data: {\"type\":\"text_delta\",\"contentIndex\":0,\"delta\":\"a\\n\\u00e9\"}\n\ndata: { \"delta\": \"\\ud83d\\ude00\", \"type\": \"thinking_delta\", \"contentIndex\": 12 }\n".to_vec(),
    ];
    smoke("sse_framer", seeds, SSE_PIECES, checks::sse_framer);
}

#[test]
fn partial_json_regressions_and_smoke() {
    replay("partial_json", checks::partial_json);
    smoke(
        "partial_json",
        partial_docs(),
        JSON_PIECES,
        checks::partial_json,
    );
}

#[test]
fn schema_validate_regressions_and_smoke() {
    replay("schema_validate", checks::schema_validate);
    smoke(
        "schema_validate",
        schema_seeds(),
        SCHEMA_PIECES,
        checks::schema_validate,
    );
}

#[test]
fn tool_changes_regressions_and_smoke() {
    replay("tool_changes", checks::tool_changes);
    smoke(
        "tool_changes",
        vec![vec![0, 4, 9, 13, 0xFF, 4, 0, 14, 0xFF, 5, 1]],
        TOOL_PIECES,
        checks::tool_changes,
    );
}

#[test]
fn deep_nesting_does_not_overflow() {
    // Deeper than any fuzz input: the parsers are iterative; only the checks' own
    // recursion needs the big stack.
    big_stack(|| {
        let mut p = pi_agent_wasm::json::partial::PartialJson::new();
        p.push(&"[".repeat(200_000));
        p.push(&"{\"a\":".repeat(1000));
        let _ = p.root();
        let mut f = pi_agent_wasm::sse::SseFramer::new();
        let mut out = Vec::new();
        f.push(&b"data: ".repeat(100_000), &mut out);
        f.finish(&mut out);
        assert_eq!(out.len(), 1);
    });
}
