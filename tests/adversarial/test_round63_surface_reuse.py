"""Round 63, agent-facing surfaces: round 62's shown record (``show``, ``status``, MCP
``log`` read the blocks through the controller's record at the plan's path) when a folder
is REUSED for a new plan, as docs/approvals.md says recurring plans do ("at a commit that
leaves no file in it (every file removed, or the folder moved away, to ``archive/`` say),
its writers are forgotten, and the next plan put at that path has only its own").

Lab (one, module scope), local mode with ``agent.identity``: plans ``re`` and ``rv`` run
to completion on Alice's approval. Then, as a recurring job does, ``plans/re`` is removed
(``git rm``, one commit: the folder is empty) and ``plans/rv`` moved to ``archive/rv`` (one
commit), and a NEW plan (other text, tag ``re-new``/``rv-new``) is committed at each path
by the agent. Also ``sw``: a finished plan's folder replaced in ONE commit by the agent's
pending plan ``p2`` (moved there with its ``frozen:`` block; the folder never empty).
Readings: (A) after the agent's commits, before a pass; (B) after the pass that freezes the
new plans; (C) after Alice approves both new plans and one more pass.

Asserted:

- ``*-show-a``/``*-show-b`` (``plangate show --config``) and ``*-show0-a`` (no config):
  the new plan, never approved, is not shown with the previous plan's approval ("Approved:
  by alice@example.com") nor its run ("ran: succeeded", "Status:  completed").
- ``*-mcp-a``/``*-mcp-b``: MCP ``log`` of the new plan holds no ``execution:`` record of the
  old run (its status ``completed``).
- ``*-blame``: neither ``show`` nor MCP ``log`` says the agent edited a controller block
  (``E_OWNED_BLOCK_CHANGED ... by agent@example.com``): it wrote a new plan in an emptied
  folder, as the docs say to.
- ``*-status-a``/``*-status-b``: ``status`` says pending_approval, no approver (held).
- ``*-runs-once``: after Alice's approval the new plan's tool ran exactly once, the old
  plan's once in all; ``audit-reuse``: the fresh-clone audit has no finding for ``re``/``rv``
  and four valid runs; ``test_the_audit_flags_the_one_commit_swap``: it flags ``sw``.
- ``sw-show-a``: the one-commit swap: ``show`` of ``p2`` (never approved, at ``sw``) is not
  shown "Approved: by alice@example.com"; ``sw-never-runs``: ``p2``'s tool never ran (held).

Broke (strict xfails): ``re-show-a``, ``rv-show-a``, ``re-show0-a``, ``rv-show0-a`` (before
the freeze ``show`` prints "Approved: by alice@example.com at <the old approval>" over the
new plan's unfrozen hash), ``re-mcp-a``, ``re-mcp-b``, ``rv-mcp-a``, ``rv-mcp-b`` (MCP
``log`` answers ``execution.status: completed`` with the old run's actions and outputs for
a plan waiting for its first approval, before and after its freeze), ``re-blame``,
``rv-blame`` (both blame the agent: "edited after (or without) the controller's record by
agent@example.com"), ``sw-show-a``; ``re-show-b``, ``re-show0-b``, ``rv-show-b``,
``rv-show0-b`` (after the freeze ``show`` prints the new plan's action "ran: succeeded in
50 ms": the old run, never this plan's); ``audit-reuse`` (the fresh-clone audit exits 1:
``log-changed`` "EXECUTION_LOG.md changed by a commit not from the controller" at the
commit that emptied ``re`` and the one that moved ``rv`` to ``archive-rv``: honest work
flagged). Held: ``status`` (pending_approval, no approver, before and after the freeze),
each new plan ran once on Alice's approval (the old ones once in all), ``p2`` never ran,
the audit flags the one-commit swap (``content-after-approval``, ``owned-block-changed``).
Should: a plan at a path whose folder was emptied since the controller's last record there
has no record (as a copy), and the audit reads an emptied folder as no change of the log.

Fixed (2026-11-29): all 16 ids. The controller's record at a path belongs to one life of
that path (:func:`controller.git.ownrecord.life_of`): a life ends at the commit that
removed the plan file (the folder emptied, or moved away) and at the controller's newest
commit of a version frozen as another plan (``frozen.hash``) than the one at the path now.
``shown_record`` (``show``, ``status``, the page, MCP ``log``), ``recorded_blocks`` (what a
freeze keeps) and ``own_record`` (a lost journal's record) read only the current life, so
``re``/``rv``'s new plans and ``p2`` at ``sw`` have no record, as a copy has none, and
nobody is blamed for a removal in a life the controller recorded nothing in. The audit's
log check (:mod:`controller.git.lifecycle`) takes a log removed in the same commit as its
plan's file as the end of a life, not a change of the log; a log rewritten in place, or
removed while a plan stays at the path (the ``sw`` swap), is still ``log-changed``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, Lab, cases, plan_text
from test_round2_execution_kit import shared
from test_round61_surface_mcp import mcp


def _read(lab: Lab, stage: str, got: dict[str, Any]) -> None:
    cfg = str(lab.config)
    rows = {r["plan"]: r for r in json.loads(lab.cli("status", "--json", "--config", cfg).stdout)}
    replies = mcp(lab, [("log", {"path": f"plans/{s}"}) for s in ("re", "rv", "sw")])
    for slug, reply in zip(("re", "rv", "sw"), replies, strict=True):
        r = lab.cli("show", f"plans/{slug}", "--config", cfg, cwd=lab.repo)
        r0 = lab.cli("show", f"plans/{slug}", cwd=lab.repo)
        got[f"{slug}-show-{stage}"] = r.stdout + r.stderr
        got[f"{slug}-show0-{stage}"] = r0.stdout + r0.stderr
        got[f"{slug}-status-{stage}"] = rows.get(f"plans/{slug}", {})
        got[f"{slug}-mcp-{stage}"] = json.dumps(reply, ensure_ascii=False)


def _build(root: Path) -> Lab:
    lab = Lab(root, extra="agent:\n  identity: {name: Agent, email: agent@example.com}\n")
    lab.git_date = "@1795000000 +0000"
    for slug in ("re", "rv", "sw", "p2"):
        lab.write(slug, plan_text(slug))
    lab.commit("plans")
    lab.run()
    for slug in ("re", "rv", "sw"):
        lab.set_status(slug, "approved")
    lab.commit("approve", ALICE)
    lab.run()
    lab.git_date = "@1795000600 +0000"
    lab.git("rm", "-rq", "plans/re")
    lab.commit("re: done for this week")
    lab.git("mv", "plans/rv", "archive-rv")
    lab.commit("rv: archived")
    lab.write("re", plan_text("re-new"))
    lab.write("rv", plan_text("rv-new"))
    lab.commit("recurring plans, next week")
    lab.git("rm", "-rq", "plans/sw")
    lab.git("mv", "plans/p2", "plans/sw")
    lab.commit("sw: replaced")
    got: dict[str, Any] = {}
    _read(lab, "a", got)
    lab.run()
    _read(lab, "b", got)
    lab.set_status("re", "approved")
    lab.set_status("rv", "approved")
    lab.commit("approve the new ones", ALICE)
    lab.run()
    _read(lab, "c", got)
    got["audit"] = lab.audit()
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r63-surface-reuse", _build)


#: Fixed (2026-11-29): every id; the record at a path is read within its current life.
BROKEN: dict[str, Any] = {}

SHOW_IDS = [f"{s}-show{c}-{t}" for s in ("re", "rv") for c in ("", "0") for t in "ab"]
MCP_IDS = [f"{s}-mcp-{t}" for s in ("re", "rv") for t in "ab"]
STATUS_IDS = [f"{s}-status-{t}" for s in ("re", "rv") for t in "ab"]


@pytest.mark.parametrize("vid", cases([*SHOW_IDS, "sw-show-a"], [*SHOW_IDS, "sw-show-a"], BROKEN))
def test_show_gives_a_new_plan_no_old_approval_or_run(lab: Lab, vid: str) -> None:
    text = lab.got[vid]  # type: ignore[attr-defined]
    assert "Traceback" not in text, text[-2000:]
    assert text.startswith("Plan: "), text[:500]
    assert "Approved: by alice@example.com" not in text, text[:1500]
    assert "ran: succeeded" not in text and "Status:  completed" not in text, text[:1500]


@pytest.mark.parametrize("vid", cases(MCP_IDS, MCP_IDS, BROKEN))
def test_mcp_log_gives_a_new_plan_no_old_run(lab: Lab, vid: str) -> None:
    reply = json.loads(lab.got[vid])  # type: ignore[attr-defined]
    data = json.loads(reply["result"]["content"][0]["text"])
    assert data["status"] == "pending_approval", data
    assert (data.get("execution") or {}).get("status") != "completed", json.dumps(data)[:1500]


@pytest.mark.parametrize("vid", cases(["re-blame", "rv-blame"], ["re", "rv"], BROKEN))
def test_an_honest_reuse_is_not_blamed_on_the_agent(lab: Lab, vid: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    for stage in "ab":
        for key in (f"{vid}-show-{stage}", f"{vid}-mcp-{stage}"):
            assert "by agent@example.com" not in got[key], got[key][:2000]


@pytest.mark.parametrize("vid", cases(STATUS_IDS, STATUS_IDS, BROKEN))
def test_status_says_pending_with_no_approver(lab: Lab, vid: str) -> None:
    row = lab.got[vid]  # type: ignore[attr-defined]
    assert row.get("status") == "pending_approval" and row.get("approver") is None, row


@pytest.mark.parametrize("vid", cases(["re-runs-once", "rv-runs-once"], ["re", "rv"], BROKEN))
def test_the_new_plan_runs_once_on_its_own_approval(lab: Lab, vid: str) -> None:
    assert len(lab.calls(f"{vid}-new")) == 1, lab.calls(f"{vid}-new")
    assert len(lab.calls(vid)) == 1, lab.calls(vid)
    row = lab.got[f"{vid}-status-c"]  # type: ignore[attr-defined]
    assert row.get("status") == "completed" and row.get("approver") == ALICE[1], row


def test_sw_never_runs(lab: Lab) -> None:
    assert lab.calls("p2") == []


AUDIT_CLS = "the audit flags an honest reuse of a folder"
#: Fixed (2026-11-29): a log removed with its plan's file ends the path's life.
AUDIT_BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(["audit-reuse"], ["audit-reuse"], AUDIT_BROKEN))
def test_the_audit_finds_nothing_in_an_honest_reuse(lab: Lab, vid: str) -> None:
    _rc, report = lab.got["audit"]  # type: ignore[attr-defined]
    found = [f for f in report.get("findings", []) if f.get("plan") in ("plans/re", "plans/rv")]
    assert not found, found
    runs = [e for e in report.get("executions", []) if e.get("plan") in ("plans/re", "plans/rv")]
    assert len(runs) == 4 and all(e.get("approval_valid") for e in runs), runs


def test_the_audit_flags_the_one_commit_swap(lab: Lab) -> None:
    rc, report = lab.got["audit"]  # type: ignore[attr-defined]
    kinds = {f.get("kind") for f in report.get("findings", []) if f.get("plan") == "plans/sw"}
    assert rc == 1 and kinds & {"content-after-approval", "owned-block-changed"}, report
