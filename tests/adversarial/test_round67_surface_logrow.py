"""Round 67, agent-facing surfaces: round 66's status row ("the record of a path is its plan
file AND its EXECUTION_LOG.md"; the row reads it again when any file of it was last
committed by someone other than the controller, docs/operations.md) in shapes round 66 did
not try.

Lab (one, module scope), local mode with ``agent.identity``. Plans complete on Alice's
approval, then each variant plays one shape:

- ``pre``: the agent commits ``plans/pre/EXECUTION_LOG.md`` (a forged "completed, approved
  by alice" log) in a commit BEFORE the plan file; the plan stays pending (never ran);
- ``prerun``: the same, but Alice approves and it runs (the controller's log replaces it:
  honest afterwards);
- ``same``: one agent commit adds ``metadata:`` to a completed plan (hash-neutral) AND
  rewrites its log; ``samep``: one agent commit changes a pending plan's param (a new
  version the controller freezes again) AND adds a forged log;
- ``with``: the forged log committed in the SAME commit as the pending plan's file;
  ``late``: added alone to a pending, frozen plan (no PLAN.yml touched);
- ``mv``: Alice ``git mv``s a completed folder (plan and log) to a new path; ``mved``: the
  agent moves it and rewrites the log in the move commit;
- ``del``: the agent deletes a completed plan's log in the commit that adds ``metadata:``;
- ``sym``: the log replaced by a symlink to another completed plan's log;
- ``crlf``: the log rewritten with CRLF line ends (same text);
- ``look``: the log rewritten in a commit under the CONTROLLER's name and a ``plangate:
  complete plans/look`` subject (not in its record, no seal);
- ``merge``: the log rewritten on a branch Alice merges ``--no-ff``;
- ``back``: the agent rewrites the log, then writes the controller's exact bytes back;
- ``many0``..``many5``: six logs rewritten in one agent commit;
- ``gate``, ``fail``, ``rej``: a plan paused at its gate, a failed one (its log rewritten),
  and a plan Alice rejected (a forged log added);
- honest: ``notes`` (Alice adds NOTES.md to a completed folder), ``hmv`` (Alice moves a
  pending, never-run folder).

Readers: ``show --config`` and MCP ``log`` (the reference: what ``show`` notes), the
``status --json`` row, MCP ``status``, and the row again after one more ``run --once`` pass
(``after``: the index brought up to date by the controller itself).

Asserted, per variant and row reader: the row carries ``E_OWNED_BLOCK_CHANGED`` (or
``E_PLAN_HASH_MISMATCH``) exactly when ``show`` does (docs/operations.md: "The row carries every
note ``show`` carries"), and both say what the variant calls for: a forged, deleted,
symlinked or rewritten log noted; an honest edit not noted; ``prerun`` ran once.

Broke (strict xfails, 12): ``pre-*``, ``samep-*``, ``with-*``, ``late-*`` for ``status``,
``mcp-status`` and ``after``: a plan that has not run yet (pending, frozen) with an
EXECUTION_LOG.md the agent committed (a forged "completed, approved by alice" log, committed
before the plan file, with it, with a new version the controller froze again, or alone after
the freeze): ``show`` and MCP ``log`` say "E_OWNED_BLOCK_CHANGED: EXECUTION_LOG.md on the
branch is not the controller's record ... by agent@example.com" and show no log, but the
``status --json`` row and MCP ``status`` carry only the freeze/status notes, before and after
another pass: round 66 made the row read the record again when a file of a path was last
committed by someone else, but a plan with no run of the controller's has no log commit of
its own to compare with, so the row never looks. Should: the row carries the note ``show``
carries for every plan, run or not.

Fixed (2026-11-30): one judgement of a path's record for every reader. The row's notes are
``show``'s (``ownrecord.record_notes``, the same ``shown_record``) for every plan in every
state: the row no longer skips a draft, pending or invalid plan (only round 64's
``frozen.hash`` note, which the next freeze settles, is left to frozen plans), and the index
keeps the last commit of a log committed where no plan was yet (``loose_logs``, index
version 42) as the plan's ``log_commit`` once one is put there, so a log the agent committed
before the plan file is a file of its record someone else committed last, and the row reads
it. A record whose every file the controller committed last is still read without git.

Held (113 ids + the control): ``gate`` (paused, log
rewritten), ``fail`` (failed, log rewritten), ``rej`` (rejected, a forged log added): noted
on every reader; ``same`` (metadata + log in one commit),
``mved`` (moved with the log rewritten), ``del`` (deleted with a metadata edit), ``sym``
(a symlink to another plan's log), ``crlf``, ``look`` (a log rewrite under the controller's
name and subject, unsealed), ``merge`` (on a branch merged ``--no-ff``), ``back``
(rewritten, then the controller's bytes restored: still noted, on every reader alike),
six logs in one commit: noted on every reader, the forged text never shown; ``prerun``
(a forged log before the plan, then approved: the controller's log replaces it, no note,
ran once); ``notes`` (Alice's NOTES.md) and ``hmv`` (Alice moves a pending folder): no note
anywhere; ``mv`` (Alice moves a completed folder): every reader alike notes the blocks and
the log are not the controller's record at the new path (as docs/operations.md says of a
moved folder).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOT, Lab, cases, plan_text
from test_round2_execution_kit import shared
from test_round61_surface_mcp import mcp

MANY = tuple(f"many{i}" for i in range(6))
DONE = ("same", "mv", "mved", "del", "sym", "crlf", "look", "merge", "back", "notes", *MANY)
PEND = ("pre", "samep", "hmv", "with", "late")
# where the plan lives after the attack
WHERE = {"mv": "mv-moved", "mved": "mved-moved", "hmv": "hmv-moved"}
# what the reference readers should say: True noted, False not, None either (agreement only)
EXPECT: dict[str, bool | None] = {
    "pre": True, "prerun": False, "same": True, "samep": True, "mv": None, "mved": True,
    "del": True, "sym": True, "crlf": None, "look": True, "merge": True, "back": None,
    "notes": False, "hmv": False, "with": True, "late": True, "gate": True, "fail": True,
    "rej": True, **dict.fromkeys(MANY, True),
}  # fmt: skip
SLUGS = tuple(EXPECT)
GATE = (
    '  - id: 2\n    tool: rec\n    why: "gated"\n    requires_approval: true\n'
    '    params: {tag: "gate2"}\n'
)
BAD = '  - id: 2\n    tool: bad\n    why: "fails"\n    params: {}\n'
FORGED_LOG = (
    "# Execution log\n\n- Approved by alice@example.com\n- Status: completed\n"
    "- Action 1 `rec`: succeeded (forged-r67)\n"
)


def _forge(text: str) -> str:
    return text.replace("alice@example.com", "bob@ops.example.com") + "\nforged-r67\n"


def _build(root: Path) -> Lab:
    lab = Lab(
        root,
        extra="agent:\n  identity: {name: Agent, email: agent@example.com}\n",
        tools=(
            f"bad: {{kind: exec, argv: [{json.dumps(sys.executable)}, -c,"
            " 'raise SystemExit(3)']}\n"
        ),
    )
    lab.git_date = "@1795800000 +0000"
    p = lab.repo / "plans"
    for slug in ("pre", "prerun"):
        lab.write(slug, FORGED_LOG, "EXECUTION_LOG.md")
    lab.commit("agent: logs first", AGENT)
    for slug in (*DONE, *PEND, "prerun", "rej"):
        lab.write(slug, plan_text(slug))
    lab.write("gate", plan_text("gate", extra_actions=GATE))
    lab.write(
        "fail",
        plan_text("fail", extra_actions=BAD).replace(
            "  - name: rec\n", "  - name: rec\n  - name: bad\n", 1
        ),
    )
    lab.write("with", FORGED_LOG, "EXECUTION_LOG.md")
    lab.commit("agent: plans", AGENT)
    lab.run()
    for slug in (*DONE, "prerun", "gate", "fail"):
        lab.set_status(slug, "approved")
    lab.set_status("rej", "rejected")
    lab.commit("approve", ALICE)
    lab.run()
    rows = lab.status()
    for slug in (*DONE, "prerun"):
        assert rows[f"plans/{slug}"]["status"] == "completed", (slug, rows[f"plans/{slug}"])
    for slug in PEND:
        assert rows[f"plans/{slug}"]["status"] == "pending_approval", (slug, rows[f"plans/{slug}"])
    log = lambda s: p / s / "EXECUTION_LOG.md"  # noqa: E731
    # same: metadata + forged log in one agent commit
    lab.write("same", "metadata: {ticket: OPS-7}\n" + lab.read("same"))
    log("same").write_text(_forge(log("same").read_text()))
    lab.commit("agent: tidy same", AGENT)
    # samep: a new version + a forged log in one commit
    lab.write("samep", lab.read("samep").replace('tag: "samep"', 'tag: "samep-v2"'))
    log("samep").write_text(FORGED_LOG)
    lab.commit("agent: samep v2", AGENT)
    assert rows["plans/gate"]["status"] == "awaiting_approval", rows["plans/gate"]
    assert rows["plans/fail"]["status"] == "failed", rows["plans/fail"]
    assert rows["plans/rej"]["status"] == "rejected", rows["plans/rej"]
    # gate / fail / rej: a paused, a failed, a rejected plan's log rewritten (or added)
    for slug in ("gate", "fail"):
        log(slug).write_text(_forge(log(slug).read_text()))
    log("rej").write_text(FORGED_LOG)
    lab.commit("agent: three logs", AGENT)
    # late: a forged log added to a pending, frozen plan (no PLAN.yml touched)
    log("late").write_text(FORGED_LOG)
    lab.commit("agent: late log", AGENT)
    # mv: Alice moves a completed folder; mved: the agent moves it and rewrites the log
    lab.git("mv", "plans/mv", "plans/mv-moved")
    lab.commit("alice: move mv", ALICE)
    lab.git("mv", "plans/mved", "plans/mved-moved")
    (p / "mved-moved/EXECUTION_LOG.md").write_text(_forge(log("mved-moved").read_text()))
    lab.commit("agent: move mved", AGENT)
    # del: the log deleted with a metadata edit
    log("del").unlink()
    lab.write("del", "metadata: {ticket: OPS-8}\n" + lab.read("del"))
    lab.commit("agent: del", AGENT)
    # sym: a symlink to another completed plan's log
    log("sym").unlink()
    os.symlink("../notes/EXECUTION_LOG.md", log("sym"))
    lab.commit("agent: sym", AGENT)
    # crlf
    log("crlf").write_bytes(log("crlf").read_bytes().replace(b"\n", b"\r\n"))
    lab.commit("agent: crlf", AGENT)
    # look: under the controller's name
    log("look").write_text(_forge(log("look").read_text()))
    lab.commit("plangate: complete plans/look", BOT)
    # merge: a branch Alice merges
    lab.git("checkout", "-q", "-b", "agent-logs")
    log("merge").write_text(_forge(log("merge").read_text()))
    lab.commit("agent: merge log", AGENT)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "alice: merge agent-logs", "agent-logs", who=ALICE)
    # back: rewritten, then the controller's bytes written back
    kept = log("back").read_bytes()
    log("back").write_text(_forge(kept.decode()))
    lab.commit("agent: back 1", AGENT)
    log("back").write_bytes(kept)
    lab.commit("agent: back 2", AGENT)
    # many: six logs in one commit
    for slug in MANY:
        log(slug).write_text(_forge(log(slug).read_text()))
    lab.commit("agent: many logs", AGENT)
    # honest
    lab.write("notes", "reviewed by alice\n", "NOTES.md")
    lab.commit("alice: notes", ALICE)
    lab.git("mv", "plans/hmv", "plans/hmv-moved")
    lab.commit("alice: move hmv", ALICE)
    lab.run()  # freezes samep v2 and hmv-moved; judges nothing else
    cfg = str(lab.config)
    got: dict[str, Any] = {}
    rows = {r["plan"]: r for r in json.loads(lab.cli("status", "--json", "--config", cfg).stdout)}
    calls: list[tuple[str, dict[str, Any]]] = []
    for slug in SLUGS:
        plan = f"plans/{WHERE.get(slug, slug)}"
        got[f"{slug}:status"] = rows.get(plan)
        got[f"{slug}:show"] = lab.cli("show", "--config", cfg, plan, cwd=lab.repo).stdout
        calls += [("log", {"path": plan}), ("status", {"path": plan})]
    replies = mcp(lab, calls)
    for i, slug in enumerate(SLUGS):
        for j, what in enumerate(("mcp-log", "mcp-status")):
            reply = replies[2 * i + j]
            got[f"{slug}:{what}"] = (reply.get("result") or {}).get("structuredContent") or reply
    lab.run()
    rows = {r["plan"]: r for r in json.loads(lab.cli("status", "--json", "--config", cfg).stdout)}
    for slug in SLUGS:
        got[f"{slug}:after"] = rows.get(f"plans/{WHERE.get(slug, slug)}")
    got["calls"] = {
        s: len(lab.calls(s)) for s in ("prerun", "pre", "samep", "samep-v2", "gate2", "rej")
    }
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r67-surface-logrow", _build)


def _text(shown: Any) -> str:
    return shown if isinstance(shown, str) else json.dumps(shown, ensure_ascii=False)


def _noted(what: str, shown: Any) -> bool:
    if what in ("status", "mcp-status", "after"):
        row = shown["plans"][0] if what == "mcp-status" else shown
        notes = [*(row.get("notes") or []), row.get("problem")]
        return any("E_OWNED_BLOCK_CHANGED" in str(n) or "E_PLAN_HASH_MISMATCH" in str(n)
                   for n in notes)  # fmt: skip
    text = _text(shown)
    return "E_OWNED_BLOCK_CHANGED" in text or "E_PLAN_HASH_MISMATCH" in text


ROWS = ("status", "mcp-status", "after")
IDS = [f"{slug}-{what}" for slug in SLUGS for what in (*ROWS, "show", "mcp-log")]
#: Round 67's 12 strict xfails (``pre``/``samep``/``with``/``late`` on every row reader) are
#: fixed (see the module docstring): none left.
BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_the_row_notes_what_show_notes(lab: Lab, vid: str) -> None:
    slug, what = vid.split("-", 1)
    got = lab.got  # type: ignore[attr-defined]
    shown = got[f"{slug}:{what}"]
    assert shown is not None, vid
    assert "Traceback" not in _text(shown), _text(shown)[-1500:]
    ref = _noted("show", got[f"{slug}:show"])
    want = EXPECT[slug]
    mine = _noted(what, shown)
    if what in ROWS:
        assert mine == ref, (vid, "show noted" if ref else "show silent", _text(shown)[:2000])
    if want is not None:
        assert mine == want, (vid, _text(shown)[:2500])
    if mine and what in ("show", "mcp-log"):
        assert "forged-r67" not in _text(shown), _text(shown)[:2500]


def test_the_plans_ran_as_approved(lab: Lab) -> None:
    calls = lab.got["calls"]  # type: ignore[attr-defined]
    assert calls == {"prerun": 1, "pre": 0, "samep": 0, "samep-v2": 0, "gate2": 0, "rej": 0}
