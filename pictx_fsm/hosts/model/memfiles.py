"""In-memory files for the model host: where the diagnostics log and the export report of
its (virtual) session files live, with a switch that makes every write fail."""

from __future__ import annotations

__all__ = ["MemoryFiles"]


class MemoryFiles:
    """A tiny file system: path → bytes."""

    def __init__(self) -> None:
        self.data: dict[str, bytearray] = {}
        self.fail_writes = False

    def _check(self) -> None:
        if self.fail_writes:
            raise OSError("no space left on device")

    def size(self, path: str) -> int:
        return len(self.data.get(path, b""))

    def append(self, path: str, data: bytes) -> None:
        self._check()
        self.data.setdefault(path, bytearray()).extend(data)

    def rename(self, source: str, target: str) -> None:
        self._check()
        if source in self.data:
            self.data[target] = self.data.pop(source)

    def remove(self, path: str) -> None:
        self.data.pop(path, None)

    def read(self, path: str) -> bytes | None:
        data = self.data.get(path)
        return None if data is None else bytes(data)

    def write(self, path: str, data: bytes) -> None:
        self._check()
        self.data[path] = bytearray(data)
