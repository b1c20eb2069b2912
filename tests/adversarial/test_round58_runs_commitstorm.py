# ruff: noqa: E501
"""Round 58 (runs): people committing in the shared checkout while the daemon freezes,
starts, checkpoints and completes plans (local mode). New this hour: the controller holds
``.git/index.lock`` from before its commit moves the branch until the index holds the
commit, so a person's ``git add``/``git commit`` in between fails on the lock and succeeds
when retried (docs/agents.md tells agents to retry on ``index.lock`` and ``cannot lock
ref``).

Lab ``cs``: a daemon (``plangate run``, ``checkpoint_interval: 1``,
``max_concurrent_plans: 4``, ``batch_window: 0.05``) and six plans the agent commits; each
plan's action 1 is a ``slow`` exec tool (0.6 s) and action 2 ``rec``. A person (Pat)
commits 60 files of their own in a loop (retrying on a lock) while the daemon works, taking
turns in three styles (the test ids):

- ``path``: ``git add people/path/<n>.txt`` then ``git commit -m`` (whole index), 30 ms apart.
- ``only``: ``git add`` then ``git commit -m ... -- people/only/<n>.txt`` (commit only that
  path: git builds it from a temporary index and then updates the real one).
- ``amendless``: ``git add`` then ``git commit -m`` (whole index) with no pause at all.

(One person, one thread: two people committing in one checkout at once race on git's own
``COMMIT_EDITMSG`` and temporary index, "Aborting commit due to empty commit message",
which says nothing of plangate.) Alice approves the six plans (``git commit -- plans``, no ``git add`` first,
retrying on a lock) while Pat commits.

Asserted: each of Pat's commits changes exactly Pat's one file (never a file under
``plans/`` or ``.plangate/``: no controller change taken back or carried under a person's
name), and all 60 files reach HEAD; every plan ``completed`` at HEAD with each action run exactly once; the index agrees
with HEAD afterwards for ``plans/`` (``git diff --cached`` empty); the audit of the checkout
flags nothing about the plans.

Broke: none. Held: all ids (the lock keeps the person's index build after the controller's).
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BenchError, Lab
from test_round2_execution_kit import shared

PEOPLE = ["path", "only", "amendless"]
PLANS = [f"p{i}" for i in range(6)]
PLANGATE = str(Path(sys.executable).parent / "plangate")
SLOW = """\
import json, os, sys, time
with open(os.environ["REC_LOG"], "a") as f:
    f.write(json.dumps({"argv": [sys.argv[1]]}) + "\\n")
time.sleep(0.6)
print(json.dumps({"ok": True}))
"""
RETRY = ("index.lock", "cannot lock ref", "Unable to create", "unable to write new index")


def _retry(lab: Lab, *args: str, who: tuple[str, str]) -> None:
    for _ in range(400):
        result = subprocess.run(
            ["git", *args], cwd=lab.repo, env=lab.env(who), capture_output=True, text=True
        )
        if result.returncode == 0:
            return
        if args[0] == "commit" and "nothing" in result.stdout + result.stderr:
            return  # another person's whole-index commit carried this file already
        if not any(r in result.stderr for r in RETRY):
            raise BenchError(f"git {args} failed: {result.stderr}")
        time.sleep(0.02)
    raise BenchError(f"git {args}: still locked after 400 tries")


def _person(lab: Lab, errors: list[str]) -> None:
    """One person (one thread: people in one checkout race each other on git's own files,
    ``COMMIT_EDITMSG``, which says nothing of plangate), taking turns in the three styles."""
    ident = ("Pat", "pat@people.example.com")
    try:
        for n in range(60):
            who = PEOPLE[n % 3]
            rel = f"people/{who}/{n}.txt"
            path = lab.repo / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"{who} {n}\n")
            _retry(lab, "add", rel, who=ident)
            if who == "only":
                _retry(lab, "commit", "-q", "-m", f"{who} {n}", "--", rel, who=ident)
            else:
                _retry(lab, "commit", "-q", "-m", f"{who} {n}", who=ident)
            if who == "path":
                time.sleep(0.03)
    except Exception as why:
        errors.append(str(why))


def _build(root: Path) -> Lab:
    (root / "slow.py").write_text(SLOW)
    lab = Lab(root / "cs")
    py, slow, log = (json.dumps(x) for x in (sys.executable, str(root / "slow.py"), str(lab.log)))
    lab.write_config(
        tools=f"slow: {{kind: exec, argv: [{py}, {slow}, '{{tag}}'], env: {{REC_LOG: {log}}}}}\n",
        extra="execution: {checkpoint_interval: 1, max_concurrent_plans: 4, batch_window: 0.05}\n",
    )
    env = lab.env()
    env["REC_LOG"] = str(lab.log)
    daemon = subprocess.Popen(
        [PLANGATE, "run", "--config", str(lab.config)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=open(lab.root / "daemon.err", "wb"),  # noqa: SIM115 - the daemon writes it until it ends
    )
    errors: list[str] = []
    try:
        for vid in PLANS:
            lab.write(
                vid,
                f"plan:\n  name: {vid}\n  task: t\n  status: pending_approval\n"
                "available_tools: [{name: slow}, {name: rec}]\nactions:\n"
                f"  - {{id: 1, tool: slow, why: w, params: {{tag: {vid}-1}}}}\n"
                f"  - {{id: 2, tool: rec, why: w, params: {{tag: {vid}-2}}}}\n",
            )
        _retry(lab, "add", "plans", who=AGENT)
        _retry(lab, "commit", "-q", "-m", "plans", who=AGENT)
        people = [threading.Thread(target=_person, args=(lab, errors))]
        for thread in people:
            thread.start()
        deadline = time.monotonic() + 60
        while not all("frozen:" in lab.git("show", f"HEAD:plans/{v}/PLAN.yml") for v in PLANS):
            if time.monotonic() > deadline or daemon.poll() is not None:
                raise BenchError("the daemon never froze the plans")
            time.sleep(0.2)
        for vid in PLANS:
            text = lab.git("show", f"HEAD:plans/{vid}/PLAN.yml").replace(
                "status: pending_approval", "status: approved", 1
            )
            (lab.repo / "plans" / vid / "PLAN.yml").write_text(text)
        # no `git add` first: Pat's whole-index commit would carry Alice's staged files
        _retry(lab, "commit", "-q", "-m", "approve all", "--", "plans", who=ALICE)
        for thread in people:
            thread.join(120)
        deadline = time.monotonic() + 90
        while not all(
            "status: completed" in lab.git("show", f"HEAD:plans/{v}/PLAN.yml") for v in PLANS
        ):
            if time.monotonic() > deadline or daemon.poll() is not None:
                break
            time.sleep(0.2)
    finally:
        lab.daemon_rc = daemon.poll()  # type: ignore[attr-defined]
        daemon.terminate()
        try:
            daemon.wait(60)
        except subprocess.TimeoutExpired:
            daemon.kill()
    lab.errors = errors  # type: ignore[attr-defined]
    lab.daemon_err = [  # type: ignore[attr-defined]
        line[:400]
        for line in (lab.root / "daemon.err").read_text(errors="replace").splitlines()
        if '"level": "error"' in line or '"level": "warning"' in line or not line.startswith("{")
    ][-12:]
    rows = lab.log_rows("%H%x00%an%x00%ae%x00%s%x00%B%x01")
    lab.people_commits = {  # type: ignore[attr-defined]
        r[0]: (r[3].split()[0], lab.git("show", "--name-only", "--format=", r[0]).split())
        for r in rows
        if r[2].endswith("@people.example.com")
    }
    lab.cached = lab.git("diff", "--cached", "--name-only", "--", "plans")  # type: ignore[attr-defined]
    lab.heads = {v: lab.plan(v)["plan"]["status"] for v in PLANS}  # type: ignore[attr-defined]
    lab.report = lab.audit(config=lab.config)[1]  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    built = shared(tmp_path_factory, "r58-commitstorm", _build)
    if built.errors:  # type: ignore[attr-defined]
        raise BenchError(f"a person's loop failed: {built.errors}")  # type: ignore[attr-defined]
    return built


@pytest.mark.parametrize("who", PEOPLE)
def test_a_persons_commit_holds_only_peoples_files(lab: Lab, who: str) -> None:
    mine = {c: files for c, (style, files) in lab.people_commits.items() if style == who}  # type: ignore[attr-defined]
    assert len(mine) == 20, len(mine)
    odd = {c: f for c, f in mine.items() if not (len(f) == 1 and f[0].startswith(f"people/{who}/"))}
    assert not odd, odd
    tree = lab.git("ls-tree", "-r", "--name-only", "HEAD", f"people/{who}").split()
    assert len(tree) == 20, tree


@pytest.mark.parametrize("vid", PLANS)
def test_every_plan_ran_once_and_is_recorded(lab: Lab, vid: str) -> None:
    assert lab.heads[vid] == "completed", (lab.heads, lab.daemon_rc, lab.daemon_err)  # type: ignore[attr-defined]
    assert len(lab.calls(f"{vid}-1")) == 1 and len(lab.calls(f"{vid}-2")) == 1
    assert lab.cached == "", lab.cached  # type: ignore[attr-defined]
    assert not any(f.get("plan") == f"plans/{vid}" for f in lab.report.get("findings", [])), (
        lab.report.get("findings")
    )  # type: ignore[attr-defined]
