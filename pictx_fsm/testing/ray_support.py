"""Ray, when it is installed: connecting to a local Ray or a cluster, and the one message
every ``--ray`` option gives without it.

Ray is an optional extra (``pip install 'pictx-fsm[ray]'``). Workers import this package,
so on a cluster every node needs it installed (``docs/performance.md``, "On a cluster").
"""

from __future__ import annotations

import argparse
import importlib.util
import logging
import os
from types import ModuleType
from typing import Any

from pictx_fsm.errors import UsageError

__all__ = [
    "LOCAL",
    "RAY_HINT",
    "add_ray_arguments",
    "check_workers",
    "connect",
    "require_ray",
    "worker_count",
]

LOCAL = "local"
"""``--ray`` without an address: a Ray started on this machine for the command."""
RAY_HINT = "pip install 'pictx-fsm[ray]'"


def add_ray_arguments(
    parser: argparse.ArgumentParser, work: str, workers: str = "Ray workers at once"
) -> None:
    """``--ray [ADDRESS]`` and ``--workers N`` of a command that puts ``work`` on workers."""
    parser.add_argument(
        "--ray",
        nargs="?",
        const=LOCAL,
        metavar="ADDRESS",
        help=f"{work} on Ray workers: a local Ray (default) or a cluster address ({RAY_HINT})",
    )
    parser.add_argument("--workers", type=int, help=f"{workers} (default: its CPUs)")


def check_workers(workers: int | None) -> None:
    if workers is not None and workers < 1:
        raise UsageError(f"--workers must be at least 1, not {workers}")


def require_ray(option: str = "--ray") -> ModuleType:
    """The ``ray`` module, or a one-line :class:`UsageError` saying how to install it."""
    if importlib.util.find_spec("ray") is None:
        raise UsageError(f"{option} needs Ray, which is not installed: {RAY_HINT}")
    import ray

    return ray


def connect(address: str, workers: int | None = None) -> ModuleType:
    """Start (``local``) or join (an address, ``auto``) Ray once per process. Local workers
    inherit this process's environment, so a kit found by ``PYTHONPATH`` is found there too."""
    ray = require_ray()
    if ray.is_initialized():
        return ray
    options: dict[str, Any] = {
        "ignore_reinit_error": True,
        "include_dashboard": False,
        "logging_level": logging.ERROR,
        "log_to_driver": False,
    }
    if address == LOCAL:
        options["num_cpus"] = workers or os.cpu_count() or 1
        path = os.environ.get("PYTHONPATH")
        if path:
            options["runtime_env"] = {"env_vars": {"PYTHONPATH": path}}
    else:
        options["address"] = address
    try:
        ray.init(**options)
    except (ConnectionError, ValueError, RuntimeError) as error:
        raise UsageError(f"--ray {address}: cannot connect: {error}") from None
    return ray


def worker_count(requested: int | None) -> int:
    """The workers a command uses: as requested, else the cluster's CPUs."""
    if requested is not None:
        return requested
    ray = require_ray()
    resources: dict[str, float] = ray.cluster_resources()
    return max(1, int(resources.get("CPU", 1)))
