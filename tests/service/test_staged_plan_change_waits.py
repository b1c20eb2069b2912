"""A change of a running plan's file staged in the index makes its outcome wait, as an edit
of the file does (round 116, atk116d ``staged-removal-discarded``).

The break: during a run the agent unstaged the plan file (``git rm --cached``, the file left
as it was). The outcome commit went ahead and its index write put the entry back: ``git
status`` clean, the agent's staged removal gone, where an edit of the file (or a staged
edit) made the outcome wait with the change kept (docs/approvals.md: the plan waits on any
uncommitted change of a PLAN.yml plangate must write). Now the index's entry of the plan file
is compared with the commit too (``WorkTree.index_holds``, ``Committing._check_staged``); a
staged edit whose file was written back as committed waits alike.

Real git, real ``plangate run --once`` passes, the change made by the run's own exec tool.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.gitenv import git
from tests.support.sharedcheckout import approved_plan, once

#: Action 1 plays with the index entry of the plan file (as the agent), the file kept.
TOOL = """\
import json, os, subprocess, sys
tag, repo, how = sys.argv[1], os.environ["T_REPO"], os.environ["T_HOW"]
env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
rel = "plans/p/PLAN.yml"
def git(*a):
    subprocess.run(["git", *a], cwd=repo, env=env, check=True)
if tag.endswith("-1"):
    if how == "behind":  # a commit of the file through an index of the agent's own
        env["GIT_INDEX_FILE"] = os.path.join(repo, ".git", "agent-index")
        git("read-tree", "HEAD")
        path = os.path.join(repo, rel)
        open(path, "a").write("# the agent's note\\n")
        git("add", rel)
        git("-c", "user.name=Agent", "-c", "user.email=agent@example.com",
            "commit", "-q", "-m", "agent: a note")
    elif how == "removed":
        git("rm", "-q", "--cached", rel)
    else:  # a staged edit, the file then written back as committed
        path = os.path.join(repo, rel)
        kept = open(path, "rb").read()
        open(path, "ab").write(b"# AGENT STAGED\\n")
        git("add", rel)
        open(path, "wb").write(kept)
print(json.dumps({"ok": tag}))
"""


@pytest.mark.parametrize("how", ["removed", "staged-edit"])
def test_a_staged_change_of_the_running_plan_makes_its_outcome_wait(
    tmp_path: Path, repo: Path, how: str
) -> None:
    config = approved_plan(tmp_path, repo, TOOL, {"T_HOW": how}, "staged change")

    err = once(config)  # the run: action 1 stages its change

    assert "status: executing" in git(repo, "show", "main:plans/p/PLAN.yml"), err[-1500:]
    staged = git(repo, "diff", "--cached", "--name-status").split()
    assert staged == ["D" if how == "removed" else "M", "plans/p/PLAN.yml"], err[-1500:]
    assert "has uncommitted changes staged in the index" in err, err[-1500:]

    git(repo, "restore", "--staged", "--", "plans/p/PLAN.yml")  # the agent takes it back
    once(config)

    assert "status: completed" in git(repo, "show", "main:plans/p/PLAN.yml")
    assert git(repo, "status", "--porcelain") == ""


def test_an_index_left_holding_the_controllers_own_start_is_no_ones_change(
    tmp_path: Path, repo: Path
) -> None:
    """Round 66's restart, in small: a commit of the plan file made through another index
    file leaves the shared index on the start commit's blob (``git status``: staged). That
    entry is the controller's own last write, its bytes in history: the outcome goes ahead
    and leaves the checkout clean; a staged edit of anyone's still waits (above)."""
    config = approved_plan(tmp_path, repo, TOOL, {"T_HOW": "behind"}, "staged change")

    err = once(config)  # the run: action 1 commits through its own index

    final = git(repo, "show", "main:plans/p/PLAN.yml")
    assert "status: completed" in final, err[-1500:]
    assert "has uncommitted changes staged" not in err, err[-1500:]
    assert "p-3" in git(repo, "show", "main:plans/p/EXECUTION_LOG.md")
    assert git(repo, "status", "--porcelain") == ""
