# ruff: noqa: E501
"""Round 54 (runs): what a pinned (nested) plan says about itself at plan level, when it runs
inside a parent. SPEC §11: "a plan's own ``limits:`` (optional, hashed) and the config's
``limits:``; the smaller wins ... at run time tool calls including retries and total runtime
are enforced". SPEC §12 / docs/plan-format.md: "approving the parent approves exactly that
version"; "The nested plan is validated like any plan". Round 3's rule: a key the engine
would not honour does not validate (a gated fallback step, `retry` on a nested action).

Lab ``nl``: the children (``status: draft``, pinned by hash) and one parent per variant,
whose action 1 is the child and action 2 ``rec`` (``p<vid>-after``):

- ``child-calls``: the child says ``limits: {max_tool_calls: 1}`` and has three ``rec``
  actions.
- ``child-runtime``: the child says ``limits: {max_runtime: 1}``; its action 1 runs 4 s
  (``slow``), action 2 is ``rec``.
- ``child-actions``: the child says ``limits: {max_actions: 1}`` and has three actions.
- ``child-onfailure`` (control): the child's plan-level ``on_failure: skip`` over a failing
  action 1: its action 2 runs.
- ``child-preconditions`` (control): the child's plan-level precondition fails: none of its
  actions runs.
- ``parent-calls`` (control): the parent says ``limits: {max_tool_calls: 2}``, the child
  (no limits) has three actions: nested calls count toward the parent's cap.

Asserted: no call the child's (or parent's) own limits forbid was made, and the parent's
action 2 did not run after the child broke its limit; the controls' child steps behave as
their plan-level keys say.

Broke (strict xfails): ``child-calls``: all three child actions and the parent's action 2
ran (the child's hashed ``max_tool_calls: 1``, shown to the reviewer in the pinned file,
is silently ignored when it runs nested); ``child-runtime``: the 4 s action ran to the end
and the child's action 2 and the parent's action 2 ran (``max_runtime: 1`` ignored). Should:
honour the pinned plan's limits inside the parent (the smaller wins), or refuse them at
validation as a key the engine ignores. Held: ``child-actions`` (the child is invalid,
so the parent never runs), ``child-onfailure``, ``child-preconditions``, ``parent-calls``.

Fixed (2026-11-29): a nested plan runs under its own caps, chained to the parent's
(``controller/execution/caps.py``, ``CapBudget``): the same checks the top level makes before
every call (tool calls, checks included, and the run time that shortens a tool's timeout)
walk the nested plan's budget, then the parent's, so the smaller remaining one wins. The
child's cap ends the nested action and the plan ``failed`` with ``E_LIMIT_EXCEEDED`` naming
the nested plan (a cap is never passed by ``on_failure``). ``max_actions`` and
``max_cost_usd`` were already checked where the pinned plan is validated with its own limits.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from advkit import ALICE, Lab, cases
from test_round2_execution_kit import shared

VARIANTS = [
    "child-calls",
    "child-runtime",
    "child-actions",
    "child-onfailure",
    "child-preconditions",
    "parent-calls",
]
BROKEN: dict[str, object] = {}

TOOL = """\
import json, os, sys, time
tag = sys.argv[1]
with open(os.environ["REC_LOG"], "a", encoding="utf-8") as f:
    f.write(json.dumps({"argv": [tag]}) + "\\n")
if tag.startswith("slow"):
    time.sleep(4)
if tag.startswith("fail"):
    sys.exit(1)
print(json.dumps({"ok": True}))
"""

HEAD = "plan:\n  name: {n}\n  task: t\n  status: draft\n{extra}available_tools: [{{name: rec}}, {{name: tool}}, {{name: chk}}]\nactions:\n"


def _acts(vid: str, tags: list[tuple[str, str]]) -> str:
    return "".join(
        f"  - {{id: {i}, tool: {tool}, why: w, params: {{tag: {tag}}}}}\n"
        for i, (tool, tag) in enumerate(tags, 1)
    )


CHILDREN = {
    "child-calls": HEAD.format(n="cc", extra="limits: {max_tool_calls: 1}\n")
    + _acts("cc", [("rec", "cc1"), ("rec", "cc2"), ("rec", "cc3")]),
    "child-runtime": HEAD.format(n="cr", extra="limits: {max_runtime: 1}\n")
    + _acts("cr", [("tool", "slow-cr1"), ("rec", "cr2")]),
    "child-actions": HEAD.format(n="ca", extra="limits: {max_actions: 1}\n")
    + _acts("ca", [("rec", "ca1"), ("rec", "ca2"), ("rec", "ca3")]),
    "child-onfailure": HEAD.format(n="co", extra="on_failure: skip\n")
    + _acts("co", [("tool", "fail-co1"), ("rec", "co2")]),
    "child-preconditions": HEAD.format(
        n="cp",
        extra="preconditions:\n  - {tool: chk, params: {tag: fail-cpchk}, expect: {path: $.exit_code, equals: 0}}\n",
    )
    + _acts("cp", [("rec", "cp1")]),
    "parent-calls": HEAD.format(n="pc", extra="")
    + _acts("pc", [("rec", "pc1"), ("rec", "pc2"), ("rec", "pc3")]),
}


def _build(root: Path) -> Lab:
    (root / "tool.py").write_text(TOOL)
    lab = Lab(root / "nl")
    argv = json.dumps([sys.executable, str(root / "tool.py"), "{tag}"])
    log = json.dumps(str(lab.log))
    lab.write_config(
        tools=f"tool: {{kind: exec, argv: {argv}, env: {{REC_LOG: {log}}}, timeout: 30}}\n"
        f"chk: {{kind: exec, argv: {argv}, env: {{REC_LOG: {log}}}, idempotent: true, risk: low}}\n"
    )
    for vid, text in CHILDREN.items():
        lab.write(f"lib/{vid}", text)
    lab.commit("children")
    for vid in VARIANTS:
        pin = lab.cli("hash", str(lab.repo / "plans" / "lib" / vid)).stdout.strip()
        limits = "limits: {max_tool_calls: 2}\n" if vid == "parent-calls" else ""
        lab.write(
            vid,
            f"plan:\n  name: p{vid}\n  task: t\n  status: pending_approval\n{limits}"
            "available_tools: [{name: rec}]\nactions:\n"
            f"  - {{id: 1, plan: {{path: plans/lib/{vid}, hash: '{pin}'}}, why: w}}\n"
            f"  - {{id: 2, tool: rec, why: w, params: {{tag: p{vid}-after}}}}\n",
        )
    lab.commit("parents")
    lab.run()
    for vid in VARIANTS:
        lab.set_status(vid, "approved")
    lab.commit("approve", ALICE)
    lab.run(timeout=180)
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r54-nestlimits", _build)


def _n(lab: Lab, tag: str) -> int:
    return len(lab.calls(tag))


@pytest.mark.parametrize("vid", cases(VARIANTS, VARIANTS, BROKEN))
def test_the_pinned_plans_plan_level_keys_hold(lab: Lab, vid: str) -> None:
    after = _n(lab, f"p{vid}-after")
    status = lab.plan(vid)["plan"]["status"]
    if vid == "child-calls":
        assert (_n(lab, "cc1"), _n(lab, "cc2"), _n(lab, "cc3"), after) == (1, 0, 0, 0), status
    elif vid == "child-runtime":
        assert (_n(lab, "cr2"), after) == (0, 0), status
        assert status == "failed", status
    elif vid == "child-actions":
        assert (_n(lab, "ca1"), after) == (0, 0), status
        assert not lab.started(vid)
    elif vid == "child-onfailure":
        assert (_n(lab, "fail-co1"), _n(lab, "co2"), after) == (1, 1, 1), status
    elif vid == "child-preconditions":
        assert (_n(lab, "fail-cpchk"), _n(lab, "cp1"), after) == (1, 0, 0), status
    else:
        made = _n(lab, "pc1") + _n(lab, "pc2") + _n(lab, "pc3")
        assert made <= 2 and _n(lab, "pc3") == 0 and after == 0, (made, status)
        assert "E_LIMIT_EXCEEDED" in json.dumps(lab.plan(vid)["execution"]), status
