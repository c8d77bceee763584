"""The differential batch: generated runs on the real Pi and on the model session, compared
run by run; the first difference shrunk to a minimal run and written as a replayable trace.

Runs are drawn by Hypothesis from the kit's strategy with a fixed seed (the same seed and
number of runs, the same runs, in every process: a kit's strategy must not let a Hypothesis
label follow an object's address), all before the first one runs. Each run happens on the real
Pi first — the model session then sends the system message that Pi sent — and on the model
session in the Pi version's host profile; the two are compared on every session file, every
agent request and every lifecycle decision. A difference is shrunk by delta debugging (every
candidate made canonical and run on both hosts again, while the same dimensions still differ).
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeAlias

from attrs import define, field, frozen

from pictx_fsm.hosts.pi.offline import PiProgram
from pictx_fsm.hosts.pi.rpc import PiFailed
from pictx_fsm.testing.differential.kit import DifferentialKit
from pictx_fsm.testing.differential.model import run_model
from pictx_fsm.testing.differential.observe import Observed, differences
from pictx_fsm.testing.differential.real import run_real
from pictx_fsm.testing.differential.runs import normalize, plan_of
from pictx_fsm.testing.trace import delta_shrink

__all__ = ["BatchOptions", "BatchReport", "Outcome", "compare", "generated_runs", "run_batch"]

JSON: TypeAlias = Any
Plant: TypeAlias = Callable[[Any], None]
"""Plants a divergence into a fresh model session (see :mod:`.divergences`)."""
MODEL_CRASH = "model"
"""The dimension a run that crashed the model session differs in."""


@frozen(kw_only=True)
class Outcome:
    """One run on both hosts."""

    config: Any
    actions: tuple[Any, ...]
    real: Observed
    model: Observed | None
    differences: tuple[str, ...]
    system_message: Mapping[str, JSON] | None
    crash: str | None = None
    """The model session's exception, when it raised."""


def compare(
    kit: DifferentialKit,
    program: PiProgram,
    config: Any,
    actions: Sequence[Any],
    work: Path,
    plant: Plant | None = None,
) -> Outcome:
    """Run canonical ``actions`` on the real Pi (in the fresh directory ``work``) and on the
    model session, and compare them."""
    plan = plan_of(kit, config, actions)
    real = run_real(kit, program, config, plan, work)
    try:
        model = run_model(kit, config, actions, plan.known, real.system_message, plant)
    except Exception as error:  # a model session that raises differs from Pi, which did not
        return Outcome(
            config=config,
            actions=tuple(actions),
            real=real.observed,
            model=None,
            differences=(MODEL_CRASH,),
            system_message=real.system_message,
            crash=f"{type(error).__name__}: {error}",
        )
    return Outcome(
        config=config,
        actions=tuple(actions),
        real=real.observed,
        model=model.observed,
        differences=differences(model.observed, real.observed),
        system_message=real.system_message,
    )


def generated_runs(
    kit: DifferentialKit, host_profile: str, count: int, seed: int, max_actions: int
) -> list[tuple[Any, tuple[Any, ...]]]:
    """``count`` runs drawn from the kit's strategy with ``seed``."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as seeded

    drawn: list[tuple[Any, tuple[Any, ...]]] = []
    strategy = kit.runs(host_profile, max_actions)

    @seeded(seed)
    @settings(
        max_examples=count,
        phases=[Phase.generate],
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy)
    def draw(run: tuple[Any, tuple[Any, ...]]) -> None:
        if len(drawn) < count:
            drawn.append(run)

    draw()
    return drawn


@frozen(kw_only=True)
class BatchOptions:
    runs: int = 100
    seed: int = 0
    max_actions: int = 24
    """At most this many actions are drawn per run (a move may add a few more)."""
    shrink_budget: float = 900.0
    """Seconds the shrinking of a difference may take."""
    out: Path = Path("differential-out")
    """Where a difference's trace is written."""
    keep_work: bool = False


@define
class BatchReport:
    pi_version: str
    host_profile: str
    runs: int = 0
    actions: int = 0
    elapsed: float = 0.0
    found: Outcome | None = None
    """The first run that differed, as found."""
    shrunk: Outcome | None = None
    """It, shrunk."""
    shrink_runs: int = 0
    trace: Path | None = None
    kinds: dict[str, int] = field(factory=dict)
    """How many actions of each kind the compared runs held."""

    @property
    def failed(self) -> bool:
        return self.found is not None


def run_batch(
    kit: DifferentialKit,
    program: PiProgram,
    pi_version: str,
    host_profile: str,
    options: BatchOptions,
    *,
    plant: Plant | None = None,
    write_trace: Callable[[BatchReport, Outcome], Path] | None = None,
    progress: Callable[[BatchReport], None] | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> BatchReport:
    """Generate ``options.runs`` runs, compare each; stop at the first difference, shrink it
    and write it (``write_trace``)."""
    report = BatchReport(pi_version=pi_version, host_profile=host_profile)
    start = clock()
    runs = generated_runs(kit, host_profile, options.runs, options.seed, options.max_actions)
    root = Path(tempfile.mkdtemp(prefix="pictx-differential-"))
    broken = False
    try:
        for number, (config, actions) in enumerate(runs):
            work = _work(root, number)
            try:
                outcome = compare(kit, program, config, actions, work, plant)
            except PiFailed as error:  # which run, and what Pi left: runs are the seed's alone
                broken = True
                raise PiFailed(
                    f"run {number + 1} of seed {options.seed}: {error} (its files: {work})"
                ) from error
            report.runs += 1
            report.actions += len(actions)
            for action in actions:
                report.kinds[type(action).KIND] = report.kinds.get(type(action).KIND, 0) + 1
            report.elapsed = clock() - start
            if progress is not None:
                progress(report)
            if outcome.differences:
                report.found = outcome
                deadline = clock() + options.shrink_budget
                report.shrunk, report.shrink_runs = shrink(
                    kit, program, outcome, root, deadline, plant, clock
                )
                if write_trace is not None:
                    report.trace = write_trace(report, report.shrunk)
                break
    finally:
        report.elapsed = clock() - start
        if not (options.keep_work or broken):
            shutil.rmtree(root, ignore_errors=True)
    return report


def _work(root: Path, number: int | str) -> Path:
    work = root / f"run-{number:0>6}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    return work


def shrink(
    kit: DifferentialKit,
    program: PiProgram,
    found: Outcome,
    root: Path,
    deadline: float,
    plant: Plant | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> tuple[Outcome, int]:
    """The shortest canonical run found that still differs in one of the dimensions ``found``
    differs in, and how many runs the search took."""
    wanted = set(found.differences)
    tried: dict[tuple[Any, ...], Outcome | None] = {found.actions: found}
    count = 0

    def outcome(candidate: list[Any]) -> Outcome | None:
        nonlocal count
        canonical = normalize(candidate, kit.category)
        if canonical not in tried:
            count += 1
            try:
                result = compare(
                    kit, program, found.config, canonical, _work(root, f"s{count}"), plant
                )
            except PiFailed:
                result = None  # a candidate Pi cannot carry out proves nothing
            tried[canonical] = result
        return tried[canonical]

    def fails(candidate: list[Any]) -> bool:
        result = outcome(candidate)
        return result is not None and bool(wanted & set(result.differences))

    shrunk = delta_shrink(found.actions, fails, deadline, clock)
    best = outcome(shrunk)
    return (best if best is not None and best.differences else found), count
