"""Which assistant turns count as context overflow (R33), with Pi's detector as data.

The detector is the host's (pi-ai ``utils/overflow.js``), so its pattern lists depend on the
Pi version (§20.7). They are values here: :data:`PI_0_87` is pi-ai 0.87.1's list, the default;
:data:`PI_MONO_LEGACY` is the older pi-mono variant whose first pattern is
``prompt is too long`` (it does not match ``"Prompt too long: …"``). The spec names only that
difference, so the rest of the legacy list is the 0.87 list. Patterns are kept as the JS
regex sources and compiled with JS matching rules (:func:`pictx_fsm.js_regex.compile_regex`);
a pattern Python cannot match as JavaScript does is refused when the list is built.

Messages are Pi ``AgentMessage`` values or plain JSON mappings. Usage numbers follow JS: a
missing or non-numeric ``usage`` field is NaN, and every comparison with NaN is false, so
such a message is never a silent or length overflow.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Final, Protocol

import attrs
from attrs import field, frozen

from pictx_fsm import js
from pictx_fsm.js_regex import JsRegExp, compile_regex
from pictx_fsm.session.entries import AgentMessage

__all__ = [
    "CEREBRAS_BODYLESS_OVERFLOW",
    "CEREBRAS_PROVIDER",
    "LENGTH_OVERFLOW_FILL",
    "PI_0_87",
    "PI_0_87_NON_OVERFLOW",
    "PI_0_87_OVERFLOW",
    "PI_MONO_LEGACY",
    "ModelLimits",
    "OverflowPatterns",
    "TurnMessage",
    "context_overflow",
    "is_context_overflow",
    "is_overflow_like",
    "is_recoverable_length",
    "overflow_like",
    "recoverable_length",
    "turn_message",
]

# pi-ai 0.87.1 OVERFLOW_PATTERNS, in order (all case-insensitive).
PI_0_87_OVERFLOW: Final = (
    r"prompt (?:is )?too long",
    r"request_too_large",
    r"input is too long for requested model",
    r"exceeds the context window",
    r"exceeds (?:the )?(?:model'?s )?maximum context length(?: of [\d,]+ tokens?|\s*\([\d,]+\))",
    r"input token count.*exceeds the maximum",
    r"maximum prompt length is \d+",
    r"reduce the length of the messages",
    r"maximum context length is \d+ tokens",
    r"exceeds (?:the )?maximum allowed input length of [\d,]+ tokens?",
    r"input \(\d+ tokens\) is longer than the model'?s context length \(\d+ tokens\)",
    r"exceeds the limit of \d+",
    r"exceeds the available context size",
    r"greater than the context length",
    r"context window exceeds limit",
    r"exceeded model token limit",
    r"too large for model with \d+ maximum context length",
    r"prompt has [\d,]+ tokens?, but the configured context size is [\d,]+ tokens?",
    r"model_context_window_exceeded",
    r"prompt too long; exceeded (?:max )?context length",
    r"range of input length should be",
    r"context[_ ]length[_ ]exceeded",
    r"too many tokens",
    r"token limit exceeded",
)
PI_0_87_NON_OVERFLOW: Final = (
    r"^(Throttling error|Service unavailable):",
    r"rate limit",
    r"too many requests",
)
CEREBRAS_BODYLESS_OVERFLOW: Final = r"^4(?:00|13)\s*(?:status code)?\s*\(no body\)"
CEREBRAS_PROVIDER: Final = "cerebras"
LENGTH_OVERFLOW_FILL: Final = 0.99
"""A ``length`` stop with no output is an overflow when the input fills 99% of the window."""


def _compile_all(sources: tuple[str, ...]) -> tuple[JsRegExp, ...]:
    return tuple(compile_regex(source, "i") for source in sources)


@frozen(kw_only=True)
class OverflowPatterns:
    """One host version's error-text lists. Non-overflow patterns veto overflow ones; the
    body-less pattern applies only to messages from ``bodyless_provider``."""

    overflow: tuple[str, ...]
    non_overflow: tuple[str, ...]
    bodyless: str
    bodyless_provider: str = CEREBRAS_PROVIDER
    _overflow_re: tuple[JsRegExp, ...] = field(init=False, eq=False, repr=False)
    _non_overflow_re: tuple[JsRegExp, ...] = field(init=False, eq=False, repr=False)
    _bodyless_re: JsRegExp = field(init=False, eq=False, repr=False)

    @_overflow_re.default
    def _compile_overflow(self) -> tuple[JsRegExp, ...]:
        return _compile_all(self.overflow)

    @_non_overflow_re.default
    def _compile_non_overflow(self) -> tuple[JsRegExp, ...]:
        return _compile_all(self.non_overflow)

    @_bodyless_re.default
    def _compile_bodyless(self) -> JsRegExp:
        return compile_regex(self.bodyless, "i")

    def is_non_overflow_error(self, error_message: str) -> bool:
        return any(pattern.test(error_message) for pattern in self._non_overflow_re)

    def is_overflow_error(self, error_message: str, provider: str | None) -> bool:
        """Case 1 of ``isContextOverflow`` for an error text (the ``stopReason`` check is the
        caller's)."""
        if not error_message or self.is_non_overflow_error(error_message):
            return False
        if any(pattern.test(error_message) for pattern in self._overflow_re):
            return True
        return provider == self.bodyless_provider and self._bodyless_re.test(error_message)


PI_0_87: Final = OverflowPatterns(
    overflow=PI_0_87_OVERFLOW,
    non_overflow=PI_0_87_NON_OVERFLOW,
    bodyless=CEREBRAS_BODYLESS_OVERFLOW,
)
PI_MONO_LEGACY: Final = attrs.evolve(
    PI_0_87, overflow=(r"prompt is too long", *PI_0_87_OVERFLOW[1:])
)


class ModelLimits(Protocol):
    """What the overflow rule reads of ``ctx.model``; any object with these fields will do
    (``hooks.ModelInfo`` included)."""

    @property
    def context_window(self) -> int | None: ...

    @property
    def max_tokens(self) -> int | None: ...


@frozen(kw_only=True)
class TurnMessage:
    """The fields of a turn's final message that the detector reads; usage counts are JS
    numbers (NaN when missing)."""

    role: str | None
    stop_reason: str | None
    error_message: str | None
    provider: str | None
    input: float = math.nan
    output: float = math.nan
    cache_read: float = math.nan

    @property
    def prompt_tokens(self) -> float:
        """``usage.input + usage.cacheRead``."""
        return self.input + self.cache_read


def turn_message(message: AgentMessage | Mapping[str, Any]) -> TurnMessage:
    """Adapt a persisted ``AgentMessage`` or a plain message mapping."""
    raw = message.raw if isinstance(message, AgentMessage) else message
    usage = raw.get("usage")
    usage = usage if js.is_plain_object(usage) else {}
    return TurnMessage(
        role=_text(raw.get("role")),
        stop_reason=_text(raw.get("stopReason")),
        error_message=_text(raw.get("errorMessage")),
        provider=_text(raw.get("provider")),
        input=_number(usage.get("input")),
        output=_number(usage.get("output")),
        cache_read=_number(usage.get("cacheRead")),
    )


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _number(value: object) -> float:
    if isinstance(value, int | float) and js.is_number(value):
        return js.to_number(value)
    return math.nan


def _window(value: float | None) -> bool:
    """JS truthiness of ``contextWindow`` (absent, 0 and NaN disable cases 2 and 3)."""
    return value is not None and js.truthy(value)


def context_overflow(
    turn: TurnMessage, context_window: int | None, patterns: OverflowPatterns = PI_0_87
) -> bool:
    """``isContextOverflow``: an overflow error text, a silent overflow (``stop`` with
    ``input + cacheRead > window``) or a length stop with no output and a full window.

    post: implies(__return__ and turn.stop_reason != "error", _window(context_window))
    post: implies(__return__, turn.stop_reason in ("error", "stop", "length"))
    """
    error = turn.error_message if turn.stop_reason == "error" else None
    if error and patterns.is_overflow_error(error, turn.provider):
        return True
    if context_window is None or not _window(context_window):
        return False
    window = js.to_number(context_window)
    if turn.stop_reason == "stop":
        return turn.prompt_tokens > window
    if turn.stop_reason == "length" and turn.output == 0:
        return turn.prompt_tokens >= window * LENGTH_OVERFLOW_FILL
    return False


def recoverable_length(turn: TurnMessage, max_tokens: int | None) -> bool:
    """``isRecoverableLength``: a ``length`` stop below the model's output limit.

    post: implies(__return__, turn.stop_reason == "length")
    post: implies(__return__, max_tokens is not None and max_tokens > 0)
    post: implies(__return__, turn.output < max_tokens)
    """
    if turn.stop_reason != "length" or max_tokens is None or not max_tokens > 0:
        return False
    return turn.output < js.to_number(max_tokens)


def overflow_like(
    turn: TurnMessage, model: ModelLimits | None, patterns: OverflowPatterns = PI_0_87
) -> bool:
    """R33: an assistant message that overflowed or stopped short on length.

    post: implies(__return__, turn.role == "assistant")
    """
    if turn.role != "assistant":
        return False
    window = model.context_window if model is not None else None
    if context_overflow(turn, window, patterns):
        return True
    return model is not None and recoverable_length(turn, model.max_tokens)


def is_context_overflow(
    message: AgentMessage | Mapping[str, Any],
    context_window: int | None,
    patterns: OverflowPatterns = PI_0_87,
) -> bool:
    """:func:`context_overflow` for a message."""
    return context_overflow(turn_message(message), context_window, patterns)


def is_recoverable_length(
    message: AgentMessage | Mapping[str, Any], max_tokens: int | None
) -> bool:
    """:func:`recoverable_length` for a message."""
    return recoverable_length(turn_message(message), max_tokens)


def is_overflow_like(
    message: AgentMessage | Mapping[str, Any],
    model: ModelLimits | None,
    patterns: OverflowPatterns = PI_0_87,
) -> bool:
    """:func:`overflow_like` for a message (the turn_end rule, R24/R33)."""
    return overflow_like(turn_message(message), model, patterns)
