"""Round 3 bench helper (no tests here): the round-3 "runs" modules' labs, shared by the
xdist workers (round 2's :func:`shared`), built side by side.

With ``pytest -n 2`` both workers start on the first module and one waits for the other's
build. :func:`shared_eager` lets the waiting worker build the other module's lab meanwhile,
so the two builds overlap instead of queueing.
"""

from __future__ import annotations

import fcntl
import importlib
from pathlib import Path

import pytest
from advkit import Lab
from test_round2_execution_kit import shared

#: lab key -> the module whose ``_build(root)`` makes it
BUILDS = {"r3-midrun": "test_round3_runs_midrun", "r3-steps": "test_round3_runs_steps"}


def _base(factory: pytest.TempPathFactory) -> Path:
    base = factory.getbasetemp()
    return base.parent if base.name.startswith("popen-gw") else base


def _busy(base: Path, key: str) -> bool:
    """Someone is building ``key`` right now (its lock is held)."""
    if (base / f"r2-{key}.pickle").exists():
        return False
    with open(base / f"r2-{key}.lock", "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
    return False


def shared_eager(factory: pytest.TempPathFactory, key: str) -> Lab:
    base = _base(factory)
    if _busy(base, key):
        for other, module in BUILDS.items():
            if (
                other != key
                and not (base / f"r2-{other}.pickle").exists()
                and not _busy(base, other)
            ):
                shared(factory, other, importlib.import_module(module)._build)
    return shared(factory, key, importlib.import_module(BUILDS[key])._build)


__all__ = ["shared_eager"]
