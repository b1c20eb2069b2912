"""Round 29, runs once and ``plangate check``: a plan that ran, after the agent's "foxtrot"
merge (``git pull`` on a stale local main from before the run, fast-forwarded: the
controller's start/complete commits move to the second parent and the agent's merge is what
sets ``completed`` on main's first parent).

The agent writes ``done`` and ``ctl``; the controller freezes them; ``stale`` = main's tip.
Alice approves ``done``: it runs and completes. The agent, on a local main at ``stale``,
commits a note, pulls and main fast-forwards to its merge. The controller passes. Then a pull
request in which the agent sets ``done`` and ``ctl`` ``approved``: ``plangate check --as alice``
(fresh clone, the config). Alice then sets both ``approved`` on main; the controller passes.

Asserted: ``done`` ran once (runs once holds); ``ctl`` once; ``check-done``: check does not
predict ``start`` for ``done`` (merging that pull request cannot run it again);
``check-ctl``: ``start``.

Results: the controller held (``done`` ran once: Alice's later approval is
``E_ILLEGAL_TRANSITION`` "from completed"; ``ctl`` once); ``check-ctl`` held. BROKE (strict
xfail): ``check-done``: check predicts ``start`` for the completed plan. (Not run: the same
pull request without a foxtrot, as a control.)
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab, plan_text
from test_round2_execution_kit import shared


def _build(root: Path) -> Lab:
    lab = Lab(root)
    lab.write("done", plan_text("fr-done"))
    lab.write("ctl", plan_text("fr-ctl"))
    lab.commit("agent writes the plans", AGENT)
    lab.run()  # freeze
    stale = lab.head()
    time.sleep(1.05)
    lab.approve("done", ALICE)
    lab.run()  # runs
    lab.git("checkout", "-q", "-b", "fx", stale)
    (lab.repo / "notes.txt").write_text("unrelated\n")
    lab.commit("agent notes", AGENT)
    lab.git("merge", "--no-ff", "-q", "-m", "Merge branch 'main'", "main", who=AGENT)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "--ff-only", "-q", "fx")
    lab.run()
    lab.git("checkout", "-q", "-b", "pr")
    for vid in ["done", "ctl"]:
        lab.set_status(vid, "approved")
    lab.commit("agent asks", AGENT)
    lab.git("checkout", "-q", "main")
    clone = root / "chk"
    lab.git("clone", "-q", str(lab.repo), str(clone))
    out = lab.cli(
        "check", "--config", str(lab.config), "--base", "origin/main", "--head", "origin/pr",
        "--as", "alice@example.com", "--format", "json", cwd=clone,
    )  # fmt: skip
    (root / "check.json").write_text(out.stdout)
    (root / "check.err").write_text(out.stderr)
    time.sleep(1.05)
    for vid in ["done", "ctl"]:
        lab.set_status(vid, "approved")
        lab.commit(f"alice approves {vid}", ALICE)
    lab.run()
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r29-foxrerun", _build)


#: Accepted (round 29): a first-parent swap ("foxtrot": a stale main's commit, `git pull`,
#: then a fast-forward) puts the controller's record on a second parent; the tools that
#: replay history from a clone follow first parents (docs/threat-model.md, "Accepted
#: limits", round 8). The controller held in every variant; branch protection closes it.
#: What round 29 broke (strict xfails).
FOUND: dict[str, pytest.MarkDecorator] = {
    "check-done": pytest.mark.xfail(
        strict=True,
        raises=AssertionError,
        reason="round 29: after the agent's foxtrot (its merge is what sets 'completed' on "
        "main's first parent), plangate check on a pull request setting the completed plan "
        "'approved' predicts outcome 'start' (status 'approved', Alice counted); the "
        "controller holds it completed (E_ILLEGAL_TRANSITION: approved from completed, ignored)",
    ),
}


def _p(vids: list[str]) -> list[Any]:
    return [pytest.param(v, id=v, marks=[FOUND[v]] if v in FOUND else []) for v in vids]


@pytest.mark.parametrize("vid", _p(["done", "ctl"]))
def test_runs_once(lab: Lab, vid: str) -> None:
    assert len(lab.calls(f"fr-{vid}")) == 1, lab.codes(vid)


@pytest.mark.parametrize("vid", _p(["check-done", "check-ctl"]))
def test_check_predicts_the_controller(lab: Lab, vid: str) -> None:
    text = (lab.root / "check.json").read_text()
    assert text.strip(), (lab.root / "check.err").read_text()[-2000:]
    report = json.loads(text)
    rows = report if isinstance(report, list) else report.get("plans", [])
    plan = vid.removeprefix("check-")
    row = [r for r in rows if r.get("plan") == f"plans/{plan}"]
    starts = plan == "ctl"
    assert row and (row[0].get("outcome") == "start") == starts, json.dumps(row)[:2000]
