"""pi-context-management's verification kit: its world on the model session, its §12
invariants, strategies, seed scenarios and planted faults — what the generic testing kit
(:mod:`pictx_fsm.testing`) explores, shrinks, covers and replays."""

__all__: list[str] = []
