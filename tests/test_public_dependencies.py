"""No private internals of any dependency (issue 23, item 5): every module of pictx_fsm uses
Hypothesis and python-statemachine through their public names only, no undocumented part of
CPython's ``json.encoder``, and generates no code (``exec``, ``eval``, ``compile`` to run).
An AST scan of the package keeps it so; each kind of finding is planted once to show the scan
reports it."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import pytest

import pictx_fsm

PACKAGE = Path(pictx_fsm.__file__).resolve().parent
PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"
"""The checkout's: the README installs the package non-editable, without pyproject.toml."""
GUARDED = ("hypothesis", "statemachine")
"""Libraries whose private names (a ``_`` segment, Hypothesis's ``internal``) are off limits."""
CODE_RUNNERS = frozenset({"exec", "eval"})


def _private_path(module: str) -> bool:
    parts = module.split(".")
    if parts[0] not in GUARDED:
        return False
    return any(part.startswith("_") or part == "internal" for part in parts[1:])


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def findings(source: str, where: str) -> list[str]:
    """Every use of a private dependency name, of ``json.encoder`` or of code generation in
    ``source``, as ``where:line: what``."""
    tree = ast.parse(source)
    guarded: set[str] = set()  # local names bound to a guarded library or its parts
    found: list[str] = []

    def report(node: ast.AST, what: str) -> None:
        found.append(f"{where}:{getattr(node, 'lineno', 0)}: {what}")

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _private_path(alias.name) or alias.name.startswith("json.encoder"):
                    report(node, f"import {alias.name}")
                if alias.name.split(".")[0] in GUARDED:
                    guarded.add((alias.asname or alias.name).split(".")[0])
        elif isinstance(node, ast.ImportFrom) and node.module is not None:
            module = node.module
            if _private_path(module) or module == "json.encoder":
                report(node, f"from {module} import ...")
            if module.split(".")[0] in GUARDED:
                for alias in node.names:
                    if _private(alias.name):
                        report(node, f"from {module} import {alias.name}")
                    guarded.add(alias.asname or alias.name)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            base = node.value
            if isinstance(base, ast.Name) and base.id in guarded and _private(node.attr):
                report(node, f"{base.id}.{node.attr}")
            if node.attr == "encoder" and isinstance(base, ast.Name) and base.id == "json":
                report(node, "json.encoder")
            if node.attr == "c_make_encoder":
                report(node, "c_make_encoder")
        elif isinstance(node, ast.Constant) and node.value == "c_make_encoder":
            report(node, "'c_make_encoder'")
        elif isinstance(node, ast.Call):
            function = node.func
            name = (
                function.id
                if isinstance(function, ast.Name)
                else function.attr
                if isinstance(function, ast.Attribute)
                else None
            )
            if name in CODE_RUNNERS:
                report(node, f"{name}(...)")
            modes = [arg.value for arg in node.args[2:3] if isinstance(arg, ast.Constant)]
            if name == "compile" and isinstance(function, ast.Name) and modes:
                report(node, f"compile(..., {modes[0]!r})")
    return found


def test_no_module_of_pictx_fsm_uses_a_private_dependency_name_or_generates_code() -> None:
    # Given every module of the package
    modules = sorted(PACKAGE.rglob("*.py"))
    assert len(modules) > 100
    # When each is scanned
    found = [
        finding
        for path in modules
        for finding in findings(path.read_text(encoding="utf-8"), str(path.relative_to(PACKAGE)))
    ]
    # Then none imports or reads a private name of Hypothesis or python-statemachine, uses
    # json.encoder's undocumented functions, or runs generated code
    assert found == []


@pytest.mark.parametrize(
    ("source", "what"),
    [
        ("from hypothesis.internal.conjecture import utils", "from hypothesis.internal"),
        ("import hypothesis.internal.compat", "import hypothesis.internal.compat"),
        ("from hypothesis.strategies._internal.core import X", "_internal"),
        ("from hypothesis.control import _current_build_context", "_current_build_context"),
        ("from statemachine.event import _event_data_kwargs", "_event_data_kwargs"),
        ("from statemachine.io.yaml import reader\nreader._make_loader(y)", "reader._make_loader"),
        ("import hypothesis as h\nh._x", "h._x"),
        ("import json\njson.encoder.c_make_encoder(1)", "c_make_encoder"),
        ("import json\ngetattr(json.encoder, 'c_make_encoder')", "json.encoder"),
        ("from json.encoder import encode_basestring", "from json.encoder import"),
        ("exec('x = 1', {})", "exec(...)"),
        ("value = eval('1 + 1')", "eval(...)"),
        ("code = compile(src, '<made>', 'exec')", "compile(..., 'exec')"),
    ],
)
def test_the_scan_reports_each_kind_of_private_use(source: str, what: str) -> None:
    # Given a module that does one of the forbidden things
    # When it is scanned / Then the scan names it, with its line
    found = findings(source, "planted.py")
    assert any(what in finding for finding in found), found
    assert all(finding.startswith("planted.py:") for finding in found)


def test_the_scan_leaves_public_names_alone() -> None:
    # Given public uses of the same libraries, a regular expression compiled, a dunder read
    source = (
        "import re\nimport json\nimport hypothesis\n"
        "from hypothesis import strategies as st, given, seed, settings\n"
        "from statemachine import StateChart\nfrom statemachine.io.yaml.reader import YAMLReader\n"
        "PATTERN = re.compile('a')\nENCODE = json.JSONEncoder(sort_keys=True).encode\n"
        "VERSION = hypothesis.__version__\n"
    )
    # When it is scanned / Then nothing is reported
    assert findings(source, "public.py") == []


def test_every_dependency_and_extra_is_bounded_below_its_next_major_version() -> None:
    # Given every requirement of pyproject.toml: the build's, the runtime's, every extra's
    pyproject = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))
    project = pyproject["project"]
    requirements = [
        *pyproject["build-system"]["requires"],
        *project["dependencies"],
        *(r for extra in project["optional-dependencies"].values() for r in extra),
    ]
    assert len(requirements) > 10
    # When each is read / Then each names an upper bound ("<" or a compatible release "~=")
    unbounded = [r for r in requirements if not re.search(r"<|~=", r)]
    assert unbounded == []
