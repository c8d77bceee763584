"""What the lifecycle costs a pydantic-ai agent, per run, as the session grows.

    python bench/bench_pydantic_ai.py [--sizes 50,200,400] [--runs 5]

The same scripted replies drive two agents in the same process: a plain ``Agent`` and one
with ``PiContext`` (in-memory session, audit on). Each grows its history with tool batches
to the given number of messages; then a plain prompt-and-answer run is timed on both. The
ratio is the lifecycle's cost relative to pydantic-ai's own agent loop at that size.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage

from pictx_fsm.hosts.pydantic_ai import PiContext, PiSession
from pictx_fsm.hosts.pydantic_ai.scripted import ScriptedModel, text, tools


def _agent(capability: Any) -> tuple[Agent[None, str], ScriptedModel]:
    model = ScriptedModel()
    agent: Agent[None, str] = Agent(model.model, capabilities=capability)

    @agent.tool_plain
    def echo(text: str) -> str:
        """Echo the text back."""
        return text

    return agent, model


def _grow(
    agent: Agent[None, str], model: ScriptedModel, history: list[ModelMessage], size: int
) -> list[ModelMessage]:
    while len(history) < size:
        model.push(tools(("echo", {"text": "x" * 50})), text("y" * 200))
        history = agent.run_sync("prompt " + "z" * 100, message_history=history).all_messages()
    return history


def _timed(
    agent: Agent[None, str], model: ScriptedModel, history: list[ModelMessage], runs: int
) -> float:
    times = []
    for _ in range(runs):
        model.push(text("ok"))
        started = time.perf_counter()
        agent.run_sync("q", message_history=history)
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="50,200,400")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    session = PiSession.create(None, rng=random.Random(0))
    plain, plain_model = _agent([])
    with_lifecycle, model = _agent([PiContext(session, context_window=10_000_000)])
    plain_history: list[ModelMessage] = []
    history: list[ModelMessage] = []
    print("| messages | plain agent (ms/run) | with PiContext (ms/run) | ratio |")
    print("|---:|---:|---:|---:|")
    for size in (int(s) for s in args.sizes.split(",")):
        plain_history = _grow(plain, plain_model, plain_history, size)
        history = _grow(with_lifecycle, model, history, size)
        base = _timed(plain, plain_model, plain_history, args.runs)
        ours = _timed(with_lifecycle, model, history, args.runs)
        print(f"| {size} | {base:.1f} | {ours:.1f} | {ours / base:.1f}× |")


if __name__ == "__main__":
    main()
