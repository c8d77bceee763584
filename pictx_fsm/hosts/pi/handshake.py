"""The bridge's handshake: which extensions a server runs, and what it says first (versions
and the extension it runs), so an extension and a server that do not belong together are
diagnosed before any request."""

from __future__ import annotations

import platform
import sys
from typing import Any, Final

from pictx_fsm import __version__
from pictx_fsm.errors import PictxError
from pictx_fsm.hosts.pi.wire import PROTOCOL

PI_CONTEXT: Final = "pi-context"
"""The extension a server runs when none is named (``pictx-fsm pi --extension-path``)."""
SERVED: Final = ("pi-context", "context-management")
"""The extensions a server can run, as ``--extension`` names them."""


class UnknownExtensionError(PictxError):
    """``--extension`` names no extension this server runs."""


def hello(extension: str = PI_CONTEXT) -> dict[str, Any]:
    """What the server tells the extension first: versions and the extension it runs."""
    return {
        "package": __version__,
        "protocol": PROTOCOL,
        "serves": extension,
        "python": f"{platform.python_version()} ({sys.executable})",
    }


__all__ = ["PI_CONTEXT", "SERVED", "UnknownExtensionError", "hello"]
