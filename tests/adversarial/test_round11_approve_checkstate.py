"""Round 11, who may make a plan run: ``plangate check`` (CI's prediction) for plans whose
fate the controller decides from what it remembers, not from the pull request.

Each variant: a pull request whose branch sets ``approved`` (the agent's commit) is checked
with ``plangate check --as alice@example.com``, then Alice merges it ``--no-ff``; the
controller passes. CI must not say "start" for a plan the controller then refuses or holds
(a reviewer trusting the green check), nor the reverse.

- ``held``: the controller froze the plan; the agent ``reset --hard``s that freeze away and
  freezes the plan itself (``plangate freeze``): the controller holds it
  (``E_HISTORY_REWRITTEN``).
- ``ran-copy``: the plan ran; the agent copies it (same content) to ``ran-copy-2``; the pull
  request approves the copy (``E_ALREADY_EXECUTED``).
- ``ran-readd``: the plan ran; the agent deletes it and adds the same text back under its
  name (a later push), the controller freezes it; the pull request approves it.

Defence: the tool never runs again, and ``check`` predicted no start for each. Control:
``plain`` (predicted start, started).

Results (round 11): the controller held all three (``E_HISTORY_REWRITTEN``,
``E_ALREADY_EXECUTED`` twice; nothing ran again); ``check`` **broke** for all three (strict
xfails): it predicted ``outcome: start`` with Alice counted and nothing missing. Only
``E_VERSION_WITHDRAWN`` under another name is a documented gap of ``check``.
Fixed (round 43): ``ran-copy`` and ``ran-readd`` pass: ``check`` reads the whole history the
controller reads and refuses ``E_ALREADY_EXECUTED`` for a version whose start the
controller's commits published on any path (``verdicts.already_executed``). ``held`` stays a
strict xfail: it needs the controller's state directory (``held.json``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import test_round11_approve_checkhistory as checkhistory
from advkit import AGENT, ALICE, Lab, plan_text
from test_round2_approval_authors import shared_lab

VIDS = ["held", "ran-copy", "ran-readd"]
TARGET = {"held": "held", "ran-copy": "ran-copy-2", "ran-readd": "ran-readd", "plain": "plain"}
BROKEN: dict[str, object] = {}


def _xf(what: str) -> pytest.MarkDecorator:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 11: {what}")


CHECK_BROKEN: dict[str, object] = {
    "held": _xf(
        "`plangate check --as alice` predicts `start` for a plan the controller holds"
        " (E_HISTORY_REWRITTEN: its freeze was reset away); the controller refuses it"
    ),
}


def _build(root: Path) -> Lab:
    lab = Lab(root)
    checkhistory.prepare(lab)  # test_round11_approve_checkhistory.py shares this lab
    for vid in ["ran-copy", "ran-readd"]:
        lab.write(vid, plan_text(vid))
    lab.commit("agent adds plans", AGENT)
    lab.run()
    for vid in ["ran-copy", "ran-readd"]:
        lab.approve(vid, ALICE)
    lab.run()  # both run once
    # held: frozen by the controller, then the freeze is reset away
    lab.write("held", plan_text("held"))
    lab.commit("agent adds held", AGENT)
    lab.run()  # freeze
    assert lab.git("log", "-1", "--format=%an").strip() == "plangate"
    lab.git("reset", "-q", "--hard", "HEAD~1")
    out = lab.cli("freeze", "--config", str(lab.config), "plans/held", cwd=lab.repo)
    assert out.returncode == 0, out.stderr
    lab.commit("agent freezes held itself", AGENT)
    # ran-copy / ran-readd / plain
    text = lab.read("ran-copy").replace("status: completed", "status: pending_approval")
    lab.write("ran-copy-2", text)
    lab.git("rm", "-q", "-r", "plans/ran-readd")
    lab.write("plain", plan_text("plain"))
    lab.commit("agent copies, deletes", AGENT)
    lab.run()
    lab.write("ran-readd", plan_text("ran-readd"))
    lab.commit("agent adds it back", AGENT)
    lab.run()  # freeze
    history_branches = checkhistory.branches(lab)
    history = {}
    for vid, branch in history_branches.items():
        if vid not in checkhistory.CHECKED:
            continue
        out = lab.cli(
            "check",
            "--config",
            str(lab.config),
            "--base",
            "main",
            "--head",
            branch,
            "--as",
            ALICE[1],
            "--format",
            "json",
            cwd=lab.repo,
        )
        history[vid] = out.stdout or out.stderr
    (lab.root / "checks_history.json").write_text(json.dumps(history))
    checks = {}
    for vid, slug in TARGET.items():
        branch = f"pr-{vid}"
        lab.git("checkout", "-q", "-b", branch, "main")
        lab.approve(slug, AGENT)
        lab.git("checkout", "-q", "main")
        out = lab.cli(
            "check",
            "--config",
            str(lab.config),
            "--base",
            "main",
            "--head",
            branch,
            "--as",
            ALICE[1],
            "--format",
            "json",
            cwd=lab.repo,
        )
        checks[vid] = out.stdout or out.stderr
        lab.git("merge", "-q", "--no-ff", "--no-edit", branch, who=ALICE)
    for branch in history_branches.values():
        lab.git("merge", "-q", "--no-ff", "--no-edit", branch, who=ALICE)
    (lab.root / "checks.json").write_text(json.dumps(checks))
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared_lab(tmp_path_factory, "r11-checkstate", _build)


def test_the_control_runs_once(lab: Lab) -> None:
    assert len(lab.calls("plain")) == 1, lab.codes("plain")


@pytest.mark.parametrize("vid", [pytest.param(v, id=v, marks=BROKEN.get(v, [])) for v in VIDS])
def test_nothing_runs_again_or_unfrozen(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == (0 if vid == "held" else 1), lab.codes(TARGET[vid])
    starts = [s for s in lab.subjects(TARGET[vid]) if s.startswith("plangate: start ")]
    assert len(starts) == (1 if vid == "ran-readd" else 0), lab.codes(TARGET[vid])


def _outcome(lab: Lab, vid: str) -> dict:
    out = json.loads((lab.root / "checks.json").read_text())[vid]
    return next(r for r in json.loads(out)["plans"] if r["plan"] == f"plans/{TARGET[vid]}")


def test_check_predicted_the_control(lab: Lab) -> None:
    assert _outcome(lab, "plain")["outcome"] == "start", _outcome(lab, "plain")


@pytest.mark.parametrize(
    "vid", [pytest.param(v, id=v, marks=CHECK_BROKEN.get(v, [])) for v in VIDS]
)
def test_check_predicted_no_start(lab: Lab, vid: str) -> None:
    row = _outcome(lab, vid)
    assert row["outcome"] != "start", row
