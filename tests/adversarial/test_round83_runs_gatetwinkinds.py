"""Round 83 (runs), variants of ``test_round83_runs_gatetwin.py`` the attacker did not try
(r83gatetwin): every paused state and another kind of twin, and the release made with an
approval in one commit (local mode).

One rule (docs/approvals.md, "An approval made while the plan is held"): a hold
(``E_PLAN_AMBIGUOUS``) keeps what it found of the plan (its status, version and open request)
and its release takes it back, so a paused run is still paused once the twin goes, never a
plan "from nothing" whose gate approval reads as a first one (``E_ALREADY_EXECUTED``); a status
a human set while the plan was held approves nothing and is refused ``E_PLAN_AMBIGUOUS`` by its
own author, the plan back at its pause; a new approval answers the pause once.

Lab (one). Action 1, then action 2 ``rec <v>2``:
- ``ya``: gated action 2, paused at the gate; the agent commits ``plans/ya/PLAN.yaml`` (the
  twin text) in the plan's own folder; Alice approves while held; the agent removes it;
- ``ak``: action 1 ``flk`` fails once with ``on_failure: ask`` (paused ``awaiting_approval``,
  an ask); the twin ``plans/AK/PLAN.yml``; Alice approves while held; the agent removes it;
- ``fl``: action 1 ``flk`` fails once (``failed``: a resume); the twin ``plans/FL/PLAN.yml``;
  Alice approves (a resume) while held; the agent removes it;
- ``ra``: paused at the gate; the twin ``plans/RA/PLAN.yml``; nothing set while held; the
  agent removes it: the run is back at its gate with nothing refused, and her one approval
  after that answers it. (Alice removing the twin herself makes her a writer of the plan:
  whoever removes one of two claims chooses the content left, round 69's rule; so her
  approval in that commit is ``E_SELF_APPROVAL``: not asserted here.)
Then Alice approves again every plan not completed; a pass.

Checks: ``end`` (after the twin went: every plan back at its pause; ``ra`` with nothing
refused, the others refused ``E_PLAN_AMBIGUOUS`` by alice, never ``E_ALREADY_EXECUTED``,
never by the agent); ``resume`` (action 2 once, completed, no twin action); ``audit`` (a fresh
clone: each plan's valid runs each of its own approval, no twin path).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab, plan_text
from test_round2_execution_kit import shared

VIDS = ["ya", "ak", "fl", "ra"]

FLK = """\
import json, os, sys
tag = sys.argv[1]
with open(os.environ["REC_LOG"], "a", encoding="utf-8") as f:
    f.write(json.dumps({"argv": [tag + "-try"], "stdin": ""}) + "\\n")
mark = os.environ["REC_LOG"] + "." + tag + ".failed"
if not os.path.exists(mark):
    open(mark, "w").close()
    sys.exit(3)
print(json.dumps({"ok": True}))
"""


def _text(v: str, status: str = "pending_approval", tag2: str = "") -> str:
    two = f'    params: {{tag: "{tag2 or v + "2"}"}}\n'
    if v in ("ak", "fl"):
        how = "ask" if v == "ak" else "stop"
        return (
            f'plan:\n  name: "{v}"\n  task: "variant {v}"\n  status: {status}\n'
            "available_tools:\n  - name: flk\n  - name: rec\nactions:\n"
            f'  - id: 1\n    tool: flk\n    why: "fails once"\n    on_failure: {how}\n'
            f'    params: {{tag: "{v}"}}\n'
            f'  - id: 2\n    tool: rec\n    why: "second"\n{two}'
        )
    return plan_text(v, status=status) + (
        f'  - id: 2\n    tool: rec\n    why: "second"\n    requires_approval: true\n{two}'
    )


TWINS = {
    "ya": "plans/ya/PLAN.yaml",
    "ak": "plans/AK/PLAN.yml",
    "fl": "plans/FL/PLAN.yml",
    "ra": "plans/RA/PLAN.yml",
}


def _build(root: Path) -> Lab:
    (root / "flk.py").write_text(FLK)
    argv = json.dumps([sys.executable, str(root / "flk.py"), "{tag}"])
    env = f"{{REC_LOG: {json.dumps(str(root / 'lab' / 'ran.log'))}}}"
    lab = Lab(root / "lab", tools=f"flk: {{kind: exec, argv: {argv}, env: {env}}}\n")
    for v in VIDS:
        lab.write(v, _text(v))
    lab.commit("agent plans")
    lab.run()
    for v in VIDS:
        lab.set_status(v, "approved")
    lab.commit("approve all", ALICE)
    lab.run()
    seen: dict[str, Any] = {"paused": {k: r.get("status") for k, r in lab.status().items()}}
    for v, rel in TWINS.items():
        path = lab.repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_text(v, status="approved", tag2=f"{v}-twin"))
    lab.commit("agent: twins at the pause", AGENT)
    lab.run()
    seen["mid"] = {k: r.get("held") for k, r in lab.status().items()}
    held = [v for v in VIDS if v != "ra"]
    for v in held:
        lab.set_status(v, "approved")
    lab.git("add", *[f"plans/{v}/PLAN.yml" for v in held])
    lab.git("commit", "-q", "-m", "approve while held", who=ALICE)
    lab.run()
    for v in VIDS:
        lab.git("--literal-pathspecs", "rm", "-q", "--cached", TWINS[v])
        (lab.repo / TWINS[v]).unlink()
    lab.git("commit", "-q", "-m", "agent: twins removed", who=AGENT)
    lab.run()
    seen["end"] = {k: (r.get("status"), json.dumps(r)[:600]) for k, r in lab.status().items()}
    seen["end_files"] = {v: lab.plan(v) for v in VIDS}
    again = [v for v in VIDS if seen["end"].get(f"plans/{v}", ("",))[0] != "completed"]
    for v in again:
        lab.set_status(v, "approved")
    if again:
        lab.git("add", *[f"plans/{v}/PLAN.yml" for v in again])
    lab.git("commit", "-q", "--allow-empty", "-m", "approve again", who=ALICE)
    lab.run()
    seen["again"] = {k: (r.get("status"), json.dumps(r)[:600]) for k, r in lab.status().items()}
    seen["calls"] = {v: (len(lab.calls(f"{v}2")), len(lab.calls(f"{v}-twin"))) for v in VIDS}
    clone = root / "clone"
    subprocess.run(["git", "clone", "-q", str(lab.repo), str(clone)], check=True)
    out = lab.cli("audit", "--json", cwd=clone)
    seen["audit_err"] = out.stderr[-2000:]
    seen["report"] = json.loads(out.stdout) if out.stdout.strip() else {}
    lab.seen = seen  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r83-gatetwinkinds", _build)


@pytest.mark.parametrize("vid", VIDS)
def test_end(lab: Lab, vid: str) -> None:
    """Held while the twin stood; once it went, back at its pause (``ra``: nothing refused),
    the approval made while held refused ``E_PLAN_AMBIGUOUS`` by its author (alice), never
    taken for a copy of the run (``E_ALREADY_EXECUTED``)."""
    seen = lab.seen  # type: ignore[attr-defined]
    assert seen["paused"][f"plans/{vid}"] == ("failed" if vid == "fl" else "awaiting_approval")
    assert seen["mid"][f"plans/{vid}"] == "E_PLAN_AMBIGUOUS", seen["mid"]
    status, row = seen["end"][f"plans/{vid}"]
    assert "E_ALREADY_EXECUTED" not in row, row
    refusal = seen["end_files"][vid].get("approval") or {}
    if vid == "ra":
        assert status == "awaiting_approval", row
        assert refusal.get("status") != "refused", refusal
        return
    assert status == ("failed" if vid == "fl" else "awaiting_approval"), row
    assert refusal.get("code") == "E_PLAN_AMBIGUOUS", refusal
    assert refusal.get("by") == "alice@example.com", refusal


@pytest.mark.parametrize("vid", VIDS)
def test_resume(lab: Lab, vid: str) -> None:
    """A new approval answers the pause: action 2 once, the run completed, no twin action."""
    seen = lab.seen  # type: ignore[attr-defined]
    assert seen["calls"][vid] == (1, 0), (seen["calls"][vid], seen["again"][f"plans/{vid}"])
    assert seen["again"][f"plans/{vid}"][0] == "completed", seen["again"][f"plans/{vid}"]


@pytest.mark.parametrize("vid", VIDS)
def test_audit(lab: Lab, vid: str) -> None:
    seen = lab.seen  # type: ignore[attr-defined]
    assert "Traceback" not in seen["audit_err"], seen["audit_err"]
    entries = [e for e in seen["report"].get("executions", []) if e.get("approval_valid")]
    assert all(e.get("plan") in {f"plans/{v}" for v in VIDS} for e in entries), entries
    mine = [e for e in entries if e.get("plan") == f"plans/{vid}"]
    assert len({e["approval_commit"] for e in mine}) == len(mine) == 2, mine
    assert seen["report"].get("ok") is True, seen["report"].get("findings")
