"""Round 44, ``plangate check --as`` under ``approval.identity: committer``.

docs/approvals.md: ``check`` "simulates the merge with ``git merge-tree`` and an unreachable
merge commit authored by ``--as``" and "decides with the controller's own function, so the
prediction is the controller's decision"; ``approval.identity: committer`` makes the
approver the commit's committer. Who runs ``check`` (a CI job's git identity, a reviewer's
clone) is not the person who will merge: the prediction must be about ``--as``.

Config: the bench's plus ``identity: committer``. The agent writes each plan; the
controller freezes it; the agent opens ``pr-<vid>`` setting it ``approved``. In a clone,
``plangate check --as <merger>`` runs with the clone's git identity set to someone else;
then the merger merges (author and committer the merger):

- ``alice-by-ci``: ``--as alice@example.com``, the checker's identity ``Test User
  <test@example.com>`` (no approver); Alice merges: the controller runs it once.
- ``mallory-by-bob``: ``--as mallory@example.com``, the checker's identity Bob (an approver);
  Mallory merges: the controller refuses ``E_APPROVER_NOT_ALLOWED``.
- ``carol-by-bob``: Carol (an approver) wrote this plan; ``--as carol@ops.example.com``, the
  checker Bob; Carol merges: the controller refuses ``E_SELF_APPROVAL``.

Asserted (the defence): ``check`` predicts ``start`` exactly when the controller started the
plan.

Seen: all held (``check`` predicted for ``--as``, not for the checker's git identity).
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import checkkit
import pytest
from advkit import AGENT, ALICE, BOB, CAROL, MALLORY, Lab, identity, plan_text
from test_round2_execution_kit import shared

CASES = {
    "alice-by-ci": (ALICE, None),
    "mallory-by-bob": (MALLORY, BOB),
    "carol-by-bob": (CAROL, BOB),
}

#: what round 44 broke (strict xfails)
FOUND: dict[str, pytest.MarkDecorator] = {}


def _build(root: Path) -> Lab:
    lab = Lab(root, approval="identity: committer\n")
    for vid in CASES:
        if vid != "carol-by-bob":
            lab.write(vid, plan_text(vid))
    lab.commit("agent adds plans", AGENT)
    lab.write("carol-by-bob", plan_text("carol-by-bob"))
    lab.commit("carol adds her plan", CAROL)
    lab.run()  # freeze
    time.sleep(1.05)
    for vid in CASES:
        lab.git("checkout", "-q", "-b", f"pr-{vid}", "main")
        lab.set_status(vid, "approved")
        lab.commit(f"agent asks {vid}", AGENT)
        lab.git("checkout", "-q", "main")
    chk = root / "chk"
    lab.git("clone", "-q", str(lab.repo), str(chk))
    report: dict[str, Any] = {}
    for vid, (merger, checker) in CASES.items():
        lab.extra_env = identity(checker) if checker else {}  # type: ignore[attr-defined]
        out = lab.cli(
            "check", "--config", str(lab.config), "--base", "origin/main",
            "--head", f"origin/pr-{vid}", "--as", merger[1], "--format", "json",
            cwd=chk,
        )  # fmt: skip
        report[vid] = {"out": out.stdout, "err": out.stderr[-2000:]}
    lab.extra_env = {}  # type: ignore[attr-defined]
    lab.check_report = report  # type: ignore[attr-defined]
    shutil.rmtree(chk, ignore_errors=True)
    time.sleep(1.05)
    for vid, (merger, _checker) in CASES.items():
        lab.git("merge", "--no-ff", "-q", "-m", f"merge pr-{vid}", f"pr-{vid}", who=merger)
    lab.run()
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r44-checkcommitter", _build)


def _p(vids: list[str], prefix: str = "") -> list[Any]:
    return [
        pytest.param(v, id=prefix + v, marks=[FOUND[prefix + v]] if prefix + v in FOUND else [])
        for v in vids
    ]


def test_the_controller_verdicts(lab: Lab) -> None:
    assert len(lab.calls("alice-by-ci")) == 1, lab.codes("alice-by-ci")
    assert lab.calls("mallory-by-bob") == [], lab.codes("mallory-by-bob")
    assert "E_APPROVER_NOT_ALLOWED" in lab.codes("mallory-by-bob"), lab.codes("mallory-by-bob")
    assert lab.calls("carol-by-bob") == [], lab.codes("carol-by-bob")
    assert "E_SELF_APPROVAL" in lab.codes("carol-by-bob"), lab.codes("carol-by-bob")


@pytest.mark.parametrize("vid", _p(list(CASES), "check-"))
def test_check_predicts_for_the_merger(lab: Lab, vid: str) -> None:
    mine = checkkit.prediction(lab, vid)
    predicted = mine.get("outcome") == "start"
    assert predicted == lab.started(vid), json.dumps(mine)[:2000]
