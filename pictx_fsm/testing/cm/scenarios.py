"""Seed stories for pi-context-management: each drives the world to a family of declared
transitions that random sequences reach only rarely (a fourth handoff within an hour needs
four big prompts, three cooldowns and a dozen deliveries in the right order).

The numbers assume the default :class:`~pictx_fsm.testing.cm.world.CmWorldConfig`: a
64 000-token window (faux usage ≈ characters / 4): automatic handoff at 51 200 tokens
(≈ 205 000 characters), a forecast from 41 600, background notes after 6 400 bytes of new
source, notes within 3 200 bytes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from attrs import frozen

from pictx_fsm.testing import actions as shared
from pictx_fsm.testing.cm import actions as cm

MINUTE = 60_000
BIG = 210_000
"""A prompt that takes the context past the automatic-handoff threshold on its own."""


@frozen(kw_only=True)
class CmScenario:
    name: str
    actions: tuple[Any, ...]
    pi_context: bool = False


def _s(name: str, *actions: Any) -> CmScenario:
    return CmScenario(name=name, actions=tuple(actions))


P = shared.Prompt
S = shared.Settle()
D = cm.Drain()
D1 = cm.Deliver()


def _wait(minutes: float) -> cm.Wait:
    return cm.Wait(ms=int(minutes * MINUTE))


def _tool(**fields: Any) -> tuple[Any, ...]:
    """The model calls one of the extension's tools in reply to the next prompt."""
    return (cm.CmTool(**fields), P(chars=200), S)


def _fill(rounds: int = 7, chars: int = 30_000) -> tuple[Any, ...]:
    """Grow the context in steps that background notes keep covering (each job commits
    before the next reply end, a minute apart), as a long session does."""
    out: list[Any] = []
    for _ in range(rounds):
        out += [P(chars=chars), S, D, _wait(1.1)]
    return tuple(out)


def _auto_round() -> tuple[Any, ...]:
    """One automatic handoff: the last reply end crosses 80 %, then idle, preparation,
    switch, takeover."""
    return (*_fill(6), P(chars=30_000), S, D, S)


SCENARIOS: Sequence[CmScenario] = (
    _s(
        "background notes: commit, cooldown, commit again",
        P(chars=12_000), S, D, P(chars=400), S, _wait(1.1), P(chars=12_000), S, D,
        cm.CtxMemory(args="notes"), cm.CtxMemory(args="status"),
    ),
    _s(
        "background notes: cancelled by a note write, stale after a model switch",
        P(chars=12_000), S, cm.CmTool(tool="notes_update", kind="goal"), P(chars=200), S,
        _wait(1.1), P(chars=9_000), S, cm.SwitchModel(index=1), D,
        _wait(1.1), P(chars=9_000), S, cm.CtxMemory(args="cancel"), cm.CtxMemory(args="cancel"),
    ),
    _s(
        "background notes: every failure kind",
        cm.Generate(reply="failing"), P(chars=12_000), S, D,
        _wait(1.1), cm.Generate(reply="stubborn"), P(chars=200), S, D, D,
        _wait(1.1), cm.Generate(reply="slow"), P(chars=12_000), S, D,
        _wait(1.1), cm.Generate(reply="incomplete"), P(chars=200), S, D,
        _wait(1.1), cm.Generate(reply="invalid_shape"), P(chars=200), S, D,
        _wait(1.1), cm.Generate(reply="repair_invalid"), P(chars=12_000), S, D, D,
        _wait(1.1), cm.Generate(reply="bad_boundary"), P(chars=200), S, D,
        _wait(1.1), cm.Generate(reply="over_capacity"), P(chars=200), S, D, D,
        _wait(1.1), cm.Generate(reply="aborted"), P(chars=12_000), S, D,
    ),
    _s(
        "notes tool: accepted, refused for sources, kind, budget; history and status",
        P(chars=400), S,
        *_tool(tool="notes_update", key=1, kind="constraint"),
        *_tool(tool="notes_update", key=1, kind="goal"),
        *_tool(tool="notes_update", key=2, source="missing"),
        *_tool(tool="notes_update", key=3, chars=4_000),
        *_tool(tool="notes_update", key=5, kind="decision", status="resolved", chars=900),
        *_tool(tool="notes_update", key=6, kind="decision", chars=2_000),
        *_tool(tool="notes_read"),
        *_tool(tool="search"),
        *_tool(tool="read"),
        *_tool(tool="status"),
        P(chars=12_000), S, shared.Compact(),
        *_tool(tool="notes_update", key=7, kind="constraint", source="missing"),
        *_tool(tool="notes_update", key=1, kind="open_item"),
        *_tool(tool="notes_update", key=8, chars=4_000),
        *_tool(tool="notes_update", key=9),
        shared.Navigate(index=3), *_tool(tool="notes_update", key=4, kind="open_item", status="resolved"),
        *_tool(tool="notes_update", key=10, source="missing"),
        *_tool(tool="notes_update", key=11, chars=4_000),
        shared.Navigate(index=0), shared.Navigate(index=200),
    ),
    _s(
        "compaction: a checkpoint, then every fallback and a cancel",
        P(chars=12_000), S, P(chars=12_000), S, shared.Compact(), P(chars=8_000), S,
        cm.Generate(reply="invalid_shape"), shared.Compact(),
        P(chars=8_000), S, cm.Generate(reply="aborted"), shared.Compact(),
        cm.Generate(reply="over_capacity"), shared.Compact(),
        P(chars=8_000), S, cm.Generate(reply="slow"), shared.Compact(),
        P(chars=8_000), S, cm.Generate(reply="stubborn"), shared.Compact(),
        P(chars=8_000), S, cm.Generate(reply="repair_invalid"), shared.Compact(),
        P(chars=8_000), S, cm.Generate(reply="failing"), shared.Compact(),
        P(chars=8_000), S, cm.Generate(reply="incomplete"), shared.Compact(),
        P(chars=8_000), S, shared.Compact(), shared.Reload(), cm.CtxMemory(args="compact"),
    ),
    _s(
        "manual handoff: success, takeover, reopen",
        P(chars=12_000), S, D, cm.CtxMemory(args="handoff"), D, S,
        *_tool(tool="search", source="user"), *_tool(tool="search"), shared.Reload(),
        cm.CtxMemory(args="session export"),
    ),
    _s(
        "manual handoff: vetoed switch, failed generation, cancel, input, too large",
        P(chars=1_000), S, cm.VetoSwitch(on=True), cm.CtxMemory(args="handoff"), D,
        cm.VetoSwitch(on=False), cm.Generate(reply="failing"), cm.CtxMemory(args="handoff"), D,
        cm.CtxMemory(args="handoff"), cm.CtxMemory(args="cancel"),
        cm.CtxMemory(args="handoff"), P(chars=200), S, D,
        cm.CtxMemory(args="handoff"), cm.CtxMemory(args="handoff"), cm.FailDisk(on=True), D,
        cm.FailDisk(on=False),
    ),
    _s(
        "manual handoff: the target cannot verify its parent and returns, or must be resumed",
        P(chars=1_000), S, cm.HideParent(on=True), cm.CtxMemory(args="handoff"), D,
        cm.VetoSwitch(on=False), cm.CtxMemory(args="handoff"), cm.VetoSwitch(on=False),
    ),
    _s(
        "manual handoff: the target cannot return either",
        P(chars=1_000), S, cm.HideParent(on=True), cm.CtxMemory(args="handoff"),
        cm.FailTakeover(on=False), cm.VetoSwitch(on=False), D,
    ),
    _s(
        "manual handoff: the takeover prompt fails to start",
        P(chars=1_000), S, cm.FailTakeover(on=True), cm.CtxMemory(args="handoff"), D,
    ),
    _s(
        "automatic handoff: four triggers within an hour, the fourth refused",
        *_auto_round(), _wait(6), *_auto_round(), _wait(6), *_auto_round(), _wait(6),
        *_auto_round(), cm.CtxMemory(args="status"),
    ),
    _s(
        "automatic handoff: forecast, revoke by input, cancel, auto on/off",
        *_fill(4), P(chars=16_000), S, P(chars=48_000), S, D, S,
        *_fill(7), P(chars=BIG // 7), S, cm.CtxMemory(args="cancel"), cm.CtxMemory(args="auto on"),
        cm.CtxMemory(args="auto off"), cm.CtxMemory(args="auto off"), cm.CtxMemory(args="auto on"),
        cm.CtxMemory(args="auto on"), P(chars=200), S, cm.ForeignMessage(chars=400), D,
    ),
    _s(
        "automatic handoff: revoked and failed preparations pause it",
        *_fill(6), P(chars=30_000), S, D1, P(chars=200), S, cm.CtxMemory(args="auto on"),
        P(chars=200), S, D, cm.CtxMemory(args="cancel"), cm.CtxMemory(args="auto on"),
        cm.Generate(reply="failing"), P(chars=200), S, D, D, cm.CtxMemory(args="auto on"),
        cm.VetoSwitch(on=True), P(chars=200), S, D, D, cm.VetoSwitch(on=False),
        cm.CtxMemory(args="auto on"), P(chars=200), S, D, cm.CtxMemory(args="auto off"),
        cm.CtxMemory(args="auto on"), P(chars=200), S, D, shared.Navigate(index=2),
        P(chars=200), S, D, shared.Reload(),
    ),
    _s(
        "storage failure: refused writes until reopened",
        P(chars=12_000), S, cm.FailDisk(on=True), *_tool(tool="notes_update"), D,
        *_tool(tool="notes_update", key=2), cm.FailDisk(on=False), shared.Reload(),
        *_tool(tool="notes_update", key=3), P(chars=12_000), S, shared.Compact(),
        cm.FailDisk(on=True), *_tool(tool="notes_update", key=4), cm.FailDisk(on=False),
        cm.Generate(reply="slow"), P(chars=12_000), S, cm.FailDisk(on=True), D,
    ),
)
