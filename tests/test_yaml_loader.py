"""The machine documents are parsed with libyaml's C loader where PyYAML has it (issue 11
item 4): it must read every document exactly as the pure-Python statechart loader does —
``on``/``off`` stay strings, duplicate keys are refused."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from statemachine.io.yaml.reader import YAMLReader

from pictx_fsm.errors import ModelDocumentError
from pictx_fsm.machines import document
from pictx_fsm.machines.document import _parse_yaml, _strict_yaml_loader

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTS = sorted(ROOT.glob("models/**/*.yaml")) + sorted(
    ROOT.glob("tests/fixtures/machines/**/*.yaml")
)


def test_the_c_loader_is_used_where_libyaml_is_built_in() -> None:
    if not yaml.__with_libyaml__:
        pytest.skip("PyYAML without libyaml: the pure-Python loader is used")
    assert issubclass(_strict_yaml_loader(), yaml.CSafeLoader)


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_document_reads_the_same_with_the_c_and_the_python_loader(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    try:  # python-statemachine's own YAML reader (its public format adapter)
        expected = YAMLReader().parse_document(text)
    except yaml.YAMLError:
        with pytest.raises(ModelDocumentError):
            _parse_yaml(text, path.name)
        return
    try:
        got = _parse_yaml(text, path.name)
    except ModelDocumentError as error:  # only the duplicate-key refusal may differ
        assert "duplicate key" in str(error)
        return
    assert got == expected


def test_on_and_off_stay_strings_and_duplicates_are_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert _parse_yaml("states: [on, off, yes]\nflag: true\n", "t.yaml") == {
        "states": ["on", "off", "yes"],
        "flag": True,
    }
    with pytest.raises(ModelDocumentError, match="duplicate key 'a'"):
        _parse_yaml("a: 1\na: 2\n", "t.yaml")
    monkeypatch.setattr(document, "_LOADER", None)
    monkeypatch.delattr(yaml, "CSafeLoader")
    assert not issubclass(_strict_yaml_loader(), yaml.CLoader)
    assert _parse_yaml("states: [on, off]\n", "t.yaml") == {"states": ["on", "off"]}


@pytest.mark.parametrize(
    "word",
    [
        "on",
        "off",
        "On",
        "OFF",
        "yes",
        "no",
        "Yes",
        "NO",
        "y",
        "n",
        "true",
        "false",
        "True",
        "FALSE",
        "null",
        "~",
        "12",
        "1.5",
        "0x1F",
        "2026-01-01",
        "state-a",
    ],
)
def test_every_scalar_reads_as_python_statemachines_own_reader_reads_it(word: str) -> None:
    # Given a document whose state ids and flags are YAML 1.1's special words
    text = f"states: [{word}]\nflag: {word}\n"
    # When the project's loader and python-statemachine's reader both read it
    # Then they read the same values (booleans only from true/false, the rest as YAML reads)
    assert _parse_yaml(text, "t.yaml") == YAMLReader().parse_document(text)
