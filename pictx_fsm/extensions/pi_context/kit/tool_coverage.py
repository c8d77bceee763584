"""Outcome coverage of the nine notes and history tools, beside transition coverage.

Every call the runtime shell answers is in its audit log with the tool's name and the
outcome's status (``ok``, ``refusal``, ``error``: the channels of N4). ``pictx-fsm verify``
counts them over all runs; a (tool, outcome) pair that no run reached fails the run unless
``tool-outcome-exemptions.toml`` in the models directory documents why it cannot happen,
exactly as ``coverage-exemptions.toml`` does for transitions.
"""

from __future__ import annotations

import json
import tomllib
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Final, get_args

from attrs import frozen

from pictx_fsm.errors import ModelDocumentError
from pictx_fsm.extensions.pi_context.kit.actions import Action, Prompt, Script, Settle
from pictx_fsm.extensions.pi_context.kit.notes_sandbox import ITEM_REF, WINDOW_REF
from pictx_fsm.extensions.pi_context.tools import HANDLERS, ToolStatus
from pictx_fsm.host.events import ToolCall

__all__ = [
    "EXEMPTIONS_FILE",
    "OUTCOMES",
    "STATUSES",
    "ToolOutcomeCoverage",
    "load_exemptions",
    "tool_outcome_coverage",
    "tool_outcomes",
    "tool_story",
]

EXEMPTIONS_FILE: Final = "tool-outcome-exemptions.toml"
STATUSES: Final[tuple[str, ...]] = get_args(ToolStatus)
OUTCOMES: Final[tuple[str, ...]] = tuple(
    f"{tool}:{status}" for tool in HANDLERS for status in STATUSES
)
"""Every (tool, outcome) pair, ``<tool>:<status>``, in registration order."""


def tool_outcomes(records: Iterable[Mapping[str, Any]]) -> Counter[str]:
    """``<tool>:<status>`` of every notes or history tool call in these audit records."""
    counts: Counter[str] = Counter()
    for record in records:
        if record.get("hook") != ToolCall.HOOK:
            continue
        name = record["event"]["name"]
        value = record["result"]["value"]
        if name in HANDLERS and isinstance(value, Mapping):
            counts[f"{name}:{value['status']}"] += 1
    return counts


def load_exemptions(directory: Path) -> dict[str, str]:
    """``{"<tool>:<status>": reason}`` from the models directory (empty without the file)."""
    path = directory / EXEMPTIONS_FILE
    if not path.exists():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise ModelDocumentError(str(path), "document", str(error)) from None
    table = data.get("exemptions", {})
    if not isinstance(table, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and v.strip() for k, v in table.items()
    ):
        raise ModelDocumentError(str(path), "exemptions", 'expected "<tool>:<status>" = "reason"')
    return dict(table)


@frozen(kw_only=True)
class ToolOutcomeCoverage:
    counts: Mapping[str, int]
    exemptions: Mapping[str, str]

    @property
    def reached(self) -> tuple[str, ...]:
        return tuple(o for o in OUTCOMES if self.counts.get(o, 0) > 0)

    @property
    def missing(self) -> tuple[str, ...]:
        """Never reached and not exempted: what fails ``verify``."""
        return tuple(o for o in OUTCOMES if not self.counts.get(o) and o not in self.exemptions)

    @property
    def stale_exemptions(self) -> tuple[str, ...]:
        """Exempted as unreachable, yet reached: the documented reason is wrong."""
        return tuple(o for o in self.exemptions if self.counts.get(o))

    @property
    def unknown_exemptions(self) -> tuple[str, ...]:
        return tuple(o for o in self.exemptions if o not in OUTCOMES)

    @property
    def complete(self) -> bool:
        return not (self.missing or self.stale_exemptions or self.unknown_exemptions)

    def lines(self) -> list[str]:
        """What ``verify`` prints: one summary line, then a row per tool."""
        out = [
            f"tool outcomes  {len(self.reached)}/{len(OUTCOMES)} (tool, outcome) pairs reached; "
            f"{len(self.exemptions)} exempted ({EXEMPTIONS_FILE}); {len(self.missing)} missing"
        ]
        for tool in HANDLERS:
            cells = [f"{s} {self.counts.get(f'{tool}:{s}', 0):>5}" for s in STATUSES]
            out.append(f"  {tool:<16} {'  '.join(cells)}")
        return out

    def problems(self) -> list[str]:
        return [
            *(f"  never reached: {outcome}" for outcome in self.missing),
            *(f"  exempted as unreachable but reached: {o}" for o in self.stale_exemptions),
            *(f"  exemption for an unknown tool outcome: {o}" for o in self.unknown_exemptions),
        ]


def tool_outcome_coverage(counts: Mapping[str, int], models: Path) -> ToolOutcomeCoverage:
    return ToolOutcomeCoverage(counts=dict(counts), exemptions=load_exemptions(models))


# -- the seed story ----------------------------------------------------------------------------

_FIRST = {WINDOW_REF: 0}
_STORY: Final[tuple[tuple[tuple[str, Mapping[str, Any]], ...], ...]] = (
    (
        ("notes_write", {"address": "plan.md", "content": "alpha beta needle"}),
        ("notes_write", {"address": "@agents/other/x.md", "content": "x"}),
        ("notes_write", {"address": "../x.md", "content": "x"}),
    ),
    (
        ("notes_edit", {"address": "plan.md", "edits": [{"oldText": "alpha", "newText": "gamma"}]}),
        ("notes_edit", {"address": "plan.md"}),
        ("notes_edit", {"address": "a\\b.md", "stale": True}),
    ),
    (
        ("notes_read", {"address": "plan.md"}),
        ("notes_read", {"address": "missing.md"}),
        ("notes_read", {"address": "@human/leak.md"}),
    ),
    (
        ("notes_list", {}),
        ("notes_list", {"pattern": "@agents/Bad Name/**"}),
        ("notes_list", {"cursor": "x"}),
    ),
    (
        ("notes_search", {"query": "needle"}),
        ("notes_search", {"query": "x", "pattern": "@agents/Bad Name/**"}),
        ("notes_search", {"query": ""}),
    ),
    (("notes_write", {"address": "@project/design.md", "content": "beta"}), ("wipe_memory", {})),
    (
        ("history_windows", {}),
        ("history_windows", {"limit": "x"}),
        ("history_list", {"window_id": _FIRST, "role": "user"}),
        ("history_list", {"window_id": "pcw:unknown:window"}),
        ("history_list", {"cursor": -1}),
    ),
    (
        ("history_read", {"window_id": _FIRST, "item_id": {ITEM_REF: [0, 0]}}),
        ("history_read", {"window_id": _FIRST, "item_id": "no-such-item"}),
        ("history_read", {"window_id": _FIRST, "item_id": {ITEM_REF: [0, 0]}, "offset_chars": "x"}),
        ("history_search", {"query": "needle"}),
        ("history_search", {"query": "needle", "role": "user", "tool_name": "notes_write"}),
        ("history_search", {"query": []}),
    ),
)


def tool_story() -> tuple[Action, ...]:
    """A seed scenario reaching every (tool, outcome) pair that can happen: one prompt whose
    model runs eight tool batches (the sixth wipes the window), so coverage of the tools'
    outcomes never depends on how far the random phase got."""
    scripts = [
        Script(
            reply="tools",
            tools=tuple(name for name, _ in batch),
            arguments=tuple(json.dumps(arguments, sort_keys=True) for _, arguments in batch),
        )
        for batch in _STORY
    ]
    return (*scripts, Prompt(chars=60), Settle())
