"""The model session's requests carry the session layer's transcripts and its ``ctx`` is
handed out again while unchanged (issue 11: a hook costs what changed, not the session)."""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from pictx_fsm.host.events import Context, ContextWithSystem, HookEvent, HostContext
from pictx_fsm.host.extension import HOST_HOOKS, Reply
from pictx_fsm.hosts.model import BaseExtension, Call, ModelSession, ScriptedProvider, Text, Tools
from pictx_fsm.session.projection import context_messages
from pictx_fsm.session.transcript import Transcript


class Witness(BaseExtension):
    """Notes, at each hook, what the session's projection of the leaf was then."""

    hooks = HOST_HOOKS
    name = "witness"

    def __init__(self) -> None:
        self.session: ModelSession | None = None
        self.seen: list[tuple[HookEvent, HostContext, list[Any]]] = []

    def handle(self, event: HookEvent, ctx: HostContext) -> Reply:
        assert self.session is not None
        self.seen.append((event, ctx, context_messages(self.session.tree.branch())))
        return None


REPLIES = st.lists(
    st.one_of(
        st.builds(Text, text=st.sampled_from(("done", "ok then"))),
        st.builds(
            lambda n: Tools(calls=[Call(name="echo", arguments={"text": f"t{n}"})]),
            st.integers(0, 9),
        ),
    ),
    min_size=1,
    max_size=6,
)


def _witnessed(replies: list[Any], prompts: int) -> Witness:
    witness = Witness()
    session = ModelSession(
        [witness], provider=ScriptedProvider([*replies, *[Text(text="end")] * prompts])
    )
    witness.session = session
    for index in range(prompts):
        session.prompt(f"prompt {index}")
        session.run_until_idle()
    return witness


@settings(max_examples=25, deadline=None)
@given(replies=REPLIES, prompts=st.integers(1, 3))
def test_a_request_carries_transcripts_equal_to_the_projection_of_the_leaf(
    replies: list[Any], prompts: int
) -> None:
    # Given a session answering prompts with text and tool batches
    witness = _witnessed(replies, prompts)
    requests = [(e, p) for e, _, p in witness.seen if isinstance(e, Context | ContextWithSystem)]
    assert requests
    for event, projection in requests:
        # Then every context hook carries a transcript (a tuple that knows its digests) with
        # exactly Pi's projection of the leaf: without system messages for ``context``
        assert isinstance(event.messages, Transcript)
        if isinstance(event, Context):
            expected = [m for m in projection if m.get("role") != "system"]
        else:
            expected = projection
        assert list(event.messages) == expected


@settings(max_examples=25, deadline=None)
@given(replies=REPLIES)
def test_ctx_is_handed_out_again_exactly_while_its_facts_are_unchanged(replies: list[Any]) -> None:
    # Given the ctx of every hook of a run
    contexts = [ctx for _, ctx, _ in _witnessed(replies, 1).seen]
    pairs = list(itertools.pairwise(contexts))
    # Then consecutive hooks share one object when the facts are equal, and only then
    assert all((before is after) == (before == after) for before, after in pairs)
    assert any(before is after for before, after in pairs)
