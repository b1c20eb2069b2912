"""Round 8, who may make a plan run: swapping which history is first-parent.

A fast-forward to a merge whose *first* parent is a side branch makes that side branch the
watched branch's first-parent history, and puts the commits that were on main behind the
merge's second parent. No commit is erased (the tip the controller last saw stays an
ancestor), so no rewrite is detected.

Config: approvers Alice and ``*@ops.example.com``.

Attacks:

- ``swap-reject-unseen``: Alice approves on her branch ``alice`` (not merged yet); on main
  Bob rejects. Before the controller's pass, the agent checks out ``alice``, merges main into
  it (resolving the status line to ``approved``) and fast-forwards main to that merge: first
  parents are now Alice's approval then the agent's merge; Bob's rejection is only behind the
  second parent. A rejection is final in any order of commits: it must never run.
- ``swap-reject-seen``: the same after the controller's pass saw Bob's rejection.
- ``swap-edit``: Alice approves version A on main; before the pass the agent's branch (which
  changed the content to B and froze B itself with ``plangate freeze``) merges main and main
  fast-forwards to it: the content is B, Alice's approval of A is behind the second parent.
  B was approved by nobody: it must never run.

``plangate check --base main --head <swap> --as agent@example.com`` before each
fast-forward must agree with the controller (``start`` predicted iff started).

- ``swap-direct``: ``swap-reject-unseen`` without Alice's second approval: Alice approves on
  her branch, Bob rejects on main, the agent merges main into her branch and main
  fast-forwards to it; one pass.

Then Alice, who sees ``swap-reject-unseen`` back at ``pending_approval`` in ``plangate
status``, approves it on main.

Control: ``plain`` runs once (approved and run before the swaps; a fresh clone's audit must
still show its run). With its run hidden behind a second parent, the agent sets it
``pending_approval`` and Alice approves it again: it must still have run once.

Results: ``swap-direct`` broke (strict xfail): the rejected plan starts on Alice's branch
approval at the very next pass, a fresh clone's audit calls it valid, and ``check`` predicted
``none``. ``swap-reject-unseen`` broke (strict xfail): the controller never sees Bob's
rejection (still reachable, behind a second parent), status shows ``pending_approval``,
Alice's approval runs the rejected plan and a fresh clone's audit calls the run valid. The
audit of the control broke too: after the swap it lists no execution of ``plain`` (its start
and complete commits are behind the second parent) and blames the agent's merge for
``completed``. ``swap-reject-seen`` (the round-7 seen-withdrawal record) and ``swap-edit``
(the agent's merge is the request: E_APPROVER_NOT_ALLOWED) held; ``check`` agreed.

Fixed (2026-11-29, round 63): the first three swaps hid commits the controller had not read
(Bob's rejection, Alice's approval of A) behind second parents; the controller now holds on
such a line (``E_HISTORY_REWRITTEN``, docs/approvals.md "The first-parent line the controller
follows"). The lab follows the remedy (main back to the tip read, each update merged again
by its maker), so ``plain``'s start and complete stay on the first-parent line and the
fresh-clone audit lists its run (the strict xfail came off). ``swap-direct``'s branch was
forked AT the tip read: the same parents as an honest merge, followed as before (held by the
side-withdrawal rule).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab, plan_text
from test_round2_approval_authors import shared_lab

ATTACKS = ["swap-reject-unseen", "swap-reject-seen", "swap-edit", "swap-direct"]
#: Fixed: a withdrawal on a merged branch still wins (Lifecycle.apply_side_withdrawals), for
#: the controller, `check` and the audit alike.
BROKEN: dict[str, object] = {}
CHECK_BROKEN: dict[str, object] = {}


def _check(lab: Lab, head: str) -> dict[str, str]:
    result = lab.cli(
        "check",
        "--config",
        str(lab.config),
        "--base",
        "main",
        "--head",
        head,
        "--as",
        AGENT[1],
        "--format",
        "json",
        cwd=lab.repo,
    )
    try:
        report = json.loads(result.stdout)
    except ValueError:
        return {"raw": result.stdout + result.stderr}
    return {row["plan"]: row["outcome"] for row in report.get("plans", [])}


def _merge_main_into(lab: Lab, branch: str, slug: str) -> None:
    """On ``branch``, merge main (conflicts on the status line resolved to ``approved``)."""
    lab.git("checkout", "-q", branch)
    lab.git("merge", "-q", "--no-edit", "main", who=AGENT, check=False)
    path = lab.repo / "plans" / slug / "PLAN.yml"
    text = path.read_text()
    if "<<<<<<<" in text:
        out, skip = [], None
        for line in text.splitlines(keepends=True):
            if line.startswith("<<<<<<<"):
                skip = False
                continue
            if line.startswith("======="):
                skip = True
                continue
            if line.startswith(">>>>>>>"):
                skip = None
                continue
            if skip:
                continue
            out.append(line)
        path.write_text("".join(out))
        lab.set_status(slug, "approved")
        lab.git("add", "-A")
        lab.git("commit", "-q", "--no-edit", who=AGENT)


def _build(root: Path) -> Lab:
    lab = Lab(root)
    for vid in [*ATTACKS, "plain"]:
        lab.write(vid, plan_text(vid))
    lab.commit("agent adds plans", AGENT)
    lab.run()  # freeze
    base = lab.head()
    # Alice's approvals on her side branch
    lab.git("checkout", "-q", "-b", "alice")
    lab.approve("swap-reject-unseen", ALICE)
    lab.git("checkout", "-q", "-b", "alice-seen", base)
    lab.approve("swap-reject-seen", ALICE)
    # the agent's B version of swap-edit, frozen by the agent
    lab.git("checkout", "-q", "-b", "agent-b", base)
    lab.write("swap-edit", plan_text("swap-edit", params='extra: "b"\n'))
    frz = subprocess.run(
        [
            sys.executable,
            "-m",
            "controller",
            "freeze",
            "--config",
            str(lab.config),
            "plans/swap-edit/PLAN.yml",
        ],
        cwd=lab.repo,
        env=lab.env(AGENT),
        capture_output=True,
        text=True,
        check=False,
    )
    assert "frozen:" in lab.read("swap-edit"), frz.stderr
    lab.commit("agent: version B", AGENT)
    lab.git("checkout", "-q", "main")

    # Bob rejects swap-reject-seen on main; the controller sees it
    lab.set_status("swap-reject-seen", "rejected")
    lab.commit("bob rejects swap-reject-seen", BOB)
    lab.approve("plain", ALICE)
    lab.run()
    read = lab.head()
    seen = lab.plan("swap-reject-seen")["plan"]["status"]
    # Bob rejects swap-reject-unseen on main; Alice approves swap-edit (A) on main; plain
    lab.set_status("swap-reject-unseen", "rejected")
    merges = [(lab.commit("bob rejects swap-reject-unseen", BOB), BOB)]
    merges.append((lab.approve("swap-edit", ALICE), ALICE))
    predicted: dict[str, dict[str, str]] = {}
    for branch, slug in [
        ("alice", "swap-reject-unseen"),
        ("alice-seen", "swap-reject-seen"),
        ("agent-b", "swap-edit"),
    ]:
        _merge_main_into(lab, branch, slug)
        lab.git("checkout", "-q", "main")
        predicted[slug] = _check(lab, branch)
        lab.git("merge", "-q", "--ff-only", branch)
        merges.append((branch, AGENT))
    (lab.root / "facts.json").write_text(json.dumps({"seen": seen, "predicted": predicted}))
    lab.restore_line(read, merges)  # the swaps hid unread commits: held (round 63)
    lab.run()
    lab.run()
    facts = json.loads((lab.root / "facts.json").read_text())
    facts["started"] = {v: lab.started(v) for v in ATTACKS if v != "swap-direct"}
    (lab.root / "facts.json").write_text(json.dumps(facts))
    # Alice, seeing swap-reject-unseen back at pending_approval, approves it on main
    lab.approve("swap-reject-unseen", ALICE, message="alice approves swap-reject-unseen again")
    lab.run()
    # swap-direct: Alice approves on her branch, Bob rejects on main, one swap, one pass
    lab.git("checkout", "-q", "-b", "alice-direct")
    lab.approve("swap-direct", ALICE)
    lab.git("checkout", "-q", "main")
    lab.set_status("swap-direct", "rejected")
    lab.commit("bob rejects swap-direct", BOB)
    _merge_main_into(lab, "alice-direct", "swap-direct")
    lab.git("checkout", "-q", "main")
    facts = json.loads((lab.root / "facts.json").read_text())
    facts["predicted"]["swap-direct"] = _check(lab, "alice-direct")
    facts["started"]["swap-direct"] = None
    lab.git("merge", "-q", "--ff-only", "alice-direct")
    # plain (ran; its start and complete now behind a second parent): the agent sets it
    # pending_approval again and Alice approves: it must not run a second time
    lab.set_status("plain", "pending_approval")
    lab.commit("agent reopens plain", AGENT)
    lab.approve("plain", ALICE, message="alice approves plain again")
    lab.run()  # alice-direct was forked AT the tip read: followed (docs/threat-model.md)
    facts["started"]["swap-direct"] = lab.started("swap-direct")
    (lab.root / "facts.json").write_text(json.dumps(facts))
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared_lab(tmp_path_factory, "r8-swap", _build)


def test_the_control_runs_once(lab: Lab) -> None:
    assert len(lab.calls("plain")) == 1, lab.codes("plain")


def test_the_rejection_was_seen(lab: Lab) -> None:
    assert json.loads((lab.root / "facts.json").read_text())["seen"] == "rejected"


@pytest.mark.parametrize("vid", [pytest.param(v, id=v, marks=BROKEN.get(v, [])) for v in ATTACKS])
def test_a_swapped_first_parent_runs_nothing(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)
    assert not lab.started(vid), lab.codes(vid)


@pytest.mark.parametrize(
    "vid", [pytest.param(v, id=v, marks=CHECK_BROKEN.get(v, [])) for v in ATTACKS]
)
def test_check_predicts_what_the_controller_does(lab: Lab, vid: str) -> None:
    facts = json.loads((lab.root / "facts.json").read_text())
    predicted = facts["predicted"][vid]
    assert (predicted.get(f"plans/{vid}") == "start") == facts["started"][vid], (
        predicted,
        lab.codes(vid),
    )


def _audit(lab: Lab, tmp_path: Path) -> dict:
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(lab.repo), str(clone)], check=True)
    result = lab.cli("audit", "--json", cwd=clone)
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    return json.loads(result.stdout)


def test_a_fresh_clone_audit_still_sees_the_control_run(lab: Lab, tmp_path: Path) -> None:
    report = _audit(lab, tmp_path)
    ran = {e["plan"] for e in report["executions"] if e.get("approval_valid")}
    assert "plans/plain" in ran, report


@pytest.mark.parametrize("vid", [pytest.param(v, id=v, marks=BROKEN.get(v, [])) for v in ATTACKS])
def test_a_fresh_clone_audit_calls_no_attack_valid(lab: Lab, tmp_path: Path, vid: str) -> None:
    report = _audit(lab, tmp_path)
    valid = {e["plan"] for e in report["executions"] if e.get("approval_valid")}
    assert f"plans/{vid}" not in valid, report
