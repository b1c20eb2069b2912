"""Round 44, ``plangate check`` versus a collected vote whose voter became a writer after
voting (round 23's ``voterwrites`` rule, now predicted through round 43's whole index).

Config: the bench's plus ``plans/two/**`` needs two approvals. The agent writes each plan
``plans/two/<vid>``; the controller freezes it; Alice approves (``partial``: her vote is
collected). Then:

- ``note``: Alice commits ``NOTES.md`` into the plan's folder (content unchanged);
- ``sub-note``: Alice commits ``plans/two/sub-note/child/NOTES.md`` (below the folder);
- ``co-note``: the agent commits ``NOTES.md`` there with ``Co-authored-by: Alice``;
- ``plus-merge``: nothing; the second approval is a merge by ``alice+ci@example.com``
  (config ``identity_aliases.plus_tags: ["*@example.com"]``: the same person again);
- ``ctl``: nothing (control: her vote counts).

The agent opens ``pr-<vid>`` setting the plan ``approved``; in a clone ``plangate check --as
bob@ops.example.com`` (``alice+ci@example.com`` for ``plus-merge``) predicts the merge;
the merger merges.

Asserted (the defence): the controller never runs the four (Alice's vote is gone, or is hers
again: partial)
and runs the control once; ``check`` predicts ``start`` exactly when the controller started.

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
from advkit import AGENT, ALICE, BOB, Lab, plan_text
from test_round2_execution_kit import shared

RULES = (
    'rules:\n  - match: {paths: ["plans/two/**"]}\n    require: [{count: 2}]\n'
    'identity_aliases:\n  plus_tags: ["*@example.com"]\n'
)
WROTE = ["note", "sub-note", "co-note", "plus-merge"]
CASES = [*WROTE, "ctl"]
ALICE_CI = ("Alice CI", "alice+ci@example.com")
MERGER = {v: BOB for v in CASES} | {"plus-merge": ALICE_CI}

#: what round 44 broke (strict xfails)
FOUND: dict[str, pytest.MarkDecorator] = {}


def _build(root: Path) -> Lab:
    lab = Lab(root, approval=RULES)
    for vid in CASES:
        lab.write(f"two/{vid}", plan_text(vid))
    lab.commit("agent adds plans", AGENT)
    lab.run()  # freeze
    time.sleep(1.05)
    for vid in CASES:
        lab.approve(f"two/{vid}", ALICE)
    lab.run()  # partial
    lab.write("two/note", "alice: fine\n", filename="NOTES.md")
    lab.commit("alice notes", ALICE)
    lab.write("two/sub-note/child", "alice: fine\n", filename="NOTES.md")
    lab.commit("alice notes below", ALICE)
    lab.write("two/co-note", "notes\n", filename="NOTES.md")
    lab.commit("notes\n\nCo-authored-by: Alice <alice@example.com>", AGENT)
    lab.run()
    time.sleep(1.05)
    for vid in CASES:
        lab.git("checkout", "-q", "-b", f"pr-{vid}", "main")
        lab.set_status(f"two/{vid}", "approved")
        lab.commit(f"agent asks {vid}", AGENT)
        lab.git("checkout", "-q", "main")
    chk = root / "chk"
    lab.git("clone", "-q", str(lab.repo), str(chk))
    report: dict[str, Any] = {}
    for vid in CASES:
        out = lab.cli(
            "check", "--config", str(lab.config), "--base", "origin/main",
            "--head", f"origin/pr-{vid}", "--as", MERGER[vid][1], "--format", "json",
            cwd=chk,
        )  # fmt: skip
        report[vid] = {"out": out.stdout, "err": out.stderr[-2000:]}
    lab.check_report = report  # type: ignore[attr-defined]
    shutil.rmtree(chk, ignore_errors=True)
    time.sleep(1.05)
    for vid in CASES:
        lab.git("merge", "--no-ff", "-q", "-m", f"merge pr-{vid}", f"pr-{vid}", who=MERGER[vid])
    lab.run()
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r44-checkvoter", _build)


def _p(vids: list[str], prefix: str = "") -> list[Any]:
    return [
        pytest.param(v, id=prefix + v, marks=[FOUND[prefix + v]] if prefix + v in FOUND else [])
        for v in vids
    ]


def test_control_runs_once(lab: Lab) -> None:
    assert len(lab.calls("ctl")) == 1, lab.codes("two/ctl")


@pytest.mark.parametrize("vid", _p(WROTE))
def test_the_voter_who_wrote_no_longer_counts(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(f"two/{vid}")
    assert not lab.started(f"two/{vid}"), lab.codes(f"two/{vid}")


@pytest.mark.parametrize("vid", _p(CASES, "check-"))
def test_check_matches_the_controller(lab: Lab, vid: str) -> None:
    mine = checkkit.prediction(lab, vid, f"two/{vid}")
    predicted = mine.get("outcome") == "start"
    assert predicted == lab.started(f"two/{vid}"), json.dumps(mine)[:2000]
