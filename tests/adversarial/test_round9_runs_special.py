"""Round 9, stall the controller: a FIFO the agent puts in the *shared ``.git``* (local
mode: docs/agents.md, the agent commits with git itself in the working tree the controller
also writes, so it can write under ``.git``).

Round 1 (``test_one_bad_entry``) put FIFOs where plans live (PLAN.yml, EXECUTION_LOG.md, a
stray file): held. git itself opens some files under ``.git`` with a blocking ``open()``:
the repository config, the index, a reflog, ``objects/info/alternates``. A FIFO there makes
every git command the controller runs wait forever for a writer: the pass never ends, no
plan runs, ``status`` hangs too, and nothing names the cause. (Also tried, held: FIFOs as
``plans/evil/.gitignore``, ``plans/evil/PLAN.json`` (uncommitted source), ``.gitignore``,
``.git/info/exclude``, ``.git/info/grafts``; an empty regular ``.git/shallow`` makes every
pass refuse loudly with E_GIT "is a shallow clone", which names its cause.)

One base lab: the agent submits a plan, the controller freezes it, Alice approves it. Each
variant runs on a copy of that lab (repo, config, state) after the agent replaced one path
with a FIFO. Defence asserted: the ``run --once`` pass ends within 6 s, and either the
approved plan ran exactly once or the pass exited non-zero naming the file.

Results (round 9): the four FIFOs in ``.git`` and the two stale locks **broke** (strict
xfails); fixed since: a git directory holding a FIFO or a device outside the object store is
refused before anything opens a file there (E_GIT naming it, on every pass and every
command: ``controller.git.base.check_git_dir``), every git command is stopped after
``execution.git_timeout``, and a ref lock git cannot take is E_GIT naming the lock.

Also (same assertion): a stale ``refs/heads/main.lock`` / ``HEAD.lock`` (an empty regular
file, two hours old, as a crashed git leaves it; docs/operations.md names a stale
``.git/index.lock``, which is reported with a remedy): the pass exits 0 having run nothing.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, Lab, plan_text
from test_round9_runs_kit import shared_results

HELD = ["plans/evil/.gitignore", ".git/info/exclude"]
BROKE = [".git/config", ".git/index", ".git/logs/HEAD", ".git/objects/info/alternates"]
#: tried by hand in round 9, added with the fix (a FIFO anywhere in .git outside the objects)
BROKE += [".git/packed-refs", ".git/info/attributes", ".git/logs/refs/heads/main"]
#: an empty regular file, as a crashed git leaves it (dated two hours ago)
STALE = [".git/refs/heads/main.lock", ".git/HEAD.lock"]
WHERE = HELD + BROKE + STALE
TIMEOUT = 30.0  # a hang is forever; this only bounds a loaded machine


def _copy(base: Lab, root: Path) -> Lab:
    shutil.copytree(base.root, root, symlinks=True)
    lab = Lab.__new__(Lab)
    lab.root, lab.repo, lab.config = root, root / "repo", root / "plangate.yml"
    lab.state, lab.log, lab.home = root / "state", root / "ran.log", root / "home"
    lab.recorder = root / "rec.py"
    lab.config.write_text(lab.config.read_text().replace(str(base.root), str(root)))
    return lab


def _reap(root: Path) -> None:
    """End the git processes this variant started that still wait on the FIFO (by their
    id: every process whose working directory is inside this variant's copy)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cwd = os.readlink(entry / "cwd")
        except OSError:
            continue
        if cwd == str(root) or cwd.startswith(str(root) + "/"):
            with contextlib.suppress(OSError):
                os.kill(int(entry.name), signal.SIGKILL)


def _variant(base: Lab, root: Path, where: str) -> dict[str, Any]:
    lab = _copy(base, root)
    path = lab.repo / where
    path.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    if where in STALE:
        path.write_text("")
        os.utime(path, (time.time() - 7200, time.time() - 7200))
    else:
        os.mkfifo(path)
    start = time.monotonic()
    try:
        result = lab.cli("run", "--once", "--config", str(lab.config), timeout=TIMEOUT)
        outcome = {"exit": result.returncode, "stderr": result.stderr[-400:]}
    except subprocess.TimeoutExpired:
        outcome = {"exit": None, "stderr": "timeout"}
    finally:
        _reap(root)
    outcome["seconds"] = round(time.monotonic() - start, 1)
    outcome["calls"] = len(lab.calls("ok"))
    if where in STALE:
        status = lab.cli("status", "--json", "--config", str(lab.config), timeout=TIMEOUT)
        outcome["status"] = status.stdout[-1500:] + status.stderr[-300:]
    return outcome


def _build(root: Path) -> dict[str, Any]:
    base = Lab(root / "base")
    base.write("ok", plan_text("ok"))
    base.commit("submit ok", AGENT)
    base.run()
    base.approve("ok")
    with ThreadPoolExecutor(4) as pool:
        futures = {w: pool.submit(_variant, base, root / f"v{i}", w) for i, w in enumerate(WHERE)}
        return {w: f.result() for w, f in futures.items()}


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return shared_results(tmp_path_factory, "r9-special")


@pytest.mark.parametrize("where", WHERE)
def test_a_fifo_in_the_shared_git_dir_never_stalls_the_controller(
    results: dict[str, Any], where: str
) -> None:
    got = results[where]
    assert got["exit"] is not None, got  # the pass ended
    if got["exit"] == 0:
        assert got["calls"] == 1, got
    else:
        assert got["calls"] == 0 and where.rsplit("/", 1)[-1] in got["stderr"], got
