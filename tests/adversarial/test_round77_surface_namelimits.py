"""Round 77, agent-facing surfaces: the name rule's limits (docs/errors.md ``E_UNSAFE_PATH``:
"a name over 255 bytes or a path over 32 folders") at and past the edge, names that exist in
git only (the lab's file system refuses a name over 255 bytes, so the agent commits them
with ``git update-index --cacheinfo``, ``skip-worktree``: no checkout needed to push them),
and honest names that only a compatibility fold (NFKC) or git's path quoting would touch.

Lab (one, module scope; two ``run --once`` passes):
- pass 1: the agent commits, pending, in the working tree: ``ok``; ``l255`` (a name of 255
  ASCII bytes), ``c255`` (85 CJK characters, 255 bytes), ``d20`` (a plan 20 folders deep),
  ``d40`` (40 folders deep); the compatibility names ``nk-lig`` ``plans/<U+FB01>x`` beside
  ``nk-fix`` ``plans/fix``, ``nk-full`` ``plans/<fullwidth ok>``, ``nk-sup`` ``plans/x<U+00B2>``;
  names git quotes: ``q-dq`` ``plans/a"b``, ``q-sq`` ``plans/it's``, ``q-sp`` ``plans/a b``,
  ``q-pct`` ``plans/a%2Fb``, ``q-hash`` ``plans/a#b?c``; and in git only (index entries, no
  file): ``l256`` (256 bytes), ``c86`` (86 CJK characters, 258 bytes), ``lup`` (a 300-byte
  folder one level up, ``<300>/x``);
- pass 2: Alice approves every plan (a status edit; the git-only ones by a new blob in the
  index).
Readers: the ``status --json`` rows, MCP ``log``, ``show``/``validate`` where a file exists,
the ``rec`` calls, the subjects of the controller's commits, the fresh-clone audit.
Variants:
- ``{l256,c86,lup,d40}:{held,never,mcp-log}`` (12): held E_UNSAFE_PATH (docs/errors.md), never
  run, MCP ``log`` names the code; ``d40:{show,validate}`` (2) name it too;
- ``{l255,c255,d20}:{ran,readers}`` (6, controls): at the limit, run once, readers agree;
- ``{nk-full,nk-sup}:{ran,row}`` (4, controls): a name no file system git guards against
  folds ("Any other folder name ... is a plan id to every reader") runs once, as its own
  plan, its row keyed by its own name; ``nk-lig``, ``nk-fix`` (2): ``<U+FB01>x`` beside
  ``fix`` (one name by the full case fold) are both held naming the other, or both run;
- ``{q-dq,q-sq,q-sp,q-pct,q-hash}:{ran,row,subject}`` (15, controls): names git quotes or a
  URL escapes run once; the row and the ``Plan:`` trailers of the controller's freeze, start
  and complete commits name the real path (no quoting, no ``%2F`` read as a slash), MCP
  ``log`` answers it;
- ``ok:ran`` (1), the fresh-clone audit agrees with the rows (1).

Seen (round 77): nothing broke here. Held: names of 256 bytes, 86 CJK characters (258 bytes)
and a 300-byte folder one level up, pushed from the index alone (``update-index
--cacheinfo``, ``skip-worktree``; no file system here holds them), and a plan 40 folders
deep are E_UNSAFE_PATH on the row ("the path has a name over 255 bytes or more than 32
folders: no file system holds it") and in MCP ``log`` (``show``/``validate`` of the deep one
too), never run on Alice's approval, named in no controller commit; a fresh clone's audit
(its checkout leaving those names out) agrees. Controls: 255 ASCII bytes, 85 CJK characters,
20 folders deep, fullwidth ``<U+FF4F><U+FF4B>`` beside ``ok``, ``x<U+00B2>``, ``a"b``,
``it's``, ``a b``, ``a%2Fb``, ``a#b?c`` each ran once, approved by alice, the ``Plan:``
trailers of its freeze/start/complete naming the exact path. ``<U+FB01>x`` beside ``fix``:
both held E_PLAN_AMBIGUOUS naming the other (the full case fold folds the ligature; a
conservative hold, no run). Not tried: a backslash in a branch name (git's
``check-ref-format`` refuses it).
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab, cases, plan_text
from mcpkit import session
from test_round2_execution_kit import shared

CJK = "\u65e5"
TREE = {
    "ok": "ok",
    "l255": "a" * 255,
    "c255": CJK * 85,
    "d20": "/".join(f"d{i}" for i in range(20)),
    "d40": "/".join(f"e{i}" for i in range(40)),
    "nk-lig": "\ufb01x",
    "nk-fix": "fix",
    "nk-full": "\uff4f\uff4b",
    "nk-sup": "x\u00b2",
    "q-dq": 'a"b',
    "q-sq": "it's",
    "q-sp": "a b",
    "q-pct": "a%2Fb",
    "q-hash": "a#b?c",
}
INDEX = {"l256": "b" * 256, "c86": CJK * 86, "lup": "c" * 300 + "/x"}
HELD = ["l256", "c86", "lup", "d40"]
EDGE = ["l255", "c255", "d20"]
NK = ["nk-full", "nk-sup"]
PAIR = ["nk-lig", "nk-fix"]
QUOTED = ["q-dq", "q-sq", "q-sp", "q-pct", "q-hash"]
ALL = {**TREE, **INDEX}


def _stage(lab: Lab, rel: str, text: str) -> None:
    """Put ``text`` at ``rel`` in the index only (a name the file system refuses)."""
    blob = subprocess.run(
        ["git", "hash-object", "-w", "--stdin"], cwd=lab.repo, input=text, text=True,
        capture_output=True, check=True,
    ).stdout.strip()  # fmt: skip
    lab.git("update-index", "--add", "--cacheinfo", f"100644,{blob},{rel}")
    lab.git("update-index", "--skip-worktree", rel)


def _clone_audit(lab: Lab, root: Path) -> tuple[dict[str, Any], set[str]]:
    """``plangate audit --json`` in a fresh clone whose checkout leaves out the names the file
    system refuses (the auditor's clone, as any clone here, cannot write them)."""
    clone = root / "clone"
    subprocess.run(["git", "clone", "-q", "-n", str(lab.repo), str(clone)], check=True)
    run = {"cwd": clone, "check": True, "capture_output": True, "text": True}
    subprocess.run(["git", "reset", "-q"], **run)  # type: ignore[call-overload]
    listed = subprocess.run(["git", "ls-files", "-z"], **run).stdout.split("\0")  # type: ignore[call-overload]
    long = [p for p in listed if p and any(len(x.encode()) > 255 for x in p.split("/"))]
    subprocess.run(["git", "update-index", "--skip-worktree", *long], **run)  # type: ignore[call-overload]
    subprocess.run(["git", "checkout-index", "-a"], **run)  # type: ignore[call-overload]
    result = lab.cli("audit", "--json", cwd=clone)
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    report = json.loads(result.stdout)
    valid = {e["plan"] for e in report["executions"] if e.get("approval_valid")}
    return report, valid


def _build(root: Path) -> Lab:
    lab = Lab(root, extra="agent:\n  identity: {name: Agent, email: agent@example.com}\n")
    cfg = str(lab.config)
    for tag, name in TREE.items():
        lab.write(name, plan_text(tag))
    for tag, name in INDEX.items():
        _stage(lab, f"plans/{name}/PLAN.yml", plan_text(tag))
    lab.commit("agent: plans", AGENT)
    lab.run()
    time.sleep(1.1)
    for name in TREE.values():
        lab.set_status(name, "approved")
    for tag, name in INDEX.items():
        _stage(lab, f"plans/{name}/PLAN.yml", plan_text(tag, "approved"))
    lab.commit("alice: approve", ALICE)
    lab.run()
    got: dict[str, Any] = {"cli": {}}
    got["rows"] = {
        r["plan"]: r for r in json.loads(lab.cli("status", "--json", "--config", cfg).stdout)
    }
    got["calls"] = {t: len(lab.calls(t)) for t in ALL}
    for tag in [*EDGE, "d40"]:
        where = str(lab.repo / "plans" / TREE[tag])
        for verb in ("show", "validate"):
            done = lab.cli(verb, "--config", cfg, where)
            got["cli"][f"{tag}:{verb}"] = f"{done.returncode} {done.stdout}{done.stderr}"
    replies = session(lab, [("log", {"path": f"plans/{n}"}) for n in ALL.values()])[0]
    for tag, reply in zip(ALL, replies, strict=True):
        got["cli"][f"{tag}:mcp-log"] = json.dumps(reply, ensure_ascii=False)
    got["subjects"] = lab.git("log", "--format=%an %s").splitlines()
    bodies = lab.git("log", "--author=plangate", "--format=%B")
    got["trailers"] = [x for x in bodies.splitlines() if x.startswith("Plan: ")]
    report, valid = _clone_audit(lab, root)
    got["audit"] = {"valid": sorted(valid), "runs": len(report["executions"])}
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r77-surface-namelimits", _build)


def _xf(what: str) -> Any:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 77: {what}")


HIDS = [f"{t}:{w}" for t in HELD for w in ("held", "never", "mcp-log")]
HIDS += ["d40:show", "d40:validate"]
HBROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(HIDS, HIDS, HBROKEN))
def test_a_name_past_the_limits_is_held(lab: Lab, vid: str) -> None:
    """docs/errors.md (``E_UNSAFE_PATH``): "a name over 255 bytes or a path over 32 folders":
    a 256-byte name, 86 CJK characters (258 bytes), a 300-byte folder one level up (each
    pushed from the index alone: no file system the agent needs holds them) and a plan 40
    folders deep are held, never run on Alice's approval, and every reader names the code."""
    got = lab.got  # type: ignore[attr-defined]
    tag, what = vid.split(":")
    name = ALL[tag]
    row = got["rows"].get(f"plans/{name}") or {}
    if what == "held":
        assert row.get("held") == "E_UNSAFE_PATH" or not row, row
        assert row.get("status") != "completed", row
    elif what == "never":
        assert got["calls"][tag] == 0, got["calls"]
        assert not [s for s in got["subjects"] if s.startswith("plangate") and name in s]
    else:
        text = got["cli"][vid]
        assert "E_UNSAFE_PATH" in text, text[:600]
        assert "sha256:" not in text and "completed" not in text, text[:600]


RUNS = [*EDGE, *NK, *QUOTED]
EIDS = [f"{t}:{w}" for t in EDGE for w in ("ran", "readers")]
EIDS += [f"{t}:{w}" for t in NK for w in ("ran", "row")]
EIDS += [f"{t}:{w}" for t in QUOTED for w in ("ran", "row", "subject")]
EIDS += ["ok:ran"]
EBROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(EIDS, EIDS, EBROKEN))
def test_honest_names_at_the_edge_run(lab: Lab, vid: str) -> None:
    """Controls: a name of exactly 255 bytes (ASCII, CJK), a plan 20 folders deep, names only
    NFKC would fold (``<U+FB01>x`` beside ``fix``, fullwidth, a superscript: no file system
    git guards a checkout against folds them), names git quotes or a URL escapes (``a"b``,
    ``it's``, ``a b``, ``a%2Fb``, ``a#b?c``): each runs once on Alice's approval, approved
    by alice; its row, MCP ``log`` and the controller's commit subjects name its real path."""
    got = lab.got  # type: ignore[attr-defined]
    tag, what = vid.split(":")
    name = TREE[tag]
    row = got["rows"].get(f"plans/{name}") or {}
    if what == "ran":
        assert got["calls"][tag] == 1, got["calls"]
        assert row.get("status") == "completed" and row.get("approver") == ALICE[1], row
    elif what == "readers":
        for verb in ("show", "validate", "mcp-log"):
            text = got["cli"][f"{tag}:{verb}"]
            assert "E_UNSAFE_PATH" not in text and text[:2] != "1 ", (verb, text[:600])
    elif what == "row":
        assert row.get("status") == "completed", sorted(got["rows"])
        text = got["cli"][f"{tag}:mcp-log"]
        assert "completed" in text and "E_" not in text.split('"problems"')[-1][:40], text[:600]
    else:  # every record commit names the real path in its Plan: trailer, once per event
        assert got["trailers"].count(f"Plan: plans/{name}") == 3, got["trailers"]


@pytest.mark.parametrize("vid", ["nk-lig", "nk-fix"])
def test_a_ligature_twin_holds_both_or_neither(lab: Lab, vid: str) -> None:
    """``plans/<U+FB01>x`` beside ``plans/fix``: the full case fold (``casefold``) makes them
    one name, as a case-insensitive checkout that folds fully would. Either both are their
    own plans and run once each, or both are held E_PLAN_AMBIGUOUS naming the other: never
    one running while the other is its twin."""
    got = lab.got  # type: ignore[attr-defined]
    rows = [got["rows"].get(f"plans/{TREE[t]}") or {} for t in PAIR]
    held = [r.get("held") for r in rows]
    if held == ["E_PLAN_AMBIGUOUS"] * 2:
        assert [got["calls"][t] for t in PAIR] == [0, 0], got["calls"]
        mine = rows[PAIR.index(vid)]
        other = TREE[PAIR[1 - PAIR.index(vid)]]
        assert other in str(mine.get("reason")), mine
    else:
        assert [got["calls"][t] for t in PAIR] == [1, 1], (got["calls"], rows)


def test_the_fresh_clone_audit_agrees_with_the_rows(lab: Lab) -> None:
    got = lab.got  # type: ignore[attr-defined]
    completed = sorted(p for p, r in got["rows"].items() if r["status"] == "completed")
    assert got["audit"]["valid"] == completed, (got["audit"]["valid"], completed)
    assert got["audit"]["runs"] == len(completed), got["audit"]["runs"]


if __name__ == "__main__":
    import tempfile

    Path("/tmp/atk77b").mkdir(exist_ok=True)
    out = Path(tempfile.mkdtemp(prefix="r77nl-", dir="/tmp/atk77b"))
    print(json.dumps(_build(out).got, indent=1, ensure_ascii=False, default=str))  # type: ignore[attr-defined]
