// Generates tests/fixtures/schema/vectors.json: the reference behaviour of
// pi-ai 1.4.0's validateToolArguments (its steps 2-7) for a broad
// table of schemas and inputs. The Rust tests (`cargo test --lib json::schema`)
// replay every vector against src/json/schema/.
//
// Usage (from the repo root, after `npm ci`, which installs the oracle
// packages @earendil-works/pi-ai@1.4.0 and typebox@1.3.27):
//
//   node scripts/gen-schema-vectors.mjs
//
// Each vector records:
//   name    case name (unique)
//   schema  the schema as JSON (enumerable keys only, what JSON.stringify gives)
//   hidden  [[path, {"~kind": ...}], ...] non-enumerable TypeBox markers per
//           schema node; path is the list of keys/indices from the root. The
//           binding copies these into the Value as ordinary keys.
//   legacy  true when the root carries Symbol.for("TypeBox.Kind") (step 6 skipped)
//   input   the tool-call arguments
//   ok      the returned (coerced) arguments, or
//   lines   the error lines of a validation failure ("  - path: message"), or
//   error   the message of any other thrown error (schema compile errors, ...)
//   diverges (optional) why the Rust port is known to differ; the test skips it.
import { writeFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { validateToolArguments } from "@earendil-works/pi-ai/utils/validation";
import { Type } from "typebox";

const T = Type;
const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, "..", "tests", "fixtures", "schema", "vectors.json");

// ---------------------------------------------------------------------------
// Hidden markers
// ---------------------------------------------------------------------------
function hiddenKeys(node, path = [], acc = [], seen = new Set()) {
  if (node === null || typeof node !== "object" || seen.has(node)) return acc;
  seen.add(node);
  if (Array.isArray(node)) {
    node.forEach((item, i) => hiddenKeys(item, [...path, i], acc, seen));
    return acc;
  }
  const marks = {};
  for (const key of Object.getOwnPropertyNames(node)) {
    const d = Object.getOwnPropertyDescriptor(node, key);
    if (d.enumerable || !key.startsWith("~")) continue;
    const v = d.value;
    if (typeof v === "string" || typeof v === "boolean" || typeof v === "number") marks[key] = v;
  }
  if (Object.keys(marks).length > 0) acc.push([path, marks]);
  for (const key of Object.keys(node)) hiddenKeys(node[key], [...path, key], acc, seen);
  return acc;
}

// ---------------------------------------------------------------------------
// Runner
// ---------------------------------------------------------------------------
const vectors = [];
const names = new Set();

function run(schema, input) {
  try {
    const result = validateToolArguments({ name: "t", parameters: schema }, { name: "t", arguments: input });
    return { ok: result === undefined ? null : JSON.parse(JSON.stringify(result)) };
  } catch (e) {
    const msg = String(e && e.message);
    const head = 'Validation failed for tool "t":\n';
    if (msg.startsWith(head)) {
      const body = msg.slice(head.length);
      const end = body.indexOf("\n\nReceived arguments:\n");
      return { lines: body.slice(0, end).split("\n") };
    }
    return { error: msg };
  }
}

/** case(name, schema, inputs, opts) — schema may be a factory (fresh object per input). */
function cas(name, schema, inputs, opts = {}) {
  inputs.forEach((input, i) => {
    const s = typeof schema === "function" ? schema() : schema;
    if (opts.legacy) Object.defineProperty(s, Symbol.for("TypeBox.Kind"), { value: "Object", enumerable: false });
    const vname = inputs.length > 1 ? `${name} #${i}` : name;
    if (names.has(vname)) throw new Error(`duplicate vector name ${vname}`);
    names.add(vname);
    const cloned = structuredClone(input);
    const res = run(s, cloned);
    const v = { name: vname, schema: JSON.parse(JSON.stringify(s)), hidden: hiddenKeys(s), legacy: !!opts.legacy, input, ...res };
    const div = typeof opts.diverges === "function" ? opts.diverges(i) : opts.diverges;
    if (div) v.diverges = div;
    vectors.push(v);
  });
}
const obj = (properties, required, extra = {}) => ({ type: "object", properties, ...(required ? { required } : {}), ...extra });
const prop = (schema, values, req = true) => ({ schema: obj({ v: schema }, req ? ["v"] : undefined), inputs: values.map((v) => ({ v })) });
function props(name, schema, values, opts) {
  const p = prop(schema, values, opts?.optional !== true);
  cas(name, p.schema, p.inputs, opts);
}
function tprop(name, schemaFn, values, opts = {}) {
  cas(name, () => T.Object({ v: opts.optional ? T.Optional(schemaFn()) : schemaFn() }), values.map((v) => ({ v })), opts);
}

// ---------------------------------------------------------------------------
// Contract vectors
// ---------------------------------------------------------------------------
cas("contract count", () => T.Object({ count: T.Number() }), [{ count: "42" }, { count: "abc" }, {}]);
cas("contract two required", () => T.Object({ a: T.String(), b: T.String() }), [{}]);
cas("contract array item", () => T.Object({ a: T.Array(T.Number()) }), [{ a: [1, "x"] }]);
cas("contract typebox boolean", () => T.Object({ v: T.Boolean() }), [{ v: "1" }]);
props("contract plain boolean", { type: "boolean" }, ["1"]);
cas("contract typebox string null", () => T.Object({ v: T.String() }), [{ v: null }]);
props("contract plain string null required", { type: "string" }, [null]);
props("contract plain string null optional", { type: "string" }, [null], { optional: true });
cas("contract root null", obj({ a: { type: "string" } }), [null]);

// ---------------------------------------------------------------------------
// Step 4: TypeBox Value.Convert
// ---------------------------------------------------------------------------
tprop("tb number", () => T.Number(), [
  "42", "abc", "", " 12 ", "0x10", "0X1f", "0b101", "0o17", "1e3", "-1.5e-3", ".5", "5.", "+5", "- 5", "\u00a012\u2028",
  "Infinity", "-Infinity", "NaN", "12n", "-12n", "1.5n", "9007199254740993n", "1_000", "true", "FALSE", "True",
  true, false, null, [1], {}, 1.25, "0x", "1e", "e1", "--1", "0.0000001", "1e21", "12345678901234567890",
]);
tprop("tb integer", () => T.Integer(), ["1.5", "abc", 2.7, -3.9, "-3.9", true, null, "1e2", "12n", "1.5n", "true", [2], 1e21, "0x1A"]);
tprop("tb boolean", () => T.Boolean(), ["true", "TRUE", "False", "false", "1", "0", 1, 0, 2, null, "yes", "", [], "01", 1.0]);
tprop("tb string", () => T.String(), [1, 1.5, -2, true, false, null, 1e21, 1e-7, 123456789012345680000, 0.1, [1], { a: 1 }, 5e-324, 1.7976931348623157e308, 0.000001, 100]);
tprop("tb null", () => T.Null(), ["", "0", "null", "NULL", "undefined", "Undefined", 0, false, "x", 1, true, [], "false"]);
tprop("tb literal string", () => T.Literal("a"), ["a", 1, "b", null]);
tprop("tb literal string number", () => T.Literal("1"), [1, true, "1", null]);
tprop("tb literal string null", () => T.Literal("null"), [null, "null"]);
tprop("tb literal number", () => T.Literal(1), ["1", true, "true", 1.0, "x", 2, "1.0"]);
tprop("tb literal boolean", () => T.Literal(true), ["true", "TRUE", 1, "1", "false", 0]);
tprop("tb literal false", () => T.Literal(false), ["false", 0, null, "0", "x"]);
tprop("tb array", () => T.Array(T.Number()), ["5", ["1", "x"], null, {}, [], [true, "2"], 3]);
tprop("tb array of strings", () => T.Array(T.String()), [[1, null], "solo", null]);
tprop("tb array nested", () => T.Array(T.Array(T.Integer())), [[["1.5", "2"]], "7", [[1], "2"]]);
cas("tb root array", () => T.Array(T.Number()), [["1", "2"], [1, "x"]]);
cas("tb root array of objects", () => T.Array(T.Object({ a: T.Number() })), [[{ a: "1" }], [{ a: "x" }, { b: 1 }]]);
cas("tb root number", () => T.Number({ minimum: 10 }), ["5", "50", "x"]);
cas("tb root string", () => T.String(), [5, null]);
cas("tb root boolean", () => T.Boolean(), ["true", "1"]);
tprop("tb union number string", () => T.Union([T.Number(), T.String()]), ["5", true, null, [1], 5, false]);
tprop("tb union string number", () => T.Union([T.String(), T.Number()]), [true, null, 5]);
tprop("tb union boolean number", () => T.Union([T.Boolean(), T.Number()]), ["1", "2", "true", "x", null]);
tprop("tb union literals", () => T.Union([T.Literal("a"), T.Literal("b"), T.Literal(3)]), ["c", "3", 3, "a", true]);
tprop("tb union null string", () => T.Union([T.Null(), T.String()]), ["", "x", 0, 5]);
tprop("tb union objects", () => T.Union([
  T.Object({ kind: T.Literal("a"), x: T.Number() }),
  T.Object({ kind: T.Literal("b"), y: T.String() }),
]), [{ kind: "b", y: 5 }, { kind: "a", x: "5" }, { kind: "c" }, { kind: "a", x: "q" }]);
cas("tb root union", () => T.Union([T.Object({ a: T.Number() }), T.Object({ b: T.String() })]), [{ a: "1" }, { b: 1 }, { c: 1 }]);
tprop("tb tuple", () => T.Tuple([T.Number(), T.String()]), [["1", 2], ["1"], "x", [1, "a", 3], [true, false]]);
tprop("tb record", () => T.Record(T.String(), T.Number()), [{ a: "1", b: "x" }, {}, { a: true }, "x"]);
tprop("tb record integer key", () => T.Record(T.Integer(), T.Boolean()), [{ 1: "true", x: "true" }, { 2: 1 }]);
tprop("tb enum strings", () => T.Enum(["a", "b"]), ["c", "a", 1]);
tprop("tb enum numbers", () => T.Enum([1, 2]), ["2", "3", true, 2]);
tprop("tb enum mixed", () => T.Enum(["1", 1]), [1, "1", true]);
tprop("tb intersect objects", () => T.Intersect([T.Object({ a: T.Number() }), T.Object({ b: T.Boolean() })]), [
  { a: "1", b: "true" }, { a: "x" }, {}, { a: 1, b: true, c: 1 },
]);
tprop("tb optional number", () => T.Number(), [null, "5", "x"], { optional: true });
tprop("tb optional string", () => T.String(), [null, 5], { optional: true });
tprop("tb optional nullable", () => T.Union([T.String(), T.Null()]), [null, 5, "x"], { optional: true });
tprop("tb readonly", () => T.Readonly(T.Number()), ["3"]);
tprop("tb any", () => T.Any(), ["3", null, { a: 1 }]);
tprop("tb unknown", () => T.Unknown(), ["3", null]);
tprop("tb never", () => T.Never(), ["3"]);
tprop("tb template literal", () => T.TemplateLiteral("id-${number}"), [5, "id-5", "id-x", true]);
tprop("tb unsafe", () => T.Unsafe({ type: "number" }), ["5", "x"]);
cas("tb additional properties schema", () => T.Object({ x: T.Number(), y: T.String() }, { additionalProperties: T.Number() }), [
  { x: "1", y: "2", z: "3" }, { x: "1", y: "abc" }, { z: "q" },
]);
cas("tb additional single prop", () => T.Object({ x: T.String() }, { additionalProperties: T.Number() }), [{ x: 1, z: "3" }]);
cas("tb additional false", () => T.Object({ a: T.Number() }, { additionalProperties: false }), [{ a: "1", b: 2 }, { a: "1" }]);
cas("tb key with dot", () => T.Object({ "a.b": T.Number() }), [{ "a.b": "1", axb: "2", ab: "3" }]);
cas("tb key invalid regex", () => T.Object({ "(": T.Number() }), [{ "(": "1" }, [1], "x"]);
cas("tb key with plus", () => T.Object({ "a+": T.Number() }), [{ "a+": "1", aa: "2", "a": "3" }]);
cas("tb key astral regex", () => T.Object({ "😀+": T.Number(), "[😀]": T.Boolean() }), [{ "😀😀": "1", "😀": "2", "[😀]": "true" }, { "😀+": "3", "[😀]": 1 }]);
cas("tb record astral range", () => T.Object({ r: T.Record(T.String({ pattern: "^[😀-😂]$" }), T.Number()) }), [{ r: { "😁": "1" } }]);
cas("tb nested objects", () => T.Object({ outer: T.Object({ inner: T.Object({ n: T.Integer(), s: T.String() }) }) }), [
  { outer: { inner: { n: "3", s: 4 } } }, { outer: { inner: { n: "x", s: [] } } }, { outer: { inner: {} } }, { outer: "x" },
]);
cas("tb cyclic", () => T.Cyclic({ Node: T.Object({ v: T.Number(), next: T.Optional(T.Ref("Node")) }) }, "Node"), [
  { v: "1", next: { v: "2" } }, { v: 1, next: { v: "x" } }, { v: 1, next: { next: {} } },
]);
cas("tb partial", () => T.Partial(T.Object({ a: T.Number(), b: T.String() })), [{ a: "1" }, {}, { a: null, b: null }]);
cas("tb pick omit", () => T.Omit(T.Object({ a: T.Number(), b: T.String(), c: T.Boolean() }), ["b"]), [{ a: "1", c: "true" }, { a: "1" }]);
cas("tb typebox options", () => T.Object({
  name: T.String({ minLength: 2, maxLength: 5 }),
  age: T.Integer({ minimum: 0, maximum: 150 }),
  tags: T.Array(T.String(), { minItems: 1, maxItems: 3, uniqueItems: true }),
  email: T.Optional(T.String({ format: "email" })),
}), [
  { name: "Al", age: "30", tags: ["a"] },
  { name: "A", age: "-1", tags: [] },
  { name: "Alexander", age: 151.5, tags: ["a", "a", "b", "c"], email: "nope" },
  { name: 12, age: "x", tags: "one", email: "a@b.co" },
]);
cas("tb legacy symbol", () => T.Object({ a: T.Number() }), [{ a: "1" }, { a: "x" }], { legacy: true });
cas("plain legacy symbol", obj({ a: { type: "number" }, b: { type: "string" } }, ["a"]), [{ a: "1" }, { a: 1, b: null }], { legacy: true });

// ---------------------------------------------------------------------------
// Step 3: optional nulls
// ---------------------------------------------------------------------------
cas("nulls plain", obj({ a: { type: "string" }, b: { type: "number" }, c: { type: ["string", "null"] }, d: { anyOf: [{ type: "string" }, { type: "null" }] }, e: { $ref: "#/$defs/x" }, f: {}, g: true, h: false }), [
  { a: null, b: null, c: null, d: null, e: null, f: null, g: null, h: null },
  { a: "x", b: 1 },
]);
cas("nulls required", obj({ a: { type: "string" }, b: { type: "number" }, c: { type: "boolean" }, d: { type: "object" } }, ["a", "b", "c", "d"]), [{ a: null, b: null, c: null, d: null }]);
cas("nulls nested", obj({ o: obj({ p: { type: "integer" }, q: { type: "string" } }, ["q"]) }), [{ o: { p: null, q: null } }, { o: null }]);
cas("nulls in array items", { type: "array", items: obj({ a: { type: "number" } }) }, [[{ a: null }, { a: "2" }, null]]);
cas("nulls in tuple items", { type: "array", items: [obj({ a: { type: "number" } }), obj({ b: { type: "string" } })] }, [[{ a: null }, { b: null }, { c: null }]]);
cas("nulls with invalid pattern", obj({ a: { type: "string", pattern: "(" } }), [{ a: null }]);

// ---------------------------------------------------------------------------
// Step 6: plain JSON-schema coercion
// ---------------------------------------------------------------------------
props("plain number", { type: "number" }, ["42", "abc", " ", "", "0x10", true, false, null, "Infinity", "1e3", " 7 ", "12n", [1], "-0", "1_0"]);
props("plain integer", { type: "integer" }, ["42", "1.5", null, true, "1e2", "x", 2.5, "0x10", ""]);
props("plain boolean", { type: "boolean" }, ["true", "false", "TRUE", 1, 0, 2, null, "1", "0"]);
props("plain string", { type: "string" }, [5, true, null, 1.5, 1e21, {}, [], 0.1, -7]);
props("plain optional string", { type: "string" }, [null, 5], { optional: true });
props("plain null", { type: "null" }, ["", 0, false, "null", 1, "x"]);
props("plain multi number string", { type: ["number", "string"] }, [true, null, "5", 5, {}]);
props("plain multi string number", { type: ["string", "number"] }, [true, null]);
props("plain multi null string", { type: ["null", "string"] }, ["", 0, false]);
props("plain multi integer boolean", { type: ["integer", "boolean"] }, ["true", "3", "1.5", null]);
props("plain multi boolean null", { type: ["boolean", "null"] }, ["", 0, 1, "false"]);
props("plain type array single", { type: ["number"] }, ["5"]);
props("plain type weird", { type: ["number", 5, "boolean"] }, ["true", "5"]);
props("plain array items", { type: "array", items: { type: "number" } }, [["1", "2"], "1", [true, null]]);
props("plain array tuple items", { type: "array", items: [{ type: "number" }, { type: "boolean" }] }, [["1", "true", "x"], ["x"]]);
props("plain array no type", { items: { type: "number" } }, [["1"]]);
props("plain additional", { type: "object", additionalProperties: { type: "number" } }, [{ a: "1", b: "x" }]);
props("plain additional with props", { type: "object", properties: { s: { type: "string" } }, additionalProperties: { type: "integer" } }, [{ s: 1, n: "2" }]);
props("plain object no type", { properties: { a: { type: "number" } } }, [{ a: "1" }]);
props("plain allOf", { allOf: [obj({ a: { type: "number" } }), obj({ b: { type: "boolean" } })] }, [{ a: "1", b: "true" }, { a: "x" }]);
props("plain anyOf", { anyOf: [{ type: "number" }, { type: "boolean" }] }, ["true", "5", "x", null, 5]);
props("plain anyOf objects", { anyOf: [obj({ n: { type: "number" } }, ["n"]), obj({ s: { type: "string" } }, ["s"])] }, [{ n: "1" }, { s: 1 }, {}]);
props("plain oneOf", { oneOf: [{ type: "integer" }, { type: "string", minLength: 3 }] }, ["12", "abc", 1.5, true]);
props("plain oneOf overlap", { oneOf: [{ type: "number" }, { type: "integer" }] }, [1, 1.5, "2"]);
props("plain anyOf then type", { anyOf: [{ type: "string" }], type: "number" }, [5, "5"]);
props("plain enum coercion", { type: "number", enum: [1, 2] }, ["2", "3"]);
cas("plain root number min", { type: "number", minimum: 10 }, ["5", "50", "x", 5]);
cas("plain root integer", { type: "integer" }, ["3", "3.5"]);
cas("plain root string", { type: "string" }, [5, null]);
cas("plain root anyOf", { anyOf: [obj({ a: { type: "number" } }, ["a"]), obj({ b: { type: "boolean" } }, ["b"])] }, [{ a: "1" }, { b: "true" }, { c: 1 }]);
cas("plain root array", { type: "array", items: { type: "integer" } }, [["1", "2"], ["x"]]);
cas("plain root object null", { type: "object" }, [null, "x", [], 5]);
cas("plain root empty", {}, [{ a: 1 }, null, "x"]);
cas("plain root true", true, [{ a: 1 }]);

// ---------------------------------------------------------------------------
// Step 7: error families
// ---------------------------------------------------------------------------
props("err type", { type: "string" }, [[], {}]);
props("err type integer", { type: "integer" }, [1.5, "x"]);
props("err type object", { type: "object" }, [[], "x", 1]);
props("err type array", { type: "array" }, [{}, "x"]);
props("err type multi", { type: ["string", "number"] }, [[], {}]);
props("err type multi3", { type: ["string", "number", "boolean"] }, [[]]);
props("err type unknown name", { type: "foo" }, [1]);
props("err type empty array", { type: [] }, [1]);
cas("err required", obj({ a: {}, b: {}, c: {} }, ["a", "b", "c"]), [{ b: 1 }, {}, { a: 1, b: 1, c: 1 }]);
cas("err required nested", obj({ o: obj({ x: {}, y: {} }, ["x", "y"]) }, ["o"]), [{ o: {} }, { o: { x: 1 } }, {}]);
cas("err required in array", obj({ list: { type: "array", items: obj({ name: { type: "string" } }, ["name"]) } }), [{ list: [{ name: "a" }, {}, { name: 1 }] }]);
cas("err required only", { type: "object", required: ["z"] }, [{}, { z: null }]);
cas("err required empty key", { type: "object", required: [""] }, [{}]);
cas("err additional false", obj({ a: {} }, undefined, { additionalProperties: false }), [{ a: 1, b: 2, c: 3 }, { b: 1 }, { a: 1 }]);
cas("err additional false fast path", obj({ a: {}, b: {} }, ["a", "b"], { additionalProperties: false }), [{ a: 1, b: 2, c: 3 }, { a: 1 }]);
cas("err additional fast path quirk", obj({ a: {}, b: {} }, ["a", "c"], { additionalProperties: false }), [{ a: 1, c: 1 }, { a: 1, c: 1, d: 1 }]);
cas("err additional duplicate required", obj({ a: {}, b: {} }, ["a", "a"], { additionalProperties: false }), [{ a: 1 }, { a: 1, b: 1 }]);
cas("err additional schema", { type: "object", additionalProperties: { type: "string", minLength: 2 } }, [{ x: "a", y: "bb", z: 3 }]);
cas("err additional with patternProperties", { type: "object", properties: { a: {} }, patternProperties: { "^x-": { type: "number" } }, additionalProperties: false }, [{ a: 1, "x-1": 2, "x-2": "s", y: 1 }]);
cas("err patternProperties", { type: "object", patternProperties: { "^n": { type: "number" }, "s$": { type: "string" } } }, [{ n1: "x", ns: 1, as: 2, zz: 1 }]);
cas("err propertyNames", { type: "object", propertyNames: { pattern: "^[a-z]+$", maxLength: 3 } }, [{ ab: 1, ABC: 2, abcd: 3 }, { ok: 1 }]);
props("err const", { const: "x" }, ["y", "x", 1]);
props("err const object", { const: { a: [1, { b: 2 }] } }, [{ a: [1, { b: 2 }] }, { a: [1, { b: 3 }] }, [1]]);
props("err const array", { const: [1, 2] }, [[1, 2], [2, 1], { 0: 1, 1: 2 }]);
props("err const null", { const: null }, [null, 0]);
props("err enum", { enum: ["a", 1, null, true] }, ["b", "a", 1, null, true, false]);
props("err enum objects", { enum: [{ a: 1 }, [1, 2]] }, [{ a: 1 }, { a: 2 }, [1, 2], [1]]);
props("err enum empty", { enum: [] }, [1]);
props("err anyOf", { anyOf: [{ type: "string", minLength: 5 }, { type: "number", minimum: 10 }] }, ["abc", 5, true, null]);
props("err anyOf nested objects", { anyOf: [obj({ a: { type: "string" } }, ["a"]), obj({ b: { type: "number" } }, ["b"])] }, [{ a: 1, b: "x" }, {}]);
props("err oneOf none", { oneOf: [{ type: "string" }, { type: "number" }] }, [true, []]);
props("err oneOf two", { oneOf: [{ type: "number" }, { type: "number", minimum: 0 }] }, [5, -5]);
props("err allOf", { allOf: [{ type: "string" }, { minLength: 3 }, { pattern: "^a" }] }, ["bc", "abc", 5]);
props("err minimum", { type: "number", minimum: 10 }, [5, 10, 9.99]);
props("err maximum", { type: "number", maximum: 1.5 }, [2, 1.5]);
props("err exclusiveMinimum", { type: "number", exclusiveMinimum: 0 }, [0, -1, 0.1]);
props("err exclusiveMaximum", { type: "number", exclusiveMaximum: 1e21 }, [1e21, 1e22]);
props("err limits format", { type: "number", minimum: 0.1, maximum: 1e-7 }, [0.05, 1]);
props("err limits big", { type: "number", minimum: 123456789012345680000, maximum: -1.5e300 }, [1]);
props("err limits negative zero", { type: "number", minimum: 1, exclusiveMaximum: -0 }, [0.5]);
props("err range all", { minimum: 1, maximum: 5, exclusiveMinimum: 1, exclusiveMaximum: 5 }, [1, 5, 3, "s"]);
props("err minLength", { type: "string", minLength: 3 }, ["ab", "abc", "", "👍👍", "e\u0301e\u0301e\u0301", "🇺🇸🇺🇸🇺🇸"]);
props("err maxLength", { type: "string", maxLength: 2 }, ["abc", "ab", "👍👍", "👍🏽👍🏽", "e\u0301e\u0301", "👨‍👩‍👧👨‍👩‍👧", "🇺🇸🇺🇸", "a\u200db", "x\ufe0fy\ufe0f", "\u0301\u0301\u0301"]);
props("err minLength zero", { type: "string", minLength: 0, maxLength: 0 }, ["", "a"]);
props("err minItems", { type: "array", minItems: 2 }, [[1], [1, 2]]);
props("err maxItems", { type: "array", maxItems: 1 }, [[1, 2], [1]]);
props("err minProperties", { type: "object", minProperties: 2 }, [{ a: 1 }, { a: 1, b: 2 }]);
props("err maxProperties", { type: "object", maxProperties: 1 }, [{ a: 1, b: 2 }]);
props("err multipleOf", { type: "number", multipleOf: 0.1 }, [0.3, 0.35, 1, 7.7]);
props("err multipleOf int", { type: "number", multipleOf: 3 }, [9, 10, 4.5]);
props("err multipleOf fraction", { multipleOf: 0.01 }, [1.005, 19.99, 0.07]);
props("err multipleOf 0.5", { multipleOf: 0.5 }, [2.5, 2.25, 3]);
props("err multipleOf 1.5", { multipleOf: 1.5 }, [4.5, 4]);
props("err not", { not: { type: "string" } }, ["x", 1]);
props("err not nested", { not: { anyOf: [{ const: 1 }, { const: 2 }] } }, [1, 3]);
props("err contains", { type: "array", contains: { type: "number" } }, [["a"], [], ["a", 1]]);
props("err contains min max", { type: "array", contains: { type: "number" }, minContains: 2, maxContains: 3 }, [[1], [1, 2], [1, 2, 3, 4]]);
props("err contains min zero", { type: "array", contains: { type: "number" }, minContains: 0 }, [[], ["a"]]);
props("err uniqueItems", { type: "array", uniqueItems: true }, [[1, 2, 1], [{ a: 1, b: 2 }, { b: 2, a: 1 }], [[1], [1]], [1, "1"], [[[1], 2], [[1, 2]]], [0, false, null, "", []], [1, 2]]);
props("err uniqueItems false", { type: "array", uniqueItems: false }, [[1, 1]]);
props("err dependencies array", { type: "object", dependencies: { a: ["b", "c"] } }, [{ a: 1 }, { a: 1, b: 1, c: 1 }, { b: 1 }]);
props("err dependencies schema", { type: "object", dependencies: { a: { required: ["z"] } } }, [{ a: 1 }, { a: 1, z: 1 }]);
props("err dependentRequired", { type: "object", dependentRequired: { a: ["b", "c"], b: ["d"] } }, [{ a: 1, b: 1 }, {}]);
props("err dependentSchemas", { type: "object", dependentSchemas: { a: { properties: { b: { type: "string" } } } } }, [{ a: 1, b: 2 }]);
props("err if then else", { if: { type: "string" }, then: { minLength: 3 }, else: { type: "number" } }, ["ab", "abc", true, 5]);
props("err if then only", { if: { minimum: 10 }, then: { multipleOf: 5 } }, [12, 15, 3]);
props("err prefixItems", { type: "array", prefixItems: [{ type: "string" }, { type: "number" }], items: false }, [["a", 1], [1, "a"], ["a", 1, 2]]);
props("err tuple items additionalItems", { type: "array", items: [{ type: "string" }], additionalItems: { type: "number" } }, [["a", 1, "x"], [1]]);
props("err unevaluatedProperties", { type: "object", properties: { a: {} }, allOf: [{ properties: { b: {} } }], unevaluatedProperties: false }, [{ a: 1, b: 1 }, { a: 1, c: 1 }]);
props("err unevaluatedItems", { type: "array", prefixItems: [{ type: "number" }], unevaluatedItems: false }, [[1], [1, 2]]);
props("err boolean false schema", false, [1]);
props("err boolean true schema", true, [1]);
cas("err properties boolean", obj({ a: false, b: true }), [{ a: 1, b: 1 }, { b: 1 }]);
cas("err nested paths", obj({ a: obj({ b: { type: "array", items: obj({ c: { type: "number" } }) } }) }), [{ a: { b: [{ c: 1 }, { c: "x" }, { c: [] }] } }]);
cas("err key with slash", obj({ "a/b": { type: "number" }, "": { type: "number" } }), [{ "a/b": "x", "": "y" }]);
cas("err many errors capped", obj(Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`k${i}`, { type: "number" }]))), [
  Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`k${i}`, "x" + i])),
]);
cas("err capped with anyOf", obj(Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`k${i}`, { anyOf: [{ type: "number" }, { type: "boolean" }] }]))), [
  Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`k${i}`, "x"])),
]);
cas("err order keywords", { type: "object", required: ["a", "b"], properties: { a: { type: "string", minLength: 5, pattern: "^x", format: "email" }, c: { type: "number", minimum: 3, multipleOf: 2 } }, minProperties: 5, additionalProperties: { type: "number" } }, [
  { a: "yy", c: 1, d: "q" },
]);
cas("err mixed root", obj({ n: { type: "number" }, s: { type: "string" } }, ["n", "s", "q"], { additionalProperties: false }), [{ n: "x", s: 1, extra: true }]);
cas("err ref defs", { type: "object", $defs: { pos: { type: "integer", minimum: 1 } }, properties: { a: { $ref: "#/$defs/pos" }, b: { $ref: "#/$defs/missing" } } }, [{ a: 0 }, { a: "3" }, { b: 1 }]);
cas("err ref root recursive", { type: "object", properties: { name: { type: "string" }, children: { type: "array", items: { $ref: "#" } } }, required: ["name"] }, [
  { name: "a", children: [{ name: "b", children: [{}] }] },
]);
cas("err ref definitions", { definitions: { s: { type: "string" } }, type: "object", properties: { a: { $ref: "#/definitions/s" } } }, [{ a: 1 }, { a: "x" }]);
cas("err ref anyOf member", { type: "object", $defs: { n: { type: "number" } }, properties: { a: { anyOf: [{ $ref: "#/$defs/n" }, { type: "boolean" }] } } }, [{ a: "5" }, { a: 5 }]);
cas("err ref id", { type: "object", $defs: { n: { $id: "num", type: "number" } }, properties: { a: { $ref: "num" } } }, [{ a: "x" }, { a: 1 }]);
cas("err ref anchor", { type: "object", $defs: { n: { $anchor: "nn", type: "number" } }, properties: { a: { $ref: "#nn" } } }, [{ a: "x" }, { a: 2 }]);

// ---------------------------------------------------------------------------
// pattern
// ---------------------------------------------------------------------------
const patterns = [
  ["^[a-z]+$", ["abc", "aBc", "", "abc\n"]],
  ["\\d{3}-\\d{4}", ["555-1234", "x555-1234y", "55-1234"]],
  ["^(foo|bar)baz$", ["foobaz", "barbaz", "bazbaz"]],
  ["^[^abc]+$", ["xyz", "xay"]],
  ["^\\w+@\\w+\\.com$", ["me@site.com", "me@site.org", "é@site.com"]],
  ["^a{2,}$", ["a", "aa", "aaaa"]],
  ["^a{2}$", ["aa", "aaa"]],
  ["^a{1,3}b$", ["ab", "aaab", "aaaab"]],
  ["^x?y*z+$", ["z", "xyyz", "xx z", "xz"]],
  ["\\bword\\b", ["a word here", "swordfish"]],
  ["^(?:ab)+$", ["abab", "aba"]],
  ["^a.*?b$", ["axxb", "ab", "a\nb"]],
  ["^\\s+$", [" \t", "\u00a0\u2003\ufeff", "x"]],
  ["^\\S+$", ["abc", "a b"]],
  ["^.$", ["a", "😀", "\n", "\u2028"]],
  ["^\\.\\/\\\\$", ["./\\", "a/\\"]],
  ["^\\u0041\\x42\\u{1F600}$", ["AB😀", "ab😀"]],
  ["^[\\u0400-\\u04FF]+$", ["привет", "hello"]],
  ["^(a)\\1$", ["aa", "ab"]],
  ["^(?=.*\\d)(?=.*[a-z]).{6,}$", ["abc123", "abcdef", "12345a"]],
  ["^(?!admin).*$", ["user", "admin1"]],
  ["(?<=\\$)\\d+", ["cost $45", "cost 45"]],
  ["^(?<year>\\d{4})-(?<month>\\d{2})$", ["2024-01", "24-01"]],
  ["^(?<!x)y", ["y"]],
  ["^[😀-😂]$", ["😁", "😃"]],
  ["^[\\d\\-]+$", ["1-2", "1a"]],
  ["^[-a-z]+$", ["a-b"]],
  ["^[a-z-]+$", ["a-b", "A"]],
  ["^\\p{L}+$", ["héllo", "h3llo"]],
  ["^\\p{Lu}", ["Abc", "abc"]],
  ["^\\P{L}+$", ["123", "a1"]],
  ["abc", ["xxabcxx", "ab"]],
  ["^$", ["", "a"]],
  ["^(a|ab)(c|bcd)(d*)$", ["abcd", "abcdd"]],
  ["^(a+)+$", ["aaaaaaaaaaaaaaaaaaaa", "aaaa!"]],
  ["^[\\w.+-]+@[\\w-]+\\.[\\w.-]+$", ["first.last+tag@sub-domain.example.co.uk", "bad@", "a@b.c"]],
  ["^https?://", ["http://x", "https://x", "ftp://x"]],
  ["^[A-Z][a-z]*( [A-Z][a-z]*)*$", ["Hello World", "hello World"]],
  ["^\\d+(\\.\\d{1,2})?$", ["10", "10.5", "10.555"]],
  ["[", ["x"]],
  ["(", ["x"]],
  [")", ["x"]],
  ["a**", ["x"]],
  ["\\-", ["-"]],
  ["{", ["{"]],
  ["a{2", ["aa"]],
  ["}", ["}"]],
  ["]", ["]"]],
  ["a{2,1}", ["aa"]],
  ["[b-a]", ["a"]],
  ["\\c", ["c"]],
  ["[\\d-z]", ["1"]],
  ["a/b", ["a/b", "x"]],
  ["^\\$\\^\\*\\+\\?\\(\\)\\[\\]\\{\\}\\|$", ["$^*+?()[]{}|"]],
  ["^[\\b]$", ["\b"]],
  ["^\\0$", ["\u0000"]],
  ["^\\t\\n\\r\\v\\f$", ["\t\n\r\u000b\f"]],
  ["^\\cA$", ["\u0001"]],
  ["\\B", ["ab", "a"]],
  ["^(?:a|b)*?c", ["ababc"]],
  ["^a{0}$", [""]],
  ["^(a*)*b$", ["aaab", "aaaaaaaaaaaaaaaaaaaaaaaaaa"]],
  ["^[^]$", ["x", "\n"]],
  ["^[]$", ["x"]],
  ["x|", ["y"]],
  ["^a+?$", ["aaa"]],
  ["^(a)?\\1b$", ["b", "aab"]],
  ["^\\k<n>(?<n>a)$", ["a"]],
  ["^\\D\\W$", ["a!", "1!", "a1"]],
  ["^[\\s\\S]+$", ["any\nthing"]],
  ["^[.]$", [".", "x"]],
  ["^\\u{61}$", ["a"]],
  ["^\\u{110000}$", ["a"]],
  ["(?<n>a)(?<n>b)", ["ab"]],
  ["(?:", ["x"]],
  ["(?x)", ["x"]],
  ["a{,3}", ["a{,3}"]],
  ["\\1", ["x"]],
  ["^[a\\-z]$", ["-", "b"]],
  ["^\\/$", ["/"]],
  ["^\\p{Nd}+$", ["123", "١٢٣", "12a"]],
  ["^\\p{Foo}$", ["a"]],
  ["\\b{", ["{"]],
  ["\\00", ["x"]],
  ["(?<n>a)\\k<m>[b-a]", ["a"]],
  ["\\k<n>\\c", ["a"]],
  ["(?=a)*", ["a"]],
  ["(?<=a){2,1}", ["a"]],
  ["(?<=a)?", ["a"]],
  ["^[\\00]$", ["x"]],
  ["😀+", ["😀😀"]],
];
patterns.forEach(([p, values], i) => props(`pattern ${i} ${JSON.stringify(p)}`, { type: "string", pattern: p }, values));
cas("pattern typebox", () => T.Object({ code: T.String({ pattern: "^[A-Z]{3}$" }) }), [{ code: "ABC" }, { code: "abc" }, { code: 123 }]);
cas("pattern non-string value", obj({ v: { pattern: "^a$" } }), [{ v: 5 }, { v: "b" }]);

// ---------------------------------------------------------------------------
// format
// ---------------------------------------------------------------------------
const formats = {
  "date-time": ["2024-01-15T10:30:00Z", "2024-01-15t10:30:00.123+05:30", "2024-01-15T10:30:00", "2024-02-30T00:00:00Z", "2024-02-29T00:00:00Z", "2023-02-29T00:00:00Z", "2024-01-15 10:30:00Z", "1998-12-31T23:59:60Z", "1998-12-31T15:59:60-08:00", "1998-12-31T23:58:60Z", "2024-13-01T00:00:00Z", "2024-01-15T24:00:00Z", "2024-01-15T10:30:00+24:00", "x"],
  date: ["2024-01-15", "2024-1-15", "1900-02-29", "2000-02-29", "2024-04-31", "0000-01-01", "2024-01-15T"],
  time: ["10:30:00Z", "10:30:00", "10:30:00.5+01:00", "23:59:60Z", "25:00:00Z", "10:60:00Z", "10:30:00z"],
  email: ["a@b.co", "first.last+tag@example.com", "nope", "a@b", "A@B.CO", "a..b@c.d", "\"quoted\"@x.y", "a@[127.0.0.1]", "a@-b.com", "a@[IPv6:::1]"],
  uri: ["https://example.com/path?q=1#frag", "mailto:a@b.c", "urn:isbn:123", "not a uri", "/relative", "http://[::1]:80/", "http://ex ample.com", "HTTP://EXAMPLE.COM", "x:", "1http://a"],
  "uri-reference": ["/relative/path", "../up", "#frag", "https://a.b", "with space", ""],
  uuid: ["123e4567-e89b-12d3-a456-426614174000", "123E4567-E89B-12D3-A456-426614174000", "123e4567e89b12d3a456426614174000", "123e4567-e89b-12d3-a456-42661417400"],
  ipv4: ["192.168.0.1", "256.0.0.1", "1.2.3", "01.2.3.4", "0.0.0.0"],
  ipv6: ["::1", "2001:db8::8a2e:370:7334", "::ffff:192.168.0.1", "1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7:8:9", "gggg::1", "::", "1::2::3"],
  hostname: ["example.com", "a-b.c", "-ab.com", "ab-.com", "a".repeat(64) + ".com", "localhost", "example.com.", "xn--bcher-kva.example", "ab--cd.com", "a_b.com", ""],
  duration: ["P1Y2M3DT4H5M6S", "PT1H", "P1W", "P", "PT", "P1Y1W", "1Y"],
  "json-pointer": ["/a/b", "", "/a~1b/c~0", "a/b", "/a~2"],
  "relative-json-pointer": ["0", "1/a", "0#", "-1", "01"],
  "uri-template": ["http://example.com/{id}", "/x{?a,b}", "{", "a b"],
  regex: ["^a+$", "(", "[a-z", "\\d"],
  "json-pointer-uri-fragment": ["#/a/b", "#", "/a", "#/a%20b"],
  url: ["https://example.com", "not a url", "mailto:x", "http://"],
  iri: ["https://例え.jp/パス", "relative", "http://a b"],
  "iri-reference": ["/パス", "http://a b", "#f"],
  "idn-email": ["用户@例子.广告", "a@b.c", "nope"],
  "idn-hostname": ["例子.广告", "example.com", "-bad"],
  unknownformat: ["anything"],
};
for (const [f, values] of Object.entries(formats)) props(`format ${f}`, { type: "string", format: f }, values);
props("format non-string", { format: "email" }, [5, null]);
cas("format typebox", () => T.Object({ when: T.String({ format: "date-time" }), id: T.String({ format: "uuid" }) }), [
  { when: "2024-01-01T00:00:00Z", id: "123e4567-e89b-12d3-a456-426614174000" }, { when: "yesterday", id: "x" },
]);

// ---------------------------------------------------------------------------
// Combinations
// ---------------------------------------------------------------------------
cas("mix tb object with union array", () => T.Object({
  items: T.Array(T.Union([T.Number(), T.String()])),
  maybe: T.Optional(T.Array(T.Integer())),
  choice: T.Union([T.Object({ kind: T.Literal("x"), n: T.Integer({ minimum: 1 }) }), T.Null()]),
}), [
  { items: [true, null, "a"], maybe: null, choice: null },
  { items: [[]], maybe: ["1.5", "x"], choice: { kind: "x", n: "0" } },
  { items: "solo", choice: "" },
  { items: [], maybe: "7", choice: { kind: "y" } },
]);
cas("mix tb record of unions", () => T.Object({ m: T.Record(T.String(), T.Union([T.Boolean(), T.Null()])) }), [{ m: { a: "true", b: "", c: "x", d: 0 } }]);
cas("mix tb enum object", () => T.Object({ e: T.Enum({ A: "a", B: 1 }) }), [{ e: "1" }, { e: "a" }, { e: "b" }]);
cas("mix tb integer options", () => T.Object({ n: T.Integer({ minimum: 1, maximum: 10, multipleOf: 2 }) }), [{ n: "0" }, { n: "4.9" }, { n: "11" }, { n: 3 }]);
cas("mix tb nested optional objects", () => T.Object({ a: T.Optional(T.Object({ b: T.Optional(T.Number()), c: T.String() })) }), [{ a: null }, { a: { b: null, c: null } }, { a: { c: 1, b: "2" } }]);
cas("mix tb union of arrays", () => T.Object({ u: T.Union([T.Array(T.Number()), T.Array(T.Boolean())]) }), [{ u: ["1", "2"] }, { u: ["true"] }, { u: "5" }, { u: [1, true] }]);
cas("mix tb cyclic union", () => T.Cyclic({ Tree: T.Object({ v: T.Number(), kids: T.Array(T.Union([T.Ref("Tree"), T.Null()])) }) }, "Tree"), [
  { v: "1", kids: [{ v: "2", kids: [] }, null, ""] },
  { v: 1, kids: [{ v: "x", kids: "none" }] },
]);
cas("mix tb intersect with union", () => T.Object({ i: T.Intersect([T.Object({ a: T.Number() }), T.Object({ b: T.Union([T.Literal("x"), T.Literal("y")]) })]) }), [
  { i: { a: "2", b: "x" } }, { i: { a: "2", b: "z" } },
]);
cas("mix tb record additional", () => T.Object({ r: T.Record(T.String({ pattern: "^x" }), T.Number(), { additionalProperties: T.Boolean() }) }), [{ r: { x1: "1", y: "true" } }]);
cas("mix root ref", { $ref: "#/$defs/A", $defs: { A: obj({ n: { type: "number" } }, ["n"]) } }, [{ n: "1" }, { n: 1 }, {}]);
cas("mix allOf additional false", { allOf: [obj({ a: { type: "number" } }, ["a"], { additionalProperties: false }), obj({ b: { type: "boolean" } })] }, [
  { a: "1" }, { a: 1, b: true }, { a: "x", b: "y" },
]);
cas("mix patternProperties and properties", { type: "object", properties: { a1: { type: "string" } }, patternProperties: { "^a": { type: "string", minLength: 2 } } }, [{ a1: "x" }, { a1: 5, a2: "yy" }]);
cas("mix propertyNames false", { type: "object", propertyNames: false }, [{}, { a: 1, b: 2 }]);
cas("mix items false true", obj({ f: { type: "array", items: false }, t: { type: "array", items: true } }), [{ f: [], t: [1] }, { f: [1, 2], t: [] }]);
cas("mix maxContains only", obj({ a: { type: "array", contains: { const: 1 }, maxContains: 1 } }), [{ a: [1, 2] }, { a: [1, 1] }, { a: [2] }]);
cas("mix if only", obj({ a: { if: { type: "string" } } }), [{ a: 1 }, { a: "s" }]);
cas("mix prefixItems and items", obj({ a: { type: "array", prefixItems: [{ type: "string" }], items: { type: "number" } } }), [{ a: ["x", 1, 2] }, { a: ["x", "y"] }, { a: [1] }]);
cas("mix additional true and empty", obj({ a: {} }, undefined, { additionalProperties: true }), [{ a: 1, b: 2 }]);
cas("mix additional empty schema", { type: "object", properties: { a: {} }, additionalProperties: {} }, [{ a: 1, b: 2 }]);
cas("mix required duplicates", obj({ a: {} }, ["a", "a", "b"]), [{}, { a: 1 }]);
cas("mix fractional limits", obj({ s: { type: "string", minLength: 2.5, maxLength: 3.5 }, n: { type: "number", maximum: 0.30000000000000004 } }), [
  { s: "ab", n: 0.3 }, { s: "abc", n: 0.4 }, { s: "abcd", n: 0.1 },
]);
cas("mix oneOf coerced twice", obj({ v: { oneOf: [{ type: "number" }, { type: "integer" }] } }), [{ v: "3" }, { v: "3.5" }]);
cas("mix anyOf first coerces fails", obj({ v: { anyOf: [{ type: "number", minimum: 10 }, { type: "string" }] } }), [{ v: "5" }, { v: 5 }, { v: "50" }]);
cas("mix anyOf nested capacity", obj({ v: { anyOf: [obj(Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`p${i}`, { type: "string" }]))), { type: "string" }] } }), [
  { v: Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`p${i}`, i])) },
  { v: Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`p${i}`, [i]])) },
]);
cas("mix unevaluated anyOf", { type: "object", anyOf: [{ properties: { a: { type: "number" } }, required: ["a"] }, { properties: { b: { type: "string" } }, required: ["b"] }], unevaluatedProperties: false }, [
  { a: 1 }, { b: "x" }, { a: 1, b: "x" }, { a: 1, c: 1 }, { a: "x", b: 1 },
]);
cas("mix unevaluated if then", { type: "object", properties: { kind: { type: "string" } }, if: { properties: { kind: { const: "a" } } }, then: { properties: { x: { type: "number" } } }, else: { properties: { y: { type: "number" } } }, unevaluatedProperties: false }, [
  { kind: "a", x: 1 }, { kind: "a", y: 1 }, { kind: "b", y: 1 }, { kind: "b", x: 1 },
]);
cas("mix unevaluated items contains", { type: "array", contains: { type: "string" }, unevaluatedItems: { type: "number" } }, [["a", 1], ["a", true], [1]]);
cas("mix unevaluated nested property", { type: "object", properties: { o: { type: "object", properties: { a: {} }, unevaluatedProperties: false } }, unevaluatedProperties: false }, [{ o: { a: 1 } }, { o: { a: 1, b: 2 } }, { o: {}, z: 1 }]);
cas("mix dependencies deep", { type: "object", dependencies: { card: { properties: { billing: obj({ zip: { type: "string", pattern: "^\\d{5}$" } }, ["zip"]) }, required: ["billing"] } } }, [
  { card: 1 }, { card: 1, billing: {} }, { card: 1, billing: { zip: "123" } }, { card: 1, billing: { zip: "12345" } },
]);
cas("mix const in object coerce", obj({ c: { const: 5 }, t: { type: "number", const: 5 } }), [{ c: "5", t: "5" }]);
cas("mix hostname labels", obj({ h: { type: "string", format: "hostname" } }), [
  { h: "xn--fsqu00a.xn--3lr804guic" }, { h: "xn--a" }, { h: "xn---" }, { h: "XN--BCHER-KVA.example" }, { h: "a.b.c.d.e" }, { h: "1.2.3.4" },
]);
cas("mix email forms", obj({ e: { type: "string", format: "email" } }), [
  { e: "x@" + "a".repeat(63) + ".com" }, { e: "x@" + "a".repeat(64) + ".com" }, { e: "a.b@c-d.e" }, { e: "a b@c.d" }, { e: "a@b..c" },
]);
cas("mix uri forms", obj({ u: { type: "string", format: "uri" } }), [
  { u: "http://user:pass@host:8080/p/a/t/h?query=1&b=2#frag" }, { u: "http://[v1.fe]/" }, { u: "http://%zz" }, { u: "a:b:c" }, { u: "http://1.2.3.4/" }, { u: "tel:+1-816-555-1212" },
]);
cas("mix url forms", obj({ u: { type: "string", format: "url" } }), [
  { u: "http:foo" }, { u: "https://a:99999" }, { u: "https://a:80" }, { u: "foo://a b" }, { u: "file:" }, { u: "  http://x  " }, { u: "x" }, { u: "ftp://[::1]/" },
]);

// ---------------------------------------------------------------------------
// Known quirks the port does not reproduce
// ---------------------------------------------------------------------------
cas("quirk prototype key property", obj({ toString: { type: "string" } }), [{}], { diverges: "property names that live on Object.prototype ('toString', ...) are seen as present by `in`; the port treats them as absent" });
cas("quirk prototype key required", { type: "object", required: ["valueOf"] }, [{}], { diverges: "required: ['valueOf'] is satisfied through the prototype chain in JS" });

// ---------------------------------------------------------------------------
// Optional differential fuzzing: `node scripts/gen-schema-vectors.mjs --fuzz
// <out.json> [count] [seed]` writes random vectors (random plain and TypeBox
// schemas and arguments, random regex patterns) in the same format; replay
// them with `SCHEMA_VECTORS=<out.json> cargo test --lib json::schema`.
// ---------------------------------------------------------------------------
let seed = 1;
const rnd = (n) => { seed = (seed * 1103515245 + 12345) & 0x7fffffff; return seed % n; };
const pick = (a) => a[rnd(a.length)];
const keys = ["a", "b", "c", "d"];
const pats = ["^[a-z]+$", "\\d", "^x", "a|b", "^.{2,3}$"];
const fmts = ["email", "date-time", "uuid", "uri", "date", "ipv4"];
function plain(d) {
  const r = rnd(d > 2 ? 6 : 12);
  const c = {};
  const num = () => { if (rnd(3) === 0) c.minimum = pick([0, 1, 2.5, -3]); if (rnd(3) === 0) c.maximum = pick([5, 10, 0.5]); if (rnd(5) === 0) c.exclusiveMinimum = pick([0, 1]); if (rnd(6) === 0) c.multipleOf = pick([2, 0.5, 3]); };
  switch (r) {
    case 0: num(); return { type: "number", ...c };
    case 1: num(); return { type: "integer", ...c };
    case 2: if (rnd(3) === 0) c.minLength = pick([1, 2]); if (rnd(3) === 0) c.maxLength = pick([2, 4]); if (rnd(4) === 0) c.pattern = pick(pats); if (rnd(6) === 0) c.format = pick(fmts); return { type: "string", ...c };
    case 3: return { type: "boolean" };
    case 4: return pick([{ type: "null" }, { enum: ["a", 1, null] }, { const: pick([1, "x", true]) }, { type: ["string", "number"] }, { type: ["null", "integer"] }, {}]);
    case 5: return { type: pick(["number", "string", "boolean", "integer"]) };
    case 6: case 7: { const props = {}; const n = 1 + rnd(3); for (let i = 0; i < n; i++) props[keys[i]] = plain(d + 1); const s = { type: "object", properties: props };
      if (rnd(2)) s.required = Object.keys(props).filter(() => rnd(2));
      if (rnd(4) === 0) s.additionalProperties = rnd(2) ? false : plain(d + 1);
      if (rnd(8) === 0) s.minProperties = 1; return s; }
    case 8: { const s = { type: "array", items: rnd(5) ? plain(d + 1) : [plain(d + 1), plain(d + 1)] }; if (rnd(4) === 0) s.minItems = 1; if (rnd(4) === 0) s.maxItems = 2; if (rnd(5) === 0) s.uniqueItems = true; if (rnd(6) === 0) s.contains = plain(d + 1); return s; }
    case 9: return { anyOf: [plain(d + 1), plain(d + 1)] };
    case 10: return { [pick(["oneOf", "allOf"])]: [plain(d + 1), plain(d + 1)] };
    default: switch (rnd(9)) {
      case 0: return { not: plain(d + 1) };
      case 1: return { type: "object", properties: { [pick(keys)]: plain(d + 1) }, [pick(["dependentRequired", "dependencies"])]: { a: ["b"] } };
      case 2: return { if: plain(d + 1), then: plain(d + 1), ...(rnd(2) ? { else: plain(d + 1) } : {}) };
      case 3: return { type: "object", patternProperties: { "^[ab]": plain(d + 1) }, ...(rnd(2) ? { additionalProperties: false } : {}), ...(rnd(2) ? { propertyNames: { maxLength: 1 } } : {}) };
      case 4: return { type: "array", prefixItems: [plain(d + 1)], ...(rnd(2) ? { items: plain(d + 1) } : {}), ...(rnd(2) ? { unevaluatedItems: false } : {}) };
      case 5: return { type: "object", properties: { a: plain(d + 1) }, allOf: [{ properties: { b: plain(d + 1) } }], unevaluatedProperties: rnd(2) ? false : plain(d + 1) };
      case 6: return { type: "object", dependentSchemas: { a: { required: ["c"] } }, properties: { c: plain(d + 1) } };
      case 7: return { $ref: "#/properties/v" === "" ? "#" : "#/$defs/x" };
      default: return { type: "array", items: [plain(d + 1)], additionalItems: rnd(2) ? false : plain(d + 1) };
    }
  }
}
function tb(d) {
  const r = rnd(d > 2 ? 7 : 12);
  switch (r) {
    case 0: return T.Number(rnd(3) ? {} : { minimum: 1 });
    case 1: return T.Integer();
    case 2: return T.String(rnd(4) ? {} : { minLength: 2 });
    case 3: return T.Boolean();
    case 4: return T.Null();
    case 5: return T.Literal(pick(["a", 1, true]));
    case 6: return T.Enum(pick([["x", "y"], [1, 2]]));
    case 7: case 8: { const props = {}; const n = 1 + rnd(3); for (let i = 0; i < n; i++) props[keys[i]] = rnd(3) ? tb(d + 1) : T.Optional(tb(d + 1)); return T.Object(props, rnd(5) ? {} : { additionalProperties: rnd(2) ? false : tb(d + 1) }); }
    case 9: return T.Array(tb(d + 1));
    case 10: return T.Union([tb(d + 1), tb(d + 1)]);
    default: switch (rnd(5)) {
      case 0: return T.Tuple([tb(d + 1), tb(d + 1)]);
      case 1: return T.Record(T.String(), tb(d + 1));
      case 2: return T.Intersect([T.Object({ a: tb(d + 1) }), T.Object({ b: tb(d + 1) })]);
      case 3: return T.TemplateLiteral("n-${number}");
      default: return T.Array(T.Union([T.Literal("x"), T.Number()]), { uniqueItems: true, minItems: 1 });
    }
  }
}
function val(d) {
  const r = rnd(d > 2 ? 9 : 12);
  switch (r) {
    case 0: return null;
    case 1: return rnd(2) === 1;
    case 2: return pick([0, 1, 2, -3, 2.5, 10, 0.5, 1e21]);
    case 3: return pick(["", "a", "ab", "abc", "1", "2.5", "true", "false", "null", "x", "0", " 7 ", "a@b.co", "2024-01-01", "1.2.3.4"]);
    case 4: case 5: return pick(["1", "true", "0", "", "12n", "abc", "-1"]);
    case 6: case 7: case 8: return pick([1, "b", null, true, 0]);
    case 9: { const n = rnd(4); const a = []; for (let i = 0; i < n; i++) a.push(val(d + 1)); return a; }
    default: { const o = {}; const n = rnd(4); for (let i = 0; i < n; i++) o[pick(keys)] = val(d + 1); return o; }
  }
}
const regexAtoms = ["a", "b", ".", "\\d", "\\w", "\\s", "[abc]", "[^a]", "[a-c]", "x", "-", "\\.", "\\b", "^", "$", "é", "😀", "[😀-😂]",
  "\\u0061", "(?:ab)", "\\p{L}", "{", "}", "]", "\\k<n>", "(?<n>a)", "\\c", "\\u{1F600}", "{2,1}", "[\\d-z]", "\\0", "\\1", "\\-", "[\\b]", "\\00"];
function regex(d) {
  const r = rnd(10);
  if (d > 3 || r < 4) return pick(regexAtoms);
  if (r < 6) return regex(d + 1) + regex(d + 1);
  if (r < 7) return "(" + regex(d + 1) + "|" + regex(d + 1) + ")";
  if (r < 8) return "(?:" + regex(d + 1) + ")" + pick(["*", "+", "?", "{2}", "{1,3}", "*?", "{2,1}"]);
  if (r < 9) return pick(["(?=", "(?!", "(?<=", "(?<!"]) + regex(d + 1) + ")";
  return "(" + regex(d + 1) + ")" + pick(["*", "+", "?", "\\1"]);
}

if (process.argv[2] === "--fuzz") {
  const [file, count = "2000", s = "1"] = process.argv.slice(3);
  seed = Number(s);
  vectors.length = 0;
  names.clear();
  const strs = ["", "a", "ab", "x1", "é😀", "a-b", "A_ b", "😁", "\n"];
  for (let i = 0; i < Number(count); i++) {
    if (rnd(4) === 0) {
      props(`fuzz ${i} pattern`, { type: "string", pattern: regex(0) }, [pick(strs) + pick(strs), pick(strs)]);
      continue;
    }
    const useTb = rnd(2) === 0;
    const required = rnd(2) ? ["v"] : [];
    const schema = useTb
      ? () => T.Object({ v: tb(0), w: T.Optional(tb(1)) })
      : obj({ v: plain(0), w: plain(1) }, required, { $defs: { x: plain(2) } });
    cas(`fuzz ${i}`, schema, [rnd(8) === 0 ? val(0) : { v: val(1), ...(rnd(2) ? { w: val(1) } : {}) }]);
  }
  writeFileSync(file, JSON.stringify(vectors));
  console.log(`wrote ${vectors.length} fuzz vectors to ${file}`);
} else {
  mkdirSync(dirname(out), { recursive: true });
  const text = JSON.stringify(vectors, null, 0).replace(/\},\{"name"/g, '},\n{"name"');
  writeFileSync(out, text + "\n");
  console.log(`wrote ${vectors.length} vectors (${text.length} bytes) to ${out}`);
}
