// pi-context-management for Pi, decided by pictx_fsm in Python: the bridge (pictx-bridge.mjs)
// for its section of the manifest. Load with
// `pi -e "$(pictx-fsm pi --extension-path context-management)"`; with pi-context too, load
// both entries (`-e` each, pi-context first), each with its own server.
import { bridgeExtension } from "./pictx-bridge.mjs";

export default bridgeExtension("context-management");
