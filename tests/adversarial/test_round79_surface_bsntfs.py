"""Round 79, agent-facing surfaces: round 77's backslash FILE rule (``names.split_files``:
``plans/fy\\PLAN.yml`` is ``plans/fy/PLAN.yml`` on git for Windows) crossed with round 74's
NTFS rule (``names.same_name``: trailing dots and spaces, ``::$DATA``, 8.3 short names) and
round 72's case/HFS+ folds, in the LAST name (the file), in the FOLDER part of the split
name, in a file of the plan's own folder named ``\\PLAN.yml`` (empty first part), with two
backslashes in a row, at the repository's root (``PLANS\\rt\\PLAN.yml``), for the log and
for the recorded policy.

Lab (one, module scope; three ``run --once`` passes):
- pass 1: the agent commits, pending, the controls ``plans/ok``, ``plans/ok2``, ``plans/nt``
  (beside an honest FILE ``plans/nt\\NOTES.md``: no claim of a plan file's place),
  ``plans/nb`` (beside ``plans/nb/PLAN.yml.bak``), the log plans ``lg1``..``lg4``, and the
  bases (``rec <id>``), each beside a file whose name, split at its backslashes and folded
  as NTFS/HFS+ fold, is the base's plan file (``rec <id>-tw``): ``t-dot``
  ``td\\PLAN.yml.``, ``t-space`` ``ts\\PLAN.yml<blank>``, ``t-short`` ``tsh\\PLAN~1.YML``,
  ``t-stream`` ``tst\\PLAN.yml::$DATA``, ``t-lower`` ``tl\\plan.YML``, ``t-lead`` a file
  ``plans/tb/\\PLAN.yml`` (in the plan's own folder), ``t-dbl`` ``tw\\\\PLAN.yml``,
  ``t-fdot`` ``tfd.\\PLAN.yml``, ``t-fsp`` ``tfs<blank>\\PLAN.yml``, ``t-f83``
  ``LONGFO~1\\PLAN.yml`` beside ``plans/longfolder``, ``t-zw`` ``t<U+200C>z\\PLAN.yml``
  beside ``plans/tz``, ``t-mix`` ``TM\\X\\plan.yml.`` beside ``plans/tm/x``, ``t-root`` the
  ROOT file ``PLANS\\rt\\PLAN.yml`` beside ``plans/rt``, ``t-rootlc`` the root file
  ``plans\\rl\\PLAN.yml``, ``t-leadup`` a file ``plans/\\tu\\PLAN.yml`` in ``plans/``; and
  ``fp`` beside ``fp\\PLAN.YML.`` left pending;
- after pass 1: forged policies (the agent approver, self-approval allowed) at the root
  files ``.plangate\\policy.json.``, ``.plangate\\POLICY~1.JSO``, ``.PLANGATE\\policy.json<blank>``
  and the agent's own ``plans/self`` approved;
- pass 2: Alice approves every base, control and log plan;
- pass 3: the log plans ran; the agent commits the forged "completed, approved by alice"
  files ``plans/lg1\\EXECUTION_LOG.md.``, ``plans/lg2\\EXECUT~1.MD``,
  ``plans/lg3/\\EXECUTION_LOG.md``, ``plans/lg4\\execution_log.md::$DATA``,
  ``plans/\\lg5\\EXECUTION_LOG.md``;
- then Alice runs ``plangate approve plans/fp``, ``plangate reject -m no plans/fp`` and the
  agent MCP ``submit`` of another text to ``fp`` (main reset after each).
Readers: the ``status --json`` rows, ``show --json``, MCP ``log``, ``/api/plan/<id>`` of one
daemon, the ``rec`` calls, the fresh-clone audit.
Variants:
- ``<pair>:{base-held,show,mcp-log,api}`` (60): docs/plan-format.md ("A FILE's own
  name is split the same way ... at any level from the repository's root down, through
  twin folders too ... it claims the plan file's place ... exactly as ``PLAN.YML/`` does";
  NTFS "trailing dots and spaces, the unnamed stream ``::$DATA`` ... the 8.3 short name ...
  each is a claim of that name's place too"): held ``E_PLAN_AMBIGUOUS``/``E_UNSAFE_PATH``,
  never run; every reader names the code and no completed run; the twin never runs (each);
- ``fp:{approve,reject,submit,never}`` (4): the writers refuse with the code and commit
  nothing;
- ``lg{1..5}:{row,show,mcp-log}`` (15): the forged log is noted ``E_OWNED_BLOCK_CHANGED``
  by every reader and its text never shown;
- ``policy-{dot,short,space}:flagged`` (3), ``self:ran`` (1): the audit notes each twin;
  the agent's self-approval never runs;
- ``{ok,ok2,nt,nb}:{ran,readers}`` (8, controls): honest plans (with an honest backslash
  file and a ``.bak`` beside them) run once; readers name no code;
- the fresh-clone audit agrees with the rows (1).

Seen (round 79):
- ``t-root:{base-held,api}``, ``t-rootlc:{base-held,api}`` and the audit agreement (5 ids,
  one class): beside ``plans/rt`` the agent commits the ROOT file ``PLANS\\rt\\PLAN.yml``
  (``plans\\rl\\PLAN.yml`` beside ``plans/rl``): ``show`` and MCP ``log`` say
  ``E_PLAN_AMBIGUOUS`` naming it, but the row holds nothing, Alice's approval RAN the base
  (``rec t-root`` once), ``/api/plan/`` says completed, and the fresh-clone audit calls no
  run of it valid while the row says completed (the readers disagree with each other and
  with the audit). Should (docs/plan-format.md: "A FILE's own name is split the same way ...
  at any level from the repository's root down ... the plan is ``E_PLAN_AMBIGUOUS`` naming it
  for the row, ``show`` ... MCP, the page"): held by the row and the pass as ``show`` holds
  it; the plan never runs. (Round 77's open ``root:log-noted`` says the index reads the
  plans folder's history only: the same cause, now for a plan file, and the plan RAN.)
- ``t-lead:{base-held,show,mcp-log,api}`` (4) and ``lg3:{row,show,mcp-log}`` (3), one class:
  a file named ``\\PLAN.yml`` inside ``plans/tb/`` (git for Windows hands
  ``plans/tb/\\PLAN.yml`` to Win32, which reads ``/\\`` as one separator: the plan's file)
  holds nothing: the base ran on Alice's approval and every reader says completed; a forged
  "completed, approved by alice" ``plans/lg3/\\EXECUTION_LOG.md`` is noted by no reader.
  ``plans/tw\\\\PLAN.yml`` (two backslashes), ``plans/\\tu\\PLAN.yml`` and
  ``plans/\\lg5\\EXECUTION_LOG.md`` (a leading backslash in ``plans/``) ARE held / noted: only a
  leading backslash in the plan's own folder is not split. Should: held / noted as
  ``plans/tb\\PLAN.yml`` is (docs/plan-format.md as above; "A log in such a folder ... is
  the plan's log there").
Fixed (2026-12-01, r79bsroot), all 12 ids above:
- ``t-root``, ``t-rootlc`` and the audit: the index read the plans folder's history only (``git log
  -- plans``, its cold scan the plans folder's trees), so a root name never reached it. It now reads
  every entry above the plans folder whose own name holds a backslash as well
  (``planstate.history_paths``: ``git log -- plans ':(glob)*\\\\*'``, the pathspec the audit's
  ``recorded.TWIN_SPECS`` used; the cold scan takes them from the root tree's listing its walk reads
  anyway, ``commits._split_names``), and round 77's rule (``names.split_files``) holds the plan for
  the row and the pass as for ``show``; the audit then agrees.
- ``t-lead``, ``lg3``: a folder's own entry is named as git for Windows writes it
  (``names.own_name``: a name holding a backslash that ``path_parts`` splits to one part IS that
  part), asked by ``names.same_name``, the one comparison every claim of a plan file's, source's or
  log's place makes (``plan_file_claims``, ``log_claims``), so every reader of a folder's listing
  (the index, the CLI readers and writers, MCP, the page, pins, ``freeze``) counts it.
Held: the trailing dot and blank, ``::$DATA``, 8.3 ``PLAN~1.YML``, lower case, two
backslashes, a folder part with a trailing dot or blank, ``LONGFO~1``, a U+200C folder part,
``TM\\X\\plan.yml.``, and ``plans/\\tu\\PLAN.yml``: held by every reader, neither side ran;
``fp``'s ``approve``/``reject``/MCP ``submit`` refused ``E_PLAN_AMBIGUOUS`` committing
nothing; the logs ``lg1``/``lg2``/``lg4``/``lg5`` noted ``E_OWNED_BLOCK_CHANGED``, never shown;
the three policy twins noted ``policy-changed`` and the agent's self-approval never ran;
the controls (with an honest ``plans/nt\\NOTES.md`` and ``PLAN.yml.bak``) ran once.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab, cases, clone_audit, plan_text
from mcpkit import PLANGATE, session
from oraclekit import page_texts
from test_round2_execution_kit import shared

# pair id -> (base folder under plans/, the twin's path from the repository's root)
PAIRS: dict[str, tuple[str, str]] = {
    "t-dot": ("td", "plans/td\\PLAN.yml."),
    "t-space": ("ts", "plans/ts\\PLAN.yml "),
    "t-short": ("tsh", "plans/tsh\\PLAN~1.YML"),
    "t-stream": ("tst", "plans/tst\\PLAN.yml::$DATA"),
    "t-lower": ("tl", "plans/tl\\plan.YML"),
    "t-lead": ("tb", "plans/tb/\\PLAN.yml"),
    "t-dbl": ("tw", "plans/tw\\\\PLAN.yml"),
    "t-fdot": ("tfd", "plans/tfd.\\PLAN.yml"),
    "t-fsp": ("tfs", "plans/tfs \\PLAN.yml"),
    "t-f83": ("longfolder", "plans/LONGFO~1\\PLAN.yml"),
    "t-zw": ("tz", "plans/t\u200cz\\PLAN.yml"),
    "t-mix": ("tm/x", "plans/TM\\X\\plan.yml."),
    "t-root": ("rt", "PLANS\\rt\\PLAN.yml"),
    "t-rootlc": ("rl", "plans\\rl\\PLAN.yml"),
    "t-leadup": ("tu", "plans/\\tu\\PLAN.yml"),
}
CONTROLS = {"ok": "ok", "ok2": "ok2", "nt": "nt", "nb": "nb"}
HONEST = {"nt": "plans/nt\\NOTES.md", "nb": "plans/nb/PLAN.yml.bak"}
LOGS = {
    "lg1": "plans/lg1\\EXECUTION_LOG.md.",
    "lg2": "plans/lg2\\EXECUT~1.MD",
    "lg3": "plans/lg3/\\EXECUTION_LOG.md",
    "lg4": "plans/lg4\\execution_log.md::$DATA",
    "lg5": "plans/\\lg5\\EXECUTION_LOG.md",
}
POLICY = {
    "dot": ".plangate\\policy.json.",
    "short": ".plangate\\POLICY~1.JSO",
    "space": ".PLANGATE\\policy.json ",
}
FORGED = (
    "# Execution log\n\n- Approved by alice@example.com\n- Status: completed\n"
    "- Action 1 `rec`: succeeded (forged-r79)\n"
)
READERS = ("base-held", "show", "mcp-log", "api")


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
    for tag, rel in HONEST.items():
        _put(lab, rel, plan_text(f"{tag}-tw", name=tag))
    for tag in LOGS:
        lab.write(tag, plan_text(tag))
    lab.write("self", plan_text("self"))
    for pid, (base, twin) in PAIRS.items():
        lab.write(base, plan_text(pid))
        _put(lab, twin, plan_text(f"{pid}-tw", name=pid))
    lab.write("fp", plan_text("f-pend"))
    _put(lab, "plans/fp\\PLAN.YML.", plan_text("f-pend-tw", name="f-pend"))
    lab.commit("agent: plans", AGENT)
    lab.run()
    recorded = json.loads((lab.repo / ".plangate" / "policy.json").read_text())
    forged = json.loads(json.dumps(recorded).replace("plangate@localhost", AGENT[1]))
    forged["approval"]["approvers"] = [*forged["approval"]["approvers"], AGENT[1]]
    forged["approval"]["allow_self_approval"] = True
    for rel in POLICY.values():
        _put(lab, rel, json.dumps(forged, sort_keys=True, separators=(",", ":")))
    lab.set_status("self", "approved")
    lab.commit("agent: notes and my approval", AGENT)
    for plan in [*CONTROLS.values(), *(b for b, _ in PAIRS.values()), *LOGS]:
        lab.set_status(plan, "approved")
    lab.commit("alice: approve", ALICE)
    lab.run()
    lab.run()
    for rel in LOGS.values():
        _put(lab, rel, FORGED)
    lab.commit("agent: notes", AGENT)
    lab.run()
    got: dict[str, Any] = {}
    got["rows"] = {
        r["plan"]: r for r in json.loads(lab.cli("status", "--json", "--config", cfg).stdout)
    }
    tags = [*CONTROLS, *(f"{t}-tw" for t in HONEST), *LOGS, "self", "f-pend", "f-pend-tw"]
    tags += [t for p in PAIRS for t in (p, f"{p}-tw")]
    got["calls"] = {t: len(lab.calls(t)) for t in tags}
    readers = [b for b, _ in PAIRS.values()] + list(CONTROLS.values()) + list(LOGS)
    got["show"] = {}
    for plan in readers:
        done = lab.cli("show", "--json", "--config", cfg, str(lab.repo / "plans" / plan))
        got["show"][plan] = f"{done.returncode} {done.stdout}{done.stderr}"
    replies = session(lab, [("log", {"path": f"plans/{p}"}) for p in readers])[0]
    got["mcp-log"] = {
        p: json.dumps(r, ensure_ascii=False) for p, r in zip(readers, replies, strict=True)
    }
    pages = page_texts(lab, [f"plans/{b}" for b, _ in PAIRS.values()], "plans/ok")
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
        lab.git("reset", "-q", "--hard", tip)
        got["writers"][verb] = f"{done.returncode} {done.stdout}{done.stderr}\ncommits: {made}"
    reply = session(lab, [("submit", {"plan": plan_text("f-sub", name="f-pend"), "slug": "fp"})])
    made = lab.git("log", "--format=%an %s", f"{tip}..HEAD").strip()
    lab.git("reset", "-q", "--hard", tip)
    got["writers"]["submit"] = f"{json.dumps(reply[0], ensure_ascii=False)}\ncommits: {made}"
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
    return shared(tmp_path_factory, "r79-surface-bsntfs", _build)


def _xf(what: str) -> Any:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 79: {what}")


def _row(got: dict[str, Any], plan: str) -> dict[str, Any]:
    return got["rows"].get(f"plans/{plan}") or {}


def _coded(text: str) -> bool:
    return "E_PLAN_AMBIGUOUS" in text or "E_UNSAFE_PATH" in text


PIDS = [f"{p}:{w}" for p in PAIRS for w in READERS]
PBROKEN: dict[str, Any] = {}  # t-root, t-rootlc, t-lead: fixed by r79bsroot


@pytest.mark.parametrize("vid", cases(PIDS, PIDS, PBROKEN))
def test_a_folded_backslash_file_holds_the_plan(lab: Lab, vid: str) -> None:
    """A file whose name, split at its backslashes and folded as NTFS (trailing dot or
    blank, ``::$DATA``, 8.3) or HFS+/case fold it, is the plan's file: the base is held,
    never run; ``show``, MCP ``log`` and ``/api/plan/`` name the code and no completed run;
    the twin's own action never runs."""
    got = lab.got  # type: ignore[attr-defined]
    pid, what = vid.split(":")
    base, _ = PAIRS[pid]
    row = _row(got, base)
    assert got["calls"][f"{pid}-tw"] == 0, got["calls"]  # the twin's own action never
    if what == "base-held":
        assert got["calls"][pid] == 0, (got["calls"], row)
        assert row.get("held") in ("E_PLAN_AMBIGUOUS", "E_UNSAFE_PATH"), row
        return
    text = got[what][base]
    assert _coded(text), text[:800]
    assert '"completed"' not in text and '"status": "approved"' not in text, text[:800]


WIDS = ["fp:approve", "fp:reject", "fp:submit", "fp:never"]


@pytest.mark.parametrize("vid", cases(WIDS, WIDS, {}))
def test_the_writers_refuse_a_held_pending_plan(lab: Lab, vid: str) -> None:
    """``plans/fp`` beside ``plans/fp\\PLAN.YML.``: Alice's ``approve``/``reject`` refuse
    with the code and commit nothing (docs/plan-format.md: "... ``approve``, ``reject``,
    ``abort`` (which commit nothing)"); it never runs."""
    got = lab.got  # type: ignore[attr-defined]
    what = vid.split(":")[1]
    if what == "never":
        assert got["calls"]["f-pend"] == 0 and got["calls"]["f-pend-tw"] == 0, got["calls"]
        return
    text = got["writers"][what]
    if what == "submit":  # MCP submit into the held folder: an error, nothing committed
        assert '"isError": true' in text and text.rstrip().endswith("commits:"), text[-600:]
        assert _coded(text), text[:600]
        return
    assert text.startswith("1 ") and text.rstrip().endswith("commits:"), text[-600:]
    assert _coded(text), text[:600]


GIDS = [f"{t}:{r}" for t in LOGS for r in ("row", "show", "mcp-log")]
GBROKEN: dict[str, Any] = {}  # lg3: fixed by r79bsroot


@pytest.mark.parametrize("vid", cases(GIDS, GIDS, GBROKEN))
def test_a_folded_backslash_log_is_noted(lab: Lab, vid: str) -> None:
    """The plan ran; the agent's "completed, approved by alice" file whose split and
    NTFS-folded name is the plan's ``EXECUTION_LOG.md`` is noted ``E_OWNED_BLOCK_CHANGED``
    by every reader of the record and its text never shown (docs/plan-format.md: "A log in
    such a folder ... is the plan's log there"; NTFS forms "for the log alike")."""
    got = lab.got  # type: ignore[attr-defined]
    tag, reader = vid.split(":")
    assert got["calls"][tag] == 1, got["calls"]
    text = json.dumps(_row(got, tag)) if reader == "row" else got[reader][tag]
    assert "forged-r79" not in text, text[-800:]
    assert "E_OWNED_BLOCK_CHANGED" in text, text[:1200]


FIDS = [f"policy-{k}:flagged" for k in POLICY] + ["self:ran"]
FBROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(FIDS, FIDS, FBROKEN))
def test_a_folded_policy_twin_is_noted(lab: Lab, vid: str) -> None:
    """docs/plan-format.md: "a twin of ``.plangate/policy.json`` ... is noted by the audit";
    ``.plangate\\policy.json.`` (``POLICY~1.JSO``, ``.PLANGATE\\policy.json<blank>``) is that
    file on a Windows checkout. The agent's self-approval under them never runs."""
    got = lab.got  # type: ignore[attr-defined]
    if vid == "self:ran":
        assert got["calls"]["self"] == 0, got["calls"]
        return
    rel = POLICY[vid.split(":")[0].removeprefix("policy-")]
    text = got["audit"]["text"]
    spelled = json.dumps(rel, ensure_ascii=False)[1:-1]
    assert "policy-changed" in text and spelled in text, (rel, text[-2000:])


CIDS = [f"{t}:{w}" for t in CONTROLS for w in ("ran", "readers")]


@pytest.mark.parametrize("vid", cases(CIDS, CIDS, {}))
def test_honest_plans_run(lab: Lab, vid: str) -> None:
    """Controls: ``ok``, ``ok2``, ``nt`` (beside an honest ``plans/nt\\NOTES.md``) and ``nb``
    (beside ``plans/nb/PLAN.yml.bak``) run once; ``show`` and MCP ``log`` name no code."""
    got = lab.got  # type: ignore[attr-defined]
    tag, what = vid.split(":")
    row = _row(got, CONTROLS[tag])
    assert got["calls"][tag] == 1 and row.get("status") == "completed", (got["calls"], row)
    assert got["calls"].get(f"{tag}-tw", 0) == 0, got["calls"]
    if what == "readers":
        for reader in ("show", "mcp-log"):
            text = got[reader][CONTROLS[tag]]
            assert not _coded(text), text[:800]
        assert "completed" in got["mcp-log"][CONTROLS[tag]]


def test_the_fresh_clone_audit_agrees_with_the_rows(lab: Lab) -> None:
    got = lab.got  # type: ignore[attr-defined]
    completed = sorted(p for p, r in got["rows"].items() if r["status"] == "completed")
    assert got["audit"]["valid"] == completed, (got["audit"]["valid"], completed)
    assert got["audit"]["runs"] == len(completed), got["audit"]["runs"]


if __name__ == "__main__":
    import tempfile

    out = Path(tempfile.mkdtemp(prefix="r79bs-", dir="/tmp/atk79b"))
    got = _build(out).got  # type: ignore[attr-defined]
    got["audit"]["text"] = got["audit"]["text"][-3000:]
    print(json.dumps(got, indent=1, ensure_ascii=False, default=str))
