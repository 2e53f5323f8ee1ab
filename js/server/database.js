// Session logs in Postgres: PGlite (Postgres compiled to WebAssembly, in the server's process,
// in memory or in a directory) or a Postgres server through `pg`, with the same SQL.
//
// A log is text that only grows. Each append is one row of `<table>_chunks` (its start and size
// in UTF-16 code units, the unit of a JS string's length), and `<table>` holds each log's
// length. An append names the length it extends: one statement moves the length from that
// value to the new one and adds the chunk, so of two writers extending the same length one
// wins and the other is told the log's length now (a conflict); a torn or interleaved log
// cannot be written. A writer that dies mid-append leaves nothing: the statement is atomic.
//
// Postgres text cannot hold U+0000 nor a lone surrogate (the UTF-8 it stores has no place for
// one): a chunk with either is stored as its JSON string (`escaped`), so a log comes back as it
// was given, character for character.

import { SessionConflictError } from "../session/conflict.js";

const IDENT = /^[a-z_][a-z0-9_]{0,40}$/;
/** Lengths are SQL integers. */
const MAX_CHARS = 2 ** 31 - 1;
const SPECIAL = /[\0\uD800-\uDFFF]/;

function encode(text) {
  if (SPECIAL.test(text) && (text.includes("\0") || !text.isWellFormed())) return [JSON.stringify(text), true];
  return [text, false];
}

/** A single connection (a pg.Client, PGlite without `transaction`): its transactions run one at a time. */
function serialized() {
  let tail = Promise.resolve();
  return (f) => {
    const run = tail.then(f, f);
    tail = run.catch(() => {});
    return run;
  };
}

/**
 * The SQL client behind a database: `query(sql, params)` and `transaction(f)` where `f` gets a
 * `query` bound to one connection. PGlite, a pg.Pool, a pg.Client, or a PGlite data directory.
 */
function sqlClient(client) {
  if (client === undefined || typeof client === "string") {
    // PGlite, loaded on first use (the app installs it to use the default).
    let db;
    const open = () =>
      (db ??= import(/* webpackIgnore: true */ /* @vite-ignore */ "@electric-sql/pglite").then(
        ({ PGlite }) => new PGlite(client ?? "memory://"),
        (err) => {
          db = undefined;
          throw new Error(`pi-agent-wasm/server: the default session database is PGlite: install @electric-sql/pglite, or pass a pg.Pool (${err.message})`);
        },
      ));
    return {
      query: async (sql, params) => (await open()).query(sql, params),
      transaction: async (f) => (await open()).transaction((tx) => f((sql, params) => tx.query(sql, params))),
      close: async () => (db ? (await db).close() : undefined),
    };
  }
  if (client === null || typeof client !== "object" || typeof client.query !== "function") {
    throw new TypeError("sessionDatabase(client): client must be a PGlite instance, a pg.Pool, a pg.Client or a PGlite data directory");
  }
  if (typeof client.transaction === "function") {
    // PGlite.
    return {
      query: (sql, params) => client.query(sql, params),
      transaction: (f) => client.transaction((tx) => f((sql, params) => tx.query(sql, params))),
      close: async () => {},
    };
  }
  const inTransaction = async (connection, f) => {
    await connection.query("BEGIN");
    try {
      const out = await f((sql, params) => connection.query(sql, params));
      await connection.query("COMMIT");
      return out;
    } catch (err) {
      await connection.query("ROLLBACK").catch(() => {});
      throw err;
    }
  };
  if (typeof client.connect === "function" && "totalCount" in client) {
    // A pg.Pool: each transaction on a connection of its own.
    return {
      query: (sql, params) => client.query(sql, params),
      async transaction(f) {
        const connection = await client.connect();
        try {
          return await inTransaction(connection, f);
        } finally {
          connection.release();
        }
      },
      close: async () => {},
    };
  }
  // One connection: a statement and a transaction must not interleave on it.
  const one = serialized();
  return {
    query: (sql, params) => one(() => client.query(sql, params)),
    transaction: (f) => one(() => inTransaction(client, f)),
    close: async () => {},
  };
}

/**
 * Session logs in a Postgres database: `client` is a PGlite instance, a `pg.Pool` (or
 * `pg.Client`), or a PGlite data directory (a path, or "memory://", the default). Creates its
 * two tables when missing. The result's `forOwner(owner)` is a `SessionStore` of that owner's
 * sessions (what `attachSession` takes), and `createStoreHandler` serves it over HTTP.
 */
export function sessionDatabase(client, { table = "pi_agent_sessions" } = {}) {
  if (!IDENT.test(table)) throw new TypeError("sessionDatabase(client, options): options.table must be a lower-case SQL identifier");
  const sql = sqlClient(client);
  const logs = table;
  const chunks = `${table}_chunks`;
  let ready;
  const schema = () =>
    (ready ??= (async () => {
      for (let attempt = 0; ; attempt++) {
        try {
          await sql.query(`CREATE TABLE IF NOT EXISTS ${logs} (
            owner text NOT NULL, id text NOT NULL, chars integer NOT NULL,
            updated timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (owner, id))`);
          await sql.query(`CREATE TABLE IF NOT EXISTS ${chunks} (
            owner text NOT NULL, id text NOT NULL, start integer NOT NULL, size integer NOT NULL,
            text text NOT NULL, escaped boolean NOT NULL DEFAULT false, PRIMARY KEY (owner, id, start))`);
          return;
        } catch (err) {
          // Two servers creating the tables at once: one of them loses the race on the catalog.
          if (attempt < 2 && (err?.code === "23505" || err?.code === "42P07")) continue;
          ready = undefined;
          throw err;
        }
      }
    })());

  const lengthOf = async (owner, id, query = sql.query) => {
    const { rows } = await query(`SELECT chars FROM ${logs} WHERE owner = $1 AND id = $2`, [owner, id]);
    return rows.length > 0 ? Number(rows[0].chars) : 0;
  };

  const db = {
    /** The log's text from character `from` on, and its whole length. */
    async read(owner, id, from = 0) {
      await schema();
      from = Math.min(Math.max(0, from), MAX_CHARS);
      const { rows } = await sql.query(
        `SELECT s.chars, c.start, c.size, c.text, c.escaped FROM ${logs} s
           LEFT JOIN ${chunks} c ON c.owner = s.owner AND c.id = s.id AND c.start + c.size > $3
         WHERE s.owner = $1 AND s.id = $2 ORDER BY c.start`,
        [owner, id, from],
      );
      if (rows.length === 0) return { text: "", length: 0 };
      const length = Number(rows[0].chars);
      const parts = [];
      let at = Math.min(from, length);
      for (const row of rows) {
        if (row.start === null) continue;
        const start = Number(row.start);
        const size = Number(row.size);
        let text = row.escaped ? JSON.parse(row.text) : row.text;
        if (start > at || text.length !== size) throw new Error(`pi-agent-wasm/server: the log ${JSON.stringify(id)} of ${JSON.stringify(owner)} is damaged at character ${at}`);
        if (start < at) text = text.slice(at - start);
        parts.push(text);
        at = start + size;
      }
      if (at !== length) throw new Error(`pi-agent-wasm/server: the log ${JSON.stringify(id)} of ${JSON.stringify(owner)} ends at character ${at}, not ${length}`);
      return { text: parts.join(""), length };
    },

    /**
     * Appends `text`. With `expected` (the length this writer believes the log has), appends only
     * if it has that length; resolves `{ length }` (the new length) or `{ conflict: length }`.
     */
    async append(owner, id, text, expected) {
      await schema();
      const size = text.length;
      if (size === 0) {
        const length = await lengthOf(owner, id);
        return expected === undefined || expected === length ? { length } : { conflict: length };
      }
      const [stored, escaped] = encode(text);
      let statement;
      const params = [owner, id, size, stored, escaped];
      const chunk = (start) => `INSERT INTO ${chunks} (owner, id, start, size, text, escaped) SELECT $1, $2, ${start}, $3, $4, $5 FROM s RETURNING start + size AS chars`;
      if (expected === undefined) {
        statement = `WITH s AS (INSERT INTO ${logs} AS l (owner, id, chars) VALUES ($1, $2, $3)
            ON CONFLICT (owner, id) DO UPDATE SET chars = l.chars + $3, updated = now() RETURNING chars)
          ${chunk("s.chars - $3")}`;
      } else if (expected === 0) {
        statement = `WITH s AS (INSERT INTO ${logs} AS l (owner, id, chars) VALUES ($1, $2, $3)
            ON CONFLICT (owner, id) DO UPDATE SET chars = l.chars + $3, updated = now() WHERE l.chars = 0 RETURNING chars)
          ${chunk("0")}`;
      } else {
        statement = `WITH s AS (UPDATE ${logs} SET chars = chars + $3, updated = now()
            WHERE owner = $1 AND id = $2 AND chars = $6 RETURNING chars)
          ${chunk("$6")}`;
        params.push(expected);
      }
      const { rows } = await sql.query(statement, params);
      if (rows.length === 1) return { length: Number(rows[0].chars) };
      return { conflict: await lengthOf(owner, id) };
    },

    /** Replaces the log with `text` (with `expected`: only if the log has that length). */
    async replace(owner, id, text, expected) {
      await schema();
      const [stored, escaped] = encode(text);
      return sql.transaction(async (query) => {
        await query(`INSERT INTO ${logs} (owner, id, chars) VALUES ($1, $2, 0) ON CONFLICT DO NOTHING`, [owner, id]);
        const { rows } = await query(`SELECT chars FROM ${logs} WHERE owner = $1 AND id = $2 FOR UPDATE`, [owner, id]);
        const length = Number(rows[0].chars);
        if (expected !== undefined && expected !== length) throw new Conflict(length);
        await query(`DELETE FROM ${chunks} WHERE owner = $1 AND id = $2`, [owner, id]);
        if (text.length > 0) {
          await query(`INSERT INTO ${chunks} (owner, id, start, size, text, escaped) VALUES ($1, $2, 0, $3, $4, $5)`, [owner, id, text.length, stored, escaped]);
        }
        await query(`UPDATE ${logs} SET chars = $3, updated = now() WHERE owner = $1 AND id = $2`, [owner, id, text.length]);
        return { length: text.length };
      }).catch((err) => {
        if (err instanceof Conflict) return { conflict: err.length };
        throw err;
      });
    },

    /** Deletes the log. */
    async clear(owner, id) {
      await schema();
      await sql.transaction(async (query) => {
        // The log's row first: an append waits for this transaction, then finds no log of its length.
        await query(`SELECT chars FROM ${logs} WHERE owner = $1 AND id = $2 FOR UPDATE`, [owner, id]);
        await query(`DELETE FROM ${chunks} WHERE owner = $1 AND id = $2`, [owner, id]);
        await query(`DELETE FROM ${logs} WHERE owner = $1 AND id = $2`, [owner, id]);
      });
    },

    /** A `SessionStore` of `owner`'s sessions, for `attachSession` on the server. */
    forOwner(owner) {
      if (typeof owner !== "string" || owner === "") throw new TypeError("forOwner(owner): owner must be a non-empty string");
      const written = (out) => {
        if (out.conflict !== undefined) throw new SessionConflictError(out.conflict);
      };
      return {
        load: async (id) => (await db.read(owner, id, 0)).text,
        loadFrom: async (id, from) => (await db.read(owner, id, from)).text,
        append: async (id, text, options) => written(await db.append(owner, id, text, options?.length)),
        replace: async (id, text, options) => written(await db.replace(owner, id, text, options?.length)),
        clear: (id) => db.clear(owner, id),
      };
    },

    /** Creates the tables now (they are otherwise created at the first use). */
    ready: () => schema(),
    /** Closes a PGlite this database opened itself (a client the app passed stays the app's to close). */
    close: () => sql.close(),
  };
  return db;
}

class Conflict extends Error {
  constructor(length) {
    super("conflict");
    this.length = length;
  }
}

/** Whether `value` is a database made by `sessionDatabase`. */
export const isSessionDatabase = (value) =>
  value !== null && typeof value === "object" && typeof value.read === "function" && typeof value.append === "function" && typeof value.forOwner === "function";
