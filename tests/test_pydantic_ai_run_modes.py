"""Every way pydantic-ai runs an agent, on one session: Hypothesis mixes ``run``,
``run_sync``, ``iter``, ``run_stream`` and ``run_stream_events``, cancels (between graph nodes,
while a tool runs, while an answer streams), commands, reopening the file and crashes that
cut it, and checks after every step that no request carries erased history, that the file is
one coherent branch, that the audit log verifies, and that ``session.history()`` is exactly
the history the agent was given (issue 25)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import tempfile
from collections import Counter
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test
from pydantic_ai import Agent, capture_run_messages
from pydantic_ai.exceptions import ModelAPIError
from pydantic_ai.messages import ModelMessage, ModelRequest
from pydantic_ai_kit import kinds
from pydantic_graph import End

from pictx_fsm import read_session
from pictx_fsm.audit import verify_chain
from pictx_fsm.cli.audit import session_checks
from pictx_fsm.conformance import audit_file
from pictx_fsm.extensions.pi_context.kit.host_neutral import LostResult, Observation, check_all
from pictx_fsm.extensions.pi_context.kit.notes_sandbox import NotesSandbox
from pictx_fsm.extensions.pi_context.windows import is_valid_marker
from pictx_fsm.hosts.pydantic_ai import (
    LifecycleSettings,
    PiContext,
    PiSession,
    WindowTooSmallError,
    audit_path_of,
)
from pictx_fsm.hosts.pydantic_ai.history import carried_ids
from pictx_fsm.hosts.pydantic_ai.scripted import (
    Reply,
    ScriptedModel,
    overflow,
    provider_error,
    text,
    tools,
)
from pictx_fsm.hosts.pydantic_ai.serial import messages_from_json, messages_json
from pictx_fsm.hosts.pydantic_ai.session import lifecycle_request

WINDOW = 100_000
MODES = ("run", "run_sync", "iter", "run_stream", "run_stream_events")
TOKENS = st.sampled_from([1_000, 60_000, 72_000, 90_000])
"""Usage on both sides of the guidance, warning and reserve lines of a 100k window (a
streamed reply's usage is pydantic-ai's estimate: only its length crosses them)."""
CALLS = st.sampled_from(
    [("wipe_memory", {}), ("get_context_remaining", {}), ("echo", {"text": "e"})]
)
replies = st.one_of(
    st.builds(lambda n, t: text(f"reply {n}", tokens=t), st.integers(0, 99), TOKENS),
    st.builds(
        lambda calls, t: tools(*calls, tokens=t), st.lists(CALLS, min_size=1, max_size=2), TOKENS
    ),
    st.builds(lambda words: text("word " * words, output=words), st.sampled_from([62_000, 90_000])),
    st.builds(overflow),
    st.builds(provider_error),
)
scripts = st.lists(replies, max_size=3)
FAILURES = (ModelAPIError, WindowTooSmallError)
"""How a run may end without a result: a provider error the lifecycle did not recover, or
replies whose usage keeps a fresh window at the reserve."""


class RunModes(RuleBasedStateMachine):
    capability: ClassVar[type[PiContext]] = PiContext
    seen: ClassVar[Counter[str]] = Counter()
    """What the exploration reached (a property that never streams a reset proves little)."""

    def __init__(self) -> None:
        super().__init__()
        self.path = Path(tempfile.mkdtemp()) / "session.jsonl"
        self.notes = NotesSandbox()
        self.config = LifecycleSettings(notes_home=self.notes.root)
        self.rng = random.Random(0)
        self.session = PiSession.create(self.path, rng=self.rng, config=self.config)
        self.requests: list[Any] = []
        self.lost: list[LostResult] = []
        self.prompts = self.calls = 0
        self.tool_started = asyncio.Event()
        self._agent()

    def _agent(self) -> None:
        if hasattr(self, "model"):
            self.calls = self.model.calls  # call ids stay unique across processes
        self.model = ScriptedModel(session=self.session)
        self.model.calls = self.calls
        capability = self.capability(self.session, context_window=WINDOW, max_tokens=4096)
        self.agent: Agent[None, str] = Agent(self.model.model, capabilities=[capability])
        self.hold = False

        @self.agent.tool_plain
        async def echo(text: str) -> str:
            """Echo the text back (held while a test cancels the run)."""
            if self.hold:
                self.tool_started.set()
                await asyncio.sleep(3600)
            return f"echo:{text}"

    # -- runs ------------------------------------------------------------------------------------

    @rule(mode=st.sampled_from(MODES), script=scripts)
    def run(self, mode: str, script: list[Reply]) -> None:
        """A prompt run the way ``mode`` runs it; then history() is what the agent holds."""
        self.prompts += 1
        self.model.push(*script)
        prompt = f"prompt {self.prompts}"
        counted = self._turns()
        with capture_run_messages() as captured:
            try:
                held = self._run(mode, prompt)
                RunModes.seen[f"run {mode}"] += 1
                if any(is_valid_marker(entry) for entry in self.session.pending):
                    RunModes.seen[f"reset waiting after {mode}"] += 1
            except FAILURES:
                held = captured
                RunModes.seen[f"failed {mode}"] += 1
        self._collect()
        self._history_is(held)
        self._every_reply_ended(counted)

    def _run(self, mode: str, prompt: str) -> list[ModelMessage]:
        agent = self.agent
        if mode == "run_sync":
            return agent.run_sync(prompt).all_messages()
        return asyncio.run(_RUNS[mode](agent, prompt))

    @rule(
        mode=st.sampled_from(["iter", "batch", "tool", "run_stream"]),
        nodes=st.integers(1, 4),
        script=scripts,
    )
    def cancel(self, mode: str, nodes: int, script: list[Reply]) -> None:
        """The caller cancels a run: after ``nodes`` graph nodes, while a tool runs, or while
        the answer streams."""
        self.prompts += 1
        if mode == "tool":
            script = [tools(("echo", {"text": "held"})), *script]
        elif mode == "batch":  # cancelled once the batch ran, before its results are sent
            script, nodes = [tools(("echo", {"text": "e"}), ("wipe_memory", {})), *script], 3
        elif mode == "run_stream":
            script = [text("streaming answer"), *script]
        self.model.push(*script)
        prompt = f"prompt {self.prompts}"
        counted = self._turns()
        with capture_run_messages() as captured, contextlib.suppress(*FAILURES):
            asyncio.run(self._cancelled(mode, prompt, nodes))
        RunModes.seen[f"cancel {mode}"] += 1
        self._collect()
        self._history_is([m for m in captured if not _unanswered_mark(m)])
        self._every_reply_ended(counted)

    async def _cancelled(self, mode: str, prompt: str, nodes: int) -> None:
        task = asyncio.create_task(self._until_cancelled(mode, prompt, nodes))
        if mode == "tool":
            self.hold, self.tool_started = True, asyncio.Event()
            waiting = asyncio.create_task(self.tool_started.wait())
            await asyncio.wait([task, waiting], return_when=asyncio.FIRST_COMPLETED)
            waiting.cancel()
            task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass
        finally:
            self.hold = False

    async def _until_cancelled(self, mode: str, prompt: str, nodes: int) -> None:
        if mode == "tool":
            await self.agent.run(prompt)
        elif mode == "run_stream":
            async with self.agent.run_stream(prompt) as result:
                async for _ in result.stream_text(debounce_by=None):
                    raise asyncio.CancelledError
        else:  # iter, batch
            async with self.agent.iter(prompt) as run:
                node = run.next_node
                for _ in range(nodes):
                    if isinstance(node, End):
                        return
                    node = await run.next(node)
                raise asyncio.CancelledError

    @rule(
        command=st.sampled_from([("wipe-memory", ""), ("pi-context", "off"), ("pi-context", "on")])
    )
    def command(self, command: tuple[str, str]) -> None:
        """``/wipe-memory`` or ``/pi-context on|off`` between runs: what it appends waits for
        the next run, after the history as it was."""
        before = self.session.history()
        self.session.command(*command)
        self._history_extends(before)

    @rule()
    def reopen(self) -> None:
        """The process ends; the file is opened again: the same history, then what its repair
        appends for the next run."""
        before = self.session.history()
        self.session.close()
        self.session = PiSession.open(self.path, rng=self.rng, config=self.config)
        self._agent()
        self._history_extends(before)
        RunModes.seen["reopen"] += 1

    @rule(lost=st.integers(1, 4))
    def crash(self, lost: int) -> None:
        """The process dies with the file's last lines unwritten; it is opened again."""
        self.session.close()
        lines = self.path.read_text().splitlines(keepends=True)
        keep = max(1, len(lines) - lost)
        self.path.write_text("".join(lines[:keep]))
        seq = self.session.audit_seq
        for line in lines[keep:]:
            message = json.loads(line).get("message") or {}
            if message.get("role") == "toolResult":
                self.lost.append(LostResult(tool_call_id=message["toolCallId"], audit_seq=seq))
        self.session = PiSession.open(self.path, rng=self.rng, config=self.config)
        self._agent()
        RunModes.seen["crash"] += 1

    # -- checks ----------------------------------------------------------------------------------

    def _collect(self) -> None:
        self.requests += self.model.requests
        self.model.requests.clear()
        self.model.script.clear()

    def _history_extends(self, before: list[ModelMessage]) -> None:
        """history() is ``before`` but for entries of the lifecycle's own it gained (a wipe's
        boundary, a repair on opening), which wait for the next run."""
        assert _conversation(self.session.history()) == _conversation(before)

    def _turns(self) -> tuple[int, int]:
        """The replies the session recorded and the ``turn_end`` records of its audit log."""
        replies = sum(kinds([entry]) == ["assistant"] for entry in self.session.tree.entries)
        ends = sum(record.get("hook") == "turn_end" for record in self.session.audit_records())
        return replies, ends

    def _every_reply_ended(self, before: tuple[int, int]) -> None:
        """Each reply the run recorded ended one turn (Pi's ``turn_end`` for every assistant
        message, aborted and failed ones included), and no turn ended without one."""
        replies, ends = self._turns()
        assert replies - before[0] == ends - before[1], (replies, ends, before)

    def _history_is(self, held: Sequence[ModelMessage]) -> None:
        """history() is the history the agent holds, then the lifecycle's entries waiting."""
        waiting = [lifecycle_request(self.session.pending)] if self.session.pending else []
        expected = messages_json([*held, *waiting])
        assert messages_json(self.session.history()) == expected

    @invariant()
    def one_branch_no_erased_history_and_a_verified_log(self) -> None:
        tree = self.session.tree
        assert len(tree.leaves()) == 1, tree.leaves()
        loaded = read_session(self.path)
        assert [e.id for e in loaded.entries] == [e.id for e in tree.entries]
        assert not loaded.problems, loaded.problems
        seen = Observation(
            tree=tree,
            requests=self.requests,
            audit=self.session.audit_records(),
            notes=self.notes,
            lost=self.lost,
        )
        assert not check_all(seen), check_all(seen)
        verify_chain(audit_path_of(self.path))
        defects = [
            f.name
            for f in audit_file(self.path, session_checks()).findings
            if f.is_defect and f.name != "overflow_storm"  # the scripted provider's doing
        ]
        assert not defects, defects

    def teardown(self) -> None:
        self.session.close()
        self.notes.close()


def _unanswered_mark(message: ModelMessage) -> bool:
    """The empty ``interrupted`` request pydantic-ai appends to a run cancelled in its tool
    calls, after the run's last hook: the session has closed those calls already, with
    pydantic-ai's interrupted results (Pi records the abort's error results)."""
    return (
        isinstance(message, ModelRequest) and not message.parts and message.state == "interrupted"
    )


def _conversation(messages: Sequence[ModelMessage]) -> list[dict[str, Any]]:
    """``messages`` as JSON without the parts that carry the lifecycle's entries (and
    without a request that held nothing else)."""
    out = []
    for message in messages_json(messages):
        if message["kind"] == "request":
            parts = [p for p in message["parts"] if not _carries(p)]
            if not parts:
                continue
            message = {**message, "parts": parts}
        out.append(message)
    return out


def _carries(part: dict[str, Any]) -> bool:
    """A request part (as JSON) that carries one of the lifecycle's entries."""
    return bool(carried_ids(messages_from_json([{"kind": "request", "parts": [part]}])))


async def _run(agent: Agent[None, str], prompt: str) -> list[ModelMessage]:
    return (await agent.run(prompt)).all_messages()


async def _iter(agent: Agent[None, str], prompt: str) -> list[ModelMessage]:
    async with agent.iter(prompt) as run:
        async for _ in run:
            pass
    assert run.result is not None
    return run.result.all_messages()


async def _run_stream(agent: Agent[None, str], prompt: str) -> list[ModelMessage]:
    async with agent.run_stream(prompt) as result:
        async for _ in result.stream_text(debounce_by=None):
            pass
    return result.all_messages()


async def _run_stream_events(agent: Agent[None, str], prompt: str) -> list[ModelMessage]:
    stream: Any = agent.run_stream_events(prompt)
    if hasattr(stream, "__aenter__"):  # pydantic-ai ≥ 2.7x: a context manager
        async with stream as events:
            return await _events(events)
    return await _events(stream)  # 2.68: an async iterator


async def _events(events: Any) -> list[ModelMessage]:
    messages: list[ModelMessage] = []
    async for event in events:
        result = getattr(event, "result", None)
        if result is not None:
            messages = result.all_messages()
    return messages


_RUNS: dict[str, Callable[[Agent[None, str], str], Coroutine[Any, Any, list[ModelMessage]]]] = {
    "run": _run,
    "iter": _iter,
    "run_stream": _run_stream,
    "run_stream_events": _run_stream_events,
}

SETTINGS = settings(
    max_examples=80,
    stateful_step_count=8,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)


LONG = text("word " * 90_000, output=90_000)
"""An answer whose own length crosses the reserve of the 100k window (streamed or not)."""
SEEDS: dict[str, list[tuple[str, dict[str, Any]]]] = {
    # Fixed runs first, so every path is taken whatever the random phase reaches.
    "a streamed answer crosses the reserve, then each mode continues": [
        ("run", {"mode": "run_stream", "script": [LONG]}),
        *(("run", {"mode": mode, "script": []}) for mode in MODES),
    ],
    "cancels of every kind, then a reopen": [
        ("cancel", {"mode": "batch", "nodes": 3, "script": []}),
        ("cancel", {"mode": "tool", "nodes": 1, "script": []}),
        ("cancel", {"mode": "run_stream", "nodes": 1, "script": []}),
        ("cancel", {"mode": "iter", "nodes": 2, "script": [overflow()]}),
        ("reopen", {}),
        ("run", {"mode": "run", "script": []}),
    ],
    "a streamed overflow, a crash": [
        ("run", {"mode": "run_stream", "script": [overflow()]}),
        ("crash", {"lost": 2}),
        ("run", {"mode": "iter", "script": [tools(("wipe_memory", {})), text()]}),
    ],
}


def _seed(
    steps: list[tuple[str, dict[str, Any]]], machine_class: type[RunModes] = RunModes
) -> None:
    machine = machine_class()
    for name, arguments in steps:
        getattr(machine, name)(**arguments)
        machine.one_branch_no_erased_history_and_a_verified_log()
    machine.teardown()


def test_every_run_mode_cancel_and_resume_keeps_the_session_exact() -> None:
    RunModes.seen = Counter()
    for steps in SEEDS.values():
        _seed(steps)
    run_state_machine_as_test(RunModes, settings=SETTINGS)
    # And the exploration ran every mode, cancelled each way, streamed into a reset, reopened
    # and crashed
    expected = {
        *(f"run {mode}" for mode in MODES),
        *(f"cancel {mode}" for mode in ("iter", "batch", "tool", "run_stream")),
        "reset waiting after run_stream",
        "reopen",
        "crash",
    }
    assert expected <= set(RunModes.seen), sorted(expected - set(RunModes.seen))


# -- planted faults ----------------------------------------------------------------------------


class LeavesTheStreamedAnswerOpen(PiContext):
    """Ends no turn on ``run_stream``'s answer: it crosses the reserve and nothing commits."""

    def _unended_answer(self, messages: list[ModelMessage]) -> None:
        return None


class DropsTheUnsentRequest(PiContext):
    """Keeps a cancelled run's recorded tool results (and boundary) out of its history."""

    def _keep_unsent(self, messages: list[ModelMessage]) -> None:
        self._unsent = None


class LeavesTheWaitingRequestApart(PiContext):
    """Leaves the lifecycle's waiting request apart from the prompt's: pydantic-ai merges the
    two when the next run starts, and the session keeps them apart."""

    def _take_in(self, messages: list[ModelMessage], request: Any) -> None:
        self._first = None


FAULT_SETTINGS = settings(SETTINGS, max_examples=200, phases=[Phase.generate])


@pytest.mark.parametrize(
    "fault",
    [LeavesTheStreamedAnswerOpen, DropsTheUnsentRequest, LeavesTheWaitingRequestApart],
    ids=lambda fault: fault.__name__,
)
def test_a_planted_fault_in_the_host_is_caught(fault: type[PiContext]) -> None:
    faulty = type(f"Faulty{fault.__name__}", (RunModes,), {"capability": fault})
    with pytest.raises(AssertionError):
        for steps in SEEDS.values():  # the fixed runs first, then generated ones
            _seed(steps, faulty)
        run_state_machine_as_test(faulty, settings=FAULT_SETTINGS)
