// The engine's own RegExp, number formatting and URL parser for schema
// validation (src/js/validate.rs, json::schema::Host), TypeBox's legacy kind
// check, and the tool-argument helpers of validate.rs and convert.rs.

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
