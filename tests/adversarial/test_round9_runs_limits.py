# ruff: noqa: E501  (plan texts are kept on one line as written)
"""Round 9, how often: ``limits.max_tool_calls`` across the ways one plan's run is cut into
pieces, and an abort that lands during a retry's back-off.

docs/configuration.md: ``limits.max_tool_calls`` is the number of "tool calls a plan's runs
may make in all, retries included; the call past it is not made and the plan fails
E_LIMIT_EXCEEDED (even with on_failure: skip)". A plan's own ``limits:`` (hashed, shown to
the reviewer) lowers it. No earlier round touched this cap. The ``flaky`` tool always fails
(records each call first). Each plan here sets ``limits: {max_tool_calls: 2}`` (``nested``:
1) and the defence asserted is: the tools together were called at most that often.

- ``ask-loop``: action 1 ``on_failure: ask``; Alice answers the ask twice (each answer one
  try): the third try is past the cap and must not be made.
- ``resume-loop``: action 1 fails (``stop``); Alice resumes it twice (``failed``→``approved``).
- ``retry``: ``on_failure: retry`` with ``attempts: 4``.
- ``fallback``: the failing action's three fallback steps (``rec``) count as tool calls.
- ``nested``: a parent with ``max_tool_calls: 1`` whose action 1 is a pinned nested plan of
  three ``rec`` actions (the nested plan sets no limit of its own).
- ``plan-null`` / ``plan-higher``: the config caps at 3; a plan's ``limits`` of ``null`` or
  100 never raises it (retry ``attempts: 6``).
- ``crash-loop`` (own repo): an idempotent tool kills the controller mid-call every time;
  each restart re-runs the action in doubt until the cap stops it (held: 2 calls). Broke:
  the record then shows the failed plan's action still ``running``, no error, status reason
  null (the commit message alone says E_LIMIT_EXCEEDED).
- ``skip-cap``: cap 1, action 1 fails with ``skip``, action 2 is not made (held); broke: no
  error recorded in PLAN.yml/EXECUTION_LOG.md, status reason null.
- ``gates-parallel``: two gated actions ready at once; one gate approval opens one (held).
- ``abort-parallel``: Alice's abort lands while a parallel sibling runs: the action after
  the sibling never starts (held).
- ``abort-backoff``: action 1 (``retry``, ``delay: 2``) commits Alice's ``status: aborted``
  in the shared checkout, then fails; the abort is there during the back-off
  (docs/execution.md: abort is "checked before each action starts, during a retry's
  back-off"): the second try is never made, the plan ends ``aborted``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, Lab
from test_round9_runs_kit import shared_results

FLAKY = r"""
import json, os, re, subprocess, sys
tag, mode, folder = sys.argv[1:4]
with open(os.environ["REC_LOG"], "a", encoding="utf-8") as f:
    f.write(json.dumps({"argv": [tag, mode], "stdin": ""}) + "\n")
if mode == "kill":  # the controller dies mid-call (as in a crash), every time
    os.kill(os.getppid(), 9)
if mode == "sleep":
    import time
    time.sleep(1.5)
    print(json.dumps({"ok": True}))
    sys.exit(0)
if mode in ("abort", "abort-ok"):
    env = dict(os.environ, GIT_AUTHOR_NAME="Alice", GIT_AUTHOR_EMAIL="alice@example.com",
               GIT_COMMITTER_NAME="Alice", GIT_COMMITTER_EMAIL="alice@example.com")
    plan = os.path.join(folder, "PLAN.yml")
    text = re.sub(r"(?m)^  status: .*$", "  status: aborted", open(plan).read(), count=1)
    open(plan, "w").write(text)
    subprocess.run(["git", "commit", "-q", "-m", "abort " + tag, "--", plan], cwd=folder, env=env, check=True)
if mode == "abort-ok":
    print(json.dumps({"ok": True}))
    sys.exit(0)
print("flaky failed", file=sys.stderr)
sys.exit(1)
"""

VARIANTS = [
    "ask-loop",
    "resume-loop",
    "retry",
    "fallback",
    "nested",
    "abort-backoff",
    "plan-null",
    "plan-higher",
    "crash-loop",
]
CAP = {v: 2 for v in VARIANTS} | {"abort-backoff": 1, "plan-null": 3, "plan-higher": 3}


def _plan(lab: Lab, vid: str, limit: int, action: str, tools: str = "flaky, rec") -> str:
    return f"""\
plan:
  name: "{vid}"
  task: "round 9 limits variant {vid}"
  status: pending_approval
limits: {{max_tool_calls: {limit}}}
available_tools: [{", ".join("{name: " + t.strip() + "}" for t in tools.split(","))}]
actions:
{action}"""


def _flaky(lab: Lab, vid: str, extra: str, mode: str = "fail") -> str:
    folder = lab.repo / "plans" / vid
    return f'  - id: 1\n    tool: flaky\n    why: "a call that fails"\n    params: {{tag: "{vid}", mode: "{mode}", folder: "{folder}"}}\n{extra}'


def _build(root: Path) -> dict[str, Any]:
    lab = Lab(root)
    flaky = root / "flaky.py"
    flaky.write_text(FLAKY)
    argv = json.dumps([sys.executable, str(flaky), "{tag}", "{mode}", "{folder}"])
    tools = f"flaky: {{kind: exec, argv: {argv}, env: {{REC_LOG: {json.dumps(str(lab.log))}}}}}\n"
    tools += f"killer: {{kind: exec, idempotent: true, argv: {argv}, env: {{REC_LOG: {json.dumps(str(lab.log))}}}}}\n"
    lab.write_config(tools=tools, extra="limits: {max_tool_calls: 3}\n")
    retry6 = "    on_failure: retry\n    retry: {attempts: 6, delay: 0.05, max_delay: 0.05, backoff: 1}\n"
    lab.write(
        "plan-null",
        _plan(lab, "plan-null", 2, _flaky(lab, "plan-null", retry6)).replace(
            "max_tool_calls: 2", "max_tool_calls: null"
        ),
    )
    lab.write("plan-higher", _plan(lab, "plan-higher", 100, _flaky(lab, "plan-higher", retry6)))
    lab.write(
        "ask-loop", _plan(lab, "ask-loop", 2, _flaky(lab, "ask-loop", "    on_failure: ask\n"))
    )
    lab.write("resume-loop", _plan(lab, "resume-loop", 2, _flaky(lab, "resume-loop", "")))
    lab.write(
        "retry",
        _plan(
            lab,
            "retry",
            2,
            _flaky(
                lab,
                "retry",
                "    on_failure: retry\n    retry: {attempts: 4, delay: 0.05, max_delay: 0.05, backoff: 1}\n",
            ),
        ),
    )
    fb = "".join(
        f'      - {{id: "1.{i}", tool: rec, why: "fallback {i}", params: {{tag: "fallback"}}}}\n'
        for i in (1, 2, 3)
    )
    lab.write(
        "fallback",
        _plan(
            lab,
            "fallback",
            2,
            _flaky(lab, "fallback", "    on_failure: fallback\n    fallback:\n" + fb),
        ),
    )
    lab.write(
        "abort-backoff",
        _plan(
            lab,
            "abort-backoff",
            5,
            _flaky(
                lab,
                "abort-backoff",
                "    on_failure: retry\n    retry: {attempts: 3, delay: 2, max_delay: 2, backoff: 1}\n",
                mode="abort",
            ),
        ),
    )
    # the nested plan: three rec actions, a draft meant only for nesting
    inner = "".join(
        f'  - {{id: {i}, tool: rec, why: "inner {i}", params: {{tag: "nested"}}}}\n'
        for i in (1, 2, 3)
    )
    lab.write(
        "inner",
        'plan:\n  name: "inner"\n  task: "three calls"\n  status: draft\navailable_tools: [{name: rec}]\nactions:\n'
        + inner,
    )
    lab.commit("submit inner", AGENT)
    digest = (
        lab.cli("hash", str(lab.repo / "plans" / "inner"), cwd=lab.repo).stdout.strip().split()[0]
    )
    lab.write(
        "nested",
        _plan(
            lab,
            "nested",
            2,
            f'  - id: 1\n    plan: {{path: plans/inner, hash: "{digest}"}}\n    why: "three calls in one action"\n',
            tools="rec",
        ),
    )
    gates = "".join(
        f'  - {{id: {i}, tool: rec, why: "gated {i}", needs: [1], requires_approval: true, params: {{tag: "gates-parallel", n: {i}}}}}\n'
        for i in (2, 3)
    )
    lab.write(
        "gates-parallel",
        _plan(
            lab,
            "gates-parallel",
            50,
            '  - {id: 1, tool: rec, why: "first", needs: [], params: {tag: "gates-parallel", n: 1}}\n'
            + gates,
            tools="rec",
        ),
    )
    folder = lab.repo / "plans" / "abort-parallel"
    lab.write(
        "abort-parallel",
        _plan(
            lab,
            "abort-parallel",
            50,
            f'  - {{id: 1, tool: flaky, why: "aborts", needs: [], params: {{tag: "abort-parallel", mode: "abort-ok", folder: "{folder}"}}}}\n'
            f'  - {{id: 2, tool: flaky, why: "slow", needs: [], params: {{tag: "abort-parallel", mode: "sleep", folder: "{folder}"}}}}\n'
            '  - {id: 3, tool: rec, why: "after the slow one", needs: [2], params: {tag: "abort-parallel-3"}}\n',
        ),
    )
    lab.write(
        "skip-cap",
        _plan(
            lab,
            "skip-cap",
            1,
            _flaky(lab, "skip-cap", "    on_failure: skip\n")
            + '  - {id: 2, tool: rec, why: "past the cap", params: {tag: "skip-cap-2"}}\n',
        ),
    )
    lab.commit("submit the round 9 limit plans", AGENT)
    lab.run()
    for vid in [*VARIANTS[:-1], "gates-parallel", "abort-parallel", "skip-cap"]:
        lab.approve(vid)
    lab.run()
    gate_calls = [len(lab.calls("gates-parallel"))]
    lab.approve("gates-parallel", message="approve the gate of gates-parallel")
    # answer the ask / resume the failure, twice
    for _ in range(2):
        for vid in ("ask-loop", "resume-loop"):
            lab.approve(vid, message=f"approve {vid} again")
        lab.run()
    # crash-loop: its own repo (a crash ends the whole pass); killer is idempotent, so after
    # each crash the action in doubt is run again: three passes, cap 2
    crash = Lab(root / "crash")
    crash.write_config(tools=tools)
    crash.write(
        "crash-loop",
        _plan(
            crash,
            "crash-loop",
            2,
            _flaky(crash, "crash-loop", "", mode="kill").replace("tool: flaky", "tool: killer"),
            tools="killer",
        ),
    )
    crash.commit("submit crash-loop", AGENT)
    crash.run()
    crash.approve("crash-loop")
    crash_exits = [crash.run(check=False).returncode for _ in range(3)]
    crash_st = json.loads(
        crash.cli("status", "--json", "--config", str(crash.config)).stdout or "[]"
    )
    st = json.loads(lab.cli("status", "--json", "--config", str(lab.config)).stdout or "[]")
    return {
        "calls": {v: len(lab.calls(v)) for v in VARIANTS[:-1]}
        | {"crash-loop": len(lab.calls("crash-loop"))},  # killer logs to the first lab's ran.log
        "status": {r["plan"]: r for r in st + crash_st},
        "crash_exits": crash_exits,
        "extra_calls": {
            t: len(lab.calls(t))
            for t in ("abort-parallel", "abort-parallel-3", "skip-cap", "skip-cap-2")
        },
        "gate_calls": [*gate_calls, len(lab.calls("gates-parallel"))],
        "gate_params": [json.loads(c["stdin"]) for c in lab.calls("gates-parallel")],
        "digest": digest,
        "files": {v: lab.read(v) for v in VARIANTS[:-1]} | {"crash-loop": crash.read("crash-loop")},
    }


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return shared_results(tmp_path_factory, "r9-limits")


BROKEN: dict[str, str] = {}


@pytest.mark.parametrize(
    "vid",
    [
        pytest.param(
            v,
            marks=[pytest.mark.xfail(strict=True, raises=AssertionError, reason=BROKEN[v])]
            if v in BROKEN
            else [],
        )
        for v in VARIANTS
    ],
)
def test_max_tool_calls_holds_across_pieces_of_a_run(results: dict[str, Any], vid: str) -> None:
    calls = results["calls"][vid]
    row = results["status"].get(f"plans/{vid}", {})
    assert calls >= 1, (vid, calls, row)  # the plan did start (the bench worked)
    assert calls <= CAP[vid], (vid, calls, row, results["files"][vid][-1500:])
    if vid == "abort-backoff":
        assert row.get("status") == "aborted", row


def test_a_crash_loop_that_hits_the_cap_is_recorded_as_it_ended(results: dict[str, Any]) -> None:
    """crash-loop: killer is idempotent and kills the controller mid-call; each restart runs
    the action in doubt again until the cap (2) stops it. The fail commit's message says
    E_LIMIT_EXCEEDED; the committed PLAN.yml / EXECUTION_LOG.md and ``status`` must say so too,
    not show a failed plan whose action is still ``running`` with no error."""
    row = results["status"]["plans/crash-loop"]
    text = results["files"]["crash-loop"]
    assert results["crash_exits"][:2] == [-9, -9], results["crash_exits"]
    assert row["status"] == "failed", row
    assert "E_LIMIT_EXCEEDED" in json.dumps(row), row
    assert "status: running" not in text.split("execution:", 1)[1], text[-800:]


def test_one_gate_approval_opens_one_of_two_parallel_gates(results: dict[str, Any]) -> None:
    """gates-parallel: actions 2 and 3 both need only action 1 and are both gated
    (``requires_approval``). The plan's approval runs action 1 and pauses; Alice approves
    the gate once; docs/approvals.md: each approval answers one pause. The second gated
    action must wait for a second gate approval."""
    calls = results["gate_calls"]
    assert calls[0] == 1, results["gate_params"]
    assert calls[-1] == 2, (calls, results["gate_params"])
    assert results["status"]["plans/gates-parallel"]["status"] == "awaiting_approval", results[
        "status"
    ]["plans/gates-parallel"]


def test_an_abort_in_a_parallel_graph_starts_nothing_more(results: dict[str, Any]) -> None:
    """abort-parallel: actions 1 and 2 need nothing (they run at once); action 1 commits
    Alice's ``status: aborted`` and succeeds while action 2 still runs (1.5 s); action 3 needs
    action 2. docs/execution.md: an abort is checked before each action starts: 3 never runs
    and the plan ends ``aborted``."""
    calls = results["extra_calls"]
    row = results["status"]["plans/abort-parallel"]
    assert calls["abort-parallel"] == 2, calls  # actions 1 and 2 ran
    assert calls["abort-parallel-3"] == 0, (calls, row)
    assert row["status"] == "aborted", row


def test_the_cap_holds_past_a_skip(results: dict[str, Any]) -> None:
    """skip-cap: cap 1; action 1 fails with ``on_failure: skip``; action 2 would be call 2:
    not made, the plan fails E_LIMIT_EXCEEDED (docs/configuration.md: even with skip)."""
    calls = results["extra_calls"]
    row = results["status"]["plans/skip-cap"]
    assert calls["skip-cap"] == 1 and calls["skip-cap-2"] == 0, (calls, row)  # held
    assert row["status"] == "failed" and "E_LIMIT_EXCEEDED" in str(row.get("reason")), row
