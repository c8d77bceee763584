"""docs/rules.md: the project's own index of the specification rules its code and tests cite.

The specifications (``../shared/spec/``) are not in the repository, yet docstrings, comments,
machine declarations and test names cite their rule ids (``R28``, ``N4``, ``M41``, ``FM19``,
``S38``, ranges such as ``R21–R23``). ``docs/rules.toml`` holds one summary per id in the
project's words (kept by hand); this script scans ``pictx_fsm/``, ``models/`` and ``tests/`` for
the citations and writes ``docs/rules.md``: per specification a table of id, summary, the files
that implement it and the tests that cite it. The output depends only on the repository's
text, so it is byte-for-byte reproducible (``tests/test_rules_index.py`` checks it is current).

    python scripts/rules_index.py           # rewrite docs/rules.md
    python scripts/rules_index.py --check   # exit 1 when stale or a citation names no rule

Exit codes: 0 current, 1 stale or a citation of an id no specification defines, 2 an unusable
``docs/rules.toml`` (the message names the file and the field).
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
import tomllib
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "COMMAND",
    "DATA",
    "OUTPUT",
    "BadCitation",
    "Citation",
    "IdRange",
    "RuleIndex",
    "RuleIndexError",
    "Scan",
    "Spec",
    "load_index",
    "main",
    "render",
    "scan",
]

ROOT = Path(__file__).resolve().parents[1]
DATA = Path("docs/rules.toml")
"""The hand-kept summaries, relative to the repository root."""
OUTPUT = Path("docs/rules.md")
"""The generated index, relative to the repository root."""
COMMAND = "python scripts/rules_index.py"
"""The command that regenerates ``OUTPUT``; every staleness message names it."""

SCANNED = ("pictx_fsm", "models", "tests")
"""Where citations are searched: the code and its machine declarations, and the tests."""
TESTS = "tests"
CITING_SUFFIXES = frozenset({".py", ".mjs", ".js", ".yaml", ".yml", ".toml"})
"""Source and declaration files; session fixtures and other data never cite rules."""
NOT_CITING = frozenset({"tests/test_rules_index.py"})
"""This index's own test writes example citations (valid and invalid) that claim nothing."""
RANGE_DASHES = ("–", "-", "..")
"""``R21–R23``, ``R33-R38`` and ``R1..R80`` each cite every id from the first to the last."""


class RuleIndexError(Exception):
    """``docs/rules.toml`` is unusable; the message names the file and the field."""


@dataclass(frozen=True)
class IdRange:
    """The ids ``prefix + first`` … ``prefix + last`` that one specification defines."""

    prefix: str
    first: int
    last: int

    def ids(self) -> list[str]:
        return [f"{self.prefix}{n}" for n in range(self.first, self.last + 1)]


@dataclass(frozen=True)
class Spec:
    """One specification: where it lives in ``../shared/spec``, its ids and their summaries."""

    key: str
    file: str
    title: str
    about: str
    ranges: tuple[IdRange, ...]
    rules: Mapping[str, str]

    def ids(self) -> list[str]:
        """Every id the specification defines, in its own order."""
        return [rule for r in self.ranges for rule in r.ids()]


@dataclass(frozen=True)
class RuleIndex:
    """All specifications of ``docs/rules.toml``, in the file's order."""

    specs: tuple[Spec, ...]

    def prefixes(self) -> dict[str, tuple[Spec, IdRange]]:
        """Each id prefix with the specification and range that own it."""
        return {r.prefix: (spec, r) for spec in self.specs for r in spec.ranges}


@dataclass(frozen=True, order=True)
class Citation:
    """One mention of ``rule`` at ``path:line``; ``test`` names the test it is in, if any."""

    rule: str
    path: str
    line: int
    test: str | None = None


@dataclass(frozen=True, order=True)
class BadCitation:
    """A mention that looks like a citation but names no rule of any specification."""

    path: str
    line: int
    text: str
    reason: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.text}: {self.reason}"


@dataclass(frozen=True)
class Scan:
    """Every citation found, and every mention that names no rule."""

    citations: tuple[Citation, ...]
    bad: tuple[BadCitation, ...]


# -- docs/rules.toml ---------------------------------------------------------------------------

_SPEC_KEYS = frozenset({"file", "title", "about", "ids", "rules"})
_RANGE_KEYS = frozenset({"prefix", "first", "last"})


def load_index(path: Path) -> RuleIndex:
    """Read and check ``docs/rules.toml``: every id of every declared range has exactly one
    non-empty, one-line summary, and no prefix belongs to two specifications."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise RuleIndexError(f"{path}: cannot read ({error.strerror or error})") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise RuleIndexError(f"{path}: not valid TOML ({error})") from None
    owners: dict[str, str] = {}
    return RuleIndex(tuple(_spec(path, key, table, owners) for key, table in data.items()))


def _spec(path: Path, key: str, table: object, owners: dict[str, str]) -> Spec:
    """One specification's table; ``owners`` collects which specification owns each prefix."""
    where = f"{path}: [{key}]"
    if not isinstance(table, dict):
        raise RuleIndexError(f"{where}: expected a table of one specification")
    unknown = sorted(set(table) - _SPEC_KEYS)
    missing = sorted(_SPEC_KEYS - set(table))
    if unknown or missing:
        raise RuleIndexError(f"{where}: unknown keys {unknown}, missing keys {missing}")
    for field in ("file", "title", "about"):
        if not isinstance(table[field], str) or not table[field].strip():
            raise RuleIndexError(f"{where} {field}: expected a non-empty string")
    ranges = _ranges(where, table["ids"])
    for r in ranges:
        if r.prefix in owners:
            raise RuleIndexError(
                f"{where} ids: prefix {r.prefix!r} is already [{owners[r.prefix]}]'s"
            )
        owners[r.prefix] = key
    rules = table["rules"]
    if not isinstance(rules, dict):
        raise RuleIndexError(f"{where}.rules: expected a table of id = summary")
    expected = [rule for r in ranges for rule in r.ids()]
    absent = [rule for rule in expected if rule not in rules]
    extra = sorted(set(rules) - set(expected))
    if absent:
        raise RuleIndexError(f"{where}.rules: no summary for {', '.join(absent)}")
    if extra:
        raise RuleIndexError(f"{where}.rules: {', '.join(extra)} outside the ids [{key}] declares")
    for rule in expected:
        summary = rules[rule]
        if not isinstance(summary, str) or not summary.strip():
            raise RuleIndexError(f"{where}.rules {rule}: expected a non-empty summary")
        if "\n" in summary or "\r" in summary:
            raise RuleIndexError(f"{where}.rules {rule}: a summary is one line")
    return Spec(
        key=key,
        file=table["file"],
        title=table["title"],
        about=table["about"],
        ranges=ranges,
        rules={rule: rules[rule] for rule in expected},
    )


def _ranges(where: str, value: object) -> tuple[IdRange, ...]:
    if not isinstance(value, list) or not value:
        raise RuleIndexError(f"{where} ids: expected a list of {{prefix, first, last}}")
    ranges = []
    for item in value:
        if not isinstance(item, dict) or set(item) != _RANGE_KEYS:
            raise RuleIndexError(f"{where} ids: each range is {{prefix, first, last}}")
        prefix, first, last = item["prefix"], item["first"], item["last"]
        if not isinstance(prefix, str) or not prefix or prefix[-1].isdigit():
            raise RuleIndexError(f"{where} ids: prefix {prefix!r} must not end in a digit")
        if not (type(first) is int and type(last) is int and 1 <= first <= last):
            raise RuleIndexError(f"{where} ids: {prefix} needs whole numbers 1 <= first <= last")
        ranges.append(IdRange(prefix, first, last))
    return tuple(ranges)


# -- the scan ----------------------------------------------------------------------------------


def scan(root: Path, index: RuleIndex) -> Scan:
    """Every citation of a rule in the citing files under ``root``, ranges expanded, with the
    test each one is in; mentions of ids outside every range are returned as ``bad``."""
    pattern = _citation_pattern(index)
    owners = index.prefixes()
    citations: list[Citation] = []
    bad: list[BadCitation] = []
    for path in _citing_files(root):
        relative = path.relative_to(root).as_posix()
        text = path.read_text(encoding="utf-8", errors="replace")
        tests = _TestSpans.of(relative, text)
        for number, line in enumerate(text.splitlines(), start=1):
            test = tests.at(number)
            for match in pattern.finditer(line):
                last = match.group("last")
                ids, problem = _cited(
                    match.group("prefix"),
                    int(match.group("first")),
                    int(last if last is not None else match.group("first")),
                    owners,
                )
                if problem is not None:
                    bad.append(BadCitation(relative, number, match.group(0), problem))
                citations.extend(Citation(rule, relative, number, test) for rule in ids)
        for name, number, prefix, n in tests.named_ids(owners):
            ids, problem = _cited(prefix, n, n, owners)
            if problem is not None:
                bad.append(BadCitation(relative, number, name, problem))
            citations.extend(Citation(rule, relative, number, name) for rule in ids)
    return Scan(tuple(sorted(set(citations))), tuple(sorted(set(bad))))


def _citing_files(root: Path) -> Iterator[Path]:
    for top in SCANNED:
        for path in sorted((root / top).rglob("*")):
            relative = path.relative_to(root)
            if any(part.startswith(".") or part == "__pycache__" for part in relative.parts):
                continue
            cites = path.suffix in CITING_SUFFIXES and relative.as_posix() not in NOT_CITING
            if cites and path.is_file():
                yield path


def _citation_pattern(index: RuleIndex) -> re.Pattern[str]:
    prefixes = sorted(index.prefixes(), key=lambda p: (-len(p), p))
    alternatives = "|".join(re.escape(p) for p in prefixes)
    dashes = "|".join(re.escape(d) for d in RANGE_DASHES)
    return re.compile(
        rf"(?<![\w])(?P<prefix>{alternatives})(?P<first>\d+)"
        rf"(?:(?:{dashes})(?P=prefix)?(?P<last>\d+))?(?!\w)"
    )


def _cited(
    prefix: str, first: int, last: int, owners: Mapping[str, tuple[Spec, IdRange]]
) -> tuple[list[str], str | None]:
    """The ids ``prefix+first`` … ``prefix+last`` that are rules, and what is wrong with the
    citation: ids outside the specification's ranges, or a range that runs backwards."""
    spec, declared = owners[prefix]
    if last < first:
        return [], f"the range runs backwards ({prefix}{first} after {prefix}{last})"
    cited = [f"{prefix}{n}" for n in range(first, last + 1)]
    inside = [rule for rule in cited if rule in spec.rules]
    if len(inside) == len(cited):
        return cited, None
    outside = [rule for rule in cited if rule not in spec.rules]
    shown = ", ".join(outside[:3]) + (" …" if len(outside) > 3 else "")
    return inside, (
        f"{shown} outside {spec.file}'s {declared.prefix}{declared.first}–"
        f"{declared.prefix}{declared.last}"
    )


@dataclass(frozen=True)
class _TestSpans:
    """The test functions of a test module: their names and the lines each one spans."""

    spans: tuple[tuple[int, int, str], ...]
    names: tuple[tuple[str, int], ...]

    @classmethod
    def of(cls, relative: str, text: str) -> _TestSpans:
        name = relative.rsplit("/", 1)[-1]
        if not (relative.startswith(f"{TESTS}/") and name.startswith("test_")):
            return cls((), ())
        if not name.endswith(".py"):
            return cls((), ())
        try:
            tree = ast.parse(text, filename=relative)
        except SyntaxError as error:
            raise RuleIndexError(
                f"{relative}:{error.lineno}: not valid Python ({error.msg})"
            ) from None
        spans = []
        names = []
        for qualified, node in _test_functions(tree.body, ""):
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            end = node.end_lineno if node.end_lineno is not None else node.lineno
            spans.append((start, end, qualified))
            names.append((qualified, node.lineno))
        return cls(tuple(spans), tuple(names))

    def at(self, line: int) -> str | None:
        """The innermost test that spans ``line``."""
        inside = [(end - start, name) for start, end, name in self.spans if start <= line <= end]
        return min(inside)[1] if inside else None

    def named_ids(
        self, owners: Mapping[str, tuple[Spec, IdRange]]
    ) -> Iterator[tuple[str, int, str, int]]:
        """The ids a test's name cites, ``test_r30_…`` or ``test_…_r14_r67``: every word of
        the name that is an id prefix in lower case followed by a number."""
        words = {p.lower(): p for p in owners if p.isalpha()}
        for qualified, line in self.names:
            function = qualified.rsplit("::", 1)[-1]
            for word in function.split("_")[1:]:
                found = re.fullmatch(r"([a-z]+)(\d+)", word)
                if found is not None and found.group(1) in words:
                    yield qualified, line, words[found.group(1)], int(found.group(2))


def _test_functions(
    body: Sequence[ast.stmt], owner: str
) -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    for node in body:
        if isinstance(node, ast.ClassDef):
            yield from _test_functions(node.body, f"{owner}{node.name}::")
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith(
            "test"
        ):
            yield f"{owner}{node.name}", node


# -- docs/rules.md -----------------------------------------------------------------------------


def render(index: RuleIndex, citations: Iterable[Citation]) -> str:
    """The Markdown page: an overview, then one table per specification."""
    implemented: dict[str, set[str]] = defaultdict(set)
    tested: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for c in citations:
        if c.path.startswith(f"{TESTS}/"):
            names = tested[c.rule][c.path]
            if c.test is not None:
                names.add(c.test)
        else:
            implemented[c.rule].add(c.path)
    out = [
        "# Rule index",
        "",
        f"<!-- Generated by `{COMMAND}` from `{DATA.as_posix()}` and the citations in "
        f"{', '.join(f'`{s}/`' for s in SCANNED)}; do not edit by hand. -->",
        "",
        "The code, the machine declarations and the tests cite rules of specifications that are",
        "not in this repository (they live in `../shared/spec/`). This page is the project's own",
        "index of them: each rule in one line in the project's words, the files whose text cites",
        "it (*implemented in*: modules under `pictx_fsm/`, declarations under `models/`) and the",
        "tests that cite it (*tested by*: the tests whose name or body names it; a file alone",
        "when only its module docstring or helpers do).",
        "",
        "A citation is an id (`R28`), a range (`R21–R23`, `R33-R38`, `FM14–16`: every id from the",
        "first to the last), a word of a test's name (`test_r30_…`), or `§12.N` for",
        "pi-context-management's invariants. Section references (`lifecycle §9.1`) name whole",
        "sections and are not indexed.",
        "",
        f"The summaries are kept in `{DATA.as_posix()}`; after editing them, or after code or "
        f"tests cite a rule anew, regenerate this page with `{COMMAND}` "
        "(`tests/test_rules_index.py` fails while it is stale).",
        "",
        "| specification | ids | implemented in code | cited by tests | cited nowhere |",
        "|---|---|---|---|---|",
    ]
    for spec in index.specs:
        ids = spec.ids()
        in_code = sum(1 for rule in ids if implemented[rule])
        in_tests = sum(1 for rule in ids if rule in tested)
        nowhere = sum(1 for rule in ids if not implemented[rule] and rule not in tested)
        ranges = ", ".join(f"{r.prefix}{r.first}–{r.prefix}{r.last}" for r in spec.ranges)
        out.append(
            f"| [{spec.title}](#{_anchor(spec)}) | {ranges} ({len(ids)}) | {in_code} "
            f"| {in_tests} | {nowhere} |"
        )
    for spec in index.specs:
        out += [
            "",
            f"## {spec.key}: {spec.title}",
            "",
            f"`../shared/spec/{spec.file}`. {spec.about}",
            "",
            "| id | what it says | implemented in | tested by |",
            "|---|---|---|---|",
        ]
        for rule in spec.ids():
            code = ", ".join(f"`{p}`" for p in sorted(implemented[rule])) or "—"
            tests = _tests_cell(tested.get(rule, {}))
            out.append(f"| {rule} | {_cell(spec.rules[rule])} | {code} | {tests} |")
    return "\n".join(out) + "\n"


def _tests_cell(files: Mapping[str, set[str]]) -> str:
    if not files:
        return "—"
    parts = []
    for path in sorted(files):
        names = ", ".join(f"`{n}`" for n in sorted(files[path]))
        parts.append(f"`{path}`: {names}" if names else f"`{path}`")
    return "; ".join(parts)


def _cell(text: str) -> str:
    """Text safe inside a Markdown table cell: a ``|`` would end the cell."""
    return text.replace("|", "\\|")


def _anchor(spec: Spec) -> str:
    """GitHub's anchor of the specification's heading."""
    heading = f"{spec.key}: {spec.title}".lower()
    kept = "".join(ch for ch in heading if ch.isalnum() or ch in " -_")
    return kept.replace(" ", "-")


# -- the command -------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="rules_index.py", description="Regenerate docs/rules.md from docs/rules.toml."
    )
    parser.add_argument("--check", action="store_true", help="only check that it is current")
    parser.add_argument("--root", type=Path, default=ROOT, help="the repository (default: this)")
    args = parser.parse_args(argv)
    root: Path = args.root
    try:
        index = load_index(root / DATA)
        found = scan(root, index)
    except RuleIndexError as error:
        print(f"rules_index: {error}", file=sys.stderr)
        return 2
    for bad in found.bad:
        print(f"rules_index: {bad}", file=sys.stderr)
    page = render(index, found.citations)
    target = root / OUTPUT
    current = target.read_text(encoding="utf-8") if target.is_file() else None
    if args.check and current != page:
        print(f"rules_index: {OUTPUT} is stale; regenerate it with `{COMMAND}`", file=sys.stderr)
        return 1
    if not args.check and current != page:
        target.write_text(page, encoding="utf-8")
        print(f"rules_index: wrote {OUTPUT}")
    return 1 if found.bad else 0


if __name__ == "__main__":
    sys.exit(main())
