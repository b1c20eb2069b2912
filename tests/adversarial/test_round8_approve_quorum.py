# ruff: noqa: E501  (attack steps read best on one line)
"""Round 8, who may make a plan run: votes that outlive their version, one person counted
twice, and ``plangate check`` against what the controller then does.

Config: approvers Alice and ``*@ops.example.com``; ``plans/two/**`` needs two approvals.

Attacks:

- ``two/aba``: Alice votes on version A (``partial``); the agent changes the content to B (the
  controller freezes B: "any change to the hashed content voids" the votes) and then back to
  A byte for byte (frozen again, the same hash). Bob approves. Alice's vote was voided with
  A's first life: one vote, it must not run.
- ``two/mm``: Alice votes (``partial``); the agent commits a ``.mailmap`` mapping Alice's
  address to Bob's; Alice approves again. One person, one vote: it must not run.
- ``two/ff-trailer``: in a pull request branch Bob makes an unsigned empty commit with
  ``Plan-Approved: plans/two/ff-trailer <hash>`` and Alice sets ``approved``; the agent merges
  it fast-forward (both commits are first-parent now). The unsigned trailer counts for
  nothing: one vote, it must not run.
- ``two/coauth``: the agent's branch sets ``approved``; Alice merges it ``--no-ff`` with
  ``Co-authored-by: Bob`` in her merge message: a co-author is not an approver.

``plangate check`` (never attacked before): before each pull request is merged, CI's
prediction (``--as`` the merger) is recorded; after the merge the controller's decision must
agree with it (``start`` predicted iff the plan started):

- ``ff-check``: Alice approves in the pull request; the agent fast-forwards it.
- ``two/coauth`` as above (``--as`` Alice).

Results: every attack held (``two/aba``: a restored version starts collecting anew); ``check``
broke for ``ff-check`` (strict xfail): it predicted ``refuse``, the fast-forward started the
plan.

Controls: ``plain`` (Alice approves the agent's plan) runs once.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab, clone_audit, plan_text
from test_round2_approval_authors import shared_lab

APPROVAL = """\
rules:
  - match: {paths: ["plans/two/**"]}
    require: [{count: 2}]
"""

ATTACKS = ["two/aba", "two/mm", "two/ff-trailer", "two/coauth"]
BROKEN: dict[str, object] = {}
CHECK_BROKEN: dict[str, object] = {
    "ff-check": pytest.mark.xfail(
        strict=True,
        raises=AssertionError,
        reason="round 8, accepted (docs/threat-model.md): `plangate check --as <merger>` always simulates a merge commit: for a pull"
        " request whose branch holds Alice's approval commit it predicts `refuse` (the merger is"
        " not an approver), but a fast-forward (or rebase) merge puts Alice's commit on the"
        " first-parent history and the controller starts the plan: CI says nothing will run,"
        " merging runs it",
    )
}


def _tag(vid: str) -> str:
    return vid.replace("/", "-")


def _check(lab: Lab, head: str, merger: str) -> dict[str, str]:
    result = lab.cli(
        "check",
        "--config",
        str(lab.config),
        "--base",
        "main",
        "--head",
        head,
        "--as",
        merger,
        "--format",
        "json",
        cwd=lab.repo,
    )
    try:
        report = json.loads(result.stdout)
    except ValueError:
        return {"raw": result.stdout + result.stderr}
    return {row["plan"]: row["outcome"] for row in report.get("plans", [])}


def _build(root: Path) -> Lab:
    lab = Lab(root, approval=APPROVAL)
    for vid in ["two/aba", "two/mm", "two/ff-trailer", "two/coauth", "ff-check", "plain"]:
        lab.write(vid, plan_text(_tag(vid)))
    lab.commit("agent adds plans", AGENT)
    lab.run()  # freeze
    first_a = lab.read("two/aba")

    # pull requests, branched from the frozen main
    lab.git("checkout", "-q", "-b", "pr")
    lab.approve("ff-check", ALICE)
    hash_ = lab.plan("two/ff-trailer")["frozen"]["hash"]
    lab.git(
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        f"approve two/ff-trailer\n\nPlan-Approved: plans/two/ff-trailer {hash_}",
        who=BOB,
    )
    lab.approve("two/ff-trailer", ALICE)
    lab.git("checkout", "-q", "main")
    lab.git("checkout", "-q", "-b", "pr2")
    lab.approve("two/coauth", AGENT)
    lab.git("checkout", "-q", "main")
    predicted = {"pr": _check(lab, "pr", AGENT[1]), "pr2": _check(lab, "pr2", ALICE[1])}
    (lab.root / "predicted.json").write_text(json.dumps(predicted))
    lab.git("merge", "-q", "--ff-only", "pr")
    lab.git(
        "merge",
        "-q",
        "--no-ff",
        "-m",
        "merge pr2\n\nCo-authored-by: Bob <bob@ops.example.com>",
        "pr2",
        who=ALICE,
    )

    # first votes
    lab.approve("two/aba", ALICE)
    lab.approve("two/mm", ALICE)
    lab.approve("plain", ALICE)
    lab.run()  # partial x2, plain starts, the PRs decided
    partial = {v: lab.plan(v)["approval"].get("status") for v in ["two/aba", "two/mm"]}
    (lab.root / "partial.json").write_text(json.dumps(partial))

    # two/aba: A -> B
    lab.write("two/aba", plan_text(_tag("two/aba"), params='extra: "b"\n'))
    lab.commit("agent edits two/aba", AGENT)
    # two/mm: the mailmap, then Alice again
    (lab.repo / ".mailmap").write_text(
        "Bob <bob@ops.example.com> <alice@example.com>\nBob <bob@ops.example.com> Alice <alice@example.com>\n"
    )
    lab.commit("agent adds a mailmap", AGENT)
    lab.approve("two/mm", ALICE, message="approve two/mm again")
    lab.run()
    # two/aba: B -> A, byte for byte as the controller first froze it
    lab.write("two/aba", first_a)
    lab.commit("agent restores two/aba", AGENT)
    lab.run()
    lab.approve("two/aba", BOB)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared_lab(tmp_path_factory, "r8-quorum", _build)


def test_the_control_runs_once(lab: Lab) -> None:
    assert len(lab.calls("plain")) == 1, lab.codes("plain")


def test_the_first_votes_were_partial(lab: Lab) -> None:
    partial = json.loads((lab.root / "partial.json").read_text())
    assert set(partial.values()) == {"partial"}, partial


@pytest.mark.parametrize("vid", [pytest.param(v, id=v, marks=BROKEN.get(v, [])) for v in ATTACKS])
def test_one_real_vote_does_not_make_two(lab: Lab, vid: str) -> None:
    assert lab.calls(_tag(vid)) == [], lab.codes(vid)
    assert not lab.started(vid), lab.codes(vid)


@pytest.mark.parametrize(
    "pr,vid",
    [
        pytest.param(p, v, id=v, marks=CHECK_BROKEN.get(v, []))
        for p, v in [("pr", "ff-check"), ("pr", "two/ff-trailer"), ("pr2", "two/coauth")]
    ],
)
def test_check_predicts_what_the_controller_does(lab: Lab, pr: str, vid: str) -> None:
    predicted = json.loads((lab.root / "predicted.json").read_text())[pr]
    assert (predicted.get(f"plans/{vid}") == "start") == lab.started(vid), (
        predicted,
        lab.codes(vid),
    )


def test_a_fresh_clone_audit_agrees(lab: Lab, tmp_path: Path) -> None:
    report, valid = clone_audit(lab, tmp_path)
    assert "plans/plain" in valid, report
    for vid in ATTACKS:
        assert f"plans/{vid}" not in valid, report
