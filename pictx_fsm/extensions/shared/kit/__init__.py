"""The verification kit the pi-context family shares: noise extensions, the notes sandbox, the
entry and record walks and the generic invariants."""

__all__: list[str] = []
