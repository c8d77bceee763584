"""The hot-loop makers of frozen values and the usage tally's copy, per call.

    python bench/bench_makers.py [--baseline DIR] [--number 100000] [--repeat 5] [--rounds 3]

Reading a session makes a tree node and a message's skeleton per entry, the audit a record
line per hook, the session audit a pending tool pair per call, and the usage index copies a
tally per message; each is made slot by slot instead of through the class's ``__init__``.
This times each maker (and ``__init__`` beside it, for scale) with ``timeit``: the least of
``--repeat`` runs of ``--number`` calls, and the least over ``--rounds`` rounds. With
``--baseline DIR`` (a checkout from before issue 23, whose makers were generated with
``exec``: ``git archive REV | tar -x -C DIR``) it loads that checkout's generators by file
(``session/slots.py``'s ``maker``, ``session/usage_tally.py``'s ``_slot_copier``), builds
the same makers for this checkout's classes with them, and times both kinds in this process,
interleaved: the mechanism compared, on the same classes, under the same load.
"""

from __future__ import annotations

import argparse
import importlib.util
import timeit
from collections.abc import Callable
from pathlib import Path
from typing import Any

Case = tuple[Callable[[Any], Any], Any, Callable[[], Any] | None]
"""(call the given maker on the case's fields, this checkout's maker, ``__init__`` call)."""


def _cases() -> dict[str, Case]:
    from pictx_fsm.audit.log import RecordLine, _new_record_line
    from pictx_fsm.extensions.pi_context.conformance.boundaries import Pending, _new_pending
    from pictx_fsm.session.entries import AgentMessage, MessageEntry
    from pictx_fsm.session.skeleton import _new_agent_message, _new_message_entry
    from pictx_fsm.session.tree import TreeNode, _new_node
    from pictx_fsm.session.usage_tally import Tally

    message = AgentMessage(role="user", raw={"role": "user"})
    entry = MessageEntry(id="e1", parent_id=None, timestamp="t", message=message)
    node = (entry, "e1", None, 1, 2)
    names = [field for field in TreeNode.__attrs_attrs__]
    node_fields = {field.name: value for field, value in zip(names, node, strict=True)}
    ids = frozenset({"c1"})
    tally = Tally()
    return {
        "tree node": (lambda make: make(*node), _new_node, lambda: TreeNode(**node_fields)),
        "message entry": (
            lambda make: make("e1", None, "t", {}, message),
            _new_message_entry,
            lambda: MessageEntry(id="e1", parent_id=None, timestamp="t", extra={}, message=message),
        ),
        "agent message": (
            lambda make: make("user", {"role": "user"}),
            _new_agent_message,
            lambda: AgentMessage(role="user", raw={"role": "user"}),
        ),
        "record line": (
            lambda make: make("{}", "ab"),
            _new_record_line,
            lambda: RecordLine(line="{}", hash="ab"),
        ),
        "pending tool pair": (
            lambda make: make(None, ids),
            _new_pending,
            lambda: Pending(call=None, ids=ids),
        ),
        "usage tally copy": (lambda make: make(tally), Tally.copy, None),
    }


def _generated(baseline: Path) -> dict[str, Any]:
    """The baseline's ``exec``-generated makers, built for this checkout's classes."""
    from pictx_fsm.audit.log import RecordLine
    from pictx_fsm.extensions.pi_context.conformance.boundaries import Pending
    from pictx_fsm.session.entries import AgentMessage, MessageEntry
    from pictx_fsm.session.tree import TreeNode
    from pictx_fsm.session.usage_tally import Tally

    slots = _load(baseline / "pictx_fsm" / "session" / "slots.py", "baseline_slots")
    tally = _load(baseline / "pictx_fsm" / "session" / "usage_tally.py", "baseline_tally")
    return {
        "tree node": slots.maker(TreeNode),
        "message entry": slots.maker(MessageEntry),
        "agent message": slots.maker(AgentMessage),
        "record line": slots.maker(RecordLine),
        "pending tool pair": slots.maker(Pending),
        "usage tally copy": tally._slot_copier(Tally),
    }


def _load(path: Path, name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _least(call: Callable[[], Any] | None, args: argparse.Namespace) -> float | None:
    if call is None:
        return None
    return min(timeit.repeat(call, number=args.number, repeat=args.repeat)) / args.number * 1e9


def _ns(value: float | None) -> str:
    return "–" if value is None else f"{value:,.0f} ns"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, help="a checkout with exec-generated makers")
    parser.add_argument("--number", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    cases = _cases()
    old = _generated(args.baseline.resolve()) if args.baseline else {}
    best: dict[str, list[float | None]] = {name: [None, None, None] for name in cases}
    for _ in range(args.rounds):
        for name, (call, mine, init) in cases.items():
            baseline = old.get(name)
            columns = [
                lambda call=call, mine=mine: call(mine),
                init,
                None if baseline is None else (lambda call=call, b=baseline: call(b)),
            ]
            for i, column in enumerate(columns):
                figure = _least(column, args)
                if figure is not None:
                    now = best[name][i]
                    best[name][i] = figure if now is None else min(now, figure)
    flags = f"--number {args.number} --repeat {args.repeat} --rounds {args.rounds}"
    flags += f" --baseline {args.baseline}" if args.baseline else ""
    print(f"`python bench/bench_makers.py {flags}`\n")
    header = "| value | maker (plain code) | `__init__` |"
    print(header + (" maker generated with `exec` (baseline) | plain / exec |" if old else ""))
    print("|---|---:|---:|" + ("---:|---:|" if old else ""))
    for name, (mine, init, before) in best.items():
        row = f"| {name} | {_ns(mine)} | {_ns(init)} |"
        if old:
            ratio = f"{mine / before:.2f}" if mine and before else "–"
            row += f" {_ns(before)} | {ratio} |"
        print(row)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
