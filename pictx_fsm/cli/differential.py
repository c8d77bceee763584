"""``pictx-fsm differential``: generated runs on a real Pi and on the model session, compared.

Draws ``--runs`` host sessions in verify's action language with ``--seed`` (the same seed and
``--runs``, the same runs), carries out each on the Pi at ``--pi`` (default: ``pi`` on
``PATH``; an npm prefix holding Pi and its Node works too) through the scripted faux model and
the driver extension, and on the model session in that Pi version's host profile, and compares
every session file (entry kinds and parents), every agent request (roles and the run's own
texts) and every lifecycle decision (each fired transition, in order). The first difference is
shrunk to a minimal run and written as a trace (``--out``); ``--replay TRACE`` runs one again.

Exit 0: no difference. 1: a difference (the shrunk run's trace path is printed). 2: Pi cannot
be started (the message says why), or bad input.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from pictx_fsm.errors import UsageError
from pictx_fsm.json_input import read_json_file
from pictx_fsm.testing.kit import Kit, kit_named

__all__ = ["configure", "run"]

DEFAULT_EXTENSION = "pi-context"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--extension",
        default=DEFAULT_EXTENSION,
        help=f"the extension's kit (default: {DEFAULT_EXTENSION})",
    )
    parser.add_argument("--runs", type=int, default=100, help="generated runs (default: 100)")
    parser.add_argument("--seed", type=int, default=0, help="the generator's seed (default: 0)")
    parser.add_argument(
        "--pi",
        metavar="PATH",
        help="the Pi to compare with: a `pi` executable, or an npm prefix holding Pi and its "
        "Node (default: `pi` on PATH)",
    )
    parser.add_argument(
        "--max-actions", type=int, default=24, help="actions drawn per run at most (default: 24)"
    )
    parser.add_argument(
        "--out",
        default="differential-out",
        help="where a difference's trace is written (default: differential-out)",
    )
    parser.add_argument(
        "--shrink-budget",
        type=float,
        default=900.0,
        help="seconds the shrinking of a difference may take (default: 900)",
    )
    parser.add_argument(
        "--plant",
        metavar="NAME",
        help="plant a divergence in the model session (late-follow-up, dropped-steer, "
        "boot-wrong-parent; an extension's own, e.g. context-management's "
        "entry-at-the-leafs-parent): the batch must fail on it",
    )
    parser.add_argument("--replay", metavar="TRACE", help="run a written trace again on both")
    parser.add_argument("--json", action="store_true", help="machine-readable summary")


def run(args: argparse.Namespace) -> int:
    from pictx_fsm.hosts.pi.offline import locate_pi
    from pictx_fsm.hosts.pi.support import OLDEST_SUPPORTED_PI, host_profile_for

    if args.runs < 1 or args.max_actions < 1:
        raise UsageError("--runs and --max-actions must be at least 1")
    kit = kit_named(args.extension)
    differential = kit.differential()
    if differential is None:
        raise UsageError(f"extension {kit.name!r} does not run in the real Pi (no differential)")
    plant = _planted(args.plant, differential)
    program = locate_pi(args.pi)
    version = program.version()
    profile = host_profile_for(version)
    if profile is None:
        raise UsageError(
            f"Pi {version} is not supported (the oldest supported is {OLDEST_SUPPORTED_PI})"
        )
    if args.replay:
        return _replay(args, kit, differential, program, version, profile.name, plant)
    return _batch(args, kit, differential, program, version, profile.name, plant)


def _planted(name: str | None, differential: Any) -> Any:
    """The plant of the divergence ``name``: the extension's own, else a generic one."""
    from pictx_fsm.testing.differential.divergences import divergence_named

    if name is None:
        return None
    own = differential.divergences()
    return (own[name] if name in own else divergence_named(name)).plant


def _batch(
    args: argparse.Namespace,
    kit: Kit,
    differential: Any,
    program: Any,
    version: str,
    profile: str,
    plant: Any,
) -> int:
    from pictx_fsm.testing.differential.batch import BatchOptions, run_batch

    options = BatchOptions(
        runs=args.runs,
        seed=args.seed,
        max_actions=args.max_actions,
        shrink_budget=args.shrink_budget,
        out=Path(args.out),
    )
    head = f"differential {kit.name} · Pi {version} (host profile {profile})"
    if not args.json:
        print(f"{head} · {args.runs} runs · seed {args.seed}", flush=True)

    def progress(report: Any) -> None:
        if not args.json and (report.runs % 10 == 0 or report.runs == args.runs):
            print(
                f"  {report.runs}/{args.runs} runs · {report.actions:,} actions · "
                f"{report.elapsed:.0f} s",
                flush=True,
            )

    def write(report: Any, outcome: Any) -> Path:
        return _write_trace(options.out, kit, version, profile, args.seed, outcome)

    report = run_batch(
        differential,
        program,
        version,
        profile,
        options,
        plant=plant,
        write_trace=write,
        progress=progress,
    )
    summary = {
        "extension": kit.name,
        "pi": version,
        "host_profile": profile,
        "seed": args.seed,
        "runs": report.runs,
        "actions": report.actions,
        "seconds": round(report.elapsed, 1),
        "kinds": dict(sorted(report.kinds.items())),
        "differences": 0 if report.found is None else 1,
        "trace": None if report.trace is None else str(report.trace),
    }
    if report.found is not None and report.shrunk is not None:
        summary["found"] = {
            "run": report.runs,
            "differs_in": list(report.found.differences),
            "actions": len(report.found.actions),
            "shrunk_actions": len(report.shrunk.actions),
            "shrink_runs": report.shrink_runs,
        }
    if args.json:
        print(json.dumps(summary, indent=1))
    else:
        print(f"runs         {report.runs} ({report.actions:,} actions) in {report.elapsed:.0f} s")
        if report.found is None or report.shrunk is None:
            print("differences  none")
        else:
            shrunk = report.shrunk
            print(
                f"difference   run {report.runs} differs in {', '.join(report.found.differences)}; "
                f"shrunk from {len(report.found.actions)} to {len(shrunk.actions)} actions "
                f"({report.shrink_runs} runs)"
            )
            print(f"  {_first(shrunk)}")
            print(f"trace        {report.trace}")
    return 1 if report.found is not None else 0


def _first(outcome: Any) -> str:
    """Where the two hosts first part, in words."""
    if outcome.crash is not None:
        return f"the model session raised {outcome.crash}"
    for dimension in outcome.differences:
        model, real = getattr(outcome.model, dimension), getattr(outcome.real, dimension)
        for index in range(max(len(model), len(real))):
            left = model[index] if index < len(model) else None
            right = real[index] if index < len(real) else None
            if left != right:
                return f"{dimension}[{index}]: model {left!r}; real Pi {right!r}"
    return "no difference"


def _write_trace(out: Path, kit: Kit, version: str, profile: str, seed: int, outcome: Any) -> Path:
    from pictx_fsm.testing.differential.portable import portable_message
    from pictx_fsm.testing.trace import Trace

    trace = Trace(
        kit=kit,
        config=outcome.config,
        actions=outcome.actions,
        failure={"message": _first(outcome), "invariant": "differential"},
    )
    document = trace.to_json()
    document["differential"] = {
        "pi": version,
        "host_profile": profile,
        "differs_in": list(outcome.differences),
        "model": None if outcome.model is None else outcome.model.to_json(),
        "real": outcome.real.to_json(),
        "system_message": portable_message(outcome.system_message),
    }
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"differential-{kit.name}-pi-{version}-seed{seed}.json"
    path.write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    return path


def _replay(
    args: argparse.Namespace,
    kit: Kit,
    differential: Any,
    program: Any,
    version: str,
    profile: str,
    plant: Any,
) -> int:
    from pictx_fsm.testing.differential.batch import compare
    from pictx_fsm.testing.differential.runs import NotRealisable, normalize
    from pictx_fsm.testing.trace import trace_from_json

    trace = trace_from_json(read_json_file(args.replay), args.replay)
    if trace.kit.name != kit.name:
        kit = trace.kit
        differential = kit.differential()
        if differential is None:
            raise UsageError(f"{args.replay}: extension {kit.name!r} has no differential")
    config = differential.config_for(trace.config, profile)
    try:
        actions = normalize(trace.actions, differential.category)
    except NotRealisable as error:
        raise UsageError(f"{args.replay}: {error}") from None
    with tempfile.TemporaryDirectory(prefix="pictx-differential-") as work:
        outcome = compare(differential, program, config, actions, Path(work), plant)
    if args.json:
        print(
            json.dumps(
                {"trace": args.replay, "pi": version, "differs_in": list(outcome.differences)}
            )
        )
    else:
        print(f"replay {args.replay} on Pi {version} ({profile}): {len(actions)} actions")
        print(f"differences  {_first(outcome) if outcome.differences else 'none'}")
    sys.stdout.flush()
    return 1 if outcome.differences else 0
