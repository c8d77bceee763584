"""Model-based testing of pi-context-management (issue 13): a world with the extension (and
optionally pi-context) on the model session, host actions, the §12 invariants, planted
faults, seed scenarios and the exploration behind ``pictx-fsm verify --extension``."""
