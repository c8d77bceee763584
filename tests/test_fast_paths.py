"""Fast paths that must answer exactly as the general code they shortcut (issue 11).

Each hot-path shortcut keeps the general computation for what it does not handle; these
properties quantify over the inputs where the two could part: symbolic links anywhere on a
notes path, every millisecond of ``toISOString``'s range, every 128-bit draw of a UUID.
"""

from __future__ import annotations

import json
import os
import random
import uuid
from collections import OrderedDict
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pictx_fsm.extensions.pi_context.notes import FileNotesSource
from pictx_fsm.extensions.pi_context.tools.homes import NotesIdentity, NotesPlace, OutsideNotesRoot
from pictx_fsm.fastjson import dumper, loads
from pictx_fsm.js import is_plain_object
from pictx_fsm.session.ids import uuid_draws
from pictx_fsm.session.writer import iso

NAMES = ("a", "b", "link", "up", "dangling", "file.md", "..", ".")
LINKS = st.fixed_dictionaries(
    {},
    optional={
        "link": st.sampled_from(("a", "../outside", "a/b", "/", "missing", "file.md")),
        "a/up": st.sampled_from(("..", "../..", "b", "../a")),
        "a/b/dangling": st.sampled_from(("nowhere", "../../../outside/x")),
    },
)


def _confined_by_realpath(root: Path, path: Path) -> bool:
    """The general rule: the path's real path lies inside the root's."""
    real_root = os.path.realpath(root)
    return os.path.commonpath((real_root, os.path.realpath(path))) == real_root


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(links=LINKS, parts=st.lists(st.sampled_from(NAMES), min_size=1, max_size=5))
def test_confine_refuses_exactly_the_paths_whose_real_path_leaves_the_root(
    tmp_path_factory: pytest.TempPathFactory, links: dict[str, str], parts: list[str]
) -> None:
    # Given a notes root with directories, a note file and links in, out and nowhere
    base = tmp_path_factory.mktemp("confine")
    root = base / "root"
    (root / "a" / "b").mkdir(parents=True)
    (base / "outside").mkdir()
    (root / "file.md").write_text("x")
    for link, target in links.items():
        (root / link).symlink_to(target)
    place = NotesPlace(root=root, identity=NotesIdentity.of_session("s", base))
    path = root.joinpath(*parts)
    # When confine judges a path below it
    try:
        place.confine(path, "address")
        refused = False
    except OutsideNotesRoot:
        refused = True
    # Then it refuses exactly what the real paths say is outside
    assert refused == (not _confined_by_realpath(root, path))


@given(ms=st.integers(min_value=0, max_value=253_402_300_799_999))
def test_iso_is_to_iso_string_of_the_exact_millisecond(ms: int) -> None:
    expected = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=ms)
    assert iso(ms) == expected.isoformat(timespec="milliseconds").replace("+00:00", "Z")


@given(
    day=st.integers(min_value=0, max_value=2_932_896),
    offsets=st.lists(st.integers(min_value=0, max_value=86_399_999), min_size=2, max_size=6),
)
def test_iso_of_milliseconds_of_one_day_reuses_its_date_exactly(
    day: int, offsets: list[int]
) -> None:
    # Given several instants of one UTC day (the date part is kept after the first)
    for offset in offsets:
        ms = day * 86_400_000 + offset
        # When each is printed
        # Then each is the ISO string of its exact millisecond
        expected = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=ms)
        assert iso(ms) == expected.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def test_iso_of_the_last_millisecond_javascript_can_print_with_four_year_digits() -> None:
    # new Date(253402300799999).toISOString() in Node
    assert iso(253_402_300_799_999) == "9999-12-31T23:59:59.999Z"


@given(seed=st.integers(min_value=0, max_value=2**32))
def test_uuid_draws_are_uuid4_hex_of_the_same_bits(seed: int) -> None:
    draws, bits = uuid_draws(random.Random(seed)), random.Random(seed)
    for _ in range(20):
        assert next(draws) == uuid.UUID(int=bits.getrandbits(128), version=4).hex


@given(
    value=st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
        lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner),
        max_leaves=12,
    )
)
def test_fast_loads_decodes_every_json_text_as_the_standard_decoder(value: object) -> None:
    import json

    for text in (json.dumps(value), json.dumps(value, ensure_ascii=False)):
        decoded, expected = loads(text), json.loads(text)
        assert json.dumps(decoded) == json.dumps(expected)  # 1 and 1.0 spelled apart


DIGIT_RUNS = st.from_regex(r"\A[a-f\" :,.eE+-]?[0-9]{17,40}[a-f0-9 ]?\Z")
"""Texts around a long run of digits: a hash's, a number's spelled in a string."""


@given(
    value=st.recursive(
        st.integers(min_value=-(10**30), max_value=10**30)
        | st.floats(allow_nan=False)
        | DIGIT_RUNS,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(DIGIT_RUNS, inner, max_size=3),
        max_leaves=8,
    )
)
def test_fast_loads_reads_long_digit_runs_in_strings_and_numbers_as_the_standard_decoder(
    value: object,
) -> None:
    # Given JSON holding long runs of digits, in strings (keys, values) and as big numbers
    for text in (json.dumps(value), json.dumps(value, indent=1)):
        # When both decoders read it
        decoded, expected = loads(text), json.loads(text)
        # Then they read the same value (1 and 1.0 spelled apart)
        assert json.dumps(decoded) == json.dumps(expected)


@pytest.mark.parametrize("number", ["123456789012345678901234567890", "-9223372036854775809"])
def test_a_tool_call_id_beyond_64_bits_reads_the_same_from_orjson_and_the_standard_decoder(
    number: str,
) -> None:
    # Given a tool call whose id is an integer orjson reads as a float
    import json

    import orjson

    from pictx_fsm.session.skeleton import tool_call_ids

    content = f'[{{"type":"toolCall","id":{number},"name":"x","arguments":{{}}}}]'
    # When the skeleton reads its id from either decoder's value
    # Then it is the same JavaScript number
    assert tool_call_ids("assistant", orjson.loads(content)) == tool_call_ids(
        "assistant", json.loads(content)
    )


JSON_LIKE = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text()
    | st.builds(object)
    | st.sampled_from([datetime(2026, 1, 1, tzinfo=UTC), uuid.UUID(int=7)]),
    lambda inner: st.lists(inner) | st.tuples(inner, inner) | st.dictionaries(st.text(), inner),
    max_leaves=12,
)
"""JSON values, non-finite floats, lone surrogates and values JSON cannot hold."""


def _outcome(encode: Callable[[object], str], value: object) -> tuple[str, str]:
    try:
        return "text", encode(value)
    except (TypeError, ValueError) as error:
        return type(error).__name__, str(error)


@pytest.mark.parametrize(
    "settings_",
    [
        {},
        {"sort_keys": True, "separators": (",", ":")},
        {"separators": (",", ":"), "ensure_ascii": False, "allow_nan": False},
        {"sort_keys": True, "default": str},
        {"sort_keys": True, "separators": (",", ":"), "default": repr, "check_circular": False},
    ],
)
@given(value=JSON_LIKE)
def test_a_built_dumper_writes_what_json_dumps_writes_and_raises_what_it_raises(
    settings_: dict[str, Any], value: object
) -> None:
    # Given json.dumps's settings, and a dumper built once with them
    encode = dumper(**settings_)
    # When both encode any value, a finite JSON one or not
    # Then they write the same text, or raise the same error
    assert _outcome(encode, value) == _outcome(lambda v: json.dumps(v, **settings_), value)


def test_a_dumper_that_met_a_circular_value_encodes_the_same_containers_once_it_is_gone() -> None:
    # Given a dumper that checks for circular values, and a list that holds itself
    encode = dumper(sort_keys=True)
    circular: list[object] = [1]
    circular.append(circular)
    inner: list[object] = [2, circular]
    outer = {"a": inner}
    # When it meets the circular list inside containers that live on, as json.dumps does
    with pytest.raises(ValueError, match="Circular reference"):
        encode(outer)
    # Then once the cycle is gone, those same containers encode (none is left marked)
    inner.pop()
    assert encode(outer) == json.dumps(outer, sort_keys=True) == '{"a": [2]}'


@pytest.mark.parametrize("home", ["/notes/home", "relative/home", Path("/notes/home")])
def test_a_notes_source_places_its_notes_at_the_path_of_its_home(home: str | Path) -> None:
    # Given a file notes source whose home is a text or a path
    source = FileNotesSource(home=home, identity=NotesIdentity(session_id="s", project_key="p"))  # type: ignore[arg-type]
    # When its place and a tool's context name the root
    roots = (
        source.place.root,
        source.tool_context(model_id=None, history=None, clock=lambda: 0).notes_root,
    )
    # Then both are the path of the home (the home itself once it is a path)
    for root in roots:
        assert type(root) is type(Path()) and root == Path(home)
        assert (root is home) == isinstance(home, Path)


class _Dict(dict[str, Any]):
    """A dict that is not exactly a dict."""


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=3),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=6,
)


@given(
    st.one_of(
        _JSON,
        _JSON.map(lambda value: (value,)),
        st.dictionaries(st.text(max_size=3), _JSON, max_size=3).flatmap(
            lambda d: st.sampled_from((MappingProxyType(d), _Dict(d), OrderedDict(d)))
        ),
    )
)
def test_a_plain_object_is_exactly_a_mapping(value: Any) -> None:
    # Given a JSON value, a tuple, or a mapping that is not exactly a dict
    # When it is asked whether it is a plain object
    # Then the answer is the Mapping check's (a dict answered without it)
    assert is_plain_object(value) == isinstance(value, Mapping)
