"""Diagrams: IR extraction, Mermaid and DOT text, Graphviz images, overlays and the CLI."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pictx_fsm.audit.store import AUDIT_FORMAT, GENESIS, canonical, digest, write_sealed
from pictx_fsm.cli import main
from pictx_fsm.diagrams import (
    GraphvizMissingError,
    counts_from_audit,
    counts_from_coverage,
    extract,
    render,
    to_dot,
    to_mermaid,
)
from pictx_fsm.errors import UnreadableInputError
from pictx_fsm.machines import MachineSpec, load_machine_document, load_models

FIXTURES = Path(__file__).parent / "fixtures" / "machines"
VALID = FIXTURES / "valid"
GOLDEN = FIXTURES / "golden"
FLAT = load_machine_document(VALID / "toggle_flat.yaml")
PARALLEL = load_machine_document(VALID / "control_parallel.yaml")
REGENERATE = (
    "regenerate with: pictx-fsm diagram --models tests/fixtures/machines/valid "
    "--format {fmt} --out tests/fixtures/machines/golden"
)
needs_graphviz = pytest.mark.skipif(
    shutil.which("dot") is None, reason="Graphviz 'dot' is not installed"
)


# --------------------------------------------------------------------------- text formats


@pytest.mark.parametrize(("fmt", "ext"), [("mermaid", "mmd"), ("dot", "dot")])
@pytest.mark.parametrize("spec", [FLAT, PARALLEL], ids=lambda s: s.name)
def test_text_diagrams_match_their_golden_files(spec: MachineSpec, fmt: str, ext: str) -> None:
    golden = (GOLDEN / f"{spec.name}.{ext}").read_bytes()
    assert render(spec, fmt) == golden, REGENERATE.format(fmt=fmt)


@pytest.mark.parametrize("fmt", ["mermaid", "dot"])
def test_text_diagrams_are_byte_identical_across_processes_and_hash_seeds(fmt: str) -> None:
    # Given two separate interpreters with different string-hash seeds
    def run(seed: str) -> bytes:
        program = "import sys; from pictx_fsm.cli import main; sys.exit(main(sys.argv[1:]))"
        command = [sys.executable, "-c", program, "diagram", "--format", fmt]
        environment = dict(os.environ, PYTHONHASHSEED=seed)
        command += ["--models", str(VALID)]
        return subprocess.run(command, capture_output=True, check=True, env=environment).stdout

    # Then the text is the same bytes (nothing depends on set order or addresses)
    assert run("1") == run("2")


def test_mermaid_draws_regions_as_concurrent_composites_inside_the_parallel_state() -> None:
    text = to_mermaid(extract(PARALLEL))
    assert text.startswith("---\ntitle: control_parallel\n---\nstateDiagram-v2\n")
    # The two regions are composite states separated by the concurrency marker
    assert re.search(
        r"state r_request \{.*\n\s+--\n\s+state \"overflow\" as r_overflow", text, re.S
    )
    # A hyphenated state keeps its name as the label behind a Mermaid-safe id
    assert 'state "pending-spent" as s_pending_spent' in text


def test_mermaid_has_one_labelled_arrow_per_declared_transition() -> None:
    lines = to_mermaid(extract(PARALLEL)).splitlines()
    arrows = [line.strip() for line in lines if " --> s_" in line and "[*]" not in line]
    assert len(arrows) == len(PARALLEL.transitions)
    assert (
        "s_explicit --> s_none : turn_end [not spent and (ready or forced)] / start_reset, "
        "note_reset" in arrows
    )
    assert "s_pending --> s_idle : turn_end [unless ready or forced]" in arrows


def test_dot_lists_self_transitions_in_the_state_and_merges_parallel_arrows() -> None:
    text = to_dot(extract(FLAT))
    # The self-transitions of `on` are lines inside its box
    assert '<TD ALIGN="LEFT">tick [not allowed and (pinned or noisy)] / explode</TD>' in text
    # Two transitions on -> off share one arrow, one left-justified line each
    assert (
        '"toggle_flat/on" -> "toggle_flat/off" '
        '[label="disable [unless pinned] / announce\\ltick [noisy]\\l"];'
    ) in text


def test_dot_has_a_cluster_per_region_inside_the_parallel_state() -> None:
    text = to_dot(extract(PARALLEL))
    assert 'subgraph "cluster_control" {' in text
    assert 'subgraph "cluster_request" {' in text
    assert 'subgraph "cluster_overflow" {' in text
    assert '"overflow/[*]" -> "overflow/idle";' in text


# --------------------------------------------------------------------------- overlay


@settings(max_examples=50)
@given(data=st.data())
def test_the_overlay_annotates_every_transition_with_its_count_or_never_fired(
    data: st.DataObject,
) -> None:
    # Given firing counts for a random subset of the transitions
    ids = [t.id for t in PARALLEL.transitions]
    counts = data.draw(st.dictionaries(st.sampled_from(ids), st.integers(0, 50)))
    # When the Mermaid diagram is drawn with them
    arrows = [line for line in to_mermaid(extract(PARALLEL, counts)).splitlines() if " : " in line]
    # Then each transition's arrow says how often it fired, or that it never did
    for transition, arrow in zip(PARALLEL.transitions, arrows, strict=True):
        count = counts.get(transition.id, 0)
        expected = "(never fired)" if count == 0 else f"(fired {count})"
        assert arrow.endswith(expected)


def test_dot_marks_an_arrow_whose_transitions_never_fired_dashed_red() -> None:
    # Given counts where only `enable [allowed]` fired
    counts = {"toggle_flat:toggle_flat:off:enable:1": 4}
    text = to_dot(extract(FLAT, counts))
    # Then that arrow is plain with its count, the on -> off arrow is dashed red
    assert '[label="enable [allowed] / announce, remember (fired 4)\\l"];' in text
    assert 'tick [noisy] (never fired)\\l", style=dashed, color="red"' in text
    # And never-fired self-transitions are red lines inside their state
    assert '<FONT COLOR="red">tick (never fired)</FONT>' in text


# --------------------------------------------------------------------------- images


@needs_graphviz
@pytest.mark.parametrize(("fmt", "magic"), [("svg", b"<svg"), ("png", b"\x89PNG\r\n\x1a\n")])
def test_images_are_rendered_by_graphviz(fmt: str, magic: bytes) -> None:
    image = render(PARALLEL, fmt, {})
    assert magic in image[:400]


def test_without_graphviz_images_fail_saying_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Given a PATH without the dot program
    monkeypatch.setenv("PATH", str(tmp_path))
    # Then rendering an image raises the typed error with the install hint
    with pytest.raises(GraphvizMissingError) as caught:
        render(FLAT, "svg")
    assert "Graphviz is missing" in str(caught.value)
    assert "apt-get install graphviz" in str(caught.value)
    assert caught.value.exit_code == 2


def test_the_diagram_command_exits_2_when_graphviz_is_missing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    code = main(["diagram", "--models", str(VALID), "--format", "png", "--out", str(tmp_path)])
    assert code == 2
    assert "Debian package 'graphviz'" in capsys.readouterr().err


# --------------------------------------------------------------------------- counts readers


def test_counts_from_audit_reads_the_steps_of_records_written_by_the_audit_log(
    tmp_path: Path,
) -> None:
    # Given records shaped like pictx_fsm.audit.log's: fired transitions per machine step
    log = tmp_path / "audit.jsonl"
    step = {"machine": "m", "event": "go", "transitions": [{"id": "m:r:a:go:1"}]}
    records = [{"seq": 1, "steps": [step, step]}, {"seq": 2, "steps": []}]
    log.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    # Then every step's transitions count
    assert counts_from_audit(log) == {"m:r:a:go:1": 2}


def test_counts_from_audit_counts_every_listed_transition_id(tmp_path: Path) -> None:
    # Given an audit log whose records list fired transitions (one record fired none)
    log = tmp_path / "audit.jsonl"
    records = [
        {"seq": 1, "transitions": [{"id": "m:r:a:go:1"}, {"id": "m:r:b:go:1"}]},
        {"seq": 2, "transitions": []},
        {"seq": 3, "transitions": [{"id": "m:r:a:go:1", "guards": {"x": True}}]},
        {"seq": 4, "header": True},
    ]
    log.write_text("\n".join(json.dumps(r) for r in records) + "\n\n")
    # Then the counts add up per id
    assert counts_from_audit(log) == {"m:r:a:go:1": 2, "m:r:b:go:1": 1}


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ('{"transitions": []}\n{"transitions": [\n', "line 2: not JSON"),
        ('{"transitions": [{"name": "x"}]}\n', "line 1: 'transitions': each item needs"),
        ('{"transitions": {"id": "x"}}\n', "line 1: 'transitions' must be a list"),
        ("[1, 2]\n", "line 1: a record must be an object"),
        ('{"seq": 1}\n', "no record lists fired 'transitions'"),
        ('{"steps": {"transitions": []}}\n', "line 1: 'steps' must be a list"),
        ('{"steps": [{"transitions": "x"}]}\n', "line 1: 'transitions' must be a list"),
    ],
)
def test_counts_from_audit_refuses_malformed_logs_naming_the_line(
    tmp_path: Path, content: str, reason: str
) -> None:
    log = tmp_path / "audit.jsonl"
    log.write_text(content)
    with pytest.raises(UnreadableInputError, match=re.escape(reason)):
        counts_from_audit(log)


def test_counts_from_coverage_reads_an_object_of_counts(tmp_path: Path) -> None:
    path = tmp_path / "coverage.json"
    path.write_text('{"b": 0, "a": 3}')
    assert counts_from_coverage(path) == {"a": 3, "b": 0}


@pytest.mark.parametrize("content", ['{"a": -1}', '{"a": 1.5}', '{"a": true}', "[]", "{"])
def test_counts_from_coverage_refuses_anything_but_non_negative_integers(
    tmp_path: Path, content: str
) -> None:
    path = tmp_path / "coverage.json"
    path.write_text(content)
    with pytest.raises(UnreadableInputError):
        counts_from_coverage(path)


# --------------------------------------------------------------------------- CLI


def test_the_diagram_command_prints_text_formats_to_stdout(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["diagram", "--models", str(VALID), "--machine", "toggle_flat"]) == 0
    assert capsys.readouterr().out == (GOLDEN / "toggle_flat.mmd").read_text()


def test_the_diagram_command_writes_one_file_per_machine_with_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["diagram", "--models", str(VALID), "--format", "dot", "--out", str(tmp_path)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["control_parallel.dot", "toggle_flat.dot"]
    assert (tmp_path / "toggle_flat.dot").read_bytes() == (GOLDEN / "toggle_flat.dot").read_bytes()


@pytest.mark.parametrize("fmt", ["svg", "png"])
def test_image_formats_without_out_are_a_usage_error(
    fmt: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["diagram", "--models", str(VALID), "--format", fmt]) == 2
    assert "give --out DIR" in capsys.readouterr().err


def test_the_diagram_command_overlays_a_trace_and_warns_about_undeclared_ids(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given an audit log with one declared and one undeclared transition id
    log = tmp_path / "audit.jsonl"
    fired = [{"id": "toggle_flat:toggle_flat:off:tick:1"}, {"id": "toggle_flat:gone:x:y:1"}]
    _chained(log, [{"transitions": fired}])
    # When the flat machine is drawn with it
    code = main(
        ["diagram", "--models", str(VALID), "--machine", "toggle_flat", "--trace", str(log)]
    )
    captured = capsys.readouterr()
    # Then the fired transition is annotated, the rest never fired, and the stranger reported
    assert code == 0
    assert "s_off --> s_off : tick (fired 1)" in captured.out
    assert "s_on --> s_off : tick [noisy] (never fired)" in captured.out
    assert "1 counted transition id(s) match no declared transition" in captured.err


def test_the_diagram_command_adds_trace_and_coverage_counts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log, coverage = tmp_path / "audit.jsonl", tmp_path / "coverage.json"
    _chained(log, [{"transitions": [{"id": "toggle_flat:toggle_flat:off:tick:1"}]}])
    coverage.write_text(json.dumps({"toggle_flat:toggle_flat:off:tick:1": 2}))
    arguments = ["--models", str(VALID), "--machine", "toggle_flat"]
    assert main(["diagram", *arguments, "--trace", str(log), "--coverage", str(coverage)]) == 0
    assert "s_off --> s_off : tick (fired 3)" in capsys.readouterr().out


def _chained(path: Path, bodies: list[dict[str, object]]) -> None:
    """A sealed audit log whose records carry these bodies, chained as the log chains them."""
    records, previous = [], GENESIS
    for seq, body in enumerate(bodies, start=1):
        record = {**body, "format": AUDIT_FORMAT, "seq": seq, "prev": previous}
        previous = digest(canonical(record))
        records.append({**record, "hash": previous})
    write_sealed(path, records)


def test_the_diagram_command_refuses_a_broken_trace_unless_told_otherwise(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a sealed log whose first record was edited after it was written
    log = tmp_path / "audit.jsonl"
    _chained(log, [{"transitions": [{"id": "toggle_flat:toggle_flat:off:tick:1"}]}] * 2)
    log.write_text(log.read_text().replace("tick:1", "tick:2", 1))
    arguments = ["diagram", "--models", str(VALID), "--machine", "toggle_flat", "--trace", str(log)]
    # When it is drawn / Then it is refused with the line, unless --allow-broken-log is given
    assert main(arguments) == 2
    assert f"{log}: line 1: record hash does not match its content" in capsys.readouterr().err
    assert main([*arguments, "--allow-broken-log"]) == 0
    captured = capsys.readouterr()
    assert "(fired 1)" in captured.out
    assert f"warning: {log}:1: record hash does not match" in captured.err


def test_every_fixture_machine_renders_in_every_text_format() -> None:
    for spec in load_models(VALID).values():
        assert render(spec, "mermaid").endswith(b"\n")
        assert render(spec, "dot").endswith(b"}\n")
