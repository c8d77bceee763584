"""How the family isolates a notes home whose listing fails (R71, S87): an errno-style failure
makes that one home unavailable (or, for ``ENOENT``, simply absent) instead of failing the boot;
anything else propagates, so a running reset reports it."""

from __future__ import annotations

import errno as errno_codes
import re
from typing import Final, Literal

__all__ = ["isolated_failure"]

_ERRNO_CODE: Final = re.compile(r"E[A-Z0-9_]+")


def isolated_failure(error: Exception) -> Literal["absent", "unavailable"] | None:
    """R71: how a listing error is isolated, or ``None`` when it must propagate.

    An errno-style code (``^E[A-Z0-9_]+$``, not ``ERR_*``) isolates the home; ``ENOENT`` means
    the home is absent (empty, not unavailable). The code is the errno name of an ``OSError``
    or a string ``code`` attribute (Node style).
    """
    code = _error_code(error)
    if code is None or not _ERRNO_CODE.fullmatch(code) or code.startswith("ERR_"):
        return None
    return "absent" if code == "ENOENT" else "unavailable"


def _error_code(error: Exception) -> str | None:
    if isinstance(error, OSError) and isinstance(error.errno, int):
        return errno_codes.errorcode.get(error.errno)
    code = getattr(error, "code", None)
    return code if isinstance(code, str) else None
