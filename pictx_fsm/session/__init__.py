"""Pure data: Pi session entries, the entry tree, JSONL files, window identity, projections."""
