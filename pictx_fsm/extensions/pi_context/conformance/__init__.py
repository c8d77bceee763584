"""pi-context's checks of Pi session files, for the generic audit (:mod:`pictx_fsm.conformance`).

:func:`pi_context_checks` is the :class:`~pictx_fsm.conformance.checks.CheckSet`; each
finding names the lifecycle rule (``R…``, ``D…``) or failure mode (``FM…``) it breaks
(:mod:`.kinds`).
"""

from pictx_fsm.extensions.pi_context.conformance.checks import pi_context_checks

__all__ = ["pi_context_checks"]
