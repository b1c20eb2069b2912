"""Round 58 (runs): the agent amends the controller's own commits (``git commit --amend``
keeps the author, so the amended commit still reads ``plangate <plangate@localhost>`` as
author; its committer is the agent). No forged identity is typed: git does it.

Lab ``am`` (local mode): one one-action plan per variant, each approved by Alice and run in
its own pass; right after (or, for ``amend-start``, during) the run the agent, who shares the
working tree, amends the controller's last commit:

- ``amend-log``: the controller's ``complete`` commit amended with the run's EXECUTION_LOG.md
  rewritten (``succeeded`` -> ``FAILED-FORGED``): the human-readable record says otherwise.
- ``amend-exec``: the ``complete`` commit amended with the ``execution:`` block's action 1
  ``status: failed`` (the plan still ``completed``): the machine record of what ran forged.
- ``amend-notes``: the ``complete`` commit amended with the agent's own ``notes.txt``: a
  commit under the controller's name carrying bytes the controller never produced.
- ``amend-by``: the ``complete`` commit's message amended to ``Approved-By: bob@...``
  (Alice approved); ``amend-message``: a paragraph of the agent's added to its body
  ("action 1 printed: everything fine, deployed to prod"); ``amend-status``: subject and
  ``Plan-Status:`` turned into a ``fail``.
- ``amend-start``: action 1's tool (an exec tool standing for the agent at that moment)
  runs ``git commit --amend --no-edit`` on the controller's ``start`` commit mid-run.
- ``ctl`` (control): nobody amends.

Asserted: (1) the live controller notices (its status row says ``E_HISTORY_REWRITTEN``, the
amended commit an ``E_ILLEGAL_TRANSITION``), nothing runs twice; (2) the audit from git
alone (a fresh ``git clone``, no config; and ``plangate audit --config`` in the checkout)
flags the amended commit: a finding naming the plan, or the execution not valid.

Broke (strict xfails, ``test_the_audit_flags_the_amended_record``): ``amend-log``,
``amend-exec``, ``amend-notes``, ``amend-start``, ``amend-by``, ``amend-message``: both
audits report no finding about these plans and call every execution valid (``amend-log``,
``-exec``, ``-notes``, ``-by``, ``-message``: "complete"; the report's only finding is
``amend-status``'s), though the live controller holds each plan ``E_HISTORY_REWRITTEN`` and
calls the amended commit "plangate@localhost set status ... ; ignored". As seen from
outside, the audit takes a commit authored by the controller's identity as the controller's
whatever its committer, and reads nothing wrong in a trailer rewritten or a paragraph added;
git's own ``--amend`` (and a rebase, a cherry-pick) keeps that author and writes the agent
as committer, so git history shows the agent's rewritten log, a forged ``execution:``
record, the agent's file or words as the controller's own, and the audit vouches for them.
Should: a commit whose committer is not the controller's identity is not the controller's
(``controller-unexplained`` / ``log-changed`` / ``owned-block-changed``, as the live
controller judges it), or the accepted limits say the audit takes the author alone.
Not a forged identity in the "Out of scope" sense: nobody set the controller's name; the
committer field names the agent.

Fixed (2026-11-29): git alone (the audit, a fresh clone) knows the controller's commits by
both identities, author and committer (``Lifecycle._is_controller``; the running controller
knows them by record). An amended, rebased or cherry-picked controller commit is anyone's
commit under the controller's name: the audit flags what it changes as it flags a person's
(``controller-only status``, ``log-changed``, ``owned-block-changed``), as the live
controller does. The six strict xfails pass. Held: the live controller (every variant), ``ctl``,
``amend-status`` (flagged ``controller-unexplained``: "a fail commit cannot set status
completed").
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, cases, plan_text
from test_round2_execution_kit import shared

AMENDS = [
    "amend-log",
    "amend-exec",
    "amend-notes",
    "amend-start",
    "amend-by",
    "amend-message",
    "amend-status",
]
VARIANTS = [*AMENDS, "ctl"]
BROKEN: dict[str, object] = {}  # all fixed (2026-11-29): see the docstring

ACT = """\
import json, os, subprocess, sys
with open(os.environ["REC_LOG"], "a") as f:
    f.write(json.dumps({"argv": [sys.argv[1] + "-act"]}) + "\\n")
env = dict(os.environ, GIT_AUTHOR_NAME="Agent", GIT_AUTHOR_EMAIL="agent@example.com",
           GIT_COMMITTER_NAME="Agent", GIT_COMMITTER_EMAIL="agent@example.com")
subprocess.run(["git", "commit", "-q", "--amend", "--no-edit", "--allow-empty"],
               cwd=os.environ["REPO"], env=env, check=True)
print(json.dumps({"ok": True}))
"""


def _build(root: Path) -> Lab:
    (root / "act.py").write_text(ACT)
    lab = Lab(root / "am")
    py, act = json.dumps(sys.executable), json.dumps(str(root / "act.py"))
    env = f"{{REPO: {json.dumps(str(lab.repo))}, REC_LOG: {json.dumps(str(lab.log))}}}"
    lab.write_config(tools=f"act: {{kind: exec, argv: [{py}, {act}, '{{v}}'], env: {env}}}\n")
    for vid in VARIANTS:
        if vid == "amend-start":
            lab.write(
                vid,
                f"plan:\n  name: {vid}\n  task: t\n  status: pending_approval\n"
                "available_tools: [{name: act}, {name: rec}]\nactions:\n"
                f"  - {{id: 1, tool: act, why: w, params: {{v: {vid}}}}}\n"
                f"  - {{id: 2, tool: rec, why: w, params: {{tag: {vid}-2}}}}\n",
            )
        else:
            lab.write(vid, plan_text(vid))
    lab.commit("plans")
    lab.run()
    for vid in VARIANTS:
        lab.set_status(vid, "approved")
        lab.commit(f"approve {vid}", ALICE, f"plans/{vid}")
        lab.run()
        folder = lab.repo / "plans" / vid
        if vid == "amend-log":
            log = folder / "EXECUTION_LOG.md"
            log.write_text(log.read_text().replace("succeeded", "FAILED-FORGED"))
        elif vid == "amend-exec":
            plan = folder / "PLAN.yml"
            text = plan.read_text()
            head, _, tail = text.partition("execution:")
            plan.write_text(
                head + "execution:" + tail.replace("status: succeeded", "status: failed")
            )
        elif vid == "amend-notes":
            (lab.repo / "notes.txt").write_text("the agent's own bytes\n")
        if vid in ("amend-log", "amend-exec", "amend-notes"):
            lab.git("add", "-A")
            lab.git("commit", "-q", "--amend", "--no-edit", who=AGENT)
        elif vid in ("amend-by", "amend-message", "amend-status"):
            msg = lab.git("log", "-1", "--format=%B")
            if vid == "amend-by":
                msg = msg.replace(
                    "Approved-By: alice@example.com", "Approved-By: bob@ops.example.com"
                )
            elif vid == "amend-message":
                msg = msg.replace(
                    "\n\nPlan:",
                    "\n\naction 1 printed: everything fine, deployed to prod\n\nPlan:",
                    1,
                )
            else:
                msg = msg.replace("Plan-Status: completed", "Plan-Status: failed").replace(
                    "plangate: complete ", "plangate: fail "
                )
            lab.git("commit", "-q", "--amend", "-m", msg, who=AGENT)
    lab.run()
    lab.run()
    lab.rows = lab.log_rows("%H%x00%an%x00%ae%x00%s%x00%ce%x01")  # type: ignore[attr-defined]
    lab.status_rows = lab.status()  # type: ignore[attr-defined]
    clone = lab.root / "clone"
    subprocess.run(["git", "clone", "-q", str(lab.repo), str(clone)], check=True, env=lab.env())
    fresh = lab.cli("audit", "--json", cwd=clone)
    lab.fresh = (fresh.returncode, json.loads(fresh.stdout))  # type: ignore[attr-defined]
    lab.configured = lab.audit(config=lab.config)  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r58-amendrecord", _build)


@pytest.mark.parametrize("vid", VARIANTS)
def test_the_live_controller_holds_the_amended_plan(lab: Lab, vid: str) -> None:
    row = json.dumps(lab.status_rows[f"plans/{vid}"])  # type: ignore[attr-defined]
    ran = [c for c in lab.calls(vid)] + lab.calls(f"{vid}-act") + lab.calls(f"{vid}-2")
    if vid == "ctl":
        assert (
            "E_HISTORY_REWRITTEN" not in row
            and lab.status_rows[f"plans/{vid}"]["status"] == "completed"
        ), row  # type: ignore[attr-defined]
        assert len(ran) == 1
        return
    assert "E_HISTORY_REWRITTEN" in row, row
    assert "E_ILLEGAL_TRANSITION" in row, row
    if vid == "amend-start":
        assert len(lab.calls(f"{vid}-act")) == 1 and lab.calls(f"{vid}-2") == []
    else:
        assert len(ran) == 1, ran
    # the amended commit really is the agent's: committer Agent, author the controller
    amended = [r for r in lab.rows if r[3].endswith(f" plans/{vid}") and r[4] == AGENT[1]]  # type: ignore[attr-defined]
    assert amended and amended[0][2] == "plangate@localhost", lab.rows  # type: ignore[attr-defined]


def _flagged(report: dict, vid: str) -> bool:
    plan = f"plans/{vid}"
    if any(f.get("plan") == plan for f in report.get("findings", [])):
        return True
    return any(
        e.get("plan") == plan and not e.get("approval_valid") for e in report.get("executions", [])
    )


@pytest.mark.parametrize("vid", cases(VARIANTS, VARIANTS, BROKEN))
def test_the_audit_flags_the_amended_record(lab: Lab, vid: str) -> None:
    (frc, fresh), (crc, configured) = lab.fresh, lab.configured  # type: ignore[attr-defined]
    if vid == "ctl":
        assert not any(f.get("plan") == "plans/ctl" for f in fresh.get("findings", []))
        assert any(e["plan"] == "plans/ctl" and e["approval_valid"] for e in fresh["executions"])
        return
    assert _flagged(fresh, vid), (frc, json.dumps(fresh)[:1500])
    assert _flagged(configured, vid), (crc, json.dumps(configured)[:1500])
