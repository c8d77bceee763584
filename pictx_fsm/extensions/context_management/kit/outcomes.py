"""pi-context-management's promised outcomes: what must have happened by the point its rules
name — judged there, or once the run is at rest (:class:`~.actions.Rest` ends every run).

The §12 invariants (:mod:`.invariants`, :mod:`.invariants_handoff`) bound what the extension
may do; an extension that starts a generation and never ends it, leaves a handoff half done
with its phase on the status bar, or lets an eligible window cross 80 % without a handoff,
keeps every one of them. These judge from the step journal, the extension's own log
records and the status bar it shows — the usage arithmetic and the eligibility of M54/M56
recomputed here, never read from a guard.
"""

from __future__ import annotations

from attrs import field

from pictx_fsm.extensions.context_management.events import ReplyEnded
from pictx_fsm.extensions.context_management.kit.checks import JournalInvariant, logs
from pictx_fsm.extensions.context_management.kit.world import StepRecord, World
from pictx_fsm.extensions.context_management.policy import (
    AUTO_FORECAST_FLOOR,
    AUTO_FORECAST_TARGET,
    AUTO_MAX_PER_HOUR,
    AUTO_THRESHOLD,
    HOUR_MS,
)
from pictx_fsm.extensions.context_management.texts import STATUS_BATCH, STATUS_HANDOFF
from pictx_fsm.testing.invariants import Violation, remembering

__all__ = ["OUTCOME_INVARIANTS", "AutoHandoffWhenDue", "OperationsEnd"]

_BUSY = (STATUS_BATCH.split("{")[0], STATUS_HANDOFF.split("{")[0])
"""M4: what the status bar shows only while a batch or a handoff runs."""


@remembering
class OperationsEnd(JournalInvariant):
    """each started generation, background job and handoff ends — committed, cancelled, failed
    or fallen back, its operation_end logged — and once the host owes nothing the status bar
    is at rest (no batch or handoff phase)"""

    name, rule = "operations_end", "M28, M32, M34, M35, M40, M41, M48, M64, M4"
    kind = "outcome"

    open: dict[tuple[int, str], tuple[str, StepRecord]] = field(init=False, factory=dict)

    def check_step(self, world: World, record: StepRecord) -> list[Violation]:
        for start in logs(record, "operation_start"):
            if start.get("type") != "reply":
                key = (record.runtime, str(start.get("id")))
                self.open[key] = (str(start.get("type")), record)
        for end in logs(record, "operation_end"):
            self.open.pop((record.runtime, str(end.get("id"))), None)
        return []

    def residual(self, world: World) -> object:
        """The operations still open and their kinds; the step that opened each is only
        named in a violation's message (its action index is history, not state)."""
        return frozenset((key, kind) for key, (kind, _) in self.open.items())

    def finish(self, world: World) -> list[Violation]:
        found = [
            self.violation(f"{kind} operation {key[1]} never ended", start)
            for key, (kind, start) in self.open.items()
        ]
        shown = world.extension.status
        if shown.startswith(_BUSY):
            found.append(self.violation(f"at rest, the status bar still shows {shown!r}"))
        return found


def _recent_attempts(attempts: tuple[int, ...], now: int) -> int:
    """M56: automatic handoffs in the rolling hour before ``now``."""
    return sum(1 for t in attempts if now - t < HOUR_MS)


class AutoHandoffWhenDue(JournalInvariant):
    """an armed scheduler whose reply end observes known usage, nothing queued, past
    nextEligibleAt and under 3 automatic handoffs in the rolling hour schedules a handoff
    exactly when usage reaches 80 % of the window (reason threshold) or, from 65 %, a valid
    baseline projects 90 % (reason forecast) — and at no other reply end"""

    name, rule = "auto_handoff_when_due", "M53–M57"
    kind = "outcome"

    def check_step(self, world: World, record: StepRecord) -> list[Violation]:
        if not isinstance(record.event, ReplyEnded):
            return []
        due = self._due(record)
        if due is False:
            return []
        reasons = [str(t.get("reason")) for t in logs(record, "auto_trigger")]
        expected = [] if due is None else [due]
        if reasons == expected:
            return []
        ctx = record.ctx
        usage = f"{ctx.tokens} of {ctx.context_window} tokens"
        return [self.violation(f"triggers {reasons} at {usage}, expected {expected}", record)]

    @staticmethod
    def _due(record: StepRecord) -> str | bool | None:
        """The reason M54 triggers for (``None``: none is due; ``False``: the scheduler is not
        armed, so nothing is judged)."""
        ctx, before = record.ctx, record.before
        if before.state_of("auto_handoff") != "armed":
            return False
        if ctx.tokens is None or not ctx.context_window or ctx.pending_input:
            return None  # M53, M55: unknown usage or queued input never triggers
        auto = before.auto
        if auto.next_eligible_at is not None and ctx.now < auto.next_eligible_at:
            return None
        if _recent_attempts(auto.attempts, ctx.now) >= AUTO_MAX_PER_HOUR:
            return None
        tokens, window = ctx.tokens, ctx.context_window
        if tokens >= AUTO_THRESHOLD * window:
            return "threshold"
        base = before.baseline
        valid = base is not None and (base.session_id, base.model, base.compactions) == (
            before.session_id,
            ctx.model,
            before.compactions,
        )
        if not valid or base is None or tokens < AUTO_FORECAST_FLOOR * window:
            return None
        projected = tokens + (tokens - base.tokens)  # the growth of one round (M54)
        return "forecast" if projected >= AUTO_FORECAST_TARGET * window else None


OUTCOME_INVARIANTS: tuple[type[JournalInvariant], ...] = (OperationsEnd, AutoHandoffWhenDue)
