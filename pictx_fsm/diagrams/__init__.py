"""Diagrams of the declared machines: extract (IR) → render (Mermaid, DOT, SVG/PNG).

Mermaid and DOT text are byte-identical run to run, so the generated diagrams can be committed
and checked for staleness. SVG and PNG go through Graphviz, needed only for them. An optional
overlay annotates every transition with how often it fired and marks the ones that never did.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from pictx_fsm.diagrams.dot import to_dot
from pictx_fsm.diagrams.image import (
    IMAGE_FORMATS,
    GraphvizFailedError,
    GraphvizMissingError,
    to_image,
)
from pictx_fsm.diagrams.ir import Diagram, extract, transition_label
from pictx_fsm.diagrams.mermaid import to_mermaid
from pictx_fsm.diagrams.overlay import counts_from_audit, counts_from_coverage, merge_counts
from pictx_fsm.machines.document import MachineSpec

__all__ = [
    "EXTENSIONS",
    "FORMATS",
    "Diagram",
    "GraphvizFailedError",
    "GraphvizMissingError",
    "counts_from_audit",
    "counts_from_coverage",
    "extract",
    "merge_counts",
    "render",
    "to_dot",
    "to_image",
    "to_mermaid",
    "transition_label",
    "write_diagrams",
]

# format -> file extension
EXTENSIONS: dict[str, str] = {"mermaid": "mmd", "dot": "dot", "svg": "svg", "png": "png"}
FORMATS = tuple(EXTENSIONS)
TEXT_FORMATS = ("mermaid", "dot")


def render(
    spec: MachineSpec, diagram_format: str, counts: Mapping[str, int] | None = None
) -> bytes:
    """The diagram of ``spec`` in ``diagram_format`` (one of :data:`FORMATS`), as bytes."""
    diagram = extract(spec, counts)
    if diagram_format == "mermaid":
        return to_mermaid(diagram).encode("utf-8")
    text = to_dot(diagram)
    if diagram_format == "dot":
        return text.encode("utf-8")
    if diagram_format in IMAGE_FORMATS:
        return to_image(text, diagram_format)
    raise ValueError(f"diagram format must be one of {FORMATS}, got {diagram_format!r}")


def write_diagrams(
    specs: Iterable[MachineSpec],
    out_dir: Path,
    diagram_format: str,
    counts: Mapping[str, int] | None = None,
) -> list[Path]:
    """Write ``<machine>.<ext>`` for every spec into ``out_dir``; the paths written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for spec in specs:
        path = out_dir / f"{spec.name}.{EXTENSIONS[diagram_format]}"
        path.write_bytes(render(spec, diagram_format, counts))
        written.append(path)
    return written
