"""Round 4, approval side: an approval approves ONE plan. Round 1 bound an approval to its
version (a commit brought back by git for another version of the same plan is
E_APPROVAL_REPLAYED); here Alice's approval commit of one plan is moved by git onto ANOTHER
plan that the controller froze before she approved (so its date is no replay by the
documented rule): ``git format-patch | git am -p3 --directory=plans/<other>`` keeps her as
author, her author date and her subject.

Attacks (Alice is an approver; the agent only runs git):

- ``am-same-header``: the agent's plan ``<vid>-evil`` has the same ``plan.name``/``task`` lines
  as the plan Alice approves (its actions differ), so her hunk applies as is;
- ``am-c0``: the headers differ; ``git am -C0`` applies her status hunk without context;
- ``cli-approve``: as ``am-same-header``, but Alice approves with ``plangate approve`` (its
  commit carries ``Plan: plans/cli-approve`` and ``Plan-Hash:`` trailers naming her plan);
- ``gate-across``: two gated plans of the same header, both first-approved by Alice and paused
  at their gate; Alice approves the gate of the harmless one, the agent moves that commit
  onto the other one's gate.

Defence: the moved approval is refused (E_APPROVAL_REPLAYED / not an approval of that plan),
the other plan (or its gated action) never runs, and the audit does not call it valid.
Control: the plan Alice approved runs once.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BenchError, Lab, plan_text
from test_round2_approval_authors import shared_lab

R4 = "round 4: "
VIDS = ["am-same-header", "am-c0", "gate-across", "cli-approve"]
GATE = """\
  - id: 2
    tool: rec
    why: "the gate"
    requires_approval: true
    params: {tag: "%s-2"}
"""


def _broke(why: str) -> pytest.MarkDecorator:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=R4 + why)


def _texts(vid: str) -> tuple[str, str]:
    """The plan Alice approves and the agent's other plan."""
    extra = GATE % vid if vid == "gate-across" else ""
    evil_extra = GATE % f"{vid}-evil" if vid == "gate-across" else ""
    good = plan_text(vid, name="rotate logs", extra_actions=extra)
    evil = plan_text(f"{vid}-evil", name="rotate logs", extra_actions=evil_extra)
    if vid != "am-c0":  # same task line: Alice's hunk applies with its context
        evil = evil.replace(f'task: "attack variant {vid}-evil"', f'task: "attack variant {vid}"')
    return good, evil


def _move(lab: Lab, commit: str, vid: str) -> None:
    patch = lab.git("format-patch", "-1", "--stdout", commit)
    args = ["git", "am", "-p3", f"--directory=plans/{vid}-evil"] + (
        ["-C0"] if vid == "am-c0" else []
    )
    result = subprocess.run(
        args,
        cwd=lab.repo,
        env=lab.env(AGENT),
        input=patch,
        text=True,
        capture_output=True,
        check=False,
    )
    if result.returncode != 0:
        raise BenchError(f"git am failed: {result.stderr}")


def _cli_approve(lab: Lab, vid: str) -> str:
    """``plangate approve`` run by Alice in her checkout."""
    env = lab.env(ALICE)
    args = [
        sys.executable,
        "-m",
        "controller",
        "approve",
        "--config",
        str(lab.config),
        f"plans/{vid}",
    ]
    result = subprocess.run(
        args, cwd=lab.repo, env=env, capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        raise BenchError(f"plangate approve failed: {result.stderr}")
    return lab.head()


def _build(root: Path) -> Lab:
    lab = Lab(root)
    for vid in VIDS:
        good, evil = _texts(vid)
        lab.write(vid, good)
        lab.write(f"{vid}-evil", evil)
    lab.commit("agent adds the plans", AGENT)
    lab.run()  # freezes all: the other plans are born before Alice approves
    lab.approve("gate-across", ALICE)
    lab.approve("gate-across-evil", ALICE)
    lab.run()  # both gated plans: action 1, paused at the gate
    time.sleep(1.1)  # Alice's approvals below are dated after every freeze and pause
    made = {
        vid: _cli_approve(lab, vid) if vid == "cli-approve" else lab.approve(vid, ALICE)
        for vid in VIDS
    }
    time.sleep(1.1)  # git moves them later, as it does (a move in the same second is no later)
    for vid, commit in made.items():
        _move(lab, commit, vid)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared_lab(tmp_path_factory, "r4-replay-across", _build)


def test_the_plans_alice_approved_ran_once(lab: Lab) -> None:
    for vid in VIDS:
        assert len(lab.calls(vid)) == 1, lab.codes(vid)
    assert len(lab.calls("gate-across-2")) == 1, lab.codes("gate-across")


#: Out of scope, accepted (docs/threat-model.md "Out of scope"): `git am` writes Alice as the
#: author of a commit she never made, dated when she made another; without signatures nothing
#: in git tells that commit from one she made (the agent could as well `git commit
#: --author=alice`). Signed approvals close it: test_signatures.py `signed-approval-moved`.
FORGED = (
    "out of scope (forged authorship without signatures): the moved commit carries Alice's "
    "name and date and names no plan; with require_signed it is refused"
)
FOUND = {
    "am-same-header": _broke(FORGED),
    "am-c0": _broke(FORGED),
    "cli-approve": [],  # its Plan:/Plan-Hash: trailers name Alice's plan: E_APPROVAL_REPLAYED
    "gate-across": _broke(FORGED),
}
#: Since round 18 an approval's identity (author, author date, subject) names no plan: the
#: moved commit repeats Alice's approval of her plan with a committer date of its own, and is
#: E_APPROVAL_REPLAYED; no marker is left (a move within the same second stays out of scope).
#: Since round 60 the identity includes what a commit decides, and another decision (this
#: plan) under her author, date and subject is a replay only when carried: the agent commits it.
#: Since round 62: only when another hand than the one that committed her approval commits it
#: (a forge's rebase-merge of her two approvals is one hand; docs/threat-model.md, "Accepted
#: limits": git tells `am-c0` from two web-editor approvals by the committer alone).
BROKEN: dict[str, list[pytest.MarkDecorator]] = {v: [] for v in VIDS}


@pytest.mark.parametrize("vid", [pytest.param(v, id=v, marks=BROKEN[v]) for v in VIDS])
def test_an_approval_approves_the_plan_it_was_made_for(lab: Lab, vid: str) -> None:
    evil = f"{vid}-evil"
    if vid == "gate-across":
        assert len(lab.calls(evil)) == 1, lab.codes(evil)  # Alice's own first approval
        assert lab.calls(f"{evil}-2") == [], f"the gate passed: {lab.codes(evil)}"
    else:
        assert lab.calls(evil) == [], f"ran: {lab.codes(evil)}"
        assert not lab.started(evil), lab.codes(evil)
    if vid == "cli-approve":
        assert lab.refusal(evil) == "E_APPROVAL_REPLAYED", lab.codes(evil)


def _moved(lab: Lab) -> dict[str, str]:
    """The moved approvals (Alice's name, the agent's commit): plan -> commit."""
    found = {}
    for sha, author, committer, subject in lab.log_rows("%H%x00%ae%x00%ce%x00%s%x01"):
        if author == ALICE[1] and committer == AGENT[1]:
            found[subject] = sha
    return found


@pytest.mark.parametrize(
    "vid", [pytest.param(v, id=v, marks=BROKEN[v]) for v in VIDS if v != "gate-across"]
)
def test_the_audit_does_not_call_a_moved_approval_valid(lab: Lab, vid: str) -> None:
    moved = _moved(lab)
    assert len(moved) == len(VIDS), moved
    commits = {sha for subject, sha in moved.items() if vid in subject.split()[-1]}
    assert len(commits) == 1, moved
    _code, report = lab.audit()
    valid = [
        e
        for e in report.get("executions") or []
        if e.get("approval_commit") in commits and e.get("approval_valid")
    ]
    assert valid == [], valid
