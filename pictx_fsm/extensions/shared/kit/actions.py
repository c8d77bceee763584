"""The family's actions beside the host actions, written once for pi-context and notesoup:
the extension's toggle command, automatic compaction switched mid-run, and the noise
extensions' world actions (:mod:`.noise`); an extension adds its own (its reset command,
its world's own actions) with :func:`action_types`."""

from __future__ import annotations

from typing import Any, ClassVar, Final

from attrs import frozen

from pictx_fsm.extensions.shared.kit.noise import HideBoot, QueueAtSettle, VoidNextBoundary
from pictx_fsm.hosts.model import ModelSession
from pictx_fsm.hosts.model.errors import ModelHostError
from pictx_fsm.testing import actions as host

__all__ = [
    "WORLD_ACTIONS",
    "HideBoot",
    "QueueAtSettle",
    "SetAutomatic",
    "Toggle",
    "VoidNextBoundary",
    "action_types",
    "run_command",
]


@frozen(kw_only=True)
class Toggle:
    """The extension's on/off command with its argument (``/pi-context <arg>``,
    ``/notesoup <arg>``)."""

    KIND: ClassVar[str] = "toggle"
    arg: str


@frozen(kw_only=True)
class SetAutomatic:
    """The user switches ``compaction.enabled`` in the settings the extension reads live on
    every decision (pi-context R40, R41; notesoup S50, S119): automatic resets on or off,
    possibly mid-run."""

    KIND: ClassVar[str] = "set_automatic"
    enabled: bool


WORLD_ACTIONS: Final[tuple[type[Any], ...]] = (
    VoidNextBoundary,
    HideBoot,
    QueueAtSettle,
    SetAutomatic,
)
"""The family's actions on the world around the session (other extensions, settings): its
world applies them, not the session."""


def action_types(*own: type[Any]) -> dict[str, type[Any]]:
    """Every action a family world reads from a trace, by kind: the host actions, the
    family's and the extension's ``own``."""
    family: tuple[type[Any], ...] = (*own, Toggle, *WORLD_ACTIONS)
    table = {cls.KIND: cls for cls in family}
    if len(table) != len(family) or set(table) & set(host.HOST_ACTION_TYPES):
        raise ValueError("two actions share a kind")
    return {**host.HOST_ACTION_TYPES, **table}


def run_command(session: ModelSession, name: str, arg: str = "") -> bool:
    """The user runs the extension's command ``name``; ``False`` when the host refuses it."""
    try:
        session.command(name, arg)
    except ModelHostError:
        return False
    return True
