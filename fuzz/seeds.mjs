#!/usr/bin/env node
// Writes seed inputs for the fuzz targets into fuzz/corpus/<target>/ (gitignored) from the
// project's own vectors: the schema vectors (schema \0 arguments) and the partial-JSON documents,
// plus a few SSE streams and tool lists. Run by scripts/fuzz.sh before fuzzing.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..");
const put = (target, name, data) => {
	const dir = join(here, "corpus", target);
	mkdirSync(dir, { recursive: true });
	writeFileSync(join(dir, name), data);
};

const schema = JSON.parse(readFileSync(join(root, "tests/fixtures/schema/vectors.json"), "utf8"));
schema.forEach((v, i) => put("schema_validate", `vector-${i}`, `${JSON.stringify(v.schema)}\0${JSON.stringify(v.input ?? null)}`));

const partial = JSON.parse(readFileSync(join(root, "tests/fixtures/partial_json/vectors.json"), "utf8"));
(partial.docs ?? []).forEach((d, i) => put("partial_json", `doc-${i}`, Buffer.concat([Buffer.from([i & 0xff]), Buffer.from(d.doc)])));
put("partial_json", "nested", '\x07{"a": [1, {"b": "c\\u00e9\\ud83d\\ude00"}], "n": -1.5e3, "t": true, "z": null}');

const sse = [
	'data: {"type":"start"}\n\ndata: {"type":"text_delta","contentIndex":0,"delta":"hi"}\r\n\r\n: comment\nevent: x\ndata:nospace\ndata: last',
	"\xEF\xBB\xBFdata: a\n\xEF\xBB\xBFdata: b\n",
	"data: \u00a0x\u2028\ndata: \xE2\x82\ndata: \xF0\x9F\x98\x80\n",
	'data: {"type":"text_delta","contentIndex":0,"delta":"a\\n\\u00e9"}\n\ndata: { "delta": "\\ud83d\\ude00", "type": "thinking_delta", "contentIndex": 12 }\n',
];
sse.forEach((s, i) => put("sse_framer", `stream-${i}`, Buffer.concat([Buffer.from([i * 37]), Buffer.from(s, "latin1")])));

put("tool_changes", "lists", Buffer.from([0, 4, 9, 13, 0xff, 4, 0, 14, 2, 0xff, 4, 5, 0, 6, 7, 1]));
console.log("seeds written to fuzz/corpus/");
