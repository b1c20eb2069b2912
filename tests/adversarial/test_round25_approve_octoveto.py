"""Round 25, who may make a plan run: a withdrawal hidden in a merged branch that the round-24
"quiet merge" fix may not read: an octopus merge's third parent, or a branch whose net change
of the plan's file is nothing (the withdrawal undone on the branch before a normal merge).

docs/approvals.md: "A rejection or abort inside a merged branch (by someone entitled to
withdraw the version it was made for) wins whatever the merge resolves the status to, in any
order of commits" and the audit lists it under ``decisions`` "also when the merge changed
nothing under the plans folder". Config: the bench's. The agent writes ``plans/ov-<vid>``;
the controller freezes it; a second later, in ONE push (no controller pass in between):

- ``oct-ours``: Bob commits ``status: rejected`` on branch b3; the agent has an unrelated
  branch b2; the agent octopus-merges ``git merge -s ours b2 b3`` (Bob's commit is parent 3);
  Alice approves on main.
- ``oct-after``: Alice approves on main first; then the same octopus ``-s ours`` merge.
- ``oct-revert``: a plain octopus merge of b2 and b3 (the rejection reaches main), then the
  agent ``git revert -m 1`` s it; Alice approves.
- ``netzero``: Bob rejects on a branch; the agent sets ``pending_approval`` again on the same
  branch; the agent merges it ``--no-ff`` (the merge brings no change of the file); Alice
  approves.
- ``netzero-revert``: as ``netzero`` with the agent's ``git revert`` of Bob's commit on the
  branch.
- ``oct-mal``: Mallory (no approver, no author) rejects on b3 merged as ``oct-ours``; Alice
  approves: Mallory's rejection is ignored, the plan runs once.

Asserted: ``rec`` never runs, the plan is never started (``oct-mal``: runs once).

``ck-oct``: a pull request branch octopus-merges (``-s ours``) an unrelated branch and Bob's
rejection branch, then the agent sets ``approved``; ``plangate check --as alice`` must not
predict ``start``; Alice merges; nothing runs.

``gate-oct``: a gated plan approved by Alice runs action 1 and pauses; Bob commits
``aborted`` on b3; the agent octopus-merges ``-s ours``; Carol approves the gate on main.
Asserted: the gated action never runs.

``audit``: a fresh clone's ``plangate audit --json`` lists Bob's withdrawal under
``decisions`` (``reject``/``abort-request`` by ``bob@ops.example.com``) for each variant where
the merge left the file as it was, lists no execution of the vetoed plans, and flags
Mallory's rejection ``withdraw-not-allowed``.

Results: all held (nothing vetoed ran or started; ``oct-mal`` ran once; check predicted
``none``; the gate's second action never ran; the audit listed Bob's withdrawals, for
``oct-revert`` by the merger as round 24's accepted limit says, and flagged Mallory).
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, CAROL, MALLORY, Lab, plan_text
from test_round2_execution_kit import shared

VIDS = ["oct-ours", "oct-after", "oct-revert", "netzero", "netzero-revert"]
CHECK = "ck-oct"
GATE = "gate-oct"
MAL = "oct-mal"


def _side(lab: Lab, name: str, base: str = "main") -> str:
    lab.git("checkout", "-q", "-b", name, base)
    (lab.repo / f"{name}.md").write_text(f"agent notes {name}\n")
    lab.commit(f"agent unrelated {name}", AGENT)
    lab.git("checkout", "-q", "main")
    return name


def _withdraw(lab: Lab, slug: str, status: str, who: tuple[str, str], base: str = "main") -> str:
    branch = f"w-{slug}"
    lab.git("checkout", "-q", "-b", branch, base)
    lab.set_status(slug, status)
    lab.commit(f"{who[0]} sets {status} on {slug}", who)
    lab.git("checkout", "-q", "main")
    return branch


def _octo_ours(lab: Lab, slug: str, who_w: tuple[str, str] = BOB, status: str = "rejected") -> None:
    b2 = _side(lab, f"b2-{slug}")
    b3 = _withdraw(lab, slug, status, who_w)
    lab.git("merge", "-q", "-s", "ours", "--no-ff", "-m", f"octopus {slug}", b2, b3, who=AGENT)
    assert len(lab.git("rev-list", "--parents", "-n", "1", "HEAD").split()) == 4


def _build(root: Path) -> Lab:
    lab = Lab(root)
    g = lab.git
    for v in [*VIDS, CHECK, MAL]:
        lab.write(f"ov-{v}", plan_text(f"ov-{v}"))
    lab.write(
        f"ov-{GATE}",
        plan_text(f"ov-{GATE}")
        + "  - id: 2\n    tool: rec\n    why: gated\n    requires_approval: true\n"
        + f'    params: {{tag: "ov-{GATE}-2"}}\n',
    )
    lab.commit("agent adds plans", AGENT)
    lab.run()  # freeze
    time.sleep(1.05)
    lab.approve(f"ov-{GATE}", ALICE)
    lab.run()  # action 1, pause at the gate
    time.sleep(1.05)
    _octo_ours(lab, f"ov-{GATE}", BOB, "aborted")
    lab.approve(f"ov-{GATE}", CAROL)
    # oct-ours
    _octo_ours(lab, "ov-oct-ours")
    lab.approve("ov-oct-ours", ALICE)
    # oct-after
    lab.approve("ov-oct-after", ALICE)
    _octo_ours(lab, "ov-oct-after")
    # oct-revert
    b2 = _side(lab, "b2-rev")
    b3 = _withdraw(lab, "ov-oct-revert", "rejected", BOB)
    g("merge", "-q", "--no-ff", "-m", "octopus revert", b2, b3, who=AGENT)
    g("revert", "-m", "1", "--no-edit", "HEAD", who=AGENT)
    lab.approve("ov-oct-revert", ALICE)
    # netzero: the branch undoes Bob's rejection before a plain merge
    b = _withdraw(lab, "ov-netzero", "rejected", BOB)
    g("checkout", "-q", b)
    lab.set_status("ov-netzero", "pending_approval")
    lab.commit("agent undoes the rejection on the branch", AGENT)
    g("checkout", "-q", "main")
    g("merge", "-q", "--no-ff", "-m", "merge netzero", b, who=AGENT)
    lab.approve("ov-netzero", ALICE)
    # netzero-revert
    b = _withdraw(lab, "ov-netzero-revert", "rejected", BOB)
    g("checkout", "-q", b)
    g("revert", "--no-edit", "HEAD", who=AGENT)
    g("checkout", "-q", "main")
    g("merge", "-q", "--no-ff", "-m", "merge netzero-revert", b, who=AGENT)
    lab.approve("ov-netzero-revert", ALICE)
    # Mallory (control: she may not withdraw)
    _octo_ours(lab, f"ov-{MAL}", MALLORY)
    lab.approve(f"ov-{MAL}", ALICE)
    lab.run()
    lab.run()
    # ck-oct: a pull request with the octopus inside
    b2 = _side(lab, "b2-ck")
    b3 = _withdraw(lab, f"ov-{CHECK}", "rejected", BOB)
    g("checkout", "-q", "-b", "pr-ck", "main")
    g("merge", "-q", "-s", "ours", "--no-ff", "-m", "octopus in pr", b2, b3, who=AGENT)
    lab.set_status(f"ov-{CHECK}", "approved")
    lab.commit("agent approves ck", AGENT)
    g("checkout", "-q", "main")
    out = lab.cli(
        "check",
        "--config",
        str(lab.config),
        "--base",
        "main",
        "--head",
        "pr-ck",
        "--as",
        ALICE[1],
        "--format",
        "json",
        cwd=lab.repo,
    )
    (root / "check.json").write_text(out.stdout)
    (root / "check.err").write_text(out.stderr)
    g("merge", "-q", "--no-ff", "-m", "alice merges ck", "pr-ck", who=ALICE)
    lab.run()
    for index in lab.state.glob("index.sqlite*"):
        index.unlink()
    lab.run()
    clone = root / "clone"
    shutil.rmtree(clone, ignore_errors=True)
    g("clone", "-q", str(lab.repo), str(clone))
    (root / "audit.json").write_text(lab.cli("audit", "--json", cwd=clone).stdout)
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r25-octoveto", _build)


BROKEN: dict[str, pytest.MarkDecorator] = {}
ABROKEN: dict[str, pytest.MarkDecorator] = {}


@pytest.mark.parametrize(
    "vid", [pytest.param(v, id=v, marks=[BROKEN[v]] if v in BROKEN else []) for v in VIDS]
)
def test_a_hidden_withdrawal_still_wins(lab: Lab, vid: str) -> None:
    slug = f"ov-{vid}"
    assert lab.calls(slug) == [], lab.codes(slug)
    assert not lab.started(slug), lab.codes(slug)


def test_mallorys_hidden_rejection_is_ignored(lab: Lab) -> None:
    slug = f"ov-{MAL}"
    assert len(lab.calls(slug)) == 1, lab.codes(slug)


def test_check_and_the_controller_do_not_start_it(lab: Lab) -> None:
    slug = f"ov-{CHECK}"
    rows = json.loads((lab.root / "check.json").read_text() or "{}")
    plans = rows.get("plans", rows) if isinstance(rows, dict) else rows
    row = next((r for r in plans if r.get("plan") == f"plans/{slug}"), {})
    assert row.get("outcome") != "start", json.dumps(row)[:3000]
    assert lab.calls(slug) == [], lab.codes(slug)
    assert not lab.started(slug), lab.codes(slug)


def test_a_hidden_abort_stops_the_paused_plan(lab: Lab) -> None:
    slug = f"ov-{GATE}"
    assert len(lab.calls(slug)) == 1, lab.codes(slug)
    assert lab.calls(f"{slug}-2") == [], lab.codes(slug)


AUDITED = ["oct-ours", "oct-after", "netzero", "netzero-revert", CHECK, GATE]


@pytest.mark.parametrize(
    "vid",
    [pytest.param(v, id=v, marks=[ABROKEN[v]] if v in ABROKEN else []) for v in AUDITED],
)
def test_the_fresh_clone_audit_lists_bobs_withdrawal(lab: Lab, vid: str) -> None:
    report = json.loads((lab.root / "audit.json").read_text())
    plan = f"plans/ov-{vid}"
    kind = "abort-request" if vid == GATE else "reject"
    found = [d for d in report.get("decisions", []) if d.get("plan") == plan]
    assert any(d.get("kind") == kind and d.get("by") == BOB[1] for d in found), json.dumps(
        report.get("decisions")
    )[:3000]
    if vid != GATE:
        assert not [e for e in report.get("executions", []) if e.get("plan") == plan]


def test_the_fresh_clone_audit_flags_mallory(lab: Lab) -> None:
    report = json.loads((lab.root / "audit.json").read_text())
    text = json.dumps(report)
    plan = f"plans/ov-{MAL}"
    flags = [f for f in report.get("flags", report.get("findings", [])) if plan in json.dumps(f)]
    assert any("withdraw-not-allowed" in json.dumps(f) for f in flags), text[:3000]
