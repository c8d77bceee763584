"""Executing one assistant message's tool batch (pi-host §3.3, observed in ``b``, ``c``, ``d2``).

A batch runs in parallel unless one of its tools is registered ``sequential`` (pi-agent-core
``executeToolCalls``; pi-context's ``notes_write`` and ``notes_edit``, N2).

Parallel: ``tool_execution_start`` + ``tool_call`` for every call first; then the tools run
(extension tools answer at once, the built-in ``echo`` takes ``arguments.ms``); completions
arrive in completion order (``tool_execution_update`` for ``echo``, ``tool_result``,
``tool_execution_end``); the results are persisted in call order. An abort while tools run
makes ``echo`` fail with ``echo aborted``; tools that already finished keep their result.

Sequential: each call in turn runs start to finish — start, ``tool_call``, the tool,
``tool_result``, end, its persisted result — before the next starts; a call reached with the
signal aborted is answered ``Operation aborted`` without running, and the batch stops after
the call during which the signal was aborted (later calls get no result, as in Pi).

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
from pictx_fsm.tools import ToolOutcome

JSON: TypeAlias = Any
ECHO_TOOL = "echo"
ECHO_ABORTED = "echo aborted"


OPERATION_ABORTED = ToolOutput(text="Operation aborted", is_error=True, details={})
"""Pi's immediate result for a call prepared after the signal was aborted."""


@frozen(kw_only=True)
class _Running:
    index: int
    call: ToolInvocation
    output: ToolOutput
    duration: int
    """Milliseconds until the tool finishes (0: it finished when it started)."""
    streams_update: bool = False


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
    if _sequential(host, calls):
        return (yield from _run_sequential(host, calls))
    for call in calls:
        yield from _announce(host, call)
    running = [_start(host, index, call) for index, call in enumerate(calls)]
    if any(item.duration > 0 for item in running):
        yield Step(kind="pause", name="tools_running")
    if _aborted(host):
        running = [_cut(item) for item in running]
    for item in sorted(running, key=lambda r: (r.duration, r.index)):
        yield from _complete(host, item)
    entries = []
    for item in running:
        entries.append((yield from persist(host, _result_message(host, item))))
    return entries, not all(item.output.terminate for item in running)


def _sequential(host: HostState, calls: list[ToolInvocation]) -> bool:
    """Pi's rule: one ``sequential`` tool in the batch makes the whole batch sequential."""
    return any(call.name in ext.sequential_tools for ext in host.extensions for call in calls)


def _run_sequential(
    host: HostState, calls: list[ToolInvocation]
) -> Steps[tuple[list[Entry], bool]]:
    entries, done = [], []
    for index, call in enumerate(calls):
        yield from _announce(host, call)
        if _aborted(host):
            item = _Running(index=index, call=call, output=OPERATION_ABORTED, duration=0)
            yield record(host, "tool_execution_end", isError=True, **_ids(call))
        else:
            item = _start(host, index, call)
            if item.duration > 0:
                yield Step(kind="pause", name="tools_running")
                item = _cut(item) if _aborted(host) else item
            yield from _complete(host, item)
        entries.append((yield from persist(host, _result_message(host, item))))
        done.append(item)
        if _aborted(host):
            break
    return entries, not all(item.output.terminate for item in done)


def _announce(host: HostState, call: ToolInvocation) -> Steps[None]:
    """``tool_execution_start``, then ``tool_call`` (Pi's ``beforeToolCall``)."""
    yield record(host, "tool_execution_start", **_ids(call))
    yield record(host, "tool_call", **_ids(call))


def _aborted(host: HostState) -> bool:
    return host.run is not None and host.run.aborted


def _ids(call: ToolInvocation) -> dict[str, str]:
    return {"toolName": call.name, "toolCallId": call.call_id}


def _complete(host: HostState, item: _Running) -> Steps[None]:
    ids = _ids(item.call)
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
    if isinstance(value, ToolOutcome):  # a refusal is an ordinary result (N4)
        return ToolOutput(text=value.text, is_error=value.is_error, details=value.details)
    return ToolOutput(text="")


def _echo(index: int, call: ToolInvocation) -> _Running:
    """The traces' ``echo`` tool: ``echo:<text>`` after ``ms`` milliseconds, abortable."""
    text = str(call.arguments.get("text", ""))
    ms = call.arguments.get("ms", 0)
    duration = ms if isinstance(ms, int) and not isinstance(ms, bool) and ms > 0 else 0
    output = ToolOutput(text=f"echo:{text}", details={"len": len(text)})
    return _Running(index=index, call=call, output=output, duration=duration, streams_update=True)
