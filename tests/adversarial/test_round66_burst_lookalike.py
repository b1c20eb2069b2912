"""Round 66, bursts: commits made to LOOK like the controller's batched commits, carried by
ONE merge approving 24 plans, beside an agent's note (round 65's fixes: a merge's folder
writers are the merged commits' makers; the audit and the controller agree on look-alike
controller commits, aborts among them); then a second controller on the same state
directory while the daemon runs a burst, a SIGKILL mid-burst, and look-alikes committed
before the restart.

Lab (one, local mode). The agent adds 24 plans ``m-01``..``m-24`` and 8 two-action plans
``k-01``..``k-08`` in one commit; a pass freezes them. On Alice's review branch the agent first
pushes, as ``plangate <plangate@localhost>`` (author and committer) in the batched shape
(``plangate: 3 plan events``, one ``Plan:`` / ``Plan-Event:`` group per plan, ``Controller:``):

- ``la-abort``: ``m-01`` set ``aborted`` (``Plan-Event: abort``, ``Aborted-By: alice``);
- ``la-complete``: ``m-02`` set ``completed`` (``Plan-Event: complete``);
- ``la-refuse``: a ``Plan-Event: refuse`` group for ``m-03`` (its file unchanged);
- ``la-solo``: a one-plan look-alike ``plangate: abort plans/m-04`` (``Aborted-By: alice``);

then Alice approves all 24 in ONE commit; after it the agent pushes ``la-after`` (a batched
look-alike abort of ``m-06``) and, as itself, ``note`` (a ``NOTES.md`` in ``m-05``'s folder).
Alice merges the branch ``--no-ff`` (one merge approving 24 plans); two passes; the audit with
the config and on a fresh clone.

Asserted: a look-alike before her approval is nobody's withdrawal or outcome: the plan runs
once on her approval, ``status`` says ``completed``, both audits list one valid run credited to
her, no ``aborted_by``, flag the look-alike commit (not for ``la-refuse``, which changes no
file) and blame neither her merge nor the controller's start. ``la-after``: the merge resolves
``m-06`` to the look-alike's status; every reader says the same (ran iff ``completed``, as many
valid runs as tool calls) and the audit marks it. ``note`` runs once; ``honest``
(``m-07``..``m-24``) ran once, valid, unflagged.

Part B, the daemon. Alice approves ``k-*`` in one commit while ``plangate run`` runs;
``second``: a ``plangate run --once`` on the same config meanwhile exits 2 with ``E_LOCKED``
and runs nothing. The daemon is SIGKILLed (its process group, by the id we started) once 6
tool calls are in ``ran.log``; the agent then commits a look-alike batched ``complete`` of
the last two ``k-*`` plans not yet ``completed`` (status ``completed``, under the controller's
name); three ``run --once`` passes. ``killed`` (the other six) and ``killed-lookalike``
(those two): no action ran twice; a plan none of whose actions started before the kill (by
its journal) ran each once and is ``completed``; every plan ends ``completed`` with both
actions run, or ``failed`` with E_ACTION_IN_DOUBT (never left ``executing``).

Seen. HELD: ``la-abort``, ``la-solo`` (ran once on her approval, the look-alike flagged
``withdraw-not-allowed`` at its commit, nothing credited to it), ``la-refuse`` (ran once),
``la-after`` (the merge resolves ``m-06`` to the look-alike's ``aborted``: nothing ran,
``status`` and both audits agree, flagged), ``note``, ``honest``, ``second`` (``E_LOCKED``,
exit 2), ``killed`` (every other plan ran each action at most once and ended
``completed``). BROKE (strict xfails): ``la-complete``: the look-alike ``complete`` group is
flagged by neither audit (no finding for ``m-02``; m-01's abort group in the same commit is);
``killed-lookalike``: after the SIGKILL, the two started plans the look-alike ``complete``
named stay ``executing`` for good (three passes; no reason, nothing waiting), neither
action ever runs, while the file and ``git log`` say ``completed``. Should: the audit flags a
controller-only status set under its name on a merged branch (``controller-unexplained``);
the restarted controller runs (or fails E_ACTION_IN_DOUBT) the plans its journal and start
commit hold, whatever a stranger's commit says, and ``status`` says why it waits.

Fixed (2026-11-29): a commit under the controller's name that is not its own is anyone's
commit for every event kind, one rule. ``killed-lookalike``: the take-over check (round 51)
drops a run only on an end another controller can make (a later start, a ``fail``, an
``abort``: a host without this run's journal adopts a run only to fail it in doubt); progress
it did not make (``complete``, ``checkpoint``, ``await-approval``) is anyone's, and the
restarted controller runs the plans from its own start commit and journal and commits its
own outcome. ``la-complete``: by git alone an outcome or checkpoint of a plan not started
(as round 65's abort with no request) is disowned, on the line and on merged branches
(judged there by the plan's file at the commit's parent); the audit flags the look-alike
``controller-unexplained`` at every plan it names.

Fixed (2026-12-06, CI under load): the kill could land after a start commit and before the
index named it; the look-alike, committed through the agent's own index, moved the branch past
that start, so the restart's index recovery (round 28), which set only entries the branch's
head still held, set nothing (the head, the agent's commit, was not yet in the controller's
own store, so even that read failed), and the plan's outcome waited for good on "changes
staged in the index" (the entry of the version before the start). The recovery now takes the
branch into its store first and completes a landed commit's index entries the branch moved
past, where the index still names the version it replaced
(tests/service/test_index_lock_crash.py). The lab also read a plan whose first action
the journal held started at the kill (no ``ran.log`` line yet) as one that must run: it is in
doubt, and fails E_ACTION_IN_DOUBT.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from advkit import (
    AGENT,
    ALICE,
    BOT,
    BenchError,
    Lab,
    cases,
    clone_audit,
    plan_text,
    valid_runs,
)
from burstkit import batch_message, bot_commit, daemon, date_steps, findings_of, status_row, two
from test_round2_execution_kit import shared

M = [f"m-{i:02d}" for i in range(1, 25)]
K = [f"k-{i:02d}" for i in range(1, 9)]
LOOK = {"la-abort": "m-01", "la-complete": "m-02", "la-refuse": "m-03", "la-solo": "m-04"}
BROKEN: dict[str, object] = {}


def _build(root: Path) -> Lab:
    lab = Lab(root)
    date = date_steps(lab, int(time.time()) - 7200)
    date()
    for v in M:
        lab.write(v, plan_text(v))
    for v in K:
        lab.write(v, two(v))
    lab.commit("agent plans", AGENT)
    lab.run()
    date()
    lab.git("checkout", "-q", "-b", "alice/review")
    lab.set_status("m-01", "aborted")
    lab.set_status("m-02", "completed")
    lab.batch_sha = bot_commit(  # type: ignore[attr-defined]
        lab,
        batch_message(
            [
                ("m-01", "abort", "aborted"),
                ("m-02", "complete", "completed"),
                ("m-03", "refuse", "pending_approval"),
            ]
        ),
    )
    date()
    lab.set_status("m-04", "aborted")
    lab.solo_sha = bot_commit(  # type: ignore[attr-defined]
        lab,
        "plangate: abort plans/m-04\n\nPlan: plans/m-04\nPlan-Status: aborted\n"
        "Aborted-By: alice@example.com\nController: host/3f2a9c1b\n",
    )
    date()
    for v in M:
        lab.set_status(v, "approved")
    lab.commit("approve the 24", ALICE)
    date()
    lab.set_status("m-06", "aborted")
    lab.after_sha = bot_commit(lab, batch_message([("m-06", "abort", "aborted")]))  # type: ignore[attr-defined]
    date()
    lab.write("m-05", "the agent's notes on m-05\n", "NOTES.md")
    lab.commit("agent: notes", AGENT)
    lab.git("checkout", "-q", "main")
    date()
    lab.git("merge", "-q", "--no-ff", "-m", "merge alice/review", "alice/review", who=ALICE)
    lab.run()
    date()
    lab.run()
    lab.git_date = None
    lab.statusA = lab.status()  # type: ignore[attr-defined]
    _code, lab.creport = lab.audit("--config", str(lab.config))  # type: ignore[attr-defined]
    lab.report, lab.valid = clone_audit(lab, root)  # type: ignore[attr-defined]
    # Part B: the daemon, a second controller, a SIGKILL, look-alikes before the restart
    for v in K:
        lab.set_status(v, "approved")
    with daemon(lab, root) as burst:
        deadline = time.monotonic() + 30
        lock = lab.state / "lock"
        while time.monotonic() < deadline:
            if lock.exists() and f"pid={burst.proc.pid} " in lock.read_text():
                break
            time.sleep(0.02)
        else:
            raise BenchError("the daemon never took the state lock")
        lab.commit("approve the k burst", ALICE)
        lab.second = lab.cli("run", "--once", "--config", str(lab.config), timeout=30)  # type: ignore[attr-defined]
        burst.wait_for_calls(6, 180)  # a loaded CI machine
    lab.at_kill = burst.ran()  # type: ignore[attr-defined]
    # the plans whose journal holds an action started at the kill: a kill between the start
    # record and the tool's own log line leaves that action in doubt (E_ACTION_IN_DOUBT),
    # though ran.log does not show it (CI, 2026-12-06: k-04 failed in doubt, correctly)
    lab.started_at_kill = {  # type: ignore[attr-defined]
        v
        for v in K
        for journal in (lab.state / "journal" / f"plans%2F{v}").glob("*.jsonl")
        if '"t":"start"' in journal.read_text()
    }
    if len(lab.at_kill) < 6:  # type: ignore[attr-defined]
        raise BenchError(f"the daemon ran {len(lab.at_kill)} calls in 180 s")  # type: ignore[attr-defined]
    # the started plans the branch still shows running (the working tree may be ahead of it)
    open_ = [
        v
        for v in reversed(K)
        if "\n  status: executing\n" in lab.git("show", f"HEAD:plans/{v}/PLAN.yml", check=False)
    ][:2]
    if len(open_) < 2:
        raise BenchError(f"the daemon finished the burst before the kill: {lab.at_kill}")  # type: ignore[attr-defined]
    lab.lookalike_k = open_  # type: ignore[attr-defined]
    # the killed controller may have left .git/index.lock (docs/operations.md): the agent
    # commits through a private index of its own
    lab.extra_env = {"GIT_INDEX_FILE": str(root / "agent-index")}  # type: ignore[attr-defined]
    # and a ref lock the kill left (`main.lock`) is removed, as git's message tells a person
    git_dir = lab.repo / ".git"  # and HEAD.lock: a kill mid-commit leaves it too
    for stale in [*(git_dir / "refs" / "heads").glob("*.lock"), *git_dir.glob("*.lock")]:
        if stale.name != "index.lock":  # the agent commits through its own index
            stale.unlink()
    lab.git("read-tree", "HEAD")
    for v in open_:
        text = lab.git("show", f"HEAD:plans/{v}/PLAN.yml")
        lab.write(v, text.replace("\n  status: executing\n", "\n  status: completed\n", 1))
        lab.git("add", f"plans/{v}/PLAN.yml")
    lab.git(
        "commit",
        "-q",
        "-m",
        batch_message([(v, "complete", "completed") for v in open_]),
        who=BOT,
    )
    lab.extra_env = {}  # type: ignore[attr-defined]
    for _ in range(3):
        lab.run()
    lab.statusB = lab.cli("status", "--json", "--config", str(lab.config)).stdout  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r66-lookalike", _build)


@pytest.mark.parametrize("vid", cases(list(LOOK), list(LOOK), BROKEN))  # type: ignore[arg-type]
def test_a_lookalike_in_the_merged_burst_is_nobodys_record(lab: Lab, vid: str) -> None:
    slug = LOOK[vid]
    assert len(lab.calls(slug)) == 1, lab.statusA.get(f"plans/{slug}")  # type: ignore[attr-defined]
    assert lab.statusA[f"plans/{slug}"]["status"] == "completed", lab.statusA[f"plans/{slug}"]  # type: ignore[attr-defined]
    forged = lab.solo_sha if vid == "la-solo" else lab.batch_sha  # type: ignore[attr-defined]
    for report in (lab.creport, lab.report):  # type: ignore[attr-defined]
        runs = [e for e in report.get("executions", []) if e.get("plan") == f"plans/{slug}"]
        assert not any(e.get("aborted_by") for e in runs), runs
        valid = valid_runs(report, slug)
        assert len(valid) == 1 and valid[0].get("approver") == ALICE[1], runs
        assert valid[0].get("outcome") == "complete", valid
        mine = findings_of(report, slug)
        blamed = [f for f in mine if f.get("kind") in ("started-twice", "start-without-approval")]
        assert blamed == [], blamed
        if vid != "la-refuse":  # a refuse group that changes nothing in the file may pass
            assert any(f.get("commit") == forged for f in mine), (mine, report.get("findings"))


@pytest.mark.parametrize("vid", cases(["la-after"], ["la-after"], BROKEN))  # type: ignore[arg-type]
def test_a_lookalike_after_her_approval_is_read_alike_by_every_reader(lab: Lab, vid: str) -> None:
    """The merge resolves m-06 to the look-alike's ``aborted`` (what she merged): whether it
    runs is the merge's; every reader must say the same, and nothing is credited to the
    look-alike."""
    ran, row = lab.calls("m-06"), lab.statusA["plans/m-06"]  # type: ignore[attr-defined]
    assert len(ran) <= 1, ran
    assert (row["status"] == "completed") == (len(ran) == 1), row
    for report in (lab.creport, lab.report):  # type: ignore[attr-defined]
        runs = [e for e in report.get("executions", []) if e.get("plan") == "plans/m-06"]
        assert not any(e.get("aborted_by") for e in runs), runs
        assert len(valid_runs(report, "m-06")) == len(ran), runs
        assert findings_of(report, "m-06"), "the look-alike left no mark"


@pytest.mark.parametrize("vid", cases(["note", "honest"], ["note", "honest"], BROKEN))  # type: ignore[arg-type]
def test_the_rest_of_the_merged_burst_ran_once(lab: Lab, vid: str) -> None:
    slugs = ["m-05"] if vid == "note" else M[6:]
    assert {s: len(lab.calls(s)) for s in slugs} == {s: 1 for s in slugs}
    for report in (lab.creport, lab.report):  # type: ignore[attr-defined]
        bad = [s for s in slugs if len(valid_runs(report, s)) != 1 or findings_of(report, s)]
        assert bad == [], [(s, findings_of(report, s)) for s in bad[:3]]


IDS = ["second", "killed", "killed-lookalike"]


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))  # type: ignore[arg-type]
def test_the_daemon_burst(lab: Lab, vid: str) -> None:
    if vid == "second":
        second = lab.second  # type: ignore[attr-defined]
        assert second.returncode == 2 and "E_LOCKED" in second.stderr, second.stderr[-800:]
        return
    looked = lab.lookalike_k  # type: ignore[attr-defined]
    slugs = looked if vid == "killed-lookalike" else [v for v in K if v not in looked]
    for v in slugs:
        one, two_ = lab.calls(f"{v}-1"), lab.calls(f"{v}-2")
        assert len(one) <= 1 and len(two_) <= 1, (v, one, two_)
        r = status_row(lab.statusB, v)  # type: ignore[attr-defined]
        if f"{v}-1" not in lab.at_kill and v not in lab.started_at_kill:  # type: ignore[attr-defined]
            assert len(one) == 1 and len(two_) == 1, (v, r.get("status"), r.get("last_event"))
        if r.get("status") == "completed":
            assert len(one) == 1 and len(two_) == 1, (v, r)
        else:
            assert r.get("status") == "failed" and "E_ACTION_IN_DOUBT" in json.dumps(r), (v, r)
