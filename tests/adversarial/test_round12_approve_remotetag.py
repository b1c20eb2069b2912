# ruff: noqa: RUF059  (attack steps read best on one line)
"""Round 12, who may make a plan run: ref names that mean two things, in remote mode.

git's DWIM order puts ``refs/tags/<name>`` before ``refs/heads/<name>``, and a branch
``origin/main`` beside the remote-tracking ``refs/remotes/origin/main``. In remote mode the
agent can push refs the branch protection does not cover (tags, other branches).

- ``hidden``: Alice approves ``hidden``, Bob (an allowed approver) rejects it, both pushed
  before the controller looks; the agent pushes a tag ``main``, a tag ``origin/main`` and a
  branch ``origin/main``, all at Alice's approval commit (the history without the
  rejection). Defence: the controller fetches the branch, the rejection wins, nothing runs.
- ``after``: the same refs left on the remote, then Alice approves ``after`` on ``main``:
  it runs once (the controller keeps following the real branch), and the audit of the
  controller's clone agrees with what ran.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab, plan_text
from test_round2_approval_authors import shared_lab


def _build(root: Path) -> Lab:
    lab = Lab(root)
    origin = root / "origin.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(lab.repo), str(origin)], check=True)
    lab.git("remote", "add", "origin", str(origin))
    lab.config.write_text(
        lab.config.read_text().replace(
            f"repo: {lab.repo}\n", f"remote: {{url: {origin}, branch: main, poll_interval: 0.2}}\n"
        )
    )
    lab.write("hidden", plan_text("hidden"))
    lab.write("after", plan_text("after"))
    lab.commit("agent adds plans", AGENT)
    lab.git("push", "-q", "origin", "main")
    lab.run()  # freeze
    lab.git("pull", "-q", "--rebase", "origin", "refs/heads/main")
    approval = lab.approve("hidden", ALICE)
    lab.set_status("hidden", "rejected")
    lab.commit("bob rejects hidden", BOB)
    lab.git("push", "-q", "origin", "main")
    for ref in ("refs/tags/main", "refs/tags/origin/main", "refs/heads/origin/main"):
        lab.git("push", "-q", "origin", f"{approval}:{ref}")
    lab.run()
    lab.git("pull", "-q", "--rebase", "origin", "refs/heads/main")
    lab.approve("after", ALICE)
    lab.git("push", "-q", "origin", "main")
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared_lab(tmp_path_factory, "r12-remotetag", _build)


def test_a_pushed_tag_named_main_does_not_hide_a_rejection(lab: Lab) -> None:
    assert lab.calls("hidden") == [], lab.codes("hidden")
    assert lab.status()["plans/hidden"]["status"] == "rejected", lab.codes("hidden")


def test_the_real_branch_is_still_followed(lab: Lab) -> None:
    assert len(lab.calls("after")) == 1, lab.codes("after")


def test_the_audit_of_the_controller_clone_agrees(lab: Lab) -> None:
    code, report = lab.audit(config=lab.config)
    valid = {e["plan"] for e in report.get("executions", []) if e.get("approval_valid")}
    assert valid == {"plans/after"}, report
