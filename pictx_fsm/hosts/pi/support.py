"""Which Pi versions pi-context supports, and the one notice an older Pi gets.

The lifecycle needs Pi's boundary results (``turn_end`` and ``agent_before_settle`` returning
``{entries, continue}``), which Pi 0.87 introduced; the real-Pi tests run on 0.87.1 and 1.6.0
(``tests/pi_versions.py``). The bridge reports Pi's ``VERSION`` in every request's ``ctx``
(``piVersion``); at startup an older Pi gets :data:`NOTICE_PI_TOO_OLD` once, and a newer one
than the newest tested nothing (Pi keeps its extension API compatible within 1.x).
"""

from __future__ import annotations

import re
from typing import Final

from pictx_fsm.host.effects import Notify
from pictx_fsm.hosts.model.profiles import PI_0_87, PI_1_6, HostProfile

__all__ = [
    "NEWEST_TESTED_PI",
    "NOTICE_PI_TOO_OLD",
    "OLDEST_SUPPORTED_PI",
    "host_profile_for",
    "is_supported",
    "version_key",
    "version_notice",
]

OLDEST_SUPPORTED_PI: Final = "0.87.1"
NEWEST_TESTED_PI: Final = "1.6.0"
NOTICE_PI_TOO_OLD: Final = (
    "pi-context: Pi {version} is older than {oldest}, the oldest Pi pi-context supports; "
    "context windows will not work. Update Pi to {oldest} or newer."
)
_VERSION = re.compile(r"^(\d+)\.(\d+)\.(\d+)")


def version_key(version: str) -> tuple[int, int, int] | None:
    """``"1.6.0"`` → ``(1, 6, 0)`` (a pre-release suffix is ignored); ``None`` when the text is
    not a version."""
    found = _VERSION.match(version.strip())
    if found is None:
        return None
    major, minor, patch = (int(part) for part in found.groups())
    return major, minor, patch


def is_supported(version: str) -> bool:
    """Whether ``version`` is at least :data:`OLDEST_SUPPORTED_PI` (unknown text: assumed so,
    since only a Pi that reports a version can be judged)."""
    key, oldest = version_key(version), version_key(OLDEST_SUPPORTED_PI)
    return key is None or oldest is None or key >= oldest


def version_notice(version: str) -> Notify | None:
    """The startup notice for an unsupported Pi, or ``None``."""
    if is_supported(version):
        return None
    message = NOTICE_PI_TOO_OLD.format(version=version, oldest=OLDEST_SUPPORTED_PI)
    return Notify(message=message, level="warning")


def host_profile_for(version: str) -> HostProfile | None:
    """The model session's host profile standing for this Pi: ``pi-1.6`` for 1.x, ``pi-0.87``
    for a supported 0.x; ``None`` for an unsupported or unreadable version."""
    key = version_key(version)
    if key is None or not is_supported(version):
        return None
    return PI_1_6 if key[0] >= 1 else PI_0_87
