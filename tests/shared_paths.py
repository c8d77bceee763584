"""Where the shared reference data lives: ``../shared`` beside the repository (read in tests
when present, skipped when absent; never copied into the project)."""

from __future__ import annotations

from pathlib import Path

SHARED = Path(__file__).resolve().parents[1].parent / "shared"
TRACES = SHARED / "pi-traces"
"""Real Pi 0.87.1 runs: event logs and session files."""
CORPUS = SHARED / "corpora" / "pi-sessions"
"""Real Pi-format session files from public sources."""
