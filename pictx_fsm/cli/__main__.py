"""``python -m pictx_fsm.cli``: the same as the ``pictx-fsm`` console script."""

import sys

from pictx_fsm.cli import main

__all__ = []

sys.exit(main())
