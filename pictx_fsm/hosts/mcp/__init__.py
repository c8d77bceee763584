"""The notes and history tools served over the Model Context Protocol (``pictx-fsm mcp``).

A host like Pi is for the tools' side only: an MCP client (another agent, an IDE) reads and
writes the same notes home a Pi session's extension does, and digs through that session's
history, with the same texts, budgets and root confinement — the extension's own tool code
runs every call (:mod:`pictx_fsm.host.tool_surface`). The official MCP Python SDK is an
optional dependency: ``pip install 'pictx-fsm[mcp]'``.
"""

from __future__ import annotations

from pictx_fsm.hosts.mcp.surfaces import EXTENSIONS, SessionFile, surface_for

__all__ = ["EXTENSIONS", "SessionFile", "surface_for"]
