"""The target shape: one frozen, hashable state and a pure step (design.md)."""

from __future__ import annotations

from cm_kit import C, P, S, cm, fill, play, shared, state, tool, world

from pictx_fsm.extensions.context_management import events as ev
from pictx_fsm.extensions.context_management import step


def test_the_state_is_one_hashable_value_after_a_long_session() -> None:
    # Given a session that ran every machine (notes, checkpoint, background, handoff)
    w = play(world(), P(chars=200), S, *tool(tool="notes_update"), *fill(2))
    play(w, P(chars=20_000), S, shared.Compact(), P(chars=200), S, C(args="handoff"), cm.Drain())
    # Then every instance's state hashes and equals itself
    for runtime in w.runtimes:
        assert hash(runtime.state) == hash(runtime.state) and runtime.state == runtime.state


def test_step_is_pure_the_same_inputs_give_the_same_outputs() -> None:
    # Given a recorded step (its state before, its event and ctx, the tree it read)
    w = play(world(), P(chars=200), S, *tool(tool="notes_update"), P(chars=12_000), S)
    record = next(r for r in reversed(w.journal.steps) if isinstance(r.event, ev.ReplyEnded))
    services = ev.CmServices(tree=w.session.tree)
    # When it is taken twice more / Then both results are equal and the input is untouched
    before = record.before
    once = step(before, record.event, record.ctx, services)
    twice = step(before, record.event, record.ctx, services)
    assert once == twice and before == record.before
    assert state(w) is w.runtimes[-1].state


def test_api_step_is_the_function_even_after_the_runtime_loaded() -> None:
    # Given the runtime imported (it loads the module that defines the step)
    import pictx_fsm.extensions.context_management.runtime  # noqa: F401

    # When the public name is imported from the package
    from pictx_fsm.extensions.context_management import initial_state
    from pictx_fsm.extensions.context_management import step as public_step

    # Then it is the step function itself, not the module that defines it
    assert callable(public_step) and public_step.__name__ == "step"
    assert callable(initial_state) and initial_state.__name__ == "initial_state"
