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
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab, plan_text, window_open, with_widening_window
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
    for vid in ALL:
        lab.git("checkout", "-q", "-b", f"pr-{vid}", "main")
        lab.set_status(vid, "approved")
        lab.commit(f"agent asks {vid}", AGENT)
        lab.git("checkout", "-q", "main")
    chk = root / "chk"
    lab.git("clone", "-q", str(lab.repo), str(chk))
    report: dict[str, Any] = {}
    for vid in ALL:
        out = lab.cli(
            "check", "--config", str(lab.config), "--base", "origin/main",
            "--head", f"origin/pr-{vid}", "--as", "alice@example.com", "--format", "json",
            cwd=chk,
        )  # fmt: skip
        report[vid] = {"out": out.stdout, "err": out.stderr[-2000:]}
    lab.check_report = report  # type: ignore[attr-defined]
    for vid in ALL:
        lab.git("merge", "--no-ff", "-q", "-m", f"merge pr-{vid}", f"pr-{vid}", who=ALICE)
    lab.run()
    # the control was checked and judged before its own max_age ran out, else the lab says
    # nothing of the three old versions: rebuild it wider
    window_open(frozen + max_age - 0.5, "the control's check and approval")
    shutil.rmtree(chk, ignore_errors=True)
    clone = root / "clone"
    lab.git("clone", "-q", str(lab.repo), str(clone))
    res = lab.cli("audit", "--json", cwd=clone)
    lab.audit_report = json.loads(res.stdout) if res.stdout.strip() else {"raw": res.stderr}  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r43-checkage", with_widening_window(_build, first=MAX_AGE))


def _p(vids: list[str], prefix: str = "") -> list[Any]:
    return [
        pytest.param(v, id=prefix + v, marks=[FOUND[prefix + v]] if prefix + v in FOUND else [])
        for v in vids
    ]


def test_control_runs_once(lab: Lab) -> None:
    assert len(lab.calls("ctl")) == 1, lab.codes("ctl")


@pytest.mark.parametrize("vid", _p(VIDS))
def test_an_old_version_expired(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)
    assert "E_PLAN_EXPIRED" in lab.codes(vid), lab.codes(vid)


@pytest.mark.parametrize("vid", _p(ALL, "check-"))
def test_check_matches_the_controller(lab: Lab, vid: str) -> None:
    row = lab.check_report[vid]  # type: ignore[attr-defined]
    assert row["out"].strip(), row["err"]
    report = json.loads(row["out"])
    rows = report if isinstance(report, list) else report.get("plans", [])
    mine = [r for r in rows if r.get("plan") == f"plans/{vid}"]
    assert mine, row["out"][:2000]
    predicted = mine[0].get("outcome") == "start"
    assert predicted == lab.started(vid), json.dumps(mine)[:2000]


@pytest.mark.parametrize("vid", _p(ALL, "audit-"))
def test_the_fresh_clone_audit_agrees(lab: Lab, vid: str) -> None:
    report = lab.audit_report  # type: ignore[attr-defined]
    runs = [e for e in report.get("executions", []) if e.get("plan") == f"plans/{vid}"]
    assert len(runs) == int(lab.started(vid)), report
    assert all(e.get("approval_valid") for e in runs), runs
