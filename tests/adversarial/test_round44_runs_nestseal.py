# ruff: noqa: E501
"""Round 44, exactly the approved values after a pause or a crash, where a secret travels
through a nested plan (round 43 sealed a succeeded action's real result and outputs in the
journal; a nested plan's inputs are journaled at the parent's start, redacted).

Lab ``ns`` (local mode), ``secrets.file`` holding ``TOK``. Every plan's action 1 hands
``s: "$<secrets.TOK>"`` to ``echo`` and declares output ``x: $.s`` (a login step handing back
a session token):

- ``nest-crash``: action 2 is a nested plan with ``inputs: {v: "$<actions[1].outputs.x>"}``,
  its child actions ``rec`` ``c-1`` and ``c-2`` each get ``q: "$<inputs.v>"``; the
  controller is killed (``PLANGATE_TEST_CRASH_AT=after-end:2/1``) after child 1 ended, then
  one more pass finishes the run.
- ``nest-gate``: the same nested action carries ``requires_approval: true``; Bob approves the
  gate.
- ``nest-out-gate``: a child ``echo`` hands the token back, the parent's action 2 takes it as
  output ``y``; parent action 3 (gated, Bob approves) hands ``q: "$<actions[2].outputs.y>"``
  to ``rec``.
- ``nest-out-crash``: as ``nest-out-gate`` without the gate, killed ``after-end:2``.
- ``plain`` (control): the nested plan of ``nest-crash`` without any pause.
- ``retry-crash``: action 2 (exec ``flaky``, failing on its first try only, ``on_failure:
  retry``) gets ``q: "$<actions[1].outputs.x>"`` and ``r: "$<actions[1].result.s>"``; the
  controller is killed ``after-end:2`` (the failed first try journaled), one more pass.
  Asserted: both tries got the token in ``q`` and ``r``.
- ``fb-crash``: action 2 fails (``on_failure: fallback``); fallback step ``2.1`` gets the
  output, ``2.2`` the result; killed ``after-end:2.1``, one more pass. Asserted: each step
  ran once with the token.

All held (round 44).

Asserted: each ``rec`` call ran once and got ``q`` equal to the token (what an unpaused run
resolves the approved references to), the plan completed, and the token is in no commit.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from advkit import ALICE, BOB, Lab
from test_round2_execution_kit import shared

SECRET = "Kp4Rt7Wy2Zx9Qm"
IN_VARIANTS = ["nest-crash", "nest-gate", "plain"]
#: a failing try killed after its end: the next pass retries (or runs the fallback steps)
CRASH_VARIANTS = {
    "retry-crash": "    on_failure: retry\n    retry: {attempts: 2, delay: 1}\n",
    "fb-crash": (
        "    on_failure: fallback\n    fallback:\n"
        '      - {id: "2.1", tool: rec, why: f, params: {tag: fb-crash-f, q: "$<actions[1].outputs.x>"}}\n'
        '      - {id: "2.2", tool: rec, why: f, params: {tag: fb-crash-g, q: "$<actions[1].result.s>"}}\n'
    ),
}
FLAKY = """import sys, os
data = sys.stdin.read()
mark = sys.argv[1]
with open(mark + ".log", "a") as f:
    f.write(data + "\\n")
if not os.path.exists(mark):
    open(mark, "w").close()
    sys.exit(1)
print("{}")
"""


def _crash_plan(vid: str) -> str:
    return f"""plan:
  name: {vid}
  task: t
  status: pending_approval
available_tools: [{{name: echo}}, {{name: flaky}}, {{name: rec}}]
actions:
  - id: 1
    tool: echo
    why: log in
    params: {{s: "$<secrets.TOK>"}}
    outputs: [{{name: x, path: "$.s"}}]
  - id: 2
    tool: flaky
    why: fails on its first try
{CRASH_VARIANTS[vid]}    params: {{tag: {vid}, q: "$<actions[1].outputs.x>", r: "$<actions[1].result.s>"}}
"""


OUT_VARIANTS = ["nest-out-gate", "nest-out-crash"]


def _child_in(lab: Lab, vid: str) -> None:
    lab.write(
        f"{vid}-child",
        f"""plan:
  name: c
  task: t
  status: draft
inputs: {{v: "d"}}
available_tools: [{{name: rec}}]
actions:
  - {{id: 1, tool: rec, why: w, params: {{tag: {vid}-c-1, q: "$<inputs.v>"}}}}
  - {{id: 2, tool: rec, why: w, params: {{tag: {vid}-c-2, q: "$<inputs.v>"}}}}
""",
    )


def _child_out(lab: Lab, vid: str) -> None:
    lab.write(
        f"{vid}-child",
        """plan:
  name: c
  task: t
  status: draft
available_tools: [{name: echo}]
actions:
  - id: 1
    tool: echo
    why: w
    params: {s: "$<secrets.TOK>"}
    outputs: [{name: s, path: "$.s"}]
""",
    )


def _pin(lab: Lab, vid: str) -> str:
    out = lab.cli("hash", str(lab.repo / "plans" / f"{vid}-child"))
    return out.stdout.split()[0]


def _parent_in(lab: Lab, vid: str) -> None:
    gate = "    requires_approval: true\n" if vid == "nest-gate" else ""
    lab.write(
        vid,
        f"""plan:
  name: {vid}
  task: t
  status: pending_approval
available_tools: [{{name: echo}}, {{name: rec}}]
actions:
  - id: 1
    tool: echo
    why: log in
    params: {{s: "$<secrets.TOK>"}}
    outputs: [{{name: x, path: "$.s"}}]
  - id: 2
    plan: {{path: plans/{vid}-child, hash: "{_pin(lab, vid)}"}}
    why: w
{gate}    inputs: {{v: "$<actions[1].outputs.x>"}}
""",
    )


def _parent_out(lab: Lab, vid: str) -> None:
    gate = "    requires_approval: true\n" if vid == "nest-out-gate" else ""
    lab.write(
        vid,
        f"""plan:
  name: {vid}
  task: t
  status: pending_approval
available_tools: [{{name: rec}}]
actions:
  - id: 1
    tool: rec
    why: w
    params: {{tag: {vid}-p-1}}
  - id: 2
    plan: {{path: plans/{vid}-child, hash: "{_pin(lab, vid)}"}}
    why: w
    outputs: [{{name: y, path: "$.outputs['1'].s"}}]
  - id: 3
    tool: rec
    why: w
{gate}    params: {{tag: {vid}-p-3, q: "$<actions[2].outputs.y>"}}
""",
    )


def _crash(lab: Lab, point: str) -> None:
    lab.extra_env["PLANGATE_TEST_CRASH_AT"] = point  # type: ignore[attr-defined]
    lab.run(check=False)
    del lab.extra_env["PLANGATE_TEST_CRASH_AT"]  # type: ignore[attr-defined]


def _gate(lab: Lab, slug: str) -> None:
    lab.set_status(slug, "approved")
    lab.commit(f"gate {slug}", BOB, f"plans/{slug}/PLAN.yml")


def _build(root: Path) -> Lab:
    (root / "ns").mkdir()
    secrets = root / "secrets.yml"
    secrets.write_text(f"TOK: {SECRET}\n")
    (root / "flaky.py").write_text(FLAKY)
    flaky = json.dumps([sys.executable, str(root / "flaky.py"), str(root / "{tag}")])
    lab = Lab(
        root / "ns",
        extra=f"secrets: {{file: {secrets}}}\n",
        tools=f"flaky: {{kind: exec, argv: {flaky}}}\n",
    )
    lab.extra_env = {}  # type: ignore[attr-defined]
    for vid in CRASH_VARIANTS:
        lab.write(vid, _crash_plan(vid))
    for vid in IN_VARIANTS:
        _child_in(lab, vid)
    for vid in OUT_VARIANTS:
        _child_out(lab, vid)
    lab.commit("children")
    for vid in IN_VARIANTS:
        _parent_in(lab, vid)
    for vid in OUT_VARIANTS:
        _parent_out(lab, vid)
    lab.commit("plans")
    lab.run()
    # one plan per pass where a crash hook is used (the hook kills the first plan reaching it)
    lab.approve("nest-crash", ALICE)
    _crash(lab, "after-end:2/1")
    lab.run()
    lab.approve("nest-out-crash", ALICE)
    _crash(lab, "after-end:2")
    lab.run()
    lab.approve("retry-crash", ALICE)
    _crash(lab, "after-end:2")
    lab.run()
    lab.approve("fb-crash", ALICE)
    _crash(lab, "after-end:2.1")
    lab.run()
    for vid in ("nest-gate", "plain", "nest-out-gate"):
        lab.set_status(vid, "approved")
    lab.commit("approve", ALICE)
    lab.run()
    _gate(lab, "nest-gate")
    _gate(lab, "nest-out-gate")
    lab.run()
    lab.run()
    lab.results = {"history": lab.git("log", "--all", "-p")}  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r44-nestseal", _build)


def _q(lab: Lab, tag: str) -> list[object]:
    return [json.loads(c["stdin"]).get("q") for c in lab.calls(tag)]


@pytest.mark.parametrize("vid", IN_VARIANTS)
def test_nested_inputs_reach_the_child_as_approved(lab: Lab, vid: str) -> None:
    assert (lab.plan(vid).get("execution") or {}).get("status") == "completed", lab.codes(vid)
    assert _q(lab, f"{vid}-c-1") == [SECRET]
    assert _q(lab, f"{vid}-c-2") == [SECRET]


@pytest.mark.parametrize("vid", OUT_VARIANTS)
def test_nested_outputs_reach_the_next_action_as_approved(lab: Lab, vid: str) -> None:
    assert (lab.plan(vid).get("execution") or {}).get("status") == "completed", lab.codes(vid)
    assert len(lab.calls(f"{vid}-p-1")) == 1
    assert _q(lab, f"{vid}-p-3") == [SECRET]


def test_the_token_is_in_no_commit(lab: Lab) -> None:
    assert SECRET not in lab.results["history"]  # type: ignore[attr-defined]


def test_a_try_after_a_crash_gets_the_first_tries_params(lab: Lab) -> None:
    assert (lab.plan("retry-crash").get("execution") or {}).get("status") == "completed"
    tries = (lab.root.parent / "retry-crash.log").read_text().splitlines()
    tries = [json.loads(t) for t in tries if t.strip()]
    assert tries == [{"tag": "retry-crash", "q": SECRET, "r": SECRET}] * 2, tries


def test_fallback_steps_after_a_crash_get_the_approved_values(lab: Lab) -> None:
    assert (lab.plan("fb-crash").get("execution") or {}).get("status") == "completed"
    assert _q(lab, "fb-crash-f") == [SECRET]
    assert _q(lab, "fb-crash-g") == [SECRET]
