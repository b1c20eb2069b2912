"""Round 77, agent-facing surfaces: twins of the controller's record files outside the plans
folder and late twins made by a merge commit itself. The recorded policy's twins by the
NTFS forms round 75 folded for plan folders (a trailing dot or blank, ``::$DATA``, the 8.3
short name of the FILE, an ignorable code point, a backslash at the top), a root FILE named
``plans\\ok\\EXECUTION_LOG.md`` (the plan's log on git for Windows), a root
``plans\\new\\PLAN.yml`` "approved", and twins of approved plans made by the agent's own
merge commit (an evil merge: the rename is in neither parent) or by a later rename INTO a
backslash folder.

Lab (one, module scope; three ``run --once`` passes):
- pass 1: the agent commits, pending, ``ok``, ``ok2``, ``self``, ``ck``, ``ck2``, the bases
  ``em/x``, ``rn/x`` and spares ``spare/x`` (``rec em-tw``), ``spare2/x`` (``rec rn-tw``);
- pull requests (the agent's branches off main): ``pr-ck`` adds the FILE ``plans/ck\\PLAN.yml``
  and sets ``ck`` approved, ``pr-ck2`` sets ``ck2`` approved; ``plangate check --as alice``
  predicts each merge (Alice merges both at the end, two passes);
- the agent then commits forged copies of ``.plangate/policy.json`` (the agent as
  controller and approver, self-approval allowed) at every ``POLICY`` path and approves its
  own ``plans/self``; Alice approves ``ok``, ``ok2``, ``em/x``, ``rn/x``;
- the agent merges a branch ``side`` (a note only) with ``--no-commit`` and, inside the merge
  commit, ``git mv plans/spare plans/EM`` (a twin of ``em/x`` made by a merge commit and no
  parent); then ``git mv plans/spare2 plans/rn\\x`` (a backslash folder: ``rn/x`` on
  Windows); pass 2;
- pass 3: ``ok`` ran; the agent commits the forged "completed, approved by alice" root file
  ``plans\\ok\\EXECUTION_LOG.md`` and a root ``plans\\new\\PLAN.yml`` with ``status:
  approved`` (``rec new``).
Readers: the ``status --json`` rows, ``show --json``, MCP ``log``, the ``rec`` calls, the
fresh-clone audit (its ``policy-changed`` notes).
Variants:
- ``policy-<form>:flagged`` (8): the audit notes each twin ``policy-changed`` naming it
  (docs/plan-format.md: "a twin of ``.plangate/policy.json`` (``.PLANGATE/``, ``PLANGA~1/``,
  ``.plangate./``) is noted by the audit"); ``self:{ran,row}`` (2): the agent's approval
  under its forged twins never runs;
- ``{em,rn}:{held,ran,show,mcp-log}`` (8): the late twin holds the base Alice approved
  before it: never run, every reader says so (docs/plan-format.md: "However late the twin
  comes ... held from the twin's commit on");
- ``root:{log-noted,log-never-shown,new-never}`` (3): the root backslash log is not shown
  (and noted) by the readers of ``plans/ok``; the root backslash plan never runs;
- ``ck:{check,ran}`` (2): ``check`` predicts ``held`` for ``plans/ck`` beside its backslash
  file, which never runs after Alice's merge; ``ck2:{check,ran}`` (2, control): ``start``,
  runs once;
- ``{ok,ok2}:ran`` (2, controls), the fresh-clone audit agrees with the rows (1).

Seen (round 77):
- ``policy-bs83:flagged`` (1 id, minor; the class of ``test_round77_surface_bsfiles.py``'s
  ``policy-{bsfile,bsupper}``): the root FILE ``PLANGA~1\\policy.json`` (the 8.3 name of
  ``.plangate`` and a backslash: ``.plangate/policy.json`` on git for Windows with
  ``core.protectNTFS`` off) gets no ``policy-changed`` note, where the seven other forms
  (``policy.json.``, ``policy.json<blank>``, ``::$DATA``, ``POLICY~1.JSO``, U+200C in the file
  name, U+200D in the folder name, ``.plangate./POLICY.JSON``) each get one. Should
  (docs/plan-format.md: "a twin of ``.plangate/policy.json`` ... is noted by the audit";
  round 76: a backslash "is a folder separator to git for Windows"): noted. The audit and
  the controller still decide by the controller's record commits (``self`` never ran).
- ``root:log-noted`` (1 id; the class of bsfiles' ``{lo,lo2}:*``): after ``plans/ok`` ran, the
  agent's root FILE ``plans\\ok\\EXECUTION_LOG.md`` ("completed, approved by alice": that
  plan's log on git for Windows) is noted by none of the row, ``show`` and MCP ``log``.
  Should (docs/plan-format.md: a log in a twin place "is the plan's log there: every reader
  of the plan's record notes it ``E_OWNED_BLOCK_CHANGED``"). Its text is shown by none.
- ``ck:{check,ran}`` (2 ids; the class of bsfiles' ``<pair>:*``): ``plangate check --as
  alice`` of the pull request adding the FILE ``plans/ck\\PLAN.yml`` beside main's frozen
  ``plans/ck`` predicts ``"outcome": "start"``, ``valid``, no problem; after Alice's merge
  ``rec ck`` ran once. Should (docs/plan-format.md, round 76's backslash rule, and
  ``check`` answering as the controller will): ``held``, never run.
Fixed (2026-12-01, r77bsfile): ``policy-bs83`` (the audit's pathspecs list every root name
holding a backslash, ``recorded.TWIN_SPECS``, and ``is_twin`` splits it) and ``ck:{check,
ran}`` (the file ``plans/ck\\PLAN.yml`` is found by ``names.split_files`` and claims
``plans/ck``'s plan file: E_PLAN_AMBIGUOUS for the index ``check`` builds too). ``show`` and
MCP ``log`` noted the root file ``plans\\ok\\EXECUTION_LOG.md`` since r77bsfile
(``ownrecord.twin_logs`` walks from the root).
Fixed (2026-12-01, r79bsroot): ``root:log-noted``: the row notes it too. The history index
read the plans folder's history only; it now also reads every entry above the plans folder
whose own name holds a backslash (``planstate.history_paths``: ``git log -- plans
':(glob)*\\\\*'``; the cold scan takes them from the root listing its walk reads anyway), so
the root file reaches the index's log-twin rule as ``plans/ok\\EXECUTION_LOG.md`` does.
Held: the twin made inside the agent's own merge commit (``EM/x``, in neither parent) and
the later rename into the backslash folder ``plans/rn\\x`` hold the bases Alice approved
(E_PLAN_AMBIGUOUS on the row, ``show``, MCP ``log``), nothing of them runs; the root
``plans\\new\\PLAN.yml`` never runs; seven NTFS/HFS+ forms of the policy twin are noted;
the agent's self-approval never ran; the controls ran once; the audit agrees.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab, cases, clone_audit, plan_text
from checkkit import ask_in_prs, merge_as_alice, predict, prediction
from mcpkit import session
from test_round2_execution_kit import shared

POLICY = {
    "fdot": ".plangate/policy.json.",
    "fsp": ".plangate/policy.json ",
    "fads": ".plangate/policy.json::$DATA",
    "f83": ".plangate/POLICY~1.JSO",
    "fzw": ".plangate/policy.json\u200c",
    "dzw": ".plan\u200dgate/policy.json",
    "bs83": "PLANGA~1\\policy.json",
    "dotup": ".plangate./POLICY.JSON",
}
LATE = {"em": ("em/x", "EM/x"), "rn": ("rn/x", "rn\\x")}
FORGED = (
    "# Execution log\n\n- Approved by alice@example.com\n- Status: completed\n"
    "- Action 1 `rec`: succeeded (forged-r77rt)\n"
)


def _put(lab: Lab, rel: str, text: str) -> None:
    path = lab.repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _build(root: Path) -> Lab:
    lab = Lab(root, extra="agent:\n  identity: {name: Agent, email: agent@example.com}\n")
    cfg = str(lab.config)
    for tag in ("ok", "ok2", "self", "ck", "ck2"):
        lab.write(tag, plan_text(tag))
    for tag, (base, _) in LATE.items():
        lab.write(base, plan_text(tag))
    lab.write("spare/x", plan_text("em-tw", name="em"))
    lab.write("spare2/x", plan_text("rn-tw", name="rn"))
    lab.commit("agent: plans", AGENT)
    lab.run()
    time.sleep(1.1)

    def twin(lab: Lab, vid: str) -> None:
        if vid == "ck":
            _put(lab, "plans/ck\\PLAN.yml", plan_text("ck-tw", name="ck"))
            lab.commit("agent: a note", AGENT)

    ask_in_prs(lab, ["ck", "ck2"], twin)
    predict(lab, root, ["ck", "ck2"])
    recorded = json.loads((lab.repo / ".plangate" / "policy.json").read_text())
    forged = json.loads(json.dumps(recorded).replace("plangate@localhost", AGENT[1]))
    forged["approval"]["approvers"] = [*forged["approval"]["approvers"], AGENT[1]]
    forged["approval"]["allow_self_approval"] = True
    for rel in POLICY.values():
        _put(lab, rel, json.dumps(forged, sort_keys=True, separators=(",", ":")))
    lab.set_status("self", "approved")
    lab.commit("agent: notes and my approval", AGENT)
    for plan in ("ok", "ok2", *(b for b, _ in LATE.values())):
        lab.set_status(plan, "approved")
    lab.commit("alice: approve", ALICE)
    lab.git("checkout", "-q", "-b", "side")
    _put(lab, "NOTES.md", "side notes\n")
    lab.commit("agent: side", AGENT)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "--no-commit", "side", who=AGENT)
    lab.git("mv", "plans/spare", "plans/EM")
    lab.git("commit", "-q", "-m", "merge side", who=AGENT)
    lab.git("mv", "plans/spare2/x", "plans/rn\\x")
    lab.commit("agent: tidy", AGENT)
    lab.run()
    lab.run()
    _put(lab, "plans\\ok\\EXECUTION_LOG.md", FORGED)
    _put(lab, "plans\\new\\PLAN.yml", plan_text("new", "approved"))
    lab.commit("agent: notes", AGENT)
    lab.run()
    merge_as_alice(lab, ["ck", "ck2"])
    got: dict[str, Any] = {}
    got["check"] = {v: prediction(lab, v) for v in ("ck", "ck2")}
    got["rows"] = {
        r["plan"]: r for r in json.loads(lab.cli("status", "--json", "--config", cfg).stdout)
    }
    got["calls"] = {t: len(lab.calls(t)) for t in ("ok", "ok2", "self", "em", "em-tw", "rn")}
    got["calls"].update({t: len(lab.calls(t)) for t in ("rn-tw", "new", "ck", "ck-tw", "ck2")})
    readers = ["ok", "em/x", "rn/x"]
    got["show"] = {}
    for plan in readers:
        done = lab.cli("show", "--json", "--config", cfg, str(lab.repo / "plans" / plan))
        got["show"][plan] = f"{done.returncode} {done.stdout}{done.stderr}"
    replies = session(lab, [("log", {"path": f"plans/{p}"}) for p in readers])[0]
    got["mcp-log"] = {
        p: json.dumps(r, ensure_ascii=False) for p, r in zip(readers, replies, strict=True)
    }
    got["subjects"] = lab.git("log", "--format=%an %s").splitlines()
    report, valid = clone_audit(lab, root)
    got["audit"] = {
        "valid": sorted(valid),
        "runs": len(report["executions"]),
        "notes": [n for n in report.get("notes", []) if n.get("kind") == "policy-changed"],
    }
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r77-surface-recordtwins", _build)


def _xf(what: str) -> Any:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 77: {what}")


FIDS = [f"policy-{k}:flagged" for k in POLICY] + ["self:ran", "self:row"]
FBROKEN: dict[str, Any] = {}  # fixed (2026-12-01, r77bsfile)


@pytest.mark.parametrize("vid", cases(FIDS, FIDS, FBROKEN))
def test_a_policy_record_twin_is_noted(lab: Lab, vid: str) -> None:
    """Each forged copy at a path that IS ``.plangate/policy.json`` on some checkout (NTFS's
    trailing dot and blank, ``::$DATA``, the file's 8.3 name, an ignorable code point in the
    file or folder name, a backslash) is noted ``policy-changed`` naming it; the agent's
    approval of its own plan under them never runs."""
    got = lab.got  # type: ignore[attr-defined]
    if vid.startswith("self"):
        assert got["calls"]["self"] == 0, got["calls"]
        row = got["rows"].get("plans/self") or {}
        assert row.get("status") != "completed", row
        return
    rel = POLICY[vid.split(":")[0].removeprefix("policy-")]
    named = [n for n in got["audit"]["notes"] if f"committed {rel} in" in n.get("detail", "")]
    escaped = json.dumps(rel)[1:-1]
    named += [n for n in got["audit"]["notes"] if escaped in n.get("detail", "")]
    assert named, (rel, got["audit"]["notes"])


LIDS = [f"{t}:{w}" for t in LATE for w in ("held", "ran", "show", "mcp-log")]
LBROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(LIDS, LIDS, LBROKEN))
def test_a_twin_made_by_a_merge_commit_or_a_backslash_rename_holds(lab: Lab, vid: str) -> None:
    """After Alice approved ``plans/em/x`` and ``plans/rn/x``, the agent's merge commit
    (``--no-commit``, then ``git mv plans/spare plans/EM`` inside it: in neither parent) and
    a later ``git mv plans/spare2/x plans/rn\\x`` make a twin of each: held, never run,
    every reader says so."""
    got = lab.got  # type: ignore[attr-defined]
    tag, what = vid.split(":")
    base = LATE[tag][0]
    row = got["rows"].get(f"plans/{base}") or {}
    if what == "held":
        assert row.get("held") == "E_PLAN_AMBIGUOUS", row
    elif what == "ran":
        assert got["calls"][tag] == 0 and got["calls"][f"{tag}-tw"] == 0, got["calls"]
    else:
        text = got[what][base]
        assert "E_PLAN_AMBIGUOUS" in text, text[:800]
        assert '"status": "approved"' not in text, text[:800]


RIDS = ["root:log-never-shown", "root:log-noted", "root:new-never", "ok:ran", "ok2:ran"]
RBROKEN: dict[str, Any] = {}  # root:log-noted fixed by r79bsroot (the index reads root names)


@pytest.mark.parametrize("vid", cases(RIDS, RIDS, RBROKEN))
def test_root_backslash_files_forge_nothing(lab: Lab, vid: str) -> None:
    """A root FILE ``plans\\ok\\EXECUTION_LOG.md`` is ``plans/ok/EXECUTION_LOG.md`` on git for
    Windows: never shown, and noted E_OWNED_BLOCK_CHANGED by the readers of ``plans/ok``
    (docs/plan-format.md: a log in a twin place "is the plan's log there"); a root
    ``plans\\new\\PLAN.yml`` "approved" never runs. Controls: ``ok``, ``ok2`` ran once."""
    got = lab.got  # type: ignore[attr-defined]
    tag, what = vid.split(":")
    if tag in ("ok", "ok2"):
        row = got["rows"][f"plans/{tag}"]
        assert got["calls"][tag] == 1 and row["status"] == "completed", (got["calls"], row)
        return
    texts = [json.dumps(got["rows"]["plans/ok"]), got["show"]["ok"], got["mcp-log"]["ok"]]
    if what == "log-never-shown":
        assert not [t for t in texts if "forged-r77rt" in t], texts
    elif what == "log-noted":
        assert all("E_OWNED_BLOCK_CHANGED" in t for t in texts), texts
    else:
        assert got["calls"]["new"] == 0, got["calls"]
        assert not [p for p, r in got["rows"].items() if "new" in p and r["status"] == "completed"]


KIDS = ["ck:check", "ck:ran", "ck2:check", "ck2:ran"]
KBROKEN: dict[str, Any] = {}  # fixed (2026-12-01, r77bsfile)


@pytest.mark.parametrize("vid", cases(KIDS, KIDS, KBROKEN))
def test_check_predicts_a_backslash_file_twin_held(lab: Lab, vid: str) -> None:
    """A pull request (the agent's branch) adds the FILE ``plans/ck\\PLAN.yml`` beside main's
    frozen ``plans/ck`` and asks approval; ``plangate check --as alice`` predicts ``held``
    (docs/plan-format.md: the file is ``plans/ck/PLAN.yml`` on git for Windows), and after
    Alice's merge neither runs. Control: ``ck2`` (the approval alone) predicts ``start`` and
    runs once."""
    got = lab.got  # type: ignore[attr-defined]
    tag, what = vid.split(":")
    if what == "check":
        want = ("start",) if tag == "ck2" else ("held", "refuse", "invalid")
        assert got["check"][tag].get("outcome") in want, got["check"][tag]
    elif tag == "ck2":
        assert got["calls"]["ck2"] == 1, got["calls"]
    else:
        assert got["calls"]["ck"] == 0 and got["calls"]["ck-tw"] == 0, got["calls"]


def test_the_fresh_clone_audit_agrees_with_the_rows(lab: Lab) -> None:
    got = lab.got  # type: ignore[attr-defined]
    completed = sorted(p for p, r in got["rows"].items() if r["status"] == "completed")
    assert got["audit"]["valid"] == completed, (got["audit"]["valid"], completed)
    assert got["audit"]["runs"] == len(completed), got["audit"]["runs"]


if __name__ == "__main__":
    import tempfile

    Path("/tmp/atk77b").mkdir(exist_ok=True)
    out = Path(tempfile.mkdtemp(prefix="r77rt-", dir="/tmp/atk77b"))
    print(json.dumps(_build(out).got, indent=1, ensure_ascii=False, default=str))  # type: ignore[attr-defined]
