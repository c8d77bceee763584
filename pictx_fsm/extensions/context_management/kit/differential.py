"""pi-context-management's part of the differential: the bridge on the real Pi, the world on
the model session, how its own actions are realised, and the runs the generator draws
(:mod:`.differential_runs`).

Its notes calls are the model's: a :class:`~.actions.CmTool` is a scripted reply calling the
tool (a cited message named ``{"$source": [role, n]}``, resolved when the request is answered
on both hosts), then a closing text. Its own model requests (background notes, checkpoints,
handoff preparation) are answered on the real Pi by the model session's scripted generator
(:mod:`.notes_answer`, through the scripted model's ``$PICTX_FAUX_SIDE``), ``valid`` as the
model session's generator answers with an empty script.

**Clocks.** The extension server on the real Pi reads the wall clock plus the offset in
``$PICTX_FSM_CLOCK_OFFSET_FILE``; the model session's clock is a manual one, moved a tick per
reading. A :class:`~.actions.Wait` moves both by the same amount (``/drive-clock``,
``clock-driver.mjs``; :meth:`~.world._Extension.pass_time`). Between waits the real clock moves
by the run's own wall time, the model's by its ticks: both far below the shortest time line the
policy compares (a minute's cooldown), and every wait drawn is past the line it aims at by at
least a second, so both hosts compare every line alike.

**Rest.** On Pi, what the extension owes arrives later (a background job's reply, an
automatic handoff's idle wait, preparation and takeover run): the real side waits after each
operation until the extension's decisions stop growing (:meth:`after_operation`); the model
session's settle delivers what the host owes until nothing is left (``Rest``).
"""

from __future__ import annotations

import functools
import json
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TypeAlias

import attrs

from pictx_fsm.extensions.context_management.kit import actions as cm
from pictx_fsm.extensions.context_management.kit.world import World, WorldConfig
from pictx_fsm.extensions.context_management.texts import GENERATION_POLICY_TEXT
from pictx_fsm.hosts.model import Call, ModelSession, Text, Tools
from pictx_fsm.hosts.pi import entry_path
from pictx_fsm.hosts.pi.served_cm import AUDIT_DIR_ENV, CLOCK_OFFSET_ENV, EXTENSION
from pictx_fsm.testing import actions as shared
from pictx_fsm.testing.differential.divergences import Divergence, in_every_store
from pictx_fsm.testing.differential.kit import Category, DifferentialKit, Realised, prompt

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

    from pictx_fsm.hosts.pi.rpc import RpcPi
    from pictx_fsm.testing.differential.observe import Decisions

__all__ = [
    "CLOCK_DRIVER",
    "DIFFERENTIAL",
    "ENTRY_AT_THE_LEAFS_PARENT",
    "ContextManagementDifferential",
    "DifferentialWorld",
    "notes_reply",
]

JSON: TypeAlias = Any
CLOCK_DRIVER = Path(__file__).resolve().with_name("clock-driver.mjs")
SIDE_MARKER = GENERATION_POLICY_TEXT[: GENERATION_POLICY_TEXT.index(".") + 1]
"""What the system prompt of the extension's own model requests holds (its first sentence)."""
QUIET_S = 0.3
"""How long the extension's decisions must stay unchanged, either side of Pi's settling,
before an operation counts as done on the real Pi."""
REST_S = 60.0
"""At most this long to wait for it."""
WAITING: Mapping[str, frozenset[str]] = {
    "background_notes": frozenset({"running"}),
    "checkpoint": frozenset({"assembling", "generating", "repairing", "validating"}),
    "auto_handoff": frozenset({"pending", "preparing", "switching"}),
    "handoff": frozenset(
        {
            "filling_notes",
            "packaging",
            "saving",
            "creating",
            "switching",
            "initializing",
            "takeover",
            "returning",
        }
    ),
}
"""The machines' states in which the extension waits for Pi (a model reply, an idle wait, a
session switch, a takeover prompt): a session left in one has not come to rest."""
SESSION_END = "SessionEnding"
RETRY_DELAY_MS = 1
_SOURCES: Mapping[str, tuple[str, int] | None] = {
    "user": ("user", -1),
    "assistant": ("assistant", -1),
    "missing": None,
}
"""Which message a note or a read cites: the latest of a role on the branch when the request
is answered (a placeholder id for ``missing``)."""
MISSING_SOURCE = "0000dead"
NOTES_ANSWER = "pictx_fsm.extensions.context_management.kit.notes_answer"
"""The module that answers the extension's own model requests on the real Pi."""


def _source(action: cm.CmTool) -> JSON:
    picked = _SOURCES[action.source]
    if picked is None:
        return MISSING_SOURCE
    role, latest = picked
    return {cm.SOURCE_REF: [role, latest - action.key % 2]}


def _arguments(action: cm.CmTool) -> tuple[str, dict[str, JSON]]:
    """The tool call of ``action`` (its ``cut`` left out: see docs/model-session.md)."""
    from pictx_fsm.extensions.context_management.texts import (
        NOTES_TOOL,
        READ_TOOL,
        SEARCH_TOOL,
        STATUS_TOOL,
    )

    scope = {"scope": "handoff"} if action.handoff else {}
    if action.tool == "notes_update":
        return NOTES_TOOL, {
            "action": "update",
            "key": f"k{action.key}",
            "kind": action.kind,
            "status": action.status,
            "text": shared.filler(f"note-{action.key}", action.chars),
            "sources": [_source(action)],
        }
    if action.tool == "notes_read":
        return NOTES_TOOL, {"action": "read"}
    if action.tool == "search":
        page = {} if action.max_bytes is None else {"maxBytes": action.max_bytes}
        return SEARCH_TOOL, {"query": "prompt-", **scope, **page}
    if action.tool == "read":
        return READ_TOOL, {"sourceId": _source(action), "offset": 0, **scope}
    return STATUS_TOOL, {}


def notes_reply(action: cm.CmTool, serial: int) -> tuple[Tools, Text]:
    """The model's two replies for ``action``: the tool calls, then a closing text."""
    calls = [_arguments(action)]
    if action.then is not None:
        calls.append(_arguments(attrs.evolve(action, tool=action.then, then=None)))
    tools = Tools(
        calls=tuple(
            Call(name=name, arguments=args, id=f"cm_{serial}_{n}")
            for n, (name, args) in enumerate(calls)
        ),
        text="",
    )
    return tools, cm.closing_text(serial)


class DifferentialWorld(World):
    """The extension's world as the differential runs it: notes calls cite messages as the
    real Pi's scripted model resolves them, and a settle rests (everything the host owes is
    delivered, as Pi delivers it by itself)."""

    def _apply(self, action: Any, serial: int) -> bool:
        if isinstance(action, cm.CmTool):
            self.session.provider.push(*notes_reply(action, serial))
            return True
        if isinstance(action, shared.Settle):
            self._rest(cm.Rest().rounds)
            return True
        return super()._apply(action, serial)


class ContextManagementDifferential(DifferentialKit):
    name: ClassVar[str] = "context-management"

    def entries(self) -> Sequence[Path]:
        return (entry_path(EXTENSION), CLOCK_DRIVER)

    def environment(self, config: WorldConfig, work: Path) -> Mapping[str, str]:
        audit = self.audit_dir(work)
        audit.mkdir(parents=True, exist_ok=True)
        clock = work / "clock-offset"
        clock.write_text("0")
        side = {
            "marker": SIDE_MARKER,
            "argv": [sys.executable, "-m", NOTES_ANSWER],
        }
        return {
            AUDIT_DIR_ENV: str(audit),
            CLOCK_OFFSET_ENV: str(clock),
            "PICTX_FAUX_SIDE": json.dumps(side),
        }

    def settings(self, config: WorldConfig) -> Mapping[str, JSON]:
        return {
            "compaction": {
                "enabled": config.automatic_compaction,
                "reserveTokens": config.reserve_tokens,
                "keepRecentTokens": config.keep_recent_tokens,
            },
            "retry": {"baseDelayMs": RETRY_DELAY_MS},
        }

    def boundary(self) -> Mapping[str, JSON]:
        return {}

    def category(self, action: Any) -> Category | None:
        if isinstance(action, cm.CmTool):
            return Category.SCRIPT
        if isinstance(action, cm.Rest):
            return Category.SETTLE
        if isinstance(action, cm.Wait | cm.CtxMemory):
            return Category.IDLE
        if isinstance(action, shared.Steer | shared.FollowUp | shared.Abort | shared.AdvanceTo):
            return None  # not drawn: see docs/model-session.md
        return super().category(action)

    def realise(self, action: Any, serial: int, config: WorldConfig) -> Realised:
        if isinstance(action, cm.Wait):
            return Realised(idle=prompt(f"/drive-clock {action.ms}"))
        if isinstance(action, cm.CtxMemory):
            return Realised(idle=prompt(f"/ctx-memory {action.args}".rstrip()))
        return super().realise(action, serial, config)

    def script_steps(self, action: Any, serial: int) -> Sequence[Mapping[str, JSON]] | None:
        if not isinstance(action, cm.CmTool):
            return None
        from pictx_fsm.testing.differential.runs import reply_step

        return tuple(reply_step(reply) for reply in notes_reply(action, serial))

    def texts(self, action: Any, serial: int) -> Sequence[str]:
        if isinstance(action, cm.CmTool):
            return (cm.closing_text(serial).text,)
        return super().texts(action, serial)

    def world(
        self, config: WorldConfig, system_message: Mapping[str, JSON] | None
    ) -> DifferentialWorld:
        return DifferentialWorld(config, system_message=system_message)

    def session_of(self, world: World) -> ModelSession:
        return world.session

    def config_for(self, config: WorldConfig, host_profile: str) -> WorldConfig:
        """Alone, saved, with every behaviour on (its flags are Pi command-line flags the
        differential does not pass), in the Pi version's profile with the faux model's
        usage."""
        return attrs.evolve(
            config,
            host=host_profile,
            usage="faux",
            companions=(),
            saved=True,
            child=False,
            no_background=False,
            no_auto_handoff=False,
            fault=None,
        )

    def real_decisions(self, work: Path, sessions: Sequence[str]) -> Decisions:
        return tuple((str(r["event"]), tuple(r["fired"])) for r in _decision_lines(work))

    def model_decisions(self, world: World) -> Decisions:
        return tuple((str(d["event"]), tuple(d["fired"])) for d in world.decisions())

    def divergences(self) -> Mapping[str, Divergence]:
        return {d.name: d for d in (ENTRY_AT_THE_LEAFS_PARENT,)}

    def after_operation(self, pi: RpcPi, work: Path) -> None:
        """Until the decisions stop growing across Pi's settling and no live session waits
        for Pi (:data:`WAITING`), at most :data:`REST_S`."""
        deadline = time.monotonic() + REST_S
        targets = _targets()
        while time.monotonic() < deadline:
            before = len(_decision_lines(work))
            time.sleep(QUIET_S)
            pi.settle()
            time.sleep(QUIET_S)
            lines = _decision_lines(work)
            if len(lines) == before and not _waiting(lines, targets):
                return

    def runs(
        self, host_profile: str, max_actions: int
    ) -> SearchStrategy[tuple[Any, tuple[Any, ...]]]:
        from pictx_fsm.extensions.context_management.kit.differential_runs import (
            differential_runs,
        )

        return differential_runs(host_profile, max_actions)


@functools.cache
def _targets() -> Mapping[str, tuple[str, str]]:
    """Each transition id's machine and target state."""
    from pictx_fsm.extensions.context_management.machines import load_machines

    return {
        t.id: (name, str(t.target))
        for name, engine in load_machines().machines.items()
        for t in engine.spec.transitions
    }


def _waiting(lines: Sequence[Mapping[str, JSON]], targets: Mapping[str, tuple[str, str]]) -> bool:
    """Whether a session that has not ended is left in a state that waits for Pi, or every
    session has ended (Pi is switching to the next one)."""
    states: dict[tuple[str, str], str] = {}
    live: dict[str, bool] = {}
    for line in lines:
        session = str(line["log"])
        live[session] = line["event"] != SESSION_END
        for fired in line["fired"]:
            machine, target = targets.get(fired, ("", ""))
            states[session, machine] = target
    if live and not any(live.values()):
        return True
    return any(
        state in WAITING.get(machine, ())
        for (session, machine), state in states.items()
        if live[session]
    )


def _entry_at_the_leafs_parent(session: ModelSession) -> None:
    """Every extension entry (a notes commit, a checkpoint's record, a handoff's package) is
    appended at the leaf's parent instead of the leaf, in every session file."""

    def plant_store() -> None:
        store = session._host.store
        custom = store.custom

        def misplaced(*args: Any, **kwargs: Any) -> Any:
            leaf = store.tree.node(store.leaf_id).entry if store.leaf_id else None
            if leaf is not None:
                store.navigate(leaf.parent_id)
            return custom(*args, **kwargs)

        store.custom = misplaced  # type: ignore[method-assign]

    in_every_store(session, plant_store)


ENTRY_AT_THE_LEAFS_PARENT = Divergence(
    name="entry-at-the-leafs-parent",
    description="an extension's entry is appended at the leaf's parent",
    plant=_entry_at_the_leafs_parent,
)


def _decision_lines(work: Path) -> list[dict[str, JSON]]:
    """The extension's steps from every session's decision log, in the order taken (the
    bridge's own connection steps left out: the model session has no bridge)."""
    lines = [
        {**json.loads(line), "log": log.name}
        for log in (work / "audit").glob(f"*.{EXTENSION}.jsonl")
        for line in log.read_text().splitlines()
        if line.strip()
    ]
    return sorted((r for r in lines if r["event"] != "bridge_connection"), key=lambda r: r["at"])


DIFFERENTIAL = ContextManagementDifferential()
