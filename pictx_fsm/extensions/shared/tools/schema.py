"""The family's tool registrations: what a host registers for one tool (name, label,
description, JSON Schema parameters, execution mode) and the TypeBox JSON Schema shapes both
extensions' schemas are built from."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal

from attrs import frozen

__all__ = [
    "BOOLEAN",
    "NULLABLE_STRING",
    "POSITIVE_INTEGER",
    "STRING",
    "ExecutionMode",
    "RunsIn",
    "ToolSpec",
    "literal_options",
    "object_schema",
]

ExecutionMode = Literal["sequential", "parallel"]
RunsIn = Literal["lifecycle", "tools"]

STRING: Final = {"type": "string"}
BOOLEAN: Final = {"type": "boolean"}
NULLABLE_STRING: Final = {"anyOf": [STRING, {"type": "null"}]}
POSITIVE_INTEGER: Final = {"type": "integer", "minimum": 1}


def literal_options(values: tuple[str, ...], *, nullable: bool = False) -> list[dict[str, Any]]:
    options: list[dict[str, Any]] = [{"type": "string", "const": value} for value in values]
    return [*options, {"type": "null"}] if nullable else options


def object_schema(
    properties: Mapping[str, Mapping[str, Any]], required: tuple[str, ...] = ()
) -> dict[str, Any]:
    """``Type.Object(properties, {additionalProperties: false})`` as TypeBox emits it."""
    schema: dict[str, Any] = {"type": "object"}
    if required:
        schema["required"] = list(required)
    schema["properties"] = {name: dict(value) for name, value in properties.items()}
    schema["additionalProperties"] = False
    return schema


@frozen(kw_only=True)
class ToolSpec:
    """One registered tool. ``runs_in`` says who executes it: the lifecycle runtime (the reset
    and remaining-context tools) or the extension's tool shell. Pi 1.x tools may declare an
    ``output_schema`` (their ``structuredContent``) and a ``namespace`` (notesoup's
    ``notes``/``history`` groups, S91, S107)."""

    name: str
    label: str
    description: str
    parameters: Mapping[str, Any]
    execution_mode: ExecutionMode = "parallel"
    runs_in: RunsIn = "tools"
    output_schema: Mapping[str, Any] | None = None
    namespace: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The registration Pi takes (``executionMode`` ``parallel`` is Pi's default)."""
        out = {
            "name": self.name,
            "label": self.label,
            "description": self.description,
            "parameters": self.parameters,
            "executionMode": self.execution_mode,
            "runsIn": self.runs_in,
        }
        if self.output_schema is not None:
            out["outputSchema"] = self.output_schema
        if self.namespace is not None:
            out["namespace"] = self.namespace
        return out
