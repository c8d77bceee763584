"""pi-context-management on the real Pi and on the model session, step for step.

A scenario is a list of steps — a prompt with the model's replies to it, the replies the
extension's own model requests get, a ``/ctx-memory`` command, ``/compact``, time passing —
run twice: on the model session (the extension's kit world, in the Pi version's host profile,
with the faux model's usage arithmetic) and on the real Pi in RPC mode (the bridge's
``context-management`` entry, pi-ai's faux model scripted from the same steps, the server's
clock moved by a file). After each step the real run waits until the extension has taken as
many steps as the model session took after the same step (a background reply, a handoff
preparation, an automatic handoff arrive later in Pi), so both are compared at the same
points: each session file's entries, every step's event and fired transitions in order, and
the status bar's texts.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeAlias

from attrs import evolve, field, frozen
from driven import navigate_or_fork
from pi_versions import PiInstall
from real_pi import SKIPPED_ENTRIES, RpcPi, entry_kind

from pictx_fsm.extensions.context_management.kit.world import World, WorldConfig
from pictx_fsm.hosts.model import Call, Response, Text, Tools
from pictx_fsm.hosts.pi import entry_path
from pictx_fsm.session.jsonl import read_session
from pictx_fsm.testing.actions import filler
from pictx_fsm.testing.differential.real import DRIVER

JSON: TypeAlias = Any
WAIT_S = 30.0
FIXTURES = Path(__file__).resolve().parent / "fixtures" / "pi"
DRIVERS = (DRIVER, FIXTURES / "cm_driver.mjs")
"""Loaded after the extension: tree operations and reload (``driver.mjs``), planted faults
(``cm_driver.mjs``)."""
FIRST = FIXTURES / "cm_first.mjs"
"""Loaded before the extension: another extension whose handlers run first."""
SLOW_ADVANCE_MS = 400_000
"""How much later a ``slow`` reply comes (the scripted generator's 400 s, past the 300 s
deadline)."""


@frozen(kw_only=True)
class Say:
    """The user prompts ``text``; the model answers with ``replies`` (faux steps: ``{"text"}``
    or ``{"tools": [{"name", "args"}]}``, one per provider request of the run)."""

    text: str
    replies: tuple[Mapping[str, JSON], ...] = ({"text": "ok"},)


@frozen(kw_only=True)
class Notes:
    """The extension's next model request is answered ``kind`` (a scripted generator kind);
    a capacity failure's repair request ``repair`` (its default otherwise)."""

    kind: str = "valid"
    repair: str | None = None
    advance_ms: int = 0
    """The reply comes this much later (after a deadline)."""
    hold: str | None = None
    """The reply waits for :class:`Release` of this name (the model is still answering)."""
    repair_hold: str | None = None
    """The repair request's reply waits for :class:`Release` of this name."""


@frozen(kw_only=True)
class Release:
    """The held model request ``name`` is answered now."""

    name: str


@frozen(kw_only=True)
class SwitchModel:
    """The user switches to the faux model ``faux-<index + 1>`` (``model_select``)."""

    index: int = 1


@frozen(kw_only=True)
class Resume:
    """The user resumes the ``nth`` session file (creation order, from 1)."""

    nth: int


@frozen(kw_only=True)
class Drive:
    """A driver command (``pictx_fsm/hosts/pi/driver.mjs``, ``cm_driver.mjs``): ``drive-tree KIND N
    [summarize]``, ``drive-fork KIND N [at]``, ``drive-reload``, ``drive-disk fail|ok``,
    ``drive-veto on|returns|off``, ``drive-create fail|ok``, ``drive-parent hide|show``,
    ``drive-settled model``, ``drive-settled message TYPE TEXT``; ``cm_first.mjs``:
    ``drive-abort-compaction on|off``."""

    command: str


@frozen(kw_only=True)
class Command:
    """``/ctx-memory <args>``; ``replies`` answer the runs it starts (a takeover prompt);
    ``wait=False`` goes on before Pi answered it (a handoff waiting for its model)."""

    args: str
    replies: tuple[Mapping[str, JSON], ...] = ()
    wait: bool = True


@frozen(kw_only=True)
class Compact:
    """``/compact``."""


@frozen(kw_only=True)
class Advance:
    """``ms`` of time pass."""

    ms: int


Step: TypeAlias = Say | Notes | Command | Compact | Advance | Release | Drive | SwitchModel | Resume


@frozen(kw_only=True)
class CmScenario:
    steps: tuple[Step, ...]
    exercises: frozenset[str] = frozenset()
    """Transitions the scenario must fire on the real Pi."""
    window: int = 200_000
    """The faux model's context window (``fixtures/pi/faux-provider.mjs``)."""
    argv: tuple[str, ...] = ()
    """Pi's extra command-line flags (the extension's own: M3; ``--no-session``)."""
    reserve: int = 16_384
    """Pi's ``compaction.reserveTokens`` (its threshold compaction at W − reserve)."""
    keep_recent: int = 20_000
    """Pi's ``compaction.keepRecentTokens``."""
    auto_compaction: bool = True
    """Pi's ``compaction.enabled`` (its threshold compaction)."""
    exercises_on: Mapping[str, frozenset[str]] = field(factory=dict)
    """More transitions it must fire on one Pi version only (by version): usage differs
    between the versions' faux models, so a window fills at different turns."""

    def exercised(self, version: str) -> frozenset[str]:
        return self.exercises | self.exercises_on.get(version, frozenset())

    env: Mapping[str, str] = field(factory=dict)


@frozen(kw_only=True)
class Observed:
    """What one side did, comparably."""

    files: tuple[tuple[str, ...], ...]
    """Each session file's entry kinds, files in creation order."""
    decisions: tuple[tuple[str, tuple[str, ...]], ...]
    """Every step of the extension: its event and the transitions it fired, in order."""
    statuses: tuple[str, ...]
    """Every status-bar text shown, in order."""

    def fired(self) -> set[str]:
        return {t for _, fired in self.decisions for t in fired}


NO_BACKGROUND = "--context-memory-no-background"
SMALL = 64_000
"""A context window where an automatic handoff's preparation can cover the rest."""


def covered(label: str) -> tuple[Say | Advance, ...]:
    """A 50 000-character turn that background notes cover, then a minute (their cooldown)."""
    return (Say(text=filler(label, 50_000)), Advance(ms=61_000))


# -- the model session ---------------------------------------------------------------------------


READ_NOTES: dict[str, Any] = {"tools": [{"name": "context_notes", "args": {"action": "read"}}]}
"""A faux reply whose model reads the notes."""


def note_reply(key: str) -> dict[str, Any]:
    """A faux reply whose model saves an active goal note ``key``, sourced from the last user
    message."""
    args = {
        "action": "update",
        "key": key,
        "kind": "goal",
        "status": "active",
        "text": f"{key} as the user asked",
        "sources": [{"$source": ["user", -1]}],
    }
    return {"tools": [{"name": "context_notes", "args": args}]}


def _response(reply: Mapping[str, JSON]) -> Response:
    if "tools" in reply:
        calls = tuple(
            Call(name=t["name"], arguments=dict(t.get("args") or {})) for t in reply["tools"]
        )
        return Tools(calls=calls, text=str(reply.get("text", "")))
    return Text(text=str(reply["text"]))


class _Answers:
    """How the model session's scripted generator answered each request, in order — the faux
    model of the real Pi answers its requests the same, in the same order — and which jobs'
    replies are held back (:attr:`Notes.hold`): the model session does not deliver them."""

    def __init__(self, world: World) -> None:
        self.steps: list[dict[str, JSON]] = []
        self.pushed: list[Notes] = []
        """The Notes steps the generator's script holds, in its order."""
        self.jobs: dict[str, int] = {}
        repair_holds: dict[int, str] = {}
        generator = world.generator
        generate = generator.generate

        def recorded(request: Any) -> Any:
            hold = None
            if request.repair:
                kind = generator._repair
                hold = repair_holds.pop(request.job, None)
            elif generator.script:
                kind = generator.script[0][0]
                pushed = self.pushed.pop(0)
                hold = pushed.hold
                if pushed.repair_hold is not None:
                    repair_holds[request.job] = pushed.repair_hold
            else:
                kind = "valid"
            reply = generate(request)
            step: dict[str, JSON] = {"notes": "valid" if kind == "slow" else kind}
            if kind == "slow":
                step["advanceMs"] = SLOW_ADVANCE_MS
            if hold is not None:
                step["waitFor"] = hold
                self.jobs[hold] = request.job
            self.steps.append(step)
            return reply

        generator.generate = recorded  # type: ignore[method-assign]

    def push(self, world: World, step: Notes) -> None:
        self.pushed.append(step)
        world.generator.push("slow" if step.advance_ms else step.kind, repair=step.repair)

    @property
    def held(self) -> frozenset[int]:
        return frozenset(self.jobs.values())


def _drain(world: World, answers: _Answers, settled: list[str]) -> None:
    session, ext = world.session, world.extension
    session.run_until_idle()
    if settled:  # another extension, after this one's agent_settled, before its commands
        act, *args = settled.pop().split(maxsplit=2)
        if act == "model":
            session.set_model(world.model_info(1))
        elif act == "message":
            custom_type, text = args
            session.send_message(custom_type, text, display=True)
    for _ in range(200):
        if not ext.deliver(answers.held):
            return
        session.run_until_idle()


def _drive(world: World, command: str, settled: list[str]) -> None:
    """A driver command on the model session, as the driver fixtures do it on the real Pi
    (``settled`` holds what ``drive-settled`` armed for the next run's end)."""
    name, *args = command.split()
    session, ext = world.session, world.extension
    if name == "drive-settled":
        settled.append(" ".join(args))
    elif name == "drive-reload":
        session.reload_extensions()
    elif name == "drive-disk":
        ext.fail_appends = ext.files.fail_writes = args == ["fail"]
    elif name == "drive-veto":
        ext.veto_switches = args == ["on"]
        ext.veto_returns = args == ["returns"]
    elif name == "drive-parent":
        ext.hide_parents = args == ["hide"]
    elif name == "drive-abort-compaction":
        ext.abort_compactions = args == ["on"]
    elif name == "drive-create":
        ext.fail_create = args == ["fail"]
    else:
        navigate_or_fork(session, name, args)


def run_model(scenario: CmScenario, host: str) -> tuple[Observed, Plan]:
    """The scenario on the model session, and the plan the real run follows."""
    flags = set(scenario.argv)
    config = WorldConfig(
        context_window=scenario.window,
        max_tokens=16_384,
        reserve_tokens=scenario.reserve,
        keep_recent_tokens=scenario.keep_recent,
        saved="--no-session" not in flags,
        automatic_compaction=scenario.auto_compaction,
        host=host,
        usage="faux",
        no_background="--context-memory-no-background" in flags,
        no_auto_handoff="--context-memory-no-auto-handoff" in flags,
    )
    world = World(config)
    answers = _Answers(world)
    counts: list[int] = []
    settled: list[str] = []
    for step in scenario.steps:
        if isinstance(step, Say):
            world.session.provider.push(*(_response(r) for r in step.replies))
            world.session.prompt(step.text)
        elif isinstance(step, Notes):
            answers.push(world, step)
        elif isinstance(step, Command):
            world.session.provider.push(*(_response(r) for r in step.replies))
            world.session.command("ctx-memory", step.args)
        elif isinstance(step, Compact):
            world.session.compact()
        elif isinstance(step, Release) and step.name in answers.jobs:
            job = answers.jobs.pop(step.name)
            world.extension.deliver(answers.held - {job})
        elif isinstance(step, Drive):
            _drive(world, step.command, settled)
        elif isinstance(step, Advance):
            world.extension.pass_time(step.ms)
        elif isinstance(step, SwitchModel):
            world.session.set_model(world.model_info(step.index))
        elif isinstance(step, Resume):
            world.session.switch_session(list(world.session.files)[step.nth - 1])
        _drain(world, answers, settled if isinstance(step, Say) else [])
        counts.append(len(world.journal.steps))
    world.session.dispose()
    _drain(world, answers, [])
    files = tuple(
        tuple(entry_kind(e) for e in store.tree.entries if e.type not in SKIPPED_ENTRIES)
        for store in world.session.files.values()
        if config.saved  # Pi writes no file for a session it does not persist
    )
    decisions = tuple((d["event"], tuple(d["fired"])) for d in world.decisions())
    observed = Observed(
        files=files, decisions=decisions, statuses=tuple(world.extension.status_log)
    )
    return observed, Plan(counts=tuple(counts), notes=tuple(answers.steps))


@frozen(kw_only=True)
class Plan:
    """What the real run needs from the model run: the extension's step count after each
    scenario step, and how the model answered each of the extension's requests."""

    counts: tuple[int, ...]
    notes: tuple[Mapping[str, JSON], ...]


# -- the real Pi ---------------------------------------------------------------------------------


def faux_script(scenario: CmScenario, plan: Plan) -> dict[str, JSON]:
    """The faux model's script: the prompts' replies, and the extension's requests answered
    as the model session answered them."""
    replies = [
        r for step in scenario.steps if isinstance(step, Say | Command) for r in step.replies
    ]
    return {"replies": replies, "notes": list(plan.notes)}


def session_files(sessions: Path) -> list[Path]:
    """The session files Pi wrote, oldest first (not the extension's diagnostics logs)."""
    return sorted(p for p in sessions.glob("*.jsonl") if not p.name.endswith(".ctxlog.jsonl"))


def decision_lines(audit: Path) -> list[dict[str, JSON]]:
    """The extension's steps from every session's log, in the order they were taken."""
    lines = [
        json.loads(line)
        for log in audit.glob("*.context-management.jsonl")
        for line in log.read_text().splitlines()
        if line.strip()
    ]
    return sorted((r for r in lines if r["event"] != "bridge_connection"), key=lambda r: r["at"])


def run_real(
    tmp_path: Path, scenario: CmScenario, plan: Plan, awaited: frozenset[str] = frozenset()
) -> Observed:
    """The scenario on the real Pi (RPC mode), each step awaited as the plan says, then until
    the ``awaited`` transitions fired (what another extension's run sets off later)."""
    audit = tmp_path / "audit"
    audit.mkdir(exist_ok=True)
    clock = tmp_path / "clock-offset"
    clock.write_text("0")
    released = tmp_path / "released"
    released.mkdir(exist_ok=True)
    (tmp_path / "agent").mkdir(exist_ok=True)
    compaction = {
        "enabled": scenario.auto_compaction,
        "reserveTokens": scenario.reserve,
        "keepRecentTokens": scenario.keep_recent,
    }
    settings = {"compaction": compaction}
    (tmp_path / "agent" / "settings.json").write_text(json.dumps(settings))
    env = {
        "PICTX_FAUX_CONTEXT_WINDOW": str(scenario.window),
        "PICTX_FSM_CLOCK_OFFSET_FILE": str(clock),
        "PICTX_FAUX_RELEASE_DIR": str(released),
        **scenario.env,
    }
    pi = RpcPi(
        tmp_path,
        faux_script(scenario, plan),
        env,
        bridge=[FIRST, entry_path("context-management")],
        extensions=DRIVERS,
        argv=scenario.argv,
    )
    try:
        for number, (step, count) in enumerate(zip(scenario.steps, plan.counts, strict=True)):
            if isinstance(step, Release):
                (released / step.name).write_text("")
            else:
                _real_step(pi, f"s{number}", step, clock)
            _await_steps(audit, count)
        _await_fired(audit, awaited)
    finally:
        assert pi.close() == 0, pi.stderr()
    files = tuple(
        tuple(entry_kind(e) for e in read_session(path).entries if e.type not in SKIPPED_ENTRIES)
        for path in session_files(tmp_path / "sessions")
    )
    decisions = tuple((r["event"], tuple(r["fired"])) for r in decision_lines(audit))
    statuses = tuple(
        str(e.get("statusText") or "")
        for e in pi.seen
        if e.get("type") == "extension_ui_request" and e.get("method") == "setStatus"
    )
    return Observed(files=files, decisions=decisions, statuses=statuses)


def _real_step(pi: RpcPi, request_id: str, step: Step, clock: Path) -> None:
    if isinstance(step, Say):
        pi.send({"id": request_id, "type": "prompt", "message": step.text})
        pi.until("response", id=request_id)
        pi.until("agent_settled")
    elif isinstance(step, Command | Drive):
        text = f"/ctx-memory {step.args}" if isinstance(step, Command) else f"/{step.command}"
        pi.send({"id": request_id, "type": "prompt", "message": text})
        if not isinstance(step, Command) or step.wait:
            pi.until("response", id=request_id)
    elif isinstance(step, Compact):
        pi.send({"id": request_id, "type": "compact"})
        pi.until("response", id=request_id)
    elif isinstance(step, Advance):
        clock.write_text(str(int(clock.read_text() or 0) + step.ms))
    elif isinstance(step, SwitchModel):
        pi.send(
            {
                "id": request_id,
                "type": "set_model",
                "provider": "faux",
                "modelId": f"faux-{step.index + 1}",
            }
        )
        pi.until("response", id=request_id)
    elif isinstance(step, Resume):
        path = session_files(pi.tmp_path / "sessions")[step.nth - 1]
        pi.send({"id": request_id, "type": "switch_session", "sessionPath": str(path)})
        pi.until("response", id=request_id)


REAL_ONLY_DRIVES = frozenset({"drive-busy-target"})
"""Driver commands the model session has no counterpart of (``cm_driver.mjs``)."""


def run_real_only(tmp_path: Path, scenario: CmScenario, install: PiInstall) -> Observed:
    """A scenario with a driver command only the real Pi has (:data:`REAL_ONLY_DRIVES`):
    each step awaited as the model session, which runs the scenario without those commands,
    took it (what follows them differs), and the run ends once the scenario's transitions
    fired."""
    kept = [not (isinstance(s, Drive) and s.command in REAL_ONLY_DRIVES) for s in scenario.steps]
    model_steps = tuple(s for s, keep in zip(scenario.steps, kept, strict=True) if keep)
    plan = run_model(evolve(scenario, steps=model_steps), install.host_profile)[1]
    taken = iter(plan.counts)
    counts: list[int] = []
    for keep in kept:
        counts.append(next(taken) if keep else (counts[-1] if counts else 0))
    awaited = scenario.exercised(install.version)
    return run_real(tmp_path, scenario, evolve(plan, counts=tuple(counts)), awaited=awaited)


def _await_fired(audit: Path, transitions: frozenset[str]) -> None:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        fired = {t for r in decision_lines(audit) for t in r["fired"]}
        if transitions <= fired:
            return
        time.sleep(0.05)


def _await_steps(audit: Path, count: int) -> None:
    """Until the extension took ``count`` steps (what arrives later in Pi has arrived)."""
    deadline = time.monotonic() + WAIT_S
    while len(decision_lines(audit)) < count and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.2)  # anything more the step sets off shows, and the comparison sees it
