"""A controller whose passes fail says so wherever a plan's status is read (round 124,
atk124d: while a foreign ``index.lock`` made every ``plangate run --once`` exit 2 ``E_GIT``,
``plangate status --json`` showed the plan ``executing`` with ``waiting`` and ``reason``
null, and the text said nothing: the remedy was only on the pass's stderr).

The failure is noted in the state directory (``pass-failed.json``, out of the agent's reach)
by the lock's holder and removed by the next pass that completes; ``status`` (text and
``--json``), MCP ``status`` and the page (``/api/``) read it, and a missing or mangled note
never makes them fail. A plan file staged in the index is named as staged, with its remedy.

Real git, a real ``git commit`` holding the lock, real ``plangate`` processes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.gitenv import ROOT, git
from tests.support.sharedcheckout import approved_plan, once

#: The agent's tool: prints its tag; with ``T_HOW`` set, action 1 SIGKILLs the controller
#: (``kill``) or edits PLAN.yml (and stages the edit, for ``staged``).
TOOL = """\
import json, os, subprocess, sys
tag, how = sys.argv[1], os.environ.get("T_HOW", "")
repo = os.environ["T_REPO"]
env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
rel = "plans/p/PLAN.yml"
if tag == "p-1" and how == "kill":  # the controller dies in action 1: its run stays open
    import signal
    os.kill(os.getppid(), signal.SIGKILL)
elif tag == "p-1" and how:
    with open(os.path.join(repo, rel), "a") as handle:
        handle.write("# the agent's note\\n")
    if how == "staged":
        subprocess.run(["git", "add", rel], cwd=repo, env=env, check=True)
print(json.dumps({"ok": tag}))
"""

#: A person's ``git commit -a`` whose editor waits for ``release`` and then gives up: git
#: holds ``.git/index.lock`` the whole time and removes it when the commit is abandoned.
EDITOR = """\
#!/bin/sh
while [ ! -e "{release}" ]; do sleep 0.05; done
exit 1
"""


def _plangate(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "controller", *args],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )


def _rows(config: Path) -> dict[str, dict[str, Any]]:
    result = _plangate("status", "--json", "--config", str(config))
    assert result.returncode == 0, result.stderr[-2000:]
    return {row["plan"]: row for row in json.loads(result.stdout)}


def _hold_index_lock(tmp_path: Path, repo: Path) -> tuple[subprocess.Popen[bytes], Path]:
    """A person's ``git commit -a`` in its editor: a real git process holding the lock."""
    release = tmp_path / "release"
    editor = tmp_path / "editor.sh"
    editor.write_text(EDITOR.format(release=release))
    editor.chmod(0o755)
    (repo / "README").write_text("plans, edited by a person\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env |= {"GIT_EDITOR": str(editor), "GIT_AUTHOR_NAME": "Bob", "GIT_AUTHOR_EMAIL": "b@x"}
    env |= {"GIT_COMMITTER_NAME": "Bob", "GIT_COMMITTER_EMAIL": "b@x"}
    holder = subprocess.Popen(["git", "commit", "-a"], cwd=repo, env=env)
    lock = repo / ".git" / "index.lock"
    deadline = time.monotonic() + 30
    while not lock.exists():
        assert holder.poll() is None, "git commit ended before it took the lock"
        assert time.monotonic() < deadline, "git commit never took the lock"
        time.sleep(0.02)
    return holder, release


@pytest.mark.parametrize("step", ["start", "outcome"])
def test_a_foreign_index_lock_is_in_status_until_a_pass_completes(
    tmp_path: Path, repo: Path, step: str
) -> None:
    """``start``: an approved plan whose start commit every pass fails to make; ``outcome``:
    atk124d's, a run its controller was killed in (``executing``), whose outcome (failed,
    in doubt) every restart fails to commit."""
    config = approved_plan(
        tmp_path, repo, TOOL, {"T_HOW": "kill" if step == "outcome" else ""}, step
    )
    if step == "outcome":
        killed = _plangate("run", "--once", "--config", str(config))
        assert killed.returncode == -9, killed.stderr[-2000:]
        assert "status: executing" in git(repo, "show", "main:plans/p/PLAN.yml")
    holder, release = _hold_index_lock(tmp_path, repo)
    try:
        failed = _plangate("run", "--once", "--config", str(config))
        assert failed.returncode == 2, failed.stderr[-2000:]
        assert "E_GIT" in failed.stderr and "index.lock" in failed.stderr

        row = _rows(config)["plans/p"]
        stuck = row["pass_failed"]
        assert stuck["code"] == "E_GIT"
        assert "index.lock" in stuck["message"]
        assert "index.lock" in stuck["remedy"]  # git's remedy: remove it if no git runs
        assert stuck["passes"] == 1 and stuck["since"] == stuck["at"]
        assert stuck["since"].endswith("Z")
        # the plan's next step is the controller's: it says what it waits on, and the remedy
        assert row["status"] == ("executing" if step == "outcome" else "approved")
        assert not row["running"]
        assert row["waiting"].startswith("E_GIT: the controller's passes fail since ")
        assert stuck["remedy"] in row["waiting"]

        text = _plangate("status", "--config", str(config))
        assert text.returncode == 0, text.stderr
        first = text.stdout.splitlines()
        assert first[0].startswith(f"controller: its passes fail since {stuck['since']}")
        assert first[1].startswith("  E_GIT: ") and "index.lock" in first[1]
        assert first[2] == f"  remedy: {stuck['remedy']}"
        assert "E_GIT: the controller's passes fail (above)" in text.stdout

        # the note is the controller's, in its state directory, never in the repository
        assert (tmp_path / "state" / "pass-failed.json").is_file()
        assert "pass-failed" not in git(repo, "status", "--porcelain", "--ignored")

        again = _plangate("run", "--once", "--config", str(config))
        assert again.returncode == 2, again.stderr[-2000:]
        later = _rows(config)["plans/p"]["pass_failed"]
        assert later["passes"] == 2 and later["since"] == stuck["since"]
    finally:
        release.touch()
        holder.wait(timeout=30)
    assert not (repo / ".git" / "index.lock").exists()  # the person's commit gave up

    once(config)  # a pass that completes: the plan runs, the note is gone
    row = _rows(config)["plans/p"]
    assert row["status"] == ("failed" if step == "outcome" else "completed"), row
    assert row["pass_failed"] is None and row["waiting"] is None
    if step == "outcome":
        assert "E_ACTION_IN_DOUBT" in (row["reason"] or "")
    assert not (tmp_path / "state" / "pass-failed.json").exists()
    text = _plangate("status", "--config", str(config))
    assert "passes fail" not in text.stdout


def test_mcp_status_and_the_page_say_it_too(tmp_path: Path, repo: Path) -> None:
    """MCP ``status`` (its rows are ``status --json``'s) and the page's ``/api/`` (its
    snapshot is the last completed pass's, so it reads the note at each request)."""
    from controller.commands._shared import required_config
    from controller.service.agentapi import AgentApi
    from controller.service.ui.data import UiData
    from controller.service.ui.render import overview

    config = approved_plan(tmp_path, repo, TOOL, {}, "pass failed")
    cfg = required_config(str(config))
    data = UiData(cfg, lambda: repo)
    data.publish(AgentApi(cfg).status()["plans"])  # as the last completed pass left it
    assert data.overview()["pass_failed"] is None
    holder, release = _hold_index_lock(tmp_path, repo)
    try:
        assert _plangate("run", "--once", "--config", str(config)).returncode == 2
    finally:
        release.touch()
        holder.wait(timeout=30)

    (row,) = AgentApi(cfg).status("plans/p")["plans"]
    assert row["pass_failed"]["code"] == "E_GIT"
    assert "index.lock" in row["pass_failed"]["message"]
    assert row["waiting"].startswith("E_GIT: the controller's passes fail since ")

    api = data.overview()
    assert api["pass_failed"]["code"] == "E_GIT"
    assert "index.lock" in api["pass_failed"]["remedy"]
    (section,) = [s for s in api["sections"] if s["status"] == "approved"]
    assert section["plans"][0]["waiting"].startswith("E_GIT: the controller's passes fail")
    assert b"The controller is not moving" in overview(api)
    page = data.plan("plans/p")
    assert page is not None and page["pass_failed"]["code"] == "E_GIT"

    once(config)
    assert data.overview()["pass_failed"] is None
    (row,) = AgentApi(cfg).status("plans/p")["plans"]
    assert row["pass_failed"] is None


@pytest.mark.parametrize(
    "note",
    [
        b"",
        b"{not json",
        b"[]",
        b'{"code": "E_GIT"}',
        b'{"code": "rm -rf", "message": "m", "remedy": "r", "since": "s", "at": "a", "passes": 1}',
        b'{"code": "E_GIT", "message": "m", "remedy": "r", "since": "s", "at": "a", "passes": 0}',
        b'{"code": "E_GIT", "message": 5, "remedy": "r", "since": "s", "at": "a", "passes": 1}',
        b"\xff\xfe",
        b'{"code": "E_GIT", "message": "' + b"x" * 70_000 + b'"}',
        "fifo",
        "link",
        "folder",
    ],
    ids=[
        *("empty", "cut", "list", "short", "code", "passes", "message", "bytes", "huge"),
        *("fifo", "link", "folder"),
    ],
)
def test_a_missing_or_mangled_note_never_fails_status(
    tmp_path: Path, repo: Path, note: bytes | str
) -> None:
    config = approved_plan(tmp_path, repo, TOOL, {}, "no note")
    path = tmp_path / "state" / "pass-failed.json"
    if note == "fifo":
        os.mkfifo(path)
    elif note == "link":
        target = tmp_path / "elsewhere.json"
        target.write_text(
            '{"code": "E_GIT", "message": "m", "remedy": "r", "since": "s", "at": "a", "passes": 1}'
        )
        path.symlink_to(target)  # never followed
    elif note == "folder":
        path.mkdir()
    else:
        assert isinstance(note, bytes)
        path.write_bytes(note)
    rows = _rows(config)
    assert "pass_failed" in rows["plans/p"]
    assert rows["plans/p"]["pass_failed"] is None
    assert rows["plans/p"]["waiting"] is None
    text = _plangate("status", "--config", str(config))
    assert text.returncode == 0 and "passes fail" not in text.stdout


def test_a_staged_edit_of_the_plan_file_is_named_as_staged(tmp_path: Path, repo: Path) -> None:
    """t1-stageplan's wording: the outcome waits on a PLAN.yml edit staged in the index
    (the working file as staged), and says so, with its remedy, rather than "uncommitted
    edits" (whose remedy, discard, leaves the staged entry)."""
    config = approved_plan(tmp_path, repo, TOOL, {"T_HOW": "staged"}, "staged plan")
    err = once(config)  # the run: action 1 stages its edit of PLAN.yml
    assert git(repo, "diff", "--cached", "--name-only").split() == ["plans/p/PLAN.yml"]

    waiting = _rows(config)["plans/p"]["waiting"]
    assert "staged in the index" in waiting, waiting
    assert "git restore --staged -- plans/p/PLAN.yml" in waiting
    assert "has uncommitted edits" not in waiting
    assert "staged in the index" in err and "has uncommitted edits" not in err

    git(repo, "restore", "--staged", "--", "plans/p/PLAN.yml")  # its remedy: now an edit
    waiting = _rows(config)["plans/p"]["waiting"]
    assert "has uncommitted edits" in waiting and "staged" not in waiting
