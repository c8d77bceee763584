"""The conformance audit of Pi session files against the pi-context reset lifecycle.

:func:`audit_file` audits a file (read as a stream: structure first, then every branch);
:func:`audit_tree` audits an in-memory :class:`~pictx_fsm.session.tree.SessionTree` (the
model session's sessions). Findings are :class:`Finding` values of a :class:`FindingKind`,
each naming the rule (``R…``, ``D…``) or failure mode (``FM…``) it breaks.
"""

from pictx_fsm.conformance.engine import audit_tree
from pictx_fsm.conformance.findings import KINDS, EntryRef, Finding, FindingKind
from pictx_fsm.conformance.report import SessionAudit
from pictx_fsm.conformance.stream import audit_file

__all__ = [
    "KINDS",
    "EntryRef",
    "Finding",
    "FindingKind",
    "SessionAudit",
    "audit_file",
    "audit_tree",
]
