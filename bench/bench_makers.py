"""The hot-loop makers of frozen values and the usage tally's copy, per call.

    python bench/bench_makers.py [--baseline DIR] [--number 200000] [--repeat 7] [--rounds 3]

Reading a session makes a tree node and a message's skeleton per entry, the audit a record
line per hook, the session audit a pending tool pair per call, and the usage index copies a
tally per message; each is made slot by slot instead of through the class's ``__init__``.
This times each maker (and ``__init__`` beside it, for scale) with ``timeit``, the least of
``--repeat`` runs of ``--number`` calls (the least is the run other processes disturbed
least), in this checkout and, with ``--baseline DIR`` (another checkout: ``git archive REV |
tar -x -C DIR``), in that one, each in its own process, the two alternating for ``--rounds``
rounds; each figure is the least over the rounds.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import timeit
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _cases() -> dict[str, tuple[Any, Any]]:
    """Each maker and its class's ``__init__``, as zero-argument calls on the same fields."""
    from pictx_fsm.audit.log import RecordLine, _new_record_line
    from pictx_fsm.conformance.boundaries import Pending, _new_pending
    from pictx_fsm.extensions.pi_context.windows import Window
    from pictx_fsm.session.entries import AgentMessage, MessageEntry
    from pictx_fsm.session.skeleton import _new_agent_message, _new_message_entry
    from pictx_fsm.session.tree import TreeNode, _new_node
    from pictx_fsm.session.usage_tally import Tally

    message = AgentMessage(role="user", raw={"role": "user"})
    entry = MessageEntry(id="e1", parent_id=None, timestamp="t", message=message)
    window = Window(window_id="w", marker_id=None, marker_timestamp=None, previous=None, depth=0)
    node = ("e1", None, 1, 2, window, frozenset(), None, False)
    names = ("id", "parent", "depth", "order", "window", "window_message_types")
    node_fields = dict(zip(names, node, strict=False))
    node_fields.update(window_boot_id=None, window_continued=False)
    ids = frozenset({"c1"})
    tally = Tally()
    return {
        "tree node": (
            lambda: _new_node(entry, *node),
            lambda: TreeNode(entry=entry, **node_fields),
        ),
        "message entry": (
            lambda: _new_message_entry("e1", None, "t", {}, message),
            lambda: MessageEntry(id="e1", parent_id=None, timestamp="t", extra={}, message=message),
        ),
        "agent message": (
            lambda: _new_agent_message("user", {"role": "user"}),
            lambda: AgentMessage(role="user", raw={"role": "user"}),
        ),
        "record line": (
            lambda: _new_record_line("{}", "ab"),
            lambda: RecordLine(line="{}", hash="ab"),
        ),
        "pending tool pair": (
            lambda: _new_pending(None, ids),
            lambda: Pending(call=None, ids=ids),
        ),
        "usage tally copy": (tally.copy, None),
    }


def _work(number: int, repeat: int) -> dict[str, list[float | None]]:
    def least(call: Any) -> float | None:
        if call is None:
            return None
        return min(timeit.repeat(call, number=number, repeat=repeat)) / number * 1e9

    return {name: [least(made), least(built)] for name, (made, built) in _cases().items()}


def _spawn(source: Path, number: int, repeat: int) -> dict[str, list[float | None]]:
    command = [sys.executable, str(Path(__file__).resolve()), "_worker", str(number), str(repeat)]
    env = dict(os.environ, PYTHONPATH=str(source))
    done = subprocess.run(command, env=env, cwd=source, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"{source}: worker failed\n{done.stderr[-2000:]}")
    result: dict[str, list[float | None]] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _least(runs: list[dict[str, list[float | None]]]) -> dict[str, list[float | None]]:
    """Per value and column, the least figure over the rounds."""
    return {
        name: [
            min((run[name][i] for run in runs if run[name][i] is not None), default=None)
            for i in range(2)
        ]
        for name in runs[0]
    }


def _ns(value: float | None) -> str:
    return "–" if value is None else f"{value:,.0f} ns"


def main() -> int:
    if len(sys.argv) > 3 and sys.argv[1] == "_worker":
        print(json.dumps(_work(int(sys.argv[2]), int(sys.argv[3]))))
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, help="another checkout")
    parser.add_argument("--number", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    heres, theres = [], []
    for _ in range(args.rounds):
        heres.append(_spawn(ROOT, args.number, args.repeat))
        if args.baseline:
            theres.append(_spawn(args.baseline.resolve(), args.number, args.repeat))
    here = _least(heres)
    there = _least(theres) if theres else None
    baseline = f" --baseline {args.baseline}" if args.baseline else ""
    command = f"--number {args.number} --repeat {args.repeat} --rounds {args.rounds}{baseline}"
    print(f"`python bench/bench_makers.py {command}`")
    print()
    columns = "| value | maker (this checkout) | `__init__` |"
    print(columns + (f" maker (`{args.baseline}`) | this / baseline |" if there else ""))
    print("|---|---:|---:|" + ("---:|---:|" if there else ""))
    for name, (made, built) in here.items():
        row = f"| {name} | {_ns(made)} | {_ns(built)} |"
        if there is not None:
            before = there[name][0]
            ratio = f"{made / before:.2f}" if made and before else "–"
            row += f" {_ns(before)} | {ratio} |"
        print(row)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
