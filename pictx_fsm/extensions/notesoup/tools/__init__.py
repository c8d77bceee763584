"""notesoup's typed tools: their specs, the notes and history tools, their outcomes and the
tool surface an MCP server serves."""

__all__: list[str] = []
