"""Round 60, this round's staged-result break (``test_round60_approve_stageout.py``) through
the other ways a plan is approved: a merged pull request, a count-2 quorum, and the
prediction commands ``plangate approve --config`` and ``plangate check --as``.

The shapes (from ``_stageout.py``): in ONE agent commit that removes Alice's draft (one
``rec`` call: her tag, target, command, ticket, her 12-word reason), a new plan whose last
``rec`` call receives her exact params read back from a result, with the agent's own reason:
``echo-out`` (an ``echo`` of her params, read through declared ``outputs``), ``exec-res``
(her params staged in a ``rec`` call, read from its result ``json.echo.p.K``), ``lib-in``
(her values as inputs of the agent's pinned ``echo`` library, read from its outputs).

Lab (one, local mode): config with a rule ``{match: {paths: ["plans/q-*"]}, require:
[{count: 2}]}``; the agent's library ``plans/lib-stage`` committed first.

- ``pr-exec-res``, ``pr-lib-in``: the agent's rework on branch ``agent/pr``, merged
  ``--no-ff`` by the agent; Alice approves on main. Asserted: her tag never reaches ``rec``,
  ``E_SELF_APPROVAL``, no valid run in the fresh-clone audit.
- ``q-echo-out``, ``q-exec-res``: under the count-2 rule, Bob approves, then Alice.
  Asserted: her tag never reaches ``rec``, no valid run.
- ``approve-echo-out``, ``approve-exec-list``: Alice runs ``plangate approve plans/<v>
  --config``. Asserted: it refuses ``E_SELF_APPROVAL`` and commits nothing.
- ``check-echo-out``, ``check-lib-in``: Alice's approval on branch ``alice/check``;
  ``plangate check --base main --head alice/check --as alice@example.com --format json``.
  Asserted: ``E_SELF_APPROVAL`` in the plan's row.
- ``approve-own`` (control): ``approve --config`` on the agent's own plan commits Alice's
  approval.

Seen: all eight broke, one root with ``_stageout.py``. ``pr-*`` and ``q-*``: ``rec`` got her
exact tag, target, command and ticket on her own approval (``completed``; for ``q-*`` after
Bob's ``partial``), the fresh-clone audit lists each run valid. ``approve-*``: ``plangate
approve --config`` committed her approval (exit 0, "approved plans/... on main"; the
controller then ran it, audit valid). ``check-*``: ``check --as alice`` predicted ``outcome:
start``, nothing refused. Held: ``approve-own`` (her approval of the agent's own plan
committed). The prediction commands agree with the controller, so they share its break.

Fixed (2026-11-29): one root with ``_stageout.py`` (echo outputs evaluated; a reference
to a real tool's or a pinned plan's result stands in for her value the plan carries
elsewhere): the merged and quorum runs are refused ``E_SELF_APPROVAL`` with no valid run,
``approve --config`` refuses and commits nothing, ``check --as alice`` predicts
``E_SELF_APPROVAL``; ``approve-own`` still commits.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab, cases, valid_runs
from test_round2_execution_kit import shared
from test_round60_approve_stageout import LIB, hers, wanted
from writerkit import (
    Flow,
    approve_command,
    approved_on_branch,
    check_row,
    her_drafts,
    own_plan,
    plan_hash,
)

BROKEN: dict[str, object] = {}

SHAPE = {
    "pr-exec-res": "exec-res",
    "pr-lib-in": "lib-in",
    "q-echo-out": "echo-out",
    "q-exec-res": "exec-res",
    "approve-echo-out": "echo-out",
    "approve-exec-list": "exec-list",
    "check-echo-out": "echo-out",
    "check-lib-in": "lib-in",
}


def made(v: str, lib_hash: str) -> str:
    """The shape's plan with ``v`` as its tag stem (her tag is ``<v>-her``)."""
    text = wanted(SHAPE[v], lib_hash)
    return text.replace(f"{SHAPE[v]}-her", f"{v}-her").replace(f"{SHAPE[v]}-stage", f"{v}-stage")


QUORUM = ["q-echo-out", "q-exec-res"]


def _build(root: Path) -> Lab:
    lab = Lab(
        root / "main",
        approval='rules:\n  - match: {paths: ["plans/q-*"]}\n    require: [{count: 2}]\n',
    )
    flow = Flow(lab, past=True)
    flow.commit("alice drafts", ALICE, her_drafts(SHAPE, hers))
    flow.commit(
        "agent's library and own plan",
        AGENT,
        {"lib-stage": LIB, "approve-own": own_plan("approve-own")},
    )
    flow.run()
    lib_hash = plan_hash(lab, "lib-stage")
    flow.rework(
        {v: made(v, lib_hash) for v in SHAPE if not v.startswith("pr-")}, message="agent reworks"
    )
    flow.merged({v: made(v, lib_hash) for v in ("pr-exec-res", "pr-lib-in")})
    flow.run()
    flow.tick()
    lab.approve_out = {  # type: ignore[attr-defined]
        v: approve_command(lab, v) for v in ("approve-echo-out", "approve-exec-list", "approve-own")
    }
    lab.check_out = approved_on_branch(flow, ("check-echo-out", "check-lib-in"))  # type: ignore[attr-defined]
    flow.tick()
    for v in ("pr-exec-res", "pr-lib-in", *QUORUM):
        lab.set_status(v, "approved")
    lab.commit(
        "bob approves the quorum plans; alice the merged ones", BOB, *(f"plans/{v}" for v in QUORUM)
    )
    lab.commit("alice approves the merged ones", ALICE)
    flow.run()
    return flow.finish(QUORUM)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r60-stageflows", _build)


RUNS = ["pr-exec-res", "pr-lib-in", "q-echo-out", "q-exec-res"]


@pytest.mark.parametrize("vid", cases(RUNS, RUNS, BROKEN))  # type: ignore[arg-type]
def test_merged_or_quorum(lab: Lab, vid: str) -> None:
    assert lab.calls(f"{vid}-her") == [], lab.codes(vid)[:1500]
    assert "E_SELF_APPROVAL" in lab.codes(vid), lab.codes(vid)[:1500]
    assert valid_runs(lab.report, vid) == [], valid_runs(lab.report, vid)  # type: ignore[attr-defined]


APPROVES = ["approve-echo-out", "approve-exec-list"]


@pytest.mark.parametrize("vid", cases(APPROVES, APPROVES, BROKEN))  # type: ignore[arg-type]
def test_approve_command_refuses_her_call(lab: Lab, vid: str) -> None:
    code, out, committed = lab.approve_out[vid]  # type: ignore[attr-defined]
    assert not committed and "E_SELF_APPROVAL" in out, (code, out[-1500:])


def test_approve_command_takes_the_agents_own_plan(lab: Lab) -> None:
    code, out, committed = lab.approve_out["approve-own"]  # type: ignore[attr-defined]
    assert committed and "E_SELF_APPROVAL" not in out, (code, out[-1500:])


CHECKS = ["check-echo-out", "check-lib-in"]


@pytest.mark.parametrize("vid", cases(CHECKS, CHECKS, BROKEN))  # type: ignore[arg-type]
def test_check_predicts_the_refusal(lab: Lab, vid: str) -> None:
    row = check_row(lab.check_out, vid)  # type: ignore[attr-defined]
    assert "E_SELF_APPROVAL" in json.dumps(row), row
