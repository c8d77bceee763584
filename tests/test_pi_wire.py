"""Message lists on the wire: the elided request and the sliced reply give the provider
exactly what the full list would (R67–R69, and the warning the ``context`` hook adds)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from generated_sessions import STEPS, build_session
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from node_batch import NodeBatch, json_normal

from pictx_fsm.extensions.pi_context.reset_projection import project_reset
from pictx_fsm.extensions.pi_context.windows import WindowIndex
from pictx_fsm.hosts.pi.wire import (
    ELIDED_ROLE,
    SAME,
    WireError,
    encode_messages,
    expand_messages,
)
from pictx_fsm.session.projection import context_messages


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=STEPS)
def test_r67_r69_the_elided_round_trip_sends_what_the_full_list_would(
    node: NodeBatch, steps: list[tuple[Any, ...]]
) -> None:
    # Given a provider request of a generated session
    tree = build_session(steps)
    messages = json_normal(context_messages(tree.branch()))
    # When the extension elides it, the server projects the elided list and answers with
    # slices, and the extension rebuilds the answer from its own list
    elided = node.ask({"op": "elide", "messages": messages})
    expanded = expand_messages(elided)
    projected = project_reset(expanded.messages, WindowIndex.of(tree).current_window)
    slices = encode_messages(projected.messages, expanded)
    rebuilt = node.ask({"op": "rebuild", "slices": slices, "messages": messages})
    # Then the provider gets exactly the projection of the full list
    assert rebuilt["messages"] == json_normal(
        list(project_reset(messages, WindowIndex.of(tree).current_window).messages)
    )
    # And the request carried only system messages and boots, never other text
    assert all(m["role"] in ("system", "custom") for _, m in elided["kept"])
    assert len(json.dumps(slices)) <= len(json.dumps(projected.messages)) + 16


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=STEPS, data=st.data())
def test_r67_r69_an_unchanged_system_prompt_or_boot_travels_once_and_means_the_same(
    node: NodeBatch, steps: list[tuple[Any, ...]], data: st.DataObject
) -> None:
    # Given two provider requests of one generated session: an earlier point of its branch
    # and its leaf (they share the system prompt and, within a window, the boot)
    tree = build_session(steps)
    branch = tree.branch()
    cut = data.draw(st.integers(min_value=0, max_value=len(branch)))
    first = json_normal(context_messages(branch[:cut]))
    second = json_normal(context_messages(branch))
    # When the extension elides the second against the first, and the server expands both
    wire = node.ask({"op": "elide_twice", "first": first, "second": second})
    held = expand_messages(wire["first"]).kept
    expanded = expand_messages(wire["second"], previous=held)
    # Then the server sees exactly what the plain elided list gives, its kept messages copies
    plain = expand_messages(node.ask({"op": "elide", "messages": second}))
    assert json_normal(expanded.messages) == json_normal(plain.messages)
    assert expanded.spans == plain.spans
    assert not {id(m) for m in expanded.kept} & {id(m) for m in held}
    # And each kept message the first request already carried went as a reference only
    before = {json.dumps(m, sort_keys=True) for m in held}
    for (_, message), full in zip(wire["second"]["kept"], plain.kept, strict=True):
        assert (SAME in message) is (json.dumps(full, sort_keys=True) in before)


def test_only_placeholders_stand_for_what_was_not_sent() -> None:
    # Given 5 messages of which the host sent only the system message at index 1
    expanded = expand_messages({"count": 5, "kept": [[1, {"role": "system", "content": "s"}]]})
    # Then the runtime sees a placeholder, the system message and a placeholder for 3
    assert [m["role"] for m in expanded.messages] == [ELIDED_ROLE, "system", ELIDED_ROLE]
    assert expanded.spans == ((0, 1), (1, 2), (2, 5))
    # And an answer keeping everything is one slice; a copied placeholder is refused
    assert encode_messages(expanded.messages, expanded) == [[0, 5]]
    with pytest.raises(WireError, match="placeholder"):
        encode_messages([dict(expanded.messages[0])], expanded)


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ({"count": -1}, "non-negative"),
        ({"count": 2, "kept": [[2, {}]]}, "out of range"),
        ({"count": 3, "kept": [[1, {}], [0, {}]]}, "out of order"),
        ({"count": 1, "kept": [[0, "text"]]}, "message objects"),
        ({"count": 1, "kept": [[0, {SAME: 0}]]}, "kept message 0, which is not held"),
        ("messages", "a list or"),
    ],
)
def test_a_malformed_elided_list_is_a_typed_error_naming_the_field(
    value: Any, problem: str
) -> None:
    with pytest.raises(WireError, match=problem):
        expand_messages(value)


def test_a_slice_outside_the_host_list_is_refused_by_the_extension(node: NodeBatch) -> None:
    answer = node.ask({"op": "rebuild", "slices": [[0, 3]], "messages": [{"role": "user"}]})
    assert "outside the 1 messages" in answer["error"]
