"""The session-file audit is generic over the checks it is given (issue 23 item 1): alone it
reports the file's structure and Pi's own tool pairs; each extension supplies its kinds, its
checks, what a summary counts and what skeletons keep of its data; combined sets keep every
extension's report order."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from session_builders import SessionBuilder

from pictx_fsm.cli.audit import session_checks
from pictx_fsm.conformance import NO_CHECKS, CheckSet, Finding, audit_file, audit_tree, combine
from pictx_fsm.conformance.context import AuditContext
from pictx_fsm.conformance.findings import (
    ERROR,
    GENERIC_KINDS,
    OUT_OF_BAND_FORK,
    WARNING,
    FindingKind,
)
from pictx_fsm.conformance.report import render_text
from pictx_fsm.conformance.walk import NO_FINDINGS, Shape, Step
from pictx_fsm.extensions.context_management.conformance import context_management_checks
from pictx_fsm.extensions.pi_context.conformance import pi_context_checks
from pictx_fsm.session.entries import CustomEntry, Entry
from pictx_fsm.session.jsonl import dumps_session
from pictx_fsm.session.skeleton import SkeletonKeep
from pictx_fsm.session.tree import TreeNode

FIXTURES = Path(__file__).parent / "fixtures" / "audit"

# -- a made-up extension: "flags" it writes as custom entries ---------------------------------

FLAG: Final = "demo/flag"
FLAG_TOO_HIGH = FindingKind(name="demo_flag_too_high", rule="X1", severity=ERROR, meaning="…")
FLAG_TWICE = FindingKind(name="demo_flag_twice", rule="X2", severity=WARNING, meaning="…")


def level(entry: Entry) -> Any:
    data = entry.data if isinstance(entry, CustomEntry) and entry.custom_type == FLAG else None
    return data.get("level") if isinstance(data, Mapping) else None


class TooHigh:
    """A content check: reads the whole entry while the file is read."""

    entry_types: Final = frozenset({CustomEntry.TYPE})

    def check(self, entry: Entry, node: TreeNode, ctx: AuditContext) -> list[Finding]:
        high = level(entry)
        if not isinstance(high, int) or high <= 3:
            return []
        return [ctx.finding(FLAG_TOO_HIGH, f"level {high}", [node])]


class Twice:
    """A branch check: reads the skeleton, so the level must be kept in it."""

    reads: Final = frozenset({CustomEntry})

    def start(self, ctx: AuditContext) -> TreeNode | None:
        return None

    def step(self, state: TreeNode | None, node: TreeNode, ctx: AuditContext) -> Step:
        if level(node.entry) is None:
            return state, NO_FINDINGS
        if state is None:
            return node, NO_FINDINGS
        return state, [ctx.finding(FLAG_TWICE, "a second flag on this branch", [node, state])]

    def end(self, state: TreeNode | None, leaf: TreeNode, ctx: AuditContext) -> list[Finding]:
        return []


class Flags:
    def counts(self, shape: Shape, ctx: AuditContext) -> list[tuple[str, int]]:
        return [("flags", sum(level(node.entry) is not None for node in shape.nodes))]


DEMO = CheckSet(
    kinds=(FLAG_TOO_HIGH, FLAG_TWICE),
    branch=(Twice(),),
    content=(TooHigh(),),
    summary=(Flags(),),
    keep=SkeletonKeep(custom_data={FLAG: ("level",)}),
)


def flagged_session(tmp_path: Path) -> Path:
    builder = SessionBuilder()
    builder.user("hello")
    builder.custom(FLAG, {"level": 5, "note": "x" * 1000})
    builder.assistant("hi")
    builder.custom(FLAG, {"level": 1})
    path = tmp_path / "flags.jsonl"
    path.write_text(dumps_session(builder.tree.header, builder.tree.entries), encoding="utf-8")
    return path


# -- the rules ------------------------------------------------------------------------------------


def test_the_generic_audit_alone_reports_the_structure_and_pi_tool_pairs_only() -> None:
    # Given a window without its boot, and an out-of-band fork
    # When each is audited with no extension's checks
    missing = audit_file(FIXTURES / "boot_missing.jsonl", NO_CHECKS)
    fork = audit_file(FIXTURES / "out_of_band_fork.jsonl", NO_CHECKS)
    # Then pi-context's rule is not known, Pi's tool pairs are, and the summary counts entries
    # and branches only
    assert missing.findings == ()
    assert [f.kind for f in fork.findings] == [OUT_OF_BAND_FORK]
    assert missing.summary is not None and missing.summary.counts == ()
    # And with pi-context's checks composed in, its rule is
    composed = audit_file(FIXTURES / "boot_missing.jsonl", session_checks())
    assert [f.name for f in composed.findings] == ["boot_missing"]


def test_an_extension_supplies_its_kinds_checks_summary_and_what_skeletons_keep(
    tmp_path: Path,
) -> None:
    # Given a session with two flags of a made-up extension, the first too high
    path = flagged_session(tmp_path)
    # When the file is audited with that extension's checks
    audit = audit_file(path, DEMO)
    # Then its content check read the whole entry, its branch check the level its skeleton
    # kept, and the summary shows its count
    assert [(f.name, f.rule, f.line) for f in audit.findings] == [
        ("demo_flag_too_high", "X1", 3),
        ("demo_flag_twice", "X2", 5),
    ]
    assert next(render_text(audit)) == f"== {path}"
    assert list(render_text(audit))[1] == "entries 4  branches 1  flags 2"
    # And without the key kept, the branch check sees no flag in the skeleton
    forgetful = CheckSet(kinds=DEMO.kinds, branch=DEMO.branch, content=DEMO.content)
    assert [f.name for f in audit_file(path, forgetful).findings] == ["demo_flag_too_high"]


def test_an_in_memory_tree_gets_the_findings_its_file_gets(tmp_path: Path) -> None:
    # Given the same session in memory (whole entries, no lines)
    builder = SessionBuilder()
    builder.user("hello")
    builder.custom(FLAG, {"level": 5})
    builder.custom(FLAG, {"level": 1})
    # Then the extension's checks find the same kinds
    assert [f.name for f in audit_tree(builder.tree, DEMO)] == [
        "demo_flag_too_high",
        "demo_flag_twice",
    ]


def test_combined_checks_report_the_generic_kinds_then_each_extensions_in_order() -> None:
    # Given pi-context's, pi-context-management's and the demo's checks combined
    pi, cm = pi_context_checks(), context_management_checks()
    both = combine(pi, cm, DEMO)
    # Then the catalogue is the generic audit's kinds, then each set's, in their order
    assert both.catalogue == (*GENERIC_KINDS, *pi.kinds, *cm.kinds, *DEMO.kinds)
    # And skeletons keep what any of them asks, the checks of each run
    assert both.keep.custom_data[FLAG] == ("level",)
    assert both.keep.custom_data.keys() == {*pi.keep.custom_data, FLAG}
    assert both.content[-1] is DEMO.content[0] and both.branch[-1] is DEMO.branch[0]
    assert both.file_order == cm.file_order and both.across_files == cm.across_files
    # And the CLI's composition is exactly pi-context's and pi-context-management's
    assert session_checks().catalogue == combine(pi, cm).catalogue
