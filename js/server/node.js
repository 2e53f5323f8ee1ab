// Node's `http` (and Express, Fastify's raw mode, Koa's `ctx.req`/`ctx.res`) take `(req, res)`,
// not a Fetch `Request`. `toNodeHandler(handler)` turns a Fetch handler of this entry into one:
// the request's body streams into the handler (so its limits apply while reading), the
// response streams out with backpressure, and a client that goes away aborts the handler's
// request signal and cancels its response body (which aborts the provider request).

/** How much of an unread request body is read and dropped after the answer before the connection is closed. */
const DRAIN_BYTES = 1024 * 1024;

function requestBody(req) {
  // Express's body parsers read the stream before us: use what they parsed.
  if (req.body !== undefined && (req.readableEnded || req.complete)) {
    const b = req.body;
    if (typeof b === "string" || b instanceof Uint8Array) return b;
    return JSON.stringify(b);
  }
  return new ReadableStream({
    start(controller) {
      req.on("data", (chunk) => {
        controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
        if ((controller.desiredSize ?? 1) <= 0) req.pause();
      });
      req.on("end", () => {
        try {
          controller.close();
        } catch {
          // Cancelled before the end.
        }
      });
      req.on("error", (err) => {
        try {
          controller.error(err);
        } catch {
          // Cancelled before the error.
        }
      });
      req.on("aborted", () => {
        try {
          controller.error(new Error("the client closed the request"));
        } catch {
          // Cancelled before.
        }
      });
    },
    pull() {
      req.resume();
    },
    cancel() {
      req.pause();
    },
  });
}

/**
 * Adapts a Fetch handler `(request) => Promise<Response>` (`createProxyHandler`,
 * `createStoreHandler`) to Node's `(req, res)`: `http.createServer(toNodeHandler(handler))`, or
 * `app.post("/api/stream", toNodeHandler(handler))` in Express.
 */
export function toNodeHandler(handler) {
  if (typeof handler !== "function") throw new TypeError("toNodeHandler(handler): handler must be a function (request) => Promise<Response>");
  return async function nodeHandler(req, res, next) {
    const aborted = new AbortController();
    const onClose = () => {
      if (!res.writableFinished) aborted.abort();
    };
    res.on("close", onClose);
    let reader;
    try {
      const encrypted = req.socket?.encrypted === true;
      const url = new URL(req.originalUrl ?? req.url ?? "/", `${encrypted ? "https" : "http"}://${req.headers.host ?? "localhost"}`);
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) {
        if (value === undefined) continue;
        if (Array.isArray(value)) for (const v of value) headers.append(name, v);
        else headers.set(name, value);
      }
      const method = req.method ?? "GET";
      const hasBody = method !== "GET" && method !== "HEAD";
      const request = new Request(url, {
        method,
        headers,
        body: hasBody ? requestBody(req) : undefined,
        duplex: "half",
        signal: aborted.signal,
      });
      const response = await handler(request);
      if (res.destroyed) {
        await response.body?.cancel().catch(() => {});
        return;
      }
      const out = {};
      response.headers.forEach((value, name) => {
        if (name !== "set-cookie") out[name] = value;
      });
      const cookies = response.headers.getSetCookie?.() ?? [];
      if (cookies.length > 0) out["set-cookie"] = cookies;
      // A body the handler did not read (a refusal before reading it): the connection is not reused.
      if (hasBody && !req.complete) out.connection = "close";
      res.writeHead(response.status, response.statusText || undefined, out);
      if (!response.body) {
        res.end();
      } else {
        res.flushHeaders();
        reader = response.body.getReader();
        const drained = () =>
          new Promise((resolve) => {
            const done = () => {
              res.off("drain", done);
              res.off("close", done);
              resolve();
            };
            res.on("drain", done);
            res.on("close", done);
          });
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          if (res.destroyed) break;
          if (!res.write(value)) await drained();
          if (res.destroyed) break;
        }
        if (res.destroyed) await reader.cancel().catch(() => {});
        else res.end();
      }
    } catch (err) {
      if (reader) await reader.cancel().catch(() => {});
      if (typeof next === "function") return next(err);
      if (!res.headersSent) {
        res.writeHead(500, { "content-type": "application/json; charset=utf-8" });
        res.end(JSON.stringify({ error: "internal error" }));
      } else res.destroy();
    } finally {
      res.off("close", onClose);
      if (!req.complete && !req.destroyed) drainThenClose(req);
    }
  };
}

/** Reads and drops what is left of a request body (so the client, still sending, gets the answer), then closes. */
function drainThenClose(req) {
  let dropped = 0;
  req.removeAllListeners("data");
  req.on("data", (chunk) => {
    dropped += chunk.length;
    if (dropped > DRAIN_BYTES) req.socket?.destroy();
  });
  req.on("end", () => req.socket?.end());
  const timer = setTimeout(() => req.socket?.destroy(), 5000);
  timer.unref?.();
  req.once("close", () => clearTimeout(timer));
  req.resume();
}
