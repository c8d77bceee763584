"""The syntax of a JavaScript regular expression without the ``u`` flag, parsed to a tree.

ECMAScript 22.2.1 with Annex B.1.2, as V8 implements it: a lone ``{``, ``}`` or ``]`` is a
literal, ``\\c`` before a non-letter is a backslash, ``\\8`` is ``8``, a decimal escape
beyond the number of groups is an octal escape, a lookahead may be quantified, ``\\k`` is an
identity escape unless the pattern names a group. Everything V8 rejects raises
:class:`JsRegexSyntaxError`. The pattern is read as UTF-16 code units, as JavaScript does.
"""

from __future__ import annotations

from typing import Final, Literal, TypeAlias

import icu
from attrs import frozen

from pictx_fsm.js_regex import charset as cs
from pictx_fsm.js_regex.errors import JsRegexSyntaxError

__all__ = [
    "Alt",
    "Chars",
    "Dot",
    "Edge",
    "Group",
    "Look",
    "Node",
    "Parsed",
    "Ref",
    "Repeat",
    "Seq",
    "parse",
]


@frozen
class Chars:
    """One code unit of a set (a literal, a class, an escape), or with ``negated`` one
    outside it (``[^…]``: under ``i`` the set is closed before it is negated)."""

    units: cs.CharSet
    negated: bool = False


@frozen
class Dot:
    """``.``: any unit but a line terminator, or any unit with the ``s`` flag."""


@frozen
class Edge:
    """``^``, ``$``, ``\\b``, ``\\B``."""

    kind: Literal["start", "end", "boundary", "inside"]


@frozen
class Look:
    behind: bool
    negative: bool
    body: Node


@frozen
class Group:
    """``(…)`` (``index``: its capture number) or ``(?:…)`` (``index`` is ``None``)."""

    body: Node
    index: int | None = None


@frozen
class Repeat:
    body: Node
    low: int
    high: int | None
    greedy: bool


@frozen
class Ref:
    """``\\N`` or ``\\k<name>``; ``closed``: the group ended before the reference in the
    pattern (otherwise the reference always matches the empty string in JavaScript)."""

    index: int
    closed: bool


@frozen
class Seq:
    items: tuple[Node, ...]


@frozen
class Alt:
    options: tuple[Node, ...]


Node: TypeAlias = Chars | Dot | Edge | Look | Group | Repeat | Ref | Seq | Alt


@frozen
class Parsed:
    tree: Node
    captures: int
    names: dict[str, int]


def parse(source: str, flags: str) -> Parsed:
    """The tree of ``source`` (already in code units); ``flags`` only names it in errors."""
    parser = _Parser(source, flags)
    tree = parser.disjunction()
    if parser.pos < len(source):
        raise parser.error("Unmatched ')'")
    return Parsed(tree=tree, captures=parser.capture_count, names=parser.names)


_CONTROL_ESCAPES: Final = {"f": 0x0C, "n": 0x0A, "r": 0x0D, "t": 0x09, "v": 0x0B}
_CLASS_ESCAPES: Final = {
    "d": cs.DIGITS,
    "D": cs.complement(cs.DIGITS),
    "s": cs.SPACES,
    "S": cs.complement(cs.SPACES),
    "w": cs.WORD,
    "W": cs.complement(cs.WORD),
}
_OCTAL: Final = frozenset("01234567")
_DIGITS: Final = frozenset("0123456789")
_HEX: Final = frozenset("0123456789abcdefABCDEF")
_NAME_EXTRA: Final = frozenset(map(ord, "$_"))
_JOINERS: Final = frozenset((0x200C, 0x200D))


def _single(unit: int) -> cs.CharSet:
    return ((unit, unit),)


class _Parser:
    def __init__(self, source: str, flags: str) -> None:
        self.source = source
        self.flags = flags
        self.pos = 0
        self.capture_count, self.names = _scan_captures(source)
        self.opened = 0
        self.closed: set[int] = set()
        self.defined: set[str] = set()

    # -- helpers --------------------------------------------------------------------------------

    def error(self, problem: str) -> JsRegexSyntaxError:
        return JsRegexSyntaxError(self.source, self.flags, problem)

    def peek(self, offset: int = 0) -> str:
        index = self.pos + offset
        return self.source[index] if index < len(self.source) else ""

    def take(self, count: int = 1) -> str:
        text = self.source[self.pos : self.pos + count]
        self.pos += count
        return text

    # -- disjunction, alternative, term ---------------------------------------------------------

    def disjunction(self) -> Node:
        options = [self.alternative()]
        while self.peek() == "|":
            self.pos += 1
            options.append(self.alternative())
        return options[0] if len(options) == 1 else Alt(tuple(options))

    def alternative(self) -> Node:
        items: list[Node] = []
        while self.pos < len(self.source) and self.peek() not in "|)":
            items.append(self.term())
        return items[0] if len(items) == 1 else Seq(tuple(items))

    def term(self) -> Node:
        atom, quantifiable = self.atom()
        quantifier = self.quantifier()
        if quantifier is None:
            return atom
        if not quantifiable:
            raise self.error(
                "Nothing to repeat" if isinstance(atom, Edge) else "Invalid quantifier"
            )
        low, high, greedy = quantifier
        return Repeat(atom, low, high, greedy)

    def quantifier(self) -> tuple[int, int | None, bool] | None:
        char = self.peek()
        bounds: tuple[int, int | None]
        if char in ("*", "+", "?"):
            self.pos += 1
            bounds = {"*": (0, None), "+": (1, None), "?": (0, 1)}[char]
        elif char == "{" and (braced := self.braced()) is not None:
            bounds, self.pos = braced
        else:
            return None
        greedy = self.peek() != "?"
        self.pos += 0 if greedy else 1
        return bounds[0], bounds[1], greedy

    def braced(self) -> tuple[tuple[int, int | None], int] | None:
        """``{n}``, ``{n,}``, ``{n,m}`` at the position, and the position after it."""
        index = self.pos + 1
        low, index = _digits(self.source, index)
        if low is None:
            return None
        high: int | None = low
        if index < len(self.source) and self.source[index] == ",":
            high, index = _digits(self.source, index + 1)
        if index >= len(self.source) or self.source[index] != "}":
            return None
        if high is not None and high < low:
            raise self.error("numbers out of order in {} quantifier")
        return (low, high), index + 1

    # -- atoms ------------------------------------------------------------------------------------

    def atom(self) -> tuple[Node, bool]:
        """The next atom and whether a quantifier may follow it."""
        char = self.peek()
        if char in ("^", "$"):
            self.pos += 1
            return Edge("start" if char == "^" else "end"), False
        if char == "\\" and self.peek(1) in ("b", "B"):
            edge = Edge("boundary" if self.peek(1) == "b" else "inside")
            self.pos += 2
            return edge, False
        if char == "(":
            return self.group()
        if char in ("*", "+", "?") or (char == "{" and self.braced() is not None):
            raise self.error("Nothing to repeat")
        if char == "\\":
            return self.atom_escape(), True
        if char == "[":
            return self.char_class(), True
        self.pos += 1
        return (Dot() if char == "." else Chars(_single(ord(char)))), True

    def group(self) -> tuple[Node, bool]:
        self.pos += 1
        if self.peek() != "?":
            return self.capture(None), True
        kind = self.peek(1)
        if kind == "<" and self.peek(2) not in ("=", "!"):
            self.pos += 2
            return self.capture(self.group_name()), True
        if kind not in ("=", "!", ":", "<"):
            raise self.error("Invalid group")
        behind = kind == "<"
        self.pos += 3 if behind else 2
        negative = (self.source[self.pos - 1] == "!") if kind != ":" else False
        body = self.group_body()
        if kind == ":":
            return Group(body), True
        return Look(behind=behind, negative=negative, body=body), not behind

    def capture(self, name: str | None) -> Node:
        self.opened += 1
        index = self.opened
        if name is not None:
            if name in self.defined:
                raise self.error("Duplicate capture group name")
            self.defined.add(name)
        body = self.group_body()
        self.closed.add(index)
        return Group(body, index)

    def group_body(self) -> Node:
        body = self.disjunction()
        if self.peek() != ")":
            raise self.error("Unterminated group")
        self.pos += 1
        return body

    def group_name(self) -> str:
        """The name after ``(?<`` or ``\\k<``, up to and past its ``>``."""
        named = read_name(self.source, self.pos)
        if named is None:
            raise self.error("Invalid capture group name")
        name, self.pos = named
        return name

    # -- escapes ----------------------------------------------------------------------------------

    def atom_escape(self) -> Node:
        self.pos += 1
        char = self.peek()
        if char in _CLASS_ESCAPES:
            self.pos += 1
            return Chars(_CLASS_ESCAPES[char])
        if char in _DIGITS and char != "0":
            reference = self.back_reference()
            if reference is not None:
                return reference
        if char == "k" and self.names:
            return self.named_reference()
        return Chars(_single(self.character_escape(in_class=False)))

    def back_reference(self) -> Ref | None:
        end = self.pos
        while end < len(self.source) and self.source[end] in _DIGITS:
            end += 1
        index = int(self.source[self.pos : end])
        if index > self.capture_count:
            return None
        self.pos = end
        return Ref(index, index in self.closed)

    def named_reference(self) -> Ref:
        if self.peek(1) != "<":
            raise self.error("Invalid named reference")
        self.pos += 2
        named = read_name(self.source, self.pos)
        if named is None:
            raise self.error("Invalid named reference")
        name, self.pos = named
        if name not in self.names:
            raise self.error("Invalid named capture referenced")
        index = self.names[name]
        return Ref(index, index in self.closed)

    def character_escape(self, *, in_class: bool) -> int:
        """The unit of the escape whose backslash was just read (the text after it)."""
        char = self.peek()
        if not char:
            raise self.error("\\ at end of pattern")
        if char in _CONTROL_ESCAPES:
            self.pos += 1
            return _CONTROL_ESCAPES[char]
        if char == "c":
            return self.control_letter(in_class=in_class)
        if char in _OCTAL:
            return self.octal()
        if char in ("x", "u"):
            width = 2 if char == "x" else 4
            digits = self.source[self.pos + 1 : self.pos + 1 + width]
            if len(digits) == width and all(digit in _HEX for digit in digits):
                self.pos += 1 + width
                return int(digits, 16)
        if char == "k" and in_class and self.names:
            raise self.error("Invalid escape")
        self.pos += 1
        return ord(char)

    def control_letter(self, *, in_class: bool) -> int:
        letter = self.peek(1)
        if letter.isascii() and (
            letter.isalpha() or (in_class and (letter.isdigit() or letter == "_"))
        ):
            self.pos += 2
            return ord(letter) & 0x1F
        return ord("\\")  # Annex B: the backslash is a literal, ``c`` is read next

    def octal(self) -> int:
        """A legacy octal escape, at most ``\\377``."""
        value = int(self.take())
        if self.peek() in _OCTAL:
            value = value * 8 + int(self.take())
            if value < 32 and self.peek() in _OCTAL:
                value = value * 8 + int(self.take())
        return value

    # -- character classes ------------------------------------------------------------------------

    def char_class(self) -> Node:
        self.pos += 1
        negate = self.peek() == "^"
        self.pos += 1 if negate else 0
        parts: list[cs.CharSet] = []
        while True:
            if self.pos >= len(self.source):
                raise self.error("Unterminated character class")
            if self.peek() == "]":
                self.pos += 1
                break
            first, first_is_set = self.class_atom()
            if self.peek() == "-" and self.peek(1) not in ("", "]"):
                self.pos += 1
                second, second_is_set = self.class_atom()
                parts.extend(self.class_range(first, first_is_set, second, second_is_set))
            else:
                parts.append(first)
        return Chars(cs.union(*parts), negate)

    def class_range(
        self, first: cs.CharSet, first_is_set: bool, second: cs.CharSet, second_is_set: bool
    ) -> list[cs.CharSet]:
        if first_is_set or second_is_set:  # Annex B: ``[\d-z]`` is ``\d``, ``-`` and ``z``
            return [first, _single(ord("-")), second]
        low, high = first[0][0], second[0][0]
        if low > high:
            raise self.error("Range out of order in character class")
        return [((low, high),)]

    def class_atom(self) -> tuple[cs.CharSet, bool]:
        """One unit, or a class escape's set (``True``)."""
        char = self.take()
        if char != "\\":
            return _single(ord(char)), False
        escaped = self.peek()
        if escaped in _CLASS_ESCAPES:
            self.pos += 1
            return _CLASS_ESCAPES[escaped], True
        if escaped == "b":
            self.pos += 1
            return _single(0x08), False
        if escaped in ("8", "9"):
            self.pos += 1
            return _single(ord(escaped)), False
        return _single(self.character_escape(in_class=True)), False


def _digits(source: str, index: int) -> tuple[int | None, int]:
    end = index
    while end < len(source) and source[end] in _DIGITS:
        end += 1
    return (int(source[index:end]) if end > index else None), end


def _scan_captures(source: str) -> tuple[int, dict[str, int]]:
    """How many capturing groups the whole pattern has and their names (V8 scans first,
    so ``\\2`` before the second group is a reference, and ``\\k`` sees every name)."""
    count = 0
    names: dict[str, int] = {}
    index = 0
    in_class = False
    while index < len(source):
        char = source[index]
        if char == "\\":
            index += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "(" and not source.startswith("(?", index):
            count += 1
        elif source.startswith("(?<", index) and source[index + 3 : index + 4] not in ("=", "!"):
            count += 1
            named = read_name(source, index + 3)
            if named is not None:
                names.setdefault(named[0], count)
        index += 1
    return count, names


# -- group names ------------------------------------------------------------------------------


def read_name(source: str, index: int) -> tuple[str, int] | None:
    """A group name at ``index`` (V8 reads it in Unicode mode: surrogate pairs and ``\\u``
    escapes are code points, ``\\u{…}`` included) and the index after its ``>``; ``None``
    when it is not an identifier."""
    name: list[str] = []
    while index < len(source):
        read = _name_point(source, index)
        if read is None:
            return None
        point, index = read
        if name and point == ord(">"):
            return "".join(name), index
        if not _identifier_point(point, start=not name):
            return None
        name.append(chr(point))
    return None


def _identifier_point(point: int, *, start: bool) -> bool:
    if point in _NAME_EXTRA:
        return True
    if start:
        return bool(icu.Char.hasBinaryProperty(point, icu.UProperty.ID_START))
    return point in _JOINERS or bool(icu.Char.hasBinaryProperty(point, icu.UProperty.ID_CONTINUE))


def _name_point(source: str, index: int) -> tuple[int, int] | None:
    if source[index] != "\\":
        return _paired(source, index, ord(source[index]), index + 1)
    if not source.startswith("\\u", index):
        return None
    escaped = _unicode_escape(source, index)
    if escaped is None:
        return None
    point, end = escaped
    if 0xD800 <= point <= 0xDBFF and source.startswith("\\u", end):
        low = _unicode_escape(source, end)
        if low is not None and 0xDC00 <= low[0] <= 0xDFFF:
            return 0x10000 + (point - 0xD800) * 0x400 + low[0] - 0xDC00, low[1]
    return point, end


def _paired(source: str, index: int, point: int, end: int) -> tuple[int, int]:
    if 0xD800 <= point <= 0xDBFF and end < len(source) and 0xDC00 <= ord(source[end]) <= 0xDFFF:
        return 0x10000 + (point - 0xD800) * 0x400 + ord(source[end]) - 0xDC00, end + 1
    return point, end


def _unicode_escape(source: str, index: int) -> tuple[int, int] | None:
    """``\\uXXXX`` or ``\\u{X…}`` at ``index``."""
    start = index + 2
    if source.startswith("{", start):
        end = source.find("}", start)
        digits = source[start + 1 : end] if end > start + 1 else ""
        if not digits or not set(digits) <= _HEX or int(digits, 16) > 0x10FFFF:
            return None
        return int(digits, 16), end + 1
    digits = source[start : start + 4]
    if len(digits) != 4 or not set(digits) <= _HEX:
        return None
    return int(digits, 16), start + 4
