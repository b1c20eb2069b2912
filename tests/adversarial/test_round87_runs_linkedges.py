"""Round 87 (runs): the edges of round 85's ``linkheld`` fix (a PLAN.yml once committed as a
symlink holds its plan ``E_UNSAFE_PATH`` keeping what it found, and only a regular file back
AT that entry ends the hold) and of every pass stopping, from its journal, the tool a dead
controller left running.

Lab (one, local mode). Tools ``rec``, ``kil`` (as round 85's ``killlink``: effect ``kil:<tag>``
with ``overlap``, ``DONE-<tag>``, waits for a ``GO`` that never comes for a killed variant).
Plans ``<v>``: action 1 ``kil <v>``, action 2 ``rec <v>2``. All frozen by a first pass. The
killed variants (``k*``, ``ry``) are approved by Alice one at a time and a ``run --once`` is
SIGKILLed once ``kil`` did its effect; the variant's first change follows at once. Then the
first changes of the others, two passes (``mid``), the second changes, two passes, ``dl``'s
third and fourth changes (a pass after each), Alice's approvals (``c0``, ``mx``, ``dl``,
``mg``; ``kr``'s resume) in one commit, two passes.

Never killed (frozen, ``pending_approval``):

- ``c0`` (control): nothing until Alice's approval.
- ``ta``: the agent's link (PLAN.yml -> real.yml, the frozen bytes); Alice edits real.yml to
  ``status: approved`` (her commit, the link's target); the agent puts a regular PLAN.yml back
  holding real.yml's bytes (``approved``, by the agent).
- ``la``: Alice herself commits the link, real.yml ``status: approved``; the agent puts the
  regular file back with those bytes.
- ``fb``: the agent's link; Alice puts the regular file back, its status ``approved``.
- ``mx``: the agent's link; the agent puts the same bytes back as a ``100755`` file.
- ``dl``: link, file, link, file (the agent; passes between); then Alice approves.
- ``mg``: the agent's link; the file put back on a side branch, merged ``--no-ff``.
- ``ne``: the agent's link and a regular ``PLAN.yaml`` (the frozen bytes) beside it
  (``E_PLAN_AMBIGUOUS``); Alice sets PLAN.yaml ``approved``; the agent removes the link.
- ``nz``: the agent's link; the link and real.yml removed, a regular ``PLAN.yaml`` alone (the
  frozen bytes); Alice approves PLAN.yaml.
- ``nd``: the agent's link; the link deleted (real.yml stays); a regular PLAN.yml (real.yml's
  bytes) committed; Alice approves.
- ``yy``: the plan's file is ``PLAN.yaml`` from the start: the link there and the file back;
  Alice approves.
- ``lp``: the agent's link; the link re-pointed to ``real2.yml`` (another version: action 2's
  tag ``lpx2``); the ORIGINAL bytes back as a regular PLAN.yml; Alice approves.
- ``mz`` (no link): the agent's PLAN.yml committed ``100755``; Alice approves (her status edit,
  ``git add``).
- ``ma`` (no link): as ``mz``, Alice approves with ``plangate approve plans/ma``.

Killed mid-action:

- ``kc`` (control): nothing after the kill.
- ``ka``: the link; the agent puts back a regular file with the approved version's bytes and
  ``status: approved`` (not ``executing``).
- ``kh``: the agent's link; Alice puts the regular file back (the ``executing`` bytes).
- ``kx``: the link; the same bytes back as a ``100755`` file.
- ``kr``: the link; the file back; at the end Alice's resume approval.
- ``kt``: the link; Alice edits real.yml to ``status: approved`` (a "resume" on the target);
  the agent puts PLAN.yml back with real.yml's bytes.
- ``ry``: as said: the link removed, real.yml's bytes a regular ``PLAN.yaml`` alone.
- ``gy``: PLAN.yml a gitlink (real.yml the bytes); the gitlink removed, a regular ``PLAN.yaml``.
- ``rz``: as ``ry``, then ``git mv PLAN.yaml PLAN.yml``.
- ``rd``: the link; the link deleted (real.yml stays).
- ``ky``: as ``kr`` without the resume, the plan's file ``PLAN.yaml`` from the start.

Checks: ``held`` (at ``mid``, every link held: no ``kil`` call of an unkilled plan, one of a
killed one, no ``rec <v>2``), ``calls`` (the end: ``c0``, ``mx``, ``dl``, ``mg`` once; ``ta``,
``la`` never; killed once, ``kr`` twice never beside itself, ``rec <v>2`` only after a
resume; ``fb``, ``ne``, whose documented outcome is open: at most once, and the audit
agrees), ``stopped`` (no ``kil`` process of a kill left), ``record`` (the kill's
``E_ACTION_IN_DOUBT`` on the branch; HEAD's file ``failed``, ``kr`` ``completed``), ``tree``
(nothing of a plan left in the shared checkout), ``row`` (``ry``, ``gy``, ``rz``, ``rd``,
``nz``, ``nd``, ``ne``: no row held ``E_UNSAFE_PATH`` when HEAD's folder holds no link),
``audit`` (fresh clone: valid runs = runs).

Seen (round 87): **a link replaced by a regular file under the folder's OTHER name keeps the
hold for good** (class ``linkrename``; ``ry``, ``gy`` ``:{record,row,tree}``, ``nz``
``:{calls,row,audit}``, ``ne:row``: 10 ids). ``ry``: Alice approved, the pass SIGKILLed in
action 1; the agent ``mv PLAN.yml real.yml; ln -s real.yml PLAN.yml`` (committed), two passes
(held, the ``kil`` process stopped: ``:stopped`` held), then ``git rm --cached PLAN.yml
real.yml``, the bytes as ``PLAN.yaml`` (committed); four passes later ``plangate status
--json``'s row: ``"file": "plans/ry/PLAN.yaml", "status": null, "held": "E_UNSAFE_PATH",
"reason": "E_UNSAFE_PATH: plans/ry/PLAN.yml is a symbolic link, not a plan file; it is not
read", "file_status": "executing"``, ``last_event`` ``E_ILLEGAL_TRANSITION: agent@example.com
set status executing (from nothing) ...``; HEAD's PLAN.yaml ``executing`` with no
``execution:`` block, no ``E_ACTION_IN_DOUBT`` anywhere in ``git log -p -- plans/ry``, ``??
plans/ry/EXECUTION_LOG.md`` (the killed pass's ``⏳ executing`` log) left in the checkout.
``gy`` the same with a gitlink ("... PLAN.yml is a submodule (gitlink), not a plan file").
``nz`` (never run, frozen): the same steps, then Alice's ``status: approved`` in PLAN.yaml:
row ``"status": "approved", "held": "E_UNSAFE_PATH"`` naming the gone link, ``kil:nz`` never
called, the audit 0 valid runs. ``ne`` (PLAN.yaml added beside the link, then the link
removed): held the same. Held around it: ``rz`` (``ry`` then ``git mv PLAN.yaml PLAN.yml``:
recovered ``failed`` E_ACTION_IN_DOUBT), ``rd`` (the link deleted, real.yml left: recovered,
the controller committed ``plans/rd/PLAN.yml`` ``failed`` with its log), ``nd``.
Fixed (2026-12-01, r87linkrename): the hold ends when the folder, as a commit leaves it, holds
one regular plan file alone under either name (``Lifecycle._sole_file``), judged as without a
hold (``Lifecycle._unsafe_release``): the link's removal with the file in one commit is a
rename, the plan going on from what the hold found (``ry``, ``gy`` recovered ``failed``
E_ACTION_IN_DOUBT with their log; ``nz`` waits for and runs on Alice's approval); a file
beside the link follows the twin rule once the link goes (``ne``); a link left under either
name keeps the hold. ``INDEX_VERSION`` 114. Variants: ``tests/git/test_plan_file_lookup.py``.

**The controller commits a ``100755`` PLAN.yml as ``100644`` and leaves the checkout's file
executable** (class ``modeflip``; ``mz:{calls,audit,tree}``, ``mx:tree``, ``kx:tree``,
``ma:tree``: 6 ids).
``mz``: the agent's ``plans/mz/PLAN.yml`` committed ``100755``; the pass's ``plangate: freeze``
commit: ``mode change 100755 => 100644 plans/mz/PLAN.yml``; ``git status``: `` M
plans/mz/PLAN.yml`` (the mode only). Alice edits ``status: approved`` and ``git add``s the
file: her commit ``mode change 100644 => 100755``; the pass: ``plangate: refuse plans/mz``,
row ``approval refused: E_SELF_APPROVAL: alice@example.com wrote or changed this plan's
content and cannot approve it``; ``kil:mz`` never called. ``mx``/``kx`` (the file back from a
link as ``100755``): they ran / were recovered, but the start or fail commit flipped the mode
the same way and `` M plans/mx/PLAN.yml`` stays in the shared checkout. ``ma``: ``plangate
approve plans/ma`` (as Alice) answers ``approved plans/ma in ... on main`` and the plan runs
once, but `` M plans/ma/PLAN.yml`` (the mode) stays in the checkout after ``complete``.

Fixed (2026-12-01, r87mode): ``modeflip``. Every file the controller commits keeps the mode its
entry has on the branch it commits onto (``objects.kept_mode`` where every commit's tree is
built: ``100644`` or ``100755``; a new file, or one over a link, ``100644``), and in local mode
the index entry and the working-tree file it writes get that mode (``Objects.file_modes``,
``WorkTree.write_worktree``/``set_index_entries``/``hold_index``, the crash note). It never
normalises a mode (a change under its name of what it did not write); ``plangate audit``
flags a controller commit that changes its plan file's mode ``controller-unexplained``.

Held: ``ta``, ``la``, ``kt`` (an approval written into the link's target is no approval, and
the file put back by the agent with ``status: approved`` is refused ``E_APPROVER_NOT_ALLOWED``;
killed runs recovered in doubt, never resumed), ``fb`` (Alice putting the file back with
``approved`` is ``E_SELF_APPROVAL``: nothing ran), ``ka``, ``kh``, ``kx`` (recovered ``failed``
E_ACTION_IN_DOUBT, ``rec <v>2`` never), ``kr`` (one resume: ``kil`` twice, never beside
itself), ``dl``, ``mg``, ``mx``, ``yy`` (ran once), ``lp`` (ran once, the re-pointed link's
``lpx2`` never), ``ky`` (recovered), every killed tool stopped, every ``:held``.

Should (docs/plan-format.md): "A plan whose own file is committed as a symlink or a gitlink is
held ``E_UNSAFE_PATH`` keeping what the hold found (its version, status and open request ...);
a regular file committed back at that path ends the hold ...: the plan goes on from there,
the file judged as changed from the version the hold found. The same bytes are the same plan
(a frozen plan still waits for its approval, an executing run killed meanwhile is recovered
as after any crash); another version is an edit of it (a new approval request). A regular
file under the folder's other name is judged as a twin release's is (beside the link still
there: ``E_PLAN_AMBIGUOUS``; alone: a new file)"; docs/execution.md: "Once the plan is valid
again, one resume approval runs the doubted action and the rest"; "When the branch no
longer shows such a plan executing (... the file renamed ...), the run goes on as it would
have without the crash"; "every pass first stops ... the tool process of every open start a
dead controller left". ``modeflip``: docs/operations.md, "A plan file ``git status`` calls
clean is clean to the controller ... and what they write into the working tree is what git
would check out ..., so ``git status`` stays clean" (here the controller's own commit makes
the checkout differ from HEAD by the executable bit, and docs/approvals.md's "a commit that
changes a plan's own ``PLAN.yml`` with any byte beside a plain status change (... the file
made executable) makes its committer a writer" then turns Alice's plain status edit into a
writer's commit: the honest approval can never run while the agent's mode stays).
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
from advkit import AGENT, ALICE, Lab, cases, load_yaml, pid_alive, until, valid_runs
from mcpkit import PLANGATE
from test_round2_execution_kit import shared

KIL = r"""
import json, os, sys, time
tag = sys.argv[1]
d = os.environ["KIL_DIR"]
second = os.path.exists(os.path.join(d, "DONE-" + tag))
overlap = False
if second:
    try:
        pid = int(open(os.path.join(d, "PID-" + tag)).read())
        stat = open("/proc/%d/stat" % pid).read()
        overlap = stat.rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, ValueError):
        pass
with open(os.environ["REC_LOG"], "a", encoding="utf-8") as f:
    f.write(json.dumps({"argv": ["kil:" + tag], "overlap": overlap, "stdin": ""}) + "\n")
if not second:
    open(os.path.join(d, "PID-" + tag), "w").write(str(os.getpid()))
open(os.path.join(d, "DONE-" + tag), "w").write("1")
for _ in range(0 if second else 600):
    if os.path.exists(os.path.join(d, "GO-" + tag)):
        break
    time.sleep(0.1)
print('{"ok": true}')
"""

CALM = ["c0", "ta", "la", "fb", "mx", "dl", "mg", "ne", "nz", "nd", "mz", "yy", "lp", "ma"]
KILLED = ["kc", "ka", "kh", "ry", "kx", "kr", "kt", "rz", "rd", "gy", "ky"]
VIDS = CALM + KILLED
OPEN = ("fb", "ne")  # no documented outcome: at most once, the audit agreeing
ONCE = ("c0", "mx", "dl", "mg", "nz", "nd", "mz", "yy", "lp", "ma")
YAML = ("ry", "gy", "nz", "ne", "yy", "ky")  # the plan file ends as PLAN.yaml
BORN_YAML = ("yy", "ky")  # the plan file is PLAN.yaml from the start


def _name(v: str) -> str:
    return "PLAN.yaml" if v in BORN_YAML else "PLAN.yml"


def _plan(v: str) -> str:
    return (
        f'plan:\n  name: "{v}"\n  task: "variant {v}"\n  status: pending_approval\n'
        "available_tools:\n  - name: rec\n  - name: kil\nactions:\n"
        f'  - id: 1\n    tool: kil\n    why: "once"\n    params: {{t: "{v}"}}\n'
        f'  - id: 2\n    tool: rec\n    why: "after"\n    params: {{tag: "{v}2"}}\n'
    )


def _status(raw: bytes, status: str) -> bytes:
    lines = raw.decode().split("\n")
    for i, line in enumerate(lines[:6]):
        if line.startswith("  status:"):
            lines[i] = f"  status: {status}"
            break
    return "\n".join(lines).encode()


def _head(lab: Lab, v: str) -> dict[str, Any] | None:
    for name in ("PLAN.yml", "PLAN.yaml"):
        try:
            return dict(load_yaml(lab.git("show", f"HEAD:plans/{v}/{name}")))
        except Exception:  # a file gone or no plan is what the check reports
            continue
    return None


def _link(lab: Lab, v: str, who: tuple[str, str] = AGENT, status: str = "") -> None:
    top = lab.repo / "plans" / v / _name(v)
    raw = lab.git("show", f"HEAD:plans/{v}/{_name(v)}").encode()
    top.unlink()
    (lab.repo / "plans" / v / "real.yml").write_bytes(_status(raw, status) if status else raw)
    os.symlink("real.yml", top)
    lab.git("add", f"plans/{v}/{_name(v)}", f"plans/{v}/real.yml")
    lab.git("commit", "-q", "-m", f"{v}: PLAN.yml a link", who=who)


def _gitlink(lab: Lab, v: str) -> None:
    """PLAN.yml a gitlink (an empty folder in the checkout), its bytes in ``real.yml``."""
    top = lab.repo / "plans" / v / "PLAN.yml"
    raw = lab.git("show", f"HEAD:plans/{v}/PLAN.yml").encode()
    (lab.repo / "plans" / v / "real.yml").write_bytes(raw)
    lab.git("rm", "-q", "--cached", f"plans/{v}/PLAN.yml")
    top.unlink()
    top.mkdir()
    sha = lab.git("rev-parse", "HEAD").strip()
    lab.git("update-index", "--add", "--cacheinfo", f"160000,{sha},plans/{v}/PLAN.yml")
    lab.git("add", f"plans/{v}/real.yml")
    lab.git("commit", "-q", "-m", f"{v}: PLAN.yml a gitlink", who=AGENT)


def _to_yaml(lab: Lab, v: str) -> None:
    """The link (or gitlink) and real.yml removed, real.yml's bytes a regular PLAN.yaml."""
    top = lab.repo / "plans" / v / "PLAN.yml"
    raw = (lab.repo / "plans" / v / "real.yml").read_bytes()
    lab.git("rm", "-q", "--cached", f"plans/{v}/PLAN.yml", f"plans/{v}/real.yml")
    if top.is_dir() and not top.is_symlink():
        top.rmdir()
    else:
        top.unlink()
    (lab.repo / "plans" / v / "real.yml").unlink()
    (lab.repo / "plans" / v / "PLAN.yaml").write_bytes(raw)
    lab.git("add", f"plans/{v}/PLAN.yaml")
    lab.git("commit", "-q", "-m", f"{v}: the link gone, PLAN.yaml", who=AGENT)


def _target(lab: Lab, v: str, status: str) -> None:
    real = lab.repo / "plans" / v / "real.yml"
    real.write_bytes(_status(real.read_bytes(), status))
    lab.git("add", f"plans/{v}/real.yml")
    lab.git("commit", "-q", "-m", f"{v}: real.yml {status}", who=ALICE)


def _unlink(
    lab: Lab, v: str, who: tuple[str, str] = AGENT, status: str = "", mode: int = 0
) -> None:
    top = lab.repo / "plans" / v / _name(v)
    real = lab.repo / "plans" / v / "real.yml"
    raw = real.read_bytes()
    top.unlink()
    top.write_bytes(_status(raw, status) if status else raw)
    if mode:
        os.chmod(top, mode)
    lab.git("rm", "-q", "--cached", f"plans/{v}/real.yml")
    real.unlink()
    if v == "lp":
        lab.git("rm", "-q", "--cached", "plans/lp/real2.yml")
        (lab.repo / "plans/lp/real2.yml").unlink()
    lab.git("add", f"plans/{v}/{_name(v)}")
    lab.git("commit", "-q", "-m", f"{v}: PLAN.yml a file again", who=who)


def _first(lab: Lab, v: str) -> None:
    if v in ("c0", "kc", "mz", "ma"):
        return
    if v == "gy":
        _gitlink(lab, v)
        return
    if v == "la":
        _link(lab, v, who=ALICE, status="approved")
        return
    _link(lab, v)
    if v in ("ta", "kt"):
        _target(lab, v, "approved")
    if v == "lp":  # the link re-pointed to another version
        raw = (lab.repo / "plans/lp/real.yml").read_text()
        (lab.repo / "plans/lp/real2.yml").write_text(raw.replace('"lp2"', '"lpx2"'))
        (lab.repo / "plans/lp/PLAN.yml").unlink()
        os.symlink("real2.yml", lab.repo / "plans/lp/PLAN.yml")
        lab.git("add", "plans/lp")
        lab.git("commit", "-q", "-m", "lp: the link re-pointed to real2.yml", who=AGENT)
    if v == "ne":
        (lab.repo / "plans/ne/PLAN.yaml").write_bytes((lab.repo / "plans/ne/real.yml").read_bytes())
        lab.git("add", "plans/ne/PLAN.yaml")
        lab.git("commit", "-q", "-m", "ne: PLAN.yaml beside the link", who=AGENT)
        lab.set_status("ne", "approved", filename="PLAN.yaml")
        lab.git("add", "plans/ne/PLAN.yaml")
        lab.git("commit", "-q", "-m", "approve ne (PLAN.yaml)", who=ALICE)


def _second(lab: Lab, v: str) -> None:
    if v in ("c0", "kc", "mz", "ma"):
        return
    if v in ("ry", "gy", "nz", "rz"):
        _to_yaml(lab, v)
    elif v in ("nd", "rd"):
        lab.git("rm", "-q", f"plans/{v}/PLAN.yml")
        lab.git("commit", "-q", "-m", f"{v}: the link deleted (real.yml stays)", who=AGENT)
    elif v in ("ta", "la", "kt"):
        _unlink(lab, v)  # real.yml's bytes: status approved
    elif v == "fb":
        _unlink(lab, v, who=ALICE, status="approved")
    elif v == "ka":
        _unlink(lab, v, status="approved")
    elif v == "kh":
        _unlink(lab, v, who=ALICE)
    elif v in ("mx", "kx"):
        _unlink(lab, v, mode=0o755)
    elif v in ("dl", "kr", "yy", "ky", "lp"):
        _unlink(lab, v)
    elif v == "mg":
        lab.git("checkout", "-q", "-b", "side-mg")
        _unlink(lab, v)
        lab.git("checkout", "-q", "main")
        lab.git("merge", "-q", "--no-ff", "-m", "merge side-mg", "side-mg", who=AGENT)
    elif v == "ne":
        lab.git("rm", "-q", "--cached", "plans/ne/PLAN.yml", "plans/ne/real.yml")
        (lab.repo / "plans/ne/PLAN.yml").unlink()
        (lab.repo / "plans/ne/real.yml").unlink()
        lab.git("commit", "-q", "-m", "ne: the link removed", who=AGENT)


def _build(root: Path) -> Lab:
    kd = root / "kd"
    kd.mkdir()
    for v in CALM:
        (kd / f"GO-{v}").write_text("1")  # never killed: the tool returns at once
    (root / "kil.py").write_text(KIL)
    argv = json.dumps([sys.executable, str(root / "kil.py"), "{t}"])
    log = json.dumps(str(root / "lab" / "ran.log"))
    env_ = f"{{KIL_DIR: {json.dumps(str(kd))}, REC_LOG: {log}}}"
    lab = Lab(root / "lab", tools=f"kil: {{kind: exec, argv: {argv}, env: {env_}}}\n")
    for v in VIDS:
        lab.write(v, _plan(v), filename=_name(v))
    os.chmod(lab.repo / "plans/mz/PLAN.yml", 0o755)
    os.chmod(lab.repo / "plans/ma/PLAN.yml", 0o755)
    lab.commit("agent plans")
    lab.run()
    seen: dict[str, Any] = {"marked": {}}
    lab.seen = seen  # type: ignore[attr-defined]
    env = lab.env()
    env["REC_LOG"] = str(lab.log)
    for v in KILLED:
        lab.set_status(v, "approved", filename=_name(v))
        lab.git("add", f"plans/{v}/{_name(v)}")
        lab.git("commit", "-q", "-m", f"approve {v}", who=ALICE)
        p = subprocess.Popen(
            [PLANGATE, "run", "--once", "--config", str(lab.config)],
            cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True,
        )  # fmt: skip
        seen["marked"][v] = until((kd / f"DONE-{v}").exists, 80)
        time.sleep(0.3)
        os.killpg(p.pid, signal.SIGKILL)
        p.wait(timeout=30)
        _first(lab, v)
    for v in CALM:
        _first(lab, v)
    seen["err"] = [lab.run(check=False).stderr[-1200:], lab.run(check=False).stderr[-600:]]
    seen["mid"] = {v: (len(lab.calls(f"kil:{v}")), len(lab.calls(f"{v}2"))) for v in VIDS}
    seen["midrows"] = lab.status()
    for v in VIDS:
        _second(lab, v)
    seen["err2"] = [lab.run(check=False).stderr[-1200:], lab.run(check=False).stderr[-600:]]
    seen["rows2"] = lab.status()
    seen["mid2"] = {v: (len(lab.calls(f"kil:{v}")), len(lab.calls(f"{v}2"))) for v in VIDS}
    _link(lab, "dl")
    lab.run(check=False)
    _unlink(lab, "dl")
    nd = lab.repo / "plans/nd/PLAN.yml"
    nd.write_bytes((lab.repo / "plans/nd/real.yml").read_bytes())
    lab.git("add", "plans/nd/PLAN.yml")
    lab.git("commit", "-q", "-m", "nd: a regular PLAN.yml again", who=AGENT)
    lab.git("mv", "plans/rz/PLAN.yaml", "plans/rz/PLAN.yml")
    lab.git("commit", "-q", "-m", "rz: PLAN.yaml renamed PLAN.yml", who=AGENT)
    seen["err3"] = lab.run(check=False).stderr[-1200:]
    for v in (*ONCE, "kr"):
        if v == "ma":
            continue
        name = "PLAN.yaml" if v in YAML else "PLAN.yml"
        lab.set_status(v, "approved", filename=name)
        lab.git("add", f"plans/{v}/{name}")
    lab.git("commit", "-q", "-m", "approve c0 mx dl mg, resume kr", who=ALICE)
    done = subprocess.run(
        [PLANGATE, "approve", "--config", str(lab.config), "plans/ma"],
        cwd=lab.repo, env=lab.env(ALICE), capture_output=True, text=True, check=False,
    )  # fmt: skip
    seen["approve_ma"] = f"{done.returncode} {done.stdout}{done.stderr}"[-800:]
    seen["err4"] = [lab.run(check=False).stderr[-1200:], lab.run(check=False).stderr[-600:]]
    seen["rows"] = lab.status()
    seen["end"] = {v: _head(lab, v) for v in VIDS}
    seen["alive"] = {v: pid_alive(kd / f"PID-{v}") for v in VIDS}
    seen["ls"] = {v: lab.git("ls-tree", "HEAD", f"plans/{v}/") for v in VIDS}
    seen["tree"] = lab.git("status", "--porcelain", "--untracked-files=all")
    seen["hist"] = {v: lab.git("log", "-p", "--format=%an %s", "--", f"plans/{v}") for v in VIDS}
    seen["calls"] = {v: lab.calls(f"kil:{v}") for v in VIDS}
    seen["after"] = {v: len(lab.calls(f"{v}2")) for v in VIDS}
    seen["lpx"] = len(lab.calls("lpx2"))
    clone = root / "clone"
    subprocess.run(["git", "clone", "-q", str(lab.repo), str(clone)], check=True)
    out = lab.cli("audit", "--json", cwd=clone)
    seen["audit_err"] = out.stderr[-2000:]
    seen["report"] = json.loads(out.stdout) if out.stdout.strip() else {}
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r87-linkedges", _build)


def _seen(lab: Lab) -> dict[str, Any]:
    return lab.seen  # type: ignore[attr-defined,no-any-return]


BROKEN: dict[str, Any] = {}


def test_dump(lab: Lab) -> None:
    """Not a check: the whole story, for the reader of ``-rA``."""
    seen = _seen(lab)
    keep = (
        "approve_ma",
        "marked",
        "err",
        "err2",
        "err3",
        "err4",
        "mid",
        "mid2",
        "alive",
        "tree",
        "after",
    )
    print(json.dumps({k: seen[k] for k in keep}, default=str, indent=1))
    print(json.dumps(seen["calls"], default=str))
    for v in VIDS:
        print(v, "mid", json.dumps(seen["midrows"].get(f"plans/{v}"), default=str)[:600])
        print(v, "rows2", json.dumps(seen["rows2"].get(f"plans/{v}"), default=str)[:600])
        print(v, "end", json.dumps(seen["rows"].get(f"plans/{v}"), default=str)[:600])
        print(v, "head", json.dumps((seen["end"][v] or {}).get("plan"), default=str)[:300])


HELD = [f"{v}:held" for v in VIDS]


@pytest.mark.parametrize("vid", cases(HELD, VIDS, BROKEN))
def test_held(lab: Lab, vid: str) -> None:
    seen = _seen(lab)
    want = (1, 0) if vid in KILLED else (0, 0)
    assert seen["mid"][vid] == want, (seen["mid"], seen["midrows"].get(f"plans/{vid}"))


CALLS = [f"{v}:calls" for v in VIDS]


@pytest.mark.parametrize("vid", cases(CALLS, VIDS, BROKEN))
def test_calls(lab: Lab, vid: str) -> None:
    seen = _seen(lab)
    calls, after = seen["calls"][vid], seen["after"][vid]
    row = seen["rows"].get(f"plans/{vid}")
    if vid in KILLED:
        assert seen["marked"][vid], seen["marked"]
    if vid in ONCE:
        assert (len(calls), after) == (1, 1), (calls, after, row, seen["err4"])
        assert seen["lpx"] == 0, "the re-pointed link's version ran"
    elif vid in ("ta", "la"):
        assert (len(calls), after) == (0, 0), (calls, after, row)
    elif vid in OPEN:
        assert len(calls) <= 1 and after == len(calls), (calls, after, row)
        assert len(valid_runs(seen["report"], vid)) == len(calls), valid_runs(seen["report"], vid)
    elif vid == "kr":
        assert len(calls) == 2, (calls, row, seen["err4"])
        assert not any(c.get("overlap") for c in calls), calls
        assert after == 1, (after, row)
    else:
        assert (len(calls), after) == (1, 0), (calls, after, row, seen["err2"])


STOPPED = [f"{v}:stopped" for v in KILLED]


@pytest.mark.parametrize("vid", cases(STOPPED, KILLED, BROKEN))
def test_stopped(lab: Lab, vid: str) -> None:
    assert _seen(lab)["alive"][vid] is False, _seen(lab)["alive"]


RECORD = [f"{v}:record" for v in KILLED]


@pytest.mark.parametrize("vid", cases(RECORD, KILLED, BROKEN))
def test_record(lab: Lab, vid: str) -> None:
    seen = _seen(lab)
    assert "E_ACTION_IN_DOUBT" in seen["hist"][vid], seen["hist"][vid][-3000:]
    if vid == "rd":
        return  # no plan file left: the record in the history is the check
    data = seen["end"][vid] or {"plan": {}}
    want = "completed" if vid == "kr" else "failed"
    assert data["plan"].get("status") == want, (data["plan"], seen["rows"].get(f"plans/{vid}"))


ROWS = ["ry", "gy", "rz", "rd", "nz", "nd", "ne"]
ROW = [f"{v}:row" for v in ROWS]


@pytest.mark.parametrize("vid", cases(ROW, ROWS, BROKEN))
def test_row(lab: Lab, vid: str) -> None:
    """No row held ``E_UNSAFE_PATH`` for a link the branch no longer holds."""
    seen = _seen(lab)
    row = seen["rows"].get(f"plans/{vid}") or {}
    tree = seen["ls"][vid]
    assert not (row.get("held") == "E_UNSAFE_PATH" and "120000" not in tree), (row, tree)


TREE = [f"{v}:tree" for v in VIDS]


@pytest.mark.parametrize("vid", cases(TREE, VIDS, BROKEN))
def test_tree(lab: Lab, vid: str) -> None:
    tree = [line for line in _seen(lab)["tree"].splitlines() if f"plans/{vid}/" in line]
    assert not tree, tree


AUDIT = [f"{v}:audit" for v in VIDS]


@pytest.mark.parametrize("vid", cases(AUDIT, VIDS, BROKEN))
def test_audit(lab: Lab, vid: str) -> None:
    seen = _seen(lab)
    assert "Traceback" not in seen["audit_err"], seen["audit_err"]
    report = seen["report"]
    if vid in OPEN:
        want = len(seen["calls"][vid])
    elif vid in ("ta", "la"):
        want = 0
    else:
        want = 2 if vid == "kr" else 1
    assert len(valid_runs(report, vid)) == want, (valid_runs(report, vid), seen["calls"][vid])
