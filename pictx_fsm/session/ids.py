"""Pi's random ids: UUID4 hex strings drawn from an injected random source.

Entry ids are the first 8 hex digits of a fresh UUID (:meth:`SessionTree.mint_entry_id
<pictx_fsm.session.tree.SessionTree.mint_entry_id>`); an extension that mints ids of its own
(pi-context's window ids) draws from the same stream, so a seed replays every id.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Final

__all__ = ["uuid_draws"]


def uuid_draws(rng: random.Random) -> Iterator[str]:
    """An endless stream of random UUID4 hex strings from an injected random source."""
    while True:  # ``uuid.UUID(int=…, version=4).hex``, without building the object
        value = rng.getrandbits(128) & _UUID4_KEEP | _UUID4_SET
        yield f"{value:032x}"


_UUID4_KEEP: Final = ~((0xC000 << 48) | (0xF000 << 64))
"""Everything but the variant and version bits (RFC 4122)."""
_UUID4_SET: Final = (0x8000 << 48) | (4 << 76)
