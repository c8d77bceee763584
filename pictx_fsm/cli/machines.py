"""``pictx-fsm machines``: list the declared machines, read from their documents.

Shows, per machine, its document and digest, regions with their states (initial marked),
events, every transition with its stable id, and the completeness gaps (state × event pairs
where a declared event could be refused). ``--json`` gives the same as one JSON document.
"""

from __future__ import annotations

import argparse
import json
import textwrap
from pathlib import Path
from typing import Any

from pictx_fsm.diagrams.ir import transition_label
from pictx_fsm.errors import UsageError
from pictx_fsm.machines import models_dir
from pictx_fsm.machines.conditions import render_condition
from pictx_fsm.machines.document import (
    MachineSpec,
    TransitionSpec,
    completeness_gaps,
    fingerprint,
)
from pictx_fsm.machines.families import load_families
from pictx_fsm.testing.kit import kit_named, kit_names

__all__ = ["configure", "describe", "run", "select_machines"]


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--machine", metavar="NAME", help="only this machine (default: all)")
    parser.add_argument("--json", action="store_true", help="print one JSON document")
    parser.add_argument(
        "--models", metavar="DIR", type=Path, help="models directory (default: the package's)"
    )


def run(args: argparse.Namespace) -> int:
    specs = select_machines(args.models, args.machine)
    if args.json:
        document = {
            "fingerprint": fingerprint(specs),
            "machines": [describe(spec) for spec in specs],
        }
        print(json.dumps(document, indent=2))
    else:
        print("\n\n".join(_text(spec) for spec in specs))
    return 0


def select_machines(directory: Path | None, name: str | None) -> list[MachineSpec]:
    """The machines of every family under ``directory`` (default :func:`models_dir`), or only
    ``name``.

    A family holding an extension's machines is also bound to that extension's guards and
    actions (its kit's :meth:`~pictx_fsm.testing.kit.Kit.check_bindings`), so a reference
    nobody binds is reported here, naming its transition."""
    root = directory if directory is not None else models_dir()
    specs: dict[str, MachineSpec] = {}
    kits = [kit_named(name) for name in kit_names()]
    for family in load_families(root):
        for kit in kits:
            kit.check_bindings(family.machines, family.directory)
        specs.update(family.machines)
    if name is None or name == "all":
        if not specs:
            raise UsageError(f"no machine documents in {directory or models_dir()}")
        return list(specs.values())
    if name not in specs:
        raise UsageError(f"no machine {name!r}; declared: {', '.join(specs) or 'none'}")
    return [specs[name]]


def describe(spec: MachineSpec) -> dict[str, Any]:
    """A machine as JSON-ready data."""
    return {
        "name": spec.name,
        "description": spec.description,
        "document": spec.source,
        "sha256": spec.sha256,
        "parallel_state": spec.parallel_state,
        "regions": [
            {"name": r.name, "states": list(r.states), "initial": r.initial} for r in spec.regions
        ],
        "events": list(spec.events),
        "guards": list(spec.guard_names),
        "actions": list(spec.action_names),
        "transitions": [_transition(t) for t in spec.transitions],
        "gaps": [
            {"region": region, "state": state, "event": event}
            for region, state, event in completeness_gaps(spec)
        ],
    }


def _transition(transition: TransitionSpec) -> dict[str, Any]:
    return {
        "id": transition.id,
        "region": transition.region,
        "source": transition.source,
        "event": transition.event,
        "target": transition.target,
        "cond": None if transition.cond is None else render_condition(transition.cond),
        "unless": None if transition.unless is None else render_condition(transition.unless),
        "actions": list(transition.actions),
    }


def _text(spec: MachineSpec) -> str:
    lines = [spec.name]
    lines += textwrap.wrap(spec.description, width=96, initial_indent="  ", subsequent_indent="  ")
    lines.append(f"  document    {spec.source} (sha256 {spec.sha256})")
    if spec.parallel_state is not None:
        lines.append(f"  parallel    {spec.parallel_state}")
    for region in spec.regions:
        states = ", ".join(s + ("*" if s == region.initial else "") for s in region.states)
        lines.append(f"  region      {region.name}: {states}   (* initial)")
    lines.append(f"  events      {', '.join(spec.events)}")
    lines.append(f"  transitions {len(spec.transitions)}")
    width = max(len(t.id) for t in spec.transitions)
    for t in spec.transitions:
        lines.append(f"    {t.id:<{width}}  -> {t.target:<14} {transition_label(t)}")
    gaps = completeness_gaps(spec)
    lines.append(
        f"  gaps        {len(gaps)} (state x event where a declared event could be refused)"
    )
    lines += [f"    {region}: {state} x {event}" for region, state, event in gaps]
    return "\n".join(lines)
