"""Auditing one session tree: every branch check on every branch, then the whole-tree checks.

:func:`audit_tree` is the entry point for in-memory sessions (the model session's files are
audited with it); :mod:`pictx_fsm.audit_sessions.stream` adds the reader's problems and line
numbers for files.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from pictx_fsm.audit_sessions.boundaries import (
    BranchSummaryCheck,
    LegacyResetCheck,
    NativeCompactionCheck,
    ToolPairCheck,
)
from pictx_fsm.audit_sessions.budget import BudgetRepeatCheck, MultipleResetsCheck
from pictx_fsm.audit_sessions.context import AuditContext, Locator, no_lines
from pictx_fsm.audit_sessions.context_management import check_entries
from pictx_fsm.audit_sessions.findings import Finding, sort_key
from pictx_fsm.audit_sessions.forks import out_of_band_forks
from pictx_fsm.audit_sessions.identity import BootIdentityCheck, DuplicateWindowIdCheck
from pictx_fsm.audit_sessions.shapes import EntryShapeCheck, TextCheck
from pictx_fsm.audit_sessions.storms import EmptySummaryCheck, StormCheck
from pictx_fsm.audit_sessions.tail import TailCheck
from pictx_fsm.audit_sessions.walk import BranchCheck, Shape, unique, walk
from pictx_fsm.overflow import PI_0_87, OverflowPatterns
from pictx_fsm.protocol import DEFAULT_PROFILE, Profile
from pictx_fsm.session.tree import SessionTree

BRANCH_CHECKS: Final[Sequence[BranchCheck]] = (
    TailCheck(),
    BootIdentityCheck(),
    DuplicateWindowIdCheck(),
    EntryShapeCheck(),
    TextCheck(),
    MultipleResetsCheck(),
    BudgetRepeatCheck(),
    NativeCompactionCheck(),
    BranchSummaryCheck(),
    LegacyResetCheck(),
    ToolPairCheck(),
    StormCheck(),
    EmptySummaryCheck(),
)


def audit_tree(
    tree: SessionTree,
    profile: Profile | str = DEFAULT_PROFILE,
    *,
    locate: Locator = no_lines,
    patterns: OverflowPatterns = PI_0_87,
) -> list[Finding]:
    """Every lifecycle finding of a session tree, on every branch, each reported once, in
    line order. ``locate`` gives entries their source lines (none for in-memory trees)."""
    ctx = AuditContext(tree=tree, profile=Profile.parse(profile), locate=locate, patterns=patterns)
    return audit_shape(Shape(tree), ctx)


def audit_shape(shape: Shape, ctx: AuditContext) -> list[Finding]:
    found = [*walk(shape, BRANCH_CHECKS, ctx), *out_of_band_forks(shape, ctx)]
    found += check_entries(ctx.tree.entries, ctx)  # pi-context-management's entries
    return sorted(unique(found), key=sort_key)
