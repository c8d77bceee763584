"""Byte sizes and digests of text as Node measures them (M10, M21–M27, Q4).

Budgets are the UTF-8 bytes of ``JSON.stringify``: a lone surrogate — half of a cut emoji,
which Pi session files hold as ``"\\ud83d"`` — is written as its 6-byte escape there and
counts 3 bytes (U+FFFD) in ``Buffer.byteLength``. Nothing here raises on such text, so no
step does.
"""

from __future__ import annotations

import hashlib
from typing import Any

from pictx_fsm import js
from pictx_fsm.session.estimate import js_json


def json_text_bytes(json_text: str) -> int:
    """UTF-8 bytes of JSON text as ``JSON.stringify`` writes it (lone surrogates escaped)."""
    return js.utf8_length(js.well_formed_json(json_text))


def json_bytes(value: Any) -> int:
    """UTF-8 bytes of ``JSON.stringify(value)``."""
    return json_text_bytes(js_json(value))


def string_json_bytes(text: str) -> int:
    """The bytes ``text`` takes inside a JSON string literal (escapes included)."""
    return js.utf8_length(js.quote(text)) - 2


def digest(text: str, length: int = 64) -> str:
    """SHA-256 hex of ``text``'s code points (distinct lone surrogates stay distinct)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:length]


__all__ = ["digest", "json_bytes", "json_text_bytes", "string_json_bytes"]
