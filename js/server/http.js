// What both endpoints of pi-agent-wasm/server do with a request before their own work: the
// checks of Host, Origin and method, CORS, authorization, the body read within its limits, and
// JSON error responses. Plain Fetch API (Request, Response, ReadableStream), so it runs in
// Node, Deno, Bun, Cloudflare Workers and every framework built on them.

/** An answer with an HTTP status, carried from a check to the response (never a crash). */
export class HttpError extends Error {
  constructor(status, message, extra) {
    super(message);
    this.name = "HttpError";
    this.status = status;
    this.extra = extra;
  }
}

const SECURITY_HEADERS = { "x-content-type-options": "nosniff", "cache-control": "no-store" };

/** A JSON response `{ error, ...extra }`, the shape `streamProxy` (ours and 1.4.0's) reads. */
export function errorResponse(status, message, extra, headers) {
  return new Response(JSON.stringify({ error: message, ...extra }), {
    status,
    headers: { "content-type": "application/json; charset=utf-8", ...SECURITY_HEADERS, ...headers },
  });
}

export function jsonResponse(body, headers) {
  return new Response(JSON.stringify(body), {
    status: 200,
    headers: { "content-type": "application/json; charset=utf-8", ...SECURITY_HEADERS, ...headers },
  });
}

/** `response` with `headers` added (the CORS headers of an allowed origin on a refusal, so the page can read it). */
export function withHeaders(response, headers) {
  const names = Object.keys(headers);
  if (names.length === 0) return response;
  const merged = new Headers(response.headers);
  for (const name of names) merged.set(name, headers[name]);
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers: merged });
}

/** The options every endpoint shares, checked at construction: a missing `authorize` is a TypeError. */
export function endpointOptions(name, options) {
  if (options === null || typeof options !== "object") throw new TypeError(`${name}(options): options must be an object`);
  if (typeof options.authorize !== "function") {
    throw new TypeError(
      `${name}(options): options.authorize must be a function (request) => user: it decides who may use the endpoint, and there is no open default`,
    );
  }
  const list = (key) => {
    const value = options[key];
    if (value === undefined) return undefined;
    if (!Array.isArray(value) || value.some((v) => typeof v !== "string")) throw new TypeError(`${name}(options): options.${key} must be an array of strings`);
    return new Set(value.map((v) => v.toLowerCase()));
  };
  const origins = list("origins");
  const hosts = list("hosts");
  for (const key of ["onError"]) {
    if (options[key] !== undefined && typeof options[key] !== "function") throw new TypeError(`${name}(options): options.${key} must be a function`);
  }
  return { authorize: options.authorize, origins, hosts, onError: options.onError };
}

/** A limit option: a positive integer, or the default. */
export function limit(name, limits, key, fallback) {
  const value = limits?.[key];
  if (value === undefined) return fallback;
  if (!(Number.isInteger(value) && value > 0) && value !== Infinity) throw new TypeError(`${name}(options): options.limits.${key} must be a positive integer`);
  return value;
}

const hostOf = (url) => {
  try {
    return new URL(url).host.toLowerCase();
  } catch {
    return undefined;
  }
};

/**
 * Checks Host and Origin, answers CORS preflights. Returns a Response to send now (a refusal or a
 * preflight's answer), or the headers to add to the answer (CORS for an allowed origin).
 *
 * A request from a browser carries `Origin` when it is cross-origin (and on same-origin POSTs):
 * it must be the endpoint's own or one of `origins`. Own means what the browser says in
 * `Sec-Fetch-Site` (a header pages cannot set) when it sends one, else an Origin whose host is the
 * request's Host (a reverse proxy that rewrites Host, as nginx does by default, then needs the
 * browser's word). A request without `Origin` (a server, curl) is not a browser's and CORS does
 * not apply to it. `hosts` (optional) is the list of
 * `Host` values the server answers to: a page of another site that resolves its own name to
 * this server's address (DNS rebinding) sends its own name as `Host`.
 */
export function checkSite(request, { origins, hosts }, methods) {
  const host = (request.headers.get("host") ?? hostOf(request.url) ?? "").toLowerCase();
  if (hosts && !hosts.has(host)) return errorResponse(403, `host not allowed: ${host || "(none)"}`);
  const origin = request.headers.get("origin");
  let cors;
  if (origin !== null && origin !== "null") {
    const fetchSite = request.headers.get("sec-fetch-site");
    const same = fetchSite !== null ? fetchSite === "same-origin" : hostOf(origin) === host;
    if (origins?.has(origin.toLowerCase())) cors = { "access-control-allow-origin": origin, vary: "Origin" };
    else if (!same) return errorResponse(403, `origin not allowed: ${origin}`);
  } else if (origin === "null") {
    return errorResponse(403, "origin not allowed: null");
  }
  if (request.method === "OPTIONS") {
    if (!cors) return errorResponse(403, "CORS is not enabled for this origin");
    return new Response(null, {
      status: 204,
      headers: {
        ...cors,
        "access-control-allow-methods": methods.join(", "),
        "access-control-allow-headers": "authorization, content-type, x-log-length, x-text-length",
        "access-control-expose-headers": "x-log-length",
        "access-control-max-age": "600",
      },
    });
  }
  if (!methods.includes(request.method)) {
    return errorResponse(405, `method not allowed: use ${methods.join(" or ")}`, undefined, { allow: methods.join(", "), ...cors });
  }
  return cors ? { ...cors, "access-control-expose-headers": "x-log-length" } : {};
}

/**
 * The user `authorize(request)` names: a string or number, or an object (its `id` keys the
 * per-user limits and the stored sessions). A falsy value refuses the request with 401; a
 * Response is sent as it is.
 */
export async function authorizeRequest(authorize, request) {
  const user = await authorize(request);
  if (user instanceof Response) return { response: user };
  if (user === undefined || user === null || user === false || user === "") {
    return { response: errorResponse(401, "unauthorized: missing or invalid credentials") };
  }
  const key = typeof user === "object" ? user.id : user;
  if ((typeof key !== "string" || key === "") && typeof key !== "number") {
    throw new TypeError("authorize(request) returned an object without an `id` (a string or number): it keys the user's sessions and limits");
  }
  return { user, key: String(key) };
}

/**
 * Reads the body as text, at most `maxBytes` bytes (413 beyond, by Content-Length or while
 * reading, the read then cancelled) and within `ms` milliseconds (408: a body that never ends).
 */
export async function readText(request, maxBytes, ms) {
  const declared = Number(request.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await request.body?.cancel().catch(() => {});
    throw new HttpError(413, `request body too large (limit ${maxBytes} bytes)`);
  }
  if (!request.body) return "";
  const reader = request.body.getReader();
  const decoder = new TextDecoder();
  const parts = [];
  let size = 0;
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new HttpError(408, `request body not received within ${ms} ms`)), ms);
  });
  try {
    for (;;) {
      const { done, value } = await Promise.race([reader.read(), late]);
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) throw new HttpError(413, `request body too large (limit ${maxBytes} bytes)`);
      parts.push(decoder.decode(value, { stream: true }));
    }
    parts.push(decoder.decode());
    return parts.join("");
  } catch (err) {
    reader.cancel().catch(() => {});
    if (err instanceof HttpError) throw err;
    throw new HttpError(400, `request body could not be read: ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    clearTimeout(timer);
  }
}

/** Reports to `onError` (when given), never throwing from the report. */
export function report(onError, error, request) {
  if (!onError) return;
  try {
    onError(error, request);
  } catch {
    // The app's logger failed: nothing else to tell.
  }
}
