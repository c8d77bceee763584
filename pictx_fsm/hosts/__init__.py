"""Host adapters: the model session (the embedded default host) and, later, the real Pi.

A host raises hook events, hands each subscribed extension a
:class:`~pictx_fsm.host.events.HostContext`
and applies what the extension returns. :mod:`pictx_fsm.hosts.model` is an executable model of
Pi 0.87.1 as a context-window lifecycle extension observes it.
"""

__all__: list[str] = []  # the hosts are its subpackages: hosts.model, hosts.pi
