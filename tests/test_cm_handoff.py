"""Manual handoff and the handoff flow (spec §6, M45–M51)."""

from __future__ import annotations

import json

from cm_kit import (
    AUTO_TYPE,
    HANDOFF_TYPE,
    NOTES_TYPE,
    RECEIPT_TYPE,
    TAKEOVER_TYPE,
    C,
    D,
    P,
    S,
    bare_tree,
    cm,
    ctx,
    customs,
    fired,
    machine,
    messages,
    notices,
    play,
    shared,
    started,
    state,
    tool,
    tool_payloads,
    world,
)

from pictx_fsm.extensions.context_management import events as ev
from pictx_fsm.extensions.context_management import step
from pictx_fsm.extensions.context_management.effects import CreateSession, SwitchSession
from pictx_fsm.extensions.context_management.records import (
    CHECKPOINT_KEY,
    AutoSetting,
    branch_digest,
)
from pictx_fsm.extensions.context_management.texts import (
    NOTICE_HANDOFF_REFUSED,
    NOTICE_RETURNED,
    NOTICE_TAKEOVER_FAILED,
    READ_TOOL,
    TAKEOVER_PROMPT,
)
from pictx_fsm.hosts.model import Call, Text, Tools
from pictx_fsm.session.entries import AgentMessage, CompactionEntry, MessageEntry


def _handed_off(*before: object) -> object:
    return play(world(), P(chars=300), S, *before, C(args="handoff"), D)


def test_m45_a_handoff_needs_a_saved_session() -> None:
    # Given an ephemeral session (no file)
    w = play(world(saved=False), P(chars=300), S, C(args="handoff"))
    # Then the handoff is refused with a notice, nothing switches
    assert NOTICE_HANDOFF_REFUSED in notices(w) and not w.journal.switches


def test_m46_the_new_file_exists_before_any_reply_and_the_takeover_is_a_user_turn() -> None:
    # Given a manual handoff
    w = _handed_off()
    (switch,) = w.journal.switches
    target = w.session.files[switch.target]
    # Then the target was written (receipt first) before its first reply, the session
    # switched to it, and the takeover prompt is its first user message
    assert target.tree.entries[0].custom_type == RECEIPT_TYPE
    assert w.session.session_file == switch.target
    play(w, S)
    first_user = messages(w, "user")[0]
    assert first_user.message.text().startswith("You are continuing a task handed off")
    assert target.tree.header.parent_session == switch.source


def test_m47_the_package_holds_inferred_cited_notes_and_its_binding() -> None:
    # Given a handoff after a background job wrote notes
    w = play(world(), cm.Turn(chars=12_000), P(chars=300), S, C(args="handoff"), D)
    (switch,) = w.journal.switches
    package = customs(w, HANDOFF_TYPE, switch.source)[-1]["package"]
    # Then it cites its notes (all inferred), the source, a pinned digest, time and cwd
    assert package["notes"] and all(n["inferred"] for n in package["notes"])
    assert package["sourceSession"] and package["captureTime"] and package["cwd"] == "/workspace"
    source = w.session.files[switch.source].tree
    captured = source.branch(package["capturedLeafId"])
    assert package["branchDigest"] == branch_digest(e.id for e in captured)
    assert (
        "Re-check the files and the Git status" in TAKEOVER_PROMPT
        and "no authority" in TAKEOVER_PROMPT
    )


def test_m48_no_switch_when_generation_fails_or_the_preparation_is_cancelled() -> None:
    w = play(world(), P(chars=300), S, cm.Generate(reply="failing"), C(args="handoff"), D)
    assert not w.journal.switches and any("checkpoint_request_failed" in n for n in notices(w))
    play(w, P(chars=300), S, C(args="handoff"), C(args="cancel"), D)
    assert not w.journal.switches and machine(w, "handoff") == "idle"


def test_m48_a_package_over_the_limit_never_switches() -> None:
    # Given a branch whose checkpoint tracks many files (the package carries them)
    tree = bare_tree()
    user = {"role": "user", "content": [{"type": "text", "text": "go"}]}
    tree.append(
        MessageEntry(
            id="u1", parent_id=None, timestamp="t", message=AgentMessage(role="user", raw=user)
        )
    )
    details = {
        "readFiles": [f"/src/a-long-directory-name/file-{i}.py" for i in range(400)],
        "modifiedFiles": [],
        CHECKPOINT_KEY: {
            "version": 2,
            "notes": [],
            "throughEntryId": "u1",
            "notesThroughEntryId": "c1",
            "stateVersion": 1,
        },
    }
    tree.append(
        CompactionEntry(
            id="c1",
            parent_id="u1",
            timestamp="t",
            summary="s",
            first_kept_entry_id="u1",
            details=details,
            from_hook=True,
        )
    )
    services = ev.CmServices(tree=tree)
    s0 = started(tree)
    # When a manual handoff runs
    _, result = step(s0, ev.CommandIssued(args="handoff"), ctx(), services)
    # Then it stops before creating a session: handoff_too_large
    assert "handoff:handoff:packaging:packaged:1" in result.fired
    assert not any(isinstance(e, CreateSession | SwitchSession) for e in result.effects)


def test_m49_a_failed_initialization_returns_to_the_source() -> None:
    # Given a target that cannot read its parent (moved away)
    w = play(world(), P(chars=300), S, cm.HideParent(on=True), C(args="handoff"), D)
    # Then it switched back to the source, with a notice
    assert [s.returning for s in w.journal.switches] == [False, True]
    assert w.session.session_file == w.journal.switches[0].source and NOTICE_RETURNED in notices(w)


def test_m49_a_cancelled_return_tells_the_user_to_resume() -> None:
    w = play(
        world(),
        P(chars=300),
        S,
        cm.HideParent(on=True),
        cm.VetoReturn(on=True),
        C(args="handoff"),
        D,
    )
    assert any(
        n.startswith("The new session could not be initialized and switching back")
        for n in notices(w)
    )
    assert "handoff:handoff:returning:return_cancelled:1" in fired(w)


def test_m50_a_failed_takeover_keeps_the_file_and_a_reopen_never_resends() -> None:
    # Given a takeover prompt that cannot start
    w = play(world(), P(chars=300), S, cm.FailTakeover(on=True), C(args="handoff"), D)
    path = w.journal.switches[0].target
    assert NOTICE_TAKEOVER_FAILED.format(path=path) in notices(w)
    # Then the file is on disk as in Pi, which loads an existing file flushed (its takeover
    # mark written at once, with no message: tests/test_pi_handoff_file.py)
    assert path in w.session.saved_files()
    # When the target is reopened / Then the package is restored and no prompt is sent
    play(w, cm.FailTakeover(on=False), shared.Reload(), S)
    assert len(customs(w, TAKEOVER_TYPE)) == 1 and not messages(w, "user")
    assert state(w).receipt_package is not None and "handoff:handoff:idle:session_start:2" in fired(
        w
    )


def test_m51_a_manual_handoff_carries_the_auto_setting_and_its_limits() -> None:
    # Given automatic handoff turned off
    w = play(world(), P(chars=300), S, C(args="auto off"), C(args="handoff"), D)
    # Then the target starts with it off (never re-enabled by accident), counters kept
    target = customs(w, AUTO_TYPE)[-1]
    assert target["enabled"] is False and machine(w, "auto_handoff") == "off"
    receipt = customs(w, RECEIPT_TYPE)[0]
    assert AutoSetting(**{"enabled": False}).to_json()["enabled"] == receipt["auto"]["enabled"]
    assert json.dumps(receipt["package"]) and customs(w, NOTES_TYPE, w.journal.switches[0].source)


def test_m24_the_visible_package_lists_source_ids_readable_with_the_handoff_scope() -> None:
    # Given a handoff after the model wrote a note citing a message of the source session
    w = play(world(), P(chars=300), S, *tool(tool="notes_update"), C(args="handoff"), D, S)
    takeover = messages(w, "user")[0].message.text()
    inherited = customs(w, RECEIPT_TYPE)[0]["package"]["notes"]
    cited = [source for note in inherited for source in note["sources"]]
    # Then the visible package (the takeover prompt) lists each note with its source ids
    for note in inherited:
        line = next(line for line in takeover.splitlines() if note["text"] in line)
        assert all(source in line.replace(note["text"], "") for source in note["sources"])
    # When the model reads one of them back with scope "handoff"
    call = Call(name=READ_TOOL, arguments={"sourceId": cited[0], "scope": "handoff"}, id="r1")
    w.session.provider.push(Tools(calls=(call,), text=""), Text(text="ok"))
    play(w, P(chars=200), S)
    # Then the parent's message is returned
    (answer,) = tool_payloads(w, READ_TOOL)
    assert answer["sourceId"] == cited[0] and answer["text"]
