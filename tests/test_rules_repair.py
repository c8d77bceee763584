"""Lifecycle §11 and D4 through the runtime: startup / tree boot repair (R64–R66, D4)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from lifecycle_kit import ROOT_ID, Kit, audits_verify, boot_ids  # noqa: F401
from session_builders import SessionBuilder

from pictx_fsm.extensions.pi_context.texts import BOOT_TYPE, CONTINUATION_TYPE, RESET_SUMMARY_0_24
from pictx_fsm.host.effects import SendMessage

W = "pcw:12345678:0badcafe"
EARLIER = "pcw:12345678:0000beef"

Shape = Callable[[SessionBuilder], Any]


def _sends(result: Any) -> list[SendMessage]:
    return [e for e in result.effects if isinstance(e, SendMessage)]


def _window_kit(profile: str, *tail: Shape) -> Kit:
    """A session whose current window W is opened by a marker followed by ``tail``."""
    kit = Kit.create(profile=profile)
    kit.build.user("old work")
    kit.build.assistant("old answer")
    kit.build.marker(W)
    for step in tail:
        step(kit.build)
    return kit


def _appended(kit: Kit, result: Any) -> list[str]:
    return [s.custom_type for s in _sends(result)]


# -- R64 -----------------------------------------------------------------------------------------


def test_r64_startup_sends_a_hidden_root_boot_without_a_turn_or_notice() -> None:
    kit = Kit.create()
    result = kit.start()
    (send,) = _sends(result)
    assert send.custom_type == BOOT_TYPE and send.display is False and send.trigger_turn is False
    assert send.details == {"windowId": ROOT_ID} and "previous" not in boot_ids(send.content)
    assert send.content.startswith("<context_window>") and result.notices == ()


@pytest.mark.parametrize("reason", ["startup", "reload", "resume", "new", "fork"])
def test_r64_ensure_boot_is_idempotent_for_every_start_reason(reason: str) -> None:
    kit = Kit.create()
    kit.start()
    assert _sends(kit.start(reason)) == [] and len(kit.of_type(BOOT_TYPE)) == 1


def test_r64_startup_while_disabled_writes_no_boot() -> None:
    kit = Kit.create()
    kit.toggle("off")
    assert _sends(kit.start()) == []


def test_r64_tree_navigation_ensures_the_boot_of_the_destination_window() -> None:
    # Given a root branch without a boot and a reset window on another branch
    kit = Kit.create()
    first = kit.build.user("q")
    kit.start()
    kit.build.marker(W)
    kit.build.boot(W)
    kit.build.continuation()
    # When the user navigates back before the root boot
    result = kit.navigate(first)
    # Then the destination (root) window gets its boot
    (send,) = _sends(result)
    assert send.details == {"windowId": ROOT_ID}


def test_r64_tree_navigation_while_disabled_writes_nothing_but_forgets_notices() -> None:
    kit = Kit.create()
    kit.build.user("q")
    kit.start()
    kit.tool_turn("wipe_memory")
    kit.toggle("off")
    result = kit.navigate(kit.tree.leaf_id)
    assert _sends(result) == [] and kit.runtime.state.pending_resets == ()


def test_r64_pi_context_on_ensures_the_boot() -> None:
    kit = _window_kit("0.25.1")
    kit.toggle("off")
    kit.start()
    assert kit.of_type(BOOT_TYPE) == []
    kit.toggle("on")
    assert kit.of_type(BOOT_TYPE)[0].details == {"windowId": W}  # type: ignore[attr-defined]


@pytest.mark.parametrize("profile", ["0.25.0", "0.25.1"])
def test_r64_repaired_reset_boot_names_the_previous_window(profile: str) -> None:
    # Given an earlier window and the current marker W without its boot
    kit = Kit.create(profile=profile)
    kit.build.marker(EARLIER)
    kit.build.boot(EARLIER)
    kit.build.continuation()
    kit.build.marker(W)
    # When the session starts
    boot, *_ = _sends(kit.start())
    # Then the boot is for W, names EARLIER as previous and carries the reset line per profile
    assert boot.details == {"windowId": W}
    assert boot_ids(boot.content) == {"first": ROOT_ID, "current": W, "previous": EARLIER}
    assert boot.content.startswith(RESET_SUMMARY_0_24) is (profile == "0.25.0")


# -- R65 (0.25.0) ----------------------------------------------------------------------------

METADATA: dict[str, Shape] = {
    "model_change": lambda b: b.add("model_change", provider="faux", modelId="faux-2"),
    "thinking_level_change": lambda b: b.add("thinking_level_change", thinkingLevel="high"),
    "plain_custom": lambda b: b.custom("other/state", {"x": 1}),
    "label": lambda b: b.label("00000001"),
    "context_edit": lambda b: b.edit("00000001"),
    "session_info": lambda b: b.add("session_info", name="n"),
}


@pytest.mark.parametrize("name", sorted(METADATA))
@pytest.mark.parametrize("profile", ["0.25.0", "0.25.1"])
def test_r65_metadata_after_the_marker_still_allows_repair(name: str, profile: str) -> None:
    kit = _window_kit(profile, METADATA[name])
    expected = [BOOT_TYPE] if profile == "0.25.0" else [BOOT_TYPE, CONTINUATION_TYPE]
    assert _appended(kit, kit.start()) == expected


CONVERSATION: dict[str, Shape] = {
    "user_message": lambda b: b.user("later"),
    "assistant_message": lambda b: b.assistant("later"),
    "foreign_custom_message": lambda b: b.custom_message("other/note", "hi"),
    "compaction": lambda b: b.compaction(),
    "branch_summary": lambda b: b.branch_summary(),
    "boot_of_another_window": lambda b: b.boot(EARLIER),
}


@pytest.mark.parametrize("name", sorted(CONVERSATION))
@pytest.mark.parametrize("profile", ["0.25.0", "0.25.1"])
def test_r65_later_conversation_refuses_repair_silently(name: str, profile: str) -> None:
    kit = _window_kit(profile, CONVERSATION[name])
    result = kit.start()
    assert _sends(result) == [] and result.notices == ()
    # and the context hook then cancels requests (R68) until /wipe-memory
    kit.project()
    assert kit.aborts == 1


def test_r65_0_25_0_refuses_a_boot_hidden_by_a_context_edit() -> None:
    kit = _window_kit("0.25.0", lambda b: b.edit(b.boot(W)))
    assert _sends(kit.start()) == []


def test_r65_0_25_0_refuses_a_tail_with_a_continuation_but_no_boot() -> None:
    kit = _window_kit("0.25.0", lambda b: b.continuation())
    assert _sends(kit.start()) == []


def test_r65_0_25_0_a_visible_boot_is_enough() -> None:
    kit = _window_kit("0.25.0", lambda b: b.boot(W))
    assert _sends(kit.start()) == []


# -- R66 -----------------------------------------------------------------------------------------


def test_r66_a_fork_appends_a_root_boot_for_its_own_session_id() -> None:
    # Given a session with a root boot and some conversation
    old = Kit.create()
    old.start()
    old.build.user("q1")
    old.build.assistant("a1")
    # When it is forked to a new session id
    fork = Kit.create(session_id="feedf00d-1111")
    for entry in old.tree.branch():
        fork.tree.add(entry)
    (send,) = _sends(fork.start("fork"))
    # Then a new root boot for the fork's root id is appended
    assert send.details == {"windowId": "pcw:feedf00d:root"}
    # And the projection keeps every copied message with only the new boot, where the first was
    projected = fork.project().value.messages  # type: ignore[union-attr]
    boots = [m for m in projected if m.get("customType") == BOOT_TYPE]
    assert [b["details"] for b in boots] == [{"windowId": "pcw:feedf00d:root"}]
    roles = [m["role"] for m in projected]
    assert roles == ["custom", "user", "assistant"]


# -- D4 (0.25.1) -----------------------------------------------------------------------------

D4_CASES: dict[str, tuple[list[Shape], list[str] | None]] = {
    "bare_marker": ([], [BOOT_TYPE, CONTINUATION_TYPE]),
    "boot_only": ([lambda b: b.boot(W)], [CONTINUATION_TYPE]),
    "complete": ([lambda b: b.boot(W), lambda b: b.continuation()], []),
    "hidden_boot_counts": ([lambda b: b.edit(b.boot(W))], [CONTINUATION_TYPE]),
    "continuation_before_boot": ([lambda b: b.continuation(), lambda b: b.boot(W)], None),
    "continuation_without_boot": ([lambda b: b.continuation()], None),
    "second_boot": ([lambda b: b.boot(W), lambda b: b.boot(W)], None),
    "second_continuation": (
        [lambda b: b.boot(W), lambda b: b.continuation(), lambda b: b.continuation()],
        None,
    ),
    "message_after_complete_tail": (
        [lambda b: b.boot(W), lambda b: b.continuation(), lambda b: b.user("x")],
        None,
    ),
    "metadata_between": ([lambda b: b.boot(W), METADATA["model_change"]], [CONTINUATION_TYPE]),
}


@pytest.mark.parametrize("name", sorted(D4_CASES))
def test_d4_repair_completes_only_what_is_missing_and_refuses_anything_else(name: str) -> None:
    # Given a marker tail of this shape (profile 0.25.1)
    shapes, expected = D4_CASES[name]
    kit = _window_kit("0.25.1", *shapes)
    # When the session starts
    appended = _appended(kit, kit.start())
    # Then only the missing parts are sent, in order; a refused tail gets nothing
    assert appended == (expected or [])
    # And repair is idempotent: a reload adds nothing
    assert _appended(kit, kit.start("reload")) == []


def test_d4_repair_is_silent_and_turnless() -> None:
    kit = _window_kit("0.25.1")
    result = kit.start()
    assert result.notices == () and all(s.trigger_turn is False for s in _sends(result))
    assert kit.turn_start().notices == ()
