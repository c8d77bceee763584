"""The lease on quiet hooks (pictx_fsm/hosts/pi/lease.py, lease.mjs): its bound covers both of
Pi's estimates, the server grants it only when every covered hook is a no-op, and checks
every leased answer against its own decision."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from random import Random
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from lifecycle_kit import Kit
from node_batch import NodeBatch
from real_pi import PiExit, run_pi
from session_builders import SessionBuilder
from test_pi_faults import FAULT_NOTICE, _fault, _reset_committed, _texts, assert_fails_closed

from pictx_fsm.audit.log import AuditLog, hook_records
from pictx_fsm.errors import IllegalEventError
from pictx_fsm.extensions.pi_context.runtime import LifecycleRuntime, pi_file_settings
from pictx_fsm.extensions.pi_context.texts import BOOT_TYPE
from pictx_fsm.extensions.pi_context.usage import window_tokens_of
from pictx_fsm.extensions.pi_context.windows import WindowIndex
from pictx_fsm.hosts.pi import lease, texts
from pictx_fsm.hosts.pi.lease_machine import LeaseFollower
from pictx_fsm.hosts.pi.server import BridgeSession, answer
from pictx_fsm.session.entries import Entry
from pictx_fsm.session.estimate import CharsCounter, TiktokenCounter, TokenCounter
from pictx_fsm.session.tree import SessionTree
from pictx_fsm.session.usage import branch_tokens_of

# -- generated entries -------------------------------------------------------------------------

TEXT = (
    st.text(max_size=40)
    | st.text(st.sampled_from("中😀ab 9\u0301"), min_size=100, max_size=600)
    | st.text(st.characters(min_codepoint=0x3400, max_codepoint=0x4DBF), min_size=50, max_size=300)
    | st.sampled_from(["", "\ud83d", "a\udc00b", "emoji 😀 and 中文", 'quote " and \\', "\u2028"])
)
"""Unicode text, long runs of what packs many tokens into few chars (CJK, rare CJK a tokenizer
spells byte by byte, emoji, digits, combining marks), lone UTF-16 surrogates (a cut emoji)
and characters JSON escapes."""
NUMBER = st.integers(-5, 10**6) | st.floats(-1e6, 1e6, allow_nan=False) | st.none()
JSON_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**9), 10**9) | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=8,
)
IMAGE = st.fixed_dictionaries(
    {"type": st.just("image"), "data": TEXT, "mimeType": st.just("image/png")}
)
TEXT_BLOCK = st.builds(lambda t: {"type": "text", "text": t}, TEXT)
THINKING = st.builds(lambda t: {"type": "thinking", "thinking": t}, TEXT)
TOOL_CALL = st.builds(
    lambda n, a: {"type": "toolCall", "id": "c", "name": n, "arguments": a}, TEXT, JSON_VALUE
)
USAGE = st.none() | st.fixed_dictionaries(
    {},
    optional={
        "input": NUMBER,
        "output": NUMBER,
        "cacheRead": NUMBER,
        "cacheWrite": NUMBER,
        "totalTokens": NUMBER,
    },
)
STAMP = st.integers(0, 10**13) | st.none()


def _message(role: str, content: Any, stamp: Any, **fields: Any) -> dict[str, Any]:
    message = {"role": role, "content": content, **fields}
    if stamp is not None:
        message["timestamp"] = stamp
    return {"type": "message", "message": message}


USER = st.builds(
    lambda c, s: _message("user", c, s),
    TEXT | st.lists(TEXT_BLOCK | IMAGE, max_size=3),
    STAMP,
)
ASSISTANT = st.builds(
    lambda c, s, u, stop: _message(
        "assistant", c, s, stopReason=stop, **({} if u is None else {"usage": u})
    ),
    st.lists(TEXT_BLOCK | THINKING | TOOL_CALL, max_size=3),
    STAMP,
    USAGE,
    st.sampled_from(["stop", "toolUse", "length", "aborted", "error"]),
)
TOOL_RESULT = st.builds(
    lambda c, s: _message("toolResult", c, s, toolCallId="c", toolName="t", isError=False),
    st.lists(TEXT_BLOCK | IMAGE, max_size=3),
    STAMP,
)
CUSTOM_MESSAGE = st.builds(
    lambda c, d: {"type": "custom_message", "customType": "other", "content": c, "display": d},
    TEXT | st.lists(TEXT_BLOCK | IMAGE, max_size=2),
    st.booleans(),
)
OTHER = st.sampled_from(
    [
        {"type": "custom", "customType": "note", "data": {"k": 1}},
        {"type": "model_change", "provider": "faux", "modelId": "faux-1"},
        {"type": "thinking_level_change", "thinkingLevel": "off"},
    ]
)
APPENDED = st.lists(USER | ASSISTANT | TOOL_RESULT | CUSTOM_MESSAGE | OTHER, max_size=8)


def _grow(builder: SessionBuilder, raw: Mapping[str, Any]) -> None:
    fields = {k: v for k, v in raw.items() if k != "type"}
    builder.add(str(raw["type"]), **fields)


def _base(builder: SessionBuilder, marked: bool) -> None:
    builder.system()
    builder.user("the first prompt")
    builder.assistant("the first answer", total=500)
    if marked:
        builder.marker("pcw:w1")
        builder.boot("pcw:w1")
        builder.continuation()


def _based(marked: bool, counter: type[TokenCounter]) -> tuple[SessionBuilder, int | None]:
    """A session of one turn (then a reset when ``marked``) and its window's estimate."""
    builder = SessionBuilder()
    _base(builder, marked)
    return builder, _estimate(builder.tree, marked, counter())


def _json(entries: list[Entry]) -> list[dict[str, Any]]:
    return json.loads(json.dumps([e.to_json() for e in entries], ensure_ascii=True))


def _estimate(tree: SessionTree, marked: bool, counter: TokenCounter) -> int | None:
    branch = tree.branch()
    if marked:
        return window_tokens_of(branch, WindowIndex.of(tree).current_window, counter)
    return branch_tokens_of(branch, counter)


def _js_bound(
    node: NodeBatch, base: int, leaf: str | None, chunks: list[list[Entry]], per_byte: bool
) -> int | None:
    request = {"op": "bound", "base": base, "leaf": leaf, "perByte": per_byte}
    request["chunks"] = [_json(chunk) for chunk in chunks]
    return node.ask(request)["bound"]  # type: ignore[no-any-return]


ESTIMATES = [
    pytest.param(False, CharsCounter, False, id="host-chars"),
    pytest.param(True, CharsCounter, False, id="window-chars"),
    pytest.param(True, TiktokenCounter, True, id="window-tiktoken"),
]


@pytest.mark.parametrize(("marked", "counter", "per_byte"), ESTIMATES)
@settings(max_examples=60, deadline=None)
@given(appended=APPENDED, split=st.integers(0, 8))
def test_R47_R48_the_lease_bound_covers_the_estimate_after_any_appended_entries(
    node: NodeBatch,
    marked: bool,
    counter: type[CharsCounter] | type[TiktokenCounter],
    per_byte: bool,
    appended: list[dict[str, Any]],
    split: int,
) -> None:
    # Given a session whose window estimate is known, the lease's base
    builder, base = _based(marked, counter)
    assume(base is not None)
    assert base is not None
    tree = builder.tree
    leaf, before = tree.leaf_id, len(tree.entries)
    # When entries are appended (unicode, images, tool calls, usages, stamps out of order)
    # and the extension observes them in two deltas
    for raw in appended:
        _grow(builder, raw)
    new = list(tree.entries[before:])
    bound = _js_bound(node, base, leaf, [new[:split], new[split:]], per_byte)
    # Then the extension's bound and its Python twin's are at least the estimate wherever
    # that is known
    twin = lease.bound_after(base, [e.to_json() for e in new], per_byte)
    assert bound is not None and twin is not None
    estimate = _estimate(tree, marked, counter())
    if estimate is not None:
        assert bound >= estimate
        assert twin >= estimate


@pytest.mark.parametrize(("marked", "counter", "per_byte"), ESTIMATES)
def test_R48_an_untrusted_usage_after_long_messages_does_not_lower_the_bound(
    node: NodeBatch,
    marked: bool,
    counter: type[CharsCounter] | type[TiktokenCounter],
    per_byte: bool,
) -> None:
    # Given a known estimate, then a long prompt, then a reply stamped before that prompt
    # (pi-ai distrusts its usage: the estimate goes on counting) reporting little usage
    builder, base = _based(marked, counter)
    assert base is not None
    tree = builder.tree
    leaf, before = tree.leaf_id, len(tree.entries)
    builder.user("long prompt " * 500)
    builder.assistant("short", total=5, stamp=0)
    # When the extension bounds the estimate
    new = list(tree.entries[before:])
    bound = _js_bound(node, base, leaf, [new], per_byte)
    # Then the bound still covers it: the small usage is no new base
    estimate = _estimate(tree, marked, counter())
    assert estimate is not None and bound is not None and bound >= estimate > base


@pytest.mark.parametrize(
    "raw",
    [
        {"type": "custom", "customType": "pi-context/reset-marker", "data": {"windowId": "pcw:x"}},
        {"type": "custom_message", "customType": "pi-context/boot", "content": "b"},
        {"type": "compaction", "summary": "s", "firstKeptEntryId": "x", "tokensBefore": 1},
        {"type": "message", "message": {"role": "system", "content": "new prompt"}},
        {"type": "message", "message": {"role": "bashExecution", "command": "ls", "output": ""}},
        {
            "type": "message",
            "message": {"role": "user", "content": [{"type": "text", "text": "1e+21"}]},
        },
    ],
    ids=["marker", "boot", "compaction", "system", "bash", "exponent"],
)
def test_an_entry_the_bound_cannot_cover_voids_the_lease(
    node: NodeBatch, raw: dict[str, Any]
) -> None:
    # Given a held lease; When an entry arrives that may change the estimate otherwise
    entry = {"id": "e1", "parentId": "base", "timestamp": "t", **raw}
    # Then both the extension and its twin void the lease
    assert _bound_of(node, entry) is None
    assert lease.bound_after(10, [entry], False) is None


def test_entries_on_another_branch_void_the_lease(node: NodeBatch) -> None:
    # Given a lease held at leaf "base"; When the next delta does not continue from it
    entry = {"type": "custom", "id": "e1", "parentId": "elsewhere", "customType": "n"}
    # Then the lease is void
    assert _bound_of(node, entry) is None


def _bound_of(node: NodeBatch, entry: dict[str, Any]) -> int | None:
    """The bound after one raw entry, from a lease held at leaf "base" with base 10."""
    request = {"op": "bound", "base": 10, "leaf": "base", "perByte": False, "chunks": [[entry]]}
    return node.ask(request)["bound"]  # type: ignore[no-any-return]


# -- the server: grant and check ----------------------------------------------------------------

HEADER = {
    "type": "session",
    "version": 3,
    "id": "01a22b3e-0000-7000-8000-000000000001",
    "timestamp": "2026-11-30T00:00:00.000Z",
    "cwd": "/tmp",
}
SYSTEM = {"role": "system", "content": "", "sections": {"p": "You are Pi."}}


def _ctx(window: int = 200000) -> dict[str, Any]:
    model = {"provider": "faux", "id": "faux-1", "contextWindow": window, "maxTokens": 16384}
    return {"cwd": "/tmp", "model": model}


class Server:
    """A bridge server in this process, asked as the extension asks it."""

    def __init__(self, tmp_path: Path, window: int = 200000) -> None:
        def runtime(tree: SessionTree, ctx: Mapping[str, Any], audit: AuditLog | None) -> Any:
            settings = pi_file_settings(tmp_path / "agent")
            return LifecycleRuntime(tree, settings=settings, audit=audit, rng=Random(0))

        self.audit = AuditLog()
        self.session = BridgeSession(runtime, lambda _: self.audit)
        self.ctx = _ctx(window)
        self.next_id = 0
        self.leaf: str | None = None

    def ask(self, name: str, event: Any, entries: list[dict[str, Any]] = (), **fields: Any) -> Any:  # type: ignore[assignment]
        self.next_id += 1
        leaf = entries[-1]["id"] if entries else self.leaf
        self.leaf = leaf
        session: dict[str, Any] = {"entries": list(entries), "leaf": leaf}
        if self.session.tree is None:
            session["header"] = HEADER
        request = {"id": self.next_id, "kind": "hook", "name": name, "event": event}
        request |= {"ctx": self.ctx, "session": session, **fields}
        reply = answer(self.session, json.dumps(request))
        assert "error" not in reply, reply
        return reply


def _entry(entry_id: str, parent: str | None, message: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "message",
        "id": entry_id,
        "parentId": parent,
        "timestamp": "t",
        "message": message,
    }


def _started(server: Server, text: str = "hello") -> None:
    root = _entry("s0", None, SYSTEM)
    server.ask("session_start", {"reason": "startup"}, [root])
    user = _entry("u1", server.leaf, {"role": "user", "content": text, "timestamp": 1})
    server.ask("turn_start", {"turnIndex": 0}, [user], pipelined=True)


def test_R50_R51_a_quiet_lifecycle_is_leased_up_to_the_highest_line_a_covered_hook_tests(
    tmp_path: Path,
) -> None:
    # Given a started session with nothing staged or requested (default settings: reserve
    # 16384, warning 28672, reminder 40960)
    server = Server(tmp_path)
    _started(server)
    # When the extension asks for a lease with an awaited context
    reply = server.ask("context", {"messages": {"count": 1, "kept": []}}, lease=True)
    # Then the lease is bounded below the reminder line, from the lifecycle's own estimate
    granted = reply["lease"]
    assert granted["limit"] == 200000 - 40960 - 1
    assert granted["base"] == server.session.host_usage.branch_tokens()  # type: ignore[union-attr]
    assert granted["markerId"] is None and granted["perByte"] is False
    # And nothing is decided ahead: the lease answers the next hooks
    assert "withSystem" not in reply and "ahead" not in reply


def test_R20_R51_no_lease_while_a_reminder_is_staged_or_a_reset_requested(tmp_path: Path) -> None:
    # Given a small window whose estimate is past the reminder line: context stages guidance
    server = Server(tmp_path, window=50000)
    _started(server, "x" * 40000)
    reply = server.ask("context", {"messages": {"count": 1, "kept": []}}, lease=True)
    # Then no lease is granted (a staged reminder commits at turn_end)
    assert server.session.runtime is not None and server.session.runtime.state.staged
    assert "lease" not in reply


def test_R64_no_lease_while_a_boot_repair_is_owed_to_the_turns_end() -> None:
    # Given a root window whose boot is hidden, and a repair asked for mid-run (a restarted
    # runtime's resync): owed to the turn's end
    kit = Kit.create()
    kit.start()
    kit.build.user("hello")
    kit.build.edit(kit.of_type(BOOT_TYPE)[-1].id)
    kit.start(reason="reload", idle=False)
    # Then the lifecycle is not quiet: its turn_end acts (the repair), so no lease covers it
    assert not lease.quiet(kit.runtime.state)
    # And once the turn's end made the repair, it is quiet again
    kit.turn_end(idle=False)
    assert lease.quiet(kit.runtime.state)


def test_a_leased_hook_the_lifecycle_decides_otherwise_breaks_the_lease_told_and_audited(
    tmp_path: Path,
) -> None:
    # Given a lease granted on a small window
    server = Server(tmp_path, window=50000)
    _started(server)
    assert "lease" in server.ask("context", {"messages": {"count": 1, "kept": []}}, lease=True)
    # When the extension answers a context under it although the estimate crossed the
    # reminder line (a bound that failed), and sends it pipelined
    user = _entry("u2", server.leaf, {"role": "user", "content": "y" * 40000, "timestamp": 2})
    event = {"messages": {"count": 2, "kept": []}}
    reply = server.ask("context", event, [user], pipelined=True, leased=True)
    # Then the server decided it as ever (guidance staged), says the lease is broken, tells
    # the user once and audits it
    assert "broken" in reply and reply["value"] is None
    [notice] = [e["message"] for e in reply["effects"]]
    assert notice == texts.NOTICE_LEASE_BROKEN.format(detail=reply["broken"])
    assert server.audit.records[-1]["hook"] == lease.BROKEN_HOOK
    # And grants no lease again on this connection
    server.ask("turn_end", _turn_end(), [])
    assert "lease" not in server.ask("agent_settled", {}, [], lease=True)


def _turn_end() -> dict[str, Any]:
    message = {"role": "assistant", "content": [], "stopReason": "stop", "timestamp": 3}
    return {"message": message, "outcome": "completed", "entries": [], "pendingMessages": 0}


def test_R67_a_leased_projection_is_checked_against_the_lifecycle_s_and_the_extension_s(
    tmp_path: Path,
) -> None:
    # Given a lease
    server = Server(tmp_path)
    _started(server)
    assert "lease" in server.ask("context", {"messages": {"count": 1, "kept": []}}, lease=True)
    # When the extension answers context_with_system with the fail-closed projection (the
    # root window: the list as it is, 2 messages)
    event = {"messages": {"count": 2, "kept": [[0, SYSTEM]]}}
    agreed = server.ask("context_with_system", event, pipelined=True, leased={"length": 2})
    # Then the server agrees; a claim of another length breaks the lease
    assert "broken" not in agreed and agreed["value"] is None
    event = {"messages": {"count": 2, "kept": [[0, {"pictx-fsm/same": 0}]]}}
    broken = server.ask("context_with_system", event, pipelined=True, leased={"length": 3})
    assert broken["broken"] == "the extension's projection differs from the lifecycle's"


# -- the real Pi: the same audit log with and without leases ----------------------------------

PROMPTS = ("ALPHA prompt one", "ALPHA prompt two, wipe please", "BRAVO prompt three", "CHARLIE")
SCRIPT = [
    {"text": "ALPHA answer one"},
    {"tools": [{"name": "wipe_memory"}], "text": "ALPHA wiping now"},
    {"text": "BRAVO fresh window"},
    {"text": "BRAVO answer three"},
    {"text": "CHARLIE answer four"},
]
VARYING = re.compile(
    r"[0-9a-f]{8,}|\d{13}|\d{4}-\d\d-\d\dT[\d:.]+Z|(?<=\"tokens\": )\d+|(?<=\"remaining\": )\d+"
    r"|(?<=\"durationMs\": )\d+"
)
"""What differs between two runs of the same script: ids, hashes, times (Pi 1.6 times each
reply: ``durationMs``), and the token
counts of a reset window (a tokenizer counts its random window id in the boot's text)."""


def _normal_records(run: PiExit, tmp: Path) -> list[str]:
    [log] = list((tmp / "audit").glob("*.audit.jsonl"))
    out = []
    for record in hook_records(log):
        body = {k: v for k, v in record.items() if k not in ("hash", "prev")}
        out.append(VARYING.sub("X", json.dumps(body, sort_keys=True).replace(str(tmp), "T")))
    return out


def _waited(tmp: Path) -> int:
    lines = (tmp / "timing").read_text().splitlines()
    return sum(int(line.split("\t")[3]) for line in lines)


def test_leases_change_no_audit_record_and_spare_the_round_trips(tmp_path: Path) -> None:
    # Given the same script (a reset, then turns in the new window), run with leases off
    # (PICTX_FSM_LEASE=0) and on
    runs = {}
    for mode in ("0", "1"):
        tmp = tmp_path / f"lease{mode}"
        tmp.mkdir()
        env = {"PICTX_FSM_LEASE": mode, "PICTX_FSM_TIMING": str(tmp / "timing")}
        run = run_pi(tmp, SCRIPT, *PROMPTS, env=env)
        assert run.returncode == 0, run.stderr
        runs[mode] = (run, tmp)
    # Then the audit logs hold the same records, in the same order (ids and times aside),
    # and the provider requests the same messages
    without, with_leases = (_normal_records(*runs[m]) for m in ("0", "1"))
    assert with_leases == without
    requests = [[len(r["messages"]) for r in runs[m][0].requests] for m in ("0", "1")]
    assert requests[0] == requests[1]
    notices = [[VARYING.sub("X", n) for n in runs[m][0].notices()] for m in ("0", "1")]
    assert notices[0] == notices[1] == ["notice[info] pi-context: memory cleared · pcw:X:X"]
    # And Pi waited on fewer requests with the leases
    assert _waited(runs["1"][1]) < _waited(runs["0"][1])


@pytest.mark.parametrize(
    ("hook", "nth"), [("context", 4), ("context_with_system", 4), ("turn_end", 4)]
)
def test_a_server_killed_while_the_extension_holds_a_lease_fails_closed(
    hook: str, nth: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a server that dies (kill -9) on receiving a hook of the turn after the reset's
    # continuation — a quiet turn in the new window, answered by the extension under a lease
    env = _fault(tmp_path, {"fault": "kill", "hook": hook, "nth": nth})
    env["PICTX_FSM_TIMING"] = str(tmp_path / "timing")
    # When Pi runs the prompts
    run = run_pi(tmp_path, SCRIPT, *PROMPTS, env=env)
    # Then that hook was leased (answered without waiting)
    timed = [line.split("\t") for line in (tmp_path / "timing").read_text().splitlines()]
    assert [waited for name, _, _, waited in timed if name == hook][nth - 1] == "0"
    # And Pi exits normally, told once, nothing before the marker reaches a provider, the
    # audit of the session finds nothing, and the restarted server carries on
    assert_fails_closed(run, capsys, [FAULT_NOTICE])
    assert _reset_committed(run)
    assert all("ALPHA" not in text for r in run.requests[2:] for text in _texts(r["messages"]))
    assert "CHARLIE" in _texts(run.requests[-1]["messages"])


# -- the bridge_lease machine ---------------------------------------------------------------

LEASE_EVENTS = st.lists(st.sampled_from(["grant", "answer", "void", "break", "connect"]))


@settings(max_examples=50, deadline=None)
@given(events=LEASE_EVENTS)
def test_the_extension_follows_bridge_lease_as_declared(node: NodeBatch, events: list[str]) -> None:
    # Given any events; When the extension's follower (the manifest's table) and the compiled
    # engine step bridge_lease
    steps = node.ask({"op": "lease_machine", "events": events})["steps"]
    follower = LeaseFollower()
    expected: list[Any] = []
    for event in events:
        try:
            actions = follower.fire(event)
        except IllegalEventError:
            expected.append(None)
        else:
            expected.append([follower.state, list(actions)])
    # Then they take the same transitions and refuse the same undeclared events
    assert steps == expected
