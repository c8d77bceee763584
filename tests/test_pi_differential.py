"""Differential tests: the same scripted model replies and the same inputs on the model
session and on the real Pi (through the bridge, see ``real_pi``; every supported version,
the model in that version's host profile) write the same
entries, and the lifecycle takes the same decisions — every hook, every fired transition id,
in order. Each scenario also names transitions it must fire, so that it cannot silently stop
exercising its rule."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
import pytest
from attrs import frozen
from pi_versions import PiInstall
from real_pi import SKIPPED_ENTRIES, decisions, entry_kind, run_print, run_rpc

from pictx_fsm.extensions.pi_context.kit.world import World, WorldConfig
from pictx_fsm.hosts.model import OVERLOADED, Call, Overflow, ProviderError, Response, Text, Tools


def _words(tokens: int) -> str:
    """A reply of about ``tokens`` estimated tokens (chars / 4)."""
    return "word " * (tokens * 4 // 5)


@frozen(kw_only=True)
class Differential:
    """One scenario: the model's script, the faux script with the same replies, the inputs —
    print-mode prompts and ``/commands``, or RPC commands (``prompt``, ``compact``) when
    ``rpc`` is set — and the transitions it must fire."""

    responses: tuple[Response, ...]
    script: tuple[dict[str, Any], ...]
    inputs: tuple[str, ...] = ("please",)
    rpc: tuple[dict[str, Any], ...] = ()
    exercises: frozenset[str] = frozenset()
    exercises_on: Mapping[str, frozenset[str]] = attrs.field(factory=dict)
    """More transitions it must fire on one Pi version only (by version)."""

    def exercised(self, version: str) -> frozenset[str]:
        return self.exercises | self.exercises_on.get(version, frozenset())


def _texts(*texts: str) -> dict[str, Any]:
    """Text replies as both scripts (``responses`` for the model, ``script`` for faux)."""
    return {
        "responses": tuple(Text(text=t) for t in texts),
        "script": tuple({"text": t} for t in texts),
    }


def _long_call(tokens: int, *exercises: str, on_0_87: tuple[str, ...] = ()) -> Differential:
    """A long reply with a tool call, then two short answers (the run may continue)."""
    text, tool = _words(tokens), "get_context_remaining"
    return Differential(
        responses=(Tools(calls=(Call(name=tool),), text=text), Text(text="ok"), Text(text="fresh")),
        script=({"text": text, "tools": [{"name": tool}]}, {"text": "ok"}, {"text": "fresh"}),
        exercises=frozenset(exercises),
        exercises_on={"0.87.1": frozenset(on_0_87)},
    )


AUTOMATIC_RESET = "reset_control:request:none:turn_end:3"
"""The automatic reset at the reserve (R27, R50)."""

DIFFERENTIAL: dict[str, Differential] = {
    "plain": Differential(**_texts("Hello.")),
    "two-wipes": Differential(
        responses=(
            Tools(calls=(Call(name="wipe_memory"), Call(name="wipe_memory"))),
            Text(text="Fresh."),
        ),
        script=({"tools": [{"name": "wipe_memory"}, {"name": "wipe_memory"}]}, {"text": "Fresh."}),
        exercises=frozenset({"reset_control:request:explicit:turn_end:3"}),  # R30
    ),
    "overflow": Differential(
        responses=(Overflow(), Text(text="Recovered.")),
        script=(
            {"error": "prompt is too long: 213462 tokens > 200000 maximum"},
            {"text": "Recovered."},
        ),
        exercises=frozenset({"reset_control:overflow:pending:before_settle:3"}),  # R35
    ),
    "retry": Differential(
        responses=(ProviderError(), Text(text="ok")),
        script=({"error": OVERLOADED}, {"text": "ok"}),
        exercises=frozenset({"reset_control:request:none:turn_end:2"}),  # error turn (R26)
    ),
    # Long replies (window 200k, reserve 16384, reminder margin 24576): the first reply's
    # turn_end stages the low-budget guidance (total 159,040–171,327 tokens) or the final
    # warning (171,328–183,615) for the next turn. The total is the reply plus the prompt,
    # which 0.87's faux model counts twice (input and cacheWrite) and 1.6's once; the prompt
    # is ~700 tokens on the model session and ~5,400 in the real Pi (its own system prompt and
    # the full schemas of the eleven tools, which the model session does not model), so the
    # totals run from reply+695 to reply+10,794 and each reply sits inside its band for all
    # four (~1,000 tokens of margin each side). On 0.87 the second request of each run is
    # then above the reserve and the automatic reset commits (on 1.6 only the longest reply
    # gets there); Pi's own mid-run threshold check then offers a compaction the lifecycle
    # cancels (R62).
    "long-reply": _long_call(190_000, AUTOMATIC_RESET, "toggle:toggle:on:compact:4"),
    "guidance": _long_call(
        159_400, "budget:guidance:guidance_staged:turn_end:2", on_0_87=(AUTOMATIC_RESET,)
    ),
    "warning": _long_call(
        171_700, "budget:warning:warning_staged:turn_end:2", on_0_87=(AUTOMATIC_RESET,)
    ),
    # Commands between prompts (print mode runs them in order)
    "wipe-command": Differential(
        **_texts("one", "two"),
        inputs=("hello", "/wipe-memory", "again"),
        exercises=frozenset({"reset_control:request:none:wipe:3"}),  # /wipe-memory (R59)
    ),
    "toggle": Differential(
        **_texts("one", "two"),
        inputs=(
            "/pi-context off",
            "hello",
            "/wipe-memory",
            "/pi-context",
            "/pi-context on",
            "again",
        ),
        exercises=frozenset(
            {
                "toggle:toggle:on:switch_off:1",  # R60
                "reset_control:request:none:wipe:1",  # /wipe-memory while off (R61)
                "toggle:toggle:off:status:1",
                "toggle:toggle:off:switch_on:1",
                "boot_repair:boot_repair:standby:repair:5",  # switching on ensures a boot (R60)
            }
        ),
    ),
}


def _prompts(*messages: str) -> tuple[dict[str, Any], ...]:
    return tuple({"type": "prompt", "message": message} for message in messages)


def _long_text(tokens: int, *texts: str) -> dict[str, Any]:
    """A first reply of about ``tokens`` tokens, then short ones: enough history above Pi's
    ``keepRecentTokens`` (20,000) for a manual compaction to find something to summarize."""
    return _texts(_words(tokens), *texts)


LONG_HISTORY = _long_text(30_000, "two")

RPC: dict[str, Differential] = {
    # /compact while on: cancelled with the "compaction disabled" notice (R62)
    "compact-on": Differential(
        **LONG_HISTORY,
        rpc=(*_prompts("hello", "again"), {"type": "compact"}),
        exercises=frozenset({"toggle:toggle:on:compact:3"}),
    ),
    # /compact while off on a branch with a reset marker: still cancelled (R61, R62)
    "compact-off-marked": Differential(
        **LONG_HISTORY,
        rpc=(
            *_prompts("hello", "/wipe-memory", "again", "/pi-context off"),
            {"type": "compact"},
        ),
        exercises=frozenset({"toggle:toggle:off:compact:3"}),
    ),
    # /compact while off on an unmarked branch: Pi's own compaction goes ahead. On the real
    # Pi the faux model writes the summary — two requests, since the cut splits the last
    # turn (history + turn prefix) — the model session writes a deterministic one.
    "compact-off-unmarked": Differential(
        responses=LONG_HISTORY["responses"],
        script=(*LONG_HISTORY["script"], *[{"text": "## Goal\nsummary"}] * 2),
        rpc=(*_prompts("/pi-context off", "hello", "again"), {"type": "compact"}),
        exercises=frozenset({"toggle:toggle:off:compact:5"}),
    ),
    # /compact on a small branch: Pi finds nothing to compact before any hook
    "compact-small": Differential(
        **_texts("one", "two"),
        rpc=(*_prompts("hello", "again"), {"type": "compact"}),
    ),
}


def _input(world: World, text: str) -> None:
    """A print-mode input: ``/name args`` runs a command, else a prompt."""
    if text.startswith("/"):
        name, _, args = text[1:].partition(" ")
        world.session.command(name, args)
    else:
        world.session.prompt(text)
    world.session.run_until_idle()


def _rpc(world: World, command: dict[str, Any]) -> None:
    if command["type"] == "compact":
        world.session.compact()
    else:
        _input(world, command["message"])


def _model_run(scenario: Differential, host: str) -> World:
    """The scenario on the model session in the Pi version's host profile, with the faux
    provider's usage arithmetic (what the real Pi reports) and Pi's default thresholds."""
    config = WorldConfig(
        host=host,
        context_window=200_000,
        max_tokens=16_384,
        reserve_tokens=16_384,
        reminder_margin=24_576,
        usage="faux",
    )
    world = World(config)
    world.session.provider.push(*scenario.responses)
    for command in scenario.rpc:
        _rpc(world, command)
    for text in () if scenario.rpc else scenario.inputs:
        _input(world, text)
    world.session.dispose()  # as Pi does when print mode ends or RPC's stdin closes
    return world


@pytest.mark.parametrize("name", sorted({**DIFFERENTIAL, **RPC}))
def test_the_model_session_drives_the_lifecycle_exactly_as_the_real_pi_does(
    name: str, tmp_path: Path, pi_install: PiInstall
) -> None:
    # Given the same scripted model replies and the same inputs on both hosts
    scenario = {**DIFFERENTIAL, **RPC}[name]
    # When they run on the model session and on the real Pi (each supported version)
    world = _model_run(scenario, pi_install.host_profile)
    if scenario.rpc:
        real = run_rpc(tmp_path, scenario.script, scenario.rpc)
    else:
        real = run_print(tmp_path, scenario.script, *scenario.inputs)
    # Then both write the same entries and the lifecycle takes the same decisions — every
    # hook, every fired transition, in the same order
    kinds = [entry_kind(e) for e in world.session.entries if e.type not in SKIPPED_ENTRIES]
    assert kinds == real.kinds
    model_records = [r for audit in world.audits for r in audit.records]
    assert decisions(model_records) == real.decisions()
    # And the scenario exercised its rule
    assert scenario.exercised(pi_install.version) <= real.fired()
