# ruff: noqa: E501
"""Round 11, runs after a hold: the agent rewrites the branch (``git reset --hard`` to before
the plan's start commit) while the plan runs, from inside a tool call (the agent's outside
system). docs/approvals.md: the plan is held (``E_HISTORY_REWRITTEN``) and "a held plan that
was running stops before its next action". Round 7 rewrote between two plain actions; here
the rewrite lands where round 11's aborts slipped through:

- ``r-precond``: in an action's precondition check: the action's own tool must not run;
- ``r-fallback``: in a failing action with ``on_failure: fallback``: the fallback must not run;
- ``r-nested``: in nested action 1/1: nested 1/2 must not run;
- ``r-verify``: in an action whose ``verify`` then polls a check that never holds: held
  (the poll stops, action 2 never runs, no outcome is committed).

One plan approved per pass (a rewrite erases every start commit after its target).
Defence asserted: nothing runs after the rewrite; ``status`` names E_HISTORY_REWRITTEN.
**Broke** (3 of 4): the plan is held afterwards (status: ``waiting: E_HISTORY_REWRITTEN``), but
the action's tool (``r-precond``), the fallback step (``r-fallback``) and nested action 1/2
(``r-nested``) all run after the rewrite: the hold is looked at only between top-level
actions, as the abort is (``test_round11_runs_abort.py``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from advkit import AGENT, BenchError, Lab
from test_round2_execution_kit import shared

RW = r"""import json, os, subprocess, sys
sys.stdin.read()
slug, fail = sys.argv[1], sys.argv[2]
with open(os.environ["REC_LOG"], "a") as f:
    f.write(json.dumps({"argv": ["rw-" + slug], "stdin": ""}) + "\n")
repo = os.environ["LAB_REPO"]
start = subprocess.run(["git", "log", "-1", "--format=%H", "--grep=start plans/" + slug], cwd=repo, capture_output=True, text=True).stdout.strip()
if start:
    subprocess.run(["git", "reset", "-q", "--hard", start + "^"], cwd=repo, capture_output=True)
print(json.dumps({"ok": True}))
sys.exit(1 if fail == "yes" else 0)
"""

HEAD = """\
plan:
  name: "{s}"
  task: "a rewrite lands between tool calls"
  status: pending_approval
available_tools: [{{name: rw}}, {{name: rwc}}, {{name: rec}}]
"""

PLANS = {
    "r-precond": """actions:
  - id: 1
    tool: rec
    why: "w"
    params: {tag: r-precond}
    preconditions:
      - {tool: rwc, params: {slug: r-precond, fail: "no"}, expect: {path: $.json.ok, equals: true}}
""",
    "r-fallback": """actions:
  - id: 1
    tool: rw
    why: "w"
    params: {slug: r-fallback, fail: "yes"}
    on_failure: fallback
    fallback:
      - {id: "1.1", tool: rec, why: "w", params: {tag: r-fallback}}
""",
    "r-verify": """actions:
  - id: 1
    tool: rw
    why: "w"
    params: {slug: r-verify, fail: "no"}
    verify: {tool: rwc, params: {slug: r-verify-chk, fail: "no"}, expect: {path: $.json.never, equals: true}, timeout: 1, interval: 0.2}
  - {id: 2, tool: rec, why: "w", params: {tag: r-verify}}
""",
}

#: What broke when found (round 11); fixed since: an abort, a hold or a stop is honoured before
#: every call a step makes (controller.execution.steps.Runner._attempt).
FOUND = {
    "r-precond": "a rewrite erasing the start commit, made during an action's precondition check: the action's tool still runs",
    "r-fallback": "a rewrite erasing the start commit, made by the failing call: the fallback step still runs",
    "r-nested": "a rewrite erasing the start commit, made by nested action 1/1: nested 1/2 still runs",
}
BROKE: dict[str, str] = {}


def _build(root: Path) -> Lab:
    rw = root / "rw.py"
    rw.write_text(RW)
    lab = Lab(root)
    env = f"{{REC_LOG: {json.dumps(str(lab.log))}, LAB_REPO: {json.dumps(str(lab.repo))}, GIT_CONFIG_GLOBAL: {json.dumps(str(root / 'gitconfig'))}, HOME: {json.dumps(str(lab.home))}}}"
    argv = json.dumps([sys.executable, str(rw), "{slug}", "{fail}"])
    lab.write_config(
        tools=f"rw: {{kind: exec, argv: {argv}, env: {env}, output_trust: trusted}}\n"
        f"rwc: {{kind: exec, argv: {argv}, env: {env}, idempotent: true, risk: low, output_trust: trusted}}\n"
    )
    for slug, body in PLANS.items():
        lab.write(slug, HEAD.format(s=slug) + body)
    lab.write(
        "r-inner",
        """\
plan:
  name: "r-inner"
  task: "nested, rewrites"
  status: draft
available_tools: [{name: rw}, {name: rec}]
actions:
  - {id: 1, tool: rw, why: "w", params: {slug: r-nested, fail: "no"}}
  - {id: 2, tool: rec, why: "w", params: {tag: r-nested-inner}}
""",
    )
    pin = lab.cli("hash", "plans/r-inner/PLAN.yml", cwd=lab.repo).stdout.split()[0]
    lab.write(
        "r-nested",
        HEAD.format(s="r-nested")
        + f"""actions:
  - {{id: 1, plan: {{path: plans/r-inner, hash: "{pin}"}}, why: "nested"}}
  - {{id: 2, tool: rec, why: "w", params: {{tag: r-nested}}}}
""",
    )
    lab.commit("plans", AGENT)
    lab.run()
    for slug in [*PLANS, "r-nested"]:
        lab.approve(slug)
        lab.run()
    missing = [t for t in (f"rw-{s}" for s in [*PLANS, "r-nested"]) if not lab.calls(t)]
    if missing:
        raise BenchError(f"the bench did not reach {missing}")
    lab.rows = {s: lab.codes(s) for s in [*PLANS, "r-nested"]}  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r11-hold", _build)


@pytest.mark.parametrize(
    "slug",
    [
        pytest.param(
            s,
            marks=pytest.mark.xfail(
                strict=True, raises=AssertionError, reason=f"round 11: {BROKE[s]}"
            ),
        )
        if s in BROKE
        else s
        for s in [*PLANS, "r-nested"]
    ],
)
def test_nothing_runs_after_the_rewrite(lab: Lab, slug: str) -> None:
    assert len(lab.calls(f"rw-{slug}")) == 1, lab.calls(f"rw-{slug}")
    assert lab.calls(slug) == [] and lab.calls(f"{slug}-inner") == []
    assert "E_HISTORY_REWRITTEN" in lab.rows[slug], lab.rows[slug]  # type: ignore[attr-defined]
