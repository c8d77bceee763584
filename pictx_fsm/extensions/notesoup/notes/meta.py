"""notesoup's note metadata (S96–S98, S138): camelCase keys, crumpling, and 0.25 notes read.

A note file is the family's syntax (:mod:`pictx_fsm.extensions.shared.tools.frontmatter`).
notesoup writes ``origin``, ``createdAt``, ``updatedAt``, ``lastAccessed``, ``accessCount``,
``crumpledAt`` (only while crumpled, a ``localIso`` string) and ``project`` (session notes
only), then every unknown key verbatim in file order; ``scope`` is dropped.

Migration (this port, not the reference: docs/decisions.md): a pi-context 0.25 note is read
in its own format too. Where a camelCase key is missing, its snake_case 0.25 key supplies it
(``created_at``, ``updated_at``, ``last_accessed``, ``access_count``), and 0.25's
``stale: true`` reads as crumpled since the note's last update — so a 0.25 note keeps its
times and a closed note stays out of the boot. Those consumed keys are not written back; the
next write stores the note in notesoup's format. notesoup 0.38 itself keeps them as inert
extras (S138).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import tzinfo
from typing import Any, Final

import attrs
from attrs import frozen

from pictx_fsm import js_date
from pictx_fsm.extensions.shared.tools.frontmatter import (
    epoch_ms,
    finite_number,
    split_frontmatter,
    yaml_scalar,
)

__all__ = [
    "KNOWN_KEYS",
    "LEGACY_KEYS",
    "ORIGINS",
    "NoteMeta",
    "frontmatter_block",
    "parse_note",
    "serialize_note",
]

ORIGINS: Final = ("user", "self", "external")
KNOWN_KEYS: Final = (
    "origin",
    "createdAt",
    "updatedAt",
    "lastAccessed",
    "accessCount",
    "crumpledAt",
    "project",
)
DROPPED_KEYS: Final = frozenset({"scope"})
LEGACY_TIMESTAMPS: Final = (
    ("createdAt", "created_at"),
    ("updatedAt", "updated_at"),
    ("lastAccessed", "last_accessed"),
)
LEGACY_KEYS: Final = frozenset(
    {"created_at", "updated_at", "last_accessed", "access_count", "stale"}
)
"""0.25's keys this port interprets (and so does not keep as extras)."""


@frozen(kw_only=True)
class NoteMeta:
    """A note's metadata after parsing: timestamps in epoch milliseconds, unknown keys in
    file order."""

    origin: str
    created_at: float
    updated_at: float
    last_accessed: float
    access_count: float
    crumpled_at: str | None = None
    project: str | None = None
    extra: tuple[tuple[str, Any], ...] = ()

    @property
    def crumpled(self) -> bool:
        return self.crumpled_at is not None

    def evolve(self, **changes: Any) -> NoteMeta:
        return attrs.evolve(self, **changes)

    @classmethod
    def new(cls, now: float, origin: str, project: str | None) -> NoteMeta:
        return cls(
            origin=origin,
            created_at=now,
            updated_at=now,
            last_accessed=now,
            access_count=0,
            project=project,
        )


def parse_note(raw: str, now_ms: float, zone: tzinfo | None = None) -> tuple[NoteMeta, str]:
    """S96 with the 0.25 migration: the metadata (defaults applied: ``origin`` ``self``,
    missing timestamps ``now_ms``, ``accessCount`` 0) and the body."""
    fields, body = split_frontmatter(raw)
    return meta_of(fields, now_ms, zone), body


def meta_of(fields: Mapping[str, Any], now_ms: float, zone: tzinfo | None = None) -> NoteMeta:
    origin = fields.get("origin")
    stamps = {
        key: epoch_ms(fields[key] if key in fields else fields.get(legacy), now_ms, zone)
        for key, legacy in LEGACY_TIMESTAMPS
    }
    count = fields.get("accessCount", fields.get("access_count"))
    crumpled = fields.get("crumpledAt")
    if not isinstance(crumpled, str):
        stale = fields.get("stale") is True
        crumpled = js_date.local_iso(stamps["updatedAt"], zone) if stale else None
    project = fields.get("project")
    extra = tuple(
        (key, value)
        for key, value in fields.items()
        if key not in KNOWN_KEYS and key not in DROPPED_KEYS and key not in LEGACY_KEYS
    )
    return NoteMeta(
        origin=origin if origin in ORIGINS else "self",
        created_at=stamps["createdAt"],
        updated_at=stamps["updatedAt"],
        last_accessed=stamps["lastAccessed"],
        access_count=count if finite_number(count) else 0,
        crumpled_at=crumpled,
        project=project if isinstance(project, str) else None,
        extra=extra,
    )


def serialize_note(meta: NoteMeta, body: str, zone: tzinfo | None = None) -> str:
    """S96: ``---`` + known keys in order + unknown keys in file order + ``---`` + blank line
    + body; timestamps as ``localIso`` in ``zone`` (``None``: the host's zone)."""
    return f"{frontmatter_block(meta, zone)}\n\n{body}"


def frontmatter_block(meta: NoteMeta, zone: tzinfo | None = None) -> str:
    """The ``---``…``---`` block alone (the metadata-only diff of ``notes_update``, S100)."""
    lines = [
        f"origin: {yaml_scalar(meta.origin)}",
        f"createdAt: {yaml_scalar(js_date.local_iso(meta.created_at, zone))}",
        f"updatedAt: {yaml_scalar(js_date.local_iso(meta.updated_at, zone))}",
        f"lastAccessed: {yaml_scalar(js_date.local_iso(meta.last_accessed, zone))}",
        f"accessCount: {yaml_scalar(meta.access_count)}",
    ]
    if meta.crumpled_at is not None:
        lines.append(f"crumpledAt: {yaml_scalar(meta.crumpled_at)}")
    if meta.project is not None:
        lines.append(f"project: {yaml_scalar(meta.project)}")
    lines += [f"{key}: {yaml_scalar(value)}" for key, value in meta.extra]
    return "---\n" + "\n".join(lines) + "\n---"
