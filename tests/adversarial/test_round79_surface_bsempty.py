"""Round 79, agent-facing surfaces: the two spellings of a backslash FILE twin that
``test_round79_surface_bsntfs.py`` saw run (an EMPTY first part, a file named
``\\PLAN.yml`` in the plan's own folder; and a ROOT file ``plans\\rt\\PLAN.yml``) tried
further: other plan files and folds after the empty part, the empty part in the middle and
twice, root files with a leading backslash, two backslashes, a case or a trailing dot in
the first folder; the writers (``approve``, ``reject``, MCP ``submit``) on a pending plan
beside each, and a parent's pin of a draft beside each. Git for Windows hands such a path to
Win32, which takes ``/`` and ``\\`` alike and reads a run of them as one separator, so
``plans/ea/\\PLAN.yaml`` is written to ``plans/ea/PLAN.yaml`` and ``\\plans\\ra\\PLAN.yml``
(a root file) to ``plans/ra/PLAN.yml`` (docs/plan-format.md: "A FILE's own name is split the
same way ... at any level from the repository's root down").

Lab (one, module scope; three ``run --once`` passes): the agent commits the controls
``plans/ctl`` (beside a root file ``plans\\ctl-notes.md``, no claim) and ``plans/ctl2``
(beside ``plans/ctl2/\\NOTES.md``, no claim), the pending bases (``rec <id>``) each beside
its twin (``rec <id>-tw``): ``e-yaml`` ``plans/ea/\\PLAN.yaml``, ``e-two``
``plans/eb/\\\\PLAN.yml``, ``e-fold`` ``plans/ec/\\plan.YML.``, ``e-mid`` ``plans/ed/\\x\\PLAN.yml``
beside ``plans/ed/x``, ``e-up2`` ``plans/\\\\ee\\PLAN.yml``, ``r-lead`` the root file
``\\plans\\ra\\PLAN.yml``, ``r-two`` ``plans\\\\rb\\PLAN.yml``, ``r-case`` ``Plans\\rc\\PLAN.yaml``,
``r-mid`` ``plans\\re\\x\\PLAN.yml`` beside ``plans/re/x``; the pending ``wr`` (beside root
``plans\\wr\\PLAN.yml``) and ``we`` (beside ``plans/we/\\PLAN.yml``); the drafts ``lr``
(beside root ``plans\\lr\\PLAN.yml``) and ``le`` (beside ``plans/le/\\PLAN.yml``); after a
pass the agent's parents ``pin-lr``, ``pin-le`` pin them by hash; Alice approves every base,
control and parent; two passes; then Alice's ``approve``/``reject -m`` and the agent's MCP
``submit`` of ``wr`` and ``we`` (main reset after each).
Variants:
- ``<pair>:{base-held,readers}`` (18): held ``E_PLAN_AMBIGUOUS``/``E_UNSAFE_PATH``, neither the
  base nor the twin ran; ``show --json``, MCP ``log`` and ``/api/plan/`` name the code and no
  completed run;
- ``{wr,we}:{approve,reject,submit}`` (6): refused with the code, nothing committed;
- ``pin-{lr,le}:{row,ran}`` (4): the parent is invalid and never runs;
- ``{ea,ec,ra,rc,ed/x}:{validate,hash}``, ``{lr,le}:freeze`` (12): ``validate``/``hash`` name
  the code and print no hash; ``freeze`` of the draft refuses, writing and committing nothing;
- ``{ctl,ctl2}:ran`` (2, controls): run once, readers name no code;
- the fresh-clone audit agrees with the rows (1).

Seen (round 79):
- ``e-{yaml,two,fold}:{base-held,readers}``, ``we:{approve,reject,submit}``,
  ``pin-le:{row,ran}``, ``{ea,ec}:{validate,hash}``, ``le:freeze`` (16 ids, one class: an
  EMPTY first part in the plan's own folder is never split): beside ``plans/ea/PLAN.yml``
  the agent's file ``plans/ea/\\PLAN.yaml``
  (``plans/eb/\\\\PLAN.yml``, ``plans/ec/\\plan.YML.``) holds nothing: Alice's approval ran
  the base, ``show``/MCP ``log``/``/api/plan/`` say completed; Alice's ``plangate approve``
  and ``reject -m`` of the pending ``plans/we`` beside ``plans/we/\\PLAN.yml`` commit
  ("approved plans/we in ..."), the agent's MCP ``submit`` to ``we`` commits; the parent
  ``pin-le`` pinning the draft ``plans/le`` beside ``plans/le/\\PLAN.yml`` is valid and ran
  it; ``validate``/``hash`` print the hash and ``plangate freeze plans/le`` writes
  ``frozen:`` (exit 0). ``plans/ed/\\x\\PLAN.yml`` (the empty part before a folder) and
  ``plans/\\\\ee\\PLAN.yml`` are held. Should (docs/plan-format.md: a FILE's name
  "split the same way ... so it claims the plan file's place ... for the row, ``show``,
  ``validate``, ``hash``, ``freeze``, ``approve``, ``reject``, ``abort`` (which commit
  nothing), MCP, the page, a parent's pin"): Win32 reads ``ea/\\PLAN.yaml`` as
  ``ea/PLAN.yaml``, so held, refused, invalid.
- ``r-{lead,two,case,mid}:{base-held,readers}`` and the audit agreement (9 ids, one class:
  a ROOT file twin, ``\\plans\\ra\\PLAN.yml``, ``plans\\\\rb\\PLAN.yml``, ``Plans\\rc\\PLAN.yaml``,
  ``plans\\re\\x\\PLAN.yml``): ``show`` and MCP ``log`` hold the plan ``E_PLAN_AMBIGUOUS``,
  the row and the pass do not (each ran once on Alice's approval), ``/api/plan/`` says
  completed, and the fresh-clone audit calls none of those runs valid while the rows say
  completed. Should: held by the row and the pass as by ``show`` (the same passage: "at any
  level from the repository's root down"). Round 77's ``root:log-noted`` (open) is the
  log's face of this cause; ``bsntfs`` ``t-root``/``t-rootlc`` the lower-case and upper-case
  forms of it.
Fixed (2026-12-01, r79bsroot), all 25 ids above:
- ``r-{lead,two,case,mid}`` and the audit: the index read the plans folder's history only (``git
  log -- plans``, its cold scan the plans folder's trees), so a root name never reached it. It now
  reads every entry above the plans folder whose own name holds a backslash as well
  (``planstate.history_paths``: ``git log -- plans ':(glob)*\\\\*'``, the pathspec the audit's
  ``recorded.TWIN_SPECS`` used; the cold scan takes them from the root tree's listing its walk
  reads anyway, ``commits._split_names``), and round 77's rule (``names.split_files``) holds the
  plan for the row and the pass as for ``show``; the audit then agrees.
- ``e-{yaml,two,fold}``, ``we``, ``pin-le``, ``{ea,ec}``, ``le:freeze``: a folder's own entry is
  named as git for Windows writes it (``names.own_name``: a name holding a backslash that
  ``path_parts`` splits to one part IS that part), asked by ``names.same_name``, the one
  comparison every claim of a plan file's, source's or log's place makes (``plan_file_claims``,
  ``log_claims``), so every reader of a folder's listing (the index, the CLI readers and writers,
  MCP, the page, pins, ``freeze``) counts it.
Held: ``approve``/``reject``/MCP ``submit`` of ``plans/wr`` beside the root file
``plans\\wr\\PLAN.yml`` refused ``E_PLAN_AMBIGUOUS`` committing nothing; ``pin-lr`` (root
twin) invalid, never ran, ``freeze plans/lr`` refused writing nothing, ``validate``/``hash``
of ``ra``/``rc`` name the code; ``e-mid``, ``e-up2`` held by every reader; the controls beside a
root ``plans\\ctl-notes.md`` and a ``plans/ctl2/\\NOTES.md`` ran once.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab, cases, clone_audit, plan_text
from checkkit import pinning
from mcpkit import PLANGATE, session
from oraclekit import page_texts
from test_round2_execution_kit import shared

PAIRS: dict[str, tuple[str, str]] = {
    "e-yaml": ("ea", "plans/ea/\\PLAN.yaml"),
    "e-two": ("eb", "plans/eb/\\\\PLAN.yml"),
    "e-fold": ("ec", "plans/ec/\\plan.YML."),
    "e-mid": ("ed/x", "plans/ed/\\x\\PLAN.yml"),
    "e-up2": ("ee", "plans/\\\\ee\\PLAN.yml"),
    "r-lead": ("ra", "\\plans\\ra\\PLAN.yml"),
    "r-two": ("rb", "plans\\\\rb\\PLAN.yml"),
    "r-case": ("rc", "Plans\\rc\\PLAN.yaml"),
    "r-mid": ("re/x", "plans\\re\\x\\PLAN.yml"),
}
WRITERS = {"wr": "plans\\wr\\PLAN.yml", "we": "plans/we/\\PLAN.yml"}
LIBS = {"lr": "plans\\lr\\PLAN.yml", "le": "plans/le/\\PLAN.yml"}
CONTROLS = {"ctl": "plans\\ctl-notes.md", "ctl2": "plans/ctl2/\\NOTES.md"}


def _put(lab: Lab, rel: str, text: str) -> None:
    path = lab.repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _hash(lab: Lab, folder: str) -> str:
    from controller.plan.plans import parse_text

    text = (lab.repo / "plans" / folder / "PLAN.yml").read_text(encoding="utf-8")
    return str(parse_text(text, Path("PLAN.yml")).hash)


def _build(root: Path) -> Lab:
    lab = Lab(root, extra="agent:\n  identity: {name: Agent, email: agent@example.com}\n"
              "ui: {listen: 0}\n")  # fmt: skip
    cfg = str(lab.config)
    for tag, rel in CONTROLS.items():
        lab.write(tag, plan_text(tag))
        _put(lab, rel, plan_text(f"{tag}-tw", name=tag))
    for pid, (base, twin) in PAIRS.items():
        lab.write(base, plan_text(pid))
        _put(lab, twin, plan_text(f"{pid}-tw", name=pid))
    for tag, rel in {**WRITERS, **LIBS}.items():
        status = "draft" if tag in LIBS else "pending_approval"
        lab.write(tag, plan_text(tag, status=status))
        _put(lab, rel, plan_text(f"{tag}-tw", name=tag, status=status))
    lab.commit("agent: plans", AGENT)
    lab.run()
    for tag in LIBS:
        lab.write(f"pin-{tag}", pinning(f"pin-{tag}", f"plans/{tag}", _hash(lab, tag)))
    lab.commit("agent: parents", AGENT)
    lab.run()
    for plan in [*CONTROLS, *(b for b, _ in PAIRS.values()), *(f"pin-{t}" for t in LIBS)]:
        lab.set_status(plan, "approved")
    lab.commit("alice: approve", ALICE)
    lab.run()
    lab.run()
    got: dict[str, Any] = {}
    got["rows"] = {
        r["plan"]: r for r in json.loads(lab.cli("status", "--json", "--config", cfg).stdout)
    }
    tags = [*CONTROLS, *WRITERS, *LIBS, *(f"{t}-tw" for t in [*CONTROLS, *WRITERS, *LIBS])]
    tags += [t for p in PAIRS for t in (p, f"{p}-tw")]
    got["calls"] = {t: len(lab.calls(t)) for t in tags}
    got["subjects"] = lab.git("log", "--format=%an %s").splitlines()
    readers = [b for b, _ in PAIRS.values()] + list(CONTROLS)
    got["show"] = {}
    for plan in readers:
        done = lab.cli("show", "--json", "--config", cfg, str(lab.repo / "plans" / plan))
        got["show"][plan] = f"{done.returncode} {done.stdout}{done.stderr}"
    replies = session(lab, [("log", {"path": f"plans/{p}"}) for p in readers])[0]
    got["mcp-log"] = {
        p: json.dumps(r, ensure_ascii=False) for p, r in zip(readers, replies, strict=True)
    }
    pages = page_texts(lab, [f"plans/{p}" for p in readers], "plans/ctl")
    got["api"] = {p: pages[f"plans/{p}"][1] for p in readers}
    got["writers"] = {}
    tip = lab.head()
    for tag in WRITERS:
        for verb in ("approve", "reject"):
            args = ["-m", "no"] if verb == "reject" else []
            done = subprocess.run(
                [PLANGATE, verb, "--config", cfg, *args, f"plans/{tag}"], cwd=lab.repo,
                env=lab.env(ALICE), capture_output=True, text=True, timeout=120, check=False,
            )  # fmt: skip
            made = lab.git("log", "--format=%an %s", f"{tip}..HEAD").strip()
            lab.git("reset", "-q", "--hard", tip)
            got["writers"][f"{tag}:{verb}"] = (
                f"{done.returncode} {done.stdout}{done.stderr}\ncommits: {made}"
            )
        reply = session(lab, [("submit", {"plan": plan_text(f"{tag}-2", name=tag), "slug": tag})])
        made = lab.git("log", "--format=%an %s", f"{tip}..HEAD").strip()
        lab.git("reset", "-q", "--hard", tip)
        got["writers"][f"{tag}:submit"] = f"{json.dumps(reply[0])}\ncommits: {made}"
    got["cli"] = {}
    for plan in ("ea", "ec", "ra", "rc", "ed/x"):
        for verb in ("validate", "hash"):
            extra = ["--config", cfg] if verb == "validate" else []
            done = lab.cli(verb, *extra, str(lab.repo / "plans" / plan))
            got["cli"][f"{plan}:{verb}"] = f"{done.returncode} {done.stdout}{done.stderr}"
    for tag in LIBS:
        before = (lab.repo / "plans" / tag / "PLAN.yml").read_bytes()
        done = lab.cli("freeze", "--config", cfg, f"plans/{tag}", cwd=lab.repo)
        made = lab.git("log", "--format=%an %s", f"{tip}..HEAD").strip()
        same = (lab.repo / "plans" / tag / "PLAN.yml").read_bytes() == before
        lab.git("reset", "-q", "--hard", tip)
        got["cli"][f"{tag}:freeze"] = (
            f"{done.returncode} {done.stdout}{done.stderr}\nsame: {same}\ncommits: {made}"
        )
    report, valid = clone_audit(lab, root)
    got["audit"] = {"valid": sorted(valid), "runs": len(report["executions"])}
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r79-surface-bsempty", _build)


def _xf(what: str) -> Any:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 79: {what}")


def _row(got: dict[str, Any], plan: str) -> dict[str, Any]:
    return got["rows"].get(f"plans/{plan}") or {}


def _coded(text: str) -> bool:
    return "E_PLAN_AMBIGUOUS" in text or "E_UNSAFE_PATH" in text


PIDS = [f"{p}:{w}" for p in PAIRS for w in ("base-held", "readers")]
PBROKEN: dict[str, Any] = {}  # e-{yaml,two,fold}, r-{lead,two,case,mid}: fixed by r79bsroot


@pytest.mark.parametrize("vid", cases(PIDS, PIDS, PBROKEN))
def test_an_empty_part_or_root_twin_holds_the_plan(lab: Lab, vid: str) -> None:
    """The twin is the plan's file on a Windows checkout: the base is held, neither runs;
    ``show``, MCP ``log`` and ``/api/plan/`` name the code and no completed run."""
    got = lab.got  # type: ignore[attr-defined]
    pid, what = vid.split(":")
    base, _ = PAIRS[pid]
    row = _row(got, base)
    assert got["calls"][f"{pid}-tw"] == 0, got["calls"]
    if what == "base-held":
        assert got["calls"][pid] == 0, (got["calls"], row)
        assert row.get("held") in ("E_PLAN_AMBIGUOUS", "E_UNSAFE_PATH"), row
        return
    for reader in ("show", "mcp-log", "api"):
        text = got[reader][base]
        assert _coded(text), (reader, text[:800])
        assert '"completed"' not in text, (reader, text[:800])


WIDS = [f"{t}:{v}" for t in WRITERS for v in ("approve", "reject", "submit")]
WBROKEN: dict[str, Any] = {}  # we: fixed by r79bsroot


@pytest.mark.parametrize("vid", cases(WIDS, WIDS, WBROKEN))
def test_the_writers_refuse_beside_such_a_twin(lab: Lab, vid: str) -> None:
    """Alice's ``approve``/``reject`` and the agent's MCP ``submit`` of a pending plan beside
    such a twin refuse with the code and commit nothing (docs/plan-format.md: "``approve``,
    ``reject``, ``abort`` (which commit nothing)"; MCP ``submit`` into a held folder)."""
    got = lab.got  # type: ignore[attr-defined]
    tag = vid.split(":")[0]
    text = got["writers"][vid]
    assert text.rstrip().endswith("commits:"), text[-600:]
    assert _coded(text), text[:800]
    assert got["calls"][tag] == 0 and got["calls"][f"{tag}-tw"] == 0, got["calls"]


NIDS = [f"pin-{t}:{w}" for t in LIBS for w in ("row", "ran")]
NBROKEN: dict[str, Any] = {}  # pin-le: fixed by r79bsroot


@pytest.mark.parametrize("vid", cases(NIDS, NIDS, NBROKEN))
def test_a_pin_of_a_draft_beside_such_a_twin_is_invalid(lab: Lab, vid: str) -> None:
    """docs/plan-format.md: the pin asks "the same verdict the pinned plan's row has": a
    parent pinning ``plans/lr`` (``plans/le``) beside its twin is invalid, never runs."""
    got = lab.got  # type: ignore[attr-defined]
    pin, what = vid.split(":")
    tag = pin.removeprefix("pin-")
    row = _row(got, pin)
    if what == "row":
        assert row.get("status") != "completed" and "E_" in json.dumps(row), row
    else:
        assert not [s for s in got["subjects"] if f"start plans/{pin}" in s], got["subjects"]
        assert got["calls"][tag] == 0 and got["calls"][f"{tag}-tw"] == 0, got["calls"]


KIDS = [f"{p}:{v}" for p in ("ea", "ec", "ra", "rc", "ed/x") for v in ("validate", "hash")]
KIDS += [f"{t}:freeze" for t in LIBS]
KBROKEN: dict[str, Any] = {}  # {ea,ec}:{validate,hash}, le:freeze: fixed by r79bsroot


@pytest.mark.parametrize("vid", cases(KIDS, KIDS, KBROKEN))
def test_validate_hash_freeze_refuse_beside_such_a_twin(lab: Lab, vid: str) -> None:
    """``plangate validate`` and ``hash`` of a plan beside such a twin name the code and print
    no hash; ``plangate freeze`` of a draft beside one refuses, writes and commits nothing
    (docs/plan-format.md: "... for the row, ``show``, ``validate``, ``hash``, ``freeze``")."""
    got = lab.got  # type: ignore[attr-defined]
    text = got["cli"][vid]
    assert not text.startswith("0 "), text[:800]
    assert _coded(text), text[:800]
    if vid.endswith(":freeze"):
        assert "same: True" in text and text.rstrip().endswith("commits:"), text[-400:]
    else:
        assert "sha256:" not in text, text[:800]


CIDS = [f"{t}:ran" for t in CONTROLS]


@pytest.mark.parametrize("vid", cases(CIDS, CIDS, {}))
def test_honest_plans_beside_honest_backslash_files_run(lab: Lab, vid: str) -> None:
    """Controls: ``plans/ctl`` beside the root file ``plans\\ctl-notes.md`` and ``plans/ctl2``
    beside ``plans/ctl2/\\NOTES.md`` (no claim of a plan file's place) run once; the readers
    name no code."""
    got = lab.got  # type: ignore[attr-defined]
    tag = vid.split(":")[0]
    assert got["calls"][tag] == 1 and got["calls"][f"{tag}-tw"] == 0, got["calls"]
    assert _row(got, tag).get("status") == "completed", _row(got, tag)
    for reader in ("show", "mcp-log", "api"):
        assert not _coded(got[reader][tag]), (reader, got[reader][tag][:800])


def test_the_fresh_clone_audit_agrees_with_the_rows(lab: Lab) -> None:
    got = lab.got  # type: ignore[attr-defined]
    completed = sorted(p for p, r in got["rows"].items() if r["status"] == "completed")
    assert got["audit"]["valid"] == completed, (got["audit"]["valid"], completed)
    assert got["audit"]["runs"] == len(completed), got["audit"]["runs"]


if __name__ == "__main__":
    import tempfile

    out = Path(tempfile.mkdtemp(prefix="r79be-", dir="/tmp/atk79b"))
    print(json.dumps(_build(out).got, indent=1, ensure_ascii=False, default=str))  # type: ignore[attr-defined]
