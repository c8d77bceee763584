"""Generated Pi sessions for projection tests: any mix of reset windows, boots of this,
other and forked windows, system prompts and their deltas, compactions, branch summaries,
hidden boots and navigation, every entry shaped as Pi writes it."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
from session_builders import SESSION_ID, SessionBuilder

from pictx_fsm.extensions.pi_context.windows import root_window_id
from pictx_fsm.session.tree import SessionTree

W = ("pcw:01a22a68:0000000a", "pcw:01a22a68:0000000b", "pcw:01a22a68:0000000c")
FORKED_ROOT = "pcw:99999999:root"
STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("user"), st.integers(0, 999)),
        st.tuples(st.just("assistant"), st.integers(0, 999)),
        st.tuples(
            st.just("system"),
            st.sampled_from(("a", "b", None)),
            st.booleans(),
            st.sampled_from(("", "You are Pi.", [{"type": "text", "text": "Rules."}])),
        ),
        st.tuples(st.just("marker"), st.sampled_from(W)),
        st.tuples(st.just("bad_marker"), st.sampled_from(("", 7, None))),
        st.tuples(st.just("boot"), st.sampled_from((*W, "root", FORKED_ROOT))),
        st.tuples(st.just("continuation")),
        st.tuples(st.just("compaction"), st.booleans()),
        st.tuples(st.just("branch_summary")),
        st.tuples(st.just("hide_last_boot")),
        st.tuples(st.just("navigate"), st.integers(0, 60)),
    ),
    max_size=30,
)


def build_session(steps: list[tuple[Any, ...]]) -> SessionTree:
    """A session from generated steps, every entry shaped as Pi writes it."""
    session = SessionBuilder(SESSION_ID)
    boots: list[str] = []
    for step in steps:
        _apply_step(session, boots, step)
    return session.tree


def _apply_step(session: SessionBuilder, boots: list[str], step: tuple[Any, ...]) -> None:
    kind = step[0]
    if kind in ("user", "assistant"):
        getattr(session, kind)(f"{kind}-{step[1]}")
    elif kind == "system":
        sections = None if step[1] is None else {step[1]: f"section {step[1]}"}
        session.system(sections=sections, replace=step[2], content=step[3])
    elif kind == "marker":
        session.marker(step[1])
    elif kind == "bad_marker":
        session.custom("pi-context/reset-marker", {"windowId": step[1]})
    elif kind == "boot":
        window = root_window_id(SESSION_ID) if step[1] == "root" else step[1]
        boots.append(session.boot(window, f"<context_window>boot of {window}</context_window>"))
    elif kind == "continuation":
        session.continuation()
    elif kind == "compaction":
        session.compaction(checkpoint=step[1])
    elif kind == "branch_summary":
        session.branch_summary()
    elif kind == "hide_last_boot" and boots and boots[-1] in session.tree:
        session.edit(boots[-1])
    elif kind == "navigate" and session.tree.entries:
        ids = [e.id for e in session.tree.entries if e.id]
        session.tree.navigate(ids[step[1] % len(ids)])
