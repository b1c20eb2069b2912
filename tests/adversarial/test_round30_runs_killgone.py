# ruff: noqa: E501
"""Round 30, at most once and never a silent wedge, across a controller killed (SIGKILL) right
after its ``plangate: start`` commit and a commit that *moves or deletes* the started plan's
folder before the controller is restarted.

Round 29 fixed the stale approved ``PLAN.yml`` committed over a killed start (the job row is
written before the branch moves; ``status`` names a started plan whose run file no longer
hashes to its approval). Here the agent, sharing the checkout while the daemon is down, does
not commit the stale file in place: it moves the folder or deletes it. Without a kill the
same commits made while the run is under way do not lose the run: the running pass still runs
the action and commits ``plangate: complete plans/v`` (tried by hand: a ``git rm -r``/``git
mv`` commit during a 3 s action, then two passes: ``rec`` ran once, ``status`` completed).

Each lab kills passes (a new approved plan each) until one is killed right after the start
commit while ``git status`` is exactly ``M  plans/<victim>/PLAN.yml`` (after a 1.1 s settle),
plays its attack, then runs three passes; then a bystander ``zz`` is written, approved by Alice
and one more pass runs.

- ``rm-commit``: the agent ``git rm -rf plans/<victim>`` and commits.
- ``mv-commit``: the agent ``git mv plans/<victim> plans/<victim>-moved`` and commits.
- ``renfile-commit``: the agent ``git mv plans/<victim>/PLAN.yml plans/<victim>/PLAN.yaml``
  and commits (the same folder, the same bytes, the other accepted file name).
- ``twin-commit``: the agent copies ``PLAN.yml`` to ``PLAN.yaml`` beside it and commits.
- ``link-commit``: the agent moves ``PLAN.yml`` to ``plans/kept.yml``, commits a symbolic
  link ``plans/<victim>/PLAN.yml -> ../kept.yml``.

- ``rm-revert``: as ``rm-commit``, one pass, then the agent ``git revert``s its deletion: the
  start commit's own ``PLAN.yml`` (``executing``, the start's blocks) is back in place.
  Asserted here (``-not-silent``): an outcome commit for the folder (the restored start is
  finished), whatever ``status`` notes.
- ``remote-rm-commit``: remote mode (the controller's own clone, pushing to ``bare.git``);
  the pass is killed as soon as the bare branch moves (its start push); the agent pulls,
  ``git rm -rf plans/k0``, commits and pushes.

Also tried by hand, held, left out for suite time: a committed copy of the folder (the start
completes in place, the copy is refused), the folder deleted from the working tree only
(``waiting``: "the outcome waits: plans/<victim>/PLAN.yml was deleted from the working tree;
restore it"), ``git reset --hard HEAD~1`` over the start (the restart starts it again and
completes it: ``rec`` ran once, the audit agrees).

Per lab, asserted:

- ``<lab>-at-most-once``: ``rec`` ran at most once for the victim (under any folder).
- ``<lab>-not-silent``: the journaled start is not left without a word: an outcome commit for
  the victim's folder is on the branch, or ``status`` has a row for it that is not back at
  ``pending_approval``/``approved``/``draft`` and says why (``problem``/``reason``/``waiting``,
  or an ``E_`` code as ``last_event``) (round 29's rule: "the plan completes, or waits,
  said").
- ``<lab>-bystander``: ``zz`` ran once and is ``completed``.
- ``<lab>-audit-outcome`` (since the fix; not ``link-commit``, whose start waits): the audit
  lists the victim's start with ``outcome: complete``.

Held: every ``*-at-most-once``, every ``*-bystander``, ``link-commit-not-silent``
(``E_UNSAFE_PATH`` as ``last_event``). ``twin-commit`` (kept in ``_attack``, left out of
``LABS`` for suite time) held when run: ``E_PLAN_AMBIGUOUS`` as ``last_event``.

**Broke** (round 30; fixed the same session, the markers kept as the record, applied to
nothing): ``rm-commit-not-silent``, ``mv-commit-not-silent`` and
``renfile-commit-not-silent``, ``remote-rm-commit-not-silent``, ``rm-revert-not-silent``: after the restart the journaled start was dropped without a
word: the action never ran (0 calls), no outcome was ever committed for the started folder;
``plangate status`` had no row for it (``rm``, ``remote-rm``: ``[]``), or only the moved copy (``mv``), or the same
folder (``renfile``), back at ``pending_approval`` with ``E_APPROVER_NOT_ALLOWED`` against the
agent's move/rename read as an approval (the controller commits ``plangate: refuse``); the
fresh-clone ``plangate audit`` listed the start with ``outcome: null`` for good (``ok: true``
for ``rm``/``mv``). Without the kill the same commits made during the run lose nothing (tried
by hand in local mode for ``rm``, ``mv``, ``renfile``: ``rec`` ran once, ``plangate: complete
plans/v``, written back where the run started; not tried in remote mode). ``rm-revert``: the restored start file was never resumed
either: ``status`` showed ``status: null``, ``file_status: executing``, only
``E_ILLEGAL_TRANSITION: agent@example.com set status executing (from nothing)``; the audit's
execution had ``outcome: null``. The restart found its jobs only among the plans the branch
still showed ``executing`` at the started path (``_owned_jobs`` skipped a plan with no state
or another status).

Fixed: the restart finds its runs from its own records (the job row, the start commit on the
branch, and no outcome commit of its own since, ``Starting._left_job``) and takes such a run
up again as it would have gone on without the kill: from the start commit's approved content
in a run folder of the state directory (never the working tree's or the moved copy's bytes);
the outcome commit writes the plan back where it started (``rm``, ``mv``, ``remote-rm``) or
onto the renamed ``PLAN.yaml`` (``renfile``), with the start's blocks. The start's frozen hash,
which the kill kept from being recorded as executed, is recorded from the job row before the
restart's first decision, so the moved copy and the rename's request are refused
``E_ALREADY_EXECUTED`` (``renfile`` commits that refusal, then the outcome). Since the fix the
pass that ``rm-revert`` plays between the deletion and the revert already finishes the run, so
the agent's ``git revert HEAD`` reverts that outcome commit (the revert before any restart is
``tests/service/test_killed_start_gone.py``). Every ``*-not-silent`` holds: the outcome commit
``plangate: complete plans/<victim>``, ``rec`` ran once, the fresh-clone audit shows the start
with ``outcome: complete``.
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

import pytest
from advkit import AGENT, ALICE, BenchError, Lab, plan_text
from test_round2_execution_kit import shared
from test_round28_runs_killwrite import killed_start

#: What round 30 broke: fixed the same session (a restart finds its runs from its job rows and
#: start commits, not from the plan still executing where it started). Kept as the record.
BROKE = pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="round 30: a start killed right after the branch move, then its folder deleted or moved by a commit before the restart: the journaled run is dropped silently (no outcome, no status row, audit ok)",
)

LABS = [
    "rm-commit",
    "mv-commit",
    "renfile-commit",
    "link-commit",
    "remote-rm-commit",
    "rm-revert",
]
#: What round 30 broke (fixed: Starting._left_job); empty, the marker kept as the record.
BROKEN: set[str] = set()
#: The labs whose killed start now ends with an outcome commit (link-commit waits, said).
FIXED = {"rm-commit", "mv-commit", "renfile-commit", "remote-rm-commit", "rm-revert"}


def _attack(lab: Lab, mode: str, victim: str) -> None:
    src = lab.repo / "plans" / victim
    if mode == "rm-commit":
        lab.git("rm", "-rqf", f"plans/{victim}")
        lab.commit(f"remove {victim}", AGENT)
    elif mode == "mv-commit":
        lab.git("mv", "-f", f"plans/{victim}", f"plans/{victim}-moved")
        lab.commit(f"move {victim}", AGENT)
    elif mode == "rm-revert":
        lab.git("rm", "-rqf", f"plans/{victim}")
        lab.commit(f"remove {victim}", AGENT)
        lab.run()
        lab.git("revert", "--no-edit", "HEAD", who=AGENT)
    elif mode == "renfile-commit":
        lab.git("mv", "-f", f"plans/{victim}/PLAN.yml", f"plans/{victim}/PLAN.yaml")
        lab.commit(f"rename {victim}'s file", AGENT)
    elif mode == "twin-commit":
        shutil.copy(src / "PLAN.yml", src / "PLAN.yaml")
        lab.commit(f"yaml twin of {victim}", AGENT)
    elif mode == "link-commit":
        os.rename(src / "PLAN.yml", lab.repo / "plans" / "kept.yml")
        os.symlink("../kept.yml", src / "PLAN.yml")
        lab.commit(f"link {victim}", AGENT)
    else:  # pragma: no cover
        raise BenchError(mode)


def _build(mode: str):  # type: ignore[no-untyped-def]
    def build(root: Path) -> Lab:
        lab = Lab(root)
        victim = f"k{killed_start(lab, lambda n: f'k{n}', lambda n: plan_text(f'k{n}'))}"
        lab.victim = victim  # type: ignore[attr-defined]
        _attack(lab, mode, victim)
        for _ in range(3):
            lab.run()
        lab.write("zz", plan_text("zz"))
        lab.commit("plan zz", AGENT, "plans/zz")  # only zz's files, never the victim's
        lab.run()
        lab.set_status("zz", "approved")
        lab.commit("approve zz", ALICE, "plans/zz")
        lab.run()
        lab.run()
        return lab

    return build


def _build_remote(root: Path) -> Lab:
    """Remote mode: the controller works in its own clone and pushes to ``bare.git``; the
    bench kills the pass as soon as the bare branch moves (its start push)."""
    lab = Lab(root)
    bare = root / "bare.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(lab.repo), str(bare)], check=True)
    lab.git("remote", "add", "origin", str(bare))
    lab.config.write_text(
        lab.config.read_text().replace(
            f"repo: {lab.repo}\n",
            f"remote: {{url: 'file://{bare}', branch: main, poll_interval: 0.2}}\n",
        )
    )

    def sync() -> None:
        lab.git("pull", "-q", "--rebase", "origin", "main")
        lab.git("push", "-q", "origin", "HEAD:main")

    def tip() -> str:
        return lab.git("--git-dir", str(bare), "rev-parse", "main").strip()

    lab.victim = "k0"  # type: ignore[attr-defined]
    lab.write("k0", plan_text("k0"))
    lab.commit("plan k0")
    sync()
    lab.run()
    sync()
    lab.approve("k0", ALICE)
    sync()
    env = lab.env()
    env["REC_LOG"] = str(lab.log)
    last = tip()
    proc = subprocess.Popen(
        [sys.executable, "-m", "controller", "run", "--once", "--config", str(lab.config)],
        cwd=lab.root,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while proc.poll() is None and time.monotonic() < deadline:
        if tip() != last:
            os.kill(proc.pid, signal.SIGKILL)
            break
    proc.wait()
    lab.git("pull", "-q", "--rebase", "origin", "main")
    if lab.git("log", "-1", "--format=%s").strip() != "plangate: start plans/k0":
        raise BenchError("the remote kill did not land right after the start push")
    lab.git("rm", "-rqf", "plans/k0")
    lab.commit("remove k0", AGENT)
    sync()
    for _ in range(3):
        lab.run()
    lab.write("zz", plan_text("zz"))
    lab.commit("plan zz")
    sync()
    lab.run()
    sync()
    lab.approve("zz", ALICE)
    sync()
    lab.run()
    lab.run()
    lab.git("pull", "-q", "--rebase", "origin", "main")
    return lab


@pytest.fixture(scope="module", params=LABS)
def lab(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Lab:
    mode = request.param
    build = _build_remote if mode == "remote-rm-commit" else _build(mode)
    built = shared(tmp_path_factory, f"r30-killgone-{mode}", build)
    built.mode = mode  # type: ignore[attr-defined]
    return built


def test_at_most_once(lab: Lab) -> None:
    victim = lab.victim  # type: ignore[attr-defined]
    assert len(lab.calls(victim)) <= 1


def test_not_silent(lab: Lab, request: pytest.FixtureRequest) -> None:
    if lab.mode in BROKEN:  # type: ignore[attr-defined]
        request.applymarker(BROKE)
    victim = lab.victim  # type: ignore[attr-defined]
    outcome = [
        s
        for s in lab.subjects(victim)
        if s.split(" ")[1] in ("complete", "fail", "failed", "abort", "aborted")
    ]
    row = lab.status().get(f"plans/{victim}") or {}
    if lab.mode == "rm-revert":  # type: ignore[attr-defined]
        assert outcome, json.dumps({"status": row, "subjects": lab.subjects(victim)})
        return
    said = row.get("status") not in ("pending_approval", "approved", "draft") and (
        any(row.get(k) for k in ("problem", "reason", "waiting"))
        or "E_" in str(row.get("last_event"))
    )
    assert outcome or said, json.dumps({"status": row, "subjects": lab.subjects(victim)})


def test_bystander(lab: Lab) -> None:
    assert len(lab.calls("zz")) == 1
    assert lab.status()["plans/zz"]["status"] == "completed"


def test_audit_outcome(lab: Lab) -> None:
    """Since the fix: the audit (git alone) shows the victim's start with its outcome."""
    if lab.mode not in FIXED:  # type: ignore[attr-defined]
        pytest.skip("the start waits (E_UNSAFE_PATH): no outcome to audit yet")
    victim = lab.victim  # type: ignore[attr-defined]
    _, report = lab.audit()
    runs = [e for e in report["executions"] if e["plan"] == f"plans/{victim}"]
    assert runs and all(e["outcome"] == "complete" for e in runs), json.dumps(runs)
