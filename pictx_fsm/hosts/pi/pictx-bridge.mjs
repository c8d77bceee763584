// pictx-bridge: pictx_fsm's Pi extensions — pi-context's lifecycle and pi-context-management —
// for Pi, decided in Python.
//
// Load pi-context with `pi -e "$(pictx-fsm pi --extension-path)"` (this file) and
// pi-context-management with `pi -e "$(pictx-fsm pi --extension-path context-management)"`
// (context-management.mjs, which is this bridge for the other extension); both `-e` flags load
// both, each with its own server. The extension owns no decision: it registers what its section
// of pictx-bridge.manifest.json lists (generated from Python: hooks, tools with their schemas
// and prompt guidelines, commands, flags, texts), forwards each call to
// `$PICTX_FSM_PYTHON -m pictx_fsm.hosts.pi --extension <name>` (one JSON line each way),
// carries out what the server asks of Pi meanwhile (host calls: hostcalls.mjs) and applies the
// decided result through Pi's API. It fails closed: when the server is missing, broken, hung or
// dead, a handler answers what the manifest's fallbacks say — for pi-context a provider request
// is still cut at the current window (failclosed.mjs, R67–R69) or aborted, never sent with
// erased history; for pi-context-management nothing, so Pi compacts natively — Pi is never
// crashed or hung; the connection follows the declared bridge_connection machine
// (connection.mjs) and each failure episode is one notice.
//
// Environment: PICTX_FSM_PYTHON (default "python3"), PICTX_FSM_TIMEOUT_MS,
// PICTX_FSM_START_TIMEOUT_MS, PICTX_FSM_NOTICES (auto|stderr|off: where notices, the status bar
// and the panel go besides Pi's UI; auto = stderr when Pi has no UI, as in print mode),
// PICTX_FSM_TIMING (a file that gets each handler's duration, bytes sent and requests waited
// for at shutdown, for bench/bench_bridge.py); PICTX_FSM_LEASE=0 (no leases on quiet hooks:
// lease.mjs, every hook that returns something waits for the server); PICTX_FSM_PROFILE,
// PICTX_FSM_AUDIT_DIR and PICTX_FSM_CLOCK_OFFSET_FILE are read by the server.
import { spawn } from "node:child_process";
import { appendFileSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import * as piAgent from "@earendil-works/pi-coding-agent";
import { ConnectionMachine } from "./connection.mjs";
import { failClosed, foldSystem, markerOnPath, scanWindow } from "./failclosed.mjs";
import { HostCalls } from "./hostcalls.mjs";
import { Lease } from "./lease.mjs";
import { facts, format, hostVersion, lastLine, modelFacts, payload, positive, safely } from "./requests.mjs";
import { elideAgainst, isPredicted, rebuild, sameJson, systemsOf } from "./wire.mjs";

const HERE = dirname(fileURLToPath(import.meta.url));
const MANIFEST = JSON.parse(readFileSync(join(HERE, "pictx-bridge.manifest.json"), "utf8"));
const PYTHON = process.env.PICTX_FSM_PYTHON || "python3";
const REQUEST_MS = positive(process.env.PICTX_FSM_TIMEOUT_MS, MANIFEST.timeouts.requestMs);
const START_MS = positive(process.env.PICTX_FSM_START_TIMEOUT_MS, MANIFEST.timeouts.startMs);
const ABORT_GRACE_MS = MANIFEST.timeouts.abortGraceMs;
const PIPELINE_MS = MANIFEST.timeouts.pipelineMs;
const NOTICES = process.env.PICTX_FSM_NOTICES || "auto";
const TIMING = process.env.PICTX_FSM_TIMING;
const CHECK_USAGE = process.env.PICTX_FSM_CHECK_USAGE;
const PI_VERSION = hostVersion(piAgent, process.argv[1]);
const LEASES = process.env.PICTX_FSM_LEASE !== "0";
const IMPORT_FAILURE = /ModuleNotFoundError|ImportError|No module named|SyntaxError/;
const PIPE_GRACE_MS = 100; // how long a broken pipe waits for the exit that names the fault
// Unanswered leased requests after which a leased handler lets Node's loop turn once before
// it returns (the replies that arrived are read): Pi's loop with a fast provider may be all
// promises, and a server whose replies are never read stops reading requests.
const LEASE_BACKLOG = 8;
const children = new Set();
process.once("exit", () => children.forEach((child) => child.kill("SIGKILL")));

// The Pi extension factory for one of the manifest's extensions (by its section's name).
export function bridgeExtension(name) {
  const spec = MANIFEST.extensions[name];
  if (!spec) throw new Error(`pictx-bridge: the manifest has no extension ${JSON.stringify(name)}`);
  return function pictxBridge(pi) {
    if (spec.childEnv && process.env[spec.childEnv] === "1") return; // M1: a child session
    for (const flag of spec.flags) pi.registerFlag(flag.name, { description: flag.description, type: "boolean" });
    const bridge = new Bridge(pi, name, spec);
    for (const hook of spec.hooks) {
      pi.on(hook, (event, ctx) => bridge.hook(hook, event, ctx));
    }
    for (const tool of spec.tools) pi.registerTool(bridge.tool(tool));
    for (const command of spec.commands) pi.registerCommand(command.name, bridge.command(command));
  };
}

export default bridgeExtension("pi-context");

class Bridge {
  constructor(pi, name, spec) {
    this.pi = pi;
    this.name = name;
    this.spec = spec;
    this.T = spec.texts;
    this.WIN = spec.window ?? {};
    this.PIPELINED = new Set(spec.pipelined);
    this.MESSAGE_HOOKS = new Set(spec.messageHooks);
    this.LEASED = new Set(spec.lease?.hooks ?? []);
    this.NEUTRAL = new Set(spec.lease?.neutral ?? []);
    this.leases = LEASES && spec.lease !== undefined;
    this.calls = new HostCalls(this);
    this.commandCtx = null; // a command's context, held while the server says `hold`
    this.holding = false;
    this.released = null;
    this.idleToken = `__idle-${process.pid}-${Math.random().toString(36).slice(2)}`;
    this.machine = new ConnectionMachine(MANIFEST.connection);
    this.server = null; // {child, generation, waiting, buffer, stderr, starting}
    this.generation = 0;
    this.nextId = 1;
    this.sent = new Set();
    this.headerSent = false;
    this.unreported = []; // connection transitions the Python side has not audited yet
    this.ctx = null;
    this.reason = "";
    this.diagnosis = null;
    this.faultAt = 0;
    this.resetPending = false;
    this.speculation = null; // the context_with_system the server decided with the last context
    this.ahead = null; // the hooks that settle a run, decided with its last turn_end
    this.toggle = null;
    this.lease = null; // the server's lease on quiet hooks (lease.mjs), while it holds
    this.leasing = spec.lease ? new ConnectionMachine(spec.lease.machine) : null; // bridge_lease's follower
    this.carried = []; // entries read for a lease that voided: they go with the next request
    this.told = new Set(); // error texts and missing-boot windows already announced
    this.timings = [];
    this.bytesSent = 0;
    this.waited = 0; // requests written and waited for (PICTX_FSM_TIMING)
  }

  // -- Pi handlers -----------------------------------------------------------------------

  async hook(name, event, ctx) {
    const started = TIMING ? performance.now() : 0;
    const bytes = this.bytesSent;
    const waited = this.waited;
    this.ctx = ctx;
    const guess = this.speculation;
    const ahead = this.ahead;
    this.speculation = null;
    this.ahead = null;
    if (name === "session_start" || name === "session_tree") this.forgetMissingBoots();
    try {
      const leased = this.leased(name, event, ctx);
      if (leased && this.server.leased.size >= LEASE_BACKLOG) await nextTurnOfTheLoop();
      if (leased) return leased.value;
      const decided = guess && name === "context_with_system" ? this.decidedAhead(guess, event, ctx) : null;
      if (decided) return decided;
      if (ahead?.items[0].name === name && this.settledAhead(ahead, event, ctx)) return this.keptAhead(ahead, event, ctx);
      if (this.PIPELINED.has(name) && this.machine.state === "ready") return this.post(name, event, ctx);
      const kept = this.MESSAGE_HOOKS.has(name) ? this.keptAgainst(name, event) : null;
      const body = kept ? kept.build : payload(name, event, this.WIN.bootType);
      if (name === "turn_end" && this.spec.lease && endsRun(body)) body.speculate = true;
      if (name === "session_before_compact") this.compactSignal = event.signal;
      const issued = this.nextId;
      const reply = await this.request("hook", name, body, ctx, ctx.signal);
      if (name === "session_before_compact") this.compactSignal = undefined;
      kept?.settle(reply.ok);
      if (reply.ok && reply.reply.lease && this.nextId === issued + 1) this.hold(reply);
      const value = reply.ok ? this.apply(reply.reply, ctx, name, event) : undefined;
      if (reply.ok && reply.reply.withSystem && value === undefined) this.speculate(reply, event.messages);
      if (reply.ok && reply.reply.ahead) this.ahead = { ...this.decidedWith(reply), items: reply.reply.ahead };
      // A provider request is never passed through unanswered: no messages, no trust.
      if (reply.ok && (name !== "context_with_system" || Array.isArray(value?.messages))) return value;
      return this.fallback(name, event, ctx);
    } catch (error) {
      this.tellOnce(format(this.T.NOTICE_LIFECYCLE_ERROR, { where: name, error: `bridge: ${error}` }), name);
      return this.fallback(name, event, ctx);
    } finally {
      if (TIMING) {
        const ms = (performance.now() - started).toFixed(4);
        this.timings.push(`${name}\t${ms}\t${this.bytesSent - bytes}\t${this.waited - waited}`);
      }
      if (name === "session_shutdown") {
        this.shutDown = true;
        this.setHolding(false);
        this.fire("shutdown", "session_shutdown");
        if (TIMING) safely(() => appendFileSync(TIMING, `${this.timings.join("\n")}\n`));
      }
    }
  }

  // An observational hook (its handler returns nothing, its effects are notices: the
  // manifest's `pipelined` list) is sent without waiting: the request is ordered on the
  // pipe before the next awaited one, its reply's notices are applied when it arrives, and
  // its failure (error, timeout, dead server) is a fault like any other, so the next awaited
  // request — every provider request is one — finds the connection restarting or degraded.
  post(name, event, ctx, body = { kind: "hook", name, event: payload(name, event, this.WIN.bootType) }) {
    body.pipelined = true;
    body.ctx = this.facts(ctx);
    body.session ??= this.delta(ctx);
    const server = this.server;
    const sent = this.exchange(body, undefined, REQUEST_MS, name, true);
    if (body.leased) this.outstanding(server, sent);
    sent
      .then((reply) => {
        if (reply.reply?.broken) this.broken(server);
        if (reply.reply?.error) this.tellOnce(format(this.T.NOTICE_LIFECYCLE_ERROR, { where: name, error: reply.reply.error }));
        else if (reply.ok) this.apply(reply.reply, ctx, name, event);
      })
      .catch((error) => this.tellOnce(format(this.T.NOTICE_LIFECYCLE_ERROR, { where: name, error: `bridge: ${error}` }), name));
    return undefined;
  }

  // -- the lease on quiet hooks (lease.mjs) ------------------------------------------------------

  // A covered hook answered under the lease, sent pipelined for the server to decide and
  // check ({value}); null when no lease holds for it (then it is requested as usual). Any
  // hook the lease does not cover voids it, but the observational ones that leave it be.
  leased(name, event, ctx) {
    const lease = this.lease;
    if (!lease) return null;
    if (lease.server !== this.server || this.machine.state !== "ready") return this.void();
    if (this.NEUTRAL.has(name)) return null;
    if (!this.LEASED.has(name)) return this.void();
    const session = this.delta(ctx); // the new entries: past the bound, the lease is void
    const answer = this.lease && lease.answer(name, event, modelFacts(ctx.model), ctx.signal?.aborted === true);
    if (!answer) {
      this.carried = session.entries;
      return this.void();
    }
    this.fireLease("answer"); // send_pipelined: below
    let sent = payload(name, event, this.WIN.bootType);
    if (this.MESSAGE_HOOKS.has(name)) {
      const kept = this.keptAgainst(name, event);
      sent = kept.build(this.server);
      kept.settle(true);
    }
    this.post(name, event, ctx, { kind: "hook", name, event: sent, leased: answer.claim ?? true, session });
    return answer;
  }

  // A leased hook's request, until answered: an awaited request is written only once every
  // one of them is, so a server that died on one is restarted (and resynchronised) before
  // the awaited request — a tool call the lease did not cover — reaches any server.
  outstanding(server, sent) {
    server.leased.add(sent);
    sent.finally(() => server.leased.delete(sent));
  }

  async drained() {
    const server = this.server;
    if (!server?.leased?.size) return;
    this.flush(server);
    const alive = setTimeout(() => {}, REQUEST_MS); // their timers keep no Node alive
    await Promise.all([...server.leased]);
    clearTimeout(alive);
  }

  hold(reply) {
    if (this.leases && this.leasing.state !== "broken") {
      this.fireLease("grant");
      this.lease = new Lease(reply.reply.lease, reply.leaf, this.server, this.spec.lease, this.WIN);
    }
  }

  void() {
    if (this.lease) this.fireLease("void");
    this.lease = null;
    return null;
  }

  // The server decided a leased hook otherwise (it told the user): no more leases from it.
  broken(server) {
    if (server !== this.server) return;
    this.fireLease("break"); // stop_leasing
    this.lease = null;
  }

  // Step bridge_lease; an undeclared event is a follower bug, told once, never a crash.
  fireLease(event) {
    if (!this.leasing) return; // an extension without leases
    if (this.leasing.fire(event) === null) {
      this.tellOnce(format(this.T.NOTICE_LIFECYCLE_ERROR, { where: "bridge_lease", error: `no ${event} in ${this.leasing.state}` }));
    }
  }

  // A provider request's messages against what this connection's server holds (wire.mjs):
  // built once the connection is ready (a restarted server holds nothing), and remembered
  // only when the server answered (then it holds them too). An answered
  // `context_with_system` leaves where its system messages were: the next `context` then
  // asks the server to decide the `context_with_system` that follows it too.
  keptAgainst(name, event) {
    let server = null;
    let texts = null;
    let systems = null;
    const build = (current) => {
      server = current;
      const [messages, sent] = elideAgainst(event.messages, this.WIN.bootType, current.kept.get(name));
      texts = sent;
      if (name === "context_with_system") systems = systemsOf(messages, event.messages);
      return name === "context" && current.systems ? { messages, speculate: true } : { messages };
    };
    const settle = (ok) => {
      if (server && ok) server.kept.set(name, texts);
      else server?.kept.delete(name);
      if (server && name === "context_with_system") server.systems = ok ? systems : null;
    };
    return { build, settle };
  }

  // The `context_with_system` the server decided with `context` (speculation.py), kept to
  // be checked against the real one; `list` is the transcript this `context` handler saw.
  speculate(reply, list) {
    const { slices } = reply.reply.withSystem;
    this.speculation = { ...this.decidedWith(reply), slices, list };
  }

  // What a decision ahead was taken on: this server, the leaf and the facts of `reply`'s request.
  decidedWith(reply) {
    return { server: this.server, leaf: reply.leaf, facts: JSON.stringify(reply.facts) };
  }

  // Whether the decision ahead still holds: the same ready server, leaf and facts.
  holds(guess, ctx) {
    if (guess.server !== this.server || this.machine.state !== "ready") return false;
    if ((ctx.sessionManager.getLeafId() ?? null) !== guess.leaf) return false;
    return JSON.stringify(this.facts(ctx)) === guess.facts;
  }

  // The hooks that settle a run, decided with its last turn_end (speculation.py's
  // settle_events): the next one holds when Pi sends it with the payload decided on.
  settledAhead(ahead, event, ctx) {
    return this.holds(ahead, ctx) && sameJson(payload(ahead.items[0].name, event, this.WIN.bootType), ahead.items[0].event);
  }

  // Answer from the decision, tell the server to keep it, and hold the ones after it.
  keptAhead(ahead, event, ctx) {
    const [item, ...rest] = ahead.items;
    if (rest.length) this.ahead = { ...ahead, items: rest };
    this.post(item.name, event, ctx, { kind: "hook", name: item.name, event: { speculated: true } });
    return this.apply({ value: item.value }, ctx, item.name, event);
  }

  // The decided answer, when Pi passes exactly the predicted transcript (isPredicted) on the
  // same leaf with the same facts; the server is then told to keep its decision (pipelined,
  // ahead of any later request). Else null: the request is sent as usual, and the server
  // drops what it decided.
  decidedAhead(guess, event, ctx) {
    const server = this.server;
    const messages = event.messages;
    if (!this.holds(guess, ctx) || !server.systems || !isPredicted(messages, guess.list, server.systems)) return null;
    const value = { messages: rebuild(guess.slices, messages) };
    server.systems = server.systems.map(([index]) => [index, messages[index]]);
    this.post("context_with_system", event, ctx, { kind: "hook", name: "context_with_system", event: { speculated: true } });
    return value;
  }

  tool(spec) {
    const bridge = this;
    const definition = {
      name: spec.name, label: spec.label, description: spec.description,
      parameters: spec.parameters,
      async execute(toolCallId, params, signal, _onUpdate, ctx) {
        bridge.ctx = ctx;
        const event = { arguments: params ?? {}, toolCallId };
        const reply = await bridge.request("tool", spec.name, event, ctx, signal);
        if (reply.reply?.error) {
          throw new Error(format(bridge.T.NOTICE_LIFECYCLE_ERROR, { where: spec.name, error: reply.reply.error }));
        }
        if (!reply.ok) {
          throw new Error(format(bridge.T.TOOL_UNAVAILABLE, { state: bridge.unavailable(), tool: spec.name }));
        }
        const value = bridge.apply(reply.reply, ctx, spec.name, event) ?? {};
        if (spec.name === bridge.spec.wipeTool && wipeRequested(value, bridge.spec)) bridge.resetPending = true;
        // A notes or history tool's error channel (N4) is what pi-context throws: Pi makes
        // the message an error result. A refusal ({"error": …} JSON) is an ordinary result.
        if (value.isError === true) throw new Error(value.content?.[0]?.text ?? "");
        return { content: value.content ?? [], details: value.details, terminate: value.terminate === true };
      },
    };
    if (spec.executionMode) definition.executionMode = spec.executionMode;
    if (spec.promptGuidelines) definition.promptGuidelines = spec.promptGuidelines;
    return definition;
  }

  command(spec) {
    const bridge = this;
    const options = {
      description: spec.description,
      handler: async (args, ctx) => {
        bridge.ctx = ctx;
        if (String(args ?? "").trim() === bridge.idleToken) return bridge.idle(ctx);
        if (spec.waitForIdle) await ctx.waitForIdle();
        const held = bridge.holding; // another command keeps its context for a running flow
        if (!held) bridge.commandCtx = ctx;
        const reply = await bridge.request("command", spec.name, { args: args ?? "" }, ctx);
        if (reply.ok) {
          bridge.apply(reply.reply, ctx, spec.name, {});
          const arg = String(args ?? "").trim().toLowerCase();
          if (arg === "on" || arg === "off") bridge.toggle = arg;
        } else if (!reply.reply && !reply.sent) {
          bridge.unanswered(spec);
        } // an error reply was told once by request(), a fault on the way by its notice
        await bridge.calls.settled();
        if (!held) await bridge.keepCommand(ctx);
      },
    };
    if (spec.completions) {
      options.getArgumentCompletions = (prefix) =>
        spec.completions.filter((a) => a.startsWith(prefix)).map((a) => ({ value: a, label: a }));
    }
    return options;
  }

  // A command no server could answer: /pi-context reports the connection, others did nothing.
  unanswered(spec) {
    if (spec.reportsStatus) {
      const status = { state: this.machine.state, reason: this.reason, pi_version: PI_VERSION };
      this.tell(format(this.T.NOTICE_DEGRADED_STATUS, status), "info");
    } else {
      this.tell(format(this.T.TOOL_UNAVAILABLE, { state: this.unavailable(), tool: `/${spec.name}` }), "error");
    }
  }

  // -- results -------------------------------------------------------------------------------

  apply(reply, ctx, name, event) {
    if ("hold" in reply) this.setHolding(reply.hold === true);
    for (const effect of reply.effects ?? []) {
      try {
        this.effect(effect, ctx);
      } catch (error) {
        const where = `${name} (${effect.effect})`;
        this.tellOnce(format(this.T.NOTICE_LIFECYCLE_ERROR, { where, error: String(error) }), where);
      }
    }
    const value = reply.value ?? undefined;
    if (value && Array.isArray(value.entries) && value.entries.some((d) => isMarkerDraft(d, this.WIN))) this.resetPending = false;
    if (value && Array.isArray(value.slices)) return { messages: rebuild(value.slices, event.messages) };
    return value;
  }

  effect(effect, ctx) {
    if (effect.effect === "notify") this.tell(effect.message, effect.level);
    else if (effect.effect === "append_entry") this.pi.appendEntry(effect.customType, effect.data);
    else if (effect.effect === "abort") ctx.abort();
    else if (effect.effect === "send_message") {
      const message = { customType: effect.customType, content: effect.content, display: effect.display };
      if ("details" in effect) message.details = effect.details;
      this.pi.sendMessage(message, { triggerTurn: effect.triggerTurn });
    }
  }

  // What a handler returns when Python cannot answer: what the manifest's fallbacks say —
  // for pi-context the provider request cut by the fail-closed projection or aborted
  // (R67–R69), and R62/R75's guards; otherwise nothing (Pi's own behaviour, its compaction).
  fallback(name, event, ctx) {
    const kind = this.spec.fallbacks[name];
    if (kind === "cut_request") return this.cutRequest(event, ctx);
    if (kind === "guard_compaction") return this.guardCompaction(ctx);
    if (kind === "guard_tree_summary") return this.guardTreeSummary(event, ctx);
    return undefined;
  }

  // R62's half that off keeps: a native compaction summarizes the branch for the provider,
  // so on a marked branch it is cancelled (and when even that cannot be told).
  guardCompaction(ctx) {
    const marked = safely(() => markerOnPath(ctx.sessionManager, ctx.sessionManager.getLeafId(), this.WIN));
    return marked === false ? undefined : { cancel: true };
  }

  // R75: no branch summary across a reset window (an empty one bypasses the summarizer).
  guardTreeSummary(event, ctx) {
    if (event.preparation?.userWantsSummary !== true) return undefined;
    const manager = ctx.sessionManager;
    const crosses = safely(
      () =>
        markerOnPath(manager, manager.getLeafId(), this.WIN) ||
        markerOnPath(manager, event.preparation.targetId, this.WIN),
    );
    return crosses === false ? undefined : { summary: { summary: "" } };
  }

  cutRequest(event, ctx) {
    try {
      const window = scanWindow(ctx.sessionManager, this.WIN);
      const projected = failClosed(event.messages, window, this.WIN);
      if (projected.missingBoot) this.missingBoot(window.windowId, ctx);
      return { messages: projected.messages };
    } catch (error) {
      safely(() => ctx.abort());
      const head = safely(() => foldSystem(event.messages));
      return { messages: head ? [head] : [] };
    }
  }

  missingBoot(windowId, ctx) {
    if (!this.told.has(`boot:${windowId}`)) {
      this.told.add(`boot:${windowId}`);
      this.tell(format(this.T.NOTICE_MISSING_BOOT, { window_id: windowId }), "error");
    }
    ctx.abort();
  }

  forgetMissingBoots() {
    for (const key of this.told) if (key.startsWith("boot:")) this.told.delete(key);
  }

  // -- requests --------------------------------------------------------------------------------

  async request(kind, name, event, ctx, signal) {
    if (this.shutDown && kind === "event") return { ok: false }; // Pi replaced this instance
    // Any request makes the server drop what it decided ahead, and voids a lease.
    this.speculation = null;
    this.ahead = null;
    this.void();
    await this.drained();
    if (!(await this.ready(ctx))) return { ok: false };
    if (typeof event === "function") event = event(this.server);
    const body = { kind, name, event, ctx: this.facts(ctx), session: this.delta(ctx) };
    if (this.leases && kind === "hook" && this.leasing.state !== "broken") body.lease = true;
    const reply = await this.exchange(body, signal, body.session.header ? START_MS : REQUEST_MS, name, false, ctx);
    if (reply.reply?.error) {
      this.tellOnce(format(this.T.NOTICE_LIFECYCLE_ERROR, { where: name, error: reply.reply.error }));
    }
    return { ...reply, sent: true, leaf: body.session.leaf, facts: body.ctx };
  }

  // The connection as the machine says: start on first use, restart after the back-off.
  async ready(ctx) {
    const state = this.machine.state;
    if (state === "ready") return true;
    if (state === "stopped") this.fire("start");
    else if (state === "restarting" && Date.now() >= this.faultAt + this.machine.backoffMs()) {
      this.fire("retry");
    }
    if (this.machine.state !== "starting") return false;
    return this.server.starting.then((ok) => ok && this.resynced(ctx));
  }

  async resynced(ctx) {
    if (!this.server?.resync) return this.machine.state === "ready";
    this.server.resync = false;
    this.headerSent = false;
    const body = { kind: "resync", ctx: this.facts(ctx), session: this.delta(ctx), toggle: this.toggle };
    const reply = await this.exchange(body, undefined, START_MS, "resync");
    if (reply.ok) this.apply(reply.reply, ctx, "resync", {});
    else if (this.machine.state === "ready") this.fault(this.server, format(this.T.FAULT_HANDSHAKE, { detail: reply.reply?.error ?? "resync failed" }));
    return reply.ok && this.machine.state === "ready";
  }

  // The session since the last request: everything on a new connection, else the entries
  // between the leaf and the nearest entry already sent (O(new entries)), after any read for
  // a lease that voided. A held lease bounds every entry shipped (lease.mjs).
  delta(ctx) {
    const manager = ctx.sessionManager;
    const out = { entries: [], leaf: manager.getLeafId() ?? null };
    if (!this.headerSent) {
      out.header = manager.getHeader();
      out.entries = manager.getEntries();
      this.sent = new Set(out.entries.map((entry) => entry.id));
      this.headerSent = true;
      this.carried = [];
      this.void();
      return out;
    }
    let entry = manager.getLeafEntry();
    while (entry && !this.sent.has(entry.id)) {
      out.entries.push(entry);
      this.sent.add(entry.id);
      entry = entry.parentId ? manager.getEntry(entry.parentId) : undefined;
    }
    out.entries.reverse();
    if (this.carried.length) out.entries = [...this.carried, ...out.entries];
    this.carried = [];
    if (this.lease && !this.lease.observe(out.entries, out.leaf)) this.void();
    return out;
  }

  // One request and its reply: {ok, reply}; {ok: false} when the connection was lost, the
  // wait timed out (a fault) or `signal` aborted it (the request stays watched, unref'd).
  // A request sent in a run already aborted waits only the abort grace: a healthy server
  // answers in milliseconds, and Pi is winding the run down.
  // A `detached` request (pipelined) is queued and written with the next awaited one (one
  // write, one wake-up of the server for the batch), at the latest after the pipeline delay
  // (a leased one at once: flushSoon);
  // its timeout keeps Node alive no longer than Pi does.
  // While the server makes a host call for the request (hostcalls.mjs), its timer is paused:
  // the time Pi takes (a model request, a session switch) is not the server's.
  exchange(body, signal, timeoutMs, label, detached = false, ctx = undefined) {
    const server = this.server;
    if (!server?.child) return Promise.resolve({ ok: false });
    if (signal?.aborted && !body.session?.header) {
      timeoutMs = Math.min(timeoutMs, ABORT_GRACE_MS);
      signal = undefined;
    }
    const id = this.nextId++;
    if (this.unreported.length && body.kind !== "hello" && !detached) body.connection = this.unreported.slice();
    return new Promise((resolve) => {
      let settled = false;
      const settle = (reply) => {
        if (settled) return;
        settled = true;
        signal?.removeEventListener?.("abort", onAbort);
        resolve(reply);
      };
      const expire = (text, ms) => () => {
        server.waiting.delete(id);
        settle({ ok: false });
        this.fault(server, format(text, { hook: label, ms }));
      };
      // A pipelined request's timer may run late, before the loop has read a reply that
      // came in time (timers run before I/O in a turn of the loop): it looks once more after
      // the I/O of this turn.
      const late = (text, ms) => () => setImmediate(() => server.waiting.has(id) && expire(text, ms)());
      let timer = setTimeout((detached ? late : expire)(this.T.FAULT_TIMEOUT, timeoutMs), timeoutMs);
      if (detached) timer.unref();
      // Aborted (Escape): the handler returns at once; the request stays watched for a
      // short grace, after which a server that still has not answered counts as hung.
      let paused = false;
      const grace = () => {
        timer = setTimeout(expire(this.T.FAULT_ABANDONED, ABORT_GRACE_MS), ABORT_GRACE_MS);
        timer.unref();
      };
      const onAbort = () => {
        settle({ ok: false });
        clearTimeout(timer);
        if (!paused) grace();
      };
      const answer = (reply) => {
        clearTimeout(timer);
        if (reply === null) return settle({ ok: false });
        if (!reply.error && body.connection) this.unreported.splice(0, body.connection.length);
        settle({ ok: !reply.error, reply });
        this.closeIfDone(server);
      };
      answer.ctx = ctx;
      answer.pause = () => {
        paused = true;
        clearTimeout(timer);
      };
      answer.resume = () => {
        paused = false;
        if (settled) grace();
        else timer = setTimeout(expire(this.T.FAULT_TIMEOUT, timeoutMs), timeoutMs);
      };
      server.waiting.set(id, answer);
      signal?.addEventListener?.("abort", onAbort, { once: true });
      const line = `${JSON.stringify({ id, ...body })}\n`;
      if (TIMING) this.bytesSent += Buffer.byteLength(line);
      if (TIMING && !detached) this.waited += 1;
      server.outbox.push(line);
      if (!detached) this.flush(server);
      else if (body.leased) this.flushSoon(server);
      else server.flushTimer ??= setTimeout(() => this.flush(server), PIPELINE_MS);
    });
  }

  // A leased hook's request is written as soon as the handler has returned (a microtask,
  // with anything queued before it), not at the pipeline delay: under a lease no awaited
  // request comes to carry it, and a run of leased turns may never let a timer fire
  // (Pi's loop with a fast provider is all promises), which would starve the server.
  flushSoon(server) {
    if (server.flushing) return;
    server.flushing = true;
    queueMicrotask(() => {
      server.flushing = false;
      this.flush(server);
    });
  }

  // Write every queued request line of `server` at once (the pipe keeps them in order).
  flush(server) {
    clearTimeout(server.flushTimer);
    server.flushTimer = undefined;
    if (server !== this.server || server.outbox.length === 0 || !server.child) return;
    const lines = server.outbox.join("");
    server.outbox = [];
    try {
      server.child.stdin.write(lines);
    } catch (error) {
      this.fault(server, format(this.T.FAULT_PIPE, { detail: error.code ?? String(error) }));
    }
  }

  // -- the connection machine ----------------------------------------------------------------

  fire(event, detail = "") {
    const transition = this.machine.fire(event, detail);
    if (transition === null) return;
    const { actions, ...report } = transition;
    this.unreported.push(report);
    if (this.unreported.length > 100) this.unreported.shift();
    for (const action of actions) this[`do_${action}`](detail);
  }

  fault(server, detail) {
    if (server !== this.server) return; // an old server's last words
    const state = this.machine.state;
    if (state !== "starting" && state !== "ready") return;
    this.reason = detail;
    this.faultAt = Date.now();
    this.fire("fault", detail);
    this.setHolding(false); // a handoff in flight is abandoned: this session goes on
  }

  // A fault restarting cannot cure: diagnosed once, then degraded.
  unusable(server, diagnosis) {
    if (server !== this.server || this.machine.state !== "starting") return;
    this.reason = diagnosis.problem;
    this.diagnosis = diagnosis;
    this.fire("unusable", diagnosis.problem);
    this.setHolding(false);
  }

  unavailable() {
    return this.machine.state === "degraded" ? `degraded: ${this.reason}` : this.machine.state;
  }

  do_spawn() {
    const server = {
      generation: ++this.generation, waiting: new Map(), outbox: [], kept: new Map(), systems: null, buffer: "", stderr: "",
      leased: new Set(),
    };
    server.starting = new Promise((resolve) => (server.started = resolve));
    this.server = server;
    this.void();
    this.fireLease("connect"); // a new server: unleased, whatever the last one said
    this.headerSent = false;
    try {
      // A neutral working directory: `python -m` puts it first on sys.path, and Pi's own
      // directory may hold a checkout that is not the installed package.
      const options = { cwd: tmpdir(), stdio: ["pipe", "pipe", "pipe"] };
      server.child = spawn(PYTHON, ["-m", "pictx_fsm.hosts.pi", "--extension", this.name], options);
    } catch (error) {
      this.unusable(server, noInterpreter(error, this.T));
      return;
    }
    this.watch(server, server.child);
    const hello = { kind: "hello", extension: MANIFEST.package, protocol: MANIFEST.protocol, pi: PI_VERSION };
    this.exchange(hello, undefined, START_MS, "handshake").then((reply) => this.greeted(server, reply));
  }

  // Every way a child can fail becomes a machine event; none can reach Pi as an exception,
  // and none keeps Node alive (a waiting request holds its own timer).
  watch(server, child) {
    children.add(child);
    child.unref();
    for (const stream of [child.stdin, child.stdout, child.stderr]) {
      stream.unref?.();
      stream.on("error", (error) => {
        // While starting, the process event that follows (error or close) says more; a
        // dead server's pipe breaks before its exit is seen, and the exit, when it follows
        // within the grace, names the fault (a leased request is written at once).
        if (this.machine.state === "starting") return;
        const detail = format(this.T.FAULT_PIPE, { detail: error.code ?? String(error) });
        setTimeout(() => this.fault(server, detail), PIPE_GRACE_MS).unref();
      });
    }
    child.on("error", (error) => {
      if (error.code === "ENOENT" || error.code === "EACCES") this.unusable(server, noInterpreter(error, this.T));
      else this.fault(server, format(this.T.FAULT_PIPE, { detail: error.code ?? String(error) }));
    });
    child.on("close", (code, signal) => {
      children.delete(child);
      this.exited(server, code ?? signal);
    });
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (text) => (server.stderr = (server.stderr + text).slice(-4000)));
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (text) => this.received(server, text));
  }

  greeted(server, reply) {
    if (server !== this.server || this.machine.state !== "starting") return server.started(false);
    const found = reply.reply?.hello;
    if (!reply.ok && !reply.reply) return server.started(false); // a fault was raised
    const same = found && found.package === MANIFEST.package && found.protocol === MANIFEST.protocol;
    if (!same || found.serves !== this.name) {
      const problem = format(this.T.PROBLEM_VERSION, {
        extension: MANIFEST.package, python: PYTHON, package: found?.package ?? "without a handshake",
      });
      this.unusable(server, { problem, fix: format(this.T.FIX_VERSION, { python: PYTHON }) });
      return server.started(false);
    }
    this.fire("handshake");
    server.started(this.machine.state === "ready");
  }

  exited(server, code) {
    if (server !== this.server) return;
    if (this.machine.state === "starting" && IMPORT_FAILURE.test(server.stderr)) {
      const error = lastLine(server.stderr);
      this.unusable(server, { problem: format(this.T.PROBLEM_NO_PACKAGE, { python: PYTHON, error }), fix: this.T.FIX_PYTHON });
    } else {
      this.fault(server, format(this.T.FAULT_EXITED, { code }));
    }
  }

  received(server, text) {
    server.buffer += text;
    let end = server.buffer.indexOf("\n");
    while (end >= 0 && server === this.server) {
      const line = server.buffer.slice(0, end);
      server.buffer = server.buffer.slice(end + 1);
      if (line.trim()) this.line(server, line);
      end = server.buffer.indexOf("\n");
    }
  }

  line(server, line) {
    let reply;
    try {
      reply = JSON.parse(line);
    } catch {
      reply = null;
    }
    if (reply !== null && typeof reply === "object" && reply.call && typeof reply.call === "object") {
      this.calls.receive(server, reply);
      return;
    }
    const answer = reply !== null && typeof reply === "object" ? server.waiting.get(reply.id) : undefined;
    if (reply === null || typeof reply !== "object" || !("id" in reply)) {
      this.fault(server, format(this.T.FAULT_GARBAGE, { detail: JSON.stringify(line.slice(0, 60)) }));
    } else if (answer) {
      server.waiting.delete(reply.id);
      answer(reply);
    }
  }

  do_resync() {
    this.server.resync = true;
  }

  do_stop_server() {
    const server = this.server;
    for (const answer of server.waiting.values()) answer(null);
    server.waiting.clear();
    server.started?.(false);
    this.server = {
      ...server, child: null, waiting: new Map(), outbox: [], kept: new Map(), systems: null, leased: new Set(), generation: -1,
    };
    if (server.child) {
      children.delete(server.child);
      safely(() => server.child.kill("SIGKILL"));
    }
  }

  // A server whose request makes a host call (a session switch ends this session while its
  // server waits for the switch's return) is closed once that request is answered.
  do_close() {
    const server = this.server;
    const child = server?.child;
    if (!child) return;
    if (this.calls.pending(server)) server.closeWhenDone = true;
    else if (server.waiting.size > 0) safely(() => child.kill("SIGKILL"));
    else safely(() => child.stdin.end());
  }

  closeIfDone(server) {
    if (server.closeWhenDone && server.waiting.size === 0 && server.child) safely(() => server.child.stdin.end());
  }

  do_announce_fault(detail) {
    this.tell(format(this.T.NOTICE_FAULT, { fault: detail, lost: this.loseReset() }), "warning");
  }

  do_report_loss(detail) {
    const lost = this.loseReset();
    if (lost) this.tell(format(this.T.NOTICE_LOSS, { fault: detail, lost }), "warning");
  }

  do_give_up(detail) {
    this.tell(format(this.T.NOTICE_GIVE_UP, { fault: detail, lost: this.loseReset() }), "error");
  }

  do_diagnose() {
    this.tell(format(this.T.NOTICE_DIAGNOSIS, this.diagnosis), "error");
  }

  // A wipe_memory that answered rollover_requested and never reached a boundary is lost:
  // the model is told through its next context (a hidden message Pi appends at the turn's
  // end, or at once when idle), the human in the notice.
  loseReset() {
    if (!this.resetPending) return "";
    this.resetPending = false;
    safely(() =>
      this.pi.sendMessage(
        { customType: this.T.BRIDGE_NOTICE_TYPE, content: this.T.MODEL_LOST_RESET, display: false },
        { triggerTurn: false },
      ),
    );
    return this.T.LOST_RESET;
  }

  // -- notices -------------------------------------------------------------------------------

  tell(message, level = "error", ctx = this.ctx) {
    if (this.echoes(ctx)) process.stderr.write(`notice[${level}] ${message}\n`);
    safely(() => ctx?.ui?.notify(message, level));
  }

  // Whether notices, the status bar and the panel also go to stderr (print mode has no UI).
  echoes(ctx) {
    return NOTICES === "stderr" || (NOTICES === "auto" && safely(() => ctx?.hasUI) !== true);
  }

  // The status-bar item (ctx.ui.setStatus; an empty text clears it), echoed as
  // `status[<key>] <text>` when Pi has no UI.
  status(text, ctx = this.ctx) {
    const key = this.spec.statusKey;
    if (this.echoes(ctx)) process.stderr.write(`status[${key}] ${text}\n`);
    safely(() => ctx?.ui?.setStatus(key, text || undefined));
  }

  // The panel widget (ctx.ui.setWidget; an empty text closes it), echoed as one
  // `panel[<key>] <line>` per line, `panel[<key>] (closed)` when it closes.
  panel(text, ctx = this.ctx) {
    const key = this.spec.statusKey;
    const lines = text ? text.split("\n") : [];
    if (this.echoes(ctx)) {
      const shown = lines.length ? lines : ["(closed)"];
      process.stderr.write(shown.map((line) => `panel[${key}] ${line}\n`).join(""));
    }
    safely(() => ctx?.ui?.setWidget(key, lines.length ? lines : undefined));
  }

  // -- what the server asks for later, and the commands that wait for it ------------------

  // The ctx facts a request carries (pi-context's; an extension with hostFacts also gets Pi's
  // own context usage, the session file, and its flags).
  facts(ctx) {
    const out = facts(ctx, PI_VERSION, CHECK_USAGE);
    if (!this.spec.hostFacts) return out;
    const usage = safely(() => ctx.getContextUsage?.());
    out.usage = usage ? { tokens: usage.tokens ?? null, contextWindow: usage.contextWindow ?? null } : null;
    out.sessionFile = safely(() => ctx.sessionManager.getSessionFile()) ?? null;
    out.flags = Object.fromEntries(this.spec.flags.map((flag) => [flag.name, safely(() => this.pi.getFlag(flag.name)) === true]));
    return out;
  }

  // An answer Pi gives later (a model reply, waitForIdle, a handoff outcome), as a request
  // with the context of the command that holds, else the last handler's.
  async event(name, payload) {
    const ctx = this.commandCtx ?? this.ctx;
    const reply = await this.request("event", name, payload, ctx);
    if (reply.ok) this.apply(reply.reply, ctx, name, {});
    return reply;
  }

  // M57: a command context through Pi's own command dispatch; its handler waits for idle.
  dispatchIdle() {
    const command = this.spec.commands[0].name;
    this.pi.sendUserMessage(`/${command} ${this.idleToken}`, { expandPromptTemplates: true });
  }

  async idle(ctx) {
    await ctx.waitForIdle();
    this.commandCtx = ctx;
    const reply = await this.request("event", "idle_reached", {}, ctx);
    if (reply.ok) this.apply(reply.reply, ctx, "idle_reached", {});
    await this.keepCommand(ctx);
  }

  // A command keeps its context while the server holds it (a handoff runs: its switch needs
  // a command's context); released when the server says so, or when it can no longer answer.
  async keepCommand(ctx) {
    while (this.holding && this.machine.state === "ready") {
      await new Promise((resolve) => (this.released = resolve));
    }
    if (this.commandCtx === ctx) this.commandCtx = null;
  }

  setHolding(holding) {
    this.holding = holding;
    if (!holding) {
      const released = this.released;
      this.released = null;
      released?.();
    }
  }

  // One line to `server` outside a request (a host call's return).
  write(server, message) {
    if (server !== this.server || !server.child) return;
    try {
      server.child.stdin.write(`${JSON.stringify(message)}\n`);
    } catch (error) {
      this.fault(server, format(this.T.FAULT_PIPE, { detail: error.code ?? String(error) }));
    }
  }

  // Once per key (the text by default): a broken reply repeats on every request.
  tellOnce(message, key = message) {
    if (this.told.has(key)) return;
    this.told.add(key);
    this.tell(message, "error");
  }
}

function wipeRequested(value, spec) {
  const text = value?.content?.[0]?.text;
  return typeof text === "string" && safely(() => JSON.parse(text).status) === spec.wipeRequested;
}

// A turn after which Pi ends the run (no tool call to answer, nothing queued): its turn_end
// may have the hooks that settle the run decided with it.
function endsRun(turnEnd) {
  return turnEnd.message?.stopReason !== "toolUse" && turnEnd.pendingMessages === 0;
}

function isMarkerDraft(draft, win) {
  return draft?.type === "custom" && draft.customType === win.markerType;
}

function noInterpreter(error, texts) {
  return {
    problem: format(texts.PROBLEM_NO_INTERPRETER, { python: PYTHON, error: error.code ?? String(error) }),
    fix: texts.FIX_PYTHON,
  };
}

function nextTurnOfTheLoop() {
  return new Promise((resolve) => setImmediate(resolve));
}
