"""Why a JavaScript regular expression cannot be compiled here: the two answers a caller gets."""

from __future__ import annotations

__all__ = ["JsRegexError", "JsRegexSyntaxError", "JsRegexUnsupported"]


class JsRegexError(ValueError):
    """A JS regular expression that cannot be used; the message names the pattern."""

    def __init__(self, source: str, flags: str, problem: str) -> None:
        self.source = source
        self.flags = flags
        self.problem = problem
        super().__init__(self.describe())

    def describe(self) -> str:
        return f"invalid regular expression /{self.source}/{self.flags}: {self.problem}"


class JsRegexSyntaxError(JsRegexError):
    """What JavaScript rejects too (``new RegExp`` throws a ``SyntaxError``)."""


class JsRegexUnsupported(JsRegexError):
    """Valid JavaScript that Python's ``re`` cannot match the way JavaScript does; refused at
    compile time rather than matched differently."""

    def describe(self) -> str:
        return (
            f"regular expression /{self.source}/{self.flags} cannot be matched as JavaScript "
            f"matches it: {self.problem}"
        )
