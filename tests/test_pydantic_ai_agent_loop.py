"""Hypothesis drives a real pydantic-ai ``Agent`` through the lifecycle and checks, after
every step, the host-neutral invariants (:mod:`pictx_fsm.testing.host_neutral`); the run also
measures transition coverage of the machines, and planted adapter faults are caught."""

from __future__ import annotations

import asyncio
import random
import tempfile
from pathlib import Path
from typing import Any, ClassVar

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test
from pydantic_ai import Agent, RunContext
from pydantic_ai.exceptions import ModelAPIError
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart
from pydantic_ai.models import ModelRequestContext
from pydantic_ai.usage import RequestUsage
from pydantic_graph import End

from pictx_fsm.audit import transition_counts
from pictx_fsm.hosts.pydantic_ai import PiContext, PiSession, RequestCancelledError
from pictx_fsm.hosts.pydantic_ai.glue import Applied
from pictx_fsm.hosts.pydantic_ai.scripted import (
    MODEL_NAME,
    Reply,
    ScriptedModel,
    overflow,
    provider_error,
    text,
    tools,
)
from pictx_fsm.lifecycle import load_lifecycle
from pictx_fsm.testing.coverage import coverage_of
from pictx_fsm.testing.host_neutral import Observation, QueuedInput, check_all

WINDOW = 100_000
TOKENS = st.sampled_from([1_000, 30_000, 60_000, 72_000, 72_500, 90_000])
"""Usage figures on both sides of the reminder (59040), warning (71328) and reserve (83616)
lines of a 100k window."""


def _length_stop(tokens: int) -> ModelResponse:
    usage = RequestUsage(input_tokens=tokens, output_tokens=10)
    return ModelResponse(
        parts=[TextPart("cut")], usage=usage, model_name=MODEL_NAME, finish_reason="length"
    )


CALLS = st.sampled_from(
    [("wipe_memory", {}), ("get_context_remaining", {}), ("echo", {"text": "e"})]
)
TWO_WIPES = [("wipe_memory", {}), ("wipe_memory", {})]
replies = st.one_of(
    st.builds(lambda n, t: text(f"reply {n}", tokens=t), st.integers(0, 99), TOKENS),
    st.builds(
        lambda calls, t: tools(*calls, tokens=t), st.lists(CALLS, min_size=1, max_size=3), TOKENS
    ),
    st.builds(lambda t: tools(*TWO_WIPES, tokens=t), TOKENS),
    st.builds(overflow),
    st.builds(provider_error),
    st.builds(_length_stop, TOKENS),
)
scripts = st.one_of(
    st.lists(replies, max_size=4),
    st.builds(lambda: [overflow(), overflow()]),  # a failure chain that must not recover twice
)
queue_points = st.lists(
    st.tuples(st.integers(0, 6), st.sampled_from(["asap", "when_idle"])), max_size=2
)


class AgentLoop(RuleBasedStateMachine):
    capability: ClassVar[type[PiContext]] = PiContext
    transitions: ClassVar[dict[str, int]] = {}

    def __init__(self) -> None:
        super().__init__()
        self.path = Path(tempfile.mkdtemp()) / "session.jsonl"
        self.rng = random.Random(0)
        self.session = PiSession.create(self.path, rng=self.rng)
        self.requests: list[Any] = []
        self.queued: list[QueuedInput] = []
        self.prompts = self.resumes = self.enqueued = 0
        self.cancelled: list[str] = []
        self._agent()

    def _agent(self) -> None:
        self.model = ScriptedModel(session=self.session)
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
        except ModelAPIError:
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
        self.session = PiSession.open(self.path, rng=self.rng)
        self._agent()

    @rule(lost=st.integers(1, 3))
    def crash_and_reopen(self, lost: int) -> None:
        """The process dies with the last entries unwritten (a boundary cut in its middle):
        opening the file again repairs the reset tail (R64, D4)."""
        self.session.close()
        lines = self.path.read_text().splitlines(keepends=True)
        keep = max(1, len(lines) - lost)
        self.path.write_text("".join(lines[:keep]))
        self.queued.clear()  # checked already; what the crash lost is gone on purpose
        self.session = PiSession.open(self.path, rng=self.rng)
        self._agent()

    @rule()
    def resume_from_stored_history(self) -> None:
        """The history is kept as pydantic-ai messages (a database) and resumed elsewhere."""
        history = self.session.history()
        self.session.close()
        self.resumes += 1
        self.path = self.path.with_name(f"resumed-{self.resumes}.jsonl")
        self.session = PiSession.from_messages(history, self.path, rng=self.rng)
        self.requests, self.queued = [], []
        self._agent()

    @invariant()
    def host_neutral_invariants_hold(self) -> None:
        seen = Observation(
            tree=self.session.tree,
            requests=self.requests,
            audit=self.session.audit_records(),
            queued=self.queued,
        )
        violations = check_all(seen)
        assert not violations, violations
        # R68 fails closed; on this host no history ever loses its window's boot
        assert not self.cancelled, self.cancelled

    def teardown(self) -> None:
        self.session.close()
        for name, count in transition_counts(self.session.audit_records()).items():
            AgentLoop.transitions[name] = AgentLoop.transitions.get(name, 0) + count


SETTINGS = settings(
    max_examples=100,
    stateful_step_count=8,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


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
    "remaining": [("prompt", {"script": [tools(("get_context_remaining", {})), text()]})],
    "input queued during a reset batch": [
        ("prompt", {"script": [tools(("wipe_memory", {})), text()], "queue": [(2, "asap")]}),
    ],
    "crash in a reset": [
        ("prompt", {"script": [tools(("wipe_memory", {})), text()]}),
        ("crash_and_reopen", {"lost": 2}),
        ("prompt", {"script": []}),
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
    AgentLoop.transitions = {}
    for steps in SEEDS.values():
        _seed(steps)
    run_state_machine_as_test(AgentLoop, settings=SETTINGS)
    # Then the run exercised the machines it drives, transition by transition
    coverage = coverage_of(load_lifecycle(), AgentLoop.transitions)
    fired = {row.transition for row in coverage.rows if row.fired}
    for group in MUST_FIRE:
        assert group & fired, f"none of {sorted(group)} fired; fired: {sorted(fired)}"


# -- planted faults ----------------------------------------------------------------------------


class LeaksErasedHistory(PiContext):
    """Forgets the projection: every request carries the whole history."""

    async def prepare_model_request(
        self, ctx: RunContext[Any], request_context: ModelRequestContext
    ) -> ModelRequestContext:
        self._sync(ctx.messages)
        return request_context


class DuplicatesTheTail(PiContext):
    """Appends a boundary's drafts twice to the next request."""

    def _into_next_request(self, index: int, request: ModelRequest, applied: Applied) -> None:
        super()._into_next_request(index, request, applied)
        if applied.continue_:
            super()._into_next_request(index, request, applied)


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


FAULT_SETTINGS = settings(
    SETTINGS,
    max_examples=300,
    phases=[Phase.generate],  # the first counterexample is the answer; no shrinking
)


@pytest.mark.parametrize(
    "fault",
    [LeaksErasedHistory, DuplicatesTheTail, TailAfterQueuedInput, RecoversEveryOverflow],
    ids=lambda f: f.__name__,
)
def test_a_planted_fault_in_the_adapter_is_caught(fault: type[PiContext]) -> None:
    faulty = type(f"Faulty{fault.__name__}", (AgentLoop,), {"capability": fault})
    with pytest.raises(AssertionError):
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
        {"boot_repair:boot_repair:standby:repair:4"},  # a new session's root boot (R64)
        {  # a cut reset tail completed on reopening (D4)
            "boot_repair:boot_repair:standby:repair:7",
            "boot_repair:boot_repair:standby:repair:8",
            "boot_repair:boot_repair:standby:repair:9",
        },
        {"projection:projection:watching:project:1"},  # the root window's request (R69)
        {"projection:projection:watching:project:2"},  # a reset window's request (R67)
        {"reset_control:request:none:wipe:3"},  # /wipe-memory persists a reset (R59, D2)
        {"toggle:toggle:on:switch_off:1"},  # /pi-context off (R60, R61)
        {"reset_control:request:none:request:2"},  # wipe_memory while off (R16)
    )
)
