"""The notes sandbox of every verify world (N11, N12): created where it is cheap, and watched
after every action by three ``stat`` calls that any change outside the notes root moves —
the whole outside is read only when they do (issue 11: no rescans per step)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pictx_fsm.extensions.pi_context.kit import notes_sandbox
from pictx_fsm.extensions.pi_context.kit.notes_sandbox import SENTINEL, NotesConfined, NotesSandbox
from pictx_fsm.extensions.pi_context.kit.world import World, scenario_config


def test_a_sandbox_goes_to_the_memory_directory_when_it_is_writable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Given a writable memory directory (a temporary one stands in for /dev/shm)
    monkeypatch.setattr(notes_sandbox, "MEMORY_DIR", tmp_path)
    # When a sandbox is made / Then it lies there, and is removed with close()
    sandbox = NotesSandbox()
    assert sandbox.base.parent == tmp_path
    sandbox.close()
    assert not sandbox.base.exists()
    # And without one, the default temporary directory is used
    monkeypatch.setattr(notes_sandbox, "MEMORY_DIR", tmp_path / "missing")
    assert notes_sandbox.sandbox_parent() is None


def _watched() -> tuple[World, NotesConfined]:
    world = World(scenario_config("0.25.1"))
    invariant = NotesConfined()
    assert invariant.check(world) == []
    return world, invariant


def test_n12_a_same_size_rewrite_of_the_sentinel_through_a_planted_link_is_caught() -> None:
    # Given a world whose notes root links to the sentinel outside it
    world, invariant = _watched()
    leak = world.notes.root / "human" / "leak.md"
    before = (world.notes.outside / SENTINEL).read_bytes()
    # When something writes through the link, keeping the size
    leak.write_bytes(bytes(reversed(before)))
    # Then the invariant reports the outside changed
    (violation,) = invariant.check(world)
    assert violation.invariant == "notes_confined" and "outside" in violation.message


def test_n11_a_directory_made_through_a_link_to_the_outside_is_caught() -> None:
    # Given a world whose notes root links a whole agent home to the outside
    world, invariant = _watched()
    # When a notes write creates a folder and a note under that link
    escaped = world.notes.root / "agents" / "evil" / "new"
    escaped.mkdir()
    (escaped / "note.md").write_text("x")
    # Then the invariant reports it
    assert [v.invariant for v in invariant.check(world)] == ["notes_confined"]


def test_a_file_beside_the_notes_root_is_caught() -> None:
    # Given a world / When a file appears beside the notes root (neither root nor outside)
    world, invariant = _watched()
    (world.notes.base / "stray").write_text("x")
    # Then it is a violation
    assert [v.invariant for v in invariant.check(world)] == ["notes_confined"]


def test_writes_inside_the_notes_root_are_no_violation() -> None:
    # Given a world / When notes are written inside the root (what the tools may do)
    world, invariant = _watched()
    home = world.notes.root / "human" / "topic"
    home.mkdir(parents=True)
    (home / "note.md").write_text("x")
    # Then nothing outside moved, and the invariant stays quiet
    assert invariant.check(world) == []


@pytest.mark.skipif(not os.access("/dev/shm", os.W_OK), reason="no writable /dev/shm here")
def test_worlds_put_their_sandboxes_in_memory_where_they_can() -> None:
    world = World(scenario_config("0.25.1"))
    assert world.notes.base.parent == Path("/dev/shm")


# -- sandboxes handed on (verify's generated runs) ---------------------------------------------


def test_a_released_untouched_sandbox_is_the_next_worlds() -> None:
    # Given a world whose run left its notes sandbox as planted
    first = World(scenario_config("0.25.1"))
    planted = first.notes.base
    # When the world is released and the next one made
    first.release()
    second = World(scenario_config("0.25.1"))
    # Then the next world has the same sandbox, still pristine and watched as before
    assert second.notes.base == planted and second.notes.pristine()
    assert NotesConfined().check(second) == []
    second.release()


@pytest.mark.parametrize(
    "touch",
    ["a note in a home", "a home directory", "a link retargeted", "a mode changed", "outside"],
)
def test_a_released_sandbox_that_anything_moved_in_is_removed(touch: str) -> None:
    # Given a sandbox in which something moved
    sandbox = NotesSandbox()
    if touch == "a note in a home":
        (sandbox.root / "human" / "kept.md").write_text("x\n")
    elif touch == "a home directory":
        (sandbox.root / "project").mkdir()
    elif touch == "a link retargeted":
        (sandbox.root / "agents" / "evil").unlink()
        (sandbox.root / "agents" / "evil").symlink_to(sandbox.root)
    elif touch == "a mode changed":
        (sandbox.root / "human").chmod(0o500)
    else:
        (sandbox.outside / "new.md").write_text("x\n")
    # When it is released
    assert not sandbox.pristine()
    sandbox.release()
    # Then it is gone, and no world gets it
    assert not sandbox.base.exists()
    assert NotesSandbox.fresh().base != sandbox.base
