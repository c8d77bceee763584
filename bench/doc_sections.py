"""The sections of ``docs/performance.md``: each bench rewrites only its own.

A section is the text between ``<!-- NAME:begin -->`` and ``<!-- NAME:end -->``; the rest of
the file is kept byte for byte. ``bench_verify.py`` replaces its section by its heading, up to
the next ``## `` heading, so it can take the begin marker of the section after it with it:
then the section is found from its own heading up to its end marker. A section not in the
file yet goes before the heading-owned ones (so that they cannot swallow it), else at the end.
"""

from __future__ import annotations

from pathlib import Path

HEADING_OWNED = ("## verify throughput",)
"""Sections other benches replace by their heading up to the next ``## `` heading."""


def markers(name: str) -> tuple[str, str]:
    return f"<!-- {name}:begin -->", f"<!-- {name}:end -->"


def write_section(path: Path, name: str, text: str) -> None:
    """Write ``text`` (starting with its heading) as section ``name`` of ``path``."""
    begin, end = markers(name)
    block = f"{begin}\n{text.strip()}\n{end}\n"
    current = path.read_text(encoding="utf-8") if path.exists() else ""
    span = _span(current, name, text.strip().splitlines()[0])
    if span is None:
        at = min((current.find(h) for h in HEADING_OWNED if h in current), default=len(current))
        before, after = current[:at].rstrip("\n"), current[at:]
        updated = (before + "\n\n" if before else "") + block + ("\n" + after if after else "")
    else:
        start, stop = span
        rest = current[stop:].lstrip("\n")
        updated = current[:start] + block + ("\n" + rest if rest else "")
    path.write_text(updated, encoding="utf-8")


def _span(current: str, name: str, heading: str) -> tuple[int, int] | None:
    """Where section ``name`` is: from its begin marker (or its heading, when the marker was
    taken) to just after its end marker; ``None`` when it is not in the file."""
    begin, end = markers(name)
    if end not in current:
        return None
    stop = current.index(end) + len(end)
    start = current.rfind(begin, 0, stop)
    if start < 0:
        start = current.rfind(heading, 0, stop)
    return None if start < 0 else (start, stop)
