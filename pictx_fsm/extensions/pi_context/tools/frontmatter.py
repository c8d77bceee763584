"""A note file: a ``---`` frontmatter block, a blank line, the body (notes spec N17–N21).

Parsing is lenient and never fails; serializing writes the known keys in a fixed order,
then every other key in file order, and drops the legacy ``scope`` key. The metadata is a
plain ordered mapping, as the JS object is, so unknown keys survive a rewrite verbatim.
Source: ``src/notes/frontmatter.ts`` of pi-context 0.25.0.
"""

from __future__ import annotations

import math
from datetime import tzinfo
from typing import Any, Final, TypeAlias

from pictx_fsm import js, js_date
from pictx_fsm.js_regex import compile_regex

NoteMeta: TypeAlias = dict[str, Any]
"""Frontmatter keys to JSON values; timestamps are epoch milliseconds (JS numbers)."""

ORIGINS: Final = ("user", "self", "external")
STATUSES: Final = ("active", "superseded", "pending", "archived")
TIMESTAMP_KEYS: Final = ("created_at", "updated_at", "last_accessed")
KNOWN_KEYS: Final = (
    "origin",
    "status",
    "stale",
    "created_at",
    "updated_at",
    "last_accessed",
    "access_count",
    "source_window",
    "supersedes",
    "recurrence_count",
    "recurrence_windows",
)
LEGACY_SCOPE_KEY: Final = "scope"
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


def parse_note(raw: str, now_ms: float, zone: tzinfo | None = None) -> tuple[NoteMeta, str]:
    """N19/N20: the note's metadata with defaults applied, and its body. ``now_ms`` stands in
    for missing or unreadable timestamps; ``zone`` reads offset-less date-times."""
    fields, body = split_frontmatter(raw)
    meta: NoteMeta = dict(fields)
    meta.pop(LEGACY_SCOPE_KEY, None)
    meta["origin"] = meta.get("origin") if meta.get("origin") in ORIGINS else "self"
    meta["status"] = meta.get("status") if meta.get("status") in STATUSES else "active"
    meta["stale"] = meta.get("stale") is True
    for key in TIMESTAMP_KEYS:
        meta[key] = epoch_ms(meta.get(key), now_ms, zone)
    count = meta.get("access_count")
    meta["access_count"] = count if _finite_number(count) else 0
    return meta, body


def _finite_number(value: object) -> bool:
    return js.is_number(value) and math.isfinite(js.to_number(value))  # type: ignore[arg-type]


def epoch_ms(value: object, fallback: float, zone: tzinfo | None = None) -> float:
    """``toEpoch``: a finite number as is, a ``Date.parse``-able string, else ``fallback``."""
    if _finite_number(value):
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


def serialize_note(meta: NoteMeta, body: str, zone: tzinfo | None = None) -> str:
    """N17: ``---`` + known keys in order + other keys in insertion order + ``---`` + blank
    line + body; timestamps as ``localIso`` in ``zone`` (``None``: the host's zone)."""
    lines = []
    for key in KNOWN_KEYS:
        if key in meta:
            value = meta[key]
            shown = js_date.local_iso(js.to_number(value), zone) if key in TIMESTAMP_KEYS else value
            lines.append(f"{key}: {yaml_scalar(shown)}")
    for key, value in meta.items():
        if key != LEGACY_SCOPE_KEY and key not in KNOWN_KEYS:
            lines.append(f"{key}: {yaml_scalar(value)}")
    return f"---\n{chr(10).join(lines)}\n---\n\n{body}"


def frontmatter_block(meta: NoteMeta, zone: tzinfo | None = None) -> str:
    """The ``---``…``---`` block alone (for the metadata-only edit diff, N32)."""
    return serialize_note(meta, "", zone)[:-2]


def accessed(meta: NoteMeta, now_ms: float) -> NoteMeta:
    """N35: the metadata a read writes back: ``last_accessed = now``, ``access_count + 1``."""
    count = meta.get("access_count")
    return {
        **meta,
        "last_accessed": now_ms,
        "access_count": (count if js.is_number(count) and count is not None else 0) + 1,
    }
