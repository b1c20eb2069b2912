"""Round 58, ``_restructure``'s ``inputs`` slip (her params moved to plan ``inputs`` as the agent
moves her plan) carried through the other ways a plan reaches a run: a pull request, a quorum,
and the prediction commands ``plangate approve --config`` and ``plangate check --as``.

Config: the bench's (``quorum``: ``approval.rules: [{match: {paths: ["plans/**"]},
require: [{count: 2}]}]``, a second lab). Alice commits ``plans/<v>-her`` (``_restructure``'s
``hers``); the agent moves it to ``plans/<v>`` as ``_restructure``'s ``inputs`` text, then:

- ``pr``: the move made on branch ``agent/pr`` and merged ``--no-ff`` by the agent; Alice
  approves on main.
- ``quorum``: Bob approves (``partial``), then Alice.
- ``approve-cmd``: Alice runs ``plangate approve plans/approve-cmd --config`` (it says what
  the controller would say, and commits nothing when it would refuse).
- ``check``: Alice's approval on branch ``alice/check``; ``plangate check --base main --head
  alice/check --as alice@example.com --format json`` predicts its outcome.
- ``move`` (control): ``_restructure``'s ``move`` (paired): the controller refuses it.

Asserted (the defence): her tag never reaches ``rec`` (``pr``, ``quorum``, ``approve-cmd``),
``approve`` refuses ``E_SELF_APPROVAL`` and commits nothing, ``check`` predicts
``E_SELF_APPROVAL`` (not ``start``).

Seen: ``pr``, ``quorum``, ``approve-cmd`` and ``check`` broke, one root with
``_restructure``: ``rec`` got her tag and params on her approval (``pr``: ``completed``,
approver alice; ``quorum``: Bob's vote made it ``partial`` and hers completed it), the audit
lists the runs valid; ``plangate approve --config`` committed her approval with exit 0
(``approved plans/approve-cmd in ...``); ``check --as alice`` predicted ``outcome: start``, her
vote ``counted``. Held: ``move`` (``E_SELF_APPROVAL``). The prediction commands agree with the
controller (one index), so fixing the pairing fixes all four.

Fixed (2026-11-29): one root with ``_restructure`` (plans compared by the calls they make,
inputs resolved: 0.98 hers); the index the prediction commands read is the controller's, so
``approve`` refuses and commits nothing, ``check --as alice`` predicts ``E_SELF_APPROVAL``, and
the pull request and quorum runs are refused.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from advkit import ALICE, Lab, cases, valid_runs
from test_round2_execution_kit import shared
from test_round58_approve_restructure import hers, wanted
from writerkit import Flow, approve_command, approved_on_branch, her_drafts, quorum_lab

BROKEN: dict[str, object] = {}


def _inputs(v: str) -> str:
    return (
        wanted("inputs")
        .replace("inputs-her", f"{v}-her")
        .replace("inputs cleanup", f"{v} cleanup")
        .replace('"inputs: clean', f'"{v}: clean')
    )


def _build(root: Path) -> Lab:
    flow = Flow(Lab(root / "main"))
    lab = flow.lab
    flow.commit("alice drafts", ALICE, her_drafts(["pr", "approve-cmd", "check", "move"]))
    flow.run()
    plans = {v: _inputs(v) for v in ["approve-cmd", "check"]}
    flow.rework({**plans, "move": wanted("move")}, message="agent reworks")
    flow.merged({"pr": _inputs("pr")})
    flow.run()
    flow.settle()
    lab.approve_cmd = approve_command(lab, "approve-cmd")  # type: ignore[attr-defined]
    if not lab.approve_cmd[2]:  # type: ignore[attr-defined]
        lab.set_status("approve-cmd", "approved")  # it refused: by hand, as --force would
    lab.check_out = approved_on_branch(flow, ["check"])  # type: ignore[attr-defined]
    flow.finish(["pr", "move"])
    lab.q = quorum_lab(root / "quorum", "quorum", hers("quorum"), _inputs("quorum"))  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r58-restructure-flows", _build)


def _ran(lab: Lab, v: str) -> list:  # type: ignore[type-arg]
    return lab.calls(f"{v}-her")


@pytest.mark.parametrize("vid", cases(["pr", "move"], ["pr", "move"], BROKEN))  # type: ignore[arg-type]
def test_merged_or_moved(lab: Lab, vid: str) -> None:
    assert _ran(lab, vid) == [], lab.codes(vid)[:1500]
    assert "E_SELF_APPROVAL" in lab.codes(vid), lab.codes(vid)[:1500]
    assert valid_runs(lab.report, vid) == [], valid_runs(lab.report, vid)  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(["quorum"], ["quorum"], BROKEN))  # type: ignore[arg-type]
def test_quorum(lab: Lab, vid: str) -> None:
    q = lab.q  # type: ignore[attr-defined]
    assert q.calls("quorum-her") == [], q.codes("quorum")[:1500]
    assert valid_runs(q.report, "quorum") == [], valid_runs(q.report, "quorum")


@pytest.mark.parametrize("vid", cases(["approve-cmd"], ["approve-cmd"], BROKEN))  # type: ignore[arg-type]
def test_approve_command(lab: Lab, vid: str) -> None:
    code, out, committed = lab.approve_cmd  # type: ignore[attr-defined]
    assert not committed and "E_SELF_APPROVAL" in out, (code, out[-1500:])


@pytest.mark.parametrize("vid", cases(["check"], ["check"], BROKEN))  # type: ignore[arg-type]
def test_check_prediction(lab: Lab, vid: str) -> None:
    out = lab.check_out  # type: ignore[attr-defined]
    assert "E_SELF_APPROVAL" in out, out[-2500:]
