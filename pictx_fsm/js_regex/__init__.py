"""JavaScript regular expressions, matched by Python's ``re`` exactly as Node matches them.

Pi's patterns (the overflow and retry lists), the reference extension's (frontmatter,
globs, slugs) and the ones a user configures are JavaScript regexes. :func:`compile_regex`
reads one (the source of a regex literal and its flags, without ``u``/``v``) by the
ECMAScript grammar, translates it to an equivalent Python pattern, and matches it over the
text's UTF-16 code units — so ``$`` is the end of the input, ``.`` stops at ``\\r`` and
U+2028, ``\\d`` and ``\\b`` are ASCII, ``i`` folds as JavaScript does, and an emoji is two
units. What JavaScript rejects raises :class:`JsRegexSyntaxError`; what Python's ``re``
cannot match the same way raises :class:`JsRegexUnsupported` — both name the pattern, at
compile time; nothing is silently matched differently. ``tests/test_js_regex_node.py``
checks all of it against Node on generated patterns and inputs.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Final

from attrs import frozen

from pictx_fsm.js import code_units, from_code_units
from pictx_fsm.js_regex.errors import JsRegexError, JsRegexSyntaxError, JsRegexUnsupported
from pictx_fsm.js_regex.python import python_source, unreliable_groups
from pictx_fsm.js_regex.syntax import parse

__all__ = [
    "JsRegExp",
    "JsRegexError",
    "JsRegexSyntaxError",
    "JsRegexUnsupported",
    "compile_regex",
]

_FLAGS: Final = "dgimsuvy"
_WHOLE: Final = 0
_BEFORE: Final = -1
_AFTER: Final = -2
_SPECIAL: Final[dict[str, str | int]] = {"$": "$", "&": _WHOLE, "`": _BEFORE, "'": _AFTER}
_Template = tuple[str | int, ...]
"""A replacement: literal text, group numbers, and the three special references above."""


@frozen(eq=False)
class JsRegExp:
    """A compiled JavaScript regex; each method behaves as on a fresh ``RegExp`` (``lastIndex``
    0). Positions are UTF-16 code units, as in JavaScript."""

    source: str
    flags: str
    python: re.Pattern[str]
    """The translation, matching code units (:func:`pictx_fsm.js.code_units`)."""
    captures: int
    names: Mapping[str, int]
    unreliable: frozenset[int]
    """Groups whose value JavaScript may clear where Python's ``re`` keeps one."""

    def test(self, text: str) -> bool:
        """``regex.test(text)``."""
        return self._exec(code_units(text), 0) is not None

    def search(self, text: str) -> int:
        """``text.search(regex)``: the code-unit index of the first match, or -1."""
        match = self._exec(code_units(text), 0)
        return -1 if match is None else match.start()

    def execute(self, text: str) -> tuple[str | None, ...] | None:
        """``regex.exec(text)`` as a tuple: the match, then each group (``None``: undefined).
        Raises :class:`JsRegexUnsupported` for a pattern with :attr:`unreliable` groups."""
        if self.unreliable:
            raise JsRegexUnsupported(
                self.source,
                self.flags,
                f"groups {sorted(self.unreliable)} may hold values JavaScript clears",
            )
        match = self._exec(code_units(text), 0)
        if match is None:
            return None
        return tuple(
            None if group is None else from_code_units(group)
            for group in (match.group(0), *match.groups())
        )

    def replace(self, text: str, replacement: str) -> str:
        """``text.replace(regex, replacement)``: the first match, or every one with the ``g``
        flag, replaced by ``replacement`` with its ``$`` patterns (``$&``, ``$1``, ``$<n>``…)."""
        units = code_units(text)
        template = self._template(code_units(replacement), replacement)
        out: list[str] = []
        done = index = 0
        while index <= len(units):
            match = self._exec(units, index)
            if match is None:
                break
            out.append(units[done : match.start()])
            out.extend(_substitute(part, match) for part in template)
            done = match.end()
            if "g" not in self.flags:
                break
            index = done + 1 if match.end() == match.start() else done
        out.append(units[done:])
        return from_code_units("".join(out))

    def _exec(self, units: str, index: int) -> re.Match[str] | None:
        if "y" in self.flags:
            return self.python.match(units, index)
        return self.python.search(units, index)

    def _template(self, template: str, replacement: str) -> _Template:
        """GetSubstitution (ECMAScript 22.1.3.19.1) read once per call."""
        parts: list[str | int] = []
        index = 0
        while index < len(template):
            part, index = self._template_part(template, index)
            if isinstance(part, int) and part in self.unreliable:
                raise JsRegexUnsupported(
                    self.source,
                    self.flags,
                    f"the replacement {replacement!r} reads group {part}, whose value "
                    "JavaScript may clear where Python's re keeps one",
                )
            if isinstance(part, str) and parts and isinstance(parts[-1], str):
                parts[-1] += part
            else:
                parts.append(part)
        return tuple(parts)

    def _template_part(self, template: str, index: int) -> tuple[str | int, int]:
        following = template[index + 1 : index + 2]
        if template[index] != "$" or not following:
            return template[index], index + 1
        special = _SPECIAL.get(following)
        if special is not None:
            return special, index + 2
        if following.isascii() and following.isdigit():
            return self._numbered(template, index)
        if following == "<" and self.names and (end := template.find(">", index)) >= 0:
            group = self.names.get(template[index + 2 : end])
            return ("" if group is None else group), end + 1
        return "$", index + 1

    def _numbered(self, template: str, index: int) -> tuple[str | int, int]:
        digits = template[index + 1 : index + 3]
        if len(digits) < 2 or not (digits[1].isascii() and digits[1].isdigit()):
            digits = digits[:1]
        if int(digits) > self.captures and len(digits) == 2:
            digits = digits[:1]
        group = int(digits)
        end = index + 1 + len(digits)
        return (group if 1 <= group <= self.captures else template[index:end]), end


def _substitute(part: str | int, match: re.Match[str]) -> str:
    if isinstance(part, str):
        return part
    if part == _BEFORE:
        return match.string[: match.start()]
    if part == _AFTER:
        return match.string[match.end() :]
    return match.group(part) or ""


@functools.lru_cache(maxsize=512)
def compile_regex(source: str, flags: str = "") -> JsRegExp:
    """``new RegExp(source, flags)``; raises :class:`JsRegexError` (a ``ValueError``) naming
    the pattern when JavaScript rejects it or Python's ``re`` cannot match it the same way."""
    if any(flag not in _FLAGS or flags.count(flag) > 1 for flag in flags):
        raise JsRegexSyntaxError(source, flags, "Invalid flags")
    if "u" in flags or "v" in flags:
        raise JsRegexUnsupported(source, flags, "the u and v flags are not supported")
    try:
        parsed = parse(code_units(source), flags)
        translated = python_source(parsed, source, flags)
        python = re.compile(translated)
    except (re.error, OverflowError, RecursionError) as error:
        raise JsRegexUnsupported(source, flags, f"Python's re cannot compile it: {error}") from None
    return JsRegExp(
        source=source,
        flags=flags,
        python=python,
        captures=parsed.captures,
        names=parsed.names,
        unreliable=unreliable_groups(parsed.tree),
    )
