"""Round 76, agent-facing surfaces: ``plangate check`` (the pull request's prediction) and
MCP ``wait``/``status`` on a pull request that adds twins ABOVE a plan's own folder beside
plans frozen on main, then the merge Alice makes.

Lab (one, module scope; three ``run --once`` passes):
- pass 1: the agent commits, pending, ``plans/grp/x``, ``plans/deep/mid/y``,
  ``plans/ver/sion/z`` and the control ``plans/cc/x``; the controller freezes them;
- a branch ``pr`` (the agent) adds, already ``approved``, ``plans/GRP/x`` (``rec grp-tw``),
  ``plans/deep/MID/y`` (``rec deep-tw``) and ``plans/ver/si<U+200C>on/z`` (``rec ver-tw``);
  Alice approves the three bases and ``cc/x`` on the branch; ``plangate check --base main
  --head pr --as alice@example.com --format json`` predicts;
- Alice merges ``pr`` ``--no-ff``; passes 2-3; MCP ``wait`` (``status: approved``, 1 s) and
  ``log`` of each base, MCP ``status``.
Variants:
- ``{grp,deep,ver}:{check,ran,twin-ran,row,wait,mcp-log}`` (18): ``check`` predicts what the
  merge does (``held``/``refuse`` for a base beside an up-level twin: docs/plan-format.md
  "``check`` ... (outcome ``held``, invalid, ``E_PLAN_AMBIGUOUS`` or ``E_UNSAFE_PATH``)"),
  the base never runs nor does its twin, the row holds it, and MCP ``wait`` and ``log``
  answer E_PLAN_AMBIGUOUS ("for ``wait`` too");
- ``cc:{check,ran}`` (2, control): predicted ``start``, runs once;
- the fresh-clone audit agrees with the rows (1).

Seen (round 76):
- ``{grp,deep,ver}:{wait,mcp-log}`` (6 ids, one class with the up-level-twins module's
  ``mcp-log``): MCP ``wait`` of ``plans/grp/x`` (``status: approved``) waits its second
  and answers ``{"status": "approved", "previous": "approved", "changed": false}``; ``log``
  answers ``"status": "approved", "problems": []``, for bases the row holds E_PLAN_AMBIGUOUS
  beside ``GRP/x``, ``deep/MID/y``, ``ver/si<U+200C>on/z``. An agent waiting on its plan is
  told it is approved and waiting, never that it is held. Should (docs/agents.md: "a folder
  holding both is ``E_PLAN_AMBIGUOUS``, for ``wait`` too"; docs/plan-format.md: "MCP
  ``log``/``status``/``wait``/``submit`` ... say so, naming the twin"): E_PLAN_AMBIGUOUS and
  why.
  Fixed (2026-12-01, r76upread): ``planstate.refuse_twin``, asked by MCP ``log``, ``wait``
  and ``submit``, compares every part of the plan's path from the plans folder down
  (``names.twin_folders``, the walk every reader asks), as the history index does.
Held: ``check`` predicted ``held`` for every base and twin and ``start`` for ``cc/x``; after
Alice's merge no base or twin ran, the rows hold them, ``cc/x`` ran once; the audit agrees.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab, cases, clone_audit, plan_text
from mcpkit import session
from test_round2_execution_kit import shared

BASES = {"grp": ("grp/x", "GRP/x"), "deep": ("deep/mid/y", "deep/MID/y")}
BASES["ver"] = ("ver/sion/z", "ver/si\u200con/z")
CONTROL = ("cc", "cc/x")


def _build(root: Path) -> Lab:
    lab = Lab(root, extra="agent:\n  identity: {name: Agent, email: agent@example.com}\n")
    cfg = str(lab.config)
    for tag, (base, _) in BASES.items():
        lab.write(base, plan_text(tag))
    lab.write(CONTROL[1], plan_text(CONTROL[0]))
    lab.commit("agent: plans", AGENT)
    lab.run()
    time.sleep(1.1)
    lab.git("checkout", "-q", "-b", "pr")
    for tag, (_, twin) in BASES.items():
        lab.write(twin, plan_text(f"{tag}-tw", "approved", name=tag))
    lab.commit("agent: twins", AGENT)
    for base, _ in BASES.values():
        lab.set_status(base, "approved")
    lab.set_status(CONTROL[1], "approved")
    lab.commit("alice: approve on the branch", ALICE)
    done = lab.cli(
        "check", "--config", cfg, "--base", "main", "--head", "pr",
        "--as", "alice@example.com", "--format", "json", cwd=lab.repo,
    )  # fmt: skip
    got: dict[str, Any] = {"check-rc": done.returncode, "check-err": done.stderr[-2000:]}
    got["check"] = {p["plan"]: p for p in json.loads(done.stdout or '{"plans": []}')["plans"]}
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge pr", "pr", who=ALICE)
    lab.run()
    lab.run()
    got["rows"] = {
        r["plan"]: r for r in json.loads(lab.cli("status", "--json", "--config", cfg).stdout)
    }
    got["calls"] = {t: len(lab.calls(t)) for b in [*BASES, CONTROL[0]] for t in (b, f"{b}-tw")}
    calls: list[Any] = []
    for base, _ in BASES.values():
        calls.append(("wait", {"path": f"plans/{base}", "timeout": 1, "status": "approved"}))
        calls.append(("log", {"path": f"plans/{base}"}))
    replies = session(lab, calls)[0]
    got["mcp"] = {}
    for i, tag in enumerate(BASES):
        got["mcp"][f"{tag}:wait"] = json.dumps(replies[2 * i], ensure_ascii=False)
        got["mcp"][f"{tag}:mcp-log"] = json.dumps(replies[2 * i + 1], ensure_ascii=False)
    report, valid = clone_audit(lab, root)
    got["audit"] = {"valid": sorted(valid), "runs": len(report["executions"])}
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r76-surface-upcheck", _build)


MCP_WHY = "MCP wait/log answer a plan held by an up-level twin 'approved', no code"
VIDS = [f"{t}:{w}" for t in BASES for w in ("check", "ran", "twin-ran", "row", "wait", "mcp-log")]
BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))
def test_a_pull_request_adding_up_level_twins(lab: Lab, vid: str) -> None:
    """``check`` predicts ``held`` for each base and twin (the merge holds them), neither
    runs after Alice merges, the row holds the base E_PLAN_AMBIGUOUS, and MCP ``wait`` and
    ``log`` say so (docs/agents.md: "``E_PLAN_AMBIGUOUS``, for ``wait`` too";
    docs/plan-format.md: "MCP ``log``/``status``/``wait``/``submit`` ... say so")."""
    got = lab.got  # type: ignore[attr-defined]
    tag, what = vid.split(":")
    base, twin = BASES[tag]
    if what == "check":
        for plan in (base, twin):
            assert got["check"][f"plans/{plan}"]["outcome"] in ("held", "refuse"), got["check"]
    elif what == "ran":
        assert got["calls"][tag] == 0, got["calls"]
    elif what == "twin-ran":
        assert got["calls"][f"{tag}-tw"] == 0, got["calls"]
    elif what == "row":
        assert got["rows"][f"plans/{base}"].get("held") == "E_PLAN_AMBIGUOUS", got["rows"]
    else:
        text = got["mcp"][vid]
        assert "E_PLAN_AMBIGUOUS" in text, text[:800]
        assert '\\"status\\": \\"approved\\"' not in text, text[:800]


CIDS = ["cc:check", "cc:ran"]


@pytest.mark.parametrize("vid", cases(CIDS, CIDS, {}))
def test_the_control_is_predicted_and_runs(lab: Lab, vid: str) -> None:
    """Control: ``plans/cc/x`` (no twin), approved on the branch: ``check`` says ``start``;
    after the merge it runs once."""
    got = lab.got  # type: ignore[attr-defined]
    if vid == "cc:check":
        assert got["check"]["plans/cc/x"]["outcome"] == "start", got["check"]
    else:
        assert got["calls"]["cc"] == 1, got["calls"]
        assert got["rows"]["plans/cc/x"]["status"] == "completed", got["rows"]["plans/cc/x"]


def test_the_fresh_clone_audit_agrees_with_the_rows(lab: Lab) -> None:
    got = lab.got  # type: ignore[attr-defined]
    completed = sorted(p for p, r in got["rows"].items() if r["status"] == "completed")
    assert got["audit"]["valid"] == completed == ["plans/cc/x"], (got["audit"], completed)
    assert got["audit"]["runs"] == 1, got["audit"]


if __name__ == "__main__":
    import tempfile

    out = Path(tempfile.mkdtemp(prefix="r76uc-", dir="/tmp/atk76b"))
    got = _build(out).got  # type: ignore[attr-defined]
    print(json.dumps(got, indent=1, ensure_ascii=False, default=str))
