"""pi-context 0.25's note addresses: the family's address forms and glob patterns
(:mod:`pictx_fsm.extensions.shared.tools.address`); a malformed address is a thrown error
with 0.25's message (N10)."""

from __future__ import annotations

from pictx_fsm.extensions.shared.tools.address import (
    ADDRESS_FORMS,
    INVALID_ADDRESS,
    SCOPES,
    SLUG_PATTERN,
    AddressError,
    NoteAddress,
    Scope,
    assert_virtual_path,
    canonical_address,
    decode_address,
    glob_matches,
    glob_regex,
    normalize_pattern,
    pattern_head,
    resolve_pattern,
)

__all__ = [
    "ADDRESS_FORMS",
    "INVALID_ADDRESS",
    "SCOPES",
    "SLUG_PATTERN",
    "AddressError",
    "NoteAddress",
    "Scope",
    "assert_virtual_path",
    "canonical_address",
    "decode_address",
    "glob_matches",
    "glob_regex",
    "normalize_pattern",
    "pattern_head",
    "resolve_pattern",
]
