"""A first start on a branch whose first-parent line was rewritten (round 72, r72foxtrot).

The controller only ever commits on its branch's first-parent line. A "foxtrot" (a branch
forked before the controller's commits merges the branch INTO itself, and the branch is
fast-forwarded to that merge) puts every sealed controller commit behind a second parent: a
first start that read only the first-parent line found no seal, started without round 70's
refusal, and judged the controller's completions as the merger's. What an operator relies on:
a state directory with no record yet (new, or holding only its ``commit.key``) refuses such a
branch E_HISTORY_REWRITTEN, ``--take-over`` included, naming the newest sealed commit off the
line, and starts as before once the line is put back; a branch whose controller commits all
stand on its line (merged PR branches, branches that merged the branch into themselves and
were merged back with a merge commit) starts as before. Real ``plangate run --once``, real git.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.service.test_own_commits import (
    CONTROLLER,
    _approve,
    _key_alone,
    _run,
    _second_state,
    _setup,
    _status,
)
from tests.support.gitenv import commit_all, git, identity, run_cli

ALICE = ("Alice", "alice@example.com")
AGENT = ("Agent", "agent@example.com")


def _history(tmp_path: Path, repo: Path) -> tuple[Path, str]:
    """The agent's plans (``P0``), frozen; ``done`` approved and run: sealed controller
    commits on main's line. Returns the config and ``P0``."""
    config = _setup(tmp_path, repo)
    p0 = git(repo, "rev-parse", "HEAD").strip()
    _run(config)
    _approve(repo, "done")
    _run(config)
    assert _status(config)["plans/done"]["status"] == "completed"
    return config, p0


def _foxtrot(repo: Path, p0: str, *, forged: bool) -> str:
    """A branch from ``P0`` merges main INTO itself; main is fast-forwarded to the merge.
    ``forged``: the branch's commit is the agent's, under the controller's name, unsealed,
    with ``victim`` (never approved) set ``completed`` in main's tree; else Alice's note.
    Returns the newest sealed controller commit (now behind the second parent)."""
    newest = git(repo, "log", "-1", "--format=%H", "--author=plangate@localhost").strip()
    main = git(repo, "rev-parse", "HEAD").strip()
    if forged:
        path = repo / "plans" / "victim" / "PLAN.yml"
        text = path.read_text()
        path.write_text(text.replace("status: pending_approval", "status: completed", 1))
        git(repo, "add", "-A")
        tree = git(repo, "write-tree").strip()
        git(repo, "reset", "-q", "--hard", "HEAD")
        msg = "plangate: complete plans/victim\n\nPlan: plans/victim\nPlan-Status: completed\n"
        side = git(repo, "commit-tree", tree, "-p", p0, "-m", msg, env=identity(*CONTROLLER))
        merge = git(
            repo, "commit-tree", tree, "-p", side.strip(), "-p", main, "-m", "merge main",
            env=identity(*AGENT),
        )  # fmt: skip
        git(repo, "reset", "-q", "--hard", merge.strip())
        return newest
    git(repo, "checkout", "-q", "-b", "side", p0)
    (repo / "NOTES").write_text("alice's notes\n")
    commit_all(repo, "notes", ALICE)
    git(repo, "merge", "-q", "--no-ff", "-m", "merge main into side", "main", env=identity(*ALICE))
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--ff-only", "side")
    return newest


def _line_back(repo: Path) -> None:
    """The remedy the refusal names: main back to the merge's second parent (whose line holds
    the seals), the other line merged again with a merge commit."""
    tip = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "reset", "-q", "--hard", "HEAD^2")
    git(repo, "merge", "-q", "--no-ff", "-m", "merge side again", tip, env=identity(*ALICE))


def _start(config: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return run_cli("run", "--once", *extra, "--config", str(config), timeout=120)


def _refused(tmp_path: Path, repo: Path, second: Path, newest: str) -> None:
    head = git(repo, "rev-parse", "HEAD").strip()
    for extra in ((), ("--take-over",)):
        result = _start(second, *extra)
        err = result.stderr
        assert result.returncode != 0 and "E_HISTORY_REWRITTEN" in err, err[-2000:]
        assert "Traceback" not in err and "E_STORAGE" not in err, err[-2000:]
        assert newest[:12] in err and "--take-over" in err and "seals_off_the_line" in err, err
        assert git(repo, "rev-parse", "HEAD").strip() == head  # nothing committed
        assert not (tmp_path / "state2" / "commits").exists()  # nothing adopted


@pytest.mark.parametrize("forged", [False, True], ids=["honest", "forged"])
def test_a_new_state_directory_refuses_a_foxtrot(tmp_path: Path, repo: Path, forged: bool) -> None:
    """A NEW empty state directory: E_HISTORY_REWRITTEN (not round 70's E_STORAGE: restoring
    the state directory alone would not start it either), ``--take-over`` too; once the line
    is back, round 70's refusal, then ``--take-over`` adopts the sealed commits on the line and
    the completed plan stays completed."""
    config, p0 = _history(tmp_path, repo)
    newest = _foxtrot(repo, p0, forged=forged)
    second = _second_state(tmp_path, config)
    _refused(tmp_path, repo, second, newest)
    _line_back(repo)
    again = _start(second)
    assert again.returncode != 0 and "E_STORAGE" in again.stderr, again.stderr[-2000:]
    assert "E_HISTORY_REWRITTEN" not in again.stderr, again.stderr[-2000:]
    taken = _start(second, "--take-over")
    assert taken.returncode == 0, taken.stderr[-2000:]
    assert newest in (tmp_path / "state2" / "commits").read_text().split()
    assert _status(second)["plans/done"]["status"] == "completed"


@pytest.mark.parametrize("forged", [False, True], ids=["honest", "forged"])
def test_a_key_alone_refuses_a_foxtrot(tmp_path: Path, repo: Path, forged: bool) -> None:
    """A state directory holding only the old ``commit.key``: refused likewise (it verified
    none of the seals it never looked at, and adopted the forgery by trust on first use);
    once the line is back it adopts what its key verifies, the forgery not among them."""
    config, p0 = _history(tmp_path, repo)
    newest = _foxtrot(repo, p0, forged=forged)
    second = _key_alone(tmp_path, config)
    _refused(tmp_path, repo, second, newest)
    _line_back(repo)
    result = _start(second)
    assert result.returncode == 0, result.stderr[-2000:]
    adopted = [x for x in result.stderr.splitlines() if "own_commits_adopted" in x]
    assert adopted and "its commit.key" in adopted[0], result.stderr[-2000:]
    recorded = (tmp_path / "state2" / "commits").read_text().split()
    assert newest in recorded
    forgeries = git(repo, "log", "--format=%H", "--author=plangate@localhost", "HEAD^2", "^HEAD^1")
    assert not set(forgeries.split()) & set(recorded)
    assert _status(second)["plans/done"]["status"] == "completed"
    assert _status(second)["plans/victim"]["status"] == "pending_approval"


def _merged_branches(repo: Path, p0: str) -> None:
    """Branches whose merges keep the controller's commits on main's line: one forked from
    ``P0`` merged ``--no-ff`` (main first parent), one forked after the controller's commits
    that merged main into itself (an "update branch") and was merged back ``--no-ff``."""
    git(repo, "checkout", "-q", "-b", "old", p0)
    (repo / "OLD").write_text("old\n")
    commit_all(repo, "old work", ALICE)
    git(repo, "checkout", "-q", "-b", "late", "main")
    (repo / "LATE").write_text("late\n")
    commit_all(repo, "late work", ALICE)
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "-m", "merge old", "old", env=identity(*ALICE))
    git(repo, "checkout", "-q", "late")
    git(repo, "merge", "-q", "--no-ff", "-m", "update late", "main", env=identity(*ALICE))
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "-m", "merge late", "late", env=identity(*ALICE))


def test_merged_branches_start_a_key_alone_as_before(tmp_path: Path, repo: Path) -> None:
    config, p0 = _history(tmp_path, repo)
    _merged_branches(repo, p0)
    second = _key_alone(tmp_path, config)
    result = _start(second)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "seals_off_the_line" not in result.stderr and "its commit.key" in result.stderr
    assert _status(second)["plans/done"]["status"] == "completed"


def test_merged_branches_refuse_a_new_state_directory_as_before(tmp_path: Path, repo: Path) -> None:
    config, p0 = _history(tmp_path, repo)
    _merged_branches(repo, p0)
    second = _second_state(tmp_path, config)
    result = _start(second)
    assert result.returncode != 0 and "E_STORAGE" in result.stderr, result.stderr[-2000:]
    assert "seals_off_the_line" not in result.stderr
    taken = _start(second, "--take-over")
    assert taken.returncode == 0, taken.stderr[-2000:]
    assert _status(second)["plans/done"]["status"] == "completed"


@pytest.mark.parametrize("forged", [False, True], ids=["honest", "forged"])
def test_a_live_record_is_not_asked_again(tmp_path: Path, repo: Path, forged: bool) -> None:
    """The check is a first start's (no record yet): the controller with its record follows
    round 63's rule as before (docs/approvals.md, "The first-parent line"): it read its own
    commits already and knows them by its record, and no unread commit went behind the second
    parent here, so it goes on; the forgery on the new line is anyone's."""
    config, p0 = _history(tmp_path, repo)
    _foxtrot(repo, p0, forged=forged)
    result = _start(config)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "seals_off_the_line" not in result.stderr, result.stderr[-2000:]
    rows = _status(config)
    assert rows["plans/done"]["status"] == "completed", rows
    assert rows["plans/victim"]["status"] == "pending_approval", rows


def test_a_refused_first_start_is_asked_again_on_the_next_pass(tmp_path: Path, repo: Path) -> None:
    """The daemon reads the index once per pass: a refused first start drops the index it
    opened, so the next pass asks again (it never reads the branch with no record)."""
    from controller.errors import HistoryRewritten
    from controller.service.reconcile import Controller
    from controller.settings.loading import load_config

    config, p0 = _history(tmp_path, repo)
    _foxtrot(repo, p0, forged=True)
    controller = Controller(load_config(_second_state(tmp_path, config)), take_over=True)
    try:
        for _ in range(2):
            with pytest.raises(HistoryRewritten):
                controller.index  # noqa: B018
        assert not controller.own_commits.known
    finally:
        controller.close()
