"""A lost history index cannot see a reset: the controller's record of its commits can (round 59).

What an operator relies on: deleting ``<state_dir>/index.sqlite`` stays safe (nothing the
branch still holds is held), and when the branch was reset over the controller's newest
commits of a plan while the index was lost, that plan is held ``E_HISTORY_REWRITTEN`` (as
when the index sees the rewrite) until the commits are back. Real ``plangate run --once``
subprocesses, real git; the rule itself (:func:`unpublished_tail`) on plain data.
"""

from __future__ import annotations

import json
from pathlib import Path

from controller.git.ownrecord import unpublished_tail
from tests.service.test_own_commits import _approve, _run, _setup, _status
from tests.support.gitenv import git, run_cli


def test_the_tail_is_what_was_recorded_after_the_newest_commit_on_the_branch() -> None:
    on = {"a", "b", "d"}.__contains__
    assert unpublished_tail(["a", "b", "c", "d"], on) == []  # a crash's "c" before "d": kept
    assert unpublished_tail(["a", "b", "c", "e"], on) == ["c", "e"]
    assert unpublished_tail(["x", "y"], on) == ["x", "y"]
    assert unpublished_tail([], on) == []


def _held(tmp_path: Path) -> dict[str, dict[str, object]]:
    path = tmp_path / "state" / "held.json"
    return json.loads(path.read_text()) if path.exists() else {}


def _ran(tmp_path: Path, repo: Path) -> tuple[Path, str, list[str]]:
    """``done`` completed; Alice's approval of it and the controller's commits after it."""
    config = _setup(tmp_path, repo)
    _run(config)
    _approve(repo, "done")
    approval = git(repo, "rev-parse", "HEAD").strip()
    _run(config)
    assert _status(config)["plans/done"]["status"] == "completed"
    return config, approval, git(repo, "rev-list", f"{approval}..HEAD").split()


def test_deleting_the_index_alone_holds_nothing(tmp_path: Path, repo: Path) -> None:
    config, _, _ = _ran(tmp_path, repo)
    (tmp_path / "state" / "index.sqlite").unlink()
    _run(config)
    assert _held(tmp_path) == {}
    rows = _status(config)
    assert rows["plans/done"]["status"] == "completed"
    assert rows["plans/done"]["waiting"] is None, rows["plans/done"]


def test_a_reset_over_the_newest_record_with_the_index_lost_holds_the_plan(
    tmp_path: Path, repo: Path
) -> None:
    config, approval, erased = _ran(tmp_path, repo)
    tip = git(repo, "rev-parse", "HEAD").strip()
    (tmp_path / "state" / "index.sqlite").unlink()
    git(repo, "reset", "-q", "--hard", approval)
    git(repo, "reflog", "expire", "--expire=now", "--all")
    result = run_cli("run", "--once", "--config", str(config), timeout=120)
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    held = _held(tmp_path)
    assert set(held) == {"plans/done"}, held  # the other plan's freeze is still there
    assert set(held["plans/done"]["commits"]) == set(erased)  # type: ignore[arg-type]
    assert "E_HISTORY_REWRITTEN" in str(_status(config)["plans/done"]["waiting"])
    git(repo, "reset", "-q", "--hard", tip)  # put back: the hold ends
    _run(config)
    assert _held(tmp_path) == {}
    assert _status(config)["plans/done"]["status"] == "completed"
