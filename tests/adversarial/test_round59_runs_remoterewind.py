"""Round 59 (runs): ``_lostreset.py``'s rewind in REMOTE mode, over a real ``git daemon``.

The attack: remote mode (``remote: {url: git://127.0.0.1:<port>/origin.git}``; the
controller clones into its state directory). A plan with gates on actions 2 and 3 runs to
the pause at gate 3 (Alice approved it and gate 2; action 2 is ``idempotent: false``).
Then ``<state_dir>/index.sqlite`` (a cache) and the plan's journal are lost, and the agent
force-pushes the branch back to Alice's gate-2 approval (``git push --force``): the branch
shows the controller's pause at gate 2 and her answer, no later record. Two passes.
``remote-kept``: the same plan beside it with its journal kept.

Asserted: action 2 ran once, action 3 never.

Broke: none. Held: both (action 2 once; each plan paused at gate 3 again after a new
``start``/``await-approval`` pair, with no word of the force-push). Remote mode keeps what
local mode loses here (its own clone and run folders in the state directory).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, Lab, cases
from test_round2_execution_kit import shared
from test_round59_runs_lostreset import _plan
from writerkit import RemoteFlow, served

VIDS = ["remote", "remote-kept"]


def _build(root: Path) -> Lab:
    lab = Lab(root)
    with served(lab) as url:
        push = RemoteFlow(lab, url).run
        for vid in VIDS:
            lab.write(vid, _plan(vid))
        lab.commit("plans")
        push()
        for vid in VIDS:
            lab.set_status(vid, "approved")
        lab.commit("approve", ALICE)
        push()  # action 1, gate 2
        for vid in VIDS:
            lab.set_status(vid, "approved")
        gate2 = lab.commit("approve gate 2", ALICE)
        push()  # action 2, gate 3
        lab.before = {v: lab.plan(v)["plan"]["status"] for v in VIDS}  # type: ignore[attr-defined]
        shutil.rmtree(lab.state / "journal" / "plans%2Fremote")
        (lab.state / "index.sqlite").unlink()
        lab.git("reset", "-q", "--hard", gate2)
        lab.git("push", "-q", "--force", "origin", "main")
        lab.run()
        lab.run()
        lab.git("fetch", "-q", "origin")
        lab.git("reset", "-q", "--hard", "origin/main")
        lab.after = {v: lab.plan(v)["plan"]["status"] for v in VIDS}  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r59-remoterewind", _build)


def test_both_waited_at_gate_3(lab: Lab) -> None:
    assert set(lab.before.values()) == {"awaiting_approval"}, lab.before  # type: ignore[attr-defined]


BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))
def test_action_2_never_runs_again(lab: Lab, vid: str) -> None:
    assert len(lab.calls(f"{vid}-1")) == 1, lab.calls(f"{vid}-1")
    assert len(lab.calls(f"{vid}-2")) == 1, (
        lab.after,
        lab.calls(f"{vid}-2"),
        lab.codes(vid)[-1200:],
    )  # type: ignore[attr-defined]
    assert lab.calls(f"{vid}-3") == [], lab.calls(f"{vid}-3")
