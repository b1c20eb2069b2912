"""Round 85 (runs): ``linklost`` of ``test_round85_runs_killtop.py`` (a killed run whose
PLAN.yml was made a symlink) pinned down without a nested plan: what undoing it looks like
to the controller, and whether a later honest version and approval run beside what the kill
left.

docs/execution.md: "When the branch no longer shows such a plan executing (the folder
deleted or moved, the file renamed, a deletion reverted, which git reads as a new file with
no status, or a commit read as a new approval request over it), the run goes on as it would
have without the crash: from the start commit's approved content ... An abort request, an
ambiguous folder (both PLAN.yml and PLAN.yaml) or an unsafe path keeps its own rule"; the
crash table: "start, no end ... the tool process it left running (if any) is stopped ...
an end ``in_doubt`` is written and the plan ends ``failed`` with E_ACTION_IN_DOUBT".

Lab (one, local mode). Tools ``rec``, ``kil`` (effect ``kil:<tag>`` with ``overlap`` = whether
the first call's process still lives, ``DONE-<tag>``, waits for a ``GO`` that never comes on
its first call). Plans ``<v>``: action 1 ``kil <v>``, action 2 ``rec <v>2``. For each in turn
Alice approves and a ``run --once`` is SIGKILLed once ``kil`` did its effect, then the
variant's first change at once; two passes; the second change; two passes; Alice's approval
(``sv``), a pass.

- ``c2`` (control): nothing.
- ``s0``: PLAN.yml made a symlink to ``real.yml`` (the bytes HEAD held) and restored as a
  regular file, two commits before any pass.
- ``s1``: the symlink; (passes) restored byte for byte as a regular file, ``real.yml`` gone.
- ``sd``: the symlink; (passes) the symlink and ``real.yml`` ``git rm``-ed (the folder gone).
- ``sf``: the folder moved to ``plans/sf-real`` and ``plans/sf`` a symlink to it; (passes) the
  link removed and the folder moved back.
- ``sv``: the symlink; (passes) a regular PLAN.yml of a NEW version (task edited,
  ``pending_approval``, no ``execution:``); (passes) Alice approves it; a pass.

Checks: ``stopped`` (no ``kil`` process of the kill left at the end), ``record`` (HEAD's
PLAN.yml ``failed``, its block naming ``E_ACTION_IN_DOUBT``; ``sd``: the run's record
somewhere on the branch under ``plans/sd``; ``sv``: the new version ``completed``, and the
first run's doubt recorded in the history), ``calls`` (``kil`` once; ``sv`` twice, the second
never beside the first process), ``tree``, ``audit``.

- ``sg`` (added by r85linkheld): PLAN.yml a gitlink (``160000``, an empty folder in the
  checkout), ``real.yml`` the bytes; (passes) restored as a regular file, ``real.yml`` gone.
- ``nk`` (no kill): a pending plan (frozen, never approved): its PLAN.yml made the symlink
  and back, two commits before any pass; later Alice approves it.

Seen (round 85): **a PLAN.yml once committed as a symlink is held ``E_UNSAFE_PATH`` for good
after a regular file is back** (class ``linkheld``; ``s0``, ``s1``, ``sv`` ``:{stopped,
record,tree}``, ``sv``, ``nk`` ``:{calls,audit}``, ``nk:record``: 14 ids). The shortest (``nk``,
no kill): the controller froze ``plans/nk`` (``pending_approval``); the agent ``mv
plans/nk/PLAN.yml plans/nk/real.yml; ln -s real.yml plans/nk/PLAN.yml; git add -A plans/nk;
git commit``, then ``rm plans/nk/PLAN.yml; mv plans/nk/real.yml plans/nk/PLAN.yml; git add -A
plans/nk; git commit`` (the very bytes the controller froze); two ``run --once``; Alice
commits ``status: approved``; ``run --once``: nothing runs (``kil:nk`` 0 calls), and
``plangate status`` says ``approved plans/nk ... approval request (approve) by
alice@example.com`` / ``E_UNSAFE_PATH: plans/nk/PLAN.yml is a symbolic link, not a plan file;
it is not read`` (``--json``: ``"held": "E_UNSAFE_PATH"``) while HEAD's PLAN.yml is a regular
file. After a kill mid-action (``s0``: the link and the file again before any pass; ``s1``:
with passes between; ``sv``: a NEW version as the file) the run is never recovered: HEAD's
PLAN.yml stays ``executing`` with no ``execution:`` block, the row's status is ``null``
("E_ILLEGAL_TRANSITION: agent@example.com set status executing (from nothing) ...; ignored"),
the ``kil`` process the kill left running is never stopped, ``?? plans/s1/EXECUTION_LOG.md``
stays in the shared checkout, and ``sv``'s new version is never frozen: Alice's approval of
it never runs. Should (docs/plan-format.md: "An entry held ``E_UNSAFE_PATH`` (a symlink
``plan.yml``, ...) that is deleted takes its ``status`` row with it"; docs/execution.md:
"When the branch no longer shows such a plan executing (... a deletion reverted ...), the run
goes on as it would have without the crash ... An abort request, an ambiguous folder ... or an
unsafe path keeps its own rule"): the hold ends with the link; the killed run recovered in
doubt (its tool stopped, block and log committed), the new version frozen and run once.
Held: ``sd`` (the link then the folder removed: recovered ``failed`` E_ACTION_IN_DOUBT, tool
stopped), ``sf`` (the FOLDER a symlink to its moved copy, then moved back: recovered), ``c2``;
no tool ever ran twice or beside itself.

Fixed (2026-12-01, r85linkheld): an ``E_UNSAFE_PATH`` hold of a plan's own file keeps what
it found (version, status, request: ``held_from``, as round 83's twin hold) and a regular
plan file committed back at the path ends it (``Lifecycle._unsafe_release``): the plan goes
on from the version the hold found, so the killed run is recovered in doubt, ``nk``'s frozen
version waits for and runs on Alice's approval, ``sv``'s new version is a new request; and
every pass first stops, by each open job's journal, the tool a dead controller left
(``Starting._stop_left_tools``), whatever the plan file holds. Added (same classes): ``sg``
(PLAN.yml a gitlink, an empty folder in the checkout, then the file again with passes
between: ``:{calls,stopped,record,tree,audit}``) and ``stopped_mid`` (every killed variant:
the tool already stopped after the first two passes, the file still a link).
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

VIDS = ["c2", "s0", "s1", "sd", "sf", "sv", "sg", "nk"]
KILLED = VIDS[:-1]


def _plan(v: str, task: str = "") -> str:
    return (
        f'plan:\n  name: "{v}"\n  task: "{task or "variant " + v}"\n  status: pending_approval\n'
        "available_tools:\n  - name: rec\n  - name: kil\nactions:\n"
        f'  - id: 1\n    tool: kil\n    why: "once"\n    params: {{t: "{v}"}}\n'
        f'  - id: 2\n    tool: rec\n    why: "after"\n    params: {{tag: "{v}2"}}\n'
    )


def _head(lab: Lab, v: str) -> dict[str, Any] | None:
    try:
        return dict(load_yaml(lab.git("show", f"HEAD:plans/{v}/PLAN.yml")))
    except Exception:  # a file gone or no plan is what the check reports
        return None


def _link(lab: Lab, v: str) -> None:
    top = lab.repo / "plans" / v / "PLAN.yml"
    raw = lab.git("show", f"HEAD:plans/{v}/PLAN.yml").encode()
    top.unlink()
    (lab.repo / "plans" / v / "real.yml").write_bytes(raw)
    os.symlink("real.yml", top)
    lab.git("add", f"plans/{v}/PLAN.yml", f"plans/{v}/real.yml")
    lab.git("commit", "-q", "-m", f"agent: {v} PLAN.yml a link", who=AGENT)


def _unlink(lab: Lab, v: str, text: bytes | None = None) -> None:
    top = lab.repo / "plans" / v / "PLAN.yml"
    real = lab.repo / "plans" / v / "real.yml"
    raw = real.read_bytes()
    if top.is_dir() and not top.is_symlink():
        top.rmdir()  # sg: the gitlink's empty folder
        lab.git("rm", "-q", "--cached", f"plans/{v}/PLAN.yml")
    else:
        top.unlink()
    top.write_bytes(raw if text is None else text)
    lab.git("rm", "-q", "--cached", f"plans/{v}/real.yml")
    real.unlink()
    lab.git("add", f"plans/{v}/PLAN.yml")
    lab.git("commit", "-q", "-m", f"agent: {v} PLAN.yml a file again", who=AGENT)


def _gitlink(lab: Lab, v: str) -> None:
    """PLAN.yml a gitlink (a submodule entry; an empty folder, as an uninitialised
    submodule's checkout), its bytes in ``real.yml`` beside it."""
    top = lab.repo / "plans" / v / "PLAN.yml"
    raw = lab.git("show", f"HEAD:plans/{v}/PLAN.yml").encode()
    (lab.repo / "plans" / v / "real.yml").write_bytes(raw)
    lab.git("rm", "-q", "--cached", f"plans/{v}/PLAN.yml")
    top.unlink()
    top.mkdir()
    sha = lab.git("rev-parse", "HEAD").strip()
    lab.git("update-index", "--add", "--cacheinfo", f"160000,{sha},plans/{v}/PLAN.yml")
    lab.git("add", f"plans/{v}/real.yml")
    lab.git("commit", "-q", "-m", f"agent: {v} PLAN.yml a gitlink", who=AGENT)


def _first(lab: Lab, v: str) -> None:
    if v in ("s0", "s1", "sd", "sv", "nk"):
        _link(lab, v)
    if v in ("s0", "nk"):
        _unlink(lab, v)
    if v == "sg":
        _gitlink(lab, v)
    if v == "sf":
        lab.git("mv", "plans/sf", "plans/sf-real")
        os.symlink("sf-real", lab.repo / "plans/sf")
        lab.git("add", "plans/sf")
        lab.git("commit", "-q", "-m", "agent: sf a link to its moved folder", who=AGENT)


def _second(lab: Lab, v: str) -> None:
    if v in ("s1", "sg"):
        _unlink(lab, v)
    elif v == "sd":
        lab.git("rm", "-q", "-r", "-f", "plans/sd")
        lab.git("commit", "-q", "-m", "agent: sd removed", who=AGENT)
    elif v == "sf":
        lab.git("rm", "-q", "plans/sf")
        lab.git("mv", "plans/sf-real", "plans/sf")
        lab.git("commit", "-q", "-m", "agent: sf back", who=AGENT)
    elif v == "sv":
        _unlink(lab, v, _plan(v, task="variant sv, second version").encode())


def _build(root: Path) -> Lab:
    kd = root / "kd"
    kd.mkdir()
    (kd / "GO-nk").write_text("1")  # nk is never killed: its tool returns at once
    (root / "kil.py").write_text(KIL)
    argv = json.dumps([sys.executable, str(root / "kil.py"), "{t}"])
    log = json.dumps(str(root / "lab" / "ran.log"))
    env_ = f"{{KIL_DIR: {json.dumps(str(kd))}, REC_LOG: {log}}}"
    lab = Lab(root / "lab", tools=f"kil: {{kind: exec, argv: {argv}, env: {env_}}}\n")
    for v in VIDS:
        lab.write(v, _plan(v))
    lab.commit("agent plans")
    lab.run()
    seen: dict[str, Any] = {"marked": {}}
    lab.seen = seen  # type: ignore[attr-defined]
    env = lab.env()
    env["REC_LOG"] = str(lab.log)
    _first(lab, "nk")  # pending (frozen, never approved): the symlink and back, no kill
    for v in KILLED:
        lab.set_status(v, "approved")
        lab.git("add", f"plans/{v}/PLAN.yml")
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
    seen["err"] = [lab.run(check=False).stderr[-1200:], lab.run(check=False).stderr[-600:]]
    seen["midrows"] = lab.status()
    seen["midalive"] = {v: pid_alive(kd / f"PID-{v}") for v in KILLED}
    for v in VIDS:
        _second(lab, v)
    seen["err2"] = [lab.run(check=False).stderr[-1200:], lab.run(check=False).stderr[-600:]]
    seen["rows"] = lab.status()
    seen["sv_before"] = _head(lab, "sv")
    for v in ("sv", "nk"):
        lab.set_status(v, "approved")
        lab.git("add", f"plans/{v}/PLAN.yml")
    lab.git("commit", "-q", "-m", "approve sv v2 and nk", who=ALICE)
    seen["err3"] = lab.run(check=False).stderr[-1200:]
    seen["end"] = {v: _head(lab, v) for v in VIDS}
    seen["alive"] = {v: pid_alive(kd / f"PID-{v}") for v in VIDS}
    seen["tree"] = lab.git("status", "--porcelain", "--untracked-files=all")
    seen["hist"] = {v: lab.git("log", "-p", "--format=%an %s", "--", f"plans/{v}") for v in VIDS}
    seen["calls"] = {v: lab.calls(f"kil:{v}") for v in VIDS}
    seen["after"] = {v: len(lab.calls(f"{v}2")) for v in VIDS}
    clone = root / "clone"
    subprocess.run(["git", "clone", "-q", str(lab.repo), str(clone)], check=True)
    out = lab.cli("audit", "--json", cwd=clone)
    seen["audit_err"] = out.stderr[-2000:]
    seen["report"] = json.loads(out.stdout) if out.stdout.strip() else {}
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r85-killlink", _build)


def _seen(lab: Lab) -> dict[str, Any]:
    return lab.seen  # type: ignore[attr-defined,no-any-return]


# linkheld (14 ids) fixed (2026-12-01, r85linkheld): no xfail left


def test_dump(lab: Lab) -> None:
    """Not a check: the whole story, for the reader of ``-rA``."""
    seen = _seen(lab)
    keep = ("marked", "err", "err2", "err3", "end", "alive", "tree", "calls", "after")
    print(json.dumps({k: seen[k] for k in keep}, default=str, indent=1))
    for v in VIDS:
        print(v, json.dumps(seen["rows"].get(f"plans/{v}"), default=str)[:900])


@pytest.mark.parametrize("vid", VIDS)
def test_calls(lab: Lab, vid: str) -> None:
    seen = _seen(lab)
    calls = seen["calls"][vid]
    if vid == "nk":
        assert (len(calls), seen["after"][vid]) == (1, 1), (calls, seen["after"])
        return
    assert seen["marked"][vid], seen["marked"]
    if vid == "sv":
        assert len(calls) == 2, calls
        assert not any(c.get("overlap") for c in calls), calls
        assert seen["after"][vid] == 1, seen["after"]
        return
    assert len(calls) == 1, calls
    assert seen["after"][vid] == 0, seen["after"]


@pytest.mark.parametrize("vid", VIDS)
def test_stopped(lab: Lab, vid: str) -> None:
    assert _seen(lab)["alive"][vid] is False, _seen(lab)["alive"]


@pytest.mark.parametrize("vid", KILLED)
def test_stopped_mid(lab: Lab, vid: str) -> None:
    """After the first two passes, the plan file still a link (or a gitlink, or its folder
    moved): the tool the kill left is stopped whatever the file holds (r85linkheld)."""
    assert _seen(lab)["midalive"][vid] is False, (_seen(lab)["midalive"], _seen(lab)["err"])


@pytest.mark.parametrize("vid", VIDS)
def test_record(lab: Lab, vid: str) -> None:
    seen = _seen(lab)
    if vid == "nk":
        data = seen["end"][vid] or {"plan": {}}
        assert data["plan"].get("status") == "completed", seen["rows"].get("plans/nk")
        return
    if vid in ("sd", "sv"):
        assert "E_ACTION_IN_DOUBT" in seen["hist"][vid], seen["hist"][vid][-3000:]
        if vid == "sv":
            data = seen["end"][vid] or {"plan": {}}
            assert data["plan"].get("status") == "completed", (data["plan"], seen["err3"])
        return
    data = seen["end"][vid]
    assert data is not None, seen["rows"].get(f"plans/{vid}")
    block = data.get("execution") or {}
    text = json.dumps(block, default=str)
    assert data["plan"]["status"] == "failed", (data["plan"], seen["rows"].get(f"plans/{vid}"))
    assert block.get("status") == "failed", text[:1500]
    assert "E_ACTION_IN_DOUBT" in text, text[:1500]


@pytest.mark.parametrize("vid", VIDS)
def test_tree(lab: Lab, vid: str) -> None:
    tree = [line for line in _seen(lab)["tree"].splitlines() if f"plans/{vid}" in line]
    assert not tree, tree


@pytest.mark.parametrize("vid", VIDS)
def test_audit(lab: Lab, vid: str) -> None:
    seen = _seen(lab)
    assert "Traceback" not in seen["audit_err"], seen["audit_err"]
    report = seen["report"]
    want = 2 if vid == "sv" else 1
    assert len(valid_runs(report, vid)) == want, valid_runs(report, vid)
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
