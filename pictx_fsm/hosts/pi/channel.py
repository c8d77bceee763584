"""The server's side of the pipe: requests in, replies out, and calls into Pi in between.

An extension whose runtime needs Pi while it answers — an entry appended *now* (a failed write
undoes the step, M15), a model request a compaction waits for, a session created or switched —
makes a *host call*: the server writes ``{"id": <request id>, "call": {"seq", "op", ...}}`` and
reads until the extension writes ``{"kind": "return", "seq", "value" | "error"}``. A
``oneWay`` call (a notice, the status bar, a model request answered later) gets no return.

While the server waits, Pi may call the extension again and the extension sends that request
(Pi's ``session_shutdown`` during a switch, ``session_before_compact`` during ``compact()``):
it is answered at once, nested, as the model session calls an extension from inside another
extension's host call. An ``event`` request (a background reply, ``waitForIdle`` resolved)
waits until the outermost request is answered: Pi awaits nothing there.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import IO, Any

from pictx_fsm.errors import PictxError

Answerer = Callable[[str], dict[str, Any]]


class HostCallError(PictxError):
    """The extension did not return a host call (the pipe closed, or another line came)."""


class HostCallFailed(PictxError):
    """The extension returned a host call with an error (Pi refused what was asked)."""


class Channel:
    """Request lines from the extension and reply lines to it, with host calls."""

    def __init__(self, lines: Iterable[str], out: IO[str], pending: Callable[[], bool]) -> None:
        self._lines = iter(lines)
        self._out = out
        self._pending = pending
        self._deferred: deque[str] = deque()
        self._answering: list[Any] = []
        self._seq = 0
        self._open: set[int] = set()
        """The calls waiting for their return."""
        self._returns: dict[int, dict[str, Any]] = {}
        """Returns that arrived while a nested call waited for its own."""
        self.answer: Answerer | None = None
        """Answers one request line (set by the server once its session exists)."""

    def requests(self) -> Iterator[str]:
        """Every request line, the deferred events after the request they arrived in."""
        while True:
            if self._deferred:
                yield self._deferred.popleft()
                continue
            line = next(self._lines, None)
            if line is None:
                return
            if line.strip():
                yield line

    def reply(self, reply: dict[str, Any]) -> None:
        self._out.write(json.dumps(reply, ensure_ascii=True) + "\n")
        if not self._pending():
            self._out.flush()

    @contextmanager
    def answering(self, request_id: Any) -> Iterator[None]:
        """The request whose host calls follow (calls name it, so the extension knows which
        handler's context performs them)."""
        self._answering.append(request_id)
        try:
            yield
        finally:
            self._answering.pop()

    def send(self, op: str, **args: Any) -> None:
        """A one-way host call."""
        self._write_call(op, one_way=True, args=args)

    def call(self, op: str, **args: Any) -> Any:
        """A host call and its returned value; nested requests are answered meanwhile.

        Pi carries calls out concurrently: a nested request's call may be made while an outer
        one's return is already on its way, so a return that is not this call's waits for its
        own call to look for it."""
        seq = self._write_call(op, one_way=False, args=args)
        while seq not in self._returns:
            line = next(self._lines, None)
            if line is None:
                raise HostCallError(f"the extension closed the pipe during host call {op!r}")
            if not line.strip():
                continue
            message = _message(line, op)
            kind = message.get("kind")
            if kind == "return":
                returned = message.get("seq")
                if not isinstance(returned, int) or returned not in self._open:
                    raise HostCallError(
                        f"host call {op!r}: a return for no open call ({returned!r})"
                    )
                self._returns[returned] = message
            elif kind == "event":
                self._deferred.append(line)
            elif self.answer is not None:
                self.reply(self.answer(line))
        message = self._returns.pop(seq)
        self._open.discard(seq)
        if message.get("error") is not None:
            raise HostCallFailed(str(message["error"]))
        return message.get("value")

    def _write_call(self, op: str, *, one_way: bool, args: dict[str, Any]) -> int:
        self._seq += 1
        if not one_way:
            self._open.add(self._seq)
        request_id = self._answering[-1] if self._answering else None
        call = {"seq": self._seq, "op": op, "oneWay": one_way, **args}
        self._out.write(json.dumps({"id": request_id, "call": call}, ensure_ascii=True) + "\n")
        self._out.flush()
        return self._seq


def _message(line: str, op: str) -> dict[str, Any]:
    try:
        message = json.loads(line)
    except json.JSONDecodeError as error:
        raise HostCallError(f"during host call {op!r}: a line that is not JSON ({error})") from None
    if not isinstance(message, dict):
        raise HostCallError(f"during host call {op!r}: a line that is not a JSON object")
    return message


__all__ = ["Channel", "HostCallError", "HostCallFailed"]
