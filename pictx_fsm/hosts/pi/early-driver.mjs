// The driver's early half (see driver.mjs): loaded before the extension under test, it queues
// the armed follow-up (`/drive-arm queue <text>`, or an act arming it) from its next
// agent_before_settle handler, as another extension calling
// pi.sendUserMessage(text, {deliverAs: "followUp"}) there would — so the extension under test
// sees a queued message in its own handler. A new runtime disarms it (the driver's factory).
const state = (globalThis.__pictxDriver ??= {
  counts: new Map(),
  episode: null,
  arms: { void: false, hide_boot: false, queue: null },
  settled: 0,
});
const WAIT_MS = 5000;

export default function earlyDriver(pi) {
  pi.on("agent_before_settle", async (_event, ctx) => {
    const text = state.arms.queue;
    if (text === null || text === undefined) return undefined;
    state.arms.queue = null;
    pi.sendUserMessage(text, { deliverAs: "followUp" });
    const until = Date.now() + WAIT_MS;
    while (!ctx.hasPendingMessages()) {
      if (Date.now() > until) throw new Error("the queued follow-up never became pending");
      await new Promise((resolve) => setImmediate(resolve));
    }
    return undefined;
  });
}
