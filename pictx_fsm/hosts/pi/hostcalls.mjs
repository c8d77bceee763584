// Host calls: what a server asks of Pi while it answers a request (pictx_fsm/hosts/pi/channel.py).
//
// The server writes {"id": <request>, "call": {"seq", "op", "oneWay", ...}}; the bridge pauses
// that request's timeout, carries the call out through Pi's API with the context of the
// handler that made the request, and — unless the call is one-way — writes back
// {"kind": "return", "seq", "value" | "error"}. Every return may carry fresh ctx facts and the
// entries Pi appended meanwhile (`ctx`, `session`), so the server's mirror stays current.
//
// Ops: append_entry (pi.appendEntry), notify, set_status, show_panel (Pi's UI, echoed to stderr
// when Pi has no UI), generate (a model request through Pi's configured model,
// ctx.modelRegistry.complete: awaited for a compaction, else answered later as an event
// request), cancel_generation, wait_for_idle (dispatches the extension's own command, whose
// context waits for idle: M57), create_session (Pi's SessionManager makes the session, written
// exclusively and read back), switch_session (ctx.switchSession from a command's context; its
// withSession delivers the target's takeover prompt or its return to the source), send_takeover
// and compact (ctx.compact, waited for).
import { readFileSync, writeFileSync } from "node:fs";
import * as piAgent from "@earendil-works/pi-coding-agent";
import { safely } from "./requests.mjs";

// Session switches in flight, by target file, shared by every bridge of this process: the
// source's withSession finds there what the target's extension asked for while it started.
const HANDOFFS = (globalThis[Symbol.for("pictx-fsm.handoffs")] ??= new Map());
const STOPS = { stop: "ok", toolUse: "ok", length: "incomplete", error: "error", aborted: "aborted" };

export class HostCalls {
  constructor(bridge) {
    this.bridge = bridge;
    this.jobs = new Map(); // job → AbortController of a model request answered later
    this.inflight = new Set(); // host calls Pi is carrying out
  }

  // One call line from `server`, for the request `id` (its waiting entry holds the handler's ctx).
  receive(server, message) {
    const bridge = this.bridge;
    const call = message.call ?? {};
    const entry = server.waiting.get(message.id);
    const ctx = entry?.ctx ?? bridge.commandCtx ?? bridge.ctx;
    if (call.oneWay) {
      try {
        this.perform(call, ctx, server);
      } catch (error) {
        bridge.tellOnce(`${bridge.spec.title}: ${call.op} failed: ${error?.message ?? error}`);
      }
      return;
    }
    entry?.pause?.();
    server.calls = (server.calls ?? 0) + 1;
    const done = Promise.resolve()
      .then(() => this.perform(call, ctx, server))
      .then(
        (value) => ({ value: value ?? null }),
        (error) => ({ error: String(error?.message ?? error) }),
      )
      .then((result) => {
        server.calls -= 1;
        entry?.resume?.();
        bridge.write(server, { kind: "return", seq: call.seq, ...result });
      });
    this.inflight.add(done);
    done.finally(() => this.inflight.delete(done));
  }

  // What Pi is still doing for calls already made (a compaction the user asked for): a command
  // whose server died meanwhile returns only once that is done.
  async settled() {
    while (this.inflight.size) await Promise.all([...this.inflight]);
  }

  // Whether `server` waits for a host call's return.
  pending(server) {
    return (server?.calls ?? 0) > 0;
  }

  perform(call, ctx, server) {
    const bridge = this.bridge;
    switch (call.op) {
      case "append_entry":
        bridge.pi.appendEntry(call.customType, call.data);
        return this.fresh(ctx);
      case "notify":
        return bridge.tell(call.message, call.level, ctx);
      case "set_status":
        return bridge.status(call.text, ctx);
      case "show_panel":
        return bridge.panel(call.text, ctx);
      case "generate":
        return call.oneWay ? this.later(call, ctx, server) : this.generate(call, ctx, bridge.compactSignal);
      case "cancel_generation":
        return this.cancel(call.job);
      case "wait_for_idle":
        return bridge.dispatchIdle();
      case "create_session":
        return createSession(ctx, call.customType, call.data);
      case "switch_session":
        return this.switchTo(call.path, ctx);
      case "send_takeover":
        return this.takeover(call.text, ctx);
      case "compact":
        return this.compact(ctx);
      default:
        throw new Error(`no host call ${JSON.stringify(call.op)}`);
    }
  }

  // The facts and the entries appended since the last request (the server's mirror).
  fresh(ctx) {
    const bridge = this.bridge;
    return { ctx: safely(() => bridge.facts(ctx)), session: safely(() => bridge.delta(ctx)) };
  }

  // A model request through Pi's configured model; its 300 s deadline (timeoutMs) aborts it.
  async generate(call, ctx, outer) {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), Math.max(0, call.timeoutMs ?? 0));
    timer.unref?.();
    const signal = outer ? AbortSignal.any([outer, controller.signal]) : controller.signal;
    try {
      return await complete(ctx, call, signal);
    } finally {
      clearTimeout(timer);
    }
  }

  // A model request answered later (a background job, a handoff preparation): its reply, or
  // its deadline, comes back as an event request — unless it was cancelled, or its server is
  // gone (a restarted server knows nothing of it).
  later(call, ctx, server) {
    const bridge = this.bridge;
    const controller = new AbortController();
    this.jobs.set(call.job, controller);
    let late = false;
    const timer = setTimeout(() => {
      late = true;
      controller.abort();
    }, Math.max(0, call.timeoutMs ?? 0));
    timer.unref?.();
    complete(ctx, call, controller.signal).then((reply) => {
      clearTimeout(timer);
      if (this.jobs.get(call.job) !== controller || server !== bridge.server) return;
      this.jobs.delete(call.job);
      if (late) bridge.event("deadline_reached", { job: call.job });
      else bridge.event("generation_replied", { job: call.job, reply });
    });
  }

  cancel(job) {
    const controller = this.jobs.get(job);
    this.jobs.delete(job);
    controller?.abort();
  }

  // The source's switch (M46 step 5) from a command's context; the target's return to its
  // source (M49) is asked while the target starts, inside the source's switch: the source's
  // withSession carries it out.
  async switchTo(path, ctx) {
    const bridge = this.bridge;
    const commandCtx = typeof ctx?.switchSession === "function" ? ctx : bridge.commandCtx;
    const own = safely(() => ctx.sessionManager.getSessionFile());
    const slot = own ? HANDOFFS.get(own) : undefined;
    if (slot && !slot.back) {
      slot.back = { path, report: (outcome) => bridge.event("handoff_replied", { outcome, target: path }) };
      return { switched: true };
    }
    if (!commandCtx) return { switched: false };
    HANDOFFS.set(path, { takeover: null, back: null });
    try {
      const result = await commandCtx.switchSession(path, { withSession: (next) => completeSwitch(bridge, path, next) });
      return { switched: result?.cancelled !== true };
    } finally {
      HANDOFFS.delete(path);
    }
  }

  // M46 step 7: the target's takeover prompt, sent by the switch that opened it.
  takeover(text, ctx) {
    const bridge = this.bridge;
    const own = safely(() => ctx.sessionManager.getSessionFile());
    const slot = own ? HANDOFFS.get(own) : undefined;
    const report = (outcome) => bridge.event("handoff_replied", { outcome });
    if (slot) slot.takeover = { text, report };
    else setImmediate(() => report("takeover_failed")); // no switch of ours opened this session
  }

  // /ctx-memory compact (M25): Pi's compaction, waited for (its session_before_compact comes
  // back to the server meanwhile). Only when idle, as Pi would abort the run first.
  async compact(ctx) {
    if (safely(() => ctx.isIdle()) !== true) return this.fresh(ctx);
    await new Promise((resolve) => {
      try {
        ctx.compact({ onComplete: () => resolve(), onError: () => resolve() });
      } catch {
        resolve();
      }
    });
    return this.fresh(ctx);
  }
}

// After the switch to `path`: what its extension asked for while it started — the way back to
// the source (M49), or the takeover prompt (M46 step 7, M50) — with the new session's context.
async function completeSwitch(bridge, path, next) {
  const slot = HANDOFFS.get(path);
  HANDOFFS.delete(path);
  if (slot?.back) {
    const result = await next.switchSession(slot.back.path);
    if (result?.cancelled === true) await slot.back.report("return_cancelled");
    return;
  }
  if (!slot?.takeover) return;
  const startable = safely(() => next.isIdle()) === true && Boolean(next.model);
  await slot.takeover.report(startable ? "takeover_sent" : "takeover_failed");
  if (!startable) return;
  try {
    await next.sendUserMessage(slot.takeover.text);
  } catch (error) {
    bridge.tell(`${bridge.spec.title}: the takeover prompt failed: ${error?.message ?? error}`, "error", next);
  }
}

// M46 step 4: the new session as Pi's SessionManager makes it (its id, file name, header with
// the source as parentSession), with the receipt; written exclusively — Pi writes files only
// once an assistant message exists — and read back before the switch.
function createSession(ctx, customType, data) {
  const source = ctx.sessionManager;
  const file = source.getSessionFile();
  if (!file) return { path: null };
  const manager = piAgent.SessionManager.create(source.getCwd(), source.getSessionDir());
  manager.newSession({ parentSession: file });
  manager.appendCustomEntry(customType, data);
  const path = manager.getSessionFile();
  const lines = [manager.getHeader(), ...manager.getEntries()].map((entry) => `${JSON.stringify(entry)}\n`);
  writeFileSync(path, lines.join(""), { flag: "wx" });
  const back = readFileSync(path, "utf8").split("\n").filter(Boolean).map((line) => JSON.parse(line));
  const receipt = back.find((entry) => entry.type === "custom" && entry.customType === customType);
  if (back[0]?.type !== "session" || JSON.stringify(receipt?.data) !== JSON.stringify(data)) return { path: null };
  return { path };
}

// One model request: the policy as the system prompt, the payload as the user's message.
async function complete(ctx, call, signal) {
  try {
    const model = ctx?.model;
    if (!model) return { kind: "error" };
    const message = await ctx.modelRegistry.complete(
      model,
      { systemPrompt: call.system, messages: [{ role: "user", content: [{ type: "text", text: call.prompt }], timestamp: Date.now() }] },
      { signal },
    );
    const text = (message.content ?? []).filter((block) => block.type === "text").map((block) => block.text).join("");
    return {
      kind: STOPS[message.stopReason] ?? "error",
      text,
      input: message.usage?.input ?? null,
      output: message.usage?.output ?? null,
      cost: message.usage?.cost?.total ?? 0,
    };
  } catch {
    return { kind: signal.aborted ? "aborted" : "error" };
  }
}
