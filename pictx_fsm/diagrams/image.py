"""SVG and PNG through Graphviz's ``dot`` program (optional: only diagrams need it)."""

from __future__ import annotations

import shutil
import subprocess

from pictx_fsm.errors import PictxError

__all__ = ["IMAGE_FORMATS", "GraphvizFailedError", "GraphvizMissingError", "to_image"]

IMAGE_FORMATS = ("svg", "png")


class GraphvizMissingError(PictxError):
    """The ``dot`` program is not installed; the message says how to install it."""

    def __init__(self) -> None:
        super().__init__(
            "Graphviz is missing: the 'dot' program was not found on PATH; SVG and PNG "
            "diagrams need it. Install the Debian package 'graphviz' (apt-get install graphviz) "
            "or your platform's Graphviz package; Mermaid and DOT text need nothing."
        )


class GraphvizFailedError(PictxError):
    """``dot`` ran but refused the input; carries its message."""


def to_image(dot_text: str, image_format: str, *, executable: str | None = None) -> bytes:
    """Render DOT text to ``svg`` or ``png`` bytes with Graphviz."""
    if image_format not in IMAGE_FORMATS:
        raise ValueError(f"image format must be one of {IMAGE_FORMATS}, got {image_format!r}")
    program = executable or shutil.which("dot")
    if program is None:
        raise GraphvizMissingError()
    try:
        completed = subprocess.run(
            [program, f"-T{image_format}"],
            input=dot_text.encode("utf-8"),
            capture_output=True,
            check=False,
            timeout=120,
        )
    except FileNotFoundError:
        raise GraphvizMissingError() from None
    if completed.returncode != 0:
        message = completed.stderr.decode("utf-8", "replace").strip()
        raise GraphvizFailedError(f"dot -T{image_format} failed: {message}")
    return completed.stdout
