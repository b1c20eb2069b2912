"""Round 9 bench helper (no tests here): each round-9 "runs" module's results are built once
for both xdist workers (a file lock; the other worker reads the JSON). A worker that finds a
build under way builds another module's results meanwhile (as round 3's ``shared_eager``),
so the builds overlap instead of queueing."""

from __future__ import annotations

import contextlib
import fcntl
import importlib
import json
from pathlib import Path
from typing import Any

import pytest

BUILDS = {
    "r9-limits": "test_round9_runs_limits",
    "r9-special": "test_round9_runs_special",
    "r9-crash": "test_round9_runs_crash",
}


def _base(factory: pytest.TempPathFactory) -> Path:
    base = factory.getbasetemp()
    return base.parent if base.name.startswith("popen-gw") else base


def _build(base: Path, key: str, wait: bool) -> dict[str, Any] | None:
    done = base / f"{key}.json"
    with open(base / f"{key}.lock", "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            return None
        if done.exists():
            return dict(json.loads(done.read_text()))
        folder = base / key
        with contextlib.suppress(FileExistsError):
            folder.mkdir()
        out = importlib.import_module(BUILDS[key])._build(folder)
        done.write_text(json.dumps(out))
        return dict(out)


def shared_results(factory: pytest.TempPathFactory, key: str) -> dict[str, Any]:
    base = _base(factory)
    got = _build(base, key, wait=False)
    if got is not None:
        return got
    for other in BUILDS:  # someone builds ``key``: build what nobody has started yet
        if other != key and not (base / f"{other}.json").exists():
            _build(base, other, wait=False)
    got = _build(base, key, wait=True)
    assert got is not None
    return got
