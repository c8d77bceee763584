"""A note file: a ``---`` frontmatter block, a blank line, the body (notes spec N17–N21).

The syntax is the family's (:mod:`pictx_fsm.extensions.shared.tools.frontmatter`); here are
0.25's keys. Parsing is lenient and never fails; serializing writes the known keys in a
fixed order, then every other key in file order, and drops the legacy ``scope`` key. The
metadata is a plain ordered mapping, as the JS object is, so unknown keys survive a rewrite
verbatim.
Source: ``src/notes/frontmatter.ts`` of pi-context 0.25.0.
"""

from __future__ import annotations

from datetime import tzinfo
from typing import Any, Final, TypeAlias

from pictx_fsm import js, js_date
from pictx_fsm.extensions.shared.tools.frontmatter import (
    FRONTMATTER_FENCE,
    epoch_ms,
    finite_number,
    split_frontmatter,
    strip_leading_frontmatter,
    yaml_scalar,
)

__all__ = [
    "FRONTMATTER_FENCE",
    "KNOWN_KEYS",
    "LEGACY_SCOPE_KEY",
    "ORIGINS",
    "STATUSES",
    "TIMESTAMP_KEYS",
    "NoteMeta",
    "accessed",
    "epoch_ms",
    "frontmatter_block",
    "parse_note",
    "serialize_note",
    "split_frontmatter",
    "strip_leading_frontmatter",
    "yaml_scalar",
]

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
    meta["access_count"] = count if finite_number(count) else 0
    return meta, body


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
