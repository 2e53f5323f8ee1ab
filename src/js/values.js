// Plain-value helpers shared by the whole binding layer (Rust side: src/js/values.rs):
// type tests, string conversion, own-key reads and writes, clock, array copies.

export const isObjectLike = (value) => value !== null && (typeof value === "object" || typeof value === "function");

const TYPE_TAGS = { undefined: 0, boolean: 1, number: 2, string: 3, function: 4, symbol: 5, bigint: 6 };

/** See view.rs `TypeTag`. */
export const typeTag = (value) =>
  value === null ? 0 : typeof value === "object" ? (Array.isArray(value) ? 7 : 8) : (TYPE_TAGS[typeof value] ?? 8);

/** `signal?.aborted` as a boolean; a throwing getter reads as not aborted. */
export function isAborted(signal) {
  try {
    return isObjectLike(signal) && !!signal.aborted;
  } catch {
    return false;
  }
}

export function isThenable(value) {
  return isObjectLike(value) && typeof value.then === "function";
}


export function errText(error) {
  return error instanceof Error ? error.message : String(error);
}

export const shallow = (o) => ({ ...o });

export const mono = () => performance.now();

export const toArray = (value) => (Array.isArray(value) ? value : Array.from(value));


/** Own-property assignment that cannot reach a prototype (a `__proto__` key stays data). */
export function setKey(object, key, value) {
  if (key === "__proto__") Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
  else object[key] = value;
}

export const jsonStringify = (value, indent) => JSON.stringify(value, null, indent);

export const jsString = (value) => String(value);

export const ownKeys = (object) => Object.keys(object);

/** Appends every element of `source` to `target`. */
export function pushAll(target, source) {
  for (let i = 0; i < source.length; i++) target.push(source[i]);
}
