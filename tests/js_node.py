"""Node as the judge of pictx_fsm's JavaScript rules: one process (``fixtures/js/semantics.mjs``)
answers batches of generated inputs, so a property costs a few seconds, not a process per
example. Pi's Node 22 where installed (the host these rules must match), else ``node`` on
PATH; without either the tests skip, saying so."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

from node_batch import NodeBatch

SEMANTICS = Path(__file__).resolve().parent / "fixtures" / "js" / "semantics.mjs"


def bits(number: float) -> str:
    """A double's IEEE 754 bits in hex: how -0, NaN and ±Infinity reach Node."""
    return struct.pack(">d", number).hex()


class JsNode(NodeBatch):
    def __init__(self) -> None:
        super().__init__(SEMANTICS)

    def call(self, fn: str, args: list[list[Any]], *, tz: str = "UTC") -> list[Any]:
        """``fn`` on each argument list; a thrown error comes back as ``JsThrew``."""
        answers = self.ask({"op": "call", "fn": fn, "args": args, "tz": tz})
        return [JsThrew(a["error"]) if "error" in a else a["value"] for a in answers]

    def value(self, fn: str, *args: Any, tz: str = "UTC") -> Any:
        (answer,) = self.call(fn, [list(args)], tz=tz)
        return answer

    def regex(self, cases: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return list(self.ask({"op": "regex", "cases": cases}))


class JsThrew(str):
    """What a JavaScript function threw, as ``String(error)``."""
