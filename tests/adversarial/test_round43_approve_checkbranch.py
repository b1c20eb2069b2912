"""Round 43, ``plangate check`` versus rounds 41/42's folder-writer rules when the writing is
INSIDE the pull request it predicts (the merger's own commit on the branch).

Every variant ``plans/<vid>`` is the agent's parent plan, frozen on main. The agent opens
``pr-<vid>``; on it Alice (an allowed approver) makes one commit, then the agent sets the
parent ``approved``; ``plangate check --as alice@example.com`` predicts the merge; Alice
merges it (the merge is the approval request):

- ``br-note``: Alice's commit adds ``child/NOTES.md`` below the parent (round 41).
- ``br-nest``: Alice's commit adds a draft plan ``child/PLAN.yml`` below the parent.
- ``br-status-comment``: the agent's nested plan ``child/PLAN.yml`` is on main; Alice's
  commit approves it and adds a comment line to it (round 42).
- ``br-lib-note``: the parent pins the agent's library ``plans/br-lib-note-lib``; Alice's
  commit adds ``NOTES.md`` to the library's folder (round 23).
- ``ctl``: Alice's commit touches ``README`` only (control: runs once).

Asserted (the defence): the controller refuses ``E_SELF_APPROVAL`` and ``rec`` never runs
(control once); ``check`` predicts ``start`` exactly when the controller started the plan;
the fresh-clone audit agrees with what ran.

Seen: all held (``E_SELF_APPROVAL`` for Alice's merge in every variant, predicted by
``check``; the control ran once; the audit agreed). Contrast ``test_round43_approve_
checkcarry.py``: the same writers carried in from ANOTHER path are missed by ``check``.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab, plan_text
from test_round2_execution_kit import shared

VIDS = ["br-note", "br-nest", "br-status-comment", "br-lib-note"]
ALL = [*VIDS, "ctl"]
FOUND: dict[str, pytest.MarkDecorator] = {}


def _broke(why: str) -> pytest.MarkDecorator:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason="round 43: " + why)


def _parent(vid: str, path: str, digest: str) -> str:
    return f"""\
plan:
  name: "{vid}"
  task: "attack variant {vid}"
  status: pending_approval
actions:
  - id: 1
    plan: {{path: {path}, hash: "{digest}"}}
    why: "run the pinned plan"
"""


def _alice(lab: Lab, vid: str) -> None:
    base = lab.repo / "plans" / vid
    if vid == "br-note":
        (base / "child").mkdir()
        (base / "child/NOTES.md").write_text("alice: reviewed\n")
    elif vid == "br-nest":
        lab.write(f"{vid}/child", plan_text(f"{vid}-child", status="draft"))
    elif vid == "br-status-comment":
        lab.set_status(f"{vid}/child", "approved")
        path = base / "child/PLAN.yml"
        path.write_text(path.read_text() + "# alice: reviewed\n")
    elif vid == "br-lib-note":
        (lab.repo / "plans/br-lib-note-lib/NOTES.md").write_text("alice: reviewed\n")
    else:
        (lab.repo / "README").write_text("plans, reviewed\n")
    lab.commit(f"alice on {vid}", ALICE)


def _build(root: Path) -> Lab:
    lab = Lab(root)
    lab.write("br-lib-note-lib", plan_text("br-lib-note-lib", status="draft"))
    lab.commit("agent library", AGENT)
    digest = lab.cli("hash", "plans/br-lib-note-lib", cwd=lab.repo).stdout.strip().split()[-1]
    lab.write("br-lib-note", _parent("br-lib-note", "plans/br-lib-note-lib", digest))
    for vid in ["br-note", "br-nest", "br-status-comment", "ctl"]:
        lab.write(vid, plan_text(vid))
    lab.write("br-status-comment/child", plan_text("br-status-comment-child"))
    lab.commit("agent adds plans", AGENT)
    lab.run()  # freeze
    lab.run()
    time.sleep(1.05)
    for vid in ALL:
        lab.git("checkout", "-q", "-b", f"pr-{vid}", "main")
        _alice(lab, vid)
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
    time.sleep(1.05)
    for vid in ALL:
        lab.git("merge", "--no-ff", "-q", "-m", f"merge pr-{vid}", f"pr-{vid}", who=ALICE)
    lab.run()
    lab.run()
    shutil.rmtree(chk, ignore_errors=True)
    clone = root / "clone"
    lab.git("clone", "-q", str(lab.repo), str(clone))
    res = lab.cli("audit", "--json", cwd=clone)
    lab.audit_report = json.loads(res.stdout) if res.stdout.strip() else {"raw": res.stderr}  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r43-checkbranch", _build)


def _p(vids: list[str], prefix: str = "") -> list[Any]:
    return [
        pytest.param(v, id=prefix + v, marks=[FOUND[prefix + v]] if prefix + v in FOUND else [])
        for v in vids
    ]


RUNS = {"br-lib-note": "br-lib-note-lib"}


def _ran(lab: Lab, vid: str) -> int:
    return len(lab.calls(RUNS.get(vid, vid)))


def test_control_runs_once(lab: Lab) -> None:
    assert _ran(lab, "ctl") == 1, lab.codes("ctl")


@pytest.mark.parametrize("vid", _p(VIDS))
def test_the_merger_who_wrote_below_cannot_approve(lab: Lab, vid: str) -> None:
    assert _ran(lab, vid) == 0, lab.codes(vid)
    assert not lab.started(vid), lab.codes(vid)
    assert "E_SELF_APPROVAL" in lab.codes(vid), lab.codes(vid)


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
