// Tool-argument helpers of validate.rs.

/** `structuredClone(args)`: 1.4.0 copies tool arguments so before validating them (same errors). */
export const cloneArguments = (args) => structuredClone(args);

/** Whether `value` (an object, not an array) is a plain object: its prototype `Object.prototype` or `null`. */
export function isPlainObject(value) {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
