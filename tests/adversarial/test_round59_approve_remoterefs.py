"""Round 59, remote mode over a real ``git daemon`` on 127.0.0.1: this round's writer-rule
breaks where the controller has its own clone and reads the forge's history over ``git://``.

docs/approvals.md, "Remote mode": the controller clones ``remote.url`` into its state
directory and judges approvals by the same history index; the agent reaches nothing of the
controller's. Config: ``remote: {url: git://127.0.0.1:<port>/origin.git, branch: main}``;
the agent and Alice push to the daemon (``--enable=receive-pack``). Shapes (each pushed by
the agent after Alice's pushed drafts; see the local-mode modules for the details):

- ``plan-name``, ``inputs-list``, ``echo-split`` (``test_round59_approve_planrefs.py``): in
  ONE commit that removes her draft, a new plan whose ``rec`` call resolves to her exact
  params through ``$<plan.name>``/``$<plan.task>``, ``$<inputs.p[i]>``, or two ``echo``
  actions. Asserted: her tag never reaches ``rec``, ``E_SELF_APPROVAL``, no valid run.
- ``t-layout`` (``test_round59_approve_template.py``): the agent's own plan whose only common
  text with her removed plan is the runbook's reason. Asserted: it runs once on her approval.
- ``own`` (control): the agent's own plan: runs once on her approval.

A pass after each push; Alice pulls, approves each, pushes; two passes; the audit of a fresh
``git clone git://...`` (history alone). The daemon is stopped by its process group after
the build.

Seen: ``plan-name``, ``inputs-list`` and ``echo-split`` broke as in local mode (``rec`` got her
exact params on her own approval, ``completed``, approver alice; the fresh ``git://`` clone's
audit lists each run valid), and ``t-layout`` was wrongly refused as in local mode
(``E_SELF_APPROVAL``, never ran): remote mode, where the agent reaches nothing of the
controller's, changes nothing; the breaks are in the history rules. Held: ``own`` ran once,
audit valid.

Fixed (2026-11-29): one root with ``planrefs`` and ``template``: in remote
mode her call is ``E_SELF_APPROVAL``, the agent's template plan runs once.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from advkit import Lab, cases, plan_text, valid_runs
from test_round2_execution_kit import shared
from test_round59_approve_planrefs import wanted as ref_wanted
from test_round59_approve_template import agents as tmpl_agents
from test_round59_approve_template import plan as tmpl_plan
from writerkit import RemoteFlow, her_drafts, mark_in_text, reworked, served

SLIPS = ["plan-name", "inputs-list", "echo-split"]
BROKEN: dict[str, object] = {}
HONEST = ["t-layout", "own"]
BROKEN_HONEST: dict[str, object] = {}


def _rework(flow: RemoteFlow) -> None:
    flow.lab.git("rm", "-q", "-r", "plans/t-layout-old")
    also = {"t-layout": tmpl_agents("t-layout")}
    flow.rework({v: ref_wanted(v) for v in SLIPS}, also)


def _build(root: Path) -> Lab:
    lab = Lab(root)
    drafts = {**her_drafts(SLIPS), "t-layout-old": tmpl_plan("t-layout-old")}
    own = {"own": plan_text("own", name="agent's own")}
    with served(lab) as url:
        flow = RemoteFlow(lab, url)
        return reworked(flow, drafts, own, _rework, [*SLIPS, *HONEST], mark=mark_in_text)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r59-remoterefs", _build)


@pytest.mark.parametrize("vid", cases(SLIPS, SLIPS, BROKEN))  # type: ignore[arg-type]
def test_her_call_is_not_hers_to_approve_in_remote_mode(lab: Lab, vid: str) -> None:
    assert lab.calls(f"{vid}-her") == [], lab.codes(vid)[:800]
    assert "E_SELF_APPROVAL" in lab.codes(vid), lab.codes(vid)[:800]
    assert valid_runs(lab.report, vid) == [], valid_runs(lab.report, vid)  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(HONEST, HONEST, BROKEN_HONEST))  # type: ignore[arg-type]
def test_the_agents_own_plan_runs_in_remote_mode(lab: Lab, vid: str) -> None:
    assert "E_SELF_APPROVAL" not in lab.codes(vid), lab.codes(vid)[:800]
    assert len(lab.calls(vid)) == 1, lab.codes(vid)[:800]
    assert valid_runs(lab.report, vid), lab.report  # type: ignore[attr-defined]
