// Generates tests/fixtures/partial_json/vectors.json: for every prefix (in code points)
// of a set of JSON-looking documents, what the reference parseStreamingJson
// (@earendil-works/pi-ai 1.4.0, which uses partial-json 0.1.7) returns.
//
// Usage (the reference is resolved from the current directory's node_modules; PJ_RANDOM,
// PJ_MUTANTS and PJ_SEED change how many seeded random / mutated documents are added):
//   mkdir -p /tmp/pj && cd /tmp/pj && npm init -y && npm i @earendil-works/pi-ai@1.4.0 partial-json@0.1.7
//   node /path/to/repo/scripts/gen-partial-json-vectors.mjs [/path/to/repo/tests/fixtures/partial_json/vectors.json]
//
// Fixture format (one document per line):
//   {"docs":[{"name":..., "garbage":bool, "doc":text, "steps":[[n, value], ...]}, ...]}
// `steps` lists the output for prefix lengths n where it changes (n = 0 first); it holds
// until the next step. Values are JSON with non-finite numbers written as the strings
// "\u0000NaN", "\u0000Infinity", "\u0000-Infinity". Lone surrogates stay as \uXXXX escapes.

import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL, fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const out = resolve(process.argv[2] ?? join(here, "../tests/fixtures/partial_json/vectors.json"));
const nm = join(process.cwd(), "node_modules");
const piAiPkg = JSON.parse(readFileSync(join(nm, "@earendil-works/pi-ai/package.json"), "utf8"));
const pjPkg = JSON.parse(readFileSync(join(nm, "partial-json/package.json"), "utf8"));
if (piAiPkg.version !== "1.4.0" || pjPkg.version !== "0.1.7") {
  throw new Error(`need pi-ai 1.4.0 and partial-json 0.1.7, found ${piAiPkg.version} / ${pjPkg.version}`);
}
const { parseStreamingJson } = await import(pathToFileURL(join(nm, "@earendil-works/pi-ai/dist/index.js")).href);

const enc = (v) =>
  JSON.stringify(v, (_k, x) => (typeof x === "number" && !Number.isFinite(x) ? "\u0000" + String(x) : x));

// ---- hand-written documents -------------------------------------------------------------
const docs = [
  ["spec-hel", `{"a": "hello"}`],
  ["spec-nested", `{"a": [1, {"b": "c"}], "c": 2}`],
  ["spec-members", `{"a": {"b": 1}, "c": "d"}`],
  ["spec-exp", `{"a": 1e5, "b": 1.25}`],
  ["pretty", JSON.stringify({ name: "tool", args: { list: [1, -2.5, true, false, null, "x"], empty: [], obj: {} }, n: null }, null, 2)],
  ["escapes", `{"s": "line\\nbreak \\"q\\" back\\\\slash \\u00e9 \\ud83d\\ude00 tab\\t \\/ \\b\\f\\r end", "k\\u00e9y": 1}`],
  ["numbers", `[0, -0, 1.5, -2.25e10, 3E-5, 4e+2, 1234567890123456789, 0.1, -1.0e-0, 10, 7E+1]`],
  ["literals", `{"t": true, "f": false, "n": null, "arr": [true, false, null], "last": null}`],
  ["raw-control", `{"text": "line1\nline2\tx\u0001y", "after": [1, 2], "z": "ok"}`],
  ["raw-control-trailing", `{"a": "x\n", "b": "y \n z", "c": 1}`],
  ["raw-control-after-escape", `{"a": "p\\nq\nr", "b": 2}`],
  ["invalid-escapes", `{"path": "C:\\Users\\q\\x", "re": "\\d+\\.\\w", "n": 1}`],
  ["invalid-u-escape", `{"a": "x\\u12G4y", "b": "\\u00e9"}`],
  ["blank-containers", `{"a": [ ], "b": { }, "c": [\n], "d": 1}`],
  ["blank-array-nested", `[[ ], 1, [ 2 ]]`],
  ["dup-keys", `{"a": 1, "b": 2, "a": {"x": [3]}, "a": "s", "b": [true]}`],
  ["proto-object", `{"__proto__": {"x": 1}, "y": 2}`],
  ["proto-scalar", `{"__proto__": 5, "y": 2}`],
  ["top-string", `"top level"`],
  ["top-string-raw", `"a\nb\\qc\\u12x\t d"`],
  ["top-number", `-12.5e3`],
  ["top-true", `true`],
  ["top-null", `null`],
  ["top-false-ws", `  false  `],
  ["top-array", `[1,[2,[3,[4]]]]`],
  ["unicode", `{"emoji": "😀 é 中文 \u2028 \u00a0x", "中": "文"}`],
  ["trailing-spaces", `{"a": "hel  lo  ", "b": "  "}`],
  ["whitespace", `\n  {\n\t"a" :\r\n 1 ,"b":[ 1 , 2 ]\n, "c" : "d" }\n  `],
  ["leading-nbsp", `\u00a0{"a": 1}`],
  ["deep", `[[[[[[{"a":[[[]]],"b":{"c":{"d":{}}}}]]]]]]`],
  ["surrogate-escape", `{"s": "\\ud83d\\ude00x", "t": "\\uD83D\\uDE03"}`],
  ["lone-surrogate", `{"s": "\\ud83dx\\udc00y", "t": 1}`],
  ["tool-call", `{"path": "src/main.rs", "content": "fn main() {\\n    println!(\\"hi\\");\\n}\\n", "overwrite": true}`],
  ["tool-call-raw", `{"path": "a.txt", "content": "first line\nsecond \\"line\\"\n\tindented", "mode": "w"}`],
  ["num-end", `{"a": [1.5e-3, -0.0, 2E3]}`],
  ["chaos-obj", `{"a": "x\ny", "b": {"c": 1}, "d": [2]}`],
  ["chaos-arr", `[{"b": "x\ny", "c": 1}, 2, "e"]`],
  ["chaos-arr-in-obj", `{"a": ["x\ny", 1, {"k": "v"}], "b": 3}`],
  ["chaos-nested", `{"a": {"b": "x\ny", "c": 1}, "d": 2}`],
  ["chaos-key", `{"k\ney": 1, "b": 2}`],
  ["backslash-end", `{"a": "b\\\\", "c": "d\\\\\n e"}`],
  ["empty-strings", `{"": "", "e": [""]}`],
];
const garbage = [
  ["garbage", `garbage`],
  ["bad-literal", `{"a": tru }`],
  ["double-comma", `[1, 2,, 3]`],
  ["missing-colon", `{"a" 1, "b": 2}`],
  ["lone-comma", `{,}`],
  ["mismatched", `[}`],
  ["extra-close", `{"a":1}}`],
  ["minus", `{"a": -}`],
  ["specials", `{"a": Infinity, "b": NaN, "c": -Infinity}`],
  ["neg-inf-partial", `[-Inf`],
  ["leading-zero", `{"a": 01}`],
  ["dot-exp", `{"a": 1.e5}`],
  ["trailing-garbage", `{"a": 1} x`],
  ["single-quotes", `{'a': 1}`],
  ["number-space", `[1 2]`],
  // Known divergence: a finished token like `1e` is only accepted while no `e` follows.
  ["number-e-garbage", `[1e, 2, "x"]`],
];

// ---- seeded random documents ------------------------------------------------------------
let seed = 0x2545f491;
const rnd = () => {
  seed ^= seed << 13;
  seed >>>= 0;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  seed >>>= 0;
  return seed / 4294967296;
};
const pick = (xs) => xs[Math.floor(rnd() * xs.length)];
const ws = () => (rnd() < 0.7 ? "" : pick([" ", "  ", "\n", "\n  ", "\t", "\r\n", " \n "]));
const strPieces = [
  "a", "bc", "hello", " ", "  ", "x y", "é", "中", "😀", "\\n", "\\\"", "\\\\", "\\/", "\\t", "\\u00e9", "\\ud83d\\ude00",
  "\\u0041", "e", "E", "1", "-", ":", ",", "}", "]", "{", "[",
];
const rawPieces = ["\n", "\t", "\u0001", "\\q", "\\x", "\\u12", "\r"];
const str = (chaos) => {
  let s = "";
  const n = Math.floor(rnd() * 5);
  for (let i = 0; i < n; i++) s += chaos && rnd() < 0.15 ? pick(rawPieces) : pick(strPieces);
  return `"${s}"`;
};
const num = () =>
  pick(["0", "-0", "1", "42", "-7", "3.14", "-0.5", "1e3", "2E-2", "6.02e+23", "-1.5e-7", "100", "9007199254740993"]);
const value = (depth, chaos) => {
  const r = rnd();
  if (depth < 3 && r < 0.25) {
    const n = Math.floor(rnd() * 4);
    if (n === 0) return chaos && rnd() < 0.3 ? "{ }" : "{}";
    const keys = ["a", "b", "c", "key", "e", "x"];
    return "{" + Array.from({ length: n }, () => ws() + `"${pick(keys)}"` + ws() + ":" + ws() + value(depth + 1, chaos) + ws()).join(",") + "}";
  }
  if (depth < 3 && r < 0.45) {
    const n = Math.floor(rnd() * 4);
    if (n === 0) return chaos && rnd() < 0.3 ? "[ ]" : "[]";
    return "[" + Array.from({ length: n }, () => ws() + value(depth + 1, chaos) + ws()).join(",") + "]";
  }
  if (r < 0.7) return str(chaos);
  if (r < 0.9) return num();
  return pick(["true", "false", "null"]);
};
const nRandom = Number(process.env.PJ_RANDOM ?? 300);
const nMutants = Number(process.env.PJ_MUTANTS ?? 150);
if (process.env.PJ_SEED) seed = Number(process.env.PJ_SEED) >>> 0 || 1;
for (let i = 0; i < nRandom; i++) {
  const chaos = i % 2 === 1;
  let d;
  do {
    d = ws() + (rnd() < 0.85 ? "{" + ws() + `"root"` + ws() + ":" + ws() + value(0, chaos) + ws() + "}" : value(0, chaos)) + ws();
  } while (d.length > 160);
  docs.push([`random-${i}${chaos ? "-chaos" : ""}`, d]);
}

// Mutants: random documents with a few random edits (garbage; compared all the same).
const alphabet = Array.from(`{}[]",: 0123456789eE.-+tnfulsaIN\\\n\t\u00a0`);
for (let i = 0; i < nMutants; i++) {
  const cps = Array.from(docs[docs.length - 1 - Math.floor(rnd() * nRandom)][1]);
  const edits = 1 + Math.floor(rnd() * 3);
  for (let e = 0; e < edits; e++) {
    const at = Math.floor(rnd() * (cps.length + 1));
    const r = rnd();
    if (r < 0.4) cps.splice(at, 1);
    else if (r < 0.8) cps.splice(at, 0, pick(alphabet));
    else cps.splice(at, 1, pick(alphabet));
  }
  garbage.push([`mutant-${i}`, cps.join("")]);
}

// ---- evaluate ---------------------------------------------------------------------------
const lines = [];
for (const [list, isGarbage] of [[docs, false], [garbage, true]]) {
  for (const [name, doc] of list) {
    const cps = Array.from(doc);
    const steps = [];
    let prev;
    for (let n = 0; n <= cps.length; n++) {
      const v = enc(parseStreamingJson(cps.slice(0, n).join("")));
      if (v !== prev) {
        steps.push(`[${n},${v}]`);
        prev = v;
      }
    }
    lines.push(`{"name":${JSON.stringify(name)},"garbage":${isGarbage},"doc":${JSON.stringify(doc)},"steps":[${steps.join(",")}]}`);
  }
}
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, `{"docs":[\n${lines.join(",\n")}\n]}\n`);
console.log(`wrote ${lines.length} documents to ${out}`);
