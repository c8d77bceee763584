// What one request to the lifecycle server carries besides the session: the hook's payload
// (only what the lifecycle reads, lifecycle spec §6) and the ctx facts; and the small helpers
// pictx-bridge.mjs shares. No Pi and no process: the tests run it under plain Node.
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { dirname, join } from "node:path";
import { elide } from "./wire.mjs";

const PI_PACKAGE = "@earendil-works/pi-coding-agent";

// Only what the lifecycle reads of each payload (lifecycle spec §6); message lists elided
// to what it reads (system messages and boots) plus their count (pictx_fsm/hosts/pi/wire.py).
export function payload(hook, event, bootType) {
  switch (hook) {
    case "turn_end":
      return {
        message: event.message, outcome: event.outcome, entries: event.entries ?? [],
        pendingMessages: event.context?.pendingMessages?.length ?? 0, turnIndex: event.turnIndex,
      };
    case "agent_before_settle":
      return {
        outcome: event.outcome, entries: event.entries ?? [],
        pendingMessages: event.context?.pendingMessages?.length ?? 0,
      };
    case "session_before_tree":
      return {
        userWantsSummary: event.preparation?.userWantsSummary === true,
        targetId: event.preparation?.targetId ?? null,
      };
    case "session_before_compact":
      return {
        reason: event.reason, signalAborted: event.signal?.aborted === true,
        firstKeptEntryId: event.preparation?.firstKeptEntryId ?? null,
        customInstructions: Boolean(event.customInstructions), files: fileLists(event.preparation?.fileOps),
      };
    case "context":
    case "context_with_system":
      return { messages: elide(event.messages, bootType) };
    case "model_select":
      return { model: modelFacts(event.model) };
    default:
      return {
        reason: event.reason, turnIndex: event.turnIndex,
        newLeafId: event.newLeafId, oldLeafId: event.oldLeafId,
      };
  }
}

// Pi's file tracking of a compaction as two lists: files only read, files written or edited.
function fileLists(ops) {
  const modified = new Set([...(ops?.written ?? []), ...(ops?.edited ?? [])]);
  const read = [...(ops?.read ?? [])].filter((file) => !modified.has(file));
  return { read: read.sort(), modified: [...modified].sort() };
}

// The ctx facts the lifecycle reads. Not ctx.getContextUsage(): Pi rebuilds the whole
// projection for it (O(session) per call); the server computes the same figure from its
// mirror (PICTX_FSM_CHECK_USAGE sends Pi's too, so the tests compare them).
export function facts(ctx, piVersion, checkUsage) {
  const out = {
    model: modelFacts(ctx.model),
    signalAborted: ctx.signal?.aborted === true,
    hasPendingMessages: safely(() => ctx.hasPendingMessages?.()) === true,
    idle: safely(() => ctx.isIdle?.()) !== false,
    cwd: ctx.cwd,
    projectTrusted: safely(() => ctx.isProjectTrusted?.()) === true,
    piVersion,
  };
  if (checkUsage) {
    const usage = safely(() => ctx.getContextUsage?.());
    out.hostUsage = usage ? { tokens: usage.tokens ?? null, contextWindow: usage.contextWindow ?? null } : null;
  }
  return out;
}

export function modelFacts(model) {
  return model
    ? { provider: model.provider, id: model.id, contextWindow: model.contextWindow, maxTokens: model.maxTokens }
    : null;
}

export function format(template, values) {
  return template.replace(/\{(\w+)\}/g, (match, key) => (key in values ? String(values[key]) : match));
}

export function lastLine(text) {
  const lines = text.trim().split("\n");
  return lines[lines.length - 1].trim();
}

export function positive(text, fallback) {
  const value = Number.parseInt(text ?? "", 10);
  return Number.isFinite(value) && value > 0 ? value : fallback;
}

export function safely(run) {
  try {
    return run();
  } catch {
    return undefined;
  }
}

// Pi's own version (sent as ctx.piVersion: the server warns a Pi older than it supports):
// the host module's VERSION, else the package.json of Pi above its running CLI `entry`,
// else "unknown" (never a failure to load).
export function hostVersion(hostModule, entry) {
  if (typeof hostModule?.VERSION === "string") return hostModule.VERSION;
  try {
    let dir = dirname(realpathSync(entry));
    while (dir !== dirname(dir)) {
      const file = join(dir, "package.json");
      if (existsSync(file)) {
        const found = JSON.parse(readFileSync(file, "utf8"));
        if (found.name === PI_PACKAGE) return String(found.version);
      }
      dir = dirname(dir);
    }
  } catch {
    // fall through: the version stays unknown
  }
  return "unknown";
}
