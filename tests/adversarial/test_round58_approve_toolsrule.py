"""Round 58, quorum: a ``tools`` rule asking two approvals for plans that call a tool, where
the plan calls it only from a fallback step, a check, or inside a pinned plan's fallback or
check.

docs/approvals.md, "Policy": "`tools` lists catalog tools the plan must call one of";
"`tools:` rules match a nested plan's tools too"; a plan's risk counts "actions, fallbacks,
checks, and the actions of the plans it nests". A fallback step or a check is a call of the
tool the rule names.

Config: the bench's, plus ``danger`` (the recorder), ``boom`` (exits 1), ``probe`` (the
recorder as a check tool: ``idempotent: true``, ``risk: low``), and
``approval.rules: [{match: {tools: [danger]}, require: [{count: 2}]},
{match: {tools: [probe]}, require: [{count: 2}]}]``. The agent commits ``plans/<v>``:

- ``act`` (control): one action calling ``danger``.
- ``fb``: one action calling ``boom`` (``on_failure: fallback``), its fallback step ``danger``.
- ``pre``: one ``rec`` action whose precondition calls ``probe``.
- ``verify``: one ``rec`` action whose ``verify`` polls ``probe``.
- ``plan-pre``: a plan-level precondition calling ``probe``, one ``rec`` action.
- ``nested-fb``: one action pinning ``plans/lib-fb`` (``draft``: ``boom`` with a ``danger``
  fallback step).
- ``nested-pre``: one action pinning ``plans/lib-pre`` (``draft``: a plan precondition calling
  ``probe``, one ``rec`` action).

A pass; Alice alone approves each; two passes; ``plangate audit --json``.

Asserted (the defence): one approval is not enough: the plan is ``partial`` (``1 more``), the
tool the rule names never runs for it, nor the plan's own ``rec`` action; the audit lists no
valid run.

Seen: all held: every plan ``partial`` with "1 more approval" after Alice's vote, nothing of
it ran, no valid run in the audit (a fallback step, a check and a pinned plan's fallback or
check count as calls for a ``tools`` rule).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, cases, valid_runs
from test_round2_execution_kit import shared

VIDS = ["act", "fb", "pre", "verify", "plan-pre", "nested-fb", "nested-pre"]
BROKEN: dict[str, object] = {}
EXPECT = "{path: $.json.ok, equals: true}"
TOOLS = "available_tools: [{name: rec}, {name: danger}, {name: boom}, {name: probe}]\n"


def head(v: str, status: str = "pending_approval") -> str:
    return f'plan:\n  name: "{v}"\n  task: "tools rule {v}"\n  status: {status}\n' + TOOLS


def rec(v: str, extra: str = "") -> str:
    return f'  - id: 1\n    tool: rec\n    why: "the work"\n    params: {{tag: "{v}"}}\n' + extra


def fb(v: str) -> str:
    return (
        '  - id: 1\n    tool: boom\n    why: "try the soft way"\n    on_failure: fallback\n'
        f'    fallback:\n      - {{id: "1.1", tool: danger, why: "the hard way", params: {{tag: "{v}-danger"}}}}\n'  # noqa: E501
    )


def plan(v: str, libs: dict[str, str]) -> str:
    probe = f'{{tool: probe, params: {{tag: "{v}-probe"}}, expect: {EXPECT}}}'
    if v == "act":
        return (
            head(v)
            + f'actions:\n  - id: 1\n    tool: danger\n    why: "w"\n    params: {{tag: "{v}-danger"}}\n'  # noqa: E501
        )
    if v == "fb":
        return head(v) + "actions:\n" + fb(v)
    if v == "pre":
        return head(v) + "actions:\n" + rec(v, f"    preconditions: [{probe}]\n")
    if v == "verify":
        return (
            head(v)
            + "actions:\n"
            + rec(
                v,
                f'    verify: {{tool: probe, params: {{tag: "{v}-probe"}}, expect: {EXPECT}, timeout: 5, interval: 1}}\n',  # noqa: E501
            )
        )
    if v == "plan-pre":
        return head(v) + f"preconditions: [{probe}]\nactions:\n" + rec(v)
    lib = "lib-fb" if v == "nested-fb" else "lib-pre"
    return head(v) + (
        f'actions:\n  - id: 1\n    plan: {{path: plans/{lib}, hash: "{libs[lib]}"}}\n    why: "the usual way"\n'  # noqa: E501
    )


LIBS = {
    "lib-fb": head("lib-fb", "draft") + "actions:\n" + fb("nested-fb"),
    "lib-pre": head("lib-pre", "draft")
    + f'preconditions: [{{tool: probe, params: {{tag: "nested-pre-probe"}}, expect: {EXPECT}}}]\n'
    + "actions:\n"
    + rec("nested-pre"),
}


def _build(root: Path) -> Lab:
    r = json.dumps([sys.executable, str(root / "rec.py"), "{tag}"])
    log = json.dumps(str(root / "ran.log"))
    boom = json.dumps([sys.executable, "-c", "import sys; sys.exit(1)"])
    lab = Lab(
        root,
        approval=(
            "rules:\n"
            "  - match: {tools: [danger]}\n    require: [{count: 2}]\n"
            "  - match: {tools: [probe]}\n    require: [{count: 2}]\n"
        ),
        tools=(
            f"danger: {{kind: exec, argv: {r}, env: {{REC_LOG: {log}}}}}\n"
            f"boom: {{kind: exec, argv: {boom}}}\n"
            f"probe: {{kind: exec, argv: {r}, env: {{REC_LOG: {log}}}, idempotent: true, risk: low}}\n"  # noqa: E501
        ),
    )
    for name, text in LIBS.items():
        lab.write(name, text)
    lab.commit("agent: libraries", AGENT)
    libs = {n: lab.cli("hash", str(lab.repo / "plans" / n)).stdout.strip().split()[0] for n in LIBS}
    assert all(h.startswith("sha256:") for h in libs.values()), libs
    for v in VIDS:
        lab.write(v, plan(v, libs))
    lab.commit("agent proposes", AGENT)
    lab.run()
    time.sleep(1.05)
    for v in VIDS:
        lab.set_status(v, "approved")
    lab.commit("alice approves", ALICE)
    lab.run()
    lab.run()
    _code, lab.report = lab.audit()  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r58-toolsrule", _build)


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))  # type: ignore[arg-type]
def test_one_approval_is_not_enough(lab: Lab, vid: str) -> None:
    ran = [c for c in lab.calls(vid) + lab.calls(f"{vid}-danger") + lab.calls(f"{vid}-probe")]
    assert ran == [], lab.codes(vid)[:1500]
    assert "partial" in lab.codes(vid), lab.codes(vid)[:1500]
    assert valid_runs(lab.report, vid) == [], valid_runs(lab.report, vid)  # type: ignore[attr-defined]
