"""``session.slots``: the readers' hot path makes frozen values slot by slot, and those values
are the ones ``__init__`` makes (equal, frozen); a class a maker would build wrongly, or a
maker that names other fields than its class has, is refused at import."""

from __future__ import annotations

from typing import Any

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pictx_fsm.audit.log import RecordLine, _new_record_line
from pictx_fsm.extensions.pi_context.conformance.boundaries import Pending, _new_pending
from pictx_fsm.host.effects import HookResult
from pictx_fsm.session.entries import AgentMessage, MessageEntry
from pictx_fsm.session.skeleton import _new_agent_message, _new_message_entry
from pictx_fsm.session.slots import slot_setters
from pictx_fsm.session.tree import TreeNode, _new_node


@given(
    entry_id=st.text(),
    parent=st.none() | st.text(),
    timestamp=st.text(),
    role=st.text(),
)
def test_property_a_made_value_is_the_value_init_makes(
    entry_id: str, parent: str | None, timestamp: str, role: str
) -> None:
    # Given any field values of a message entry
    message = AgentMessage(role=role, raw={"role": role})
    # When it is made slot by slot and by its __init__
    made = _new_message_entry(entry_id, parent, timestamp, {}, message)
    built = MessageEntry(
        id=entry_id, parent_id=parent, timestamp=timestamp, extra={}, message=message
    )
    # Then both are the same value, and the made one is as frozen
    assert made == built and type(made) is MessageEntry
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        made.id = "other"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("made", "built"),
    [
        (
            lambda: _new_agent_message("user", {"role": "user"}),
            lambda: AgentMessage(role="user", raw={"role": "user"}),
        ),
        (lambda: _new_record_line("{}", "ab"), lambda: RecordLine(line="{}", hash="ab")),
        (
            lambda: _new_pending(None, frozenset({"c1"})),
            lambda: Pending(call=None, ids=frozenset({"c1"})),
        ),
    ],
    ids=["AgentMessage", "RecordLine", "Pending"],
)
def test_every_maker_makes_the_value_init_makes(made: Any, built: Any) -> None:
    # Given a maker and its class's __init__ on the same fields
    # When both make the value / Then they are equal, of the same class, and frozen
    value = made()
    assert value == built() and type(value) is type(built())
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        setattr(value, attrs.fields(type(value))[0].name, None)


def test_a_tree_node_made_slot_by_slot_is_the_node_init_makes() -> None:
    # Given a message entry and every field of its node
    entry = MessageEntry(
        id="e1", parent_id=None, timestamp="t", message=AgentMessage(role="user", raw={})
    )
    fields = ("e1", None, 0, 3)
    names = [field.name for field in attrs.fields(TreeNode)][1:]
    # When it is made slot by slot and by __init__ / Then both are the same node
    assert _new_node(entry, *fields) == TreeNode(
        entry=entry, **dict(zip(names, fields, strict=True))
    )


def test_a_class_with_converters_is_refused() -> None:
    # Given a frozen attrs class whose fields convert their values (HookResult's tuples)
    # When setters are asked for it, Then it refuses: a maker would skip the conversion
    names = tuple(field.name for field in attrs.fields(HookResult))
    with pytest.raises(TypeError, match="not a plain slotted attrs class"):
        slot_setters(HookResult, *names)


def test_a_maker_naming_other_fields_than_its_class_is_refused() -> None:
    # Given a plain slotted class and its fields named in another order, or one missing
    # When setters are asked for them / Then each is refused, naming the class's fields
    with pytest.raises(TypeError, match=r"its fields are \('role', 'raw'\)"):
        slot_setters(AgentMessage, "raw", "role")
    with pytest.raises(TypeError, match="its fields are"):
        slot_setters(AgentMessage, "role")
