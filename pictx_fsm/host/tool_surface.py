"""An extension's tools as a host outside Pi serves them (the MCP server,
``pictx-fsm mcp``): each tool's declaration and one way to call it.

A surface is host-neutral data: the extension says what its tools are called, what they take
and return (JSON Schema) and runs a call to a :class:`~pictx_fsm.host.tool_outcome.
ToolOutcome` — the same texts, budgets and confinement as in Pi, since the extension's own
tool code runs the call. The host only carries it over its protocol.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from attrs import frozen

from pictx_fsm.host.tool_outcome import ToolOutcome

__all__ = ["ToolCaller", "ToolDeclaration", "ToolSurface", "UnknownSurfaceTool"]

ToolCaller = Callable[[str, Mapping[str, Any]], ToolOutcome]
"""Run one call: the tool's name and its arguments as the client sent them."""


@frozen(kw_only=True)
class ToolDeclaration:
    """One tool as a client sees it."""

    name: str
    title: str
    description: str
    input_schema: Mapping[str, Any]
    output_schema: Mapping[str, Any] | None = None


class UnknownSurfaceTool(LookupError):
    """A call of a tool the surface does not declare."""


@frozen(kw_only=True)
class ToolSurface:
    """The tools one extension serves, for one notes home and one session."""

    extension: str
    tools: tuple[ToolDeclaration, ...]
    caller: ToolCaller

    def call(self, name: str, arguments: Mapping[str, Any]) -> ToolOutcome:
        if name not in {tool.name for tool in self.tools}:
            known = ", ".join(tool.name for tool in self.tools)
            raise UnknownSurfaceTool(f"{self.extension} has no tool {name!r}; it has {known}")
        return self.caller(name, arguments)
