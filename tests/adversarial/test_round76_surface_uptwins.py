"""Round 76, agent-facing surfaces: round 75's folded folder paths (``names.same_path``: every
part of a plan's path compared by the one name rule) attacked ABOVE the plan's own folder
and in time: twins one and two levels up, in the middle of a path, twins of a nested plan's
parent made by a later folder RENAME, twins brought by a branch an approver merges, a source
as the twin, pins naming an up-level twin, and forged logs in an up-level twin folder and in
a twin of the plans folder itself.

Lab (one, module scope; three ``run --once`` passes; one daemon at the end):
- pass 1: the agent commits, pending, the controls ``plans/ok``, ``plans/Solo/x`` (a lone
  nested folder with a capital), ``plans/solo2/deep/z``, the library ``plans/lib/n``, and
  pairs of a base (``rec <id>``) and a twin (``rec <id>-tw``) that differ ABOVE the plan's
  folder: ``u-case`` ``Team/x``/``team/x``, ``u-deep`` ``A/b/c``/``a/b/c`` (two levels up),
  ``u-mid`` ``g/H/x``/``g/h/x``, ``u-two`` ``Q/R/x``/``q/r/x``, ``u-zw``
  ``zw/x``/``z<U+200C>w/x``, ``u-83`` ``longteamname/x``/``longte~1/x``, ``u-dot``
  ``dt/x``/``dt./x``, ``u-nfd`` ``caf<U+00E9>/x``/``cafe<U+0301>/x``, ``u-bs`` ``bs/x``/
  ``bs\\x`` (one folder whose name holds a backslash: the path ``bs/x`` on Windows),
  ``u-src`` ``Src/x`` (PLAN.yml) / ``src/x/PLAN.json`` (a source only); parents pinning by
  hash ``pin-ok`` (``plans/lib/n``), ``pin-up`` (``plans/Team/x``), ``pin-tw``
  (``plans/team/x``), ``pin-83`` (``plans/longte~1/x``);
  the late bases ``late/x``, ``mrg/x``, ``Lg/x`` and a spare folder ``spare/x`` (``rec
  late-tw``);
- pass 2: Alice approves every base, the controls, the pins, ``late/x``, ``mrg/x``,
  ``Lg/x``; then the agent renames the spare's PARENT: ``git mv plans/spare plans/LATE``
  (so ``plans/LATE/x`` is the twin of ``plans/late/x``, made after her approval); a branch
  ``feat`` (the agent) adds ``plans/MRG/x``; Alice merges it ``--no-ff``;
- pass 3: ``Lg/x`` ran; the agent commits a forged "completed, approved by alice" log at
  ``plans/lg/x/EXECUTION_LOG.md`` (an up-level twin folder) and at
  ``Plans/ok/EXECUTION_LOG.md`` (the plans folder's case twin; ``ok`` ran).
Readers: the ``status --json`` row, ``show --json``, ``validate``, ``hash``, MCP ``log``,
the daemon's ``/api/plan/<id>`` and page, the ``rec`` calls, the fresh-clone audit.
Variants:
- ``<pair>:{base-held,twin-never}`` (20): neither of two folders one place on some checkout
  runs (docs/plan-format.md: "at any level under the plans folder: ``plans/Team/x`` and
  ``plans/team/x``"): the base held E_PLAN_AMBIGUOUS (or E_UNSAFE_PATH), never run;
- ``<pair>:{show,validate,hash,freeze,approve,mcp-log,api,page}`` (72, ``u-bs`` aside):
  every reader of the base names the code, prints no hash or document, writes nothing;
  ``approve`` (already approved) commits nothing; MCP ``status`` holds every base (1);
- ``{late,mrg}:{held,ran,show,mcp-log}`` (8): a twin made later by renaming a parent folder,
  or brought by a merge Alice makes, holds the base approved before it: it never runs, and
  ``show`` and MCP ``log`` say so;
- ``pin-{up,tw,83}:{row,ran}`` (6): a pin naming either of the two is invalid, never runs;
  ``pin-ok:{row,ran}`` (2, control) runs the library once;
- ``{ok,Solo,solo2}:{ran,readers}`` (6, controls): honest nested folders run once and every
  reader agrees;
- ``lg:{row,show,mcp-log,api,page}`` (5): the forged log in the up-level twin folder is
  noted E_OWNED_BLOCK_CHANGED, never shown; ``lg:never-shown``, ``ok:plans-twin-never-shown``
  (2): neither forged log (``plans/lg/x/``, ``Plans/ok/``) is shown by any reader;
- the fresh-clone audit agrees with the rows (1).

Seen (round 76):
- ``pin-{up,tw,83}:{row,ran}``, ``u-case:{base-held,twin-never}``, ``u-83:twin-never`` (9
  ids, one class): the agent's parent ``pin-up`` pins ``plans/Team/x`` by its hash (the row
  holds it E_PLAN_AMBIGUOUS: "plans/team/x/PLAN.yml is this plan's file on a
  case-insensitive, HFS+ or NTFS checkout"), ``pin-tw`` pins ``plans/team/x``, ``pin-83``
  ``plans/longte~1/x``; Alice approves the parents; each parent is valid and COMPLETES,
  running the held plan's action (``rec u-case``, ``rec u-case-tw``, ``rec u-83-tw``).
  Should (docs/plan-format.md, round 75: "at any level under the plans folder: ``plans/Team/x``
  and ``plans/team/x`` ... the status row, ``show``, ... and a parent's pin say so, naming
  the twin"): the parent invalid E_PLAN_AMBIGUOUS, never run. Round 75's pin check
  (``pin-dot``/``pin-ok``) held only a twin of the pinned folder's own last name.
  Fixed (2026-12-01, r76uppins): the pin asks the verdict the pinned plan's row has, its
  path's twins found at every level under the plans folder by walking the listings
  (``names.path_twins``, in ``nested._twin_verdict``, working tree and commit alike): each
  parent is invalid E_PLAN_AMBIGUOUS naming the twin, and never runs.
- ``<pair>:{show,validate,hash,freeze}`` for the nine pairs, ``{late,mrg}:show`` (38 ids,
  one class): ``plangate show --json plans/Team/x`` prints the document and its hash (exit
  0), ``validate`` says ``valid (sha256:...)``, ``hash`` prints it, ``freeze`` refuses
  E_PLAN_HASH_MISMATCH (approved) or says ``frozen sha256:... (unchanged)`` (``Src/x``,
  ``late/x``, ``mrg/x``), for every base the row holds E_PLAN_AMBIGUOUS by a twin above its
  own folder (``team/``, ``a/`` two up, ``g/h/``, ``q/r/``, ``z<U+200C>w/``, ``longte~1/``,
  ``dt./``, NFD ``cafe<U+0301>/``, a source in ``src/x``, a later ``LATE/`` rename, a merged
  ``MRG/``). Should (same passage; round 75's ``twin_folder_verdict``): E_PLAN_AMBIGUOUS
  naming the twin, no document or hash. The page and ``/api/plan/`` do say
  E_PLAN_AMBIGUOUS, so the reader on the CLI sees a plan the controller holds.
  Fixed (2026-12-01, r76upread): the CLI's folder verdict (``plans.held_problem``) asks
  ``names.twin_folders``, every part of the path compared from the plans folder down, as
  the history index compares plan ids (round 75's ``_twin_problem`` looked one level up).
- ``<pair>:mcp-log`` for the nine pairs, ``{late,mrg}:mcp-log`` (11 ids, one class): MCP
  ``log`` of the base answers ``"status": "approved", "problems": []``, no code. Should
  (same passage: "MCP ``log``/``status``/``wait``/``submit`` ... say so"): E_PLAN_AMBIGUOUS
  and why, as MCP ``status`` (held) does.
  Fixed (2026-12-01, r76upread): ``planstate.refuse_twin`` (MCP ``log``, ``wait``,
  ``submit``) asks the same walk, ``names.twin_folders``, from the configured plans folder.
- ``lg:{row,show,mcp-log,api,page}`` (5 ids, one class): ``plans/Lg/x`` ran; the agent's
  forged "completed, approved by alice" ``plans/lg/x/EXECUTION_LOG.md`` (``lg/`` sorts after
  ``Lg/``: git writes it last, over the controller's log, on a case-insensitive checkout) is
  noted by no reader of ``plans/Lg/x`` (no E_OWNED_BLOCK_CHANGED). Should
  (docs/plan-format.md: "A log in such a folder ... is the plan's log there: every reader of
  the plan's record notes it ``E_OWNED_BLOCK_CHANGED`` and never shows it"; round 75 fixed
  only the plan's own folder's twin, ``plans/ship/``). The forged text is shown by none.
  Fixed (2026-12-01, r76upread): the record's log notes (``ownrecord.twin_logs``: ``show``,
  MCP ``log``, the page, ``/api/plan/``) and the history index's ``_twin_logged`` (the row's
  ``log_claimed``; ``INDEX_VERSION`` 80) ask ``names.twin_folders`` too.
- ``u-bs:base-held`` (1 id, minor): ``plans/bs\\x`` (one folder whose name holds a
  backslash) beside ``plans/bs/x``: ``bs/x`` runs on Alice's approval and ``bs\\x`` is a
  pending plan of its own. Git for Windows takes ``\\`` as a directory separator
  (``is_dir_sep``, and refuses to check out such a path, as it refuses ``fdot.``): the same
  path ``bs/x`` there. Should (docs/plan-format.md: names "compared as the file systems git
  guards a checkout against compare them", the refused NTFS forms folded all the same):
  both E_PLAN_AMBIGUOUS, or the backslash name held E_UNSAFE_PATH.
  Fixed (2026-12-01, r76uppins): both. A backslash in any name is E_UNSAFE_PATH by the one
  name rule (``names.unsafe_name``, so the row, the CLI, MCP and a pin agree), and a path's
  parts are split at ``\\`` as git for Windows splits them (``names.path_parts``, in
  ``same_path``/``fold_path``): ``bs\\x`` is the twin of ``bs/x``, which is held
  E_PLAN_AMBIGUOUS (a checkout that writes it puts its plan in ``bs/x``; index version 79).
Held: every row holds the pairs E_PLAN_AMBIGUOUS (the HFS+ twin E_UNSAFE_PATH), however the
twin came (a parent's rename after the approval, a branch Alice merged); none runs by
itself; the page, ``/api/plan/`` and MCP ``status`` say so; ``approve`` commits nothing;
the controls and ``pin-ok`` run once; ``Plans/ok/EXECUTION_LOG.md`` (a twin of the plans
folder, which docs/plan-format.md compares as written) is shown by no reader (not noted
either: documented); the fresh-clone audit agrees with the rows.
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
from advkit import AGENT, ALICE, Lab, cases, clone_audit, load_yaml, plan_text
from checkkit import pinning
from mcpkit import PLANGATE, session
from oraclekit import page_texts
from test_round2_execution_kit import shared

# pair id -> (base folder, twin folder) under plans/; they differ above the plan's folder
PAIRS: dict[str, tuple[str, str]] = {
    "u-case": ("Team/x", "team/x"),
    "u-deep": ("A/b/c", "a/b/c"),
    "u-mid": ("g/H/x", "g/h/x"),
    "u-two": ("Q/R/x", "q/r/x"),
    "u-zw": ("zw/x", "z\u200cw/x"),
    "u-83": ("longteamname/x", "longte~1/x"),
    "u-dot": ("dt/x", "dt./x"),
    "u-nfd": ("caf\u00e9/x", "cafe\u0301/x"),
    "u-bs": ("bs/x", "bs\\x"),
    "u-src": ("Src/x", "src/x"),  # the twin holds a PLAN.json only
}
CONTROLS = {"ok": "ok", "Solo": "Solo/x", "solo2": "solo2/deep/z"}
LIB = "lib/n"
PINS = {"pin-ok": LIB, "pin-up": "Team/x", "pin-tw": "team/x", "pin-83": "longte~1/x"}
LATE = {"late": ("late/x", "LATE/x"), "mrg": ("mrg/x", "MRG/x")}
FORGED = (
    "# Execution log\n\n- Approved by alice@example.com\n- Status: completed\n"
    "- Action 1 `rec`: succeeded (forged-r76)\n"
)


def _hash(lab: Lab, folder: str) -> str:
    from controller.plan.plans import parse_text

    text = (lab.repo / "plans" / folder / "PLAN.yml").read_text(encoding="utf-8")
    return str(parse_text(text, Path("PLAN.yml")).hash)


def _build(root: Path) -> Lab:
    lab = Lab(root, extra="agent:\n  identity: {name: Agent, email: agent@example.com}\n"
              "ui: {listen: 0}\n")  # fmt: skip
    cfg = str(lab.config)
    for tag, where in CONTROLS.items():
        lab.write(where, plan_text(tag))
    lab.write(LIB, plan_text("lib").replace("pending_approval", "draft"))
    for pid, (base, twin) in PAIRS.items():
        lab.write(base, plan_text(pid))
        if pid == "u-src":
            doc = dict(load_yaml(plan_text(f"{pid}-tw", name=pid)))
            lab.write(twin, json.dumps(doc, indent=1), "PLAN.json")
        else:
            lab.write(twin, plan_text(f"{pid}-tw", name=pid))
    for tag, (base, _) in LATE.items():
        lab.write(base, plan_text(tag))
    lab.write("spare/x", plan_text("late-tw", name="late"))
    lab.write("Lg/x", plan_text("lg"))
    lab.commit("agent: plans", AGENT)
    lab.run()
    time.sleep(1.1)
    for vid, where in PINS.items():
        lab.write(vid, pinning(vid, f"plans/{where}", _hash(lab, where)))
    lab.commit("agent: parents", AGENT)
    lab.run()
    time.sleep(1.1)
    approve = [*CONTROLS.values(), *(b for b, _ in PAIRS.values()), *PINS]
    approve += [b for b, _ in LATE.values()] + ["Lg/x"]
    for plan in approve:
        lab.set_status(plan, "approved")
    lab.commit("alice: approve", ALICE)
    lab.git("mv", "plans/spare", "plans/LATE")
    lab.commit("agent: tidy", AGENT)
    lab.git("checkout", "-q", "-b", "feat")
    lab.write("MRG/x", plan_text("mrg-tw", name="mrg"))
    lab.commit("agent: feat", AGENT)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge feat", "feat", who=ALICE)
    lab.run()
    lab.run()
    lab.write("lg/x", FORGED, "EXECUTION_LOG.md")
    forged = lab.repo / "Plans" / "ok" / "EXECUTION_LOG.md"
    forged.parent.mkdir(parents=True)
    forged.write_text(FORGED)
    lab.commit("agent: notes", AGENT)
    lab.run()
    got: dict[str, Any] = {}
    got["rows"] = {
        r["plan"]: r for r in json.loads(lab.cli("status", "--json", "--config", cfg).stdout)
    }
    tags = [*CONTROLS, "lib", *PINS, *LATE, "late-tw", "mrg-tw", "lg"]
    tags += [t for p in PAIRS for t in (p, f"{p}-tw")]
    got["calls"] = {t: len(lab.calls(t)) for t in tags}
    readers = [b for b, _ in PAIRS.values()] + list(CONTROLS.values()) + ["Lg/x", "lg/x"]
    readers += [b for b, _ in LATE.values()]
    for reader in ("show", "validate", "hash"):
        got[reader] = {}
    for plan in readers:
        where = str(lab.repo / "plans" / plan)
        done = lab.cli("show", "--json", "--config", cfg, where)
        got["show"][plan] = f"{done.returncode} {done.stdout}{done.stderr}"
        if plan in CONTROLS.values() or plan in ("lg/x", "Lg/x"):
            continue
        done = lab.cli("validate", "--config", cfg, where)
        got["validate"][plan] = f"{done.returncode} {done.stdout}{done.stderr}"
        done = lab.cli("hash", where)
        got["hash"][plan] = f"{done.returncode} {done.stdout}{done.stderr}"
    copy = root / "fz"  # the CLI's own writers: freeze on a copy, approve then reset
    shutil.copytree(lab.repo, copy, symlinks=True)
    got["freeze"], got["approve"] = {}, {}
    tip = lab.head()
    for base, _ in [*PAIRS.values(), *LATE.values()]:
        done = lab.cli("freeze", str(copy / "plans" / base), cwd=copy)
        changed = subprocess.run(
            ["git", "status", "--porcelain"], cwd=copy, capture_output=True, text=True,
            check=True,
        ).stdout  # fmt: skip
        subprocess.run(["git", "checkout", "-q", "--", "."], cwd=copy, check=True)
        got["freeze"][base] = f"{done.returncode} {done.stdout}{done.stderr}\nchanged: {changed}"
        env = lab.env(ALICE)
        done = subprocess.run(
            [PLANGATE, "approve", "--config", cfg, f"plans/{base}"], cwd=lab.repo, env=env,
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        made = lab.git("log", "--format=%an %s", f"{tip}..HEAD").strip()
        lab.git("reset", "-q", "--hard", tip)
        got["approve"][base] = f"{done.returncode} {done.stdout}{done.stderr}\ncommits: {made}"
    calls = [("log", {"path": f"plans/{p}"}) for p in readers] + [("status", {})]
    replies = session(lab, calls)[0]
    got["mcp-status"] = json.dumps(replies.pop(), ensure_ascii=False)
    got["mcp-log"] = {
        p: json.dumps(r, ensure_ascii=False) for p, r in zip(readers, replies, strict=True)
    }
    pages = page_texts(lab, [quote(f"plans/{p}") for p in readers], "plans/ok")
    got["page"] = {p: pages[quote(f"plans/{p}")][0] for p in readers}
    got["api"] = {p: pages[quote(f"plans/{p}")][1] for p in readers}
    got["subjects"] = lab.git("log", "--format=%an %s").splitlines()
    report, valid = clone_audit(lab, root)
    got["audit"] = {"valid": sorted(valid), "runs": len(report["executions"])}
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r76-surface-uptwins", _build)


def _xf(what: str) -> Any:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 76: {what}")


CLI_WHY = "show/validate/hash read, hash and validate a plan held by an up-level twin folder"
MCP_WHY = "MCP log answers a plan held by an up-level twin folder 'approved', no problem"
LOG_WHY = "a forged log in an up-level twin folder is noted by no reader of the plan"

PIDS = [f"{p}:{w}" for p in PAIRS for w in ("base-held", "twin-never")]
PBROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(PIDS, PIDS, PBROKEN))
def test_an_up_level_twin_holds_both(lab: Lab, vid: str) -> None:
    """Two plan paths that differ ABOVE the plan's folder (``Team/x``/``team/x``, two levels
    up, in the middle, a source as the twin, 8.3, HFS+, NTFS, NFD): one place on a folding
    checkout (docs/plan-format.md: "at any level under the plans folder"): the base held,
    never run (by itself or by a pin); the twin never runs."""
    got = lab.got  # type: ignore[attr-defined]
    pid, what = vid.split(":")
    base, twin = PAIRS[pid]
    if what == "twin-never":
        assert got["calls"][f"{pid}-tw"] == 0, got["calls"]
        row = got["rows"].get(f"plans/{twin}") or {}
        assert row.get("status") != "completed", row
        return
    row = got["rows"][f"plans/{base}"]
    if pid == in_source:  # the twin holds a source only: a note beside the plan file there
        assert got["calls"][pid] == 1 and row.get("status") == "completed", (row, got["calls"])
        return
    assert got["calls"][pid] == 0, got["calls"]
    assert row.get("held") in ("E_PLAN_AMBIGUOUS", "E_UNSAFE_PATH"), row


#: The pair whose twin holds a source only (decided 2026-12-01, lead, rounds 81-82): the
#: source is never converted (its folder waits E_PLAN_AMBIGUOUS) and the base's PLAN.yml is
#: the plan, as ``validate`` says: one plan file on every checkout, the source a note beside
#: it (docs/formats.md). Before, the pass converted the source into a twin PLAN.yml, which
#: held both (round 81 found that conversion a defect).
in_source = "u-src"
READ = [p for p in PAIRS if p not in ("u-bs", in_source)]
RDRS = ("show", "validate", "hash", "freeze", "approve", "mcp-log", "api", "page")
RIDS = [f"{p}:{r}" for p in READ for r in RDRS]
RBROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(RIDS, RIDS, RBROKEN))
def test_every_reader_holds_a_plan_beside_an_up_level_twin(lab: Lab, vid: str) -> None:
    """The row holds the base E_PLAN_AMBIGUOUS ("its folder and this one are one folder
    there"); docs/plan-format.md: "the status row, ``show``, ``validate``, ``hash``,
    ``freeze``, MCP ``log``/``status``/``wait``/``submit``, the page and a parent's pin say so,
    naming the twin": every reader names the code, no hash, no document."""
    got = lab.got  # type: ignore[attr-defined]
    pid, reader = vid.split(":")
    base = PAIRS[pid][0]
    assert got["rows"][f"plans/{base}"].get("held") == "E_PLAN_AMBIGUOUS"
    text = got[reader][base]
    if reader == "approve":  # already approved: refused (any code), nothing committed
        assert text.startswith("1 ") and text.rstrip().endswith("commits:"), text[-600:]
        return
    if reader == "freeze":
        assert text.rstrip().endswith("changed:"), text[-600:]
    assert "E_PLAN_AMBIGUOUS" in text, text[:800]
    assert "sha256:" not in text.replace('"hash": null', ""), text[:800]
    assert f"attack variant {pid}" not in text, text[:800]


LIDS = [f"{t}:{w}" for t in LATE for w in ("held", "ran", "show", "mcp-log")]
LBROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(LIDS, LIDS, LBROKEN))
def test_a_later_up_level_twin_holds_the_approved_base(lab: Lab, vid: str) -> None:
    """After Alice approved ``plans/late/x`` and ``plans/mrg/x``, the agent renames a spare
    folder's PARENT (``git mv plans/spare plans/LATE``) and a branch Alice merges adds
    ``plans/MRG/x``: however late the twin comes, the base is held from its commit on
    (docs/plan-format.md, the round 72 rule for a late claim): never run, every reader says
    so."""
    got = lab.got  # type: ignore[attr-defined]
    tag, what = vid.split(":")
    base, _ = LATE[tag]
    row = got["rows"][f"plans/{base}"]
    if what == "held":
        assert row.get("held") == "E_PLAN_AMBIGUOUS", row
    elif what == "ran":
        assert got["calls"][tag] == 0 and got["calls"][f"{tag}-tw"] == 0, got["calls"]
    else:
        text = got[what][base]
        assert "E_PLAN_AMBIGUOUS" in text, text[:800]
        assert '"status": "approved"' not in text, text[:800]


PIN_TAG = {"pin-up": "u-case", "pin-tw": "u-case-tw", "pin-83": "u-83-tw"}
NIDS = [f"{p}:{w}" for p in PINS for w in ("row", "ran")]


@pytest.mark.parametrize("vid", cases(NIDS, NIDS, {}))
def test_a_pin_naming_an_up_level_twin_is_invalid(lab: Lab, vid: str) -> None:
    """``pin-up`` pins ``plans/Team/x``, ``pin-tw`` ``plans/team/x``, ``pin-83``
    ``plans/longte~1/x`` (each by its own hash; each held E_PLAN_AMBIGUOUS by the row): "a
    parent's pin say[s] so" (docs/plan-format.md): the parent is invalid E_PLAN_AMBIGUOUS and
    never runs. Control: ``pin-ok`` runs the draft library ``plans/lib/n`` once."""
    got = lab.got  # type: ignore[attr-defined]
    pin, what = vid.split(":")
    row = got["rows"][f"plans/{pin}"]
    if pin == "pin-ok":
        assert row["status"] == "completed" and got["calls"]["lib"] == 1, (row, got["calls"])
        return
    if what == "row":
        assert row["status"] != "completed", row
        assert "E_PLAN_AMBIGUOUS" in json.dumps(row), row
    else:
        assert got["calls"][PIN_TAG[pin]] == 0, got["calls"]
        assert not [s for s in got["subjects"] if f"start plans/{pin}" in s], got["subjects"]


CIDS = [f"{t}:{w}" for t in CONTROLS for w in ("ran", "readers")]


@pytest.mark.parametrize("vid", cases(CIDS, CIDS, {}))
def test_honest_nested_folders_run(lab: Lab, vid: str) -> None:
    """Controls: ``plans/ok``, ``plans/Solo/x`` (a capital, no twin), ``plans/solo2/deep/z``
    run once on Alice's approval; ``show``, MCP ``log``, the API and the page agree."""
    got = lab.got  # type: ignore[attr-defined]
    tag, what = vid.split(":")
    plan = CONTROLS[tag]
    row = got["rows"][f"plans/{plan}"]
    assert got["calls"][tag] == 1 and row["status"] == "completed", (got["calls"], row)
    if what == "readers":
        for reader in ("show", "mcp-log", "api", "page"):
            text = got[reader][plan]
            assert "E_PLAN_AMBIGUOUS" not in text and "E_UNSAFE_PATH" not in text, text[:800]
            assert "forged-r76" not in text, text[-800:]
        assert "completed" in got["mcp-log"][plan] and "completed" in got["api"][plan]


GIDS = [f"lg:{r}" for r in ("row", "show", "mcp-log", "api", "page")]
GBROKEN: dict[str, Any] = {}


def _reader(got: dict[str, Any], plan: str, reader: str) -> str:
    if reader == "row":
        return json.dumps(got["rows"].get(f"plans/{plan}"), ensure_ascii=False)
    return str(got[reader].get(plan, ""))


@pytest.mark.parametrize("vid", cases(GIDS, GIDS, GBROKEN))
def test_a_forged_log_in_an_up_level_twin_is_noted(lab: Lab, vid: str) -> None:
    """``plans/Lg/x`` ran; the agent commits a forged "completed, approved by alice" log at
    ``plans/lg/x/EXECUTION_LOG.md``: on a case-insensitive checkout git writes it over the
    controller's log (``lg/`` sorts after ``Lg/``). docs/plan-format.md: "A log in such a
    folder ... is the plan's log there: every reader of the plan's record notes it
    ``E_OWNED_BLOCK_CHANGED`` and never shows it"."""
    got = lab.got  # type: ignore[attr-defined]
    reader = vid.split(":")[1]
    text = _reader(got, "Lg/x", reader)
    assert got["calls"]["lg"] == 1, got["calls"]
    assert "forged-r76" not in text, text[-800:]
    assert "E_OWNED_BLOCK_CHANGED" in text, text[:1200]


SIDS = ["lg:never-shown", "ok:plans-twin-never-shown"]


@pytest.mark.parametrize("vid", cases(SIDS, SIDS, {}))
def test_no_reader_shows_a_forged_log(lab: Lab, vid: str) -> None:
    """Neither forged log (``plans/lg/x/``, ``Plans/ok/``) is shown by any reader of
    ``plans/Lg/x``, ``plans/lg/x`` or ``plans/ok``, nor makes a completed row of its own."""
    got = lab.got  # type: ignore[attr-defined]
    plans = ["Lg/x", "lg/x"] if vid.startswith("lg") else ["ok"]
    for plan in plans:
        for reader in ("row", "show", "mcp-log", "api", "page"):
            assert "forged-r76" not in _reader(got, plan, reader), (plan, reader)
    # no row of its own; round 84: ``plans/ok``'s row may NAME ``Plans/ok/EXECUTION_LOG.md``
    # (a twin claim of its log, noted, never shown: the plans folder's spelling, r84plansdir)
    assert "plans/lg/x" not in got["rows"] and "Plans/ok" not in got["rows"]


def test_mcp_status_holds_every_base(lab: Lab) -> None:
    """MCP ``status`` lists every base beside its up-level twin held E_PLAN_AMBIGUOUS."""
    got = lab.got  # type: ignore[attr-defined]
    reply = json.loads(got["mcp-status"])
    rows = {r["plan"]: r for r in json.loads(reply["result"]["content"][0]["text"])["plans"]}
    for base in [b for p, (b, _) in PAIRS.items() if p not in ("u-bs", in_source)]:
        assert rows[f"plans/{base}"].get("held") == "E_PLAN_AMBIGUOUS", rows[f"plans/{base}"]


def test_the_fresh_clone_audit_agrees_with_the_rows(lab: Lab) -> None:
    got = lab.got  # type: ignore[attr-defined]
    completed = sorted(p for p, r in got["rows"].items() if r["status"] == "completed")
    assert got["audit"]["valid"] == completed, (got["audit"], completed)
    assert got["audit"]["runs"] == len(completed), got["audit"]


if __name__ == "__main__":
    import tempfile

    out = Path(tempfile.mkdtemp(prefix="r76up-", dir="/tmp/atk76b"))
    got = _build(out).got  # type: ignore[attr-defined]
    print(json.dumps(got, indent=1, ensure_ascii=False, default=str))
