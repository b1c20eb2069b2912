"""Round 36, who may withdraw, as ``plangate check`` and ``plangate approve --config`` see it
after round 35's producers rule (docs/approvals.md: a content's producers are the people in
*every* commit that made it; "someone who copies a plan ... leaves its author no right to
withdraw that version"; round 28: ``check`` and ``approve --config`` read history "with the
controller's withdraw rule").

Config: the bench's (approvers Alice and ``*@ops.example.com``; one approval). The agent adds
``plans/<vid>``; the controller freezes it. Then:

- ``copied``: Mallory (no approver) copies the folder byte for byte to ``plans/lib/<vid>-m``
  (a name no later pull request touches). The agent, no longer the only producer of that
  version, sets ``plans/<vid>`` ``rejected``: the controller ignores it
  (``E_APPROVER_NOT_ALLOWED``; the plan stays ``pending_approval``).
- ``ctl``: no copy; the agent rejects its plan: the controller counts it (``rejected``).
- ``gate-copied``: a gated plan (action 1 ``rec``, action 2 ``rec`` tagged ``<vid>-gated``
  with ``requires_approval``); Alice approves, action 1 runs, it pauses at the gate; Mallory
  copies its folder to ``plans/lib/gate-copied-m``; the agent sets it ``aborted``: ignored
  (it stays ``awaiting_approval``).
- ``gate-ctl``: the same without the copy: the agent's abort counts (``aborted``).
- ``gate-plain``: paused at the gate, nobody aborts (control of ``check``'s gate prediction).

Per variant, on a pull-request branch, Alice sets ``approved`` (the plan, or its gate):

- ``test_check_predicts_the_controller``: ``plangate check --base main --head pr --as
  alice@example.com --format json`` must predict what the controller then does when Alice
  merges (``start`` for ``copied``, no start for ``ctl``).
- ``test_controller``: after the merge, ``rec`` ran once for ``copied``, never for ``ctl``,
  and the fresh-clone ``plangate audit`` says the run's approval was valid.
- ``test_approve_config``: on ``main`` (a second plan built like it, ``<vid>-b``), Alice's
  ``plangate approve --config`` must commit the approval for ``copied`` (the controller would
  take it) and refuse for ``ctl`` (the plan is rejected).

Results: BROKE (strict xfails) ``check-copied`` and ``check-gate-copied``: ``check`` reads
only the histories of the plans the pull request touches, so it counts the agent's
withdrawal: it shows ``status: rejected`` / ``aborted`` and ``outcome: none`` ("no approval
is decided"), exit 0, while Alice's merge starts the plan (``rec`` runs) or opens the gate
(the gated action runs). The controller, the audit (the run valid, the withdrawal flagged
``withdraw-not-allowed``) and ``approve --config`` agree with each other; the ``ctl`` and
``gate-*`` controls held.
Fixed (the same session): a making found on a merged branch counts from the merge that
brought it in, in the order of the first-parent line (the live controller, a cold scan and
the audit judge a withdrawal by what was made before it); `plangate check` reads the whole
history when the plans it judges have a withdrawal in theirs (an author's right depends on
copies anywhere).

Changed (2026-12-06, round 119 fix122w; first tried as fix119w, reverted): ``author-
withdrawal-lost-to-another-copy``. Mallory's copy takes the agent's right away no more: who
may withdraw as an author reads the version's ORIGINATORS, the people in every commit that
made it afresh, and Mallory's copy, made on top of the agent's making, removes nobody. So
``copied`` ends ``rejected`` and ``gate-copied`` ``aborted`` as their controls do, nothing
runs, and ``approve --config`` refuses both. Four ids changed (``test_the_setup``,
``controller-copied``, ``controller-gate-copied``, ``approve-copied``): they asserted the
fail-open round 119 found, against SPEC §4 ("a rejection or an abort counts ... when its
commit is ... by an author of the plan"); this is no fail-closed assertion weakened, the
withdrawal now counts.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, MALLORY, Lab, identity, plan_text
from test_round2_execution_kit import shared

VIDS = ["copied", "ctl"]
_CHECK = pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="round 36: plangate check counts a withdrawal the controller ignores because a copy "
    "under another name took the author's producer right (predicts no start; the merge starts)",
)
FOUND: dict[str, pytest.MarkDecorator] = {}  # fixed (below)


GATES = ["gate-copied", "gate-ctl", "gate-plain"]
GATE = """\
  - id: 2
    tool: rec
    why: "after a second look"
    requires_approval: true
    params:
      tag: "{vid}-gated"
"""


def _build(root: Path) -> Lab:
    lab = Lab(root)
    for vid in VIDS:
        lab.write(vid, plan_text(vid))
        lab.write(f"{vid}-b", plan_text(f"{vid}-b"))
    for vid in GATES:
        lab.write(vid, plan_text(vid, extra_actions=GATE.format(vid=vid)))
    lab.commit("agent adds plans", AGENT)
    lab.run()
    time.sleep(1.05)
    for vid in GATES:
        lab.set_status(vid, "approved")
    lab.commit("alice approves the gated plans", ALICE)
    lab.run()
    for slug in ("copied", "copied-b", "gate-copied"):
        shutil.copytree(lab.repo / "plans" / slug, lab.repo / "plans/lib" / f"{slug}-m")
    lab.commit("mallory copies the plans", MALLORY)
    lab.run()
    time.sleep(1.05)
    for vid in VIDS:
        lab.set_status(vid, "rejected")
        lab.set_status(f"{vid}-b", "rejected")
    for vid in ("gate-copied", "gate-ctl"):
        lab.set_status(vid, "aborted")
    lab.commit("agent rejects its plans", AGENT)
    lab.run()
    lab.statuses_before = {k: v["status"] for k, v in lab.status().items()}
    lab.git("checkout", "-q", "-b", "pr")
    time.sleep(1.05)
    for vid in VIDS + GATES:
        lab.set_status(vid, "approved")
    lab.commit("alice approves on the pull request", ALICE)
    check = lab.cli(
        "check", "--config", str(lab.config), "--base", "main", "--head", "pr",
        "--as", "alice@example.com", "--format", "json", cwd=lab.repo,
    )  # fmt: skip
    lab.check_out = (check.returncode, check.stdout, check.stderr)
    lab.git("checkout", "-q", "main")
    approves = {}
    lab.extra_env = identity(ALICE)  # Alice is the current git user
    for vid in VIDS:
        r = lab.cli("approve", f"plans/{vid}-b", "--config", str(lab.config), cwd=lab.repo)
        approves[vid] = (r.returncode, r.stdout + r.stderr)
    lab.approve_out = approves
    lab.extra_env = {}
    lab.approve_heads = lab.log_rows("%ae%x00%s%x01")[:4]
    lab.git("merge", "-q", "--no-ff", "-m", "merge pr", "pr", who=ALICE)
    lab.run()
    lab.audit_out = lab.audit()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r36-checkcopy", _build)


def _p(ids: list[str], prefix: str) -> list[object]:
    return [
        pytest.param(v, id=f"{prefix}-{v}", marks=[FOUND[f"{prefix}-{v}"]])
        if f"{prefix}-{v}" in FOUND
        else pytest.param(v, id=f"{prefix}-{v}")
        for v in ids
    ]


def test_the_setup(lab: Lab) -> None:
    st = lab.statuses_before
    assert st["plans/copied"] == "rejected", st  # the author's rejection counts (round 119)
    assert st["plans/ctl"] == "rejected", st
    assert st["plans/gate-copied"] == "aborted", st  # the author's abort counts (round 119)
    assert st["plans/gate-ctl"] == "aborted", st
    assert st["plans/gate-plain"] == "awaiting_approval", st


@pytest.mark.parametrize("vid", _p(VIDS + GATES, "check"))
def test_check_predicts_the_controller(lab: Lab, vid: str) -> None:
    _rc, out, err = lab.check_out
    assert "Traceback" not in err, err[-2000:]
    rows = {row["plan"]: row for row in json.loads(out)["plans"]}
    row = rows[f"plans/{vid}"]
    ran = len(lab.calls(f"{vid}-gated" if vid in GATES else vid)) == 1
    assert (row["outcome"] == "start") == ran, (row, ran)


@pytest.mark.parametrize("vid", _p(GATES, "controller"))
def test_gated(lab: Lab, vid: str) -> None:
    want = 0 if vid in ("gate-ctl", "gate-copied") else 1  # the author's abort (round 119)
    assert len(lab.calls(vid)) == 1, lab.codes(vid)
    assert len(lab.calls(f"{vid}-gated")) == want, lab.codes(vid)
    _, report = lab.audit_out
    runs = [e for e in report.get("executions", []) if e["plan"] == f"plans/{vid}"]
    gates = [e for e in runs if e["approval_kind"] == "gate"]
    assert len(gates) == want and all(e["approval_valid"] for e in runs), report


@pytest.mark.parametrize("vid", _p(VIDS, "controller"))
def test_controller(lab: Lab, vid: str) -> None:
    want = 0  # the author's rejection counts, copied or not (round 119)
    assert len(lab.calls(vid)) == want, lab.codes(vid)
    _, report = lab.audit_out
    runs = [e for e in report.get("executions", []) if e["plan"] == f"plans/{vid}"]
    assert len(runs) == want, report
    assert all(e["approval_valid"] for e in runs), report


@pytest.mark.parametrize("vid", _p(VIDS, "approve"))
def test_approve_config(lab: Lab, vid: str) -> None:
    rc, out = lab.approve_out[vid]
    assert "Traceback" not in out, out
    committed = any(r[0] == ALICE[1] and f"plans/{vid}-b" in r[1] for r in lab.approve_heads)
    assert not committed, (rc, out, lab.approve_heads)  # both rejected (round 119)
