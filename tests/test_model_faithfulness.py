"""The model session replays every real Pi 0.87.1 trace with the same hook order and the same
persisted entries (issue 4 item 2; traces in ``../shared/pi-traces``).

For each scenario the test scripts the trace's host actions on a :class:`ModelSession`
whose provider answers with the trace's assistant messages, loads a *capture* extension that
returns exactly what the recording extension returned in the trace (the ``returned`` of its
``ext`` lines, trace entry ids mapped to the model's entries by file position), and asserts

* the same sequence of extension hook events (the ``ext`` lines' ``ev``), and
* the same persisted entries in every session file: ``type``, ``customType`` and message
  ``role``, in file order (ids and timestamps differ by construction).

Hook events left out of the comparison, with the reason:

* ``message_update`` — streaming chunks; their number is random in the real Pi and the model
  streams a reply in one step.
* ``before_provider_headers``, ``after_provider_response`` — the provider's HTTP layer, which
  the model does not have (the scripted provider is called directly).
* ``resources_discover`` — resource loading (skills, prompts, themes) is not modelled; Pi
  fires it right after every ``session_start``.
* ``cache_warming_decision`` — never fired with faux models (no prompt cache); not modelled.
* ``cli_rpc`` events 4, 6 and 8 — the two RPC prompts of that run raced: both passed Pi's
  streaming check before the first run started, so ``input`` and ``before_agent_start`` fired
  twice and the second run ended at once with an early ``agent_settled`` (its prompt never
  reached the session file). The model runs one host action at a time and does not reproduce
  that race; the script sends the one prompt that was persisted.

The trace's summarization requests (overflow and manual compaction, branch summary) are not
replayed: the model writes deterministic summaries without a provider request
(``docs/model-session.md``).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from attrs import evolve, frozen
from shared_paths import TRACES

from pictx_fsm.host.effects import (
    AppendEntry,
    BoundaryResult,
    CancelResult,
    HookResult,
    Notify,
    draft_from_json,
)
from pictx_fsm.host.events import HookEvent, HostContext
from pictx_fsm.host.extension import HOST_HOOKS, Reply
from pictx_fsm.hosts.model import (
    BaseExtension,
    CompactionSettings,
    HostSettings,
    ModelSession,
    ProviderError,
    Response,
    RetrySettings,
    ScriptedProvider,
    SuppliedCompaction,
    Text,
    ToolInvocation,
    ToolOutput,
    Tools,
)
from pictx_fsm.hosts.model.scripted_provider import Call
from pictx_fsm.hosts.model.settings import FAUX_MODEL
from pictx_fsm.session.entries import ABSENT, Entry

if not TRACES.is_dir():
    pytest.skip(f"no Pi traces at {TRACES}", allow_module_level=True)

pytestmark = pytest.mark.corpus

JSON = Any
EXCLUDED = frozenset(
    {
        "message_update",
        "before_provider_headers",
        "after_provider_response",
        "resources_discover",
        "cache_warming_decision",
    }
)
RACED = {"cli_rpc": frozenset({4, 6, 8})}
"""Trace events of a concurrent RPC prompt race the model does not reproduce (see above)."""


# -- reading a trace -------------------------------------------------------------------------


def _lines(path: Path) -> list[dict[str, JSON]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@frozen(kw_only=True)
class Trace:
    name: str
    events: tuple[dict[str, JSON], ...]
    files: tuple[tuple[dict[str, JSON], ...], ...]
    """Entries (no header) of the session file, then of the fork's file if any."""

    @classmethod
    def load(cls, name: str) -> Trace:
        files = [TRACES / f"{name}.session.jsonl", TRACES / f"{name}.fork.session.jsonl"]
        entries = tuple(tuple(_lines(path)[1:]) for path in files if path.is_file())
        return cls(name=name, events=tuple(_lines(TRACES / f"{name}.events.jsonl")), files=entries)

    def ext_events(self) -> list[dict[str, JSON]]:
        raced = RACED.get(self.name, frozenset())
        return [e for e in self.events if e["src"] == "ext" and e["seq"] not in raced]

    def hook_names(self) -> list[str]:
        return [e["ev"] for e in self.ext_events() if e["ev"] not in EXCLUDED]

    def returned(self) -> dict[tuple[str, int], JSON]:
        """What the recording extension returned, by (hook, occurrence)."""
        seen: Counter[str] = Counter()
        out = {}
        for event in self.ext_events():
            if event.get("returned") is not None:
                out[(event["ev"], seen[event["ev"]])] = event["returned"]
            seen[event["ev"]] += 1
        return out

    def earlier_drafts(self) -> dict[tuple[str, int], JSON]:
        """Drafts an extension loaded *before* the recorder proposed (``i_python_bridge``):
        what the recorder saw in ``event.entries``/``event.continue``."""
        seen: Counter[str] = Counter()
        out = {}
        for event in self.ext_events():
            payload = event.get("payload") or {}
            if payload.get("entries") or payload.get("continue"):
                out[(event["ev"], seen[event["ev"]])] = payload
            seen[event["ev"]] += 1
        return out

    def messages(self) -> Iterator[dict[str, JSON]]:
        """Agent messages of every file, each once (a fork copies its path)."""
        seen: set[str] = set()
        for entries in self.files:
            for entry in entries:
                if entry["type"] == "message" and entry["id"] not in seen:
                    seen.add(entry["id"])
                    yield entry["message"]

    def user_texts(self) -> list[str]:
        return [_text(m) for m in self.messages() if m["role"] == "user"]

    def responses(self) -> list[Response]:
        """The scripted provider's script: every assistant message the provider produced. A reply
        aborted
        while streaming is scripted whole (the model cuts it); ``This operation was aborted``
        never reached the provider."""
        out: list[Response] = []
        for message in self.messages():
            if message["role"] != "assistant":
                continue
            if message.get("errorMessage") == "This operation was aborted":
                continue
            out.append(_response(message))
        return out


def _text(message: Mapping[str, JSON]) -> str:
    content = message["content"]
    if isinstance(content, str):
        return content
    return "".join(block.get("text", "") for block in content if block["type"] == "text")


def _response(message: Mapping[str, JSON]) -> Response:
    if message["stopReason"] == "error":
        return ProviderError(message=message["errorMessage"])
    calls = [b for b in message["content"] if b["type"] == "toolCall"]
    if calls:
        tools = [Call(name=b["name"], arguments=b["arguments"], id=b["id"]) for b in calls]
        return Tools(calls=tools, text=_text(message))
    text = _text(message)
    if message["stopReason"] == "aborted":
        text += " word" * 200
    return Text(text=text)


def signature(entry: Mapping[str, JSON]) -> tuple[str, str | None, str | None]:
    message = entry.get("message") or {}
    return (entry["type"], entry.get("customType"), message.get("role"))


def model_signature(entry: Entry) -> tuple[str, str | None, str | None]:
    return signature(entry.to_json())


# -- the capture extension ---------------------------------------------------------------------


class IdMap:
    """Trace entry ids → the model's entries at the same file position."""

    def __init__(self, trace: Trace) -> None:
        self._positions = {entry["id"]: i for i, entry in enumerate(trace.files[0])}
        self.session: ModelSession | None = None

    def __call__(self, trace_id: JSON) -> JSON:
        if self.session is None or trace_id not in self._positions:
            return trace_id
        first = next(iter(self.session.files.values()))
        return first.tree.entries[self._positions[trace_id]].id

    def draft(self, obj: Mapping[str, JSON]) -> Mapping[str, JSON]:
        mapped = dict(obj)
        for key in ("targetId", "firstKeptEntryId"):
            if mapped.get(key) is not None:
                mapped[key] = self(mapped[key])
        return mapped


class Capture(BaseExtension):
    """Returns, at each (hook, occurrence), what the trace's extension returned."""

    hooks = HOST_HOOKS

    def __init__(self, name: str, returns: Mapping[tuple[str, int], JSON], ids: IdMap) -> None:
        self.name = name
        self._returns = returns
        self._ids = ids
        self._seen: Counter[str] = Counter()

    def handle(self, event: HookEvent, ctx: HostContext) -> Reply:
        hook = type(event).HOOK
        occurrence = self._seen[hook]
        self._seen[hook] += 1
        value = self._returns.get((hook, occurrence))
        return None if value is None else self._reply(hook, value, event)

    def _reply(self, hook: str, value: Mapping[str, JSON], event: HookEvent) -> Reply:
        if value.get("cancel"):
            return HookResult(hook=hook, value=CancelResult())
        if "compaction" in value:
            supplied = value["compaction"]
            return SuppliedCompaction(
                summary=supplied["summary"],
                first_kept_entry_id=self._ids(supplied["firstKeptEntryId"]),
                details=supplied.get("details", ABSENT),
            )
        entries = getattr(event, "entries", ())
        if "entries" in value:
            entries = tuple(draft_from_json(self._ids.draft(d)) for d in value["entries"])
        result = BoundaryResult(entries=entries, continue_=value.get("continue"))
        return HookResult(hook=hook, value=result)

    @property
    def tools(self) -> Mapping[str, Callable[[ToolInvocation, HostContext], ToolOutput]]:
        return {"wipe_memory": _wipe_tool}

    @property
    def commands(self) -> Mapping[str, Callable[[str, HostContext], HookResult | None]]:
        return {"capture": _capture_command}


def _wipe_tool(call: ToolInvocation, ctx: HostContext) -> ToolOutput:
    return ToolOutput(text=f"wipe scheduled ({call.arguments.get('reason', '')})")


def _capture_command(args: str, ctx: HostContext) -> HookResult | None:
    """``/capture note <text>``: the recorder's note command (``h_tree_fork``)."""
    verb, _, rest = args.partition(" ")
    if verb != "note":
        return None
    effects = (AppendEntry(custom_type="pi-capture/note", data={"note": rest}),)
    return HookResult(
        hook="command", effects=(*effects, Notify(message="note appended", level="info"))
    )


# -- scripted host actions ---------------------------------------------------------------------


class Player:
    """Runs a scenario's host actions; prompts take the trace's user texts in order."""

    def __init__(self, trace: Trace, session: ModelSession, ids: IdMap) -> None:
        self.session = session
        self.ids = ids
        self._texts = iter(trace.user_texts())
        self.original = session.session_file

    def prompt(self, until: str | None = None) -> None:
        self.session.prompt(next(self._texts))
        self._run(until)

    def _run(self, until: str | None) -> None:
        if until is None:
            self.session.run_until_idle()
        else:
            self.session.run_until(lambda step: step.name == until)

    def steer(self) -> None:
        self.session.steer(next(self._texts))

    def follow_up(self) -> None:
        self.session.follow_up(next(self._texts))

    def rejected_prompt(self, text: str) -> None:
        with pytest.raises(Exception, match="Agent is already processing"):
            self.session.prompt(text)

    def navigate(self, trace_id: str, *, summarize: bool = False, label: str | None = None) -> None:
        self.session.navigate(self.ids(trace_id), summarize=summarize, label=label)

    def fork(self, trace_id: str) -> None:
        self.session.fork(self.ids(trace_id))

    def resume_original(self) -> None:
        self.session.switch_session(self.original)


def _warm_then(player: Player, count: int) -> None:
    for _ in range(count):
        player.prompt()


def _one_prompt(player: Player) -> None:
    player.prompt()


def _abort_streaming(player: Player) -> None:
    player.prompt(until="streaming")
    player.session.abort()
    player.session.run_until_idle()
    player.prompt()


def _abort_tool(player: Player) -> None:
    player.prompt(until="tools_running")
    player.session.abort()
    player.session.run_until_idle()


def _queues(player: Player) -> None:
    player.prompt(until="tools_running")
    player.rejected_prompt("no behaviour given")
    player.steer()
    player.follow_up()
    player.session.send_message("pi-capture/aside", "ASIDE (context only)")
    player.session.send_message("pi-capture/next", "NEXT-TURN aside", deliver_as="nextTurn")
    player.session.run_until_idle()
    player.prompt()


def _compactions(player: Player) -> None:
    _warm_then(player, 3)
    for _ in range(3):  # cancelled, cancelled (from a command in the trace), supplied
        player.session.compact()
    _warm_then(player, 2)
    player.session.compact()
    player.prompt()


def _tree_and_fork(player: Player) -> None:
    _warm_then(player, 3)
    player.navigate("9da3eaa9")  # A1
    player.prompt()
    player.navigate("20d63807")  # U3, cancelled by the extension
    player.navigate("20d63807", summarize=True, label="back-to-u3")
    player.navigate("484af144")  # U2, from the recorder's command in the trace
    player.session.command("capture", "note bookmark")
    player.prompt()
    player.fork("20d63807")
    player.prompt()
    player.resume_original()
    player.navigate("9da3eaa9")
    player.resume_original()


def _rpc(player: Player) -> None:
    player.prompt()
    player.session.compact()


def _settings(*, keep: int = 200, retries: int = 3, window: int = 200_000) -> HostSettings:
    model = evolve(FAUX_MODEL, context_window=window)
    return HostSettings(
        model=model,
        retry=RetrySettings(max_retries=retries, base_delay_ms=5),
        compaction=CompactionSettings(keep_recent_tokens=keep),
    )


DEFAULT_SETTINGS = _settings()


@frozen(kw_only=True)
class Scenario:
    play: Callable[[Player], None]
    settings: HostSettings = DEFAULT_SETTINGS


SCENARIOS: dict[str, Scenario] = {
    "a_plain": Scenario(play=_one_prompt),
    "b_parallel_tools": Scenario(play=_one_prompt),
    "c_wipe_turn_end": Scenario(play=_one_prompt),
    "c2_continue_text_turn": Scenario(play=_one_prompt),
    "c3_continue_without_context": Scenario(play=_one_prompt),
    "c3b_invalid_draft": Scenario(play=_one_prompt),
    "c4_wipe_compaction_draft": Scenario(play=lambda p: _warm_then(p, 3)),
    "c5_before_settle_continue": Scenario(play=_one_prompt),
    "d_abort_streaming": Scenario(play=_abort_streaming),
    "d2_abort_tool": Scenario(play=_abort_tool),
    "e_overflow": Scenario(play=lambda p: _warm_then(p, 4)),
    "e2_overflow_twice": Scenario(play=lambda p: _warm_then(p, 4)),
    "e3_retryable_error": Scenario(play=_one_prompt, settings=_settings(retries=2)),
    "f_queue": Scenario(play=_queues),
    "g_compact": Scenario(play=_compactions),
    "h_tree_fork": Scenario(play=_tree_and_fork),
    "i_python_bridge": Scenario(play=_one_prompt),
    "cli_json_wipe": Scenario(play=_one_prompt, settings=_settings(window=128_000)),
    "cli_rpc": Scenario(play=_rpc, settings=_settings(keep=20_000, window=128_000)),
}


def replay(name: str) -> tuple[Trace, ModelSession]:
    trace = Trace.load(name)
    scenario = SCENARIOS[name]
    ids = IdMap(trace)
    extensions = [
        Capture("earlier-extension", trace.earlier_drafts(), ids),
        Capture("capture-extension", trace.returned(), ids),
    ]
    provider = ScriptedProvider(trace.responses())
    session = ModelSession(extensions, provider=provider, settings=scenario.settings)
    ids.session = session
    scenario.play(Player(trace, session, ids))
    session.dispose()
    return trace, session


def test_every_trace_has_a_scenario() -> None:
    # Given the traces on disk / Then each one is replayed below
    names = {p.name.removesuffix(".events.jsonl") for p in TRACES.glob("*.events.jsonl")}
    assert names == set(SCENARIOS)


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_model_emits_the_traced_hook_order(name: str) -> None:
    # Given a real Pi trace / When its host actions run on the model session
    trace, session = replay(name)
    # Then the extension hook events come in the same order
    model = [event for event in session.log.event_names() if event not in EXCLUDED]
    assert model == trace.hook_names()


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_model_persists_the_traced_entries(name: str) -> None:
    # Given a real Pi trace / When its host actions run on the model session
    trace, session = replay(name)
    # Then every session file holds the same entry kinds in the same order
    files = list(session.files.values())
    assert len(files) == len(trace.files)
    for traced, store in zip(trace.files, files, strict=True):
        assert [model_signature(e) for e in store.tree.entries] == [signature(e) for e in traced]


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_model_uses_every_scripted_reply(name: str) -> None:
    # Given the trace's assistant replies as the scripted provider's script
    trace, session = replay(name)
    # Then the model made exactly as many provider requests as the replies it was given
    assert session.provider.pending == 0
    assert len(session.log.requests) == len(trace.responses())


def test_capture_reports_the_invalid_draft_like_pi() -> None:
    # Given c3b, whose extension returned a context_edit on an unknown entry
    _, session = replay("c3b_invalid_draft")
    # Then the model reports Pi's error for that extension, and no continuation error
    errors = [(e.event, e.extension, e.error) for e in session.log.errors]
    message = "Invalid boundary entries: Entry no-such-entry not found"
    assert errors == [("turn_end", "capture-extension", message)]


def test_refused_continuation_is_reported_like_pi() -> None:
    # Given c3, whose extension asked to continue after a text-only turn
    _, session = replay("c3_continue_without_context")
    # Then the model refuses with Pi's boundary error
    errors = [(e.event, e.extension, e.error) for e in session.log.errors]
    text = "turn_end requested continuation without runnable model context"
    assert errors == [("turn_end", "<boundary>", text)]


@pytest.mark.parametrize("name", sorted(n for n in SCENARIOS if not n.startswith("cli_")))
def test_provider_roles_match_the_traced_requests(name: str) -> None:
    # Given an SDK trace, whose provider lines record the roles of each agent request
    trace, session = replay(name)
    traced = [
        tuple(e["payload"]["roles"])
        for e in trace.events
        if e["src"] == "provider" and e["ev"] == "request"
    ]
    # Then the model sent the same roles in every agent request
    assert [r.roles for r in session.log.requests] == traced


FACTS = {
    "turn_start": ("turnIndex",),
    "turn_end": ("turnIndex", "outcome"),
    "agent_before_settle": ("outcome",),
    "session_start": ("reason",),
    "session_shutdown": ("reason",),
    "session_before_compact": ("reason", "willRetry"),
}
"""Payload fields compared per hook (the model's event detail uses Pi's names)."""


def _facts(name: str, payload: Mapping[str, JSON]) -> tuple[JSON, ...]:
    return tuple(payload.get(key) for key in FACTS.get(name, ()))


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_model_shows_the_traced_ctx_and_payload_facts(name: str) -> None:
    # Given a real Pi trace / When its host actions run on the model session
    trace, session = replay(name)
    traced = [
        (e["ev"], e["ctx"]["signal"], e["ctx"]["hasPending"], _facts(e["ev"], e["payload"] or {}))
        for e in trace.ext_events()
        if e["ev"] not in EXCLUDED
    ]
    modelled = [
        (r.name, r.signal, r.pending, _facts(r.name, r.detail))
        for r in session.log.events
        if r.name not in EXCLUDED
    ]
    # Then every hook shows the same signal state, pending flag and key payload facts
    assert modelled == traced
