"""What an extension's kit tells the differential about itself: how its actions are realised
on the real Pi, its world on the model session, and how it draws runs.

The differential speaks verify's action language (:mod:`pictx_fsm.testing.actions` and the
kit's own actions). Each action the generator draws has a :class:`Category` — a reply for the
script, a prompt, a stop at a hook, the settling of a run, or an act — and a realisation
(:class:`Realised`): the RPC command that does it while Pi is idle, the driver act that does
it inside a hook handler mid-run, or both. The generic host actions are realised here
(:func:`realise_host_action`); a kit realises its own (:meth:`DifferentialKit.realise`).
"""

from __future__ import annotations

import abc
import enum
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, TypeAlias

from attrs import frozen

from pictx_fsm.testing.actions import (
    Abort,
    AdvanceTo,
    Compact,
    FollowUp,
    Fork,
    Navigate,
    Prompt,
    Reload,
    ReloadExtensions,
    Script,
    Settle,
    Steer,
    filler,
    response_of,
)
from pictx_fsm.testing.kit import World

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

    from pictx_fsm.hosts.pi.rpc import RpcPi
    from pictx_fsm.testing.differential.divergences import Divergence
    from pictx_fsm.testing.differential.observe import Decisions

__all__ = [
    "HOOKS",
    "Category",
    "DifferentialKit",
    "Realised",
    "host_category",
    "host_texts",
    "prompt",
    "queued_text",
    "realise_host_action",
    "settings_command",
]

JSON: TypeAlias = Any

HOOKS: tuple[str, ...] = (
    "before_agent_start",
    "agent_start",
    "turn_start",
    "message_start",
    "message_end",
    "context",
    "context_with_system",
    "tool_execution_start",
    "tool_call",
    "tool_result",
    "tool_execution_end",
    "turn_end",
    "agent_end",
    "agent_before_settle",
    "agent_settled",
)
"""The hooks a run may stop at (``AdvanceTo``) on both hosts: the driver counts them on Pi as
the model session counts its hook steps (``driver.mjs`` subscribes to each)."""


class Category(enum.Enum):
    """Where an action belongs in a differential run."""

    SCRIPT = "script"
    """A reply appended to the model's script (while idle)."""
    PROMPT = "prompt"
    """Starts a run (while idle)."""
    STOP = "stop"
    """Run on to a hook (``AdvanceTo``), then act there."""
    SETTLE = "settle"
    """Run until idle."""
    ACT = "act"
    """Only during a run (a steer, a follow-up, an abort): nothing while idle."""
    IDLE = "idle"
    """Only while idle (tree operations, ``/compact``, a command Pi runs only when idle)."""
    EITHER = "either"
    """While idle, or during a run at a stop (a command, a settings change, another
    extension's doing)."""


@frozen(kw_only=True)
class Realised:
    """How an action is done on the real Pi: the RPC command while idle, the driver act
    inside a hook handler during a run (``None``: not at that time)."""

    idle: Mapping[str, JSON] | None = None
    act: Mapping[str, JSON] | None = None


def prompt(text: str) -> dict[str, JSON]:
    """An RPC ``prompt`` (a ``/command`` runs that command)."""
    return {"type": "prompt", "message": text}


def queued_text(action: Steer | FollowUp, serial: int) -> str:
    """The text a steer or follow-up queues (as :func:`~pictx_fsm.testing.actions.apply_action`
    writes it)."""
    return filler(f"{action.KIND}-{serial}", action.chars)


def host_texts(action: Any, serial: int) -> tuple[str, ...]:
    """The texts a generic host action writes into the conversation."""
    if isinstance(action, Prompt):
        return (filler(f"prompt-{serial}", action.chars),)
    if isinstance(action, Steer | FollowUp):
        return (queued_text(action, serial),)
    if isinstance(action, Script):
        response = response_of(action, serial)
        text = getattr(response, "text", "")
        return (text,) if isinstance(text, str) and text else ()
    return ()


def host_category(action: Any) -> Category | None:
    """The category of a generic host action (``None``: the differential cannot realise it,
    or it is not a host action)."""
    if isinstance(action, Script):
        return Category.SCRIPT
    if isinstance(action, Prompt):
        return Category.PROMPT
    if isinstance(action, AdvanceTo):
        return Category.STOP if action.step in HOOKS else None
    if isinstance(action, Settle):
        return Category.SETTLE
    if isinstance(action, Steer | FollowUp | Abort):
        return Category.ACT
    if isinstance(action, Navigate | Fork | Reload | ReloadExtensions | Compact):
        return Category.IDLE
    return None


def realise_host_action(action: Any, serial: int) -> Realised:
    """The realisation of a generic host action of category ``ACT`` or ``IDLE``."""
    if isinstance(action, Steer | FollowUp):
        return Realised(act={"do": action.KIND, "text": queued_text(action, serial)})
    if isinstance(action, Abort):
        return Realised(act={"do": "abort"})
    if isinstance(action, Navigate):
        summarize = " summarize" if action.summarize else ""
        return Realised(idle=prompt(f"/drive-navigate {action.index} {action.anchor}{summarize}"))
    if isinstance(action, Fork):
        at = " at" if action.position == "at" else ""
        return Realised(idle=prompt(f"/drive-fork {action.index} {action.anchor}{at}"))
    if isinstance(action, Reload):
        return Realised(idle=prompt("/drive-resume"))
    if isinstance(action, ReloadExtensions):
        return Realised(idle=prompt("/drive-reload"))
    if isinstance(action, Compact):
        return Realised(idle={"type": "compact"})
    raise ValueError(f"no realisation of {type(action).__name__}")


def settings_command(content: Mapping[str, JSON]) -> Realised:
    """Pi's settings file rewritten, while idle or at a stop."""
    text = json.dumps(dict(content), separators=(",", ":"))
    return Realised(
        idle=prompt(f"/drive-settings {text}"), act={"do": "settings", "content": content}
    )


class DifferentialKit(abc.ABC):
    """One extension's part of the differential (``Kit.differential()`` returns it)."""

    name: ClassVar[str]
    """The extension's kit name (``pi-context``)."""

    @abc.abstractmethod
    def entries(self) -> Sequence[Path]:
        """The Pi extension files that load the extension under test (the bridge)."""

    @abc.abstractmethod
    def environment(self, config: Any, work: Path) -> Mapping[str, str]:
        """More environment for Pi and the extension (its profile, its audit directory)."""

    @abc.abstractmethod
    def settings(self, config: Any) -> Mapping[str, JSON]:
        """Pi's ``settings.json`` at the start of a run of ``config``."""

    @abc.abstractmethod
    def boundary(self) -> Mapping[str, JSON]:
        """The driver's ``boundary`` plan entry (see ``driver.mjs``)."""

    @abc.abstractmethod
    def world(self, config: Any, system_message: Mapping[str, JSON] | None) -> World:
        """The extension on the model session in ``config`` (whose host profile is the Pi
        version's), sending ``system_message`` as the real Pi did."""

    @abc.abstractmethod
    def session_of(self, world: Any) -> Any:
        """The world's model session."""

    @abc.abstractmethod
    def config_for(self, config: Any, host_profile: str) -> Any:
        """``config`` in the given host profile."""

    @abc.abstractmethod
    def runs(
        self, host_profile: str, max_actions: int
    ) -> SearchStrategy[tuple[Any, tuple[Any, ...]]]:
        """Generated runs for a Pi of ``host_profile``: a configuration and the actions."""

    # -- what an extension may add (the defaults serve pi-context) ------------------------------

    def audit_dir(self, work: Path) -> Path:
        """Where the real side's decisions are audited (one ``<session id>.audit.jsonl`` per
        session)."""
        return work / "audit"

    def category(self, action: Any) -> Category | None:
        """Where an action belongs (``None``: not realisable on the real Pi); an extension
        places its own actions and hands the host's here."""
        return host_category(action)

    def realise(self, action: Any, serial: int, config: Any) -> Realised:
        """How an action of category ``ACT``, ``IDLE`` or ``EITHER`` is done on the real Pi;
        an extension realises its own actions and hands the host's here."""
        return realise_host_action(action, serial)

    def texts(self, action: Any, serial: int) -> Sequence[str]:
        """The texts an action writes into the conversation (compared in provider requests);
        an extension names its own actions' and hands the host's here."""
        return host_texts(action, serial)

    def script_steps(self, action: Any, serial: int) -> Sequence[Mapping[str, JSON]] | None:
        """The scripted model's replies for an action of category ``SCRIPT`` that is not a
        :class:`~pictx_fsm.testing.actions.Script` (``None``: it is one)."""
        return None

    def real_decisions(self, work: Path, sessions: Sequence[str]) -> Decisions | None:
        """The real side's lifecycle decisions, sessions in ``sessions``' order (``None``:
        read from the bridge's audit in :meth:`audit_dir`)."""
        return None

    def model_decisions(self, world: Any) -> Decisions | None:
        """The model side's lifecycle decisions (``None``: the world's audits)."""
        return None

    def divergences(self) -> Mapping[str, Divergence]:
        """Divergences of the extension's own to plant in the model session (``--plant``),
        beside the generic ones (:mod:`.divergences`)."""
        return {}

    def after_operation(self, pi: RpcPi, work: Path) -> None:
        """Called on the real side once an operation settled: an extension whose own work
        arrives later in Pi (a model reply, an idle wait) waits for it here."""
        return None
