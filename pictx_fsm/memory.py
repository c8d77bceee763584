"""The runtime's memory between hooks: machine configurations and the data their states hold.

A machine's state says *that* a reminder is staged or a reset notice is pending; the memory
holds *what* (the window id and content, the pending ids). Facts read it through the
:class:`pictx_fsm.facts.Memory` protocol; only the runtime writes it, and a hook that fails
restores it from a snapshot.
"""

from __future__ import annotations

from collections.abc import Mapping

from attrs import define, field, fields, frozen

from pictx_fsm import policy
from pictx_fsm.protocol import GUIDANCE_TYPE, WARNING_TYPE


@frozen(kw_only=True)
class Staged:
    window_id: str
    content: str


@define
class Memory:
    """The runtime's mutable memory: machine configurations plus the data their states hold."""

    configs: dict[str, Mapping[str, str]]
    staged: dict[str, Staged | None] = field(
        factory=lambda: {GUIDANCE_TYPE: None, WARNING_TYPE: None}
    )
    notices: dict[str, str | None] = field(
        factory=lambda: {GUIDANCE_TYPE: None, WARNING_TYPE: None}
    )
    pending_resets: list[str] = field(factory=list)
    missing_boot: str | None = None
    incomplete_notes_notified: set[str] = field(factory=set)
    policy_cache: policy.Policy | None = None
    notified_warnings: set[str] = field(factory=set)

    def state_of(self, machine: str, region: str) -> str:
        return self.configs[machine][region]

    def staged_window(self, kind: str) -> str | None:
        staged = self.staged[kind]
        return None if staged is None else staged.window_id

    def notice_window(self, kind: str) -> str | None:
        return self.notices[kind]

    def pending_reset_ids(self) -> tuple[str, ...]:
        return tuple(self.pending_resets)

    def missing_boot_announced(self) -> str | None:
        return self.missing_boot

    def snapshot(self) -> Memory:
        """A copy of everything a hook may change (the mappings it holds are immutable)."""
        return Memory(
            configs=dict(self.configs),
            staged=dict(self.staged),
            notices=dict(self.notices),
            pending_resets=list(self.pending_resets),
            missing_boot=self.missing_boot,
            incomplete_notes_notified=set(self.incomplete_notes_notified),
            policy_cache=self.policy_cache,
            notified_warnings=set(self.notified_warnings),
        )

    def restore(self, saved: Memory) -> None:
        """Put back a :meth:`snapshot` in place (holders of this object see the old state)."""
        for attribute in fields(Memory):
            setattr(self, attribute.name, getattr(saved, attribute.name))
