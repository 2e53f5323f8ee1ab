// Devices on one session: the same user's session open in two browsers or on two devices, on a
// store they share (httpStore). A device running the session (a run, a resume()) holds the
// session's lease in the store and renews it while the run goes on; it lets go of it when the run
// is over and its log written. A device that opens the session, or is asked to run it, while
// another holds the lease does not cut that run: it follows the log as the other writes it, and
// runs the session once the lease is let go of, or has expired (a device that died mid-run: its
// run is then restored as interrupted, as after a reload), or when the user takes it over.
//
// A store with leases has `lease(id, request?)` (see index.d.ts `SessionStore`): without a
// request it tells the lease as it is, `{ holder, ms, length }` (the holder of a lease that has
// not expired, the milliseconds it has left, the log's length); with `{ holder, ms }` it takes or
// renews it (when it is free, expired or the holder's own, or with `take`), with `ms: 0` it lets go.

/** How long a lease lasts unless renewed (a device that died mid-run is followed this long at most). */
export const LEASE_MS = 20_000;
/** The first wait between two reads of a followed device's log; it doubles while the log does not grow. */
export const FOLLOW_MS = 250;

const newHolder = () =>
  typeof crypto === "object" && typeof crypto?.randomUUID === "function" ? crypto.randomUUID() : `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;

/** A timer that does not keep a Node process alive. */
export function later(ms, f) {
  const t = setTimeout(f, ms);
  t?.unref?.();
  return t;
}

/**
 * This device's lease on session `id` in `store`. `acquire(take)` asks for it (resolves the
 * lease as the store has it then, or undefined when the store failed) and renews it every third
 * of `ms` while held; `onLost(lease)` is called when a renewal finds another holder (the user
 * took the session over there). `release()` lets go of it, `peek()` tells it. The store sees the
 * requests in the order they were made.
 */
export function createLease(store, id, { ms = LEASE_MS, onLost }) {
  const holder = newHolder();
  let held = false;
  let timer;
  let chain = Promise.resolve();
  const ask = (request) => {
    const out = chain.then(() => store.lease(id, request));
    chain = out.catch(() => {});
    return out;
  };
  const stopRenewing = () => {
    clearTimeout(timer);
    timer = undefined;
  };
  const renew = () => {
    timer = later(ms / 3, async () => {
      if (!held) return;
      let lease;
      try {
        lease = await ask({ holder, ms });
      } catch {
        // Not reached: the store holds the lease as it was; it expires unless a later renewal lands.
      }
      if (!held) return;
      if (lease && lease.holder !== holder) {
        held = false;
        stopRenewing();
        return void onLost?.(lease);
      }
      renew();
    });
  };
  return {
    holder,
    get held() {
      return held;
    },
    /** Whether `lease` (as the store tells it) is held by another device. */
    elsewhere: (lease) => lease !== undefined && lease.holder !== undefined && lease.holder !== holder && lease.ms > 0,
    async acquire(take = false) {
      let lease;
      try {
        lease = await ask(take ? { holder, ms, take } : { holder, ms });
      } catch {
        return undefined;
      }
      if (lease.holder === holder && !held) {
        held = true;
        renew();
      }
      return lease;
    },
    release() {
      if (!held) return chain;
      held = false;
      stopRenewing();
      return ask({ holder, ms: 0 }).catch(() => {});
    },
    peek: () => ask(undefined).catch(() => undefined),
  };
}
