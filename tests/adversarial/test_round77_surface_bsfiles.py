"""Round 77, agent-facing surfaces: round 76's backslash rule (a backslash is a folder
separator to git for Windows, ``names.path_parts``; a backslash in a folder name is
``E_UNSAFE_PATH``) tried on FILES rather than folders: a file in a plan's parent folder
whose one name, split at its backslashes, IS the plan's file, its source or its log
(``plans/fy\\PLAN.yml`` is ``plans/fy/PLAN.yml`` there), with a case change, two backslashes,
a backslash file brought by a merge, a pin naming such a plan or a backslash path, and the
recorded policy's twins by a backslash and by case (``.plangate\\policy.json``,
``.PlanGate/``, ``.plangate/POLICY.JSON``, ...).

Lab (one, module scope; three ``run --once`` passes):
- pass 1: the agent commits, pending, the controls ``plans/ok``, ``plans/ok2``, the draft
  library ``plans/lib/n``, ``plans/lo``, ``plans/lo2``, ``plans/lb/x`` (to run, then get a
  forged log), ``plans/self``; and the bases (``rec <id>``) each beside a FILE whose name
  holds backslashes (``rec <id>-tw``): ``f-yml`` ``fy`` / ``fy\\PLAN.yml``, ``f-case`` ``fc``
  / ``FC\\PLAN.yml``, ``f-yaml`` ``fa`` / ``fa\\PLAN.yaml``, ``f-json`` ``fj`` /
  ``fj\\PLAN.json`` (a source), ``f-up`` ``fu/x`` / ``fu\\x\\PLAN.yml`` (two backslashes, a
  file in ``plans/``), ``f-mid`` ``fm/x`` / ``fm/x\\PLAN.yml`` (a file in ``plans/fm/``);
  a lone ``plans/lone\\PLAN.yml`` (no folder ``lone``), the late base ``mb``, and a base
  ``fp`` beside ``fp\\PLAN.yml`` left pending;
- after pass 1 the agent commits forged copies of ``.plangate/policy.json`` (the agent as
  controller and approver, self-approval allowed) at ``.plangate\\policy.json`` (a root
  file), ``.PlanGate/policy.json``, ``.plangate/POLICY.JSON``, ``.plangate/Policy.json``,
  ``.plangate\\POLICY.JSON``, and its own ``plans/self`` approved;
- pass 2 (after pass 1's freeze): the agent's parents ``pin-ok`` (``plans/lib/n``),
  ``pin-bs`` (``plans/fy``, held by its backslash file), ``pin-bsp`` (the path
  ``plans/lib\\n`` with the library's hash), ``pin-chain`` (``plans/pin-ok``: a nested plan
  of a nested plan); Alice approves every base, the lone file, the controls and pins; a
  branch ``feat`` (the agent) adds ``plans/mb\\PLAN.yml``, Alice merges it ``--no-ff``;
- pass 3: ``lo``, ``lo2``, ``lb/x`` ran; the agent commits the forged "completed, approved by
  alice" logs ``plans/lo\\EXECUTION_LOG.md``, ``plans/LO2\\execution_log.md`` (files in
  ``plans/``) and ``plans/lb\\x/EXECUTION_LOG.md`` (a backslash folder holding only a log).
- then Alice runs ``plangate approve plans/fp`` and ``plangate reject -m no plans/fp`` (the
  lab resets main after each).
Readers: the ``status --json`` rows, ``show --json``, ``validate``, ``hash``, MCP ``log``, the
daemon's page and ``/api/plan/<id>``, the ``rec`` calls, the fresh-clone audit.
Variants:
- ``<pair>:{base-held,twin-never,show,validate,hash,mcp-log,page,api}`` (48): the base is
  one plan file with its twin on a Windows checkout (docs/plan-format.md: "A backslash is a folder
  separator to git for Windows ... a folder ``plans/bs\\x`` is the path ``plans/bs/x``
  there"): held E_PLAN_AMBIGUOUS (or E_UNSAFE_PATH), never run; every reader names a code,
  prints no hash or document; the twin's action never runs;
- ``lone:{never,row}`` (2): the lone backslash file never runs (nor a row says completed);
- ``fp:{approve,reject,never}`` (3): Alice's ``approve``/``reject`` of the pending base refuse
  with the code and commit nothing ("``approve``, ``reject``, ``abort`` (which commit
  nothing) ... say so"); it never runs;
- ``mb:{held,ran}`` (2): the backslash twin file brought by a merge Alice makes holds the
  base she approved before the merge;
- ``pin-{bs,bsp,chain}:{row,ran}`` (6): invalid, never run; ``pin-ok:{row,ran}`` (2,
  control) runs the library once;
- ``{lo,lo2,lb}:{row,show,mcp-log,never-shown}`` (12): a forged log whose backslash name is
  the plan's log on a Windows checkout is noted E_OWNED_BLOCK_CHANGED by every reader of
  the record and never shown (docs/plan-format.md: "A log in such a folder ... is the plan's
  log there");
- ``policy-{bsfile,mixed,upfile,capfile,bsupper}:flagged`` (5): the audit notes each twin of
  the recorded policy ``policy-changed`` (docs/plan-format.md: "a twin of
  ``.plangate/policy.json`` ... is noted by the audit"); ``self:{ran,row}`` (2): the agent's
  self-approval under its forged twins never runs;
- ``{ok,ok2}:{ran,readers}`` (4, controls): honest plans run once, readers agree;
- the fresh-clone audit agrees with the rows (1).

Seen (round 77):
- ``<pair>:{base-held,show,validate,hash,mcp-log,page,api}`` for the six pairs,
  ``mb:{held,ran}``, ``fp:{approve,reject}``, ``pin-bs:{row,ran}`` (48 ids, one class):
  beside ``plans/fy/PLAN.yml`` the agent commits a FILE ``plans/fy\\PLAN.yml`` (one name in
  ``plans/``; likewise ``FC\\PLAN.yml``,
  ``fa\\PLAN.yaml``, ``fj\\PLAN.json``, ``fu\\x\\PLAN.yml``, ``plans/fm/x\\PLAN.yml``, and
  ``mb\\PLAN.yml`` from a branch Alice merges after approving ``plans/mb``): no row holds
  the base, Alice's approval RAN it (``rec f-yml`` ..., ``rec mb`` once), ``show``/``validate``/
  ``hash`` print its hash, MCP ``log``, the page and ``/api/plan/`` answer ``completed``,
  Alice's ``plangate approve plans/fp`` / ``reject -m`` of the pending ``fp`` beside
  ``fp\\PLAN.yml`` commit ("approved plans/fp in ..."), and ``pin-bs`` (pinning
  ``plans/fy``) is valid and completes. The backslash file itself gets no row at all
  (``plans/lone\\PLAN.yml``, "approved", never ran: held). Should (docs/plan-format.md,
  round 76: "A backslash is a folder separator to git for Windows (``is_dir_sep``), so a
  folder ``plans/bs\\x`` is the path ``plans/bs/x`` there ... one with ``core.protectNTFS``
  off writes its files into ``bs/x``: the base is held rather than run beside a name no
  Windows checkout has"): the file ``plans/fy\\PLAN.yml`` is ``plans/fy/PLAN.yml`` there
  exactly as the folder ``plans/bs\\x`` is ``plans/bs/x``: the base E_PLAN_AMBIGUOUS naming
  it (or the name E_UNSAFE_PATH and the base held), every reader saying so, the pin
  invalid. Round 76's rule split FOLDER names only; a file's own name is never split.
- ``{lo,lo2}:{row,show,mcp-log}`` (6 ids, one class): after ``plans/lo`` ran, the agent's
  forged "completed, approved by alice" FILE ``plans/lo\\EXECUTION_LOG.md`` (and
  ``plans/LO2\\execution_log.md``) is noted by no reader (no E_OWNED_BLOCK_CHANGED), where
  the FOLDER form ``plans/lb\\x/EXECUTION_LOG.md`` is noted by the row, ``show`` and MCP
  ``log``. Should (docs/plan-format.md: "A log in such a folder ... is the plan's log there:
  every reader of the plan's record notes it"; round 73's ``log_twins``): noted. The forged
  text is shown by none.
- ``policy-{bsfile,bsupper}:flagged`` (2 ids, one class, minor): the agent's forged policy at
  the root FILE ``.plangate\\policy.json`` (``.plangate\\POLICY.JSON``) gets no
  ``policy-changed`` note, where ``.PlanGate/policy.json``, ``.plangate/POLICY.JSON`` and
  ``.plangate/Policy.json`` each get one. Should (docs/plan-format.md: "a twin of
  ``.plangate/policy.json`` ... is noted by the audit"; git for Windows writes that file as
  ``.plangate/policy.json``). The audit decides by the controller's record commits (the
  agent's ``self`` never ran), so only a reader of the checkout's file is misled.
Fixed (2026-12-01, r77bsfile): one split for a file's own name too (``names.split_files``:
the names above a folder that git for Windows writes into it, from the root down, through
twin folders); the index (``_ambiguity``, ``_claimed_folder`` by ``path_parts``,
``_log_twin_plans``, ``_twin_logged``) and every reader (``twin_folder_verdict(..., split)``
for the CLI, the writers, MCP, the page, a pin; ``ownrecord.twin_logs``) count each as a
claim of the plan file's or the log's place, and the audit's pathspecs list root backslash
names (``recorded.TWIN_SPECS``): the five plan-file pairs, ``mb``, ``fp``, ``pin-bs``,
``{lo,lo2}:*`` and ``policy-{bsfile,bsupper}`` pass. ``f-json:*`` (7 ids) decided by the
lead (2026-12-01), expectation changed: ``plans/fj\\PLAN.json`` is ``plans/fj``'s
``PLAN.json`` to every reader, and a source beside a ``PLAN.yml`` is a note, not a plan
(docs/formats.md; every converted folder holds its source so), so ``fj`` runs its reviewed
``PLAN.yml`` once and no reader shows the note's content; holding ``fj`` would be a second
rule for one spelling of that note.
Held: the backslash twins never ran their own action; the lone backslash file, the
``plans/lib\\n`` pin, the two-level pin chain never ran; the FOLDER ``plans/lb\\x`` holding a
forged log is E_UNSAFE_PATH and noted on ``plans/lb/x``; the case twins of the policy are
noted; the agent's self-approval under forged policies never ran; the controls and
``pin-ok`` ran once; the fresh-clone audit agreed with the rows.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab, cases, clone_audit, load_yaml, plan_text
from checkkit import pinning
from mcpkit import PLANGATE, session
from oraclekit import page_texts
from test_round2_execution_kit import shared

# pair id -> (base folder, the backslash file's path under plans/, its kind)
PAIRS: dict[str, tuple[str, str]] = {
    "f-yml": ("fy", "fy\\PLAN.yml"),
    "f-case": ("fc", "FC\\PLAN.yml"),
    "f-yaml": ("fa", "fa\\PLAN.yaml"),
    "f-json": ("fj", "fj\\PLAN.json"),
    "f-up": ("fu/x", "fu\\x\\PLAN.yml"),
    "f-mid": ("fm/x", "fm/x\\PLAN.yml"),
}
CONTROLS = {"ok": "ok", "ok2": "ok2"}
LIB = "lib/n"
PINS = {"pin-ok": "lib/n", "pin-bs": "fy", "pin-bsp": "lib\\n", "pin-chain": "pin-ok"}
LOGS = {"lo": ("lo", "lo\\EXECUTION_LOG.md"), "lo2": ("lo2", "LO2\\execution_log.md")}
LOGS["lb"] = ("lb/x", "lb\\x/EXECUTION_LOG.md")
POLICY = {
    "bsfile": ".plangate\\policy.json",
    "mixed": ".PlanGate/policy.json",
    "upfile": ".plangate/POLICY.JSON",
    "capfile": ".plangate/Policy.json",
    "bsupper": ".plangate\\POLICY.JSON",
}
FORGED = (
    "# Execution log\n\n- Approved by alice@example.com\n- Status: completed\n"
    "- Action 1 `rec`: succeeded (forged-r77)\n"
)


def _hash(lab: Lab, folder: str) -> str:
    from controller.plan.plans import parse_text

    text = (lab.repo / "plans" / folder / "PLAN.yml").read_text(encoding="utf-8")
    return str(parse_text(text, Path("PLAN.yml")).hash)


def _put(lab: Lab, rel: str, text: str) -> None:
    path = lab.repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _build(root: Path) -> Lab:
    lab = Lab(root, extra="agent:\n  identity: {name: Agent, email: agent@example.com}\n"
              "ui: {listen: 0}\n")  # fmt: skip
    cfg = str(lab.config)
    for tag, where in CONTROLS.items():
        lab.write(where, plan_text(tag))
    lab.write(LIB, plan_text("lib").replace("pending_approval", "draft"))
    for tag, (where, _) in LOGS.items():
        lab.write(where, plan_text(tag))
    lab.write("self", plan_text("self"))
    lab.write("mb", plan_text("mb"))
    for pid, (base, twin) in PAIRS.items():
        lab.write(base, plan_text(pid))
        text = plan_text(f"{pid}-tw", name=pid)
        if twin.endswith(".json"):
            text = json.dumps(dict(load_yaml(text)), indent=1)
        _put(lab, f"plans/{twin}", text)
    _put(lab, "plans/lone\\PLAN.yml", plan_text("lone"))
    lab.write("fp", plan_text("f-pend"))
    _put(lab, "plans/fp\\PLAN.yml", plan_text("f-pend-tw", name="f-pend"))
    lab.commit("agent: plans", AGENT)
    lab.run()
    time.sleep(1.1)
    recorded = json.loads((lab.repo / ".plangate" / "policy.json").read_text())
    forged = json.loads(json.dumps(recorded).replace("plangate@localhost", AGENT[1]))
    forged["approval"]["approvers"] = [*forged["approval"]["approvers"], AGENT[1]]
    forged["approval"]["allow_self_approval"] = True
    for rel in POLICY.values():
        _put(lab, rel, json.dumps(forged, sort_keys=True, separators=(",", ":")))
    lab.set_status("self", "approved")
    lab.commit("agent: notes and my approval", AGENT)
    for vid, where in PINS.items():
        if vid == "pin-chain":
            continue
        digest = _hash(lab, where.replace("\\", "/"))
        lab.write(vid, pinning(vid, f"plans/{where}", digest))
    lab.commit("agent: parents", AGENT)
    lab.run()
    time.sleep(1.1)
    lab.write("pin-chain", pinning("pin-chain", "plans/pin-ok", _hash(lab, "pin-ok")))
    lab.commit("agent: chain", AGENT)
    lab.run()
    time.sleep(1.1)
    approve = [*CONTROLS.values(), *(b for b, _ in PAIRS.values()), *PINS, "mb"]
    approve += [w for w, _ in LOGS.values()]
    for plan in approve:
        lab.set_status(plan, "approved")
    lone = lab.repo / "plans" / "lone\\PLAN.yml"
    lone.write_text(lone.read_text().replace("pending_approval", "approved"))
    lab.commit("alice: approve", ALICE)
    lab.git("checkout", "-q", "-b", "feat")
    _put(lab, "plans/mb\\PLAN.yml", plan_text("mb-tw", name="mb"))
    lab.commit("agent: feat", AGENT)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge feat", "feat", who=ALICE)
    lab.run()
    lab.run()
    for _, rel in LOGS.values():
        _put(lab, f"plans/{rel}", FORGED)
    lab.commit("agent: notes", AGENT)
    lab.run()
    got: dict[str, Any] = {}
    got["rows"] = {
        r["plan"]: r for r in json.loads(lab.cli("status", "--json", "--config", cfg).stdout)
    }
    tags = [*CONTROLS, "lib", *PINS, *LOGS, "self", "mb", "mb-tw", "lone", "f-pend", "f-pend-tw"]
    tags += [t for p in PAIRS for t in (p, f"{p}-tw")]
    got["calls"] = {t: len(lab.calls(t)) for t in tags}
    readers = [b for b, _ in PAIRS.values()] + list(CONTROLS.values())
    readers += [w for w, _ in LOGS.values()]
    for reader in ("show", "validate", "hash"):
        got[reader] = {}
    for plan in readers:
        where = str(lab.repo / "plans" / plan)
        done = lab.cli("show", "--json", "--config", cfg, where)
        got["show"][plan] = f"{done.returncode} {done.stdout}{done.stderr}"
        done = lab.cli("validate", "--config", cfg, where)
        got["validate"][plan] = f"{done.returncode} {done.stdout}{done.stderr}"
        done = lab.cli("hash", where)
        got["hash"][plan] = f"{done.returncode} {done.stdout}{done.stderr}"
    replies = session(lab, [("log", {"path": f"plans/{p}"}) for p in readers])[0]
    got["mcp-log"] = {
        p: json.dumps(r, ensure_ascii=False) for p, r in zip(readers, replies, strict=True)
    }
    pages = page_texts(lab, [f"plans/{b}" for b, _ in PAIRS.values()], "plans/ok")
    got["page"] = {b: pages[f"plans/{b}"][0] for b, _ in PAIRS.values()}
    got["api"] = {b: pages[f"plans/{b}"][1] for b, _ in PAIRS.values()}
    got["writers"] = {}
    tip = lab.head()
    for verb in ("approve", "reject"):
        args = ["-m", "no"] if verb == "reject" else []
        done = subprocess.run(
            [PLANGATE, verb, "--config", cfg, *args, "plans/fp"], cwd=lab.repo,
            env=lab.env(ALICE), capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        made = lab.git("log", "--format=%an %s", f"{tip}..HEAD").strip()
        dirty = lab.git("status", "--porcelain").strip()
        lab.git("reset", "-q", "--hard", tip)
        got["writers"][verb] = (
            f"{done.returncode} {done.stdout}{done.stderr}\ndirty: {dirty}\ncommits: {made}"
        )
    got["subjects"] = lab.git("log", "--format=%an %s").splitlines()
    report, valid = clone_audit(lab, root)
    got["audit"] = {
        "valid": sorted(valid),
        "runs": len(report["executions"]),
        "text": json.dumps(report, ensure_ascii=False),
    }
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r77-surface-bsfiles", _build)


def _xf(what: str) -> Any:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 77: {what}")


TWIN_WHY = "a FILE named <plan>\\PLAN.yml (the plan's file on git for Windows) holds nothing"
LOG_WHY = "a forged log FILE named <plan>\\EXECUTION_LOG.md is noted by no reader"
POL_WHY = "the audit notes no .plangate\\policy.json backslash file"


def _row(got: dict[str, Any], plan: str) -> dict[str, Any]:
    return got["rows"].get(f"plans/{plan}") or {}


PIDS = [
    f"{p}:{w}"
    for p in PAIRS
    for w in ("base-held", "twin-never", "show", "validate", "hash", "mcp-log", "page", "api")
]
#: Decided (2026-12-01, lead): ``plans/fj\\PLAN.json`` is ``plans/fj``'s ``PLAN.json`` on a
#: Windows checkout, and a source beside a ``PLAN.yml`` is a note, never a plan
#: (docs/formats.md: every converted folder holds its source beside the ``PLAN.yml`` written
#: from it; holding ``fj`` would be a second rule for one spelling of that note). ``fj`` runs
#: its reviewed ``PLAN.yml`` once; every reader shows that plan, never the note's content.
NOTE_PAIRS = {"f-json"}
PBROKEN: dict[str, Any] = {}  # the other pairs fixed (2026-12-01, r77bsfile)


@pytest.mark.parametrize("vid", cases(PIDS, PIDS, PBROKEN))
def test_a_backslash_file_twin_holds_the_plan(lab: Lab, vid: str) -> None:
    """A file in the plan's parent folder named ``fy\\PLAN.yml`` (``FC\\PLAN.yml``,
    ``fa\\PLAN.yaml``, ``fj\\PLAN.json``, ``fu\\x\\PLAN.yml``, ``x\\PLAN.yml``) is the plan's
    file (or source) on a Windows checkout with ``core.protectNTFS`` off (docs/plan-format.md,
    round 76: "a folder ``plans/bs\\x`` is the path ``plans/bs/x`` there ... the base is held
    rather than run beside a name no Windows checkout has"): the base is held, never run,
    and every reader names the code with no hash or document; the twin never runs."""
    got = lab.got  # type: ignore[attr-defined]
    pid, what = vid.split(":")
    base, _ = PAIRS[pid]
    row = _row(got, base)
    if what == "twin-never":
        assert got["calls"][f"{pid}-tw"] == 0, got["calls"]
        return
    if pid in NOTE_PAIRS:  # a note beside the plan file: the reviewed plan runs, once
        if what == "base-held":
            assert got["calls"][pid] == 1 and row.get("status") == "completed", row
            return
        text = got[what][base]
        assert "E_PLAN_AMBIGUOUS" not in text and f"{pid}-tw" not in text, text[:800]
        return
    if what == "base-held":
        assert got["calls"][pid] == 0, (got["calls"], row)
        assert row.get("held") in ("E_PLAN_AMBIGUOUS", "E_UNSAFE_PATH"), row
        return
    text = got[what][base]
    if what == "page":  # the reviewer's page shows no completed run of a held plan
        assert "E_PLAN_AMBIGUOUS" in text or "E_UNSAFE_PATH" in text, text[:800]
        return
    assert "E_PLAN_AMBIGUOUS" in text or "E_UNSAFE_PATH" in text, text[:800]
    assert "sha256:" not in text.replace('"hash": null', ""), text[:800]
    assert '"status": "approved"' not in text and '"completed"' not in text, text[:800]


LIDS = ["lone:never", "lone:row", "mb:held", "mb:ran", "fp:approve", "fp:reject", "fp:never"]
LBROKEN: dict[str, Any] = {}  # fixed (2026-12-01, r77bsfile)


@pytest.mark.parametrize("vid", cases(LIDS, LIDS, LBROKEN))
def test_a_lone_or_merged_backslash_file_runs_nothing(lab: Lab, vid: str) -> None:
    """``plans/lone\\PLAN.yml`` (a file, no folder ``lone``) "approved" by Alice never runs and
    no row calls it completed; ``plans/mb\\PLAN.yml`` brought by a branch Alice merges after
    approving ``plans/mb`` holds ``mb`` (the round 72 rule for a late claim)."""
    got = lab.got  # type: ignore[attr-defined]
    tag, what = vid.split(":")
    if tag == "fp":  # pending: Alice's approve/reject refuse with the code, commit nothing
        if what == "never":
            assert got["calls"]["f-pend"] == 0 and got["calls"]["f-pend-tw"] == 0
            return
        text = got["writers"][what]
        assert text.startswith("1 ") and text.rstrip().endswith("commits:"), text[-600:]
        assert "E_PLAN_AMBIGUOUS" in text or "E_UNSAFE_PATH" in text, text[:600]
        return
    if tag == "lone":
        if what == "never":
            assert got["calls"]["lone"] == 0, got["calls"]
        else:
            rows = [r for p, r in got["rows"].items() if "lone" in p]
            assert all(r.get("status") != "completed" for r in rows), rows
        return
    row = _row(got, "mb")
    if what == "held":
        assert row.get("held") in ("E_PLAN_AMBIGUOUS", "E_UNSAFE_PATH"), row
    else:
        assert got["calls"]["mb"] == 0 and got["calls"]["mb-tw"] == 0, got["calls"]


NIDS = [f"{p}:{w}" for p in PINS for w in ("row", "ran")]
NBROKEN: dict[str, Any] = {}  # fixed (2026-12-01, r77bsfile)
PIN_TAG = {"pin-bs": "f-yml", "pin-bsp": "lib", "pin-chain": "lib"}


@pytest.mark.parametrize("vid", cases(NIDS, NIDS, NBROKEN))
def test_a_pin_on_a_backslash_path_is_invalid(lab: Lab, vid: str) -> None:
    """``pin-bs`` pins ``plans/fy`` (held by its backslash file twin), ``pin-bsp`` pins the
    path ``plans/lib\\n`` (docs/plan-format.md, nested plans: "a backslash in a name too"),
    ``pin-chain`` pins ``plans/pin-ok`` (a nested plan of its own: "one level only"): each
    parent is invalid and never runs. Control: ``pin-ok`` runs the library once (only it)."""
    got = lab.got  # type: ignore[attr-defined]
    pin, what = vid.split(":")
    row = _row(got, pin)
    if pin == "pin-ok":
        assert row.get("status") == "completed" and got["calls"]["lib"] == 1, (row, got["calls"])
        return
    if what == "row":
        assert row.get("status") != "completed", row
        assert "E_" in json.dumps(row), row
    else:
        assert not [s for s in got["subjects"] if f"start plans/{pin}" in s], got["subjects"]
        if pin == "pin-bs":
            assert got["calls"]["f-yml"] == 0 and got["calls"]["f-yml-tw"] == 0, got["calls"]
        else:
            assert got["calls"]["lib"] <= 1, got["calls"]


GIDS = [f"{t}:{r}" for t in LOGS for r in ("row", "show", "mcp-log", "never-shown")]
GBROKEN: dict[str, Any] = {}  # fixed (2026-12-01, r77bsfile)


@pytest.mark.parametrize("vid", cases(GIDS, GIDS, GBROKEN))
def test_a_forged_backslash_log_is_noted(lab: Lab, vid: str) -> None:
    """``plans/lo`` ran; the agent's "completed, approved by alice" file
    ``plans/lo\\EXECUTION_LOG.md`` (``plans/LO2\\execution_log.md``, a folder
    ``plans/lb\\x`` holding only ``EXECUTION_LOG.md``) is that plan's log on a Windows
    checkout: docs/plan-format.md ("A log in such a folder ... is the plan's log there: every
    reader of the plan's record notes it ``E_OWNED_BLOCK_CHANGED`` and never shows it")."""
    got = lab.got  # type: ignore[attr-defined]
    tag, reader = vid.split(":")
    plan = LOGS[tag][0]
    assert got["calls"][tag] == 1, got["calls"]
    if reader == "never-shown":
        for r in ("show", "mcp-log"):
            assert "forged-r77" not in got[r][plan], (r, got[r][plan][-600:])
        assert "forged-r77" not in json.dumps(got["rows"]), tag
        return
    text = json.dumps(_row(got, plan)) if reader == "row" else got[reader][plan]
    assert "forged-r77" not in text, text[-800:]
    assert "E_OWNED_BLOCK_CHANGED" in text, text[:1200]


FIDS = [f"policy-{k}:flagged" for k in POLICY] + ["self:ran", "self:row"]
FBROKEN: dict[str, Any] = {}  # fixed (2026-12-01, r77bsfile)


@pytest.mark.parametrize("vid", cases(FIDS, FIDS, FBROKEN))
def test_a_policy_record_twin_is_noted(lab: Lab, vid: str) -> None:
    """docs/plan-format.md: "a twin of ``.plangate/policy.json`` (``.PLANGATE/``,
    ``PLANGA~1/``, ``.plangate./``) is noted by the audit" (``policy-changed``); the
    backslash file ``.plangate\\policy.json`` is that file on a Windows checkout, and
    ``.plangate/POLICY.JSON`` on a case-insensitive one. The agent's approval of its own
    plan under its forged twins never runs."""
    got = lab.got  # type: ignore[attr-defined]
    if vid.startswith("self"):
        assert got["calls"]["self"] == 0, got["calls"]
        assert _row(got, "self").get("status") != "completed", _row(got, "self")
        return
    rel = POLICY[vid.split(":")[0].removeprefix("policy-")]
    text = got["audit"]["text"]
    assert "policy-changed" in text, text[-1500:]
    notes = [n for n in text.split("policy-changed")[1:] if json.dumps(rel)[1:-1] in n[:400]]
    assert notes or json.dumps(rel)[1:-1] in text, (rel, text[-2000:])


CIDS = [f"{t}:{w}" for t in CONTROLS for w in ("ran", "readers")]


@pytest.mark.parametrize("vid", cases(CIDS, CIDS, {}))
def test_honest_plans_run(lab: Lab, vid: str) -> None:
    """Controls: ``plans/ok`` and ``plans/ok2`` run once on Alice's approval; ``show`` and
    MCP ``log`` agree."""
    got = lab.got  # type: ignore[attr-defined]
    tag, what = vid.split(":")
    row = _row(got, CONTROLS[tag])
    assert got["calls"][tag] == 1 and row["status"] == "completed", (got["calls"], row)
    if what == "readers":
        for reader in ("show", "mcp-log"):
            text = got[reader][CONTROLS[tag]]
            assert "E_PLAN_AMBIGUOUS" not in text and "E_UNSAFE_PATH" not in text, text[:800]
        assert "completed" in got["mcp-log"][CONTROLS[tag]]


def test_the_fresh_clone_audit_agrees_with_the_rows(lab: Lab) -> None:
    got = lab.got  # type: ignore[attr-defined]
    completed = sorted(p for p, r in got["rows"].items() if r["status"] == "completed")
    assert got["audit"]["valid"] == completed, (got["audit"]["valid"], completed)
    assert got["audit"]["runs"] == len(completed), got["audit"]["runs"]


if __name__ == "__main__":
    import tempfile

    Path("/tmp/atk77b").mkdir(exist_ok=True)
    out = Path(tempfile.mkdtemp(prefix="r77bs-", dir="/tmp/atk77b"))
    got = _build(out).got  # type: ignore[attr-defined]
    got["audit"]["text"] = got["audit"]["text"][-3000:]
    print(json.dumps(got, indent=1, ensure_ascii=False, default=str))
    _ = subprocess
