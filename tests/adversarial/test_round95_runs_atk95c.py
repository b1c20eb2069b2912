"""Round 95 (runs, atk95c): back to LOCAL mode (rounds 92-94 attacked remote mode).

Lab (one build, local mode, the ``t91`` tool of round 91: one JSON line per call and per
exit in ``calls.log``, the ground truth of what ran).

- ``c0``: control: a two-action plan (``needs``), approved, one pass.
- ``ka``: two actions (``needs: [1]``); the pass SIGKILLed once action 1's tool exited
  (its call done, its end not committed); restarted twice.
- ``kg``: action 2 ``requires_approval``; the pass killed once action 1 exited (before the
  gate's pause was committed); restarted; the gate approved; the pass killed once the branch
  moved and before action 2's call; restarted.
- ``kr``: ``on_failure: retry``, ``retries: 2``, a tool that fails its first call only; the
  pass killed once the first (failed) call exited, before the retry; restarted.
- ``kf``: ``on_failure: ask`` on an always-failing action 1; killed once its call exited;
  restarted (the run must pause, the tool not called again).
- ``kw``: the pass killed once the tool exited and the outcome commit not made (until round
  81's fix, once the plan's ``EXECUTION_LOG.md`` was in the work tree, which a run no longer
  writes there); the agent then edits the work tree (``EXECUTION_LOG.md`` forged,
  ``FORGED`` put into the ``execution:`` block's lines) before the restart.
- ``kl``: the pass killed once action 1 exited while ``.git/index.lock`` exists (the outcome
  commit being written); restarted twice.
- ``kc``, ``ks``: the pass killed once the tool exited (until round 81's fix, once the plan's
  ``EXECUTION_LOG.md`` was in the work tree, which a run no longer writes there; a lock the
  kill left inside the outcome commit is removed by hand, git's remedy); the agent then
  COMMITS a forged record before the restart: ``kc`` every
  ``status: executing`` made ``complete  # FORGED`` (the log's "executing" made "completed",
  ``# FORGED`` appended); ``ks`` only the ``execution:`` block (``completed  # FORGED``, action
  1 ``succeeded``) and the log.
- ``dd``: a daemon running; a second daemon on the SAME repo and state dir (must exit 2
  ``E_LOCKED``); ``run --once`` on the same state while the daemon runs (``E_LOCKED``).
- ``d2``: a daemon running; a second daemon on the same repo with a NEW state dir; a plan
  approved: it runs once.
- ``cp``: a copy of the state dir (taken while stopped) run as a second daemon beside the
  first on the same repo; a plan (a 2 s tool) approved.
- ``co``: a fresh copy; ``run --once`` of the copy and of the original started together on a
  plan approved while both were stopped (a 2 s tool).
- ``ap``: a plan approved while no controller runs; ``run --once`` and a daemon started
  together: it runs once.
- ``bu``: a burst of 50 one-action plans approved in one commit; the pass killed twice (after
  10 and after 25 calls); restarted.

Checks: ``calls`` (each action's tool at most once; exactly once for controls, the
before-call kills and the lock/copy cases; ``pr`` exactly twice (fails once, retried), ``kr``
one to three), ``ended`` (one ``complete``; one end (``fail`` allowed: the kill after a call
makes it ``E_ACTION_IN_DOUBT``, documented) for the after-call kills, ``co`` and the burst;
``kf``/``pf`` none or a fail), ``audit`` (fresh clone: one valid run (``await-approval`` +
``complete`` for the gates), no finding of the plan; ``kc``/``ks``: findings only naming the
agent's forged commit), ``record`` (the plan's PLAN.yml and log at the tip, after the
controller's end commit, hold nothing the agent forged), ``log`` (``kw``), ``paused``,
``second``/``once`` (``E_LOCKED``), preconditions (``landed``).

Seen (round 95), one class, 1 id:

- ``forgedtail`` (``kc:record``): the agent's commit "record the run" (after the kill) set
  ``plan.status`` and ``execution.status`` to ``complete  # FORGED`` and committed the killed
  pass's ``EXECUTION_LOG.md`` with "completed" and ``# FORGED``. The restart committed
  ``plangate: fail plans/kc`` (``E_SCHEMA_INVALID: ... (got 'complete')``, sealed
  ``Controller:``/``Controller-Seal:``) changing ONE line (``plan.status: failed  # FORGED``):
  its tree keeps the agent's ``execution:`` block (``status: complete  # FORGED``, action 1
  ``status: pending`` though the tool was called once) and the agent's log (``Status |
  ⏳ executing``, ``# FORGED``). The fresh clone's audit does name the agent's commit
  (``log-changed``, ``owned-block-changed``, ``illegal``: "E_ILLEGAL_TRANSITION:
  agent@example.com set status complete (from executing) ... ignored") and one valid ``fail``.

Fixed (2026-12-02, r95tail): ``forgedtail``. The engine recovers a journaled run whatever
the controller-only fields say (``plan.status`` and the ``execution:``/``approval:`` blocks are
read as the start wrote them: ``plans.without_controller_fields``), so the ``fail`` is
``E_ACTION_IN_DOUBT`` with the journal's block and log; and an outcome commit without the
engine's record (any error before one) writes the controller's own last ``execution:`` block
(none: removed) and its own last ``EXECUTION_LOG.md`` (none: removed; a link or folder
replaced), and drops a comment someone put on the ``plan.status`` line it sets.

Held: every local kill (``ka``/``kr``/``kf``/``kw``/``kl`` after the call: one call, the run
fails ``E_ACTION_IN_DOUBT`` (``kl``: completed from the journal); ``pa``/``pr``/``pf``/``pg``
before the call: each action once, ``pr`` retried once and complete, ``pf`` paused
``await-approval``, ``pg`` paused, approved, complete); ``kg`` (gate approved, killed before
action 2: each once, ``await-approval`` + ``complete``); ``kw`` (the agent's uncommitted
edits of the log and the plan were overwritten: ``fail`` with the controller's log, no
FORGED); ``ks`` (a VALID forged block committed: the end commit wrote the controller's
record back); ``dd`` (``E_LOCKED: state directory ... is held by pid=...``, exit 2, for the
daemon and for ``run --once``); ``d2`` (the new state dir: ``E_STORAGE`` "under the
controller's name sealed by another state directory's key ...: nothing is adopted"; the
plan ran once); ``cp`` (a copy daemon beside the original: one call, one complete); ``co``
(two ``run --once`` from the original and a copy: one call; the copy started and ran it, the
original failed it ``E_ACTION_IN_DOUBT`` ("the journal of this run ... is missing or
empty"), the copy then logged ``run_taken_over`` / ``outcome_dropped`` and left its
uncommitted ``EXECUTION_LOG.md`` in the shared work tree (the owner cleans it; not asserted;
docs say not to start a copy beside the original)); ``ap``; ``bu`` (50 plans, two kills:
each at most one call, one end, audit clean).

Should (``kc``): the brief's promise "the record the controller commits is its own and what
happened"; docs/operations.md: "And the record is the controller's own (round 61): the
``execution:`` and ``approval:`` blocks and EXECUTION_LOG.md are shown as the controller's own
last commits of them wrote them"; docs/threat-model.md (round 52, after a loss): "the outcome
commit writes the controller's record back (``PlanRun._committed_record``)" -- ``ks`` shows
that for a valid forged block; an invalid one rides in the controller's sealed ``fail``
commit (readers' ``shown_record`` not checked here). Generally: docs/operations.md: "the
journal makes the next start safe (an unfinished
non-idempotent action becomes ``E_ACTION_IN_DOUBT``)"; "One controller per state directory: a
second one exits 2 with ``E_LOCKED``"; docs/approvals.md "the controller runs it exactly as
frozen"; the record the controller commits is its own (docs/operations.md, round 61).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab, cases, until
from test_round2_execution_kit import shared
from test_round91_runs_atk91c import (
    GATE,
    PY,
    RETRY,
    _calls,
    _kill_when,
    _plan,
    _popen,
    _ref,
    _tools,
)
from test_round92_runs_atk92c import SLP, _copy_state, _try

ASK = "    on_failure: ask\n"
PLANS: dict[str, list[tuple[str, str, str]]] = {
    "c0": [("rec", "c0-1", ""), ("rec", "c0-2", "")],
    "ka": [("rec", "ka-1", ""), ("rec", "ka-2", "")],
    "kg": [("rec", "kg-1", ""), ("rec", "kg-2", GATE)],
    "kr": [("flk", "kr-1", RETRY)],
    "kf": [("fal", "kf-1", ASK), ("rec", "kf-2", "")],
    "kw": [("rec", "kw-1", "")],
    "dd": [("rec", "dd-1", "")],
    "d2": [("rec", "d2-1", "")],
    "ap": [("rec", "ap-1", "")],
    "pa": [("rec", "pa-1", ""), ("rec", "pa-2", "")],
    "pr": [("flk", "pr-1", RETRY)],
    "pf": [("fal", "pf-1", ASK), ("rec", "pf-2", "")],
    "pg": [("rec", "pg-1", GATE), ("rec", "pg-2", "")],
    "kl": [("rec", "kl-1", "")],
    "kc": [("rec", "kc-1", "")],
    "ks": [("rec", "ks-1", "")],
    "cp": [("slp", "cp-1", "")],
    "co": [("slp", "co-1", "")],
}
#: killed after a call ended: the journal may fail the run E_ACTION_IN_DOUBT (documented)
DOUBT = {"ka", "kr", "kf", "kw", "kl", "kc", "ks", "co"}
#: the agent commits a forged record before the restart
FORGE = {"kc", "ks"}
#: killed once the start was committed and before the first call
BEFORE = {"pa": "pa-1", "pr": "pr-1", "pf": "pf-1", "pg": "pg-1"}
BURST = [f"b{i:02d}" for i in range(50)]


def _daemon(lab: Lab, config: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [str(Path(PY).parent / "plangate"), "run", "--config", str(config)],
        cwd=lab.root, env=lab.env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        start_new_session=True,
    )  # fmt: skip


def _stop(proc: subprocess.Popen[bytes]) -> tuple[int, str]:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        rc = proc.wait(timeout=180)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        rc = proc.wait(timeout=10)
    return rc, proc.stderr.read().decode()[-1500:]  # type: ignore[union-attr]


def _exited(d: Path, t: str) -> bool:
    return bool(_calls(d, t, "exit"))


def _failed(d: Path, t: str) -> bool:
    c = _calls(d, t)
    return bool(c) and time.time() - c[0]["at"] > 0.3


def _build(root: Path) -> Lab:
    d = root / "t"
    d.mkdir()
    (d / "t91.py").write_text(SLP)
    seen: dict[str, Any] = {}
    lab = Lab(root / "L", tools=_tools(d))
    lab.t = d  # type: ignore[attr-defined]
    for slug, acts in PLANS.items():
        lab.write(slug, _plan(slug, acts))
    for b in BURST:
        lab.write(b, _plan(b, [("rec", b, "")]))
    lab.commit("plans")
    cfg = lab.config
    gd = lab.repo / ".git"
    _try(lab, seen, cfg, "first")
    # c0: control
    lab.approve("c0")
    _try(lab, seen, cfg, "c0")
    # ka: killed after action 1's exit
    lab.approve("ka")
    seen["ka:landed"] = _kill_when(lab, lambda: _exited(d, "ka-1")) and not _calls(d, "ka-2")
    _try(lab, seen, cfg, "ka")
    _try(lab, seen, cfg, "ka2")
    # kg: gate: paused honestly, the gate approved, killed before action 2's call
    lab.approve("kg")
    _try(lab, seen, cfg, "kg")
    seen["kg:paused"] = lab.plan("kg").get("execution", {}).get("status")
    lab.approve("kg")
    before = _ref(gd)
    ok = _kill_when(lab, lambda: _ref(gd) != before and not _calls(d, "kg-2"))
    seen["kg:landed"] = ok and not _calls(d, "kg-2")
    _try(lab, seen, cfg, "kg2")
    # pa, pr, pf, pg: killed after the start commit, before the first call; restarted
    for slug, t in BEFORE.items():
        lab.approve(slug)
        before = _ref(gd)
        ok = _kill_when(lab, lambda t=t, b=before: _ref(gd) != b and not _calls(d, t))
        seen[f"{slug}:landed"] = ok and not _calls(d, t)
        _try(lab, seen, cfg, slug)
        if slug == "pg":  # the gate on action 1: paused; approved; run on
            seen["pg:paused"] = lab.plan("pg").get("execution", {}).get("status")
            lab.approve("pg")
            _try(lab, seen, cfg, "pg2")
    # kr: retry
    lab.approve("kr")
    seen["kr:landed"] = _kill_when(lab, lambda: _exited(d, "kr-1"))
    _try(lab, seen, cfg, "kr")
    # kf: on_failure ask
    lab.approve("kf")
    seen["kf:landed"] = _kill_when(lab, lambda: bool(_calls(d, "kf-1")))
    _try(lab, seen, cfg, "kf")
    _try(lab, seen, cfg, "kf2")
    # kw: killed with the log in the work tree, the commit not made; the agent edits
    lab.approve("kw")
    logf = lab.repo / "plans" / "kw" / "EXECUTION_LOG.md"
    before = _ref(gd)
    # (since r81clean the run writes no log into the tree: the kill lands once the tool
    # exited, and the agent writes the log the outcome commit has yet to write)
    seen["kw:landed"] = _kill_when(lab, lambda: _exited(d, "kw-1"))
    if (gd / "index.lock").exists():  # killed inside the outcome commit: git's own remedy
        (gd / "index.lock").unlink()
    seen["kw:moved"] = [before, _ref(gd)]
    seen["kw:tree"] = lab.git("status", "--porcelain")
    logf.write_text("# FORGED LOG\nnothing ran\n")
    pf = lab.repo / "plans" / "kw" / "PLAN.yml"
    pf.write_text(pf.read_text().replace("status: complete", "status: failed  # FORGED"))
    _try(lab, seen, cfg, "kw")
    _try(lab, seen, cfg, "kw2")
    # kl: killed while the outcome commit holds .git/index.lock
    lab.approve("kl")
    lock = gd / "index.lock"
    seen["kl:landed"] = _kill_when(lab, lambda: _exited(d, "kl-1") and lock.exists())
    _try(lab, seen, cfg, "kl")
    _try(lab, seen, cfg, "kl2")
    # kc, ks: killed once the tool exited; the agent COMMITS a forged log and
    # block before the restart (kc: every ``status: executing`` made ``complete`` (not a
    # status); ks: the execution block alone made ``completed``, action 1 ``succeeded``)
    for slug in sorted(FORGE):
        lab.approve(slug)
        logc = lab.repo / "plans" / slug / "EXECUTION_LOG.md"
        t = f"{slug}-1"
        # since r81clean a run writes no log into the tree before its outcome commit: the
        # kill lands once the tool exited, before or after that commit
        seen[f"{slug}:landed"] = _kill_when(lab, lambda t=t: _exited(d, t))
        if lock.exists():  # killed inside the outcome commit: git's own remedy, by hand
            lock.unlink()
        was = logc.read_text() if logc.exists() else "# executing\n"
        logc.write_text(was.replace("executing", "completed") + "\n# FORGED\n")
        pc = lab.repo / "plans" / slug / "PLAN.yml"
        text = pc.read_text()
        if slug == "kc":
            text = text.replace("status: executing", "status: complete  # FORGED")
        elif "\nexecution:" in text:
            head, _, block = text.partition("\nexecution:")
            block = block.replace("status: executing", "status: completed  # FORGED")
            block = block.replace("status: pending", "status: succeeded")
            text = head + "\nexecution:" + block
        else:  # the agent's own block: the run left none in the tree
            text += "execution:\n  status: completed  # FORGED\n  actions:\n  - id: 1\n"
            text += "    status: succeeded\n"
        pc.write_text(text)
        seen[f"{slug}:forged"] = lab.commit("record the run", AGENT)
        _try(lab, seen, cfg, slug)
        _try(lab, seen, cfg, f"{slug}2")
    # dd: a second daemon and a run --once on the same state while a daemon runs
    dm = _daemon(lab, cfg)
    time.sleep(3)
    second = _daemon(lab, cfg)
    try:
        seen["dd:second"] = (second.wait(60), second.stderr.read().decode()[-800:])  # type: ignore[union-attr]
    except subprocess.TimeoutExpired:
        seen["dd:second"] = _stop(second)
    once = lab.cli("run", "--once", "--config", str(cfg), timeout=120)
    seen["dd:once"] = (once.returncode, once.stderr[-800:])
    lab.approve("dd")
    until(lambda: "complete plans/dd" in lab.git("log", "-3", "--format=%s"), 60)
    # d2: a second daemon with a new state dir on the same repo
    cfg2 = lab.root / "p2.yml"
    cfg2.write_text(
        cfg.read_text().replace(f"state_dir: {lab.state}\n", f"state_dir: {lab.root / 's2'}\n")
    )
    dm2 = _daemon(lab, cfg2)
    time.sleep(3)
    lab.approve("d2")
    until(lambda: "complete plans/d2" in lab.git("log", "-3", "--format=%s"), 60)
    time.sleep(3)
    seen["d2:second"] = _stop(dm2)
    seen["dd:first"] = _stop(dm)
    # cp: a copy of the state directory (taken while stopped) run as a second daemon
    cfgc = _copy_state(lab, "s-cp")
    dm = _daemon(lab, cfg)
    dmc = _daemon(lab, cfgc)
    time.sleep(3)
    lab.approve("cp")
    until(
        lambda: len(_calls(d, "cp-1")) >= 1 and "plans/cp" in lab.git("log", "-1", "--format=%s"),
        60,
    )
    time.sleep(5)
    seen["cp:second"] = _stop(dmc)
    seen["cp:first"] = _stop(dm)
    # co: the copy's run --once and the first's run --once started together
    cfgo = _copy_state(lab, "s-co")
    lab.approve("co")
    p1, p2 = _popen(lab, cfg), _popen(lab, cfgo)
    seen["co:rc"] = [(p.wait(120), p.stderr.read().decode()[-600:]) for p in (p1, p2)]  # type: ignore[union-attr]
    _try(lab, seen, cfg, "co")
    _try(lab, seen, cfgo, "co2")
    # the dropped run's log stays in the shared work tree: the owner cleans it up
    seen["co:tree"] = lab.git("status", "--porcelain")
    lab.git("checkout", "-q", "HEAD", "--", "plans")
    lab.git("clean", "-qfd", "plans")
    # ap: approved while stopped; run --once and a daemon together
    lab.approve("ap")
    dm = _daemon(lab, cfg)
    once = lab.cli("run", "--once", "--config", str(cfg), timeout=120)
    seen["ap:once"] = (once.returncode, once.stderr[-800:])
    until(lambda: "complete plans/ap" in lab.git("log", "-3", "--format=%s"), 60)
    time.sleep(2)
    seen["ap:daemon"] = _stop(dm)
    # bu: a burst of 50, killed twice
    for b in BURST:
        lab.set_status(b, "approved")
    lab.commit("approve burst", ALICE)
    n = lambda: sum(1 for b in BURST if _calls(d, b))  # noqa: E731
    # 300 s each: under CI's six workers on two cores a pass took over 60 s to reach 10 or
    # 25 calls and ``bu:landed`` failed (CI stop 54); the kills land as soon as they can
    k1 = _kill_when(lab, lambda: n() >= 10, limit=300)
    k2 = _kill_when(lab, lambda: n() >= 25, limit=300)
    seen["bu:landed"] = k1 and k2
    _try(lab, seen, cfg, "bu")
    _try(lab, seen, cfg, "bu2")
    seen["subjects"] = {s: lab.subjects(s) for s in [*PLANS, *BURST]}
    seen["logs"] = {
        s: lab.git("show", f"HEAD:plans/{s}/EXECUTION_LOG.md", check=False) for s in PLANS
    }
    seen["plans"] = {s: lab.git("show", f"HEAD:plans/{s}/PLAN.yml") for s in PLANS}
    seen["status"] = lab.git("status", "--porcelain")
    aud = lab.root / "aud"
    subprocess.run(["git", "clone", "-q", str(lab.repo), str(aud)], check=True)
    seen["audit"] = json.loads(lab.cli("audit", "--json", cwd=aud).stdout)
    lab.seen = seen  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r95-atk95c", _build)


def _valid(report: dict[str, Any], slug: str) -> list[dict[str, Any]]:
    return [
        e for e in report["executions"] if e["plan"] == f"plans/{slug}" and e.get("approval_valid")
    ]


def _findings(report: dict[str, Any], slug: str) -> list[dict[str, Any]]:
    return [f for f in report.get("findings", []) if f.get("plan") == f"plans/{slug}"]


def _ends(subjects: list[str]) -> list[str]:
    return [x for x in subjects if x.split()[1] in ("complete", "fail", "abort")]


CHECKS = ["calls", "ended", "audit"]
IDS = (
    [f"{s}:{c}" for s in PLANS for c in CHECKS]
    + [f"{s}:landed" for s in ("ka", "kg", "kr", "kf", "kw", "bu", *BEFORE)]
    + ["kl:landed", "kc:landed", "ks:landed", "kc:record", "ks:record"]
    + ["kw:log", "kg:paused", "pg:paused", "dd:second", "dd:once"]
    + [f"bu:{c}" for c in CHECKS]
)

BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_runs(lab: Lab, vid: str) -> None:
    slug, check = vid.split(":")
    seen, d = lab.seen, lab.t  # type: ignore[attr-defined]
    if check == "landed":
        if not seen[vid]:
            # the lab's own precondition (the kill at its moment), not the promise: under load
            # the pass went on past the window before the kill (CI, 2026-12-04: ``ka``); the
            # run's own ids judge what happened
            pytest.skip(f"{slug}: the lab missed the moment it kills at (load)")
        return
    if check == "paused":
        assert seen[vid] == "awaiting_approval", seen[vid]
        return
    if check in ("second", "once"):
        rc, err = seen[vid]
        assert rc == 2 and "E_LOCKED" in err, (rc, err)
        return
    if check == "record":  # the controller's end commit of the plan carries its own record
        assert "FORGED" not in seen["logs"][slug], seen["logs"][slug][-600:]
        assert "FORGED" not in seen["plans"][slug], seen["plans"][slug]
        return
    if check == "log":
        assert "FORGED" not in seen["logs"]["kw"], seen["logs"]["kw"]
        assert "FORGED" not in lab.git("show", "HEAD:plans/kw/PLAN.yml")
        return
    slugs = BURST if slug == "bu" else [slug]
    report = seen["audit"]
    for s in slugs:
        subj = seen["subjects"][s]
        acts = PLANS.get(s, [("rec", s, "")])
        if check == "calls":
            for _m, t, _x in acts:
                c = _calls(d, t)
                if s in ("kr", "pr"):  # retries: 2, the first call fails
                    assert 1 <= len(c) <= 3, c
                    if s == "pr":
                        assert len(c) == 2, c
                elif s in ("kf", "pf") and t.endswith("-2"):
                    assert not c, c
                elif s in DOUBT or slug == "bu":
                    assert len(c) <= 1, (t, c)
                    assert t.endswith("-2") or len(c) == 1, (t, c)
                else:
                    assert len(c) == 1, (t, c, seen.get(f"{s}:second"))
        elif check == "ended":
            ends = _ends(subj)
            if s in ("kf", "pf"):  # on_failure: ask waits, or the call in doubt fails
                assert ends in ([], [f"plangate: fail plans/{s}"]), subj
            elif s in DOUBT or slug == "bu":
                assert len(ends) == 1, subj
            else:
                assert ends == [f"plangate: complete plans/{s}"], subj
        elif check == "audit":
            runs = [e["outcome"] for e in _valid(report, s)]
            want = ["await-approval", "complete"] if s in ("kg", "pg") else runs[:1]
            assert runs and sorted(runs) == want, (s, runs)
            if s in FORGE:  # the audit names the agent's commit, and nothing else
                found = _findings(report, s)
                assert found and {f["commit"] for f in found} == {seen[f"{s}:forged"]}, found
            else:
                assert not _findings(report, s), _findings(report, s)
