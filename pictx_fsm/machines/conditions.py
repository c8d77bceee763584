"""Guard conditions: the small boolean language of a transition's ``cond`` / ``unless``.

A condition is a boolean expression over guard names — identifiers, ``not``, ``and``, ``or``
and parentheses, nothing else. It is parsed with Python's :mod:`ast` (the same grammar
python-statemachine's restricted evaluator reads, so both engines agree on precedence) into a
tiny tree of our own. The tree is what the compiled engine evaluates: with short-circuit, so
only the guards a branch needs are called, each through a ``lookup`` that records its value.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

import attrs

__all__ = [
    "And",
    "Condition",
    "ConditionSyntaxError",
    "Evaluator",
    "GuardRef",
    "Lookup",
    "Not",
    "Or",
    "all_of",
    "any_of",
    "compile_condition",
    "guard_names",
    "parse_condition",
    "render_condition",
]

# The guard lookup the compiled closures call: name -> value (it memoises and records).
Lookup = Callable[[str], bool]
Evaluator = Callable[[Lookup], bool]


@attrs.frozen(kw_only=True)
class GuardRef:
    """A guard named in a condition."""

    name: str


@attrs.frozen(kw_only=True)
class Not:
    operand: Condition


@attrs.frozen(kw_only=True)
class And:
    """Conjunction, evaluated left to right; nested ``and`` is flattened at parse time."""

    operands: tuple[Condition, ...]


@attrs.frozen(kw_only=True)
class Or:
    """Disjunction, evaluated left to right; nested ``or`` is flattened at parse time."""

    operands: tuple[Condition, ...]


Condition = GuardRef | Not | And | Or


class ConditionSyntaxError(ValueError):
    """A ``cond`` / ``unless`` text outside the guard language; the message says what to write."""


def parse_condition(text: str) -> Condition:
    """Parse ``text`` into a :data:`Condition`, rejecting anything but names/not/and/or."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise ConditionSyntaxError(f"{text!r} is not a valid expression ({exc.msg})") from None
    return _convert(tree.body, text)


def _convert(node: ast.expr, text: str) -> Condition:
    if isinstance(node, ast.Name):
        return GuardRef(name=node.id)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return Not(operand=_convert(node.operand, text))
    if isinstance(node, ast.BoolOp):
        operands = tuple(_convert(value, text) for value in node.values)
        if isinstance(node.op, ast.And):
            return And(operands=_flatten(operands, And))
        return Or(operands=_flatten(operands, Or))
    raise ConditionSyntaxError(
        f"{text!r}: {ast.unparse(node)!r} is not allowed; a condition may use only guard "
        "names, 'not', 'and', 'or' and parentheses"
    )


def _flatten(operands: tuple[Condition, ...], kind: type[And] | type[Or]) -> tuple[Condition, ...]:
    flat: list[Condition] = []
    for operand in operands:
        if isinstance(operand, kind):
            flat.extend(operand.operands)
        else:
            flat.append(operand)
    return tuple(flat)


def all_of(conditions: tuple[Condition, ...]) -> Condition:
    """The conjunction of ``conditions`` (python-statemachine's meaning of a ``cond`` list)."""
    if len(conditions) == 1:
        return conditions[0]
    return And(operands=_flatten(conditions, And))


def any_of(conditions: tuple[Condition, ...]) -> Condition:
    """The disjunction of ``conditions`` (an ``unless`` list: any one of them blocks)."""
    if len(conditions) == 1:
        return conditions[0]
    return Or(operands=_flatten(conditions, Or))


def guard_names(condition: Condition | None) -> tuple[str, ...]:
    """The guards a condition names, in first-appearance order, without repeats."""
    names: dict[str, None] = {}
    if condition is not None:
        _collect(condition, names)
    return tuple(names)


def _collect(condition: Condition, names: dict[str, None]) -> None:
    if isinstance(condition, GuardRef):
        names.setdefault(condition.name, None)
    elif isinstance(condition, Not):
        _collect(condition.operand, names)
    else:
        for operand in condition.operands:
            _collect(operand, names)


def render_condition(condition: Condition) -> str:
    """Canonical text: single spaces, parentheses only where precedence needs them.

    ``parse_condition(render_condition(c)) == c`` for every parsed ``c``, so diagrams and
    listings can show the canonical text without changing meaning.
    """
    if isinstance(condition, GuardRef):
        return condition.name
    if isinstance(condition, Not):
        return "not " + _render_operand(condition.operand, strength=3)
    if isinstance(condition, And):
        return " and ".join(_render_operand(op, strength=2) for op in condition.operands)
    return " or ".join(_render_operand(op, strength=1) for op in condition.operands)


_STRENGTH: dict[type, int] = {GuardRef: 4, Not: 3, And: 2, Or: 1}


def _render_operand(condition: Condition, *, strength: int) -> str:
    # An operand that binds less tightly than its context gets parentheses; And inside And
    # (or Or inside Or) cannot occur after flattening, so equal strength needs none.
    text = render_condition(condition)
    return f"({text})" if _STRENGTH[type(condition)] < strength else text


def compile_condition(condition: Condition) -> Evaluator:
    """A closure evaluating ``condition`` with short-circuit through a guard lookup."""
    if isinstance(condition, GuardRef):
        name = condition.name
        return lambda lookup: lookup(name)
    if isinstance(condition, Not):
        inner = compile_condition(condition.operand)
        return lambda lookup: not inner(lookup)
    parts = tuple(compile_condition(op) for op in condition.operands)
    if isinstance(condition, And):
        return _all_of(parts)
    return _any_of(parts)


# Plain loops rather than all()/any() over a generator: this runs on every guarded step.
def _all_of(parts: tuple[Evaluator, ...]) -> Evaluator:
    def evaluate(lookup: Lookup) -> bool:
        for part in parts:  # noqa: SIM110
            if not part(lookup):
                return False
        return True

    return evaluate


def _any_of(parts: tuple[Evaluator, ...]) -> Evaluator:
    def evaluate(lookup: Lookup) -> bool:
        for part in parts:  # noqa: SIM110
            if part(lookup):
                return True
        return False

    return evaluate
