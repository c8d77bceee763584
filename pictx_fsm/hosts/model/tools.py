"""Executing one assistant message's tool batch (pi-host §3.3, observed in ``b``, ``c``, ``d2``).

Order: ``tool_execution_start`` + ``tool_call`` for every call first; then the tools run
(extension tools answer at once, the built-in ``echo`` takes ``arguments.ms``); completions
arrive in completion order (``tool_execution_update`` for ``echo``, ``tool_result``,
``tool_execution_end``); the results are persisted in call order. An abort while tools run
makes ``echo`` fail with ``echo aborted``; tools that already finished keep their result.
The batch asks for another turn unless every result is terminating.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeAlias

from attrs import evolve, frozen

from pictx_fsm.effects import HookResult, ToolResult
from pictx_fsm.hosts.model.dispatch import apply_effects, record
from pictx_fsm.hosts.model.extension import ToolInvocation, ToolOutput
from pictx_fsm.hosts.model.messages import tool_result_message
from pictx_fsm.hosts.model.persist import persist
from pictx_fsm.hosts.model.records import Step
from pictx_fsm.hosts.model.state import HostState
from pictx_fsm.hosts.model.steps import Steps
from pictx_fsm.session.entries import Entry

JSON: TypeAlias = Any
ECHO_TOOL = "echo"
ECHO_ABORTED = "echo aborted"


@frozen(kw_only=True)
class _Running:
    index: int
    call: ToolInvocation
    output: ToolOutput
    duration: int
    """Milliseconds until the tool finishes (0: it finished when it started)."""
    streams_update: bool


def tool_calls(message: Mapping[str, JSON]) -> list[ToolInvocation]:
    content = message.get("content")
    blocks = content if isinstance(content, list) else []
    return [
        ToolInvocation(
            call_id=str(b.get("id", "")), name=str(b.get("name", "")), arguments=_args(b)
        )
        for b in blocks
        if isinstance(b, Mapping) and b.get("type") == "toolCall"
    ]


def _args(block: Mapping[str, JSON]) -> Mapping[str, JSON]:
    arguments = block.get("arguments")
    return dict(arguments) if isinstance(arguments, Mapping) else {}


def run_batch(host: HostState, calls: list[ToolInvocation]) -> Steps[tuple[list[Entry], bool]]:
    """Run the batch; returns the persisted results and whether the loop should go on."""
    for call in calls:
        yield record(host, "tool_execution_start", toolName=call.name, toolCallId=call.call_id)
        yield record(host, "tool_call", toolName=call.name, toolCallId=call.call_id)
    running = [_start(host, index, call) for index, call in enumerate(calls)]
    if any(item.duration > 0 for item in running):
        yield Step(kind="pause", name="tools_running")
    aborted = host.run is not None and host.run.aborted
    if aborted:
        running = [_cut(item) for item in running]
    for item in sorted(running, key=lambda r: (r.duration, r.index)):
        yield from _complete(host, item)
    entries = []
    for item in running:
        entries.append((yield from persist(host, _result_message(host, item))))
    return entries, not all(item.output.terminate for item in running)


def _complete(host: HostState, item: _Running) -> Steps[None]:
    ids = {"toolName": item.call.name, "toolCallId": item.call.call_id}
    if item.streams_update:
        yield record(host, "tool_execution_update", **ids)
    yield record(host, "tool_result", isError=item.output.is_error, **ids)
    yield record(host, "tool_execution_end", isError=item.output.is_error, **ids)


def _cut(item: _Running) -> _Running:
    """The abort reaches a tool still running: it fails (after the finished ones)."""
    if item.duration == 0:
        return item
    failed = ToolOutput(text=ECHO_ABORTED, is_error=True)
    return evolve(item, output=failed, duration=1, streams_update=False)


def _result_message(host: HostState, item: _Running) -> dict[str, JSON]:
    out = item.output
    return tool_result_message(
        item.call.call_id, item.call.name, out.text, out.is_error, out.details, host.clock()
    )


def _start(host: HostState, index: int, call: ToolInvocation) -> _Running:
    handler = next(
        (ext.tools[call.name] for ext in host.extensions if call.name in ext.tools), None
    )
    if handler is not None:
        try:
            answer = handler(call, host.host_context())
        except Exception as exc:  # Pi turns a throwing execute into an error result
            answer = ToolOutput(text=f"{type(exc).__name__}: {exc}", is_error=True)
        output = _output(host, call, answer)
        return _Running(index=index, call=call, output=output, duration=0, streams_update=False)
    if call.name == ECHO_TOOL:
        return _echo(index, call)
    missing = ToolOutput(text=f"Tool {call.name} not found", is_error=True)
    return _Running(index=index, call=call, output=missing, duration=0, streams_update=False)


def _output(host: HostState, call: ToolInvocation, answer: HookResult | ToolOutput) -> ToolOutput:
    if isinstance(answer, ToolOutput):
        return answer
    apply_effects(host, answer.effects, f"tool:{call.name}")
    value = answer.value
    if isinstance(value, ToolResult):
        return ToolOutput(text=value.text, terminate=value.terminate)
    return ToolOutput(text="")


def _echo(index: int, call: ToolInvocation) -> _Running:
    """The traces' ``echo`` tool: ``echo:<text>`` after ``ms`` milliseconds, abortable."""
    text = str(call.arguments.get("text", ""))
    ms = call.arguments.get("ms", 0)
    duration = ms if isinstance(ms, int) and not isinstance(ms, bool) and ms > 0 else 0
    output = ToolOutput(text=f"echo:{text}", details={"len": len(text)})
    return _Running(index=index, call=call, output=output, duration=duration, streams_update=True)
