"""What an extension plugs into the session-file audit: its checks, as one :class:`CheckSet`.

The audit itself is generic: it reads a file into its skeleton, walks every branch and runs
the checks it is given. An extension supplies

- its finding kinds, in report order;
- *branch checks* (:class:`~pictx_fsm.conformance.walk.BranchCheck`: folds over every
  root→leaf path, reading skeletons) and *content checks*
  (:class:`~pictx_fsm.conformance.walk.ContentCheck`: one whole entry at a time, while the
  file is read);
- *file-order checks* (:class:`FileOrderCheck`: a fold over the whole entries of its types
  in file order, for state an extension persists entry after entry);
- the entries whose loss changes the context (:class:`BoundaryRule`, failure mode 20), the
  counts a summary shows (:class:`SummaryCount`) and what skeletons must keep of its data
  (:class:`~pictx_fsm.session.skeleton.SkeletonKeep`);
- checks across the files of one run (:data:`RunCheck`: a chain of sessions).

:func:`combine` makes one set of several; the CLI composes every extension's set in one place.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Final, Protocol, TypeAlias

import attrs
from attrs import frozen

from pictx_fsm.conformance.context import AuditContext
from pictx_fsm.conformance.findings import GENERIC_KINDS, Finding, FindingKind, SortKey, sort_key
from pictx_fsm.conformance.walk import BranchCheck, ContentCheck, Shape
from pictx_fsm.session.entries import Entry
from pictx_fsm.session.skeleton import NOTHING_KEPT, SkeletonKeep
from pictx_fsm.session.tree import TreeNode

if TYPE_CHECKING:
    from pictx_fsm.conformance.report import SessionAudit

__all__ = [
    "NO_CHECKS",
    "BoundaryRule",
    "CheckSet",
    "FileOrderCheck",
    "RunCheck",
    "SummaryCount",
    "combine",
]


class FileOrderCheck(Protocol):
    """A fold over the whole entries of ``entry_types``, in file order (what an extension
    persists entry after entry: unlike a content check, it remembers earlier entries)."""

    @property
    def entry_types(self) -> frozenset[str]: ...

    def start(self) -> Any: ...

    def step(
        self, seen: Any, entry: Entry, node: TreeNode, ctx: AuditContext
    ) -> tuple[Any, list[Finding]]: ...

    def end(self, seen: Any) -> list[Finding]: ...


class BoundaryRule(Protocol):
    """An extension's entries whose loss changes the context (failure mode 20): a glued line
    that carries one, or a torn line that names one of ``custom_types``, is reported."""

    @property
    def custom_types(self) -> frozenset[str]: ...

    def is_boundary(self, entry: Entry) -> bool: ...

    def name(self, entry: Entry) -> str | None:
        """What to call the entry in a finding (``None``: its custom type or entry type)."""
        ...


class SummaryCount(Protocol):
    """Counts a file's summary line shows (name, count), in order, over every node."""

    def counts(self, shape: Shape, ctx: AuditContext) -> list[tuple[str, int]]: ...


RunCheck: TypeAlias = Callable[[Sequence["SessionAudit"], Sequence[str]], list["SessionAudit"]]
"""A check across the files of one run: the audits of ``paths`` with its findings added."""


@frozen(kw_only=True)
class CheckSet:
    """Everything one extension (or several, :func:`combine` d) checks in a session file."""

    kinds: tuple[FindingKind, ...] = ()
    """The kinds these checks report, in report order."""
    branch: tuple[BranchCheck, ...] = ()
    content: tuple[ContentCheck, ...] = ()
    file_order: tuple[FileOrderCheck, ...] = ()
    boundaries: tuple[BoundaryRule, ...] = ()
    summary: tuple[SummaryCount, ...] = ()
    keep: SkeletonKeep = NOTHING_KEPT
    across_files: tuple[RunCheck, ...] = ()
    sort_key: SortKey = attrs.field(init=False, eq=False, repr=False)
    """Report order: by line, then kind (the generic audit's kinds first, then these)."""

    @sort_key.default
    def _sort_key(self) -> SortKey:
        return sort_key(self.catalogue)

    @property
    def catalogue(self) -> tuple[FindingKind, ...]:
        """Every kind an audit with these checks can report, in report order."""
        return (*GENERIC_KINDS, *self.kinds)

    @property
    def whole_types(self) -> frozenset[str]:
        """The entry types read whole while a file is read (the others become skeletons)."""
        types: frozenset[str] = frozenset()
        for check in self.content:
            types |= check.entry_types
        for fold in self.file_order:
            types |= fold.entry_types
        return types

    def summary_counts(self, shape: Shape, ctx: AuditContext) -> list[tuple[str, int]]:
        return [count for summary in self.summary for count in summary.counts(shape, ctx)]

    def finish(self, audits: Sequence[SessionAudit], paths: Sequence[str]) -> list[SessionAudit]:
        """The audits of a run's ``paths`` with the findings across files added."""
        found = list(audits)
        for check in self.across_files:
            found = check(found, paths)
        return found


NO_CHECKS: Final = CheckSet()
"""The generic audit alone: the file's structure and Pi's tool pairs."""


def combine(*sets: CheckSet) -> CheckSet:
    """One set doing what every one of ``sets`` does, in their order."""
    keep = NOTHING_KEPT
    for checks in sets:
        keep = keep.merged(checks.keep)
    return CheckSet(
        kinds=tuple(kind for checks in sets for kind in checks.kinds),
        branch=tuple(check for checks in sets for check in checks.branch),
        content=tuple(check for checks in sets for check in checks.content),
        file_order=tuple(check for checks in sets for check in checks.file_order),
        boundaries=tuple(rule for checks in sets for rule in checks.boundaries),
        summary=tuple(count for checks in sets for count in checks.summary),
        keep=keep,
        across_files=tuple(check for checks in sets for check in checks.across_files),
    )
