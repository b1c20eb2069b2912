"""Round 49, who may make a plan run: a quorum (``rules: [{match: {paths: [plans/q/**]},
require: [{count: 2}]}]``) under ``max_age`` (a short window, widened by the bench when the
machine is slow): the first vote inside the window, the second after it.

Each plan ``plans/q/<vid>`` is the agent's; the controller freezes; Alice approves every
plan inside the window (the controller commits ``partial``); Bob approves the control
``ctl`` inside the window too (it runs). After the window closed:

- ``late``: Bob approves on main.
- ``late-backdated``: Bob approves on main with author and committer dates set back inside
  the window.
- ``late-merge``: Bob merges (``--no-ff``) a branch ``pr-late-merge`` cut and approved by
  the agent inside the window (the merge is the approval request).
- ``late-moved``: the agent moved the folder to ``plans/q/late-moved2`` (same version)
  before Bob approves it there.
- ``late-check``: ``plangate check --as bob`` on a branch whose one commit sets
  ``approved`` (Bob's): the prediction must not be ``start``; the branch is then merged
  by Bob.

Asserted (the defence): a version older than ``max_age`` does not start: ``rec`` never
ran for the late variants, the controller refused them ``E_PLAN_EXPIRED``; ``check``
predicts no start; the control ran once.

Seen: all held (each late plan ``refused`` ``E_PLAN_EXPIRED``, check exit 1).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab, plan_text, window_open, with_widening_window
from checkkit import predicts_start
from test_round2_execution_kit import shared

CASES = ["late", "late-backdated", "late-merge", "late-moved", "late-check"]
FOUND: dict[str, pytest.MarkDecorator] = {}


def _build(root: Path, window: int) -> Lab:
    approval = (
        f"max_age: {window}s\n"
        "rules:\n  - {match: {paths: ['plans/q/**']}, require: [{count: 2}]}\n"
    )
    lab = Lab(root, approval=approval)
    for vid in ["ctl", *CASES]:
        lab.write(f"q/{vid}", plan_text(vid))
    lab.commit("agent adds plans")
    lab.run()
    t0 = time.time()
    for vid in ["ctl", *CASES]:
        lab.set_status(f"q/{vid}", "approved")
    lab.commit("alice approves", ALICE)
    early = lab.git("log", "-1", "--format=%cI").strip()
    lab.run()
    lab.approve("q/ctl", BOB)
    lab.git("checkout", "-q", "-b", "pr-late-merge")
    lab.set_status("q/late-merge", "approved")
    lab.commit("agent approves in a branch", AGENT)
    lab.git("checkout", "-q", "main")
    lab.run()
    window_open(t0 + window, "Alice's votes and the control")
    time.sleep(max(0.0, t0 + window + 1.5 - time.time()))
    lab.approve("q/late", BOB)
    lab.set_status("q/late-backdated", "approved")
    lab.git("add", "-A")
    lab.extra_env = {"GIT_AUTHOR_DATE": early, "GIT_COMMITTER_DATE": early}  # type: ignore[attr-defined]
    lab.git("commit", "-q", "-m", "bob approves (dated back)", who=BOB)
    lab.extra_env = {}  # type: ignore[attr-defined]
    lab.git("merge", "--no-ff", "-q", "-m", "merge pr-late-merge", "pr-late-merge", who=BOB)
    lab.git("mv", "plans/q/late-moved", "plans/q/late-moved2")
    lab.commit("agent moves", AGENT)
    lab.approve("q/late-moved2", BOB)
    lab.git("checkout", "-q", "-b", "pr-late-check")
    lab.approve("q/late-check", BOB)
    lab.git("checkout", "-q", "main")
    out = lab.cli(
        "check", "--config", str(lab.config), "--base", "main", "--head", "pr-late-check",
        "--as", BOB[1], "--format", "json", cwd=lab.repo,
    )  # fmt: skip
    lab.check_out = (out.returncode, out.stdout, out.stderr[-2000:])  # type: ignore[attr-defined]
    lab.git("merge", "--no-ff", "-q", "-m", "merge pr-late-check", "pr-late-check", who=BOB)
    lab.run()
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r49-quorumage", with_widening_window(_build, first=6))


def test_the_control_ran_once(lab: Lab) -> None:
    assert len(lab.calls("ctl")) == 1, lab.codes("q/ctl")


@pytest.mark.parametrize(
    "vid", [pytest.param(v, id=v, marks=[FOUND[v]] if v in FOUND else []) for v in CASES]
)
def test_a_second_vote_after_max_age_runs_nothing(lab: Lab, vid: str) -> None:
    slug = "q/late-moved2" if vid == "late-moved" else f"q/{vid}"
    assert lab.calls(vid) == [], lab.codes(slug)
    assert "E_PLAN_EXPIRED" in lab.codes(slug), lab.codes(slug)


def test_check_predicts_no_start(lab: Lab) -> None:
    code, stdout, stderr = lab.check_out  # type: ignore[attr-defined]
    assert "Traceback" not in stderr, stderr
    data = json.loads(stdout)
    text = json.dumps(data)
    assert not predicts_start(stdout), text[:3000]
    assert code == 1, (code, text[:3000])
