"""Round 44, the prediction commands and the audit versus the controller's BATCHED commits.

docs/approvals.md ("Several plans in one commit"): a pass that decides many plans records
them in one commit with one trailer group per plan (``Plan-Event:``); "``plangate audit``,
``status`` and the history index read each plan's own group". Round 43 made ``plangate
check`` (and ``approve --config``) read "the controller's own" index, refusing
``E_ALREADY_EXECUTED`` "for a version whose start the controller's commits published on any
path" and counting the votes the controller collected (its ``partial`` commits). Round 43's
variants used one-plan commits only; here the facts sit in batched commits.

Config: the bench's plus ``plans/q/**`` needs two approvals. The agent adds 12 plans
``plans/r/bNN`` and 12 plans ``plans/q/qNN`` in one commit; one pass freezes them (a batched
freeze). Alice approves all 24 in one commit; one pass starts the ``r`` plans (a batched
``start``) and collects her vote on the ``q`` plans (a batched ``partial``). Then:

- ``ran-b11`` / ``ran-b00``: the agent writes ``plans/ran-b11`` (``ran-b00``), the very
  version ``plans/r/b11`` (``b00``) that ran; the controller freezes it; the agent opens
  ``pr-<vid>`` setting it ``approved``; Alice merges. The controller refuses
  ``E_ALREADY_EXECUTED``.
- ``q11`` / ``q00``: the agent opens ``pr-<vid>`` setting ``plans/q/<vid>`` ``approved``
  again; Bob merges: Alice's collected vote plus Bob's make the quorum: it runs once.
- ``ctl``: a fresh plan of the agent's, merged by Alice: runs once (control).

Before the merges, in a clone, ``plangate check --as`` the merger predicts each merge.

Asserted (the defence): the controller's verdicts above (``rec`` runs once for each ``r``
and ``q`` plan and ``ctl``, never again for a copy); ``check`` predicts ``start`` exactly
when the controller started the plan; the fresh-clone audit calls each start valid.

Seen: all held (the copies refused ``E_ALREADY_EXECUTED``; the quorum plans ran once on
Alice's vote from the batched ``partial`` plus Bob's; ``check`` and the audit agreed).
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

RULES = 'rules:\n  - match: {paths: ["plans/q/**"]}\n    require: [{count: 2}]\n'
R = [f"b{i:02d}" for i in range(12)]
Q = [f"q{i:02d}" for i in range(12)]
COPIES = {"ran-b11": "b11", "ran-b00": "b00"}
QUORUM = ["q11", "q00"]
ALL = [*COPIES, *QUORUM, "ctl"]
SLUG = {**{v: v for v in COPIES}, **{q: f"q/{q}" for q in QUORUM}, "ctl": "ctl"}
MERGER = {**{v: ALICE for v in COPIES}, **{q: BOB for q in QUORUM}, "ctl": ALICE}

#: what round 44 broke (strict xfails)
FOUND: dict[str, pytest.MarkDecorator] = {}


def _build(root: Path) -> Lab:
    lab = Lab(root, approval=RULES)
    for t in R:
        lab.write(f"r/{t}", plan_text(t))
    for t in Q:
        lab.write(f"q/{t}", plan_text(t))
    lab.commit("agent adds 24 plans", AGENT)
    lab.run()  # freeze (batched)
    time.sleep(1.05)
    for t in R:
        lab.set_status(f"r/{t}", "approved")
    for t in Q:
        lab.set_status(f"q/{t}", "approved")
    lab.commit("alice approves all", ALICE)
    lab.run()  # start r (batched), partial q (batched)
    lab.run()
    for vid, src in COPIES.items():
        lab.write(vid, plan_text(src))
    lab.write("ctl", plan_text("ctl"))
    lab.commit("agent adds copies", AGENT)
    lab.run()  # freeze
    time.sleep(1.05)
    for vid in ALL:
        lab.git("checkout", "-q", "-b", f"pr-{vid}", "main")
        lab.set_status(SLUG[vid], "approved")
        lab.commit(f"agent asks {vid}", AGENT)
        lab.git("checkout", "-q", "main")
    chk = root / "chk"
    lab.git("clone", "-q", str(lab.repo), str(chk))
    report: dict[str, Any] = {}
    for vid in ALL:
        out = lab.cli(
            "check", "--config", str(lab.config), "--base", "origin/main",
            "--head", f"origin/pr-{vid}", "--as", MERGER[vid][1], "--format", "json",
            cwd=chk,
        )  # fmt: skip
        report[vid] = {"out": out.stdout, "err": out.stderr[-2000:]}
    lab.check_report = report  # type: ignore[attr-defined]
    shutil.rmtree(chk, ignore_errors=True)
    time.sleep(1.05)
    for vid in ALL:
        lab.git("merge", "--no-ff", "-q", "-m", f"merge pr-{vid}", f"pr-{vid}", who=MERGER[vid])
    lab.run()
    lab.run()
    clone = root / "clone"
    lab.git("clone", "-q", str(lab.repo), str(clone))
    res = lab.cli("audit", "--json", cwd=clone)
    lab.audit_report = (  # type: ignore[attr-defined]
        json.loads(res.stdout) if res.stdout.strip() else {"raw": res.stderr}
    )
    lab.subjects_all = lab.git("log", "--format=%s", "--author=plangate@localhost")  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r44-batchread", _build)


def _p(vids: list[str], prefix: str = "") -> list[Any]:
    return [
        pytest.param(v, id=prefix + v, marks=[FOUND[prefix + v]] if prefix + v in FOUND else [])
        for v in vids
    ]


def test_the_bench_batched(lab: Lab) -> None:
    subjects = lab.subjects_all  # type: ignore[attr-defined]
    assert " plans\n" in subjects or "plan events" in subjects, subjects


def test_each_original_ran_once(lab: Lab) -> None:
    for t in R:
        assert len(lab.calls(t)) == 1, (t, lab.codes(f"r/{t}"))


@pytest.mark.parametrize("vid", _p(list(COPIES)))
def test_a_copy_of_a_run_version_is_refused(lab: Lab, vid: str) -> None:
    assert len(lab.calls(COPIES[vid])) == 1, lab.codes(vid)
    assert not lab.started(vid), lab.codes(vid)
    assert "E_ALREADY_EXECUTED" in lab.codes(vid), lab.codes(vid)


@pytest.mark.parametrize("vid", _p([*QUORUM, "ctl"]))
def test_the_quorum_and_control_run_once(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 1, lab.codes(SLUG[vid])


@pytest.mark.parametrize("vid", _p(ALL, "check-"))
def test_check_matches_the_controller(lab: Lab, vid: str) -> None:
    mine = checkkit.prediction(lab, vid, SLUG[vid])
    predicted = mine.get("outcome") == "start"
    assert predicted == lab.started(SLUG[vid]), json.dumps(mine)[:2000]


@pytest.mark.parametrize("vid", _p(ALL, "audit-"))
def test_the_fresh_clone_audit_agrees(lab: Lab, vid: str) -> None:
    report = lab.audit_report  # type: ignore[attr-defined]
    runs = [e for e in report.get("executions", []) if e.get("plan") == f"plans/{SLUG[vid]}"]
    assert len(runs) == int(lab.started(SLUG[vid])), report
    assert all(e.get("approval_valid") for e in runs), runs
