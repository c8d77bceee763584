// The scripted model of the differential runs: pi-ai's faux provider answering from a script
// file, as the model session's Brain answers from its script (pictx_fsm/hosts/model/brain.py).
// Loaded first, before the extension under test.
//
// - $PICTX_FAUX_SCRIPT_FILE: a JSON list of replies — {"text"}, {"tools": [{"name", "args"?}],
//   "text"?}, {"error"}, {"overflow": true}, {"length"} (text cut at the output limit). Read again
//   at every request: the runner extends it between commands, as a run pushes replies onto the
//   Brain's script between actions. An agent request takes the next unused reply, or "Done."
//   when none is left.
// - A request whose estimate (Pi's own estimateTokens, summed over the messages sent) exceeds
//   the model's context window is answered `prompt is too long: N tokens > W maximum` without
//   using a reply, as the Brain does; {"overflow": true} claims max(estimate, W + 1) tokens.
// - Pi's own summarization requests (compaction, branch summaries) never use a reply: they are
//   answered $PICTX_FAUX_SUMMARY (default "## Goal\nsummary").
// - $PICTX_FAUX_CONTEXT_WINDOW and $PICTX_FAUX_MAX_TOKENS size the model faux-1.
// - $PICTX_FAUX_REQUEST_LOG: each request as one JSON line: its messages' roles and leading
//   texts, whether it is a summarization request, and its estimate.
// - A tool argument {"$source": [role, n]} is the id of the n-th message of that role on the
//   current branch (from the end when negative; "deadbeef" when there is none), read when the
//   request is answered (pictx_fsm/extensions/context_management/kit/actions.py resolves it so
//   on the model session).
// - $PICTX_FAUX_SIDE (JSON {"marker", "argv"}): the extension's own model requests — their
//   system prompt holds marker — are answered by running argv with the request's last message
//   text on stdin (its stdout is the reply), as the model session's scripted generator answers
//   them. They are not agent requests: they use no reply and are not logged.
// One faux provider (and so one prompt cache, as the Brain keeps one) serves the whole process:
// Pi re-runs extension factories on fork, resume and reload, and each registers the same one.
// - Pi's session ids are UUIDv7: their first 8 characters, which pi-context's root window ids
//   are made of, change every 65,536 ms of wall time. Pi's clock is set back to 1 s into such a
//   period when it loads, so that a run (far shorter) never crosses into the next one — as the
//   model session's clock does not — and whether a fork keeps its parent's root window does not
//   depend on when it happens.
import { execFileSync } from "node:child_process";
import { appendFileSync, readFileSync } from "node:fs";
import { fauxProvider, fauxAssistantMessage, fauxText, fauxToolCall } from "@earendil-works/pi-ai";
import { estimateTokens } from "@earendil-works/pi-coding-agent";

const SUMMARIZER = "context summarization assistant";
const SLOTS = 100000;

function textOf(message) {
  const content = typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content ?? [];
  return content.filter((block) => block.type === "text").map((block) => block.text).join("\n");
}

function systemText(context) {
  return JSON.stringify([context.systemPrompt ?? "", ...context.messages.filter((m) => m.role === "system")]);
}

function isSummarization(context) {
  return systemText(context).includes(SUMMARIZER);
}

function sideReply(side, context, now) {
  const [command, ...args] = side.argv;
  const input = textOf(context.messages[context.messages.length - 1]);
  const text = execFileSync(command, args, { input, encoding: "utf8" });
  return fauxAssistantMessage(text, { timestamp: now });
}

function resolved(value) {
  if (Array.isArray(value)) return value.map(resolved);
  if (value === null || typeof value !== "object") return value;
  if (Array.isArray(value.$source)) {
    const [role, n] = value.$source;
    const ids = (globalThis.__pictxScriptedSession?.getBranch() ?? [])
      .filter((entry) => entry.type === "message" && entry.message.role === role)
      .map((entry) => entry.id);
    return (n < 0 ? ids[ids.length + n] : ids[n]) ?? "deadbeef";
  }
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, resolved(item)]));
}

function create() {
  const window = Number(process.env.PICTX_FAUX_CONTEXT_WINDOW) || 200000;
  const maxTokens = Number(process.env.PICTX_FAUX_MAX_TOKENS) || 16384;
  const faux = fauxProvider({
    api: "faux", provider: "faux",
    models: [{ id: "faux-1", contextWindow: window, maxTokens }],
  });
  let used = 0;
  const script = () => {
    const file = process.env.PICTX_FAUX_SCRIPT_FILE;
    return file ? JSON.parse(readFileSync(file, "utf8")) : [];
  };
  const side = process.env.PICTX_FAUX_SIDE ? JSON.parse(process.env.PICTX_FAUX_SIDE) : null;
  const answer = async (context) => {
    const now = Date.now();
    if (side && systemText(context).includes(side.marker)) return sideReply(side, context, now);
    const summary = isSummarization(context);
    const tokens = context.messages.reduce((sum, message) => sum + estimateTokens(message), 0);
    const log = process.env.PICTX_FAUX_REQUEST_LOG;
    if (log) {
      const messages = context.messages.map((m) => ({ role: m.role, text: textOf(m).slice(0, 200) }));
      appendFileSync(log, JSON.stringify({ messages, summary, tokens }) + "\n");
    }
    if (summary) return fauxAssistantMessage(process.env.PICTX_FAUX_SUMMARY ?? "## Goal\nsummary", { timestamp: now });
    const error = (message) => fauxAssistantMessage([], { stopReason: "error", errorMessage: message, timestamp: now });
    const tooLong = (claimed) => error(`prompt is too long: ${claimed} tokens > ${window} maximum`);
    if (tokens > window) return tooLong(tokens);
    const next = script()[used];
    if (next) used += 1;
    const step = next ?? { text: "Done." };
    if (step.overflow) return tooLong(Math.max(tokens, window + 1));
    if (step.error) return error(step.error);
    if (step.length !== undefined) return fauxAssistantMessage(step.length, { stopReason: "length", timestamp: now });
    if (step.tools) {
      const calls = step.tools.map((t, i) => fauxToolCall(t.name, resolved(t.args || {}), { id: `call_${used}_${i}` }));
      const blocks = step.text ? [fauxText(step.text), ...calls] : calls;
      return fauxAssistantMessage(blocks, { stopReason: "toolUse", timestamp: now });
    }
    return fauxAssistantMessage(step.text ?? "Done.", { timestamp: now });
  };
  faux.setResponses(Array.from({ length: SLOTS }, () => answer));
  return faux;
}

const PERIOD_MS = 65536;

function alignClock() {
  if (globalThis.__pictxAlignedClock) return;
  const RealDate = Date;
  const now = RealDate.now();
  const offset = Math.floor(now / PERIOD_MS) * PERIOD_MS + 1000 - now;
  class AlignedDate extends RealDate {
    constructor(...args) {
      if (args.length === 0) super(RealDate.now() + offset);
      else super(...args);
    }
    static now() {
      return RealDate.now() + offset;
    }
  }
  globalThis.Date = AlignedDate;
  globalThis.__pictxAlignedClock = true;
}

export default function scriptedModel(pi) {
  alignClock();
  const faux = (globalThis.__pictxScriptedModel ??= create());
  pi.registerProvider(faux.provider);
  pi.on("session_start", (_event, ctx) => {
    globalThis.__pictxScriptedSession = ctx.sessionManager;
  });
}
