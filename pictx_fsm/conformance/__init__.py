"""The conformance audit of Pi session files, generic over the checks it is given.

:func:`audit_file` audits a file (read as a stream: structure first, then every branch);
:func:`audit_tree` audits an in-memory :class:`~pictx_fsm.session.tree.SessionTree` (the
model session's sessions). What is checked is a :class:`CheckSet`: the extensions supply
theirs (pi-context's reset lifecycle, pi-context-management's persisted state) and the CLI
composes them. Findings are :class:`Finding` values of a :class:`FindingKind`, each naming the
rule or failure mode (``FM…``) it breaks.
"""

from pictx_fsm.conformance.checks import NO_CHECKS, CheckSet, combine
from pictx_fsm.conformance.engine import audit_tree
from pictx_fsm.conformance.findings import EntryRef, Finding, FindingKind
from pictx_fsm.conformance.report import SessionAudit
from pictx_fsm.conformance.stream import audit_file, audit_files

__all__ = [
    "NO_CHECKS",
    "CheckSet",
    "EntryRef",
    "Finding",
    "FindingKind",
    "SessionAudit",
    "audit_file",
    "audit_files",
    "audit_tree",
    "combine",
]
