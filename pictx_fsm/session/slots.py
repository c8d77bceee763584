"""Frozen slotted attrs values made in a hot loop without their generated ``__init__``.

A frozen attrs class's ``__init__`` sets each field through ``object.__setattr__`` by name
(the class's own ``__setattr__`` refuses), which costs about three times what a slot's
descriptor costs setting it directly. Reading a session builds two such values per entry (a
message's skeleton and its tree node), a third of the reader's Python work, so those two are
made by a :func:`maker`: the same instance, equal to the one ``__init__`` makes, for a class
whose fields have no converter, no validator, no ``__attrs_post_init__`` and are all given.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import attrs

T = TypeVar("T")


def maker(cls: type[T]) -> Callable[..., T]:
    """``cls``'s constructor taking every field positionally, in declaration order, that
    sets the slots directly (module docstring). Refuses a class it would build wrongly."""
    fields = attrs.fields(cls)  # type: ignore[arg-type]  # an attrs class, else TypeError
    names = tuple(field.name for field in fields)
    plain = all(field.converter is None and field.validator is None for field in fields)
    if not (plain and "__slots__" in vars(cls)) or hasattr(cls, "__attrs_post_init__"):
        raise TypeError(f"{cls.__name__}: not a plain slotted attrs class")
    scope: dict[str, Any] = {"new": object.__new__, "cls": cls}
    scope.update((f"set_{name}", _slot(cls, name).__set__) for name in names)
    body = "".join(f"    set_{name}(value, {name})\n" for name in names)
    source = f"def make({', '.join(names)}):\n    value = new(cls)\n{body}    return value\n"
    exec(compile(source, f"<slots maker {cls.__qualname__}>", "exec"), scope)
    made: Callable[..., T] = scope["make"]
    return made


def _slot(cls: type[Any], name: str) -> Any:
    """The member descriptor of a slot, from the class in the MRO that declares it."""
    for klass in cls.__mro__:
        if name in vars(klass).get("__slots__", ()):
            return vars(klass)[name]
    raise TypeError(f"{cls.__name__}.{name} is not a slot")
