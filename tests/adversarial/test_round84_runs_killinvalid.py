"""Round 84 (runs, r84nestkill's own variants of ``nestkill``): a ``run --once`` SIGKILLed
while a tool runs, then a commit (or the owner's catalog) makes the plan INVALID for the next
pass in ways the attacker did not try: the killed tool idempotent, the pinned nested plan's
file replaced by text that is no plan at all, a tool only the nested plan names dropped from
the catalog; a control with nothing changed.

docs/execution.md (the journal after a crash, "A plan invalid on the next pass"): crash
recovery of a journaled run comes first, whatever made the plan invalid: the tool process the
kill left running is stopped; a start with no end of a non-idempotent tool ends ``in_doubt``
(an idempotent tool's ``failed``: nothing runs on an invalid plan, a resume runs it again);
the plan ends ``failed`` naming the in-doubt action (if any) and the validation error; the
outcome commit carries the ``execution:`` block and EXECUTION_LOG.md.

Lab (one, local mode). Tools ``rec``, ``rec2`` (the recorder again), ``kil`` (effect
``kil:<tag>``, ``DONE-<tag>``, then waits for a ``GO`` that never comes), ``kid`` (the same
program, ``idempotent: true``). Plans, each action 2 the pinned nested plan ``plans/<v>n``:
``c0`` (control): action 1 ``kil c0``; ``ni``: action 1 ``kid ni``; ``nj``: action 1 ``rec
nj``, the nested plan's action 1 ``kil njn``; ``nt``: action 1 ``kil nt``, the nested plan's
action ``rec2 ntn2``. For each in turn Alice approves, a ``run --once`` is SIGKILLed once the
waiting tool did its effect, and at once (before any later pass) its change: ``ni``: a
``PLAN.yaml`` beside the nested ``PLAN.yml`` (E_PLAN_AMBIGUOUS); ``nj``: the nested PLAN.yml
replaced by ``not: [a plan`` (a YAML error); ``nt``: the owner's catalog without ``rec2``
(E_TOOL_UNKNOWN). Two passes.

Checks: ``calls`` (each waiting tool once, nothing after it), ``stopped``, ``recorded`` (HEAD's
``execution:`` block ``failed``; ``c0``, ``nj``, ``nt``: naming ``E_ACTION_IN_DOUBT``; ``ni``:
the action ``failed``, never ``in_doubt``, the block's error the validation error), ``tree``
(nothing of the plan's left in the shared checkout).

Seen (round 84): held since r84nestkill's fix (2026-12-01); before it, ``ni``, ``nj``, ``nt``
broke as ``nestkill`` did.
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
from advkit import AGENT, ALICE, Lab, load_yaml, pid_alive, until
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

VIDS = ["c0", "ni", "nj", "nt"]
#: the tag whose tool waits when the kill comes
WAITS = {"c0": "c0", "ni": "ni", "nj": "njn", "nt": "nt"}


def _nested(v: str) -> str:
    if v == "nj":
        first = f'  - id: 1\n    tool: kil\n    why: "once"\n    params: {{t: "{v}n"}}\n'
    else:
        tool = "rec2" if v == "nt" else "rec"
        first = f'  - id: 1\n    tool: {tool}\n    why: "nested"\n    params: {{tag: "{v}n2"}}\n'
    return (
        f'plan:\n  name: "{v}n"\n  task: "nested {v}"\n  status: draft\n'
        "available_tools:\n  - name: rec\n  - name: rec2\n  - name: kil\nactions:\n" + first
    )


def _plan(v: str, pin: str) -> str:
    tool = {"ni": "kid", "nj": "rec"}.get(v, "kil")
    key = "tag" if v == "nj" else "t"
    one = f'  - id: 1\n    tool: {tool}\n    why: "once"\n    params: {{{key}: "{v}"}}\n'
    two = f'  - id: 2\n    plan: {{path: plans/{v}n, hash: {json.dumps(pin)}}}\n    why: "nested"\n'
    return (
        f'plan:\n  name: "{v}"\n  task: "variant {v}"\n  status: pending_approval\n'
        "available_tools:\n  - name: rec\n  - name: rec2\n  - name: kil\n  - name: kid\n"
        "actions:\n" + one + two
    )


def _invalidate(lab: Lab, v: str, tools: str) -> None:
    """The variant's one change right after its kill (the next ``run --once``, for the next
    variant, is the first pass that sees the plan, invalid)."""
    repo = lab.repo
    if v == "ni":
        (repo / "plans/nin/PLAN.yaml").write_text(_nested("ni"))
        lab.git("add", "plans/nin/PLAN.yaml")
    elif v == "nj":
        (repo / "plans/njn/PLAN.yml").write_text("not: [a plan\n")
        lab.git("add", "plans/njn/PLAN.yml")
    elif v == "nt":
        lab.write_config(tools=tools)
        return
    else:
        return
    lab.git("commit", "-q", "-m", f"agent: {v} edited after the kill", who=AGENT)


def _build(root: Path) -> Lab:
    kd = root / "kd"
    kd.mkdir()
    (root / "kil.py").write_text(KIL)
    kargv = json.dumps([sys.executable, str(root / "kil.py"), "{t}"])
    log = json.dumps(str(root / "lab" / "ran.log"))
    kenv = f"{{KIL_DIR: {json.dumps(str(kd))}, REC_LOG: {log}}}"
    kil = f"kil: {{kind: exec, argv: {kargv}, env: {kenv}}}\n"
    kid = f"kid: {{kind: exec, argv: {kargv}, env: {kenv}, idempotent: true}}\n"
    rargv = json.dumps([sys.executable, str(root / "lab" / "rec.py"), "{tag}"])
    rec2 = f"rec2: {{kind: exec, argv: {rargv}, env: {{REC_LOG: {log}}}}}\n"
    lab = Lab(root / "lab", tools=kil + kid + rec2)
    for v in VIDS:
        lab.write(f"{v}n", _nested(v))
    lab.commit("agent: nested plans", AGENT)
    for v in VIDS:
        pin = lab.cli("hash", f"plans/{v}n", cwd=lab.repo).stdout.strip().split()[0]
        lab.write(v, _plan(v, pin))
    lab.commit("agent plans", AGENT)
    lab.run()
    seen: dict[str, Any] = {"marked": {}}
    lab.seen = seen  # type: ignore[attr-defined]
    env = lab.env()
    env["REC_LOG"] = str(lab.log)
    for v in VIDS:
        lab.set_status(v, "approved")
        lab.git("add", f"plans/{v}/PLAN.yml")
        lab.git("commit", "-q", "-m", f"approve {v}", who=ALICE)
        p = subprocess.Popen(
            [PLANGATE, "run", "--once", "--config", str(lab.config)],
            cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            start_new_session=True,
        )  # fmt: skip
        seen["marked"][v] = until((kd / f"DONE-{WAITS[v]}").exists, 80)
        time.sleep(0.3)
        os.killpg(p.pid, signal.SIGKILL)
        p.wait(timeout=30)
        _invalidate(lab, v, kil + kid)  # before any later pass: each in turn
    seen["err"] = [lab.run(check=False).stderr[-1500:], lab.run(check=False).stderr[-800:]]
    seen["end"] = {v: dict(load_yaml(lab.git("show", f"HEAD:plans/{v}/PLAN.yml"))) for v in VIDS}
    seen["tree"] = lab.git("status", "--porcelain", "--untracked-files=all")
    seen["alive"] = {v: pid_alive(kd / f"PID-{WAITS[v]}") for v in VIDS}
    seen["calls"] = {v: (len(lab.calls(f"kil:{WAITS[v]}")), len(lab.calls(f"{v}n2"))) for v in VIDS}
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r84-killinvalid", _build)


def _seen(lab: Lab) -> dict[str, Any]:
    return lab.seen  # type: ignore[attr-defined,no-any-return]


@pytest.mark.parametrize("vid", VIDS)
def test_calls(lab: Lab, vid: str) -> None:
    seen = _seen(lab)
    assert seen["marked"][vid], seen["marked"]
    assert seen["calls"][vid] == (1, 0), seen["calls"][vid]


@pytest.mark.parametrize("vid", VIDS)
def test_stopped(lab: Lab, vid: str) -> None:
    assert _seen(lab)["alive"][vid] is False, _seen(lab)["alive"]


@pytest.mark.parametrize("vid", VIDS)
def test_recorded(lab: Lab, vid: str) -> None:
    data = _seen(lab)["end"][vid]
    block = data.get("execution") or {}
    text = json.dumps(block, default=str)
    assert data["plan"]["status"] == "failed", (data["plan"], _seen(lab)["err"])
    assert block.get("status") == "failed", text[:1500]
    if vid != "ni":
        assert "E_ACTION_IN_DOUBT" in text, text[:1500]
        return
    first = (block.get("actions") or [{}])[0]
    assert first.get("status") == "failed", text[:1500]
    assert "in_doubt" not in text, text[:1500]
    assert (block.get("error") or {}).get("code") == "E_PLAN_AMBIGUOUS", text[:1500]


@pytest.mark.parametrize("vid", VIDS)
def test_tree(lab: Lab, vid: str) -> None:
    tree = [
        line
        for line in _seen(lab)["tree"].splitlines()
        if line[3:].startswith((f"plans/{vid}/", f"plans/{vid}n/"))
    ]
    assert not tree, tree
