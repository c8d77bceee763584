"""``python -m pictx_fsm.extensions.pi_context.tools``: print ``tools.json`` (the eleven tool
registrations)."""

import sys

from pictx_fsm.extensions.pi_context.tools.schema import schema_document

__all__ = []

sys.stdout.write(schema_document())
