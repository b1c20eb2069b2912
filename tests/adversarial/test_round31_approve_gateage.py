"""Round 31, ``max_age`` at a gate: does a fresh clone's ``plangate audit`` reach the
controller's verdict on a gate approval made after the version's ``max_age``?

docs/approvals.md: ``max_age`` counts "from the first freeze of the version ... to the *later*
of the approving commit's time and the verifier's own clock: the live controller uses its
clock when it verifies, ``plangate audit`` the time of the controller's ``start`` commit".
Gate approvals (``awaiting_approval`` -> ``approved``) are approvals too.

Config: the bench's plus ``max_age: 3s``. The agent writes each plan (action 1, then action 2
with ``requires_approval: true``); the controller freezes them; Alice approves at once (action
1 runs, the plan pauses). The lab waits 4 s (past ``max_age``). Then:

- ``gate-late``: Alice approves the gate; the controller passes.
- ``gate-two``: the same under ``plans/two/**`` (two approvals: Bob and Carol first).

Asserted: whatever the controller decides on the late gate, the fresh-clone audit agrees: no
``start-without-approval`` (and ``approval_valid`` true) for a start the controller made, and
the gated action ran at most once.

Results: held: the controller refused both late gates (the gated action never ran, no
start commit) and the audit agreed (no finding; the first starts valid).
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, CAROL, Lab, plan_text, window_open, with_widening_window
from test_round2_execution_kit import shared

GATE = """\
  - id: 2
    tool: rec
    why: "after a second look"
    requires_approval: true
    params:
      tag: "{tag}-gated"
"""
PLANS = {"gate-late": "gate-late", "gate-two": "two/gate-two"}
FOUND: dict[str, pytest.MarkDecorator] = {}
#: the first ``max_age`` in seconds; a lab whose first approvals were judged (and started)
#: after it expired (a slow bench) is rebuilt with it doubled (advkit)
MAX_AGE = 3


def _build(root: Path, max_age: int) -> Lab:
    lab = Lab(
        root,
        approval=f'max_age: {max_age}s\nrules:\n  - match: {{paths: ["plans/two/**"]}}\n'
        "    require: [{count: 2}]\n",
    )
    for vid, slug in PLANS.items():
        lab.write(slug, plan_text(vid, extra_actions=GATE.format(tag=vid)))
    lab.commit("agent writes the plans", AGENT)
    frozen = int(time.time())  # the first freeze is no earlier (git dates in seconds)
    lab.run()
    lab.approve("gate-late", ALICE)
    lab.approve("two/gate-two", BOB)
    lab.run()
    lab.approve("two/gate-two", CAROL)
    lab.run()
    # the first approvals were judged and their starts committed inside max_age, else the
    # late gate says nothing: rebuild it wider
    window_open(frozen + max_age - 0.5, "the first approvals and their starts")
    time.sleep(max_age + 1.2)
    lab.approve("gate-late", ALICE)
    lab.approve("two/gate-two", ALICE)
    lab.run()
    lab.run()
    clone = root / "clone"
    shutil.rmtree(clone, ignore_errors=True)
    lab.git("clone", "-q", str(lab.repo), str(clone))
    out = lab.cli("audit", "--json", cwd=clone)
    (root / "audit.json").write_text(out.stdout)
    (root / "audit.err").write_text(out.stderr)
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r31-gateage", with_widening_window(_build, first=MAX_AGE))


def _p(vids: list[str]) -> list[Any]:
    return [pytest.param(v, id=v, marks=[FOUND[v]] if v in FOUND else []) for v in vids]


@pytest.mark.parametrize("vid", _p(list(PLANS)))
def test_first_part_ran_once(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 1, lab.codes(PLANS[vid])
    assert len(lab.calls(f"{vid}-gated")) <= 1, lab.codes(PLANS[vid])


@pytest.mark.parametrize("vid", _p(list(PLANS)))
def test_fresh_clone_audit_agrees_on_the_late_gate(lab: Lab, vid: str) -> None:
    err = (lab.root / "audit.err").read_text()
    assert "Traceback" not in err, err[-2000:]
    report = json.loads((lab.root / "audit.json").read_text())
    slug = f"plans/{PLANS[vid]}"
    rows = [e for e in report.get("executions", []) if e.get("plan") == slug]
    flags = [f for f in report.get("findings", report.get("flags", [])) if slug in json.dumps(f)]
    gated_ran = len(lab.calls(f"{vid}-gated")) == 1
    assert all(r.get("approval_valid") for r in rows), (gated_ran, rows, flags)
    assert not [f for f in flags if "start-without-approval" in json.dumps(f)], (gated_ran, flags)
