// The fail-closed projection (lifecycle R67–R69), used by pictx-bridge.mjs only when the
// Python side cannot answer a provider request. Pure functions, no Pi imports: the tests run
// them under plain Node on every corpus session, every real Pi trace and generated branches,
// and compare with pictx_fsm.extensions.pi_context.reset_projection.project_reset (and the Python twin in
// pictx_fsm/hosts/pi/failclosed.py). Identity constants come from the manifest (`win`).

// R8: the window id a valid marker opens, else null.
export function markerWindowId(entry, win) {
  if (!entry || entry.type !== "custom" || !markerTypes(win).includes(entry.customType)) return null;
  const data = entry.data;
  if (!isObject(data)) return null;
  const id = data.windowId;
  return typeof id === "string" && id.length > 0 ? id : null;
}

// R9–R11: scan from the leaf back to the nearest valid marker; else the root window (R10).
// `session` is Pi's ReadonlySessionManager (getLeafEntry, getEntry, getSessionId).
export function scanWindow(session, win) {
  let entry = session.getLeafEntry();
  while (entry) {
    const windowId = markerWindowId(entry, win);
    if (windowId !== null) return { windowId, markerId: entry.id };
    entry = entry.parentId ? session.getEntry(entry.parentId) : undefined;
  }
  const prefix = String(session.getSessionId()).slice(0, win.sessionPrefixLength);
  return { windowId: win.windowIdPrefix + prefix + win.rootWindowSuffix, markerId: null };
}

// Whether the path from `entryId` back to the root holds a valid marker (R62, R75: native
// compaction and branch summaries would send that path's erased history to the provider).
export function markerOnPath(session, entryId, win) {
  let entry = entryId ? session.getEntry(entryId) : undefined;
  while (entry) {
    if (markerWindowId(entry, win) !== null) return true;
    entry = entry.parentId ? session.getEntry(entry.parentId) : undefined;
  }
  return false;
}

// R14 (projection form): role custom, the boot type, and the window id when given.
export function isBoot(message, win, windowId = null) {
  if (!isObject(message) || message.role !== "custom" || !bootTypes(win).includes(message.customType)) {
    return false;
  }
  if (windowId === null) return true;
  return isObject(message.details) && message.details.windowId === windowId;
}

// pi-ai's getCurrentSystemMessage, exactly as pictx_fsm.session.projection.fold_system,
// of messages[0:end].
export function foldSystem(messages, end = messages.length) {
  const state = { contents: [], sections: new Map(), tools: new Map() };
  let timestamp = null;
  for (let index = 0; index < end; index++) {
    const message = messages[index];
    if (!isObject(message) || message.role !== "system") continue;
    if (message.replace === true) {
      state.contents.length = 0;
      state.sections.clear();
      state.tools.clear();
    }
    if (timestamp === null) timestamp = message.timestamp ?? null;
    applySystem(message, state);
  }
  if (timestamp === null && state.tools.size === 0 && state.contents.length === 0) return null;
  const folded = { role: "system", content: state.contents.join("\n\n") };
  if (state.sections.size > 0) folded.sections = Object.fromEntries(state.sections);
  if (state.tools.size > 0) folded.toolsAdded = [...state.tools.values()];
  folded.timestamp = timestamp === null ? 0 : timestamp;
  return folded;
}

function applySystem(message, { contents, sections, tools }) {
  const text = contentText(message.content);
  if (text) contents.push(text);
  if (isObject(message.sections)) {
    for (const [name, value] of Object.entries(message.sections)) {
      if (value === null) sections.delete(name);
      else sections.set(name, value);
    }
  }
  for (const tool of asList(message.toolsRemoved)) {
    if (isObject(tool)) tools.delete(pyStr(tool.name));
  }
  for (const tool of asList(message.toolsAdded)) {
    if (isObject(tool)) tools.set(pyStr(tool.name), tool);
  }
}

function contentText(content) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((block) => isObject(block) && block.type === "text")
    .map((block) => ("text" in block ? pyStr(block.text) : ""))
    .join("\n");
}

// R67/R68: [folded head of messages[:cut]] ++ messages[cut:]; no boot → the head alone.
export function projectMarkerWindow(messages, windowId, win) {
  const cut = messages.findIndex((message) => isBoot(message, win, windowId));
  if (cut < 0) {
    const head = foldSystem(messages);
    return { messages: head === null ? [] : [head], cutIndex: null, missingBoot: true };
  }
  const head = foldSystem(messages, cut);
  const rest = messages.slice(cut);
  return { messages: head === null ? rest : [head, ...rest], cutIndex: cut, missingBoot: false };
}

// R69: the last boot for the root id replaces every boot, at the first boot's index. One
// pass, and no copy when the list is its own projection (no root boot, or that boot alone).
export function projectRootWindow(messages, rootId, win) {
  let boots = 0;
  let root = -1;
  for (let index = 0; index < messages.length; index++) {
    if (!isBoot(messages[index], win)) continue;
    boots += 1;
    if (isBoot(messages[index], win, rootId)) root = index;
  }
  if (root < 0 || boots === 1) return { messages, cutIndex: null, missingBoot: false };
  const matching = messages.filter((message) => isBoot(message, win, rootId));
  const first = messages.findIndex((message) => isBoot(message, win));
  const without = messages.filter((message) => !isBoot(message, win));
  const projected = [...without.slice(0, first), matching[matching.length - 1], ...without.slice(first)];
  return { messages: projected, cutIndex: null, missingBoot: false };
}

// R67–R69 for the scanned window; `missingBoot` means: abort the request (R68).
export function failClosed(messages, window, win) {
  return window.markerId === null
    ? projectRootWindow(messages, window.windowId, win)
    : projectMarkerWindow(messages, window.windowId, win);
}

// An extension that reads another's windows too (notesoup: pi-context 0.25's) lists every
// type (`markerTypes`, `bootTypes`); one type otherwise.
function markerTypes(win) {
  return win.markerTypes ?? [win.markerType];
}

function bootTypes(win) {
  return win.bootTypes ?? [win.bootType];
}

function isObject(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function asList(value) {
  return Array.isArray(value) ? value : [];
}

// Python's str() for the JSON scalars a malformed system message may hold.
function pyStr(value) {
  if (value === null || value === undefined) return "None";
  if (value === true) return "True";
  if (value === false) return "False";
  return String(value);
}
