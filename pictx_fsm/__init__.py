"""pictx_fsm: the context-window lifecycle of an AI coding agent as declared, verified machines."""

__version__ = "0.1.0"
