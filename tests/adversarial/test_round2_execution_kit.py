"""Round 2 bench helper (no tests here): one Lab per module shared by the xdist workers.

``pytest -n 2`` gives each worker its own copy of a module-scoped fixture, so every
module's repo was built twice. :func:`shared` builds it once under the workers' common
temp folder (a file lock makes the second worker wait) and hands the other worker a Lab
rebuilt from the same folders, with the attributes the build recorded.
"""

from __future__ import annotations

import fcntl
import pickle
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from advkit import BenchError, Lab

_BASE = ("root", "repo", "config", "state", "log", "home", "recorder")


def shared(factory: pytest.TempPathFactory, key: str, build: Callable[[Path], Lab]) -> Lab:
    base = factory.getbasetemp()
    if base.name.startswith("popen-gw"):
        base = base.parent
    folder = base / f"r2-{key}"
    done = base / f"r2-{key}.pickle"
    failed = base / f"r2-{key}.failed"
    owner, builder = base / f"r2-{key}.owner", f"{build.__module__}.{build.__qualname__}"
    with open(base / f"r2-{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if owner.exists() and owner.read_text() != builder:  # one key, two labs: say so
            raise BenchError(f"the lab key {key} is {owner.read_text()}'s, not {builder}'s")
        owner.write_text(builder)
        if done.exists():
            saved: dict[str, Any] = pickle.loads(done.read_bytes())
            lab = Lab.__new__(Lab)
            for name, value in saved.items():
                setattr(lab, name, value)
            return lab
        if failed.exists():  # the build already failed: say why, not "File exists"
            raise BenchError(f"the shared lab {key} failed to build: {failed.read_text()}")
        folder.mkdir()
        try:
            lab = build(folder)
        except Exception as why:
            failed.write_text(f"{type(why).__name__}: {why}"[-3000:])
            raise
        keep = {k: v for k, v in vars(lab).items() if k != "_status"}
        done.write_bytes(pickle.dumps(keep))
        return lab


__all__ = ["_BASE", "shared"]
