"""approve, reject and abort say what the controller would say before they commit."""

from __future__ import annotations

from pathlib import Path

from tests.support.gitenv import commit_all, git, identity, run_cli
from tests.support.gitkit import AGENT, ALICE, BOB, MALLORY, head_plan, write_plan


def _setup(repo: Path, tmp_path: Path, author: tuple[str, str] = AGENT) -> Path:
    config = tmp_path / "plangate.yml"
    config.write_text(
        f"repo: {repo}\napproval: {{approvers: [alice@example.com, '*@ops.example.com']}}\n"
        "tools: {greet: {kind: echo}}\n"
    )
    write_plan(repo)
    commit_all(repo, "agent writes a plan", author)
    assert run_cli("run", "--once", "--config", str(config)).returncode == 0
    return config


def _as(who: tuple[str, str], *args: str, repo: Path, config: Path) -> tuple[int, str, str]:
    done = run_cli(*args, "--config", str(config), cwd=repo, env=identity(*who))
    return done.returncode, done.stdout, done.stderr


def test_approve_says_self_approval_before_committing(repo: Path, tmp_path: Path) -> None:
    config = _setup(repo, tmp_path, author=ALICE)
    before = git(repo, "rev-parse", "HEAD")
    code, _, err = _as(ALICE, "approve", "plans/greet", repo=repo, config=config)
    assert code == 1 and "E_SELF_APPROVAL" in err and "--force" in err
    assert git(repo, "rev-parse", "HEAD") == before  # nothing committed
    code, out, _ = _as(ALICE, "approve", "plans/greet", "--force", repo=repo, config=config)
    assert code == 0 and out.startswith("approved plans/greet")
    assert head_plan(repo)["plan"]["status"] == "approved"


def test_approve_by_someone_not_listed_and_twice(repo: Path, tmp_path: Path) -> None:
    config = _setup(repo, tmp_path)
    code, _, err = _as(MALLORY, "approve", "plans/greet", repo=repo, config=config)
    assert code == 1 and "E_APPROVER_NOT_ALLOWED" in err and "mallory@example.com" in err
    assert _as(BOB, "approve", "plans/greet", repo=repo, config=config)[0] == 0
    code, _, err = _as(ALICE, "approve", "plans/greet", repo=repo, config=config)
    assert code == 1 and "already approved" in err and "push" in err


def test_reject_counts_only_from_approvers_or_authors(repo: Path, tmp_path: Path) -> None:
    config = _setup(repo, tmp_path)
    code, _, err = _as(MALLORY, "reject", "plans/greet", "-m", "no", repo=repo, config=config)
    assert code == 1 and "E_APPROVER_NOT_ALLOWED" in err and "ignore" in err
    code, out, _ = _as(AGENT, "reject", "plans/greet", "-m", "withdrawn", repo=repo, config=config)
    assert code == 0 and out.startswith("rejected plans/greet")  # its author may withdraw it
    code, _, err = _as(ALICE, "reject", "plans/greet", "-m", "x", repo=repo, config=config)
    assert code == 1 and "E_ILLEGAL_TRANSITION" in err and "final" in err


def test_abort_of_a_plan_that_is_not_running(repo: Path, tmp_path: Path) -> None:
    config = _setup(repo, tmp_path)
    code, _, err = _as(ALICE, "abort", "plans/greet", repo=repo, config=config)
    assert code == 1 and "nothing to abort" in err and "reject" in err


def test_abort_says_it_is_a_request(repo: Path, tmp_path: Path) -> None:
    config = _setup(repo, tmp_path)
    plan = repo / "plans" / "greet" / "PLAN.yml"
    plan.write_text(plan.read_text().replace("status: pending_approval", "status: executing"))
    commit_all(repo, "pretend it runs (the controller ignores this)")
    # with the config, the command reads the status the controller holds (round 28): the
    # human's "executing" is ignored, nothing runs, there is nothing to abort
    code, _, err = _as(ALICE, "abort", "plans/greet", repo=repo, config=config)
    assert code == 1 and "nothing to abort" in err, err
    # without it, the file is all it reads: the abort is committed, as a request
    done = run_cli("abort", "plans/greet", cwd=repo, env=identity(*ALICE))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("abort requested for plans/greet"), done.stdout
    assert "aborted plans" not in done.stdout
