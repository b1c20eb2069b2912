"""Round 25, time and cost bounds: a plan's own ``limits:`` (hashed) may only lower the
controller's caps (docs/configuration.md, "the smaller value wins"); here plans try to raise
them, or lift them with ``null`` (which means "no cap" in the controller's config).

The controller's config: ``limits: {max_tool_calls: 2, max_actions: 3, max_cost_usd: 1,
max_runtime: 2s}``. One lab; one pass freezes, Alice approves all in one commit, one pass
runs. Variants:

- ``calls-raise`` / ``calls-null``: three ``rec`` actions with ``max_tool_calls: 1000`` /
  ``null``. Asserted: exactly 2 calls, the plan ``failed`` with E_LIMIT_EXCEEDED.
- ``cost-raise`` / ``cost-null``: an action of ``cost`` (``estimate: {cost_usd: 5}``) with
  ``max_cost_usd: 100`` / ``null``. Asserted: ``invalid`` with E_LIMIT_EXCEEDED, nothing ran.
- ``rt-raise`` / ``rt-null``: ``rec``, then ``slp`` (an exec tool sleeping 4 s), then
  ``rec`` again, with ``max_runtime: 1h`` / ``null``. Asserted: ``failed`` with
  E_LIMIT_EXCEEDED, ``slp`` (action 2) recorded as stopped at the controller's cap
  (``failed``, E_LIMIT_EXCEEDED "over the cap of 2 s (limits.max_runtime)": not waited out,
  not run to the plan's 1h), and the third action never ran (still ``pending``). No timing
  is asserted (the project asserts none).
- ``act-raise``: four actions with ``max_actions: 100``. Asserted: ``invalid`` with
  E_LIMIT_EXCEEDED, nothing ran.

All held (round 25).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, plan_text
from test_round2_execution_kit import shared


def _more(slug: str) -> str:
    return "".join(
        f"  - id: {i}\n    tool: rec\n    why: again\n    params: {{tag: {slug}}}\n" for i in (2, 3)
    )


def _with(text: str, tool: str) -> str:
    return text.replace("  - name: rec\n", f"  - name: rec\n  - name: {tool}\n")


def _slow(slug: str, lim: str) -> str:
    extra = (
        "  - id: 2\n    tool: slp\n    why: slow\n"
        f"  - id: 3\n    tool: rec\n    why: after\n    params: {{tag: {slug}-after}}\n"
    )
    return _with(plan_text(slug, extra_actions=extra), "slp") + f"limits: {{max_runtime: {lim}}}\n"


def _cost(slug: str, lim: str) -> str:
    extra = "  - id: 2\n    tool: cost\n    why: pricey\n"
    return (
        _with(plan_text(slug, extra_actions=extra), "cost") + f"limits: {{max_cost_usd: {lim}}}\n"
    )


PLANS = {
    "calls-raise": plan_text("calls-raise", extra_actions=_more("calls-raise"))
    + "limits: {max_tool_calls: 1000}\n",
    "calls-null": plan_text("calls-null", extra_actions=_more("calls-null"))
    + "limits: {max_tool_calls: null}\n",
    "cost-raise": _cost("cost-raise", "100"),
    "cost-null": _cost("cost-null", "null"),
    "rt-raise": _slow("rt-raise", "1h"),
    "rt-null": _slow("rt-null", "null"),
    "act-raise": plan_text(
        "act-raise",
        extra_actions=_more("act-raise")
        + "  - id: 4\n    tool: rec\n    why: four\n    params: {tag: act-raise}\n",
    )
    + "limits: {max_actions: 100}\n",
}


def _build(root: Path) -> Lab:
    slp = root / "slp.py"
    slp.write_text("import sys, time\nsys.stdin.read()\ntime.sleep(4)\nprint('{}')\n")
    tools = (
        f"slp: {{kind: exec, argv: [{json.dumps(sys.executable)}, {json.dumps(str(slp))}]}}\n"
        "cost: {kind: echo, estimate: {cost_usd: 5}}\n"
    )
    extra = "limits: {max_tool_calls: 2, max_actions: 3, max_cost_usd: 1, max_runtime: 2s}\n"
    lab = Lab(root, tools=tools, extra=extra)
    for slug, text in PLANS.items():
        lab.write(slug, text)
    lab.commit("plans", AGENT)
    lab.run()
    for slug in PLANS:
        lab.set_status(slug, "approved")
    lab.commit("approve all", ALICE)
    lab.run()
    lab.st = {s: lab.status()[f"plans/{s}"] for s in PLANS}  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r25-planlimits", _build)


@pytest.mark.parametrize("vid", list(PLANS))
def test_plan_cannot_raise_caps(lab: Lab, vid: str) -> None:
    row = lab.st[vid]  # type: ignore[attr-defined]
    assert "E_LIMIT_EXCEEDED" in (row.get("reason") or "")
    if vid.startswith("calls"):
        assert row["status"] == "failed" and len(lab.calls(vid)) == 2
    elif vid.startswith("rt"):
        assert row["status"] == "failed" and lab.calls(f"{vid}-after") == []
        # the sleeping tool was stopped at the controller's cap and recorded as such
        actions = {a["id"]: a for a in lab.plan(vid)["execution"]["actions"]}
        slow = actions[2].get("error") or {}
        assert actions[2]["status"] == "failed" and slow.get("code") == "E_LIMIT_EXCEEDED", actions
        assert "over the cap of 2 s (limits.max_runtime)" in slow.get("message", ""), actions
        assert actions[3]["status"] == "pending", actions
    else:
        assert row["status"] == "invalid" and lab.calls(vid) == []
