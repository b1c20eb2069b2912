"""Round 24, an approver's rejection inside a merged branch that the merge result hides.

docs/approvals.md: "A rejection or abort inside a merged branch (by someone entitled to
withdraw the version it was made for) wins whatever the merge resolves the status to, in any
order of commits". Config: the bench's. The agent writes ``plans/rj-<vid>``; the controller
freezes it; a second later, in ONE push (no controller pass in between):

- ``ours``: Bob commits ``status: rejected`` on a branch; the agent merges it ``-s ours
  --no-ff`` (main keeps ``pending_approval``); Alice approves on main.
- ``revert``: Bob's rejection branch is merged ``--no-ff`` by the agent, then the agent
  ``git revert -m 1`` s the merge (back to ``pending_approval``); Alice approves.
- ``nested``: Bob's rejection branch is merged ``-s ours`` into a second branch, which the
  agent merges ``--no-ff`` into main (two levels deep); Alice approves.
- ``after``: Alice approves on main first; then the agent merges Bob's rejection branch
  ``-s ours`` (the rejection after the approval, before the controller acted).
- ``lib-ours``: the agent's parent ``plans/rj-lib-ours`` pins ``plans/rj-lib-ours-lib``
  (``pending_approval``); Bob rejects the library on a branch; the agent merges it ``-s
  ours``; Alice approves the parent (``rec`` must not run the parent nor the library).
- ``theirs``: Bob rejects on a branch; the agent commits ``approved`` on the same branch
  after it; Alice merges it (her merge is the request) (control: round 14's ``pr-reject``).

Asserted: ``rec`` never runs, the plan is never started.

``check-*``: a pull request branch ``pr-<vid>`` merges Bob's rejection branch (``ck-ours``:
``-s ours``; ``ck-revert``: ``--no-ff`` then ``git revert -m 1``) and then sets ``approved``
(the agent). ``plangate check --as alice@example.com`` is recorded before Alice merges it.
Asserted: check does not predict ``start``; the controller does not start it.

``gate-ours``: a gated plan approved by Alice runs action 1 and pauses; Bob commits
``aborted`` on a branch; the agent merges it ``-s ours``; Carol approves the gate on main.
Asserted: the gated action never runs; the fresh clone's audit lists Bob's
``abort-request`` and ends the run ``abort``.

``mal-fp`` / ``mal-ours``: Mallory (no approver, no author) commits ``rejected`` on main
(``mal-fp``, control) or on a branch the agent merges ``-s ours`` (``mal-ours``, then Alice
approves). Asserted: ``mal-ours`` runs once (her rejection is ignored); the fresh clone's
audit flags each ``withdraw-not-allowed`` ("flagged withdraw-not-allowed by plangate audit").

``cp-*``: after all that, the agent copies ``rj-ours``/``rj-nested``/``rj-after`` (same
hashed content, ``pending_approval``) to ``plans/cp-<vid>``; Alice approves each copy.
Asserted: refused ``E_VERSION_WITHDRAWN`` (round 23: a withdrawn version stays withdrawn
wherever it is), nothing runs.

At the end the controller's history index (``<state_dir>/index.sqlite``) is deleted and
one more pass made (rebuilt from history): every assertion above is made after it.

``audit``: a fresh clone's ``plangate audit --json`` lists Bob's rejection under
``decisions`` (``kind: reject``, ``by: bob@ops.example.com``) for each ``rj-<vid>`` and
``ck-*`` plan, and no execution of any of them.

Results: the controller held every variant (nothing ran; ``plangate status`` names "bob@ops...
set status rejected on a merged branch"; ``gate-ours`` ends with the controller's ``plangate:
abort`` carrying ``Aborted-By: bob@ops.example.com``); ``check`` held. The fresh-clone audit
BROKE (strict xfails) where the merge that brings Bob's withdrawal leaves the plan's file as
it was on main (``-s ours``: ``ours``, ``nested``, ``after``, ``lib-ours``, ``gate-ours``
decision): ``decisions`` has no entry for Bob's rejection or abort request, though the
controller acted on it; for ``revert`` it lists ``reject`` by the agent (the merger) at the
merge commit, not Bob. ``theirs``, ``ck-ours`` and ``ck-revert`` (the merge also changes the
file) list Bob. ``cp-*`` held. Same root, BROKE: ``mal-ours``'s rejection is not flagged
``withdraw-not-allowed`` (``mal-fp``'s is); the controller ignored it and ran the plan once.

Fixed (2026-12-06, round 120 merged-rejection-charged-to-merger, fix122c): ``revert``'s audit
lists Bob's rejection at his own commit, not the agent's merge: a rejection a merged commit
made is that commit's (its strict xfail, "accepted", would now pass).
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, CAROL, MALLORY, Lab, plan_text
from test_round2_execution_kit import shared

VIDS = ["ours", "revert", "nested", "after", "theirs", "lib-ours"]
CHECK = ["ck-ours", "ck-revert"]
GATE = "gate-ours"
COPIES = ["ours", "nested", "after"]
MALLORY_VIDS = ["mal-fp", "mal-ours"]


def _reject_branch(lab: Lab, vid: str, base: str = "main") -> str:
    branch = f"rj-{vid}"
    lab.git("checkout", "-q", "-b", branch, base)
    lab.set_status(f"rj-{vid}", "rejected")
    lab.commit(f"bob rejects {vid}", BOB)
    lab.git("checkout", "-q", "main")
    return branch


def _build(root: Path) -> Lab:
    lab = Lab(root)
    g = lab.git
    for v in [*VIDS, *CHECK, *MALLORY_VIDS]:
        if v != "lib-ours":
            lab.write(f"rj-{v}", plan_text(f"rj-{v}"))
    lab.write(
        f"rj-{GATE}",
        plan_text(f"rj-{GATE}")
        + "  - id: 2\n    tool: rec\n    why: gated\n    requires_approval: true\n"
        + f'    params: {{tag: "rj-{GATE}-2"}}\n',
    )
    lab.write("rj-lib-ours-lib", plan_text("rj-lib-ours-lib"))
    lab.commit("agent adds plans", AGENT)
    digest = lab.cli(
        "hash", "--config", str(lab.config), "plans/rj-lib-ours-lib", cwd=lab.repo
    ).stdout.split()[-1]
    lab.write(
        "rj-lib-ours",
        'plan:\n  name: "rj-lib-ours"\n  task: "parent"\n  status: pending_approval\n'
        "available_tools:\n  - name: rec\n"
        'actions:\n  - id: 1\n    tool: rec\n    why: parent\n    params: {tag: "rj-lib-ours"}\n'
        f'  - id: 2\n    plan: {{path: plans/rj-lib-ours-lib, hash: "{digest}"}}\n    why: lib\n',
    )
    lab.commit("agent adds a parent", AGENT)
    lab.run()  # freeze
    time.sleep(1.05)
    lab.approve(f"rj-{GATE}", ALICE)
    lab.run()  # action 1, pause at the gate
    time.sleep(1.05)
    g("checkout", "-q", "-b", f"rj-{GATE}", "main")
    lab.set_status(f"rj-{GATE}", "aborted")
    lab.commit("bob aborts the paused plan", BOB)
    g("checkout", "-q", "main")
    g("merge", "-q", "-s", "ours", "--no-ff", "-m", "merge gate-ours", f"rj-{GATE}", who=AGENT)
    lab.approve(f"rj-{GATE}", CAROL)
    # ours
    b = _reject_branch(lab, "ours")
    g("merge", "-q", "-s", "ours", "--no-ff", "-m", "merge ours", b, who=AGENT)
    lab.approve("rj-ours", ALICE)
    # revert
    b = _reject_branch(lab, "revert")
    g("merge", "-q", "--no-ff", "-m", "merge revert", b, who=AGENT)
    g("revert", "-m", "1", "--no-edit", "HEAD", who=AGENT)
    lab.approve("rj-revert", ALICE)
    # nested
    b = _reject_branch(lab, "nested")
    g("checkout", "-q", "-b", "outer-nested", "main")
    g("merge", "-q", "-s", "ours", "--no-ff", "-m", "inner merge", b, who=AGENT)
    lab.write("rj-nested", "agent: tidy\n", filename="../../OTHER.md")
    lab.commit("agent other work", AGENT)
    g("checkout", "-q", "main")
    g("merge", "-q", "--no-ff", "-m", "merge outer", "outer-nested", who=AGENT)
    lab.approve("rj-nested", ALICE)
    # after
    b = _reject_branch(lab, "after")
    lab.approve("rj-after", ALICE)
    g("merge", "-q", "-s", "ours", "--no-ff", "-m", "merge after", b, who=AGENT)
    # lib-ours
    g("checkout", "-q", "-b", "rj-lib-ours-b", "main")
    lab.set_status("rj-lib-ours-lib", "rejected")
    lab.commit("bob rejects the library", BOB)
    g("checkout", "-q", "main")
    g("merge", "-q", "-s", "ours", "--no-ff", "-m", "merge lib-ours", "rj-lib-ours-b", who=AGENT)
    lab.approve("rj-lib-ours", ALICE)
    # mal-fp (control) and mal-ours: Mallory (no approver, no author) rejects
    lab.set_status("rj-mal-fp", "rejected")
    lab.commit("mallory rejects mal-fp", MALLORY)
    g("checkout", "-q", "-b", "rj-mal-ours-b", "main")
    lab.set_status("rj-mal-ours", "rejected")
    lab.commit("mallory rejects mal-ours", MALLORY)
    g("checkout", "-q", "main")
    g("merge", "-q", "-s", "ours", "--no-ff", "-m", "merge mal-ours", "rj-mal-ours-b", who=AGENT)
    lab.approve("rj-mal-ours", ALICE)
    # theirs (control)
    g("checkout", "-q", "-b", "rj-theirs", "main")
    lab.set_status("rj-theirs", "rejected")
    lab.commit("bob rejects theirs", BOB)
    lab.set_status("rj-theirs", "approved")
    lab.commit("agent approves theirs", AGENT)
    g("checkout", "-q", "main")
    g("merge", "-q", "--no-ff", "-m", "alice merges theirs", "rj-theirs", who=ALICE)
    lab.run()
    lab.run()
    for v in CHECK:
        b = _reject_branch(lab, v)
        g("checkout", "-q", "-b", f"pr-{v}", "main")
        if v == "ck-ours":
            g("merge", "-q", "-s", "ours", "--no-ff", "-m", "merge reject", b, who=AGENT)
        else:
            g("merge", "-q", "--no-ff", "-m", "merge reject", b, who=AGENT)
            g("revert", "-m", "1", "--no-edit", "HEAD", who=AGENT)
        lab.set_status(f"rj-{v}", "approved")
        lab.commit(f"agent approves {v}", AGENT)
        g("checkout", "-q", "main")
        out = lab.cli(
            "check",
            "--config",
            str(lab.config),
            "--base",
            "main",
            "--head",
            f"pr-{v}",
            "--as",
            ALICE[1],
            "--format",
            "json",
            cwd=lab.repo,
        )
        (root / f"check-{v}.json").write_text(out.stdout)
        (root / f"check-{v}.err").write_text(out.stderr)
        g("merge", "-q", "--no-ff", "-m", f"alice merges {v}", f"pr-{v}", who=ALICE)
        lab.run()
    for v in COPIES:
        text = lab.git("show", f"HEAD:plans/rj-{v}/PLAN.yml")
        lab.write(f"cp-{v}", text.replace("status: approved", "status: pending_approval"))
    lab.commit("agent copies the hidden-rejected versions", AGENT)
    lab.run()  # freeze the copies
    time.sleep(1.05)
    for v in COPIES:
        lab.approve(f"cp-{v}", ALICE)
    lab.run()
    for index in lab.state.glob("index.sqlite*"):
        index.unlink()  # "Deleting the file is always safe": rebuilt from history
    lab.run()
    clone = root / "clone"
    shutil.rmtree(clone, ignore_errors=True)
    g("clone", "-q", str(lab.repo), str(clone))
    (root / "audit.json").write_text(lab.cli("audit", "--json", cwd=clone).stdout)
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r24-hiddenreject", _build)


BROKEN: dict[str, pytest.MarkDecorator] = {}


def _audit_broken(what: str) -> pytest.MarkDecorator:
    return pytest.mark.xfail(
        strict=True,
        raises=AssertionError,
        reason=f"round 24: {what}; the controller acts on Bob's withdrawal (plangate status: "
        "'bob@ops.example.com set status rejected on a merged branch'), the fresh-clone audit "
        "does not list it under decisions",
    )


#: What round 24 found. Fixed: the audit reads the branches of merges that change nothing
#: under the plans folder (-s ours) as the controller does. Accepted (docs/threat-model.md,
#: "Accepted limits"): a withdrawal a merge brings onto the first parent is attributed to
#: the merger, an author, not to the side commit's author (the verdict is the same).
FOUND = {
    "ours": _audit_broken("a rejection merged -s ours on the branch"),
    "nested": _audit_broken("a rejection merged -s ours two merges deep"),
    "after": _audit_broken("a rejection merged -s ours after an approval"),
    "lib-ours": _audit_broken("a rejection of a pinned library merged -s ours"),
}
#: ``revert`` was a strict xfail here ("a rejection merged onto the first parent (then
#: reverted) is attributed by the audit to the merger"); fixed by round 120's rule (fix122c):
#: a merged commit's rejection is its maker's, so the audit lists Bob's.
ABROKEN: dict[str, pytest.MarkDecorator] = {}


@pytest.mark.parametrize(
    "vid", [pytest.param(v, id=v, marks=[BROKEN[v]] if v in BROKEN else []) for v in VIDS]
)
def test_a_hidden_rejection_still_wins(lab: Lab, vid: str) -> None:
    slug = f"rj-{vid}"
    assert lab.calls(slug) == [], lab.codes(slug)
    assert lab.calls(f"{slug}-lib") == [], lab.codes(slug)
    assert not lab.started(slug), lab.codes(slug)


@pytest.mark.parametrize("vid", CHECK)
def test_check_and_the_controller_do_not_start_it(lab: Lab, vid: str) -> None:
    slug = f"rj-{vid}"
    rows = json.loads((lab.root / f"check-{vid}.json").read_text())
    plans = rows.get("plans", rows) if isinstance(rows, dict) else rows
    row = next(r for r in plans if r.get("plan") == f"plans/{slug}")
    assert row.get("outcome") != "start", json.dumps(row)[:3000]
    assert lab.calls(slug) == [], lab.codes(slug)
    assert not lab.started(slug), lab.codes(slug)


@pytest.mark.parametrize(
    "vid",
    [pytest.param(v, id=v, marks=[ABROKEN[v]] if v in ABROKEN else []) for v in [*VIDS, *CHECK]],
)
def test_the_fresh_clone_audit_lists_bobs_rejection(lab: Lab, vid: str) -> None:
    report = json.loads((lab.root / "audit.json").read_text())
    rejected = f"plans/rj-{vid}-lib" if vid == "lib-ours" else f"plans/rj-{vid}"  # Bob's target
    found = [
        d
        for d in report.get("decisions", [])
        if d.get("plan") == rejected and d.get("kind") == "reject"
    ]
    assert any(d.get("by") == BOB[1] for d in found), json.dumps(report.get("decisions"))[:3000]
    assert not [e for e in report.get("executions", []) if e.get("plan") == f"plans/rj-{vid}"]


def test_a_hidden_abort_stops_the_paused_plan(lab: Lab) -> None:
    slug = f"rj-{GATE}"
    assert len(lab.calls(slug)) == 1, lab.codes(slug)
    assert lab.calls(f"{slug}-2") == [], lab.codes(slug)


@pytest.mark.parametrize(
    "what",
    [
        "decision",  # round 24, fixed: an abort of a paused plan merged -s ours was not listed
        "outcome",
    ],
)
def test_the_fresh_clone_audit_shows_the_hidden_abort(lab: Lab, what: str) -> None:
    report = json.loads((lab.root / "audit.json").read_text())
    plan = f"plans/rj-{GATE}"
    if what == "decision":
        found = [d for d in report.get("decisions", []) if d.get("plan") == plan]
        assert any(d.get("kind") == "abort-request" and d.get("by") == BOB[1] for d in found), (
            json.dumps(report.get("decisions"))[:3000]
        )
    else:
        rows = [e for e in report.get("executions", []) if e.get("plan") == plan]
        assert rows and all(e.get("approval_valid") for e in rows), json.dumps(rows)[:3000]
        assert rows[-1].get("outcome") == "abort", json.dumps(rows)[:3000]


@pytest.mark.parametrize("vid", COPIES)
def test_a_copy_of_a_hidden_rejected_version_is_withdrawn(lab: Lab, vid: str) -> None:
    slug = f"cp-{vid}"
    assert lab.plan(slug).get("frozen"), lab.codes(slug)
    assert lab.calls(f"rj-{vid}") == [], lab.codes(slug)
    assert not lab.started(slug), lab.codes(slug)
    assert lab.refusal(slug) == "E_VERSION_WITHDRAWN", lab.codes(slug)


def test_mallorys_hidden_rejection_is_ignored(lab: Lab) -> None:
    assert len(lab.calls("rj-mal-ours")) == 1, lab.codes("rj-mal-ours")


@pytest.mark.parametrize(
    "vid",
    [
        "mal-fp",
        "mal-ours",  # round 24, fixed: Mallory's rejection merged -s ours was not flagged
    ],
)
def test_the_fresh_clone_audit_flags_mallorys_rejection(lab: Lab, vid: str) -> None:
    report = json.loads((lab.root / "audit.json").read_text())
    found = [
        f
        for f in report.get("findings", [])
        if f.get("plan") == f"plans/rj-{vid}" and f.get("kind") == "withdraw-not-allowed"
    ]
    assert found, json.dumps(report.get("findings"))[:3000]
