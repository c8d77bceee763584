"""pictx_fsm: the context-window lifecycle of an AI coding agent as declared, verified machines.

The public surface is small; everything else is reached by submodule:

- :class:`LifecycleRuntime` — one session's lifecycle: hook events in, effects out;
- :mod:`pictx_fsm.hooks` — the hook events and :class:`HostContext` a host feeds it;
- :class:`HookResult` — what a handled hook returns (value + effects, as data);
- :func:`load_lifecycle` — the machines declared in ``models/``, validated and compiled;
- :class:`Profile` — which pi-context release to reproduce (0.25.1 by default);
- :func:`read_session` / :class:`SessionTree` — Pi session files and their entry tree;
- :class:`AuditLog` / :func:`verify_chain` — the hash-chained record of every decision.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # not ``typing.TYPE_CHECKING``: ``pictx-fsm --help`` need not import typing
if TYPE_CHECKING:
    from typing import Any

    from pictx_fsm.audit import AuditLog, verify_chain
    from pictx_fsm.effects import HookResult
    from pictx_fsm.hooks import HostContext
    from pictx_fsm.lifecycle import load_lifecycle
    from pictx_fsm.protocol import Profile
    from pictx_fsm.runtime import LifecycleRuntime
    from pictx_fsm.session.jsonl import read_session
    from pictx_fsm.session.tree import SessionTree

__version__ = "0.1.0"

# Imported on first use: importing the lifecycle loads and validates models/, and a command
# line tool must be able to report a broken model instead of failing on its own import.
_PUBLIC = {
    "AuditLog": "pictx_fsm.audit",
    "verify_chain": "pictx_fsm.audit",
    "HookResult": "pictx_fsm.effects",
    "HostContext": "pictx_fsm.hooks",
    "load_lifecycle": "pictx_fsm.lifecycle",
    "Profile": "pictx_fsm.protocol",
    "LifecycleRuntime": "pictx_fsm.runtime",
    "read_session": "pictx_fsm.session.jsonl",
    "SessionTree": "pictx_fsm.session.tree",
}

__all__ = [
    "AuditLog",
    "HookResult",
    "HostContext",
    "LifecycleRuntime",
    "Profile",
    "SessionTree",
    "__version__",
    "load_lifecycle",
    "read_session",
    "verify_chain",
]


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'pictx_fsm' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
