"""``python -m pictx_fsm.tools``: print ``tools.json`` (the eleven tool registrations)."""

import sys

from pictx_fsm.tools.schema import schema_document

sys.stdout.write(schema_document())
