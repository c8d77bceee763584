"""The family's tools as a surface for hosts outside Pi (:mod:`pictx_fsm.host.tool_surface`):
each extension hands over its registrations and its own ``execute_tool``, so a call served
over MCP runs exactly the code a call in Pi runs."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from pictx_fsm.extensions.shared.tools.schema import ToolSpec
from pictx_fsm.host.tool_outcome import ToolOutcome
from pictx_fsm.host.tool_surface import ToolDeclaration, ToolSurface

__all__ = ["declaration", "surface", "wall_clock_ms"]

C = TypeVar("C")


def wall_clock_ms() -> float:
    """Now, in milliseconds since the epoch (what note timestamps are written from)."""
    return float(int(time.time() * 1000))


def declaration(spec: ToolSpec) -> ToolDeclaration:
    return ToolDeclaration(
        name=spec.name,
        title=spec.label,
        description=spec.description,
        input_schema=spec.parameters,
        output_schema=spec.output_schema,
    )


def surface(
    extension: str,
    specs: Iterable[ToolSpec],
    execute: Callable[[str, object, C], ToolOutcome],
    context: Callable[[], C],
) -> ToolSurface:
    """``specs`` served by ``execute`` with a context made afresh for every call (so a
    session file that grew since is read again)."""

    def call(name: str, arguments: Mapping[str, Any]) -> ToolOutcome:
        return execute(name, dict(arguments), context())

    return ToolSurface(
        extension=extension, tools=tuple(declaration(spec) for spec in specs), caller=call
    )
