"""M50 in the form the real Pi allows: the handoff target's file and its takeover mark.

Pi writes a session file lazily (once it holds an assistant message, 0.87; a user or
assistant message, 1.x) — but a file that exists when Pi opens it is loaded *flushed*, so
every later entry is appended at once. The handoff target is such a file (the extension
writes it outright), so the takeover mark reaches the disk even when the takeover prompt never
starts, and a reopen reads it back: the model session follows that (``HostState.on_disk``).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from pi_versions import NODE, PiInstall

SCRIPT = Path(__file__).resolve().parent / "fixtures" / "pi" / "handoff_target_file.mjs"
PI_INDEX = Path("@earendil-works") / "pi-coding-agent" / "dist" / "index.js"


@pytest.mark.real_pi
def test_m50_pi_writes_the_takeover_mark_into_the_target_file_with_no_message(
    pi_install: PiInstall,
) -> None:
    # Given a handoff target written outright and opened by the real Pi's SessionManager
    home = pi_install.home
    # When the extension appends the takeover mark, no message in the session
    done = subprocess.run(
        [str(home / NODE), str(SCRIPT), str(home / PI_INDEX)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    seen = json.loads(done.stdout)
    # Then the mark is on disk at once, and a reopen reads receipt and mark back
    receipt, mark = "context-memory/receipt", "context-memory/takeover"
    assert seen == {"disk": ["session", receipt, mark], "reopened": [receipt, mark]}
