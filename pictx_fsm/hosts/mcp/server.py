"""A :class:`~pictx_fsm.host.tool_surface.ToolSurface` as an MCP server (the SDK's low-level
``Server``): ``tools/list`` gives the declarations, ``tools/call`` runs the extension's tool
and returns its text, its ``structuredContent`` (notesoup's typed outcomes) and ``isError``
exactly as Pi records them."""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from pictx_fsm import __version__
from pictx_fsm.host.tool_outcome import ToolOutcome
from pictx_fsm.host.tool_surface import ToolDeclaration, ToolSurface, UnknownSurfaceTool
from pictx_fsm.session.entries import ABSENT

__all__ = ["build_server", "call_result", "serve_stdio"]


def _tool(declaration: ToolDeclaration) -> types.Tool:
    output = declaration.output_schema
    return types.Tool(
        name=declaration.name,
        title=declaration.title,
        description=declaration.description,
        input_schema=dict(declaration.input_schema),
        output_schema=None if output is None else dict(output),
    )


def call_result(outcome: ToolOutcome) -> types.CallToolResult:
    structured = None if outcome.structured is ABSENT else outcome.structured
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=outcome.text)],
        structured_content=structured,
        is_error=outcome.is_error,
    )


def build_server(surface: ToolSurface) -> Server[Any]:
    tools = [_tool(declaration) for declaration in surface.tools]

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        try:
            outcome = surface.call(params.name, params.arguments or {})
        except UnknownSurfaceTool as error:
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=str(error))], is_error=True
            )
        return call_result(outcome)

    return Server(
        f"pictx-fsm {surface.extension}",
        version=__version__,
        instructions=(
            f"{surface.extension}'s notes and history tools: the notes home and session "
            "history a Pi session with the extension reads and writes."
        ),
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def serve_stdio(surface: ToolSurface) -> None:
    """Serve until the client closes stdin."""
    server = build_server(surface)

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(main)
