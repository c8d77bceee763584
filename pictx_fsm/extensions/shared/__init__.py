"""The pi-context family's shared library: what notesoup 0.38 repeats of pi-context 0.25.

notesoup is pi-context renamed and grown; where its spec says SAME (``../shared/spec/
notesoup.md``), both extensions run the code here instead of a copy each: window identity and
the window index (R8–R15, S10), boot-repair tail classification (D4, S73–S74), and the notes
homes, addresses and note-file syntax the notes tools share (N6–N21, S94–S96).
``docs/notesoup.md`` lists what is shared and what each extension owns.

It is a library, not an extension: it imports no extension, and both extensions may import it
(the import contracts in ``pyproject.toml``).
"""

__all__: list[str] = []
