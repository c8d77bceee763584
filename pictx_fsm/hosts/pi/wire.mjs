// Message lists on the wire (pictx_fsm/hosts/pi/wire.py): the extension sends only what the
// lifecycle reads of a provider request — system messages and boots, with their indexes,
// plus the length — and rebuilds the lifecycle's answer from slices of its own list and the
// few new messages. Pure: the tests run it under plain Node against the Python side.

export const SAME = "pictx-fsm/same";

// `bootType`: the boot's customType, or a list of them (notesoup reads 0.25's boots too).
export function elide(messages, bootType) {
  const boots = Array.isArray(bootType) ? bootType : [bootType];
  const kept = [];
  for (let index = 0; index < messages.length; index++) {
    const message = messages[index];
    if (message?.role === "system" || (message?.role === "custom" && boots.includes(message.customType))) {
      kept.push([index, message]);
    }
  }
  return { count: messages.length, kept };
}

// The same, against the kept messages the previous request of this hook carried on this
// connection (`previous`: their JSON text → position): an unchanged one — the system prompt,
// the boot — travels as {SAME: position}, once per connection instead of on every provider
// request. Returns [the elided list, this request's texts for the next one].
export function elideAgainst(messages, bootType, previous) {
  const elided = elide(messages, bootType);
  const texts = new Map();
  elided.kept = elided.kept.map(([index, message], position) => {
    const text = JSON.stringify(message);
    const same = previous?.get(text);
    texts.set(text, position);
    return same === undefined ? [index, message] : [index, { [SAME]: same }];
  });
  return [elided, texts];
}

// Where a request's system messages are: [[index, message], ...] (speculation.py's
// systems_of, the same on both sides).
export function systemsOf(elided, messages) {
  return elided.kept.filter(([index]) => messages[index]?.role === "system").map(([index]) => [index, messages[index]]);
}

// Whether `messages` is `list` (the very objects) with `systems` back at their indexes
// (each equal to the one held): what Pi passes to context_with_system after a context
// handler that returned nothing (speculation.py's predict_with_system).
export function isPredicted(messages, list, systems) {
  if (!Array.isArray(messages) || messages.length !== list.length + systems.length) return false;
  let next = 0;
  let item = 0;
  for (let index = 0; index < messages.length; index++) {
    if (next < systems.length && systems[next][0] === index) {
      if (!sameJson(messages[index], systems[next++][1])) return false;
    } else if (messages[index] !== list[item++]) return false;
  }
  return true;
}

// Equal as JSON values (a system prompt cloned by Pi for each request), without encoding.
export function sameJson(a, b) {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const keys = Object.keys(a).filter((key) => a[key] !== undefined);
  if (keys.length !== Object.keys(b).filter((key) => b[key] !== undefined).length) return false;
  return keys.every((key) => sameJson(a[key], b[key]));
}

// A reply's message list: [start, end] slices of `messages` and {message} new ones.
export function rebuild(slices, messages) {
  const out = [];
  for (const piece of slices) {
    if (!Array.isArray(piece)) {
      out.push(piece.message);
      continue;
    }
    const [start, end] = piece;
    if (!(Number.isInteger(start) && Number.isInteger(end) && 0 <= start && start <= end && end <= messages.length)) {
      throw new Error(`slice ${JSON.stringify(piece)} is outside the ${messages.length} messages`);
    }
    for (let index = start; index < end; index++) out.push(messages[index]);
  }
  return out;
}
