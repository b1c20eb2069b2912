# ruff: noqa: E501
"""Round 11, runs after abort: Alice (an allowed approver) commits ``status: aborted`` while
the plan runs, from inside a tool call (the tool is an outside system the test drives; the
commit is hers). docs/approvals.md: "the controller stops a running plan before its next
action ... nothing more of the plan runs". Round 3 tried an abort between two plain
actions; these are the places between tool calls that are not "the next action":

- ``a-retry``: the aborting call fails and its action has ``on_failure: retry`` (3 more
  tries, 0.2 s apart): no retry may run;
- ``a-fallback``: the aborting call fails, ``on_failure: fallback``: its fallback step must
  not run;
- ``a-nested``: the aborting call is nested action 1/1 of a pinned plan: nested 1/2 must not
  run, nor parent action 2;
- ``a-needs``: a ``needs`` graph (1 -> 2): action 2 must not run;
- ``a-verify``: the aborting call succeeds; its ``verify`` polls a check tool that never
  holds (every 0.2 s for up to 3 s), then ``on_failure: retry``: no retry may run.

Each plan must end ``aborted`` (status and the controller's commit), the aborting tool having
run exactly once; a record that says ``completed`` must show every action done.

- ``a-precond``: the aborting call is the action's precondition check (a check tool): the
  action's own tool must not run;
- ``a-planpre``: the same as a plan-level precondition: no action may run;
- ``a-fallback2``: action 1 fails its verify, fallback step 1.1 aborts: step 1.2 must not run;
- ``a-ask`` (``on_failure: ask``) and ``a-skip`` (``on_failure: skip``): the failing call
  aborts: the plan ends ``aborted``, not paused, and action 2 never runs.

Held: ``a-retry``, ``a-needs``, ``a-planpre``, ``a-ask``, ``a-skip``; control ``v-control``
(same verify, no abort) fails honestly. **Broke** (5 variants, 6 ids):

- ``a-precond``: the action's tool runs after the abort (its precondition check committed
  it) and the plan is committed ``completed``: the write the approver withdrew happened;
- ``a-fallback2``: fallback step 1.2 runs after step 1.1's abort; committed ``completed``;

- ``a-fallback``: the abort is ignored: the fallback step runs after it and the controller
  commits ``plangate: complete`` / ``Plan-Status: completed``; ``audit`` says ok.
- ``a-verify``: the controller commits ``completed`` (PLAN.yml ``execution.status:
  completed``, EXECUTION_LOG.md "✅ completed") while action 1 is recorded ``running`` and
  action 2 ``pending`` (never ran): a false outcome in git; ``audit`` says ok.
- ``a-nested``: nested action 1/2 runs after the abort; the plan is aborted only before
  parent action 2.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from advkit import AGENT, BenchError, Lab
from test_round2_execution_kit import shared

ABT = r"""import json, os, re, subprocess, sys
sys.stdin.read()
slug, fail = sys.argv[1], sys.argv[2]
with open(os.environ["REC_LOG"], "a") as f:
    f.write(json.dumps({"argv": ["abt-" + slug], "stdin": ""}) + "\n")
repo = os.environ["LAB_REPO"]
path = os.path.join(repo, "plans", slug, "PLAN.yml")
text = subprocess.run(["git", "show", "HEAD:plans/%s/PLAN.yml" % slug], cwd=repo, capture_output=True, text=True).stdout
if "status: aborted" not in text.split("frozen:")[0]:
    text = re.sub(r"(?m)^  status: .*$", "  status: aborted", text, count=1)
    open(path, "w").write(text)
    env = dict(os.environ, GIT_AUTHOR_NAME="Alice", GIT_AUTHOR_EMAIL="alice@example.com",
               GIT_COMMITTER_NAME="Alice", GIT_COMMITTER_EMAIL="alice@example.com")
    for _ in range(50):
        if subprocess.run(["git", "commit", "-q", "-m", "abort " + slug, "--", path], cwd=repo, env=env, capture_output=True).returncode == 0:
            break
        import time; time.sleep(0.1)
print(json.dumps({"ok": True, "state": "busy"}))
sys.exit(1 if fail == "yes" else 0)
"""

HEAD = """\
plan:
  name: "{s}"
  task: "abort lands between tool calls"
  status: pending_approval
available_tools: [{{name: abt}}, {{name: rec}}, {{name: chk}}, {{name: abtc}}]
"""

PLANS = {
    "a-retry": """actions:
  - {id: 1, tool: abt, why: "w", params: {slug: a-retry, fail: "yes"}, on_failure: retry, retry: {attempts: 3, delay: 0.2}}
  - {id: 2, tool: rec, why: "w", params: {tag: a-retry}}
""",
    "a-fallback": """actions:
  - id: 1
    tool: abt
    why: "w"
    params: {slug: a-fallback, fail: "yes"}
    on_failure: fallback
    fallback:
      - {id: "1.1", tool: rec, why: "w", params: {tag: a-fallback}}
""",
    "a-needs": """actions:
  - {id: 1, tool: abt, why: "w", params: {slug: a-needs, fail: "no"}}
  - {id: 2, tool: rec, why: "w", needs: [1], params: {tag: a-needs}}
""",
    "a-precond": """actions:
  - id: 1
    tool: rec
    why: "w"
    params: {tag: a-precond}
    preconditions:
      - {tool: abtc, params: {slug: a-precond, fail: "no"}, expect: {path: $.json.ok, equals: true}}
""",
    "a-planpre": """preconditions:
  - {tool: abtc, params: {slug: a-planpre, fail: "no"}, expect: {path: $.json.ok, equals: true}}
actions:
  - {id: 1, tool: rec, why: "w", params: {tag: a-planpre}}
""",
    "a-fallback2": """actions:
  - id: 1
    tool: rec
    why: "w"
    params: {tag: a-fallback2-1}
    verify: {expect: {path: $.json.never, equals: true}}
    on_failure: fallback
    fallback:
      - {id: "1.1", tool: abt, why: "w", params: {slug: a-fallback2, fail: "no"}}
      - {id: "1.2", tool: rec, why: "w", params: {tag: a-fallback2}}
""",
    "a-ask": """actions:
  - {id: 1, tool: abt, why: "w", params: {slug: a-ask, fail: "yes"}, on_failure: ask}
  - {id: 2, tool: rec, why: "w", params: {tag: a-ask}}
""",
    "a-skip": """actions:
  - {id: 1, tool: abt, why: "w", params: {slug: a-skip, fail: "yes"}, on_failure: skip}
  - {id: 2, tool: rec, why: "w", params: {tag: a-skip}}
""",
    "v-control": """actions:
  - id: 1
    tool: rec
    why: "w"
    params: {tag: v-control-1}
    on_failure: retry
    retry: {attempts: 1, delay: 0.2}
    verify: {tool: chk, params: {tag: chk-v-control}, expect: {path: $.json.never, equals: true}, timeout: 0.6, interval: 0.2}
  - {id: 2, tool: rec, why: "w", params: {tag: v-control}}
""",
    "a-verify": """actions:
  - id: 1
    tool: abt
    why: "w"
    params: {slug: a-verify, fail: "no"}
    on_failure: retry
    retry: {attempts: 3, delay: 0.2}
    verify: {tool: chk, params: {tag: chk-a-verify}, expect: {path: $.json.never, equals: true}, timeout: 0.6, interval: 0.2}
  - {id: 2, tool: rec, why: "w", params: {tag: a-verify}}
""",
}


def _build(root: Path) -> Lab:
    abt = root / "abt.py"
    abt.write_text(ABT)
    lab = Lab(root)
    rec = str(lab.recorder)
    env = f"{{REC_LOG: {json.dumps(str(lab.log))}, LAB_REPO: {json.dumps(str(lab.repo))}, GIT_CONFIG_GLOBAL: {json.dumps(str(root / 'gitconfig'))}, HOME: {json.dumps(str(lab.home))}}}"
    lab.write_config(
        tools=f"abt: {{kind: exec, argv: {json.dumps([sys.executable, str(abt), '{slug}', '{fail}'])}, env: {env}, output_trust: trusted}}\n"
        f"abtc: {{kind: exec, argv: {json.dumps([sys.executable, str(abt), '{slug}', '{fail}'])}, env: {env}, idempotent: true, risk: low, output_trust: trusted}}\n"
        f"chk: {{kind: exec, argv: {json.dumps([sys.executable, rec, '{tag}'])}, env: {env}, idempotent: true, risk: low, output_trust: trusted}}\n"
    )
    for slug, body in PLANS.items():
        lab.write(slug, HEAD.format(s=slug) + body)
    # the nested variant: a draft plan pinned by the parent
    lab.write(
        "a-inner",
        """\
plan:
  name: "a-inner"
  task: "nested, aborts"
  status: draft
available_tools: [{name: abt}, {name: rec}]
actions:
  - {id: 1, tool: abt, why: "w", params: {slug: a-nested, fail: "no"}}
  - {id: 2, tool: rec, why: "w", params: {tag: a-nested-inner}}
""",
    )
    pin = lab.cli("hash", "plans/a-inner/PLAN.yml", cwd=lab.repo).stdout.split()[0]
    lab.write(
        "a-nested",
        HEAD.format(s="a-nested")
        + f"""actions:
  - {{id: 1, plan: {{path: plans/a-inner, hash: "{pin}"}}, why: "nested"}}
  - {{id: 2, tool: rec, why: "w", params: {{tag: a-nested}}}}
""",
    )
    lab.commit("plans", AGENT)
    lab.run()
    for slug in [*PLANS, "a-nested"]:
        lab.approve(slug)
    lab.run()
    missing = [
        t
        for t in (f"abt-{s}" for s in [*PLANS, "a-nested"] if s.startswith("a-"))
        if not lab.calls(t)
    ]
    if missing:
        raise BenchError(f"the bench did not reach {missing}")
    lab.status()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r11-abort", _build)


ABORTS = [s for s in [*PLANS, "a-nested"] if s.startswith("a-")]
#: What broke when found (round 11); fixed since: an abort, a hold or a stop is honoured before
#: every call a step makes (controller.execution.steps.Runner._attempt).
FOUND = {
    "a-fallback": "an abort committed by the failing call is ignored: the fallback step runs and the plan is committed `completed` (audit ok)",
    "a-verify": "an abort during verify polling: the plan is committed `completed` (EXECUTION_LOG ✅ completed) with action 1 `running` and action 2 `pending`, never run (audit ok)",
    "a-precond": "an abort committed while an action's precondition check runs: the action's own tool (the write) still runs and the plan is committed `completed`",
    "a-fallback2": "an abort committed by fallback step 1.1: step 1.2 still runs and the plan is committed `completed`",
    "a-nested": "an abort inside a nested plan: nested action 1/2 still runs (the abort is seen only before parent action 2)",
}
BROKE: dict[str, str] = {}


def _params(ids: list[str], only: set[str] | None = None) -> list:  # type: ignore[type-arg]
    return [
        pytest.param(
            i,
            marks=pytest.mark.xfail(
                strict=True, raises=AssertionError, reason=f"round 11: {BROKE[i]}"
            ),
        )
        if i in BROKE and (only is None or i in only)
        else i
        for i in ids
    ]


@pytest.mark.parametrize("slug", _params(ABORTS))
def test_nothing_runs_after_the_abort(lab: Lab, slug: str) -> None:
    assert len(lab.calls(f"abt-{slug}")) == 1, lab.calls(f"abt-{slug}")
    assert lab.calls(slug) == []
    assert lab.calls(f"{slug}-inner") == []
    row = lab.status()[f"plans/{slug}"]
    assert row["status"] == "aborted", row
    assert lab.plan(slug)["plan"]["status"] == "aborted"


def test_verify_polling_stops_at_the_abort(lab: Lab) -> None:
    # the check tool is read-only; it may finish the poll it is in, never start a new try
    assert len(lab.calls("chk-a-verify")) <= 16, len(lab.calls("chk-a-verify"))


@pytest.mark.parametrize("slug", _params([*ABORTS, "v-control"], only={"a-verify"}))
def test_a_completed_record_ran_every_action(lab: Lab, slug: str) -> None:
    execution = lab.plan(slug)["execution"]
    if execution["status"] == "completed":
        states = {str(a["id"]): a["status"] for a in execution["actions"]}
        assert set(states.values()) <= {"succeeded", "skipped"}, states
        assert (
            "✅ completed" not in lab.git("show", f"HEAD:plans/{slug}/EXECUTION_LOG.md")
            or "running" not in states.values()
        )


def test_control_a_verify_that_never_holds_fails(lab: Lab) -> None:
    assert lab.status()["plans/v-control"]["status"] == "failed"
    assert len(lab.calls("v-control-1")) == 2  # the first try and one retry
    assert lab.calls("v-control") == []
