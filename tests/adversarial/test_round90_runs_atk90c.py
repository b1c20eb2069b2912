"""Round 90 (runs, atk90c): round 88's per-call cgroup v2 (the ``/bin/sh`` exec shim, the
``cgroup.kill`` at a call's end, a timeout, an error and the crash recovery, the start-up
sweep) at its edges: exactness through the shim, sub-cgroups a tool makes, a frozen
sub-cgroup, six parallel calls, SIGKILLs of the controller mid-tool and at the cgroup's
creation, leftovers of a dead controller.

Lab (one build, two labs, local mode, ``execution: {max_parallel_actions: 6,
max_concurrent_plans: 8}``, every plan approved by Alice, one pass per step). ``off`` runs
the exactness plans with ``PLANGATE_TOOL_CGROUPS=off`` in the controller's environment
(the reference: the marker stop, Python's own spawn); ``on`` runs the same plans with
cgroups (this host: cgroup v2 at ``/sys/fs/cgroup/unified``, the controller in ``/``,
root) and the containment and kill plans. Both controllers carry ``ODD_B=a\\xffb\\nc``
(non-UTF-8, a newline) in their environment.

- exactness (``test_exact``, checks ``argv`` (after argv[0], which the docs let the shim
  change), ``env``, ``cwd``, ``outcome`` (status and reason, and no side-mark file),
  ``cgroup`` (on: ``/plangate-...``; off: ``/``)): the probe ``probe.py`` records argv and
  environment as bytes, its folder and ``/proc/self/cgroup``. ``pa`` plain; ``pe`` argv
  ``""``, ``"a\\nb"``, ``A=B``, ``$(id)``, ``-e``, ``--``, ``-``, a param with quotes,
  backticks, ``;|&``, a newline and a backslash, ``" "``, ``é`` U+2028 TAB; ``pv`` an
  environment dash would drop or set (``IFS``, ``PPID``, ``OPTIND``, ``PS1``, ``PS2``,
  ``PS4`` with ``$(touch ...)``, ``ENV`` naming a file that would mark, ``OLDPWD``,
  ``A-B``, ``A.B``, ``1X``, ``_``, ``SHLVL``, ``LINENO``, ``POSIXLY_CORRECT``, ``HOME``,
  ``PATH``); ``pw`` a lying ``PWD`` and ``CDPATH`` with a catalog ``cwd``; ``pu``
  non-ASCII argv, the inherited non-UTF-8 variable; ``pr`` a relative program ``./rel``;
  ``pd`` a relative program ``-d/x`` (a leading dash); ``pp`` a bare name found through a
  relative ``PATH`` entry ``-d``; ``pq`` ``PATH=""``; ``pz`` a program named ``A=B`` on
  ``PATH`` (beside a program ``z1`` that marks if run in its place); ``py`` the same with an
  env name ``A-B`` (the ``env -i`` path); ``pk`` ``-d/x`` with ``A-B``; ``pj`` ``pe``'s
  argv with ``A-B`` and ``IFS``; ``ps`` an executable script without ``#!``; ``pn`` a
  ``#!`` script without the exec bit; ``pl`` a symlink found on ``PATH``.
- containment (``ct.py``, helpers fork, ``setsid``, close stdio and beat every 0.1 s for
  10 s into ``ct.log``): ``sb`` a helper in a sub-cgroup ``sub`` of its call's cgroup;
  ``sz`` the same, the tool then freezes ``sub`` (``cgroup.freeze``); ``sm`` 30 empty
  nested sub-cgroups and a helper in ``a/b/c``; ``sn`` a helper in the call's own cgroup;
  ``hc`` control (no helper). Checks ``late`` (no beat 0.5 s after the tool's exit),
  ``calls``, ``record``, ``audit``; ``test_removed`` (the call's cgroup, named by the
  journal's ``spawn`` record, gone after the passes); ``test_left_empty``.
- kills (``run --once`` in a session of its own, SIGKILLed by polling at 0.5 ms, then a
  plain pass): ``sk`` mid-tool, its helper in ``sub`` beating; ``k2`` the same at action 2
  (action 1 done); ``ck`` as soon as the journal holds ``start`` and a new
  ``plangate-*`` cgroup appears (before the tool runs). Checks ``landed``, ``late`` (no beat
  after the recovering pass ended), ``calls`` (once, ``ck`` at most once; ``k2-1`` once),
  ``record`` (``failed`` ``E_ACTION_IN_DOUBT``), ``audit`` (one valid ``fail``);
  ``test_killed_removed``.
- ``test_sweep``: before the kill passes (three new controller start-ups) two leftovers of a
  dead controller are made below the controller's cgroup: ``plangate-9999991-atk90c``
  (empty) and ``plangate-9999992-atk90c`` whose only child ``sub`` is empty.
- ``test_parallel``: six ``needs: []`` calls of one plan: six distinct cgroups, each call
  alone in its own (read twice), each once, ``completed``.

Seen (round 90): one class, ``cgleft``, 6 ids (``test_removed[sb]``, ``[sz]``, ``[sm]``,
``test_killed_removed[sk]``, ``[k2]``, ``test_sweep[nested]``): a tool that makes a
sub-cgroup in its own call's cgroup leaves that call's cgroup behind for good: after the
call's normal end (``sb``, ``sz``, ``sm``) and after the crash recovery's stop (``sk``,
``k2``) the journal's ``plangate-<pid>-<marker>`` was still below the controller's cgroup
(with its empty child), the pass logging ``{"cgroup": "/plangate-25932-e563...",
"error": "Device or resource busy", "event": "tools.cgroup_left", "level": "warning"}``;
three later controller start-ups (their pid 25932/31258/32367 gone) did not sweep them,
and the dead controller's ``plangate-9999992-atk90c`` with an empty child stayed while the
flat empty ``plangate-9999991-atk90c`` was removed. No process was left in any of them
(``test_left_empty``): every helper died (``sb``/``sn`` beats stopped within 10 ms of the
tool's exit; ``sz``'s frozen helper killed; ``sk``/``k2`` "its tool process 31311 was
still running and was stopped", the helper's beats stopped ~1 s after the kill, before
the recovering pass ended). Held: every exactness id (argv, environment bytes, folder and
outcome equal on and off; ``pd``/``pk``/``pp`` fail alike ``E_TOOL_FAILED: t_pd: -d/x exited
with status 2: /bin/sh: 0: Illegal option -d`` (the script's own ``#!/bin/sh`` reading its
path as an option, the same with cgroups off); ``ps`` ``cannot start '.../noshebang': Exec
format error`` on both, never run as a shell script; ``pn`` ``Permission denied`` on both;
``pz``/``py`` ran ``A=B`` itself, ``z1`` never; no ``ENV``/``PS4`` mark); only argv[0]
differed, for ``pq`` (``PATH=""``): ``./pgm`` on, ``pgm`` off (docs: "its argv[0] is the
program's path as found on PATH"; not judged). ``ck``: the kill landed after the cgroup was
made and before the tool ran; in one build the tool then ran once with the controller
dead (the documented known limit), in the next it never ran (0 calls); each time the next
pass ``failed`` ``E_ACTION_IN_DOUBT ... it may or may not have taken effect``, not rerun,
its empty cgroup swept. Parallel: six cgroups, each call alone. Records and the clone's
audit agreed for every plan.

Should: ``cgleft``: docs/execution.md: "**A tool that exits normally loses its helpers
too**: when the call ends, whatever it left running in its cgroup is killed and the cgroup
removed"; every stop "writes its ``cgroup.kill`` first ... waits for it to empty (up to 5
s) and removes it"; "At start-up the controller removes the empty ``plangate-<pid>-...``
cgroups below its own whose controller (that pid) is gone" (a cgroup whose only child is
empty holds no process, and was never removed). Nothing ran twice and nothing acted late:
the leak is of cgroups (one per such call, for good), not of processes.

Fixed (2026-12-02, the lead): ``cgleft``: a call's cgroup is removed with every cgroup the
tool made below it, the deepest first (``cgroup._rmdir_tree``), at the call's end, by the
recovery and by the start-up sweep; ``cgroup.kill`` already killed the whole subtree.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, Lab, cases, clone_audit, load_yaml
from mcpkit import PLANGATE
from test_round2_execution_kit import shared

PY = sys.executable

PROBE = r"""
import json, os, sys
out, tag = sys.argv[1], sys.argv[2]
def s(b):
    return b.decode("latin-1")
cg = open("/proc/self/cgroup").read()
row = {
    "argv": [s(os.fsencode(a)) for a in sys.argv],
    "env": {s(k): s(v) for k, v in os.environb.items()},
    "cwd": s(os.getcwdb()),
    "cg": [x[3:] for x in cg.splitlines() if x.startswith("0::")],
}
with open(os.path.join(out, tag + ".jsonl"), "a") as f:
    f.write(json.dumps(row) + "\n")
print(json.dumps({"ok": True}))
"""

#: a script the shim runs: records its own $0 and args through the probe
SCRIPT = '#!/bin/sh\nexec {py} {probe} {out} {tag} "$0" "$@"\n'

CT = r"""
import json, os, sys, time
mode, tag, d = sys.argv[1], sys.argv[2], sys.argv[3]
mount = [l.split()[4] for l in open("/proc/self/mountinfo") if " - cgroup2 " in l][0]
rel = [x[3:] for x in open("/proc/self/cgroup").read().splitlines() if x.startswith("0::")][0]
base = mount + rel
def note(kind, **kw):
    kw.update(kind=kind, tag=tag, pid=os.getpid(), t=time.time())
    with open(os.path.join(d, "ct.log"), "a") as f:
        f.write(json.dumps(kw) + "\n")
        f.flush()
        os.fsync(f.fileno())
procs = open(os.path.join(base, "cgroup.procs")).read().split()
note("call", cg=rel, procs=procs)
def helper(sub, beats=100):
    pid = os.fork()
    if pid:
        return pid
    os.setsid()
    n = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(n, fd)
    try:
        if sub:
            os.makedirs(os.path.join(base, sub), exist_ok=True)
            open(os.path.join(base, sub, "cgroup.procs"), "w").write(str(os.getpid()))
        for _ in range(beats):
            note("beat")
            time.sleep(0.1)
    finally:
        os._exit(0)
if mode == "sb":
    helper("sub")
    time.sleep(0.3)
elif mode == "sn":
    helper("")
    time.sleep(0.3)
elif mode == "sz":
    helper("sub")
    time.sleep(0.3)
    open(os.path.join(base, "sub", "cgroup.freeze"), "w").write("1")
    time.sleep(0.2)
elif mode == "sm":
    for i in range(30):
        os.makedirs(os.path.join(base, "e%d" % i, "f"), exist_ok=True)
    helper("a/b/c")
    time.sleep(0.3)
elif mode in ("sk", "kk"):
    helper("sub")
    time.sleep(0.3)
    open(os.path.join(d, "READY-" + tag), "w").write(str(os.getpid()))
    time.sleep(30)
elif mode == "mp":
    time.sleep(0.6)
    procs = open(os.path.join(base, "cgroup.procs")).read().split()
    note("mid", cg=rel, procs=procs)
note("exit")
print(json.dumps({"ok": True, "cg": rel}))
"""


def _j(x: Any) -> str:
    return json.dumps(x)


#: exactness through the shim: id -> (argv, env or None, cwd or None, params)
def _exact(r: Path) -> dict[str, tuple[list[str], dict[str, str] | None, str | None, str]]:
    out, probe = str(r / "probe"), str(r / "probe.py")
    odd_env = {
        "IFS": ":",
        "PPID": "1",
        "OPTIND": "5",
        "PS1": "p1",
        "PS2": "p2",
        "PS4": "+$(touch PS4MARK)",
        "ENV": str(r / "envfile"),
        "OLDPWD": "/old",
        "A-B": "dash",
        "A.B": "dot",
        "1X": "digit",
        "_": "under",
        "SHLVL": "9",
        "LINENO": "7",
        "POSIXLY_CORRECT": "1",
        "HOME": "/h",
        "PATH": "/usr/bin:/bin",
    }
    odd_args = ["", "a\nb", "A=B", "$(id)", "-e", "--", "-", "{a}", " ", "é\u2028\t"]
    bin_ = str(r / "bin")
    return {
        "pa": ([PY, probe, out, "pa", "{a}"], None, None, 'a: "plain"'),
        "pe": ([PY, probe, out, "pe", *odd_args], None, None, 'a: "x\'\\"`;|&\\n\\\\"'),
        "pv": ([PY, probe, out, "pv"], odd_env, None, ""),
        "pw": ([PY, probe, out, "pw"], {"PWD": "/nonexistent/lie", "CDPATH": "/"}, "../w", ""),
        "pu": ([PY, probe, out, "pu", "é", "\u2028"], None, None, ""),
        "pr": (["./rel", "r1"], None, "../w", ""),
        "pd": (["-d/x", "d1"], None, "../w", ""),
        "pp": (["pgm", "p1"], {"PATH": "-d:/usr/bin:/bin"}, "../w", ""),
        "pq": (["pgm", "q1"], {"PATH": ""}, "../w/-d", ""),
        "pz": (["A=B", "z1"], {"PATH": f"{bin_}:/usr/bin:/bin"}, None, ""),
        "py": (["A=B", "z1"], {"PATH": f"{bin_}:/usr/bin:/bin", "A-B": "1"}, None, ""),
        "pk": (["-d/x", "k1"], {"A-B": "1"}, "../w", ""),
        "pj": ([PY, probe, out, "pj", *odd_args], {"A-B": "1", "IFS": "x"}, None, 'a: "-"'),
        "ps": ([str(r / "w" / "noshebang"), "s1"], None, None, ""),
        "pn": ([str(r / "w" / "noexec"), "n1"], None, None, ""),
        "pl": (["ln1", "l1"], {"PATH": f"{bin_}:/usr/bin:/bin"}, None, ""),
    }


def _files(r: Path) -> None:
    out, probe = str(r / "probe"), str(r / "probe.py")
    (r / "probe").mkdir()
    (r / "probe.py").write_text(PROBE)
    (r / "ct.py").write_text(CT)
    (r / "ctd").mkdir()
    (r / "envfile").write_text(f"touch {r}/ENVMARK\n")
    for d, name, tag in [
        ("w", "rel", "pr"),
        ("w/-d", "x", "pdk"),
        ("w/-d", "pgm", "ppq"),
        ("bin", "A=B", "pzy"),
        ("bin", "real1", "pl"),
    ]:
        (r / d).mkdir(parents=True, exist_ok=True)
        f = r / d / name
        f.write_text(SCRIPT.format(py=PY, probe=probe, out=out, tag=tag))
        f.chmod(0o755)
    # a program the engine must not run in place of A=B (env(1) would read the path as NAME=)
    (r / "bin" / "z1").write_text(f"#!/bin/sh\necho wrong >> {r}/WRONG\n")
    (r / "bin" / "z1").chmod(0o755)
    (r / "bin" / "ln1").symlink_to(r / "bin" / "real1")
    (r / "w" / "noshebang").write_text(f"echo ns >> {r}/NSMARK\n")
    (r / "w" / "noshebang").chmod(0o755)
    (r / "w" / "noexec").write_text(f"#!/bin/sh\necho ne >> {r}/NEMARK\n")


def _tools(r: Path) -> str:
    lines = []
    for vid, (argv, env, cwd, _p) in _exact(r).items():
        t = f"t_{vid}: {{kind: exec, argv: {_j(argv)}"
        if env is not None:
            t += f", env: {_j(env)}"
        if cwd is not None:
            t += f", cwd: {_j(cwd)}"
        lines.append(t + "}\n")
    ct = [PY, str(r / "ct.py"), "{m}", "{t}", str(r / "ctd")]
    lines.append(f"ct: {{kind: exec, argv: {_j(ct)}}}\n")
    return "".join(lines)


def _plan(name: str, acts: list[tuple[str, str]], extra: str = "") -> str:
    body = "".join(
        f'  - id: {i}\n    tool: {tool}\n    why: "step {i}"\n{extra}    params: {{{p}}}\n'
        for i, (tool, p) in enumerate(acts, 1)
    )
    tools = sorted({t for t, _ in acts})
    return (
        f'plan:\n  name: "{name}"\n  task: "plan {name}"\n  status: pending_approval\n'
        f"available_tools: {_j([{'name': t} for t in tools])}\nactions:\n{body}"
    )


#: containment plans (cgroups on only): id -> actions
CONT: dict[str, list[tuple[str, str]]] = {
    "sb": [("ct", 'm: sb, t: "sb"')],
    "sz": [("ct", 'm: sz, t: "sz"')],
    "sm": [("ct", 'm: sm, t: "sm"')],
    "sn": [("ct", 'm: sn, t: "sn"')],
    "hc": [("ct", 'm: hc, t: "hc"')],
}
KILLED = {
    "sk": [("ct", 'm: sk, t: "sk"')],
    "k2": [("ct", 'm: hc, t: "k2-1"'), ("ct", 'm: kk, t: "k2-2"')],
    "ck": [("ct", 'm: hc, t: "ck"')],
}
#: leftovers of a dead controller (pid 999999x: gone), empty, one with an empty child
DECOYS = ["plangate-9999991-atk90c", "plangate-9999992-atk90c/sub"]
MP = [("ct", f'm: mp, t: "mp-{i}"') for i in range(1, 7)]


def _pass(lab: Lab, root: Path, cond: Any = None, limit: float = 60) -> dict[str, Any]:
    env = lab.env()
    p = subprocess.Popen(
        [PLANGATE, "run", "--once", "--config", str(lab.config)],
        cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        start_new_session=True,
    )  # fmt: skip
    hit = False
    if cond is not None:
        end = time.time() + limit
        while time.time() < end and p.poll() is None:
            if cond():
                hit = True
                break
            time.sleep(0.0005)
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
    err = p.communicate(timeout=180)[1].decode(errors="replace")
    stale = []
    for lock in ("HEAD.lock", "index.lock", "refs/heads/main.lock"):
        if (lab.repo / ".git" / lock).exists():
            (lab.repo / ".git" / lock).unlink()
            stale.append(lock)
    return {"hit": hit, "rc": p.returncode, "err": err[-1500:], "stale": stale, "end": time.time()}


def _approve(lab: Lab, plans: list[str]) -> None:
    for plan in plans:
        lab.set_status(plan, "approved")
        lab.git("add", f"plans/{plan}/PLAN.yml")
    lab.git("commit", "-q", "-m", f"approve {' '.join(plans)}", who=ALICE)


def _journal(lab: Lab, plan: str) -> bytes:
    data = b""
    for base, _dirs, files in os.walk(lab.state):
        for name in files:
            if f"plans%2F{plan}" in base or f"plans%2F{plan}" in name:
                try:
                    data += (Path(base) / name).read_bytes()
                except OSError:
                    continue
    return data


def _cgroups(data: bytes) -> list[str]:
    return sorted({m.decode() for m in re.findall(rb"plangate-[A-Za-z0-9_.-]+", data)})


def _mount() -> str:
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        if " - cgroup2 " in line:
            return line.split()[4]
    return ""


def _own_cg() -> Path:
    rel = [x[3:] for x in Path("/proc/self/cgroup").read_text().splitlines() if x[:3] == "0::"]
    return Path(_mount() + (rel[0] if rel else "/"))


def _ct(root: Path) -> list[dict[str, Any]]:
    f = root / "ctd" / "ct.log"
    if not f.exists():
        return []
    text = f.read_text()
    return [json.loads(x) for x in text[: text.rfind("\n") + 1].splitlines() if x.strip()]


def _probe(root: Path, tag: str) -> list[dict[str, Any]]:
    f = root / "probe" / f"{tag}.jsonl"
    return [json.loads(x) for x in f.read_text().splitlines()] if f.exists() else []


def _lab(root: Path, off: bool) -> Lab:
    _files(root)
    lab = Lab(
        root / "lab",
        tools=_tools(root),
        extra="execution: {max_parallel_actions: 6, max_concurrent_plans: 8}\n",
    )
    env = {"ODD_B": "a\udcffb\nc"}
    if off:
        env["PLANGATE_TOOL_CGROUPS"] = "off"
    lab.extra_env = env  # type: ignore[attr-defined]
    return lab


def _finish(lab: Lab, root: Path, names: list[str], seen: dict[str, Any]) -> None:
    seen["status"] = lab.status()
    seen["end"] = {}
    for name in names:
        try:
            seen["end"][name] = dict(load_yaml(lab.git("show", f"HEAD:plans/{name}/PLAN.yml")))
        except Exception as why:  # what the record check reports
            seen["end"][name] = {"error": repr(why)}
    seen["subjects"] = {name: lab.subjects(name) for name in names}
    try:
        report, _valid = clone_audit(lab, root / "clone")
        seen["audit"] = report
    except Exception as why:  # what the audit checks report
        seen["audit"] = {"error": repr(why)[-1500:], "executions": []}


def _build(root: Path) -> Lab:
    seen: dict[str, Any] = {"err": []}
    # -- the reference: cgroups off (the marker stop, Python's spawn as before round 88)
    offr = root / "off"
    offr.mkdir()
    off = _lab(offr, True)
    ex = list(_exact(offr))
    for vid in ex:
        p = 'a: "-"' if vid == "pj" else _exact(offr)[vid][3]
        off.write(vid, _plan(vid, [(f"t_{vid}", p)]))
    off.commit("agent plans")
    seen["err"].append(off.run(check=False).stderr[-1500:])
    _approve(off, ex)
    seen["err"].append(off.run(check=False).stderr[-1500:])
    seen["off_probe"] = {v: _probe(offr, v) for v in [*ex, "pdk", "ppq", "pzy"]}
    seen["off_marks"] = sorted(x.name for x in offr.iterdir() if x.name.isupper())
    seen["off_status"] = off.status()
    # -- the lab: cgroups on
    onr = root / "on"
    onr.mkdir()
    lab = _lab(onr, False)
    lab.seen = seen  # type: ignore[attr-defined]
    for vid in ex:
        p = 'a: "-"' if vid == "pj" else _exact(onr)[vid][3]
        lab.write(vid, _plan(vid, [(f"t_{vid}", p)]))
    for vid, acts in {**CONT, **KILLED}.items():
        lab.write(vid, _plan(vid, acts))
    lab.write("mp", _plan("mp", MP, extra="    needs: []\n"))
    lab.commit("agent plans")
    seen["err"].append(lab.run(check=False).stderr[-1500:])
    own = _own_cg()
    seen["own_cg"] = str(own)
    # a leftover a dead controller could have left: empty, its pid gone
    seen["decoy"] = DECOYS
    for d in DECOYS:
        (own / d).mkdir(parents=True)
    _approve(lab, ex + list(CONT) + ["mp"])
    seen["pass1"] = _pass(lab, onr)
    seen["on_probe"] = {v: _probe(onr, v) for v in [*ex, "pdk", "ppq", "pzy"]}
    seen["on_marks"] = sorted(x.name for x in onr.iterdir() if x.name.isupper())
    # -- kills
    seen["kill"] = {}
    ctd = onr / "ctd"
    _approve(lab, ["sk"])
    seen["kill"]["sk"] = _pass(lab, onr, lambda: (ctd / "READY-sk").exists())
    seen["kill"]["sk"]["after"] = _pass(lab, onr)
    _approve(lab, ["k2"])
    seen["kill"]["k2"] = _pass(lab, onr, lambda: (ctd / "READY-k2-2").exists())
    seen["kill"]["k2"]["after"] = _pass(lab, onr)
    _approve(lab, ["ck"])
    before = {p.name for p in own.iterdir() if p.name.startswith("plangate-")}
    seen["kill"]["ck"] = _pass(
        lab,
        onr,
        lambda: (
            b'"t":"start"' in _journal(lab, "ck")
            and any(p.name.startswith("plangate-") and p.name not in before for p in own.iterdir())
        ),
    )
    seen["kill"]["ck"]["new"] = sorted(
        p.name for p in own.iterdir() if p.name.startswith("plangate-") and p.name not in before
    )
    time.sleep(1.0)
    seen["kill"]["ck"]["after"] = _pass(lab, onr)
    time.sleep(1.5)  # a helper still alive beats every 0.1 s
    seen["ct"] = _ct(onr)
    names = ex + list(CONT) + list(KILLED) + ["mp"]
    seen["journal_cg"] = {n: _cgroups(_journal(lab, n)) for n in names}
    seen["left"] = {
        n: [c for c in cgs if (own / c).exists()] for n, cgs in seen["journal_cg"].items()
    }
    seen["decoy_left"] = [d for d in DECOYS if (own / d.split("/")[0]).exists()]
    seen["left_pop"] = {c: _pop(own / c) for cgs in seen["left"].values() for c in cgs}
    seen["ck_left"] = [c for c in seen["kill"]["ck"]["new"] if (own / c).exists()]
    _finish(lab, onr, names, seen)
    for cg in [c for cgs in seen["left"].values() for c in cgs] + DECOYS:
        _rmtree_cg(own / cg.split("/")[0])  # the lab's own leftovers, not the machine's
    return lab


def _pop(top: Path) -> list[str]:
    """Every process still in ``top`` or below it."""
    procs: list[str] = []
    for base, _dirs, _files in os.walk(top):
        try:
            procs += Path(base, "cgroup.procs").read_text().split()
        except OSError:
            continue
    return procs


def _rmtree_cg(top: Path) -> None:
    if not top.is_dir():
        return
    for base, dirs, _files in sorted(os.walk(top), key=lambda x: -len(x[0])):
        del dirs
        try:
            os.rmdir(base)
        except OSError:
            continue


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r90-atk90c", _build)


def _seen(lab: Lab) -> dict[str, Any]:
    return lab.seen  # type: ignore[attr-defined,no-any-return]


def test_dump(lab: Lab) -> None:
    """Not a check: the story, for the reader of ``-rA``."""
    seen = dict(_seen(lab))
    seen.pop("audit", None)
    print(json.dumps(seen, default=str, indent=1)[:80000])


# -- exactness through the shim: what the tool sees with cgroups on is what it saw off ----
EX = ["pa", "pe", "pv", "pw", "pu", "pr", "pd", "pp", "pq", "pz", "py", "pk", "pj", "ps", "pn"]
EX += ["pl"]
#: the probe's tag per variant (a script records as its own tag; shared tags hold both)
TAG = {"pd": "pdk", "pk": "pdk", "pp": "ppq", "pq": "ppq", "pz": "pzy", "py": "pzy"}
SCRIPTED = {"pr", "pl", "pdk", "ppq", "pzy"}
#: the engine's own per-call values and the labs' own differences
NOISE = {"PLANGATE_ATTEMPT", "PLANGATE_IDEMPOTENCY_KEY", "PLANGATE_TOOL_CGROUPS", "REC_LOG"}
NOISE |= {"PYTEST_CURRENT_TEST"}


def _norm(rows: list[dict[str, Any]], side: str) -> list[dict[str, Any]]:
    out = []
    for row in rows:
        argv = [a.replace(f"/{side}/", "/X/") for a in row["argv"]]
        env = {k: v.replace(f"/{side}/", "/X/") for k, v in row["env"].items() if k not in NOISE}
        out.append({"argv": argv, "env": env, "cwd": row["cwd"].replace(f"/{side}/", "/X/")})
    return out


def _pair(lab: Lab, vid: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    tag = TAG.get(vid, vid)
    seen = _seen(lab)
    return _norm(seen["on_probe"][tag], "on"), _norm(seen["off_probe"][tag], "off")


@pytest.mark.parametrize("vid", cases(EX, EX, {}))
@pytest.mark.parametrize("check", ["argv", "env", "cwd", "outcome", "cgroup"])
def test_exact(lab: Lab, vid: str, check: str) -> None:
    """Through the shim the tool gets the argv (after argv[0]), environment and folder it
    got without cgroups, and fails or succeeds the same; it runs in a cgroup of its own."""
    on, off = _pair(lab, vid)
    seen = _seen(lab)
    assert len(on) == len(off), (on, off)
    if check == "argv":
        cut = 4 if TAG.get(vid, vid) in SCRIPTED else 1  # a script's $0 is argv[0]
        assert [r["argv"][:3] + r["argv"][cut:] for r in on] == [
            r["argv"][:3] + r["argv"][cut:] for r in off
        ]
    elif check == "env":
        assert [r["env"] for r in on] == [r["env"] for r in off]
    elif check == "cwd":
        assert [r["cwd"] for r in on] == [r["cwd"] for r in off]
    elif check == "outcome":
        a, b = seen["status"][f"plans/{vid}"], seen["off_status"][f"plans/{vid}"]
        assert a.get("status") == b.get("status"), (a, b)
        ra = str(a.get("reason")).replace("/on/", "/X/")
        assert ra == str(b.get("reason")).replace("/off/", "/X/"), (a, b)
        assert not seen["on_marks"] and not seen["off_marks"], seen["on_marks"]
    else:
        rows = seen["on_probe"][TAG.get(vid, vid)]
        assert all(r["cg"][0].startswith("/plangate-") for r in rows), rows
        assert all(r["cg"] == ["/"] for r in seen["off_probe"][TAG.get(vid, vid)])


# -- containment: helpers, sub-cgroups, a frozen sub-cgroup, 30 empty ones ------------------
CONTS = ["sb", "sz", "sm", "sn", "hc"]
BROKEN: dict[str, Any] = {}


def _beats(lab: Lab, tag: str) -> list[float]:
    return [r["t"] for r in _seen(lab)["ct"] if r["tag"] == tag and r["kind"] == "beat"]


def _exit(lab: Lab, tag: str) -> float | None:
    ends = [r["t"] for r in _seen(lab)["ct"] if r["tag"] == tag and r["kind"] == "exit"]
    return ends[0] if ends else None


def _calls(lab: Lab, tag: str) -> int:
    return sum(1 for r in _seen(lab)["ct"] if r["tag"] == tag and r["kind"] == "call")


@pytest.mark.parametrize("vid", cases(CONTS, CONTS, {}))
@pytest.mark.parametrize("check", ["late", "calls", "record", "audit"])
def test_contained(lab: Lab, vid: str, check: str) -> None:
    """A helper the tool leaves (in a sub-cgroup of its call's, frozen there, nested deep, or
    in the call's own) dies with the call; the plan ran once, recorded, audited."""
    seen = _seen(lab)
    if check == "late":
        end = _exit(lab, vid)
        assert end is not None
        late = [t for t in _beats(lab, vid) if t > end + 0.5]
        assert late == [], (len(late), end)
    elif check == "calls":
        assert _calls(lab, vid) == 1
    elif check == "record":
        assert seen["status"][f"plans/{vid}"].get("status") == "completed"
        assert seen["end"][vid]["plan"]["status"] == "completed"
    else:
        runs = [
            e
            for e in seen["audit"].get("executions", [])
            if e.get("plan") == f"plans/{vid}" and e.get("approval_valid")
        ]
        assert len(runs) == 1 and runs[0]["outcome"] == "complete", runs


@pytest.mark.parametrize("vid", cases(CONTS, CONTS, BROKEN))
def test_removed(lab: Lab, vid: str) -> None:
    """ "when the call ends, whatever it left running in its cgroup is killed and the cgroup
    removed": nothing of the call's cgroup is left after the passes (and the start-ups that
    followed)."""
    seen = _seen(lab)
    assert seen["left"][vid] == [], (seen["left"][vid], seen["left_pop"])


def test_left_empty(lab: Lab) -> None:
    """Whatever cgroup was left holds no process: nothing of a call still runs in it."""
    assert all(v == [] for v in _seen(lab)["left_pop"].values()), _seen(lab)["left_pop"]


# -- SIGKILL of the controller: mid-tool with a helper in a sub-cgroup, at action 2, and at
# the call's cgroup's creation -------------------------------------------------------------
KILLS = ["sk", "k2", "ck"]
KBROKEN: dict[str, Any] = {}
KTAG = {"sk": "sk", "k2": "k2-2", "ck": "ck"}


@pytest.mark.parametrize("vid", KILLS)
@pytest.mark.parametrize("check", ["landed", "late", "calls", "record", "audit"])
def test_killed(lab: Lab, vid: str, check: str) -> None:
    seen = _seen(lab)
    kill = seen["kill"][vid]
    if check == "landed":
        assert kill["hit"] and kill["rc"] == -9, kill
    elif check == "late":  # nothing of the killed attempt acts after the recovery
        late = [t for t in _beats(lab, KTAG[vid]) if t > kill["after"]["end"]]
        assert late == [], late
    elif check == "calls":  # ck: cut before its tool ran, or after (both seen): never rerun
        assert _calls(lab, KTAG[vid]) == 1 or (vid == "ck" and _calls(lab, "ck") == 0)
        if vid == "k2":
            assert _calls(lab, "k2-1") == 1
    elif check == "record":
        row = seen["status"][f"plans/{vid}"]
        assert row.get("status") == "failed", row
        assert "E_ACTION_IN_DOUBT" in str(row.get("reason")), row
        assert seen["end"][vid]["plan"]["status"] == "failed"
    else:
        runs = [
            e
            for e in seen["audit"].get("executions", [])
            if e.get("plan") == f"plans/{vid}" and e.get("approval_valid")
        ]
        assert len(runs) == 1 and runs[0]["outcome"] == "fail", runs


@pytest.mark.parametrize("vid", cases(KILLS, KILLS, KBROKEN))
def test_killed_removed(lab: Lab, vid: str) -> None:
    """The recovery's stop "writes its cgroup.kill first ... and removes it"; a cgroup made
    just before the kill is swept at the next start-up once empty."""
    seen = _seen(lab)
    if vid == "ck":
        if not seen["kill"]["ck"]["new"]:  # under load the kill came before the cgroup was
            pytest.skip("the SIGKILL landed before the run made its cgroup: nothing to sweep")
        assert seen["ck_left"] == [], seen["ck_left"]
    else:
        assert seen["left"][vid] == [], seen["left"][vid]


@pytest.mark.parametrize("decoy", cases(["flat", "nested"], DECOYS, {}))
def test_sweep(lab: Lab, decoy: str) -> None:
    """At start-up the controller removes the empty ``plangate-<pid>-...`` cgroups of a
    controller that is gone (one empty, one whose only child is empty)."""
    assert decoy not in _seen(lab)["decoy_left"], _seen(lab)["decoy_left"]


@pytest.mark.parametrize("check", ["distinct", "alone", "calls", "record"])
def test_parallel(lab: Lab, check: str) -> None:
    """Six parallel calls: each in a cgroup of its own, alone in it, each once."""
    seen = _seen(lab)
    rows = [r for r in seen["ct"] if r["tag"].startswith("mp-") and r["kind"] in ("call", "mid")]
    if check == "distinct":
        cgs = {r["tag"]: r["cg"] for r in rows}
        assert len(set(cgs.values())) == 6, cgs
    elif check == "alone":
        assert all(r["procs"] == [str(r["pid"])] for r in rows), rows
    elif check == "calls":
        assert all(_calls(lab, f"mp-{i}") == 1 for i in range(1, 7))
    else:
        assert seen["status"]["plans/mp"].get("status") == "completed"
