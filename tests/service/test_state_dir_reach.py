"""The controller's state and config stay out of the agent's reach (SPEC §15).

What an operator relies on: with no ``state_dir`` the state lands outside the repository (and
``status`` without a config finds it); a state directory or config inside the watched tree
is refused before any work with E_CONFIG_INVALID, the key and a remedy; an earlier
install's ``.git/plangate`` is named with the command that moves it; ``demo: true`` allows
it. Real ``plangate`` subprocesses, real git (the attacks themselves are in
tests/adversarial/test_state_out_of_reach.py).
"""

from __future__ import annotations

from pathlib import Path

from controller.settings.models import default_state_dir
from tests.support.gitenv import commit_all, git, run_cli
from tests.support.plantext import greet_plan


def _config(path: Path, repo: Path, extra: str = "") -> Path:
    path.write_text(
        f"repo: {repo}\napproval: {{approvers: [alice@example.com]}}\n"
        f"tools: {{greet: {{kind: echo}}}}\n{extra}"
    )
    return path


def _propose(repo: Path) -> None:
    (repo / "plans" / "greet").mkdir(parents=True)
    (repo / "plans" / "greet" / "PLAN.yml").write_text(greet_plan("greet", "say hello", "world"))
    commit_all(repo, "propose", ("Agent", "agent@example.com"))


def test_the_default_state_directory_is_outside_the_repo_and_status_finds_it(
    repo: Path, tmp_path: Path
) -> None:
    _propose(repo)
    config = _config(tmp_path / "plangate.yml", repo)
    result = run_cli("run", "--once", "--config", str(config))
    assert result.returncode == 0, result.stderr[-1500:]
    state = default_state_dir(repo)
    assert (state / "index.sqlite").exists()
    assert repo not in state.parents
    assert not (repo / ".git" / "plangate").exists()
    # `status` inside the repository, with no config, reads the same state
    shown = run_cli("status", cwd=repo)
    assert shown.returncode == 0, shown.stderr
    assert "plans/greet" in shown.stdout and "pending_approval" in shown.stdout


def test_an_earlier_installs_state_in_dot_git_is_named_with_the_move(
    repo: Path, tmp_path: Path
) -> None:
    (repo / ".git" / "plangate" / "journal").mkdir(parents=True)
    config = _config(tmp_path / "plangate.yml", repo)
    result = run_cli("run", "--once", "--config", str(config))
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert "E_CONFIG_INVALID" in result.stderr and "earlier plangate" in result.stderr
    assert f"mv {repo / '.git' / 'plangate'} {default_state_dir(repo)}" in result.stderr
    assert not default_state_dir(repo).exists()  # nothing done


def test_a_state_dir_in_the_tree_is_refused_before_any_work(repo: Path, tmp_path: Path) -> None:
    _propose(repo)
    config = _config(tmp_path / "plangate.yml", repo, f"state_dir: {repo / '.git' / 'st'}\n")
    result = run_cli("run", "--once", "--config", str(config))
    assert result.returncode == 2
    assert "E_CONFIG_INVALID" in result.stderr and "state_dir" in result.stderr
    assert "remedy: keep the controller's state and config outside" in result.stderr
    assert not (repo / ".git" / "st").exists()
    assert "plangate: freeze" not in git(repo, "log", "--format=%s")


def test_a_linked_worktrees_git_directory_is_in_reach_too(repo: Path, tmp_path: Path) -> None:
    """A linked worktree's ``.git`` is a file naming a directory in the main repository's
    ``.git``: an agent writing the worktree writes there too."""
    tree = tmp_path / "tree"
    git(repo, "worktree", "add", "-q", "-b", "work", str(tree))
    config = _config(tmp_path / "plangate.yml", tree, f"state_dir: {repo / '.git' / 'x'}\n")
    result = run_cli("run", "--once", "--config", str(config))
    assert result.returncode == 2 and "E_CONFIG_INVALID" in result.stderr, result.stderr


def test_a_config_in_the_tree_is_refused_but_read_only_commands_work(repo: Path) -> None:
    _propose(repo)
    config = _config(repo / "plangate.yml", repo, "state_dir: ../state\n")
    result = run_cli("run", "--once", "--config", str(config))
    assert result.returncode == 2
    assert "E_CONFIG_INVALID" in result.stderr and "add itself as an approver" in result.stderr
    assert (
        run_cli("validate", str(repo / "plans/greet/PLAN.yml"), "--config", str(config)).returncode
        == 0
    )


def test_demo_true_allows_state_and_config_in_the_tree(repo: Path) -> None:
    _propose(repo)
    config = _config(repo / "plangate.yml", repo, "demo: true\nstate_dir: .git/plangate-demo\n")
    result = run_cli("run", "--once", "--config", str(config))
    assert result.returncode == 0, result.stderr[-1500:]
    assert (repo / ".git" / "plangate-demo" / "index.sqlite").exists()
    assert "plangate: freeze plans/greet" in git(repo, "log", "--format=%s")


def test_a_state_directory_that_cannot_be_made_or_read_is_a_storage_error(
    repo: Path, tmp_path: Path
) -> None:
    """A state directory under a file, or a state file git made a folder of: E_STORAGE with
    the path and a remedy, never a traceback, nothing committed."""
    _propose(repo)
    head = git(repo, "rev-parse", "HEAD")
    (tmp_path / "afile").write_text("not a folder\n")
    config = _config(tmp_path / "a.yml", repo, f"state_dir: {tmp_path / 'afile' / 'state'}\n")
    made = run_cli("run", "--once", "--config", str(config))
    assert made.returncode == 1 and "Traceback" not in made.stderr
    assert "E_STORAGE" in made.stderr and "cannot create state directory" in made.stderr
    assert "set state_dir to a writable folder" in made.stderr

    state = tmp_path / "state"
    (state / "commits").mkdir(parents=True)  # a folder where its own-commit list is read
    config = _config(tmp_path / "b.yml", repo, f"state_dir: {state}\n")
    read = run_cli("run", "--once", "--config", str(config))
    assert read.returncode == 1 and "Traceback" not in read.stderr, read.stderr[-800:]
    assert "E_STORAGE" in read.stderr and "commits" in read.stderr, read.stderr[-800:]
    assert git(repo, "rev-parse", "HEAD") == head
