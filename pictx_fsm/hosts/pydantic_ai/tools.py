"""The lifecycle's tools as a pydantic-ai toolset, registered from their JSON schemas.

Registration is a loop over :data:`LIFECYCLE_TOOLS`, so every tool another module exports as a
schema (name, description, parameters) drops in with one more row and an executor; the
lifecycle answers each call (R16, R17) and the text goes back to the model as the tool result.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, TypeAlias

from attrs import frozen
from pydantic_ai import RunContext
from pydantic_ai.tools import Tool
from pydantic_ai.toolsets import FunctionToolset

from pictx_fsm.protocol import (
    GET_CONTEXT_REMAINING_DESCRIPTION,
    GET_CONTEXT_REMAINING_TOOL,
    WIPE_MEMORY_DESCRIPTION,
    WIPE_MEMORY_TOOL,
)

JSON: TypeAlias = Any
Executor: TypeAlias = Callable[[str, Mapping[str, JSON], RunContext[Any]], str]
"""Runs one call: ``(tool name, arguments, run context) -> result text``."""


@frozen(kw_only=True)
class ToolSchema:
    """A tool as every host registers it: the model sees exactly these three fields."""

    name: str
    description: str
    parameters: Mapping[str, JSON]


LIFECYCLE_TOOLS: Final = (
    ToolSchema(
        name=WIPE_MEMORY_TOOL,
        description=WIPE_MEMORY_DESCRIPTION,
        parameters={"type": "object", "properties": {}, "additionalProperties": False},
    ),
    ToolSchema(
        name=GET_CONTEXT_REMAINING_TOOL,
        description=GET_CONTEXT_REMAINING_DESCRIPTION,
        parameters={"type": "object", "properties": {}},
    ),
)
"""R16, R17: the two tools the lifecycle answers itself."""


def toolset(schemas: Sequence[ToolSchema], execute: Executor) -> FunctionToolset[Any]:
    """One pydantic-ai tool per schema, each answered by ``execute``."""
    return FunctionToolset([_tool(schema, execute) for schema in schemas])


def _tool(schema: ToolSchema, execute: Executor) -> Tool[Any]:
    # Async on purpose: pydantic-ai runs sync tools in worker threads, and the lifecycle's
    # session must see one call at a time (each call runs without awaiting).
    async def call(ctx: RunContext[Any], **arguments: JSON) -> str:
        return execute(schema.name, arguments, ctx)

    return Tool.from_schema(
        call,
        name=schema.name,
        description=schema.description,
        json_schema=dict(schema.parameters),
        takes_ctx=True,
    )
