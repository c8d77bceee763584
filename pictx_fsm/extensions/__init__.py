"""Extensions: each package is one lifecycle that runs on any host through the host contract
(:mod:`pictx_fsm.host`). No extension imports another, and nothing generic imports one.
"""

__all__: list[str] = []
