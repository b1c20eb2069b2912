"""Round 73, agent-facing surfaces: round 72's one fold of names (case, the code points HFS+
ignores, NFD: "as the file systems git guards a checkout against compare them",
docs/plan-format.md) applied to the OTHER file of a plan's folder that a reviewer reads: the
controller's ``EXECUTION_LOG.md``. Round 67 made a forged "completed, approved by alice" log
the agent commits at that name ``E_OWNED_BLOCK_CHANGED`` on every reader (the row's notes,
``show``, MCP ``log``, the page); round 72 refuses a FOLDER of that name in any case or
spelling. Here the forged log is a FILE whose name is that name on a case-insensitive or HFS+
checkout (one path with the controller's log there). Second part: the plan SOURCES the
daemon converts (docs/formats.md, "In a plan folder: the daemon converts") beside a claim of the
plan file's place, and beside a second source one path with it on such a checkout.

Lab (one, module scope; three ``run --once`` passes; one daemon at the end):
- the agent's plans ``l-*`` (pending, never run) and ``d-*`` (Alice approves them; they run,
  the controller writes ``EXECUTION_LOG.md``); after that the agent commits beside each a
  forged log (``- Approved by alice@example.com``, ``- Status: completed``, ``forged-r73``)
  named: ``l-exact``/``d-exact`` ``EXECUTION_LOG.md`` (round 67's case: the controls of the
  rule), ``l-lower``/``d-lower`` ``execution_log.md``, ``l-upper`` ``EXECUTION_LOG.MD``,
  ``l-mixed``/``d-mixed`` ``Execution_Log.Md``, ``l-zw``/``d-zw``
  ``EXECUTION_LOG.md<U+200C>``, ``l-bom`` ``<U+FEFF>EXECUTION_LOG.md``, ``l-sym`` a symlink
  ``execution_log.md -> ../d-ok/EXECUTION_LOG.md`` (another plan's real log: "completed,
  approved by alice"); ``l-ok``/``d-ok`` get nothing (honest controls: no note).
- sources (in the agent's first commit, converted by pass 1): ``s-ok`` (``PLAN.json`` alone:
  the control, converted, Alice approves its PLAN.yml, runs once), ``PLAN.json`` beside a
  claim: ``s-sym`` (a symlink ``plan.yml``), ``s-gl`` (a gitlink ``plan.yml``), ``s-dir`` (a
  folder ``PLAN.YML/``), ``s-zw`` (a folder ``PLAN.y<U+200C>ml/``), ``s-lfile`` (a file
  ``plan.yaml``); beside a second source: ``s-two`` (``plan.JSON``), ``s-twozw``
  (``PLAN.json<U+FEFF>``). Alice approves every PLAN.yml the daemon wrote.
Readers (``<plan>:<reader>``): ``status --json``'s row notes, ``show``, MCP ``log``, the
page ``/plan/<id>``; the fresh-clone ``plangate audit --json``.
Must hold: a forged log at a name one path with ``EXECUTION_LOG.md`` on a checkout git guards
is noted ``E_OWNED_BLOCK_CHANGED`` (or the folder refused) on every reader, as at the exact
name, and never shown as the plan's record; the controls carry no note; the audit's valid runs
are the completed rows (the ``d-*``).

Seen (round 73):
- ``{l-lower,l-upper,l-mixed,l-zw,l-bom,l-sym,d-lower,d-mixed,d-zw}:{row,show,mcp-log,page}``
  (36 ids, one class): the agent's forged "Approved by alice@example.com, Status: completed"
  log committed as ``execution_log.md``, ``EXECUTION_LOG.MD``, ``Execution_Log.Md``,
  ``EXECUTION_LOG.md<U+200C>`` or ``<U+FEFF>EXECUTION_LOG.md`` (or a symlink
  ``execution_log.md`` to ``plans/d-ok``'s real log) beside a plan that never ran, or beside
  the controller's own log of a plan that ran, is noted by no reader: the row's notes,
  ``show``, MCP ``log`` and the page carry no ``E_OWNED_BLOCK_CHANGED`` (the same forgery at
  the exact name is noted on all four: ``l-exact``, ``d-exact`` held). On a case-insensitive
  or HFS+ checkout the forged file IS ``EXECUTION_LOG.md``: the reviewer opens the plan's log
  and reads "completed, approved by alice" for a plan that never ran (``l-*``), or git writes
  one of the two over the other (``d-*``). Should (docs/threat-model.md, rounds 65-67: a
  forged log "for a plan that never ran ... ``E_OWNED_BLOCK_CHANGED`` on the row as on
  ``show``, MCP ``log`` and the audit"; docs/plan-format.md: names compared "as the file
  systems git guards a checkout against compare them", round 72's fold, which already
  refuses a FOLDER of these names): the log's name folded as the plan file's is, the forgery
  noted (or the folder held) on every reader. Fixed (2026-11-30, r73logtwin): one rule for
  which entries of a folder are its log or claim to be (``names.log_claims``/``log_twins``,
  round 72's fold); ``ownrecord.shown_record`` notes every entry so named other than
  ``EXECUTION_LOG.md`` ``E_OWNED_BLOCK_CHANGED`` (its name escaped, who committed it; its
  text never shown), so ``show``, MCP ``log`` and the page do, and the index keeps
  ``PlanState.log_claimed`` while one is there so the row reads the record whoever committed
  the plan's files last (``INDEX_VERSION`` 59).
- ``{s-sym,s-gl,s-dir,s-zw,s-lfile}:convert`` (5 ids): the daemon converts ``PLAN.json`` in
  a folder holding a claim of the plan file's place: its ``plangate: convert`` commit writes
  ``PLAN.yml`` beside the symlink, gitlink, folder or file (and a freeze commit follows), and
  the folder is then E_PLAN_AMBIGUOUS by the controller's own commit (nothing runs: the rows
  held). Should (round 72's rule for MCP ``submit``, docs/plan-format.md: "MCP ``submit`` into
  a folder holding only a claim is refused ``E_PLAN_AMBIGUOUS``, nothing committed"; docs/
  execution.md: "every form a plan takes in a folder counts"): the source waits
  E_PLAN_AMBIGUOUS, nothing committed. Fixed (2026-11-30, r73freeze): a source folder is
  judged by every entry, whatever its kind (``sources.source_verdict`` over the folder's
  names, ``names.plan_file_claims``): beside a claim the source waits E_PLAN_AMBIGUOUS with a
  row, nothing committed; a conversion writes no plan file beside a claim
  (``Freezing._check_unclaimed``), uncommitted sources are judged by the working tree's names.
- ``{s-two,s-twozw}:{convert,row}`` (4 ids): ``PLAN.json`` beside ``plan.JSON`` or
  ``PLAN.json<U+FEFF>`` (one file on a case-insensitive or HFS+ checkout, where the reviewer
  sees one of the two) is converted from ``PLAN.json``; the plan is pending and Alice's
  approval of the PLAN.yml runs it. Should (docs/formats.md: "Two sources in one folder wait
  with ``E_PLAN_AMBIGUOUS``", names compared by round 72's fold): wait, nothing converted.
  What ran is the PLAN.yml Alice read, so the run itself is not counted. Fixed (2026-11-30,
  r73freeze): source names compared by the fold (``names.source_claims``): two wait
  E_PLAN_AMBIGUOUS, nothing converted, the row says so.
Noted, not counted: a source alone under a twin name (``plan.json``, ``PLAN.js<U+200C>on``) is
neither converted nor listed: no row, no code (nothing runs; the agent is told nothing).
Since r73freeze (2026-11-30) it is still not converted (from a name no reviewer sees as the
source's), but its row says why: ``E_CONVERT_UNSUPPORTED`` (rename it ``PLAN.json``), or
``E_UNSAFE_PATH`` for a hidden character.
Held: the runs (``d-*`` once, ``l-*`` never, ``s-ok`` once, the claimed sources never), the
exact name's note on every reader, the controls without a note, the claimed sources' rows
E_PLAN_AMBIGUOUS, the fresh-clone audit (it reads git alone: the valid runs are the completed
rows).
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
    "- Action 1 `rec`: succeeded (forged-r73)\n"
)
# plan -> the forged log's name (None: the honest control), "sym:" a symlink to a real log
LOGS: dict[str, str | None] = {
    "l-ok": None,
    "l-exact": "EXECUTION_LOG.md",
    "l-lower": "execution_log.md",
    "l-upper": "EXECUTION_LOG.MD",
    "l-mixed": "Execution_Log.Md",
    "l-zw": "EXECUTION_LOG.md\u200c",
    "l-bom": "\ufeffEXECUTION_LOG.md",
    "l-sym": "sym:execution_log.md",
    "d-ok": None,
    "d-exact": "EXECUTION_LOG.md",
    "d-lower": "execution_log.md",
    "d-mixed": "Execution_Log.Md",
    "d-zw": "EXECUTION_LOG.md\u200c",
}
RULE = ("l-exact", "d-exact")  # round 67's own case: must be noted today
# plan sources the daemon converts (docs/formats.md, "In a plan folder"): folder -> entries
# (name, kind): src (a PLAN.json source), src2 (a second source), sym/gl/dir/file (a claim)
SOURCES: dict[str, list[tuple[str, str]]] = {
    "s-ok": [("PLAN.json", "src")],
    "s-sym": [("PLAN.json", "src"), ("plan.yml", "sym")],
    "s-gl": [("PLAN.json", "src"), ("plan.yml", "gl")],
    "s-dir": [("PLAN.json", "src"), ("PLAN.YML", "dir")],
    "s-zw": [("PLAN.json", "src"), ("PLAN.y\u200cml", "dir")],
    "s-lfile": [("PLAN.json", "src"), ("plan.yaml", "file")],
    "s-two": [("PLAN.json", "src"), ("plan.JSON", "src2")],
    "s-twozw": [("PLAN.json", "src"), ("PLAN.json\ufeff", "src2")],
}
TWO_SOURCES = ("s-two", "s-twozw")


def _source(tag: str) -> str:
    return json.dumps(dict(load_yaml(plan_text(tag))), indent=1)


def _sources(lab: Lab) -> None:
    """The agent's sources and claims (staged), before its first commit."""
    gl_commit = lab.head()
    for folder, entries in SOURCES.items():
        where = lab.repo / "plans" / folder
        where.mkdir(parents=True)
        for name, kind in entries:
            if kind in ("src", "src2"):
                (where / name).write_text(_source(folder if kind == "src" else f"{folder}-2"))
            elif kind == "sym":
                (where / name).symlink_to("../l-ok/PLAN.yml")
            elif kind == "dir":
                lab.write(f"{folder}/{name}", plan_text(f"{folder}-in", "approved"))
            elif kind == "file":
                (where / name).write_text(plan_text(f"{folder}-in"))
    lab.git("add", "-A")
    for folder, entries in SOURCES.items():
        for name, kind in entries:
            if kind == "gl":  # an uninitialised submodule
                (lab.repo / "plans" / folder / name).mkdir()
                lab.git("update-index", "--add", "--cacheinfo",
                        f"160000,{gl_commit},plans/{folder}/{name}")  # fmt: skip


def _build(root: Path) -> Lab:
    lab = Lab(root, extra="agent:\n  identity: {name: Agent, email: agent@example.com}\n"
              "ui: {listen: 0}\n")  # fmt: skip
    for plan in LOGS:
        lab.write(plan, plan_text(plan))
    _sources(lab)
    lab.commit("agent: plans", AGENT)
    lab.run()
    time.sleep(1.1)
    for plan in LOGS:
        if plan.startswith("d-"):
            lab.set_status(plan, "approved")
    for folder in SOURCES:  # Alice approves every converted plan she is shown
        path = lab.repo / "plans" / folder / "PLAN.yml"
        if path.is_file():
            text = path.read_text()
            path.write_text(text.replace('status: "pending_approval"', 'status: "approved"', 1))
    lab.commit("alice: approve", ALICE)
    lab.run()
    for plan, name in LOGS.items():
        if name is None:
            continue
        if name.startswith("sym:"):
            link = lab.repo / "plans" / plan / name[4:]
            link.symlink_to("../d-ok/EXECUTION_LOG.md")
        else:
            lab.write(plan, FORGED, name)
    lab.commit("agent: notes", AGENT)
    lab.run()
    cfg = str(lab.config)
    got: dict[str, Any] = {}
    got["rows"] = {
        r["plan"]: r for r in json.loads(lab.cli("status", "--json", "--config", cfg).stdout)
    }
    got["calls"] = {p: len(lab.calls(p)) for p in [*LOGS, *SOURCES]}
    got["converts"] = {
        f: [t for t in lab.subjects(f) if t.startswith("plangate: convert")] for f in SOURCES
    }
    got["tree"] = lab.git("ls-tree", "-r", "--name-only", "HEAD", "plans").splitlines()
    got["show"] = {}
    for plan in LOGS:
        done = lab.cli("show", "--json", "--config", cfg, str(lab.repo / "plans" / plan))
        got["show"][plan] = f"{done.returncode} {done.stdout}{done.stderr}"
    replies = session(lab, [("log", {"path": f"plans/{p}"}) for p in LOGS])[0]
    got["mcp-log"] = {
        p: json.dumps(r, ensure_ascii=False) for p, r in zip(LOGS, replies, strict=True)
    }
    pages = page_texts(lab, [f"plans/{p}" for p in LOGS], "plans/l-ok")
    got["page"] = {p: pages[f"plans/{p}"][0] for p in LOGS}
    report, valid = clone_audit(lab, root)
    got["audit"] = {"valid": sorted(valid), "runs": len(report["executions"])}
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r73-surface-twinfiles", _build)


def _xf(what: str) -> Any:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 73: {what}")


READERS = ("row", "show", "mcp-log", "page")
IDS = [f"{p}:{r}" for p in LOGS for r in READERS]
NOTED = ("E_OWNED_BLOCK_CHANGED", "E_PLAN_AMBIGUOUS", "E_UNSAFE_PATH")


@pytest.mark.parametrize("vid", cases(IDS, IDS, {}))
def test_a_forged_log_at_a_twin_of_the_logs_name_is_noted(lab: Lab, vid: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    plan, reader = vid.split(":")
    honest = LOGS[plan] is None
    ran = plan.startswith("d-")
    row = got["rows"][f"plans/{plan}"]
    assert row["status"] == ("completed" if ran else "pending_approval"), row
    assert got["calls"][plan] == (1 if ran else 0), got["calls"]
    text = {
        "row": json.dumps(row),
        "show": got["show"].get(plan, ""),
        "mcp-log": got["mcp-log"].get(plan, ""),
        "page": got["page"].get(plan, ""),
    }[reader]
    noted = [c for c in NOTED if c in text]
    if honest:
        assert not noted, text[-1500:]
    else:
        assert noted, text[-1500:]
    assert "forged-r73" not in text, text[-1500:]


SIDS = [f"{f}:{r}" for f in SOURCES for r in ("convert", "row")] + [
    f"{f}:ran" for f in SOURCES if f not in TWO_SOURCES
]
# {s-*}:convert and {s-two,s-twozw}:{convert,row} fixed by r73freeze (2026-11-30): one
# verdict of the folder's entries, folded (controller.service.sources.source_verdict)
SBROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(SIDS, SIDS, SBROKEN))
def test_a_source_beside_a_claim_or_a_twin_source_waits(lab: Lab, vid: str) -> None:
    """docs/formats.md: "Two sources in one folder wait with E_PLAN_AMBIGUOUS"; docs/plan-format.md
    (round 72): MCP ``submit`` into a folder holding only a claim "is refused E_PLAN_AMBIGUOUS,
    nothing committed", and a source "counts" as every form a plan takes (docs/execution.md)."""
    got = lab.got  # type: ignore[attr-defined]
    folder, reader = vid.split(":")
    honest = folder == "s-ok"
    if reader == "convert":
        written = f"plans/{folder}/PLAN.yml" in got["tree"]
        assert bool(got["converts"][folder]) == honest == written, (got["converts"], written)
    elif reader == "row":
        row = got["rows"].get(f"plans/{folder}")
        if honest:
            assert row and row["status"] == "completed", row
        else:
            assert row is None or "E_PLAN_AMBIGUOUS" in json.dumps(row), row
            assert row is None or row["status"] != "completed", row
    else:
        assert got["calls"][folder] == (1 if honest else 0), got["calls"]
        assert got["calls"].get(f"{folder}-in", 0) == 0, got["calls"]


def test_the_fresh_clone_audit_agrees_with_the_rows(lab: Lab) -> None:
    got = lab.got  # type: ignore[attr-defined]
    completed = sorted(p for p, r in got["rows"].items() if r["status"] == "completed")
    assert got["audit"]["valid"] == completed, (got["audit"], completed)
    assert {f"plans/{p}" for p in LOGS if p.startswith("d-")} <= set(completed), completed


if __name__ == "__main__":
    import tempfile

    out = Path(tempfile.mkdtemp(prefix="r73tf-", dir="/tmp/atk73b"))
    got = _build(out).got  # type: ignore[attr-defined]
    print(json.dumps(got, indent=1, ensure_ascii=False, default=str))
