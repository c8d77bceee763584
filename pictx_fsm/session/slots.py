"""Frozen slotted attrs values made in a hot loop without their generated ``__init__``.

A frozen attrs class's ``__init__`` sets each field through ``object.__setattr__`` by name
(the class's own ``__setattr__`` refuses), which costs about three times what a slot's
descriptor costs setting it directly. Reading a session builds two such values per entry (a
message's skeleton and its tree node), a third of the reader's Python work, so those are made
by a plain function beside their class that calls :func:`slot_setters`' setters in turn: the
same instance, equal to the one ``__init__`` makes, for a class whose fields have no
converter, no validator, no ``__attrs_post_init__`` and are all given.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

__all__ = ["SlotSetter", "slot_setters"]

SlotSetter = Callable[[Any, Any], None]
"""Sets one slot of an instance: ``setter(instance, value)``."""


def slot_setters(cls: type[Any], *names: str) -> tuple[SlotSetter, ...]:
    """The setters of ``cls``'s slots ``names``, which must be all its fields in declaration
    order (a field added, removed or moved fails here, at import, not in a made value).
    Refuses a class a maker would build wrongly."""
    fields = attrs.fields(cls)  # an attrs class, else TypeError
    plain = all(field.converter is None and field.validator is None for field in fields)
    if not (plain and "__slots__" in vars(cls)) or hasattr(cls, "__attrs_post_init__"):
        raise TypeError(f"{cls.__name__}: not a plain slotted attrs class")
    declared = tuple(field.name for field in fields)
    if names != declared:
        raise TypeError(f"{cls.__name__}: its fields are {declared}, not {names}")
    return tuple(_slot(cls, name).__set__ for name in names)


def _slot(cls: type[Any], name: str) -> Any:
    """The member descriptor of a slot, from the class in the MRO that declares it."""
    for klass in cls.__mro__:
        if name in vars(klass).get("__slots__", ()):
            return vars(klass)[name]
    raise TypeError(f"{cls.__name__}.{name} is not a slot")
