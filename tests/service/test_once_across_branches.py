"""At most once across branches (SPEC §15; round 126, atk126d ``takeover-on-new-branch-reruns``).

A new state directory (a rebuilt host) reads one branch, and lost ``executed.jsonl``: set to
watch another branch than the lost one did (``remote.branch``, the checked-out branch), it
ran again a version whose run only the old branch showed. On its first start it now learns
the starts made under its name on the repository's other branches (local mode: its
``refs/heads/*``; remote mode: the remote's heads, fetched into ``refs/plangate/aside/`` and
let go after), by git alone (its name as author and committer, and a seal), and records them
as executed (``ControllerCore._starts_on_other_branches``). An unsealed start under its
name is anyone's and refuses nothing.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from controller import settings
from controller.plan import yamlio
from controller.service.reconcile import Controller
from tests.support.gitkit import ALICE, approve, commit_all, git, head_plan, write_plan

CONTROLLER = {
    "GIT_AUTHOR_NAME": "plangate",
    "GIT_AUTHOR_EMAIL": "plangate@localhost",
    "GIT_COMMITTER_NAME": "plangate",
    "GIT_COMMITTER_EMAIL": "plangate@localhost",
}


def _config(state: Path, repo: Path, remote: dict[str, str] | None = None) -> settings.Config:
    data: dict[str, Any] = {
        "state_dir": str(state),
        "approval": {"approvers": ["alice@example.com"]},
        "tools": {"greet": {"kind": "echo"}},
    }
    if remote is None:
        data["repo"] = str(repo)
    else:
        data["remote"] = remote
    return settings.config_from_data(data, repo.parent / "plangate.yml")


def _pass(config: settings.Config, times: int = 2, take_over: bool = False) -> None:
    ctl = Controller(config, take_over=take_over)
    try:
        for _ in range(times):
            ctl.run_once()
    finally:
        ctl.close()


def _refused(plan: dict[str, Any]) -> None:
    assert plan["plan"]["status"] == "pending_approval", plan["plan"]
    assert not plan.get("execution"), plan.get("execution")
    approval = plan.get("approval") or {}
    assert approval.get("status") == "refused", approval
    assert "E_ALREADY_EXECUTED" in str(approval), approval


def _ran_on_main_released_before(repo: Path, state: Path) -> None:
    """Local mode: ``greet`` frozen on main, ``release`` branched there, then approved on main
    and run to completion by the controller with ``state``."""
    write_plan(repo, "greet")
    commit_all(repo, "add greet")
    _pass(_config(state, repo), 1)
    git(repo, "branch", "release")
    approve(repo, "greet")
    _pass(_config(state, repo))
    assert head_plan(repo, "greet")["plan"]["status"] == "completed"


def test_a_new_state_directory_on_another_branch_refuses_what_ran_on_the_old_one(
    repo: Path, tmp_path: Path
) -> None:
    _ran_on_main_released_before(repo, tmp_path / "state1")
    git(repo, "switch", "-q", "release")
    approve(repo, "greet", ALICE)  # the very version that ran on main, at the same path
    _pass(_config(tmp_path / "state2", repo), take_over=True)  # a rebuilt host, on release
    _refused(head_plan(repo, "greet"))
    executed = (tmp_path / "state2" / "executed.jsonl").read_text()
    assert "plans/greet" in executed
    store = tmp_path / "state2" / "objects.git"
    aside = git(store.parent, "--git-dir", str(store), "for-each-ref", "refs/plangate/")
    assert aside.strip() == ""  # fetched aside, read, and let go


def test_an_unsealed_start_on_another_branch_refuses_nothing(repo: Path, tmp_path: Path) -> None:
    """Only a start the controller could have made counts: one without a seal under its name
    (anyone can write that) on another branch is no run, and the version runs."""
    write_plan(repo, "greet")
    commit_all(repo, "add greet")
    _pass(_config(tmp_path / "state1", repo), 1)
    git(repo, "switch", "-q", "-c", "forged")
    approve(repo, "greet")
    path = repo / "plans" / "greet" / "PLAN.yml"
    doc = yamlio.read_yaml(path.read_text())
    path.write_text(yamlio.set_scalar(doc, ("plan", "status"), "executing"))
    git(repo, "add", "-A")
    plan_hash = head_plan(repo, "greet")["frozen"]["hash"]
    message = f"plangate: start plans/greet\n\nPlan: plans/greet\nPlan-Hash: {plan_hash}\n"
    git(repo, "commit", "-q", "-m", message, env=CONTROLLER)
    git(repo, "switch", "-q", "main")
    approve(repo, "greet")
    _pass(_config(tmp_path / "state2", repo), take_over=True)
    assert head_plan(repo, "greet")["plan"]["status"] == "completed"


def _clone_on(origin: Path, work: Path, branch: str) -> None:
    git(work, "fetch", "-q", "origin")
    git(work, "checkout", "-q", "-B", branch, f"origin/{branch}")


def _remote_plan(origin: Path, branch: str) -> dict[str, Any]:
    text = git(origin, "show", f"{branch}:plans/greet/PLAN.yml")
    return dict(yamlio.read_yaml(text).data)


def test_remote_mode_a_rebuilt_host_on_another_branch_refuses_what_ran(
    repo: Path, tmp_path: Path
) -> None:
    """Remote mode (the lab of atk126d): ``remote.branch`` main, then a new state directory
    watching ``release`` with ``--take-over``: Alice's approval there of the version that ran
    on main is refused; the remote's heads were fetched into a namespace of the clone's own
    and let go (no branch of the clone or the remote changed by it)."""
    origin = tmp_path / "origin.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(origin)], check=True)
    git(repo, "remote", "add", "origin", str(origin))
    write_plan(repo, "greet")
    commit_all(repo, "add greet")
    git(repo, "push", "-q", "origin", "main")
    on_main = _config(tmp_path / "state1", repo, {"url": f"file://{origin}", "branch": "main"})
    _pass(on_main, 1)
    _clone_on(origin, repo, "main")
    git(repo, "push", "-q", "origin", "HEAD:refs/heads/release")
    approve(repo, "greet")
    git(repo, "push", "-q", "origin", "HEAD:main")
    _pass(on_main)
    assert _remote_plan(origin, "main")["plan"]["status"] == "completed"
    _clone_on(origin, repo, "release")
    approve(repo, "greet", ALICE)
    git(repo, "push", "-q", "origin", "HEAD:release")
    state = tmp_path / "state2"
    on_release = _config(state, repo, {"url": f"file://{origin}", "branch": "release"})
    _pass(on_release, take_over=True)
    _refused(_remote_plan(origin, "release"))
    clone = state / "clone"
    assert git(clone, "for-each-ref", "--format=%(refname)", "refs/plangate/aside/") == ""
    assert git(clone, "for-each-ref", "--format=%(refname)", "refs/heads/").split() == [
        "refs/heads/release"
    ]
    heads = git(origin, "for-each-ref", "--format=%(refname)", "refs/heads/").split()
    assert sorted(heads) == ["refs/heads/main", "refs/heads/release"]
