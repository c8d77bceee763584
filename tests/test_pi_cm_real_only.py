"""pi-context-management on the real Pi alone, where another extension or Pi's own tools make
a situation the model session has no counterpart of: a handoff target that another extension
keeps busy from its ``session_start`` (so Pi refuses the takeover prompt, M50), and a handoff
package outgrown by the file lists Pi records from its own read tool (M46 step 2). Each
scenario names the transitions it must fire, read from the extension's diagnostics logs; the
coverage test of ``test_pi_cm_differential`` counts them as fired on the real Pi."""

from __future__ import annotations

from pathlib import Path

import pytest
from pi_versions import PiInstall
from real_cm import (
    NO_BACKGROUND,
    SMALL,
    CmScenario,
    Command,
    Compact,
    Drive,
    Say,
    covered,
    run_real_only,
)

from pictx_fsm.testing.actions import filler

__all__ = ["REAL_ONLY"]

BUSY = Drive(command="drive-busy-target")
"""The next session that starts (the handoff's target) runs another extension's prompt."""


def _reads(count: int) -> dict[str, object]:
    """A faux reply calling Pi's read tool on ``count`` files with 100-character paths."""
    paths = [f"src/{filler(f'module-{n:03d}', 90)}.py" for n in range(count)]
    return {"tools": [{"name": "read", "args": {"path": path}} for path in paths]}


REAL_ONLY: dict[str, CmScenario] = {
    # A manual handoff whose target another extension keeps busy: Pi cannot start the
    # takeover prompt there; the target says so and settles when that run ends.
    "busy handoff target": CmScenario(
        exercises=frozenset(
            {
                "handoff:handoff:takeover:takeover_refused:1",
                "handoff:handoff:takeover_failed:settle:1",
            }
        ),
        argv=(NO_BACKGROUND,),
        steps=(
            Say(text="Keep the public API stable."),
            BUSY,
            Command(args="handoff", replies=({"text": "busy with the other request"},)),
        ),
    ),
    # The automatic handoff of "automatic handoff" (test_pi_cm_differential), into a target
    # another extension keeps busy: automatic handoff pauses there.
    "busy automatic handoff target": CmScenario(
        exercises=frozenset({"auto_handoff:auto_handoff:armed:takeover_failed:1"}),
        window=SMALL,
        auto_compaction=False,
        steps=(
            BUSY,
            *covered("one"),
            *covered("two"),
            *covered("three"),
            *covered("four"),
            Say(
                text=filler("crossing", 40_000),
                replies=({"text": "long"}, {"text": "busy with the other request"}),
            ),
        ),
    ),
    # 158 files read (15 800 bytes of paths: the compaction's checkpoint keeps within its
    # 16 384 bytes) are archived by a compaction, whose file lists the handoff package carries
    # with its own fields: it outgrows 16 384 bytes, and no switch follows.
    "handoff package too large": CmScenario(
        exercises=frozenset({"handoff:handoff:packaging:packaged:1"}),
        argv=(NO_BACKGROUND,),
        keep_recent=2_000,
        steps=(
            Say(text="Read every module.", replies=(_reads(158), {"text": "read"})),
            Say(text=filler("after the reads", 20_000)),
            Compact(),
            Command(args="handoff"),
        ),
    ),
}


NEVER: dict[str, frozenset[str]] = {
    "busy handoff target": frozenset({"handoff:handoff:takeover:takeover_sent:1"}),
    "busy automatic handoff target": frozenset({"handoff:handoff:takeover:takeover_sent:1"}),
    "handoff package too large": frozenset({"handoff:handoff:packaging:packaged:2"}),
}
"""What each scenario must not fire: no takeover prompt into a busy target, no package saved
once it is too large."""


@pytest.mark.parametrize("name", sorted(REAL_ONLY))
def test_pi_refuses_or_outgrows_a_handoff_only_another_extension_or_its_tools_can_cause(
    name: str, tmp_path: Path, pi_install: PiInstall
) -> None:
    # When a scenario where another extension or Pi's own tools act runs on the real Pi
    fired = run_real_only(tmp_path, REAL_ONLY[name], pi_install).fired()
    # Then its diagnostics logs show the extension fired the scenario's transitions, and
    # none of what the refusal or the limit rules out
    assert REAL_ONLY[name].exercised(pi_install.version) <= fired
    assert not NEVER[name] & fired
