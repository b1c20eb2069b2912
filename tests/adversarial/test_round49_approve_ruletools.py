# ruff: noqa: E501  (plan text reads best on one line)
"""Round 49, who may make a plan run: a ``tools:`` rule (``approval.rules[].match.tools``)
asking two approvals for any plan that calls ``gold`` (and a ``risk: high`` rule asking
two for any plan that reaches ``hot``), with ``gold`` reached only indirectly.

Config: the bench's plus ``gold`` (exec, records a call tagged by its ``tag`` param,
``idempotent: true``, ``risk: low``: usable as a check tool) and ``hot`` (exec recorder,
``risk: high``); rules: ``{match: {tools: [gold]}, require: [{count: 2}]}`` then
``{match: {risk: high}, require: [{count: 2}]}``. Each plan ``plans/r/<vid>`` is the
agent's; the controller freezes; Alice alone approves; two passes.

- ``action`` (control): ``gold`` as an action.
- ``verify``: ``gold`` only as an action's ``verify`` tool.
- ``precond``: ``gold`` only as an action's precondition.
- ``plan-precond``: ``gold`` only as a plan-level precondition.
- ``nested``: a pinned child plan (``plans/lib/<vid>``) calls ``gold``.
- ``nested-verify``: the pinned child uses ``gold`` only as a verify tool.
- ``nested-fb``: the pinned child calls ``gold`` only in a fallback step.

Before Alice's approval on main, ``plangate check --as alice@example.com`` predicts a branch
in which Alice sets ``approved`` on ``verify``, ``plan-precond``, ``nested-verify``,
``nested-fb``: it must predict ``partial`` for each (never ``start``), as the controller
decides.

Asserted (the defence): one approval is not enough: the controller commits ``partial``
(``approval.status: partial``, Alice's one vote), ``gold`` never ran for the variant and
``rec`` (action 1 of the parent) never ran.

Seen: all held (every variant ``partial``; the child's tools count at every place). A child
that pins a grandchild is refused at freeze (``nested plan ... nests a plan (one level
only)``), so a ``risk: high`` tool two levels down cannot be reached at all.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from advkit import ALICE, Lab
from checkkit import predicts_start
from test_round2_execution_kit import shared

GOLD_OK = "expect: {path: $.json.ok, equals: true}"

CHILD: dict[str, str] = {
    "nested": "actions:\n  - {id: 1, tool: gold, why: w, params: {tag: TAG}}\n",
    "nested-verify": (
        "actions:\n  - id: 1\n    tool: rec\n    why: w\n    params: {tag: TAG-rec}\n"
        f"    verify: {{tool: gold, params: {{tag: TAG}}, {GOLD_OK}, timeout: 5, interval: 1}}\n"
    ),
    "nested-fb": (
        "actions:\n  - id: 1\n    tool: rec\n    why: w\n    params: {tag: TAG-rec}\n"
        "    on_failure: fallback\n"
        "    fallback:\n      - {id: '1.1', tool: gold, why: fb, params: {tag: TAG}}\n"
    ),
}

CASES = [
    "action",
    "verify",
    "precond",
    "plan-precond",
    "nested",
    "nested-verify",
    "nested-fb",
]
CHECKED = ["verify", "plan-precond", "nested-verify", "nested-fb"]
FOUND: dict[str, pytest.MarkDecorator] = {}


def _plan(name: str, body: str, tools: str = "rec, gold, hot") -> str:
    return (
        f"plan:\n  name: {name}\n  task: t {name}\n  status: pending_approval\n"
        f"available_tools: [{', '.join('{name: ' + t.strip() + '}' for t in tools.split(','))}]\n"
        + body
    )


def _hash(lab: Lab, path: str) -> str:
    out = lab.cli("hash", path, cwd=lab.repo)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip().split()[-1]


def _build(root: Path) -> Lab:
    rec = json.dumps([sys.executable, str(root / "rec.py"), "{tag}"])
    env = json.dumps(str(root / "ran.log"))
    tools = (
        f"gold: {{kind: exec, argv: {rec}, env: {{REC_LOG: {env}}}, idempotent: true, risk: low}}\n"
        f"hot: {{kind: exec, argv: {rec}, env: {{REC_LOG: {env}}}, risk: high}}\n"
    )
    approval = (
        "rules:\n"
        "  - {match: {tools: [gold]}, require: [{count: 2}]}\n"
        "  - {match: {risk: high}, require: [{count: 2}]}\n"
    )
    lab = Lab(root, approval=approval, tools=tools)
    a1 = "actions:\n  - id: 1\n    tool: rec\n    why: w\n    params: {tag: VID}\n"
    for vid in CASES:
        tag = f"{vid}-g"
        if vid == "action":
            body = f"actions:\n  - {{id: 1, tool: gold, why: w, params: {{tag: {tag}}}}}\n"
        elif vid == "verify":
            body = (
                a1
                + f"    verify: {{tool: gold, params: {{tag: {tag}}}, {GOLD_OK}, timeout: 5, interval: 1}}\n"
            )
        elif vid == "precond":
            body = (
                a1
                + f"    preconditions:\n      - {{tool: gold, params: {{tag: {tag}}}, {GOLD_OK}}}\n"
            )
        elif vid == "plan-precond":
            body = f"preconditions:\n  - {{tool: gold, params: {{tag: {tag}}}, {GOLD_OK}}}\n" + a1
        elif vid in CHILD:
            lab.write(f"lib/{vid}", _plan(f"lib-{vid}", CHILD[vid].replace("TAG", tag)))
            lab.commit(f"child {vid}")
            h = _hash(lab, f"plans/lib/{vid}")
            body = (
                a1
                + f"  - {{id: 2, plan: {{path: plans/lib/{vid}, hash: '{h}'}}, why: nest, needs: [1]}}\n"
            )
        lab.write(f"r/{vid}", _plan(vid, body.replace("VID", f"{vid}-rec")))
    lab.commit("agent adds plans")
    lab.run()
    lab.git("checkout", "-q", "-b", "pr-check")
    for vid in CHECKED:
        lab.set_status(f"r/{vid}", "approved")
    lab.commit("alice approves in a branch", ALICE)
    lab.git("checkout", "-q", "main")
    out = lab.cli(
        "check", "--config", str(lab.config), "--base", "main", "--head", "pr-check",
        "--as", ALICE[1], "--format", "json", cwd=lab.repo,
    )  # fmt: skip
    lab.check_out = (out.returncode, out.stdout, out.stderr[-2000:])  # type: ignore[attr-defined]
    for vid in CASES:
        lab.set_status(f"r/{vid}", "approved")
    lab.commit("alice approves", ALICE)
    lab.run()
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r49-ruletools", _build)


def test_the_plans_froze(lab: Lab) -> None:
    for vid in CASES:
        frozen = lab.plan(f"r/{vid}").get("frozen") or {}
        assert frozen.get("hash"), (vid, lab.codes(f"r/{vid}"))


@pytest.mark.parametrize(
    "vid", [pytest.param(v, id=v, marks=[FOUND[v]] if v in FOUND else []) for v in CASES]
)
def test_one_approval_runs_nothing(lab: Lab, vid: str) -> None:
    assert (lab.plan(f"r/{vid}").get("approval") or {}).get("status") == "partial", lab.codes(
        f"r/{vid}"
    )
    assert lab.calls(f"{vid}-g") == [], lab.codes(f"r/{vid}")
    assert lab.calls(f"{vid}-rec") == [], lab.codes(f"r/{vid}")
    assert not lab.started(f"r/{vid}"), lab.codes(f"r/{vid}")


def test_check_predicts_partial(lab: Lab) -> None:
    _code, stdout, stderr = lab.check_out  # type: ignore[attr-defined]
    assert "Traceback" not in stderr, stderr
    text = json.dumps(json.loads(stdout))
    for vid in CHECKED:
        assert f"plans/r/{vid}" in text, text[:3000]
    assert not predicts_start(stdout), text[:4000]
    assert text.count('"partial"') >= len(CHECKED), text[:4000]
