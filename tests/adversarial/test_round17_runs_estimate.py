# ruff: noqa: E501
"""Round 17, the operator's cost cap vs the calls a plan really makes on retries.

docs/configuration.md: ``limits.max_cost_usd`` is "the highest estimated cost a plan may
have"; a tool's ``estimate: {cost_usd}`` is "of one call", and "a plan's estimate sums its
calls, retries at their maximum". docs/plan-format.md: a top-level ``on_failure`` is the
default of every action, ``retry`` settings count "only with ``on_failure: retry`` (its own or
the plan's)". The config caps ``max_cost_usd: 10``; ``paid`` is an exec tool (estimate $1 a
call) that records its call to ``ran.log`` and exits 1. One pass to freeze, Alice approves,
one pass to run.

- ``action-retry`` (control): the action's own ``on_failure: retry`` with ``retry:
  {attempts: 20, delay: 0}``: held, refused at validation (E_LIMIT_EXCEEDED, estimated $21),
  ``paid`` never called.
- ``plan-retry``: the same action, the ``on_failure: retry`` written once at the top of the
  plan. **Broke**: the plan validates and is frozen with ``estimate: {cost_usd: 1}``; the run
  calls ``paid`` 21 times ($21 against the operator's $10 cap).
- ``verify-polls``: an action (the free ``rec``) whose ``verify`` polls the check tool
  ``chk`` (``idempotent: true``, ``risk: low``, $1 a call, answering ``{"ok": false}``) every
  0.2 s for up to 3 s. **Broke**: estimated $1 for the check (the plan is frozen at $1), the
  run calls ``chk`` about 15 times.
- ``nested-plan-retry``: a parent pins a nested plan written as ``plan-retry`` (top-level
  ``on_failure: retry``). **Broke**: the same, through the nesting.

Asserted per variant: the plan is refused with E_LIMIT_EXCEEDED, or the tool is called no
more often than the cap allows (10 calls).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab
from test_round2_execution_kit import shared

PAID = """import json, os, sys
data = sys.stdin.read()
with open(os.environ["REC_LOG"], "a", encoding="utf-8") as f:
    f.write(json.dumps({"argv": sys.argv[1:], "stdin": data}) + "\\n")
sys.exit(1)
"""
CHK = """import json, os, sys
data = sys.stdin.read()
with open(os.environ["REC_LOG"], "a", encoding="utf-8") as f:
    f.write(json.dumps({"argv": sys.argv[1:], "stdin": data}) + "\\n")
print(json.dumps({"ok": False}))
"""


def _plan(tag: str, top: str = "", own: str = "", status: str = "pending_approval") -> str:
    return f"""plan:
  name: "{tag}"
  task: "t"
  status: {status}
{top}available_tools:
  - name: paid
actions:
  - id: 1
    tool: paid
    why: "a paid call that fails"
{own}    retry: {{attempts: 20, delay: 0}}
    params: {{tag: "{tag}"}}
"""


# round 17: every BROKE variant broke when found; fixed since (the plan-level on_failure in
# show and in the estimate, a verify's polls counted, nested inputs shown as run)
FIXED = True
BROKE = {
    v: pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 17: {why}")
    for v, why in {
        "plan-retry": "a top-level on_failure: retry is left out of the estimate: frozen at $1 under a $10 cap, the tool is called 21 times",
        "verify-polls": "a verify's polls of a paid check tool count once in the estimate: frozen at $1 under a $10 cap, the check is called about 15 times",
        "nested-plan-retry": "a nested plan's top-level on_failure: retry is left out of the parent's estimate: the tool is called 21 times under a $10 cap",
    }.items()
}
VARIANTS = {
    "action-retry": "action-retry",
    "plan-retry": "plan-retry",
    "verify-polls": "verify-polls",
    "nested-plan-retry": "sub-retry",
}


def _build(root: Path) -> Lab:
    root.mkdir(parents=True, exist_ok=True)
    (root / "paid.py").write_text(PAID)
    (root / "chk.py").write_text(CHK)
    lab = Lab(root / "lab")
    paid = json.dumps([sys.executable, str(root / "paid.py"), "{tag}"])
    chk = json.dumps([sys.executable, str(root / "chk.py"), "{tag}"])
    env = f"{{REC_LOG: {json.dumps(str(lab.log))}}}"
    lab.write_config(
        tools=f"paid: {{kind: exec, argv: {paid}, env: {env}, estimate: {{cost_usd: 1}}}}\n"
        f"chk: {{kind: exec, argv: {chk}, env: {env}, idempotent: true, risk: low, estimate: {{cost_usd: 1}}}}\n",
        extra="limits: {max_cost_usd: 10}\n",
    )
    lab.write("action-retry", _plan("action-retry", own="    on_failure: retry\n"))
    lab.write("plan-retry", _plan("plan-retry", top="on_failure: retry\n"))
    lab.write(
        "verify-polls",
        """plan:
  name: "verify-polls"
  task: "t"
  status: pending_approval
available_tools:
  - name: rec
  - name: chk
actions:
  - id: 1
    tool: rec
    why: "free"
    params: {tag: "verify-free"}
    verify: {tool: chk, params: {tag: "verify-polls"}, expect: {path: $.json.ok, equals: true}, timeout: 3, interval: 0.2}
""",
    )
    lab.write("sub-retry", _plan("sub-retry", top="on_failure: retry\n", status="draft"))
    lab.commit("plans", AGENT)
    pin = lab.cli("hash", str(lab.repo / "plans/sub-retry")).stdout.strip().split()[-1]
    lab.write(
        "nested-plan-retry",
        f"""plan:
  name: "nested-plan-retry"
  task: "t"
  status: pending_approval
available_tools:
  - name: paid
actions:
  - id: 1
    plan: {{path: plans/sub-retry, hash: "{pin}"}}
    why: "the shared sub-plan"
""",
    )
    lab.commit("parent", AGENT)
    lab.run()
    for vid in VARIANTS:
        lab.set_status(vid, "approved")
    lab.commit("approve all", ALICE)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r17-estimate", _build)


@pytest.mark.parametrize(
    "vid",
    [pytest.param(v, id=v, marks=[BROKE[v]] if v in BROKE and not FIXED else []) for v in VARIANTS],
)
def test_retries_count_against_the_cost_cap(lab: Lab, vid: str) -> None:
    calls = len(lab.calls(VARIANTS[vid]))
    if "E_LIMIT_EXCEEDED" in lab.codes(vid):
        assert calls == 0, f"refused, yet the tool ran {calls} times"
        return
    frozen = lab.plan(vid).get("frozen") or {}
    assert calls <= 10, (
        f"frozen with estimate {frozen.get('estimate')} under a $10 cap; the $1 tool was called {calls} times"
    )
