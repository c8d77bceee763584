"""Executing one assistant message's tool batch (pi-host §3.3, observed in ``b``, ``c``, ``d2``).

A batch runs in parallel unless one of its tools is registered ``sequential`` (pi-agent-core
``executeToolCalls``; pi-context's ``notes_write`` and ``notes_edit``, N2).

Parallel: ``tool_execution_start`` + ``tool_call`` for every call first (an abort there
answers calls with ``Operation aborted``, see :func:`_prepare`); then the tools run (extension
tools answer at once, the built-in ``echo`` takes ``arguments.ms``, the built-in
``call_tools`` runs nested calls where the host profile has ``ctx.executeTool()``);
completions arrive in completion order (``tool_execution_update`` for ``echo``,
``tool_result``, ``tool_execution_end``); the results are persisted in call order. An abort
while tools run makes ``echo`` fail with ``echo aborted``; tools that already finished keep
their result.

Sequential: each call runs start to finish — start, ``tool_call``, the tool,
``tool_result``, end, its persisted result — before the next starts (see
:func:`_run_sequential`).

The batch asks for another turn unless every result is terminating.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeAlias

from attrs import evolve, frozen

from pictx_fsm.host.effects import HookResult, ToolResult
from pictx_fsm.host.extension import ToolHandler, ToolInvocation, ToolOutput
from pictx_fsm.host.tool_outcome import ToolOutcome
from pictx_fsm.hosts.model.dispatch import apply_effects, record
from pictx_fsm.hosts.model.messages import tool_result_message
from pictx_fsm.hosts.model.persist import persist
from pictx_fsm.hosts.model.records import step_at
from pictx_fsm.hosts.model.state import HostState
from pictx_fsm.hosts.model.steps import Steps
from pictx_fsm.js import is_plain_object
from pictx_fsm.session.entries import Entry

__all__ = [
    "ECHO_ABORTED",
    "ECHO_TOOL",
    "JSON",
    "NESTING_TOOL",
    "OPERATION_ABORTED",
    "run_batch",
    "tool_calls",
]

JSON: TypeAlias = Any
ECHO_TOOL = "echo"
ECHO_ABORTED = "echo aborted"
NESTING_TOOL = "call_tools"
"""The built-in tool that runs other tools nested (profiles with ``nested_tool_calls``)."""
OPERATION_ABORTED = "Operation aborted"


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
        if is_plain_object(b) and b.get("type") == "toolCall"
    ]


def _args(block: Mapping[str, JSON]) -> Mapping[str, JSON]:
    arguments = block.get("arguments")
    return dict(arguments) if is_plain_object(arguments) else {}


def run_batch(host: HostState, calls: list[ToolInvocation]) -> Steps[tuple[list[Entry], bool]]:
    """Run the batch; returns the persisted results and whether the loop should go on."""
    if _sequential(host, calls):
        return (yield from _run_sequential(host, calls))
    prepared, finished = yield from _prepare(host, calls)
    running = []
    for index, call in prepared:
        running.append((yield from _execute(host, index, call)))
    if any(item.duration > 0 for item in running):
        yield step_at("pause", "tools_running")
    if _aborted(host):
        running = [_cut(item) for item in running]
    for item in sorted(running, key=lambda r: (r.duration, r.index)):
        yield from _complete(host, item)
    results = sorted([*finished, *running], key=lambda item: item.index)
    entries = []
    for item in results:
        entries.append((yield from persist(host, _result_message(host, item))))
    return entries, not all(item.output.terminate for item in results)


def _aborted(host: HostState) -> bool:
    return host.run is not None and host.run.aborted


def _prepare(
    host: HostState, calls: list[ToolInvocation]
) -> Steps[tuple[list[tuple[int, ToolInvocation]], list[_Running]]]:
    """``tool_execution_start`` + ``tool_call`` per call, in order. A call whose preparation
    sees an aborted run gets ``Operation aborted`` at once. Then Pi 0.87 stops preparing (the
    later calls get no result); 1.6 starts each later call and answers it the same way,
    without its ``tool_call`` (the host profile's ``aborted_calls_get_results``)."""
    prepared: list[tuple[int, ToolInvocation]] = []
    finished: list[_Running] = []
    for index, call in enumerate(calls):
        aborted = yield from _start_call(host, index, call)
        if aborted is None:
            prepared.append((index, call))
            continue
        finished.append(aborted)
        if not host.settings.profile.aborted_calls_get_results:
            break
    return prepared, finished


def _start_call(host: HostState, index: int, call: ToolInvocation) -> Steps[_Running | None]:
    """A call's ``tool_execution_start`` and ``tool_call``; with the run aborted, its
    ``Operation aborted`` result (1.6 skips the ``tool_call`` then); ``None`` when prepared."""
    get_results = host.settings.profile.aborted_calls_get_results
    ids = {"toolName": call.name, "toolCallId": call.call_id}
    yield record(host, "tool_execution_start", **ids)
    if not (get_results and _aborted(host)):
        yield record(host, "tool_call", **ids)
    if not _aborted(host):
        return None
    yield record(host, "tool_execution_end", isError=True, **ids)
    return _immediate(index, call, OPERATION_ABORTED)


def _sequential(host: HostState, calls: list[ToolInvocation]) -> bool:
    """Pi's rule: one ``sequential`` tool in the batch makes the whole batch sequential."""
    return any(call.name in ext.sequential_tools for ext in host.extensions for call in calls)


def _run_sequential(
    host: HostState, calls: list[ToolInvocation]
) -> Steps[tuple[list[Entry], bool]]:
    """Pi's ``executeToolCallsSequential``: each call start to finish, its result persisted
    before the next call starts. After an abort 0.87 stops the batch once the interrupted call
    is answered (later calls get no result); 1.6 answers each later call ``Operation
    aborted`` without running it."""
    entries, done = [], []
    for index, call in enumerate(calls):
        item = yield from _start_call(host, index, call)
        if item is None:
            item = yield from _execute(host, index, call)
            if item.duration > 0:
                yield step_at("pause", "tools_running")
                item = _cut(item) if _aborted(host) else item
            yield from _complete(host, item)
        entries.append((yield from persist(host, _result_message(host, item))))
        done.append(item)
        if _aborted(host) and not host.settings.profile.aborted_calls_get_results:
            break
    return entries, not all(item.output.terminate for item in done)


def _immediate(index: int, call: ToolInvocation, text: str) -> _Running:
    """A call answered without running (aborted, unknown): an error result."""
    output = ToolOutput(text=text, is_error=True)
    return _Running(index=index, call=call, output=output, duration=0, streams_update=False)


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
    message = tool_result_message(
        item.call.call_id, item.call.name, out.text, out.is_error, out.details, host.clock()
    )
    if out.nested_calls:
        message["nestedCalls"] = {"calls": list(out.nested_calls), "complete": True}
    return message


def _execute(host: HostState, index: int, call: ToolInvocation) -> Steps[_Running]:
    """Run one prepared call: an extension tool answers at once, ``echo`` takes its time,
    ``call_tools`` runs nested calls (profiles with ``ctx.executeTool()``)."""
    if _aborted(host):
        return _immediate(index, call, OPERATION_ABORTED)
    if _handler(host, call.name) is not None:
        output = _run_handler(host, call)
    elif call.name == ECHO_TOOL:
        return _echo(index, call)
    elif call.name == NESTING_TOOL and host.settings.profile.nested_tool_calls:
        output = yield from _nested(host, call)
    else:
        return _immediate(index, call, f"Tool {call.name} not found")
    return _Running(index=index, call=call, output=output, duration=0, streams_update=False)


def _handler(host: HostState, name: str) -> ToolHandler | None:
    return next((ext.tools[name] for ext in host.extensions if name in ext.tools), None)


def _run_handler(host: HostState, call: ToolInvocation) -> ToolOutput:
    handler = _handler(host, call.name)
    assert handler is not None
    try:
        answer = handler(call, host.host_context())
    except Exception as exc:  # Pi turns a throwing execute into an error result
        answer = ToolOutput(text=f"{type(exc).__name__}: {exc}", is_error=True)
    return _output(host, call, answer)


def _nested(host: HostState, parent: ToolInvocation) -> Steps[ToolOutput]:
    """``call_tools``: each ``{"name", "args"}`` of ``arguments.calls`` runs through
    ``ctx.executeTool()`` as ``<parent id>/<n>``, with its own events carrying
    ``parentToolCallId``; its ``terminate`` is the caller's business, not the batch's. The
    result lists each nested result; the calls are recorded as ``nestedCalls``."""
    lines, records = [], []
    for number, spec in enumerate(_nested_specs(parent), start=1):
        call = ToolInvocation(
            call_id=f"{parent.call_id}/{number}",
            name=str(spec.get("name", "")),
            arguments=_args({"arguments": spec.get("args")}),
            parent_call_id=parent.call_id,
        )
        ids = {
            "toolName": call.name,
            "toolCallId": call.call_id,
            "parentToolCallId": parent.call_id,
        }
        yield record(host, "tool_execution_start", **ids)
        yield record(host, "tool_call", **ids)
        # A call the run's abort reaches after its ``tool_call`` does not run (found by the
        # differential on 1.6.0): ``ctx.executeTool()`` answers it ``Operation aborted``.
        aborted = _aborted(host)
        known = not aborted and _handler(host, call.name) is not None
        if aborted:
            output = ToolOutput(text=OPERATION_ABORTED, is_error=True)
        else:
            output = _run_handler(host, call) if known else _not_found(call)
        if known:
            yield record(host, "tool_result", isError=output.is_error, **ids)
        yield record(host, "tool_execution_end", isError=output.is_error, **ids)
        lines.append(f"{call.name}{' (error)' if output.is_error else ''}: {output.text}")
        records.append(_nested_record(call, output))
    return ToolOutput(text="\n".join(lines), nested_calls=tuple(records))


def _nested_specs(parent: ToolInvocation) -> list[Mapping[str, JSON]]:
    specs = parent.arguments.get("calls")
    return [c for c in specs if is_plain_object(c)] if isinstance(specs, list) else []


def _not_found(call: ToolInvocation) -> ToolOutput:
    return ToolOutput(text=f"Tool {call.name} not found", is_error=True)


def _nested_record(call: ToolInvocation, output: ToolOutput) -> dict[str, JSON]:
    return {
        "id": call.call_id,
        "name": call.name,
        "status": "error" if output.is_error else "ok",
        "arguments": dict(call.arguments),
        "durationMs": 0,
    }


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
