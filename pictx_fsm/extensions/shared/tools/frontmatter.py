"""The note-file syntax shared by pi-context 0.25 and notesoup 0.38 (N17–N21, S96): a
``---`` frontmatter block, a blank line, the body.

Parsing is lenient and never fails: ``key: value`` lines, ``- item`` sequences, JSON-like
scalars, anything else skipped; serializing writes a safe string bare and every other value
as one line of JSON. Which keys are known, in what order, and how timestamps are stored is
each extension's (0.25 snake_case, 0.38 camelCase). Source: ``src/notes/frontmatter.ts``.
"""

from __future__ import annotations

import math
from datetime import tzinfo
from typing import Any, Final

from pictx_fsm import js, js_date
from pictx_fsm.js_regex import compile_regex

__all__ = [
    "FRONTMATTER_FENCE",
    "epoch_ms",
    "finite_number",
    "split_frontmatter",
    "strip_leading_frontmatter",
    "yaml_scalar",
]

FRONTMATTER_FENCE: Final = "---"

# The reference's regexes (frontmatter.ts), compiled with JavaScript's rules.
_FIELD: Final = compile_regex(r"^([A-Za-z_][A-Za-z0-9_-]*):(.*)$")
_SEQUENCE_ITEM: Final = compile_regex(r"^\s*-\s+")
_BARE_SCALAR: Final = compile_regex(r"^[A-Za-z0-9_.+\-:/]+$")
_RESERVED_WORDS: Final = frozenset(("true", "false", "null", "yes", "no", "on", "off", "~"))


def split_frontmatter(raw: str) -> tuple[dict[str, Any], str]:
    """N19: ``(fields, body)``; without a closed leading ``---`` block the whole raw text
    (BOM and CRs kept) is the body."""
    lines = [line.removesuffix("\r") for line in raw.removeprefix("\ufeff").split("\n")]
    if js.trim(lines[0]) != FRONTMATTER_FENCE:
        return {}, raw
    close = next((i for i in range(1, len(lines)) if js.trim(lines[i]) == FRONTMATTER_FENCE), 0)
    if not close:
        return {}, raw
    fields: dict[str, Any] = {}
    index = 1
    while index < close:
        match = _FIELD.execute(lines[index])
        index += 1
        if match is None:
            continue
        key, rest = match[1] or "", match[2] or ""
        if js.trim(rest):
            fields[key] = _scalar(rest)
            continue
        items = []
        while index < close and _SEQUENCE_ITEM.test(lines[index]):
            items.append(_scalar(_SEQUENCE_ITEM.replace(lines[index], "")))
            index += 1
        fields[key] = items
    body = lines[close + 1 :]
    if body[:1] == [""]:
        body = body[1:]
    return fields, "\n".join(body)


def _scalar(text: str) -> Any:
    trimmed = js.trim(text)
    if not trimmed:
        return ""
    try:
        return js.parse_json_value(trimmed)
    except ValueError:
        if trimmed[0] in "\"'" and trimmed[-1] == trimmed[0]:
            return trimmed[1:-1]
        return trimmed


def strip_leading_frontmatter(content: str) -> str:
    """N21: caller content minus a leading ``---`` block (it never reaches the file)."""
    return split_frontmatter(content)[1]


def finite_number(value: object) -> bool:
    return js.is_number(value) and math.isfinite(js.to_number(value))  # type: ignore[arg-type]


def epoch_ms(value: object, fallback: float, zone: tzinfo | None = None) -> float:
    """``toEpoch``: a finite number as is, a ``Date.parse``-able string, else ``fallback``."""
    if finite_number(value):
        return value  # type: ignore[return-value]
    if isinstance(value, str):
        parsed = js_date.parse_date_ms(value, zone)
        if parsed is not None:
            return parsed
    return fallback


def yaml_scalar(value: Any) -> str:
    """A safe string bare, everything else as one line of JSON."""
    if isinstance(value, str) and _BARE_SCALAR.test(value) and value.lower() not in _RESERVED_WORDS:
        return value
    return js.stringify(value)
