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

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.gitenv import ROOT, git
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


#: Action 1 commits a comment to the plan file through an index of the agent's own (the
#: working file and the shared index left on the start commit's bytes), then kills the
#: controller (its parent): the restart knows nothing of what this process wrote.
KILLING_TOOL = """\
import json, os, signal, subprocess, sys
tag, repo = sys.argv[1], os.environ["T_REPO"]
env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
rel = "plans/p/PLAN.yml"
def git(*a):
    return subprocess.run(["git", *a], cwd=repo, env=env, check=True,
                          capture_output=True, text=True).stdout.strip()
if tag == "p-1":
    env["GIT_INDEX_FILE"] = os.path.join(repo, ".git", "agent-index")
    git("read-tree", "HEAD")
    text = git("show", "HEAD:" + rel) + "\\n# the agent's comment\\n"
    blob = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=repo, env=env,
                          input=text, capture_output=True, text=True, check=True).stdout.strip()
    git("update-index", "--cacheinfo", "100644," + blob + "," + rel)
    git("-c", "user.name=Agent", "-c", "user.email=agent@example.com",
        "commit", "-q", "-m", "agent: a comment")
    os.kill(os.getppid(), signal.SIGKILL)
print(json.dumps({"ok": tag}))
"""


def test_a_working_file_left_on_the_controllers_own_start_waits_on_nothing_after_a_restart(
    tmp_path: Path, repo: Path
) -> None:
    """Round 120 (atk120k, own-index-commit-waits): killed mid-action after a commit of the
    plan file made through another index file; the working file and the shared index still
    hold the start commit's blob. Those bytes are the controller's own last commit of the
    file (``controller_blob``, in the history index, so known after the restart): no one's
    edit, as the index entry is not. The restart ends the run (in doubt) at once, the
    agent's comment kept, the checkout clean; it used to wait "uncommitted edits" for good."""
    config = approved_plan(tmp_path, repo, KILLING_TOOL, {}, "own index")
    killed = subprocess.run(
        [sys.executable, "-m", "controller", "run", "--once", "--config", str(config)],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert killed.returncode == -9, killed.stderr[-1500:]
    start = git(repo, "log", "-1", "--format=%H", "--author=plangate@localhost").strip()
    own = git(repo, "rev-parse", f"{start}:plans/p/PLAN.yml").strip()
    assert git(repo, "hash-object", "plans/p/PLAN.yml").strip() == own  # the start's bytes
    assert git(repo, "ls-files", "-s", "plans/p/PLAN.yml").split()[1] == own
    assert "agent: a comment" in git(repo, "log", "-1", "--format=%s")

    err = once(config)  # the restart

    final = git(repo, "show", "main:plans/p/PLAN.yml")
    assert "has uncommitted edits" not in err, err[-1500:]
    assert "status: failed" in final and "E_ACTION_IN_DOUBT" in final, err[-1500:]
    assert "# the agent's comment" in final
    assert git(repo, "status", "--porcelain") == ""
