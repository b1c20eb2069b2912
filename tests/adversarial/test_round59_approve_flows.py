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
import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab, cases, identity, valid_runs
from test_round2_execution_kit import shared
from test_round59_approve_planrefs import hers as ref_hers
from test_round59_approve_planrefs import wanted as ref_wanted
from test_round59_approve_template import agents as tmpl_agents
from test_round59_approve_template import plan as tmpl_plan

BROKEN: dict[str, object] = {}


def _check(lab: Lab, branch: str) -> str:
    res = lab.cli(
        "check",
        "--base",
        "main",
        "--head",
        branch,
        "--as",
        "alice@example.com",
        "--format",
        "json",
        "--config",
        str(lab.config),
        cwd=lab.repo,
    )
    return res.stdout + res.stderr


def _approve(lab: Lab, v: str) -> tuple[int, str, bool]:
    lab.extra_env = identity(ALICE)  # type: ignore[attr-defined]
    head = lab.head()
    res = lab.cli("approve", f"plans/{v}", "--config", str(lab.config), cwd=lab.repo)
    lab.extra_env = {}  # type: ignore[attr-defined]
    return res.returncode, res.stdout + res.stderr, lab.head() != head


def _build(root: Path) -> Lab:
    lab = Lab(root / "main")
    for v in ["pr-name", "approve-name", "check-name"]:
        lab.write(f"{v}-her", ref_hers(v))
    for v in ["approve-tmpl", "check-tmpl"]:
        lab.write(f"{v}-old", tmpl_plan(f"{v}-old"))
    lab.commit("alice drafts", ALICE)
    lab.run()
    for v in ["approve-name", "check-name"]:
        lab.git("rm", "-q", "-r", f"plans/{v}-her")
        lab.write(v, ref_wanted(v, "plan-name"))
    for v in ["approve-tmpl", "check-tmpl"]:
        lab.git("rm", "-q", "-r", f"plans/{v}-old")
        lab.write(v, tmpl_agents(v, "t-layout"))
    lab.commit("agent reworks", AGENT)
    lab.git("checkout", "-q", "-b", "agent/pr")
    lab.git("rm", "-q", "-r", "plans/pr-name-her")
    lab.write("pr-name", ref_wanted("pr-name", "plan-name"))
    lab.commit("agent reworks on a branch", AGENT)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "--no-edit", "agent/pr", who=AGENT)
    lab.run()
    time.sleep(1.05)
    lab.approve_out = {v: _approve(lab, v) for v in ["approve-name", "approve-tmpl"]}  # type: ignore[attr-defined]
    lab.git("checkout", "-q", "-b", "alice/check")
    for v in ["check-name", "check-tmpl"]:
        path = lab.repo / "plans" / v / "PLAN.yml"
        path.write_text(
            path.read_text().replace("status: pending_approval\n", "status: approved\n", 1)
        )
    lab.commit("alice approves on a branch", ALICE)
    lab.git("checkout", "-q", "main")
    lab.check_out = _check(lab, "alice/check")  # type: ignore[attr-defined]
    lab.set_status("pr-name", "approved")
    lab.commit("alice approves", ALICE)
    lab.run()
    lab.run()
    _code, lab.report = lab.audit()  # type: ignore[attr-defined]

    q = Lab(
        root / "quorum",
        approval='rules:\n  - match: {paths: ["plans/**"]}\n    require: [{count: 2}]\n',
    )
    q.write("quorum-name-her", ref_hers("quorum-name"))
    q.commit("alice drafts", ALICE)
    q.run()
    q.git("rm", "-q", "-r", "plans/quorum-name-her")
    q.write("quorum-name", ref_wanted("quorum-name", "plan-name"))
    q.commit("agent reworks", AGENT)
    q.run()
    time.sleep(1.05)
    q.set_status("quorum-name", "approved")
    q.commit("bob approves", BOB)
    q.run()
    q.set_status("quorum-name", "approved")
    q.commit("alice approves", ALICE)
    q.run()
    q.run()
    _code, q.report = q.audit()  # type: ignore[attr-defined]
    lab.q = q  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r59-flows", _build)


def _row(lab: Lab, v: str) -> dict:  # type: ignore[type-arg]
    out = lab.check_out  # type: ignore[attr-defined]
    try:
        data = json.loads(out[: out.rindex("}") + 1] if "}" in out else out)
    except ValueError:
        return {"raw": out[-1500:]}
    rows = data.get("plans", data) if isinstance(data, dict) else data
    for row in rows if isinstance(rows, list) else []:
        if isinstance(row, dict) and row.get("plan") == f"plans/{v}":
            return row
    return {"raw": out[-1500:]}


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
    row = _row(lab, vid)
    assert "E_SELF_APPROVAL" in json.dumps(row), row


@pytest.mark.parametrize("vid", cases(["check-tmpl"], ["check-tmpl"], BROKEN))  # type: ignore[arg-type]
def test_check_predicts_the_start(lab: Lab, vid: str) -> None:
    row = _row(lab, vid)
    assert "E_SELF_APPROVAL" not in json.dumps(row) and row.get("outcome") == "start", row
