"""Round 97 (runs, atk97c): output references, hanging, forking, loud and odd tools, and the
agent's git moves in the work tree mid-run, each with a SIGKILL or a restart after it.

Lab (one build, local mode, a tool ``t97`` of its own: one JSON line per call, per exit and per
late act in ``calls.log``, with its argv and the params it read on stdin: the ground truth).

- ``c0``: control: two actions, approved, one pass.
- ``o0``: control: action 1 (``out``) prints ``{"v": "<tag>:<pid>:<time>"}`` (a value no
  re-run could repeat) and declares ``outputs: [{name: v, path: "$.json.v"}]``; action 2's
  params hold ``v: "$<actions[1].outputs.v>"``.
- ``og``: the same with action 2 ``requires_approval``: paused; the gate approved; the pass
  SIGKILLed once the branch moved and before action 2's call; restarted twice (the first
  restart met the killed pass's ``.git/HEAD.lock`` and its remedy was followed).
- ``ok``: the same without a gate, killed once action 1 (the output) exited; restarted.
- ``hg``: a tool that hangs deaf to SIGTERM, beating every 0.1 s, ``timeout: 2``,
  ``on_failure: retry``, ``retries: 1``. ``hk``: the same with ``timeout: 60``, the controller
  killed after 5 beats; restarted twice.
- ``fk``: a tool whose forked child (its group, stdio on /dev/null) outlives it by 3 s and
  then writes ``plans/fk/LATE.txt`` and a ``late`` row. ``fx``: the same, the controller
  killed right after the tool's exit row; restarted. ``fs``: the helper double-forks into a
  new session (``os.setsid()``) before it waits 3 s and writes. Later passes run after the
  3 s; Alice's commits add her plan file only.
- ``bg``: a tool printing 100 MB on stdout. ``sg``: a tool that SIGKILLs itself.
  ``cl``: a tool that closes stdout, sleeps 1 s, exits 0.
- ``ed``: approved; the agent then edits the work tree's PLAN.yml (``t: "ed-X"``, not
  committed); two passes; later the owner's ``git checkout -f main`` drops the edit.
- ``es``/``ev``/``e2``: Alice approves ``es`` and ``e2``; the agent then STAGES (``git add``,
  no commit) an edit of ``es``'s params (``es-X``), ``status: approved`` in the never-approved
  ``ev`` and a new ``plans/ev/EVIL.txt``; two passes; the owner resets the index; a pass.
- ``n0``/``nk``/``nm``: nested plans: action 1 ``out``, action 2 the pinned draft plan
  ``plans/nst-<x>`` (``hash`` from ``plangate hash``) with ``inputs: {v:
  "$<actions[1].outputs.v>"}``; its action 1 gets ``v: "$<inputs.v>"``, its action 2 is a
  2 s tool. ``n0``: control. ``nk``: killed once nested action 2/1 exited; restarted twice.
  ``nm``: while the parent runs, the agent COMMITS an edit of the pinned plan (``nm-22`` made
  ``nm-X``); a pass.
- ``cb``: two actions (a 2 s tool first); once it runs the agent runs ``git checkout -b x``
  in the controller's work tree; the pass ends; restarted (on ``x``); the owner switches
  back (``git checkout -f main``); a pass.
- ``rh``: the same shape; once action 1 runs the agent runs ``git reset --hard HEAD~1``
  (the controller's start commit gone); restarted twice; ``plangate status``; the owner
  follows the remedy (``git reset --hard <old tip>``); two passes.

Checks: ``calls`` (each action's tool as often as documented: once; ``hg`` twice; ``nm``'s
nested actions never; after a
kill after a call at most once, action 1 once; ``ev`` never), ``ended`` (one ``complete``;
one ``fail`` for ``hg``/``hk``/``sg`` and the in-doubt kills; ``ev`` no start), ``audit``
(fresh clone of ``main``: the valid runs are the ones that happened, ``og``
``await-approval`` + ``complete``, no finding), ``same`` (action 2's stdin ``v`` is action 1's
one printed value), ``after`` (no beat of the hung tool after its run's end), ``late``/
``record`` (no late act, ``LATE.txt``/``EVIL.txt``/``ed-X``/``es-X`` in no commit, the 100 MB cut
in the log), ``code`` (``E_TIMEOUT``, ``E_TOOL_FAILED``), ``edit``, ``staged``, ``held``,
``main``, ``authors`` (every ``plangate:`` commit on main is plangate's), ``landed``.

Seen (round 97): nothing broke (0 of 101 ids).

Held: ``o0``/``og``: action 2 got exactly action 1's value (``og-2`` stdin ``{"m": "rec",
"t": "og-2", "v": "og-1:15142:1796222613.816202"}``, action 1 called once), across the
gate and the kill before action 2 (``await-approval`` + ``complete``, audit agrees). ``ok``:
``fail plans/ok`` ``E_ACTION_IN_DOUBT`` ("its end was never recorded"), action 2 never
called. ``hg``: two calls, ``E_TIMEOUT`` "did not finish within 2s; its process group was
killed", ``Attempts: 2``, no beat after. ``hk``: ``E_ACTION_IN_DOUBT`` "its tool process ...
was still running and was stopped", no beat after the restart. ``fk``/``fs``: complete,
the helper (same group, or a new session) never wrote;
``fx``: in doubt, "was still running and was stopped", no late act. ``bg``: complete, the
log cut ("… (cut at 65536 bytes)", 66 KB). ``sg``: ``E_TOOL_FAILED`` "was killed by signal
9", ``exit_code: -9``. ``cl``: complete, ``stdout: ""``, ``json: null``. ``ed``: the pass
waited ("plans/ed/PLAN.yml has uncommitted edits; plangate will not overwrite them (commit
or discard them)"), ``ed-X`` never ran, ``ed-1`` ran once after the owner dropped the edit.
``n0``: nested 2/1 got action 1's one value, complete. ``nk``: ``fail`` in doubt, 2/1 once
with the same value, 2/2 never. ``nm``: ``fail plans/nm``, ``E_PLAN_HASH_MISMATCH``: "nested
plan plans/nst-m hashes to sha256:49f8..., but sha256:5d9c... is pinned (and was approved)";
no nested action ran, ``nm-X`` never. ``es``: the staged edit: the same wait, ``es-X``
never ran; ``e2`` ran in the same pass
and no plangate commit carried the staged ``ev`` approval or ``EVIL.txt``; ``ev`` never
started. ``cb``: the run completed on ``main`` (the agent's ``x`` holds only ``start``); the
restart on ``x``: exit 2 ``E_GIT: the working tree is on branch x, but plangate watches
main``. ``rh``: action 2 held (``approval_refused`` "already ran here as plans/rh ... a copy,
move or rewritten history of it does not run again"; ``plangate status``: "waiting:
E_HISTORY_REWRITTEN: a rewrite of the branch erased the controller's commits of this
plan"); after the owner's restore the run went on: action 2 once, one ``start``, one
``complete``, audit one valid run. Not asserted: between the cut and the restore the
controller's uncommitted ``plans/rh/EXECUTION_LOG.md`` stayed untracked in the work tree.

Should: docs/approvals.md "the controller runs it exactly as frozen"; docs/plan-format.md
(references: "A reference must point to an action in the referring action's transitive
``needs``: the value exists by then whatever the timing"); docs/execution.md ("Timeouts
(E_TIMEOUT): SIGTERM to the tool's whole process group, 1 s grace, then SIGKILL"; "A tool
that exits normally loses its helpers too: when the call ends, whatever it left running in
its cgroup is killed"; "stdout and stderr are kept up to ``limits.max_result_bytes`` each");
docs/operations.md ("the journal makes the next start safe (an unfinished non-idempotent
action becomes ``E_ACTION_IN_DOUBT``)"); docs/threat-model.md round 4/7 ("a held plan never
starts and runs no further action ... until the erased commits are on the branch again").
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab, cases, until, xfail  # noqa: F401
from test_round2_execution_kit import shared
from test_round91_runs_atk91c import GATE, PY, _calls, _kill_when, _popen, _ref
from test_round92_runs_atk92c import _try

TOOL = r"""
import json, os, signal, sys, time
m, t, d = sys.argv[1], sys.argv[2], os.environ["T97_DIR"]
raw = sys.stdin.read()
def log(kind, **kw):
    row = {"t": t, "m": m, "k": kind, "pid": os.getpid(), "at": time.time(),
           "argv": sys.argv[1:], "stdin": raw, **kw}
    with open(os.path.join(d, "calls.log"), "a") as f:
        f.write(json.dumps(row) + "\n")
        f.flush()
        os.fsync(f.fileno())
slug = t.rsplit("-", 1)[0]
out = {"ok": True}
if m in ("out", "outw"):      # an output no re-run could repeat
    out = {"v": "%s:%d:%.6f" % (t, os.getpid(), time.time())}
    log("call", v=out["v"])
else:
    log("call")
if m == "outw":     # holds until the lab says go (the agent's edit has landed)
    end = time.time() + 120
    while time.time() < end and not os.path.exists(os.path.join(d, "GO-" + t)):
        time.sleep(0.05)
if m == "slp":
    open(os.path.join(d, "READY-" + t), "w").write(str(os.getpid()))
    time.sleep(2)
elif m == "hng":    # hangs, deaf to SIGTERM, beating
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    open(os.path.join(d, "READY-" + t), "w").write(str(os.getpid()))
    while True:
        log("beat")
        time.sleep(0.1)
elif m == "frk":    # a child in the tool's group outlives it, then acts in the plan folder
    if os.fork() == 0:
        nul = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(nul, fd)
        time.sleep(3)
        open(os.path.join(os.getcwd(), "repo", "plans", slug, "LATE.txt"), "w").write("late\n")
        log("late")
        os._exit(0)
elif m == "fks":    # a double-forked helper in a new session outlives the tool, then acts
    if os.fork() == 0:
        os.setsid()
        if os.fork() != 0:
            os._exit(0)
        nul = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(nul, fd)
        time.sleep(3)
        open(os.path.join(os.getcwd(), "repo", "plans", slug, "LATE.txt"), "w").write("late\n")
        log("late")
        os._exit(0)
    time.sleep(0.2)
elif m == "big":    # 100 MB on stdout
    chunk = ("x" * 1023 + "\n").encode()
    for _ in range(100 * 1024):
        sys.stdout.buffer.write(chunk)
    sys.stdout.flush()
    log("exit")
    sys.exit(0)
elif m == "sig":    # exits by a signal
    sys.stdout.flush()
    os.kill(os.getpid(), signal.SIGKILL)
elif m == "cls":    # closes stdout early, goes on, exits 0
    os.close(1)
    time.sleep(1)
    log("exit")
    os._exit(0)
log("exit")
print(json.dumps(out))
"""

OUTS = '    outputs:\n      - {name: v, path: "$.json.v"}\n'
REF = '"$<actions[1].outputs.v>"'
HANG = "    timeout: 2\n    on_failure: retry\n    retries: 1\n"

#: slug -> actions (mode, tag, extra lines, ref the output of action 1)
PLANS: dict[str, list[tuple[str, str, str, bool]]] = {
    "c0": [("rec", "c0-1", "", False), ("rec", "c0-2", "", False)],
    "o0": [("out", "o0-1", OUTS, False), ("rec", "o0-2", "", True)],
    "og": [("out", "og-1", OUTS, False), ("rec", "og-2", GATE, True)],
    "ok": [("out", "ok-1", OUTS, False), ("rec", "ok-2", "", True)],
    "hg": [("hng", "hg-1", HANG, False)],
    "hk": [("hng", "hk-1", "    timeout: 60\n", False)],
    "fk": [("frk", "fk-1", "", False)],
    "fx": [("frk", "fx-1", "", False)],
    "fs": [("fks", "fs-1", "", False)],
    "es": [("rec", "es-1", "", False)],
    "ev": [("rec", "ev-1", "", False)],
    "e2": [("rec", "e2-1", "", False)],
    "bg": [("big", "bg-1", "", False)],
    "sg": [("sig", "sg-1", "", False)],
    "cl": [("cls", "cl-1", "", False)],
    "ed": [("rec", "ed-1", "", False)],
    "cb": [("slp", "cb-1", "", False), ("rec", "cb-2", "", False)],
    "rh": [("slp", "rh-1", "", False), ("rec", "rh-2", "", False)],
}
#: a kill after a call ended (or the run cut by the agent): the run may fail in doubt
DOUBT = {"ok", "hk", "fx"}
#: ends with a fail by the documented tool error
FAILS = {"hg", "sg", "hk"}
#: never approved in a commit: never runs
NEVER = {"ev"}


def _plan(slug: str, acts: list[tuple[str, str, str, bool]]) -> str:
    body = (
        f'plan:\n  name: "{slug}"\n  task: "round 97 {slug}"\n  status: pending_approval\n'
        "available_tools:\n  - name: t97\nactions:\n"
    )
    for i, (m, t, extra, ref) in enumerate(acts, 1):
        v = f", v: {REF}" if ref else ""
        body += f'  - id: {i}\n    tool: t97\n    why: "{slug} {i}"\n'
        body += f'    params: {{m: {m}, t: "{t}"{v}}}\n'
        if i > 1:
            body += f"    needs: [{i - 1}]\n"
        body += extra
    return body


#: nested plans (draft, pinned): slug -> its actions; the parent ``n*`` of ``nst-<x>`` is
#: action 1 ``out`` then action 2 the pinned plan, its input ``v`` action 1's output
NESTED = {x: [("rec", f"n{x}-21", "v"), ("slp", f"n{x}-22", "")] for x in ("0", "k", "m")}


def _nested(x: str) -> str:
    body = (
        f'plan:\n  name: "nst-{x}"\n  task: "nested {x}"\n  status: draft\n'
        'inputs: {v: "none"}\navailable_tools:\n  - name: t97\nactions:\n'
    )
    for i, (m, t, v) in enumerate(NESTED[x], 1):
        ref = ', v: "$<inputs.v>"' if v else ""
        body += f'  - id: {i}\n    tool: t97\n    why: "nst {i}"\n'
        body += f'    params: {{m: {m}, t: "{t}"{ref}}}\n'
    return body


def _parent(x: str, pin: str) -> str:
    m = "outw" if x == "m" else "out"  # nm: action 1 holds until the agent's edit landed
    return (
        f'plan:\n  name: "n{x}"\n  task: "round 97 nested {x}"\n  status: pending_approval\n'
        "available_tools:\n  - name: t97\nactions:\n"
        f'  - id: 1\n    tool: t97\n    why: "n{x} 1"\n    params: {{m: {m}, t: "n{x}-1"}}\n'
        + OUTS
        + f'  - id: 2\n    plan: {{path: plans/nst-{x}, hash: "{pin}"}}\n    why: "n{x} 2"\n'
        + '    needs: [1]\n    inputs: {v: "$<actions[1].outputs.v>"}\n'
    )


def _tools(d: Path) -> str:
    argv = json.dumps([PY, str(d / "t97.py"), "{m}", "{t}"])
    return f"t97: {{kind: exec, argv: {argv}, env: {{T97_DIR: {json.dumps(str(d))}}}}}\n"


def _exited(d: Path, t: str) -> bool:
    return bool(_calls(d, t, "exit"))


def _bg(lab: Lab, seen: dict[str, Any], tag: str, ready: Path, act: Any) -> None:
    """A pass in the background; once ``ready`` exists the agent acts (``act``)."""
    proc = _popen(lab, lab.config)
    ok = until(ready.exists, 60)
    seen[f"{tag}:landed"] = ok and proc.poll() is None
    if ok:
        act()
    rc = proc.wait(120)
    seen.setdefault("passes", []).append((tag, rc, proc.stderr.read().decode()[-600:]))  # type: ignore[union-attr]


def _approve(lab: Lab, slug: str) -> str:
    """Alice approves ``slug``: her commit holds that plan file only (the work tree may hold
    the agent's or a tool's leftovers, never hers to commit)."""
    lab.set_status(slug, "approved")
    return lab.commit(f"approve {slug}", ALICE, f"plans/{slug}/PLAN.yml")


def _build(root: Path) -> Lab:
    d = root / "t"
    d.mkdir()
    (d / "t97.py").write_text(TOOL)
    seen: dict[str, Any] = {}
    lab = Lab(root / "L", tools=_tools(d))
    lab.t = d  # type: ignore[attr-defined]
    for slug, acts in PLANS.items():
        lab.write(slug, _plan(slug, acts))
    for x in NESTED:
        lab.write(f"nst-{x}", _nested(x))
    lab.commit("plans")
    for x in NESTED:
        pin = lab.cli(
            "hash", f"plans/nst-{x}", "--config", str(lab.config), cwd=lab.repo
        ).stdout.strip()
        lab.write(f"n{x}", _parent(x, pin))
    lab.commit("nested parents")
    cfg = lab.config
    gd = lab.repo / ".git"
    _try(lab, seen, cfg, "first")
    # controls
    for slug in ("c0", "o0"):
        _approve(lab, slug)
        _try(lab, seen, cfg, slug)
    # og: output, gate paused; approved; killed once the branch moved, before action 2
    _approve(lab, "og")
    _try(lab, seen, cfg, "og")
    seen["og:paused"] = lab.plan("og").get("execution", {}).get("status")
    _approve(lab, "og")
    before = _ref(gd)
    ok = _kill_when(lab, lambda: _ref(gd) != before and not _calls(d, "og-2"))
    seen["og:landed"] = ok and not _calls(d, "og-2")
    _try(lab, seen, cfg, "og2")
    _try(lab, seen, cfg, "og3")
    # n0: nested control; nk: killed once nested action 2/1 exited, restarted twice; nm: the
    # agent COMMITS an edit of the pinned plan (``nm-22`` made ``nm-X``) while action 1 runs
    _approve(lab, "n0")
    _try(lab, seen, cfg, "n0")
    _approve(lab, "nk")
    seen["nk:landed"] = _kill_when(lab, lambda: _exited(d, "nk-21")) and not _calls(d, "nk-22")
    _try(lab, seen, cfg, "nk")
    _try(lab, seen, cfg, "nk2")
    _approve(lab, "nm")

    def edit() -> None:
        pn = lab.repo / "plans" / "nst-m" / "PLAN.yml"
        pn.write_text(pn.read_text().replace('t: "nm-22"', 't: "nm-X"'))
        seen["nm:edit"] = lab.commit("tweak the nested plan", AGENT, "plans/nst-m/PLAN.yml")

    proc = _popen(lab, cfg)
    seen["nm:landed"] = until(lambda: bool(_calls(d, "nm-1")), 60) and proc.poll() is None
    edit()
    (d / "GO-nm-1").write_text("go\n")  # action 1 ends only once the edit has landed
    proc.wait(120)
    _try(lab, seen, cfg, "nm2")
    # ok: killed once action 1 (the output) exited
    _approve(lab, "ok")
    seen["ok:landed"] = _kill_when(lab, lambda: _exited(d, "ok-1")) and not _calls(d, "ok-2")
    _try(lab, seen, cfg, "ok")
    _try(lab, seen, cfg, "ok2")
    # hg: hangs deaf to SIGTERM, timeout 2, one retry
    _approve(lab, "hg")
    _try(lab, seen, cfg, "hg")
    seen["hg:end"] = time.time()
    # hk: hangs, the controller killed mid-hang, restarted
    _approve(lab, "hk")
    seen["hk:landed"] = _kill_when(lab, lambda: len(_calls(d, "hk-1", "beat")) >= 5)
    _try(lab, seen, cfg, "hk")
    seen["hk:end"] = time.time()
    _try(lab, seen, cfg, "hk2")
    # fk: the child outlives the tool; the next passes go on
    _approve(lab, "fk")
    _try(lab, seen, cfg, "fk")
    seen["fk:end"] = time.time()
    # fx: the same, the controller killed right after the tool exited; restarted
    _approve(lab, "fx")
    seen["fx:landed"] = _kill_when(lab, lambda: _exited(d, "fx-1"))
    _try(lab, seen, cfg, "fx")
    seen["fx:end"] = time.time()
    time.sleep(4)
    _try(lab, seen, cfg, "fk2")
    # bg, sg, cl: loud, signalled, stdout closed early
    for slug in ("bg", "sg", "cl"):
        _approve(lab, slug)
        _try(lab, seen, cfg, slug)
        _try(lab, seen, cfg, f"{slug}2")
    # ed: approved; the agent edits the work tree's plan (not committed) before the pass
    _approve(lab, "ed")
    pf = lab.repo / "plans" / "ed" / "PLAN.yml"
    pf.write_text(pf.read_text().replace('t: "ed-1"', 't: "ed-X"'))
    seen["ed:edited"] = "ed-X" in pf.read_text()
    _try(lab, seen, cfg, "ed")
    _try(lab, seen, cfg, "ed2")
    seen["ed:tree"] = lab.git("status", "--porcelain")
    # es, ev, e2: Alice approves es and e2; the agent then STAGES (git add, no commit) an
    # edit of es's params, ev's ``status: approved`` and a new plans/ev/EVIL.txt; a pass
    _approve(lab, "es")
    _approve(lab, "e2")
    pe = lab.repo / "plans" / "es" / "PLAN.yml"
    pe.write_text(pe.read_text().replace('t: "es-1"', 't: "es-X"'))
    lab.set_status("ev", "approved")
    (lab.repo / "plans" / "ev" / "EVIL.txt").write_text("evil\n")
    lab.git("add", "plans/es/PLAN.yml", "plans/ev/PLAN.yml", "plans/ev/EVIL.txt")
    seen["es:staged"] = lab.git("diff", "--cached", "--name-only")
    _try(lab, seen, cfg, "es")
    _try(lab, seen, cfg, "es2")
    seen["es:tree"] = lab.git("status", "--porcelain")
    seen["es:touched"] = lab.git(
        "log", "--format=%ae %s", "main", "--", "plans/ev", "plans/es/PLAN.yml"
    )
    seen["es:evil"] = lab.git("log", "--all", "--format=%H", "--", "plans/ev/EVIL.txt")
    lab.git("reset", "-q", "--hard", "HEAD")  # the owner drops the agent's staged edits
    lab.git("clean", "-qfd", "plans")
    _try(lab, seen, cfg, "es3")
    # fs: the double-forked helper outlives the tool
    _approve(lab, "fs")
    _try(lab, seen, cfg, "fs")
    seen["fs:end"] = time.time()
    time.sleep(4)
    _try(lab, seen, cfg, "fs2")
    # cb: the agent switches the work tree's branch mid-run (git checkout -b x); restarts
    _approve(lab, "cb")
    _bg(lab, seen, "cb", d / "READY-cb-1", lambda: lab.git("checkout", "-q", "-b", "x"))
    _try(lab, seen, cfg, "cb2")
    seen["cb:branch"] = lab.git("rev-parse", "--abbrev-ref", "HEAD").strip()
    seen["cb:x"] = lab.git("log", "-8", "--format=%s", "x", check=False)
    lab.git("checkout", "-q", "-f", "main")  # the owner puts the work tree back
    _try(lab, seen, cfg, "cb3")
    # rh: the agent resets main one commit back mid-run (the start commit gone); restarts
    _approve(lab, "rh")

    def cut() -> None:
        seen["rh:tip"] = lab.head()
        lab.git("reset", "-q", "--hard", "HEAD~1")

    _bg(lab, seen, "rh", d / "READY-rh-1", cut)
    _try(lab, seen, cfg, "rh2")
    st = lab.cli("status", "--config", str(cfg))
    seen["rh:status"] = st.stdout[-1500:] + st.stderr[-500:]
    _try(lab, seen, cfg, "rh3")
    seen["rh:held"] = (
        (lab.state / "held.json").read_text() if (lab.state / "held.json").exists() else ""
    )
    # the owner follows the remedy: the old tip back (git reflog; git reset --hard <tip>)
    seen["rh:restored"] = time.time()
    lab.git("reset", "-q", "--hard", seen["rh:tip"])
    _try(lab, seen, cfg, "rh4")
    _try(lab, seen, cfg, "rh5")
    seen["subjects"] = {s: lab.subjects(s) for s in [*PLANS, *NPAR]}
    seen["late"] = {
        s: lab.git("log", "--all", "--format=%H", "--", f"plans/{s}/LATE.txt")
        for s in ("fk", "fx", "fs")
    }
    seen["plans"] = {s: lab.git("show", f"main:plans/{s}/PLAN.yml") for s in PLANS}
    seen["logs"] = {
        s: lab.git("show", f"main:plans/{s}/EXECUTION_LOG.md", check=False) for s in PLANS
    }
    seen["status"] = lab.git("status", "--porcelain")
    seen["authors"] = lab.git("log", "main", "--format=%ae %s")
    aud = lab.root / "aud"
    subprocess.run(["git", "clone", "-q", "-b", "main", str(lab.repo), str(aud)], check=True)
    seen["audit"] = json.loads(lab.cli("audit", "--json", cwd=aud).stdout)
    lab.seen = seen  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r97-atk97c", _build)


def _valid(report: dict[str, Any], slug: str) -> list[dict[str, Any]]:
    return [
        e for e in report["executions"] if e["plan"] == f"plans/{slug}" and e.get("approval_valid")
    ]


def _findings(report: dict[str, Any], slug: str) -> list[dict[str, Any]]:
    return [f for f in report.get("findings", []) if f.get("plan") == f"plans/{slug}"]


def _ends(subjects: list[str]) -> list[str]:
    return [x for x in subjects if x.split()[1] in ("complete", "fail", "abort")]


CHECKS = ["calls", "ended", "audit"]
NPAR = ["n0", "nk", "nm"]
IDS = (
    [f"{s}:{c}" for s in PLANS for c in CHECKS]
    + [f"{s}:landed" for s in ("og", "ok", "hk", "fx", "cb", "rh")]
    + ["o0:same", "og:same", "ok:same", "og:paused", "hg:after", "hk:after"]
    + ["fk:late", "fx:late", "fk:record", "fx:record", "bg:record", "ed:edit", "ed:record"]
    + ["fs:late", "fs:record", "es:edit", "es:record", "ev:staged", "es:staged"]
    + [f"{s}:{c}" for s in NPAR for c in ("calls", "ended", "audit", "same")]
    + ["nk:landed", "nm:landed", "nm:edit"]
    + ["rh:held", "cb:main", "rh:record", "sg:code", "hg:code", "cl:record", "all:authors"]
)

BROKEN: dict[str, Any] = {}


def _same(d: Path, slug: str) -> None:
    v = [c["v"] for c in _calls(d, f"{slug}-1")]
    got = [json.loads(c["stdin"]).get("v") for c in _calls(d, f"{slug}-2")]
    assert len(v) == 1, v
    assert all(g == v[0] for g in got), (v, got)


def _nested_check(lab: Lab, slug: str, check: str) -> None:
    seen, d = lab.seen, lab.t  # type: ignore[attr-defined]
    x = slug[1]
    one, n1, n2 = _calls(d, f"{slug}-1"), _calls(d, f"{slug}-21"), _calls(d, f"{slug}-22")
    ends = _ends(seen["subjects"][slug])
    if check == "edit":  # the agent's edit of the pinned plan never ran
        assert not _calls(d, "nm-X"), _calls(d, "nm-X")
    elif check == "same":
        v = [c["v"] for c in one]
        assert len(v) == 1, v
        got = [json.loads(c["stdin"]).get("v") for c in n1]
        assert all(g == v[0] for g in got), (v, got)
        assert x == "m" or got, (v, got)  # nm: the nested plan never ran (below)
    elif check == "calls":
        assert len(one) == 1, one
        if x == "0":
            assert len(n1) == 1 and len(n2) == 1, (n1, n2)
        elif x == "m":  # changed after the approval: E_PLAN_HASH_MISMATCH before any of it
            assert not n1 and not n2, (n1, n2)
        else:
            assert len(n1) == 1 and len(n2) <= 1, (n1, n2)
    elif check == "ended":
        if x == "0":
            assert ends == ["plangate: complete plans/n0"], seen["subjects"][slug]
        else:
            assert ends == [f"plangate: fail plans/{slug}"], seen["subjects"][slug]
    elif check == "audit":
        report = seen["audit"]
        runs = [e["outcome"] for e in _valid(report, slug)]
        assert len(runs) == 1 and runs[0] in (e.split()[1] for e in ends), (runs, ends)
        assert not _findings(report, slug), _findings(report, slug)


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_runs(lab: Lab, vid: str) -> None:
    slug, check = vid.split(":")
    seen, d = lab.seen, lab.t  # type: ignore[attr-defined]
    if check == "landed":
        assert seen[vid], seen["passes"][-8:]
        return
    if slug in NPAR:
        _nested_check(lab, slug, check)
        return
    if check == "same":
        _same(d, slug)
        if slug != "ok":  # the run went on: action 2 got action 1's one value
            assert len(_calls(d, f"{slug}-2")) == 1, seen["subjects"][slug]
        return
    if check == "paused":
        assert seen[vid] == "awaiting_approval", seen[vid]
        return
    if check == "after":  # nothing of the hung tool acts after its run's end
        beats = [b["at"] for b in _calls(d, f"{slug}-1", "beat")]
        assert beats and max(beats) < seen[f"{slug}:end"], (len(beats), seen[f"{slug}:end"])
        return
    if check == "late":  # the child that outlived the tool never acted
        assert not _calls(d, f"{slug}-1", "late"), _calls(d, f"{slug}-1", "late")
        assert not (lab.repo / "plans" / slug / "LATE.txt").exists()
        return
    if check == "code":
        want = {"sg": "E_TOOL_FAILED", "hg": "E_TIMEOUT"}[slug]
        assert want in seen["logs"][slug] or want in seen["plans"][slug], seen["logs"][slug][-800:]
        return
    if check == "staged":  # the agent's staged edits stay out of every plangate commit
        if slug == "es":
            assert "plans/ev/EVIL.txt" in seen["es:staged"], seen["es:staged"]
        for line in seen["es:touched"].splitlines():
            assert "plans/ev" not in line or not line.startswith("plangate@"), line
        assert not seen["es:evil"].strip(), seen["es:evil"]
        return
    if check == "edit" and slug == "es":
        assert not _calls(d, "es-X"), _calls(d, "es-X")
        return
    if check == "edit":  # the agent's uncommitted edit never ran
        assert seen["ed:edited"]
        assert not _calls(d, "ed-X"), _calls(d, "ed-X")
        return
    if check == "held":  # cut by the reset: held, action 2 only after the owner's restore
        assert "E_HISTORY_REWRITTEN" in seen["rh:status"], seen["rh:status"]
        assert all(c["at"] > seen["rh:restored"] for c in _calls(d, "rh-2")), _calls(d, "rh-2")
        return
    if check == "main":  # the controller's record of cb is on main, not on the agent's x
        subj = seen["subjects"]["cb"]
        assert _ends(subj) == ["plangate: complete plans/cb"], (subj, seen["cb:x"])
        return
    if check == "authors":  # every commit naming plangate is the controller's
        for line in seen["authors"].splitlines():
            who, _, subject = line.partition(" ")
            if subject.startswith("plangate:"):
                assert who == "plangate@localhost", line
        return
    if check == "record":
        if slug == "es":
            assert "es-X" not in seen["plans"]["es"], seen["plans"]["es"]
        if slug in ("fk", "fx", "fs"):
            assert not seen["late"][slug].strip(), seen["late"][slug]
        if slug == "ed":
            assert "ed-X" not in seen["plans"]["ed"], seen["plans"]["ed"]
            assert "ed-X" not in seen["logs"]["ed"]
        if slug in ("bg", "cl"):
            assert _ends(seen["subjects"][slug]) == [f"plangate: complete plans/{slug}"]
        if slug == "bg":
            assert len(seen["logs"]["bg"]) < 1_000_000, len(seen["logs"]["bg"])
        if slug == "rh":  # the cut run: one start, one end (the restored run's)
            subj = seen["subjects"]["rh"]
            assert [x for x in subj if " start " in x] == ["plangate: start plans/rh"], subj
            assert _ends(subj) == ["plangate: complete plans/rh"], subj
        return
    report = seen["audit"]
    subj = seen["subjects"][slug]
    acts = PLANS[slug]
    if check == "calls":
        for _m, t, _x, _r in acts:
            c = _calls(d, t)
            if slug in NEVER:
                assert not c, c
            elif slug == "hg":  # timeout, one retry
                assert len(c) == 2, c
            elif slug in DOUBT:
                assert len(c) <= 1, (t, c)
                assert t.endswith("-2") or len(c) == 1, (t, c)
            else:
                assert len(c) == 1, (t, c)
    elif check == "ended":
        ends = _ends(subj)
        if slug in NEVER:
            assert not [x for x in subj if "start" in x or x in ends], subj
        elif slug in FAILS:
            assert ends == [f"plangate: fail plans/{slug}"], subj
        elif slug in DOUBT:
            assert len(ends) <= 1 if slug == "rh" else len(ends) == 1, subj
        else:
            assert ends == [f"plangate: complete plans/{slug}"], subj
    elif check == "audit":
        runs = [e["outcome"] for e in _valid(report, slug)]
        want = ["await-approval", "complete"] if slug == "og" else runs[:1]
        assert sorted(runs) == want, (slug, runs)
        if slug not in NEVER:
            assert runs, (slug, runs)
        assert not _findings(report, slug), _findings(report, slug)
