"""Pi's session format, with no extension knowledge: entries, JSONL files, the entry tree and
its indexes, Pi's projection, transcripts and their digests, token counting."""

__all__: list[str] = []  # one module per concept: entries, jsonl, tree, writer, transcript, ...
