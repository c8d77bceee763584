"""orjson where it is installed (the ``fast`` extra), the standard decoder otherwise.

orjson decodes 2–3× faster and reads what the standard decoder reads, except that it
refuses lone surrogates, a double's overflow and more than 1024 levels, and reads an integer
beyond 64 bits as a float where the standard decoder keeps an int. :func:`loads` hands the
refused texts, and every text with a run of 19 digits or more where a number could be (not
inside a string, as a hash's digits are), to the standard decoder: every text decodes to the
same value either way.
``PICTX_FSM_NO_ORJSON=1`` turns orjson off (benchmarks, tests of the standard path).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from typing import Any, Final

__all__ = ["FAST_LOADS", "ascii_string", "dumper", "loads", "utf8_string"]


def _installed() -> Callable[[str | bytes], Any] | None:
    if os.environ.get("PICTX_FSM_NO_ORJSON"):
        return None
    try:
        import orjson
    except ImportError:
        return None
    decode: Callable[[str | bytes], Any] = orjson.loads
    return decode


ascii_string: Final[Callable[[str], str]] = json.JSONEncoder().encode
"""A string's JSON literal, non-ASCII escaped: ``json.dumps(text)`` (the built encoder's
``encode`` of a ``str`` is one C call)."""
utf8_string: Final[Callable[[str], str]] = json.JSONEncoder(ensure_ascii=False).encode
"""A string's JSON literal, non-ASCII kept: ``json.dumps(text, ensure_ascii=False)``."""

FAST_LOADS: Final = _installed()
"""orjson's decoder, or ``None`` when it is not installed (or turned off)."""


_DIGITS_AS_ZERO: Final = bytes.maketrans(b"123456789", b"000000000")
_LONG_RUN: Final = b"0" * 19
_NOT_ZERO: Final = re.compile(rb"[^0]")
_MAY_PRECEDE_A_NUMBER: Final = frozenset(b":,[ \t\r\n-+.eE")
"""Bytes a number's digits may follow in JSON (its start, a sign, a point, an exponent); a
digit that follows anything else is inside a string."""


def loads(text: str | bytes) -> Any:
    """``json.loads(text)``, by orjson where it reads the same."""
    if FAST_LOADS is not None:
        data = text.encode() if isinstance(text, str) else text
        if not _may_hold_a_long_integer(data):
            try:
                return FAST_LOADS(data)
            except ValueError:
                pass
    return json.loads(text)


def _may_hold_a_long_integer(data: bytes) -> bool:
    """Whether a run of 19 digits or more may be a number, found by bytes (C scans): a run of
    zeros once digits are zeros, at the start or after a byte a number may follow."""
    digits = data.translate(_DIGITS_AS_ZERO)
    at = digits.find(_LONG_RUN)
    while at != -1:
        if at == 0 or data[at - 1] in _MAY_PRECEDE_A_NUMBER:
            return True
        end = _NOT_ZERO.search(digits, at)  # past this run (found where it starts)
        if end is None:
            return False
        at = digits.find(_LONG_RUN, end.start())
    return False


def dumper(
    *,
    sort_keys: bool = False,
    separators: tuple[str, str] = (", ", ": "),
    ensure_ascii: bool = True,
    allow_nan: bool = True,
    default: Callable[[Any], Any] | None = None,
    check_circular: bool = True,
) -> Callable[[Any], str]:
    """``json.dumps`` with these settings (no indent), its encoder built once.

    ``json.dumps`` with any argument of its own builds a new ``JSONEncoder`` on every call,
    which costs more than encoding a small value; the encoder's ``encode``, built once, writes
    the same text and raises the same errors. orjson and msgspec write other text for some
    values (a float's exponent, a non-finite float, a subclass of ``str`` or ``int``), so
    neither can write the canonical audit encoding (``bench/bench_json.py``,
    ``docs/decisions.md``)."""
    return json.JSONEncoder(
        sort_keys=sort_keys,
        separators=separators,
        ensure_ascii=ensure_ascii,
        allow_nan=allow_nan,
        default=default,
        check_circular=check_circular,
    ).encode
