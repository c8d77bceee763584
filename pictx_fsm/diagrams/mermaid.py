"""Mermaid ``stateDiagram-v2`` text of a :class:`~pictx_fsm.diagrams.ir.Diagram`.

Regions of a parallel machine are concurrent composite states separated by ``--`` inside the
parallel state. State ids are prefixed and sanitised (Mermaid ids are plain words); each state
keeps its real name as its label. Mermaid cannot style a single transition of a state diagram,
so the overlay is written into the labels: ``(fired N)`` or ``(never fired)``.
"""

from __future__ import annotations

import re

from pictx_fsm.diagrams.ir import Diagram, Region

__all__ = ["to_mermaid"]

_INDENT = "    "


def _word(prefix: str, name: str) -> str:
    return prefix + re.sub(r"[^A-Za-z0-9_]", "_", name)


class _Ids:
    """Unique Mermaid ids, assigned in document order (so the text is stable)."""

    def __init__(self) -> None:
        self.by_key: dict[tuple[str, str], str] = {}
        self.used: set[str] = set()

    def get(self, prefix: str, name: str) -> str:
        key = (prefix, name)
        if key not in self.by_key:
            candidate = base = _word(prefix, name)
            suffix = 2
            while candidate in self.used:
                candidate, suffix = f"{base}_{suffix}", suffix + 1
            self.used.add(candidate)
            self.by_key[key] = candidate
        return self.by_key[key]


def to_mermaid(diagram: Diagram) -> str:
    """The diagram as Mermaid text, ending with a newline."""
    ids = _Ids()
    lines = ["---", f"title: {diagram.machine}", "---", "stateDiagram-v2"]
    lines += [f"{_INDENT}%% {line}" for line in diagram.description.splitlines() if line.strip()]
    if diagram.parallel_state is None:
        lines += _region_body(diagram.regions[0], ids, depth=1)
    else:
        outer = ids.get("p_", diagram.parallel_state)
        lines.append(f'{_INDENT}state "{diagram.parallel_state}" as {outer}')
        lines.append(f"{_INDENT}[*] --> {outer}")
        lines.append(f"{_INDENT}state {outer} {{")
        for position, region in enumerate(diagram.regions):
            if position:
                lines.append(_INDENT * 2 + "--")
            lines += _region_block(region, ids, depth=2)
        lines.append(_INDENT + "}")
    return "\n".join(lines) + "\n"


def _region_block(region: Region, ids: _Ids, *, depth: int) -> list[str]:
    pad = _INDENT * depth
    block = ids.get("r_", region.name)
    lines = [f'{pad}state "{region.name}" as {block}', f"{pad}state {block} {{"]
    lines += _region_body(region, ids, depth=depth + 1)
    lines.append(pad + "}")
    return lines


def _region_body(region: Region, ids: _Ids, *, depth: int) -> list[str]:
    pad = _INDENT * depth
    lines = [f'{pad}state "{state}" as {ids.get("s_", state)}' for state in region.states]
    lines.append(f"{pad}[*] --> {ids.get('s_', region.initial)}")
    for edge in region.edges:
        source, target = ids.get("s_", edge.source), ids.get("s_", edge.target)
        lines.append(f"{pad}{source} --> {target} : {_label(edge.caption)}")
    return lines


def _label(text: str) -> str:
    # A label runs to the end of the line; ';' and '#' would end or escape it in Mermaid.
    return text.replace(";", ",").replace("#", "")
