"""Divergences planted in the model session, to show the differential catches them: each is
the kind of slip a model of Pi can make, and a batch against the real Pi must fail on it with a
shrunk run of a few actions (``pictx-fsm differential --plant NAME``; the tests plant each).

* ``late-follow-up``: the first follow-up the loop asks for is held back once, so it is
  delivered a turn (or a run) late;
* ``dropped-steer``: a steer queued while a tool batch runs is lost;
* ``boot-wrong-parent``: a custom message committed right after a custom entry at a boundary
  (pi-context's boot after its marker) is attached to the marker's parent instead.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from attrs import frozen

from pictx_fsm.errors import UsageError
from pictx_fsm.hosts.model import ModelSession
from pictx_fsm.hosts.model.queues import Queued, Queues
from pictx_fsm.session.entries import CustomEntry

__all__ = ["DIVERGENCES", "Divergence", "divergence_named", "in_every_store"]

TOOL_STEPS = frozenset(
    {"tool_execution_start", "tool_call", "tool_result", "tool_execution_end", "tools_running"}
)
"""The host steps of a running tool batch."""


@frozen(kw_only=True)
class Divergence:
    name: str
    description: str
    plant: Callable[[ModelSession], None]


class _LateQueues(Queues):
    """Holds back the first follow-up it would hand out, once."""

    held_back = False

    def take_follow_up(self) -> list[Queued]:
        if self.follow_up and not self.held_back:
            self.held_back = True
            return []
        return super().take_follow_up()


def _late_follow_up(session: ModelSession) -> None:
    session._host.queues = _LateQueues()


def _dropped_steer(session: ModelSession) -> None:
    steer = session.steer

    def dropping(text: str) -> None:
        step = session.last_step
        if step is not None and step.name in TOOL_STEPS and not session.is_idle:
            return
        steer(text)

    session.steer = dropping  # type: ignore[method-assign]


def _boot_wrong_parent(session: ModelSession) -> None:
    def plant_store() -> None:
        store = session._host.store
        append = store.custom_message

        def misplaced(*args: Any, **kwargs: Any) -> Any:
            leaf = store.tree.node(store.leaf_id).entry if store.leaf_id else None
            if isinstance(leaf, CustomEntry):
                store.navigate(leaf.parent_id)
            return append(*args, **kwargs)

        store.custom_message = misplaced  # type: ignore[method-assign]

    in_every_store(session, plant_store)


def in_every_store(session: ModelSession, plant_store: Callable[[], None]) -> None:
    """``plant_store`` run on the session's store now and on every store it moves to (a
    fork, a session switch)."""

    def replacing(operation: Callable[..., Any]) -> Callable[..., Any]:
        def replaced(*args: Any, **kwargs: Any) -> Any:
            result = operation(*args, **kwargs)
            plant_store()
            return result

        return replaced

    plant_store()
    session.fork = replacing(session.fork)  # type: ignore[method-assign]
    session.switch_session = replacing(session.switch_session)  # type: ignore[method-assign]


DIVERGENCES: Mapping[str, Divergence] = {
    d.name: d
    for d in (
        Divergence(
            name="late-follow-up",
            description="a follow-up is delivered one turn late",
            plant=_late_follow_up,
        ),
        Divergence(
            name="dropped-steer",
            description="a steer queued during a tool batch is dropped",
            plant=_dropped_steer,
        ),
        Divergence(
            name="boot-wrong-parent",
            description="a boot committed after its marker is written at the marker's parent",
            plant=_boot_wrong_parent,
        ),
    )
}


def divergence_named(name: str) -> Divergence:
    try:
        return DIVERGENCES[name]
    except KeyError:
        known = ", ".join(DIVERGENCES)
        raise UsageError(f"unknown divergence {name!r}; known: {known}") from None
