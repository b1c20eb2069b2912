"""Round 67, bursts: look-alike ENDS of a run under the controller's name (round 66's rule:
the take-over check drops a run only on an end another host can make, a later ``start``, a
``fail``, an ``abort``; progress it did not make is anyone's), inside ONE batched commit
after a crash mid-burst, and look-alike ends of plans paused at their gate.

Lab (one, local mode, fake commit dates, ``run --once`` passes). The agent adds six
three-action plans ``k-01``..``k-06`` (``rec`` ``k-NN-1``, then the catalog exec tool ``crash``
(``idempotent: true``): the first call of the lab SIGKILLs the ``plangate run --once`` process
group it was started in, every later call answers ok; then ``rec`` ``k-NN-3``) and three gated
plans ``h-01``..``h-03`` (``rec``, then ``rec`` behind ``requires_approval``); a pass freezes them.

Part A, the gates. Alice approves ``h-*``; a pass pauses each at its gate. The agent commits
under the controller's name (author and committer ``plangate``, no seal): on main a batched
look-alike ``h-01`` ``fail`` (``Plan-Note: action 1 failed``) and ``h-03`` ``complete``; on
Alice's review branch a one-plan look-alike ``plangate: fail plans/h-02``. Alice sets each
``approved`` (on main for h-01 and h-03; on her branch for h-02, which she merges
``--no-ff``); one pass.

Part B, the crash. Alice approves ``k-*`` in one commit; a ``run --once`` pass (its pid the
tool's target) starts the burst and dies at the first ``crash`` call. The agent then
commits, through its own index (the kill may leave ``.git/index.lock``), ONE batched look-alike
``plangate: 5 plan events``: ``k-01`` ``fail`` (``failed``), ``k-02`` ``abort`` (``aborted``,
``Aborted-By: alice``, no abort request), ``k-03`` ``start`` (the real start's hash, a later
start), ``k-04`` ``checkpoint``, ``k-05`` ``complete`` (``completed``); ``k-06`` is the control.
Two passes; Alice resumes ``k-01`` (``failed`` -> ``approved``, as docs/execution.md says "a
resume or abort goes on from there") and aborts ``k-02`` and ``k-03`` in the same commit;
two passes; the audit with the config and on a fresh clone.

Asserted (ids): ``h-*``: the gated action ran once on her approval, action 1 never again,
``completed``; ``k-*``: no action ran twice; ``k-04``, ``k-05``, ``k-06`` (progress that is
anyone's) and ``k-01`` after her resume end ``completed`` with every action run once; no plan
is left ``executing`` with no reason (``k-02``, ``k-03``: the fail-closed drop is documented,
the row must say where the plan stands); ``k-02-remedy``, ``k-03-remedy``: Alice's abort
(in the resume commit) ends them ``aborted``, nothing run again; ``audit-*``: no plan has
two valid runs, each look-alike commit is flagged.

Seen. HELD: ``k-03-remedy``, ``h-01``, ``h-02``, ``h-03`` (the live controller ignores the
look-alikes at the gate: the gated action ran once on her approval, action 1 never again,
``completed``),
``k-04-checkpoint``, ``k-05-complete`` (progress that is anyone's: the run went on from its
own start and journal, every action once, ``completed``), ``k-06-control``, ``audit-once``,
``cfg-*`` (the config audit flags every look-alike), ``clone-k`` (the fresh clone flags the
batched look-alike at k-01, k-02, k-03, k-05). BROKE (strict xfails):

- ``k-01-resume``, ``k-02-abort``, ``k-03-start``: after the crash mid-burst, the ONE batched
  look-alike's ``fail``, ``abort`` and later ``start`` groups each drop the started run (the
  take-over check: "an end another host can make"), but the history index reads the same
  groups as a stranger's ignored edit (``E_ILLEGAL_TRANSITION``/``E_APPROVER_NOT_ALLOWED ...
  ignored``, or not at all for the start): ``status`` says ``executing``, ``running: false``,
  ``waiting: null``, no reason, for good; nothing more runs. docs/execution.md says "the plan
  stays as the branch shows it, and a resume or abort goes on from there": Alice's resume of
  k-01 (``failed`` -> ``approved``, as the file shows) is refused as an illegal transition
  "from executing" and ignored, so the honest run never ends. The agent, no aborter, so
  stops any run after a crash for good. ``k-02-remedy``: Alice cannot abort k-02 either:
  the file already says ``aborted`` (the look-alike's), her abort changes nothing, the row
  stays ``executing``. (``k-03-remedy`` HELD: her abort of k-03 ends it ``aborted``.)
- ``clone-h-01``, ``clone-h-02``, ``clone-h-03``: the fresh-clone audit takes a look-alike
  ``fail`` (batched on main; one-plan on her merged branch) or ``complete`` of a plan PAUSED
  AT ITS GATE (no gate approval since) as the controller's end: no finding; for ``complete``
  it flags Alice's gate approval ``illegal`` and the controller's own gate start
  ``start-without-approval``/``started-twice`` instead.

Should: one rule for the take-over check and the history index: a look-alike end either is
anyone's (the run goes on from its own start and journal, as for ``complete``) or is read as
the end the branch shows (``failed``/``aborted`` with a reason, and a resume goes on); the
audit by git alone disowns an outcome of a plan paused at its gate with no gate approval
since, as round 66 does for a plan not started.

Fixed (2026-11-30): one rule for a run event under the controller's name that is not its
own (``controller.git.lifecycle``: ``unmatched_event``, ``takes_over``, ``moves_run_on``),
read by the take-over check, the history index and the audit alike. By git alone an outcome
or checkpoint has a cause only while the run is ``executing``: a plan paused at its gate is
ended only by a resume start after its gate approval or an abort answering a request, so a
look-alike ``fail``/``complete`` there is ``controller-unexplained`` (on the line and on a
merged branch) and her gate approval stays valid (``clone-h-*``). A later ``start``, a
``fail`` or an ``abort`` of a run executing, the file showing that end of the same version,
moves the run on: the take-over check drops the run and the index reads the same entry as
the end the branch shows (k-01 ``failed``, which her resume goes on from; k-02 ``aborted``);
a run moved on by a later start stays ``executing`` with ``waiting`` saying it was taken
over and that an abort ends it (``k-*``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from advkit import ALICE, BOT, BenchError, Lab, cases
from burstkit import (
    agent_index,
    audited,
    crash_lab,
    crashed_pass,
    date_steps,
    event_group,
    gated,
    new_runs,
    own_index,
    set_committed,
    three,
)
from test_round2_execution_kit import shared

K = [f"k-{i:02d}" for i in range(1, 7)]
H = ["h-01", "h-02", "h-03"]
BROKEN: dict[str, object] = {}


def _build(root: Path) -> Lab:
    lab, marks = crash_lab(root)
    date = date_steps(lab, 1790000000)

    date()
    for v in K:
        lab.write(v, three(v))
    for v in H:
        lab.write(v, gated(v))
    lab.commit("agent plans", ("Agent", "agent@example.com"))
    lab.run()
    # Part A: look-alike ends at the gate
    date()
    for v in H:
        lab.set_status(v, "approved")
    lab.commit("approve h", ALICE)
    lab.run()
    lab.paused = {v: lab.plan(v)["plan"]["status"] for v in H}  # type: ignore[attr-defined]
    date()
    lab.git("branch", "alice/gate")
    lab.set_status("h-01", "failed")
    lab.set_status("h-03", "completed")
    lab.git("add", "-A")
    msg = "plangate: 2 plan events\n\n" + event_group(
        "h-01", "fail", "failed", "Plan-Note: action 1 failed: E_TOOL_FAILED\n"
    )
    msg += event_group("h-03", "complete", "completed") + "Controller: host/3f2a9c1b\n"
    lab.git("commit", "-q", "-m", msg, who=BOT)
    lab.forged_h = {"h-01": lab.head(), "h-03": lab.head()}  # type: ignore[attr-defined]
    lab.git("checkout", "-q", "alice/gate")
    lab.set_status("h-02", "failed")
    lab.git("add", "-A")
    lab.git(
        "commit",
        "-q",
        "-m",
        "plangate: fail plans/h-02\n\naction 1 failed: E_TOOL_FAILED\n\nPlan: plans/h-02\n"
        "Plan-Status: failed\nController: host/3f2a9c1b\n",
        who=BOT,
    )
    lab.forged_h["h-02"] = lab.head()  # type: ignore[attr-defined]
    date()
    lab.set_status("h-02", "approved")
    lab.commit("approve the h-02 gate", ALICE)
    lab.git("checkout", "-q", "main")
    lab.set_status("h-01", "approved")
    lab.set_status("h-03", "approved")
    lab.commit("approve the h-01 and h-03 gates", ALICE)
    date()
    lab.git("merge", "-q", "--no-ff", "-m", "merge alice/gate", "alice/gate", who=ALICE)
    lab.run()
    lab.rows_h = lab.status()  # type: ignore[attr-defined]
    # Part B: the crash mid-burst, then ONE batched look-alike of five ends
    date()
    for v in K:
        lab.set_status(v, "approved")
    approve_k = lab.commit("approve k", ALICE)
    lab.at_kill = crashed_pass(lab, marks)  # type: ignore[attr-defined]
    lab.head_at_kill = {v: lab.plan(v)["plan"]["status"] for v in K}  # type: ignore[attr-defined]
    lab.after_kill = [r[3] for r in lab.log_rows(rev=f"{approve_k}..HEAD")]  # type: ignore[attr-defined]
    hashes = {}
    for r in lab.log_rows(rev=f"{approve_k}..HEAD"):
        if r[2] != BOT[1]:
            continue
        cur = ""
        for line in r[4].splitlines():
            if line.startswith("Plan: "):
                cur = line[len("Plan: plans/") :]
            elif line.startswith("Plan-Hash: ") and cur:
                hashes.setdefault(cur, line[len("Plan-Hash: ") :])
    if len(hashes) < 5:
        raise BenchError(f"the burst was not started: {lab.after_kill}, {lab.at_kill}")  # type: ignore[attr-defined]
    agent_index(lab, root)
    date()
    set_committed(lab, "k-01", "failed")
    set_committed(lab, "k-02", "aborted")
    set_committed(lab, "k-05", "completed")
    msg = "plangate: 5 plan events\n\n"
    msg += event_group("k-01", "fail", "failed", "Plan-Note: action 2 failed: E_ACTION_IN_DOUBT\n")
    msg += event_group("k-02", "abort", "aborted", "Aborted-By: alice@example.com\n")
    msg += event_group(
        "k-03",
        "start",
        "executing",
        f"Plan-Hash: {hashes.get('k-03', '')}\nApproved-By: alice@example.com\n",
    )
    msg += event_group("k-04", "checkpoint", "executing")
    msg += event_group("k-05", "complete", "completed")
    lab.git("commit", "-q", "-m", msg + "Controller: host/3f2a9c1b\n", who=BOT)
    lab.forged_k = lab.head()  # type: ignore[attr-defined]
    own_index(lab)
    date()
    lab.run()
    date()
    lab.run()
    lab.rows_k = lab.status()  # type: ignore[attr-defined]
    lab.dirty = lab.git("status", "--porcelain")  # type: ignore[attr-defined]
    date()
    set_committed(lab, "k-01", "approved")
    set_committed(lab, "k-02", "aborted")
    set_committed(lab, "k-03", "aborted")
    lab.git("commit", "-q", "-m", "resume k-01, abort k-02 and k-03", who=ALICE)
    lab.git("reset", "-q", "--hard")
    lab.run()
    date()
    lab.run()
    lab.rows_end = lab.status()  # type: ignore[attr-defined]
    return audited(lab, root)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r67-forgedends", _build)


def test_the_lab(lab: Lab) -> None:
    assert set(lab.paused.values()) == {"awaiting_approval"}, lab.paused  # type: ignore[attr-defined]
    assert "k-01-1" in lab.at_kill or any(t.startswith("k-") for t in lab.at_kill), lab.at_kill  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(H, H, BROKEN))  # type: ignore[arg-type]
def test_a_lookalike_end_at_the_gate(lab: Lab, vid: str) -> None:
    ones, twos = lab.calls(f"{vid}-1"), lab.calls(f"{vid}-2")
    row = lab.rows_h[f"plans/{vid}"]  # type: ignore[attr-defined]
    assert (len(ones), len(twos)) == (1, 1), (len(ones), len(twos), row)
    assert row["status"] == "completed", row


KIDS = [
    "k-01-resume",
    "k-02-abort",
    "k-03-start",
    "k-04-checkpoint",
    "k-05-complete",
    "k-06-control",
]
KIDS += ["k-02-remedy", "k-03-remedy"]


@pytest.mark.parametrize("vid", cases(KIDS, KIDS, BROKEN))  # type: ignore[arg-type]
def test_a_lookalike_end_after_the_crash(lab: Lab, vid: str) -> None:
    slug = vid[:4]
    ones, threes = lab.calls(f"{slug}-1"), lab.calls(f"{slug}-3")
    row = lab.rows_end[f"plans/{slug}"]  # type: ignore[attr-defined]
    assert len(ones) <= 1 and len(threes) <= 1, (len(ones), len(threes), row)
    if vid.endswith("-remedy"):  # Alice (an allowed aborter) aborts the stuck plan
        assert row["status"] == "aborted", row
        return
    if slug in ("k-02", "k-03"):
        row = lab.rows_k[f"plans/{slug}"]  # type: ignore[attr-defined]
    if slug in ("k-01", "k-04", "k-05", "k-06"):
        assert (len(ones), len(threes)) == (1, 1), (len(ones), len(threes), row)
        assert row["status"] == "completed", row
    else:
        said = json.dumps({k: row.get(k) for k in ("waiting", "reason", "notes", "last_event")})
        assert row["status"] != "executing" or "null" not in said.split(":")[1], row


AUD = ["audit-once", "cfg-h-01", "cfg-h-02", "cfg-h-03", "cfg-k", "clone-h-01", "clone-h-02"]
AUD += ["clone-h-03", "clone-k"]


@pytest.mark.parametrize("vid", cases(AUD, AUD, BROKEN))  # type: ignore[arg-type]
def test_the_audit(lab: Lab, vid: str) -> None:
    if vid == "audit-once":
        for report in (lab.creport, lab.report):  # type: ignore[attr-defined]
            twice = {s: len(new_runs(report, s)) for s in [*K, *H] if len(new_runs(report, s)) > 1}
            assert twice == {}, twice
        return
    which, slug = vid.split("-", 1)
    report = lab.creport if which == "cfg" else lab.report  # type: ignore[attr-defined]
    found = report.get("findings", [])
    if slug == "k":
        want = {(f"plans/{s}", lab.forged_k) for s in ("k-01", "k-02", "k-03", "k-05")}  # type: ignore[attr-defined]
        missed = sorted(want - {(f.get("plan"), f.get("commit")) for f in found})
        assert missed == [], missed
        return
    mine = [f for f in found if f.get("plan") == f"plans/{slug}"]
    forged = lab.forged_h[slug]  # type: ignore[attr-defined]
    assert any(f.get("commit") == forged for f in mine), [
        (f.get("kind"), f.get("commit", "")[:8]) for f in mine
    ]
    blamed = [
        (f.get("kind"), f.get("commit", "")[:8])
        for f in mine
        if f.get("commit") != forged
        and f.get("kind") in ("illegal", "started-twice", "start-without-approval")
    ]
    assert blamed == [], blamed
    runs = [e for e in report.get("executions", []) if e.get("plan") == f"plans/{slug}"]
    assert not any(e.get("outcome") == "fail" for e in runs), runs
