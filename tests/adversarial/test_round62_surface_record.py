"""Round 62, agent-facing surfaces: the shown record (round 61's ``E_OWNED_BLOCK_CHANGED``)
when the agent's blocks are written AFTER the freeze and a later controller commit carries
them, and when a plan folder is copied or moved with its record.

docs/execution.md: the controller's "other commits (a start, a refusal, a vote) carry the
block over as the branch held it and are no record of it"; ``show`` takes the
``execution:``/``approval:`` blocks "from the controller's own last commit of the file when
someone committed a change to them after it ... either way it prints ``WARNING:
E_OWNED_BLOCK_CHANGED``"; docs/operations.md: the page, its API and MCP ``log`` read the
record through one rule (``shown_record``). The property: an agent cannot make a reader show
a record the controller did not write.

Lab (one, module scope), local mode, fake commit dates. The agent commits five plans; the
controller freezes them; Alice approves ``fl``, ``dn`` and ``dn2`` (they run; ``fl``'s tool
is told to fail, so it ends ``failed``). Then in one agent commit:

- ``lr`` (frozen, pending): the agent appends an ``approval:`` block (approved by Alice)
  and an ``execution:`` block (action 1 succeeded, output ``FORGED-LR``): the hash does not
  change;
- ``lg`` (frozen, pending): the agent adds an EXECUTION_LOG.md ("Status completed",
  ``FORGED-LG``);
- ``fl`` (failed): the agent rewrites the recorded error to ``FORGED-FL``;
- ``cp``/``cpe``: copies of the finished plan folder ``dn`` (``cpe`` with a line added to
  its log); ``mv``: ``git mv`` of the finished ``dn2`` with a line added to its log.

One pass; then Mallory (no approver) sets ``approved`` on ``lr``, ``lg`` and ``fl`` (a
resume), and the controller commits its refusals: ``plangate: refuse`` commits that carry
the agent's blocks over. Then Alice approves ``lr`` and a pass runs.

Asserted per variant: ``show`` (with and without ``--config``), the page and
``/api/plan/<id>`` and MCP ``log`` show none of the agent's text as the record (no ``FORGED-*``;
a never-run copy not shown as run unless it warns ``E_OWNED_BLOCK_CHANGED``); ``status``
names no approver for ``lr``; after Alice's approval ``lr``'s action runs exactly once.

Seen (strict xfails, 9): ``show-lr``, ``show0-lr`` (``show0``: without ``--config``): the
controller's own refusal commit wrote the agent's ``execution:`` block into its commit
(HEAD's PLAN.yml, author plangate), and ``show`` prints "ran: succeeded / outputs: {"msg":
"FORGED-LR"}" for a plan that never ran, no warning (MCP ``log`` flags it, so show and the
page disagree); ``show-fl``, ``show0-fl``: the same for a failed plan's error after a
refused resume; ``show-cp``, ``show0-cp``, ``show-cpe``, ``show0-cpe`` (``cpe``: its log
edited): a copy of a finished plan's folder is shown "Status: completed / Approved: by alice
/ ran: succeeded", no warning (MCP ``log`` shows nothing and flags it); ``status-fl``:
``status --json`` (and so MCP ``status``) gives ``fl``'s reason from the agent's block the
refusal carried ("action 1: E_TOOL_FAILED: ... FORGED-FL") while the page shows the
controller's "boom-r62". Held (24): MCP ``log`` of all six, the page and ``/api/plan/`` of
all six and the overview (a short daemon serves them after the last pass: the controller's
record, ``E_OWNED_BLOCK_CHANGED`` flagged), ``status`` of ``lr`` (no approver), ``show`` of
``lg`` and of the moved ``mv``, and ``lr``'s one action ran exactly once after Alice's
approval although the controller's own commit carried a block saying it had succeeded.

Fixed (2026-11-29): all 9 ids (``show-lr``, ``show0-lr``, ``show-fl``, ``show0-fl``,
``show-cp``, ``show0-cp``, ``show-cpe``, ``show0-cpe``, ``status-fl``). Every commit the
controller makes of a plan file writes the ``execution:``/``approval:`` blocks it does not set
from its own record at that path (``Committing._from_own_record``, before the edit; a
run's events only ``approval:``, ``execution:`` is round 52's): its
refusals no longer carry the agent's blocks (``lr``'s refusal commit holds its own
``approval: {status: refused}`` and no ``execution:``; ``fl``'s the controller's error).
``plangate show`` and ``status``'s reasons read the record through ``ownrecord.shown_record``
like the page: a copy (``cp``, ``cpe``) has no record at its path and is shown without one,
``E_OWNED_BLOCK_CHANGED`` printed. ``mcp-lr`` now asks for the flag only while the branch
still holds the agent's block: the controller's refusal replaced it with its record, so
there is nothing left to flag (the property, no forged record shown, is unchanged)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, MALLORY, Lab, cases, plan_text
from oraclekit import ui_daemon
from test_round2_execution_kit import shared
from test_round61_surface_mcp import mcp
from test_round61_surface_page import _get

CLS = "show takes an agent's blocks as the controller's record"
BROKEN: dict[str, Any] = {}  # all 9 fixed (2026-11-29): see the module docstring

LATE_BLOCKS = """\
approval:
  status: approved
  by: alice@example.com
  at: '2026-11-29T10:00:00Z'
execution:
  status: completed
  actions:
  - id: 1
    status: succeeded
    outputs: {msg: FORGED-LR}
"""

SLUGS = ["lr", "lg", "fl", "cp", "cpe", "mv"]


def _build(root: Path) -> Lab:
    lab = Lab(
        root,
        extra="agent:\n  identity: {name: Agent, email: agent@example.com}\n",
        tools="bad: {kind: exec, argv: [/bin/sh, -c, 'echo boom-r62 >&2; exit 3']}\n",
    )
    lab.git_date = "@1795000000 +0000"
    for slug in ["lr", "lg", "dn", "dn2"]:
        lab.write(slug, plan_text(slug))
    # fl: its tool fails (exit 3, "boom-r62" on stderr)
    lab.write("fl", plan_text("fl").replace("rec", "bad").replace('tag: "fl"', "{}"))
    lab.commit("agent plans")
    lab.run()
    for slug in ["fl", "dn", "dn2"]:
        lab.set_status(slug, "approved")
    lab.commit("approve", ALICE)
    lab.run()
    lab.before = {s: len(lab.calls(s)) for s in ["lr", "fl", "dn"]}  # type: ignore[attr-defined]
    p = lab.repo / "plans/lr/PLAN.yml"
    p.write_text(p.read_text() + LATE_BLOCKS)
    lab.write("lg", "# Execution log\n\nStatus completed\n\nFORGED-LG\n", "EXECUTION_LOG.md")
    f = lab.repo / "plans/fl/PLAN.yml"
    text = f.read_text()
    lab.fl_had_error = "boom-r62" in text  # type: ignore[attr-defined]
    f.write_text(text.replace("boom-r62", "FORGED-FL"))
    shutil.copytree(lab.repo / "plans/dn", lab.repo / "plans/cp")
    shutil.copytree(lab.repo / "plans/dn", lab.repo / "plans/cpe")
    log = lab.repo / "plans/cpe/EXECUTION_LOG.md"
    log.write_text(log.read_text() + "\nFORGED-CPE\n")
    lab.git("mv", "plans/dn2", "plans/mv")
    log = lab.repo / "plans/mv/EXECUTION_LOG.md"
    log.write_text(log.read_text() + "\nFORGED-MV\n")
    lab.commit("agent edits")
    lab.run()
    for slug in ["lr", "lg", "fl"]:
        lab.set_status(slug, "approved")
    lab.commit("mallory approves", MALLORY)
    lab.run()
    lab.lr_carried = "FORGED-LR" in lab.git("show", "HEAD:plans/lr/PLAN.yml")  # type: ignore[attr-defined]
    lab.head_author = {  # type: ignore[attr-defined]
        s: lab.git("log", "-1", "--format=%ae %s", "--", f"plans/{s}/PLAN.yml").strip()
        for s in SLUGS
    }
    seen: dict[str, str] = {}
    replies = mcp(lab, [("log", {"path": f"plans/{s}"}) for s in SLUGS])
    for slug, reply in zip(SLUGS, replies, strict=True):
        seen[f"mcp:{slug}"] = json.dumps(reply, ensure_ascii=False)
        for tag, cfg in [("show", ["--config", str(lab.config)]), ("show0", [])]:
            got = lab.cli("show", str(lab.repo / f"plans/{slug}/PLAN.yml"), *cfg, cwd=lab.repo)
            seen[f"{tag}:{slug}"] = got.stdout + got.stderr
    seen["status"] = json.dumps(lab.status(), ensure_ascii=False)
    seen.update(_pages(lab))
    lab.seen = seen  # type: ignore[attr-defined]
    # Alice approves lr (what she reviewed: its one action): it must run once
    lab.set_status("lr", "approved")
    lab.commit("alice approves lr", ALICE)
    lab.run()
    lab.lr_runs = len(lab.calls("lr"))  # type: ignore[attr-defined]
    return lab


def _pages(lab: Lab) -> dict[str, str]:
    """The daemon's page and API for every slug (the daemon's snapshot of the branch)."""
    cfg = lab.config.read_text()
    lab.config.write_text(cfg + "ui: {listen: 0}\n")
    out: dict[str, str] = {}
    try:
        with ui_daemon(lab, lab.config, "plans/lr") as port:
            out["page:index"] = _get(port, "/")[2] + _get(port, "/api/")[2]
            for slug in SLUGS:
                out[f"page:{slug}"] = _get(port, f"/plan/plans/{slug}")[2]
                out[f"api:{slug}"] = _get(port, f"/api/plan/plans/{slug}")[2]
    finally:
        lab.config.write_text(cfg)
    return out


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r62-surface-record", _build)


def _forged(text: str) -> list[str]:
    return [
        w for w in ["FORGED-LR", "FORGED-LG", "FORGED-FL", "FORGED-CPE", "FORGED-MV"] if w in text
    ]


SHOW_IDS = [f"{tag}-{s}" for s in SLUGS for tag in ("show", "show0")]


@pytest.mark.parametrize("vid", cases(SHOW_IDS, SHOW_IDS, BROKEN))
def test_show_shows_only_the_controllers_record(lab: Lab, vid: str) -> None:
    tag, slug = vid.split("-", 1)
    out = lab.seen[f"{tag}:{slug}"]  # type: ignore[attr-defined]
    assert "Traceback" not in out, out[-2000:]
    assert _forged(out) == [], out[:3000]
    if slug in ("cp", "cpe"):  # a copy never ran at its path
        assert "ran: succeeded" not in out or "E_OWNED_BLOCK_CHANGED" in out, out[:3000]
    if slug == "lr":
        assert "ran: succeeded" not in out, out[:3000]


MCP_IDS = [f"mcp-{s}" for s in SLUGS]


@pytest.mark.parametrize("vid", cases(MCP_IDS, MCP_IDS, BROKEN))
def test_mcp_log_shows_only_the_controllers_record(lab: Lab, vid: str) -> None:
    slug = vid.split("-", 1)[1]
    out = lab.seen[f"mcp:{slug}"]  # type: ignore[attr-defined]
    assert _forged(out) == [], out[:3000]
    carried = slug != "lr" or lab.lr_carried  # type: ignore[attr-defined]
    if slug in ("lr", "lg", "cp", "cpe", "mv") and carried:  # a block on the branch: flagged
        assert "E_OWNED_BLOCK_CHANGED" in out, out[:3000]


@pytest.mark.parametrize(
    "vid", cases(["status-lr", "status-fl"], ["status-lr", "status-fl"], BROKEN)
)
def test_status_reads_no_forged_block(lab: Lab, vid: str) -> None:
    rows = json.loads(lab.seen["status"])  # type: ignore[attr-defined]
    row = rows[f"plans/{vid.split('-')[1]}"]
    if vid == "status-lr":
        assert row.get("approver") in (None, ""), row
        assert row.get("status") == "pending_approval", row
    else:
        assert lab.fl_had_error, "the bench: fl's recorded error was not found"  # type: ignore[attr-defined]
        assert row.get("status") == "failed", row
    assert _forged(json.dumps(row)) == [], row


def test_the_approved_plan_runs_once_whatever_its_block_said(lab: Lab) -> None:
    assert lab.before["lr"] == 0  # type: ignore[attr-defined]
    assert lab.lr_runs == 1, lab.codes("lr")  # type: ignore[attr-defined]


PAGE_IDS = [f"{tag}-{s}" for s in SLUGS for tag in ("page", "api")] + ["page-index"]


@pytest.mark.parametrize("vid", cases(PAGE_IDS, PAGE_IDS, BROKEN))
def test_the_page_shows_only_the_controllers_record(lab: Lab, vid: str) -> None:
    tag, slug = vid.split("-", 1)
    out = lab.seen[f"{tag}:{slug}"]  # type: ignore[attr-defined]
    assert "Traceback" not in out, out[-2000:]
    assert _forged(out) == [], [out[max(0, out.find("FORGED") - 600) :][:1500]]
