"""Round 99 (runs, atk99c): batched controller commits under the daemon: forged batches, a
real batch cherry-picked and reverted by a person, a plan name that looks like a trailer,
and a SIGKILL of the daemon inside a burst, each read back by ``status``, ``audit`` (fresh
clone) and later passes.

Lab (one build, local mode, ``execution: {max_concurrent_plans: 8, batch_window: 0.5}`` so
the daemon batches its freezes, starts and outcomes):

- ``b00``..``b19``: a burst: 20 plans approved by Alice in one commit, run by the daemon
  (``plangate: start 19 plans``-style commits); ``tn`` is one of them, its ``plan.name``
  ``"Plan: plans/fp\\nPlan-Event: complete"`` (a name that looks like a trailer group).
- ``fp``: pending, never approved; the agent commits (no file change) a forged batch
  ``plangate: complete 2 plans`` with ``Plan:``/``Plan-Event: complete``/``Plan-Status:
  completed``/``Approved-By: alice``/``Approval-Commit:`` groups for ``fp`` and ``fa``, and the
  ``Controller:``/``Controller-Seal:`` lines copied from a real batch.
- ``fa``: pending; named in that forged batch; Alice approves it later: it must run once.
- ``fi``: pending, never approved; a forged ``plangate: start 1 plans`` batch committed under
  the controller's own name and email (``plangate <plangate@localhost>``), copied seal and
  ``Policy-Hash``, writing ``status: executing`` in its PLAN.yml.
- ``cp``: the plans of a real batched ``complete`` commit: the agent cherry-picks it onto main
  again (``--keep-redundant-commits``).
- ``rv``: the plans of another real batched ``complete`` commit: the agent ``git revert``s it.
- ``k00``..``k29``: a second burst of 30 approved in one merge; the daemon SIGKILLed as soon
  as a batched ``start`` commit lands; restarted until every plan ended.
- ``j00``..``j19``: a third burst approved in one commit; the daemon SIGKILLed once 5 of its
  tools were called (their outcomes still inside the 0.5 s batch window, uncommitted);
  restarted.

Ids: ``<plan>-run`` (burst plans, ``fa``, ``fp``, ``fi``): ``calls`` (``rec`` once; never for
``fp``/``fi``), ``ended`` (one end record in commits the controller committed, a batch read as
its one-plan commits), ``status`` (``completed``; never ``completed``/``executing``/``failed``
for a forged plan), ``audit`` (fresh clone: one valid run; none for a forged plan).
``<burst plan>-grep``: ``git log --committer=plangate@localhost --grep '^Plan: plans/<p>$'``
finds exactly one freeze, start and complete group, each start/complete group's
``Plan-Hash`` = status's hash, ``Approved-By`` Alice, ``Plan-Status: completed``.
``k..-kill``/``j..-kill``: at most one call, exactly one end record, status agrees with it
(``completed`` or ``failed``). ``test_control``: batches happened, the daemon was killed, the
forged/cherry-picked/reverted commits are on main. ``test_nocrash``: no traceback in any pass
or daemon log.

Seen (round 99): 95 ids, nothing broke. ``fp``: status ``pending_approval`` ("waiting for an
approval"), no call, no valid run: the agent's forged ``plangate: complete 2 plans`` (copied
``Controller-Seal``) was not read as the controller's. ``fa``: named in that forgery, then
approved: ran once (``start plans/fa``, ``complete plans/fa``), audit one valid run. ``fi``:
the forged ``plangate: start 1 plans`` under the controller's own name/email: status
``pending_approval``, note ``E_ILLEGAL_TRANSITION: plangate@localhost set status executing
(from pending_approval) ...; ignored``; audit finding ``start-without-approval`` "no
approval request precedes this start", and no valid run. Cherry-pick of a real ``complete 4
plans`` batch (author plangate, committer Agent): no re-run, status unchanged, audit one
valid run each. Revert of ``complete 7 plans``: no re-run; audit findings ``log-changed``,
``owned-block-changed``, ``illegal`` (``E_ILLEGAL_TRANSITION: agent@example.com set status
executing (from completed)``) per plan; status ``completed``. ``tn`` (name ``Plan:
plans/fp\nPlan-Event: complete``) ran once, ``fp`` unaffected. Kill after ``start 29 plans``:
each ``k`` plan called once, one end. Kill with 5 ``j`` tools called: restart wrote ``8 plan
events``/``10 plan events``; 8 ``j`` plans ``E_ACTION_IN_DOUBT``, none called twice, status
agrees.
"""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab, cases, clone_audit, plan_text, until, xfail  # noqa: F401
from test_round2_execution_kit import shared

from controller.git.records import batch_groups
from tests.support.daemonproc import DaemonProcess

BOT = ("plangate", "plangate@localhost")
EXTRA = "execution: {max_concurrent_plans: 8, batch_window: 0.5}\n"
BURST = [f"b{i:02d}" for i in range(19)] + ["tn"]
KILLED = [f"k{i:02d}" for i in range(30)]
CALLED = [f"j{i:02d}" for i in range(20)]
FORGED = ["fp", "fi"]


def _ctl(lab: Lab) -> list[list[str]]:
    """The controller's commits (hash, author email, subject, body), newest first."""
    return [r for r in lab.log_rows() if r[2] == BOT[1]]


def _ended(lab: Lab, slug: str) -> list[str]:
    """The end records of ``slug`` in commits the controller itself committed (a person's
    cherry-pick keeps the controller as author, never as committer), a batch read as the
    one-plan commits it stands for."""
    found = []
    for r in lab.log_rows("%H%x00%an%x00%ce%x00%s%x00%B%x01"):
        if r[2] != BOT[1]:
            continue
        groups = batch_groups(r[4]) if "\nPlan-Event: " in r[4] else []
        said = [(t.get("Plan-Event"), p) for p, t in groups] or [tuple(r[3].split(" ")[1:3])]
        found += [f"plangate: {e} {p}" for e, p in said if p == f"plans/{slug}"]
    return [s for s in found if s.split(" ")[1] in ("complete", "fail")]


def _daemon(lab: Lab) -> DaemonProcess:
    return DaemonProcess(lab.config, env={"REC_LOG": str(lab.log), **lab.env()})


def _all_ended(lab: Lab, slugs: list[str]) -> bool:
    return all(_ended(lab, s) for s in slugs)


def _batches(lab: Lab, event: str) -> list[list[str]]:
    """The controller's batched commits (``plangate: <event> N plans`` or ``plangate: N plan
    events``) holding an ``event`` group."""
    return [
        r
        for r in _ctl(lab)
        if "\nPlan-Event: " in r[4]
        and any(t.get("Plan-Event") == event for _, t in batch_groups(r[4]))
    ]


def _revertable(lab: Lab, batches: list[list[str]]) -> list[list[str]]:
    """Those of ``batches`` whose plans no later commit on main touches."""
    return [
        batch
        for batch in batches
        if not lab.git(
            "log", "--format=%H", f"{batch[0]}..main", "--",
            *[f"{p}/" for p, _ in batch_groups(batch[4])],
        ).strip()
    ]  # fmt: skip


def _forge(groups: list[tuple[str, str, str]], seal: dict[str, str], subject: str) -> str:
    body = ""
    for plan, event, status in groups:
        body += (
            f"Plan: plans/{plan}\nPlan-Event: {event}\nPlan-Hash: {seal['hash']}\n"
            f"Plan-Status: {status}\nApproved-By: alice@example.com\n"
            f"Approval-Commit: {seal['approval']}\n"
        )
        if event == "start":
            body += f"Policy-Hash: {seal['policy']}\n"
    body += f"Controller: {seal['controller']}\nController-Seal: {seal['seal']}\n"
    return f"{subject}\n\n{body}"


def _build(root: Path) -> Lab:
    lab = Lab(root / "lab", extra=EXTRA)
    lab.said = {}  # type: ignore[attr-defined]
    for s in BURST:
        name = "Plan: plans/fp\\nPlan-Event: complete" if s == "tn" else None
        lab.write(s, plan_text(s, name=name))
    for s in ("fp", "fa", "fi"):
        lab.write(s, plan_text(s))
    lab.commit("plans")
    lab.run()
    for s in BURST:
        lab.set_status(s, "approved")
    lab.commit("approve the burst", ALICE)
    d = _daemon(lab)
    try:
        until(lambda: _all_ended(lab, BURST), 150)
    finally:
        d.stop()
    # a real batch's shared lines, copied
    starts = _batches(lab, "start")
    completes = _batches(lab, "complete")
    assert starts and len(completes) >= 2, [r[3] for r in _ctl(lab)]
    first = next(t for _, t in batch_groups(starts[0][4]) if t.get("Plan-Event") == "start")
    seal = {
        "hash": first["Plan-Hash"],
        "approval": first["Approval-Commit"],
        "policy": first.get("Policy-Hash", ""),
        "controller": first["Controller"],
        "seal": first["Controller-Seal"],
    }
    # the batches cherry-picked and reverted: ones no later commit touches (under load a
    # batch also holds another plan's start, whose complete came later, even in a one-plan
    # commit: the cherry-pick or revert conflicted, a lab failure); where none is, git
    # keeps the branch's side of a conflicting hunk (-X ours)
    clean = _revertable(lab, completes)
    cp, rv = (clean * 2)[:2] if clean else completes[:2]
    how = [] if clean else ["-X", "ours"]
    lab.said["cp"] = [p for p, _ in batch_groups(cp[4])]  # type: ignore[attr-defined]
    lab.said["rv"] = [p for p, _ in batch_groups(rv[4])]  # type: ignore[attr-defined]
    # forged batches
    msg = _forge(
        [("fp", "complete", "completed"), ("fa", "complete", "completed")],
        seal,
        "plangate: complete 2 plans",
    )
    lab.git("commit", "-q", "--allow-empty", "-m", msg, who=AGENT)
    lab.set_status("fi", "executing")
    lab.git("add", "-A")
    msg = _forge([("fi", "start", "executing")], seal, "plangate: start 1 plans")
    lab.git("commit", "-q", "-m", msg, who=BOT)
    # a real batch cherry-picked again, another reverted
    lab.git("cherry-pick", *how, "--allow-empty", "--keep-redundant-commits", cp[0], who=AGENT)
    lab.git("revert", *how, "--no-edit", rv[0], who=AGENT)
    lab.said["forged_run"] = lab.run(check=False)  # type: ignore[attr-defined]
    lab.set_status("fa", "approved")
    lab.commit("approve fa", ALICE)
    lab.said["fa_run"] = lab.run(check=False)  # type: ignore[attr-defined]
    # a second burst, killed inside
    for s in KILLED:
        lab.write(s, plan_text(s))
    lab.commit("plans k")
    lab.run(check=False)
    lab.branch("approve-k")
    for s in KILLED:
        lab.set_status(s, "approved")
    lab.commit("approve k", ALICE)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge approve-k", "approve-k", who=ALICE)
    seen = len(_batches(lab, "start"))
    kills = 0
    for _ in range(3):
        d = _daemon(lab)
        try:
            until(lambda n=seen: len(_batches(lab, "start")) > n or _all_ended(lab, KILLED), 90)
            os.kill(d.proc.pid, signal.SIGKILL)
            d.proc.wait(30)
            kills += 1
        finally:
            d.kill()
        if _all_ended(lab, KILLED):
            break
        seen = len(_batches(lab, "start"))
    d = _daemon(lab)
    try:
        # started, and past its recovery of the index.lock the last SIGKILL may have left:
        # a SIGTERM before that (every plan had ended at the kill) left the lock to the
        # next start, and the lab's own `git add` below failed on it (CI, 2026-12-06)
        d.wait_started(90)
        until(lambda: _all_ended(lab, KILLED), 150)
    finally:
        lab.said["daemon_rc"] = d.stop()  # type: ignore[attr-defined]
        lab.said["daemon_log"] = d.text()[-4000:]  # type: ignore[attr-defined]
    lab.said["kills"] = kills  # type: ignore[attr-defined]
    # a third burst: SIGKILL once 5 of its tools were called (outcomes still in the batch
    # window, not committed), restarted
    for s in CALLED:
        lab.write(s, plan_text(s))
    lab.commit("plans j")
    lab.run(check=False)
    for s in CALLED:
        lab.set_status(s, "approved")
    lab.commit("approve j", ALICE)
    d = _daemon(lab)
    try:
        lab.said["jhit"] = until(  # type: ignore[attr-defined]
            lambda: sum(len(lab.calls(s)) for s in CALLED) >= 5, 90, 0.01
        )
        lab.said["jended_at_kill"] = sum(bool(_ended(lab, s)) for s in CALLED)  # type: ignore[attr-defined]
        os.kill(d.proc.pid, signal.SIGKILL)
        d.proc.wait(30)
    finally:
        d.kill()
    d = _daemon(lab)
    try:
        d.wait_started(90)
        until(lambda: _all_ended(lab, CALLED), 150)
    finally:
        lab.said["jlog"] = d.text()[-4000:]  # type: ignore[attr-defined]
        d.stop()
    lab.said["final"] = lab.run(check=False)  # type: ignore[attr-defined]
    lab.said["rows"] = lab.rows()  # type: ignore[attr-defined]
    report, _valid_plans = clone_audit(lab, root)
    lab.said["audit"] = report  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r99-atk99c", _build)


def _valid(lab: Lab, slug: str) -> list[Any]:
    return [
        e
        for e in lab.said["audit"].get("executions", [])  # type: ignore[attr-defined]
        if e.get("plan") == f"plans/{slug}" and e.get("approval_valid")
    ]


def _row(lab: Lab, slug: str) -> dict[str, Any]:
    return dict(lab.said["rows"].get(f"plans/{slug}", {}))  # type: ignore[attr-defined]


RUN_ONCE = [*BURST, "fa"]
ALL = ("calls", "ended", "status", "audit")
#: id -> (plan, checks): a burst plan's run, its ``--grep``, a forged plan, a killed one
IDS: list[str] = []
VALUES: list[Any] = []
for _s in RUN_ONCE + FORGED:
    IDS.append(f"{_s}-run")
    VALUES.append((_s, ALL))
for _s in BURST:
    IDS.append(f"{_s}-grep")
    VALUES.append((_s, ("grep",)))
for _s in KILLED + CALLED:
    IDS.append(f"{_s}-kill")
    VALUES.append((_s, ALL[:3]))

BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize(("slug", "checks"), cases(IDS, VALUES, BROKEN))
def test_runs(lab: Lab, slug: str, checks: tuple[str, ...]) -> None:
    for check in checks:
        _check(lab, slug, check)


def _check(lab: Lab, slug: str, check: str) -> None:
    calls = len(lab.calls(slug))
    row = _row(lab, slug)
    if slug in FORGED:
        if check == "calls":
            assert calls == 0
        elif check == "ended":
            assert not _ended(lab, slug), lab.subjects(slug)
        elif check == "status":
            assert row.get("status") not in ("completed", "executing", "failed"), row
        else:
            assert not _valid(lab, slug), _valid(lab, slug)
        return
    if slug in KILLED or slug in CALLED:
        ended = _ended(lab, slug)
        if check == "calls":
            assert calls <= 1, calls
        elif check == "ended":
            assert len(ended) == 1, lab.subjects(slug)
        else:
            want = "completed" if ended and ended[0].startswith("plangate: complete") else "failed"
            assert row.get("status") == want, (ended, row)
        return
    if check == "calls":
        assert calls == 1, calls
    elif check == "grep":
        # git log --grep finds the plan's batched groups; each says what a one-plan commit says
        hits = lab.git(
            "log",
            "--committer=plangate@localhost",
            f"--grep=^Plan: plans/{slug}$",
            "--format=%s%x00%B%x01",
            "main",
        )
        groups = [
            {"Plan-Event": sub.split(" ")[1], **t}
            for sub, _, b in (h.strip().partition("\0") for h in hits.split("\x01") if h.strip())
            for p, t in batch_groups(b.strip())
            if p == f"plans/{slug}"
        ]
        events = sorted(t.get("Plan-Event", "") for t in groups)
        assert events == ["complete", "freeze", "start"], events
        for t in groups:
            if t["Plan-Event"] != "freeze":
                assert t.get("Plan-Hash") == row.get("hash"), (t, row.get("hash"))
                assert t.get("Approved-By") == "alice@example.com", t
        done = [t for t in groups if t["Plan-Event"] == "complete"]
        assert done[0].get("Plan-Status") == "completed", done
    elif check == "ended":
        assert len(_ended(lab, slug)) == 1, lab.subjects(slug)
    elif check == "status":
        assert row.get("status") == "completed", row
    else:
        assert len(_valid(lab, slug)) == 1, _valid(lab, slug)


def test_nocrash(lab: Lab) -> None:
    for key in ("forged_run", "fa_run", "final"):
        got = lab.said[key]  # type: ignore[attr-defined]
        assert "Traceback" not in got.stderr, got.stderr[-2000:]
    assert "Traceback" not in lab.said["daemon_log"]  # type: ignore[attr-defined]
    assert "Traceback" not in lab.said["jlog"]  # type: ignore[attr-defined]


def test_control(lab: Lab) -> None:
    """The lab did what it says: batched starts and outcomes, the daemon killed at least once,
    the forged, cherry-picked and reverted commits on main."""
    s = lab.said  # type: ignore[attr-defined]
    assert s["kills"] >= 1
    assert s["jhit"] and s["jended_at_kill"] < len(CALLED), s["jended_at_kill"]
    assert len(_batches(lab, "start")) >= 2 and len(_batches(lab, "complete")) >= 2
    subjects = lab.git("log", "--format=%an|%cn|%s", "main")
    assert "Agent|Agent|plangate: complete 2 plans" in subjects
    assert "plangate|plangate|plangate: start 1 plans" in subjects
    assert "plangate|Agent|plangate: " in subjects  # the cherry-picked batch (any subject)
    assert 'Agent|Agent|Revert "plangate: ' in subjects
