"""A differential run on the real Pi: the plan carried out through RPC, the scripted model
and the driver, and what Pi did read back in comparable form.

Pi runs in a fresh work directory per run (workspace, sessions, agent directory with its
settings, notes home, audit logs, the script and the driver's plan), offline, with the
scripted model first, the driver's early half, the extension under test, then the driver. Each
command is awaited and Pi settled before the next; a stop's acts the run never reached are
done once it settled, as the model session does them then.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypeAlias

from attrs import frozen

from pictx_fsm.audit.store import hook_records
from pictx_fsm.hosts.pi.offline import PiProgram, offline_environment
from pictx_fsm.hosts.pi.rpc import RpcPi
from pictx_fsm.session.entries import Entry, MessageEntry
from pictx_fsm.session.jsonl import read_session
from pictx_fsm.testing.differential.kit import DifferentialKit, prompt
from pictx_fsm.testing.differential.observe import (
    Observed,
    decisions,
    known_texts,
    labelled,
    shape,
)
from pictx_fsm.testing.differential.runs import Plan, Release, Run

__all__ = ["DRIVER", "EARLY_DRIVER", "SCRIPTED_MODEL", "RealRun", "run_real"]

JSON: TypeAlias = Any
PI_HOST = Path(__file__).resolve().parents[2] / "hosts" / "pi"
DRIVER = PI_HOST / "driver.mjs"
EARLY_DRIVER = PI_HOST / "early-driver.mjs"
SCRIPTED_MODEL = PI_HOST / "scripted-model.mjs"
NO_EPISODE = "-"


@frozen(kw_only=True)
class RealRun:
    observed: Observed
    system_message: Mapping[str, JSON] | None
    """The first system message Pi sent (the model session sends the same)."""
    estimates: tuple[int, ...]
    """Pi's estimate of each agent request (what the scripted model's overflow check read)."""


def run_real(
    kit: DifferentialKit, program: PiProgram, config: Any, plan: Plan, work: Path
) -> RealRun:
    """Carry out ``plan`` on the Pi of ``program`` in the fresh directory ``work``."""
    for name in ("ws", "sessions", "agent", "notes"):
        (work / name).mkdir(parents=True, exist_ok=True)
    (work / "agent" / "settings.json").write_text(json.dumps(dict(kit.settings(config))))
    script, driver_plan = work / "script.json", work / "plan.json"
    script.write_text("[]")
    driver_plan.write_text(json.dumps(plan.driver_plan(kit.boundary())))
    files = _Files(work)
    env = program.environment(
        offline_environment(
            work,
            script,
            PICTX_FSM_PYTHON=sys.executable,
            PICTX_DRIVER_PLAN_FILE=str(driver_plan),
            PICTX_DRIVER_LOG_FILE=str(files.stops),
            PICTX_DRIVER_SESSIONS_FILE=str(files.sessions),
            PICTX_FAUX_REQUEST_LOG=str(files.requests),
            **_model_size(config),
            **kit.environment(config, work),
        )
    )
    argv = program.command(
        [SCRIPTED_MODEL, EARLY_DRIVER, *kit.entries(), DRIVER], work / "sessions"
    )
    replies: list[Mapping[str, JSON]] = []
    with RpcPi(argv, cwd=work / "ws", env=env) as pi:
        pi.on_request = lambda request: _command(pi, request)
        for operation in plan.operations:
            if isinstance(operation, Release):
                replies.append(operation.step)
                continue
            script.write_text(json.dumps(replies))
            _carry_out(pi, operation, files)
            kit.after_operation(pi, work)
    with (work / "events.jsonl").open("w") as out:  # Pi's own account, for a reader of a run
        out.writelines(json.dumps(event) + "\n" for event in pi.events)
    return _observed(kit, work, files, plan)


def _model_size(config: Any) -> dict[str, str]:
    return {
        "PICTX_FAUX_CONTEXT_WINDOW": str(config.context_window),
        "PICTX_FAUX_MAX_TOKENS": str(config.max_tokens),
    }


def _command(pi: RpcPi, request: Mapping[str, JSON]) -> None:
    """The driver waits in a hook for this command to run (a command mid-run)."""
    pi.call(prompt(str(request["command"])))


def _carry_out(pi: RpcPi, run: Run, files: _Files) -> None:
    refusable = run.rpc.get("type") == "compact"  # nothing to compact, or cancelled
    if run.episode is None:
        pi.run(run.rpc, refusable=refusable)
        return
    pi.call(prompt(f"/drive-episode {run.episode.key}"))
    pi.run(run.rpc)
    reached = files.stops_reached(run.episode.key)
    pi.call(prompt(f"/drive-episode {NO_EPISODE}"))
    for stop in run.episode.stops[reached:]:
        for act in stop.acts:
            if act.idle is not None:
                pi.run(act.idle)


class _Files:
    def __init__(self, work: Path) -> None:
        self.work = work
        self.stops = work / "driver-stops.jsonl"
        self.sessions = work / "driver-sessions.jsonl"
        self.requests = work / "requests.jsonl"

    def stops_reached(self, episode: str) -> int:
        return sum(1 for line in _lines(self.stops) if line.get("episode") == episode)

    def session_order(self) -> list[str]:
        order: list[str] = []
        for line in _lines(self.sessions):
            session_id = str(line["sessionId"])
            if session_id not in order:
                order.append(session_id)
        return order


def _lines(path: Path) -> list[dict[str, JSON]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _observed(kit: DifferentialKit, work: Path, files: _Files, plan: Plan) -> RealRun:
    order = files.session_order()
    # By the header's id: a resume of a file Pi had not written yet starts a new session at
    # the same path.
    files_read = [read_session(path) for path in sorted((work / "sessions").glob("*.jsonl"))]
    by_id = {f.header.id: f.entries for f in files_read if f.header is not None}
    entries = [by_id[s] for s in order if s in by_id]
    decided = kit.real_decisions(work, order)
    if decided is None:
        audits = kit.audit_dir(work)
        records = [
            record
            for session_id in order
            if (audits / f"{session_id}.audit.jsonl").exists()
            for record in hook_records(audits / f"{session_id}.audit.jsonl")
        ]
        decided = decisions(records)
    sent = _lines(files.requests)
    known = known_texts(plan.known)
    observed = Observed(
        files=tuple(shape(file) for file in entries),
        requests=tuple(labelled(r["messages"], known) for r in sent if not r["summary"]),
        decisions=decided,
    )
    estimates = tuple(int(r["tokens"]) for r in sent if not r["summary"])
    return RealRun(observed=observed, system_message=_system(entries), estimates=estimates)


def _system(files: Sequence[Sequence[Entry]]) -> Mapping[str, JSON] | None:
    for entries in files:
        for entry in entries:
            if isinstance(entry, MessageEntry) and entry.message.role == "system":
                return dict(entry.message.raw)
    return None
