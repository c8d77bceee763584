"""pi-context's provider projection of the current window (lifecycle R67–R69)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from session_builders import SESSION_ID, SessionBuilder

from pictx_fsm.extensions.pi_context.reset_projection import (
    project_marker_window,
    project_reset,
    project_root_window,
)
from pictx_fsm.extensions.pi_context.texts import BOOT_TYPE
from pictx_fsm.extensions.pi_context.windows import Window, WindowIndex, root_window_id
from pictx_fsm.session.projection import Message, fold_system, project_branch

W1 = "pcw:01a22a68:00000001"
ROOT = root_window_id(SESSION_ID)


def system(content: str = "", **fields: Any) -> Message:
    return {"role": "system", "content": content, "timestamp": 1, **fields}


def boot(window_id: str, text: str = "boot") -> Message:
    return {
        "role": "custom",
        "customType": BOOT_TYPE,
        "content": text,
        "details": {"windowId": window_id},
    }


def user(text: str) -> Message:
    return {"role": "user", "content": text, "timestamp": 2}


# -- R67 ----------------------------------------------------------------------------------------


def test_r67_cuts_at_the_first_boot_for_the_marker_and_folds_the_system_prefix() -> None:
    # Given old conversation, an older boot, the window's boot and later messages
    messages = [
        system(sections={"p": "P"}),
        user("old"),
        boot("pcw:01a22a68:00000000"),
        system(sections={"late": "L"}),
        boot(W1, "first"),
        user("new"),
        system(sections={"after": "A"}),
        boot(W1, "second"),
    ]
    # When projected for the window
    result = project_marker_window(messages, W1)
    # Then the head folds everything before the cut, and the rest keeps its order
    assert result.cut_index == 4 and not result.missing_boot
    assert result.messages[0] == fold_system(messages[:4])
    assert result.messages[0]["sections"] == {"p": "P", "late": "L"}
    assert list(result.messages[1:]) == messages[4:]


def test_r67_without_system_prefix_there_is_no_head() -> None:
    messages = [user("old"), boot(W1), user("new")]
    result = project_marker_window(messages, W1)
    assert list(result.messages) == messages[1:]


def test_r67_selects_by_window_id_not_by_position_or_content() -> None:
    messages = [boot("pcw:01a22a68:ffffffff", "looks like a boot"), user("x"), boot(W1)]
    assert project_marker_window(messages, W1).cut_index == 2


# -- R68 ----------------------------------------------------------------------------------------


def test_r68_missing_boot_gives_only_the_folded_system_message() -> None:
    messages = [system(sections={"p": "P"}), user("old"), boot("pcw:01a22a68:00000000")]
    result = project_marker_window(messages, W1)
    assert result.missing_boot and result.cut_index is None
    assert list(result.messages) == [fold_system(messages)]


def test_r68_missing_boot_without_system_message_gives_nothing() -> None:
    result = project_marker_window([user("old")], W1)
    assert result.missing_boot and result.messages == ()


# -- R69 ----------------------------------------------------------------------------------------


def test_r69_root_window_without_root_boot_is_unchanged() -> None:
    messages = [user("a"), boot("pcw:othersess:root"), user("b")]
    result = project_root_window(messages, ROOT)
    assert list(result.messages) == messages and not result.missing_boot


def test_r69_fork_keeps_the_new_root_boot_at_the_first_boot_position() -> None:
    # Given a fork: a copied root boot of the old session, transcript, then the new root boot
    old, new = boot("pcw:0ldsessi:root", "old"), boot(ROOT, "new")
    messages = [system(), old, user("a"), user("b"), new, user("c")]
    # When projected in the root window
    result = project_root_window(messages, ROOT)
    # Then only the new boot remains, where the copied one was; the transcript is kept
    assert list(result.messages) == [system(), new, user("a"), user("b"), user("c")]


def test_r69_the_last_of_several_root_boots_is_active() -> None:
    first, second = boot(ROOT, "1"), boot(ROOT, "2")
    result = project_root_window([first, user("a"), second], ROOT)
    assert list(result.messages) == [second, user("a")]


def test_project_reset_dispatches_on_the_window_kind() -> None:
    marker_window = Window(
        window_id=W1, marker_id="m", marker_timestamp="t", previous=None, depth=1
    )
    root = Window(window_id=ROOT, marker_id=None, marker_timestamp=None, previous=None, depth=0)
    messages = [user("old"), boot(W1)]
    assert project_reset(messages, marker_window).cut_index == 1
    assert list(project_reset(messages, root).messages) == messages


# -- property -----------------------------------------------------------------------------------

STEPS = st.lists(
    st.tuples(
        st.sampled_from(
            [
                "user",
                "assistant",
                "system",
                "marker",
                "boot",
                "old_boot",
                "aside",
                "compaction",
                "edit",
            ]
        ),
        st.integers(min_value=0, max_value=1000),
        st.booleans(),
    ),
    min_size=1,
    max_size=40,
)


def build(steps: list[tuple[str, int, bool]]) -> SessionBuilder:
    builder = SessionBuilder()
    windows = [ROOT]
    ids: list[str] = []
    for serial, (kind, pick, flag) in enumerate(steps):
        current = WindowIndex.of(builder.tree).current_window.window_id
        if kind == "user":
            ids.append(builder.user(f"u{serial}"))
        elif kind == "assistant":
            ids.append(builder.assistant(f"a{serial}"))
        elif kind == "system":
            ids.append(builder.system({f"s{serial}": "x"}))
        elif kind == "marker":
            windows.append(f"pcw:01a22a68:{serial:08x}")
            ids.append(builder.marker(windows[-1]))
        elif kind == "boot":
            ids.append(builder.boot(current))
        elif kind == "old_boot":
            ids.append(builder.boot(windows[pick % len(windows)]))
        elif kind == "aside":
            ids.append(builder.custom_message("ext/aside", f"c{serial}"))
        elif kind == "compaction" and ids:
            ids.append(builder.compaction(first_kept=None if flag else ids[-1 - pick % len(ids)]))
        elif kind == "edit" and ids:
            target = ids[-1 - pick % len(ids)]
            ids.append(builder.edit(target, None if flag else {"content": f"e{serial}"}))
    return builder


@settings(max_examples=200, deadline=None)
@given(STEPS)
def test_property_reset_projection_holds_nothing_from_before_the_marker(steps: Any) -> None:
    # Given any branch with markers, boots, messages, compactions and edits
    builder = build(steps)
    tree = builder.tree
    window = WindowIndex.of(tree).current_window
    branch = tree.branch()
    position = {e.id: i for i, e in enumerate(branch)}
    projection = project_branch(branch)
    source = {id(m): s for m, s in zip(projection.messages, projection.sources, strict=True)}
    # When the current window is projected
    result = project_reset(projection.messages, window)
    # Then, past the folded system head, every message comes from after the current marker
    marker_at = -1 if window.marker_id is None else position[window.marker_id]
    has_head = bool(result.messages) and id(result.messages[0]) not in source
    for message in result.messages[1 if has_head else 0 :]:
        assert position[source[id(message)]] > marker_at
    # And the head, when present, is the fold of what was cut (R67) or of everything (R68)
    if has_head and not window.is_root:
        cut = len(projection.messages) if result.cut_index is None else result.cut_index
        assert result.messages[0] == fold_system(projection.messages[:cut])
