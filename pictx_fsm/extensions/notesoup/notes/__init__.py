"""notesoup's notes store: the notes home of a session, note files and their metadata
(read in both formats)."""

__all__: list[str] = []
