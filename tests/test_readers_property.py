"""Every reader, for any input (issue 14): arbitrary bytes or arbitrary JSON in, a result or a
typed problem out — never another exception — in memory bounded by a constant plus a small
multiple of the longest line (the largest entry a reader can keep)."""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pictx_fsm.audit.store import check_log
from pictx_fsm.cli.audit import session_checks
from pictx_fsm.cli.inspect import inspect_file
from pictx_fsm.conformance import audit_file
from pictx_fsm.diagrams import counts_from_audit, counts_from_coverage
from pictx_fsm.errors import PictxError
from pictx_fsm.session.jsonl import read_session
from pictx_fsm.session.skeleton import read_skeleton
from pictx_fsm.testing.kit import kit_named, kit_names
from pictx_fsm.testing.trace import load_trace

BASE_MEMORY = 1_500_000
"""What a reader may use whatever its input (the structures, the module-level caches)."""
PER_LINE_BYTE = 48
"""How much a decoded line may cost per byte while it is read and kept."""

for _kit in kit_names():
    kit_named(_kit)  # a trace names its kit: loaded once here, a module-level cost, not a read's

Reader = Callable[[Path], Any]
READERS: dict[str, Reader] = {
    "read_session": read_session,
    "read_skeleton": read_skeleton,
    "audit_file": lambda path: audit_file(path, session_checks()),
    "audit_file_0.25.0": lambda path: audit_file(path, session_checks("0.25.0")),
    "inspect_file": inspect_file,
    "load_trace": load_trace,
    "counts_from_audit": counts_from_audit,
    "counts_from_coverage": counts_from_coverage,
    "check_log": check_log,
}

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                ["type", "id", "parentId", "message", "role", "customType", "data", "version", "x"]
            )
            | st.text(max_size=6),
            children,
            max_size=5,
        )
    ),
    max_leaves=12,
)
entry_types = st.sampled_from(
    ["session", "message", "custom", "custom_message", "compaction", "branch_summary", "label"]
)
entry_like = st.fixed_dictionaries(
    {"type": entry_types},
    optional={
        "id": st.sampled_from(["a", "b", "c", "", None, 3]),
        "parentId": st.sampled_from(["a", "b", "c", None, 7]),
        "version": st.sampled_from([1, 2, 3, 4, -1, 0, "3", None]),
        "message": json_values,
        "customType": st.sampled_from(["pi-context/boot", "pi-context/reset-marker", 1]),
        "data": json_values,
        "details": json_values,
        "content": json_values,
        "summary": json_values,
        "fromId": json_values,
        "steps": json_values,
        "transitions": json_values,
    },
)
jsonl_text = st.lists(
    st.one_of(json_values.map(json.dumps), entry_like.map(json.dumps), st.text(max_size=30)),
    max_size=12,
).map("\n".join)
inputs = st.one_of(
    st.binary(max_size=1500),
    jsonl_text.map(lambda text: text.encode("utf-8", "surrogatepass")),
    json_values.map(lambda value: json.dumps(value).encode()),
)


@pytest.mark.parametrize("name", sorted(READERS))
@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=inputs)
def test_any_input_gives_a_result_or_a_typed_problem_in_bounded_memory(
    tmp_path_factory: pytest.TempPathFactory, name: str, data: bytes
) -> None:
    # Given any bytes in a file
    path = tmp_path_factory.mktemp("input") / "input.jsonl"
    path.write_bytes(data)
    longest = max((len(line) for line in data.split(b"\n")), default=0)
    # When a reader reads it
    tracemalloc.start()
    try:
        READERS[name](path)
    except PictxError:
        pass  # a typed problem: the documented outcome for unusable input
    finally:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    # Then no other exception escaped, and memory stayed bounded
    assert peak <= BASE_MEMORY + PER_LINE_BYTE * longest, (peak, longest)
