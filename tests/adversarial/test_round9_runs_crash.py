# ruff: noqa: E501  (plan texts are kept on one line as written)
"""Round 9, how often: the controller dies (SIGKILL, as in a crash or an OOM kill) in the
middle of the *parts around* a non-idempotent action's call, and is started again.

Round 1 killed it mid-action (the journal then says the action is in doubt). Here the kill
lands in a check or a fallback step that runs after, or a precondition that runs before a
retry of, a non-idempotent ``once`` tool that already ran; or in the next action of a nested
plan. The ``killer`` tool (idempotent, low risk: it may check) records each call and kills
its parent, the controller, on the call number its ``mode`` names (once per variant: a
counter file). Each ``run --once`` pass after the approvals may die; five passes are run.

Defence asserted (docs/execution.md: "An action the journal records as succeeded or skipped
never runs again", docs/configuration.md: ``idempotent``: only a tool "safe to run twice" is
re-run when in doubt; ``retry.attempts`` caps the tries): ``once`` was called exactly once
(``retry-kill``: at most ``attempts + 1`` times), and the plan did not end ``completed``
with its calls unaccounted for.

- ``verify-kill``: ``once`` succeeds, its ``verify`` check (killer) kills the controller.
- ``fallback-kill``: ``once`` fails, its fallback step 1.1 (killer) kills it.
- ``retry-kill``: ``once`` fails with ``on_failure: retry`` (``attempts: 1``); the
  precondition of the second try (killer, call 2) kills it: at most 2 calls of ``once``.
- ``nested-kill``: a nested plan's action 1 is ``once``, its action 2 (killer) kills it.
- ``bystander``: an honest plan in the same repo still runs once.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, Lab
from test_round9_runs_kit import shared_results

TOOL = r"""
import json, os, sys
tag, mode = sys.argv[1:3]
log = os.environ["REC_LOG"]
with open(log, "a", encoding="utf-8") as f:
    f.write(json.dumps({"argv": [tag, mode], "stdin": ""}) + "\n")
counter = log + "." + tag + ".n"
n = int(open(counter).read()) + 1 if os.path.exists(counter) else 1
open(counter, "w").write(str(n))
if mode.startswith("kill@") and n == int(mode[5:]):
    os.kill(os.getppid(), 9)
if mode == "fail":
    print("failed on purpose", file=sys.stderr)
    sys.exit(1)
print(json.dumps({"ok": True}))
"""

VARIANTS = ["verify-kill", "fallback-kill", "retry-kill", "nested-kill"]


def _plan(vid: str, actions: str, tools: str = "once, killer") -> str:
    avail = ", ".join("{name: " + t.strip() + "}" for t in tools.split(","))
    return f'plan:\n  name: "{vid}"\n  task: "round 9 crash variant {vid}"\n  status: pending_approval\navailable_tools: [{avail}]\nactions:\n{actions}'


def _build(root: Path) -> dict[str, Any]:
    lab = Lab(root)
    tool = root / "tool.py"
    tool.write_text(TOOL)
    argv = json.dumps([sys.executable, str(tool), "{tag}", "{mode}"])
    env = f"env: {{REC_LOG: {json.dumps(str(lab.log))}}}"
    lab.write_config(
        tools=f"once: {{kind: exec, idempotent: false, argv: {argv}, {env}}}\n"
        f"killer: {{kind: exec, idempotent: true, risk: low, argv: {argv}, {env}}}\n"
    )
    lab.write(
        "verify-kill",
        _plan(
            "verify-kill",
            '  - id: 1\n    tool: once\n    why: "a call that must not repeat"\n    params: {tag: "verify-kill", mode: "ok"}\n    verify: {tool: killer, params: {tag: "verify-kill-check", mode: "kill@1"}, expect: {path: "$.json.ok", equals: true}}\n',
        ),
    )
    lab.write(
        "fallback-kill",
        _plan(
            "fallback-kill",
            '  - id: 1\n    tool: once\n    why: "a call that must not repeat"\n    params: {tag: "fallback-kill", mode: "fail"}\n    on_failure: fallback\n    fallback:\n      - {id: "1.1", tool: killer, why: "clean up", params: {tag: "fallback-kill-step", mode: "kill@1"}}\n',
        ),
    )
    lab.write(
        "retry-kill",
        _plan(
            "retry-kill",
            '  - id: 1\n    tool: once\n    why: "a call tried twice at most"\n    params: {tag: "retry-kill", mode: "fail"}\n    on_failure: retry\n    retry: {attempts: 1, delay: 0.05, max_delay: 0.05, backoff: 1}\n    preconditions: [{tool: killer, params: {tag: "retry-kill-pre", mode: "kill@2"}, expect: {path: "$.json.ok", equals: true}}]\n',
        ),
    )
    lab.write(
        "inner",
        'plan:\n  name: "inner"\n  task: "once then a crash"\n  status: draft\navailable_tools: [{name: once}, {name: killer}]\nactions:\n  - {id: 1, tool: once, why: "must not repeat", params: {tag: "nested-kill", mode: "ok"}}\n  - {id: 2, tool: killer, why: "crash", params: {tag: "nested-kill-2", mode: "kill@1"}}\n',
    )
    lab.commit("submit inner", AGENT)
    digest = (
        lab.cli("hash", str(lab.repo / "plans" / "inner"), cwd=lab.repo).stdout.strip().split()[0]
    )
    lab.write(
        "nested-kill",
        _plan(
            "nested-kill",
            f'  - id: 1\n    plan: {{path: plans/inner, hash: "{digest}"}}\n    why: "once, then a crash"\n',
            tools="once, killer",
        ),
    )
    lab.write(
        "zz-bystander",
        _plan(
            "zz-bystander",
            '  - {id: 1, tool: rec, why: "honest", params: {tag: "zz-bystander"}}\n',
            tools="rec",
        ),
    )
    lab.commit("submit the round 9 crash plans", AGENT)
    lab.run()
    for vid in [*VARIANTS, "zz-bystander"]:
        lab.approve(vid)
    exits = [lab.run(check=False).returncode for _ in range(5)]
    st = json.loads(lab.cli("status", "--json", "--config", str(lab.config)).stdout or "[]")
    return {
        "exits": exits,
        "calls": {
            t: len(lab.calls(t))
            for t in [
                *VARIANTS,
                "zz-bystander",
                "verify-kill-check",
                "fallback-kill-step",
                "retry-kill-pre",
                "nested-kill-2",
            ]
        },
        "status": {r["plan"]: {k: r.get(k) for k in ("status", "reason", "waiting")} for r in st},
        "files": {
            v: lab.git("show", f"HEAD:plans/{v}/PLAN.yml", check=False)[-1500:] for v in VARIANTS
        },
    }


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return shared_results(tmp_path_factory, "r9-crash")


BROKEN: dict[str, str] = {}
LIMIT = {"retry-kill": 2}


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
def test_a_crash_around_a_call_never_repeats_it(results: dict[str, Any], vid: str) -> None:
    calls = results["calls"]
    assert calls[vid] >= 1, (vid, calls, results["exits"])
    assert calls[vid] <= LIMIT.get(vid, 1), (
        vid,
        calls,
        results["status"].get(f"plans/{vid}"),
        results["files"][vid],
    )


def test_the_bystander_runs_once(results: dict[str, Any]) -> None:
    assert results["calls"]["zz-bystander"] == 1, results
    assert -9 in results["exits"], results["exits"]  # the kills did land
