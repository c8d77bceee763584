"""The real Pi's answer to one of pi-context-management's own model requests: the model
session's scripted generator run on the request's payload.

``python -m pictx_fsm.extensions.context_management.kit.notes_answer [KIND]`` reads the payload
(the JSON user message the extension sends Pi's model) on stdin and prints the reply text
:func:`~pictx_fsm.hosts.model.generator.reply_text` gives for ``KIND`` (default ``valid``) — so
a scripted model of the real Pi (the differential's, the real-Pi tests' faux provider) and the
model session answer a request alike.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence

from pictx_fsm.hosts.model.generator import reply_text

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    kind = args[0] if args else "valid"
    text = reply_text(kind, json.loads(sys.stdin.read()))
    sys.stdout.write(text or "")
    return 0


if __name__ == "__main__":
    sys.exit(main())
