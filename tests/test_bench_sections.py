"""The benches share docs/performance.md (issue 11 item 5): each rewrites only its own
section, and the other sections — another bench's, or text written by hand — are kept byte for
byte, whatever order the benches run in."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))

from doc_sections import markers, write_section

HAND = "# Performance\n\nWritten by hand.\n"
VERIFY = "## verify throughput\n\nwritten by bench_verify, up to the next heading\n"
AFTER_VERIFY = (
    "<!-- bench_audit:begin -->\n## bench_audit heading\n\nold\n<!-- bench_audit:end -->\n"
)
"""A section after verify's: bench_verify takes its begin marker when it rewrites its own."""


def _verify_writes(path: Path, text: str) -> None:
    """bench_verify's way: its heading up to the next ``## `` heading is replaced."""
    old = path.read_text(encoding="utf-8")
    start = old.find("## verify throughput")
    end = old.find("\n## ", start + 1)
    new = old[:start] + text.rstrip("\n") + ("\n" + old[end:] if end >= 0 else "\n")
    path.write_text(new, encoding="utf-8")


# File writes on a loaded machine: a time limit per example would measure the load.
@settings(deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["bench_run", "bench_audit", "bench_runtime", "verify"]),
            st.text("ab \n", max_size=12),
        ),
        max_size=8,
    )
)
def test_each_bench_rewrites_only_its_own_section(
    tmp_path_factory: pytest.TempPathFactory, writes: list[tuple[str, str]]
) -> None:
    # Given a hand-written file with the verify section (replaced by heading) and a section
    # after it
    path = tmp_path_factory.mktemp("doc") / "performance.md"
    path.write_text(HAND + "\n" + VERIFY + AFTER_VERIFY, encoding="utf-8")
    latest = {"bench_audit": "## bench_audit heading\n\nold"}
    # When the benches write their sections in any order, any number of times
    for name, body in writes:
        if name == "verify":
            text = f"## verify throughput\n\n{body.strip() or 'v'}\n"
            _verify_writes(path, text)
        else:
            text = f"## {name} heading\n\n{body.strip() or 'x'}\n"
            write_section(path, name, text)
        latest[name] = text.strip()
    final = path.read_text(encoding="utf-8")
    # Then the hand-written text is kept, and each section holds its last text exactly once
    assert final.startswith(HAND)
    for name, text in latest.items():
        assert final.count(text) == 1
        if name != "verify":
            begin, end = markers(name)
            assert final.count(end) == 1 and final.index(text) < final.index(end)
            assert final.count(begin) <= 1  # bench_verify may have taken it: the heading serves
    assert final.count("## verify throughput") == 1
