// The server end of `httpStore` (pi-agent-wasm/session): a Fetch handler that keeps each user's
// session logs in Postgres (PGlite by default, a Postgres server through `pg` for apps that
// outgrow one machine). Mount it at a path whose last segment is the session id, e.g.
// `/api/sessions/:id`. A user reads and writes only their own sessions: `authorize(request)`
// names the user, and logs are kept per user.

import { HttpError, authorizeRequest, checkSite, endpointOptions, errorResponse, jsonResponse, limit, readText, report, withHeaders } from "./http.js";
import { isSessionDatabase, sessionDatabase } from "./database.js";

const NAME = "createStoreHandler";
const METHODS = ["GET", "POST", "PUT", "DELETE"];

/** The session id: the last segment of the path. */
function sessionId(request) {
  const path = new URL(request.url).pathname;
  const segment = path.slice(path.lastIndexOf("/") + 1);
  let id;
  try {
    id = decodeURIComponent(segment);
  } catch {
    throw new HttpError(400, "session id: not a valid URL segment");
  }
  if (id === "" || id.length > 256) throw new HttpError(400, "session id: the last path segment must be 1 to 256 characters");
  return id;
}

/** A non-negative integer header, or undefined when absent. */
function lengthHeader(request, name) {
  const value = request.headers.get(name);
  if (value === null) return undefined;
  if (!/^\d{1,15}$/.test(value)) throw new HttpError(400, `${name}: must be a non-negative integer`);
  return Number(value);
}

/**
 * A Fetch handler for `httpStore`: GET (read from `?from=N`), POST (append), PUT (replace) and
 * DELETE (clear) of `<mount>/:id`. See docs/server.md.
 */
export function createStoreHandler(options) {
  const common = endpointOptions(NAME, options);
  const db = isSessionDatabase(options.database) ? options.database : sessionDatabase(options.database);
  const bodyBytes = limit(NAME, options.limits, "bodyBytes", 16 * 1024 * 1024);
  const bodyMs = limit(NAME, options.limits, "bodyMs", 30_000);
  const logChars = limit(NAME, options.limits, "logChars", 64 * 1024 * 1024);

  async function handle(request, owner, cors) {
    const id = sessionId(request);
    if (request.method === "GET") {
      const query = new URL(request.url).searchParams.get("from") ?? "0";
      if (!/^\d{1,15}$/.test(query)) throw new HttpError(400, "from: must be a non-negative integer");
      const { text, length } = await db.read(owner, id, Number(query));
      const wellFormed = text.isWellFormed();
      return new Response(wellFormed ? text : JSON.stringify(text), {
        status: 200,
        headers: {
          "content-type": wellFormed ? "text/plain; charset=utf-8" : "application/json",
          "x-log-length": String(length),
          "cache-control": "no-store",
          "x-content-type-options": "nosniff",
          ...cors,
        },
      });
    }
    if (request.method === "DELETE") {
      await db.clear(owner, id);
      return jsonResponse({ length: 0 }, cors);
    }
    const expected = lengthHeader(request, "x-log-length");
    const declared = lengthHeader(request, "x-text-length");
    const raw = await readText(request, bodyBytes, bodyMs);
    let text = raw;
    if ((request.headers.get("content-type") ?? "").startsWith("application/json")) {
      try {
        text = JSON.parse(raw);
      } catch {
        throw new HttpError(400, "body: malformed JSON");
      }
      if (typeof text !== "string") throw new HttpError(400, "body: a JSON body must be the text as a JSON string");
    }
    // A body cut or changed on the way is refused: the log gets all of it or nothing.
    if (declared !== undefined && declared !== text.length) {
      throw new HttpError(400, `body: ${text.length} characters received, x-text-length says ${declared}`);
    }
    const base = request.method === "PUT" ? 0 : expected ?? (await db.read(owner, id, Infinity)).length;
    if (base + text.length > logChars) throw new HttpError(413, `session log too large (limit ${logChars} characters)`);
    const out = request.method === "PUT" ? await db.replace(owner, id, text, expected) : await db.append(owner, id, text, expected);
    if (out.conflict !== undefined) {
      return errorResponse(409, `conflict: the session log has ${out.conflict} characters, not ${expected}`, { length: out.conflict }, cors);
    }
    return jsonResponse({ length: out.length }, cors);
  }

  return async function handleStoreRequest(request) {
    let cors = {};
    try {
      const site = checkSite(request, common, METHODS);
      if (site instanceof Response) return site;
      cors = site;
      const auth = await authorizeRequest(common.authorize, request);
      if (auth.response) return withHeaders(auth.response, cors);
      return await handle(request, auth.key, cors);
    } catch (err) {
      if (err instanceof HttpError) {
        await request.body?.cancel().catch(() => {});
        return errorResponse(err.status, err.message, undefined, cors);
      }
      report(common.onError, err, request);
      return errorResponse(500, "internal error", undefined, cors);
    }
  };
}
