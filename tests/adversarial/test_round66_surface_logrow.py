"""Round 66, agent-facing surfaces: round 65's status row ("the row carries every note
``show`` carries", docs/operations.md; ``ownrecord.record_notes``) against edits of
EXECUTION_LOG.md ONLY, an ``execution:`` block the agent edits while the plan is paused at
its gate (does the controller's next commit carry the agent's keys over?), an uncommitted
forged log in the shared working tree when the controller commits, and honest edits that
leave the hash alone (wrongly flagged?).

Lab (one, module scope), local mode with ``agent.identity``. Plans complete on Alice's
approval (``lg``, ``lx``, ``ls1``, ``ls2``, ``md``, ``qt``, ``ko``, ``cr``, ``wt``); ``gt``
and ``gu`` pause at their gate (action 2, ``requires_approval``). Then: the agent commits
a forged ``gt`` ``execution:`` block (action 1 ``outputs: {approved_by: bob}``, ``note:
forged``, the gate preview's ``tag: gt2-EVIL``, a top-level ``forged_top``); Alice commits
hash-neutral edits (docs/plan-format.md "The hash": ``metadata`` added (``md``), quoting
(``qt``), key order (``ko``), ``plan.created`` (``cr``)); the agent commits, touching no
PLAN.yml, ``lg``'s EXECUTION_LOG.md rewritten (approver ``bob``, ``tag: lg-EVIL``), ``lx``'s
deleted, ``ls1``'s and ``ls2``'s swapped. Readers: ``status --json``, MCP ``status``,
``show --config``, MCP ``log``, ``plangate audit --json``. Then the agent rewrites ``wt``'s
log in the working tree WITHOUT committing, commits a new plan ``nw``, and Alice approves
``gt``'s and ``gu``'s gates (her commit names only their files); one pass.

Asserted: each reader of a log-edited plan says so (``show``/MCP ``log``: a problem and the
controller's log; the row and MCP ``status``: a note, as the docs say the row carries every
note ``show`` carries; the audit: ``log-changed``); the honest edits show their run with no
note; the gate's forged block is noted while paused and the controller's outcome commit
holds none of the agent's keys, the gated action ran with ``gt2`` once; the forged working
tree log is in no commit.

Broke (strict xfails, 8): ``lg-status``, ``lg-mcp-status``, ``lx-status``,
``lx-mcp-status``, ``ls1-status``, ``ls1-mcp-status``, ``ls2-status``, ``ls2-mcp-status``:
after an agent commit that changes (or deletes, or swaps) only EXECUTION_LOG.md of a
completed plan, ``show`` and MCP ``log`` carry "E_OWNED_BLOCK_CHANGED: EXECUTION_LOG.md on
the branch is not the controller's record: edited after (or without) the controller's record
by agent@example.com" and the audit flags ``log-changed``, but the ``status --json`` row and
MCP ``status`` say completed, approver alice, with only the path's own
freeze/approve/start/complete notes: the row reads the record again only where someone
else committed the PLAN.yml last, so a forged or deleted log leaves no note on the row.
Should: the row carries the log's note too (docs/operations.md: "The row carries every note
``show`` carries"). Held: ``show``/MCP ``log`` of ``lg``/``lx``/``ls*`` (the note, the
controller's own log, nothing of ``lg-EVIL``/``bob``), the audit's ``log-changed``; the
honest ``md``/``qt``/``ko``/``cr`` shown with their run and no note on any reader; ``gt``
paused: every reader notes ``E_OWNED_BLOCK_CHANGED`` and shows the controller's preview
(``gt2``); after Alice's gate approval the outcome commit's ``execution:`` block is the
controller's own (no ``approved_by``, ``note``, ``forged_top``, ``gt2-EVIL``), ``gt2`` ran
once, ``gt2-EVIL`` never; the uncommitted ``wt`` log is in no commit and stays a working
tree change.

Fixed (2026-11-29): all 8 (r66row). The record of a path is its plan file AND its
EXECUTION_LOG.md: the row reads it again through the one function ``show`` uses
(``ownrecord.record_notes``) when ANY file of it was last committed by someone other than
the controller (``PlanState.record_commits``: the index keeps each plan's last commit of its
file and of its log, ``log_commit``), not only PLAN.yml; a record whose every file the
controller committed last still costs no git.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab, cases, plan_text
from oraclekit import record_lab, shown_records
from test_round2_execution_kit import shared

DONE = ("lg", "lx", "ls1", "ls2", "md", "qt", "ko", "cr", "wt")
GATED = ("gt", "gu")
READ = ("lg", "lx", "ls1", "ls2", "md", "qt", "ko", "cr", "gt")
WHERE = ("status", "mcp-status", "show", "mcp-log")
FORGED = ("lg", "lx", "ls1", "ls2")
HONEST = ("md", "qt", "ko", "cr")
GATE = (
    '  - id: 2\n    tool: rec\n    why: "gated"\n    requires_approval: true\n'
    '    params: {tag: "X2"}\n'
)


def _build(root: Path) -> Lab:
    plans = {slug: plan_text(slug) for slug in DONE}
    plans.update({s: plan_text(s, extra_actions=GATE.replace("X2", f"{s}2")) for s in GATED})
    lab = record_lab(root, "@1795600000 +0000", plans)
    st = {slug: lab.status()[f"plans/{slug}"]["status"] for slug in DONE + GATED}
    assert st == {**dict.fromkeys(DONE, "completed"), **dict.fromkeys(GATED, "awaiting_approval")}
    gt = lab.read("gt")
    assert "    outputs: {}\n  - id: 2" in gt and "      tag: gt2\n" in gt, gt
    gt = gt.replace("    outputs: {}\n  - id: 2", "    outputs: {approved_by: bob}\n"
                    "    note: forged\n  - id: 2", 1)  # fmt: skip
    gt = gt.replace("      tag: gt2\n", "      tag: gt2-EVIL\n").replace(
        "  gate:\n", "  forged_top: yes-agent\n  gate:\n"
    )
    lab.write("gt", gt)
    lab.commit("agent: annotate the paused run", AGENT)
    lab.write("md", "metadata: {ticket: OPS-1}\n" + lab.read("md"))
    lab.write("qt", lab.read("qt").replace('tag: "qt"', "tag: 'qt'"))
    ko = lab.read("ko")
    why = '    why: "record that variant ko ran"\n'
    lab.write("ko", ko.replace("    tool: rec\n" + why, why + "    tool: rec\n"))
    lab.write("cr", lab.read("cr").replace("plan:\n", 'plan:\n  created: "2026-11-20"\n', 1))
    lab.commit("alice: tidy the finished plans", ALICE)
    p = lab.repo / "plans"
    log = (p / "lg/EXECUTION_LOG.md").read_text()
    (p / "lg/EXECUTION_LOG.md").write_text(
        log.replace("alice@example.com", "bob@ops.example.com").replace('"lg"', '"lg-EVIL"')
    )
    (p / "lx/EXECUTION_LOG.md").unlink()
    one, two = (p / "ls1/EXECUTION_LOG.md").read_bytes(), (p / "ls2/EXECUTION_LOG.md").read_bytes()
    (p / "ls1/EXECUTION_LOG.md").write_bytes(two)
    (p / "ls2/EXECUTION_LOG.md").write_bytes(one)
    lab.commit("agent: logs", AGENT)
    got = shown_records(lab, READ)
    _, report = lab.audit()
    got["audit"] = report
    wt = (p / "wt/EXECUTION_LOG.md").read_text()
    (p / "wt/EXECUTION_LOG.md").write_text(wt.replace("alice@example.com", "bob@ops.example.com"))
    lab.write("nw", plan_text("nw"))
    lab.commit("agent: a new plan", AGENT, "plans/nw")
    for slug in GATED:
        lab.set_status(slug, "approved")
    lab.commit("alice: the gates", ALICE, "plans/gt", "plans/gu")
    lab.run()
    got["gt-after"] = lab.read("gt")
    got["gt-status"] = lab.status()["plans/gt"]["status"]
    got["wt-commits"] = lab.git(
        "log", "--all", "-p", "--format=%H", "--", "plans/wt/EXECUTION_LOG.md"
    )
    got["wt-dirty"] = lab.git("status", "--short", "--", "plans/wt")
    got["calls"] = {t: len(lab.calls(t)) for t in ("gt2", "gt2-EVIL", "gu2", "lg-EVIL")}
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r66-surface-logrow", _build)


def _text(shown: Any) -> str:
    return shown if isinstance(shown, str) else json.dumps(shown, ensure_ascii=False)


def _row(what: str, shown: Any) -> dict[str, Any]:
    return shown["plans"][0] if what == "mcp-status" else shown


def _noted(what: str, shown: Any) -> bool:
    if what in ("status", "mcp-status"):
        row = _row(what, shown)
        return any("E_OWNED_BLOCK_CHANGED" in str(n) for n in [*(row.get("notes") or []),
                                                                  row.get("problem")])  # fmt: skip
    return "E_OWNED_BLOCK_CHANGED" in _text(shown) or "E_PLAN_HASH_MISMATCH" in _text(shown)


def _shows_run(what: str, shown: Any) -> bool:
    if what == "mcp-log":
        return bool(shown.get("execution")) and bool(shown.get("execution_log"))
    if what == "show":
        return "ran: succeeded" in shown and "Approved: by alice" in shown
    row = _row(what, shown)
    return row.get("status") == "completed" and row.get("approver") == "alice@example.com"


IDS = [f"{slug}-{what}" for slug in READ for what in WHERE]
BROKEN: dict[str, Any] = {}  # the 8 row ids fixed (r66row): see the docstring


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_every_reader_says_what_the_controller_recorded(lab: Lab, vid: str) -> None:
    slug, what = vid.split("-", 1)
    shown = lab.got[f"{slug}:{what}"]  # type: ignore[attr-defined]
    assert shown is not None, vid
    text = _text(shown)
    assert "Traceback" not in text, text[-1500:]
    if slug in HONEST:  # a hash-neutral edit: the run is this text's, nothing to note
        assert _shows_run(what, shown) and not _noted(what, shown), text[:2500]
        return
    assert _noted(what, shown), text[:2500]
    assert "lg-EVIL" not in text and "bob@ops" not in text and "gt2-EVIL" not in text, text[:2500]
    if slug == "gt" and what == "show":
        assert 'tag = "gt2"' in text, text[:2500]


def test_the_audit_flags_each_log_the_controller_did_not_write(lab: Lab) -> None:
    report = lab.got["audit"]  # type: ignore[attr-defined]
    flagged = {f["plan"] for f in report.get("findings", []) if f.get("kind") == "log-changed"}
    assert {f"plans/{s}" for s in FORGED} <= flagged, report.get("findings")
    assert not flagged & {f"plans/{s}" for s in HONEST}, report.get("findings")


def test_the_controllers_commit_carries_none_of_the_agents_block(lab: Lab) -> None:
    got = lab.got  # type: ignore[attr-defined]
    assert got["gt-status"] == "completed", got["gt-status"]
    block = got["gt-after"].split("\nexecution:", 1)[1]
    for forged in ("approved_by", "forged", "gt2-EVIL", "bob"):
        assert forged not in block, block
    assert got["calls"] == {"gt2": 1, "gt2-EVIL": 0, "gu2": 1, "lg-EVIL": 0}, got["calls"]


def test_an_uncommitted_forged_log_is_in_no_commit(lab: Lab) -> None:
    got = lab.got  # type: ignore[attr-defined]
    assert "bob@ops" not in got["wt-commits"], got["wt-commits"][-2000:]
    assert "M plans/wt/EXECUTION_LOG.md" in got["wt-dirty"], got["wt-dirty"]
