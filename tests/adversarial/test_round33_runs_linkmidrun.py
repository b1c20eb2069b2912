"""Round 33, one hostile commit never stalls the pass: a running plan's folder replaced by a
committed symlink mid-run (no kill).

Plan ``m``: action 1 ``rec``, action 2 ``mut``, an exec tool standing for the agent sharing
the checkout: it runs ``git rm -r plans/m``, removes what is left, makes ``plans/m-copy``
(one file) and commits ``plans/m`` as a symlink to ``m-copy``, as the agent. Alice approves
``m``; one ``run --once`` pass (given 10 s to end, only to wait); then a bystander plan is
written, approved, and two passes follow (when the first pass ended).

- ``link-midrun``: asserted: every pass exits 0 and the bystander's ``rec`` ran once; ``m``'s
  ``rec`` ran at most once. **Broke** (round 33): the pass spins logging ``log_not_written``
  (E_UNSAFE_PATH: ``plans/m`` is a symbolic link) thousands of times a second and never
  ends; no other plan is decided or run. Should: the outcome waits with its code (as for a
  symlink in the working tree only) and the pass ends.

Fixed (round 33, the same hour): an outcome that cannot be committed (E_UNSAFE_PATH) was put
back in the queue at once and `commit_finished` went round for good; it now stops when only
outcomes that came back are left: the outcome waits and the pass ends; and `status`
lists a run this controller started whose plan the branch no longer shows, with why its
outcome waits.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, plan_text
from test_round2_execution_kit import shared

MUT = """\
import os, shutil, subprocess
r = {repo!r}
env = dict(os.environ, GIT_AUTHOR_NAME="Agent", GIT_AUTHOR_EMAIL="agent@example.com",
           GIT_COMMITTER_NAME="Agent", GIT_COMMITTER_EMAIL="agent@example.com")
subprocess.run(["git", "rm", "-rqf", "plans/m"], cwd=r, env=env, check=True)
shutil.rmtree(r + "/plans/m", ignore_errors=True)
os.makedirs(r + "/plans/m-copy", exist_ok=True)
open(r + "/plans/m-copy/x.txt", "w").write("x\\n")
os.symlink("m-copy", r + "/plans/m")
subprocess.run(["git", "add", "-A"], cwd=r, env=env, check=True)
subprocess.run(["git", "commit", "-qm", "link"], cwd=r, env=env, check=True)
print("{{}}")
"""
R33 = (
    "round 33: a running plan's folder committed as a symlink mid-run: the pass spins on "
    "log_not_written (E_UNSAFE_PATH) and never ends"
)


def _build(root: Path) -> Lab:
    lab = Lab(root)
    mut = root / "mut.py"
    mut.write_text(MUT.format(repo=str(lab.repo)))
    lab.write_config(tools=f"mut: {{kind: exec, argv: {json.dumps([sys.executable, str(mut)])}}}\n")
    extra = '  - id: 2\n    tool: mut\n    why: "agent work"\n    params: {}\n'
    text = plan_text("m", extra_actions=extra)
    lab.write("m", text.replace("  - name: rec\n", "  - name: rec\n  - name: mut\n"))
    lab.commit("plan m", AGENT)
    lab.run()
    lab.approve("m", ALICE)
    lab.outs = []  # type: ignore[attr-defined]

    def step() -> bool:
        try:
            lab.outs.append(lab.run(timeout=10, check=False).returncode)  # type: ignore[attr-defined]
        except subprocess.TimeoutExpired:  # the pass never ended: no further pass
            lab.outs.append("timeout")  # type: ignore[attr-defined]
            return False
        return True

    if step():
        lab.write("bystander", plan_text("bystander"))
        lab.commit("bystander", AGENT, "plans/bystander")
        if step():
            lab.set_status("bystander", "approved")
            lab.commit("approve bystander", ALICE, "plans/bystander")
            step()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r33-linkmidrun", _build)


def test_at_most_once(lab: Lab) -> None:
    assert len(lab.calls("m")) <= 1


# Found broken in round 33 (R33 is the record); fixed the same hour: no marker.
def test_link_midrun(lab: Lab) -> None:
    assert lab.outs == [0, 0, 0]  # type: ignore[attr-defined]
    assert len(lab.calls("bystander")) == 1


# Found open in round 33 ("after the pass, plangate status has no row for a started plan
# whose folder the branch now holds as a symlink"); fixed the same session: no marker.
def test_link_midrun_not_silent(lab: Lab) -> None:
    rows = lab.status()
    assert "plans/m" in rows and "E_UNSAFE_PATH" in json.dumps(rows["plans/m"])
