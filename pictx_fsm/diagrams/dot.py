"""Graphviz DOT text of a :class:`~pictx_fsm.diagrams.ir.Diagram`.

One cluster per region (inside a cluster for the parallel state), nodes named
``"region/state"`` so equal names in two regions can never merge, and every attribute written
in a fixed order, so the text is byte-identical run to run.

Lifecycle machines declare many explicit self-transitions (an ignored event is one); drawn as
loops their labels pile on top of each other, so they are listed inside the state's box, one
line each, as UML lists internal transitions (without entry/exit actions the two mean the
same). Transitions between the same two states share one arrow with one label line each.
With an overlay every line says how often its transition fired; never-fired lines are red,
and an arrow none of whose transitions ever fired is dashed.
"""

from __future__ import annotations

import textwrap

from pictx_fsm.diagrams.ir import Diagram, Edge, Region

__all__ = ["to_dot"]

_FONT = "Helvetica"


def _quote(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def to_dot(diagram: Diagram) -> str:
    """The diagram as DOT text, ending with a newline."""
    title = "\n".join([diagram.machine, *textwrap.wrap(diagram.description, width=80)])
    lines = [
        f"digraph {_quote(diagram.machine)} {{",
        f"  graph [label={_quote(title)}, labelloc=t, rankdir=LR, fontname={_quote(_FONT)}];",
        f"  node [shape=box, style=rounded, fontname={_quote(_FONT)}];",
        f"  edge [fontname={_quote(_FONT)}, fontsize=10];",
    ]
    if diagram.parallel_state is None:
        lines += _region_nodes(diagram.regions[0], indent="  ")
    else:
        lines.append(f"  subgraph {_quote('cluster_' + diagram.parallel_state)} {{")
        lines.append(f"    label={_quote(diagram.parallel_state + ' (parallel)')};")
        for region in diagram.regions:
            lines.append(f"    subgraph {_quote('cluster_' + region.name)} {{")
            lines.append(f"      label={_quote(region.name)};")
            lines += _region_nodes(region, indent="      ")
            lines.append("    }")
        lines.append("  }")
    for region in diagram.regions:
        lines += [_arrow(region, group) for group in _group(region.edges)]
    lines.append("}")
    return "\n".join(lines) + "\n"


def _node(region: Region, state: str) -> str:
    return _quote(f"{region.name}/{state}")


def _region_nodes(region: Region, *, indent: str) -> list[str]:
    start = _quote(f"{region.name}/[*]")
    lines = [f'{indent}{start} [shape=point, label=""];']
    for state in region.states:
        loops = [e for e in region.edges if e.source == state and e.target == state]
        lines.append(f"{indent}{_node(region, state)} [label={_state_label(state, loops)}];")
    lines.append(f"{indent}{start} -> {_node(region, region.initial)};")
    return lines


def _state_label(state: str, loops: list[Edge]) -> str:
    if not loops:
        return _quote(state)
    rows = [f"<TR><TD><B>{_html(state)}</B></TD></TR>", "<HR/>"]
    for edge in loops:
        text = _html(edge.caption)
        if edge.never_fired:
            text = f'<FONT COLOR="red">{text}</FONT>'
        rows.append(f'<TR><TD ALIGN="LEFT">{text}</TD></TR>')
    table = '<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="1">'
    return f"<{table}{''.join(rows)}</TABLE>>"


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _group(edges: tuple[Edge, ...]) -> list[list[Edge]]:
    """Edges between two distinct states by (source, target), in document order."""
    groups: dict[tuple[str, str], list[Edge]] = {}
    for edge in edges:
        if edge.source == edge.target:
            continue  # listed inside the state's box
        groups.setdefault((edge.source, edge.target), []).append(edge)
    return list(groups.values())


def _arrow(region: Region, group: list[Edge]) -> str:
    # One left-justified line per transition: each line ends with DOT's "\l".
    label = "".join(_quote(edge.caption)[1:-1] + "\\l" for edge in group)
    attributes = [f'label="{label}"']
    if all(edge.never_fired for edge in group):
        attributes.append('style=dashed, color="red", fontcolor="red"')
    source, target = _node(region, group[0].source), _node(region, group[0].target)
    return f"  {source} -> {target} [{', '.join(attributes)}];"
