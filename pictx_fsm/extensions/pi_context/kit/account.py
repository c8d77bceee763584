"""The oracle's account of one runtime, kept from its audit records: what the user switched
(``/pi-context on|off``, R60), whether the lifecycle is active (R19), whether a reset is
requested (R16, R20, R37), and where the session stood at each hook
(:class:`~.observed.ObservedRuntime`, :func:`place_of`).

The promised-outcome and exact-content invariants follow every runtime with one account
(:class:`Following`); none of it comes from the runtime's state.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from attrs import define, field

from pictx_fsm.extensions.pi_context.kit.oracle import Place, place_at
from pictx_fsm.extensions.pi_context.kit.view import WorldView
from pictx_fsm.extensions.pi_context.kit.walks import PerRecord
from pictx_fsm.extensions.pi_context.texts import (
    PI_CONTEXT_COMMAND,
    WIPE_MEMORY_COMMAND,
    WIPE_MEMORY_TOOL,
)
from pictx_fsm.extensions.shared.kit.walks import Records
from pictx_fsm.testing.invariants import Violation, remembering

__all__ = ["Account", "Following", "command_of", "place_of"]


def command_of(record: Mapping[str, Any]) -> tuple[str, str] | None:
    """``(name, argument)`` of a command record (the argument trimmed and lowercased, as R60
    reads it), else ``None``."""
    if record.get("hook") != "command":
        return None
    event = record.get("event") or {}
    return str(event.get("name")), str(event.get("args") or "").strip().lower()


def place_of(world: WorldView, runtime: int, record: Mapping[str, Any]) -> Place | None:
    """Where the session stood when ``runtime`` decided ``record``'s hook (``None`` for a
    record no hook decision wrote)."""
    if runtime >= len(world.observed):
        return None
    observed = world.observed[runtime]
    leaves = observed.leaves
    seq = record.get("seq")
    if not isinstance(seq, int) or seq not in leaves:
        return None
    return place_at(observed.tree, leaves[seq])


@define
class Account:
    """One runtime as the oracle follows it: switched on or off, active or not."""

    enabled: bool = True
    """R60: a runtime starts enabled (nothing persists ``off``)."""
    active: bool = True
    """R19: inactive between ``session_shutdown`` and the next ``session_start``."""
    requested: bool = False
    """R16: a ``wipe_memory`` call while on requested a reset that no ``turn_end`` consumed
    yet (R20), nor an abort or a clearing hook took back (R37)."""

    def follow(self, record: Mapping[str, Any]) -> None:
        """What ``record``'s hook changed of the account (call after judging it)."""
        hook = record.get("hook")
        event, ctx = record.get("event") or {}, record.get("ctx") or {}
        if hook == "tool" and event.get("name") == WIPE_MEMORY_TOOL and self.enabled:
            self.requested = True
        consumed = hook == "turn_end" and self.active  # R19, R20
        aborted = hook == "agent_end" and bool(ctx.get("signal_aborted"))
        if consumed or aborted or self.clears(record) or self.wiped(record):
            self.requested = False
        if hook == "session_start":
            self.active = True
        elif hook == "session_shutdown":
            self.active = False
        command = command_of(record)
        if command in ((PI_CONTEXT_COMMAND, "on"), (PI_CONTEXT_COMMAND, "off")):
            self.enabled = command == (PI_CONTEXT_COMMAND, "on")

    @staticmethod
    def clears(record: Mapping[str, Any]) -> bool:
        """R37, R55, R60: the hooks and commands after which nothing staged or requested
        survives (``/wipe-memory`` clears the lifecycle only when it persists a window)."""
        hook = record.get("hook")
        if hook in ("session_start", "session_tree", "session_shutdown"):
            return True
        command = command_of(record)
        return command == (PI_CONTEXT_COMMAND, "off")

    @staticmethod
    def wiped(record: Mapping[str, Any]) -> bool:
        """``/wipe-memory`` persisted a window (its marker is among the effects)."""
        command = command_of(record)
        if command is None or command[0] != WIPE_MEMORY_COMMAND:
            return False
        effects = (record.get("result") or {}).get("effects") or ()
        return any(e.get("effect") == "append_entry" for e in effects)


@remembering
class Following(PerRecord):
    """An invariant that follows every runtime's records with an :class:`Account`;
    :meth:`judge` sees each record with the account as it stood before the hook."""

    _accounts: dict[int, Account] = field(init=False, factory=dict)

    def check_records(self, world: WorldView, fresh: Records) -> list[Violation]:
        found: list[Violation] = []
        for record, runtime, _ in fresh:
            account = self._accounts.setdefault(runtime, Account())
            found.extend(self.judge(world, record, runtime, account))
            account.follow(record)
        return found

    def judge(
        self, world: WorldView, record: Mapping[str, Any], runtime: int, account: Account
    ) -> list[Violation]:
        raise NotImplementedError
