"""Pi in RPC mode, driven one command at a time: JSON commands on stdin, JSON lines back.

Every command is awaited: its response, then — whatever it set off (a prompt's run, a run a
command triggered, a retry, an overflow recovery) — Pi's settling: :meth:`RpcPi.settle` asks
the driver extension (``driver.mjs``, ``/drive-idle``) to wait until Pi is idle and then reads
events until every run that started has sent its ``agent_settled``. An extension may ask the
runner to act while it waits inside a hook (an ``input`` request titled :data:`DRIVER_TITLE`,
answered once the runner has done what it asks: :attr:`RpcPi.on_request`).

A Pi that cannot be started — no such executable, an exit before it answers, no answer at all
— raises :class:`PiUnavailable` saying why; one that breaks during a run raises
:class:`PiFailed`.
"""

from __future__ import annotations

import contextlib
import json
import queue
import subprocess
import threading
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeAlias

from pictx_fsm.errors import PictxError
from pictx_fsm.hosts.pi.offline import PiUnavailable

__all__ = ["DRIVER_TITLE", "PiFailed", "PiUnavailable", "RpcPi"]

JSON: TypeAlias = Any
DRIVER_TITLE = "pictx-driver"
"""The title of the driver's requests to the runner (``ctx.ui.input``)."""
START_TIMEOUT = 60.0
"""Seconds Pi may take to answer its first command."""
EVENT_TIMEOUT = 60.0
"""Seconds Pi may stay silent while a command or a run is under way."""
EXIT_GRACE = 5.0
"""Seconds a Pi whose output closed is given to exit and flush its standard error."""


class PiFailed(PictxError):
    """Pi broke during a run (closed its output, went silent, refused a command)."""


class RpcPi:
    """One Pi process in RPC mode (use as a context manager: leaving closes stdin and waits
    for Pi to exit by itself, killing it only if it does not)."""

    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        env: Mapping[str, str],
        on_request: Callable[[Mapping[str, JSON]], None] | None = None,
        timeout: float = EVENT_TIMEOUT,
    ) -> None:
        self.on_request = on_request
        self.timeout = timeout
        self.events: list[dict[str, JSON]] = []
        """Every event line Pi printed, in order (responses excluded)."""
        self._backlog: deque[dict[str, JSON]] = deque()
        self._serial = 0
        self._in_flight = False
        self._starts = 0
        try:
            self.proc = subprocess.Popen(
                [*argv, "--mode", "rpc"],
                cwd=cwd,
                env=dict(env),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        except OSError as error:
            raise PiUnavailable(f"cannot start {argv[0]}: {error.strerror or error}") from None
        assert self.proc.stdout is not None and self.proc.stderr is not None
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._stderr: list[str] = []
        threading.Thread(target=self._pump, args=(self.proc.stdout,), daemon=True).start()
        self._drainer = threading.Thread(target=self._drain, args=(self.proc.stderr,), daemon=True)
        self._drainer.start()
        try:
            self.call({"type": "get_state"}, timeout=START_TIMEOUT)
        except PiFailed as error:
            self.kill()
            raise PiUnavailable(f"Pi did not start: {error}") from None

    def __enter__(self) -> RpcPi:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the stream ---------------------------------------------------------------------------

    def _pump(self, stream: Any) -> None:
        for line in stream:
            self._lines.put(line)
        self._lines.put(None)

    def _drain(self, stream: Any) -> None:
        for line in stream:
            self._stderr.append(line)
            del self._stderr[:-40]

    def stderr_tail(self) -> str:
        return "".join(self._stderr[-10:]).strip()

    def _read(self, timeout: float) -> dict[str, JSON]:
        while True:
            try:
                line = self._lines.get(timeout=timeout)
            except queue.Empty:
                raise PiFailed(f"no output from Pi for {timeout:.0f} s") from None
            if line is None:
                # Pi's stdout closed: let it exit and its last words reach us (stderr is
                # read by another thread, and may still be in flight) before saying why.
                try:
                    code: int | None = self.proc.wait(timeout=EXIT_GRACE)
                except subprocess.TimeoutExpired:
                    code = None
                self._drainer.join(timeout=EXIT_GRACE)
                tail = self.stderr_tail()
                raise PiFailed(f"Pi exited (code {code}){': ' + tail if tail else ''}")
            if line.strip():
                try:
                    value = json.loads(line)
                except json.JSONDecodeError:
                    continue  # not a protocol line (a stray print of an extension)
                if isinstance(value, dict):
                    return value

    def _events(self, timeout: float) -> Iterator[dict[str, JSON]]:
        """Event lines, in order: the backlog first, then Pi's output; an extension's request
        to the runner is served on the way (and not yielded)."""
        while True:
            event = self._backlog.popleft() if self._backlog else self._read(timeout)
            if event.get("type") != "response":
                self.events.append(event)
                kind = event.get("type")
                if kind == "agent_start":
                    self._in_flight = True
                    self._starts += 1
                elif kind == "agent_settled":
                    self._in_flight = False
                if self._serve(event):
                    continue
            yield event

    def _serve(self, event: Mapping[str, JSON]) -> bool:
        if event.get("type") != "extension_ui_request" or event.get("title") != DRIVER_TITLE:
            return False
        if self.on_request is not None:
            self.on_request(json.loads(str(event.get("placeholder") or "{}")))
        self.send({"type": "extension_ui_response", "id": event.get("id"), "value": "done"})
        return True

    # -- commands -----------------------------------------------------------------------------

    def send(self, command: Mapping[str, JSON]) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(json.dumps(command) + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, ValueError):
            raise PiFailed(f"Pi stopped reading commands: {self.stderr_tail()}") from None

    def call(
        self, command: Mapping[str, JSON], timeout: float | None = None, *, refusable: bool = False
    ) -> dict[str, JSON]:
        """Send one command and return its response (events on the way are kept); a command
        Pi refuses raises :class:`PiFailed` unless it is ``refusable``."""
        self._serial += 1
        request = {"id": f"c{self._serial}", **command}
        self.send(request)
        held: list[dict[str, JSON]] = []
        for event in self._events(self.timeout if timeout is None else timeout):
            if event.get("type") == "response" and event.get("id") == request["id"]:
                self._backlog.extendleft(reversed(held))
                if event.get("success") is False and not refusable:
                    raise PiFailed(f"Pi refused {command.get('type')}: {event.get('error')}")
                return event
            if event.get("type") == "response":
                held.append(event)
        raise AssertionError("unreachable")

    def settle(self) -> None:
        """Wait until Pi is idle and every run that started has settled."""
        self.call({"type": "prompt", "message": "/drive-idle"})
        while self._in_flight:
            next(self._events(self.timeout))

    def run(self, command: Mapping[str, JSON], *, refusable: bool = False) -> dict[str, JSON]:
        """One command, then Pi's settling (:meth:`settle`); a prompt that is not a command
        starts a run, which is awaited first (Pi answers a prompt before its run starts)."""
        starts = self._starts
        response = self.call(command, refusable=refusable)
        text = command.get("message")
        if command.get("type") == "prompt" and isinstance(text, str) and not text.startswith("/"):
            events = self._events(self.timeout)
            while self._starts == starts:
                next(events)
        self.settle()
        return response

    def close(self) -> int:
        """Close stdin and wait for Pi to exit by itself (killed after :attr:`timeout`)."""
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            with contextlib.suppress(BrokenPipeError):
                self.proc.stdin.close()
        try:
            return self.proc.wait(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            message = f"Pi did not exit within {self.timeout:.0f} s of its input ending"
            raise PiFailed(message) from None

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
