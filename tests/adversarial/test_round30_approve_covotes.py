"""Round 30, quorum: one approval commit that names a second person.

Config: the bench's (approvers Alice and ``*@ops.example.com``), plus ``plans/two/**`` needs
two approvals. The agent writes each plan; the controller freezes it. Then:

- ``co-vote``: Bob approves on main in a commit whose message carries
  ``Co-authored-by: Carol <carol@ops.example.com>``.
- ``co-merge``: a pull request in which the agent sets ``approved``; Bob merges it
  ``--no-ff`` with ``Co-authored-by: Carol`` in the merge message.
- ``co-status``: on a pull request Carol (unsigned, no trailer) sets ``approved``; the agent
  touches nothing else; Bob merges it ``--no-ff``.
- ``committer``: Bob approves in a commit he authored and Carol committed
  (``identity: author``: one identity per commit).
- ``ctl``: Bob approves, then Carol approves: runs once.

Asserted: one commit is one person's approval: ``rec`` never runs (``partial`` with Bob only);
``ctl`` runs once.

Results: every variant held (``partial`` with Bob's vote only; ``ctl`` ran once).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, BOB, CAROL, Lab, plan_text
from test_round2_execution_kit import shared

VIDS = ["co-vote", "co-merge", "co-status", "committer"]
FOUND: dict[str, pytest.MarkDecorator] = {}
CO = "\n\nCo-authored-by: Carol <carol@ops.example.com>\n"


def _build(root: Path) -> Lab:
    lab = Lab(
        root, approval='rules:\n  - match: {paths: ["plans/two/**"]}\n    require: [{count: 2}]\n'
    )
    for vid in [*VIDS, "ctl"]:
        lab.write(f"two/{vid}", plan_text(vid))
    lab.commit("agent adds plans", AGENT)
    lab.run()
    lab.approve("two/co-vote", BOB, message="approve co-vote" + CO)
    lab.set_status("two/committer", "approved")
    lab.git("add", "-A")
    lab.git(
        "-c", f"user.name={CAROL[0]}", "-c", f"user.email={CAROL[1]}",
        "commit", "-q", "--author", f"{BOB[0]} <{BOB[1]}>", "-m", "approve committer",
    )  # fmt: skip
    lab.approve("two/ctl", BOB)
    for vid, who in (("co-merge", AGENT), ("co-status", CAROL)):
        lab.git("checkout", "-q", "-b", f"pr-{vid}")
        lab.set_status(f"two/{vid}", "approved")
        lab.commit(f"approve {vid}", who)
        lab.git("checkout", "-q", "main")
        msg = f"merge {vid}" + (CO if vid == "co-merge" else "")
        lab.git("merge", "-q", "--no-ff", "-m", msg, f"pr-{vid}", who=BOB)
    lab.run()
    lab.approve("two/ctl", CAROL)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r30-covotes", _build)


def _p(vids: list[str]) -> list[Any]:
    return [pytest.param(v, id=v, marks=[FOUND[v]] if v in FOUND else []) for v in vids]


def test_control_runs_once(lab: Lab) -> None:
    assert len(lab.calls("ctl")) == 1, lab.codes("two/ctl")


@pytest.mark.parametrize("vid", _p(VIDS))
def test_one_commit_is_one_vote(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(f"two/{vid}")
