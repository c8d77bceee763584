"""A recorded system message without the recording machine's paths.

The real Pi's system message names where Pi is installed and the run's working directory.
A finding kept in the repository must not carry them, yet the model session replays the
message as the real Pi sent it, and Pi's estimate counts its characters. So each absolute path
is kept as ``<path:N>`` (its length) and expanded, when the finding is read, to a neutral path
of exactly that length: every estimate, cut point and threshold decision stays the same.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["local_message", "portable_message"]

_MACHINE_PATH = re.compile(r"/[\w.@+-]+(?:/[\w.@+-]+)+/?")
_PLACEHOLDER = re.compile(r"<path:(\d+)>")


def _map_strings(value: Any, change: Any) -> Any:
    if isinstance(value, str):
        return change(value)
    if isinstance(value, list):
        return [_map_strings(item, change) for item in value]
    if isinstance(value, dict):
        return {key: _map_strings(item, change) for key, item in value.items()}
    return value


def portable_message(message: Any) -> Any:
    """``message`` with every absolute path replaced by ``<path:N>``."""
    return _map_strings(
        message, lambda text: _MACHINE_PATH.sub(lambda m: f"<path:{len(m.group(0))}>", text)
    )


def local_message(message: Any) -> Any:
    """``message`` with every ``<path:N>`` expanded to a path of ``N`` characters."""

    def expand(match: re.Match[str]) -> str:
        length = int(match.group(1))
        return "/" + "p" * (length - 1)

    return _map_strings(message, lambda text: _PLACEHOLDER.sub(expand, text))
