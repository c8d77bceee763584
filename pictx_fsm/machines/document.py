"""Load and validate machine declarations (``models/<name>.yaml``) into a frozen IR.

The document format is python-statemachine's own native YAML/JSON vocabulary, parsed and
checked by its own parser (:func:`statemachine.io.native.native_dict_to_definition`), so a
document here is a document there. On top of that vocabulary pictx_fsm accepts a deliberate
subset that both engines (the compiled table and python-statemachine itself) execute alike:

- a machine is **flat** (top-level atomic states: one implicit region named after the machine)
  or has exactly **one top-level ``parallel: true`` state** whose children are the regions, each
  a compound state of atomic states (no deeper nesting);
- every region (and a flat machine) marks exactly one state ``initial: true``;
- a transition has one ``event``, one ``target`` in its own region, an optional ``cond`` /
  ``unless`` over guard names (see :mod:`pictx_fsm.machines.conditions`) and named actions under
  ``before`` (a string or a list of strings); an ignored event is an explicit self-transition;
- no history, invoke, datamodel, final states, enter/exit actions, ``on``/``after`` slots,
  structured actions, eventless or targetless transitions;
- the document has a ``name`` equal to its file stem and a non-empty ``description``; state ids
  are unique across the machine (python-statemachine keys states by id and would merge two);
  YAML mappings have no duplicate keys (PyYAML would silently keep the last);
- guard and action names stay clear of what python-statemachine resolves by itself (injected
  callback arguments, naming conventions such as ``on_<event>``, and for actions the machine's
  own attributes, top-level states and events), an action is listed at most once per
  transition (the library would run it once), and no name is both a guard and an action.

Anything else is refused at load with a :class:`~pictx_fsm.errors.ModelDocumentError` naming
the document, the element (``line N``, ``state 'x'``, ``state 'x', transition 2 (event)``) and
the offending reference, so a broken model fails when it is loaded, not when an event arrives.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from statemachine.exceptions import InvalidDefinition
from statemachine.io.native import native_dict_to_definition

from pictx_fsm.errors import ModelDocumentError
from pictx_fsm.machines.analysis import completeness_gaps, fingerprint
from pictx_fsm.machines.builder import build_spec
from pictx_fsm.machines.spec import MachineSpec, RegionSpec, TransitionSpec

__all__ = [
    "DOCUMENT_SUFFIXES",
    "MachineSpec",
    "RegionSpec",
    "TransitionSpec",
    "completeness_gaps",
    "fingerprint",
    "load_machine_document",
    "load_models",
]

DOCUMENT_SUFFIXES = (".yaml", ".yml", ".json")


def load_models(directory: str | os.PathLike[str]) -> dict[str, MachineSpec]:
    """Load every ``*.yaml`` / ``*.yml`` / ``*.json`` document of ``directory``, by name."""
    root = Path(directory)
    if not root.is_dir():
        raise ModelDocumentError(str(root), "directory", "no such models directory")
    specs: dict[str, MachineSpec] = {}
    for path in sorted(p for p in root.iterdir() if p.suffix in DOCUMENT_SUFFIXES):
        spec = load_machine_document(path)
        if spec.name in specs:
            raise ModelDocumentError(
                str(path),
                "name",
                f"machine {spec.name!r} is also declared in {specs[spec.name].source}",
            )
        specs[spec.name] = spec
    return dict(sorted(specs.items()))


def load_machine_document(path: str | os.PathLike[str]) -> MachineSpec:
    """Read, parse and validate one machine document into a :class:`MachineSpec`."""
    file = Path(path)
    document = str(file)
    try:
        data = file.read_bytes()
    except OSError as exc:
        raise ModelDocumentError(document, "file", exc.strerror or str(exc)) from None
    raw = _parse(data, file, document)
    _check_header(raw, file, document)
    try:
        definition = native_dict_to_definition(raw, source_name=file.stem)
    except (InvalidDefinition, KeyError, TypeError, AttributeError, ValueError) as exc:
        raise ModelDocumentError(document, "document", str(exc)) from None
    return build_spec(document, raw, definition, data)


def _parse(data: bytes, file: Path, document: str) -> Any:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ModelDocumentError(document, "document", f"not UTF-8 ({exc.reason})") from None
    if file.suffix == ".json":
        return _parse_json(text, document)
    return _parse_yaml(text, document)


def _parse_json(text: str, document: str) -> Any:
    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [key for key, _ in items]
        duplicates = sorted({key for key in keys if keys.count(key) > 1})
        if duplicates:
            raise ModelDocumentError(document, "document", f"duplicate key(s) {duplicates}")
        return dict(items)

    try:
        return json.loads(text, object_pairs_hook=pairs)
    except json.JSONDecodeError as exc:
        raise ModelDocumentError(document, f"line {exc.lineno}", exc.msg) from None


def _parse_yaml(text: str, document: str) -> Any:
    try:
        return yaml.load(text, Loader=_strict_yaml_loader())  # a SafeLoader subclass
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"line {mark.line + 1}" if mark is not None else "document"
        context = exc.context
        if context and exc.context_mark is not None and exc.context_mark is not mark:
            context = f"{context} (from line {exc.context_mark.line + 1})"
        reason = " ".join(part for part in (context, exc.problem) if part)
        raise ModelDocumentError(document, where, reason or str(exc)) from None
    except yaml.YAMLError as exc:
        raise ModelDocumentError(document, "document", str(exc)) from None


_LOADER: type[yaml.SafeLoader] | None = None


def _statechart_resolvers(
    resolvers: dict[str, list[tuple[str, Any]]],
) -> dict[str, list[tuple[str, Any]]]:
    """YAML 1.1's implicit resolvers with booleans only for ``true``/``false``: ``on``,
    ``off``, ``yes`` and ``no`` stay strings (state ids), as python-statemachine's own YAML
    reader reads them (``tests/test_yaml_loader.py`` holds both to it)."""
    return {
        first: [
            (tag, pattern)
            for tag, pattern in entries
            if not (tag == "tag:yaml.org,2002:bool" and first not in "tTfF")
        ]
        for first, entries in resolvers.items()
    }


def _base_loader() -> type[Any]:
    """libyaml's C parser where PyYAML was built with it (several times faster), else the
    pure-Python one, with python-statemachine's resolvers (``on``/``off`` stay strings)."""
    base: type[Any] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class StatechartLoader(base):  # type: ignore[misc,valid-type]
        yaml_implicit_resolvers = _statechart_resolvers(yaml.SafeLoader.yaml_implicit_resolvers)

    return StatechartLoader


def _strict_yaml_loader() -> type[yaml.SafeLoader]:
    """python-statemachine's loader (keeps ``on``/``off`` as strings), refusing duplicate keys.

    PyYAML keeps the last of two equal keys; two states with one id would silently lose one.
    """
    global _LOADER
    if _LOADER is None:
        base = _base_loader()

        class StrictLoader(base):  # type: ignore[valid-type,misc]
            def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> Any:
                seen: set[Any] = set()
                for key_node, _ in node.value:
                    key = self.construct_object(key_node, deep=deep)
                    if not isinstance(key, str):
                        continue
                    if key in seen:
                        raise yaml.constructor.ConstructorError(
                            "while constructing a mapping",
                            node.start_mark,
                            f"found duplicate key {key!r}",
                            key_node.start_mark,
                        )
                    seen.add(key)
                return super().construct_mapping(node, deep=deep)

        _LOADER = StrictLoader
    return _LOADER


def _check_header(raw: Any, file: Path, document: str) -> None:
    if not isinstance(raw, Mapping):
        raise ModelDocumentError(document, "document", "a machine document must be a mapping")
    name = raw.get("name")
    if not isinstance(name, str) or not name.isidentifier():
        raise ModelDocumentError(document, "name", f"'name' must be an identifier, got {name!r}")
    if name != file.stem:
        raise ModelDocumentError(
            document, "name", f"machine {name!r} must live in a file named {name}{file.suffix}"
        )
    description = raw.get("description")
    if not isinstance(description, str) or not description.strip():
        raise ModelDocumentError(document, "description", "a non-empty 'description' is required")
    if raw.get("datamodel") is not None:
        raise ModelDocumentError(
            document, "datamodel", "a datamodel is not supported: guards read typed facts instead"
        )
