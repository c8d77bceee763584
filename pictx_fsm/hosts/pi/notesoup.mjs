// notesoup 0.38 for Pi 1.x, decided by pictx_fsm in Python: the bridge (pictx-bridge.mjs) for
// its section of the manifest. Load with `pi -e "$(pictx-fsm pi --extension-path notesoup)"`
// instead of pi-context (both manage the same context window).
import { bridgeExtension } from "./pictx-bridge.mjs";

export default bridgeExtension("notesoup");
