"""Host profiles: where the supported Pi versions behave differently for anything a
lifecycle extension observes (docs/model-session.md, "Pi versions").

The model session follows one profile. ``pi-0.87`` is Pi 0.87.1, the version the traces in
``../shared/pi-traces`` were recorded with; ``pi-1.6`` is Pi 1.6.0 (1.x). Everything not
named here is the same in both (the boundary API, the event order, the session format, the
agent loop's ``runLoop``), as the differential tests check on each real Pi.
"""

from __future__ import annotations

from typing import Final

from attrs import frozen

__all__ = [
    "DEFAULT_HOST_PROFILE",
    "HOST_PROFILES",
    "PI_0_87",
    "PI_1_6",
    "HostProfile",
    "host_profile",
]


@frozen(kw_only=True)
class HostProfile:
    """One Pi version as the model session reproduces it."""

    name: str
    pi_version: str
    """What ``ctx`` reports as the Pi version (``/pi-context`` shows it)."""
    nested_tool_calls: bool
    """``ctx.executeTool()`` (0.99): a tool can run other tools inside its own call; the model's
    built-in ``call_tools`` tool stands for it (a codemode script, an orchestrating tool)."""
    aborted_calls_get_results: bool
    """After an abort during a batch's preparation, the calls not prepared yet still start and
    get an ``Operation aborted`` result (1.6, pi#9986); in 0.87 the batch stops there and those
    calls get no result at all (their tool-call blocks stay unanswered)."""
    faux_input_counted_once: bool
    """pi-ai's faux provider reports every prompt token as cache read or cache write and
    ``input: 0`` (1.5); 0.87's faux counts the uncached part twice (``input`` and
    ``cacheWrite``). Only the faux accounting (``FauxCacheUsage``) reads it."""
    custom_runs_start_like_prompts: bool
    """A run started by ``sendMessage(..., {triggerTurn: true})`` while idle fires
    ``before_agent_start`` (``messageType: "custom"``) like a prompt (1.2)."""
    settled_reports_aborted: bool
    """``agent_settled`` carries ``aborted`` (1.1)."""
    replies_record_run_details: bool
    """Assistant messages record ``durationMs`` and the requested ``thinkingLevel`` (1.x)."""
    starting_run_is_busy: bool
    """A run counts as active from the moment its prompt is accepted (1.2): a steer or a
    follow-up queued while it starts (``before_agent_start``) joins it. In 0.87 the session is
    still idle then, so such a message is a prompt of its own, which runs to its end before
    the starting one goes on (found by the generated differential runs)."""
    file_created_at_first_user_message: bool
    """Pi writes a session file once it holds a user or an assistant message (0.99); 0.87
    only once it holds an assistant message. Before that a resume of the file opens a new,
    empty session at its path, and a fork refuses ("This session has not been saved yet")."""
    aborted_turn_stop_reason: str
    """The ``stopReason`` of the reply Pi records, without a request, for a turn that starts
    with an aborted signal (``errorMessage: "This operation was aborted"``): ``error`` in
    0.87 (trace ``d2``), ``aborted`` since 1.5.1 (pi#8409) — so that turn's outcome too."""


PI_0_87: Final = HostProfile(
    name="pi-0.87",
    pi_version="0.87.1",
    nested_tool_calls=False,
    aborted_calls_get_results=False,
    faux_input_counted_once=False,
    custom_runs_start_like_prompts=False,
    settled_reports_aborted=False,
    replies_record_run_details=False,
    starting_run_is_busy=False,
    file_created_at_first_user_message=False,
    aborted_turn_stop_reason="error",
)
PI_1_6: Final = HostProfile(
    name="pi-1.6",
    pi_version="1.6.0",
    nested_tool_calls=True,
    aborted_calls_get_results=True,
    faux_input_counted_once=True,
    custom_runs_start_like_prompts=True,
    settled_reports_aborted=True,
    replies_record_run_details=True,
    starting_run_is_busy=True,
    file_created_at_first_user_message=True,
    aborted_turn_stop_reason="aborted",
)
HOST_PROFILES: Final = {profile.name: profile for profile in (PI_0_87, PI_1_6)}
"""Every host profile by name, oldest Pi first."""
DEFAULT_HOST_PROFILE: Final = PI_0_87


def host_profile(name: str) -> HostProfile:
    """The profile called ``name``; ``ValueError`` naming the known ones otherwise."""
    try:
        return HOST_PROFILES[name]
    except KeyError:
        known = ", ".join(HOST_PROFILES)
        raise ValueError(f"unknown host profile {name!r} (known: {known})") from None
