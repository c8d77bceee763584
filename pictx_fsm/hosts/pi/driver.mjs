// The driver: a Pi extension, loaded after the extension under test, that acts at exact hooks —
// what Pi's print and RPC modes cannot place — for the differential runs against the model
// session (pictx_fsm.testing.differential) and the driven tests.
//
// The plan file $PICTX_DRIVER_PLAN_FILE holds:
// - "episodes": {"<k>": [stop, ...]}: `/drive-episode <k>` (sent before a prompt) makes episode k
//   current. A stop {"on": hook, "count": n, "acts": [act, ...]} fires when `hook` has fired n
//   more times since the previous stop fired (or since the episode began) — as the model
//   session's AdvanceTo stops right after the n-th such step — and does its acts in order, after
//   every earlier extension's handler. Acts: {"do": "steer" | "follow_up", "text"} (queued as a
//   user would; the handler waits until Pi counts it pending), {"do": "abort"}, {"do": "arm",
//   "what": "void" | "hide_boot" | "queue", "text"?} (another extension's doing at the next
//   boundary, see below), {"do": "settings", "content": {...}} (the agent directory's
//   settings.json rewritten), {"do": "command", "text": "/name args"} (the runner runs that
//   command through RPC while this handler waits on a `pictx-driver` input request). Each stop
//   that fired is logged to $PICTX_DRIVER_LOG_FILE as {"episode", "stop"}; stops that never
//   fired are the runner's to finish once the run settled.
// - "acts" (the driven tests): [{"on": hook | "message_start:<role>", "nth": n, "do", "text"?}]:
//   act when the hook fires for the n-th time in the whole process.
// - "boundary": {"marker", "types", "windowKey", "boot", "rootWindow"}: which entries the
//   `boundary` anchor picks (markers carrying data[windowKey], custom messages of `types`) and
//   which custom messages are a window's boot (`hide_boot`); the root window id is
//   rootWindow with "{session}" replaced by the first 8 characters of the session id.
//
// Commands (idle): /drive-navigate <index> <anchor> [summarize], /drive-fork <index> <anchor>
// [at], /drive-resume (switchSession to the current file), /drive-reload (ctx.reload()),
// /drive-arm <what> [text], /drive-settings <json>, /drive-idle (waits for Pi to be idle). An
// entry is chosen as the model session chooses it: among the current file's entries of the
// anchor's kind (`any`, `tool_call`,
// `tool_result`, `user`, `boundary`), the one at index modulo their number. The driven tests'
// /drive-tree <kind> <nth> [summarize] and /drive-fork <kind> <nth> [at] pick by kind and
// occurrence instead (kind: a message's role, a custom entry's customType, else the type;
// negative nth counts from the end).
//
// Arms are another extension's doing, loaded after the one under test (the model session's
// noise extensions): `void` answers the next turn_end or agent_before_settle with the incoming
// drafts plus a context_edit of an unknown entry (Pi voids the boundary); `hide_boot` adds, at
// the next turn_end, a context_edit hiding the current window's boot; `queue` is the early
// driver's (early-driver.mjs, loaded before): a follow-up queued in its next
// agent_before_settle. A new runtime (startup, fork, resume, reload) disarms them.
//
// Tools: `echo` ({"text", "ms"?}: "echo:<text>" after ms milliseconds, as the model session's
// built-in), `call_tools` ({"calls": [{"name", "args"?}]} nested through ctx.executeTool, Pi >=
// 0.99). Each session_start is logged to $PICTX_DRIVER_SESSIONS_FILE as {"sessionId", "reason"}.
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const WAIT_MS = 5000;
const UNKNOWN_TARGET = "noise-no-such-entry";

const state = (globalThis.__pictxDriver ??= {
  counts: new Map(),
  episode: null,
  arms: { void: false, hide_boot: false, queue: null },
  settled: 0,
});

function readPlan() {
  const file = process.env.PICTX_DRIVER_PLAN_FILE;
  return file ? JSON.parse(readFileSync(file, "utf8")) : {};
}

function log(file, line) {
  if (file) appendFileSync(file, JSON.stringify(line) + "\n");
}

function kindOf(entry) {
  if (entry.customType) return entry.customType;
  return entry.type === "message" ? entry.message.role : entry.type;
}

function pickByKind(ctx, kind, nth) {
  const matching = ctx.sessionManager.getEntries().filter((entry) => kindOf(entry) === kind);
  const entry = nth < 0 ? matching[matching.length + nth] : matching[nth - 1];
  if (!entry) throw new Error(`no entry #${nth} of kind ${kind}`);
  return entry.id;
}

function isBoundary(entry, boundary) {
  if (!boundary) return false;
  if (entry.type === "custom" && entry.customType === boundary.marker) {
    const id = entry.data?.[boundary.windowKey];
    return typeof id === "string" && id !== "";
  }
  return entry.type === "custom_message" && (boundary.types ?? []).includes(entry.customType);
}

function anchorOf(entry, boundary) {
  if (entry.type === "message") {
    const { role, content } = entry.message;
    if (role === "assistant" && Array.isArray(content) && content.some((b) => b.type === "toolCall")) {
      return "tool_call";
    }
    if (role === "toolResult") return "tool_result";
    return role === "user" ? "user" : "any";
  }
  return isBoundary(entry, boundary) ? "boundary" : "any";
}

function pickByAnchor(ctx, index, anchor, boundary) {
  const ids = ctx.sessionManager
    .getEntries()
    .filter((entry) => entry.id)
    .filter((entry) => anchor === "any" || anchorOf(entry, boundary) === anchor)
    .map((entry) => entry.id);
  if (!ids.length) return null;
  return ids[((index % ids.length) + ids.length) % ids.length];
}

// The ids of the current window's boots on the active branch.
function boots(ctx, boundary) {
  if (!boundary?.boot) return [];
  const branch = ctx.sessionManager.getBranch();
  let window = boundary.rootWindow.replace("{session}", ctx.sessionManager.getSessionId().slice(0, 8));
  for (const entry of branch) {
    if (entry.type === "custom" && entry.customType === boundary.marker) {
      const id = entry.data?.[boundary.windowKey];
      if (typeof id === "string" && id !== "") window = id;
    }
  }
  return branch
    .filter((e) => e.type === "custom_message" && e.customType === boundary.boot)
    .filter((e) => e.details?.[boundary.windowKey] === window)
    .map((e) => e.id);
}

// sendUserMessage queues asynchronously (after the input handlers): wait until it is queued, so
// the message is pending when this handler returns, as a host queueing at this point would be —
// or, where Pi takes it for a prompt of its own (0.87, while a prompt starts), until that run
// has settled.
async function queued(ctx) {
  const until = Date.now() + WAIT_MS;
  const settled = state.settled;
  while (!ctx.hasPendingMessages() && state.settled === settled) {
    if (Date.now() > until) throw new Error("the queued message never became pending");
    await new Promise((resolve) => setImmediate(resolve));
  }
}

function settingsFile() {
  return join(process.env.PI_CODING_AGENT_DIR, "settings.json");
}

async function perform(pi, act, ctx) {
  if (act.do === "abort") ctx.abort();
  else if (act.do === "steer" || act.do === "follow_up") {
    pi.sendUserMessage(act.text, { deliverAs: act.do === "steer" ? "steer" : "followUp" });
    await queued(ctx);
  } else if (act.do === "arm") arm(act.what, act.text);
  else if (act.do === "settings") writeFileSync(settingsFile(), JSON.stringify(act.content));
  else if (act.do === "command") {
    // The runner runs the command through RPC and then answers this request.
    await ctx.ui.input("pictx-driver", JSON.stringify({ command: act.text }));
  } else throw new Error(`unknown act ${JSON.stringify(act)}`);
}

function arm(what, text) {
  log(process.env.PICTX_DRIVER_LOG_FILE, { arm: what });
  if (what === "queue") state.arms.queue = text ?? "";
  else if (what === "void" || what === "hide_boot") state.arms[what] = true;
  else throw new Error(`unknown arm ${what}`);
}

// The boundary result of the late noise, when armed: the incoming drafts plus edits.
function noise(event, ctx, boundary) {
  const arms = state.arms;
  const edit = (targetId) => ({ type: "context_edit", targetId, replacement: null });
  if (arms.void) {
    arms.void = false;
    log(process.env.PICTX_DRIVER_LOG_FILE, { noise: "void", on: event.type });
    return { entries: [...(event.entries ?? []), edit(UNKNOWN_TARGET)], continue: event.continue };
  }
  if (arms.hide_boot && event.type === "turn_end") {
    arms.hide_boot = false;
    log(process.env.PICTX_DRIVER_LOG_FILE, { noise: "hide_boot", on: event.type });
    const targets = boots(ctx, boundary);
    if (targets.length) return { entries: [...(event.entries ?? []), ...targets.map(edit)], continue: event.continue };
  }
  return undefined;
}

const EPISODE_HOOKS = [
  "before_agent_start", "agent_start", "turn_start", "message_start", "message_end", "context",
  "context_with_system", "tool_execution_start", "tool_call", "tool_result", "tool_execution_end",
  "turn_end", "agent_end", "agent_before_settle", "agent_settled",
];

async function advance(pi, hook, ctx) {
  const episode = state.episode;
  if (!episode) return;
  const stop = episode.stops[episode.next];
  if (!stop || stop.on !== hook) return;
  episode.seen += 1;
  if (episode.seen < stop.count) return;
  episode.next += 1;
  episode.seen = 0;
  log(process.env.PICTX_DRIVER_LOG_FILE, { episode: episode.key, stop: episode.next - 1 });
  for (const act of stop.acts) await perform(pi, act, ctx);
}

export default function driver(pi) {
  const plan = readPlan();
  const acts = plan.acts ?? [];
  const boundary = plan.boundary;
  state.arms = { void: false, hide_boot: false, queue: null };
  const legacy = new Set(acts.map((act) => act.on.split(":")[0]));
  const hooks = new Set([...legacy, ...(plan.episodes ? EPISODE_HOOKS : [])]);
  for (const hook of hooks) {
    pi.on(hook, async (event, ctx) => {
      // The noise answers with the arms as they were when the hook fired; acts arm later ones.
      const boundaryHook = hook === "turn_end" || hook === "agent_before_settle";
      const result = boundaryHook && plan.episodes ? noise(event, ctx, boundary) : undefined;
      if (legacy.has(hook)) {
        const key = hook === "message_start" ? `${hook}:${event.message.role}` : hook;
        const count = (state.counts.get(key) ?? 0) + 1;
        state.counts.set(key, count);
        for (const act of acts) {
          if (act.on === key && act.nth === count) await perform(pi, act, ctx);
        }
      }
      await advance(pi, hook, ctx);
      return result;
    });
  }
  pi.on("agent_settled", () => {
    state.settled = (state.settled ?? 0) + 1;
  });
  pi.on("session_start", (event, ctx) => {
    const line = { sessionId: ctx.sessionManager.getSessionId(), reason: event.reason };
    log(process.env.PICTX_DRIVER_SESSIONS_FILE ?? process.env.PICTX_DRIVER_LOG_FILE, line);
  });
  const command = (name, description, handler) => pi.registerCommand(name, { description, handler });
  command("drive-episode", "start the driver's episode <k> (its stops, in order)", async (args) => {
    const key = args.trim();
    state.episode = { key, stops: plan.episodes?.[key] ?? [], next: 0, seen: 0 };
  });
  command("drive-idle", "wait until Pi is idle", async (_args, ctx) => {
    await ctx.waitForIdle();
  });
  command("drive-arm", "arm another extension's doing at the next boundary", async (args) => {
    const [what, ...text] = args.split(" ");
    arm(what, text.join(" "));
  });
  command("drive-settings", "rewrite the agent directory's settings.json", async (args) => {
    writeFileSync(settingsFile(), args);
  });
  command("drive-navigate", "navigate the tree to an entry chosen by anchor and index", async (args, ctx) => {
    const [index, anchor, summarize] = args.split(" ");
    const target = pickByAnchor(ctx, Number(index), anchor, boundary);
    if (target) await ctx.navigateTree(target, { summarize: summarize === "summarize" });
  });
  command("drive-tree", "navigate the tree to an entry chosen by kind and occurrence", async (args, ctx) => {
    const [kind, nth, summarize] = args.split(" ");
    await ctx.navigateTree(pickByKind(ctx, kind, Number(nth)), { summarize: summarize === "summarize" });
  });
  command("drive-fork", "fork at an entry chosen by anchor and index, or by kind and occurrence", async (args, ctx) => {
    const [first, second, position] = args.split(" ");
    const byAnchor = /^-?\d+$/.test(first);
    const target = byAnchor ? pickByAnchor(ctx, Number(first), second, boundary) : pickByKind(ctx, first, Number(second));
    if (target) await ctx.fork(target, { position: position === "at" ? "at" : "before" });
  });
  command("drive-resume", "resume the current session file (switchSession)", async (_args, ctx) => {
    await ctx.switchSession(ctx.sessionManager.getSessionFile());
  });
  command("drive-reload", "reload the extensions (session_shutdown/session_start reason reload)", async (_args, ctx) => {
    await ctx.reload();
  });
  pi.registerTool({
    name: "echo",
    label: "Echo",
    description: "Echo the text back, after ms milliseconds.",
    parameters: { type: "object", properties: { text: { type: "string" }, ms: { type: "number" } } },
    async execute(_id, params, signal, onUpdate) {
      const text = String(params.text ?? "");
      onUpdate?.({ content: [{ type: "text", text: "" }], details: undefined });
      const ms = Number.isInteger(params.ms) && params.ms > 0 ? params.ms : 0;
      if (ms) {
        await new Promise((resolve, reject) => {
          const timer = setTimeout(resolve, ms);
          signal?.addEventListener("abort", () => {
            clearTimeout(timer);
            reject(new Error("echo aborted"));
          });
        });
      }
      return { content: [{ type: "text", text: `echo:${text}` }], details: { len: text.length } };
    },
  });
  pi.registerTool({
    name: "call_tools",
    label: "Call tools",
    description: "Run other tools nested inside this call.",
    parameters: {
      type: "object",
      properties: { calls: { type: "array", items: { type: "object" } } },
      additionalProperties: false,
    },
    async execute(_id, params, _signal, _onUpdate, ctx) {
      const texts = [];
      for (const call of params.calls ?? []) {
        const outcome = await ctx.executeTool(call.name, call.args ?? {});
        const text = (outcome.result?.content ?? []).map((block) => block.text ?? "").join("\n");
        texts.push(`${call.name}${outcome.isError ? " (error)" : ""}: ${text}`);
      }
      return { content: [{ type: "text", text: texts.join("\n") }], details: undefined };
    },
  });
}
