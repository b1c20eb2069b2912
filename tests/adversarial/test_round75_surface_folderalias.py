"""Round 75, agent-facing surfaces: round 74's one name function (``names.same_name``: case,
HFS+ ignorables, NFC/NFD, NTFS's trailing dots and spaces, ``::$DATA``, 8.3 short names) and
its one folder verdict, attacked one level up: at the names of plan FOLDERS. Two folders one
path on a folding checkout, folders held by their name alone, and a forged log in a folder
that a folding checkout writes over a ran plan's own folder.

Lab (one, module scope; three ``run --once`` passes; one daemon at the end):
- pass 1: the agent commits, pending, ``plans/ok`` (the control) and pairs of a base folder
  (its plan calls ``rec <base>``) and a twin folder (same name and task, ``rec <base>-tw``),
  the twin sorting AFTER the base in git's index, so a checkout that makes them one folder
  writes the twin's PLAN.yml last, over the base's: ``FCASE``/``fcase`` (case),
  ``fzw``/``f<U+200C>zw`` (HFS+), ``rotate-keys-prod``/``rotate~1`` and
  ``deploy-service``/``deploy~1`` (NTFS's 8.3 short name of the long folder),
  ``fdot``/``fdot.``, ``fsp``/``fsp `` and ``fads``/``fads::$DATA`` (what NTFS drops; git for
  Windows refuses those paths); lone folders ``ldot.``, ``lsp ``, ``LONGNA~1``; bases
  ``Ship``, ``archive-logs-daily``, ``lgzw``;
- pass 2: Alice approves ``ok``, every base, the lone folders and ``Ship`` & co.;
- pass 3: the agent commits a forged "Approved by alice, Status: completed" log
  (``forged-r75``) as ``plans/ship/EXECUTION_LOG.md``, ``plans/archiv~1/EXECUTION_LOG.md``,
  ``plans/lg<U+200C>zw/EXECUTION_LOG.md`` (each written after the ran base's log on a
  case-insensitive, 8.3 or HFS+ checkout).
Readers: ``status --json``'s row, ``show --json``, ``validate``, ``hash``, ``freeze`` (on a
copy of the working tree), MCP ``log``, the daemon's ``/api/plan/<id>`` and page, the ``rec``
calls, the fresh-clone ``plangate audit --json``.
Variants:
- ``<base>:{base-held,twin-never}`` (14): a twin folder claims its base's place as a twin
  file does (docs/plan-format.md: names "compared as the file systems git guards a checkout
  against compare them"): the base is held, neither runs; the twin never runs;
- ``{fsp,f~zw~,lsp}:{row,show,validate,hash,freeze,mcp-log,api,page}`` (24): folders the row
  holds ``E_UNSAFE_PATH`` by their name (a blank end, U+200C): every reader says so, no
  hash, no other plan's record, nothing written;
- ``{ldot,lsp,l83}:{ran,readers}``, ``ok:ran`` (7, controls): lone folders run (or are held)
  as their rows say and the readers agree;
- ``{Ship,archive-logs-daily,lgzw}:{row,show,mcp-log,api,page}`` (15): the forged log in the
  twin folder is noted E_OWNED_BLOCK_CHANGED on the base (as round 74's ``d-83``), never
  shown; ``{same}:{show,mcp-log,api,page}`` of the twin folder (12): never shown, never
  "completed";
- the fresh-clone audit agrees with the rows.

Seen (round 75):
- ``{FCASE,fzw,rotate-keys-prod,deploy-service,fdot,fsp,fads}:base-held`` (7 ids, one
  class): a plan folder beside its twin folder (``fcase``, ``f<U+200C>zw``, ``rotate~1``,
  ``deploy~1``, ``fdot.``, ``fsp ``, ``fads::$DATA``) is frozen and RUNS on Alice's approval
  (the twins stay pending, or ``E_UNSAFE_PATH`` for ``fsp ``/``f<U+200C>zw``; none runs).
  Every reader agrees they are two plans, but on a case-insensitive (``FCASE``), HFS+
  (``fzw``) or 8.3 (``rotate-keys-prod``, ``deploy-service``) checkout git writes the twin's
  PLAN.yml last, INTO the base's folder: the reviewer who reads ``plans/FCASE/PLAN.yml`` on
  her Mac reads ``rec FCASE-tw`` while ``rec FCASE`` runs on her approval (given on the forge,
  or by a status edit of the bytes git holds). Should (docs/plan-format.md: "Names are
  compared as the file systems git guards a checkout against compare them ... One function
  decides every such comparison, for plan files, sources, folders and the log alike";
  round 74's ``d-83`` held the same reasoning for the log): the folder pair held
  ``E_PLAN_AMBIGUOUS`` as a plan file beside its twin is, neither run. The trailing-dot,
  space and ``::$DATA`` twins cannot be checked out by git for Windows (as round 74's
  ``p-*``, which round 74 then folded all the same). Fixed (2026-11-30, r75twinfold): every
  part of a plan's path is compared by the one name rule (``names.same_path``); the history
  index keeps its plans by the fold of their path (``git/twins.FolderTwins``) and counts a
  twin folder's plan file as a claim of the plan file's place (``Lifecycle._ambiguity``,
  ``_judge_twins``): both plans ``E_PLAN_AMBIGUOUS``, however late the twin comes; the CLI
  (``names.twin_folder_verdict``) and a parent's pin (``nested._no_twin``) say the same.
- ``{fsp,f~zw~,lsp}:{show,validate,hash,freeze}`` (12 ids, one class): ``plans/fsp ``,
  ``plans/f<U+200C>zw``, ``plans/lsp ``, held ``E_UNSAFE_PATH`` by the row ("a folder name
  begins or ends with a blank: 'tx ' reads as 'tx' ...; rename the folder"), are read by the
  CLI as plans: ``show`` prints the document and hash (``freeze_state: not frozen``),
  ``validate`` says ``valid (sha256:...)``, ``hash`` prints it, and ``plangate freeze``
  WRITES ``frozen:`` into ``plans/fsp /PLAN.yml`` and ``plans/f<U+200C>zw/PLAN.yml`` (git
  status ``M``; ``lsp ``, approved, is refused E_PLAN_HASH_MISMATCH). Should (round 74: "one
  verdict on a plan folder ... read by every CLI path"; docs/agents.md: a path "the
  controller never takes for a plan (control or invisible characters ...) E_UNSAFE_PATH"):
  E_UNSAFE_PATH, no hash, nothing written. Fixed (2026-11-30, r75heldnames): the folder's
  name is part of its one verdict (``names.name_verdict``; ``plans.name_problem``: the
  index's ``unsafe_name`` over the path relative to the work tree, asked by ``read_plan``):
  E_UNSAFE_PATH and why, no hash, nothing written.
- ``{fsp,lsp}:mcp-log`` (2 ids): MCP ``log`` of ``plans/fsp `` answers ``plans/fsp``'s
  record (``"path": "plans/fsp", "status": "completed"``, Alice's run of the base), and of
  ``plans/lsp `` ``E_USAGE: no plan plans/lsp``: the path is trimmed before the lookup.
  Should: E_UNSAFE_PATH and why, as the row, the page and ``/api/plan/`` say (they do).
  Fixed (2026-11-30, r75heldnames): MCP's ``_plan_id`` trims nothing (only the slashes
  around), so the plan id rule judges the name as given: E_UNSAFE_PATH and why.
- ``{Ship,archive-logs-daily,lgzw}:{row,show,mcp-log,api,page}`` (15 ids, one class): the
  forged "completed, approved by alice" log committed in ``plans/ship/``,
  ``plans/archiv~1/``, ``plans/lg<U+200C>zw/`` after the base ran is noted by no reader of the
  base (no E_OWNED_BLOCK_CHANGED); on a case-insensitive, 8.3 or HFS+ checkout git writes it
  after the controller's own ``EXECUTION_LOG.md``, over it. Should (round 74, ``d-83``: "an
  entry that IS the log on some checkout is someone else's text at the record's place,
  whoever committed it"): noted on every reader of the base. The forged text is shown by no
  reader (the twin folders have no row, ``lg<U+200C>zw`` its E_UNSAFE_PATH page). Fixed
  (2026-11-30, r75twinfold): a log in a folder one with the plan's on some checkout is the
  log's twin: the index sets ``log_claimed`` (``Lifecycle._log_twin_plans``,
  ``_twin_logged``) and every reader of the record notes it E_OWNED_BLOCK_CHANGED
  (``ownrecord.twin_logs``), never shown.
Held: no twin ever ran; the page and ``/api/plan/`` of the name-held folders answer
E_UNSAFE_PATH with no document; the controls ran once; the fresh-clone audit agrees.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from advkit import AGENT, ALICE, Lab, cases, clone_audit, plan_text
from mcpkit import session
from oraclekit import page_texts
from test_round2_execution_kit import shared

# base folder (Alice approves it) -> its twin folder (never approved), both under plans/;
# the twin sorts AFTER the base in git's index, so a checkout that makes them one folder
# writes the twin's PLAN.yml last: the reviewer's file at the base's path holds its bytes
PAIRS: dict[str, str] = {
    "FCASE": "fcase",  # case: one folder on a case-insensitive checkout (macOS, Windows)
    "fzw": "f\u200czw",  # U+200C: one folder on HFS+ (git's core.protectHFS set)
    "rotate-keys-prod": "rotate~1",  # 8.3: the short name NTFS gives the long folder
    "deploy-service": "deploy~1",
    "fdot": "fdot.",  # NTFS drops a trailing dot (git for Windows refuses the path)
    "fsp": "fsp ",  # ... and a trailing space
    "fads": "fads::$DATA",  # ... and the unnamed stream
}
CHECKOUT = ("FCASE", "fzw", "rotate-keys-prod", "deploy-service")  # git writes both
# folders the controller holds E_UNSAFE_PATH by their name alone (blank end, invisible)
UNSAFE = ("fsp ", "f\u200czw", "lsp ")
# lone folders under such names (no base beside them): honest enough, run as the row says
LONE = {"ldot": "ldot.", "lsp": "lsp ", "l83": "LONGNA~1"}
CONTROL = "ok"
# plans that run (Alice approves), then the agent commits a forged "completed, approved by
# alice" log in a twin FOLDER that a folding checkout writes after the base's own log
LOGTWINS = {"Ship": "ship", "archive-logs-daily": "archiv~1", "lgzw": "lg\u200czw"}
FORGED = (
    "# Execution log\n\n- Approved by alice@example.com\n- Status: completed\n"
    "- Action 1 `rec`: succeeded (forged-r75)\n"
)


def _build(root: Path) -> Lab:
    lab = Lab(root, extra="agent:\n  identity: {name: Agent, email: agent@example.com}\n"
              "ui: {listen: 0}\n")  # fmt: skip
    lab.write(CONTROL, plan_text(CONTROL))
    for base, twin in PAIRS.items():
        lab.write(base, plan_text(base))
        lab.write(twin, plan_text(f"{base}-tw", name=base))
    for tag, name in LONE.items():
        lab.write(name, plan_text(tag))
    for base in LOGTWINS:
        lab.write(base, plan_text(base))
    lab.commit("agent: plans", AGENT)
    lab.run()
    time.sleep(1.1)
    for plan in [CONTROL, *PAIRS, *LONE.values(), *LOGTWINS]:
        lab.set_status(plan, "approved")
    lab.commit("alice: approve", ALICE)
    lab.run()
    for twin in LOGTWINS.values():
        lab.write(twin, FORGED, "EXECUTION_LOG.md")
    lab.commit("agent: notes", AGENT)
    lab.run()
    cfg = str(lab.config)
    plans = [CONTROL, *PAIRS, *PAIRS.values(), *LONE.values(), *LOGTWINS, *LOGTWINS.values()]
    got: dict[str, Any] = {}
    got["rows"] = {
        r["plan"]: r for r in json.loads(lab.cli("status", "--json", "--config", cfg).stdout)
    }
    tags = [CONTROL, *PAIRS, *[f"{b}-tw" for b in PAIRS], *LONE, *LOGTWINS]
    got["calls"] = {t: len(lab.calls(t)) for t in tags}
    for reader in ("show", "validate", "hash", "freeze"):
        got[reader] = {}
    copy = root / "fz"  # the CLI's own writer, on a copy of the working tree
    shutil.copytree(lab.repo, copy, symlinks=True)
    for plan in plans:
        where = str(lab.repo / "plans" / plan)
        done = lab.cli("show", "--json", "--config", cfg, where)
        got["show"][plan] = f"{done.returncode} {done.stdout}{done.stderr}"
        done = lab.cli("validate", "--config", cfg, where)
        got["validate"][plan] = f"{done.returncode} {done.stdout}{done.stderr}"
        done = lab.cli("hash", where)
        got["hash"][plan] = f"{done.returncode} {done.stdout}{done.stderr}"
        done = lab.cli("freeze", str(copy / "plans" / plan), cwd=copy)
        changed = subprocess.run(
            ["git", "status", "--porcelain", "--", f"plans/{plan}"],
            cwd=copy, capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        got["freeze"][plan] = f"{done.returncode} {done.stdout}{done.stderr}\nchanged: {changed}"
    replies = session(lab, [("log", {"path": f"plans/{p}"}) for p in plans])[0]
    got["mcp-log"] = {
        p: json.dumps(r, ensure_ascii=False) for p, r in zip(plans, replies, strict=True)
    }
    pages = page_texts(lab, [quote(f"plans/{p}") for p in plans], "plans/ok")
    got["page"] = {p: pages[quote(f"plans/{p}")][0] for p in plans}
    got["api"] = {p: pages[quote(f"plans/{p}")][1] for p in plans}
    got["subjects"] = lab.git("log", "--format=%an %s").splitlines()
    report, valid = clone_audit(lab, root)
    got["audit"] = {"valid": sorted(valid), "runs": len(report["executions"])}
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r75-surface-folderalias", _build)


def _xf(what: str) -> Any:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 75: {what}")


PIDS = [f"{b}:{w}" for b in PAIRS for w in ("base-held", "twin-never")]
PBROKEN: dict[str, Any] = {}  # fixed (r75twinfold): a twin folder's plan file is a claim


@pytest.mark.parametrize("vid", cases(PIDS, PIDS, PBROKEN))
def test_a_twin_plan_folder_holds_its_base(lab: Lab, vid: str) -> None:
    """Two plan folders one path on some checkout (``FCASE``/``fcase``, ``fzw``/``f<ZWNJ>zw``,
    ``rotate-keys-prod``/``rotate~1``, ``fdot``/``fdot.``): the reviewer's file at the base's
    path holds the twin's bytes, so, as for a plan file's twin (docs/plan-format.md, round
    74: names "compared as the file systems git guards a checkout against compare them"),
    neither runs; the twin, never approved, never runs."""
    got = lab.got  # type: ignore[attr-defined]
    base, what = vid.split(":")
    if what == "twin-never":
        assert got["calls"][f"{base}-tw"] == 0, got["calls"]
        row = got["rows"][f"plans/{PAIRS[base]}"]
        assert row["status"] != "completed", row
        return
    row = got["rows"][f"plans/{base}"]
    assert got["calls"][base] == 0, got["calls"]
    assert row.get("held") in ("E_PLAN_AMBIGUOUS", "E_UNSAFE_PATH"), row


READERS = ("row", "show", "validate", "hash", "freeze", "mcp-log", "api", "page")
UIDS = [f"{p.strip().replace(chr(0x200C), '~zw~')}:{r}" for p in UNSAFE for r in READERS]
UNAME = {p.strip().replace(chr(0x200C), "~zw~"): p for p in UNSAFE}
CLI_WHY = "the CLI reads, hashes and freezes a folder the controller holds E_UNSAFE_PATH"
MCP_WHY = "MCP log of a blank-ended folder answers the trimmed name's plan (or none)"
# fixed (r75heldnames): {fsp,f~zw~,lsp}:{show,validate,hash,freeze} (CLI_WHY) and
# {fsp,lsp}:mcp-log (MCP_WHY)
UBROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(UIDS, UIDS, UBROKEN))
def test_a_folder_held_by_its_name_is_held_on_every_reader(lab: Lab, vid: str) -> None:
    """``plans/fsp `` (a blank at the end), ``plans/f<U+200C>zw``, ``plans/lsp ``: the row holds
    each ``E_UNSAFE_PATH`` ("rename the folder"); round 74's one folder verdict "read by
    every CLI path" and by the readers: every reader says E_UNSAFE_PATH, no hash, no other
    plan's record, nothing written."""
    got = lab.got  # type: ignore[attr-defined]
    key, reader = vid.split(":")
    plan = UNAME[key]
    row = got["rows"][f"plans/{plan}"]
    assert row.get("held") == "E_UNSAFE_PATH" and row["status"] is None, row
    if reader == "row":
        return
    text = str(got[reader][plan])
    assert "E_UNSAFE_PATH" in text, text[:1200]
    assert "sha256:" not in text.split("changed:")[0].replace('"hash": null', ""), text[:1200]
    assert '"status": "completed"' not in text, text[:1200]
    if reader == "freeze":
        assert text.rstrip().endswith("changed:"), text[-600:]


LIDS = [f"{t}:{w}" for t in LONE for w in ("ran", "readers")] + [f"{CONTROL}:ran"]


@pytest.mark.parametrize("vid", cases(LIDS, LIDS, {}))
def test_lone_folders_and_the_control_run_as_their_rows_say(lab: Lab, vid: str) -> None:
    """Controls: ``ok``, a lone ``ldot.`` and a lone ``LONGNA~1`` (no folder beside them that
    a checkout folds them into) run once on Alice's approval; the lone ``lsp `` is held by
    its name and never runs; MCP ``log``, ``show`` and the API agree with the row."""
    got = lab.got  # type: ignore[attr-defined]
    tag, what = vid.split(":")
    plan = LONE.get(tag, tag)
    row = got["rows"][f"plans/{plan}"]
    runs = 0 if plan in UNSAFE else 1
    assert got["calls"][tag] == runs, got["calls"]
    assert (row["status"] == "completed") == (runs == 1), row
    if what == "readers" and runs:
        for reader in ("mcp-log", "api", "show"):
            text = got[reader][plan]
            assert f"plans/{plan}" in text or reader == "show", text[:800]
            assert '"completed"' in text or reader == "show", text[:800]
            assert "E_UNSAFE_PATH" not in text and "E_PLAN_AMBIGUOUS" not in text, text[:800]


GIDS = [f"{b}:{r}" for b in LOGTWINS for r in ("row", "show", "mcp-log", "api", "page")]
GBROKEN: dict[str, Any] = {}  # fixed (r75twinfold): a twin folder's log is the log's twin


def _reader(got: dict[str, Any], plan: str, reader: str) -> str:
    if reader == "row":
        return json.dumps(got["rows"].get(f"plans/{plan}"), ensure_ascii=False)
    return str(got[reader].get(plan, ""))


@pytest.mark.parametrize("vid", cases(GIDS, GIDS, GBROKEN))
def test_a_forged_log_in_a_twin_folder_is_noted(lab: Lab, vid: str) -> None:
    """``plans/Ship``, ``plans/archive-logs-daily``, ``plans/lgzw`` ran; the agent then commits
    a forged "completed, approved by alice" ``EXECUTION_LOG.md`` in ``plans/ship/``,
    ``plans/archiv~1/``, ``plans/lg<U+200C>zw/`` (sorted after the base: on a case-insensitive,
    8.3 or HFS+ checkout git writes it over the controller's log). As round 74's ``d-83``
    (``EXECUT~1.MD``): noted E_OWNED_BLOCK_CHANGED by every reader of the base; the forged
    text shown by none; the base ran once."""
    got = lab.got  # type: ignore[attr-defined]
    base, reader = vid.split(":")
    assert got["calls"][base] == 1 and got["rows"][f"plans/{base}"]["status"] == "completed"
    text = _reader(got, base, reader)
    assert "forged-r75" not in text, text[-1200:]
    assert "E_OWNED_BLOCK_CHANGED" in text, text[:1200]


FIDS = [f"{b}:{r}" for b in LOGTWINS for r in ("show", "mcp-log", "api", "page")]


@pytest.mark.parametrize("vid", cases(FIDS, FIDS, {}))
def test_the_twin_folder_never_shows_the_forgery(lab: Lab, vid: str) -> None:
    """The twin folder itself (a log and no plan file): no reader shows its forged text nor
    calls it completed."""
    got = lab.got  # type: ignore[attr-defined]
    base, reader = vid.split(":")
    text = _reader(got, LOGTWINS[base], reader)
    assert "forged-r75" not in text and "Status: completed" not in text, text[-1200:]
    assert '"status": "completed"' not in text, text[:1200]


def test_the_fresh_clone_audit_agrees_with_the_rows(lab: Lab) -> None:
    got = lab.got  # type: ignore[attr-defined]
    completed = sorted(p for p, r in got["rows"].items() if r["status"] == "completed")
    assert got["audit"]["valid"] == completed, (got["audit"], completed)
    assert got["audit"]["runs"] == len(completed), got["audit"]
    assert not [p for p in completed if p.rstrip(". ") != p.rstrip() and "ldot" not in p]


if __name__ == "__main__":
    import tempfile

    out = Path(tempfile.mkdtemp(prefix="r75fa-", dir="/tmp/atk75b"))
    got = _build(out).got  # type: ignore[attr-defined]
    print(json.dumps(got, indent=1, ensure_ascii=False, default=str))
