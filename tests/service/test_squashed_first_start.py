"""A first start on a branch whose history was squashed into new commits (round 73, r73orphan).

The agent resets the branch to ``git commit-tree HEAD^{tree}``: one parentless commit, its
tree the branch's, the plan files still carrying the controller's ``frozen:`` and
``execution:`` records (``completed``). No seal is reachable, so neither round 70's
``E_STORAGE`` nor round 72's ``E_HISTORY_REWRITTEN`` fired: a first start took the branch by
trust on first use, read the completed plans as never run, and an approval of one ran it a
second time. What an operator relies on:

- a state directory holding only its ``commit.key`` (which verifies no commit here) refuses
  ``E_HISTORY_REWRITTEN``: its line is gone; ``--take-over`` starts over knowingly;
- a new state directory refuses ``E_STORAGE`` naming the squash; ``--take-over`` takes it;
- either way a taken-over squash counts every run its files record as executed (an approval
  of one is refused ``E_ALREADY_EXECUTED``), and a parentless commit under the controller's
  name is never adopted (the controller commits only on top of its branch);
- a new repository, and unsealed history with parents (an upgrade), start as before.

Real ``plangate run --once``, real git.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

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

AGENT = ("Agent", "agent@example.com")


def _history(tmp_path: Path, repo: Path) -> Path:
    """``done`` approved and run (sealed controller commits); ``victim`` frozen, pending."""
    config = _setup(tmp_path, repo)
    _run(config)
    _approve(repo, "done")
    _run(config)
    assert _status(config)["plans/done"]["status"] == "completed"
    return config


def _squash(repo: Path, *, as_controller: bool = False) -> str:
    """Main reset to ONE parentless commit of its tree (the agent's, or under the
    controller's name, unsealed, with ``victim`` set ``completed``). Returns it."""
    who = CONTROLLER if as_controller else AGENT
    if as_controller:
        path = repo / "plans" / "victim" / "PLAN.yml"
        path.write_text(path.read_text().replace("status: pending_approval", "status: completed"))
        git(repo, "add", "-A")
    tree = git(repo, "write-tree").strip()
    top = git(repo, "commit-tree", tree, "-m", "import", env=identity(*who)).strip()
    git(repo, "reset", "-q", "--hard", top)
    return top


def _start(config: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return run_cli("run", "--once", *extra, "--config", str(config), timeout=120)


def _refused(tmp_path: Path, repo: Path, second: Path, code: str, event: str) -> None:
    head = git(repo, "rev-parse", "HEAD").strip()
    result = _start(second)
    err = result.stderr
    assert result.returncode != 0 and code in err and event in err, err[-2000:]
    assert "Traceback" not in err and "--take-over" in err, err[-2000:]
    assert git(repo, "rev-parse", "HEAD").strip() == head  # nothing committed
    assert not (tmp_path / "state2" / "commits").exists()  # nothing adopted


def _no_rerun(tmp_path: Path, repo: Path, second: Path) -> None:
    """``--take-over``: starts; an approval of the completed ``done`` runs nothing."""
    taken = _start(second, "--take-over")
    assert taken.returncode == 0, taken.stderr[-2000:]
    assert "run_recorded_in_file" in taken.stderr, taken.stderr[-2000:]
    starts = git(repo, "log", "--format=%s").count("plangate: start plans/done")
    path = repo / "plans" / "done" / "PLAN.yml"
    path.write_text(path.read_text().replace("  status: completed", "  status: approved", 1))
    commit_all(repo, "approve done again", ("Alice", "alice@example.com"))
    _run(second)
    assert git(repo, "log", "--format=%s").count("plangate: start plans/done") == starts
    row = _status(second)["plans/done"]
    assert "E_ALREADY_EXECUTED" in str(row), row


def test_a_key_alone_refuses_a_squashed_line(tmp_path: Path, repo: Path) -> None:
    """The old ``commit.key`` alone verifies nothing on the squash: E_HISTORY_REWRITTEN, not
    trust on first use; ``--take-over`` then starts over, rerunning nothing."""
    config = _history(tmp_path, repo)
    _squash(repo)
    second = _key_alone(tmp_path, config)
    _refused(tmp_path, repo, second, "E_HISTORY_REWRITTEN", "own_line_gone")
    _no_rerun(tmp_path, repo, second)


def test_a_new_state_directory_refuses_a_squash(tmp_path: Path, repo: Path) -> None:
    """A new, empty state directory: E_STORAGE naming the squash (no seal is reachable for
    round 70's refusal); ``--take-over`` then takes the branch, rerunning nothing."""
    config = _history(tmp_path, repo)
    _squash(repo)
    second = _second_state(tmp_path, config)
    _refused(tmp_path, repo, second, "E_STORAGE", "own_line_squashed")
    assert "a squash of its history" in _start(second).stderr
    _no_rerun(tmp_path, repo, second)


def test_a_parentless_commit_under_its_name_is_never_adopted(tmp_path: Path, repo: Path) -> None:
    """The squash made under the controller's name, ``victim`` (never approved) set
    ``completed``: a key alone refuses it; after ``--take-over`` it is not adopted (the
    controller commits only on top of its branch): ``victim`` does not read completed."""
    config = _history(tmp_path, repo)
    top = _squash(repo, as_controller=True)
    second = _key_alone(tmp_path, config)
    _refused(tmp_path, repo, second, "E_HISTORY_REWRITTEN", "own_line_gone")
    assert "1 commit(s) under the controller's name" in _start(second).stderr
    taken = _start(second, "--take-over")
    assert taken.returncode == 0, taken.stderr[-2000:]
    assert top not in (tmp_path / "state2" / "commits").read_text().split()
    assert _status(second)["plans/victim"]["status"] != "completed"


def test_a_new_state_directory_never_adopts_a_parentless_commit(tmp_path: Path, repo: Path) -> None:
    """The same squash under the controller's name with a new state directory: E_STORAGE;
    ``--take-over`` leaves it out (``not_adopted``), ``victim`` does not read completed."""
    config = _history(tmp_path, repo)
    top = _squash(repo, as_controller=True)
    second = _second_state(tmp_path, config)
    _refused(tmp_path, repo, second, "E_STORAGE", "own_line_squashed")
    taken = _start(second, "--take-over")
    assert taken.returncode == 0, taken.stderr[-2000:]
    assert "not_adopted" in taken.stderr
    assert top not in (tmp_path / "state2" / "commits").read_text().split()
    assert _status(second)["plans/victim"]["status"] != "completed"


def test_unsealed_history_with_parents_starts_as_before(tmp_path: Path, repo: Path) -> None:
    """Control: an upgrade's history (unsealed controller commits on top of the branch, its
    files recording a run) starts a new state directory by trust on first use, as before."""
    config = _setup(tmp_path, repo)
    path = repo / "plans" / "done" / "PLAN.yml"
    path.write_text(
        path.read_text().replace("status: pending_approval", "status: completed")
        + "execution:\n  status: completed\n  started_at: '2025-01-01T00:00:00Z'\n"
    )
    commit_all(repo, "plangate: complete plans/done\n\nController: old/1", CONTROLLER)
    result = _start(config)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "own_commits_adopted" in result.stderr and "own_line" not in result.stderr


def test_a_key_alone_on_a_new_repository_starts(tmp_path: Path, repo: Path) -> None:
    """Control: a key that sealed nothing yet, on a branch with no controller record, starts."""
    config = _setup(tmp_path, repo)
    (tmp_path / "state").mkdir(mode=0o700)
    key = tmp_path / "state" / "commit.key"
    key.write_text("ab" * 32 + "\n")
    key.chmod(0o600)
    result = _start(config)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "own_line" not in result.stderr
