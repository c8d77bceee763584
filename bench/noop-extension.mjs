// The bridge's footprint in Pi without the bridge: the same hooks, tools and commands (from
// its manifest), each doing nothing. bench_bridge.py runs Pi with it to tell what Pi itself
// spends on an extension subscribed to those hooks (building and cloning their events, the
// tools in the system prompt) from what the bridge adds on top.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
const MANIFEST_PATH = join(HERE, "..", "pictx_fsm", "hosts", "pi", "pictx-bridge.manifest.json");
const MANIFEST = JSON.parse(readFileSync(MANIFEST_PATH, "utf8"));

export default function noopExtension(pi) {
  for (const hook of MANIFEST.hooks) pi.on(hook, () => undefined);
  for (const spec of MANIFEST.tools) {
    pi.registerTool({
      name: spec.name, label: spec.label, description: spec.description,
      parameters: spec.parameters,
      async execute() {
        return { content: [] };
      },
    });
  }
  for (const spec of MANIFEST.commands) {
    pi.registerCommand(spec.name, { description: spec.description, handler: async () => {} });
  }
}
