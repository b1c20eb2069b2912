# ruff: noqa: E501  (attack steps read best on one line)
"""Round 10, who may make a plan run: a quorum vote the branch no longer shows.

Config: approvers Alice and ``*@ops.example.com``; ``plans/two/**`` needs two approvals.

- ``two/erase``: Alice approves (the controller commits ``partial``); the agent then
  ``git reset --hard``s main to the controller's freeze, erasing Alice's approval and the
  ``partial`` commit that holds her vote (a partial commit is no freeze/start/pause/outcome:
  "a refusal or partial-quorum commit that a rewrite erases holds nothing: the next pass
  decides again from what remains"). The index "keeps approvals it has seen" across the
  rebuild: if it still counted Alice's vote, Bob's one approval would start a plan whose
  history shows one vote, and a fresh-clone audit could not prove it.
- ``plangate check --as bob@ops.example.com`` on Bob's pull request (the agent's commit sets
  ``approved``; Bob merges ``--no-ff``) must predict what the controller then does.

- ``cv-copy``: Alice votes on ``two/cv`` (partial); the agent copies the file (same hashed
  content, Alice's ``partial`` block included) to ``cv-copy`` (no rule: one approval) and sets
  ``approved`` itself. Votes "of the same hash accumulate": Alice's one vote must not be the
  copy's one approval.

- ``bg``: Bob writes a plan with a gated step; Alice approves; it waits at the gate. The
  same pull request sets ``approved`` on it too, and Bob (its writer) merges: ``check --as
  bob`` must predict the refusal, and the gated step must not run.

- ``launder-yaml``, ``launder-schema``: Bob rejects; the agent makes the file unreadable
  (a YAML error) or invalid (an unknown tool), then mends it as ``pending_approval``
  (``invalid`` -> ``pending_approval`` is a legal human transition); Alice approves. A
  rejection is final.

- ``rej-readd``, ``rej-copy``, ``rej-mv``: Bob rejects a plan; the agent deletes it and adds
  the same text again as ``pending_approval`` (a later push), copies it to a new folder, or
  ``git mv``s it (status set back to ``pending_approval``); Carol approves what she is shown.
  ``abort-copy``: Alice approves, Bob aborts in the same push (before the controller acted:
  ``aborted``, never started); the agent copies it; Carol approves the copy. "A withdrawal
  wins ... a later approval does not bring it back": the vetoed version must not run.
  ``rej-pin``: Bob rejects a plan; the agent writes a parent that pins the rejected plan (in
  place, by its frozen hash) as its only action; Carol approves the parent.
  Contrast ``ga``: Alice approves a gated plan, Bob aborts it at the gate (it *started*); the
  agent copies it; Carol approves the copy: ``E_ALREADY_EXECUTED`` (held).

Defence: after Bob's merge the plan is still ``partial`` (one vote), nothing runs; ``check``
predicted ``partial``; ``cv-copy`` is refused and never starts; the laundered plans stay ``rejected``. Result: held, except the withdrawn version brought
back under another plan path's life: **broke** (5, strict xfails): each runs on Carol's one
approval (the executed-hash record stops re-runs of what *ran*; nothing records what was
vetoed). Control: ``two/honest`` (Alice then Bob) runs once.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, CAROL, Lab, plan_text
from test_round2_approval_authors import shared_lab

APPROVAL = """\
rules:
  - match: {paths: ["plans/two/**"]}
    require: [{count: 2}]
"""


GATED = plan_text(
    "bg",
    extra_actions="""\
  - id: 2
    tool: rec
    why: "the gated step"
    requires_approval: true
    params: {tag: "bg-2"}
""",
)


#: a rejected plan made unreadable / invalid, then mended as ``pending_approval``
#: (``invalid -> pending_approval`` is a legal human transition)
LAUNDER = {
    "launder-yaml": ("actions:", "actions: [\n"),
    "launder-schema": ("tool: rec", "tool: nosuch"),
}


#: a withdrawn version brought back under a plan path that has no withdrawal (vid -> the
#: plan the agent brings back: deleted and added again, moved, copied)
REVIVE = ["rej-readd", "rej-copy", "rej-mv", "abort-copy", "rej-pin"]
REVIVED = {
    "rej-readd": "rej-readd",
    "rej-copy": "rej-copy-copy",
    "rej-mv": "rej-mv-moved",
    "abort-copy": "abort-copy-copy",
    "rej-pin": "rej-pinner",
}


def pinner(lab: Lab, slug: str) -> str:
    """A parent plan whose only action is ``slug`` (the rejected plan, in place), pinned."""
    digest = lab.plan(slug)["frozen"]["hash"]
    return (
        'plan:\n  name: "rej-pinner"\n  task: "run a pinned plan"\n  status: pending_approval\n'
        "available_tools:\n  - name: rec\nactions:\n  - id: 1\n"
        f'    plan: {{path: plans/{slug}, hash: "{digest}"}}\n    why: "the pinned plan"\n'
    )


def good_revive(lab: Lab, vid: str) -> str:
    text = lab.read(vid)
    for status in ("rejected", "aborted"):
        text = text.replace(f"status: {status}", "status: pending_approval")
    return text


def _build(root: Path) -> Lab:
    lab = Lab(root, approval=APPROVAL)
    lab.write("bg", GATED)
    lab.commit("bob writes a gated plan", BOB)
    lab.write("two/erase", plan_text("erase"))
    lab.write("two/honest", plan_text("honest"))
    lab.write("two/cv", plan_text("cv", name="cv"))
    for vid in LAUNDER:
        lab.write(vid, plan_text(vid))
    for vid in REVIVE:
        lab.write(vid, plan_text(vid))
    lab.write("ga", GATED.replace('"bg', '"ga'))
    lab.commit("agent adds plans", AGENT)
    lab.run()
    frozen = lab.head()
    lab.approve("two/erase", ALICE)
    lab.run()
    first = (lab.plan("two/erase").get("approval") or {}).get("status")
    lab.git("reset", "-q", "--hard", frozen)
    lab.run()
    lab.approve("two/cv", ALICE)
    lab.approve("ga", ALICE)  # runs action 1, waits at its gate
    for vid in [*LAUNDER, "rej-readd", "rej-copy", "rej-mv", "rej-pin"]:
        lab.set_status(vid, "rejected")
    lab.commit("bob rejects", BOB)
    lab.approve("abort-copy", ALICE)  # first approval not acted on yet ...
    lab.set_status("abort-copy", "aborted")
    lab.commit("bob aborts it", BOB)  # ... aborted in the same push
    lab.run()
    good = {vid: lab.read(vid) for vid in LAUNDER}
    cv = lab.read("two/cv")  # Alice's vote recorded: partial, back to pending_approval
    lab.write("cv-copy", cv)
    lab.commit("agent copies two/cv out of the two-approval folder", AGENT)
    lab.set_status("ga", "aborted")
    lab.commit("bob aborts ga at its gate", BOB)
    for vid, breaks in LAUNDER.items():
        lab.write(vid, good[vid].replace(*breaks))
    lab.commit("agent breaks the rejected plans", AGENT)
    revived = {vid: good_revive(lab, vid) for vid in REVIVE}
    shutil.rmtree(lab.repo / "plans" / "rej-readd")
    lab.git("mv", "plans/rej-mv", "plans/rej-mv-moved")
    lab.write("rej-mv-moved", revived["rej-mv"])
    lab.write("rej-copy-copy", revived["rej-copy"])
    lab.write("abort-copy-copy", revived["abort-copy"])
    lab.write("rej-pinner", pinner(lab, "rej-pin"))
    lab.commit("agent deletes, moves and copies the withdrawn plans", AGENT)
    lab.run()
    lab.approve("cv-copy", AGENT)
    for vid in LAUNDER:
        lab.write(vid, good[vid].replace("status: rejected", "status: pending_approval"))
    lab.write("rej-readd", revived["rej-readd"])
    ga = re.sub(r"\nexecution:.*", "\n", lab.read("ga"), flags=re.S)
    ga = re.sub(r"\napproval:.*?(?=\n\S)", "", ga, flags=re.S)
    lab.write("ga-copy", ga.replace("status: aborted", "status: pending_approval"))
    lab.commit("agent mends and resubmits them; adds rej-readd again", AGENT)
    lab.run()
    lab.approve("two/honest", ALICE)
    lab.approve("bg", ALICE)
    for vid in LAUNDER:
        lab.set_status(vid, "approved")
    lab.commit("alice approves the resubmitted plans", ALICE)
    for vid in [*REVIVED.values(), "ga-copy"]:
        lab.set_status(vid, "approved")
    lab.commit("carol approves the plans she is shown", CAROL)
    lab.run()  # bg runs action 1 and waits at its gate
    gate = lab.plan("bg")["plan"]["status"]
    lab.git("checkout", "-q", "-b", "pr")
    lab.set_status("two/erase", "approved")
    lab.set_status("bg", "approved")
    lab.commit("agent asks for the merge", AGENT)
    lab.git("checkout", "-q", "main")
    check = lab.cli(
        "check",
        "--config",
        str(lab.config),
        "--base",
        "main",
        "--head",
        "pr",
        "--as",
        BOB[1],
        "--format",
        "json",
        cwd=lab.repo,
    )
    lab.git("merge", "-q", "--no-ff", "pr", "-m", "bob merges", who=BOB)
    lab.approve("two/honest", BOB)
    lab.run()
    (root / "facts.json").write_text(
        json.dumps({"first": first, "check": check.stdout, "gate": gate})
    )
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared_lab(tmp_path_factory, "r10-erased", _build)


def _facts(lab: Lab) -> dict:
    return json.loads((lab.root / "facts.json").read_text())


def test_the_control_runs_once(lab: Lab) -> None:
    assert len(lab.calls("honest")) == 1, lab.codes("two/honest")


def test_alice_voted_before_the_reset(lab: Lab) -> None:
    assert _facts(lab)["first"] == "partial"


def test_an_erased_vote_is_no_vote(lab: Lab) -> None:
    assert lab.calls("erase") == [], lab.codes("two/erase")
    assert not lab.started("two/erase"), lab.codes("two/erase")
    assert (lab.plan("two/erase").get("approval") or {}).get("status") == "partial"


def test_a_vote_does_not_follow_its_hash_to_a_copy(lab: Lab) -> None:
    # the copy (same hashed content, under the default one-approval rule) never got an
    # approval of its own: the agent's request is refused, Alice's vote stays with two/cv
    assert lab.calls("cv") == [], lab.codes("cv-copy")
    assert not lab.started("cv-copy"), lab.codes("cv-copy")


@pytest.mark.parametrize("vid", list(LAUNDER))
def test_a_rejection_is_not_laundered_through_invalid(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)
    assert not lab.started(vid), lab.codes(vid)
    assert lab.status()[f"plans/{vid}"]["status"] == "rejected", lab.codes(vid)


REVIVE_XF = pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason=(
        "round 10: a version an approver rejected (or aborted before it started) runs once the"
        " agent deletes and re-adds it, moves it or copies it (same hashed content): a withdrawal"
        " binds the plan path's life, not the version, so one other approval runs what was vetoed"
    ),
)


@pytest.mark.parametrize("vid", REVIVE)
def test_a_withdrawn_version_does_not_come_back(lab: Lab, vid: str) -> None:
    """Fixed after round 10 (REVIVE_XF was its mark): a version withdrawn before it ran is
    refused under any name, as a copy, a re-add, a move or a pin (E_VERSION_WITHDRAWN)."""
    assert lab.calls(vid) == [], lab.codes(REVIVED[vid])
    assert not lab.started(REVIVED[vid]), lab.codes(REVIVED[vid])
    assert "E_VERSION_WITHDRAWN" in lab.codes(REVIVED[vid]), lab.codes(REVIVED[vid])


def test_a_started_then_aborted_version_does_not_come_back(lab: Lab) -> None:
    # the contrast: a version that *started* is in the executed-hash record
    assert [c["argv"] for c in lab.calls("ga")] == [["ga"]] and lab.calls("ga-2") == []
    assert not lab.started("ga-copy"), lab.codes("ga-copy")
    assert "E_ALREADY_EXECUTED" in lab.codes("ga-copy"), lab.codes("ga-copy")


def test_check_predicted_what_the_controller_did(lab: Lab) -> None:
    rows = {p["plan"]: p for p in json.loads(_facts(lab)["check"])["plans"]}
    assert rows["plans/two/erase"]["outcome"] == (
        "start" if lab.started("two/erase") else "partial"
    )
    assert _facts(lab)["gate"] == "awaiting_approval"
    ran_gate = bool(lab.calls("bg-2"))
    assert rows["plans/bg"]["outcome"] == ("start" if ran_gate else "refuse"), rows["plans/bg"]


def test_the_writer_merging_the_gate_open_is_refused(lab: Lab) -> None:
    assert len(lab.calls("bg")) == 1 and lab.calls("bg-2") == [], lab.codes("bg")
    assert "E_SELF_APPROVAL" in lab.codes("bg"), lab.codes("bg")


def test_a_fresh_clone_audit_accepts_an_abort_before_the_start(lab: Lab, tmp_path: Path) -> None:
    import subprocess

    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(lab.repo), str(clone)], check=True)
    result = lab.cli("audit", "--json", cwd=clone)
    report = json.loads(result.stdout)
    flagged = [f for f in report["findings"] if f.get("plan") == "plans/abort-copy"]
    assert flagged == [], flagged
