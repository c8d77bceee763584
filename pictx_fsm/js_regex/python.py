"""A parsed JavaScript regex as Python ``re`` source with the same matches, or a refusal.

Both engines backtrack in the same order (alternatives left to right, greedy or lazy
repeats), so a tree carries over node by node, with JavaScript's meanings spelled out:
``^``/``$`` are the ends of the input (of a line with ``m``: after or before ``\\n``, ``\\r``,
U+2028, U+2029), ``.`` and every class are explicit unit sets (closed under ``i`` by
:func:`~pictx_fsm.js_regex.charset.case_closed`), ``\\b`` is ASCII (and spelled out), and
a reference to a group that did not take part matches the empty string (``(?(n)\\n)``).
Where the engines genuinely differ, the pattern is refused (:class:`JsRegexUnsupported`):

- a repeat whose body can match the empty string: JavaScript rejects an empty iteration
  and backtracks into the body, Python's ``re`` ends the loop (``/(?:|a)*/`` matches
  ``aa``, not the empty string);
- a back-reference under ``i`` (JavaScript compares canonical forms), inside a lookbehind
  (JavaScript matches it right to left), or to a group whose value the engines keep
  differently (:func:`unreliable_groups`);
- a lookbehind whose width varies (Python's ``re`` needs a fixed width).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from pictx_fsm.js_regex import charset as cs
from pictx_fsm.js_regex.errors import JsRegexUnsupported
from pictx_fsm.js_regex.syntax import (
    Alt,
    Chars,
    Dot,
    Edge,
    Group,
    Look,
    Node,
    Parsed,
    Ref,
    Repeat,
    Seq,
)

__all__ = ["python_source", "unreliable_groups"]

_NOT_TERMINATOR: Final = cs.python_class(cs.complement(cs.LINE_TERMINATORS))
_WORD: Final = cs.python_class(cs.WORD)
_EDGES: Final = {
    # Spelled out: Python's ``\B`` does not match in an empty string, JavaScript's does.
    ("boundary", False): f"(?:(?<={_WORD})(?!{_WORD})|(?<!{_WORD})(?={_WORD}))",
    ("inside", False): f"(?:(?<={_WORD})(?={_WORD})|(?<!{_WORD})(?!{_WORD}))",
    ("start", False): r"\A",
    ("end", False): r"\Z",
    ("start", True): f"(?<!{_NOT_TERMINATOR})",
    ("end", True): f"(?!{_NOT_TERMINATOR})",
}


def python_source(parsed: Parsed, source: str, flags: str) -> str:
    """The Python pattern."""
    _Checker(parsed, source, flags).check(parsed.tree, in_lookbehind=False)
    return _Emitter(flags).emit(parsed.tree)


class _Emitter:
    def __init__(self, flags: str) -> None:
        self.ignore_case = "i" in flags
        self.dot_all = "s" in flags
        self.multiline = "m" in flags

    def emit(self, node: Node) -> str:
        if isinstance(node, Chars):
            units = cs.case_closed(node.units) if self.ignore_case else node.units
            return cs.python_class(cs.complement(units) if node.negated else units)
        if isinstance(node, Dot):
            return cs.python_class(cs.ALL) if self.dot_all else _NOT_TERMINATOR
        if isinstance(node, Edge):
            return _EDGES[node.kind, self.multiline and node.kind in ("start", "end")]
        if isinstance(node, Seq):
            return "".join(self.emit(item) for item in node.items)
        if isinstance(node, Alt):
            return "(?:" + "|".join(self.emit(option) for option in node.options) + ")"
        if isinstance(node, Group):
            body = self.emit(node.body)
            return f"({body})" if node.index is not None else f"(?:{body})"
        if isinstance(node, Look):
            kind = ("<" if node.behind else "") + ("!" if node.negative else "=")
            return f"(?{kind}{self.emit(node.body)})"
        if isinstance(node, Repeat):
            return f"(?:{self.emit(node.body)}){_bounds(node)}{'' if node.greedy else '?'}"
        if not node.closed:  # a Ref to a group not yet ended: always empty in JavaScript
            return ""
        return f"(?({node.index})\\{node.index})"


def _bounds(node: Repeat) -> str:
    low, high = node.low, node.high
    if high is None:
        return "*" if low == 0 else "+" if low == 1 else f"{{{low},}}"
    return "?" if (low, high) == (0, 1) else f"{{{low}}}" if low == high else f"{{{low},{high}}}"


class _Checker:
    def __init__(self, parsed: Parsed, source: str, flags: str) -> None:
        self.source = source
        self.flags = flags
        self.unreliable = unreliable_groups(parsed.tree)

    def refuse(self, problem: str) -> JsRegexUnsupported:
        return JsRegexUnsupported(self.source, self.flags, problem)

    def check(self, node: Node, *, in_lookbehind: bool) -> None:
        if isinstance(node, Repeat) and _varies(node) and nullable(node.body):
            raise self.refuse(
                "a repeated part can match the empty string (JavaScript rejects an empty "
                "iteration, Python's re stops the loop)"
            )
        if isinstance(node, Ref) and node.closed:
            self.check_reference(node, in_lookbehind=in_lookbehind)
        behind = in_lookbehind or (isinstance(node, Look) and node.behind)
        for child in _children(node):
            self.check(child, in_lookbehind=behind)

    def check_reference(self, node: Ref, *, in_lookbehind: bool) -> None:
        if "i" in self.flags:
            raise self.refuse(
                "a back-reference under the i flag (JavaScript compares canonical forms)"
            )
        if in_lookbehind:
            raise self.refuse(
                "a back-reference inside a lookbehind (JavaScript matches it right to left)"
            )
        if node.index in self.unreliable:
            raise self.refuse(
                f"a back-reference to group {node.index}, which a repetition or a negative or "
                "backward lookaround can leave holding a value JavaScript clears"
            )


def _varies(node: Repeat) -> bool:
    return node.high is None or node.high > node.low


def _children(node: Node) -> Iterator[Node]:
    if isinstance(node, Seq):
        yield from node.items
    elif isinstance(node, Alt):
        yield from node.options
    elif isinstance(node, Group | Look | Repeat):
        yield node.body


def nullable(node: Node) -> bool:
    """Whether ``node`` can match the empty string (a reference can: its group may be empty)."""
    if isinstance(node, Chars | Dot):
        return False
    if isinstance(node, Edge | Look | Ref):
        return True
    if isinstance(node, Repeat):
        return node.low == 0 or nullable(node.body)
    if isinstance(node, Group):
        return nullable(node.body)
    if isinstance(node, Seq):
        return all(nullable(item) for item in node.items)
    return any(nullable(option) for option in node.options)


def unreliable_groups(tree: Node) -> frozenset[int]:
    """Groups whose value after a match may differ between the engines: JavaScript clears
    the groups of a repeated body at each iteration (Python keeps an earlier iteration's
    value when a later one skips the group), clears those of a negative lookaround, and
    fills those of a lookbehind right to left."""
    found: set[int] = set()
    _collect_unreliable(tree, found, repeated=(), tainted=False)
    return frozenset(found)


def _collect_unreliable(
    node: Node, found: set[int], *, repeated: tuple[Node, ...], tainted: bool
) -> None:
    """``repeated``: the bodies of the repeats around ``node`` that may iterate twice."""
    if isinstance(node, Group) and node.index is not None:
        index = node.index
        if tainted or not all(always_sets(body, index) for body in repeated):
            found.add(index)
    if isinstance(node, Repeat) and (node.high is None or node.high > 1):
        repeated = (*repeated, node.body)
    if isinstance(node, Look) and (node.negative or node.behind):
        tainted = True
    for child in _children(node):
        _collect_unreliable(child, found, repeated=repeated, tainted=tainted)


def always_sets(node: Node, index: int) -> bool:
    """Whether every match of ``node`` sets group ``index``."""
    if isinstance(node, Group):
        return node.index == index or always_sets(node.body, index)
    if isinstance(node, Seq):
        return any(always_sets(item, index) for item in node.items)
    if isinstance(node, Alt):
        return all(always_sets(option, index) for option in node.options)
    if isinstance(node, Repeat):
        return node.low >= 1 and always_sets(node.body, index)
    return False
