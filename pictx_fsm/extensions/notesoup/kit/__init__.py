"""notesoup's verification kit: its world on the model session (mixed 0.25 → notesoup
histories included), its invariants, strategies, seed scenarios and planted faults — what the
generic testing kit (:mod:`pictx_fsm.testing`) explores, shrinks, covers and replays."""

__all__: list[str] = []
