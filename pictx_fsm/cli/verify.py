"""``pictx-fsm verify``: explore extensions on the embedded model session and check them.

For each extension's kit (``--extension``, default ``all`` registered ones) it runs the
exploration — seed scenarios, then Hypothesis-generated host sessions with every invariant
checked after every action — while CrossHair checks the contracts the kits name; then it
reports invariants, examples, transition coverage and contracts. Exit 0 when everything
holds and every declared transition fired (or is exempted with a documented reason); 1 on a
counterexample (written as a replayable trace), a missing transition, a broken contract or a
planted fault not caught; 2 on bad options.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from pictx_fsm.errors import UsageError
from pictx_fsm.testing.contracts import ContractReport, ContractRun
from pictx_fsm.testing.kit import Kit, kit_named, kit_names
from pictx_fsm.testing.ray_support import add_ray_arguments, check_workers

if TYPE_CHECKING:  # the exploration needs Hypothesis, imported only when verify runs
    from pictx_fsm.testing.explore import ExploreOptions, ExploreReport

__all__ = ["configure", "run"]

EXTRA_HINT = "install the verify extra: pip install '.[verify]' (hypothesis, crosshair-tool)"
BOTH = "both"
"""pi-context-management after pi-context on one host (its ``--companion pi-context``)."""
MAX_STEPS = 10_000
"""Longer runs only slow shrinking down; the interesting interleavings are short."""


def _registered() -> list[Kit]:
    return [kit_named(name) for name in kit_names()]


def configure(parser: argparse.ArgumentParser) -> None:
    kits = _registered()
    parser.add_argument(
        "--examples",
        type=int,
        help="most generated runs per extension (default: as many as the time budget allows)",
    )
    parser.add_argument("--steps", type=int, default=40, help="max actions per run (default 40)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument(
        "--time-budget",
        type=float,
        default=45.0,
        help="seconds of exploration per extension, shrinking included (default 45)",
    )
    parser.add_argument(
        "--extension",
        default="all",
        metavar="NAME",
        help=f"what to explore: {', '.join(k.name for k in kits)}, {BOTH} "
        "(context-management after pi-context), all registered ones (default), or a kit "
        "that is not installed as module:attribute",
    )
    parser.add_argument("--fault", metavar="NAME", help="plant a deliberate fault (see docs)")
    seen: set[str] = set()
    for kit in kits:
        for option in kit.options:
            if option.flag in seen:
                continue
            seen.add(option.flag)
            parser.add_argument(
                option.flag,
                dest=_dest(option.name),
                action="append",
                choices=list(option.choices),
                help=f"{kit.name}: {option.help}",
            )
    parser.add_argument("--out", default="verify-out", help="where counterexamples go")
    parser.add_argument("--coverage-out", help="write {transition: count} JSON here")
    parser.add_argument("--no-contracts", action="store_true", help="skip the CrossHair check")
    parser.add_argument(
        "--contract-timeout", type=float, default=2.0, help="CrossHair seconds per condition"
    )
    parser.add_argument("--no-scenarios", action="store_true", help="skip the seed scenarios")
    parser.add_argument("--quiet", action="store_true", help="no progress display")
    add_ray_arguments(parser, "independent seeds and swarm configurations as tasks")


def _dest(name: str) -> str:
    return f"kit_option_{name}"


def _check_options(args: argparse.Namespace) -> None:
    """Every bad option value, named in one line (exit 2) before anything runs."""
    if args.examples is not None and args.examples < 1:
        raise UsageError(f"--examples must be at least 1, not {args.examples}")
    if not 1 <= args.steps <= MAX_STEPS:
        raise UsageError(f"--steps must be between 1 and {MAX_STEPS}, not {args.steps}")
    for option, value in (
        ("--time-budget", args.time_budget),
        ("--contract-timeout", args.contract_timeout),
    ):
        if not (math.isfinite(value) and value > 0):
            raise UsageError(f"{option} must be a positive number of seconds, not {value}")
    if not 0 <= args.seed < 2**63:
        raise UsageError(f"--seed must be between 0 and 2**63 - 1, not {args.seed}")
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out}: not a directory")
    if args.coverage_out and not Path(args.coverage_out).parent.resolve().is_dir():
        raise UsageError(f"--coverage-out {args.coverage_out}: its directory does not exist")


def run(args: argparse.Namespace) -> int:
    _check_options(args)
    if importlib.util.find_spec("hypothesis") is None:
        raise UsageError(f"verify explores with Hypothesis, which is not installed; {EXTRA_HINT}")
    if not args.no_contracts and importlib.util.find_spec("crosshair") is None:
        raise UsageError(
            f"the contract check needs CrossHair, which is not installed; {EXTRA_HINT}, "
            "or run with --no-contracts"
        )
    plan = _plan(args)
    check_workers(args.workers)
    if args.ray is not None:
        from pictx_fsm.testing.ray_support import connect

        connect(args.ray, args.workers)
    modules = sorted({m for kit, _ in plan for m in kit.contract_modules})
    contracts = (
        None
        if args.no_contracts or not modules
        else ContractRun(modules, per_condition_timeout=args.contract_timeout)
    )
    try:
        reports = [_explore(args, kit, options) for kit, options in plan]
    except BaseException:
        if contracts is not None:
            contracts.cancel()
        raise
    if contracts is not None and not args.quiet:
        print("waiting for CrossHair…", file=sys.stderr)
    contract_report = contracts.result() if contracts is not None else None
    failed = False
    counts: dict[str, int] = {}
    for report in reports:
        failed |= _summarise(args, report)
        counts.update(report.coverage.coverage.counts() if report.coverage else {})
    if args.coverage_out:
        _write_coverage(Path(args.coverage_out), counts)
    failed |= _print_contracts(contract_report, args.no_contracts)
    return 1 if failed else 0


def _plan(args: argparse.Namespace) -> list[tuple[Kit, ExploreOptions]]:
    """Which kits to explore, each with its options: a planted fault narrows ``all`` to the
    kit it is planted in; a fault of a kit not explored is an error, never a run that
    cannot catch it."""
    from pictx_fsm.testing.explore import ExploreOptions

    name = args.extension
    companions: dict[str, tuple[str, ...]] = {}
    if name == "all":
        kits = _registered()
    elif name == BOTH:
        kits = [kit_named("context-management")]
        companions = {"companion": ("pi-context",)}
    else:
        kits = [kit_named(name)]
    if args.fault is not None:
        homes = [kit for kit in kits if args.fault in kit.faults]
        if not homes:
            owner = next((k.name for k in _registered() if args.fault in k.faults), None)
            if owner is None:
                known = sorted({f for k in _registered() for f in k.faults})
                raise UsageError(f"--fault {args.fault}: no such planted fault; known: {known}")
            raise UsageError(
                f"--fault {args.fault} is planted in {owner}, which --extension {name} does "
                f"not explore; use --extension {owner} or all"
            )
        kits = homes
    plan = []
    for kit in kits:
        variants = {
            option.name: tuple(getattr(args, _dest(option.name), None) or option.default)
            for option in kit.options
        }
        variants.update({k: v for k, v in companions.items() if k in variants})
        plan.append(
            (
                kit,
                ExploreOptions(
                    **({} if args.examples is None else {"examples": args.examples}),
                    steps=args.steps,
                    seed=args.seed,
                    time_budget=args.time_budget,
                    fault=args.fault,
                    scenarios=not args.no_scenarios,
                    variants=variants,
                ),
            )
        )
    return plan


def _explore(args: argparse.Namespace, kit: Kit, options: ExploreOptions) -> ExploreReport:
    from pictx_fsm.testing.explore import explore
    from pictx_fsm.testing.progress import ProgressLine

    if args.ray is not None:
        from pictx_fsm.testing.ray_verify import explore_on_ray

        return explore_on_ray(kit, options, args.workers)
    progress = None if args.quiet else ProgressLine(sys.stderr)
    try:
        return explore(kit, options, progress)
    finally:
        if progress is not None:
            progress.done()


def _summarise(args: argparse.Namespace, report: ExploreReport) -> bool:
    """Print one extension's report; whether it failed."""
    kit, options = report.kit, report.options
    verdict = report.coverage
    assert verdict is not None
    fingerprint = kit.machines().fingerprint[:12]
    described = kit.describe_settings(report.settings)
    print(
        f"pictx-fsm verify · {kit.name} · models {fingerprint}"
        + (f" · {described}" if described else "")
    )
    if options.fault:
        print(f"planted fault  {options.fault}")
    print(f"invariants     {len(kit.invariant_names)} checked after every action", end="")
    failed = False
    if report.failed:
        failed = True
        path = _write_counterexample(args, report)
        trace = report.counterexample
        assert trace is not None
        cut = " (shrinking cut short by the time budget)" if report.shrink_cut else ""
        print(": VIOLATED")
        print(f"  {report.violation}")
        print(f"  counterexample: {len(trace.actions)} actions{cut}, written to {path}")
        print(f"  reproduce with: pictx-fsm replay {path}")
    else:
        print(": all held")
    budget = " (time budget reached)" if report.budget_exhausted else ""
    print(
        f"examples       {report.scenario_runs} scenario runs + {report.examples} generated runs, "
        f"{report.actions:,} actions, seed {options.seed}{budget}"
    )
    print(
        f"throughput     {report.actions_per_second:,.0f} actions/s "
        f"({report.actions:,} actions checked in {report.elapsed:.1f}s)"
    )
    failed |= _print_coverage(report)
    from pictx_fsm.testing.boundaries import TALLY, summary

    for line in summary(kit.boundary_names(), report.tallies.get(TALLY)):
        print(line)
    lines, extra_failed = kit.report_lines(report.tallies, report.failed)
    for line in lines:
        print(line)
    failed |= extra_failed and not options.fault
    if options.fault and not report.failed:
        failed = True
        fault = kit.faults[options.fault]
        print(
            f"planted fault not detected: {options.fault} ({fault.caught_by} should have caught it)"
        )
    print(f"result         {'FAILED' if failed else 'OK'} ({report.elapsed:.1f}s exploring)")
    return failed


def _print_coverage(report: ExploreReport) -> bool:
    verdict = report.coverage
    assert verdict is not None
    coverage = verdict.coverage
    print(
        f"transitions    {coverage.covered}/{coverage.declared} declared transitions fired; "
        f"{len(coverage.exempted)} exempted ({verdict.exemptions_file}); "
        f"{len(coverage.missing)} missing"
    )
    for machine, (covered, declared) in coverage.by_machine().items():
        print(f"  {machine:<16} {covered:>4}/{declared}")
    if verdict.note:
        print(f"               {verdict.note}")
    if report.failed or not verdict.judged:
        return False  # coverage of an interrupted exploration says nothing
    for row in coverage.missing:
        print(f"  never fired: {row.transition}")
    for name in coverage.unknown_exemptions:
        print(f"  exemption for an undeclared transition: {name}")
    for row in coverage.stale_exemptions:
        print(f"  exempted as unreachable but fired {row.fired}x: {row.transition}")
    return not coverage.complete and not report.options.fault


def _write_coverage(path: Path, counts: dict[str, int]) -> None:
    try:
        path.write_text(json.dumps(counts, indent=1) + "\n")
    except OSError as error:
        raise UsageError(f"--coverage-out {path}: {error.strerror or error}") from None
    print(f"               coverage data written to {path}")


def _print_contracts(contracts: ContractReport | None, skipped: bool) -> bool:
    if contracts is None:
        print("contracts      skipped" + (" (--no-contracts)" if skipped else " (none named)"))
        return False
    functions = len(contracts.targets)
    if contracts.passed:
        print(
            f"contracts      {contracts.conditions} conditions on {functions} decision functions "
            "checked with CrossHair: no counterexample"
        )
        return False
    print(f"contracts      BROKEN ({len(contracts.counterexamples)} counterexample(s))")
    for counterexample in contracts.counterexamples:
        print(f"  {counterexample}")
    if not contracts.counterexamples:
        print(contracts.output.strip())
    return True


def _write_counterexample(args: argparse.Namespace, report: ExploreReport) -> Path:
    trace = report.counterexample
    assert trace is not None
    options = report.options
    name = f"counterexample-{report.kit.name}-{options.fault or 'seed' + str(options.seed)}.json"
    try:
        return trace.save(Path(args.out) / name)
    except OSError as error:
        raise UsageError(f"--out {args.out}: {error.strerror or error}") from None
