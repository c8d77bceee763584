"""notesoup's session-file audit (``pictx-fsm audit --extension notesoup``): a notesoup file,
or a mixed one — a pi-context 0.25 session resumed under notesoup.

Two parts:

* **Reset shape** (S38–S42, S40, S47), for every marker in the file, 0.25's included: the
  marker is followed on its path by its window's boot and then a continuation; a notesoup
  marker stands right after its checkpoint (an empty compaction that keeps nothing), without
  which Pi's own projection does not cut the window (this port then cuts it at its boot).
* **What a resumed session sends** (S77–S80, S133): the provider request the next turn would
  make, computed by running notesoup's own projection over Pi's, once as notesoup 0.38 is
  released (0.25's markers are foreign to it) and once as this port runs (they still open
  windows). Every message of the request that lies behind the current window's marker on
  the branch is erased history, leaked. For a 0.25 file this is what notesoup alone would
  leak if resumed without migration; the port must leak nothing.

The same comparison runs at the first request of every window of the branch (where an uncut
window would first show). A mixed file written by a notesoup that did not migrate carries its
mark: a notesoup *root* boot inside a 0.25 window — that notesoup took the window for the root
and its requests carried the erased history (reported as an error).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any, Final, Literal

from attrs import frozen

from pictx_fsm import js
from pictx_fsm.extensions.notesoup.runtime import NotesoupRuntime
from pictx_fsm.extensions.notesoup.texts import LEGACY_MARKER_TYPE
from pictx_fsm.extensions.notesoup.windows import (
    SCHEME,
    NotesoupWindows,
    ReferenceWindows,
    is_checkpoint,
)
from pictx_fsm.extensions.shared.window_index import SchemeWindowIndex
from pictx_fsm.extensions.shared.windows import ROOT_WINDOW_SUFFIX
from pictx_fsm.host.effects import CancelResult, HookResult, MessagesResult
from pictx_fsm.host.events import ContextWithSystem, HostContext, SessionStart
from pictx_fsm.session.entries import CustomEntry, MessageEntry
from pictx_fsm.session.projection import project_branch
from pictx_fsm.session.tree import SessionTree, TreeNode

__all__ = [
    "Finding",
    "Leak",
    "NotesoupAudit",
    "audit_tree",
    "next_request",
    "render",
    "request_leak",
    "to_json",
]

Severity = Literal["error", "warning", "info"]
ERASABLE_ROLES: Final = frozenset({"user", "assistant", "toolResult", "bashExecution"})
"""What a reset erases: the conversation itself (system heads and the extension's own
messages are not history)."""


@frozen(kw_only=True)
class Finding:
    kind: str
    severity: Severity
    rule: str
    entry_id: str | None
    message: str


@frozen(kw_only=True)
class Leak:
    """Erased history a provider request would carry."""

    at: str | None
    """The entry the request is made after (the branch's leaf then)."""
    window_id: str
    messages: int
    chars: int


@frozen(kw_only=True)
class NotesoupAudit:
    findings: tuple[Finding, ...]
    markers: int
    legacy_markers: int
    reference_leaks: tuple[Leak, ...]
    """What notesoup 0.38 as released sends from behind a marker (0.25's are foreign to it)."""
    port_leaks: tuple[Leak, ...]
    """What this port sends from behind a marker: must be nothing."""

    @property
    def exit_code(self) -> int:
        defects = any(f.severity != "info" for f in self.findings)
        return 1 if defects or self.port_leaks else 0


def audit_tree(tree: SessionTree) -> NotesoupAudit:
    findings = list(_shape_findings(tree))
    markers = [n for n in _nodes(tree) if SCHEME.is_valid_marker(n.entry)]
    legacy = [n for n in markers if _custom_type(n) == LEGACY_MARKER_TYPE]
    points = _request_points(tree)
    reference = tuple(leak for at in points if (leak := request_leak(tree, at, ReferenceWindows)))
    port = tuple(leak for at in points if (leak := request_leak(tree, at, NotesoupWindows)))
    for leak in port:
        findings.append(
            Finding(
                kind="erased_history_sent",
                severity="error",
                rule="S77–S80",
                entry_id=leak.at,
                message=(
                    f"the request after {leak.at} carries {leak.messages} erased message(s) "
                    f"({leak.chars} chars) from behind {leak.window_id}'s marker"
                ),
            )
        )
    return NotesoupAudit(
        findings=tuple(findings),
        markers=len(markers),
        legacy_markers=len(legacy),
        reference_leaks=reference,
        port_leaks=port,
    )


# -- the reset shape ------------------------------------------------------------------------------


def _nodes(tree: SessionTree) -> Iterable[TreeNode]:
    for entry in tree.entries:
        node = tree.find(entry.id) if entry.id else None
        if node is not None:
            yield node


def _custom_type(node: TreeNode) -> str | None:
    entry = node.entry
    return entry.custom_type if isinstance(entry, CustomEntry) else None


def _shape_findings(tree: SessionTree) -> Iterable[Finding]:
    index = NotesoupWindows.of(tree)
    for node in _nodes(tree):
        boot_for = SCHEME.boot_window_id(node.entry)
        if boot_for is not None and boot_for.endswith(ROOT_WINDOW_SUFFIX):
            window = index.window_of(node)
            if not window.is_root:
                yield Finding(
                    kind="window_resumed_as_root",
                    severity="error",
                    rule="S133, migration",
                    entry_id=node.id,
                    message=(
                        f"a root boot inside {window.window_id}: the session was resumed by an "
                        "extension that did not see this window's marker, and its requests "
                        "carried the history erased behind it"
                    ),
                )
        window_id = SCHEME.window_id_of_marker(node.entry)
        if window_id is None:
            continue
        legacy = _custom_type(node) == LEGACY_MARKER_TYPE
        if not legacy and (node.parent is None or not is_checkpoint(node.parent)):
            yield Finding(
                kind="marker_without_checkpoint",
                severity="warning",
                rule="S38, S40",
                entry_id=node.id,
                message=(
                    f"marker of {window_id} does not follow an empty retain-none compaction: "
                    "Pi's own projection does not cut the window (it is cut at its boot)"
                ),
            )
        yield from _tail_findings(tree, node, window_id, legacy)


def _children(tree: SessionTree, node: TreeNode) -> list[TreeNode]:
    return [tree.node(child) for child in tree.children(node.id)]


def _tail_findings(
    tree: SessionTree, marker: TreeNode, window_id: str, legacy: bool
) -> Iterable[Finding]:
    children = _children(tree, marker)
    boot = next((c for c in children if SCHEME.is_boot_for(c.entry, window_id)), None)
    if boot is None:
        yield Finding(
            kind="boot_missing",
            severity="error" if children else "warning",
            rule="S38, S74",
            entry_id=marker.id,
            message=(
                f"marker of {window_id} is not followed by its boot"
                + ("" if children else " (the tail ends here: startup repair appends it)")
            ),
        )
        return
    if not any(SCHEME.is_continuation(c.entry) for c in _children(tree, boot)):
        yield Finding(
            kind="continuation_missing",
            severity="warning",
            rule="S38, S74" + (", D4" if legacy else ""),
            entry_id=boot.id,
            message=f"boot of {window_id} is not followed by a continuation",
        )


# -- what a request sends -------------------------------------------------------------------------


def _request_points(tree: SessionTree) -> list[str | None]:
    """The leaf (the next request), and the parent of each window's first assistant message
    on the active branch (the first request made in that window)."""
    points: list[str | None] = [tree.leaf_id]
    index = NotesoupWindows.of(tree)
    seen: set[str] = set()
    for node in _branch_nodes(tree):
        entry = node.entry
        if not isinstance(entry, MessageEntry) or entry.message.role != "assistant":
            continue
        window = index.window_of(node)
        if window.is_root or window.window_id in seen:
            continue
        seen.add(window.window_id)
        if node.parent is not None and node.parent.id not in points:
            points.append(node.parent.id)
    return points


def _branch_nodes(tree: SessionTree) -> list[TreeNode]:
    leaf = tree.leaf
    return [] if leaf is None else leaf.path()


def request_leak(
    tree: SessionTree, at: str | None, windows: type[SchemeWindowIndex]
) -> Leak | None:
    """The erased history in the request notesoup (seeing ``windows``) would send after
    ``at``, judged by this port's windows; ``None`` when it sends none."""
    copy = SessionTree.from_entries(tree.header, tree.entries)
    copy.navigate(at)
    truth = NotesoupWindows.of(copy).current_window
    if truth.is_root or truth.marker_id is None:
        return None
    marker = copy.node(truth.marker_id)
    behind = Counter(_key(m) for m in _erasable(project_branch(_path_to(marker)).messages))
    # The window's own messages may say what an erased one said (a faux model's reply, a
    # prompt repeated): a text is erased history only beyond the copies the window holds.
    branch = Counter(_key(m) for m in _erasable(project_branch(copy.branch()).messages))
    own = branch - behind
    leaked: list[Any] = []
    for message in _erasable(_request(copy, windows)):
        key = _key(message)
        if own[key]:
            own[key] -= 1
        elif behind[key]:
            behind[key] -= 1
            leaked.append(message)
    if not leaked:
        return None
    chars = sum(len(js.stringify(m.get("content"))) for m in leaked)
    return Leak(at=at, window_id=truth.window_id, messages=len(leaked), chars=chars)


def _path_to(node: TreeNode) -> list[Any]:
    return [n.entry for n in node.path()]


def _erasable(messages: Sequence[Any]) -> list[Any]:
    return [m for m in messages if m.get("role") in ERASABLE_ROLES]


def _key(message: Any) -> str:
    return js.stringify([message.get("role"), message.get("content")])


def _request(tree: SessionTree, windows: type[SchemeWindowIndex]) -> Sequence[Any]:
    """What reaches the provider at the next request: Pi's projection of the branch, then
    notesoup's ``context_with_system`` (the runtime itself, after its session start)."""
    runtime = NotesoupRuntime(tree, windows=windows)
    ctx = HostContext(pi_version="1.6.0")
    runtime.handle(SessionStart(reason="resume"), ctx)
    messages = tuple(project_branch(tree.branch()).messages)
    result = runtime.handle(ContextWithSystem(messages=messages), ctx)
    return _messages(result, messages)


def _messages(result: HookResult, given: Sequence[Any]) -> Sequence[Any]:
    value = result.value
    if isinstance(value, MessagesResult):
        return value.messages
    if isinstance(value, CancelResult):
        return ()
    return given


# -- report ---------------------------------------------------------------------------------------


def next_request(leaks: Sequence[Leak], leaf: str | None) -> Leak | None:
    return next((leak for leak in leaks if leak.at == leaf), None)


def render(audit: NotesoupAudit, source: str, leaf: str | None) -> str:
    legacy = f" ({audit.legacy_markers} of pi-context 0.25)" if audit.legacy_markers else ""
    lines = [f"{source}: notesoup · {audit.markers} marker(s){legacy}"]
    for f in audit.findings:
        where = f" at {f.entry_id}" if f.entry_id else ""
        lines.append(f"  {f.severity:<7} {f.kind} [{f.rule}]{where}: {f.message}")
    reference = next_request(audit.reference_leaks, leaf)
    if reference is not None:
        lines.append(
            f"  resumed under notesoup 0.38 as released: the next request would carry "
            f"{reference.messages} erased message(s) ({reference.chars} chars) from behind "
            f"{reference.window_id}'s marker"
        )
    elif audit.legacy_markers:
        lines.append("  resumed under notesoup 0.38 as released: the next request leaks nothing")
    port = next_request(audit.port_leaks, leaf)
    if audit.legacy_markers or port is not None:
        verdict = "nothing" if port is None else f"{port.messages} erased message(s)"
        lines.append(f"  resumed under pictx-fsm's notesoup: the next request carries {verdict}")
    return "\n".join(lines)


def to_json(audit: NotesoupAudit, source: str, leaf: str | None) -> dict[str, Any]:
    def leak(value: Leak | None) -> dict[str, Any] | None:
        if value is None:
            return None
        return {
            "at": value.at,
            "windowId": value.window_id,
            "messages": value.messages,
            "chars": value.chars,
        }

    return {
        "file": source,
        "extension": "notesoup",
        "markers": audit.markers,
        "legacyMarkers": audit.legacy_markers,
        "findings": [
            {
                "kind": f.kind,
                "severity": f.severity,
                "rule": f.rule,
                "entryId": f.entry_id,
                "message": f.message,
            }
            for f in audit.findings
        ],
        "nextRequest": {
            "reference": leak(next_request(audit.reference_leaks, leaf)),
            "port": leak(next_request(audit.port_leaks, leaf)),
        },
        "exitCode": audit.exit_code,
    }
