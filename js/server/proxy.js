// The server half of `streamProxy`: a Fetch handler `(request) => Promise<Response>` that checks
// who asks and what, calls the provider through pi-ai with the server's key, and streams the
// answer back in the proxy protocol. It keeps no state between requests but the count of each
// user's open streams, so any number of server processes can serve the same app.

import { HttpError, authorizeRequest, checkSite, endpointOptions, errorResponse, limit, readText, report, withHeaders } from "./http.js";
import { errorLine, proxyLine } from "./proxy-events.js";
import { parseProxyRequest } from "./proxy-request.js";

const NAME = "createProxyHandler";

const isModel = (m) => m !== null && typeof m === "object" && typeof m.provider === "string" && typeof m.id === "string";

/** How a request's model is found: an allow-list (Model objects or "provider/id" names) or the app's function. */
function modelResolver(models, collection) {
  if (typeof models === "function") {
    return async (requested, request) => {
      const model = await models(requested, request);
      if (model === undefined || model === null) return undefined;
      // The client's own object would carry its baseUrl, headers and api to the provider.
      if (model === requested) throw new TypeError(`${NAME}: options.models returned the request's own model object: return the server's Model`);
      if (!isModel(model)) throw new TypeError(`${NAME}: options.models returned something that is not a pi-ai Model`);
      return model;
    };
  }
  if (!Array.isArray(models) || models.length === 0) {
    throw new TypeError(
      `${NAME}(options): options.models must be the models a client may use: a non-empty array of pi-ai Models or "provider/id" names, or a function (requested, request) => Model`,
    );
  }
  const offered = new Map();
  for (const entry of models) {
    let model = entry;
    if (typeof entry === "string") {
      const slash = entry.indexOf("/");
      if (slash <= 0 || slash === entry.length - 1) throw new TypeError(`${NAME}(options): options.models: "${entry}" is not a "provider/id" name`);
      if (typeof collection?.getModel !== "function") {
        throw new TypeError(`${NAME}(options): options.models: the name "${entry}" needs options.stream to be a pi-ai Models collection (or list Model objects)`);
      }
      model = collection.getModel(entry.slice(0, slash), entry.slice(slash + 1));
      if (!model) throw new TypeError(`${NAME}(options): options.models: ${entry} is not a model of options.stream`);
    } else if (!isModel(entry)) {
      throw new TypeError(`${NAME}(options): options.models: every entry must be a pi-ai Model or a "provider/id" name`);
    }
    offered.set(`${model.provider}/${model.id}`, model);
  }
  return (requested) => offered.get(`${requested.provider}/${requested.id}`);
}

/** Replaces every secret (and its URL-encoded form) in a text; shorter than 6 characters is not a secret. */
function redactor(secrets) {
  const list = [];
  for (const s of secrets) {
    if (typeof s !== "string" || s.length < 6) continue;
    list.push(s);
    const encoded = encodeURIComponent(s);
    if (encoded !== s) list.push(encoded);
  }
  list.sort((a, b) => b.length - a.length);
  return (text) => {
    let out = String(text ?? "");
    for (const s of list) if (out.includes(s)) out = out.split(s).join("[redacted]");
    return out;
  };
}

/** The headers of a provider's auth that carry a credential (the others, such as a beta flag, are not secret). */
const CREDENTIAL_HEADER = /authorization|api-?key|token|secret|cookie/i;
const message = (err) => (err instanceof Error ? err.message : String(err));
// A macrotask: the events a provider delivers together go out in one write.
const defer = typeof setImmediate === "function" ? setImmediate : (f) => setTimeout(f, 0);

/**
 * A Fetch handler for `POST /api/stream`, the endpoint `streamProxy` calls. See the README's
 * "Server" section and docs/server.md.
 */
export function createProxyHandler(options) {
  const common = endpointOptions(NAME, options);
  const stream = options.stream;
  let streamFn;
  let collection;
  if (typeof stream === "function") streamFn = stream;
  else if (stream !== null && typeof stream === "object" && typeof stream.streamSimple === "function") {
    collection = stream;
    streamFn = (model, context, streamOptions) => stream.streamSimple(model, context, streamOptions);
  } else {
    throw new TypeError(
      `${NAME}(options): options.stream must be a pi-ai Models collection (builtinModels(), createModels()) or a stream function (model, context, options) => AssistantMessageEventStream`,
    );
  }
  const resolve = modelResolver(options.models, collection);
  for (const key of ["getApiKey", "onUsage"]) {
    if (options[key] !== undefined && typeof options[key] !== "function") throw new TypeError(`${NAME}(options): options.${key} must be a function`);
  }
  if (options.secrets !== undefined && (!Array.isArray(options.secrets) || options.secrets.some((s) => typeof s !== "string"))) {
    throw new TypeError(`${NAME}(options): options.secrets must be an array of strings`);
  }
  const { getApiKey, onUsage, onError } = { ...options, onError: common.onError };
  const limits = options.limits;
  const bodyBytes = limit(NAME, limits, "bodyBytes", 4 * 1024 * 1024);
  const bodyMs = limit(NAME, limits, "bodyMs", 30_000);
  const requestMs = limit(NAME, limits, "requestMs", 10 * 60_000);
  const maxTokens = limit(NAME, limits, "maxTokens", Infinity);
  const streamsPerUser = limit(NAME, limits, "streamsPerUser", 4);
  const optionLimits = { maxTokens, maxRetryDelayMs: Math.min(requestMs, 60_000) };
  const fixedSecrets = options.secrets ?? [];

  // Open streams per user key (bodies being read included).
  const open = new Map();
  const release = (key) => {
    const n = (open.get(key) ?? 1) - 1;
    if (n <= 0) open.delete(key);
    else open.set(key, n);
  };

  /** What an error may not show: the key given to the provider, the app's secrets, and what pi-ai resolves itself. */
  async function secretsFor(model, apiKey) {
    const secrets = [...fixedSecrets];
    if (apiKey !== undefined) secrets.push(apiKey);
    else if (typeof collection?.getAuth === "function") {
      try {
        const auth = (await collection.getAuth(model))?.auth;
        if (typeof auth?.apiKey === "string") secrets.push(auth.apiKey);
        for (const [name, v] of Object.entries(auth?.headers ?? {})) {
          if (typeof v === "string" && CREDENTIAL_HEADER.test(name)) secrets.push(v, v.replace(/^(Bearer|Basic)\s+/i, ""));
        }
      } catch {
        // The provider will report its auth failure in the stream.
      }
    }
    return secrets;
  }

  return async function handleProxyRequest(request) {
    const started = Date.now();
    let cors = {};
    let key;
    try {
      const site = checkSite(request, common, ["POST"]);
      if (site instanceof Response) return site;
      cors = site;
      const auth = await authorizeRequest(common.authorize, request);
      if (auth.response) return withHeaders(auth.response, cors);
      if ((open.get(auth.key) ?? 0) >= streamsPerUser) {
        await request.body?.cancel().catch(() => {});
        return errorResponse(429, `too many concurrent streams (limit ${streamsPerUser} per user)`, undefined, cors);
      }
      key = auth.key;
      open.set(key, (open.get(key) ?? 0) + 1);
      const text = await readText(request, bodyBytes, bodyMs);
      const parsed = await parseProxyRequest(text, (requested) => resolve(requested, request), optionLimits);
      const apiKey = getApiKey ? await getApiKey(parsed.model.provider, request) : undefined;
      if (apiKey !== undefined && typeof apiKey !== "string") throw new TypeError(`${NAME}: options.getApiKey must return a string or undefined`);
      const redact = redactor(await secretsFor(parsed.model, apiKey));
      const slot = key;
      key = undefined; // the stream releases it
      return streamResponse({ request, ...parsed, apiKey, user: auth.user, redact, cors, deadline: started + requestMs, release: () => release(slot) });
    } catch (err) {
      if (key !== undefined) release(key);
      if (err instanceof HttpError) {
        if (err.status === 413 || err.status === 408) await request.body?.cancel().catch(() => {});
        return errorResponse(err.status, err.message, undefined, cors);
      }
      report(onError, err, request);
      return errorResponse(500, "internal error", undefined, cors);
    }
  };

  function streamResponse({ request, model, context, options: streamOptions, apiKey, user, redact, cors, deadline, release }) {
    const upstream = new AbortController();
    const encoder = new TextEncoder();
    let why; // "client": the browser went away; "time": the request time limit
    let controller;
    let closed = false;
    let pending = "";
    let scheduled = false;
    let usage;
    let stopReason;

    const flush = () => {
      scheduled = false;
      if (closed || pending === "") return;
      controller.enqueue(encoder.encode(pending));
      pending = "";
    };
    const write = (line) => {
      if (closed || line === "") return;
      pending += line;
      if (!scheduled) {
        scheduled = true;
        defer(flush);
      }
    };
    /** Ends the response once (the provider's stream may go on: its end is still read for usage). */
    const close = () => {
      if (closed) return;
      flush();
      closed = true;
      clearTimeout(timer);
      request.signal?.removeEventListener?.("abort", onClientGone);
      release();
      try {
        controller.close();
      } catch {
        // Cancelled by the client already.
      }
    };
    const stop = (reason) => {
      if (why !== undefined) return;
      why = reason;
      upstream.abort();
      if (reason === "time") write(errorLine(`request time limit reached (${requestMs} ms)`));
      close();
    };
    const onClientGone = () => stop("client");
    const timer = setTimeout(() => stop("time"), Math.max(0, deadline - Date.now()));

    async function pump() {
      try {
        const source = await streamFn(model, context, { ...streamOptions, ...(apiKey !== undefined && { apiKey }), signal: upstream.signal });
        for await (const event of source) {
          const type = event?.type;
          if (type === "done") {
            usage = event.message?.usage;
            stopReason = event.reason;
          } else if (type === "error") {
            usage = event.error?.usage;
            stopReason = event.reason;
            if (why === undefined) {
              const errorMessage = event.error?.errorMessage;
              write(proxyLine(errorMessage === undefined ? event : { ...event, error: { ...event.error, errorMessage: redact(errorMessage) } }));
            }
            break;
          }
          if (why === undefined) write(proxyLine(event));
          if (type === "done") break;
        }
        if (stopReason === undefined && why === undefined) write(errorLine("the provider's stream ended without a result"));
      } catch (err) {
        stopReason ??= "error";
        if (why === undefined) write(errorLine(redact(message(err))));
      }
      close();
      if (onUsage && usage) {
        try {
          await onUsage(user, usage, { model, request, stopReason: why === "client" ? "aborted" : why === "time" ? "error" : stopReason });
        } catch (err) {
          report(onError, err, request);
        }
      }
    }

    const body = new ReadableStream({
      start(c) {
        controller = c;
        if (request.signal?.aborted) return stop("client");
        request.signal?.addEventListener?.("abort", onClientGone);
        pump();
      },
      cancel: () => stop("client"),
    });
    return new Response(body, {
      status: 200,
      headers: {
        "content-type": "text/event-stream; charset=utf-8",
        // Not no-store: Chromium reports a streamed fetch of a no-store response as net::ERR_ABORTED although the page
        // read it to its end (most finished requests did, with 1.4.0's streamProxy as with ours); no-cache keeps the
        // answer out of caches as well.
        "cache-control": "no-cache, no-transform",
        "x-accel-buffering": "no",
        "x-content-type-options": "nosniff",
        ...cors,
      },
    });
  }
}
