"""Which Pi versions pi-context supports (``pictx_fsm.hosts.pi.support``): the oldest is
0.87.1, the first with boundary results; an older Pi gets one clear notice at startup."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from node_batch import NodeBatch
from pi_versions import CLI, INSTALLS
from test_pi_bridge import HEADER

from pictx_fsm.extensions.pi_context.runtime import LifecycleRuntime
from pictx_fsm.hosts.pi import serve
from pictx_fsm.hosts.pi.support import (
    NEWEST_TESTED_PI,
    OLDEST_SUPPORTED_PI,
    is_supported,
    version_key,
    version_notice,
)

VERSIONS = st.tuples(*(st.integers(min_value=0, max_value=120) for _ in range(3)))


@given(VERSIONS, st.sampled_from(("", "-beta.1", "-rc.2")))
def test_a_pi_older_than_0_87_1_gets_one_warning_naming_both_versions(
    parts: tuple[int, int, int], suffix: str
) -> None:
    # Given any Pi version (with or without a pre-release suffix)
    version = ".".join(map(str, parts)) + suffix
    notice = version_notice(version)
    # Then exactly the versions before 0.87.1 get the notice, and it names both versions
    assert (notice is not None) is (parts < (0, 87, 1))
    if notice is not None:
        assert notice.level == "warning"
        assert notice.message == (
            f"pi-context: Pi {version} is older than 0.87.1, the oldest Pi pi-context supports; "
            "context windows will not work. Update Pi to 0.87.1 or newer."
        )


def test_every_tested_pi_is_supported_and_the_range_matches_the_installs() -> None:
    # The tested installs span exactly the documented range, and each is supported
    versions = [install.version for install in INSTALLS]
    assert (versions[0], versions[-1]) == (OLDEST_SUPPORTED_PI, NEWEST_TESTED_PI)
    assert all(is_supported(v) and version_notice(v) is None for v in versions)


def test_an_unreadable_version_is_not_judged() -> None:
    assert version_key("dev") is None
    assert version_notice("dev") is None


def _startup(reason: str, pi_version: str | None) -> dict[str, Any]:
    ctx: dict[str, Any] = {"cwd": "/home/demo/project"}
    if pi_version is not None:
        ctx["piVersion"] = pi_version
    return {
        "id": 1,
        "kind": "hook",
        "name": "session_start",
        "event": {"reason": reason},
        "ctx": ctx,
        "session": {"header": HEADER, "entries": [], "leaf": None},
    }


def _notices(*requests: dict[str, Any]) -> list[list[str]]:
    out = io.StringIO()
    serve([json.dumps(r) for r in requests], out, lambda tree, ctx, audit: LifecycleRuntime(tree))
    replies = [json.loads(line) for line in out.getvalue().splitlines()]
    return [[e["message"] for e in r["effects"] if e["effect"] == "notify"] for r in replies]


def test_an_old_pi_gets_the_notice_once_at_startup_through_the_bridge_server() -> None:
    # Given the extension reports Pi 0.80.0 on the startup session_start, then Pi goes on
    turn = {"id": 2, "kind": "hook", "name": "turn_start", "event": {"turnIndex": 0}}
    turn |= {"ctx": {"piVersion": "0.80.0"}, "session": {"entries": [], "leaf": None}}
    start, later = _notices(_startup("startup", "0.80.0"), turn)
    # Then the startup reply carries the one warning, and no later hook repeats it
    assert start == [version_notice("0.80.0").message]  # type: ignore[union-attr]
    assert later == []


@pytest.mark.parametrize(
    ("reason", "pi_version"),
    [("startup", "0.87.1"), ("startup", "1.6.0"), ("startup", None), ("reload", "0.80.0")],
)
def test_a_supported_pi_or_a_later_session_start_gets_no_version_notice(
    reason: str, pi_version: str | None
) -> None:
    # Given a supported Pi at startup, or an old one reloading (it was told at startup)
    [notices] = _notices(_startup(reason, pi_version))
    # Then no notice names Pi's version
    assert not [n for n in notices if "older than" in n]


def test_the_extension_reads_pis_version_from_the_host_module_else_its_package(
    node: NodeBatch, tmp_path: Path
) -> None:
    # Given a Pi package 0.80.0 whose module does not export VERSION, its CLI inside it
    package = tmp_path / "node_modules" / "@earendil-works" / "pi-coding-agent"
    (package / "dist").mkdir(parents=True)
    (package / "package.json").write_text(
        json.dumps({"name": "@earendil-works/pi-coding-agent", "version": "0.80.0"})
    )
    (package / "dist" / "cli.js").write_text("")
    entry = str(package / "dist" / "cli.js")

    def version(module: dict[str, Any], path: str) -> Any:
        return node.ask({"op": "version", "module": module, "entry": path})["version"]

    # Then the module's VERSION wins, the package.json above the CLI comes next, and an
    # unknown Pi is "unknown" (not judged) rather than a failure to load
    assert version({"VERSION": "1.6.0"}, entry) == "1.6.0"
    assert version({}, entry) == "0.80.0"
    assert version({}, str(tmp_path / "missing.js")) == "unknown"
    # And the installed Pi reports its own version the same way
    installed = [install for install in INSTALLS if install.available()]
    for install in installed:
        assert version({}, str(install.home / CLI)) == install.version
