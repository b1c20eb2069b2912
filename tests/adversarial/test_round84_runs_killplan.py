"""Round 84 (runs): ``nestkill``'s question for a TOP-LEVEL action: what the agent (or the
owner) commits between a SIGKILL mid-action and the next pass makes the plan itself invalid or
odd: the running PLAN.yml rewritten by the agent (an action added), a ``PLAN.md`` source beside
it, ``EXECUTION_LOG.md`` committed as a symlink, the plan's tool dropped from the owner's
catalog, a ``PLAN.yaml`` beside the pinned NESTED plan's file (two plan files in its folder);
a control with nothing committed.

docs/execution.md (journal after a crash): "start, no end ... the tool process it left running
(if any) is stopped ... an end ``in_doubt`` is written and the plan ends ``failed`` with
E_ACTION_IN_DOUBT"; "While it runs, the engine has the approved text in hand ... an edit of the
running plan in place stays ``executing`` and is written over with what ran"; "What gets
committed is what the engine produced, not what the files say".

Lab (one, local mode). Tools ``rec``, ``rec2`` (the recorder again, only ``tc`` uses it),
``kil`` (effect ``kil:<tag>``, ``DONE-<tag>``, waits on its first call). Plans: ``t0``,
``pe``, ``sm``, ``lg``: action 1 ``kil <v>``, action 2 ``rec <v>2``; ``tc``: action 2 ``rec2
tc2``; ``n2``: action 2 the pinned nested plan ``plans/n2n`` (``rec n2n2``). For each in turn
Alice approves and a ``run --once`` is SIGKILLed once ``kil`` did its effect. Then the agent's
one commit (``pe``: action 3 ``rec pe-added`` appended; ``sm``: ``plans/sm/PLAN.md`` holding
the plan; ``lg``: ``plans/lg/EXECUTION_LOG.md`` a symlink to ``../../README``; ``n2``:
``plans/n2n/PLAN.yaml`` a copy) and the owner's config without ``rec2``; two passes.

Checks: ``calls`` (``kil`` once, action 2 never, ``pe-added`` never), ``stopped``, ``doubt``
(HEAD's PLAN.yml ``execution:`` ``failed`` naming ``E_ACTION_IN_DOUBT``, or the plan held
with nothing of a false outcome), ``tree`` (none of the controller's writes left in the
checkout).

Seen (round 84): ``tc`` and ``n2`` BREAK (class ``nestkill``, 6 ids: ``stopped``, ``doubt``,
``tree``): the class is not about nesting but about a plan found INVALID by the pass after a
kill. ``tc``: the next pass commits ``plangate: fail plans/tc`` "E_TOOL_UNKNOWN: ... tool
'rec2' is not in the controller's catalog (known: echo, kil, rec)", ``n2``: "E_PLAN_AMBIGUOUS:
... nested plan plans/n2n: the folder holds both PLAN.yml and PLAN.yaml", each changing only
``status: failed``: HEAD's PLAN.yml has no ``execution:`` block though ``kil`` ran, ``git status
--porcelain`` keeps ``?? plans/tc/EXECUTION_LOG.md`` (the killed pass's log), and the ``kil``
process the kill left waiting still runs after two passes. Held: ``t0``, ``pe`` (the agent's
added action never runs; HEAD holds what ran, no ``pe-added``), ``sm`` (a PLAN.md beside),
``lg`` (a committed symlink log): each ``plangate: fail`` "E_ACTION_IN_DOUBT: action 1 (kil)
started ... its tool process ... was still running and was stopped", the block ``failed``.

Fixed (2026-12-01, r84nestkill): ``Engine.run`` consults the run's journal before the plan's
validity, one path for every reason the plan is invalid on the next pass: the tool process
the kill left running is stopped, each open start ends ``in_doubt`` (an idempotent tool's
``failed``), the plan fails E_ACTION_IN_DOUBT naming the validation error too, and the
outcome commit carries its ``execution:`` block and log (``PlanRun.recover_invalid``).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab, cases, load_yaml, pid_alive, until
from mcpkit import PLANGATE
from test_round2_execution_kit import shared

KIL = r"""
import json, os, sys, time
tag = sys.argv[1]
d = os.environ["KIL_DIR"]
second = os.path.exists(os.path.join(d, "DONE-" + tag))
with open(os.environ["REC_LOG"], "a", encoding="utf-8") as f:
    f.write(json.dumps({"argv": ["kil:" + tag], "stdin": ""}) + "\n")
open(os.path.join(d, "PID-" + tag), "w").write(str(os.getpid()))
open(os.path.join(d, "DONE-" + tag), "w").write("1")
for _ in range(0 if second else 600):
    if os.path.exists(os.path.join(d, "GO-" + tag)):
        break
    time.sleep(0.1)
print('{"ok": true}')
"""

VIDS = ["t0", "pe", "sm", "lg", "tc", "n2"]


def _plan(v: str, pin: str = "") -> str:
    if v == "n2":
        two = f'  - id: 2\n    plan: {{path: plans/n2n, hash: {json.dumps(pin)}}}\n    why: "nested"\n'  # noqa: E501
    else:
        tool = "rec2" if v == "tc" else "rec"
        two = f'  - id: 2\n    tool: {tool}\n    why: "after"\n    params: {{tag: "{v}2"}}\n'
    return (
        f'plan:\n  name: "{v}"\n  task: "variant {v}"\n  status: pending_approval\n'
        "available_tools:\n  - name: rec\n  - name: rec2\n  - name: kil\nactions:\n"
        f'  - id: 1\n    tool: kil\n    why: "once"\n    params: {{t: "{v}"}}\n' + two
    )


NESTED = (
    'plan:\n  name: "n2n"\n  task: "nested"\n  status: draft\n'
    "available_tools:\n  - name: rec\nactions:\n"
    '  - id: 1\n    tool: rec\n    why: "nested"\n    params: {tag: "n2n2"}\n'
)


def _build(root: Path) -> Lab:
    kd = root / "kd"
    kd.mkdir()
    (root / "kil.py").write_text(KIL)
    kargv = json.dumps([sys.executable, str(root / "kil.py"), "{t}"])
    log = json.dumps(str(root / "lab" / "ran.log"))
    kenv = f"{{KIL_DIR: {json.dumps(str(kd))}, REC_LOG: {log}}}"
    kil = f"kil: {{kind: exec, argv: {kargv}, env: {kenv}}}\n"
    rargv = json.dumps([sys.executable, str(root / "lab" / "rec.py"), "{tag}"])
    rec2 = f"rec2: {{kind: exec, argv: {rargv}, env: {{REC_LOG: {log}}}}}\n"
    lab = Lab(root / "lab", tools=kil + rec2)
    lab.write("n2n", NESTED)
    lab.commit("agent: nested plan", AGENT)
    pin = lab.cli("hash", "plans/n2n", cwd=lab.repo).stdout.strip().split()[0]
    for v in VIDS:
        lab.write(v, _plan(v, pin))
    lab.commit("agent plans", AGENT)
    lab.run()
    seen: dict[str, Any] = {"marked": {}}
    lab.seen = seen  # type: ignore[attr-defined]
    env = lab.env()
    env["REC_LOG"] = str(lab.log)
    for v in VIDS:  # Alice adds her one file: never the killed pass's checkpoint writes
        lab.set_status(v, "approved")
        lab.git("add", f"plans/{v}/PLAN.yml")
        lab.git("commit", "-q", "-m", f"approve {v}", who=ALICE)
        p = subprocess.Popen(
            [PLANGATE, "run", "--once", "--config", str(lab.config)],
            cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            start_new_session=True,
        )  # fmt: skip
        seen["marked"][v] = until((kd / f"DONE-{v}").exists, 80)
        time.sleep(0.3)
        os.killpg(p.pid, signal.SIGKILL)
        p.wait(timeout=30)
    repo = lab.repo
    pe = lab.git("show", "HEAD:plans/pe/PLAN.yml")
    two = '    params: {tag: "pe2"}\n'
    pe = pe.replace(
        two, two + '  - id: 3\n    tool: rec\n    why: "added"\n    params: {tag: "pe-added"}\n'
    )
    (repo / "plans/pe/PLAN.yml").write_text(pe)
    (repo / "plans/sm/PLAN.md").write_text(
        "# sm\n\n```yaml\n" + _plan("sm").replace("rec ", "rec ") + "```\n"
    )
    log_path = repo / "plans/lg/EXECUTION_LOG.md"
    if log_path.exists() or log_path.is_symlink():
        log_path.unlink()
    os.symlink("../../README", log_path)
    (repo / "plans/n2n/PLAN.yaml").write_text(NESTED)
    lab.git(
        "add", "plans/pe/PLAN.yml", "plans/sm/PLAN.md", "plans/lg/EXECUTION_LOG.md",
        "plans/n2n/PLAN.yaml",
    )  # fmt: skip
    lab.git("commit", "-q", "-m", "agent: edits after the kill", who=AGENT)
    lab.write_config(tools=kil)
    seen["err"] = [lab.run(check=False).stderr[-1500:], lab.run(check=False).stderr[-800:]]
    seen["end"] = {v: dict(load_yaml(lab.git("show", f"HEAD:plans/{v}/PLAN.yml"))) for v in VIDS}
    seen["rows"] = {k: json.dumps(r)[:900] for k, r in lab.status().items()}
    seen["tree"] = lab.git("status", "--porcelain", "--untracked-files=all")
    seen["alive"] = {v: pid_alive(kd / f"PID-{v}") for v in VIDS}
    seen["calls"] = {
        v: (len(lab.calls(f"kil:{v}")), len(lab.calls(f"{v}2")), len(lab.calls("pe-added")))
        for v in VIDS
    }
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r84-killplan", _build)


def _seen(lab: Lab) -> dict[str, Any]:
    return lab.seen  # type: ignore[attr-defined,no-any-return]


BROKEN: dict[str, Any] = {}  # nestkill fixed (r84nestkill)


@pytest.mark.parametrize("vid", VIDS)
def test_calls(lab: Lab, vid: str) -> None:
    seen = _seen(lab)
    assert seen["marked"][vid], seen["marked"]
    assert seen["calls"][vid] == (1, 0, 0), seen["calls"][vid]


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))
def test_stopped(lab: Lab, vid: str) -> None:
    assert _seen(lab)["alive"][vid] is False, _seen(lab)["alive"]


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))
def test_doubt(lab: Lab, vid: str) -> None:
    seen = _seen(lab)
    data, row = seen["end"][vid], seen["rows"].get(f"plans/{vid}", "")
    block = data.get("execution") or {}
    if '"held": null' not in row and data["plan"]["status"] == "executing":
        return  # held: nothing of an outcome committed yet
    text = json.dumps(block, default=str)
    assert block.get("status") == "failed", (text[:1500], row[:600])
    assert "E_ACTION_IN_DOUBT" in text, text[:1500]


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))
def test_tree(lab: Lab, vid: str) -> None:
    tree = [
        line for line in _seen(lab)["tree"].splitlines() if line[3:].startswith(f"plans/{vid}/")
    ]
    assert not tree, tree
