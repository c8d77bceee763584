"""Import paths that moved in 0.2 (issue 23's layout), kept working for one release.

``import pictx_fsm.hooks`` (or any module below a moved one) still works: a finder on
``sys.meta_path`` answers the old name with the module at its new place — the same module
object, so ``isinstance`` checks and monkeypatches agree — and a :class:`DeprecationWarning`
names the new path. ``CHANGELOG.md`` lists the same table (a test holds them equal).
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # not ``typing.TYPE_CHECKING``: importing the package need not import typing
if TYPE_CHECKING:
    import importlib.machinery
    from collections.abc import Sequence
    from types import ModuleType
    from typing import Any, Final

__all__ = ["MOVED", "MOVED_NAMES", "install", "moved_attribute", "new_name"]

MOVED: Final[dict[str, str]] = {
    "pictx_fsm.hooks": "pictx_fsm.host.events",
    "pictx_fsm.effects": "pictx_fsm.host.effects",
    "pictx_fsm.applied": "pictx_fsm.host.apply",
    "pictx_fsm.audit_store": "pictx_fsm.audit.store",
    "pictx_fsm.audit_text": "pictx_fsm.audit.text",
    "pictx_fsm._jscompat": "pictx_fsm.js",
    "pictx_fsm.runtime": "pictx_fsm.extensions.pi_context.runtime",
    "pictx_fsm.lifecycle": "pictx_fsm.extensions.pi_context.lifecycle",
    "pictx_fsm.notes": "pictx_fsm.extensions.pi_context.notes",
    "pictx_fsm.boot": "pictx_fsm.extensions.pi_context.boot",
    "pictx_fsm.resets": "pictx_fsm.extensions.pi_context.boot_writer",
    "pictx_fsm.overflow": "pictx_fsm.host.overflow",
    "pictx_fsm.policy": "pictx_fsm.extensions.pi_context.policy",
    "pictx_fsm.repair": "pictx_fsm.extensions.pi_context.repair",
    "pictx_fsm.protocol": "pictx_fsm.extensions.pi_context.texts",
    "pictx_fsm.session.windows": "pictx_fsm.extensions.pi_context.windows",
    "pictx_fsm.session.reset_projection": "pictx_fsm.extensions.pi_context.reset_projection",
    "pictx_fsm.session.history": "pictx_fsm.extensions.pi_context.history",
    "pictx_fsm.tools": "pictx_fsm.extensions.pi_context.tools",
    "pictx_fsm.tools.outcome": "pictx_fsm.host.tool_outcome",
    "pictx_fsm.context_management": "pictx_fsm.extensions.context_management",
    "pictx_fsm.audit_sessions": "pictx_fsm.conformance",
    "pictx_fsm.hosts.model.extension": "pictx_fsm.host.extension",
    "pictx_fsm.hosts.model.adapter": "pictx_fsm.extensions.pi_context.adapter",
    "pictx_fsm.hosts.model.brain": "pictx_fsm.hosts.model.scripted_provider",
    "pictx_fsm.conformance.boundaries": "pictx_fsm.extensions.pi_context.conformance.boundaries",
    "pictx_fsm.conformance.budget": "pictx_fsm.extensions.pi_context.conformance.budget",
    "pictx_fsm.conformance.identity": "pictx_fsm.extensions.pi_context.conformance.identity",
    "pictx_fsm.conformance.roles": "pictx_fsm.extensions.pi_context.conformance.roles",
    "pictx_fsm.conformance.shapes": "pictx_fsm.extensions.pi_context.conformance.shapes",
    "pictx_fsm.conformance.storms": "pictx_fsm.extensions.pi_context.conformance.storms",
    "pictx_fsm.conformance.tail": "pictx_fsm.extensions.pi_context.conformance.tail",
    "pictx_fsm.conformance.context_management": (
        "pictx_fsm.extensions.context_management.conformance"
    ),
}
"""Old module path → new module path. A package's submodules move with it."""

_POLICY: Final = "pictx_fsm.extensions.pi_context.policy"
_PI_SETTINGS: Final = (
    "CompactionSettings",
    "FileSettingsSource",
    "ModelIdentity",
    "ModelRef",
    "SettingsReadError",
    "SettingsScopes",
    "SettingsSource",
    "SettingsValueError",
    "StaticSettingsSource",
    "compaction_settings",
    "deep_merge",
    "default_agent_dir",
    "model_key",
    "read_settings_file",
    "PI_AGENT_DIR_ENV",
    "PI_CONFIG_DIR_NAME",
    "PI_SETTINGS_FILE",
)
"""Pi's settings, once in pi-context's policy, now :mod:`pictx_fsm.host.settings`."""

_ROOT_RETIRED: Final[dict[str, str]] = {
    **dict.fromkeys(("BootWriter",), "pictx_fsm.extensions.pi_context.boot_writer"),
    **dict.fromkeys(
        ("HOOK_EVENTS", "Lifecycle", "Services", "load_lifecycle", "pi_file_settings"),
        "pictx_fsm.extensions.pi_context.lifecycle",
    ),
    **dict.fromkeys(
        ("FileNotesSource", "InMemoryNotesSource"), "pictx_fsm.extensions.pi_context.notes"
    ),
    **dict.fromkeys(("Policy",), "pictx_fsm.extensions.pi_context.policy"),
    **dict.fromkeys(("Profile", "Texts"), "pictx_fsm.extensions.pi_context.texts"),
    **dict.fromkeys(
        ("SCHEMA_FILE", "TOOL_NAMES", "ToolContext", "ToolSpec", "execute_tool", "tool_spec"),
        "pictx_fsm.extensions.pi_context.tools",
    ),
    **dict.fromkeys(("Applied",), "pictx_fsm.host.apply"),
    **dict.fromkeys(
        (
            "AbortRun",
            "AppendEntry",
            "BoundaryResult",
            "CancelResult",
            "CustomDraft",
            "CustomMessageDraft",
            "HookResult",
            "MessagesResult",
            "Notify",
            "SendMessage",
            "ToolResult",
            "TreeSummaryResult",
        ),
        "pictx_fsm.host.effects",
    ),
    **dict.fromkeys(
        (
            "AgentBeforeSettle",
            "AgentEnd",
            "Command",
            "Context",
            "HookEvent",
            "ModelSelect",
            "SessionBeforeCompact",
            "SessionBeforeTree",
            "SessionShutdown",
            "SessionTreeEvent",
        ),
        "pictx_fsm.host.events",
    ),
}
"""Names the package root exported in 0.1 beyond what the docs use: their homes."""

MOVED_NAMES: Final[dict[tuple[str, str], str]] = {
    **{("pictx_fsm", name): home for name, home in _ROOT_RETIRED.items()},
    **{(_POLICY, name): "pictx_fsm.host.settings" for name in _PI_SETTINGS},
    ("pictx_fsm.hosts.model", "LifecycleExtension"): "pictx_fsm.extensions.pi_context.adapter",
    ("pictx_fsm.hosts.model", "LIFECYCLE_HOOKS"): "pictx_fsm.extensions.pi_context.adapter",
    ("pictx_fsm.hosts.model", "RuntimeLike"): "pictx_fsm.extensions.pi_context.adapter",
    (
        "pictx_fsm.extensions.pi_context.policy",
        "DEFAULT_KEEP_RECENT_TOKENS",
    ): "pictx_fsm.host.settings",
    ("pictx_fsm.testing", "World"): "pictx_fsm.extensions.pi_context.kit.world",
    ("pictx_fsm.testing", "WorldConfig"): "pictx_fsm.extensions.pi_context.kit.world",
    ("pictx_fsm.testing", "INVARIANT_TYPES"): "pictx_fsm.extensions.pi_context.kit.invariants",
    ("pictx_fsm.testing", "LifecycleStateMachine"): "pictx_fsm.extensions.pi_context.kit.stateful",
    ("pictx_fsm.testing", "host_actions"): "pictx_fsm.extensions.pi_context.kit.strategies",
    ("pictx_fsm.testing", "world_configs"): "pictx_fsm.extensions.pi_context.kit.strategies",
    **{
        ("pictx_fsm.session.usage", name): "pictx_fsm.extensions.pi_context.usage"
        for name in ("UsageIndex", "window_tokens_of", "active_tokens_of")
    },
    ("pictx_fsm.audit.log", "message_digest"): "pictx_fsm.session.digest",
    ("pictx_fsm.audit.store", "default"): "pictx_fsm.session.digest",
    ("pictx_fsm.extensions.pi_context.windows", "uuid_draws"): "pictx_fsm.session.ids",
}
"""(module, name) → the module that holds the name now, for names a module stopped
exporting (its ``__getattr__`` calls :func:`moved_attribute`)."""


def moved_attribute(module: str, name: str) -> object:
    """``module.name`` from its new home, with a :class:`DeprecationWarning`; an
    :class:`AttributeError` for a name that never was there."""
    import importlib
    import warnings

    home = MOVED_NAMES.get((module, name))
    if home is None:
        raise AttributeError(f"module {module!r} has no attribute {name!r}")
    warnings.warn(
        f"{module}.{name} moved to {home}.{name}; the old path goes away in the next release "
        "(CHANGELOG.md lists every moved path)",
        DeprecationWarning,
        stacklevel=3,
    )
    return getattr(importlib.import_module(home), name)


def new_name(old: str) -> str | None:
    """Where ``old`` lives now (``None``: it did not move). The longest moved prefix wins."""
    parts = old.split(".")
    for end in range(len(parts), 1, -1):
        target = MOVED.get(".".join(parts[:end]))
        if target is not None:
            return ".".join([target, *parts[end:]])
    return None


class _Alias:
    """Loads an old name as the module at its new place (an importlib loader)."""

    def __init__(self, old: str, new: str) -> None:
        self._old = old
        self._new = new

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        import importlib
        import warnings

        warnings.warn(
            f"{self._old} moved to {self._new}; the old path goes away in the next release "
            "(CHANGELOG.md lists every moved path)",
            DeprecationWarning,
            stacklevel=2,
        )
        return importlib.import_module(self._new)

    def exec_module(self, module: ModuleType) -> None:
        """The new module is already executed."""


class _MovedFinder:
    """Answers a moved name (an importlib meta path finder)."""

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith("pictx_fsm."):
            return None  # every import asks this finder first: the common answer is cheap
        new = new_name(fullname)
        if new is None:
            return None
        import importlib.util  # only when an old name is used: `pictx-fsm --help` stays light

        loader: Any = _Alias(fullname, new)
        return importlib.util.spec_from_loader(fullname, loader)


_FINDER: Final = _MovedFinder()


def install() -> None:
    """Put the finder first on ``sys.meta_path``, once: a submodule of a moved package asked
    for by its old name (``pictx_fsm.lifecycle._step``) must be aliased, not found again by
    the path finder in the package's new directory and executed a second time."""
    if _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)
