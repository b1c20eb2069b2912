"""Round 59, self-approval through a converted source: an approver's call carried into a
``PLAN.json`` (Plan Contract v1) that the controller converts, in the commit that removes
her PLAN.yml draft.

docs/approvals.md, "Who changed the content": a plan the commit writes ("a ``PLAN.yml``, or a
source such as ``PLAN.json`` the controller converts") made of a removed plan takes its
writers; plans are compared by the calls they make. docs/formats.md, "In a plan folder: the
daemon converts": the controller commits ``plangate: convert <plan>`` and freezes it; the
authors of the source are the plan's authors.

Lab: the bench's config. Alice commits ``plans/<v>-her`` (``test_round59_approve_planrefs``'s
draft: one ``rec`` call, her tag, a 12-word reason, three params). The agent then, in ONE
commit that removes her folder, adds ``plans/<v>/PLAN.json``, a Plan Contract whose one step
calls ``rec``:

- ``pc-args``: ``args`` her exact params, ``description`` the agent's own reason.
- ``pc-inputs``: her values as ``inputs``, ``args`` written ``${inputs.K}`` (the contract's own
  spelling, converted to ``$<inputs.K>``).
- ``pc-why``: ``args`` her exact params, ``description`` her reason.
- ``own`` (control): the agent's own contract (its own tag): runs once on her approval.

A pass (convert, freeze); Alice approves each; two passes; ``plangate audit --json``.

Asserted (the defence): her tag never reaches ``rec``, ``E_SELF_APPROVAL``, no valid run.

Seen: see BROKEN below.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from advkit import AGENT, Lab, cases, valid_runs
from test_round2_execution_kit import shared
from test_round59_approve_planrefs import AWHY
from writerkit import KEYS, WHY, Flow, her_drafts, reworked
from writerkit import her_values as vals

VIDS = ["pc-args", "pc-inputs", "pc-why"]
BROKEN: dict[str, object] = {}


def contract(v: str) -> str:
    her = vals(v) if v != "own" else {"tag": "own"}
    doc: dict[str, object] = {
        "plan_version": 1,
        "skill_id": "maintenance",
        "goal": f"{v}: the agent's maintenance step",
        "steps": [
            {
                "step_id": "s1",
                "tool": "rec",
                "args": dict(her),
                "description": WHY if v == "pc-why" else AWHY,
            }
        ],
    }
    if v == "pc-inputs":
        doc["inputs"] = dict(her)
        doc["steps"][0]["args"] = {k: f"${{inputs.{k}}}" for k in KEYS}  # type: ignore[index]
    return json.dumps(doc, indent=2) + "\n"


def _rework(flow: Flow) -> None:
    for v in VIDS:
        flow.lab.git("rm", "-q", "-r", f"plans/{v}-her")
        flow.lab.write(v, contract(v), "PLAN.json")
    flow.lab.write("own", contract("own"), "PLAN.json")
    flow.commit("agent reworks the drafts as plan contracts", AGENT)
    flow.run()


def _approve(lab: Lab, v: str) -> None:
    assert (lab.repo / "plans" / v / "PLAN.yml").exists(), lab.codes(v)[:800]
    lab.set_status(v, "approved")


def _build(root: Path) -> Lab:
    return reworked(Flow(Lab(root)), her_drafts(VIDS), {}, _rework, [*VIDS, "own"], mark=_approve)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r59-convsource", _build)


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))  # type: ignore[arg-type]
def test_her_call_as_a_converted_source_is_hers(lab: Lab, vid: str) -> None:
    assert lab.calls(f"{vid}-her") == [], lab.codes(vid)[:800]
    assert "E_SELF_APPROVAL" in lab.codes(vid), lab.codes(vid)[:1500]
    assert valid_runs(lab.report, vid) == [], valid_runs(lab.report, vid)  # type: ignore[attr-defined]


def test_the_agents_own_contract_runs(lab: Lab) -> None:
    assert len(lab.calls("own")) == 1, lab.codes("own")[:800]
    assert valid_runs(lab.report, "own"), lab.report  # type: ignore[attr-defined]
