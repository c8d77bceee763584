"""Lifecycle §13 as the runtime uses it: the notes snapshot of every boot (R70–R74)."""

from __future__ import annotations

import errno
from typing import Any

import attrs
import pytest
from lifecycle_kit import Kit, audits_verify  # noqa: F401

from pictx_fsm.extensions.pi_context.notes import InMemoryNotesSource, NoteRow, Scope
from pictx_fsm.extensions.pi_context.texts import (
    BOOT_TYPE,
    CONTINUATION_TYPE,
    MARKER_TYPE,
    PROTOCOL_BLOCK,
    RESET_SUMMARY_0_24,
)
from pictx_fsm.host.effects import BoundaryResult, Notify, SendMessage

NOW = 1_796_000_000_000
HOMES: list[Scope] = ["session", "project", "human", "agent", "model"]


class NodeError(Exception):
    """A Node-style error with a string ``code``."""

    def __init__(self, code: str) -> None:
        super().__init__(f"{code}: failure")
        self.code = code


@attrs.define
class RecordingNotes:
    """Records the order of home listings and the ``now`` each listing was given."""

    inner: InMemoryNotesSource = attrs.field(factory=InMemoryNotesSource)
    calls: list[tuple[str, float]] = attrs.field(factory=list)

    def list_home(self, scope: Any, now_ms: float) -> tuple[NoteRow, ...]:
        self.calls.append((scope, now_ms))
        return tuple(self.inner.list_home(scope, now_ms))


def _root_boot(kit: Kit) -> str:
    (send,) = [e for e in kit.start().effects if isinstance(e, SendMessage)]
    return str(send.content)


def _notes() -> InMemoryNotesSource:
    source = InMemoryNotesSource()
    for scope in HOMES:
        for n in range(3):
            source = source.with_note(
                scope, f"{scope}-{n}.md", f"BODY of {scope} {n}", updated_at_ms=NOW - n * 60_000
            )
    source = source.with_note("human", "MAP.md", "HUMAN MAP BODY", updated_at_ms=NOW)
    return source.with_note("project", "MAP.md", "PROJECT MAP BODY", updated_at_ms=NOW)


# -- R70 -----------------------------------------------------------------------------------------


def test_r70_one_snapshot_lists_the_five_homes_once_in_order_at_one_instant() -> None:
    # Given a recording notes source and a clock that moves on every read
    notes = RecordingNotes()
    ticks = iter(range(NOW, NOW + 1_000))
    kit = Kit.create(notes=notes)
    kit.runtime.clock = lambda: next(ticks)
    # When a boot is rendered
    kit.start()
    # Then each home was listed once, in order, all with the same opening instant
    assert [scope for scope, _ in notes.calls] == HOMES
    assert len({now for _, now in notes.calls}) == 1


def test_r70_every_boot_renders_from_its_own_single_snapshot() -> None:
    notes = RecordingNotes()
    kit = Kit.create(notes=notes)
    kit.start()
    kit.build.user("x")
    kit.tool_turn("wipe_memory")
    kit.wipe()
    assert [scope for scope, _ in notes.calls] == HOMES * 3


# -- R71 -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("failure", [errno.EIO, errno.EACCES, errno.ENOTDIR, NodeError("EPERM")])
def test_r71_an_errno_failure_makes_one_home_unavailable(failure: Any) -> None:
    # Given the @human home failing with an errno-style error
    kit = Kit.create(profile="0.25.0", notes=_notes().failing("human", failure))
    # When the root boot is rendered
    content = _root_boot(kit)
    # Then the boot says that home's index was unavailable, and the other homes are listed
    assert (
        "Notes index incomplete: @human home's index was unavailable during boot; notes_list "
        "can retry after recovery." in content
    )
    assert "@project/project-0.md" in content


def test_r71_an_absent_home_is_empty_and_not_unavailable() -> None:
    kit = Kit.create(notes=_notes().failing("human", errno.ENOENT))
    result = kit.start()
    content = str(result.effects[0].content)  # type: ignore[union-attr]
    assert "Notes index incomplete" not in content and result.notices == ()
    assert "@human/human-0.md" not in content


@pytest.mark.parametrize(
    "failure", [TypeError("bad"), NodeError("ERR_INVALID_ARG_TYPE"), NodeError("eio")]
)
def test_r71_any_other_failure_propagates(failure: Exception) -> None:
    # Given a home failing with a non-errno error
    kit = Kit.create(notes=InMemoryNotesSource().failing("model", failure))
    # When startup renders the root boot, the error propagates (Pi reports it)
    with pytest.raises(type(failure)):
        kit.start()
    # And a running reset reports it instead (R29)
    kit.tool("wipe_memory")
    kit.build.user("x")
    result = kit.turn_end("y")
    assert result.notices[0].message.startswith("pi-context: could not build reset (")


# -- R72 -----------------------------------------------------------------------------------------


def test_r72_root_boot_layout() -> None:
    # Given notes in every home
    kit = Kit.create(notes=_notes())
    # When the root boot is rendered
    content = _root_boot(kit)
    parts = content.split("\n\n")
    # Then identity block first (no previous id), protocol block last
    assert parts[0].splitlines() == [
        "<context_window>",
        "Agent name: root (brain: faux-1)",
        "First context window id: pcw:12345678:root",
        "Current context window id: pcw:12345678:root",
        "</context_window>",
    ]
    assert content.endswith(PROTOCOL_BLOCK)
    # And resident maps (human before project) precede the pocket; bodies never in the pocket
    assert content.index("HUMAN MAP BODY") < content.index("PROJECT MAP BODY")
    assert content.index("PROJECT MAP BODY") < content.index("crumpled note")
    assert "BODY of" not in content


def test_r72_the_pocket_honours_quotas_and_home_order() -> None:
    kit = Kit.create(notes=_notes())
    content = _root_boot(kit)
    pocket = [line for line in content.splitlines() if line.startswith("- ")]
    addresses = [line[2:].split(" (")[0] for line in pocket]
    assert addresses == [
        "session-0.md",
        "session-1.md",
        "session-2.md",
        "@project/project-0.md",
        "@project/project-1.md",
        "@human/human-0.md",
        "@human/human-1.md",
        "@agents/root/agent-0.md",
        "@models/default/model-0.md",
    ]
    assert pocket[1].endswith("(1 lines, 17 UTF-8 bytes, updated 1m ago)")


@pytest.mark.parametrize("profile", ["0.25.0", "0.25.1"])
def test_r72_reset_boots_carry_the_previous_id_and_the_reset_line_per_profile(profile: str) -> None:
    kit = Kit.create(profile=profile)
    kit.start()
    kit.build.user("x")
    value = kit.tool_turn("wipe_memory").value
    assert isinstance(value, BoundaryResult)
    content = value.entries[1].content  # type: ignore[union-attr]
    assert "Previous context window id: pcw:12345678:root" in content
    assert content.startswith(RESET_SUMMARY_0_24 + "\n\n<context_window>") is (profile == "0.25.0")
    assert content.startswith("<context_window>") is (profile == "0.25.1")


# -- R73 -----------------------------------------------------------------------------------------


def test_r73_0_25_0_wording_for_one_and_several_homes_without_os_text() -> None:
    one = Kit.create(profile="0.25.0", notes=InMemoryNotesSource().failing("agent", errno.EIO))
    assert (
        "Notes index incomplete: @self home's index was unavailable during boot; notes_list can "
        "retry after recovery." in _root_boot(one)
    )
    notes = InMemoryNotesSource().failing("session", errno.EIO).failing("model", errno.EACCES)
    several = _root_boot(Kit.create(profile="0.25.0", notes=notes))
    assert (
        "Notes index incomplete: this session, @model home indexes were unavailable during boot; "
        "notes_list can retry after recovery." in several
    )
    assert "Input/output error" not in several and "Permission denied" not in several


def test_r73_identity_and_protocol_survive_when_every_home_fails() -> None:
    notes = InMemoryNotesSource()
    for scope in HOMES:
        notes = notes.failing(scope, errno.EIO)  # type: ignore[arg-type]
    content = _root_boot(Kit.create(profile="0.25.0", notes=notes))
    assert content.startswith("<context_window>") and content.endswith(PROTOCOL_BLOCK)
    assert "this session, @project, @human, @self, @model home indexes" in content


# -- R74 -----------------------------------------------------------------------------------------


def test_r74_the_human_is_warned_once_per_window_id_for_the_instance_lifetime() -> None:
    # Given an unavailable home
    kit = Kit.create(notes=InMemoryNotesSource().failing("project", errno.EIO))
    warning = Notify(
        message="pi-context: notes index incomplete for @project; notes_list can retry after "
        "recovery.",
        level="warning",
    )
    question = kit.build.user("q")
    # When the root boot is rendered, and rendered again after navigating above it
    assert kit.start().notices == (warning,)
    result = kit.navigate(question)
    # Then the second root boot is written without a second warning
    assert len([e for e in result.effects if isinstance(e, SendMessage)]) == 1
    assert result.notices == ()
    # And each new window id is warned about once
    assert kit.tool_turn("wipe_memory").notices == (warning,)
    assert kit.wipe().notices[:1] == (warning,)
    markers = {m.data["windowId"] for m in kit.of_type(MARKER_TYPE)}  # type: ignore[attr-defined]
    assert kit.runtime.state.notes_notified == {"pcw:12345678:root", *markers}


def test_r74_a_notes_failure_never_cancels_the_reset_commit() -> None:
    kit = Kit.create(notes=InMemoryNotesSource().failing("project", errno.EIO))
    kit.build.user("x")
    value = kit.tool_turn("wipe_memory").value
    assert isinstance(value, BoundaryResult) and value.continue_
    types = [getattr(d, "custom_type", None) for d in value.entries]
    assert types == [MARKER_TYPE, BOOT_TYPE, CONTINUATION_TYPE]
