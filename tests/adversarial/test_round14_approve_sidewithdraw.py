"""Round 14, who may make a plan run: withdrawals made inside a merged pull request branch
(not first-parent), withdraw rights gained by dropping a file into a running plan's folder,
and ``plangate check``'s prediction for such merges.

Config: the bench's (approvers Alice and ``*@ops.example.com``; one approval).

- ``pr-reject``: a frozen pending plan. In a branch ``pr-reject`` Bob (an allowed approver)
  commits ``status: rejected``; then the agent commits ``status: approved`` on the branch;
  Alice merges it ``--no-ff``. The first-parent diff is ``pending_approval`` -> ``approved``
  by Alice, but Bob's rejection of that version is in the branch's history ("a withdrawal wins,
  in any order of commits"). Defence: nothing runs (rejected / ``E_VERSION_WITHDRAWN``).
- ``pr-abort``: a gated plan paused at its gate (``awaiting_approval``). In a branch Bob commits
  ``aborted``, then the agent ``approved``; Alice merges. Defence: the gated action never runs.
- ``pr-abort-author``: the same with the agent (the author) aborting in the branch and Bob
  merging. Defence: the gated action never runs.
- ``mm-reject``: a frozen pending plan; in a branch Bob commits ``rejected``; Mallory (no
  approver) merges it, so the first-parent commit setting ``rejected`` is hers; then Alice
  approves on main. Defence: nothing runs (Bob's rejection counts, Mallory's does not).
- ``note-abort``: a gated plan paused at its gate; Mallory (no approver, no author of the
  approved version) commits ``plans/note-abort/NOTES.md`` and then ``aborted``; Alice approves
  the gate. Defence: Mallory's abort is ignored (``E_APPROVER_NOT_ALLOWED``), the gated action
  runs once.
- ``check-*``: before each merge, ``plangate check --as alice`` (``--as bob`` for
  ``pr-abort-author``) is recorded; after the merge the controller's decision must agree with
  it (``start`` predicted iff a new start commit followed the merge).

- ``audit-*``: ``plangate audit --json`` on a fresh clone must reach the controller's verdict on
  each merged-branch withdrawal: a ``decisions`` entry (``reject`` / ``abort-request``) naming
  the withdrawer, as it lists for a withdrawal made on the branch itself; and for the paused
  runs (``pr-abort``, ``pr-abort-author``) the run ends ``abort`` (not an open
  ``await-approval``). ``audit-mm-reject``: the audit lists Bob's rejection as a decision (it
  reports Mallory's merge as ``withdraw-not-allowed`` and nothing else).
- ``record-*``: the controller commits its ``plangate: abort`` for the paused runs it treats as
  aborted (as it does for an abort committed on the branch, with ``Aborted-By:``), so that the
  branch's last word on the plan is not the merge's ``status: approved``.

Control: ``ctl`` (gated; Alice approves the plan and the gate) runs both actions once; the
audit lists Mallory's ignored abort (``note-abort``) as ``withdraw-not-allowed``.

Results: every run-side defence held (nothing ran after a merged-branch withdrawal; Mallory's
abort was ignored; check agreed). Broke (strict xfails): the controller treats
``pr-reject``/``pr-abort``/``pr-abort-author`` as rejected/aborted (``plangate status``: "set
status aborted on a merged branch") but commits nothing for them: the branch ends at
``status: approved``, and a fresh clone's audit lists none of the three withdrawals under
``decisions`` and reports the paused runs as still ``await-approval``. ``mm-reject`` held on
the run side (the controller: "bob set status rejected on a merged branch"; Alice's approval
``E_ILLEGAL_TRANSITION``), but the audit has no decision for Bob's rejection and no
``illegal`` finding for Alice's later approval (strict xfail).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, MALLORY, Lab, plan_text
from test_round2_execution_kit import shared

GATED = (
    plan_text("{tag}")
    + """\
  - id: 2
    tool: rec
    why: "after a second look"
    requires_approval: true
    params:
      tag: "{tag}-gated"
"""
)
PR = {"pr-reject": (BOB, ALICE), "pr-abort": (BOB, ALICE), "pr-abort-author": (AGENT, BOB)}
BROKEN: dict[str, object] = {}
CHECK_BROKEN: dict[str, object] = {}
MM_FOUND = [
    pytest.mark.xfail(
        strict=True,
        raises=AssertionError,
        reason="round 14: a rejection made on a merged branch and merged by a non-approver is "
        "honoured by the controller but absent from the fresh-clone audit",
    )
]
AUDIT_FOUND = {
    vid: pytest.mark.xfail(
        strict=True,
        raises=AssertionError,
        reason="round 14: a withdrawal made on a merged branch is honoured by the controller "
        "but absent from the fresh-clone audit (no decision, the paused run still open)",
    )
    for vid in PR
}
RECORD_FOUND = {
    vid: pytest.mark.xfail(
        strict=True,
        raises=AssertionError,
        reason="round 14: the controller treats a paused run aborted on a merged branch as "
        "aborted but never commits its abort: the branch still says approved",
    )
    for vid in ("pr-abort", "pr-abort-author")
}
# round 14: every FOUND variant broke (strict xfails); fixed since: a merged branch's
# withdrawal makes an unacted approval lapse, the controller commits the abort, and the
# audit hears it (Lifecycle.apply_side_withdrawals)
MM_BROKEN: list[pytest.MarkDecorator] = []
AUDIT_BROKEN: dict[str, pytest.MarkDecorator] = {}
RECORD_BROKEN: dict[str, pytest.MarkDecorator] = {}


def _gated(tag: str) -> str:
    return GATED.replace("{tag}", tag)


def _check(lab: Lab, branch: str, email: str) -> str:
    result = lab.cli(
        "check", "--config", str(lab.config), "--base", "main", "--head", branch,
        "--as", email, "--format", "json", cwd=lab.repo,
    )  # fmt: skip
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    return result.stdout


def _build(root: Path) -> Lab:
    lab = Lab(root)
    lab.write("pr-reject", plan_text("pr-reject"))
    lab.write("mm-reject", plan_text("mm-reject"))
    for slug in ("pr-abort", "pr-abort-author", "note-abort", "ctl"):
        lab.write(slug, _gated(slug))
    lab.commit("agent adds plans", AGENT)
    lab.run()  # freeze
    for slug in ("pr-abort", "pr-abort-author", "note-abort", "ctl"):
        lab.approve(slug, ALICE)
    lab.run()  # first actions run, gates pause
    states = {s: lab.plan(s)["plan"]["status"] for s in PR} | {
        "note-abort": lab.plan("note-abort")["plan"]["status"]
    }
    (root / "before.json").write_text(json.dumps(states))
    checks, starts = {}, {}
    for slug, (withdrawer, merger) in PR.items():
        lab.git("checkout", "-q", "-b", slug, "main")
        lab.set_status(slug, "rejected" if slug == "pr-reject" else "aborted")
        lab.commit(f"withdraw {slug}", withdrawer)
        lab.set_status(slug, "approved")
        lab.commit(f"approve {slug}", AGENT)
        lab.git("checkout", "-q", "main")
        checks[slug] = _check(lab, slug, merger[1])
        starts[slug] = len([s for s in lab.subjects(slug) if s.startswith("plangate: start")])
        lab.git("merge", "-q", "--no-ff", "--no-edit", slug, who=merger)
    lab.git("checkout", "-q", "-b", "mm-reject", "main")
    lab.set_status("mm-reject", "rejected")
    lab.commit("bob rejects mm-reject", BOB)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "--no-edit", "mm-reject", who=MALLORY)
    (lab.repo / "plans/note-abort/NOTES.md").write_text("my two cents\n")
    lab.commit("mallory notes", MALLORY)
    lab.set_status("note-abort", "aborted")
    lab.commit("mallory aborts", MALLORY)
    lab.run()
    lab.approve("ctl", ALICE)
    lab.approve("note-abort", ALICE)
    lab.approve("mm-reject", ALICE)
    lab.run()
    lab.run()  # a second pass: time for any outcome the controller would commit
    clone = root / "clone"
    lab.git("clone", "-q", str(lab.repo), str(clone))
    res = lab.cli("audit", "--json", cwd=clone)
    assert "Traceback" not in res.stderr, res.stderr[-2000:]
    (root / "audit.json").write_text(res.stdout)
    (root / "checks.json").write_text(json.dumps(checks))
    (root / "starts.json").write_text(json.dumps(starts))
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r14-sidewithdraw", _build)


def test_the_setup_paused_the_gates(lab: Lab) -> None:
    before = json.loads((lab.root / "before.json").read_text())
    assert before == {
        "pr-reject": "pending_approval",
        "pr-abort": "awaiting_approval",
        "pr-abort-author": "awaiting_approval",
        "note-abort": "awaiting_approval",
    }, before


def test_control_runs_both_actions_once(lab: Lab) -> None:
    assert len(lab.calls("ctl")) == 1 and len(lab.calls("ctl-gated")) == 1, lab.codes("ctl")


@pytest.mark.parametrize("vid", [pytest.param(v, id=v, marks=BROKEN.get(v, [])) for v in PR])
def test_a_withdrawal_inside_a_merged_branch_wins(lab: Lab, vid: str) -> None:
    ran = lab.calls(vid) if vid == "pr-reject" else lab.calls(f"{vid}-gated")
    assert ran == [], lab.codes(vid)


def test_a_note_writer_cannot_abort_an_approved_run(lab: Lab) -> None:
    assert len(lab.calls("note-abort-gated")) == 1, lab.codes("note-abort")


@pytest.mark.parametrize(
    "vid", [pytest.param(v, id=f"check-{v}", marks=CHECK_BROKEN.get(v, [])) for v in PR]
)
def test_check_predicted_what_the_controller_did(lab: Lab, vid: str) -> None:
    out = json.loads((lab.root / "checks.json").read_text())[vid]
    before = json.loads((lab.root / "starts.json").read_text())[vid]
    row = next(r for r in json.loads(out)["plans"] if r["plan"] == f"plans/{vid}")
    after = len([s for s in lab.subjects(vid) if s.startswith("plangate: start")])
    assert (row["outcome"] == "start") == (after > before), (row, lab.codes(vid))


def _audit(lab: Lab) -> dict:
    return dict(json.loads((lab.root / "audit.json").read_text()))


def test_audit_flags_the_ignored_abort(lab: Lab) -> None:
    findings = _audit(lab).get("findings", [])
    assert any(
        f["plan"] == "plans/note-abort" and f["kind"] == "withdraw-not-allowed" for f in findings
    ), findings


@pytest.mark.parametrize(
    "vid", [pytest.param(v, id=f"audit-{v}", marks=AUDIT_BROKEN.get(v, [])) for v in PR]
)
def test_audit_reaches_the_controllers_withdrawal(lab: Lab, vid: str) -> None:
    audit = _audit(lab)
    who = PR[vid][0][1]
    kind = "reject" if vid == "pr-reject" else "abort-request"
    decisions = [
        d for d in audit.get("decisions", []) if d["plan"] == f"plans/{vid}" and d["by"] == who
    ]
    assert [d["kind"] for d in decisions] == [kind], (audit.get("decisions"), lab.codes(vid))
    if vid != "pr-reject":
        runs = [e for e in audit["executions"] if e["plan"] == f"plans/{vid}"]
        assert runs and runs[-1]["outcome"] == "abort", runs


@pytest.mark.parametrize(
    "vid",
    [
        pytest.param(v, id=f"record-{v}", marks=RECORD_BROKEN.get(v, []))
        for v in ("pr-abort", "pr-abort-author")
    ],
)
def test_the_controller_records_the_abort(lab: Lab, vid: str) -> None:
    assert lab.subjects(vid)[0] == f"plangate: abort plans/{vid}", (
        lab.subjects(vid),
        lab.codes(vid),
    )


def test_a_rejection_merged_by_mallory_counts_as_bobs(lab: Lab) -> None:
    assert lab.calls("mm-reject") == [], lab.codes("mm-reject")


@pytest.mark.parametrize("vid", [pytest.param("mm-reject", id="audit-mm-reject", marks=MM_BROKEN)])
def test_audit_lists_the_merged_rejection(lab: Lab, vid: str) -> None:
    decisions = [d for d in _audit(lab).get("decisions", []) if d["plan"] == f"plans/{vid}"]
    assert [(d["kind"], d["by"]) for d in decisions] == [("reject", BOB[1])], _audit(lab)
