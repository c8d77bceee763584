// M50 check: a handoff target written outright (as hostcalls.mjs createSession does), opened by
// Pi's SessionManager; the extension's later entries (the takeover mark) with no message.
import { writeFileSync, readFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
const piAgent = await import(process.argv[2]);
const dir = mkdtempSync(join(tmpdir(), "m50-"));
const source = piAgent.SessionManager.create(dir, dir);
const manager = piAgent.SessionManager.create(dir, dir);
manager.newSession({ parentSession: "/parent.jsonl" });
manager.appendCustomEntry("context-memory/receipt", { r: 1 });
const path = manager.getSessionFile();
writeFileSync(path, [manager.getHeader(), ...manager.getEntries()].map((e) => JSON.stringify(e) + "\n").join(""), { flag: "wx" });
const opened = piAgent.SessionManager.open(path, dir);
opened.appendCustomEntry("context-memory/takeover", { sentAt: 1 });
const lines = readFileSync(path, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
console.log(JSON.stringify(lines.map((e) => e.type === "custom" ? `custom:${e.customType}` : e.type)));
const reopened = piAgent.SessionManager.open(path, dir);
console.log("reopened:", JSON.stringify(reopened.getEntries().map((e) => e.customType ?? e.type)));
