# ruff: noqa: E501
"""Round 58 (runs): a person or an agent runs ordinary git in the shared checkout WHILE a
plan runs (local mode; the controller holds ``.git/index.lock`` only around its own commits,
writes checkpoints of PLAN.yml into the tree mid-run, and commits the outcome at the end).

Lab ``mg``: one plan per variant; action 1 ``act`` is an exec tool standing for the agent at
that moment (it runs the variant's git commands in the checkout as the agent), action 2
``rec`` (``<vid>-2``). Each plan is approved by Alice and run in its own pass; then the test
"repairs" what a person would (removes a stale lock, switches back to ``main``, waits for a
person's commit to end) and runs two more passes.

- ``revert``: ``git stash`` (the controller's checkpoint), ``git revert`` the start commit,
  ``git stash drop``: the branch says ``approved`` again while the run is on.
- ``rm``: ``git rm -rf`` the running plan's folder, commit.
- ``mv``: ``git mv`` the running plan's folder elsewhere, commit (an ``executing`` plan at
  a new path).
- ``cp``: copy the running plan's folder (the checkpoint) to a new path, commit.
- ``softreset``: ``git reset --soft HEAD~1`` (the controller's start) and commit the same
  tree as the agent's; later Alice approves the file again.
- ``lock``: leave an empty ``.git/index.lock`` (a crashed git) until the repair.
- ``side``: ``git checkout -b`` another branch; ``detach``: ``git checkout --detach``.
- ``edit``: the agent commits action 2's param changed (``<vid>-EVIL``) while action 1 runs.

Asserted: action 1 ran exactly once; action 2 at most once and never with the agent's
param; a copy or moved copy never runs; the plan ends ``completed`` (or, ``softreset``, held
``E_HISTORY_REWRITTEN`` and Alice's new approval refused ``E_ALREADY_EXECUTED``); ``plangate audit`` flags the
agent's commits that set a run state or change a running plan (``revert``, ``softreset``,
``mv``, ``cp``, ``edit``).

Broke: none. Held: all 14 ids (a stale or held lock stops the pass with ``E_GIT`` naming the
file, as docs/approvals.md says; every plan waits and nothing runs twice).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from advkit import ALICE, BenchError, Lab
from test_round2_execution_kit import shared

VARIANTS = ["revert", "rm", "mv", "cp", "softreset", "lock", "side", "detach", "edit"]
FLAGGED = {
    "revert": "plans/revert",
    "softreset": "plans/softreset",
    "mv": "plans/mv-moved",
    "cp": "plans/cp-copy",
    "edit": "plans/edit",
}

ACT = """\
import json, os, shutil, subprocess, sys
vid = sys.argv[1]
repo = os.environ["REPO"]
with open(os.environ["REC_LOG"], "a") as f:
    f.write(json.dumps({"argv": [vid + "-act"]}) + "\\n")
env = dict(os.environ, GIT_AUTHOR_NAME="Agent", GIT_AUTHOR_EMAIL="agent@example.com",
           GIT_COMMITTER_NAME="Agent", GIT_COMMITTER_EMAIL="agent@example.com")
def git(*a):
    return subprocess.run(["git", *a], cwd=repo, env=env, capture_output=True, text=True)
p = "plans/" + vid
if vid == "revert":
    h = git("log", "-1", "--format=%H", "--grep", "start " + p + "$").stdout.strip()
    git("stash", "-q"); git("revert", "--no-edit", h); git("stash", "drop", "-q")
elif vid == "rm":
    git("rm", "-rqf", p); git("commit", "-q", "-m", "rm")
elif vid == "mv":
    git("mv", p, p + "-moved"); git("commit", "-q", "-m", "move")
elif vid == "cp":
    shutil.copytree(os.path.join(repo, p), os.path.join(repo, p + "-copy"))
    git("add", p + "-copy"); git("commit", "-q", "-m", "copy")
elif vid == "softreset":
    git("reset", "-q", "--soft", "HEAD~1"); git("commit", "-q", "-m", "mine")
elif vid == "lock":
    open(os.path.join(repo, ".git", "index.lock"), "w").close()
elif vid == "side":
    git("checkout", "-q", "-b", "side")
elif vid == "detach":
    git("checkout", "-q", "--detach")
elif vid == "edit":
    f = os.path.join(repo, p, "PLAN.yml")
    t = git("show", "HEAD:" + p + "/PLAN.yml").stdout.replace("tag: edit-2", "tag: edit-EVIL")
    open(f, "w").write(t)
    git("commit", "-q", "-m", "edit", "--", f)
print(json.dumps({"ok": True}))
"""


def _plan(vid: str) -> str:
    return (
        f"plan:\n  name: {vid}\n  task: t\n  status: pending_approval\n"
        "available_tools: [{name: act}, {name: rec}]\nactions:\n"
        f"  - {{id: 1, tool: act, why: w, params: {{v: {vid}}}}}\n"
        f"  - {{id: 2, tool: rec, why: w, params: {{tag: {vid}-2}}}}\n"
    )


def _repair(lab: Lab) -> None:
    (lab.repo / ".git" / "index.lock").unlink(missing_ok=True)
    lab.git("checkout", "-q", "main", check=False)


def _build(root: Path) -> Lab:
    (root / "act.py").write_text(ACT)
    lab = Lab(root / "mg")
    py, act = json.dumps(sys.executable), json.dumps(str(root / "act.py"))
    env = f"{{REPO: {json.dumps(str(lab.repo))}, REC_LOG: {json.dumps(str(lab.log))}}}"
    lab.write_config(tools=f"act: {{kind: exec, argv: [{py}, {act}, '{{v}}'], env: {env}}}\n")
    for vid in VARIANTS:
        lab.write(vid, _plan(vid))
    lab.commit("plans")
    lab.run()
    lab.first = {}  # type: ignore[attr-defined]
    for vid in VARIANTS:
        lab.set_status(vid, "approved")
        lab.commit(f"approve {vid}", ALICE, f"plans/{vid}")
        first = lab.run(check=False)
        lab.first[vid] = (first.returncode, first.stderr[-400:])  # type: ignore[attr-defined]
        _repair(lab)
        lab.run()
    lab.run()
    lab.set_status("softreset", "approved")
    lab.commit("approve softreset again", ALICE, "plans/softreset")
    lab.run()
    lab.run()
    lab.status_rows = lab.status()  # type: ignore[attr-defined]
    lab.status_text = lab.cli("status", "--config", str(lab.config)).stdout  # type: ignore[attr-defined]
    lab.report = lab.audit(config=lab.config)[1]  # type: ignore[attr-defined]
    lab.subjects_ = lab.git("log", "--format=%an %s", "main")  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    built = shared(tmp_path_factory, "r58-midrungit", _build)
    if not built.calls("revert-act"):
        raise BenchError("the act tool never ran")
    return built


@pytest.mark.parametrize("vid", VARIANTS)
def test_git_under_a_running_plan(lab: Lab, vid: str) -> None:
    assert len(lab.calls(f"{vid}-act")) == 1, (vid, lab.first[vid])  # type: ignore[attr-defined]
    assert len(lab.calls(f"{vid}-2")) <= 1
    assert lab.calls(f"{vid}-EVIL") == []
    rows = lab.status_rows  # type: ignore[attr-defined]
    row = rows[f"plans/{vid}"]
    if vid == "softreset":
        assert lab.calls(f"{vid}-2") == []
        assert "E_HISTORY_REWRITTEN" in json.dumps(row), row
        assert lab.refusal(vid) == "E_ALREADY_EXECUTED" or "E_ALREADY_EXECUTED" in lab.history(
            vid
        ), lab.history(vid)[:2000]
    else:
        assert row["status"] == "completed", (row, lab.first[vid])  # type: ignore[attr-defined]
        assert len(lab.calls(f"{vid}-2")) == 1
    for other in (f"plans/{vid}-moved", f"plans/{vid}-copy"):
        if other in rows:
            assert rows[other]["status"] not in (
                "executing",
                "completed",
            ) or "E_ILLEGAL_TRANSITION" in json.dumps(rows[other]), rows[other]


@pytest.mark.parametrize("vid", sorted(FLAGGED))
def test_the_audit_flags_the_agents_commit(lab: Lab, vid: str) -> None:
    findings = lab.report.get("findings", [])  # type: ignore[attr-defined]
    assert any(f.get("plan") == FLAGGED[vid] for f in findings), json.dumps(findings)[:2000]
