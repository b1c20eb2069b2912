"""Round 85 (runs): r84nestkill's recovery "when the file is still the approved version's
bytes", attacked at the TOP-LEVEL file: a ``run --once`` SIGKILLed while action 1's
non-idempotent tool waits (its effect done), then, before any later pass, the agent's one
commit that changes the running PLAN.yml's bytes (and, in most variants, makes the pinned
nested plan invalid too), two passes, the changes undone, two passes, Alice's resume, a pass.

docs/execution.md: "While it runs, the engine has the approved text in hand ... an edit of
the running plan in place stays ``executing`` and is written over with what ran"; "A plan
invalid on the next pass. The journal comes first, whatever the plan's validity says ... the
tool process the kill left running is stopped ... The plan ends ``failed`` ... Once the plan
is valid again, one resume approval runs the doubted action and the rest."

Lab (one, local mode). Tools ``rec`` (the recorder), ``kil`` (effect ``kil:<tag>``,
``DONE-<tag>``, waits for a ``GO`` that never comes on its first call). Every plan ``<v>``:
action 1 ``kil <v>``, action 2 the pinned nested plan ``plans/<v>n`` (``rec <v>n2``).
Variants (the commit after the kill):

- ``c0`` (control): nothing.
- ``ep``: a comment line appended to ``plans/ep/PLAN.yml`` AND the nested plan's task edited
  (``E_PLAN_HASH_MISMATCH``).
- ``cr``: the top-level PLAN.yml rewritten with CR LF line ends, AND the nested plan edited.
- ``bm``: a UTF-8 BOM put before the top-level PLAN.yml, AND the nested plan edited.
- ``rd``: the top-level PLAN.yml ``git rm``-ed (the folder keeps the nested plan), AND the
  nested plan edited.
- ``yb``: the top-level PLAN.yml replaced by ``not: [a plan`` (a YAML error), nested intact.
- ``sy``: the top-level PLAN.yml replaced by a symlink to ``real.yml`` beside it (the
  approved bytes), nested intact (unsafe path: waits).

Undone (one agent commit): each nested plan back to its pinned bytes, ``sy``'s symlink back
to a regular file of ``real.yml``'s bytes (``real.yml`` removed), ``yb``'s and ``rd``'s file
as the branch held it at the start (only where the controller did not write it back).

Checks: ``mid`` (after the first two passes: ``kil`` once, the nested action never),
``stopped`` (the waiting ``kil`` process gone after the first two passes), ``doubt`` (HEAD's
PLAN.yml ``failed``, its ``execution:`` block ``failed`` naming ``E_ACTION_IN_DOUBT``, once
the undo's two passes ran), ``tree`` (nothing of the plan left in the shared checkout),
``resume`` (Alice's resume: the plan ``completed``, ``kil`` twice in all, the nested action
once), ``audit`` (fresh clone: one valid start per plan that the controller started, no
finding but the agent's illegal edits).

Seen (round 85): two classes, 6 ids.

**``waitleft``** (``stopped[yb]``, ``stopped[sy]``, 2): after the kill the agent commits
``not: [a plan`` over ``plans/yb/PLAN.yml`` (or makes it a symlink); two ``run --once``
passes: the plan waits (HEAD keeps the agent's file, nothing committed for it) and the
``kil`` process the kill left running is still alive after both passes (``/proc/<pid>/stat``
state ``S``). Only once the file is back does a pass stop it and fail the run
E_ACTION_IN_DOUBT (``yb``; ``sy`` never: below). Should (docs/execution.md, "A tool left
running by a dead controller": "Left alone it would keep acting after the action was
declared in doubt ... Before the next run decides anything, it checks the spawn record of
every action that started without an end ... the group gets SIGTERM"): the process is
stopped by the next pass, whatever the file; the lead may rule that a waiting plan's tool is
left alone, but then the docs should say so. ``rd`` (the file ``git rm``-ed) is stopped at
once.

**``linkheld``** (``sy`` ``:{stopped_undone,doubt,tree,resume}``, 4): PLAN.yml a symlink to
``real.yml`` (the approved bytes) after the kill, then a regular file of the very bytes the
start commit held: the plan stays held ``E_UNSAFE_PATH: plans/sy/PLAN.yml is a symbolic link,
not a plan file; it is not read`` for good (``status --json``: ``"status": null``,
``"last_event": "E_ILLEGAL_TRANSITION: agent@example.com set status executing (from nothing)
in <undo>; ignored"``), HEAD stays ``executing`` with no block, the tool keeps running,
``?? plans/sy/EXECUTION_LOG.md`` stays in the checkout. Pinned down, with the shortest
reproduction, in ``test_round85_runs_killlink.py``.

Fixed (2026-12-01, r85linkheld): ``waitleft``: every pass, before it decides anything about a
plan or its file, stops by each open job's journal the tool a dead controller left
(``Starting._stop_left_tools``; the in-doubt end and the failure still wait for a readable
file); ``linkheld``: a regular file back where the link was ends the ``E_UNSAFE_PATH`` hold,
the plan taken on from what the hold found (``Lifecycle._unsafe_release``).

Held: ``ep``, ``cr``, ``bm``, ``rd`` (the top-level file's bytes changed AND the nested plan
invalid: the run goes on from the start commit, recovered ``failed`` E_ACTION_IN_DOUBT at
once, tool stopped, block and log committed; a resume after the nested plan is put back runs
``kil`` again and the nested action once, ``completed``), ``yb`` once undone, ``c0``; no
action ran twice; the fresh-clone audit's findings are only the agent's own edits.
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
from advkit import AGENT, ALICE, Lab, load_yaml, pid_alive, until, valid_runs
from mcpkit import PLANGATE
from test_round2_execution_kit import shared

KIL = r"""
import json, os, sys, time
tag = sys.argv[1]
d = os.environ["KIL_DIR"]
second = os.path.exists(os.path.join(d, "DONE-" + tag))
with open(os.environ["REC_LOG"], "a", encoding="utf-8") as f:
    f.write(json.dumps({"argv": ["kil:" + tag], "stdin": ""}) + "\n")
if not second:
    open(os.path.join(d, "PID-" + tag), "w").write(str(os.getpid()))
open(os.path.join(d, "DONE-" + tag), "w").write("1")
for _ in range(0 if second else 600):
    if os.path.exists(os.path.join(d, "GO-" + tag)):
        break
    time.sleep(0.1)
print('{"ok": true}')
"""

VIDS = ["c0", "ep", "cr", "bm", "rd", "yb", "sy"]
NESTED_EDIT = {"ep", "cr", "bm", "rd"}


def _nested(v: str, task: str = "") -> str:
    return (
        f'plan:\n  name: "{v}n"\n  task: "{task or "nested " + v}"\n  status: draft\n'
        "available_tools:\n  - name: rec\nactions:\n"
        f'  - id: 1\n    tool: rec\n    why: "nested"\n    params: {{tag: "{v}n2"}}\n'
    )


def _plan(v: str, pin: str) -> str:
    return (
        f'plan:\n  name: "{v}"\n  task: "variant {v}"\n  status: pending_approval\n'
        "available_tools:\n  - name: rec\n  - name: kil\nactions:\n"
        f'  - id: 1\n    tool: kil\n    why: "once"\n    params: {{t: "{v}"}}\n'
        f'  - id: 2\n    plan: {{path: plans/{v}n, hash: {json.dumps(pin)}}}\n    why: "nested"\n'
    )


def _edit(lab: Lab, v: str) -> None:
    """The variant's one agent commit right after its kill."""
    repo = lab.repo
    top = repo / "plans" / v / "PLAN.yml"
    if v in NESTED_EDIT:
        lab.write(f"{v}n", _nested(v, task="edited by the agent"))
        lab.git("add", f"plans/{v}n/PLAN.yml")
    raw = lab.git("show", f"HEAD:plans/{v}/PLAN.yml").encode()
    if v == "ep":
        top.write_bytes(raw + b"# the agent's note\n")
    elif v == "cr":
        top.write_bytes(raw.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"))
    elif v == "bm":
        top.write_bytes(b"\xef\xbb\xbf" + raw)
    elif v == "rd":
        lab.git("rm", "-q", "-f", f"plans/{v}/PLAN.yml")
    elif v == "yb":
        top.write_bytes(b"not: [a plan\n")
    elif v == "sy":
        top.unlink()
        (repo / "plans/sy/real.yml").write_bytes(raw)
        os.symlink("real.yml", top)
        lab.git("add", "plans/sy/real.yml")
    else:
        return
    if v != "rd":
        lab.git("add", f"plans/{v}/PLAN.yml")
    lab.git("commit", "-q", "-m", f"agent: {v} changed after the kill", who=AGENT)


def _undo(lab: Lab, starts: dict[str, str]) -> None:
    repo = lab.repo
    for v in VIDS:
        if v in NESTED_EDIT:
            lab.write(f"{v}n", _nested(v))
            lab.git("add", f"plans/{v}n/PLAN.yml")
    link = repo / "plans/sy/PLAN.yml"
    if link.is_symlink():
        raw = (repo / "plans/sy/real.yml").read_bytes()
        link.unlink()
        link.write_bytes(raw)
        lab.git("rm", "-q", "--cached", "plans/sy/real.yml")
        (repo / "plans/sy/real.yml").unlink()
        lab.git("add", "plans/sy/PLAN.yml")
    for v in ("yb", "rd"):
        path = repo / "plans" / v / "PLAN.yml"
        if not path.exists() or path.read_bytes().startswith(b"not: [a plan"):
            path.write_bytes(lab.git("show", f"{starts[v]}:plans/{v}/PLAN.yml").encode())
            lab.git("add", f"plans/{v}/PLAN.yml")
    if lab.git("status", "--porcelain", "--untracked-files=no").strip():
        lab.git("commit", "-q", "-m", "agent: undone", who=AGENT)


def _head(lab: Lab, v: str) -> dict[str, Any] | None:
    try:
        return dict(load_yaml(lab.git("show", f"HEAD:plans/{v}/PLAN.yml")))
    except Exception:  # a file gone or no plan is what the check reports
        return None


def _build(root: Path) -> Lab:
    kd = root / "kd"
    kd.mkdir()
    (root / "kil.py").write_text(KIL)
    kargv = json.dumps([sys.executable, str(root / "kil.py"), "{t}"])
    log = json.dumps(str(root / "lab" / "ran.log"))
    kenv = f"{{KIL_DIR: {json.dumps(str(kd))}, REC_LOG: {log}}}"
    lab = Lab(root / "lab", tools=f"kil: {{kind: exec, argv: {kargv}, env: {kenv}}}\n")
    for v in VIDS:
        lab.write(f"{v}n", _nested(v))
    lab.commit("agent: nested plans", AGENT)
    for v in VIDS:
        pin = lab.cli("hash", f"plans/{v}n", cwd=lab.repo).stdout.strip().split()[0]
        lab.write(v, _plan(v, pin))
    lab.commit("agent plans", AGENT)
    lab.run()
    seen: dict[str, Any] = {"marked": {}, "starts": {}}
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
        seen["marked"][v] = until((kd / f"DONE-{v}").exists, 80)
        time.sleep(0.3)
        os.killpg(p.pid, signal.SIGKILL)
        p.wait(timeout=30)
        seen["starts"][v] = lab.git("log", "-1", "--format=%H", "--grep=plangate: start").strip()
        _edit(lab, v)
    seen["err"] = [lab.run(check=False).stderr[-1500:], lab.run(check=False).stderr[-800:]]
    seen["mid"] = {v: _head(lab, v) for v in VIDS}
    seen["alive"] = {v: pid_alive(kd / f"PID-{v}") for v in VIDS}
    seen["midrows"] = {k: v for k, v in lab.status().items() if k in ("plans/yb", "plans/sy")}
    seen["midcalls"] = {v: (len(lab.calls(f"kil:{v}")), len(lab.calls(f"{v}n2"))) for v in VIDS}
    _undo(lab, seen["starts"])
    seen["err2"] = [lab.run(check=False).stderr[-1500:], lab.run(check=False).stderr[-800:]]
    seen["end"] = {v: _head(lab, v) for v in VIDS}
    seen["alive2"] = {v: pid_alive(kd / f"PID-{v}") for v in VIDS}
    seen["tree"] = lab.git("status", "--porcelain", "--untracked-files=all")
    seen["rows"] = {k: v.get("status") for k, v in lab.status().items()}
    seen["endrows"] = {k: v for k, v in lab.status().items() if k in ("plans/yb", "plans/sy")}
    resumed = []
    for v in VIDS:
        data = _head(lab, v)
        if data and data["plan"].get("status") == "failed":
            lab.set_status(v, "approved")
            lab.git("add", f"plans/{v}/PLAN.yml")
            resumed.append(v)
    if resumed:
        lab.git("commit", "-q", "-m", "alice: resume", who=ALICE)
    seen["err3"] = lab.run(check=False).stderr[-1500:]
    seen["final"] = {v: _head(lab, v) for v in VIDS}
    seen["calls"] = {v: (len(lab.calls(f"kil:{v}")), len(lab.calls(f"{v}n2"))) for v in VIDS}
    clone = root / "clone"
    subprocess.run(["git", "clone", "-q", str(lab.repo), str(clone)], check=True)
    out = lab.cli("audit", "--json", cwd=clone)
    seen["audit_err"] = out.stderr[-2000:]
    seen["report"] = json.loads(out.stdout) if out.stdout.strip() else {}
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r85-killtop", _build)


def _seen(lab: Lab) -> dict[str, Any]:
    return lab.seen  # type: ignore[attr-defined,no-any-return]


# waitleft (yb, sy: 2 ids) fixed (2026-12-01, r85linkheld)
# linkheld (sy, 4 ids) fixed (2026-12-01, r85linkheld)


def test_dump(lab: Lab) -> None:
    """Not a check: the whole story, for the reader of ``-rA``."""
    seen = _seen(lab)
    print(json.dumps({k: seen[k] for k in seen if k != "report"}, default=str, indent=1))


@pytest.mark.parametrize("vid", VIDS)
def test_mid(lab: Lab, vid: str) -> None:
    seen = _seen(lab)
    assert seen["marked"][vid], seen["marked"]
    assert seen["midcalls"][vid] == (1, 0), seen["midcalls"][vid]


@pytest.mark.parametrize("vid", VIDS)
def test_stopped(lab: Lab, vid: str) -> None:
    """After the first two passes (the file still changed)."""
    assert _seen(lab)["alive"][vid] is False, (_seen(lab)["alive"], _seen(lab)["midrows"])


@pytest.mark.parametrize("vid", VIDS)
def test_stopped_undone(lab: Lab, vid: str) -> None:
    """After the undo's two passes."""
    assert _seen(lab)["alive2"][vid] is False, (_seen(lab)["alive2"], _seen(lab)["endrows"])


@pytest.mark.parametrize("vid", VIDS)
def test_doubt(lab: Lab, vid: str) -> None:
    data = _seen(lab)["end"][vid]
    assert data is not None, _seen(lab)["rows"]
    block = data.get("execution") or {}
    text = json.dumps(block, default=str)
    assert data["plan"]["status"] == "failed", (data["plan"], _seen(lab)["err2"])
    assert block.get("status") == "failed", text[:1500]
    assert "E_ACTION_IN_DOUBT" in text, text[:1500]


@pytest.mark.parametrize("vid", VIDS)
def test_tree(lab: Lab, vid: str) -> None:
    tree = [
        line
        for line in _seen(lab)["tree"].splitlines()
        if line[3:].startswith((f"plans/{vid}/", f"plans/{vid}n/"))
    ]
    assert not tree, tree


@pytest.mark.parametrize("vid", VIDS)
def test_resume(lab: Lab, vid: str) -> None:
    seen = _seen(lab)
    data = seen["final"][vid] or {"plan": {}}
    assert data["plan"].get("status") == "completed", (data["plan"], seen["err3"])
    assert seen["calls"][vid] == (2, 1), seen["calls"][vid]


@pytest.mark.parametrize("vid", VIDS)
def test_audit(lab: Lab, vid: str) -> None:
    seen = _seen(lab)
    assert "Traceback" not in seen["audit_err"], seen["audit_err"]
    report = seen["report"]
    assert len(valid_runs(report, vid)) >= 1, valid_runs(report, vid)
    others = [
        f
        for f in report.get("findings", [])
        if f"plans/{vid}" in json.dumps(f)
        and not (
            f.get("kind") in ("illegal", "content-after-approval", "owned-block-changed")
            and "agent@example.com" in f.get("detail", "")
        )
    ]
    assert not others, others
