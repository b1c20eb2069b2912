# ruff: noqa: E501
"""Round 54 (runs): ``limits.max_tool_calls`` across the ways a run goes on. docs/configuration.md:
"tool calls a plan's runs may make in all, retries included; the call past it is not made
and the plan fails E_LIMIT_EXCEEDED (even with on_failure: skip)". Round 21 counted check
tools; nobody counted across a gate, a resume, an ask, a fallback, parallel actions or a
lost journal.

Lab ``bu``: the plan's own ``limits: {max_tool_calls: N}`` (hashed), ``rec`` and ``frec``
(records its call, exits 1). Alice approves all in one commit; one pass; then Alice approves
again (a gate, a resume of a failed plan, an ask's retry) and one more pass.

- ``par`` (N=2): four independent actions (``needs: []``), four slots: the admissions race
  for the last calls.
- ``gate`` (N=2): two ``rec`` actions, then a gated third: approving the gate would make
  call 3.
- ``gate-lost`` (N=2): the same, and the plan's journal folder is lost while it waits at
  the gate (round 45's recovery from the committed record goes on from there).
- ``resume`` (N=2): ``rec`` then ``frec`` (fails, ``stop``); Alice approves a resume: the
  retried call would be call 3.
- ``ask`` (N=1): ``frec`` with ``on_failure: ask``; Alice answers the ask: call 2.
- ``fallback`` (N=2): ``frec`` with three ``rec`` fallback steps.

Asserted per variant: the calls made never exceed N in all (the plan's runs together), and
the plan is ``failed`` with E_LIMIT_EXCEEDED where a call was refused. All held.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from advkit import ALICE, Lab
from test_round2_execution_kit import shared

FAIL = """\
import json, os, sys
with open(os.environ["REC_LOG"], "a", encoding="utf-8") as f:
    f.write(json.dumps({"argv": sys.argv[1:]}) + "\\n")
sys.exit(1)
"""
HEAD = "plan:\n  name: {n}\n  task: t\n  status: pending_approval\nlimits: {{max_tool_calls: {cap}}}\navailable_tools: [{{name: rec}}, {{name: frec}}]\nactions:\n"


def _act(i: int, tag: str, tool: str = "rec", extra: str = "") -> str:
    return f"  - id: {i}\n    tool: {tool}\n    why: w\n    params: {{tag: {tag}}}\n{extra}"


PLANS = {
    "par": (2, "".join(_act(i, f"par-{i}", extra="    needs: []\n") for i in range(1, 5))),
    "gate": (
        2,
        _act(1, "gate-1")
        + _act(2, "gate-2")
        + _act(3, "gate-3", extra="    requires_approval: true\n"),
    ),
    "gate-lost": (
        2,
        _act(1, "gate-lost-1")
        + _act(2, "gate-lost-2")
        + _act(3, "gate-lost-3", extra="    requires_approval: true\n"),
    ),
    "resume": (2, _act(1, "resume-1") + _act(2, "resume-2", tool="frec")),
    "ask": (1, _act(1, "ask-1", tool="frec", extra="    on_failure: ask\n")),
    "fallback": (
        2,
        _act(1, "fallback-1", tool="frec", extra="    on_failure: fallback\n    fallback:\n")
        + "".join(
            f"      - {{id: '1.{j}', tool: rec, why: w, params: {{tag: fallback-1.{j}}}}}\n"
            for j in range(1, 4)
        ),
    ),
}
VARIANTS = list(PLANS)
SECOND = ["gate", "gate-lost", "resume", "ask"]


def _build(root: Path) -> Lab:
    (root / "fail.py").write_text(FAIL)
    lab = Lab(root / "bu")
    argv = json.dumps([sys.executable, str(root / "fail.py"), "{tag}"])
    lab.write_config(
        tools=f"frec: {{kind: exec, argv: {argv}, env: {{REC_LOG: {json.dumps(str(lab.log))}}}}}\n"
    )
    for vid, (cap, body) in PLANS.items():
        lab.write(vid, HEAD.format(n=vid, cap=cap) + body)
    lab.commit("plans")
    lab.run()
    for vid in VARIANTS:
        lab.set_status(vid, "approved")
    lab.commit("approve", ALICE)
    lab.run()
    lab.first = {v: lab.plan(v)["plan"]["status"] for v in VARIANTS}  # type: ignore[attr-defined]
    shutil.rmtree(lab.state / "journal" / "plans%2Fgate-lost")
    for vid in SECOND:
        lab.set_status(vid, "approved")
    lab.commit("approve again", ALICE)
    lab.run()
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r54-budgets", _build)


def test_the_second_approvals_answered_a_pause(lab: Lab) -> None:
    first = lab.first  # type: ignore[attr-defined]
    assert first["gate"] == first["gate-lost"] == first["ask"] == "awaiting_approval", first
    assert first["resume"] == "failed", first


@pytest.mark.parametrize("vid", VARIANTS)
def test_no_call_past_the_cap(lab: Lab, vid: str) -> None:
    cap = PLANS[vid][0]
    rows = [json.loads(line)["argv"][0] for line in lab.log.read_text().splitlines()]
    made = [r for r in rows if r.rsplit("-", 1)[0] == vid]
    assert len(made) <= cap, made
    plan = lab.plan(vid)
    assert plan["plan"]["status"] == "failed", plan["plan"]
    assert "E_LIMIT_EXCEEDED" in json.dumps(plan["execution"]), plan["execution"]
