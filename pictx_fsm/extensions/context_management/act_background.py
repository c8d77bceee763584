"""Actions of ``background_notes`` (M38–M43)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from attrs import evolve

from pictx_fsm.extensions.context_management.act_notes import Action, log, op_id
from pictx_fsm.extensions.context_management.effects import Intent, Raise, update
from pictx_fsm.extensions.context_management.facts import CmFacts

__all__ = [
    "BACKGROUND_ACTIONS",
    "block_background_key",
    "commit_background",
    "discard_background",
    "discard_stale_background",
    "record_background_failure",
    "start_background",
]


def start_background(f: CmFacts) -> tuple[Intent, ...]:
    """M38–M40: a try of this retry key is counted at start (Q8)."""
    background = f.state.background.tried(f.background_key)
    return (
        update(gen_owner="background", background=background),
        Raise(machine="checkpoint", event="start"),
    )


def discard_background(f: CmFacts) -> tuple[Intent, ...]:
    """M41: cancel the job; its candidate is discarded, saved notes stay."""
    run = f.state.generation
    if run is None or run.kind != "background":
        return ()
    return (
        Raise(machine="checkpoint", event="abort"),
        log("background_discard", id=op_id(f, run.job), time=f.now, result="cancelled"),
    )


def commit_background(f: CmFacts) -> tuple[Intent, ...]:
    """M40: the last successful background generation and its usage."""
    run = f.generation
    background = evolve(
        f.state.background,
        last_success_at=f.now,
        last_usage=(run.input_tokens, run.output_tokens),
        last_codes=(),
    )
    return (update(background=background), Raise(machine="notes_store", event="notes_committed"))


def discard_stale_background(f: CmFacts) -> tuple[Intent, ...]:
    """M42: the branch, model or note state moved on: nothing is saved."""
    run = f.generation
    return (log("background_discard", id=op_id(f, run.job), time=f.now, result="stale"),)


def _failure(f: CmFacts, *, block: bool) -> tuple[Intent, ...]:
    run = f.generation
    background = f.state.background
    blocked = background.blocked | {run.key} if block else background.blocked
    codes = (*background.last_codes, run.failure or "")[-4:]
    return (
        update(
            background=evolve(background, blocked=blocked, last_failure_at=f.now, last_codes=codes)
        ),
    )


def block_background_key(f: CmFacts) -> tuple[Intent, ...]:
    """M43: a capacity failure blocks the key at once (no cooldown retry)."""
    return _failure(f, block=True)


def record_background_failure(f: CmFacts) -> tuple[Intent, ...]:
    """M43: a transient failure; a retry only at a reply end ≥ 60 s later."""
    return _failure(f, block=False)


BACKGROUND_ACTIONS: Final[Mapping[str, Action]] = {
    "start_background": start_background,
    "discard_background": discard_background,
    "commit_background": commit_background,
    "discard_stale_background": discard_stale_background,
    "block_background_key": block_background_key,
    "record_background_failure": record_background_failure,
}
