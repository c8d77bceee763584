"""Hypothesis drives a real pydantic-ai ``Agent`` through the lifecycle and checks, after
every step, the host-neutral invariants (:mod:`pictx_fsm.extensions.pi_context.kit.host_neutral`);
the run also
measures transition coverage of the machines, and planted adapter faults are caught."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import random
import tempfile
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import attrs
import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test
from pydantic_ai import Agent, RunContext
from pydantic_ai.exceptions import ModelAPIError
from pydantic_ai.messages import (
    INTERRUPTED_TOOL_RETURN_CONTENT,
    SYNTHESIZED_TOOL_RETURN_METADATA_KEY,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolReturnPart,
)
from pydantic_ai.models import ModelRequestContext
from pydantic_ai.usage import RequestUsage
from pydantic_graph import End

from pictx_fsm import ToolOutcome
from pictx_fsm.audit.log import transition_counts
from pictx_fsm.cli.audit import session_checks
from pictx_fsm.conformance import audit_file
from pictx_fsm.extensions.pi_context.kit.host_neutral import (
    LostResult,
    Observation,
    QueuedInput,
    Violation,
    check_all,
)
from pictx_fsm.extensions.pi_context.kit.notes_sandbox import NotesSandbox, resolve_arguments
from pictx_fsm.extensions.pi_context.kit.tool_calls import CALLS as NOTES_CALLS
from pictx_fsm.extensions.pi_context.kit.tool_coverage import tool_outcomes
from pictx_fsm.extensions.pi_context.lifecycle import load_lifecycle
from pictx_fsm.extensions.pi_context.tools import HANDLERS
from pictx_fsm.host.apply import Applied
from pictx_fsm.hosts.pydantic_ai import (
    LifecycleSettings,
    PiContext,
    PiSession,
    RequestCancelledError,
    WindowTooSmallError,
)
from pictx_fsm.hosts.pydantic_ai.scripted import (
    MODEL_NAME,
    Reply,
    ScriptedModel,
    overflow,
    provider_error,
    text,
    tools,
)
from pictx_fsm.session.entries import Entry, MessageEntry, entry_from_json
from pictx_fsm.session.tree import SessionTree
from pictx_fsm.testing.coverage import coverage_of

WINDOW = 100_000
TOKENS = st.sampled_from([1_000, 30_000, 60_000, 72_000, 72_500, 90_000])
"""Usage figures on both sides of the reminder (59040), warning (71328) and reserve (83616)
lines of a 100k window."""


def _length_stop(tokens: int) -> ModelResponse:
    usage = RequestUsage(input_tokens=tokens, output_tokens=10)
    return ModelResponse(
        parts=[TextPart("cut")], usage=usage, model_name=MODEL_NAME, finish_reason="length"
    )


LONG = st.sampled_from([30_000, 62_000, 75_000, 90_000])
"""Words in a long reply or tool result: alone, or with the 1,000 tokens before, on both
sides of the same three lines."""


def _long_reply(words: int) -> ModelResponse:
    """A long answer: its own output tokens carry the usage across a line."""
    return text("word " * words, tokens=1_000, output=words)


def _long_result(words: int) -> ModelResponse:
    """A call whose result is long: no usage covers it, Pi's estimate does (R47)."""
    return tools(("echo", {"text": "word " * words}), tokens=1_000)


NOTES_CALL = st.sampled_from(sorted(NOTES_CALLS)).flatmap(
    lambda name: NOTES_CALLS[name].map(lambda arguments: (name, arguments))
)
"""A notes or history tool call with arguments of every kind (ok, refused, failing, through
the links planted out of the notes root); history ids resolved when the reply is given."""
CALLS = st.one_of(
    st.sampled_from([("wipe_memory", {}), ("get_context_remaining", {}), ("echo", {"text": "e"})]),
    NOTES_CALL,
)
TWO_WIPES = [("wipe_memory", {}), ("wipe_memory", {})]


def _with_wipe(calls: list[Any], wipe_at: int | None) -> list[Any]:
    if wipe_at is None:
        return calls
    return [*calls[:wipe_at], ("wipe_memory", {}), *calls[wipe_at:]]


NOTES_BATCH = st.builds(
    _with_wipe,
    st.lists(NOTES_CALL, min_size=1, max_size=3),
    st.one_of(st.none(), st.integers(0, 3)),
)
"""One to three notes or history calls, ``wipe_memory`` at any position or not at all."""
replies = st.one_of(
    st.builds(lambda n, t: text(f"reply {n}", tokens=t), st.integers(0, 99), TOKENS),
    st.builds(
        lambda calls, t: tools(*calls, tokens=t), st.lists(CALLS, min_size=1, max_size=3), TOKENS
    ),
    st.builds(lambda t: tools(*TWO_WIPES, tokens=t), TOKENS),
    st.builds(lambda calls, t: tools(*calls, tokens=t), NOTES_BATCH, TOKENS),
    st.builds(overflow),
    st.builds(provider_error),
    st.builds(_length_stop, TOKENS),
    st.builds(_long_reply, LONG),
    st.builds(_long_result, LONG),
)
scripts = st.one_of(
    st.lists(replies, max_size=4),
    st.builds(lambda: [overflow(), overflow()]),  # a failure chain that must not recover twice
)
queue_points = st.lists(
    st.tuples(st.integers(0, 6), st.sampled_from(["asap", "when_idle"])), max_size=2
)


def _audited(path: Path) -> list[Violation]:
    """What ``pictx-fsm audit`` finds wrong in the session file the adapter wrote: no error
    and no warning (exit code 0), but for overflow storms. Info findings are about the
    conversation, never defects (a clone's inherited root boot, R66). A storm (FM1) is the
    scripted provider's doing: it overflows on every request, prompt after prompt, and the
    audit counts recoveries until a successful reply where R37 ends the chain at a prompt (and
    a ``/wipe-memory`` right after a failed reply reads as a recovery); Pi writes the same
    file. ``recoveries_bounded`` holds the lifecycle to R36–R37."""
    return [
        Violation(check="session_audit", message=f"{f.name}: {f.message}")
        for f in audit_file(path, session_checks()).findings
        if f.is_defect and f.name != "overflow_storm"
    ]


def _results_in(lines: list[str]) -> list[str]:
    """The call ids of the tool results among session file ``lines``."""
    messages = [json.loads(line).get("message") or {} for line in lines]
    return [str(m["toolCallId"]) for m in messages if m.get("role") == "toolResult"]


class AgentLoop(RuleBasedStateMachine):
    capability: ClassVar[type[PiContext]] = PiContext
    transitions: ClassVar[dict[str, int]] = {}
    outcomes: ClassVar[Counter[str]] = Counter()

    def __init__(self) -> None:
        super().__init__()
        self.path = Path(tempfile.mkdtemp()) / "session.jsonl"
        self.rng = random.Random(0)
        self.notes = NotesSandbox()
        self.config = LifecycleSettings(notes_home=self.notes.root)
        self.session = PiSession.create(self.path, rng=self.rng, config=self.config)
        self.calls = 0
        self.requests: list[Any] = []
        self.queued: list[QueuedInput] = []
        self.lost: list[LostResult] = []
        self.prompts = self.resumes = self.enqueued = 0
        self.cancelled: list[str] = []
        self._agent()

    def _agent(self) -> None:
        if hasattr(self, "model"):
            self.calls = self.model.calls  # call ids stay unique across processes
        self.model = ScriptedModel(
            session=self.session,
            arguments=lambda arguments: resolve_arguments(arguments, self.session.tree),
        )
        self.model.calls = self.calls
        cap = self.capability(self.session, context_window=WINDOW, max_tokens=4096)
        self.agent: Agent[None, str] = Agent(self.model.model, capabilities=[cap])

        @self.agent.tool_plain
        def echo(text: str) -> str:
            """Echo the text back."""
            return f"echo:{text}"

    @rule(script=scripts, queue=queue_points, from_result=st.booleans())
    def prompt(self, script: list[Reply], queue: list[tuple[int, str]], from_result: bool) -> None:
        """A prompt with scripted replies; user input queued between graph nodes."""
        self.prompts += 1
        self.model.push(*script)
        history = self.session.history() if from_result else []
        queued_before = len(self.queued)
        try:
            asyncio.run(self._drive(f"prompt {self.prompts}", history, queue))
        except RequestCancelledError as error:
            self.cancelled.append(str(error))
        except (ModelAPIError, WindowTooSmallError):  # a failed run; or replies whose usage
            # stays at the reserve after a reset (what a too small window does): stopped
            self.queued[queued_before:] = [
                QueuedInput(text=q.text, audit_seq=q.audit_seq, run_failed=True)
                for q in self.queued[queued_before:]
            ]
        finally:
            self.model.script.clear()
            self.requests += self.model.requests
            self.model.requests.clear()

    async def _drive(
        self, prompt: str, history: list[ModelMessage], queue: list[tuple[int, str]]
    ) -> None:
        async with self.agent.iter(prompt, message_history=history) as run:
            node, step = run.next_node, 0
            while not isinstance(node, End):
                for at, priority in queue:
                    if at == step:
                        self.enqueued += 1
                        text_ = f"queued {self.enqueued} ({priority})"
                        run.enqueue(text_, priority=priority)  # type: ignore[arg-type]
                        self.queued.append(
                            QueuedInput(text=text_, audit_seq=self.session.audit_seq)
                        )
                node = await run.next(node)
                step += 1

    @rule(batch=NOTES_BATCH, then=replies)
    def notes_prompt(self, batch: list[tuple[str, dict[str, Any]]], then: Reply) -> None:
        """A prompt whose model works with its notes and history first."""
        self.prompt([tools(*batch), then], [], False)

    @rule(
        command=st.sampled_from([("wipe-memory", ""), ("pi-context", "off"), ("pi-context", "on")])
    )
    def command(self, command: tuple[str, str]) -> None:
        """``/wipe-memory`` or ``/pi-context on|off`` between runs (R59, R60)."""
        self.session.command(*command)

    @rule()
    def reopen(self) -> None:
        """The process ends; the session file is opened again (R64–R66 repair)."""
        self.session.close()
        self.session = PiSession.open(self.path, rng=self.rng, config=self.config)
        self._agent()

    @rule(lost=st.integers(1, 4))
    def crash_and_reopen(self, lost: int) -> None:
        """The process dies with the last entries unwritten (a boundary cut in its middle):
        opening the file again repairs the reset tail (R64, D4)."""
        self.session.close()
        lines = self.path.read_text().splitlines(keepends=True)
        keep = max(1, len(lines) - lost)
        self.path.write_text("".join(lines[:keep]))
        self.queued.clear()  # checked already; what the crash lost is gone on purpose
        seq = self.session.audit_seq  # the audit log is a separate file: it keeps its records
        self.lost += [LostResult(tool_call_id=i, audit_seq=seq) for i in _results_in(lines[keep:])]
        self.session = PiSession.open(self.path, rng=self.rng, config=self.config)
        self._agent()

    @rule()
    def resume_from_stored_history(self) -> None:
        """The history is kept as pydantic-ai messages (a database) and resumed elsewhere."""
        history = self.session.history()
        self.session.close()
        self._tally()  # the clone has an audit log of its own
        self.resumes += 1
        self.path = self.path.with_name(f"resumed-{self.resumes}.jsonl")
        self.session = PiSession.from_messages(history, self.path, rng=self.rng, config=self.config)
        self.requests, self.queued, self.lost = [], [], []
        self._agent()

    @invariant()
    def host_neutral_invariants_hold(self) -> None:
        seen = Observation(
            tree=self.session.tree,
            requests=self.requests,
            audit=self.session.audit_records(),
            queued=self.queued,
            notes=self.notes,
            lost=self.lost,
        )
        violations = check_all(seen) + _audited(self.path)
        assert not violations, violations
        # R68 fails closed; on this host no history ever loses its window's boot
        assert not self.cancelled, self.cancelled

    def teardown(self) -> None:
        self.session.close()
        self._tally()
        self.notes.close()

    def _tally(self) -> None:
        """Count the session's transitions and tool outcomes (its audit log is closed)."""
        records = self.session.audit_records()
        for name, count in transition_counts(records).items():
            AgentLoop.transitions[name] = AgentLoop.transitions.get(name, 0) + count
        AgentLoop.outcomes.update(tool_outcomes(records))


SETTINGS = settings(
    max_examples=100,
    stateful_step_count=8,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


ITEM_0_1 = {"$item": [0, 1]}
"""The second item of the first window (resolved when the reply is given)."""
SEEDS: dict[str, list[tuple[str, dict[str, Any]]]] = {
    # Fixed runs that reach each group of MUST_FIRE whatever the random phase reaches.
    "two wipes": [("prompt", {"script": [tools(*TWO_WIPES), text()]})],
    "automatic reset": [("prompt", {"script": [text(tokens=90_000), text()]})],
    "overflow twice": [("prompt", {"script": [overflow(), overflow()]})],
    "reminders": [
        ("prompt", {"script": [text(tokens=60_000)]}),
        ("prompt", {"script": [text(tokens=72_000)]}),
        ("prompt", {"script": [text()]}),
    ],
    "long replies": [
        ("prompt", {"script": [_long_reply(62_000)]}),  # guidance in the next request
        ("prompt", {"script": [_long_result(90_000), text()]}),  # the estimate: a reset
    ],
    "remaining": [("prompt", {"script": [tools(("get_context_remaining", {})), text()]})],
    "input queued during a reset batch": [
        ("prompt", {"script": [tools(("wipe_memory", {})), text()], "queue": [(2, "asap")]}),
    ],
    "crash in a reset": [
        ("prompt", {"script": [tools(("wipe_memory", {})), text()]}),
        ("crash_and_reopen", {"lost": 3}),
        ("prompt", {"script": []}),
    ],
    # The counterexample of tool_channels' first reading: the runtime answered, the crash
    # lost the result's line, and pydantic-ai closes the dangling call itself ("interrupted").
    "a crash loses an answered tool result": [
        ("prompt", {"script": [tools(("history_list", {"limit": 1})), text("reply 0")]}),
        ("crash_and_reopen", {"lost": 3}),
        ("prompt", {"script": [overflow(), overflow()]}),
    ],
    "notes and history across a reset": [
        ("prompt", {"script": [text("the code is zebra-17")]}),
        (
            "prompt",
            {
                "script": [
                    tools(
                        ("notes_write", {"address": "plan.md", "content": "alpha needle"}),
                        ("wipe_memory", {}),
                    ),
                    tools(
                        ("notes_read", {"address": "plan.md"}),
                        ("history_search", {"query": "zebra-17"}),
                        ("notes_write", {"address": "../x.md", "content": "x"}),
                    ),
                    tools(
                        ("notes_edit", {"address": "plan.md", "stale": True}),
                        ("notes_list", {"pattern": "**"}),
                        ("notes_search", {"query": "needle"}),
                    ),
                    tools(
                        ("history_windows", {}),
                        ("history_list", {"window_id": {"$window": 0}}),
                        (
                            "history_read",
                            {"window_id": {"$window": 0}, "item_id": {"$item": [0, 1]}},
                        ),
                    ),
                    tools(
                        ("notes_write", {"address": "@human/leak.md", "content": "x"}),
                        ("notes_write", {"address": "@human/escape/x.md", "content": "x"}),
                        ("notes_read", {"address": "@human/leak.md"}),
                    ),
                    text(),
                ]
            },
        ),
    ],
    "commands": [
        ("command", {"command": ("wipe-memory", "")}),
        ("command", {"command": ("pi-context", "off")}),
        ("prompt", {"script": [tools(("wipe_memory", {})), text()]}),
        ("command", {"command": ("pi-context", "on")}),
    ],
}


def _seed(
    steps: list[tuple[str, dict[str, Any]]], machine_class: type[AgentLoop] = AgentLoop
) -> None:
    machine = machine_class()
    for name, arguments in steps:
        getattr(machine, name)(
            **{"queue": [], "from_result": False, **arguments} if name == "prompt" else arguments
        )
        machine.host_neutral_invariants_hold()
    machine.teardown()


def test_the_lifecycle_holds_every_invariant_on_pydantic_ais_agent_loop() -> None:
    AgentLoop.transitions, AgentLoop.outcomes = {}, Counter()
    for steps in SEEDS.values():
        _seed(steps)
    run_state_machine_as_test(AgentLoop, settings=SETTINGS)
    # Then the run exercised the machines it drives, transition by transition
    coverage = coverage_of(load_lifecycle(), AgentLoop.transitions)
    fired = {row.transition for row in coverage.rows if row.fired}
    for group in MUST_FIRE:
        assert group & fired, f"none of {sorted(group)} fired; fired: {sorted(fired)}"
    # And every notes and history tool answered ok through the runtime, and N4's other two
    # channels were taken
    reached = set(AgentLoop.outcomes)
    assert {f"{tool}:ok" for tool in HANDLERS} <= reached, sorted(reached)
    statuses = {outcome.split(":")[1] for outcome in reached}
    assert {"refusal", "error"} <= statuses


def _as_ok(entry: Entry) -> Entry:
    obj = entry.to_json()
    obj["message"] = {**obj["message"], "isError": False}
    return entry_from_json(obj)[0]


def test_n4_a_result_a_crash_lost_is_closed_by_pydantic_ai_as_an_interrupted_error() -> None:
    # Given a run whose history_list call the runtime answered ok (the audit log keeps it)
    machine = AgentLoop()
    steps = SEEDS["a crash loses an answered tool result"]
    machine.prompt(**{"queue": [], "from_result": False, **steps[0][1]})
    # When the process dies with the tool result, the next request's envelope and the reply
    # unwritten, and the next prompt runs on the reopened session
    machine.crash_and_reopen(lost=3)
    machine.prompt(script=[text("again")], queue=[], from_result=False)
    # Then the session closes the call as pydantic-ai's repair does: an error result, not the
    # runtime's lost answer, and every invariant holds
    [(closing_id, closing)] = [
        (e.id, e.message)
        for e in machine.session.tree.entries
        if isinstance(e, MessageEntry) and e.message.raw.get("toolCallId") == "call_1"
    ]
    assert closing.raw.get("isError") is True
    assert closing.text() == INTERRUPTED_TOOL_RETURN_CONTENT
    assert [x.tool_call_id for x in machine.lost] == ["call_1"]
    machine.host_neutral_invariants_hold()
    # And had the host closed it as an ok result, tool_channels would say so
    tree = machine.session.tree
    as_ok = [_as_ok(e) if e.id == closing_id else e for e in tree.entries]
    seen = Observation(
        tree=SessionTree.from_entries(tree.header, as_ok),
        requests=(),
        audit=machine.session.audit_records(),
        lost=machine.lost,
    )
    assert [v.check for v in check_all(seen)] == ["tool_channels"]
    machine.teardown()


# -- planted faults ----------------------------------------------------------------------------


class LeaksErasedHistory(PiContext):
    """Forgets the projection: every request carries the whole history."""

    async def prepare_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        self._sync(ctx.messages)
        return request_context


class DuplicatesTheTail(PiContext):
    """Puts a boundary's reset tail twice into the next request."""

    def _into_next_request(self, index: int, request: ModelRequest, applied: Applied) -> None:
        super()._into_next_request(index, request, applied)
        if applied.continue_ and self._boundary is not None:
            request.parts = [*request.parts, *map(dataclasses.replace, self._boundary[1])]


class TailAfterQueuedInput(PiContext):
    """Commits a boundary's reset tail after the input queued during the tool batch (which
    the projection then cuts away)."""

    def _tail_first(self, messages: list[ModelMessage]) -> None:
        if self._boundary is not None and self._boundary[0] < len(messages) - 1:
            index, tail = self._boundary
            request = messages[index]
            if isinstance(request, ModelRequest):
                request.parts = [p for p in request.parts if all(p is not t for t in tail)]
                messages.append(ModelRequest(parts=tail))
        self._boundary = None


class RecoversEveryOverflow(PiContext):
    """Settles the lifecycle before each provider error: every overflow is recovered."""

    async def on_node_run_error(self, ctx: RunContext[Any], *, node: Any, error: Exception) -> Any:
        self.session.lifecycle.settled()
        return await super().on_node_run_error(ctx, node=node, error=error)


class ErrorsAsResults(PiContext):
    """Hands a tool's error outcome to the model as an ordinary result (N4's channel lost)."""

    def _execute(self, name: str, arguments: Mapping[str, Any], ctx: RunContext[Any]) -> Any:
        value = super()._execute(name, arguments, ctx)
        if isinstance(value, ToolOutcome) and value.is_error:
            return attrs.evolve(value, status="ok")
        return value


class WritesNotesItself(PiContext):
    """Writes a note by joining its address to the notes root (links followed), outside the
    tools' confinement, before the runtime answers the call."""

    def _execute(self, name: str, arguments: Mapping[str, Any], ctx: RunContext[Any]) -> Any:
        home, address = self.session.config.notes_home, arguments.get("address")
        if name == "notes_write" and isinstance(address, str) and home is not None:
            path = home / address.removeprefix("@")
            with contextlib.suppress(OSError, ValueError):
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(str(arguments.get("content")), encoding="utf-8")
        return super()._execute(name, arguments, ctx)


class ClosesLostCallsAsOk(PiContext):
    """Closes a call whose result a crash lost with an ordinary result, as if it had run."""

    def _continued(self, base: str | None, pending: ModelRequest | None) -> list[ModelMessage]:
        messages = super()._continued(base, pending)
        for message in messages:
            if isinstance(message, ModelRequest):
                message.parts = [_as_success(part) for part in message.parts]
        return messages


def _as_success(part: Any) -> Any:
    metadata = getattr(part, "metadata", None) or {}
    if isinstance(part, ToolReturnPart) and metadata.get(SYNTHESIZED_TOOL_RETURN_METADATA_KEY):
        return dataclasses.replace(part, outcome="success")
    return part


FAULT_SETTINGS = settings(
    SETTINGS,
    max_examples=300,
    phases=[Phase.generate],  # the first counterexample is the answer; no shrinking
)


@pytest.mark.parametrize(
    "fault",
    [
        LeaksErasedHistory,
        DuplicatesTheTail,
        TailAfterQueuedInput,
        RecoversEveryOverflow,
        ErrorsAsResults,
        WritesNotesItself,
        ClosesLostCallsAsOk,
    ],
    ids=lambda f: f.__name__,
)
def test_a_planted_fault_in_the_adapter_is_caught(fault: type[PiContext]) -> None:
    faulty = type(f"Faulty{fault.__name__}", (AgentLoop,), {"capability": fault})
    with pytest.raises(AssertionError, match=r"Violation\(check="):  # an invariant, no crash
        for steps in SEEDS.values():  # the fixed runs first, then generated ones
            _seed(steps, faulty)
        run_state_machine_as_test(faulty, settings=FAULT_SETTINGS)


MUST_FIRE: tuple[frozenset[str], ...] = tuple(
    frozenset(group)
    for group in (
        # What this host drives: at least one transition of each group, with the rule it
        # exercises. Not reachable here: compaction (pydantic-ai has none to cancel),
        # tree-summary navigation and aborts (docs/pydantic-ai.md).
        {"reset_control:request:none:request:1"},  # wipe_memory records a request (R16)
        {"reset_control:request:explicit:request:1"},  # a second wipe in the batch (R30)
        {"reset_control:request:explicit:turn_end:3"},  # the requested reset commits (R28)
        {"reset_control:request:none:turn_end:3"},  # the automatic reset (R27, R50)
        {"reset_control:overflow:idle:turn_end:3"},  # an overflow or cut reply arms (R24)
        {"reset_control:overflow:pending:before_settle:3"},  # one recovery at settle (R35)
        {"reset_control:overflow:pending_spent:before_settle:3"},  # and no second (R36)
        {"budget:guidance:guidance_staged:turn_end:2"},  # guidance committed (R53)
        {"budget:warning:warning_staged:turn_end:2"},  # the warning committed (R51, R53)
        {  # a committed reminder announced or settled (R54, R55)
            "budget:guidance:guidance_committed:turn_start:1",
            "budget:guidance:guidance_committed:settled:1",
            "budget:warning:warning_committed:turn_start:1",
            "budget:warning:warning_committed:settled:1",
        },
        {"budget:meter:reading:query_remaining:1"},  # get_context_remaining (R17)
        {"boot_repair:boot_repair:standby:repair:6"},  # a new session's root boot (R64)
        {  # a cut reset tail completed on reopening (D4)
            "boot_repair:boot_repair:standby:repair:9",
            "boot_repair:boot_repair:standby:repair:10",
            "boot_repair:boot_repair:standby:repair:11",
        },
        {"projection:projection:watching:project:1"},  # the root window's request (R69)
        {"projection:projection:watching:project:2"},  # a reset window's request (R67)
        {"reset_control:request:none:wipe:3"},  # /wipe-memory persists a reset (R59, D2)
        {"toggle:toggle:on:switch_off:1"},  # /pi-context off (R60, R61)
        {"reset_control:request:none:request:2"},  # wipe_memory while off (R16)
    )
)
