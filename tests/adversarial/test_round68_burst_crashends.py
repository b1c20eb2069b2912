"""Round 68, bursts: round 67's look-alike END rule after a SIGKILL mid-burst ("a later
``start``, a ``fail`` or an ``abort`` of a run ``executing``, the file showing that end of the
same version, moves the run on"), at its edges: on a merged branch, a trailer the file does
not show, an end carrying a new version, and the AGENT's resume of the run it failed.

Lab (one, local mode, fake commit dates, ``run --once`` passes). Five three-action plans
``c-01``..``c-05`` (``rec`` ``c-NN-1``, then the catalog exec tool ``crash`` (``idempotent:
true``): the first call of the lab SIGKILLs the ``plangate run --once`` process group, every
later call answers ok; then ``rec`` ``c-NN-3``), frozen, approved by Alice in one commit; a pass
starts the burst and dies at the first ``crash`` call. Then, as the agent (committer and
author ``plangate``, no seal, through its own index):

- ONE batched look-alike ``plangate: 4 plan events``: ``c-02`` ``fail`` with ``Plan-Status:
  failed`` but the file left ``executing`` (``trailer``), ``c-03`` ``fail`` (file ``failed``,
  ``agentresume``), ``c-04`` ``fail`` whose tree also changes ``c-04``'s action 3 to
  ``c-04-EVIL`` (``newtext``), ``c-06`` ``fail`` (file ``failed``, ``resume``: the plain case);
- on a branch ``agent/ends`` a one-plan look-alike ``plangate: fail plans/c-01`` (file
  ``failed``), merged ``--no-ff`` into main by the agent (``branch``). ``c-05`` is the control.

Two passes; the agent sets ``c-03`` ``approved`` itself (its "resume"); a pass; Alice resumes
``c-01``, ``c-03`` and ``c-06`` (``failed`` -> ``approved``) in one commit; two passes;
``status``; Alice approves ``c-03`` once more; a pass; the audit with the config and on a
fresh clone. At the kill only ``c-01``'s action 1 had run (the batch start had started all six).

Asserted: ``<v>-once``: no action ran twice and ``c-04-EVIL`` never ran; ``<v>-end``: the plan
ends ``completed`` with action 1 and 3 run once (a run moved on is resumed by Alice; one the
look-alike did not move on goes on by itself); ``agentresume-agent``: the agent's own
``approved`` runs nothing (nothing ran between it and Alice's resume); ``audit-once``: no plan
has two valid new runs in either audit; ``audit-cfg``: the config audit flags both
look-alike commits.

Seen. HELD: ``*-once`` (no action twice, ``c-04-EVIL`` never), ``branch-end`` (the look-alike
on the merged branch is off the first-parent line: the run went on by itself, each action
once), ``control-end``, ``newtext-end`` (the approved run waits, ``E_PLAN_HASH_MISMATCH`` "restore
the approved file"), ``agentresume-agent`` (the agent's ``approved`` is refused
``E_APPROVER_NOT_ALLOWED``, nothing runs), ``agentresume-again`` (her SECOND approval runs
actions 1..3 once), ``audit-once``, ``audit-cfg``. BROKE (strict xfails):

- ``trailer-end``: a batched group ``Plan-Event: fail`` / ``Plan-Status: failed`` whose tree
  leaves the file ``executing`` stops the run: the take-over check says "the run was taken
  over: fail in <commit> ... moved the run on ... an allowed aborter sets the plan aborted to
  end it", while the index reads nothing (``last_event`` the start): ``executing`` for good,
  nothing runs, no resume possible (the file is not ``failed``). docs/execution.md (round
  67): only a ``fail`` "the file showing that end" moves the run on; any other end is anyone's
  and the run goes on.
- ``resume-end``, ``agentresume-end``: after a look-alike ``fail`` (file ``failed``) of a run the
  crash stopped before its first action, Alice's resume (``failed`` -> ``approved``, as the
  docs say) is started and at once failed ``E_ACTION_IN_DOUBT: the journal of this run was
  lost and the controller has no record of its own of the run ...: nothing is run`` though
  ``<state_dir>/journal/plans%2Fc-0N/`` holds it: nothing ran, ``failed``; only a second
  approval runs it. Should: her resume runs actions 1..3 once ("her resume completes it").

Fixed (2026-11-30): one rule, read from the facts, for the history index and the take-over
check (``controller.git.lifecycle.shows_end``, through ``Lifecycle.moved_on_by``): a run
event under the controller's name that it did not make moves the run on only when the plan's
file at that commit shows the end the event writes, of the run's version; a trailer alone (or
an end of another version) is anyone's and the run goes on (``trailer-end``; ``newtext-end``
now holds that way too: the run goes on from what was approved, as for any edit of a running
plan in place, actions 1 and 3 once, ``c-04-EVIL`` never, the file written over with what
ran). And a journal whose first record is the ``begin`` of a first approval's start (marked
``first``) holds the whole run: it was not lost, so a resume of a run that journal shows
never began runs from action 1 (``resume-end``, ``agentresume-end``); the "journal lost"
reading (round 52: the controller's own record, or nothing runs) is left to a journal begun
by a later start. A crash mid-action still ends in doubt (tests/execution/
test_crash_resume.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from advkit import ALICE, BOT, BenchError, Lab, cases
from burstkit import (
    agent_index,
    approved_plans,
    audited,
    crash_lab,
    crashed_pass,
    date_steps,
    event_group,
    new_runs,
    own_index,
    set_committed,
    three,
)
from test_round2_execution_kit import shared

C = [f"c-{i:02d}" for i in range(1, 7)]
NAMES = {"c-01": "branch", "c-02": "trailer", "c-03": "agentresume", "c-04": "newtext"}
NAMES.update({"c-05": "control", "c-06": "resume"})
BROKEN: dict[str, object] = {}  # all three fixed (2026-11-30): see the docstring


def _build(root: Path) -> Lab:
    lab, marks = crash_lab(root)
    date = date_steps(lab, 1790000000)

    approve = approved_plans(lab, date, {v: three(v) for v in C}, C, "approve c")
    lab.at_kill = crashed_pass(lab, marks)  # type: ignore[attr-defined]
    lab.head_at_kill = {v: lab.plan(v)["plan"]["status"] for v in C}  # type: ignore[attr-defined]
    started = [r for r in lab.log_rows(rev=f"{approve}..HEAD") if r[2] == BOT[1]]
    if not started:
        raise BenchError(f"the burst was not started: {lab.at_kill}")  # type: ignore[attr-defined]
    agent_index(lab, root)
    date()
    set_committed(lab, "c-03", "failed")
    set_committed(lab, "c-06", "failed")
    set_committed(lab, "c-04", "failed", ('tag: "c-04-3"', 'tag: "c-04-EVIL"'))
    msg = "plangate: 4 plan events\n\n"
    msg += event_group("c-02", "fail", "failed", "Plan-Note: action 2 failed: E_ACTION_IN_DOUBT\n")
    msg += event_group("c-03", "fail", "failed", "Plan-Note: action 2 failed: E_ACTION_IN_DOUBT\n")
    msg += event_group("c-04", "fail", "failed", "Plan-Note: action 2 failed: E_ACTION_IN_DOUBT\n")
    msg += event_group("c-06", "fail", "failed", "Plan-Note: action 2 failed: E_ACTION_IN_DOUBT\n")
    lab.git("commit", "-q", "-m", msg + "Controller: host/3f2a9c1b\n", who=BOT)
    forged = {"batch": lab.head()}
    lab.git("branch", "agent/ends")
    lab.git("symbolic-ref", "HEAD", "refs/heads/agent/ends")
    set_committed(lab, "c-01", "failed")
    lab.git(
        "commit",
        "-q",
        "-m",
        "plangate: fail plans/c-01\n\naction 2 failed: E_ACTION_IN_DOUBT\n\nPlan: plans/c-01\n"
        "Plan-Status: failed\nController: host/3f2a9c1b\n",
        who=BOT,
    )
    forged["branch"] = lab.head()
    lab.git("symbolic-ref", "HEAD", "refs/heads/main")
    date()
    tree = lab.git("rev-parse", "agent/ends^{tree}").strip()
    merge = lab.git(
        "commit-tree",
        tree,
        "-p",
        "main",
        "-p",
        "agent/ends",
        "-m",
        "merge agent/ends",
        who=("Agent", "agent@example.com"),
    ).strip()
    lab.git("update-ref", "refs/heads/main", merge)
    lab.git("read-tree", "HEAD")
    lab.forged = forged  # type: ignore[attr-defined]
    own_index(lab)
    lab.git("reset", "-q", "--hard")
    date()
    lab.run()
    date()
    lab.run()
    lab.rows_mid = lab.status()  # type: ignore[attr-defined]
    lab.before_agent = {v: len(lab.calls(f"{v}-3")) for v in C}  # type: ignore[attr-defined]
    date()
    lab.set_status("c-03", "approved")
    lab.commit("resume c-03 (the agent)")
    lab.run()
    lab.after_agent = {v: len(lab.calls(f"{v}-3")) for v in C}  # type: ignore[attr-defined]
    lab.rows_agent = lab.status()  # type: ignore[attr-defined]
    date()
    for v in ("c-01", "c-03", "c-06"):
        lab.set_status(v, "approved")
    lab.commit("resume c-01, c-03 and c-06", ALICE)
    lab.run()
    date()
    lab.run()
    lab.rows_end = lab.status()  # type: ignore[attr-defined]
    lab.end_counts = {v: (len(lab.calls(f"{v}-1")), len(lab.calls(f"{v}-3"))) for v in C}  # type: ignore[attr-defined]
    date()
    lab.set_status("c-03", "approved")
    lab.commit("resume c-03 again", ALICE)
    lab.run()
    lab.rows_again = lab.status()  # type: ignore[attr-defined]
    lab.again = (len(lab.calls("c-03-1")), len(lab.calls("c-03-3")))  # type: ignore[attr-defined]
    return audited(lab, root)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r68-crashends", _build)


def test_the_lab(lab: Lab) -> None:
    assert set(lab.head_at_kill.values()) == {"executing"}, lab.head_at_kill  # type: ignore[attr-defined]


IDS = [f"{NAMES[c]}-{k}" for c in C for k in ("once", "end")]
IDS += ["agentresume-agent", "agentresume-again"]
BY = {n: c for c, n in NAMES.items()}


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))  # type: ignore[arg-type]
def test_a_lookalike_end_after_a_crash(lab: Lab, vid: str) -> None:
    name, what = vid.split("-", 1)
    slug = BY[name]
    ones, threes = lab.end_counts[slug]  # type: ignore[attr-defined]
    row = lab.rows_end[f"plans/{slug}"]  # type: ignore[attr-defined]
    said = {k: row.get(k) for k in ("status", "waiting", "last_event")}
    if what == "once":
        ones, threes = len(lab.calls(f"{slug}-1")), len(lab.calls(f"{slug}-3"))
        assert ones <= 1 and threes <= 1 and not lab.calls("c-04-EVIL"), (ones, threes, said)
    elif what == "again":
        row = lab.rows_again[f"plans/{slug}"]  # type: ignore[attr-defined]
        assert (*lab.again, row["status"]) == (1, 1, "completed"), (
            lab.again,
            row.get("last_event"),
        )  # type: ignore[attr-defined]
    elif what == "end":  # c-04 too: an end of a new version is not the run's (round 68)
        assert (ones, threes, row["status"]) == (1, 1, "completed"), (ones, threes, said)
    else:
        assert lab.after_agent == lab.before_agent, (lab.after_agent, lab.rows_agent["plans/c-03"])  # type: ignore[attr-defined]


AUD = ["audit-once", "audit-cfg"]


@pytest.mark.parametrize("vid", cases(AUD, AUD, BROKEN))  # type: ignore[arg-type]
def test_the_audit(lab: Lab, vid: str) -> None:
    if vid == "audit-once":
        for report in (lab.creport, lab.report):  # type: ignore[attr-defined]
            twice = {s: len(new_runs(report, s)) for s in C if len(new_runs(report, s)) > 1}
            assert twice == {}, twice
        return
    flagged = {f.get("commit") for f in lab.creport.get("findings", [])}  # type: ignore[attr-defined]
    missed = {k: v for k, v in lab.forged.items() if v not in flagged}  # type: ignore[attr-defined]
    assert missed == {}, missed
