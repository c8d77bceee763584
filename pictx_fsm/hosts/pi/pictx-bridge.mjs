// pictx-bridge: pi-context's lifecycle for Pi 0.87, decided by pictx_fsm in Python.
//
// Load with `pi -e $(pictx-fsm pi --extension-path)`. The extension owns no lifecycle logic:
// it forwards each lifecycle hook, the wipe_memory / get_context_remaining tools and the
// /wipe-memory and /pi-context commands to `python -m pictx_fsm.hosts.pi` (one JSON line each
// way), returns the handler value the runtime decided and applies its effects through Pi's
// API (ctx.ui.notify, pi.sendMessage, pi.appendEntry, ctx.abort).
//
// Environment: PICTX_FSM_PYTHON (default "python3") — a Python with pictx_fsm installed;
// PICTX_FSM_PROFILE, PICTX_FSM_AUDIT_DIR — passed through to the server.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";

const HOOKS = [
  "session_start", "session_tree", "session_before_tree", "session_shutdown",
  "session_before_compact", "turn_start", "turn_end", "agent_before_settle", "agent_end",
  "agent_settled", "context", "context_with_system", "model_select",
];
const EMPTY = { type: "object", properties: {}, additionalProperties: false };

export default function pictxBridge(pi) {
  let child = null;
  let lines = null;
  let nextId = 1;
  let sent = 0;
  let headerSent = false;
  const waiting = new Map();

  // Started on first use (Pi: no processes in the factory), stopped at session_shutdown.
  function server() {
    if (child) return child;
    child = spawn(process.env.PICTX_FSM_PYTHON || "python3", ["-m", "pictx_fsm.hosts.pi"], {
      stdio: ["pipe", "pipe", "inherit"],
    });
    lines = createInterface({ input: child.stdout });
    lines.on("line", (line) => {
      const reply = JSON.parse(line);
      const resolve = waiting.get(reply.id);
      if (resolve) {
        waiting.delete(reply.id);
        resolve(reply);
      }
    });
    child.on("exit", () => {
      for (const resolve of waiting.values()) resolve({ error: "pictx_fsm server exited" });
      waiting.clear();
      child = null;
    });
    return child;
  }

  function session(ctx) {
    const manager = ctx.sessionManager;
    const entries = manager.getEntries();
    const out = { entries: entries.slice(sent), leaf: manager.getLeafId() ?? null };
    if (!headerSent) {
      out.header = manager.getHeader();
      headerSent = true;
    }
    sent = entries.length;
    return out;
  }

  function facts(ctx) {
    const usage = ctx.getContextUsage?.();
    const model = ctx.model;
    return {
      usage: usage ? { tokens: usage.tokens ?? null, contextWindow: usage.contextWindow ?? null } : null,
      model: model
        ? { provider: model.provider, id: model.id, contextWindow: model.contextWindow, maxTokens: model.maxTokens }
        : null,
      signalAborted: ctx.signal?.aborted === true,
      hasPendingMessages: ctx.hasPendingMessages?.() === true,
      cwd: ctx.cwd,
      projectTrusted: ctx.isProjectTrusted?.() === true,
    };
  }

  function call(kind, name, event, ctx) {
    const process_ = server();
    const id = nextId++;
    const request = { id, kind, name, event, ctx: facts(ctx), session: session(ctx) };
    return new Promise((resolve) => {
      waiting.set(id, resolve);
      process_.stdin.write(JSON.stringify(request) + "\n");
    });
  }

  function apply(reply, ctx) {
    if (reply.error) throw new Error(`pictx_fsm: ${reply.error}`);
    for (const effect of reply.effects ?? []) {
      if (effect.effect === "notify") ctx.ui.notify(effect.message, effect.level);
      else if (effect.effect === "append_entry") pi.appendEntry(effect.customType, effect.data);
      else if (effect.effect === "abort") ctx.abort();
      else if (effect.effect === "send_message") {
        const message = { customType: effect.customType, content: effect.content, display: effect.display };
        if ("details" in effect) message.details = effect.details;
        pi.sendMessage(message, { triggerTurn: effect.triggerTurn });
      }
    }
    return reply.value ?? undefined;
  }

  // Only what the lifecycle reads of each payload (lifecycle spec §6).
  function payload(hook, event) {
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
        return { reason: event.reason, signalAborted: event.signal?.aborted === true };
      case "context":
      case "context_with_system":
        return { messages: event.messages };
      case "model_select":
        return { model: event.model ? { provider: event.model.provider, id: event.model.id,
          contextWindow: event.model.contextWindow, maxTokens: event.model.maxTokens } : null };
      default:
        return {
          reason: event.reason, turnIndex: event.turnIndex,
          newLeafId: event.newLeafId, oldLeafId: event.oldLeafId,
        };
    }
  }

  for (const hook of HOOKS) {
    pi.on(hook, async (event, ctx) => {
      const value = apply(await call("hook", hook, payload(hook, event), ctx), ctx);
      if (hook === "session_shutdown" && child) {
        child.stdin.end();
      }
      return value;
    });
  }

  function tool(name, label, description) {
    pi.registerTool({
      name, label, description, parameters: EMPTY,
      async execute(_toolCallId, _params, _signal, _onUpdate, ctx) {
        const value = apply(await call("tool", name, {}, ctx), ctx);
        return { content: value.content, details: undefined, terminate: value.terminate === true };
      },
    });
  }
  tool(
    "wipe_memory", "Wipe memory",
    "Wipe your in-context memory and start a fresh context window. Your session, notes, and history survive.",
  );
  tool(
    "get_context_remaining", "Get context remaining",
    "Return estimated context tokens left before your memory is wiped; null when Pi cannot estimate usage.",
  );

  pi.registerCommand("wipe-memory", {
    description: "Persist a fresh context window without calling the model",
    handler: async (_args, ctx) => {
      await ctx.waitForIdle();
      apply(await call("command", "wipe-memory", { args: "" }, ctx), ctx);
    },
  });
  pi.registerCommand("pi-context", {
    description: "Show loaded version/build and toggle pi-context context windows",
    getArgumentCompletions: (prefix) =>
      ["on", "off"].filter((a) => a.startsWith(prefix)).map((a) => ({ value: a, label: a })),
    handler: async (args, ctx) => {
      apply(await call("command", "pi-context", { args: args ?? "" }, ctx), ctx);
    },
  });
}
