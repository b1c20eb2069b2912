"""Round 32, quorum: a status only the controller writes, set by the agent, to make the next
approval count as a gate approval or a resume (which "still need one approval").

docs/approvals.md: gates and resumes (``awaiting_approval``/``failed`` -> ``approved``) need
one approval; any other status change by a non-controller commit is ignored
(``E_ILLEGAL_TRANSITION``) and "the plan keeps its *effective* status". Config: the bench's,
plus ``plans/two/**`` needs two approvals. The agent writes every plan; the controller
freezes it. Then:

- ``await``: the agent sets the pending plan ``awaiting_approval``; Bob alone approves.
- ``failed``: the agent sets it ``failed``; Bob alone approves.
- ``executing``: the agent sets it ``executing``; Bob alone approves.
- ``rej-failed``: Bob rejects the plan; the agent sets it ``failed``; Bob approves (a
  "resume" of a rejected plan that never ran).
- ``done-failed``: Bob and Carol approve (it runs once); the agent sets it ``failed``; Bob
  approves (a "resume" of a completed run).
- ``ctl``: Bob, then Carol approve: runs once (control).
- ``check-await`` / ``check-failed``: as ``await`` / ``failed``, but the approval is a pull
  request (the agent sets ``approved`` on ``pr-<vid>``) that CI checks with ``plangate check
  --as bob@ops.example.com --format json`` before Bob merges it ``--no-ff``.

Asserted: one approval is never the quorum and nothing runs more than once: ``rec`` never
runs for ``await``/``failed``/``executing``/``rej-failed`` (``rej-failed`` stays
``rejected``), once for ``done-failed`` and ``ctl``; ``check`` predicts no ``start`` for
the ``check-*`` variants, and the controller starts neither.

Results: every variant held (``partial`` with Bob's vote; ``rejected`` stays rejected; the
completed run is not resumed; ``check`` predicted ``partial``, as the controller decided).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, BOB, CAROL, Lab, plan_text
from test_round2_execution_kit import shared

ILLEGAL = {"await": "awaiting_approval", "failed": "failed", "executing": "executing"}
CHECKED = {"check-await": "awaiting_approval", "check-failed": "failed"}
FOUND: dict[str, pytest.MarkDecorator] = {}


def _build(root: Path) -> Lab:
    lab = Lab(
        root, approval='rules:\n  - match: {paths: ["plans/two/**"]}\n    require: [{count: 2}]\n'
    )
    for vid in [*ILLEGAL, *CHECKED, "rej-failed", "done-failed", "ctl"]:
        lab.write(f"two/{vid}", plan_text(vid))
    lab.commit("agent adds plans", AGENT)
    lab.run()
    for vid, status in {**ILLEGAL, **CHECKED}.items():
        lab.set_status(f"two/{vid}", status)
        lab.commit(f"agent sets {status}", AGENT)
    lab.set_status("two/rej-failed", "rejected")
    lab.commit("bob rejects rej-failed", BOB)
    lab.approve("two/done-failed", BOB)
    lab.approve("two/ctl", BOB)
    lab.run()
    lab.approve("two/done-failed", CAROL)
    lab.approve("two/ctl", CAROL)
    lab.run()
    for vid in ("rej-failed", "done-failed"):
        lab.set_status(f"two/{vid}", "failed")
        lab.commit(f"agent sets {vid} failed", AGENT)
    lab.run()
    for vid in [*ILLEGAL, "rej-failed", "done-failed"]:
        lab.approve(f"two/{vid}", BOB)
    checks = {}
    for vid in CHECKED:
        lab.git("checkout", "-q", "-b", f"pr-{vid}")
        lab.approve(f"two/{vid}", AGENT)
        lab.git("checkout", "-q", "main")
        args = ["check", "--base", "main", "--head", f"pr-{vid}", "--as", BOB[1]]
        out = lab.cli(*args, "--format", "json", "--config", str(lab.config), cwd=lab.repo)
        checks[vid] = json.loads(out.stdout)["plans"] if out.stdout.strip() else out.stderr
        lab.git("merge", "-q", "--no-ff", "-m", f"merge pr-{vid}", f"pr-{vid}", who=BOB)
    lab.checks = checks  # type: ignore[attr-defined]
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r32-illegalkind", _build)


def _p(vids: list[str]) -> list[Any]:
    return [pytest.param(v, id=v, marks=[FOUND[v]] if v in FOUND else []) for v in vids]


@pytest.mark.parametrize("vid", _p(["ctl", "done-failed"]))
def test_the_quorum_runs_it_once(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 1, lab.codes(f"two/{vid}")


@pytest.mark.parametrize("vid", _p([*ILLEGAL, "rej-failed"]))
def test_one_vote_after_a_forged_status_runs_nothing(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(f"two/{vid}")
    assert not lab.started(f"two/{vid}"), lab.subjects(f"two/{vid}")


def test_a_rejected_plan_stays_rejected(lab: Lab) -> None:
    assert lab.status()["plans/two/rej-failed"]["status"] == "rejected", lab.codes("two/rej-failed")


@pytest.mark.parametrize("vid", _p(list(CHECKED)))
def test_check_predicts_what_the_controller_does(lab: Lab, vid: str) -> None:
    rows = [r for r in lab.checks[vid] if r.get("plan") == f"plans/two/{vid}"]  # type: ignore[attr-defined]
    assert rows and rows[0].get("outcome") != "start", lab.checks[vid]  # type: ignore[attr-defined]
    assert not lab.started(f"two/{vid}"), lab.codes(f"two/{vid}")
    assert lab.calls(vid) == [], lab.codes(f"two/{vid}")
