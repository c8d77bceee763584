"""Driven runs: the same scenario on the real Pi and on the model session, with acts placed
at exact hooks — a steer, a follow-up or an abort when a hook fires for the n-th time — and
tree operations between prompts (``/drive-tree``, ``/drive-fork``, ``/drive-reload``).

On the real Pi, the driver extension ``pictx_fsm/hosts/pi/driver.mjs`` (loaded after the bridge)
performs the acts inside its handler, so after pi-context's; on the model session the same
acts run right after the step that emitted the hook. Both sides report what the comparison
needs: every session file's entries (kind and parent), every agent request the provider
received (roles, and which known texts it carried), and every lifecycle decision.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from attrs import frozen
from real_pi import _pi, drive_rpc

from pictx_fsm.audit.store import hook_records
from pictx_fsm.extensions.pi_context.kit.world import World, WorldConfig
from pictx_fsm.hosts.model import ModelSession, Response
from pictx_fsm.session.entries import Entry, MessageEntry
from pictx_fsm.session.jsonl import read_session
from pictx_fsm.testing.differential.observe import (
    Decisions,
    Request,
    Shape,
    decisions,
    entry_kind,
    labelled,
    leading_text,
    shape,
)
from pictx_fsm.testing.differential.real import DRIVER

__all__ = ["DRIVER", "shape"]


@frozen(kw_only=True)
class Act:
    """Do ``do`` (``steer``, ``follow_up``, ``abort``) when ``on`` fires for the ``nth`` time
    (``on`` is a hook name, or ``message_start:<role>``)."""

    on: str
    nth: int = 1
    do: str
    text: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"on": self.on, "nth": self.nth, "do": self.do, "text": self.text}


@frozen(kw_only=True)
class Observed:
    """What one side did, in comparable form."""

    files: tuple[Shape, ...]
    requests: tuple[Request, ...]
    decisions: Decisions
    summaries: int
    """Summarization requests (compaction, branch summaries) the provider received."""
    aborted: tuple[str, ...]
    """The text each reply aborted while streaming kept, in file order."""
    first_prompt: int | None
    """The prompt tokens the first reply's ``usage`` reports (input + cache read + write)."""

    @property
    def fired(self) -> set[str]:
        return {transition for _, fired in self.decisions for transition in fired}


COMPARED = ("files", "requests", "decisions", "summaries", "aborted", "first_prompt")
"""Everything a driven run compares; a listed deliberate difference names one of them."""


def differences(model: Observed, real: Observed) -> frozenset[str]:
    """Where the model session and the real Pi disagree."""
    return frozenset(name for name in COMPARED if getattr(model, name) != getattr(real, name))


def _soft(files: Iterable[Sequence[Entry]]) -> tuple[tuple[str, ...], int | None]:
    """The aborted texts and the first reply's prompt tokens of these files."""
    replies = [
        e.message.raw
        for entries in files
        for e in entries
        if isinstance(e, MessageEntry) and e.message.role == "assistant"
    ]
    aborted = tuple(leading_text(m) for m in replies if m.get("stopReason") == "aborted")
    usage = replies[0].get("usage") if replies else None
    if not isinstance(usage, Mapping):
        return aborted, None
    return aborted, sum(int(usage.get(k) or 0) for k in ("input", "cacheRead", "cacheWrite"))


# -- the real Pi -------------------------------------------------------------------------------


def run_driven(
    tmp_path: Path,
    script: Sequence[dict[str, Any]],
    commands: Sequence[str],
    acts: Sequence[Act],
    known: frozenset[str],
    tokens_per_second: int | None = None,
) -> Observed:
    """The real Pi in RPC mode with the driver: each command (a prompt or a ``/command``) is
    awaited before the next; then stdin closes and Pi shuts down. ``tokens_per_second``
    slows the faux stream, so that an abort while streaming cuts the reply."""
    command, env = _pi(tmp_path, script)
    plan, log, requests = (tmp_path / name for name in ("plan.json", "driver.log", "requests"))
    plan.write_text(json.dumps({"acts": [act.to_json() for act in acts]}))
    env |= {
        "PICTX_DRIVER_PLAN_FILE": str(plan),
        "PICTX_DRIVER_LOG_FILE": str(log),
        "PICTX_FAUX_REQUEST_LOG": str(requests),
        "PICTX_FAUX_TOKENS_PER_SECOND": str(tokens_per_second or ""),
    }
    prompts = [{"type": "prompt", "message": text} for text in commands]
    drive_rpc(tmp_path, [*command, "-e", str(DRIVER)], env, prompts)
    return _observed_real(tmp_path, log, requests, known)


def _observed_real(tmp_path: Path, log: Path, requests: Path, known: frozenset[str]) -> Observed:
    order: list[str] = []
    for line in log.read_text().splitlines():
        session_id = json.loads(line)["sessionId"]
        if session_id not in order:
            order.append(session_id)
    files = {p.name.rsplit("_", 1)[-1].removesuffix(".jsonl"): p for p in _sessions(tmp_path)}
    logs = tmp_path / "audit"
    records = [
        record
        for session_id in order
        if (logs / f"{session_id}.audit.jsonl").exists()
        for record in hook_records(logs / f"{session_id}.audit.jsonl")
    ]
    sent = [json.loads(line) for line in requests.read_text().splitlines()]
    entries = [read_session(files[s]).entries for s in order if s in files]
    aborted, first_prompt = _soft(entries)
    return Observed(
        files=tuple(shape(file) for file in entries),
        requests=tuple(labelled(r["messages"], known) for r in sent if not r["summary"]),
        decisions=decisions(records),
        summaries=sum(1 for r in sent if r["summary"]),
        aborted=aborted,
        first_prompt=first_prompt,
    )


def _sessions(tmp_path: Path) -> list[Path]:
    return list((tmp_path / "sessions").glob("*.jsonl"))


# -- the model session -------------------------------------------------------------------------


def drive_model(
    config: WorldConfig,
    responses: Sequence[Response],
    commands: Sequence[str],
    acts: Sequence[Act],
    known: frozenset[str],
) -> tuple[World, Observed]:
    """The same commands and acts on the model session; ``dispose`` at the end, as Pi does
    when RPC's stdin closes."""
    world = World(config)
    session = world.session
    session.provider.push(*responses)
    counts: Counter[str] = Counter()
    for text in commands:
        if text.startswith("/drive-"):
            _operate(session, text)
        elif text.startswith("/"):
            name, _, args = text[1:].partition(" ")
            session.command(name, args)
        else:
            session.prompt(text)
            _run(session, acts, counts)
    session.dispose()
    requests = tuple(
        labelled(({"role": m.get("role"), "text": leading_text(m)} for m in r.messages), known)
        for r in session.log.requests
    )
    records = [record for audit in world.audits for record in audit.records]
    entries = [store.tree.entries for store in session.files.values()]
    aborted, first_prompt = _soft(entries)
    observed = Observed(
        files=tuple(shape(file) for file in entries),
        requests=requests,
        decisions=decisions(records),
        summaries=0,  # the model writes summaries without a request (docs/model-session.md)
        aborted=aborted,
        first_prompt=first_prompt,
    )
    return world, observed


def _run(session: ModelSession, acts: Sequence[Act], counts: Counter[str]) -> None:
    while (step := session.step()) is not None:
        if step.kind != "hook":
            continue
        key = step.name
        if key == "message_start":
            key = f"{key}:{session.log.events[-1].detail.get('role')}"
        counts[key] += 1
        for act in acts:
            if act.on == key and act.nth == counts[key]:
                _act(session, act)


def _act(session: ModelSession, act: Act) -> None:
    if act.do == "abort":
        session.abort()
    elif act.do == "steer":
        session.steer(act.text)
    else:
        session.follow_up(act.text)


def _operate(session: ModelSession, text: str) -> None:
    name, *args = text[1:].split(" ")
    if name == "drive-reload":
        session.reload_extensions()
        return
    navigate_or_fork(session, name, args)


def navigate_or_fork(session: ModelSession, name: str, args: list[str]) -> None:
    """``drive-tree KIND N [summarize]`` or ``drive-fork KIND N [at]`` on the model session,
    at the N-th entry of KIND (counted from the end when N is negative), as the driver does it
    in Pi."""
    kind, nth = args[0], int(args[1])
    matching = [e for e in session.entries if entry_kind(e) == kind]
    target = str((matching[nth] if nth < 0 else matching[nth - 1]).id)
    if name == "drive-tree":
        session.navigate(target, summarize=args[2:] == ["summarize"])
    else:
        session.fork(target, "at" if args[2:] == ["at"] else "before")


# -- the listed deliberate differences ---------------------------------------------------------

DOC = Path(__file__).resolve().parents[1] / "docs" / "model-session.md"
TABLE_MARK = "<!-- differences observed by tests/test_pi_driven.py -->"
EVERY = "every driven scenario"


@frozen(kw_only=True)
class Listed:
    """One row of the documented differences: which compared dimension differs, on which Pi
    versions, in which driven scenarios (``None``: in every one)."""

    compared: str
    versions: frozenset[str]
    shown_by: frozenset[str] | None

    def expected(self, scenario: str, version: str) -> bool:
        shown = self.shown_by is None or scenario in self.shown_by
        return version in self.versions and shown


def listed_differences(text: str) -> tuple[Listed, ...]:
    """The table after :data:`TABLE_MARK` in ``docs/model-session.md``: a header naming the
    Pi versions, then one row per difference (``| what | `dimension` | yes/no… | shown by |``)."""
    lines = text.split(TABLE_MARK, 1)[1].strip().splitlines()
    rows = [_cells(line) for line in lines if line.startswith("|")]
    if len(rows) < 2:
        raise ValueError(f"{DOC.name}: the differences table after {TABLE_MARK} is missing")
    versions = rows[0][2:-1]
    out = []
    for row in rows[2:]:
        compared, marks, shown = row[1].strip("`"), row[2:-1], row[-1]
        out.append(
            Listed(
                compared=compared,
                versions=frozenset(
                    v for v, mark in zip(versions, marks, strict=True) if mark == "yes"
                ),
                shown_by=None
                if shown == EVERY
                else frozenset(s.strip("` ") for s in shown.split(",")),
            )
        )
    return tuple(out)


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def expected_differences(listed: Iterable[Listed], scenario: str, version: str) -> frozenset[str]:
    return frozenset(row.compared for row in listed if row.expected(scenario, version))
