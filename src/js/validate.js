// The engine's own RegExp, number formatting and URL parser for schema
// validation (src/js/validate.rs, json::schema::Host), TypeBox's legacy kind
// check, and the tool-argument helpers of validate.rs and convert.rs: arguments
// that are plain JSON data are copied here and cross as JSON text.

import { isObjectLike, setKey } from "./values.js";

export const hasLegacyTypeBoxKind = (schema) => Object.getOwnPropertySymbols(schema).includes(Symbol.for("TypeBox.Kind"));

export function regexTest(pattern, flags, text) {
  try {
    return new RegExp(pattern, flags).test(text);
  } catch (e) {
    return String(e.message);
  }
}

export const numberToString = (n) => String(n);

export const stringToNumber = (s) => Number(s);

export const urlCanParse = (url, base) => URL.canParse(url, base);

/** `structuredClone(args)`: 1.4.0 copies tool arguments so before validating them (same errors). */
export const cloneArguments = (args) => structuredClone(args);

/** Whether `value` (an object, not an array) is a plain object: its prototype `Object.prototype` or `null`. */
export function isPlainObject(value) {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** Schema object → its validator (validate.rs `make_validator`). */
const VALIDATORS = new WeakMap();

/**
 * 1.4.0's `validateToolArguments(tool, toolCall)`: the arguments `execute` gets, or its error.
 * `compile(schema, cacheable)` makes a schema's validator (validate.rs).
 */
export function validateToolArguments(tool, toolCall, compile) {
  const argumentsError = toolCall.argumentsError;
  if (argumentsError) throw new Error('Invalid arguments for tool "' + String(tool.name) + '": ' + String(argumentsError));
  const original = toolCall.arguments;
  const schema = tool.parameters;
  let validate;
  if (isObjectLike(schema)) {
    validate = VALIDATORS.get(schema);
    if (validate === undefined) VALIDATORS.set(schema, (validate = compile(schema, true)));
  } else validate = compile(schema, false);
  try {
    return validateArguments(validate, original);
  } catch (lines) {
    if (!Array.isArray(lines)) throw lines;
    const head = 'Validation failed for tool "' + String(tool.name) + '":\n' + lines.join("\n");
    throw new Error(head + "\n\nReceived arguments:\n" + String(JSON.stringify(original, null, 2)));
  }
}

/**
 * `validate(args, json)`, the validator of validate.rs, on a tool call's arguments. Plain JSON
 * data (what a model's stream produces) is copied here in one pass and handed over as the copy's
 * JSON text; the copy is what `execute` gets unless coercion changed something (then the
 * validator returns the coerced arguments). Anything else (`undefined` members, holes, a `Date`,
 * `-0`, `NaN`, a lone surrogate, a getter that throws...) goes to the validator as is, which
 * copies it as 1.4.0 does.
 */
function validateArguments(validate, args) {
  let copy;
  try {
    copy = plainCopy(args, 0);
  } catch {
    copy = NOT_PLAIN;
  }
  if (copy === NOT_PLAIN) return validate(args, undefined);
  const coerced = validate(args, JSON.stringify(copy));
  return coerced === undefined ? copy : coerced;
}

const NOT_PLAIN = Symbol("not plain JSON data");
const isWellFormed = String.prototype.isWellFormed ? (s) => s.isWellFormed() : () => false;

/** A fresh copy of plain JSON data (as validate.rs `to_js` builds it), else `NOT_PLAIN`. */
function plainCopy(value, depth) {
  switch (typeof value) {
    case "string":
      return isWellFormed(value) ? value : NOT_PLAIN;
    case "number":
      return Number.isFinite(value) && !Object.is(value, -0) ? value : NOT_PLAIN;
    case "boolean":
      return value;
    case "object":
      break;
    default:
      return NOT_PLAIN;
  }
  if (value === null) return null;
  // Deep nesting (a cycle) and huge arrays: the validator's own walk says what is wrong.
  if (depth >= 256) return NOT_PLAIN;
  if (Array.isArray(value)) {
    const n = value.length;
    if (n > 1 << 24) return NOT_PLAIN;
    const out = new Array(n);
    for (let i = 0; i < n; i++) {
      const item = plainCopy(value[i], depth + 1);
      if (item === NOT_PLAIN) return NOT_PLAIN;
      out[i] = item;
    }
    return out;
  }
  if (!isPlainObject(value)) return NOT_PLAIN;
  const out = {};
  for (const key of Object.keys(value)) {
    const item = plainCopy(value[key], depth + 1);
    if (item === NOT_PLAIN) return NOT_PLAIN;
    setKey(out, key, item);
  }
  return out;
}
