"""``pictx-fsm verify``: explore the lifecycle on the embedded model session and check it.

Runs, in parallel, the stateful exploration (seed scenarios, then Hypothesis-generated host
sessions, every invariant checked after every action) and the CrossHair contracts of the
decision functions; then reports invariants, examples, transition coverage and contracts.
Exit 0 when everything holds and every declared transition fired (or is exempted with a
documented reason); 1 on a counterexample (written as a replayable trace), a missing
transition or a broken contract; 2 on bad options.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from pictx_fsm.cli.verify_cm import run_cm
from pictx_fsm.errors import UsageError
from pictx_fsm.extensions.pi_context.lifecycle import load_lifecycle
from pictx_fsm.extensions.pi_context.texts import Profile
from pictx_fsm.hosts.model.profiles import HOST_PROFILES
from pictx_fsm.testing.cm.faults import CM_FAULTS
from pictx_fsm.testing.contracts import ContractReport, ContractRun
from pictx_fsm.testing.coverage import EXEMPTIONS_FILE, Coverage
from pictx_fsm.testing.faults import FAULTS
from pictx_fsm.testing.invariants import INVARIANT_TYPES

if TYPE_CHECKING:  # the exploration needs Hypothesis, imported only when verify runs
    from pictx_fsm.testing.explore import ExploreReport, Progress

EXTRA_HINT = "install the verify extra: pip install '.[verify]' (hypothesis, crosshair-tool)"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--examples",
        type=int,
        help="most generated runs (default: as many as the time budget allows)",
    )
    parser.add_argument("--steps", type=int, default=40, help="max actions per run (default 40)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument(
        "--time-budget",
        type=float,
        default=45.0,
        help="seconds of exploration, shrinking included (default 45)",
    )
    parser.add_argument(
        "--profile",
        action="append",
        choices=[p.value for p in Profile],
        help="profile(s) to explore (default: both)",
    )
    parser.add_argument(
        "--host-profile",
        action="append",
        choices=list(HOST_PROFILES),
        help="Pi version(s) the model session behaves as (default: all)",
    )
    parser.add_argument(
        "--fault", choices=sorted({*FAULTS, *CM_FAULTS}), help="plant a deliberate fault"
    )
    parser.add_argument(
        "--extension",
        choices=["pi-context", "context-management", "both", "all"],
        default="all",
        help="what to explore: pi-context, pi-context-management alone, both on one host, "
        "or all of these (default)",
    )
    parser.add_argument("--out", default="verify-out", help="where counterexamples go")
    parser.add_argument("--coverage-out", help="write {transition: count} JSON here")
    parser.add_argument("--no-contracts", action="store_true", help="skip the CrossHair check")
    parser.add_argument(
        "--contract-timeout", type=float, default=2.0, help="CrossHair seconds per condition"
    )
    parser.add_argument("--no-scenarios", action="store_true", help="skip the seed scenarios")
    parser.add_argument("--quiet", action="store_true", help="no progress display")


MAX_STEPS = 10_000
"""Longer runs only slow shrinking down; the interesting interleavings are short."""


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
    extension = _extension_of(args.extension, args.fault)
    code = 0
    if extension in ("pi-context", "all"):
        code = _run_pi_context(args)
    if extension != "pi-context":
        code = max(code, run_cm(args, extension))
    return code


def _extension_of(extension: str, fault: str | None) -> str:
    """What to explore: a planted fault narrows ``all`` (and ``both``, for a pi-context
    fault) to the extension it is planted in; a fault in an extension not explored is an
    error, never a run that cannot catch it."""
    if fault is None:
        return extension
    home = "pi-context" if fault in FAULTS else "context-management"
    if extension == ("context-management" if home == "pi-context" else "pi-context"):
        raise UsageError(
            f"--fault {fault} is planted in {home}, which --extension {extension} does not "
            f"explore; use --extension {home}, both or all"
        )
    return home if extension == "all" or home == "pi-context" else extension


def _run_pi_context(args: argparse.Namespace) -> int:
    from pictx_fsm.testing.explore import ExploreOptions, explore

    lifecycle = load_lifecycle()
    options = ExploreOptions(
        **({} if args.examples is None else {"examples": args.examples}),
        steps=args.steps,
        seed=args.seed,
        time_budget=args.time_budget,
        profiles=tuple(args.profile or [p.value for p in Profile]),
        hosts=tuple(args.host_profile or HOST_PROFILES),
        fault=args.fault,
        scenarios=not args.no_scenarios,
    )
    contracts = (
        None if args.no_contracts else ContractRun(per_condition_timeout=args.contract_timeout)
    )
    progress = None if args.quiet else _Progress(sys.stderr)
    try:
        report = explore(options, lifecycle, progress)
    except BaseException:
        if contracts is not None:
            contracts.cancel()
        raise
    if progress is not None:
        progress.done()
    if contracts is not None and progress is not None:
        print("waiting for CrossHair…", file=sys.stderr)
    contract_report = contracts.result() if contracts is not None else None
    return _summarise(args, lifecycle.fingerprint, report, contract_report)


class _Progress:
    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.tty = stream.isatty()
        self.last = -1.0

    def __call__(self, p: Progress) -> None:
        if not self.tty and p.elapsed - self.last < 5.0:
            return
        self.last = p.elapsed
        line = (
            f"[{p.phase}] {p.examples} runs · {p.actions:,} actions · "
            f"{p.covered}/{p.declared} transitions · {p.elapsed:.1f}s"
        )
        end = "\r" if self.tty else "\n"
        self.stream.write(f"{line:<100}{end}")
        self.stream.flush()

    def done(self) -> None:
        if self.tty:
            self.stream.write("\n")


def _summarise(
    args: argparse.Namespace,
    fingerprint: str,
    report: ExploreReport,
    contracts: ContractReport | None,
) -> int:
    coverage = report.coverage
    assert coverage is not None
    failed = False
    options = report.options
    print(
        f"pictx-fsm verify · models {fingerprint[:12]} · profiles {', '.join(options.profiles)}"
        f" · hosts {', '.join(options.hosts)}"
    )
    if options.fault:
        print(f"planted fault  {options.fault}")
    print(f"invariants     {len(INVARIANT_TYPES)} checked after every action", end="")
    if report.failed:
        failed = True
        path = _write_counterexample(args, report)
        print(": VIOLATED")
        print(f"  {report.violation}")
        trace = report.counterexample
        assert trace is not None
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
    print(
        f"throughput     {report.actions_per_second:,.0f} actions/s "
        f"({report.actions:,} actions checked in {report.elapsed:.1f}s)"
    )
    failed |= _print_coverage(coverage, report)
    failed |= _print_tool_outcomes(report)
    if args.coverage_out:
        _write_coverage(Path(args.coverage_out), coverage)
    failed |= _print_contracts(contracts)
    if options.fault and not report.failed:
        failed = True
        print(
            f"planted fault not detected: {options.fault} ({FAULTS[options.fault].caught_by} "
            "should have caught it)"
        )
    print(f"result         {'FAILED' if failed else 'OK'} ({report.elapsed:.1f}s exploring)")
    return 1 if failed else 0


def _write_coverage(path: Path, coverage: Coverage) -> None:
    try:
        path.write_text(json.dumps(coverage.counts(), indent=1) + "\n")
    except OSError as error:
        raise UsageError(f"--coverage-out {path}: {error.strerror or error}") from None
    print(f"               coverage data written to {path}")


def _print_coverage(coverage: Coverage, report: ExploreReport) -> bool:
    fired = coverage.covered
    exempt = len(coverage.exempted)
    print(
        f"transitions    {fired}/{coverage.declared} declared transitions fired; "
        f"{exempt} exempted ({EXEMPTIONS_FILE}); {len(coverage.missing)} missing"
    )
    for machine, (covered, declared) in coverage.by_machine().items():
        print(f"  {machine:<14} {covered:>4}/{declared}")
    if report.failed:
        return False  # coverage of an interrupted exploration says nothing
    for row in coverage.missing:
        print(f"  never fired: {row.transition}")
    for name in coverage.unknown_exemptions:
        print(f"  exemption for an undeclared transition: {name}")
    for row in coverage.stale_exemptions:
        print(f"  exempted as unreachable but fired {row.fired}x: {row.transition}")
    return not coverage.complete and not report.options.fault


def _print_tool_outcomes(report: ExploreReport) -> bool:
    """Outcome coverage of the notes and history tools (ok / refusal / error per tool)."""
    tools = report.tool_coverage
    assert tools is not None
    print("\n".join(tools.lines()))
    if report.failed:
        return False
    for line in tools.problems():
        print(line)
    return not tools.complete and not report.options.fault


def _print_contracts(contracts: ContractReport | None) -> bool:
    if contracts is None:
        print("contracts      skipped (--no-contracts)")
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
    name = f"counterexample-{report.options.fault or 'seed' + str(report.options.seed)}.json"
    try:
        return trace.save(Path(args.out) / name)
    except OSError as error:
        raise UsageError(f"--out {args.out}: {error.strerror or error}") from None


__all__ = ["configure", "run"]
