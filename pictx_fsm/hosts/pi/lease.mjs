// A lease on quiet hooks (pictx_fsm/hosts/pi/lease.py): with an awaited reply the server may
// say "while the window's token estimate stays at or below `limit` and nothing else happens,
// context, context_with_system, turn_end and agent_before_settle decide nothing but the
// R67–R69 projection". The extension then answers those hooks itself and still sends each,
// pipelined, for the server to decide and check. Pure: no Pi, no process (the tests run it
// under plain Node against the Python estimates).
import { failClosed } from "./failclosed.mjs";

export class Lease {
  // `grant`: the server's lease; `leaf`: the leaf of the request it came with; `server`: the
  // connection it holds on; `spec`: the manifest's lease section; `win`: its window section.
  constructor(grant, leaf, server, spec, win) {
    this.limit = grant.limit;
    this.perByte = grant.perByte === true;
    this.window = { windowId: grant.windowId, markerId: grant.markerId };
    this.model = JSON.stringify(grant.model ?? null);
    this.bound = grant.base;
    this.leaf = leaf;
    this.server = server;
    this.spec = spec;
    this.win = win;
    this.counted = new Set(spec.countedEntries);
    this.roles = new Set(spec.countedRoles);
    this.plainStops = new Set(spec.plainStops);
    this.unsettled = new Set(spec.unsettledStops);
  }

  // The entries appended since the last request (in order, parent first) and the new leaf:
  // false when they leave the lease void (another branch, an entry it cannot bound, past
  // the limit). O(the new entries).
  observe(entries, leaf) {
    if (entries.length === 0) return leaf === this.leaf && this.within();
    if (entries[0].parentId !== this.leaf) return false;
    for (const entry of entries) {
      const added = entryBound(entry, this.perByte, this.spec, this.win, this.counted, this.roles);
      if (added === null) return false;
      this.bound += added;
      const floor = usageFloor(entry, this.unsettled);
      if (floor !== null) this.bound = Math.max(this.bound, floor);
    }
    this.leaf = leaf;
    return this.within();
  }

  within() {
    return this.limit === null || this.bound <= this.limit;
  }

  // The answer to covered hook `name` ({value}), or null when the hook is not plain enough
  // for the lease (it then goes to the server, awaited, and the lease is void).
  answer(name, event, model, aborted) {
    if (JSON.stringify(model) !== this.model) return null;
    switch (name) {
      case "context":
        return { value: undefined };
      case "context_with_system": {
        const projected = failClosed(event.messages, this.window, this.win);
        if (projected.missingBoot) return null;
        return { value: { messages: projected.messages }, claim: { length: projected.messages.length } };
      }
      case "turn_end":
        return plainTurn(event, model, aborted, this.plainStops) ? { value: undefined } : null;
      case "agent_before_settle":
        return aborted ? null : { value: undefined };
      default:
        return null;
    }
  }
}

// A turn_end that decides nothing under a lease: completed, not aborted, no drafts, and an
// assistant reply that is no overflow of any kind (R21, R22, R33), judged conservatively.
export function plainTurn(event, model, aborted, plainStops) {
  const message = event.message;
  if (aborted || event.outcome !== "completed" || (event.entries ?? []).length > 0) return false;
  if (message?.role !== "assistant" || !plainStops.has(message.stopReason)) return false;
  if (message.errorMessage !== undefined && message.errorMessage !== null && message.errorMessage !== "") return false;
  const usage = message.usage ?? {};
  const input = usage.input ?? 0;
  const cacheRead = usage.cacheRead ?? 0;
  if (!Number.isFinite(input) || !Number.isFinite(cacheRead)) return false;
  const window = model?.contextWindow;
  return !(Number.isFinite(window) && window > 0) || input + cacheRead <= window;
}

// An upper bound of what `entry` adds to the window's estimate (lease.py's entry_bound):
// its JSON's length per 4 chars (Pi's chars/4) or its UTF-8 bytes (a tokenizer: at least one
// byte a token), plus an image's tokens per non-text block; null when it may change the
// estimate otherwise (a marker, a boot, a system message, a summary, an edit, …).
export function entryBound(entry, perByte, spec, win, counted = new Set(spec.countedEntries), roles = new Set(spec.countedRoles)) {
  if (!counted.has(entry?.type)) return null;
  if (entry.type === "custom" && entry.customType === win.markerType) return null;
  if (entry.type === "custom_message" && entry.customType === win.bootType) return null;
  const message = messageOf(entry);
  if (message !== null && !roles.has(message.role)) return null;
  const text = JSON.stringify(entry);
  if (/\de\+\d/.test(text)) return null;
  const size = perByte ? Buffer.byteLength(text, "utf8") : Math.ceil(text.length / spec.charsPerToken);
  return size + spec.imageTokens * blocks(message);
}

// The context tokens a settled assistant's usage reports (calculateContextTokens), when
// positive: the estimate may restart from it.
export function usageFloor(entry, unsettled) {
  const message = entry?.type === "message" ? entry.message : null;
  if (message?.role !== "assistant" || unsettled.has(message.stopReason)) return null;
  const usage = message.usage;
  if (usage === null || typeof usage !== "object") return null;
  let tokens = usage.totalTokens;
  if (!(typeof tokens === "number" && tokens)) {
    const parts = [usage.input, usage.output, usage.cacheRead, usage.cacheWrite];
    tokens = parts.every((part) => typeof part === "number") ? parts.reduce((a, b) => a + b, 0) : NaN;
  }
  return tokens > 0 ? Math.trunc(tokens) : null;
}

function messageOf(entry) {
  if (entry.type === "custom_message") return { role: "custom", content: entry.content };
  return entry.type === "message" && entry.message !== null && typeof entry.message === "object" ? entry.message : null;
}

function blocks(message) {
  const content = message?.content;
  if (!Array.isArray(content)) return 0;
  return content.filter((block) => !(block !== null && typeof block === "object" && !Array.isArray(block) && block.type === "text")).length;
}
