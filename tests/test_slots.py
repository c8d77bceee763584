"""``session.slots.maker``: the readers' hot path makes frozen values slot by slot, and those
values are the ones ``__init__`` makes (equal, frozen); a class it would build wrongly is
refused."""

from __future__ import annotations

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pictx_fsm.host.effects import HookResult
from pictx_fsm.session.entries import AgentMessage, MessageEntry
from pictx_fsm.session.slots import maker

_new_message_entry = maker(MessageEntry)


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


def test_a_class_with_converters_is_refused() -> None:
    # Given a frozen attrs class whose fields convert their values (HookResult's tuples)
    # When a maker is asked for it, Then it refuses: it would skip the conversion
    with pytest.raises(TypeError, match="not a plain slotted attrs class"):
        maker(HookResult)
