// Branches of a session's conversation: editing a sent message or regenerating an answer starts a
// new version from that point and keeps the earlier one, as chat apps do ("‹ 2/3 ›").
//
// The conversation is a tree of messages. The agent holds one path of it (its transcript); every
// other version hangs off that path where it forks. The tree follows the transcript: a message the
// agent appends extends the path, and a transcript set to something else moves the path. Only a
// version set aside by `edit`, `regenerate` or `switchTo` is kept; anything else the path leaves
// (a transcript trimmed or replaced by the app, `reset()`) is dropped, so a session that never
// branches keeps no message the agent no longer holds.
//
// In the log, a version set aside is the record `{ t: "k", at }` ("the transcript's messages from
// index `at` on are kept as a version"), written just before the record that changes the
// transcript. A reader without branches skips it and still reads the transcript shown, so the log
// stays version 1.

/** The key a message is recognised by when a transcript is read back from the log (not by identity). */
const keyOf = (m) => (m && typeof m === "object" ? `${m.role}|${m.timestamp}|${m.toolCallId ?? ""}` : String(m));

const newNode = (message) => ({ message, key: keyOf(message), children: [], selected: -1, kept: false });

/**
 * The tree of a conversation's versions. `sync(messages)` moves the path to a transcript,
 * `append(message)` extends it by one, `keep(at)` marks the path's version from index `at` on as
 * kept; `points()` lists where the path forks.
 */
export function createTree() {
  const root = newNode(undefined);
  let path = []; // the nodes of the transcript, in order

  /** Selects, under `parent`, the child holding `message` (adding one), dropping a diverging child that is not kept. */
  function step(parent, message) {
    const current = parent.selected >= 0 ? parent.children[parent.selected] : undefined;
    if (current && (current.message === message || current.key === keyOf(message))) {
      current.message = message;
      return current;
    }
    if (current && !current.kept) parent.children.splice(parent.selected, 1);
    let at = parent.children.findIndex((c) => c.message === message);
    if (at < 0) at = parent.children.findIndex((c) => c.key === keyOf(message));
    if (at < 0) at = parent.children.push(newNode(message)) - 1;
    parent.selected = at;
    parent.children[at].message = message;
    return parent.children[at];
  }

  /** After the path's last node: a child left selected is cut off (dropped unless kept). */
  function cutAfter(node) {
    if (node.selected < 0) return;
    if (!node.children[node.selected].kept) node.children.splice(node.selected, 1);
    node.selected = -1;
  }

  return {
    /** Moves the path to `messages` (an array of messages). */
    sync(messages) {
      const list = Array.isArray(messages) ? messages : [];
      // Most calls find the path as it was, or longer: compare by identity first.
      let same = 0;
      while (same < path.length && same < list.length && path[same].message === list[same]) same++;
      if (same === path.length && same === list.length) return false;
      const next = path.slice(0, same);
      let parent = same === 0 ? root : next[same - 1];
      for (let i = same; i < list.length; i++) next.push((parent = step(parent, list[i])));
      cutAfter(parent);
      path = next;
      return true;
    },
    /** Extends the path by `message`. */
    append(message) {
      path.push(step(path.length === 0 ? root : path[path.length - 1], message));
    },
    /** Keeps the path's version from index `at` on when the path leaves it. */
    keep(at) {
      if (Number.isInteger(at) && at >= 0 && at < path.length) path[at].kept = true;
    },
    /** Where the path forks: `{ index, version, count }` per index whose message has other versions. */
    points() {
      const out = [];
      for (let i = 0; i < path.length; i++) {
        const parent = i === 0 ? root : path[i - 1];
        if (parent.children.length > 1) out.push({ index: i, version: parent.children.indexOf(path[i]), count: parent.children.length });
      }
      return out;
    },
    /**
     * The transcript that shows version `version` at index `index`: the path before it, then that
     * version as it was last shown. Undefined when there is no such version.
     */
    pathTo(index, version) {
      if (!Number.isInteger(index) || index < 0 || index > path.length) return undefined;
      const parent = index === 0 ? root : path[index - 1];
      let node = parent.children[version];
      if (!Number.isInteger(version) || !node) return undefined;
      const out = path.slice(0, index).map((n) => n.message);
      for (; node; node = node.selected >= 0 ? node.children[node.selected] : undefined) out.push(node.message);
      return out;
    },
    /** The messages of the path (its nodes' messages). */
    messages: () => path.map((n) => n.message),
  };
}

const EMPTY = Object.freeze([]);
const samePoints = (a, b) => a.length === b.length && a.every((p, i) => p.index === b[i].index && p.version === b[i].version && p.count === b[i].count);

/**
 * The `branches` of a session. `host` gives what the session knows: `tree()` (the tree of the
 * transcript shown, synced), `leader()`, `settled()` (undefined, or a promise while the session
 * catches up with another writer of its log), `record(r)` (adds a record to the next write),
 * `flush()` (writes; resolves when stored), `refuse()` (the error of a following tab),
 * `busy()` (restored calls run, as in a run), `moved()` (the transcript moved) and
 * `subscribe(listener)` (called when the session's state changes).
 */
export function createBranches(agent, host) {
  let points = EMPTY;
  let told = EMPTY; // what the listeners were last given
  const listeners = new Set();

  /** The fork points now, the same array while they do not change. */
  function read() {
    const next = host.tree().points();
    if (!samePoints(points, next)) points = next.length === 0 ? EMPTY : Object.freeze(next.map(Object.freeze));
    return points;
  }
  const notify = () => {
    if (read() === told) return;
    told = points;
    for (const l of listeners) {
      try {
        l(points);
      } catch (err) {
        console.error("pi-agent-wasm/session branches listener:", err);
      }
    }
  };

  /** Sets the transcript to `messages`, the version from `at` on kept first, and writes both. */
  async function move(at, messages) {
    if (!host.leader()) throw host.refuse();
    if (agent.state.isStreaming || host.busy?.()) throw new Error("pi-agent-wasm/session: branches cannot change while the agent runs (abort or wait for it first)");
    const tree = host.tree();
    if (at < tree.messages().length) {
      tree.keep(at);
      host.record({ t: "k", at });
    }
    agent.state.messages = messages;
    tree.sync(agent.state.messages);
    host.moved?.();
    // The cut is written before the run that follows it adds to the transcript.
    await host.flush();
    notify();
  }

  const check = (index, role) => {
    const messages = agent.state.messages;
    if (!Number.isInteger(index) || index < 0 || index >= messages.length) throw new RangeError(`pi-agent-wasm/session: no message at index ${index}`);
    const role2 = messages[index]?.role;
    if (!role.includes(role2)) throw new TypeError(`pi-agent-wasm/session: the message at index ${index} is a ${role2} message, not ${role.join(" or ")}`);
    return messages;
  };

  // The session's state is watched only while someone listens: for a WorkerAgent, a watcher of its state
  // has the page build a snapshot every frame of an answer, which no app without a branch control needs.
  let unsubscribe;
  return {
    /** The points where the transcript shown forks: `{ index, version, count }`, `version` counting from 0. */
    get points() {
      return read();
    },
    /** The same as `points` (for `useSyncExternalStore` and stores). */
    getSnapshot: read,
    /** The fork point at message `index`, if the transcript forks there. */
    at: (index) => read().find((p) => p.index === index),
    /** Calls `listener(points)` when the fork points change. */
    subscribe(listener) {
      listeners.add(listener);
      unsubscribe ??= host.subscribe(notify);
      return () => {
        listeners.delete(listener);
        if (listeners.size === 0 && unsubscribe) {
          unsubscribe();
          unsubscribe = undefined;
        }
      };
    },
    /** Shows version `version` (from 0) of the message at `index` and what followed it; the version shown now is kept. */
    async switchTo(index, version) {
      await host.settled();
      const tree = host.tree();
      const messages = tree.pathTo(index, version);
      if (!messages) throw new RangeError(`pi-agent-wasm/session: no version ${version} at index ${index}`);
      if (tree.messages()[index] === messages[index]) return;
      await move(index, messages);
    },
    /**
     * Replaces the user message at `index` by `message` (a message or a text) and runs the agent from
     * there; the earlier version, with everything after it, is kept. Resolves when the run ends.
     */
    async edit(index, message) {
      await host.settled();
      const messages = check(index, ["user"]);
      const next = typeof message === "string" ? { role: "user", content: [{ type: "text", text: message }], timestamp: Date.now() } : message;
      await move(index, messages.slice(0, index));
      try {
        await agent.prompt(next);
      } finally {
        notify();
      }
    },
    /** Runs the answer at `index` (an assistant message) again; the earlier answer, with everything after it, is kept. */
    async regenerate(index) {
      await host.settled();
      const messages = check(index, ["assistant"]);
      // As continue() needs: a message before it that is not the assistant's, and not only the system prompt.
      if (index === 0 || messages[index - 1]?.role === "assistant" || messages.slice(0, index).every((m) => m?.role === "system")) {
        throw new TypeError(`pi-agent-wasm/session: the answer at index ${index} does not follow a user message or a tool result`);
      }
      await move(index, messages.slice(0, index));
      try {
        await agent.continue();
      } finally {
        notify();
      }
    },
    /** Stops notifying (the session calls it when it detaches). */
    close() {
      unsubscribe?.();
      unsubscribe = undefined;
      listeners.clear();
    },
  };
}
