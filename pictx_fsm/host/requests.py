"""What a provider was sent, as any host can observe it: the messages of one request and
where the session and its decision log stood when it was made. Hosts record these (the
pydantic-ai host's scripted model, the model session) so that the same host-neutral checks
judge every host."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from attrs import field, frozen

__all__ = ["ProviderRequest"]

JSON = Any


def _tuple(items: Iterable[Any]) -> tuple[Any, ...]:
    return tuple(items)


@frozen(kw_only=True)
class ProviderRequest:
    """One request as the provider got it, and where the session stood then."""

    messages: tuple[JSON, ...] = field(converter=_tuple)
    leaf_id: str | None
    audit_seq: int
    """How many audit records existed when the request was made."""
