"""``pictx-fsm verify --extension context-management|both``: the pi-context-management part.

Explores the extension on the model session — alone (``context-management``), after
pi-context on the same host (``both``), or both settings (``all``, the default of
``verify``) — checks the §12 invariants (and pi-context's own when it is loaded) after every
action, and reports invariants, transition coverage of ``models/context_management/`` and
the counterexample trace, which ``pictx-fsm replay`` reproduces.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from pictx_fsm.extensions.context_management.machines import load_machines
from pictx_fsm.testing.cm.coverage import CmCoverage
from pictx_fsm.testing.cm.faults import CM_FAULTS
from pictx_fsm.testing.cm.invariants_handoff import CM_INVARIANT_TYPES

SETTINGS = {
    "context-management": (False,),
    "both": (True,),
    "all": (False, True),
}


def run_cm(args: argparse.Namespace, extension: str) -> int:
    from pictx_fsm.testing.cm.explore import CmExploreOptions, explore_cm

    fault = args.fault if args.fault in CM_FAULTS else None
    options = CmExploreOptions(
        **({} if args.examples is None else {"examples": args.examples}),
        steps=args.steps,
        seed=args.seed,
        time_budget=args.time_budget,
        fault=fault,
        scenarios=not args.no_scenarios,
        settings=SETTINGS[extension],
    )
    progress = None if args.quiet else _progress
    report = explore_cm(options, progress)
    if progress is not None:
        print(file=sys.stderr)
    return _summarise(args, report, extension)


def _progress(p: object) -> None:
    line = (
        f"[cm {p.phase}] {p.examples} runs · {p.actions:,} actions · "  # type: ignore[attr-defined]
        f"{p.covered}/{p.declared} transitions · {p.elapsed:.1f}s"  # type: ignore[attr-defined]
    )
    sys.stderr.write(f"{line[:100]:<100}\r")


def _summarise(args: argparse.Namespace, report: object, extension: str) -> int:
    from pictx_fsm.testing.cm.explore import CmExploreReport

    assert isinstance(report, CmExploreReport)
    options = report.options
    settings = " + ".join("with pi-context" if s else "alone" for s in options.settings)
    fingerprint = load_machines().fingerprint[:12]
    print(f"pictx-fsm verify · context-management · models {fingerprint} · {settings}")
    if options.fault:
        print(f"planted fault  {options.fault}")
    print(f"invariants     {len(CM_INVARIANT_TYPES)} checked after every action", end="")
    failed = False
    if report.failed:
        failed = True
        trace = report.counterexample
        assert trace is not None
        name = f"counterexample-cm-{options.fault or 'seed' + str(options.seed)}.json"
        path = trace.save(Path(args.out) / name)
        print(": VIOLATED")
        print(f"  {report.violation}")
        cut = " (shrinking cut short by the time budget)" if report.shrink_cut else ""
        print(f"  counterexample: {len(trace.actions)} actions{cut}, written to {path}")
        print(f"  reproduce with: pictx-fsm replay {path}")
    else:
        print(": all held")
    budget = " (time budget reached)" if report.budget_exhausted else ""
    print(
        f"examples       {report.scenario_runs} scenario runs + {report.examples} generated runs, "
        f"{report.actions:,} actions, seed {options.seed}{budget}"
    )
    coverage = report.coverage
    assert coverage is not None
    judged = False in options.settings
    failed |= _coverage(coverage, report.failed or not judged, bool(options.fault))
    if not judged:
        print(
            "               coverage is judged with the extension alone: loaded after "
            "pi-context, its resets and compaction cancellation pre-empt these transitions "
            "(docs/context-management.md)"
        )
    if args.coverage_out:
        out = Path(args.coverage_out)
        target = out.with_name(out.stem + "-cm" + out.suffix)
        target.write_text(json.dumps(coverage.counts(), indent=1) + "\n")
        print(f"               coverage data written to {target}")
    if options.fault and not report.failed:
        failed = True
        print(
            f"planted fault not detected: {options.fault} ({CM_FAULTS[options.fault].caught_by} "
            "should have caught it)"
        )
    print(f"result         {'FAILED' if failed else 'OK'} ({report.elapsed:.1f}s exploring)")
    return 1 if failed else 0


def _coverage(coverage: CmCoverage, informational: bool, faulted: bool) -> bool:
    """Print the coverage table; ``informational``: an interrupted run or one with
    pi-context loaded, whose coverage says nothing of missing transitions."""
    print(
        f"transitions    {coverage.covered}/{coverage.declared} declared transitions fired; "
        f"{len(coverage.exempted)} exempted (models/context_management/coverage-exemptions.toml); "
        f"{len(coverage.missing)} missing"
    )
    for machine, (covered, declared) in coverage.by_machine().items():
        print(f"  {machine:<16} {covered:>4}/{declared}")
    if informational:
        return False
    for row in coverage.missing:
        print(f"  never fired: {row.transition}")
    for name in coverage.unknown_exemptions:
        print(f"  exemption for an undeclared transition: {name}")
    for row in coverage.stale_exemptions:
        print(f"  exempted as unreachable but fired {row.fired}x: {row.transition}")
    return not coverage.complete and not faulted


__all__ = ["SETTINGS", "run_cm"]
