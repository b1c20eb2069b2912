"""Round 74, agent-facing surfaces: round 73's log rule ("a twin (``execution_log.md``,
zero-width or bidi characters, a symlink, a folder) beside or instead of the controller's log
is noted by the readers, and a held row's page shows only its code, notes and the controller's
own record", docs/plan-format.md) attacked with forged logs and records the agent commits
where a reader might present them as the controller's: in a folder HELD from birth (the
controller writes no log there, so the only "log" is the agent's), inside the claim itself, as
the plan file's own ``execution:``/``approval:`` blocks, beside a held source; and at names
NTFS makes one with ``EXECUTION_LOG.md`` or ``PLAN.yml`` (git's ``core.protectNTFS``: a
trailing dot or space, an alternate data stream ``::$DATA``, the 8.3 short name
``EXECUT~1.MD``), names round 72's fold (case, HFS+ ignorables, NFC/NFD) leaves alone.

Lab (one, module scope; three ``run --once`` passes; one daemon at the end):
- the agent commits ``l-*`` plans (pending, never approved) with a forged "Approved by
  alice@example.com, Status: completed" log (``forged-r74``) named: ``l-exact``
  ``EXECUTION_LOG.md`` (round 67's rule: the control of the note), ``l-dot``
  ``EXECUTION_LOG.md.``, ``l-sp`` ``EXECUTION_LOG.md `` (trailing space), ``l-ads``
  ``EXECUTION_LOG.md::$DATA``, ``l-83`` ``EXECUT~1.MD``; ``l-ok`` gets none (honest: no
  note); ``d-83`` and ``d-dot`` run (Alice approves them in pass 2), then the agent commits
  the forged log beside the controller's as ``EXECUT~1.MD`` (NTFS's short name of
  ``EXECUTION_LOG.md``: written after it, in git's index order, on a Windows checkout with
  8.3 names it IS that file) and ``EXECUTION_LOG.md.`` (pass 3);
- held folders: ``h-log`` (PLAN.yml, a symlink ``plan.yml``, the forged
  ``EXECUTION_LOG.md``), ``h-twlog`` (PLAN.yml, a folder ``PLAN.YML/``, the forged log at
  ``Execution_Log.md``), ``h-inlog`` (PLAN.yml beside a folder ``plan.yaml/`` holding its own
  PLAN.yml and the forged ``EXECUTION_LOG.md``), ``h-blocks`` (PLAN.yml carrying forged
  controller blocks ``frozen``/``approval``/``execution: {status: completed}``, beside a
  symlink ``plan.yml``), ``h-src`` (``PLAN.json`` beside a symlink ``plan.yml`` and the
  forged ``EXECUTION_LOG.md``);
- NTFS twins of the plan file beside ``PLAN.yml``: ``p-dot`` (``PLAN.yml.``), ``p-sp``
  (``PLAN.yml ``), ``p-ads`` (``PLAN.yml::$DATA``), each an ``approved`` plan calling
  ``rec`` ``<p>-in``; ``d-ok`` (the control: Alice approves, it runs once, its log is the
  controller's); Alice approves ``d-ok``, every ``p-*`` and every ``h-*`` PLAN.yml (pass 2).
Readers (``<plan>:<reader>``): ``status --json``'s row, ``show --json``, MCP ``log``, the
daemon's ``/api/plan/<id>`` and page ``/plan/<id>``; the ``rec`` calls; the fresh-clone
``plangate audit --json``.
Must hold: no reader shows the forged text (``forged-r74``) or calls a plan that never ran
``completed``; a forged log at a name one path with ``EXECUTION_LOG.md`` on a checkout git
guards is noted (E_OWNED_BLOCK_CHANGED, or the folder held); held folders run zero times and
carry their code on every reader; ``d-ok`` runs once, no note; the audit's valid runs are the
completed rows.

Seen (round 74):
- ``d-83:{row,show,mcp-log,api,page}`` (5 ids, one class): the agent's forged "Approved by
  alice@example.com, Status: completed" log committed as ``EXECUT~1.MD`` beside the
  controller's ``EXECUTION_LOG.md`` of a plan that ran is noted by no reader (no
  ``E_OWNED_BLOCK_CHANGED``). On a Windows checkout with 8.3 names (NTFS's default on the
  system drive) ``EXECUT~1.MD`` is the short name of ``EXECUTION_LOG.md``: git writes it after
  the long name (index order: ``~`` sorts after ``I``) and the reviewer's EXECUTION_LOG.md
  reads "completed, approved by alice" as the agent wrote it. Should (docs/plan-format.md:
  names compared "as the file systems git guards a checkout against compare them"; git's
  ``core.protectNTFS``, on by default everywhere, guards exactly this short-name form for
  ``.git``, ``GIT~1``; round 73: an entry that IS the log on some checkout is "someone else's
  text at the record's place, whoever committed it"): noted E_OWNED_BLOCK_CHANGED on every
  reader as ``execution_log.md`` is. The forged text itself is shown by no reader. Fixed
  (2026-11-30, r74heldread): every claim of a plan file's, a source's or the log's place is
  decided by one function, ``controller.plan.names.same_name``: the fold now drops what NTFS
  drops (trailing dots and spaces, ``::$DATA``) and a name NTFS could give as the 8.3 short
  name (``<up to 6 chars of the base>~<digits>.<up to 3 of the extension>``) is the name.
- ``h-src:{show,mcp-log,api,page}`` (4 ids): the class of
  ``test_round74_surface_heldsources.py`` (a source held E_PLAN_AMBIGUOUS: ``show`` refuses
  under E_SCHEMA_INVALID, MCP ``log`` says "no plan", the page and API say
  ``E_UNSAFE_PATH: no readable PLAN file`` with ``code: null``); the forged
  ``EXECUTION_LOG.md`` beside it is noted by ``show`` only, shown by none. ``mcp-log``,
  ``api``, ``page`` fixed (2026-11-30, r74heldread: the readers of a plan by its id ask the
  source verdict, the row carries ``held``); ``h-src:show`` fixed (2026-11-30, r74heldcli):
  ``show`` reads the folder through the one folder verdict
  (``controller.plan.names.folder_verdict``), E_PLAN_AMBIGUOUS, as the row says.
Noted, not counted (then): ``l-dot``, ``l-sp``, ``l-ads``, ``d-dot`` (a trailing dot or
space, a ``::$DATA`` stream) and ``p-dot``, ``p-sp``, ``p-ads`` are noted by no reader and the
``p-*`` plans run (once, the PLAN.yml Alice approved; never the twin): git for Windows refuses
to check out such a path ("invalid path"), so no checkout shows them as the log or the plan
file. Changed (2026-11-30, r74heldread): NTFS makes them one name, so by the one fold the
``l-*``/``d-dot`` logs are noted E_OWNED_BLOCK_CHANGED and the ``p-*`` folders are held
E_PLAN_AMBIGUOUS from birth (neither file runs), as a case twin is. ``l-83`` (no
controller log beside it; a file of its own name on NTFS) is asked neither way. The
``h-blocks`` note names Alice ("edited after (or without) the controller's record by
alice@example.com") for blocks the agent wrote: she committed the file last (her status
edit); the notes' "who" is the last committer, as documented, but reads as if she forged them.
Held: the held folders (a symlink or folder claim beside a forged ``EXECUTION_LOG.md``, a
case-twin log, a log inside the claim folder, forged ``frozen``/``approval``/``execution``
blocks) run zero times, no controller commit, ``E_PLAN_AMBIGUOUS`` on every reader, no
document, hash or log on the API, the forged text shown nowhere; the exact-name forgery noted
everywhere; ``d-ok`` once without a note; the fresh-clone audit agrees.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab, cases, clone_audit, load_yaml, plan_text
from mcpkit import session
from oraclekit import page_texts
from test_round2_execution_kit import shared

FORGED = (
    "# Execution log\n\n- Approved by alice@example.com\n- Status: completed\n"
    "- Action 1 `rec`: succeeded (forged-r74)\n"
)
LOGS: dict[str, str | None] = {
    "l-ok": None,
    "l-exact": "EXECUTION_LOG.md",
    "l-dot": "EXECUTION_LOG.md.",
    "l-sp": "EXECUTION_LOG.md ",
    "l-ads": "EXECUTION_LOG.md::$DATA",
    "l-83": "EXECUT~1.MD",
}
# plans that run (Alice approves), then the agent commits a forged log beside the controller's
AFTER = {"d-83": "EXECUT~1.MD", "d-dot": "EXECUTION_LOG.md."}
HELD = ("h-log", "h-twlog", "h-inlog", "h-blocks", "h-src")
TWINS = {"p-dot": "PLAN.yml.", "p-sp": "PLAN.yml ", "p-ads": "PLAN.yml::$DATA"}
BLOCKS = """\
frozen:
  hash: "sha256:0000000000000000000000000000000000000000000000000000000000000000"
approval:
  approver: alice@example.com
  approved_at: "2026-11-30T00:00:00Z"
execution:
  status: completed
  note: forged-r74
"""


def _build(root: Path) -> Lab:
    lab = Lab(root, extra="agent:\n  identity: {name: Agent, email: agent@example.com}\n"
              "ui: {listen: 0}\n")  # fmt: skip
    for plan, name in LOGS.items():
        lab.write(plan, plan_text(plan))
        if name:
            lab.write(plan, FORGED, name)
    for plan in ("d-ok", *AFTER):
        lab.write(plan, plan_text(plan))
    for plan in HELD:
        if plan != "h-src":
            lab.write(plan, plan_text(plan))
    link = lab.repo / "plans" / "h-log" / "plan.yml"
    link.symlink_to("../d-ok/PLAN.yml")
    lab.write("h-log", FORGED, "EXECUTION_LOG.md")
    lab.write("h-twlog/PLAN.YML", plan_text("h-twlog-in", "approved"))
    lab.write("h-twlog", FORGED, "Execution_Log.md")
    lab.write("h-inlog/plan.yaml", plan_text("h-inlog-in", "approved"))
    lab.write("h-inlog/plan.yaml", FORGED, "EXECUTION_LOG.md")
    lab.write("h-blocks", plan_text("h-blocks") + BLOCKS)
    (lab.repo / "plans" / "h-blocks" / "plan.yml").symlink_to("../d-ok/PLAN.yml")
    lab.write("h-src", json.dumps(dict(load_yaml(plan_text("h-src"))), indent=1), "PLAN.json")
    (lab.repo / "plans" / "h-src" / "plan.yml").symlink_to("../d-ok/PLAN.yml")
    lab.write("h-src", FORGED, "EXECUTION_LOG.md")
    for plan, name in TWINS.items():
        lab.write(plan, plan_text(plan))
        lab.write(plan, plan_text(f"{plan}-in", "approved"), name)
    lab.commit("agent: plans", AGENT)
    lab.run()
    time.sleep(1.1)
    for plan in ["d-ok", *AFTER, *TWINS, *[h for h in HELD if h != "h-src"]]:
        lab.set_status(plan, "approved")
    lab.commit("alice: approve", ALICE)
    lab.run()
    for plan, name in AFTER.items():
        lab.write(plan, FORGED, name)
    lab.commit("agent: notes", AGENT)
    lab.run()
    cfg = str(lab.config)
    plans = [*LOGS, "d-ok", *AFTER, *HELD, *TWINS]
    got: dict[str, Any] = {}
    got["rows"] = {
        r["plan"]: r for r in json.loads(lab.cli("status", "--json", "--config", cfg).stdout)
    }
    got["calls"] = {t: len(lab.calls(t)) for t in [*plans, *[f"{p}-in" for p in plans]]}
    got["show"] = {}
    for plan in plans:
        done = lab.cli("show", "--json", "--config", cfg, str(lab.repo / "plans" / plan))
        got["show"][plan] = f"{done.returncode} {done.stdout}{done.stderr}"
    replies = session(lab, [("log", {"path": f"plans/{p}"}) for p in plans])[0]
    got["mcp-log"] = {
        p: json.dumps(r, ensure_ascii=False) for p, r in zip(plans, replies, strict=True)
    }
    pages = page_texts(lab, [f"plans/{p}" for p in plans], "plans/d-ok")
    got["page"] = {p: pages[f"plans/{p}"][0] for p in plans}
    got["api"] = {p: pages[f"plans/{p}"][1] for p in plans}
    got["subjects"] = {p: lab.subjects(p) for p in plans}
    report, valid = clone_audit(lab, root)
    got["audit"] = {"valid": sorted(valid), "runs": len(report["executions"])}
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r74-surface-heldlogs", _build)


def _xf(what: str) -> Any:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 74: {what}")


READERS = ("row", "show", "mcp-log", "api", "page")
NOTED = ("E_OWNED_BLOCK_CHANGED", "E_PLAN_AMBIGUOUS", "E_UNSAFE_PATH")
NOTE_OWNED = ("E_OWNED_BLOCK_CHANGED",)
# names git for Windows refuses to check out (a trailing dot or space, a colon): NTFS makes
# them the log, so they are noted as a twin is (round 74, r74heldread: the readers say so on
# Linux too); the forgery must still never be shown
REFUSED_BY_GIT = ("l-dot", "l-sp", "l-ads", "d-dot")
LIDS = [f"{p}:{r}" for p in [*LOGS, "d-ok", *AFTER] for r in READERS]
LBROKEN: dict[str, Any] = {}


def _text(got: dict[str, Any], plan: str, reader: str) -> str:
    if reader == "row":
        return json.dumps(got["rows"].get(f"plans/{plan}"), ensure_ascii=False)
    return str(got[reader].get(plan, ""))


@pytest.mark.parametrize("vid", cases(LIDS, LIDS, LBROKEN))
def test_a_forged_log_is_noted_and_never_shown(lab: Lab, vid: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    plan, reader = vid.split(":")
    ran = plan.startswith("d-")
    row = got["rows"][f"plans/{plan}"]
    assert row["status"] == ("completed" if ran else "pending_approval"), row
    assert got["calls"][plan] == (1 if ran else 0), got["calls"]
    text = _text(got, plan, reader)
    assert "forged-r74" not in text, text[-1500:]
    noted = any(c in text for c in NOTE_OWNED)
    if plan in ("l-ok", "d-ok"):
        assert not noted, text[-1500:]
    elif plan != "l-83":  # beside no log of the controller's: no twin of it on NTFS
        assert noted, text[-1500:]


HIDS = [f"{p}:{r}" for p in HELD for r in (*READERS, "ran")]
HBROKEN: dict[str, Any] = {}  # all fixed (2026-11-30, r74heldcli and r74heldread)


@pytest.mark.parametrize("vid", cases(HIDS, HIDS, HBROKEN))
def test_a_held_folder_shows_no_forged_record(lab: Lab, vid: str) -> None:
    """A held row's page "shows only its code, notes and the controller's own record" (round
    73); a forged log or forged blocks in a held folder are never shown nor read as a run."""
    got = lab.got  # type: ignore[attr-defined]
    plan, reader = vid.split(":")
    if reader == "ran":
        assert got["calls"][plan] == 0 and got["calls"][f"{plan}-in"] == 0, got["calls"]
        assert not [t for t in got["subjects"][plan] if t.startswith("plangate: ")], got
        return
    text = _text(got, plan, reader)
    assert "forged-r74" not in text, text[-1500:]
    assert '"status": "completed"' not in text and "Status: completed" not in text, text[:1500]
    assert "E_PLAN_AMBIGUOUS" in text, text[:1500]
    if reader == "api":
        answer = json.loads(text)
        assert not answer.get("document") and not answer.get("hash") and not answer.get("log")


TIDS = [f"{p}:{r}" for p in TWINS for r in ("row", "ran")]


@pytest.mark.parametrize("vid", cases(TIDS, TIDS, {}))
def test_an_ntfs_twin_of_the_plan_file_never_runs(lab: Lab, vid: str) -> None:
    """``PLAN.yml.``, ``PLAN.yml `` and ``PLAN.yml::$DATA`` beside PLAN.yml: NTFS makes each
    one path with PLAN.yml (git for Windows refuses to check them out), so the folder is held
    E_PLAN_AMBIGUOUS as for a case twin (round 74, r74heldread: one fold for every name);
    neither file runs."""
    got = lab.got  # type: ignore[attr-defined]
    plan, reader = vid.split(":")
    if reader == "row":
        row = got["rows"][f"plans/{plan}"]
        assert row["status"] != "completed" and row.get("held") == "E_PLAN_AMBIGUOUS", row
    else:
        assert got["calls"][plan] == 0 and got["calls"][f"{plan}-in"] == 0, got["calls"]


def test_the_fresh_clone_audit_agrees_with_the_rows(lab: Lab) -> None:
    got = lab.got  # type: ignore[attr-defined]
    completed = sorted(p for p, r in got["rows"].items() if r["status"] == "completed")
    assert got["audit"]["valid"] == completed, (got["audit"], completed)
    assert completed == sorted(f"plans/{p}" for p in ["d-ok", *AFTER]), completed
    assert got["audit"]["runs"] == len(completed), got["audit"]


if __name__ == "__main__":
    import tempfile

    out = Path(tempfile.mkdtemp(prefix="r74hl-", dir="/tmp/atk74b"))
    got = _build(out).got  # type: ignore[attr-defined]
    print(json.dumps(got, indent=1, ensure_ascii=False, default=str))
