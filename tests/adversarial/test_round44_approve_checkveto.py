"""Round 44, ``plangate check`` versus a withdrawal made INSIDE the pull request it predicts.

docs/approvals.md: "A rejection or abort inside a merged branch (by someone entitled to
withdraw the version it was made for) wins whatever the merge resolves the status to"; one
"by someone who may not withdraw is ignored"; ``check`` "decides with the controller's own
function". The agent writes each plan; the controller freezes it; the agent opens
``pr-<vid>`` from main; on it:

- ``br-bob-rej``: Bob (an approver) commits ``status: rejected``; then the agent sets
  ``approved``.
- ``br-mal-rej``: Mallory (no approver, no author) commits ``status: rejected``; then the
  agent sets ``approved``.
- ``br-bob-ours``: Bob's rejection on a side branch merged into ``pr-<vid>`` with ``-s ours``
  (none of it lands); then the agent sets ``approved``.

In a clone, ``plangate check --as alice@example.com`` predicts the merge; then Alice merges.

Asserted (the defence): the controller runs ``br-mal-rej`` once and never the two others;
``check`` predicts ``start`` exactly when the controller started the plan.

Seen: all held.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import checkkit
import pytest
from advkit import AGENT, ALICE, BOB, MALLORY, Lab, plan_text
from test_round2_execution_kit import shared

CASES = ["br-bob-rej", "br-mal-rej", "br-bob-ours"]

#: what round 44 broke (strict xfails)
FOUND: dict[str, pytest.MarkDecorator] = {}


def _build(root: Path) -> Lab:
    lab = Lab(root)
    for vid in CASES:
        lab.write(vid, plan_text(vid))
    lab.commit("agent adds plans", AGENT)
    lab.run()  # freeze
    time.sleep(1.05)
    for vid in CASES:
        lab.git("checkout", "-q", "-b", f"pr-{vid}", "main")
        if vid == "br-bob-ours":
            lab.git("checkout", "-q", "-b", f"side-{vid}")
            lab.set_status(vid, "rejected")
            lab.commit(f"bob rejects {vid}", BOB)
            lab.git("checkout", "-q", f"pr-{vid}")
            lab.git("merge", "-q", "-s", "ours", "--no-ff", "-m", "ours", f"side-{vid}", who=AGENT)
        else:
            lab.set_status(vid, "rejected")
            lab.commit(f"reject {vid}", BOB if vid == "br-bob-rej" else MALLORY)
        lab.set_status(vid, "approved")
        lab.commit(f"agent asks {vid}", AGENT)
        lab.git("checkout", "-q", "main")
    chk = root / "chk"
    lab.git("clone", "-q", str(lab.repo), str(chk))
    report: dict[str, Any] = {}
    for vid in CASES:
        out = lab.cli(
            "check", "--config", str(lab.config), "--base", "origin/main",
            "--head", f"origin/pr-{vid}", "--as", ALICE[1], "--format", "json",
            cwd=chk,
        )  # fmt: skip
        report[vid] = {"out": out.stdout, "err": out.stderr[-2000:]}
    lab.check_report = report  # type: ignore[attr-defined]
    shutil.rmtree(chk, ignore_errors=True)
    time.sleep(1.05)
    for vid in CASES:
        lab.git("merge", "--no-ff", "-q", "-m", f"merge pr-{vid}", f"pr-{vid}", who=ALICE)
    lab.run()
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r44-checkveto", _build)


def _p(vids: list[str], prefix: str = "") -> list[Any]:
    return [
        pytest.param(v, id=prefix + v, marks=[FOUND[prefix + v]] if prefix + v in FOUND else [])
        for v in vids
    ]


def test_the_controller_verdicts(lab: Lab) -> None:
    assert lab.calls("br-bob-rej") == [], lab.codes("br-bob-rej")
    assert lab.calls("br-bob-ours") == [], lab.codes("br-bob-ours")
    assert len(lab.calls("br-mal-rej")) == 1, lab.codes("br-mal-rej")


@pytest.mark.parametrize("vid", _p(CASES, "check-"))
def test_check_matches_the_controller(lab: Lab, vid: str) -> None:
    mine = checkkit.prediction(lab, vid)
    predicted = mine.get("outcome") == "start"
    assert predicted == lab.started(vid), json.dumps(mine)[:2000]
