"""Round 12, who may make a plan run: the remedy the controller prints for a switched branch.

``test_round12_approve_carry.py`` (``switch``) shows the controller refusing to follow a shared
checkout the agent switched to another branch: the pass stops with ``E_GIT: the working tree
is on branch alt, but plangate watches main`` and the remedy ``git switch main (or delete
<state_dir>/index.sqlite to watch alt)``. The second half of that remedy is the history
index, which is where a withdrawal the controller saw is remembered "through rewrites"
(docs/approvals.md: an erased rejection holds its plan, a withdrawn version stays withdrawn).

- ``remedy``: Alice approves ``sw``, Bob (an allowed approver) rejects it, the controller sees
  the rejection; the agent creates ``alt`` at Alice's approval commit and switches the shared
  checkout to it. The operator follows the printed remedy literally (deletes the file it
  names) to "watch alt". Defence: the rejection the controller saw still wins (the plan is
  held or refused ``E_VERSION_WITHDRAWN``), ``sw`` never runs.
  Observed: the rebuilt index knows nothing of Bob's rejection; ``sw`` runs on Alice's
  approval.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab, plan_text
from test_round2_approval_authors import shared_lab


def _build(root: Path) -> Lab:
    lab = Lab(root)
    lab.write("sw", plan_text("sw"))
    lab.commit("agent adds sw", AGENT)
    lab.run()  # freeze
    approval = lab.approve("sw", ALICE)
    lab.set_status("sw", "rejected")
    lab.commit("bob rejects sw", BOB)
    lab.run()  # the controller sees the rejection
    seen = lab.status()["plans/sw"]["status"]
    lab.git("checkout", "-q", "-b", "alt", approval)
    stopped = lab.run(check=False)
    match = re.search(r"delete (\S+) to watch alt", stopped.stderr)
    if match:  # the operator follows the remedy as printed (round 12's text)
        Path(match.group(1)).unlink()
    else:  # the remedy since: back to the watched branch
        lab.git("switch", "-q", "main")
    lab.run()
    (root / "remedy.json").write_text(
        json.dumps({"seen": seen, "rc": stopped.returncode, "stderr": stopped.stderr[-1500:]})
    )
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared_lab(tmp_path_factory, "r12-remedy", _build)


def test_the_switch_was_stopped_with_the_remedy(lab: Lab) -> None:
    info = json.loads((lab.root / "remedy.json").read_text())
    assert info["seen"] == "rejected", info
    assert info["rc"] != 0 and "E_GIT" in info["stderr"] and "git switch main" in info["stderr"], (
        info
    )


# round 12: broke when found (strict xfail); fixed since
def test_following_the_remedy_does_not_run_a_rejected_plan(lab: Lab) -> None:
    assert lab.calls("sw") == [], lab.codes("sw")
    assert not lab.started("sw"), lab.codes("sw")
