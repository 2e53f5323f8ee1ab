// pi-agent-wasm/session's store in IndexedDB (the default in browsers): a session's log as rows of
// text keyed by [session id, n], so a write adds what it appends, whatever the log's length.
import { APPEND_PARTS, ORDERED_WRITES } from "../writer.js";

/**
 * On a store the worker of a WorkerAgent can make too: its description there (a session on a
 * WorkerAgent then writes in the worker). Not enumerable, so `{ ...store, append }` (a store that
 * wraps this one) is not taken for it.
 */
export const WORKER_STORE = Symbol.for("pi-agent-wasm.sessionStoreInWorker");

const request = (r) =>
  new Promise((resolve, reject) => {
    r.onsuccess = () => resolve(r.result);
    r.onerror = () => reject(r.error);
  });
const done = (tx) =>
  new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve();
    // A failed request's error reaches the transaction before the transaction has one of its own.
    tx.onerror = (event) => reject(event.target?.error ?? tx.error);
    tx.onabort = () => reject(tx.error ?? new Error("IndexedDB transaction aborted"));
  });

// Rows as long as Chromium stores them without copying them into a Blob first (a value of more
// than 64 KiB), which costs the main thread about twice as much per character; each row also
// costs a fixed amount, so they are no shorter (a 1 MB answer: ~1.5 ms in rows of 64,000
// characters, ~1.8 in rows of 32,000, ~3.3 as one value). A string holding a character above
// U+00FF takes two bytes per character, so its rows are half as long. WIDE finds one: on a string
// V8 holds as one byte per character the test returns at once, whatever its length.
const ROW_CHARS = 64_000;
const WIDE_ROW_CHARS = 32_000;
const WIDE = /[^\0-\xff]/;

/** The keys of session `id`'s rows: `[id, n]`, n counting from 0 in the log's order. */
const rowsOf = (id) => IDBKeyRange.bound([id, -Infinity], [id, Infinity]);

/**
 * Adds `parts` (strings whose join is the text to add) to `store` as rows of session `id` numbered
 * from `n`, in order; gives the next number. Rows are cut from the parts themselves: a long part
 * (an answer's text) is not first copied into one string with the others, only the few characters
 * a row takes from several parts are.
 */
function addRows(store, id, parts, n) {
  let length = 0;
  for (const p of parts) length += p.length;
  const size = length <= WIDE_ROW_CHARS || parts.some((p) => WIDE.test(p)) ? WIDE_ROW_CHARS : ROW_CHARS;
  let row = [];
  let rowLength = 0;
  const put = () => {
    store.add(row.length === 1 ? row[0] : row.join(""), [id, n++]);
    row = [];
    rowLength = 0;
  };
  for (const p of parts) {
    for (let at = 0; at < p.length; ) {
      const take = Math.min(p.length - at, size - rowLength);
      row.push(at === 0 && take === p.length ? p : p.slice(at, at + take));
      rowLength += take;
      at += take;
      if (rowLength === size) put();
    }
  }
  if (rowLength > 0) put();
  return n;
}

/**
 * Version 1 kept rows as `{ s: id, d: text }` under an index on `s`. An index makes every `add`
 * copy its value once more (IndexedDB reads index keys from a clone of the value), so version 2
 * keys each row by `[id, n]` and stores the text alone. Moves version 1's rows, in order.
 */
function upgrade(db, tx, oldVersion) {
  if (!db.objectStoreNames.contains("rows")) db.createObjectStore("rows");
  if (oldVersion !== 1 || !db.objectStoreNames.contains("chunks")) return;
  const rows = tx.objectStore("rows");
  const next = new Map();
  const cursor = tx.objectStore("chunks").openCursor();
  cursor.onsuccess = () => {
    const c = cursor.result;
    if (!c) return void db.deleteObjectStore("chunks");
    const { s, d } = c.value ?? {};
    if (typeof s === "string" && typeof d === "string") {
      const n = next.get(s) ?? 0;
      rows.add(d, [s, n]);
      next.set(s, n + 1);
    }
    c.continue();
  };
}

/**
 * A store in IndexedDB (database `name`, default "pi-agent-wasm-sessions"): each write adds rows
 * of appended text, so a write costs what it adds, whatever the log's length.
 */
export function indexedDBStore({ name = "pi-agent-wasm-sessions" } = {}) {
  let db;
  // The connection once open: a write then begins in the task that asks for it.
  let connection;
  const open = () =>
    (db ??= new Promise((resolve, reject) => {
      const r = indexedDB.open(name, 2);
      r.onupgradeneeded = (event) => upgrade(r.result, r.transaction, event.oldVersion);
      r.onsuccess = () => {
        // A tab of a later version upgrading the database waits for this connection to close: it
        // closes (this store's next write then fails, and is reported once).
        r.result.onversionchange = () => r.result.close();
        connection = r.result;
        resolve(r.result);
      };
      r.onerror = () => reject(r.error);
      r.onblocked = () => reject(new Error(`IndexedDB database ${name} is blocked by another connection`));
    }));
  // The number of each session's next row, as this store's writes leave it: a write adds its rows
  // at once, without first reading the last one (a stale number fails the write, see append). Set
  // when the write begins: the next write, begun before this one commits, numbers after it.
  const next = new Map();
  const lastRow = async (store, id) => {
    const last = await request(store.openKeyCursor(rowsOf(id), "prev"));
    return last ? last.key[1] + 1 : 0;
  };
  /**
   * Runs `f(store)` in a transaction; resolves when the transaction commits. A write is committed
   * as soon as its requests are made, rather than when their results came back: a write begun as
   * the page goes away (pagehide) has then been handed to IndexedDB whole. Transactions that write
   * one object store commit in the order they began, so writes need not wait for each other.
   */
  const inTransaction = (mode, f) => {
    const begin = (c) => {
      const t = c.transaction("rows", mode);
      const made = Promise.resolve(f(t.objectStore("rows"))).then((out) => {
        if (mode === "readwrite") {
          try {
            t.commit?.();
          } catch {
            // Already committing (its requests ended first).
          }
        }
        return out;
      });
      // Both awaited together: a request's failure also aborts the transaction, and neither
      // rejection may go unhandled.
      return Promise.all([made, done(t)]).then(([out]) => out);
    };
    if (connection) {
      try {
        return begin(connection);
      } catch (err) {
        return Promise.reject(err);
      }
    }
    return open().then(begin);
  };
  // Per session, the rows this store last read: where the next one starts (its key's number and
  // the characters before it), so that `loadFrom` reads only the rows added since.
  const read = new Map();
  /** The rows of `id` from row `n` on, joined; remembers where they end (`chars` before row `n`). */
  const readRows = async (id, n, chars) => {
    const [texts, keys] = await inTransaction("readonly", (store) => {
      const range = IDBKeyRange.bound([id, n], [id, Infinity]);
      return Promise.all([request(store.getAll(range)), request(store.getAllKeys(range))]);
    });
    const text = texts.join("");
    read.set(id, { n: keys.length > 0 ? keys[keys.length - 1][1] + 1 : n, chars: chars + text.length });
    return text;
  };
  const append = (id, parts, retried = false) => {
    const known = next.get(id);
    return inTransaction("readwrite", (store) => {
      if (known !== undefined) return void next.set(id, addRows(store, id, parts, known));
      return lastRow(store, id).then((n) => void next.set(id, addRows(store, id, parts, n)));
    }).catch((err) => {
      next.delete(id);
      // Another tab wrote the session since this store last did: number from what it holds.
      if (retried || err?.name !== "ConstraintError") throw err;
      return append(id, parts, true);
    });
  };
  const store = {
    load: (id) => readRows(id, 0, 0),
    async loadFrom(id, from) {
      const last = read.get(id);
      if (last !== undefined && last.chars === from) return readRows(id, last.n, from);
      return (await readRows(id, 0, 0)).slice(from);
    },
    append: (id, text) => append(id, [String(text)]),
    replace(id, text) {
      next.delete(id);
      read.delete(id);
      return inTransaction("readwrite", (store) => {
        store.delete(rowsOf(id));
        next.set(id, addRows(store, id, [String(text)], 0));
      }).catch((err) => {
        next.delete(id);
        throw err;
      });
    },
    clear(id) {
      next.delete(id);
      read.delete(id);
      return inTransaction("readwrite", (store) => void store.delete(rowsOf(id)));
    },
  };
  Object.defineProperties(store, {
    [ORDERED_WRITES]: { value: true },
    [APPEND_PARTS]: { value: (id, parts) => append(id, parts) },
    [WORKER_STORE]: { value: { kind: "indexeddb", options: { name } } },
  });
  return store;
}
