"""JSON documents read from user files (traces, coverage files, audit records).

``json.loads`` fails in four ways on hostile input, and only one of them is a
``JSONDecodeError``: nesting deeper than the interpreter's stack raises ``RecursionError``,
an integer of more than 4,300 digits raises a plain ``ValueError``, and a file can be a
device that never ends. Every reader of a user's JSON goes through :func:`parse_json` or
:func:`read_json_file`, which turn each of them into one :class:`JsonInputError` naming the
file, the line where known, and what is wrong.
"""

from __future__ import annotations

import json
import os
from typing import Any, Final

from pictx_fsm.errors import PictxError, UnreadableInputError
from pictx_fsm.session.jsonl import open_regular, os_reason

__all__ = ["MAX_DOCUMENT_BYTES", "JsonInputError", "parse_json", "read_json_file"]

MAX_DOCUMENT_BYTES: Final = 256 * 1024 * 1024
"""The largest JSON document read whole (a trace of a million actions is ~40 MB)."""


class JsonInputError(PictxError):
    """A user's JSON that cannot be used; the message names the file and line."""


def parse_json(text: str | bytes, source: str, line: int | None = None) -> Any:
    """One JSON value; ``line`` is where ``text`` starts in ``source`` (for JSONL records)."""
    where = source if line is None else f"{source}:{line}"
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        at = where if line is not None else f"{source}:{error.lineno}"
        raise JsonInputError(f"{at}: not JSON ({error.msg})") from None
    except RecursionError:
        raise JsonInputError(f"{where}: JSON nested too deeply to read") from None
    except ValueError as error:  # integers beyond the interpreter's digit limit
        raise JsonInputError(f"{where}: unreadable JSON number ({error})") from None


def read_json_file(path: str | os.PathLike[str]) -> Any:
    """The JSON document in a regular file of at most :data:`MAX_DOCUMENT_BYTES`."""
    source = os.fspath(path)
    try:
        with open_regular(source) as fp:
            size = os.fstat(fp.fileno()).st_size
            data = fp.read(min(size, MAX_DOCUMENT_BYTES) + 1)  # no buffer beyond the file
    except OSError as error:
        raise UnreadableInputError(source, os_reason(error)) from None
    if len(data) > MAX_DOCUMENT_BYTES:
        raise UnreadableInputError(source, f"larger than {MAX_DOCUMENT_BYTES} bytes")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise UnreadableInputError(source, f"not UTF-8 ({error.reason})") from None
    return parse_json(text, source)
