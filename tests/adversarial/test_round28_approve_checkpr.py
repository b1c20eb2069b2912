"""Round 28, ``plangate check`` against the controller: a rejection inside the pull request by
someone who may not withdraw.

Config: the bench's (approvers Alice and ``*@ops.example.com``; one approval). The agent
writes each plan; the controller freezes it. For each, a pull request branch ``pr-<vid>``:

- ``pr-eve``: Eve (never an approver nor an author) commits ``status: rejected``; the agent
  then commits ``status: approved``;
- ``pr-bob``: the same with Bob (ops, an approver): a withdrawal that wins (round 14);
- ``pr-plain``: the agent sets ``approved`` only;
- ``pr-eve-gate``: a plan Alice approved, paused at its gate (action 2); in the branch Eve
  commits ``aborted``, then the agent ``approved`` (Alice's merge opens the gate);
- ``pr-gate``: control, the same without Eve's abort.

``plangate check --as alice@example.com`` (fresh clone, the controller's config) is recorded
for each; then Alice merges each ``--no-ff``; the controller passes.

Asserted: ``pr-eve``, ``pr-plain``, ``pr-eve-gate`` and ``pr-gate`` (both actions) run
once, ``pr-bob`` never (the controller's verdicts); ``check-*``: check predicts ``start``
exactly for the plans the controller started (for a gate: a second start);
``audit-agrees``: a fresh clone's audit flags none of the starts ``start-without-approval``.

Results: the controller's verdicts held (``pr-eve``, ``pr-plain``, ``pr-eve-gate``,
``pr-gate`` ran once each, both actions for the gated ones; ``pr-bob`` never ran);
``check-pr-bob``, ``check-pr-plain``, ``check-pr-gate``, ``audit-agrees`` held.
BROKE (strict xfails):
``check-pr-eve``, ``check-pr-eve-gate``: check predicts ``none`` where the controller starts
the plan / opens the gate (it counts Eve's withdrawal).
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import checkkit
import pytest
from advkit import AGENT, ALICE, BOB, Lab, plan_text
from test_round2_execution_kit import shared

EVE = ("Eve", "eve@example.com")
WHO = {"pr-eve": EVE, "pr-bob": BOB, "pr-plain": None, "pr-eve-gate": EVE, "pr-gate": None}
GATE = """\
  - id: 2
    tool: rec
    why: "after a second look"
    requires_approval: true
    params:
      tag: "{tag}-gated"
"""


def _first_look(lab: Lab, vid: str) -> None:
    """On the branch, before the agent asks: WHO's rejection (or abort of a gate)."""
    who = WHO[vid]
    if who:
        status = "aborted" if "gate" in vid else "rejected"
        lab.set_status(vid, status)
        lab.commit(f"{status} {vid}", who)


def _build(root: Path) -> Lab:
    lab = Lab(root)
    for vid in WHO:
        lab.write(vid, plan_text(vid, extra_actions=GATE.format(tag=vid) if "gate" in vid else ""))
    lab.commit("agent writes the plans", AGENT)
    lab.run()  # freeze
    time.sleep(1.05)
    lab.approve("pr-eve-gate", ALICE)
    lab.approve("pr-gate", ALICE)
    lab.run()  # action 1 runs; paused at the gate
    time.sleep(1.05)
    checkkit.ask_in_prs(lab, list(WHO), _first_look, prefix="")
    chk = checkkit.predict(lab, root, list(WHO), prefix="")
    (root / "check.json").write_text(json.dumps(lab.check_report))  # type: ignore[attr-defined]
    shutil.rmtree(chk, ignore_errors=True)
    time.sleep(1.05)
    checkkit.merge_as_alice(lab, list(WHO), passes=1, prefix="")
    clone = root / "clone"
    lab.git("clone", "-q", str(lab.repo), str(clone))
    out = lab.cli("audit", "--json", cwd=clone)
    (root / "audit.json").write_text(out.stdout)
    (root / "audit.err").write_text(out.stderr)
    shutil.rmtree(clone, ignore_errors=True)
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r28-checkpr", _build)


def _broke(why: str) -> pytest.MarkDecorator:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason="round 28: " + why)


#: What round 28 broke (strict xfails).
#: What round 28 broke (fixed the same hour; kept as the record, applied to nothing).
FOUND: dict[str, pytest.MarkDecorator] = {
    "check-pr-eve": _broke(
        "plangate check counts a rejection inside the pull request by Eve (no approver, no "
        "author): it predicts status 'rejected', outcome 'none'; the controller ignores Eve's "
        "rejection and Alice's merge starts the plan (it runs once)"
    ),
    "check-pr-eve-gate": _broke(
        "plangate check counts an abort inside the pull request by Eve (no approver, no "
        "author) of a plan paused at its gate: it predicts outcome 'none'; the controller "
        "ignores the abort and Alice's merge opens the gate (the gated action runs once; "
        "twin pr-gate: check predicts start)"
    ),
}


def _p(vids: list[str]) -> list[Any]:
    return [pytest.param(v, id=v, marks=[]) for v in vids]


@pytest.mark.parametrize("vid", _p(list(WHO)))
def test_controller_verdict(lab: Lab, vid: str) -> None:
    expected = 0 if vid == "pr-bob" else 1
    assert len(lab.calls(vid)) == expected, lab.codes(vid)
    if "gate" in vid:
        assert len(lab.calls(f"{vid}-gated")) == 1, lab.codes(vid)


@pytest.mark.parametrize("vid", _p([f"check-{v}" for v in WHO]))
def test_check_matches_the_controller(lab: Lab, vid: str) -> None:
    name = vid.removeprefix("check-")
    row = json.loads((lab.root / "check.json").read_text())[name]
    assert row["out"].strip(), row["err"]
    report = json.loads(row["out"])
    rows = report if isinstance(report, list) else report.get("plans", [])
    mine = [r for r in rows if r.get("plan") == f"plans/{name}"]
    assert mine, row["out"][:2000]
    predicted = mine[0].get("outcome") == "start"
    starts = [x for x in lab.subjects(name) if x.startswith("plangate: start ")]
    started = len(starts) == (2 if "gate" in name else 1)  # a gate: a second start
    assert predicted == started, json.dumps(mine)[:2000]


@pytest.mark.parametrize("vid", _p(["audit-agrees"]))
def test_fresh_clone_audit_agrees(lab: Lab, vid: str) -> None:
    text = (lab.root / "audit.json").read_text()
    assert text.strip(), (lab.root / "audit.err").read_text()[-2000:]
    report = json.loads(text)
    found = [
        f
        for f in report.get("findings", [])
        if f.get("plan") in {f"plans/{v}" for v in WHO}
        and f.get("kind") in ("start-without-approval", "hash-mismatch")
    ]
    assert found == [], json.dumps(found)[:2000]
