"""The decision audit log: one hash-chained record per handled hook, cut into sealed
segments, verifiable record by record (``pictx-fsm log verify``).

Not to be confused with :mod:`pictx_fsm.conformance`, the audit of Pi session files.
"""

from pictx_fsm.audit.log import AuditLog, verify_chain

__all__ = ["AuditLog", "verify_chain"]
