// The bridge_connection machine (models/bridge/bridge_connection.yaml) as the extension runs
// it: the transition table comes from the manifest, generated from the declaration, so the
// states, guards and actions here are the declared ones. Same semantics as the compiled
// engine (pictx_fsm/machines/compiled.py): the first transition on the event from the current
// state whose `cond` holds and whose `unless` does not; guards evaluated left to right with
// short-circuit. `retry` counts a restart before its guards are read (as connection.py).
// Pure: no Pi, no process; tests drive it under plain Node against the Python follower.

export class ConnectionMachine {
  constructor(table, maxRestarts = table.maxRestarts) {
    this.table = table;
    this.maxRestarts = maxRestarts;
    this.state = table.initial;
    this.restarts = 0;
  }

  // Fire `event`; returns the transition record, or null when the declaration has no enabled
  // transition (a follower bug: the caller reports it instead of crashing Pi).
  fire(event, detail = "") {
    if (event === "retry") this.restarts += 1;
    const facts = { restarts: this.restarts, max_restarts: this.maxRestarts };
    const guards = {
      restarted: () => this.restarts > 0,
      restarts_left: () => this.restarts < this.maxRestarts,
    };
    const seen = new Map();
    const lookup = (name) => {
      if (!seen.has(name)) seen.set(name, guards[name]());
      return seen.get(name);
    };
    for (const t of this.table.transitions) {
      if (t.source !== this.state || t.event !== event) continue;
      if (t.cond && !evaluate(t.cond, lookup)) continue;
      if (t.unless && evaluate(t.unless, lookup)) continue;
      const record = {
        id: t.id, source: t.source, event, target: t.target, actions: t.actions,
        restarts: this.restarts, detail, guards: [...seen.entries()], facts,
      };
      this.state = t.target;
      return record;
    }
    if (event === "retry") this.restarts -= 1;
    return null;
  }

  // Milliseconds to wait, after a fault, before the next restart.
  backoffMs() {
    const delays = this.table.backoffMs;
    return delays[Math.min(this.restarts, delays.length - 1)];
  }
}

function evaluate(condition, lookup) {
  if ("guard" in condition) return lookup(condition.guard);
  if ("not" in condition) return !evaluate(condition.not, lookup);
  if ("and" in condition) return condition.and.every((c) => evaluate(c, lookup));
  return condition.or.some((c) => evaluate(c, lookup));
}
