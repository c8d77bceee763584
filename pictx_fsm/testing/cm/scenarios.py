"""Seed stories for pi-context-management: each drives the world to a family of declared
transitions that random sequences reach only rarely (a fourth automatic handoff within an
hour needs a long session, three cooldowns and a dozen deliveries in the right order).

The numbers assume the default :class:`~pictx_fsm.testing.cm.world.CmWorldConfig`: a
64 000-token window (faux usage ≈ characters / 4): automatic handoff at 51 200 tokens
(≈ 205 000 characters), a forecast from 41 600, background notes after 6 400 bytes of new
source, notes within 3 200 bytes, about 37 000 bytes of sources per generation batch.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from attrs import evolve, frozen

from pictx_fsm.testing import actions as shared
from pictx_fsm.testing.cm import actions as cm
from pictx_fsm.testing.cm.world import CmWorldConfig

MINUTE = 60_000


@frozen(kw_only=True)
class CmScenario:
    name: str
    actions: tuple[Any, ...]
    config: tuple[tuple[str, Any], ...] = ()
    """Overrides of the default world configuration."""

    def world(self, base: CmWorldConfig) -> CmWorldConfig:
        return evolve(base, **dict(self.config)) if self.config else base


def _s(name: str, *actions: Any, config: Mapping[str, Any] | None = None) -> CmScenario:
    return CmScenario(name=name, actions=tuple(actions), config=tuple((config or {}).items()))


P = shared.Prompt
S = shared.Settle()
D = cm.Drain()
T = cm.Turn
C = cm.CtxMemory


def _wait(minutes: float) -> cm.Wait:
    return cm.Wait(ms=int(minutes * MINUTE))


def _tool(**fields: Any) -> tuple[Any, ...]:
    """The model calls one of the extension's tools in reply to the next prompt."""
    return (cm.CmTool(**fields), P(chars=200), S)


def _fill(rounds: int, chars: int = 60_000) -> tuple[Any, ...]:
    """Grow the context in rounds that background notes cover, a minute apart."""
    out: list[Any] = []
    for _ in range(rounds):
        out += [T(chars=chars), _wait(1.1)]
    return tuple(out)


def _auto_round() -> tuple[Any, ...]:
    """One automatic handoff: covered context, then a turn crossing 80 % (trigger, idle,
    preparation of the rest, switch, takeover)."""
    return (*_fill(2), T(chars=100_000))


def _failing_job(kind: str, chars: int = 9_000, repair: str | None = None) -> tuple[Any, ...]:
    """A background job answered by ``kind``, then a valid job that moves coverage on (a
    failed key is retried at most twice, M43)."""
    return (
        _wait(1.1), cm.Generate(reply=kind, repair=repair), P(chars=chars), S, D,
        _wait(1.1), T(chars=9_000),
    )


SCENARIOS: Sequence[CmScenario] = (
    _s(
        "background notes: commit, cooldown, commit again; commands",
        T(chars=12_000), P(chars=400), S, _wait(1.1), T(chars=12_000),
        C(args="notes"), C(args="status"), C(args="session"), C(args="session close"),
        C(args="session export"), C(args="bogus"), C(args="auto off"), P(chars=200), S,
        shared.Navigate(index=3), shared.Reload(), C(args="auto on"),
    ),
    _s(
        "background notes: cancelled by a write, a command, navigation, reload; stale",
        P(chars=12_000), S, *_tool(tool="notes_update", kind="goal"),
        cm.SwitchModel(index=1), D, _wait(1.1), P(chars=9_000), S, C(args="cancel"),
        C(args="cancel"), _wait(1.1), P(chars=9_000), S, cm.NavigateTo(mark="first_user"),
        _wait(1.1), P(chars=9_000), S, shared.Reload(),
        _wait(1.1), P(chars=140_000), S, D, _wait(1.1), cm.Generate(reply="over_capacity"),
        T(chars=9_000), *_failing_job("valid", chars=160_000),
    ),
    _s(
        "background notes: a repair interrupted by navigation and by a failing disk",
        P(chars=400), S, cm.Generate(reply="over_capacity"), P(chars=9_000), S, cm.Deliver(),
        cm.NavigateTo(mark="first_user"), _wait(1.1), cm.Generate(reply="over_capacity"),
        P(chars=9_000), S, cm.Deliver(), cm.FailDisk(on=True), cm.Deliver(),
        cm.FailDisk(on=False),
    ),
    _s(
        "background notes: every failure kind",
        *_failing_job("failing"),
        *_failing_job("stubborn"),
        *_failing_job("slow", 12_000),
        *_failing_job("incomplete"),
        *_failing_job("invalid_shape"),
        *_failing_job("repair_invalid"),
        *_failing_job("bad_boundary"),
        *_failing_job("over_capacity"),
        *_failing_job("aborted"),
        *_failing_job("over_capacity", repair="failing"),
        *_failing_job("over_capacity", repair="aborted"),
        *_failing_job("over_capacity", repair="incomplete"),
        *_failing_job("over_capacity", repair="slow"),
        _wait(1.1), cm.Generate(reply="over_capacity"), P(chars=9_000), S, cm.Deliver(),
        cm.NavigateTo(mark="first_user"),
        _wait(1.1), cm.Generate(reply="over_capacity"), P(chars=9_000), S, cm.Deliver(),
        cm.FailDisk(on=True), cm.Deliver(), cm.FailDisk(on=False),
        _wait(1.1), P(chars=9_000), S, cm.FailDisk(on=True), D, cm.FailDisk(on=False),
        _wait(1.1), P(chars=9_000), S, shared.Reload(),
        _wait(1.1), P(chars=140_000), S, D, _wait(1.1), cm.Generate(reply="over_capacity"),
        T(chars=9_000), *_failing_job("valid", chars=160_000),
    ),
    _s(
        "background notes: a repair interrupted by navigation and by a failing disk",
        P(chars=400), S, cm.Generate(reply="over_capacity"), P(chars=9_000), S, cm.Deliver(),
        cm.NavigateTo(mark="first_user"), _wait(1.1), cm.Generate(reply="over_capacity"),
        P(chars=9_000), S, cm.Deliver(), cm.FailDisk(on=True), cm.Deliver(),
        cm.FailDisk(on=False),
    ),
    _s(
        "notes tool: refusals and acceptance in every checkpoint state; history and status",
        P(chars=400), S,
        *_tool(tool="notes_update", key=1, chars=4_000),
        *_tool(tool="notes_update", key=2, source="missing"),
        cm.FailDisk(on=True), *_tool(tool="notes_update", key=1),
        *_tool(tool="notes_update", key=2), cm.FailDisk(on=False), shared.Reload(),
        *_tool(tool="notes_update", key=1, kind="constraint"),
        *_tool(tool="notes_update", key=1, kind="goal"),
        *_tool(tool="notes_update", key=2, source="missing"),
        *_tool(tool="notes_update", key=3, chars=4_000),
        *_tool(tool="notes_update", key=5, kind="decision", status="resolved", chars=900),
        *_tool(tool="notes_update", key=6, kind="decision", chars=1_700),
        *_tool(tool="notes_read"), *_tool(tool="search"), *_tool(tool="read"),
        *_tool(tool="status"), *_tool(tool="read", source="missing"),
        cm.FailDisk(on=True), *_tool(tool="notes_update", key=4),
        *_tool(tool="notes_update", key=4), cm.FailDisk(on=False), shared.Reload(),
        T(chars=20_000), shared.Compact(), P(chars=200), S,
        *_tool(tool="notes_update", key=7, source="missing"),
        *_tool(tool="notes_update", key=1, kind="open_item"),
        *_tool(tool="notes_update", key=8, chars=4_000),
        *_tool(tool="notes_update", key=9),
        _wait(1.1), T(chars=20_000), shared.Compact(), P(chars=200), S,
        cm.FailDisk(on=True), *_tool(tool="notes_update", key=9),
        *_tool(tool="notes_update", key=9), cm.FailDisk(on=False),
        shared.Reload(), cm.NavigateTo(mark="first_notes"), P(chars=200), S,
        cm.NavigateTo(mark="first_notes"), cm.NavigateTo(mark="checkpoint"),
        cm.NavigateTo(mark="first_user"), cm.NavigateTo(mark="checkpoint"),
    ),
    _s(
        "compaction: a checkpoint, then every fallback and a cancel",
        P(chars=4_000), S, P(chars=20_000), S, shared.Compact(), P(chars=20_000), S,
        cm.Generate(reply="invalid_shape"), shared.Compact(),
        P(chars=20_000), S, cm.Generate(reply="aborted"), shared.Compact(),
        P(chars=20_000), S, cm.Generate(reply="over_capacity"), shared.Compact(),
        P(chars=20_000), S, cm.Generate(reply="slow"), shared.Compact(),
        P(chars=20_000), S, cm.Generate(reply="stubborn"), shared.Compact(),
        P(chars=20_000), S, cm.Generate(reply="repair_invalid"), shared.Compact(),
        P(chars=20_000), S, cm.Generate(reply="failing"), shared.Compact(),
        P(chars=20_000), S, cm.Generate(reply="incomplete"), shared.Compact(),
        P(chars=20_000), S, cm.Generate(reply="over_capacity", repair="slow"), shared.Compact(),
        P(chars=20_000), S, cm.NavigateTo(mark="first_user", summarize=True), P(chars=20_000),
        S, shared.Compact(), shared.Reload(), P(chars=20_000), S, C(args="compact"),
    ),
    _s(
        "compaction: a window too small for any batch",
        P(chars=12_000), S, P(chars=9_000), S, shared.Compact(),
        config={"context_window": 20_000, "reserve_tokens": 1_000, "keep_recent_tokens": 1_000},
    ),
    _s(
        "manual handoff: success, handoff-scope recall, takeover once, reopen, export",
        T(chars=12_000), C(args="handoff"), S, P(chars=400), S, C(args="handoff"), D, S,
        *_tool(tool="search", handoff=True), *_tool(tool="read", handoff=True),
        shared.Reload(), C(args="session export"), C(args="handoff"), S, D, S,
    ),
    _s(
        "manual handoff: vetoed switch, failed generation, cancel, input, creation and disk",
        P(chars=1_000), S, cm.VetoSwitch(on=True), C(args="handoff"), D, cm.VetoSwitch(on=False),
        P(chars=9_000), S, cm.Generate(reply="failing"), C(args="handoff"), D,
        P(chars=200), S, C(args="handoff"), C(args="handoff"), C(args="cancel"),
        P(chars=200), S, C(args="handoff"), P(chars=200), S, D,
        P(chars=200), S, cm.FailCreate(on=True), C(args="handoff"), D, cm.FailCreate(on=False),
        P(chars=200), S, C(args="handoff"), cm.FailDisk(on=True), D, cm.FailDisk(on=False),
        P(chars=200), S, C(args="handoff"), shared.Reload(),
    ),
    _s(
        "an unsaved session: no handoff, no log, no export",
        C(args="notes"), C(args="handoff"), T(chars=12_000), C(args="handoff"), C(args="session export"), C(args="auto off"),
        C(args="auto off"), P(chars=200), S, shared.Navigate(index=1),
        config={"saved": False},
    ),
    _s(
        "manual handoff: the target cannot verify its parent and returns",
        P(chars=1_000), S, cm.HideParent(on=True), C(args="handoff"), D,
        cm.HideParent(on=False), P(chars=200), S, cm.HideParent(on=True),
        cm.VetoReturn(on=True), C(args="handoff"), D,
    ),
    _s(
        "manual handoff: the takeover prompt fails to start",
        C(args="handoff"), S, P(chars=1_000), S, cm.FailTakeover(on=True), C(args="handoff"), D,
    ),
    _s(
        "automatic handoff: four triggers within an hour, the fourth refused",
        *_auto_round(), _wait(5.5), *_auto_round(), _wait(5.5), *_auto_round(), _wait(5.5),
        *_auto_round(), C(args="status"),
    ),
    _s(
        "automatic handoff: forecast; revoked by input, a foreign message, a command",
        *_fill(2), T(chars=26_000), P(chars=48_000), S, D, S,
        *_fill(2), P(chars=100_000), S, P(chars=200), S,
        *_fill(1), P(chars=10_000), S, cm.ForeignMessage(chars=400), D,
        P(chars=200), S, C(args="auto on"), C(args="auto off"), C(args="auto on"),
        P(chars=200), S, shared.Reload(), P(chars=200), S,
    ),
    _s(
        "automatic handoff: scheduled, then cancelled, revoked, rechecked, reloaded",
        *_fill(2), P(chars=100_000), S, C(args="cancel"), C(args="auto on"),
        P(chars=200), S, P(chars=200), S,
        C(args="auto on"), C(args="auto off"), P(chars=200), S, C(args="auto on"),
        P(chars=200), S, cm.ForeignMessage(chars=400), cm.Deliver(),
        P(chars=200), S, shared.Reload(), P(chars=200), S, cm.Deliver(),
    ),
    _s(
        "automatic handoff: preparations revoked, toggled, reloaded, failed, vetoed — paused",
        *_fill(2), P(chars=100_000), S, cm.Deliver(), P(chars=200), S, C(args="auto on"),
        P(chars=200), S, cm.Deliver(), C(args="auto on"), C(args="auto off"),
        C(args="auto on"), _wait(61),
        P(chars=200), S, cm.Deliver(), shared.Reload(), C(args="auto off"), C(args="auto on"),
        P(chars=200), S, cm.Generate(reply="failing"), D, shared.Reload(), C(args="auto on"),
        cm.VetoSwitch(on=True), P(chars=200), S, D, cm.VetoSwitch(on=False), _wait(61),
        C(args="auto on"), P(chars=200), S, cm.Deliver(), C(args="cancel"), C(args="auto on"),
        _wait(61), P(chars=200), S, cm.Deliver(), shared.Reload(), C(args="auto off"),
        shared.Navigate(index=2), shared.Reload(),
    ),
    _s(
        "automatic handoff: the takeover prompt fails in the target",
        cm.FailTakeover(on=True), *_auto_round(), C(args="status"),
    ),
    _s(
        "automatic handoff forced off; background notes off",
        *_fill(2), T(chars=100_000), C(args="auto on"), C(args="auto off"), shared.Reload(),
        cm.NavigateTo(mark="first_user"),
        config={"no_auto_handoff": True, "no_background": True},
    ),
    _s(
        "a child session registers nothing",
        T(chars=12_000), shared.Compact(),
        config={"child": True},
    ),
)
