"""Note addresses, virtual paths and glob patterns (notes spec N10–N13, N39–N41).

An address names one home and a virtual path inside it: bare ``<vpath>`` (this session),
``@project/``, ``@human/``, ``@self/`` or ``@agents/<name>/``, ``@model/`` or
``@models/<name>/``. Decoding is a tool-boundary rule: a bad address is a thrown error
(an error result), never a JSON refusal. Source: ``src/notes/address.ts`` of pi-context
0.25.0 (astrosheep-zero/pi-context@5a9d4b49).
"""

from __future__ import annotations

from typing import Final, Literal

from attrs import frozen

from pictx_fsm import js
from pictx_fsm.js_regex import JsRegExp, compile_regex

Scope = Literal["session", "project", "human", "agent", "model"]
SCOPES: Final[tuple[Scope, ...]] = ("session", "project", "human", "agent", "model")
"""The five homes in listing order (N40) and boot order (R70)."""

SLUG_PATTERN: Final = compile_regex(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
"""``/^[a-z0-9]+(?:-[a-z0-9]+)*$/`` (always used with ``fullmatch``: Python's ``$`` would
accept a trailing newline)."""

ADDRESS_FORMS: Final = (
    "legal prefixes are @project/, @human/, @self/, @agents/<name>/, @model/, and "
    "@models/<name>/; bare names are the session home"
)
INVALID_ADDRESS: Final = f"invalid note address: {ADDRESS_FORMS}"
EMPTY_PATH: Final = "path must be a non-empty virtual relative path"
UNSAFE_PATH: Final = "path must be a safe virtual relative path"
BAD_COMPONENT: Final = "path contains an unsupported component"
PATTERN_NOT_STRING: Final = "glob pattern must be a string"
PATTERN_UNSAFE: Final = "glob pattern must not contain NUL or backslashes"
PATTERN_TYPE_ERROR: Final = "pattern.startsWith is not a function"
"""V8's ``TypeError`` for a truthy non-string pattern (N39)."""

_NAMED_HEADS: Final[dict[str, Scope]] = {"agents": "agent", "models": "model"}
_PLAIN_HEADS: Final[dict[str, Scope]] = {
    "project": "project",
    "human": "human",
    "self": "agent",
    "model": "model",
}


class AddressError(ValueError):
    """A malformed address, path or pattern: thrown, so the host records an error result."""


@frozen(kw_only=True)
class NoteAddress:
    """A decoded address. ``who`` names an agent/model home absolutely; ``None`` means the
    current one (``@self``, ``@model``) or a home without names."""

    scope: Scope
    path: str
    who: str | None = None


def assert_virtual_path(value: object) -> str:
    """N11: a non-empty ``/``-relative path with no NUL, backslash, empty, ``.`` or ``..``
    segment. Nothing else is rejected (Unicode, spaces, dot-files are legal)."""
    if not isinstance(value, str) or not value:
        raise AddressError(EMPTY_PATH)
    if "\0" in value or "\\" in value or value.startswith("/"):
        raise AddressError(UNSAFE_PATH)
    if any(part in ("", ".", "..") for part in value.split("/")):
        raise AddressError(BAD_COMPONENT)
    return value


def decode_address(value: object) -> NoteAddress:
    """N10: decode one public address (``assertAddress``)."""
    if not isinstance(value, str):
        raise AddressError(INVALID_ADDRESS)
    address = NoteAddress(scope="session", path=value)
    if value.startswith("@"):
        address = _decode_prefixed(value[1:])
    if "@" in address.path:
        raise AddressError(INVALID_ADDRESS)
    assert_virtual_path(address.path)
    return address


def _decode_prefixed(rest: str) -> NoteAddress:
    head, _, tail = rest.partition("/")
    if head in _PLAIN_HEADS:
        if not tail:
            raise AddressError(INVALID_ADDRESS)
        return NoteAddress(scope=_PLAIN_HEADS[head], path=tail)
    if head not in _NAMED_HEADS:
        raise AddressError(INVALID_ADDRESS)
    who, _, path = tail.partition("/")
    if not SLUG_PATTERN.test(who):
        raise AddressError(INVALID_ADDRESS)
    return NoteAddress(scope=_NAMED_HEADS[head], path=path, who=who)


def canonical_address(scope: Scope, path: str, who: str) -> str:
    """N13: the one public form of a listed note; ``who`` is the resolved agent/model name
    (ignored for the other homes). ``@self``/``@model`` never appear in output."""
    if scope == "session":
        return path
    if scope in ("project", "human"):
        return f"@{scope}/{path}"
    return f"@{'agents' if scope == 'agent' else 'models'}/{who}/{path}"


# -- glob patterns (N39–N41) --------------------------------------------------------------------


def normalize_pattern(value: object) -> str | None:
    """N39: ``None``/``""`` mean no filter; anything else must be a safe string."""
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise AddressError(PATTERN_TYPE_ERROR if js.truthy(value) else PATTERN_NOT_STRING)
    if "\0" in value or "\\" in value:
        raise AddressError(PATTERN_UNSAFE)
    return value


def resolve_pattern(pattern: str, agent: str, model: str) -> str:
    """``@self/…`` and ``@model/…`` name the current homes by their canonical names."""
    if pattern.startswith("@self/"):
        return f"@agents/{agent}/{pattern.removeprefix('@self/')}"
    if pattern.startswith("@model/"):
        return f"@models/{model}/{pattern.removeprefix('@model/')}"
    return pattern


def glob_regex(pattern: str) -> JsRegExp:
    """N41 ``globToRegExp``: anchored; ``**/`` is zero or more whole segments, ``**`` any
    text, ``*`` any run without ``/``; every other character is literal (``?`` too). The
    JavaScript source is built as the anchor builds it and compiled with JS rules."""
    source: list[str] = []
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char != "*":
            source.append("\\" + char if char in _REGEX_SYNTAX else char)
            index += 1
        elif pattern.startswith("**/", index):
            source.append("(?:[^]*/)?")
            index += 3
        elif pattern.startswith("**", index):
            source.append("[^]*")
            index += 2
        else:
            source.append("[^/]*")
            index += 1
    return compile_regex("^" + "".join(source) + "$")


_REGEX_SYNTAX: Final = frozenset("\\^$.*+?()[]{}|")
"""What the anchor escapes (notes spec §15.4): exactly JavaScript's syntax characters."""


def glob_matches(regex: JsRegExp, address: str) -> bool:
    return regex.test(address)


def pattern_head(pattern: str) -> str | None:
    """The home word of an ``@`` pattern: the text between ``@`` and the first ``/``, or
    ``None`` when there is no ``/`` after a non-empty head (such a pattern scans nothing)."""
    head, slash, _ = pattern[1:].partition("/")
    return head if slash and head else None
