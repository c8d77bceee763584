"""Expanding a layer of ``pictx-fsm check`` by forking worlds instead of replaying them.

A world cannot be copied in Python (a run in progress is a suspended generator, the audit
log holds a running hash), but a process holding one can be forked: the child has the same
world, generator frames and all, in its own memory. So a layer's frontier — its paths in
breadth-first order, i.e. sorted — is walked as a trie: a process holding the world at a
prefix forks one child per next action on the way to the frontier, applies it there and
walks on; at a frontier state it forks one child per action of the alphabet, which applies
it, checks every invariant, computes the canonical state and writes the
:class:`~pictx_fsm.testing.check.Child` to a pipe. Every action is applied once per trie
edge instead of once per prefix position of every child, and no world is built per child.

What a world keeps on disk (:meth:`~pictx_fsm.testing.kit.Kit.world_directories`: a notes
sandbox) is shared between a process and its children; after each child the parent puts it
back byte for byte (contents, modes, link targets, times). Children leave with
:func:`os._exit`: no finalizer removes a parent's sandbox, no buffer is flushed twice.

``workers`` processes walk contiguous shares of the frontier at once (each from a world of
its own, built before they are forked, so no two share a sandbox). The children are
returned in frontier, then alphabet, order: the states, transitions and shortest
counterexample are the replaying expander's (tested). Where :func:`os.fork` is missing, the
check replays (:func:`~pictx_fsm.testing.check.serial_expander`).
"""

from __future__ import annotations

import gc
import os
import pickle
import shutil
import sys
import traceback
from collections.abc import Callable, Iterator, Sequence
from itertools import groupby
from pathlib import Path
from typing import Any

from pictx_fsm.testing.check import (
    Child,
    Expander,
    ExpanderFactory,
    Node,
    serial_expander,
    settled,
    step,
)
from pictx_fsm.testing.kit import Kit

__all__ = ["can_fork", "fork_expander"]

Paths = Sequence[tuple[int, ...]]
Snapshot = dict[str, tuple[int, int, bytes | str | None]]
"""A directory tree: each entry's relative path → (mode, mtime in ns, a file's bytes or a
link's target)."""


def can_fork() -> bool:
    """Whether this platform forks processes (POSIX): otherwise the check replays."""
    return hasattr(os, "fork") and sys.platform != "win32"


def fork_expander(workers: int = 1) -> ExpanderFactory:
    """An expander factory expanding each layer in ``workers`` forked processes (the replaying
    expander where :func:`os.fork` is unavailable)."""
    if not can_fork():
        return serial_expander

    def factory(kit: Kit, config: Any, alphabet: Sequence[Any]) -> Expander:
        def run(frontier: Sequence[Node]) -> list[Child]:
            paths = [path for path, _ in frontier]
            shares = _shares(paths, workers)
            worlds = [(kit.world(config), kit.suite(config)) for _ in shares]
            try:
                found: dict[tuple[int, ...], Child] = {}
                calls = [
                    _forked(lambda w=w, s=s, p=p: _walk(kit, w, s, alphabet, p, 0), [])
                    for (w, s), p in zip(worlds, shares, strict=True)
                ]
                for collect in calls:
                    found.update((child.path, child) for child in collect())
            finally:
                for world, _ in worlds:
                    world.release()
            width = len(alphabet)
            return [found[(*path, index)] for path in paths for index in range(width)]

        return run

    return factory


def _shares(paths: Paths, workers: int) -> list[Paths]:
    """Contiguous shares of the sorted frontier, as even as possible (neighbours share
    prefixes, so each share's trie stays narrow)."""
    count = max(1, min(workers, len(paths)))
    size, extra = divmod(len(paths), count)
    shares, start = [], 0
    for index in range(count):
        end = start + size + (index < extra)
        shares.append(paths[start:end])
        start = end
    return [share for share in shares if share]


def _walk(
    kit: Kit, world: Any, suite: Any, alphabet: Sequence[Any], paths: Paths, depth: int
) -> list[Child]:
    """The children of every frontier path in ``paths`` (sorted, sharing their first
    ``depth`` actions, which ``world`` has applied). The last branch is taken in this
    process: the caller discards the world afterwards."""
    gc.freeze()  # children then never copy the parent's objects to collect them
    directories = kit.world_directories(world)
    if depth == len(paths[0]):
        prefix = paths[0]
        moves: list[tuple[int, Callable[[], list[Child]]]] = [
            (index, lambda i=index: [_leaf(kit, world, suite, alphabet, (*prefix, i))])
            for index in range(len(alphabet))
        ]
    else:
        moves = []
        for index, group in groupby(paths, key=lambda path: path[depth]):
            share = list(group)
            moves.append((index, _inner(kit, world, suite, alphabet, share, depth)))
    results: list[Child] = []
    last = len(moves) - 1
    for _, move in moves[:last]:  # one at a time: they share the world's directories
        results.extend(_forked(move, directories)())
    results.extend(moves[last][1]())
    return results


def _inner(
    kit: Kit, world: Any, suite: Any, alphabet: Sequence[Any], share: Paths, depth: int
) -> Callable[[], list[Child]]:
    def move() -> list[Child]:
        _, failed = step(world, suite, alphabet[share[0][depth]], share[0][: depth + 1])
        if failed is not None:  # a frontier path is clean all the way: replay disagrees
            raise RuntimeError(f"a frontier prefix failed when walked: {failed.failure}")
        return _walk(kit, world, suite, alphabet, share, depth + 1)

    return move


def _leaf(
    kit: Kit, world: Any, suite: Any, alphabet: Sequence[Any], path: tuple[int, ...]
) -> Child:
    applied, failed = step(world, suite, alphabet[path[-1]], path)
    return failed if failed is not None else settled(kit, world, suite, path, applied)


def _forked(
    work: Callable[[], list[Child]], directories: Sequence[Path]
) -> Callable[[], list[Child]]:
    """Run ``work`` in a child process now; the returned call collects its result (and puts
    ``directories`` back as they were before the child)."""
    before = [_snapshot(d) for d in directories]
    sys.stdout.flush()
    sys.stderr.flush()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        os.close(read)
        status = 0
        try:
            outcome: object = work()
        except BaseException:
            outcome, status = traceback.format_exc(), 1
        try:
            with os.fdopen(write, "wb") as out:
                pickle.dump(outcome, out, protocol=pickle.HIGHEST_PROTOCOL)
        finally:
            os._exit(status)
    os.close(write)

    def collect() -> list[Child]:
        with os.fdopen(read, "rb") as source:
            data = source.read()
        _, status = os.waitpid(pid, 0)
        for directory, snapshot in zip(directories, before, strict=True):
            _restore(directory, snapshot)
        outcome = pickle.loads(data) if data else None
        if os.waitstatus_to_exitcode(status) != 0 or not isinstance(outcome, list):
            raise RuntimeError(f"a forked expansion failed:\n{outcome or 'no result'}")
        return outcome

    return collect


TOP = "."
"""The snapshot's key for the directory itself (its time moves when an entry is made)."""


def _snapshot(top: Path) -> Snapshot:
    stat = os.stat(top)
    found: Snapshot = {TOP: (stat.st_mode, stat.st_mtime_ns, None)}
    for name, path in _tree(top):
        stat = os.lstat(path)
        content: bytes | str | None = None
        if os.path.islink(path):
            content = os.readlink(path)
        elif os.path.isfile(path):
            content = Path(path).read_bytes()
        found[name] = (stat.st_mode, stat.st_mtime_ns, content)
    return found


def _tree(top: Path) -> Iterator[tuple[str, str]]:
    """Every entry below ``top`` (links not followed), parents before children."""
    pending = [("", str(top))]
    while pending:
        prefix, directory = pending.pop()
        with os.scandir(directory) as scan:
            for entry in sorted(scan, key=lambda e: e.name):
                yield prefix + entry.name, entry.path
                if entry.is_dir(follow_symlinks=False):
                    pending.append((prefix + entry.name + "/", entry.path))


def _restore(top: Path, snapshot: Snapshot) -> None:
    """Put the tree below ``top`` back as ``snapshot`` holds it (nothing when unchanged)."""
    now = _snapshot(top)
    if now == snapshot:
        return
    for name in sorted(set(now) - set(snapshot), reverse=True):
        _remove(top / name)
    for name, (mode, _, content) in sorted(snapshot.items()):
        if name == TOP or now.get(name) == snapshot[name]:
            continue
        path = top / name
        if os.path.lexists(path) and now.get(name, (None,))[0] != mode:
            _remove(path)
        if isinstance(content, str):
            if os.path.lexists(path):
                path.unlink()
            os.symlink(content, path)
        elif content is None:
            path.mkdir(exist_ok=True)
        else:
            path.write_bytes(content)
        if not isinstance(content, str):
            os.chmod(path, mode & 0o7777)
    for name, (_, mtime, _) in sorted(snapshot.items(), reverse=True):
        if name != TOP:
            os.utime(top / name, ns=(mtime, mtime), follow_symlinks=False)
    os.utime(top, ns=(snapshot[TOP][1], snapshot[TOP][1]))


def _remove(path: Path) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        path.unlink()
