// pi-context-management's part of the differential driver: time passing on the real Pi.
// `/drive-clock MS` moves the extension server's clock (the wall clock plus the milliseconds
// in $PICTX_FSM_CLOCK_OFFSET_FILE, pictx_fsm/hosts/pi/served_cm.py) MS ahead, as a Wait moves
// the model session's clock (pictx_fsm/extensions/context_management/kit/differential.py).
import { readFileSync, writeFileSync } from "node:fs";

export default function clockDriver(pi) {
  pi.registerCommand("drive-clock", {
    description: "move the extension's clock ahead by <ms>",
    handler: async (args) => {
      const file = process.env.PICTX_FSM_CLOCK_OFFSET_FILE;
      let before = 0;
      try {
        before = Number(readFileSync(file, "utf8").trim() || 0);
      } catch {
        before = 0;
      }
      writeFileSync(file, String(before + Number(args.trim())));
    },
  });
}
