# ruff: noqa: E501
"""Round 21, how often: ``max_tool_calls`` against the calls of *check* tools (preconditions
and verify polls), which run the catalog's tools as much as an action does.

docs/configuration.md: ``limits.max_tool_calls`` is the number of "tool calls a plan's runs
may make in all, retries included; the call past it is not made and the plan fails
E_LIMIT_EXCEEDED"; a plan's own ``limits:`` (hashed, approved with it) lowers it, and "a plan
over a cap is invalid at freeze". Round 9 covered actions, retries, asks, resumes, fallbacks
and nested plans; round 17 put verify polls into the cost estimate. Nobody counted checks.

One lab. Every plan sets ``limits: {max_tool_calls: 3}``; the check tool ``chk`` is the
recording tool declared ``idempotent: true, risk: low, output_trust: trusted`` (what checks
must be), so every call it gets is in ``ran.log``. All are approved by Alice in one commit and
run in one pass. Asserted (the defence): the plan's tools together (action tool + check tool)
were called at most 3 times, and the honest ``zz`` ran once.

- ``verify-poll``: one ``rec`` action with ``verify: {tool: chk, expect: $.json.ok equals
  false, interval: 0.05, timeout: 1.5}`` (never holds). **Broke**: ~25 calls of ``chk`` (by
  hand, timeout 3 s: 38 polls) under a cap of 3; with ``timeout`` up to a year and no
  ``max_runtime`` by default, a check tool is called without bound. Should: each poll
  counts; the call past the cap is not made (E_LIMIT_EXCEEDED), or the plan is refused at
  freeze (its polls are already in the estimate).
- ``pre-checks``: one ``rec`` action with 6 preconditions on ``chk`` (all hold). **Broke**:
  7 calls, and the plan was frozen though its calls are known statically.
- ``plan-pre``: 6 plan-level preconditions on ``chk``, then one ``rec`` action. **Broke**:
  7 calls.
- ``retry-pre``: a precondition that never holds, ``on_failure: retry``, ``retry:
  {attempts: 6, delay: 0.01}``: **broke** likewise (7 check calls: each try checks again).
- ``actions`` (control): five ``rec`` actions: held (at most 3 calls).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from advkit import ALICE, Lab, cases, plan_text
from test_round2_execution_kit import shared

R21 = pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="round 21: check-tool calls (preconditions, verify polls) are not counted by max_tool_calls",
)
CAP = 3
HEAD = (
    "plan:\n  name: {s}\n  task: t\n  status: pending_approval\n"
    f"limits: {{{{max_tool_calls: {CAP}}}}}\n"
    "available_tools: [{{name: rec}}, {{name: chk}}]\n"
)


def _chk(s: str, n: int, indent: str, expect: str = "true") -> str:
    row = f"{indent}  - {{tool: chk, params: {{tag: {s}-c}}, expect: {{path: $.json.ok, equals: {expect}}}}}\n"
    return f"{indent}preconditions:\n" + row * n


def _act(s: str, extra: str = "", aid: int = 1) -> str:
    return f"  - id: {aid}\n    tool: rec\n    why: w\n    params: {{tag: {s}}}\n" + extra


PLANS = {
    "verify-poll": HEAD.format(s="verify-poll")
    + "actions:\n"
    + _act(
        "verify-poll",
        "    verify: {tool: chk, params: {tag: verify-poll-c}, expect: {path: $.json.ok, equals: false}, timeout: 1.5, interval: 0.05}\n",
    ),
    "pre-checks": HEAD.format(s="pre-checks")
    + "actions:\n"
    + _act("pre-checks", _chk("pre-checks", 6, "    ")),
    "plan-pre": HEAD.format(s="plan-pre")
    + _chk("plan-pre", 6, "")
    + "actions:\n"
    + _act("plan-pre"),
    "retry-pre": HEAD.format(s="retry-pre")
    + "actions:\n"
    + _act(
        "retry-pre",
        _chk("retry-pre", 1, "    ", expect="false")
        + "    on_failure: retry\n    retry: {attempts: 6, delay: 0.01, max_delay: 0.01}\n",
    ),
    "actions": HEAD.format(s="actions")
    + "actions:\n"
    + "".join(_act("actions", aid=i) for i in range(1, 6)),
}
#: round 21: all four broke; fixed since (a check's call counts toward max_tool_calls)
FOUND = {v: R21 for v in ("verify-poll", "pre-checks", "plan-pre", "retry-pre")}
BROKEN: dict[str, object] = {}


def _build(root: Path) -> Lab:
    lab = Lab(root)
    rec = json.dumps([sys.executable, str(lab.recorder), "{tag}"])
    lab.write_config(
        tools=f"chk: {{kind: exec, argv: {rec}, env: {{REC_LOG: {json.dumps(str(lab.log))}}}, idempotent: true, risk: low, output_trust: trusted}}\n"
    )
    for slug, text in PLANS.items():
        lab.write(slug, text)
    lab.write("zz", plan_text("zz"))
    lab.commit("plans")
    lab.run()
    for slug in [*PLANS, "zz"]:
        lab.set_status(slug, "approved")
    lab.commit("approve all", ALICE)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r21-checkcap", _build)


@pytest.mark.parametrize("vid", cases(list(PLANS), list(PLANS), BROKEN))
def test_check_calls_count_against_the_cap(lab: Lab, vid: str) -> None:
    made = len(lab.calls(vid)) + len(lab.calls(f"{vid}-c"))
    assert made <= CAP, f"{vid}: {made} tool calls under max_tool_calls {CAP}"


def test_the_honest_plan_ran_once(lab: Lab) -> None:
    assert len(lab.calls("zz")) == 1
