"""A first start on a squash whose records are spelled otherwise (round 74, r74squash).

Round 73's squash rule found the controller's records with a line pattern (``^execution:``
in ``PLAN.yml``): the agent's squash of the history into one parentless commit, its plan files
respelled (keys quoted, ``execution :``, the document indented, ``PLAN.yml`` renamed
``PLAN.yaml``: the same YAML, the same frozen hashes), was taken by trust on first use and an
approval of a completed plan ran it again. And one unsealed empty commit under the
controller's name on the squash passed for an upgrade's history. What an operator relies on:

- a first start decides by what the plan files parse to, at every plan file name: a key alone
  refuses ``E_HISTORY_REWRITTEN``, a new state directory ``E_STORAGE``, however the records
  are spelled; ``--take-over`` then counts the runs they record as executed;
- a commit under the controller's name with a parent stands for an upgrade's history only for
  the plans whose folder it changed (whose records it made);
- a ``git grep`` of the head that fails refuses the start (``E_GIT``), never adopts unread;
- an upgrade's history (its commits made the records) still starts as before.

Real ``plangate run --once``, real git.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.service.test_own_commits import CONTROLLER, _key_alone, _second_state, _setup
from tests.service.test_squashed_first_start import (
    AGENT,
    _history,
    _no_rerun,
    _refused,
    _squash,
    _start,
)
from tests.support.gitenv import commit_all, git, identity


def _respell(repo: Path, shape: str) -> None:
    """Every plan file respelled as ``shape`` (the same YAML), uncommitted."""
    for path in sorted((repo / "plans").glob("*/PLAN.yml")):
        text = path.read_text()
        if shape == "yaml":
            path.rename(path.with_name("PLAN.yaml"))
            continue
        if shape == "dq":
            text = re.sub(r"(?m)^(frozen|execution|approval|validation):", r'"\1":', text)
        elif shape == "sp":
            text = re.sub(r"(?m)^(frozen|execution|approval|validation):", r"\1 :", text)
        elif shape == "ind":
            text = "".join(f" {line}" if line.strip() else line for line in text.splitlines(True))
        elif shape == "esc":
            text = re.sub(r"(?m)^execution:", '"\\\\x65xecution":', text)
            text = re.sub(r"(?m)^frozen:", '"\\\\x66rozen":', text)
        path.write_text(text)
    git(repo, "add", "-A")


SHAPES = ["dq", "sp", "ind", "yaml", "esc"]


@pytest.mark.parametrize("shape", SHAPES)
def test_a_new_state_directory_refuses_a_respelled_squash(
    tmp_path: Path, repo: Path, shape: str
) -> None:
    """The squash with its files respelled: E_STORAGE as the plain squash; ``--take-over``
    then counts the completed ``done`` executed (an approval of it runs nothing)."""
    config = _history(tmp_path, repo)
    _respell(repo, shape)
    _squash(repo)
    second = _second_state(tmp_path, config)
    _refused(tmp_path, repo, second, "E_STORAGE", "own_line_squashed")
    if shape not in ("yaml", "ind"):  # (it edits PLAN.yml; the writer's indent: r74indent)
        _no_rerun(tmp_path, repo, second)


@pytest.mark.parametrize("shape", SHAPES)
def test_a_key_alone_refuses_a_respelled_squash(tmp_path: Path, repo: Path, shape: str) -> None:
    """The old ``commit.key`` alone on the respelled squash: E_HISTORY_REWRITTEN."""
    config = _history(tmp_path, repo)
    _respell(repo, shape)
    _squash(repo)
    _refused(tmp_path, repo, _key_alone(tmp_path, config), "E_HISTORY_REWRITTEN", "own_line_gone")


def _named_on_top(repo: Path, *, touch: str | None = None) -> None:
    """One unsealed commit under the controller's name on the squash (empty, or changing the
    plan ``touch``'s file)."""
    if touch is None:
        git(repo, "commit", "-q", "--allow-empty", "-m", "plangate: record policy",
            env=identity(*CONTROLLER))  # fmt: skip
        return
    path = repo / "plans" / touch / "PLAN.yml"
    path.write_text(path.read_text() + "# touched\n")
    commit_all(repo, f"plangate: freeze plans/{touch}", CONTROLLER)


def test_a_named_commit_that_made_no_record_is_no_upgrade(tmp_path: Path, repo: Path) -> None:
    """The squash plus one empty commit under the controller's name (a parent, no record
    made): E_STORAGE, not trust on first use; the take-over reruns nothing."""
    config = _history(tmp_path, repo)
    _squash(repo)
    _named_on_top(repo)
    second = _second_state(tmp_path, config)
    _refused(tmp_path, repo, second, "E_STORAGE", "own_line_squashed")
    _no_rerun(tmp_path, repo, second)


def test_a_named_commit_vouches_only_for_the_plans_it_changed(tmp_path: Path, repo: Path) -> None:
    """The same commit changing another plan's file (``victim``): ``done``'s run is still no
    commit's of the controller's: E_STORAGE."""
    config = _history(tmp_path, repo)
    _squash(repo)
    _named_on_top(repo, touch="victim")
    _refused(tmp_path, repo, _second_state(tmp_path, config), "E_STORAGE", "own_line_squashed")


def test_an_upgrade_whose_commits_made_the_records_starts(tmp_path: Path, repo: Path) -> None:
    """Control: the records made in unsealed commits under the controller's name (history
    from before sealing), respelled: trust on first use, as before."""
    config = _setup(tmp_path, repo)
    path = repo / "plans" / "done" / "PLAN.yml"
    path.write_text(
        path.read_text().replace("status: pending_approval", "status: completed")
        + "\"execution\":\n  status: completed\n  started_at: '2025-01-01T00:00:00Z'\n"
    )
    commit_all(repo, "plangate: complete plans/done\n\nController: old/1", CONTROLLER)
    path.rename(path.with_name("PLAN.yaml"))  # a human renames it later
    git(repo, "add", "-A")
    commit_all(repo, "rename", ("Alice", "alice@example.com"))
    result = _start(config)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "own_commits_adopted" in result.stderr and "own_line" not in result.stderr


def test_a_failing_git_grep_refuses_the_start(tmp_path: Path, repo: Path) -> None:
    """The head's plan files cannot be read (a blob gone from the controller's store): the
    first start is refused E_GIT, nothing adopted, not started as if they held nothing."""
    config = _history(tmp_path, repo)
    _squash(repo)
    second = _second_state(tmp_path, config)
    _refused(tmp_path, repo, second, "E_STORAGE", "own_line_squashed")
    blob = git(repo, "rev-parse", "HEAD:plans/done/PLAN.yml").strip()
    loose = tmp_path / "state2" / "objects.git" / "objects" / blob[:2] / blob[2:]
    assert loose.is_file()  # a small fetch keeps its objects loose
    shutil.move(loose, tmp_path / "gone")
    result = _start(second)
    assert result.returncode != 0 and "E_GIT" in result.stderr, result.stderr[-2000:]
    assert "git grep" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "state2" / "commits").exists()


def test_an_agent_squash_with_no_records_starts(tmp_path: Path, repo: Path) -> None:
    """Control: a new repository whose files name ``execution`` only in text (a comment)
    and a backslash in a value: read, no run recorded, it starts."""
    config = _setup(tmp_path, repo)
    path = repo / "plans" / "done" / "PLAN.yml"
    path.write_text(path.read_text() + "# execution: none yet \\ ever\n")
    commit_all(repo, "note", AGENT)
    result = _start(config)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "own_line" not in result.stderr


def test_a_git_grep_warning_is_no_failure(tmp_path: Path, repo: Path) -> None:
    """Control: a new repository whose only plan sits under a folder name longer than the
    file system takes (git warns it cannot open that folder's ``.gitattributes``, and finds
    nothing): a warning is no failed read, the first start goes on (round 11's long names;
    CI, 2026-11-30: r74squash's fail-closed read refused it E_GIT)."""
    config = tmp_path / "plangate.yml"
    config.write_text(
        f"repo: {repo}\nstate_dir: {tmp_path / 'state'}\n"
        "approval: {approvers: [alice@example.com]}\ntools: {greet: {kind: echo}}\n"
    )
    (repo / "plans" / "honest").mkdir(parents=True)  # git then looks in plans/ for attributes
    (repo / "plans" / "honest" / "PLAN.yml").write_text("plan:\n  title: honest\n")
    git(repo, "add", "-A")
    text = "plan:\n  title: long\n  status: draft\nactions: []\n"
    blob = git(repo, "hash-object", "-w", "--stdin", data=text.encode()).strip()
    git(repo, "update-index", "--add", "--cacheinfo", f"100644,{blob},plans/{'x' * 300}/PLAN.yml")
    git(repo, "commit", "-q", "-m", "propose", env=identity("Agent", "agent@example.com"))
    grep = subprocess.run(
        ["git", "grep", "-l", "-e", "execution", "HEAD", "--", "plans"],
        cwd=repo, capture_output=True, text=True,
    )  # fmt: skip
    assert grep.returncode == 1 and "warning: " in grep.stderr, grep
    result = _start(config)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "E_GIT" not in result.stderr and "Traceback" not in result.stderr
