"""The model host's ``ctx``: the one handed out last is handed out again exactly when a fresh
one would equal it (pi-host §3; :meth:`HostState.host_context` compares before building)."""

from __future__ import annotations

import random
from typing import Any

from attrs import define
from hypothesis import given
from hypothesis import strategies as st

from pictx_fsm.host.events import ContextUsage, HostContext, ModelInfo
from pictx_fsm.hosts.model.queues import Queued, Queues
from pictx_fsm.hosts.model.settings import HostSettings
from pictx_fsm.hosts.model.state import HostState, RunState


@define
class _Store:
    """The one thing ``host_context`` asks the store: its context tokens."""

    tokens: int | float | None = None

    def context_tokens(self) -> int | float | None:
        return self.tokens


_MODELS = (
    ModelInfo(provider="faux", id="faux-1", context_window=32_000),
    ModelInfo(provider="faux", id="faux-2"),
)
_FACTS = st.fixed_dictionaries(
    {
        "tokens": st.sampled_from((None, 0, 7, 7.0, 1_000)),
        "model": st.sampled_from((0, 1)),
        "run": st.sampled_from((None, "live", "aborted", "ended")),
        "pending": st.booleans(),
        "cwd": st.sampled_from(("/workspace", "/elsewhere")),
        "trusted": st.booleans(),
    }
)


def _state() -> HostState:
    return HostState(
        settings=HostSettings(),
        model=_MODELS[0],
        provider=None,  # type: ignore[arg-type]
        extensions=[],
        store=_Store(),  # type: ignore[arg-type]
        ids=random.Random(0),
        clock=lambda: 0,
        counter=None,  # type: ignore[arg-type]
    )


def _set(host: HostState, facts: dict[str, Any]) -> None:
    host.store.tokens = facts["tokens"]  # type: ignore[attr-defined]
    host.model = _MODELS[facts["model"]]
    run = facts["run"]
    host.run = None if run is None else RunState(signal_live=run != "ended")
    if host.run is not None:
        host.run.aborted = run == "aborted"
    host.queues = Queues()
    if facts["pending"]:
        host.queues.steering.append(Queued(kind="steer", message={"role": "user"}))
    host.settings = HostSettings(cwd=facts["cwd"], project_trusted=facts["trusted"])


def _fresh(host: HostState) -> HostContext:
    """What the ``ctx`` is, built from scratch."""
    return HostContext(
        usage=ContextUsage(
            tokens=host.store.context_tokens(), context_window=host.model.context_window
        ),
        model=host.model,
        signal_aborted=host.signal_aborted,
        has_pending_messages=host.queues.user_pending() > 0,
        cwd=host.settings.cwd,
        project_trusted=host.settings.project_trusted,
        pi_version=host.settings.profile.pi_version,
    )


@given(st.lists(_FACTS, min_size=1, max_size=8))
def test_the_last_ctx_is_handed_out_again_exactly_when_a_fresh_one_equals_it(
    sequence: list[dict[str, Any]],
) -> None:
    # Given a host whose facts change hook after hook (tokens as int or float among them)
    host = _state()
    previous: HostContext | None = None
    for facts in sequence:
        _set(host, facts)
        # When the host hands out its ctx
        context = host.host_context()
        # Then it equals a fresh one, and it is the previous object exactly when that one
        # equals the fresh one with tokens of the same type (7 == 7.0, a record spells them apart)
        fresh = _fresh(host)
        assert context == fresh
        tokens_type = type(None if fresh.usage is None else fresh.usage.tokens)
        same = (
            previous is not None
            and previous == fresh
            and previous.usage is not None
            and type(previous.usage.tokens) is tokens_type
        )
        assert (context is previous) == same
        assert type(context.usage.tokens if context.usage else None) is tokens_type
        previous = context
