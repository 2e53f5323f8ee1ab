// Methods of an agent that a session replaces with own properties (its queue methods, its runs),
// and puts back as they were: an own property another wrapper set before (a recorder's) is
// restored, a method that was the prototype's is deleted again.

/** Replaces methods of `agent` as own properties; `restore` puts back what each was before. */
export function ownMethods(agent) {
  const before = new Map();
  const restore = (name) => {
    if (!before.has(name)) return;
    const d = before.get(name);
    before.delete(name);
    if (d) Object.defineProperty(agent, name, d);
    else delete agent[name];
  };
  return {
    set(name, value) {
      if (!before.has(name)) before.set(name, Object.getOwnPropertyDescriptor(agent, name));
      agent[name] = value;
    },
    restore,
    restoreAll() {
      for (const name of [...before.keys()]) restore(name);
    },
  };
}
