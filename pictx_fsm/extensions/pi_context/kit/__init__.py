"""pi-context's verification kit: its world on the model session, its invariants, strategies,
seed scenarios, planted faults and CrossHair targets — what the generic testing kit
(:mod:`pictx_fsm.testing`) explores, shrinks, covers and replays."""

__all__: list[str] = []
