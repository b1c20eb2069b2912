# ruff: noqa: E501  (plan texts and tool argv are kept on one line as written)
"""Round 3, what runs / how often: the parts of a plan other than its actions' tool calls.

- A fallback step written with ``requires_approval: true`` (the schema's FallbackStep
  takes it): the step must pause for a second approval like an action's gate, or the plan
  must be refused; it must never run unpaused.
- Step shapes that would make the engine run something other than the list (fallback steps
  with ``needs``/``ask``/their own fallbacks, ids that collide with the journal's keys for
  checks ``1:check:0`` and nested actions ``1/1``, duplicate or reordered fallback ids, a
  fallback id of another action, duplicate output names, ``needs`` cycles, gates and
  failure policies on checks): refused at validation.
- Hostile tool output meets controller-side evaluation: a catastrophic-backtracking
  ``matches`` in ``verify`` / a precondition / an RFC 9535 ``match()`` filter over 40
  attacker-written ``a``; a tool that leaves a ``setsid`` grandchild holding its stdout; a
  tool that writes 100 MB. Defence: the pass stays short and small, the bystander runs.
  No timing assert (the project has none): backtracking over 40 ``a`` one path at a time
  never ends, so the pass ending (exit 0, within the lab's 120 s wait) with each check's
  verdict shows the bound; the grandchild's plan ends at its tool's timeout (E_TIMEOUT).
- An exec argv element with two placeholders (``{ns}/{name}``) whose first value is the
  text ``{name}``: one argv element with that literal text (no second substitution).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, plan_text
from test_round3_runs_kit import shared_eager

A40 = "a" * 40 + "!"
SRC = f"import json; print(json.dumps({{'v': {A40!r}, 'items': [{{'v': {A40!r}}}]}}))"
DAEMON = """
import os, sys, time
if os.fork() == 0:
    os.setsid()
    open(sys.argv[1], "w").write(str(os.getpid()))
    time.sleep(12)
    os._exit(0)
print('{"ok": true}')
"""
FLOOD = """
import sys
chunk = b"A" * (1 << 20)
for _ in range(100):
    sys.stdout.buffer.write(chunk)
"""

REDOS = {
    "redos-verify": """\
  - id: 2
    tool: src
    why: "read outside data"
    verify: {expect: {path: "$.json.v", matches: "(a+)+b"}}
""",
    "redos-precondition": """\
  - id: 2
    tool: rec
    why: "guarded by a check over outside data"
    params: {tag: "redos-precondition-2"}
    preconditions: [{tool: chk, params: {}, expect: {path: "$.json.v", matches: "(a+)+b"}}]
""",
    "redos-jsonpath": """\
  - id: 2
    tool: src
    why: "read outside data"
    outputs: [{name: x, path: "$.json.items[?match(@.v, '(a+)+b')].v", optional: true}]
""",
}
EXPECTED = {
    "redos-verify": "E_VERIFY_FAILED",
    "redos-precondition": "E_PRECONDITION_FAILED",
    "redos-jsonpath": None,
}

BASE = """\
plan: {name: n, task: t, status: pending_approval}
available_tools: [{name: rec}, {name: chk}]
actions:
  - id: 1
    tool: rec
    why: w
    params: {tag: x}
"""
SHAPES = {
    "fb-needs": '    on_failure: fallback\n    fallback:\n      - {id: "1.1", tool: rec, why: f, needs: [1]}\n',
    "fb-ask": '    on_failure: fallback\n    fallback:\n      - {id: "1.1", tool: rec, why: f, on_failure: ask}\n',
    "fb-own-fallback": (
        '    on_failure: fallback\n    fallback:\n      - {id: "1.1", tool: rec, why: f, '
        'on_failure: fallback, fallback: [{id: "1.1.1", tool: rec, why: g}]}\n'
    ),
    "fb-id-check-key": '    on_failure: fallback\n    fallback:\n      - {id: "1:check:0", tool: rec, why: f}\n',
    "fb-id-nested-key": '    on_failure: fallback\n    fallback:\n      - {id: "1/1", tool: rec, why: f}\n',
    "fb-id-other-action": '    on_failure: fallback\n    fallback:\n      - {id: "2.1", tool: rec, why: f}\n',
    "fb-id-duplicate": (
        '    on_failure: fallback\n    fallback:\n      - {id: "1.1", tool: rec, why: f}\n'
        '      - {id: "1.1", tool: rec, why: g}\n'
    ),
    "fb-id-reordered": (
        '    on_failure: fallback\n    fallback:\n      - {id: "1.2", tool: rec, why: f}\n'
        '      - {id: "1.1", tool: rec, why: g}\n'
    ),
    "fb-without-policy": '    fallback:\n      - {id: "1.1", tool: rec, why: f}\n',
    "outputs-duplicate-name": '    outputs: [{name: x, path: "$.a"}, {name: x, path: "$.b"}]\n',
    "needs-self": "    needs: [1]\n",
    "needs-cycle": "    needs: [2]\n  - {id: 2, tool: rec, why: w, needs: [1]}\n",
    "check-with-gate": (
        "    preconditions:\n      - {tool: chk, params: {}, expect: {path: $.x, equals: 1}, "
        "requires_approval: true}\n"
    ),
    "check-with-policy": (
        "    preconditions:\n      - {tool: chk, params: {}, expect: {path: $.x, equals: 1}, "
        "on_failure: skip}\n"
    ),
}


def _build(root: Path) -> Lab:
    (root / "src.py").write_text(SRC)
    (root / "daemon.py").write_text(DAEMON)
    (root / "flood.py").write_text(FLOOD)
    py = sys.executable
    rec = root / "rec.py"
    lab = Lab(
        root,
        tools=f"""\
src: {{kind: exec, argv: ["{py}", "{root / "src.py"}"]}}
chk: {{kind: exec, argv: ["{py}", "{root / "src.py"}"], idempotent: true, risk: low}}
fail: {{kind: exec, argv: ["/bin/sh", "-c", "exit 3"]}}
daemon: {{kind: exec, argv: ["{py}", "{root / "daemon.py"}", "{root / "daemon.pid"}"], timeout: 2}}
flood: {{kind: exec, argv: ["{py}", "{root / "flood.py"}"]}}
two: {{kind: exec, argv: ["{py}", "{rec}", "{{tag}}", "{{ns}}/{{name}}"], env: {{REC_LOG: "{lab_log(root)}"}}}}
""",
        extra="demo: true\n",
    )
    tools = "  - name: rec\n"
    lab.write(
        "fb-gated",
        plan_text(
            "fb-gated",
            extra_actions="""\
  - id: 2
    tool: fail
    why: "migrate; undo it if it fails"
    on_failure: fallback
    fallback:
      - {id: "2.1", tool: rec, why: "restore, after a second look", requires_approval: true, params: {tag: "fb-gated-restore"}}
  - id: 3
    tool: rec
    why: "after"
    params: {tag: "fb-gated-3"}
""",
        ).replace(tools, tools + "  - name: fail\n"),
    )
    for name, action in REDOS.items():
        lab.write(
            name,
            plan_text(name, extra_actions=action).replace(
                tools, tools + "  - name: src\n  - name: chk\n"
            ),
        )
    for name in ("daemon", "flood"):
        lab.write(
            f"x-{name}",
            plan_text(
                f"x-{name}",
                extra_actions=f"""\
  - id: 2
    tool: {name}
    why: "a hostile tool"
  - id: 3
    tool: rec
    why: "after"
    params: {{tag: "x-{name}-3"}}
""",
            ).replace(tools, tools + f"  - name: {name}\n"),
        )
    lab.write(
        "argv-two",
        "plan:\n  name: argv\n  task: t\n  status: pending_approval\navailable_tools: [{name: two}]\n"
        'actions:\n  - {id: 1, tool: two, why: w, params: {tag: "argv-two", ns: "{name}", name: "x"}}\n',
    )
    lab.write("zz-bystander", plan_text("zz-bystander"))
    lab.commit("plans", AGENT)
    lab.run()
    slugs = ["fb-gated", *REDOS, "x-daemon", "x-flood", "argv-two", "zz-bystander"]
    for slug in slugs:
        lab.set_status(slug, "approved")
    lab.commit("approve all", ALICE)
    wrapper = (
        "import resource, subprocess, sys, time; t = time.time(); r = subprocess.run(sys.argv[1:]);"
        "print(r.returncode, time.time() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    env = lab.env()
    env["REC_LOG"] = str(lab.log)
    cmd = [py, "-c", wrapper, py, "-m", "controller", "run", "--once", "--config", str(lab.config)]
    out = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, timeout=120)
    rc, wall, rss = out.stdout.split()[-3:]
    lab.pass_rc, lab.pass_wall, lab.pass_rss_kb = int(rc), float(wall), int(rss)
    pid = root / "daemon.pid"
    lab.daemon_alive = False
    if pid.exists():
        try:
            os.kill(int(pid.read_text()), signal.SIGKILL)  # the grandchild this test started
            lab.daemon_alive = True
        except ProcessLookupError:
            pass
    lab.run()
    # the shapes: validate only
    folder = root / "shapes"
    paths = []
    for name, tail in SHAPES.items():
        (folder / name).mkdir(parents=True)
        (folder / name / "PLAN.yml").write_text(BASE + tail)
        paths.append(str(folder / name))
    res = lab.cli("validate", "--json", "--config", str(lab.config), *paths)
    rows = [json.loads(line) for line in res.stdout.splitlines() if line.startswith("{")]
    lab.shapes = {Path(r["path"]).parent.name: r for r in rows}
    lab.final = lab.status()
    return lab


def lab_log(root: Path) -> Path:
    return root / "ran.log"


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared_eager(tmp_path_factory, "r3-steps")


def test_a_gated_fallback_step_never_runs_unpaused(lab: Lab) -> None:
    ran = lab.calls("fb-gated-restore")
    status = lab.final["plans/fb-gated"]["status"]
    code = json.dumps(lab.final.get("plans/fb-gated", {}))
    assert ran == [] and (status == "awaiting_approval" or "E_SCHEMA_INVALID" in code), (
        f"the gated fallback step ran without a second approval (plan {status})"
    )


@pytest.mark.parametrize("name", list(REDOS))
def test_backtracking_patterns_over_outside_data_never_stall(lab: Lab, name: str) -> None:
    # the pass ended at all (see the docstring): backtracking over A40 to the end never would
    assert lab.pass_rc == 0
    row = lab.final[f"plans/{name}"]
    expected = EXPECTED[name]
    if expected:
        assert row["status"] == "failed" and expected in json.dumps(row), row
    else:
        assert row["status"] == "completed", row


def test_a_grandchild_holding_stdout_is_bounded_by_the_timeout(lab: Lab) -> None:
    row = lab.final["plans/x-daemon"]
    assert row["status"] == "failed" and "E_TIMEOUT" in json.dumps(row), row
    assert lab.calls("x-daemon-3") == []
    # ended at its own bound and recorded so, not at the grandchild's 12 s (no timing assert)
    assert "did not finish within 2s" in json.dumps(row), row


def test_a_100mb_tool_output_is_not_held_in_memory(lab: Lab) -> None:
    assert lab.pass_rss_kb < 150 * 1024, f"peak RSS {lab.pass_rss_kb // 1024} MiB"
    assert lab.final["plans/x-flood"]["status"] == "completed"
    assert len(lab.calls("x-flood-3")) == 1


def test_a_placeholder_value_is_never_substituted_again(lab: Lab) -> None:
    calls = lab.calls("argv-two")
    assert [c["argv"] for c in calls] == [["argv-two", "{name}/x"]]


def test_the_bystander_ran_once(lab: Lab) -> None:
    assert len(lab.calls("zz-bystander")) == 1


@pytest.mark.parametrize("shape", list(SHAPES))
def test_step_shapes_that_run_other_than_written_are_refused(lab: Lab, shape: str) -> None:
    row = lab.shapes[shape]
    assert row["valid"] is False, f"{shape} is valid"
    assert {e["code"] for e in row["errors"]} & {"E_SCHEMA_INVALID", "E_ACTION_IDS"}, row["errors"]
