"""Round 70, agent-facing surfaces: round 69's plan-folder rule (a folder named as a plan file
or source is no plan folder, docs/plan-format.md) does not name the controller's RECORD file,
and readers find plans by their id their own way. Folders named as the record's file or as a
case variant of a plan file, and a rename back to PLAN.yml, read by every reader including the
reviewer's page.

Lab (one, module scope), local mode with ``agent.identity`` and ``ui.listen``, fake dates:
- ``lfpend``: beside a pending plan the agent commits a FOLDER ``EXECUTION_LOG.md/`` (a note
  in it); Alice approves; ``lfplan``: the same folder holds a plan of the agent's;
- ``lfdone``: after Alice's plan ran, the agent replaces its EXECUTION_LOG.md with a folder of
  that name holding a plan and a forged "completed, approved by alice" log;
- ``up``: beside Alice's completed plan, the agent commits ``plans/up/PLAN.YML/PLAN.yml``
  (a case variant of a plan file's name: a plan of its own to the controller) with a forged
  log;
- ``hn3``: Alice renames her completed PLAN.yml to PLAN.yaml (one pass), Bob renames it back
  (bytes kept both times: honest);
- ``honest``: approved in the same pass as ``lfpend``/``lfplan``; ``cap``: Alice's plain plan
  ``plans/Deploy`` (a capital letter in its folder name).

Readers: the ``status --json`` row, ``show``, MCP ``log``/``status``, the page ``/plan/<id>``
and ``/api/plan/<id>`` (one daemon). Asserted: the pass exits 0 and every approved plan ran
once (no stall), nothing of the agent's ran; the completed plans' readers show Alice's record
(the replaced log noted ``E_OWNED_BLOCK_CHANGED``, the forged text never shown); a plan the
controller froze (its row) is read by every reader, or refused by every reader.

Broke (strict xfails):
- ``hn3:row``, ``hn3:mcp-status``, ``audit:hn3``: Alice renames her completed PLAN.yml to
  PLAN.yaml, a pass, Bob renames it back, bytes kept both times (honest): the row and MCP
  ``status`` answer ``status: null``, ``approver: null``, last event "E_ILLEGAL_TRANSITION:
  bob@ops.example.com set status completed (from nothing) ...; ignored" (its history notes
  gone), and ``plangate audit`` reports that as an ``illegal`` finding (exit 1), while
  ``show``, MCP ``log``, the page and ``/api/plan/`` show her completed run. Should: a rename
  back is a rename too (docs/plan-format.md: the record goes on under either name).
- ``{lfplan-in,lfdone-in,up-in}:{mcp-log,mcp-status}``: ``plans/lfplan/EXECUTION_LOG.md``,
  ``plans/lfdone/EXECUTION_LOG.md`` and ``plans/up/PLAN.YML`` are frozen by the controller as
  plans of their own (rows pending_approval; ``show``, the page and ``/api/plan/`` read them,
  an approval would run them) but MCP ``log``/``status`` answer E_USAGE "'<id>' is not a plan
  path". ``cap:mcp-log``, ``cap:mcp-status``: the same for Alice's completed
  ``plans/Deploy``: MCP takes only lower-case paths (``submit``'s slug rule), the controller
  freezes and runs any. Should: one answer (read them, or refuse such folder names everywhere
  as round 69 does for ``PLAN.json``).
Fixed (2026-11-30): ``hn3:row``, ``hn3:mcp-status``, ``audit:hn3``: git lists
``PLAN.yaml``'s removal before ``PLAN.yml``'s addition, and the index ended the plan at the
removal; a plan file's removal with its folder's other name added in the same commit is now
a rename, whichever order the names come in (``lifecycle._renamed``): a plan's identity is
its folder, its state goes on.
Held: the pass exits 0 and every approved plan ran once beside the agent's folders (a folder
at EXECUTION_LOG.md: the run goes on, the log is not written, as documented), nothing of the
agent's ran; ``lfdone``'s replaced log noted ``E_OWNED_BLOCK_CHANGED`` on every reader and
``log-changed`` by the audit, the forged text never shown; ``up`` and ``hn3`` on the page,
``show`` and MCP ``log``; the inner plans on ``show``, the page and ``/api/plan/``; the audit
lists each run valid once.

Since round 71 (2026-11-30): ``up``'s folder ``PLAN.YML/`` beside Alice's ``PLAN.yml`` makes
``plans/up`` E_PLAN_AMBIGUOUS on every reader (a plan file's names compared
case-insensitively, one path on a case-insensitive checkout); the ``up:*`` ids of
``test_a_completed_plan_shows_alices_record`` assert that (the page and ``/api/plan/`` still
show her record under the note), no longer "completed, approver alice" on the row and MCP.

Fixed (2026-11-30): ``cap:mcp-log``, ``cap:mcp-status`` and the inner ids (r70mcp): one rule
for what is a plan id (docs/plan-format.md), used by discovery and MCP's path parsing alike: a
folder named as a plan file, a source or the controller's record (``EXECUTION_LOG.md``),
compared case-insensitively, is no plan folder, E_UNSAFE_PATH on every reader; any other name
(``plans/Deploy``) is read by MCP. The inner ids' test
(``test_a_folder_named_as_a_record_or_plan_file_is_refused_by_every_reader``) now asserts the
refusal of ``lfplan-in``/``lfdone-in``/``up-in`` on the row, ``show``, MCP, the
page and ``/api/plan/`` (they were frozen as plans of their own).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, Lab, cases, plan_text
from oraclekit import as_text, keyed_pages, mcp_payload, path_readers
from test_round2_execution_kit import shared

FORGED_LOG = (
    "# Execution log\n\n- Approved by alice@example.com\n- Status: completed\n"
    "- Action 1 `rec`: succeeded (forged-r70)\n"
)
NAMES = {
    "lfpend": "plans/lfpend", "lfplan": "plans/lfplan", "lfdone": "plans/lfdone",
    "up": "plans/up", "hn3": "plans/hn3", "honest": "plans/honest",
    "lfplan-in": "plans/lfplan/EXECUTION_LOG.md", "lfdone-in": "plans/lfdone/EXECUTION_LOG.md",
    "up-in": "plans/up/PLAN.YML",
    "cap": "plans/Deploy",
}  # fmt: skip


def _build(root: Path) -> Lab:
    lab = Lab(
        root,
        extra="agent:\n  identity: {name: Agent, email: agent@example.com}\nui: {listen: 0}\n",
    )
    lab.git_date = "@1796100000 +0000"
    for s in ("lfpend", "lfplan", "lfdone", "up", "hn3", "honest", "Deploy"):
        lab.write(s, plan_text(s))
    lab.commit("agent: plans", AGENT)
    lab.run()
    for s in ("lfdone", "up", "hn3", "Deploy"):
        lab.set_status(s, "approved")
    lab.commit("alice: approve", ALICE)
    lab.run()
    lab.write("lfpend/EXECUTION_LOG.md", "a note\n", "note.txt")
    lab.write("lfplan/EXECUTION_LOG.md", plan_text("lfplan-inner"))
    lab.git("rm", "-q", "plans/lfdone/EXECUTION_LOG.md")
    lab.write("lfdone/EXECUTION_LOG.md", plan_text("lfdone-inner"))
    lab.write("lfdone/EXECUTION_LOG.md", FORGED_LOG, "EXECUTION_LOG.md")
    lab.write("up/PLAN.YML", plan_text("up-inner"))
    lab.write("up/PLAN.YML", FORGED_LOG, "EXECUTION_LOG.md")
    lab.commit("agent: folders named as record files", AGENT)
    lab.git("mv", "plans/hn3/PLAN.yml", "plans/hn3/PLAN.yaml")
    lab.commit("alice: PLAN.yaml", ALICE)
    for s in ("lfpend", "lfplan", "honest"):
        lab.set_status(s, "approved")
    lab.commit("alice: approve the rest", ALICE)
    passed = lab.run(check=False)
    lab.git("mv", "plans/hn3/PLAN.yaml", "plans/hn3/PLAN.yml")
    lab.commit("bob: PLAN.yml after all", BOB)
    lab.run()
    got, _ = path_readers(lab, NAMES)
    got["pass"] = (passed.returncode, passed.stderr[-1500:])
    got["calls"] = {
        t: len(lab.calls(t))
        for t in ("lfpend", "lfplan", "lfdone", "up", "hn3", "honest", "Deploy", "lfplan-inner",
                  "lfdone-inner", "up-inner")
    }  # fmt: skip
    got["audit"] = lab.audit(config=lab.config)
    got.update(keyed_pages(lab, NAMES, "plans/up/PLAN.YML"))
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r70-surface-recordnames", _build)


# -- no stall: every approved plan ran once, nothing of the agent's ran ------------------------
def test_the_pass_went_on_and_only_what_alice_approved_ran(lab: Lab) -> None:
    got = lab.got  # type: ignore[attr-defined]
    assert got["pass"][0] == 0, got["pass"]
    want = {"lfpend": 1, "lfplan": 1, "lfdone": 1, "up": 1, "hn3": 1, "honest": 1, "Deploy": 1,
            "lfplan-inner": 0, "lfdone-inner": 0, "up-inner": 0}  # fmt: skip
    assert got["calls"] == want, got["calls"]
    for s in ("lfpend", "lfplan", "honest"):
        row = got["rows"][f"plans/{s}"]
        assert row["status"] == "completed" and row["approver"] == ALICE[1], row


# -- Alice's completed plans: her record on every reader -----------------------------------
DONE = [f"{k}:{w}" for k in ("lfdone", "up", "hn3", "cap")
        for w in ("row", "show", "mcp-log", "mcp-status", "page", "api")]  # fmt: skip
BROKEN_DONE: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(DONE, DONE, BROKEN_DONE))
def test_a_completed_plan_shows_alices_record(lab: Lab, vid: str) -> None:
    key, what = vid.split(":")
    got = lab.got  # type: ignore[attr-defined]
    noted = key == "lfdone"  # its log replaced by the agent's folder
    if key == "up":
        _up_is_ambiguous(got, what)
        return
    if what in ("row", "mcp-status"):
        if what == "row":
            r = got["rows"][NAMES[key]]
        else:
            err, answer = mcp_payload(got[f"{key}:mcp-status"])
            assert not err, answer
            r = answer["plans"][0]
        assert r["status"] == "completed" and r["approver"] == ALICE[1], r
        assert noted == ("E_OWNED_BLOCK_CHANGED" in as_text(r["notes"])), r
        return
    if what == "mcp-log":
        err, text = mcp_payload(got[f"{key}:mcp-log"])
        assert not err and (text["execution"] or {}).get("status") == "completed", text
        text = as_text(text)
    else:
        text = got[f"{key}:{what}"]
    assert "forged-r70" not in text and "Traceback" not in text, text[:2000]
    assert "completed" in text and ALICE[1] in text, text[:2000]
    assert noted == ("E_OWNED_BLOCK_CHANGED" in text), text[:2000]


def _up_is_ambiguous(got: dict[str, Any], what: str) -> None:
    """Since round 71 the agent's ``PLAN.YML/`` beside Alice's ``PLAN.yml`` claims her file's
    place (one path on a case-insensitive checkout): the folder is E_PLAN_AMBIGUOUS on every
    reader, as a ``PLAN.yaml`` there is (round 69); the page and ``/api/plan/`` still show
    her record under that note, the forged log never."""
    if what in ("row", "mcp-status"):
        if what == "row":
            r = got["rows"][NAMES["up"]]
        else:
            err, answer = mcp_payload(got["up:mcp-status"])
            assert not err, answer
            r = answer["plans"][0]
        assert r["status"] is None and "E_PLAN_AMBIGUOUS" in json.dumps(r), r
        return
    if what == "mcp-log":
        err, text = mcp_payload(got["up:mcp-log"])
        assert err and "E_PLAN_AMBIGUOUS" in as_text(text), text
        return
    text = got[f"up:{what}"]
    assert "forged-r70" not in text and "Traceback" not in text, text[:2000]
    assert "E_PLAN_AMBIGUOUS" in text, text[:2000]
    if what in ("page", "api"):
        assert "completed" in text and ALICE[1] in text, text[:2000]


# -- the agent's inner folders: no plan folders, refused by every reader (fixed 2026-11-30) -----
INNER = [f"{k}:{w}" for k in ("lfplan-in", "lfdone-in", "up-in")
         for w in ("row", "show", "mcp-log", "mcp-status", "page", "api")]  # fmt: skip
BROKEN_INNER: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(INNER, INNER, BROKEN_INNER))
def test_a_folder_named_as_a_record_or_plan_file_is_refused_by_every_reader(
    lab: Lab, vid: str
) -> None:
    """Was: frozen as plans (rows pending_approval, read by ``show``, the page and
    ``/api/plan/``), "not a plan path" to MCP. Now (the rule of docs/plan-format.md): a
    folder named as the record's file or as a case variant of a plan file is no plan
    folder, E_UNSAFE_PATH on every reader (the page and ``/api/plan/`` may show the file's
    text under that code, as round 69's ``nest``), never frozen: no status, no approver."""
    key, what = vid.split(":")
    got = lab.got  # type: ignore[attr-defined]
    path = NAMES[key]
    if what == "row":
        row = got["rows"][path]
        assert row["status"] is None and row["approver"] is None, row
        text = as_text(row)
    elif what in ("mcp-log", "mcp-status"):
        err, text = mcp_payload(got[f"{key}:{what}"])
        assert err, text
        text = as_text(text)
    elif what == "api":  # the file's text may be shown; its row is no plan's
        text = got[f"{key}:api"]
        assert json.loads(text)["row"]["status"] is None, text[:2000]
    else:
        text = got[f"{key}:{what}"]
        assert "s-pending_approval" not in text.split("</style>")[-1], text[:2000]
    assert "E_UNSAFE_PATH" in text, text[:2000]
    assert "forged-r70" not in text and "Traceback" not in text, text[:2000]
    assert ALICE[1] not in text, text[:2000]


# -- the audit (``audit --json --config``) agrees --------------------------------------------
AUDIT = ["audit:runs", "audit:lfdone", "audit:hn3"]
BROKEN_AUDIT: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(AUDIT, AUDIT, BROKEN_AUDIT))
def test_the_audit_agrees(lab: Lab, vid: str) -> None:
    _, report = lab.got["audit"]  # type: ignore[attr-defined]
    findings = report.get("findings", [])
    if vid == "audit:runs":
        valid = sorted(e["plan"] for e in report["executions"] if e.get("approval_valid"))
        want = [
            "plans/" + s for s in ("Deploy", "hn3", "honest", "lfdone", "lfpend", "lfplan", "up")
        ]
        assert valid == want, report["executions"]
    elif vid == "audit:lfdone":
        kinds = {(f["plan"], f["kind"]) for f in findings}
        assert ("plans/lfdone", "log-changed") in kinds, findings
    else:
        assert [f for f in findings if f["plan"] == "plans/hn3"] == [], findings
