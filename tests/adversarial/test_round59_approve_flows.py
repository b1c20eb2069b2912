"""Round 59, this round's two writer-rule breaks through the other ways a plan is approved:
a merged pull request, a count-2 quorum, and the prediction commands ``plangate approve
--config`` and ``plangate check --as``.

The shapes (``test_round59_approve_planrefs.py``, ``test_round59_approve_template.py``):
``name``: in ONE agent commit that removes Alice's draft, a new plan whose ``rec`` call
resolves to her exact params through ``$<plan.name>``/``$<plan.task>`` (a slip);
``tmpl``: the agent's own plan whose only common text with her removed last-week plan is the
runbook's 10-word reason, in its own name, task and layout (an honest plan).

- ``pr-name``: the agent's restructure on branch ``agent/pr``, merged ``--no-ff`` by the agent;
  Alice approves on main. Asserted: her tag never reaches ``rec``, ``E_SELF_APPROVAL``.
- ``quorum-name``: config ``rules: [{match: {paths: ["plans/**"]}, require: [{count: 2}]}]``;
  Bob approves, then Alice. Asserted: her tag never reaches ``rec``, no valid run.
- ``approve-name``: Alice runs ``plangate approve plans/approve-name --config``. Asserted: it
  refuses ``E_SELF_APPROVAL`` and commits nothing.
- ``check-name``: Alice's approval on branch ``alice/check``; ``plangate check --base main
  --head alice/check --as alice@example.com --format json``. Asserted: ``E_SELF_APPROVAL``.
- ``approve-tmpl``: Alice runs ``plangate approve --config`` on the agent's honest plan.
  Asserted: it commits her approval (no ``E_SELF_APPROVAL``).
- ``check-tmpl``: ``check --as alice`` on her approval of the honest plan on a branch.
  Asserted: no ``E_SELF_APPROVAL``, outcome ``start``.

Seen: all six broke, one root each with the local-mode modules. ``pr-name`` and
``quorum-name``: ``rec`` got her exact params on her own approval (``completed``), the
fresh-clone audit lists each run valid. ``approve-name``: ``plangate approve --config``
committed her approval (exit 0, "approved plans/approve-name in ... on main"; the controller
then ran it). ``check-name``: ``check --as alice`` predicted ``outcome: start``.
``approve-tmpl``: ``approve --config`` refused the agent's honest plan ``E_SELF_APPROVAL``
(exit 1, nothing committed); ``check-tmpl`` predicted ``refuse`` with ``E_SELF_APPROVAL`` for
the merge. The prediction commands agree with the controller, so they share its breaks.

Fixed (2026-11-29): one root with ``planrefs`` and ``template`` (the calls view
resolves plan fields, list indexes and echo results; a ``why`` is at most half the
evidence): the pull request and quorum runs of her call are refused, ``approve`` refuses it
and ``check --as alice`` predicts ``E_SELF_APPROVAL``; the honest template plan is approved
and predicted to start.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from advkit import ALICE, Lab, cases, valid_runs
from test_round2_execution_kit import shared
from test_round59_approve_planrefs import wanted as ref_wanted
from test_round59_approve_template import agents as tmpl_agents
from test_round59_approve_template import plan as tmpl_plan
from writerkit import (
    Flow,
    approve_command,
    approved_on_branch,
    check_row,
    her_drafts,
    mark_in_text,
    quorum_lab,
)
from writerkit import her_cleanup as ref_hers

BROKEN: dict[str, object] = {}


TMPL = ["approve-tmpl", "check-tmpl"]


def _build(root: Path) -> Lab:
    flow = Flow(Lab(root / "main"))
    lab = flow.lab
    olds = {f"{v}-old": tmpl_plan(f"{v}-old") for v in TMPL}
    flow.commit(
        "alice drafts", ALICE, {**her_drafts(["pr-name", "approve-name", "check-name"]), **olds}
    )
    flow.run()
    for v in TMPL:
        lab.git("rm", "-q", "-r", f"plans/{v}-old")
    names = {v: ref_wanted(v, "plan-name") for v in ["approve-name", "check-name"]}
    flow.rework(names, {v: tmpl_agents(v, "t-layout") for v in TMPL}, "agent reworks")
    flow.merged({"pr-name": ref_wanted("pr-name", "plan-name")})
    flow.run()
    flow.settle()
    lab.approve_out = {v: approve_command(lab, v) for v in ["approve-name", "approve-tmpl"]}  # type: ignore[attr-defined]
    lab.check_out = approved_on_branch(flow, ["check-name", "check-tmpl"], mark_in_text)  # type: ignore[attr-defined]
    flow.finish(["pr-name"])
    her, made = ref_hers("quorum-name"), ref_wanted("quorum-name", "plan-name")
    lab.q = quorum_lab(root / "quorum", "quorum-name", her, made)  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r59-flows", _build)


@pytest.mark.parametrize("vid", cases(["pr-name"], ["pr-name"], BROKEN))  # type: ignore[arg-type]
def test_merged(lab: Lab, vid: str) -> None:
    assert lab.calls(f"{vid}-her") == [], lab.codes(vid)[:1500]
    assert "E_SELF_APPROVAL" in lab.codes(vid), lab.codes(vid)[:1500]
    assert valid_runs(lab.report, vid) == [], valid_runs(lab.report, vid)  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(["quorum-name"], ["quorum-name"], BROKEN))  # type: ignore[arg-type]
def test_quorum(lab: Lab, vid: str) -> None:
    q = lab.q  # type: ignore[attr-defined]
    assert q.calls(f"{vid}-her") == [], q.codes(vid)[:1500]
    assert valid_runs(q.report, vid) == [], valid_runs(q.report, vid)


@pytest.mark.parametrize("vid", cases(["approve-name"], ["approve-name"], BROKEN))  # type: ignore[arg-type]
def test_approve_command_refuses_her_call(lab: Lab, vid: str) -> None:
    code, out, committed = lab.approve_out[vid]  # type: ignore[attr-defined]
    assert not committed and "E_SELF_APPROVAL" in out, (code, out[-1500:])


@pytest.mark.parametrize("vid", cases(["approve-tmpl"], ["approve-tmpl"], BROKEN))  # type: ignore[arg-type]
def test_approve_command_takes_the_honest_plan(lab: Lab, vid: str) -> None:
    code, out, committed = lab.approve_out[vid]  # type: ignore[attr-defined]
    assert committed and "E_SELF_APPROVAL" not in out, (code, out[-1500:])


@pytest.mark.parametrize("vid", cases(["check-name"], ["check-name"], BROKEN))  # type: ignore[arg-type]
def test_check_predicts_the_refusal(lab: Lab, vid: str) -> None:
    row = check_row(lab.check_out, vid)  # type: ignore[attr-defined]
    assert "E_SELF_APPROVAL" in json.dumps(row), row


@pytest.mark.parametrize("vid", cases(["check-tmpl"], ["check-tmpl"], BROKEN))  # type: ignore[arg-type]
def test_check_predicts_the_start(lab: Lab, vid: str) -> None:
    row = check_row(lab.check_out, vid)  # type: ignore[attr-defined]
    assert "E_SELF_APPROVAL" not in json.dumps(row) and row.get("outcome") == "start", row
