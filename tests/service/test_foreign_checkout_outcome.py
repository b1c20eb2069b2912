"""A run's outcome is written into the shared checkout only while it is on the watched
branch (round 116, atk116d ``outcome-staged-on-foreign-checkout``).

The break: a tool (the agent's) switched the shared checkout off ``main`` during a run
(``git checkout -b side``, ``--detach``). The outcome commit landed on ``main`` alone, as it
should, but the controller then wrote its PLAN.yml and EXECUTION_LOG.md into the checkout it
was now on and pointed that checkout's index at them: ``git status`` on ``side`` showed them
staged, the agent's next plain ``git commit`` there carried the controller's bytes under the
agent's name, and the agent's own untracked ``EXECUTION_LOG.md`` there was overwritten. Now
the writer asks, under the ``index.lock`` it holds, whether HEAD is the watched branch at the
commit it just made (``Refs.checked_out_at``), and writes nothing otherwise; switching back
with ``git switch main`` has git itself check the outcome out, clean.

Real git, a real ``plangate run --once``, the switch made by the run's own exec tool.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.gitenv import git
from tests.support.sharedcheckout import approved_plan, once

#: Action 1 runs the git command its params name in the shared checkout (as the agent).
TOOL = """\
import json, os, subprocess, sys
tag, repo = sys.argv[1], os.environ["T_REPO"]
env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
if tag.endswith("-1"):
    for argv in json.loads(os.environ["T_HOOK"]):
        if argv[0] == "put":
            with open(os.path.join(repo, argv[1]), "w") as f:
                f.write(argv[2])
        else:
            subprocess.run(["git", *argv], cwd=repo, env=env, check=True)
print(json.dumps({"ok": tag}))
"""

HOOKS = {
    "branch": [["checkout", "-q", "-b", "side"]],
    "detached": [["checkout", "-q", "--detach"]],
    "own-log": [
        ["checkout", "-q", "-b", "side"],
        ["put", "plans/p/EXECUTION_LOG.md", "AGENT OWN LOG\n"],
    ],
    "staged-log": [
        ["checkout", "-q", "-b", "side"],
        ["put", "plans/p/EXECUTION_LOG.md", "AGENT STAGED LOG\n"],
        ["add", "plans/p/EXECUTION_LOG.md"],
    ],
}


@pytest.mark.parametrize("how", sorted(HOOKS))
def test_outcome_is_never_written_into_a_checkout_that_left_the_branch(
    tmp_path: Path, repo: Path, how: str
) -> None:
    config = approved_plan(
        tmp_path, repo, TOOL, {"T_HOOK": json.dumps(HOOKS[how])}, "foreign checkout"
    )
    plan = repo / "plans" / "p" / "PLAN.yml"

    once(config)  # the run: action 1 moves the checkout off main

    assert "status: completed" in git(repo, "show", "main:plans/p/PLAN.yml")
    assert "p-3" in git(repo, "show", "main:plans/p/EXECUTION_LOG.md")
    on = git(repo, "symbolic-ref", "-q", "--short", "HEAD", check=False).strip()
    assert on == ("" if how == "detached" else "side")
    staged = git(repo, "diff", "--cached", "--name-only").split()
    own = ["plans/p/EXECUTION_LOG.md"] if how == "staged-log" else []
    assert staged == own, git(repo, "status", "--porcelain")  # nothing of the controller's
    assert "status: executing" in plan.read_text()  # the start's checkout, left as it was
    log = plan.parent / "EXECUTION_LOG.md"
    if how in ("own-log", "staged-log"):
        assert log.read_text() == f"AGENT {'OWN' if how == 'own-log' else 'STAGED'} LOG\n"
        assert git(repo, "show", ":plans/p/EXECUTION_LOG.md", check=False).startswith(
            "AGENT STAGED" if how == "staged-log" else ""
        )
        log.unlink()  # the agent puts its own file away before switching back
        git(repo, "rm", "-q", "--cached", "--ignore-unmatch", "plans/p/EXECUTION_LOG.md")

    git(repo, "switch", "-q", "main")  # git itself checks the outcome out

    assert git(repo, "status", "--porcelain") == ""
    assert plan.read_text() == git(repo, "show", "main:plans/p/PLAN.yml")
