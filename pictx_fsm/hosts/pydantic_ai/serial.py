"""pydantic-ai messages as JSON and back, with pydantic-ai's own serializer.

The session stores residuals of this JSON (:mod:`~pictx_fsm.hosts.pydantic_ai.residual`), so
both directions must be pydantic-ai's: ``message_from_json(message_json(m)) == m``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, TypeAlias

from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter

__all__ = ["JSON", "message_from_json", "message_json", "messages_from_json", "messages_json"]

JSON: TypeAlias = Any


def message_json(message: ModelMessage) -> dict[str, JSON]:
    dumped: dict[str, JSON] = ModelMessagesTypeAdapter.dump_python([message], mode="json")[0]
    return dumped


def messages_json(messages: Iterable[ModelMessage]) -> list[dict[str, JSON]]:
    dumped: list[dict[str, JSON]] = ModelMessagesTypeAdapter.dump_python(
        list(messages), mode="json"
    )
    return dumped


def message_from_json(obj: Mapping[str, JSON]) -> ModelMessage:
    return messages_from_json([obj])[0]


def messages_from_json(objs: Iterable[Mapping[str, JSON]]) -> list[ModelMessage]:
    return ModelMessagesTypeAdapter.validate_python(list(objs))
