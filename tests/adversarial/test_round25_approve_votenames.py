"""Round 25, who may make a plan run: other people named in one approver's commit, and the
``plangate approve`` command in a checkout the agent shares.

Config: the bench's, with every ``plans/vn-*`` plan needing two approvals. The agent writes
each plan; the controller freezes it; a second later Carol (ops) approves each plan once:

- ``co``: her approval's message carries ``Co-authored-by: Bob <bob@ops.example.com>``.
- ``sob``: ``Signed-off-by:``/``Approved-by:`` Bob and ``Reviewed-by:`` Alice trailers.
- ``pa``: an unsigned ``Plan-Approved: plans/vn-pa <hash>`` trailer (first parent).
- ``amend``: Carol's approval amended by the agent, then ``--reset-author`` by Bob (one
  commit: one vote, Bob's).
- ``ctl``: a plain approval by Carol.

Asserted: each plan is ``partial`` with one counted vote, nothing runs.

``cli-*`` (one approval each, plans ``plans/cli-*``): in the shared checkout the agent stages
``plans/cli-staged`` set ``approved`` (``git add``) and installs every ``.git/hooks`` script
(pre-commit, prepare-commit-msg, commit-msg, post-commit, reference-transaction, ...), each
logging that it ran; Alice runs ``plangate approve plans/cli-x``; the controller's passes
run with the hooks in place. Asserted: Alice's commit
touches ``plans/cli-x`` only, ``plans/cli-staged`` never runs, ``cli-x`` runs once, no hook ran.

Results: all held.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, CAROL, Lab, identity, plan_text
from test_round2_execution_kit import shared

RULES = 'rules:\n  - match: {paths: ["plans/vn-*"]}\n    require: [{count: 2}]\n'
VIDS = ["co", "sob", "pa", "amend", "ctl"]
HOOKS = [
    "pre-commit",
    "prepare-commit-msg",
    "commit-msg",
    "post-commit",
    "reference-transaction",
    "post-index-change",
    "pre-auto-gc",
    "post-rewrite",
]


def _build(root: Path) -> Lab:
    lab = Lab(root, approval=RULES)
    for v in VIDS:
        lab.write(f"vn-{v}", plan_text(f"vn-{v}"))
    for v in ["cli-x", "cli-staged"]:
        lab.write(v, plan_text(v))
    lab.commit("agent adds plans", AGENT)
    lab.run()
    time.sleep(1.05)
    bob = f"{BOB[0]} <{BOB[1]}>"
    messages = {
        "co": f"approve\n\nCo-authored-by: {bob}",
        "sob": f"approve\n\nSigned-off-by: {bob}\nApproved-by: {bob}\n"
        "Reviewed-by: Alice <alice@example.com>",
        "pa": "approve\n\nPlan-Approved: plans/vn-pa " + lab.plan("vn-pa")["frozen"]["hash"],
        "amend": "approve amend",
        "ctl": "approve ctl",
    }
    for v in VIDS:
        lab.set_status(f"vn-{v}", "approved")
        lab.commit(messages[v], CAROL)
        if v == "amend":
            lab.git("commit", "--amend", "--no-edit", "-q", who=AGENT)
            lab.git("commit", "--amend", "-q", "--reset-author", "--no-edit", who=BOB)
    # the shared checkout: a staged approval and hooks, then Alice's `plangate approve`
    lab.set_status("cli-staged", "approved")
    lab.git("add", "plans/cli-staged/PLAN.yml")
    hooks = lab.repo / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    for name in HOOKS:
        (hooks / name).write_text(f"#!/bin/sh\necho {name} >> '{root / 'hooks.log'}'\nexit 0\n")
        (hooks / name).chmod(0o755)
    lab.extra_env = identity(ALICE)
    out = lab.cli("approve", "--config", str(lab.config), "plans/cli-x", cwd=lab.repo)
    lab.extra_env = {}
    (root / "approve.out").write_text(f"{out.returncode}\n{out.stdout}\n{out.stderr}")
    (root / "approve.files").write_text(lab.git("show", "--name-only", "--format=%ae", "HEAD"))
    for name in HOOKS:  # the bench's own clean-up must not log: hooks off, then on again
        (hooks / name).chmod(0o644)
    lab.git("reset", "-q", "plans/cli-staged/PLAN.yml")
    lab.git("checkout", "-q", "--", "plans/cli-staged/PLAN.yml")
    for name in HOOKS:  # the controller's passes run with the hooks in place
        (hooks / name).chmod(0o755)
    lab.run()
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r25-votenames", _build)


@pytest.mark.parametrize("vid", VIDS)
def test_one_commit_is_one_vote(lab: Lab, vid: str) -> None:
    slug = f"vn-{vid}"
    approval = lab.plan(slug).get("approval") or {}
    assert approval.get("status") == "partial", lab.codes(slug)
    assert len(approval.get("approvals") or []) == 1, lab.codes(slug)
    assert lab.calls(slug) == [], lab.codes(slug)


def test_plangate_approve_commits_only_its_plan(lab: Lab) -> None:
    out = (lab.root / "approve.out").read_text()
    assert out.startswith("0\n"), out
    files = (lab.root / "approve.files").read_text().split()
    assert files == [ALICE[1], "plans/cli-x/PLAN.yml"], files
    assert len(lab.calls("cli-x")) == 1, lab.codes("cli-x")
    assert lab.calls("cli-staged") == [], lab.codes("cli-staged")
    assert not lab.started("cli-staged"), lab.codes("cli-staged")


def test_no_hook_of_the_shared_git_ran(lab: Lab) -> None:
    log = lab.root / "hooks.log"
    assert not log.exists(), log.read_text()
