"""Round 84 (runs): what the agent commits between a SIGKILL and the next pass, when the kill
fell inside a NESTED plan's action (``nesttwin`` showed a nested folder's twin there skips
the crash's recovery): the parent's folder deleted, moved, its file renamed to PLAN.yaml, a
PLAN.yaml beside it, the nested plan's file edited, the nested folder deleted or replaced by a
symlink; a control with nothing committed.

SPEC §15; docs/execution.md, "A started plan whose folder left the branch": "A run the
controller started ends with an outcome commit whatever happens to the plan's folder
meanwhile, with or without a crash in between ... the outcome commit writes the plan back where
it started ... with its ``approval:`` and ``execution:`` blocks", "An abort request, an
ambiguous folder (both PLAN.yml and PLAN.yaml) or an unsafe path keeps its own rule"; the
journal after a crash: "start, no end ... the tool process it left running (if any) is stopped
... an end ``in_doubt`` is written and the plan ends ``failed`` with E_ACTION_IN_DOUBT".

Lab (one, local mode). Tools ``rec`` and ``kil`` (exec: does its effect ``kil:<tag>``, notes
``DONE-<tag>`` and, on its first call, waits for a ``GO`` that never comes). Each variant
``<v>``: action 1 ``rec <v>``, action 2 the pinned nested plan ``plans/<v>n`` (draft: ``kil
<v>n``, then ``rec <v>n3``). For each in turn Alice approves, a ``run --once`` is SIGKILLed
(process group) once ``kil`` did its effect. Then the agent commits, in one commit:
``k0`` nothing; ``rm`` ``git rm -r plans/rm``; ``mv`` ``git mv plans/mv plans/mv2``; ``ry``
``git mv plans/ry/PLAN.yml plans/ry/PLAN.yaml``; ``am`` a copy at ``plans/am/PLAN.yaml``;
``ne`` the nested plan's ``rec`` tag edited; ``nd`` ``git rm -r plans/ndn``; ``ns``
``plans/nsn`` replaced by a symlink to a copy ``plans/nsx``. Two passes (``mid``). Then the
agent undoes ``am``, ``ne``, ``nd``, ``ns`` (the file, folder or text back); two passes
(``end``).

Checks: ``calls`` (``kil`` once, ``<v>n3`` never, no edited tag), ``stopped`` (the tool process
the kill left waiting no longer runs at ``end``), ``doubt`` (at ``end``, the plan's record on
HEAD, where it started, PLAN.yaml for ``ry``: ``execution.status`` ``failed`` naming
``E_ACTION_IN_DOUBT``), ``true`` (at ``mid`` and ``end``: a plan file whose ``plan.status``
the controller set ``failed`` has an ``execution:`` block that says so, not ``pending``),
``tree`` (nothing of the plan's left modified or untracked by the controller at ``end``),
``audit`` (fresh clone: one valid start per plan, ``ok``).

Seen (round 84): ``ne``, ``nd``, ``ns`` BREAK (class ``nestkill``, as ``nesttwin``'s ``kn``/
``kt``; 15 ids: ``stopped``, ``doubt``, ``true:{mid,end}``, ``tree`` of each). A SIGKILL of
the pass once the nested plan's non-idempotent ``kil`` did its effect, then the agent's one
commit (the nested plan's tag edited; ``git rm -r plans/ndn``; ``plans/nsn`` a symlink): the
next pass does no crash recovery; it commits ``plangate: fail plans/ne`` "E_PLAN_HASH_MISMATCH:
... nested plan plans/nen hashes to sha256:6708..., but sha256:8c0c... is pinned (and was
approved)" (``nd``: "E_SCHEMA_INVALID: ... nested plan plans/ndn: plans/ndn does not exist";
``ns``: "E_UNSAFE_PATH: ... plans/nsn is a symlink; plangate never follows one"), whose only
change is ``status: executing`` -> ``status: failed``. HEAD's PLAN.yml then has no
``execution:`` block at all (or, killed after a checkpoint, ``status: executing`` with every
action ``pending``), though ``kil:<v>n`` ran; ``git status --porcelain`` shows ``??
plans/ne/EXECUTION_LOG.md`` (the killed pass's log) for good; the ``kil`` process the kill left
waiting still runs after four passes. Nothing of it changes once the agent puts the nested
plan back (two passes). The same commit's other edits hold, as docs/execution.md says ("A
started plan whose folder left the branch"): ``rm``, ``mv``, ``ry`` get their outcome commit
written back where the run started (``failed``, action 2 ``failed`` naming
``E_ACTION_IN_DOUBT`` "action 2/1 (kil) started ... its tool process ... was still running and
was stopped"), ``am`` (PLAN.yaml beside) is held and, once the copy goes, recorded so; ``k0``
(nothing committed) the same. The fresh-clone audit finds one valid start each and reports
only the agent's own ``git mv`` (``plans/mv2`` "agent@example.com set status executing (from
nothing) ...; ignored"); it does not notice the false records.

Fixed (2026-12-01, r84nestkill): ``Engine.run`` consults the run's journal before the plan's
validity, one path for every reason the plan is invalid on the next pass: the tool process
the kill left running is stopped, each open start ends ``in_doubt`` (an idempotent tool's
``failed``), the plan fails E_ACTION_IN_DOUBT naming the validation error too, and the
outcome commit carries its ``execution:`` block and log (``PlanRun.recover_invalid``).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab, cases, load_yaml, pid_alive, plan_text, until, valid_runs
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

VIDS = ["k0", "rm", "mv", "ry", "am", "ne", "nd", "ns"]
UNDO = ["am", "ne", "nd", "ns"]
WHERE = {"mv": "plans/mv/PLAN.yml", "ry": "plans/ry/PLAN.yaml"}


def _nested(n: str, tag3: str = "") -> str:
    return (
        f'plan:\n  name: "{n}"\n  task: "nested {n}"\n  status: draft\n'
        "available_tools:\n  - name: rec\n  - name: kil\nactions:\n"
        f'  - id: 1\n    tool: kil\n    why: "once"\n    params: {{t: "{n}"}}\n'
        f'  - id: 2\n    tool: rec\n    why: "after"\n    params: {{tag: "{tag3 or n + "3"}"}}\n'
    )


def _parent(v: str, pin: str) -> str:
    two = f'  - id: 2\n    plan: {{path: plans/{v}n, hash: {json.dumps(pin)}}}\n    why: "nested"\n'
    return (plan_text(v) + two).replace("  - name: rec\n", "  - name: rec\n  - name: kil\n", 1)


def _build(root: Path) -> Lab:
    kd = root / "kd"
    kd.mkdir()
    (root / "kil.py").write_text(KIL)
    kargv = json.dumps([sys.executable, str(root / "kil.py"), "{t}"])
    log = json.dumps(str(root / "lab" / "ran.log"))
    kenv = f"{{KIL_DIR: {json.dumps(str(kd))}, REC_LOG: {log}}}"
    lab = Lab(root / "lab", tools=f"kil: {{kind: exec, argv: {kargv}, env: {kenv}}}\n")
    for v in VIDS:
        lab.write(f"{v}n", _nested(f"{v}n"))
    lab.commit("agent: nested plans", AGENT)
    for v in VIDS:
        out = lab.cli("hash", f"plans/{v}n", cwd=lab.repo)
        lab.write(v, _parent(v, out.stdout.strip().split()[0]))
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
        seen["marked"][v] = until((kd / f"DONE-{v}n").exists, 80)
        time.sleep(0.3)
        os.killpg(p.pid, signal.SIGKILL)
        p.wait(timeout=30)
    # the agent's one commit
    repo = lab.repo
    lab.git("rm", "-q", "-r", "-f", "plans/rm")
    lab.git("mv", "plans/mv", "plans/mv2")
    lab.git("mv", "plans/ry/PLAN.yml", "plans/ry/PLAN.yaml")
    shutil.copy(repo / "plans/am/PLAN.yml", repo / "plans/am/PLAN.yaml")
    lab.write("nen", _nested("nen", tag3="ne-edited"))
    lab.git("rm", "-q", "-r", "plans/ndn")
    shutil.copytree(repo / "plans/nsn", repo / "plans/nsx")
    lab.git("rm", "-q", "-r", "plans/nsn")
    shutil.rmtree(repo / "plans/nsn", ignore_errors=True)
    os.symlink("nsx", repo / "plans/nsn")
    lab.git("add", "plans/am/PLAN.yaml", "plans/nen", "plans/nsx", "plans/nsn")
    lab.git("commit", "-q", "-m", "agent: edits after the kill", who=AGENT)
    seen["mid_err"] = [lab.run(check=False).stderr[-1200:], lab.run(check=False).stderr[-600:]]

    def snap(key: str) -> None:
        seen[key] = {}
        for v in VIDS:
            rel = WHERE.get(v, f"plans/{v}/PLAN.yml")
            text = lab.git("show", f"HEAD:{rel}", check=False)
            seen[key][v] = dict(load_yaml(text)) if text.strip() else None
        seen[key + "_rows"] = {k: json.dumps(r)[:900] for k, r in lab.status().items()}
        seen[key + "_tree"] = lab.git("status", "--porcelain", "--untracked-files=all")

    snap("mid")
    # the agent undoes am, ne, nd, ns
    lab.git("rm", "-q", "plans/am/PLAN.yaml")
    lab.write("nen", _nested("nen"))
    lab.git("rm", "-q", "plans/nsn")
    lab.git("rm", "-q", "-r", "plans/nsx")
    lab.write("ndn", _nested("ndn"))
    lab.write("nsn", _nested("nsn"))
    lab.git("add", "plans/nen", "plans/ndn", "plans/nsn")
    lab.git("commit", "-q", "-m", "agent: undone", who=AGENT)
    seen["end_err"] = [lab.run(check=False).stderr[-1200:], lab.run(check=False).stderr[-600:]]
    snap("end")
    seen["alive"] = {v: pid_alive(kd / f"PID-{v}n") for v in VIDS}
    seen["calls"] = {
        v: (len(lab.calls(f"kil:{v}n")), len(lab.calls(f"{v}n3")), len(lab.calls("ne-edited")))
        for v in VIDS
    }
    clone = root / "clone"
    subprocess.run(["git", "clone", "-q", str(lab.repo), str(clone)], check=True)
    out = lab.cli("audit", "--json", cwd=clone)
    seen["audit_err"] = out.stderr[-2000:]
    seen["report"] = json.loads(out.stdout) if out.stdout.strip() else {}
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r84-killedits", _build)


def _seen(lab: Lab) -> dict[str, Any]:
    return lab.seen  # type: ignore[attr-defined,no-any-return]


BROKEN: dict[str, Any] = {}  # nestkill fixed (r84nestkill)


@pytest.mark.parametrize("vid", VIDS)
def test_calls(lab: Lab, vid: str) -> None:
    """``kil`` once (the lab is live: each kill fell inside it), nothing after it, no edit."""
    seen = _seen(lab)
    assert seen["marked"][vid], seen["marked"]
    assert seen["calls"][vid] == (1, 0, 0), seen["calls"][vid]


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))
def test_stopped(lab: Lab, vid: str) -> None:
    assert _seen(lab)["alive"][vid] is False, _seen(lab)["alive"]


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))
def test_doubt(lab: Lab, vid: str) -> None:
    data = _seen(lab)["end"][vid]
    assert data is not None, _seen(lab)["end_rows"].get(f"plans/{vid}")
    block = json.dumps(data.get("execution") or {}, default=str)
    assert (data.get("execution") or {}).get("status") == "failed", block[:1500]
    assert "E_ACTION_IN_DOUBT" in block, block[:1500]


@pytest.mark.parametrize("when", ["mid", "end"])
@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))
def test_true(lab: Lab, vid: str, when: str) -> None:
    """A plan file the controller set ``failed`` says so in its ``execution:`` block."""
    data = _seen(lab)[when][vid]
    if not data or data["plan"].get("status") != "failed":
        return
    block = data.get("execution") or {}
    assert block.get("status") == "failed", json.dumps(block, default=str)[:1500]


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))
def test_tree(lab: Lab, vid: str) -> None:
    tree = _seen(lab)["end_tree"]
    assert f"plans/{vid}/" not in tree and f"plans/{vid}n/" not in tree, tree


@pytest.mark.parametrize("vid", VIDS)
def test_audit(lab: Lab, vid: str) -> None:
    seen = _seen(lab)
    assert "Traceback" not in seen["audit_err"], seen["audit_err"]
    report = seen["report"]
    assert len(valid_runs(report, vid)) == 1, valid_runs(report, vid)
    # the one finding allowed: the agent's ``git mv`` of a running plan's folder, its status
    # ``executing`` (from the start commit) at the new path, ignored and reported as illegal
    others = [
        f
        for f in report.get("findings", [])
        if not (f.get("kind") == "illegal" and "agent@example.com" in f.get("detail", ""))
    ]
    assert not others, others
