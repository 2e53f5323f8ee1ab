// A session store on the app's server (`createStoreHandler` of pi-agent-wasm/server, or any
// endpoint that speaks the same HTTP), so that a session follows its user to another browser
// or device. One URL per session, `${url}/${encodeURIComponent(id)}`:
//   GET    ?from=N   the log's text after its first N characters; `x-log-length`: its length
//   POST             appends the body; `x-log-length`: the length the writer extends (409 and
//                    `{ error, length }` when the log has another length)
//   PUT              replaces the log with the body (the same check)
//   DELETE           deletes the log
// Bodies are the text itself (text/plain), or its JSON string when it is not well-formed UTF-16
// (a lone surrogate would not survive UTF-8); `x-text-length` gives its length in UTF-16 code
// units, so a body cut or changed on the way is refused, never stored.

import { SessionConflictError } from "../conflict.js";

export { SessionConflictError } from "../conflict.js";

const body = (text) =>
  text.isWellFormed?.() === false
    ? { type: "application/json", data: JSON.stringify(text) }
    : { type: "text/plain;charset=utf-8", data: text };

/**
 * A `SessionStore` whose logs live on the app's server at `url` (e.g. "/api/sessions").
 * `options.headers`: headers of every request (an object, or a function that returns one, or a
 * promise of one: the user's credentials); `options.fetch`: the fetch to use;
 * `options.credentials`: the requests' credentials mode (default "same-origin").
 */
export function httpStore(url, options = {}) {
  if (typeof url !== "string" && !(url instanceof URL)) throw new TypeError("httpStore(url, options): url must be a string or a URL");
  const base = String(url).replace(/\/+$/, "");
  const fetchFn = options.fetch ?? ((...args) => globalThis.fetch(...args));
  const credentials = options.credentials ?? "same-origin";
  const at = (id, query = "") => `${base}/${encodeURIComponent(id)}${query}`;

  async function send(method, id, { query, text, length } = {}) {
    const extra = typeof options.headers === "function" ? await options.headers() : options.headers;
    const headers = new Headers(extra ?? undefined);
    let payload;
    if (text !== undefined) {
      const b = body(text);
      payload = b.data;
      headers.set("content-type", b.type);
      headers.set("x-text-length", String(text.length));
      if (length !== undefined) headers.set("x-log-length", String(length));
    }
    const response = await fetchFn(at(id, query), { method, headers, body: payload, credentials, cache: "no-store" });
    if (response.ok) return response;
    let error = `${response.status} ${response.statusText}`.trim();
    let current;
    try {
      const data = await response.json();
      if (typeof data?.error === "string") error = data.error;
      current = data?.length;
    } catch {
      // Not JSON: the status line says it.
    }
    if (response.status === 409 && Number.isInteger(current)) throw new SessionConflictError(current);
    throw new Error(`pi-agent-wasm/session: ${method} ${at(id)}: ${error}`);
  }

  const read = async (id, from) => {
    const response = await send("GET", id, { query: from > 0 ? `?from=${from}` : "" });
    if ((response.headers.get("content-type") ?? "").startsWith("application/json")) return String(await response.json());
    return response.text();
  };

  return {
    // Other browsers and devices write these logs too: a session checks for their writes when its page is shown again.
    shared: true,
    load: (id) => read(id, 0),
    loadFrom: (id, from) => read(id, from),
    async append(id, text, appendOptions) {
      await send("POST", id, { text, length: appendOptions?.length });
    },
    async replace(id, text, replaceOptions) {
      await send("PUT", id, { text, length: replaceOptions?.length });
    },
    async clear(id) {
      await send("DELETE", id);
    },
  };
}
