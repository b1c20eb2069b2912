"""Round 83, approval and policy: a quorum counted with a twin-folder writer's vote, a case
move between twin spellings after an approval, and ``plangate approve`` of a plan whose
file says another status than the controller's row (round 82: ``show --config`` now prints
the row's status).

Lab (one, built once). Config: group ``ops`` (Alice, ``*@ops.example.com``); rule
``plans/q-*`` needs 2 of ``ops``. Pass 1 freezes the agent's plans.
- ``q-cn``: Carol (an approver, in ``ops``) commits ``plans/Q-CN/NOTES.md`` (a case twin of
  ``plans/q-cn``); Bob approves (pass: partial), then Carol approves (pass).
- ``q-cw`` (control of the rule): Carol's note in ``plans/q-cw/NOTES.md``; Bob, then Carol:
  Carol refused ``E_SELF_APPROVAL``, nothing runs.
- ``q-ok`` (control): Bob, then Alice: runs once.
- ``mv``: Alice approves ``plans/mv``; before the pass the agent moves it, bytes kept, to
  the case twin ``plans/MV``: at most one run, of the version she approved, and the audit
  agrees.
- ``rw``: Mallory (no approver) commits ``status: completed`` into the pending ``plans/rw``
  (ignored: ``E_ILLEGAL_TRANSITION``); Alice reads ``plangate show --config`` (the row's
  ``pending_approval``, ``file_status: completed``) and runs ``plangate approve plans/rw``:
  her approval is the one that runs it, once, and the audit agrees.
- ``ok`` (control): Alice approves ``plans/ok``; runs once.

Variants: ``<slug>:ran`` (runs as said above), ``<slug>:audit`` (the fresh clone's audit
calls exactly the controller's completed runs valid), plus ``q-cn:who`` (the counted
approvals of ``q-cn`` never include Carol) and ``rw:show`` (``show --config`` named the
row's status before her approval).

Seen (round 83), fixed (2026-12-01, r83twinwriter): a folder's writers are keyed by its place
on a checkout (``folder_key`` folds every part by ``names.fold_path``, the backslash split of
``path_parts``; an 8.3 short-named writer folder is matched against the plan's folder by
``same_path``; the plans folder's case twins are read by the history walk), so a file in a twin
folder is exactly what the same file in the plan's folder is: its committer is refused
``E_SELF_APPROVAL`` by the controller, ``check`` and the fresh-clone audit alike. Before the
fix: 3 ids broke (``q-cn:ran``, ``q-cn:audit``, ``q-cn:who``; class twin-folder writer, as
``test_round83_approve_twinwriters``): Carol's ``plans/Q-CN/NOTES.md`` (the folder
``plans/q-cn`` on a case-insensitive checkout) left her no writer, so Bob's and her approvals
met the 2-of-``ops`` quorum and ``q-cn`` ran: the controller's record reads ``approval:
{status: approved, by: carol@ops.example.com, approvals: [{by: bob@ops.example.com}, {by:
carol@ops.example.com}]}``, and the fresh clone's audit called the run valid (approver
``carol@ops.example.com``), while the same note in ``plans/q-cw/`` was ``approval refused:
E_SELF_APPROVAL: carol@ops.example.com wrote or changed this plan's content`` and ``q-cw``
stayed partial. docs/approvals.md (Policy: Quorum): "Approvals of the same hash accumulate
across approval commits by distinct people, each one verified by every §5 check"
(``E_SELF_APPROVAL`` among them). Held: ``q-cw``, ``q-ok`` (ran once), ``mv`` (Alice's
approval, then a byte-kept move to ``plans/MV`` in the same pass: ran once as ``plans/MV``,
approver Alice, audit valid), ``rw`` (``show --json --config`` gave ``plan.status:
pending_approval``, ``file_status: completed`` and the warning "the controller holds
'pending_approval' (last event: E_ILLEGAL_TRANSITION: mallory@example.com set status completed
...; ignored)"; Alice's ``plangate approve plans/rw`` committed and it ran once on her
approval), ``ok``. ``q-cn:who`` reads the counted approvals (the record's ``approvals:`` list):
the fixed record names Carol only in her refusal.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, CAROL, MALLORY, Lab, cases, clone_audit, plan_text
from mcpkit import PLANGATE
from test_round2_execution_kit import shared

from controller.plan.yamlio import read_yaml

APPROVAL = """\
groups:
  ops: ["alice@example.com", "*@ops.example.com"]
rules:
  - match: {paths: ["plans/q-*"]}
    require: [{group: ops, count: 2}]
"""
SLUGS = ["q-cn", "q-cw", "q-ok", "mv", "rw", "ok"]


def _put(lab: Lab, rel: str, text: str) -> None:
    path = lab.repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))


def _cli(lab: Lab, who: tuple[str, str], *args: str) -> str:
    done = subprocess.run(
        [PLANGATE, *args], cwd=lab.repo, env=lab.env(who), capture_output=True, text=True,
        check=False,
    )  # fmt: skip
    return f"{done.returncode} {done.stdout}{done.stderr}"


def _build(root: Path) -> Lab:
    lab = Lab(root, approval=APPROVAL)
    got: dict[str, Any] = {}
    for slug in SLUGS:
        lab.write(slug, plan_text(slug))
    lab.commit("agent: plans", AGENT)
    lab.run()
    _put(lab, "plans/Q-CN/NOTES.md", "Looks fine.\n")
    _put(lab, "plans/q-cw/NOTES.md", "Looks fine.\n")
    lab.commit("carol: notes", CAROL)
    lab.set_status("rw", "completed")
    lab.commit("mallory: rw completed", MALLORY)
    lab.run()
    shown = _cli(lab, ALICE, "show", "--json", "--config", str(lab.config), "plans/rw")
    data = json.loads(shown.split(" ", 1)[1])
    got["show-rw"] = {k: data.get(k) for k in ("file_status", "record_warning")}
    got["show-rw"]["status"] = (data.get("plan") or {}).get("status")
    got["approve-rw"] = _cli(lab, ALICE, "approve", "--config", str(lab.config), "plans/rw")
    lab.git("checkout", "-q", "--", ".")
    for slug in ("q-cn", "q-cw", "q-ok"):
        lab.set_status(slug, "approved")
    lab.commit("bob: approve the quorum plans", BOB)
    lab.approve("mv", ALICE)
    lab.approve("ok", ALICE)
    lab.git("mv", "plans/mv", "plans/MV")
    lab.commit("agent: mv to MV", AGENT)
    lab.run()
    lab.run()
    for slug in ("q-cn", "q-cw"):
        lab.set_status(slug, "approved")
    lab.commit("carol: approve", CAROL)
    lab.set_status("q-ok", "approved")
    lab.commit("alice: approve q-ok", ALICE)
    lab.run()
    lab.run()
    got["calls"] = {s: len(lab.calls(s)) for s in SLUGS}
    got["rows"] = {
        r["plan"]: r
        for r in json.loads(lab.cli("status", "--json", "--config", str(lab.config)).stdout)
    }
    got["qcn"] = lab.git("show", "HEAD:plans/q-cn/PLAN.yml")
    report, valid = clone_audit(lab, root)
    got["valid"] = sorted(valid)
    got["executions"] = [
        (e["plan"], e.get("approval_valid"), e.get("approver"), e.get("approvers"))
        for e in report["executions"]
    ]
    got["log"] = lab.git("log", "--format=%an %s", "-20")
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r83-approve-quorumrow", _build)


IDS = [f"{s}:{w}" for s in SLUGS for w in ("ran", "audit")] + ["q-cn:who", "rw:show"]
BROKEN: dict[str, Any] = {}  # the 3 ids fixed (2026-12-01, r83twinwriter)
RUNS = {"q-cn": 0, "q-cw": 0, "q-ok": 1, "mv": 1, "rw": 1, "ok": 1}


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_quorum_move_and_row(lab: Lab, vid: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    slug, what = vid.split(":")
    if what == "ran":
        if slug == "mv":
            assert got["calls"]["mv"] <= 1, got["calls"]
        else:
            assert got["calls"][slug] == RUNS[slug], (got["calls"], got["rows"].get(slug))
    elif what == "audit":
        ran = sorted(p for p, r in got["rows"].items() if r.get("status") == "completed")
        assert got["valid"] == ran, (got["valid"], ran, got["executions"])
        plan = "plans/MV" if slug == "mv" else f"plans/{slug}"
        assert (plan in got["valid"]) == (RUNS[slug] == 1), got["executions"]
    elif what == "who":
        # the counted approvals (the record's ``approvals:`` list; a refusal of Carol's own
        # vote, ``by: carol``, names her without counting her: r83twinwriter)
        block = read_yaml(got["qcn"]).data.get("approval") or {}
        counted = [a.get("by") for a in block.get("approvals") or []]
        if block.get("status") == "approved":
            counted.append(block.get("by"))
        assert not any("carol@" in str(who) for who in counted), got["qcn"]
    else:
        shown = got["show-rw"]
        assert shown["status"] == "pending_approval", shown
        assert shown["file_status"] == "completed", shown


if __name__ == "__main__":
    import tempfile

    os.makedirs("/tmp/atk83a", exist_ok=True)
    out = Path(tempfile.mkdtemp(prefix="r83qr-", dir="/tmp/atk83a"))
    print(json.dumps(_build(out).got, indent=1, ensure_ascii=False, default=str))  # type: ignore[attr-defined]
