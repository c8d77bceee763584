"""The JSON encoders behind the audit records and the session writer: speed and exactness.

    python bench/bench_json.py [--examples 30] [--seed 1] [--rounds 5]

Every encoder pictx_fsm builds (``pictx_fsm.fastjson.dumper``: the canonical audit encoding,
the UTF-8 digest encoding, Pi's compact ``JSON.stringify`` form, ...) is a
``json.JSONEncoder(...).encode`` built once. This script records every value those encoders
are given during a short seeded ``verify`` exploration (scenarios and generated runs), then
times, per encoder setting, on exactly those values:

- ``json.dumps(value, **settings)``: the plain call (a new encoder per call);
- ``JSONEncoder(**settings).encode`` built once: what pictx_fsm uses;
- orjson and msgspec (where installed), non-ASCII escaped afterwards when the setting asks for
  ASCII, with the same ``default``: the fast encoders issue 23 suggested.

and counts how many of their texts are byte for byte ``json.dumps``'s, on the recorded values
and on a few edge values (a float written with an exponent, a non-finite float, an integer
beyond 64 bits, a ``str`` subclass, a lone surrogate). The canonical audit encoding must stay
``json.dumps``'s byte for byte (audit logs on disk must still verify). Figures:
``docs/decisions.md``.
"""

from __future__ import annotations

import argparse
import json
import re
import time
from collections import defaultdict
from collections.abc import Callable
from enum import StrEnum
from typing import Any

Settings = tuple[tuple[str, Any], ...]


class _Kind(StrEnum):
    A = "a"


EDGE_VALUES: tuple[Any, ...] = (
    {"ratio": 1e16},
    {"small": 1e-05},
    {"latest": float("-inf")},
    {"big": 2**70},
    {"kind": _Kind.A},
    {"text": "lone \ud800 surrogate"},
    {"é": ["ünïcode", "😀"]},
)


def record_values(examples: int, seed: int) -> dict[Settings, list[Any]]:
    """The values every built encoder was given during a seeded exploration, by setting."""
    seen: dict[Settings, list[Any]] = defaultdict(list)
    original = json.JSONEncoder.encode

    def recording(self: json.JSONEncoder, value: Any) -> str:
        if not isinstance(value, str):
            seen[_settings(self)].append(value)
        return original(self, value)

    json.JSONEncoder.encode = recording  # type: ignore[method-assign]
    try:
        from bench_verify import PROFILES, _pi_context_exploration

        explore, options = _pi_context_exploration(
            examples=examples, seed=seed, time_budget=600, profiles=PROFILES
        )
        explore(options)
    finally:
        json.JSONEncoder.encode = original  # type: ignore[method-assign]
    return dict(seen)


def _settings(encoder: json.JSONEncoder) -> Settings:
    return (
        ("sort_keys", encoder.sort_keys),
        ("separators", (encoder.item_separator, encoder.key_separator)),
        ("ensure_ascii", encoder.ensure_ascii),
        ("allow_nan", encoder.allow_nan),
        ("default", getattr(encoder.default, "__func__", encoder.default)),
        ("check_circular", encoder.check_circular),
    )


_NON_ASCII = re.compile(r"[^\x00-\x7f]")


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 | (code >> 10):04x}\\u{0xDC00 | (code & 0x3FF):04x}"


def candidates(settings: Settings) -> dict[str, Callable[[Any], str]]:
    given = dict(settings)
    if given["default"] is json.JSONEncoder.default:
        given["default"] = None
    found: dict[str, Callable[[Any], str]] = {
        "json.dumps per call": lambda value: json.dumps(value, **given),
        "JSONEncoder.encode built once (used)": json.JSONEncoder(**given).encode,
    }
    if given["separators"] != (",", ":"):
        return found  # orjson and msgspec write compact JSON only
    ascii_only = given["ensure_ascii"]

    def finish(raw: bytes) -> str:
        text = raw.decode("utf-8")
        return _NON_ASCII.sub(_escaped, text) if ascii_only and not text.isascii() else text

    try:
        import orjson

        option = orjson.OPT_SORT_KEYS if given["sort_keys"] else 0
        option |= orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME

        def with_orjson(value: Any) -> str:
            return finish(orjson.dumps(value, default=given["default"], option=option))

        found["orjson"] = with_orjson
    except ImportError:
        pass
    try:
        import msgspec

        order = "sorted" if given["sort_keys"] else None
        encoder = msgspec.json.Encoder(enc_hook=given["default"], order=order)

        def with_msgspec(value: Any) -> str:
            return finish(encoder.encode(value))

        found["msgspec"] = with_msgspec
    except ImportError:
        pass
    return found


def _outcome(encode: Callable[[Any], str], value: Any) -> str | None:
    try:
        return encode(value)
    except Exception:
        return None


def measure(values: list[Any], settings: Settings, rounds: int) -> list[tuple[str, float, str]]:
    plain = candidates(settings)["json.dumps per call"]
    reference = [plain(value) for value in values]
    edges = [_outcome(plain, value) for value in EDGE_VALUES]
    rows = []
    for name, encode in candidates(settings).items():
        same = sum(_outcome(encode, v) == r for v, r in zip(values, reference, strict=True))
        edge_same = sum(_outcome(encode, v) == r for v, r in zip(EDGE_VALUES, edges, strict=True))
        best = float("inf")
        for _ in range(rounds):
            started = time.process_time()
            for value in values:
                _outcome(encode, value)
            best = min(best, time.process_time() - started)
        exact = f"{same:,}/{len(values):,}; edge values {edge_same}/{len(EDGE_VALUES)}"
        rows.append((name, best / len(values) * 1e9, exact))
    return rows


def _describe(settings: Settings) -> str:
    given = dict(settings)
    if given["default"] is json.JSONEncoder.default:
        given["default"] = None
    shown = [f"sort_keys={given['sort_keys']}", f"separators={given['separators']!r}"]
    shown += [f"{key}={given[key]}" for key in ("ensure_ascii", "allow_nan") if not given[key]]
    if given["default"] is not None:
        shown.append(f"default={getattr(given['default'], '__qualname__', given['default'])}")
    return ", ".join(shown)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=30)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    recorded = record_values(args.examples, args.seed)
    print(f"`python bench/bench_json.py --examples {args.examples} --seed {args.seed}`\n")
    print("| encoder setting | values | encoder | CPU ns per value | `json.dumps`'s text |")
    print("|---|---:|---|---:|---|")
    for settings, values in sorted(recorded.items(), key=lambda item: -len(item[1])):
        for name, nanoseconds, exact in measure(values, settings, args.rounds):
            described = _describe(settings)
            print(f"| {described} | {len(values):,} | {name} | {nanoseconds:,.0f} | {exact} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
