"""Errors the model session raises on host actions Pi would refuse."""

from __future__ import annotations

from pictx_fsm.errors import PictxError

__all__ = ["ALREADY_PROCESSING", "AgentBusyError", "HostSettingsError", "ModelHostError"]

ALREADY_PROCESSING = (
    "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') "
    "to queue the message."
)
"""What Pi's ``prompt()`` throws while a run is active (``f_queue``)."""


class ModelHostError(PictxError):
    """A host action the model session cannot carry out (unknown entry, command, file)."""


class AgentBusyError(ModelHostError):
    """A host action that needs an idle session was attempted during a run."""


class HostSettingsError(ModelHostError):
    """Settings no host could run with (a window of no tokens, a reserve that fills it):
    refused when the settings are made, before a turn loop could spin on them."""
