"""Round 43, ``plangate check`` versus ``max_age`` counted from a version's first freeze "on
any path, ever" (docs/approvals.md, round 13): a version frozen long ago under another path.

Config: the bench's plus ``max_age: 6s``. The agent writes ``plans/<vid>-src``; the
controller freezes it; 6.5 s pass; then the agent brings the same version (same hash) to
``plans/<vid>``, set ``pending_approval``; the controller passes; the agent opens ``pr-<vid>``
setting it ``approved``; ``plangate check --as alice@example.com`` predicts the merge; Alice
merges (the approval request):

- ``age-mv``: ``git mv`` of the old frozen folder to the new path.
- ``age-cp``: a copy (the old one stays).
- ``age-readd``: the old folder deleted (a pass between), the same bytes added at the new
  path.
- ``ctl``: a plan written after the wait (control: runs once, predicted ``start``).

Asserted (the defence): the controller refuses ``E_PLAN_EXPIRED`` and ``rec`` never runs
(control: once); ``check`` predicts ``start`` exactly when the controller started the plan;
the fresh-clone audit agrees with what ran.

Seen: the controller held (``E_PLAN_EXPIRED`` for all three, nothing ran; the control ran
once), and so did the audit. BROKE (strict xfails): ``check-age-mv``, ``check-age-cp``,
``check-age-readd``: ``plangate check --as alice@example.com`` predicted ``outcome: start``
(Alice's merge counted, nothing refused, nothing missing) for a version first frozen more
than ``max_age`` ago under another path; the controller refused the merge ``E_PLAN_EXPIRED``.
Even a plain ``git mv`` is not followed: check dates the version from the plan's own path.
Fixed (round 43): ``plangate check``, ``approve``, ``reject`` and ``abort --config`` read the
history through one builder (``controller.commands._shared.read_history`` over
``controller.git.history.config_index``), the index the controller builds: the whole
first-parent history with the merged branches (the path-limited fast path of ``check`` is
gone). ``check`` thus dates a version from its first freeze on any path, as the
controller does (the index's ``freezes``). The 3 ids pass.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import checkkit
import pytest
from advkit import AGENT, Lab, plan_text, window_open, with_widening_window
from test_round2_execution_kit import shared

VIDS = ["age-mv", "age-cp", "age-readd"]
ALL = [*VIDS, "ctl"]
#: the first ``max_age`` in seconds; a lab whose control was judged after it expired (a slow
#: bench) is rebuilt with it doubled (advkit)
MAX_AGE = 6


def _broke(why: str) -> pytest.MarkDecorator:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason="round 43: " + why)


#: what round 43 broke (strict xfails; the docstring's "Seen")
FOUND: dict[str, pytest.MarkDecorator] = {}  # all 3 fixed (see "Fixed")


def _build(root: Path, max_age: int) -> Lab:
    lab = Lab(root, approval=f"max_age: {max_age}s\n")
    for vid in VIDS:
        lab.write(f"{vid}-src", plan_text(vid))
    lab.commit("agent's plans", AGENT)
    lab.run()  # freeze
    lab.git("rm", "-q", "-r", "plans/age-readd-src")
    lab.commit("agent drops age-readd", AGENT)
    lab.run()
    time.sleep(max_age + 0.5)
    lab.git("mv", "plans/age-mv-src", "plans/age-mv")
    shutil.copytree(lab.repo / "plans/age-cp-src", lab.repo / "plans/age-cp")
    lab.write("age-readd", plan_text("age-readd"))
    lab.write("ctl", plan_text("ctl"))
    lab.commit("agent brings the versions back", AGENT)
    frozen = int(time.time())  # ctl's first freeze is no earlier (git dates in seconds)
    lab.run()
    time.sleep(1.05)
    checkkit.ask_in_prs(lab, ALL)
    checkkit.predict(lab, root, ALL)
    checkkit.merge_as_alice(lab, ALL, passes=1)
    # the control was checked and judged before its own max_age ran out, else the lab says
    # nothing of the three old versions: rebuild it wider
    window_open(frozen + max_age - 0.5, "the control's check and approval")
    checkkit.audit_in_clone(lab, root)
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r43-checkage", with_widening_window(_build, first=MAX_AGE))


def test_control_runs_once(lab: Lab) -> None:
    assert len(lab.calls("ctl")) == 1, lab.codes("ctl")


@pytest.mark.parametrize("vid", checkkit.params(VIDS, FOUND))
def test_an_old_version_expired(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)
    assert "E_PLAN_EXPIRED" in lab.codes(vid), lab.codes(vid)


@pytest.mark.parametrize("vid", checkkit.params(ALL, FOUND, "check-"))
def test_check_matches_the_controller(lab: Lab, vid: str) -> None:
    mine = checkkit.prediction(lab, vid)
    predicted = mine.get("outcome") == "start"
    assert predicted == lab.started(vid), json.dumps(mine)[:2000]


@pytest.mark.parametrize("vid", checkkit.params(ALL, FOUND, "audit-"))
def test_the_fresh_clone_audit_agrees(lab: Lab, vid: str) -> None:
    runs = checkkit.audited(lab, vid)
    assert len(runs) == int(lab.started(vid)), lab.audit_report  # type: ignore[attr-defined]
    assert all(e.get("approval_valid") for e in runs), runs
