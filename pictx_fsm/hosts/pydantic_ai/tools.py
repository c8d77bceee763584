"""The eleven tools of :data:`pictx_fsm.TOOL_SPECS` as a pydantic-ai toolset.

Registration is a loop over the specs: each tool keeps its name, description and JSON schema
byte for byte, and a ``sequential`` spec (``notes_write``, ``notes_edit``) is a pydantic-ai
``sequential`` tool — a barrier that runs alone, after the calls before it and before the
calls after it, so ``[notes_write, wipe_memory]`` writes the note before the wipe is
requested, as in Pi (N2). Every call goes to the lifecycle runtime (``runtime.handle(ToolCall)``),
and its answer takes pydantic-ai's channel for it (N3, N4):

- a lifecycle tool's text, an ``ok`` outcome and a ``refusal`` (a JSON ``{"error": …}`` the
  model reads) are ordinary tool returns (``details`` ride as the return's ``metadata``,
  which pydantic-ai keeps in the history and never sends);
- an ``error`` outcome raises :class:`~pydantic_ai.exceptions.ToolFailed`: a failed tool
  result (``outcome='failed'``, the provider's native error channel, Pi's ``isError: true``)
  whose text is the outcome's, without ``ModelRetry``'s retry prompt or retry budget.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeAlias

from pydantic_ai import RunContext
from pydantic_ai.exceptions import ToolFailed
from pydantic_ai.messages import ToolReturn
from pydantic_ai.tools import Tool
from pydantic_ai.toolsets import FunctionToolset

from pictx_fsm import ToolOutcome
from pictx_fsm.extensions.pi_context.tools import ToolSpec
from pictx_fsm.host.effects import ToolResult
from pictx_fsm.session.entries import ABSENT

__all__ = ["JSON", "Executor", "tool_return", "toolset"]

JSON: TypeAlias = Any
Executor: TypeAlias = Callable[
    [str, Mapping[str, JSON], RunContext[Any]], "ToolResult | ToolOutcome"
]
"""Runs one call: ``(tool name, arguments, run context) -> the runtime's answer``."""


def toolset(specs: Sequence[ToolSpec], execute: Executor) -> FunctionToolset[Any]:
    """One pydantic-ai tool per spec, each answered by ``execute``."""
    return FunctionToolset([_tool(spec, execute) for spec in specs])


def tool_return(value: ToolResult | ToolOutcome) -> str | ToolReturn:
    """The runtime's answer in pydantic-ai's channel for it (an error raises ``ToolFailed``)."""
    if isinstance(value, ToolResult):
        return value.text
    if value.is_error:
        raise ToolFailed(value.text)
    if value.details is ABSENT:
        return value.text
    return ToolReturn(return_value=value.text, metadata=value.details)


def _tool(spec: ToolSpec, execute: Executor) -> Tool[Any]:
    # Async on purpose: pydantic-ai runs sync tools in worker threads, and the lifecycle's
    # session must see one call at a time (each call runs without awaiting).
    async def call(ctx: RunContext[Any], **arguments: JSON) -> str | ToolReturn:
        return tool_return(execute(spec.name, arguments, ctx))

    return Tool.from_schema(
        call,
        name=spec.name,
        description=spec.description,
        json_schema=dict(spec.parameters),
        takes_ctx=True,
        sequential=spec.execution_mode == "sequential",
    )
