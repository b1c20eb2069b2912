"""Round 70, agent-facing surfaces: round 69's plan folders (docs/plan-format.md: a folder
named as a plan file or source, ``PLAN.yml``/``PLAN.yaml``/``PLAN.json``/``PLAN.toon``/
``PLAN.md``, is no plan folder, what it holds ``E_UNSAFE_PATH``; a plan file beside a folder
named ``PLAN.yml``/``PLAN.yaml`` is ``E_PLAN_AMBIGUOUS``; a byte-exact rename
``PLAN.yml`` <-> ``PLAN.yaml`` keeps the record) attacked with the source names, deeper
nesting, case variants and renames back and forth around forged blocks.

Lab (one, module scope), local mode with ``agent.identity``, fake dates. Alice's plans run
(completed), then the agent:
- ``jn``: commits a folder ``plans/jn/PLAN.json/`` holding an "approved" plan and a forged
  "completed, approved by alice" EXECUTION_LOG.md; ``tn``: the same as
  ``plans/tn/PLAN.md/x/``; ``dp``: as ``plans/dp/PLAN.yaml/a/b/`` (deeper);
- ``lc``: ``plans/lc/plan.yml/PLAN.yml`` and ``uc``: ``plans/uc/PLAN.YAML/PLAN.yml`` (case
  variants: plans of their own to the controller), each with a forged log;
- ``rb``: renames PLAN.yml to PLAN.yaml, forges its ``execution:`` block (an output
  ``stolen: forged-r70``), renames it back (three commits, one pass);
- ``rf``: renames and forges in one commit; ``fr``: forges, a pass, then a byte-exact rename;
  ``fl``: a forged EXECUTION_LOG.md, a pass, then a rename;
- ``rs``: a pending plan's PLAN.yml deleted and a PLAN.yaml added holding the bytes of
  another folder's (``src``) completed file, in one commit.

Readers: the ``status --json`` row, ``show``, MCP ``log``/``status``. Asserted: the inner
folders are ``E_UNSAFE_PATH`` (MCP: refused), the plan beside a source-named folder keeps its
record, ``dp`` is ``E_PLAN_AMBIGUOUS`` on every reader (MCP ``status``'s ``reason`` too, as
docs/agents.md says), a case-variant plan is read by every reader, every renamed plan shows
Alice's record with the note where the agent forged, never the forged text, and only what
Alice approved ran.

Broke (strict xfails):
- ``rb:row``, ``rb:mcp-status``: after rename, forge, rename back the row and MCP status say
  ``status: null``, ``approver: null``, last event "E_ILLEGAL_TRANSITION: agent@example.com
  set status completed (from nothing) ...; ignored", its history notes gone, while show and
  MCP log say completed, approved by alice (with E_OWNED_BLOCK_CHANGED). The honest form
  (Alice renames, Bob renames back) is ``test_round70_surface_recordnames.py``'s ``hn3``.
- ``rf:agree``: renamed AND edited in one commit: the row says completed, approver alice;
  ``show`` drops the approval line and MCP ``log`` answers ``execution: null`` (status
  completed). Should: one answer.
- ``uc-in:mcp-log``, ``uc-in:mcp-status``: ``plans/uc/PLAN.YAML`` is frozen by the controller
  as a plan (row pending_approval; ``show`` reads it with its note) but MCP answers E_USAGE
  "'plans/uc/PLAN.YAML' is not a plan path" (``plans/lc/plan.yml`` is read: MCP takes only
  lower-case paths, the controller any; recordnames' ``cap`` is the plain case).
- ``rbx-row``, ``rbx-file``: after the agent's rename to PLAN.yaml (a pass) and back (a pass),
  its ``status: approved`` on the completed plan is taken as "approval request (approve) by
  agent", refused ``E_ALREADY_EXECUTED`` (it never runs again: ``rbx-ran`` held) and the
  controller commits the file as ``pending_approval``: the row says pending_approval,
  approver null, for a plan that ran. The control ``ctl`` (the same edit, no renames): an
  ignored E_ILLEGAL_TRANSITION, the row stays completed.
- ``dp:mcp-reason``: MCP ``status`` of the ambiguous ``plans/dp`` answers ``reason: null``
  (``status --json``: the E_PLAN_AMBIGUOUS note; docs/agents.md promises it).
Fixed (2026-11-30): ``rb:row``, ``rb:mcp-status``, ``rbx-row``, ``rbx-file``: a plan file's
removal with its folder's other name added in the same commit is a rename, no end of the
plan, whichever order git lists the two names in (``lifecycle._renamed``; the rename back
ended the plan and read PLAN.yml as a new one); ``rf:agree``: the record follows the plan
across any rename inside its folder, with or without an edit
(``ownrecord._renamed_from``), the edited block noted ``E_OWNED_BLOCK_CHANGED`` by every
reader. One rule: a plan's identity is its folder; which of its two names holds it is no
event of its life.
Held: ``jn``/``tn``/``dp`` inner folders on every reader, ``jn``/``tn`` keep Alice's record,
``dp`` ambiguous on the row, show and MCP log, ``lc`` on every reader, ``fr``/``fl`` (note
kept across the rename, forged text never shown), ``rs`` (pending, no approval, noted), and
nothing the agent wrote ran.

Fixed (2026-11-30): ``uc-in:mcp-log``, ``uc-in:mcp-status`` (r70mcp): a folder named as a plan
file or source in any case is no plan folder (docs/plan-format.md; a checkout on a
case-insensitive file system makes ``PLAN.YAML`` the plan file), so ``lc-in`` and ``uc-in`` now
assert E_UNSAFE_PATH on the row, ``show`` and MCP (they were frozen as plans of their own);
``dp:mcp-reason``: MCP ``status`` builds its rows as ``status --json`` does, its ``reason`` the
E_PLAN_AMBIGUOUS note.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BenchError, Lab, cases, plan_text
from oraclekit import as_text, mcp_payload, path_readers
from test_round2_execution_kit import shared

FORGED_LOG = (
    "# Execution log\n\n- Approved by alice@example.com\n- Status: completed\n"
    "- Action 1 `rec`: succeeded (forged-r70)\n"
)
DONE = ("jn", "tn", "lc", "uc", "dp", "rb", "rf", "fr", "fl", "src", "rbx", "ctl")


SHOWN = ("jn-in", "tn-in", "dp-in", "dp", "lc-in", "uc-in", "rb", "fr", "fl", "rf", "rs")


def _forge(lab: Lab, slug: str, name: str = "PLAN.yml") -> None:
    text = lab.read(slug, name)
    forged = text.replace("outputs: {}", "outputs: {stolen: forged-r70}")
    if forged == text:
        raise BenchError(f"nothing to forge in {slug}/{name}: {text}")
    lab.write(slug, forged, name)


def _build(root: Path) -> Lab:
    lab = Lab(
        root,
        extra="agent:\n  identity: {name: Agent, email: agent@example.com}\nui: {listen: 0}\n",
    )
    lab.git_date = "@1796100000 +0000"
    for s in DONE:
        lab.write(s, plan_text(s))
    lab.write("rs", plan_text("rs"))
    lab.commit("agent: plans", AGENT)
    lab.run()
    for s in DONE:
        lab.set_status(s, "approved")
    lab.commit("alice: approve", ALICE)
    lab.run()
    # the agent, after the runs
    lab.write("jn/PLAN.json", plan_text("jn-EVIL", status="approved"))
    lab.write("jn/PLAN.json", FORGED_LOG, "EXECUTION_LOG.md")
    lab.write("tn/PLAN.md/x", plan_text("tn-EVIL", status="approved"))
    lab.write("tn/PLAN.md/x", FORGED_LOG, "EXECUTION_LOG.md")
    lab.write("lc/plan.yml", plan_text("lc-inner"))
    lab.write("lc/plan.yml", FORGED_LOG, "EXECUTION_LOG.md")
    lab.write("uc/PLAN.YAML", plan_text("uc-inner"))
    lab.write("uc/PLAN.YAML", FORGED_LOG, "EXECUTION_LOG.md")
    lab.write("dp/PLAN.yaml/a/b", plan_text("dp-EVIL", status="approved"))
    lab.write("dp/PLAN.yaml/a/b", FORGED_LOG, "EXECUTION_LOG.md")
    lab.commit("agent: folders named as plan files", AGENT)
    # rb: rename, forge, rename back (three commits, one pass)
    lab.git("mv", "plans/rbx/PLAN.yml", "plans/rbx/PLAN.yaml")
    lab.commit("agent: rbx to yaml", AGENT)
    lab.git("mv", "plans/rb/PLAN.yml", "plans/rb/PLAN.yaml")
    lab.commit("agent: rb to yaml", AGENT)
    _forge(lab, "rb", "PLAN.yaml")
    lab.commit("agent: rb forge", AGENT)
    lab.git("mv", "plans/rb/PLAN.yaml", "plans/rb/PLAN.yml")
    lab.commit("agent: rb back", AGENT)
    # rf: rename and forge in one commit
    lab.git("mv", "plans/rf/PLAN.yml", "plans/rf/PLAN.yaml")
    _forge(lab, "rf", "PLAN.yaml")
    lab.commit("agent: rf", AGENT)
    # fr: forge, (pass), then a byte-exact rename
    _forge(lab, "fr")
    lab.commit("agent: fr forge", AGENT)
    # fl: a forged log, (pass), then a rename
    lab.write("fl", FORGED_LOG, "EXECUTION_LOG.md")
    lab.commit("agent: fl log", AGENT)
    # rs: a pending plan replaced by another folder's completed file, under the other name
    lab.git("rm", "-q", "plans/rs/PLAN.yml")
    lab.write("rs", lab.read("src"), "PLAN.yaml")
    lab.commit("agent: rs", AGENT)
    lab.run()
    lab.git("mv", "plans/rbx/PLAN.yaml", "plans/rbx/PLAN.yml")
    lab.commit("agent: rbx back", AGENT)
    lab.git("mv", "plans/fr/PLAN.yml", "plans/fr/PLAN.yaml")
    lab.commit("agent: fr rename", AGENT)
    lab.git("mv", "plans/fl/PLAN.yml", "plans/fl/PLAN.yaml")
    lab.commit("agent: fl rename", AGENT)
    lab.run()
    lab.set_status("rbx", "approved")  # on a completed plan: an illegal transition, ignored
    lab.set_status("ctl", "approved")  # the control: no renames before it
    lab.commit("agent: rbx approved", AGENT)
    lab.run()
    got_rbx = {k: lab.plan(k)["plan"]["status"] for k in ("rbx", "ctl")}
    names = {s: f"plans/{s}" for s in (*DONE, "rs")}
    names.update({
        "jn-in": "plans/jn/PLAN.json", "tn-in": "plans/tn/PLAN.md/x",
        "lc-in": "plans/lc/plan.yml", "uc-in": "plans/uc/PLAN.YAML",
        "dp-in": "plans/dp/PLAN.yaml/a/b",
    })  # fmt: skip
    got, _ = path_readers(lab, names, shown=SHOWN)
    got["file-status"] = got_rbx
    got["calls"] = {t: len(lab.calls(t)) for s in names for t in (s, f"{s}-EVIL", f"{s}-inner")}
    lab.got = got  # type: ignore[attr-defined]
    lab.names = names
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r70-surface-folders", _build)


def _mcp_row(got: dict[str, Any], key: str) -> dict[str, Any]:
    err, answer = mcp_payload(got[f"{key}:mcp-status"])
    assert not err, answer
    return answer["plans"][0]


# -- a folder named as a plan file or source, at any depth, is no plan ---------------------
INNER = ["jn-in", "tn-in", "dp-in"]
IN_IDS = [f"{k}:{w}" for k in INNER for w in ("row", "show", "mcp-log", "mcp-status")]
BROKEN_IN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(IN_IDS, IN_IDS, BROKEN_IN))
def test_a_folder_named_as_a_plan_file_holds_no_plan(lab: Lab, vid: str) -> None:
    key, what = vid.split(":")
    got = lab.got  # type: ignore[attr-defined]
    if what == "row":
        row = got["rows"][lab.names[key]]  # type: ignore[attr-defined]
        assert row["status"] is None and row["approver"] is None, row
        assert "E_UNSAFE_PATH" in as_text(row["reason"]), row
        return
    text = got[f"{key}:show"] if what == "show" else mcp_payload(got[f"{key}:{what}"])[1]
    text = as_text(text)
    if what != "show":
        assert mcp_payload(got[f"{key}:{what}"])[0], text[:1500]
    assert "E_UNSAFE_PATH" in text or "E_USAGE" in text, text[:1500]
    assert "forged-r70" not in text and "EVIL" not in text and "alice" not in text, text[:1500]


# -- the plan beside such a folder -----------------------------------------------------------
OUTER = ["jn:row", "jn:mcp-log", "tn:row", "tn:mcp-log",
         "dp:row", "dp:show", "dp:mcp-log", "dp:mcp-reason"]  # fmt: skip
BROKEN_OUTER: dict[str, Any] = {}  # dp:mcp-reason fixed 2026-11-30


@pytest.mark.parametrize("vid", cases(OUTER, OUTER, BROKEN_OUTER))
def test_the_plan_beside_it_is_read_as_docs_say(lab: Lab, vid: str) -> None:
    key, what = vid.split(":")
    got = lab.got  # type: ignore[attr-defined]
    row = got["rows"][f"plans/{key}"]
    if key != "dp":  # a folder named PLAN.json/PLAN.md beside PLAN.yml: the plan is read
        if what == "row":
            assert row["status"] == "completed" and row["approver"] == ALICE[1], row
            return
        err, answer = mcp_payload(got[f"{key}:mcp-log"])
        assert not err and (answer["execution"] or {}).get("status") == "completed", answer
        assert "forged-r70" not in as_text(answer), answer
        return
    # a folder named PLAN.yaml (its plan deeper): the folder is E_PLAN_AMBIGUOUS everywhere
    if what == "row":
        assert row["status"] is None and "E_PLAN_AMBIGUOUS" in as_text(row["reason"]), row
    elif what == "show":
        assert "E_PLAN_AMBIGUOUS" in got["dp:show"], got["dp:show"]
    elif what == "mcp-log":
        err, answer = mcp_payload(got["dp:mcp-log"])
        assert err and "E_PLAN_AMBIGUOUS" in as_text(answer), answer
    else:  # docs/agents.md: the MCP row's reason is the E_PLAN_AMBIGUOUS note
        mrow = _mcp_row(got, "dp")
        assert mrow["status"] is None, mrow
        assert "E_PLAN_AMBIGUOUS" in as_text(mrow["reason"]), mrow


# -- case variants of the names: no plan folder, refused by every reader (fixed 2026-11-30) ----
CASE = [f"{k}:{w}" for k in ("lc-in", "uc-in") for w in ("row", "show", "mcp-log", "mcp-status")]
BROKEN_CASE: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(CASE, CASE, BROKEN_CASE))
def test_a_case_variant_folder_is_refused_by_every_reader(lab: Lab, vid: str) -> None:
    """Was: ``plans/uc/PLAN.YAML`` (and ``plans/lc/plan.yml``) frozen by the controller as
    plans of their own, ``uc-in`` "not a plan path" to MCP. Now (docs/plan-format.md): a
    folder named as a plan file or source in any case is no plan folder (a checkout on a
    case-insensitive file system makes it the plan file), E_UNSAFE_PATH on every reader."""
    key, what = vid.split(":")
    got = lab.got  # type: ignore[attr-defined]
    path = lab.names[key]  # type: ignore[attr-defined]
    if what == "row":
        row = got["rows"][path]
        assert row["status"] is None and row["approver"] is None, row
        text = as_text(row)
    elif what == "show":
        text = got[f"{key}:show"]
    else:
        err, answer = mcp_payload(got[f"{key}:{what}"])
        assert err, answer
        text = as_text(answer)
    assert "E_UNSAFE_PATH" in text, text[:1500]
    assert "forged-r70" not in text and "pending_approval" not in text, text[:1500]
    assert ALICE[1] not in text, text[:1500]


# -- renames of a completed plan's file: the record, one answer ----------------------------------
REN = [f"{k}:{w}" for k in ("rb", "fr", "fl") for w in ("row", "mcp-status", "show", "mcp-log")]
REN += ["rf:agree", "rs:row", "rs:show", "rs:mcp-log"]
BROKEN_REN: dict[str, Any] = {}
FORGED = {"rb": "block", "fr": "block", "fl": "log"}


@pytest.mark.parametrize("vid", cases(REN, REN, BROKEN_REN))
def test_a_renamed_plan_file_keeps_its_record_on_every_reader(lab: Lab, vid: str) -> None:
    key, what = vid.split(":")
    got = lab.got  # type: ignore[attr-defined]
    row = got["rows"][f"plans/{key}"]
    if key == "rs":  # a pending plan replaced by a copy of another's completed file, renamed
        if what == "row":
            assert row["status"] == "pending_approval" and row["approver"] is None, row
            assert "E_OWNED_BLOCK_CHANGED" in as_text(row["notes"]), row
        elif what == "show":
            text = got["rs:show"]
            assert "E_OWNED_BLOCK_CHANGED" in text and "Approved:" not in text, text
        else:
            err, answer = mcp_payload(got["rs:mcp-log"])
            assert not err and answer["execution"] is None, answer
            assert "E_OWNED_BLOCK_CHANGED" in as_text(answer["problems"]), answer
        return
    if key == "rf":  # renamed AND edited in one commit: whatever the answer, one answer
        text = got["rf:show"]
        _, log = mcp_payload(got["rf:mcp-log"])
        shown = ("Approved: by alice" in text, (log["execution"] or {}).get("status"))
        rowsays = (row["approver"] == ALICE[1], row["status"])
        assert "forged-r70" not in text + as_text(log), (text, log)
        assert shown == rowsays, (shown, rowsays, row)
        return
    noted = key in FORGED
    if what in ("row", "mcp-status"):
        r = row if what == "row" else _mcp_row(got, key)
        assert r["status"] == "completed" and r["approver"] == ALICE[1], r
        assert noted == ("E_OWNED_BLOCK_CHANGED" in as_text(r["notes"])), r
    elif what == "show":
        text = got[f"{key}:show"]
        assert "Status:  completed" in text and "Approved: by alice" in text, text
        assert noted == ("E_OWNED_BLOCK_CHANGED" in text), text
        assert "forged-r70" not in text, text
    else:
        err, answer = mcp_payload(got[f"{key}:mcp-log"])
        assert not err, answer
        assert (answer["execution"] or {}).get("status") == "completed", answer
        assert answer["outputs"] == {"1": {}}, answer
        assert "forged-r70" not in as_text(answer), answer
        assert noted == ("E_OWNED_BLOCK_CHANGED" in as_text(answer["problems"])), answer


RUNS = {s: 1 for s in DONE}
RUNS.update({f"{s}-EVIL": 0 for s in ("jn", "tn", "dp")})
RUNS.update({"lc-inner": 0, "uc-inner": 0, "rs": 0})


def test_only_what_alice_approved_ran(lab: Lab) -> None:
    calls = lab.got["calls"]  # type: ignore[attr-defined]
    assert {t: calls.get(t, len(lab.calls(t))) for t in RUNS} == RUNS, calls


# -- after a rename back, the agent's "approved" on the completed plan ---------------------------
BROKEN_RBX: dict[str, Any] = {}


RBX = [f"{k}-{w}" for k in ("rbx", "ctl") for w in ("row", "file", "ran")]


@pytest.mark.parametrize("vid", cases(RBX, RBX, BROKEN_RBX))
def test_a_renamed_back_plan_stays_completed(lab: Lab, vid: str) -> None:
    key, what = vid.split("-")
    got = lab.got  # type: ignore[attr-defined]
    if what == "ran":  # it never runs again
        assert got["calls"][key] == 1, got["calls"]
    elif what == "file":  # no commit of the controller's calls a plan that ran pending
        assert got["file-status"][key] != "pending_approval", got["file-status"]
    else:
        row = got["rows"][f"plans/{key}"]
        assert row["status"] == "completed" and row["approver"] == ALICE[1], row
