"""A stale gate approval carried by a merge (round 47, issue 11): a pull request cut while
the plan waited at gate 2 sets ``approved``; on main gate 2 is answered and the run pauses
at gate 3 (the same frozen hash, the status line ``awaiting_approval`` again, as at the
branch's merge base). git then takes the branch's ``approved`` cleanly.

A continuation approval (a gate, an ask, a resume) that a merge brought counts only when a
merged branch held the plan with that status over the pause the first parent shows (the
same controller-owned ``execution:`` block); otherwise ``E_APPROVAL_REPLAYED`` and nothing
runs. The controller, ``plangate check`` (the same Lifecycle) and a fresh clone's
``plangate audit`` agree.

Seen before the fix: the merge answered gate 3 (action 3 ran; the audit called Bob's merge a
valid gate approval). The adversarial twin: tests/adversarial/test_round47_approve_stalegate.py.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from controller.settings.models import default_state_dir
from tests.support.gitenv import identity, run_cli
from tests.support.gitkit import (
    AGENT,
    ALICE,
    BOB,
    GATED,
    approve,
    commit_all,
    controller,
    edit_status,
    git,
    head_plan,
    run_once,
    subjects,
    write_plan,
)

THREE = GATED + (
    "  - id: 3\n"
    "    tool: greet\n"
    '    why: "say goodbye again, after a third look"\n'
    "    requires_approval: true\n"
    "    params:\n"
    "      who: third\n"
)

CONFIG = """\
repo: repo
approval:
  approvers: ["alice@example.com", "*@ops.example.com"]
tools:
  greet: {kind: echo}
"""


def _status(repo: Path) -> str:
    return str(head_plan(repo)["plan"]["status"])


def _done(repo: Path) -> list[int]:
    """The ids of the actions the controller recorded as succeeded."""
    actions = (head_plan(repo).get("execution") or {}).get("actions") or []
    return [a["id"] for a in actions if a.get("status") == "succeeded"]


def _codes(repo: Path) -> dict[str, object]:
    with controller(repo) as ctl:
        return {r["plan"]: r for r in ctl.status()}


def _refusal(repo: Path) -> str:
    """The reason line of the controller's last ``refuse plans/greet`` commit."""
    body = git(repo, "log", "-1", "--format=%b", "--grep=^plangate: refuse plans/greet$")
    return body.strip().splitlines()[0] if body.strip() else ""


def _audit(repo: Path) -> tuple[int, dict]:  # type: ignore[type-arg]
    """``plangate audit`` of a fresh clone: git history alone."""
    clone = repo.parent / "clone" / "repo"
    shutil.rmtree(clone.parent, ignore_errors=True)
    clone.parent.mkdir()
    git(repo, "clone", "-q", str(repo), str(clone))
    (clone.parent / "plangate.yml").write_text(CONFIG)
    shutil.rmtree(default_state_dir(clone), ignore_errors=True)
    result = run_cli("audit", "--json", "--config", str(clone.parent / "plangate.yml"))
    assert result.returncode in (0, 1), result.stderr
    return result.returncode, json.loads(result.stdout)


def _check(repo: Path, branch: str) -> str:
    """``plangate check --as bob`` of the branch against main: its outcome for the plan."""
    config = repo.parent / "plangate.yml"
    config.write_text(CONFIG)
    result = run_cli(
        "check", "--config", str(config), "--base", "main", "--head", branch,
        "--as", BOB[1], "--format", "json",
        cwd=repo,
    )  # fmt: skip
    assert result.stdout.strip(), result.stderr
    report = json.loads(result.stdout)
    rows = report if isinstance(report, list) else report.get("plans", [])
    [mine] = [r for r in rows if r.get("plan") == "plans/greet"]
    return str(mine.get("outcome"))


@pytest.mark.parametrize("fresh", [False, True], ids=["stale", "fresh"])
def test_a_stale_branch_s_gate_approval_answers_no_later_gate(repo: Path, fresh: bool) -> None:
    write_plan(repo, text=THREE)
    commit_all(repo, "add", AGENT)
    run_once(repo)  # freeze
    approve(repo, who=ALICE)
    run_once(repo)  # action 1, pause at gate 2
    assert _status(repo) == "awaiting_approval" and _done(repo) == [1]
    git(repo, "checkout", "-q", "-b", "pr", "main")
    edit_status(repo, "greet", "approved")
    commit_all(repo, "approve gate 2", AGENT)
    git(repo, "checkout", "-q", "main")
    approve(repo, who=ALICE)  # gate 2 answered on main
    run_once(repo)  # action 2, pause at gate 3
    assert _status(repo) == "awaiting_approval" and _done(repo) == [1, 2]
    if fresh:  # the branch catches up with main: it holds the gate-3 pause with approved
        git(repo, "checkout", "-q", "pr")
        git(repo, "merge", "--no-ff", "-q", "-m", "catch up", "main", env=identity(*AGENT))
        git(repo, "checkout", "-q", "main")
    predicted = _check(repo, "pr")
    git(repo, "merge", "--no-ff", "-q", "-m", "merge pr", "pr", env=identity(*BOB))
    assert _status(repo) == "approved"
    run_once(repo)
    run_once(repo)
    if fresh:
        assert _done(repo) == [1, 2, 3], _codes(repo)
        assert _status(repo) == "completed", _codes(repo)
        assert predicted == "start"
    else:
        assert _done(repo) == [1, 2], _codes(repo)
        assert _refusal(repo).startswith("E_APPROVAL_REPLAYED: the merge"), _codes(repo)
        assert predicted != "start"
        assert not [s for s in subjects(repo) if s.startswith("plangate: complete")]
    code, report = _audit(repo)
    assert code == 0, report
    merge = git(repo, "log", "-1", "--format=%H", "--grep=^merge pr$").strip()
    gates = [
        e
        for e in report["executions"]
        if e.get("approval_commit") == merge or e.get("commit") == merge
    ]
    if fresh:
        assert gates and all(e["approval_valid"] for e in gates), report["executions"]
    else:
        assert not [e for e in gates if e["approval_valid"]], report["executions"]


_COMMENT = "# agent: please approve gate 2\n"
_HUNK = re.compile(r"<<<<<<< [^\n]*\n(.*?)=======\n(.*?)>>>>>>> [^\n]*\n", re.S)


@pytest.mark.parametrize("how", ["conflict", "xours", "own"])
def test_a_conflict_or_x_ours_does_not_make_a_stale_approval_the_merger_s(
    repo: Path, how: str
) -> None:
    """Round 48: the pull request of the stale variant above also appends a comment at the
    file's end, beside the ``execution:`` block the run rewrites at gate 3: Bob's merge
    conflicts there. ``conflict``: Bob resolves that hunk keeping main's side (the status
    line came cleanly from the branch); ``xours``: ``git merge -X ours`` (no conflict shown).
    The branch held ``approved`` over gate 2 only: the merge brought it (whatever Bob
    resolved), ``E_APPROVAL_REPLAYED``, action 3 never runs. ``own`` (control): the branch
    only adds the comment (no status); Bob resolves the conflict and writes ``approved``
    himself: no merged branch held it, it is Bob's own gate-3 approval (he may approve)."""
    write_plan(repo, text=THREE)
    commit_all(repo, "add", AGENT)
    run_once(repo)  # freeze
    approve(repo, who=ALICE)
    run_once(repo)  # action 1, pause at gate 2
    git(repo, "checkout", "-q", "-b", "pr", "main")
    if how != "own":
        edit_status(repo, "greet", "approved")
    path = repo / "plans" / "greet" / "PLAN.yml"
    path.write_text(path.read_text().rstrip("\n") + "\n" + _COMMENT)
    commit_all(repo, "approve gate 2", AGENT)
    git(repo, "checkout", "-q", "main")
    approve(repo, who=ALICE)  # gate 2 answered on main
    run_once(repo)  # action 2, pause at gate 3
    assert _status(repo) == "awaiting_approval" and _done(repo) == [1, 2]
    (repo.parent / "plangate.yml").write_text(CONFIG)
    check = run_cli(
        "check", "--config", str(repo.parent / "plangate.yml"), "--base", "main",
        "--head", "pr", "--as", BOB[1], "--format", "json",
        cwd=repo,
    )  # fmt: skip
    opts = ["-X", "ours"] if how == "xours" else []
    git(
        repo,
        "merge",
        "--no-ff",
        "-q",
        *opts,
        "-m",
        "merge pr",
        "pr",
        env=identity(*BOB),
        check=False,
    )
    if how != "xours":  # the end of the file conflicts: Bob keeps main's side
        text = path.read_text()
        assert "<<<<<<<" in text, text[-400:]
        path.write_text(_HUNK.sub(lambda m: m.group(1), text))
        if how == "own":
            edit_status(repo, "greet", "approved")
        git(repo, "add", str(path))
        git(repo, "commit", "-q", "--no-edit", env=identity(*BOB))
    assert len(git(repo, "log", "-1", "--format=%P").split()) == 2
    assert _status(repo) == "approved"
    run_once(repo)
    run_once(repo)
    merge = git(repo, "log", "-1", "--format=%H", "--grep=^merge pr$").strip()
    if how == "own":
        assert _done(repo) == [1, 2, 3], _codes(repo)
    else:
        assert _done(repo) == [1, 2], _codes(repo)
        assert _refusal(repo).startswith("E_APPROVAL_REPLAYED: the merge"), _codes(repo)
        # plangate check cannot simulate a merge git does not make cleanly: no prediction
        rows = json.loads(check.stdout).get("plans", []) if check.stdout.strip() else []
        assert check.returncode != 0, check.stdout
        assert all(r.get("outcome") != "start" for r in rows), check.stdout
    code, report = _audit(repo)
    assert code == 0, report
    gates = [
        e
        for e in report["executions"]
        if e.get("approval_commit") == merge or e.get("commit") == merge
    ]
    if how == "own":
        assert gates and all(e["approval_valid"] for e in gates), report["executions"]
    else:
        assert not [e for e in gates if e["approval_valid"]], report["executions"]
