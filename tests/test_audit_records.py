"""Audit record content (issue 11): a record is built by encoding each part once, and a message
list is digested as a hash list, so a record costs O(what the hook changed). The records hold
exactly what the straightforward encoding of format 1 held (message digests aside, whose
meaning format 2 changed), every line is canonical, a runtime handed the session layer's
transcripts records the same bytes as one handed plain lists, and format 1 logs still verify
and can be continued."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from enum import Enum
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lifecycle_kit import Kit, audits_verify  # noqa: F401

from pictx_fsm.audit.log import (
    AUDIT_FORMAT,
    GENESIS,
    AuditLog,
    canonical,
    record_line,
    verify_chain,
)
from pictx_fsm.host.effects import HookResult, MessagesResult, Notify, ToolResult
from pictx_fsm.host.events import Context, ContextWithSystem, HostContext, ToolCall, TurnEnd
from pictx_fsm.host.tool_outcome import ToolOutcome
from pictx_fsm.session.digest import message_digest, message_list_digest
from pictx_fsm.session.projection import Message

# -- the reference: format 1's encoding, written out plainly -----------------------------------


def _reference_default(value: Any) -> Any:
    """Format 1's ``default`` hook, as it was."""
    to_json = getattr(value, "to_json", None)
    if callable(to_json):
        return to_json()
    if isinstance(value, Mapping):
        return dict(value)
    enum_value = getattr(value, "value", None)
    if enum_value is not None and hasattr(value, "name"):
        return enum_value
    if isinstance(value, frozenset | set):
        return sorted(value, key=repr)
    if attrs.has(type(value)):
        return {"__type__": type(value).__name__, **attrs.asdict(value, recurse=False)}
    return repr(value)


def dumps(value: Any) -> str:
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=True, default=_reference_default
    )


def plain(value: Any) -> Any:
    return json.loads(dumps(value))


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def hash_list(messages: Sequence[Message]) -> dict[str, Any]:
    """Format 2's message digest, from its definition."""
    parts = b"".join(hashlib.sha256(dumps(m).encode("ascii")).digest() for m in messages)
    return {"count": len(messages), "sha256": hashlib.sha256(parts).hexdigest()}


def whole_list(messages: Sequence[Message]) -> dict[str, Any]:
    """Format 1's message digest: the sha256 of the canonical list."""
    return {"count": len(messages), "sha256": sha(dumps(list(messages)))}


def utf8_digest(value: Any) -> dict[str, Any]:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    data = text.encode("utf-8", "surrogatepass")
    return {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def reference_record(
    *,
    seq: int,
    prev: str,
    event: Any,
    ctx: Any,
    result: HookResult,
    profile: str,
    fingerprint: str,
    digest: Callable[[Sequence[Message]], dict[str, Any]] = hash_list,
    form: str = AUDIT_FORMAT,
) -> dict[str, Any]:
    event_part: dict[str, Any] = {"hook": type(event).HOOK}
    for field in attrs.fields(type(event)):
        value = getattr(event, field.name)
        if field.name == "messages":
            event_part[field.name] = digest(value)
        elif field.name == "arguments":  # a tool call's, by size and UTF-8 sha256
            event_part[field.name] = utf8_digest(plain(value))
        else:
            event_part[field.name] = plain(value)
    result_part = plain(result)
    if isinstance(result.value, ToolOutcome):  # a notes or history tool's: the text digested
        result_part["value"] = {
            "status": result.value.status,
            "text": utf8_digest(result.value.text),
        }
    value = result_part.get("value")
    if isinstance(value, dict) and isinstance(value.get("messages"), list):
        value["messages"] = digest(value["messages"])
    steps = []
    for step in result.steps:
        facts = plain(dict(step.facts))
        fired = [
            {
                "id": f.transition,
                "region": f.region,
                "source": f.source,
                "target": f.target,
                "guards": [[name, value] for name, value in f.guards],
            }
            for f in step.fired
        ]
        steps.append(
            {
                "machine": step.machine,
                "event": step.event,
                "before": dict(step.before.states),
                "after": dict(step.after.states),
                "transitions": fired,
                "facts": facts,
                "facts_digest": sha(dumps(facts)),
            }
        )
    body = {
        "format": form,
        "seq": seq,
        "hook": result.hook,
        "event": event_part,
        "ctx": plain(ctx),
        "steps": steps,
        "result": result_part,
        "profile": profile,
        "models": fingerprint,
        "prev": prev,
    }
    body["hash"] = sha(dumps(body))
    return body


class Recorder(AuditLog):
    """An in-memory log that also keeps what each record was built from."""

    def __init__(self) -> None:
        super().__init__()
        self.inputs: list[dict[str, Any]] = []

    def record(self, **inputs: Any) -> Any:
        self.inputs.append(inputs)
        return super().record(**inputs)


def recording_kit() -> tuple[Kit, Recorder]:
    kit = Kit.create(tokens=200_000 - 35_000)
    recorder = Recorder()
    kit.runtime.audit = kit.audit = recorder
    return kit, recorder


def session(kit: Kit, conversation: Callable[[], Sequence[Message]]) -> None:
    """A session touching every machine, with requests carrying the conversation."""
    kit.start()
    kit.build.user("task")
    kit.turn_start()
    kit.context(conversation())
    kit.tool_turn("wipe_memory")
    kit.turn_start()
    kit.project()
    kit.context(conversation())
    kit.compact("manual")
    kit.toggle("off")
    kit.toggle("on")
    kit.overflow_turn()
    kit.before_settle()
    kit.settled()
    kit.tool("get_context_remaining")


def plain_conversation(kit: Kit) -> Callable[[], tuple[Message, ...]]:
    return lambda: tuple(m for m in kit.projection() if m.get("role") != "system")


class TranscriptKit(Kit):
    """A kit whose requests carry the tree's transcripts, as a host using them would."""

    def projection(self) -> tuple[Any, ...]:
        return self.tree.transcripts.transcript()


# -- content ---------------------------------------------------------------------------------


def test_each_record_holds_what_the_plain_encoding_of_its_inputs_holds() -> None:
    # Given a session whose every record remembers what it was built from
    kit, recorder = recording_kit()
    session(kit, plain_conversation(kit))
    assert len(recorder.records) == len(recorder.inputs) > 10
    prev = GENESIS
    for seq, (inputs, record) in enumerate(zip(recorder.inputs, recorder.records, strict=True), 1):
        # Then each record is the plain encoding of those inputs, message lists as hash lists
        assert record == reference_record(seq=seq, prev=prev, **inputs)
        prev = record["hash"]


@pytest.mark.parametrize("tokens", [200_000 - 35_000, 200_000 - 20_000])
def test_a_runtime_given_transcripts_decides_and_records_the_same_as_given_plain_lists(
    tokens: int,
) -> None:
    # Given the same session run twice: requests with plain tuples, then with transcripts
    # (at 180k tokens the first request gets the final warning appended, R51.2)
    plain_kit = Kit.create(tokens=tokens)
    session(plain_kit, plain_conversation(plain_kit))
    known_kit = TranscriptKit.create(tokens=tokens)
    session(known_kit, lambda: known_kit.tree.transcripts.conversation())
    # Then every result and every audit record is the same
    assert known_kit.results == plain_kit.results
    assert known_kit.audit.records == plain_kit.audit.records
    hooks = {r["hook"] for r in known_kit.audit.records if r["result"]["value"]}
    assert "context_with_system" in hooks
    assert ("context" in hooks) is (tokens == 200_000 - 20_000)


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=12,
)
OBJECT = st.dictionaries(st.text(max_size=6), JSON, max_size=5)


@settings(max_examples=150, deadline=None)
@given(OBJECT, OBJECT, st.lists(OBJECT, max_size=5), st.text())
def test_property_any_payload_gives_a_canonical_line_with_the_reference_content(
    message: dict[str, Any], arguments: dict[str, Any], messages: list[Any], notice: str
) -> None:
    # Given hooks carrying arbitrary JSON (any text, lone surrogates included, big numbers)
    cases = [
        (TurnEnd(message=message), HookResult(hook="turn_end")),
        (
            ToolCall(name="get_context_remaining", arguments=arguments),
            HookResult(hook="tool", value=ToolResult(payload=arguments)),
        ),
        (
            ContextWithSystem(messages=messages),
            HookResult(
                hook="context_with_system",
                value=MessagesResult(messages=messages[1:]),
                effects=(Notify(message=notice, level="info"),),
            ),
        ),
        (Context(messages=messages), HookResult(hook="context")),
        (
            ToolCall(name="save_note", arguments=arguments),
            HookResult(
                hook="tool",
                value=ToolOutcome(status="ok", text=notice),
                effects=(Notify(message=notice, level="info"),),
            ),
        ),
    ]
    for seq, (event, result) in enumerate(cases, 1):
        inputs: dict[str, Any] = {
            "seq": seq,
            "prev": GENESIS,
            "event": event,
            "ctx": HostContext(cwd=notice),
            "result": result,
            "profile": "0.25.1",
            "fingerprint": "f" * 64,
        }
        written = record_line(**inputs)
        # Then the line is the canonical text of its own content, with the reference content
        assert canonical(json.loads(written.line)) == written.line
        assert json.loads(written.line) == reference_record(**inputs)
        assert written.hash == json.loads(written.line)["hash"]


# -- the message digest ------------------------------------------------------------------------


@given(st.lists(OBJECT, max_size=6))
def test_property_a_message_list_digest_is_the_hash_list_of_its_messages(
    messages: list[Any],
) -> None:
    assert message_list_digest(messages) == hash_list(messages)
    assert all(message_digest(m) == hashlib.sha256(dumps(m).encode()).digest() for m in messages)


def test_the_digest_tells_lists_apart_that_differ_in_one_message_or_in_order() -> None:
    a, b = {"role": "user", "content": "a"}, {"role": "user", "content": "b"}
    digests = {message_list_digest(ms)["sha256"] for ms in ([a, b], [b, a], [a, a], [a], [])}
    assert len(digests) == 5


# -- format 1 logs -----------------------------------------------------------------------------


def test_a_format_1_log_still_verifies_and_a_runtime_continues_it(tmp_path: Path) -> None:
    # Given a log written in format 1 (whole-list digests)
    kit, recorder = recording_kit()
    session(kit, plain_conversation(kit))
    path = tmp_path / "v1.jsonl"
    prev, lines = GENESIS, []
    for seq, inputs in enumerate(recorder.inputs, 1):
        old = reference_record(
            seq=seq, prev=prev, digest=whole_list, form="pictx-fsm/audit/1", **inputs
        )
        lines.append(dumps(old) + "\n")
        prev = old["hash"]
    path.write_text("".join(lines), encoding="ascii")
    assert verify_chain(path).records == len(lines)
    # When a runtime of today appends to it
    again = Kit.create(audit_path=path)
    again.start()
    again.audit.close()
    # Then the chain continues across both formats
    # (the unsealed format-1 segment is closed by a segment record, the new one sealed)
    report = verify_chain(path)
    assert report.records == len(lines) + 3 and report.sealed
    formats = [json.loads(line)["format"] for line in path.read_text().splitlines()]
    assert set(formats) == {"pictx-fsm/audit/1", AUDIT_FORMAT}


# -- cached facts ------------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class _Tally:
    tokens: Any
    window: Any


class _Verdict(str, Enum):  # noqa: UP042 (a str enum as the lifecycle's are)
    OK = "ok"
    REFUSED = "refused"


_FACT_VALUES = st.sampled_from([1, True, 1.0, 0, False, -0.0, 0.0, None, "ok", _Verdict.OK])
"""Few values, many equal to one another with different texts: the cache must tell them apart."""


@given(
    st.lists(
        st.lists(
            st.tuples(
                st.sampled_from(["usage", "n"]),
                _FACT_VALUES | st.builds(_Tally, tokens=_FACT_VALUES, window=_FACT_VALUES),
            ),
            min_size=1,
            max_size=2,
        ).map(tuple),
        max_size=12,
    )
)
def test_property_facts_texts_cached_by_value_are_those_of_the_encoder(
    facts_seq: list[tuple[tuple[str, Any], ...]],
) -> None:
    # Given facts recorded hook after hook, equal ones among them (1 == True == 1.0 and
    # "ok" == _Verdict.OK, but each encodes apart), some held in enums and attrs values
    from pictx_fsm.audit.log import _facts_text

    for facts in facts_seq:
        # When each is written (from the cache when an equal one was written before)
        text = _facts_text(facts)
        # Then it is the encoder's text of those very facts, with their digest
        expected = dumps(dict(facts))
        digest = hashlib.sha256(expected.encode()).hexdigest()
        assert text == f'{expected},"facts_digest":"{digest}"'


_FLAT_VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(), st.text(), st.floats(allow_nan=False)
)


@given(
    st.one_of(
        st.dictionaries(st.text(), _FLAT_VALUES, max_size=6),
        st.dictionaries(st.integers(), st.integers(), max_size=3),
        st.lists(st.integers(), max_size=3),
    )
)
def test_property_a_tool_result_text_is_json_indented_by_two_r16(payload: Any) -> None:
    """R16: a tool's result text is its payload as ``json.dumps(indent=2)`` writes it, also
    where it is written member by member (a flat object), lone surrogates included."""
    # Given any payload a tool could answer with (flat objects take the direct path)
    # When its result text is made
    text = ToolResult(payload=payload).text
    # Then it is exactly json's two-space indentation of it
    assert text == json.dumps(payload, indent=2, ensure_ascii=False)


def test_an_in_memory_log_hands_a_follower_its_new_lines_with_their_records() -> None:
    # Given an in-memory log with three records, a follower having taken the first
    from pictx_fsm.audit.log import AuditLog
    from pictx_fsm.host.effects import HookResult
    from pictx_fsm.host.events import TurnStart

    log = AuditLog()
    for index in range(3):
        log.record(
            event=TurnStart(turn_index=index),
            result=HookResult(hook="turn_start"),
            profile="0.25.1",
            fingerprint="f" * 64,
        )
    # When it asks for what came after
    later = log.written(1)
    # Then it gets the two lines as written, each with its record
    assert [line for line, _ in later] == list(log.lines[1:])
    assert [record for _, record in later] == log.records[1:]
    assert [record["seq"] for _, record in later] == [2, 3]
