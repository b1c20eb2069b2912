"""Round 6, approval side: the replay date rule against an approver whose clock runs fast.

Round 4 binds an approval to the version (and the pause) it was made for by dates: a commit
whose author date is earlier than the trusted birth of the version (the controller's
freeze) or of the pause (the controller's ``await-approval`` commit) is E_APPROVAL_REPLAYED.
The approval's author date is the approver's clock, not the controller's. An honest Alice
whose laptop clock runs ten minutes fast dates her approvals ten minutes ahead: for those ten
minutes every later freeze and pause looks *older* than her approval, so the agent can bring
her approval back (``git cherry-pick``: author and author date kept) onto them.

- ``skew-version``: Alice approves version 1 (clock +10 min); the agent edits the plan in the
  same push (her approval lapses: the content changed before the controller acted); the
  controller freezes version 2; the agent cherry-picks Alice's approval onto version 2.
- ``skew-gate``: actions 2 and 3 are gated. Alice approves the plan and gate 2 (clock +10
  min); the run pauses at gate 3; the agent cherry-picks her gate-2 approval.

Controls (Alice's clock right): ``true-version`` and ``true-gate``, the same steps: the
replays are refused (round 4's defence), so the difference is only Alice's clock.

Defence: version 2 never runs; gate 3 never runs. Broke (2 of 2, strict xfails), and a fresh
clone's ``plangate audit`` calls both replays valid (``ok: true``, no finding), though git
shows each replayed approval authored ten minutes after its own commit time and after the
controller's next commit (evidence the date is a claim no later than those). Controls held.
``plangate approve``'s ``Plan-Hash:`` trailer would stop the version replay, not the gate one
(the hash is the same across pauses; round 4 ``cli-gates``).
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BenchError, Lab, plan_text
from test_round2_approval_authors import shared_lab

SKEW = 600


def _gates(tag: str) -> str:
    return plan_text(
        tag,
        extra_actions=f"""\
  - id: 2
    tool: rec
    why: "gate two"
    requires_approval: true
    params: {{tag: "{tag}-2"}}
  - id: 3
    tool: rec
    why: "gate three"
    requires_approval: true
    params: {{tag: "{tag}-3"}}
""",
    )


VERSIONS = ["skew-version", "true-version"]
GATES = ["skew-gate", "true-gate"]
#: Fixed (an approval identity, author + date + subject, approves one version and one pause:
#: the same identity brought back for another is E_APPROVAL_REPLAYED).
BROKEN: dict[str, object] = {}


def _approve(lab: Lab, slug: str) -> str:
    """Alice approves; with ``skew-`` her clock runs SKEW seconds fast."""
    lab.set_status(slug, "approved")
    lab.git("add", "-A")
    env_date = []
    if slug.startswith("skew-"):
        when = int(time.time()) + SKEW
        env_date = [f"--date=@{when} +0000"]
    lab.git("commit", "-q", *env_date, "-m", f"approve {slug}", who=ALICE)
    return lab.head()


def _build(root: Path) -> Lab:
    lab = Lab(root)
    for vid in VERSIONS:
        lab.write(vid, plan_text(vid, params="note: v1\n"))
    for vid in GATES:
        lab.write(vid, _gates(vid))
    lab.commit("agent adds the plans", AGENT)
    lab.run()  # freeze
    approvals: dict[str, str] = {}
    for vid in VERSIONS:
        approvals[vid] = _approve(lab, vid)
        text = lab.read(vid).replace("note: v1", "note: v2")
        lab.write(vid, text)
        lab.commit(f"agent edits {vid}", AGENT)
    for vid in GATES:
        _approve(lab, vid)
    lab.run()  # versions: refused or refrozen; gates: action 1 runs, pause at 2
    time.sleep(1.1)
    for vid in GATES:
        approvals[vid] = _approve(lab, vid)
    lab.run()  # versions: frozen at v2; gates: action 2 runs, pause at 3
    time.sleep(1.1)
    for vid in VERSIONS + GATES:
        lab.git("cherry-pick", approvals[vid], who=AGENT)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared_lab(tmp_path_factory, "r6-clock", _build)


def _marks(vid: str) -> list[object]:
    return [BROKEN[vid]] if vid in BROKEN else []


def test_the_honest_gate_approval_ran_gate_two(lab: Lab) -> None:
    for vid in GATES:
        assert len(lab.calls(vid)) == 1 and len(lab.calls(f"{vid}-2")) == 1, lab.codes(vid)


@pytest.mark.parametrize("vid", [pytest.param(v, marks=_marks(v)) for v in VERSIONS])  # type: ignore[arg-type]
def test_an_approval_of_version_one_never_runs_version_two(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)
    assert not lab.started(vid), lab.codes(vid)


@pytest.mark.parametrize("vid", [pytest.param(v, marks=_marks(v)) for v in GATES])  # type: ignore[arg-type]
def test_a_gate_approval_never_opens_the_next_gate(lab: Lab, vid: str) -> None:
    assert lab.calls(f"{vid}-3") == [], lab.codes(vid)


def test_a_fresh_clone_audit_flags_the_replayed_approvals(lab: Lab) -> None:
    clone = lab.root / "clone-audit"
    if not clone.exists():
        subprocess.run(
            ["git", "clone", "-q", "-b", "main", str(lab.repo), str(clone)],
            check=True,
            env=lab.env(),
        )
    result = lab.cli("audit", "--json", cwd=clone)
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    try:
        report = json.loads(result.stdout)
    except ValueError as exc:
        raise BenchError(f"audit: {result.stdout[-500:]} {result.stderr[-500:]}") from exc
    runs = report.get("executions") or []
    valid = {
        (r["plan"], r["approval_kind"])
        for r in runs
        if r.get("approval_valid") and r["plan"].startswith("plans/skew-")
    }
    # the first approval of skew-gate and its gate-2 approval are Alice's own; the rest is replay
    assert ("plans/skew-version", "approve") not in valid, runs
    gate_runs = [r for r in runs if r["plan"] == "plans/skew-gate" and r["approval_kind"] == "gate"]
    assert sum(1 for r in gate_runs if r.get("approval_valid")) <= 1, gate_runs
