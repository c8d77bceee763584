"""Lifecycle §12 through the runtime: the ``context_with_system`` projection (R67–R69)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from lifecycle_kit import ROOT_ID, Kit, audits_verify  # noqa: F401

from pictx_fsm.extensions.pi_context.texts import BOOT_TYPE, MARKER_TYPE, NOTICE_MISSING_BOOT
from pictx_fsm.host.effects import MessagesResult, Notify
from pictx_fsm.host.events import ContextWithSystem
from pictx_fsm.session.projection import fold_system

W = "pcw:12345678:c0ffee00"
OTHER = "pcw:12345678:0ddba11f"
SYSTEM = {"role": "system", "content": "You are Pi.", "sections": {"a": "1"}, "timestamp": 1}
SYSTEM_2 = {"role": "system", "content": "", "sections": {"b": "2"}, "timestamp": 2}


def boot(window_id: str, timestamp: int = 10) -> dict[str, Any]:
    return {
        "role": "custom",
        "customType": BOOT_TYPE,
        "content": "boot",
        "display": False,
        "details": {"windowId": window_id},
        "timestamp": timestamp,
    }


def user(text: str, timestamp: int = 10) -> dict[str, Any]:
    return {"role": "user", "content": text, "timestamp": timestamp}


def _marked(window_id: str = W) -> Kit:
    kit = Kit.create()
    kit.build.marker(window_id)
    return kit


def _project(kit: Kit, messages: list[dict[str, Any]], **ctx: Any) -> tuple[Any, ...]:
    value = kit.handle(ContextWithSystem(messages=messages), **ctx).value
    assert isinstance(value, MessagesResult)
    return value.messages


# -- R67 -----------------------------------------------------------------------------------------


def test_r67_everything_before_the_window_boot_is_dropped_and_the_system_head_folded() -> None:
    # Given an old transcript (an older boot, summaries, tool results), then W's boot and more
    old = [
        SYSTEM,
        user("old question"),
        {"role": "assistant", "content": [], "timestamp": 11},
        {"role": "toolResult", "content": "r", "timestamp": 12},
        boot(OTHER),
        {"role": "compactionSummary", "summary": "s", "timestamp": 13},
        {"role": "branchSummary", "summary": "b", "timestamp": 14},
        {"role": "bashExecution", "command": "ls", "output": "", "timestamp": 15},
        SYSTEM_2,
    ]
    later = [boot(W, 20), user("same time", 20), user("earlier stamp", 5), SYSTEM_2]
    kit = _marked()
    # When the request is projected
    projected = _project(kit, old + later)
    # Then: [folded system head of the old prefix] ++ the window from its boot, in order
    assert projected == (fold_system(old), *later)


def test_r67_the_first_boot_of_the_window_is_the_cut_selected_by_id() -> None:
    kit = _marked()
    messages = [user("x"), boot(W, 50), user("a"), boot(W, 1), user("b")]
    assert _project(kit, messages) == tuple(messages[1:])


def test_r67_without_system_messages_no_head_is_added() -> None:
    kit = _marked()
    messages = [user("x"), boot(W), user("y")]
    assert _project(kit, messages) == tuple(messages[1:])


def test_r67_the_projection_of_a_real_branch_never_carries_the_marker() -> None:
    # Given a branch with a reset window made by /wipe-memory and later work
    kit = Kit.create()
    kit.start()
    kit.build.system()
    kit.build.user("before")
    kit.wipe()
    kit.build.user("after")
    # When Pi's projection is handed to context_with_system
    projected = kit.project().value.messages  # type: ignore[union-attr]
    # Then the provider sees the folded system head, the window's boot, continuation, "after"
    assert [m.get("customType", m["role"]) for m in projected] == [
        "system",
        BOOT_TYPE,
        "pi-context/continuation",
        "user",
    ]
    assert all(m.get("customType") != MARKER_TYPE for m in projected)


@settings(max_examples=40, deadline=None)
@given(
    before=st.lists(st.sampled_from(["user", "assistant", "system", "other_boot"]), max_size=6),
    after=st.lists(st.sampled_from(["user", "assistant", "system", "boot"]), max_size=6),
)
def test_r67_the_output_is_exactly_head_plus_the_suffix_from_the_boot(
    before: list[str], after: list[str]
) -> None:
    # Given any prefix and suffix around W's first boot
    def make(kind: str, i: int) -> dict[str, Any]:
        if kind == "system":
            return {"role": "system", "content": f"s{i}", "timestamp": i}
        if kind == "other_boot":
            return boot(OTHER, i)
        if kind == "boot":
            return boot(W, i)
        return {"role": kind, "content": f"m{i}", "timestamp": i}

    prefix = [make(k, i) for i, k in enumerate(before)]
    suffix = [boot(W, 100), *[make(k, 101 + i) for i, k in enumerate(after)]]
    kit = _marked()
    # Then the output is the folded head of the prefix (if any) followed by the whole suffix
    head = fold_system(prefix)
    assert _project(kit, prefix + suffix) == ((head,) if head else ()) + tuple(suffix)


# -- R68 -----------------------------------------------------------------------------------------


def test_r68_a_missing_boot_aborts_with_only_the_system_head_and_one_notice() -> None:
    # Given a marker window whose boot is not among the messages
    kit = _marked()
    messages = [SYSTEM, user("secret old history"), boot(OTHER)]
    # When requests are projected twice
    first = _project(kit, messages)
    second = _project(kit, messages)
    # Then each is cancelled with only the folded system head; the human is told once
    assert first == second == (fold_system([SYSTEM]),)
    assert kit.aborts == 2
    assert kit.notices == [Notify(message=NOTICE_MISSING_BOOT.format(window_id=W), level="error")]


def test_r68_without_system_messages_the_cancelled_request_is_empty() -> None:
    kit = _marked()
    assert _project(kit, [user("history")]) == ()


def test_r68_the_notice_is_given_again_for_another_window_and_after_a_start() -> None:
    # Given the notice already given for W
    kit = _marked()
    _project(kit, [user("x")])
    # When another marker without boot becomes current, then the session restarts
    kit.build.marker(OTHER)
    _project(kit, [user("x")])
    kit.build.user("refused tail: repair will not help")
    kit.start("reload")
    _project(kit, [user("x")])
    # Then the human was told for W, for OTHER, and again for OTHER after session_start
    assert [n.message for n in kit.notices] == [
        NOTICE_MISSING_BOOT.format(window_id=W),
        NOTICE_MISSING_BOOT.format(window_id=OTHER),
        NOTICE_MISSING_BOOT.format(window_id=OTHER),
    ]


def test_r68_the_projection_runs_even_when_disabled() -> None:
    kit = _marked()
    kit.toggle("off")
    kit.take_notices()
    assert _project(kit, [SYSTEM, user("x")]) == (fold_system([SYSTEM]),)
    assert kit.aborts == 1


# -- R69 -----------------------------------------------------------------------------------------


def test_r69_a_root_window_without_root_boot_is_unchanged() -> None:
    kit = Kit.create()
    messages = [SYSTEM, user("a"), boot("pcw:old:root")]
    assert _project(kit, messages) == tuple(messages)


def test_r69_the_last_root_boot_replaces_every_boot_at_the_first_boot_s_index() -> None:
    # Given copied boots (an old root's, an old window's) and two boots for this root
    kit = Kit.create()
    mine_1, mine_2 = boot(ROOT_ID, 3), boot(ROOT_ID, 9)
    messages = [
        SYSTEM,
        boot("pcw:oldoldol:root", 2),
        user("q1"),
        mine_1,
        boot(OTHER, 4),
        {"role": "assistant", "content": [], "timestamp": 5},
        mine_2,
        {"role": "toolResult", "content": "r", "timestamp": 6},
    ]
    # When projected
    projected = _project(kit, messages)
    # Then only the last root boot remains, where the first boot was; other messages stay
    assert projected == (
        SYSTEM,
        mine_2,
        user("q1"),
        {"role": "assistant", "content": [], "timestamp": 5},
        {"role": "toolResult", "content": "r", "timestamp": 6},
    )
