"""Round 67, bursts: a second controller with ANOTHER ``commit.key`` on the same repository
and identity (an old host back by mistake, docs/execution.md: "this only keeps an old host,
back by mistake, from running anything twice or committing a second outcome"), and a
sealed controller commit replayed onto a side branch that is merged.

Lab (one, local mode, fake commit dates, ``run --once`` passes). Controller A (state ``A``)
and controller B (state ``B``: its own ``commit.key``), same repository, same identity. The
agent adds 6 plain plans ``r-01``..``r-06`` and 4 gated plans ``s-01``..``s-04`` in one commit;
A freezes them; B makes its first pass (its record starts there). Alice approves ``r-*`` and
``s-*`` on a review branch merged ``--no-ff`` (one merge approving ten plans); A runs the
burst (``r-*`` complete, ``s-*`` pause at their gate: A's sealed commits). B, back by
mistake, makes a pass (``b-after-burst``). The agent replays A's sealed start commit of
``r-01`` (same tree, first parent and message, seal kept, committer ``plangate``, another date)
on a side branch and merges it (``replay``); A passes. Alice approves the four gates in one
commit; B passes first, then A, then B again. ``status`` from both configs; the audit with
A's config and on a fresh clone.

Asserted (ids): ``b-once-plain``, ``b-once-gated``: B never runs an action A's commits show
started (r-* once, s-* action 1 once, action 2 at most once); ``gate-once``: each gated
action 2 ran exactly once (the gate approval ran somewhere, never twice); ``a-rows``: A's
``status`` says ``completed`` for all ten; ``b-rows``: B's ``status`` does not show A's
completed plans as waiting for an approval; ``replay-once``: the replayed start runs
nothing; ``replay-audit``: neither audit lists a second valid run of ``r-01``, and the config
audit flags the replayed commit; ``audit-once``: no plan has two valid new runs.

Seen. HELD: ``b-once-plain``, ``b-once-gated`` (B adopts A's freeze on its first pass, trust
on first use, then reads A's burst as a stranger's, yet runs nothing again: Alice's gate
approvals are ``E_ALREADY_EXECUTED`` to B), ``replay-once`` (the replayed sealed start on a
merged branch runs nothing), ``replay-audit-cfg`` (flagged), ``replay-audit-clone``,
``audit-once``. BROKE (strict xfails):

- ``gate-once``: B, refusing Alice's gate approvals ``E_ALREADY_EXECUTED``, COMMITS a
  ``plangate: refuse plans/s-0N`` per plan that sets ``plan.status: pending_approval`` over A's
  paused run; A reads each as a stranger's status change made before it acted on her gate
  approval: "approval (gate) lapsed", so the four gated actions never run, for good.
- ``a-rows``: A's ``status`` meanwhile says ``awaiting_approval`` with her approval in the file
  and only "E_ILLEGAL_TRANSITION: plangate@localhost set status pending_approval ... ignored".
- ``b-rows``: B's ``status`` shows A's completed plans ``pending_approval``.

Should: a controller that cannot verify another host's run (another key) commits nothing
over a plan that host's commits show started (as round 51's take-over check adopts no orphan
whose newest run event is not its own); a refusal of an approval it does not act on changes
no status; and the host whose run it is does not take a foreign status change that its
index itself calls "ignored" as a lapse of her approval.

Fixed (2026-11-30): ``gate-once``, ``a-rows``, ``b-rows`` (r67key). A plan whose current
version's last start is a commit under the controller's identity that this controller did not
make (not in its record, no seal its key verifies) and whose version it never ran is decided
by nobody here: B commits no refusal over A's runs (``plan_waiting``), A runs each gate
approval once, and B's ``status`` shows the status A's commits wrote with a ``waiting`` reason
naming "another controller or a lost key".
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from advkit import ALICE, BOT, Lab, cases, plan_text, valid_runs
from burstkit import audited, date_steps, gated, new_runs, second_config
from test_round2_execution_kit import shared

R = [f"r-{i:02d}" for i in range(1, 7)]
S = [f"s-{i:02d}" for i in range(1, 5)]
BROKEN: dict[str, object] = {}


def _counts(lab: Lab) -> dict[str, int]:
    tags = [*R] + [f"{s}-{n}" for s in S for n in (1, 2)]
    return {t: len(lab.calls(t)) for t in tags}


def _rows(lab: Lab, config: Path) -> dict[str, str]:
    out = lab.cli("status", "--json", "--config", str(config)).stdout
    rows = {r["plan"]: r for r in json.loads(out)}
    return {s: rows.get(f"plans/{s}", {}).get("status", "?") for s in [*R, *S]}


def _build(root: Path) -> Lab:
    lab = Lab(root)
    cfg_b = second_config(lab, root)
    date = date_steps(lab, 1790000000)

    def run_b() -> None:
        # round 70: B's new state directory refuses A's sealed history unless told; the lab
        # has its operator say --take-over on B's first pass (the mistake), to keep testing
        # what B does with A's later runs
        told = [] if lab.b_runs else ["--take-over"]
        r = lab.cli("run", "--once", *told, "--config", str(cfg_b), timeout=120)
        lab.b_runs.append((r.returncode, r.stderr[-600:]))  # type: ignore[attr-defined]

    lab.b_runs = []  # type: ignore[attr-defined]
    date()
    for v in R:
        lab.write(v, plan_text(v))
    for v in S:
        lab.write(v, gated(v))
    lab.commit("agent plans", ("Agent", "agent@example.com"))
    lab.run()
    date()
    run_b()
    date()
    base = lab.head()
    lab.git("checkout", "-q", "-b", "alice/review")
    for v in [*R, *S]:
        lab.set_status(v, "approved")
    lab.commit("approve ten", ALICE)
    lab.git("checkout", "-q", "main")
    date()
    lab.git("merge", "-q", "--no-ff", "-m", "merge alice/review", "alice/review", who=ALICE)
    lab.run()
    lab.burst = _counts(lab)  # type: ignore[attr-defined]
    date()
    run_b()
    lab.after_b = _counts(lab)  # type: ignore[attr-defined]
    lab.b_rows_burst = _rows(lab, cfg_b)  # type: ignore[attr-defined]
    # the replay of A's sealed start of r-01 onto a side branch, merged
    start = next(
        r
        for r in lab.log_rows(rev=f"{base}..HEAD")
        if r[2] == BOT[1] and r[3].startswith("plangate: start") and "plans/r-01" in r[4]
    )
    parent = lab.git("rev-parse", f"{start[0]}^").strip()
    tree = lab.git("rev-parse", f"{start[0]}^{{tree}}").strip()
    date()
    replay = lab.git("commit-tree", tree, "-p", parent, input=start[4], who=BOT).strip()
    lab.replay = replay  # type: ignore[attr-defined]
    lab.git("branch", "agent/replay", replay)
    lab.git(
        "merge",
        "-q",
        "--no-ff",
        "-s",
        "ours",
        "-m",
        "merge agent/replay",
        "agent/replay",
        who=("Agent", "agent@example.com"),
    )
    lab.run()
    lab.after_replay = _counts(lab)  # type: ignore[attr-defined]
    date()
    for v in S:
        lab.set_status(v, "approved")
    lab.commit("approve the four gates", ALICE)
    run_b()
    date()
    lab.run()
    date()
    run_b()
    lab.end = _counts(lab)  # type: ignore[attr-defined]
    lab.a_rows = _rows(lab, lab.config)  # type: ignore[attr-defined]
    lab.b_rows = _rows(lab, cfg_b)  # type: ignore[attr-defined]
    return audited(lab, root)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r67-twokeys", _build)


def test_the_lab(lab: Lab) -> None:
    assert all(n == 1 for t, n in lab.burst.items() if not t.endswith("-2")), lab.burst  # type: ignore[attr-defined]
    assert all(code == 0 for code, _ in lab.b_runs), lab.b_runs  # type: ignore[attr-defined]


IDS = ["b-once-plain", "b-once-gated", "gate-once", "a-rows", "b-rows", "replay-once"]


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))  # type: ignore[arg-type]
def test_a_second_controller_with_another_key(lab: Lab, vid: str) -> None:
    if vid == "b-once-plain":
        wrong = {t: n for t, n in lab.end.items() if t in R and n != 1}  # type: ignore[attr-defined]
        assert wrong == {}, (wrong, lab.after_b)  # type: ignore[attr-defined]
    elif vid == "b-once-gated":
        wrong = {t: n for t, n in lab.end.items() if t.endswith("-1") and n != 1}  # type: ignore[attr-defined]
        assert wrong == {}, (wrong, lab.after_b)  # type: ignore[attr-defined]
    elif vid == "gate-once":
        wrong = {t: n for t, n in lab.end.items() if t.endswith("-2") and n != 1}  # type: ignore[attr-defined]
        assert wrong == {}, (wrong, lab.a_rows)  # type: ignore[attr-defined]
    elif vid == "a-rows":
        wrong = {s: st for s, st in lab.a_rows.items() if st != "completed"}  # type: ignore[attr-defined]
        assert wrong == {}, wrong
    elif vid == "b-rows":
        wrong = {
            s: st
            for s, st in lab.b_rows_burst.items()  # type: ignore[attr-defined]
            if s in R and st in ("pending_approval", "approved")
        }
        assert wrong == {}, wrong
    else:
        assert lab.after_replay == lab.after_b, (lab.after_replay, lab.after_b)  # type: ignore[attr-defined]


AUD = ["replay-audit-cfg", "replay-audit-clone", "audit-once"]


@pytest.mark.parametrize("vid", cases(AUD, AUD, BROKEN))  # type: ignore[arg-type]
def test_the_audit(lab: Lab, vid: str) -> None:
    if vid == "audit-once":
        for report in (lab.creport, lab.report):  # type: ignore[attr-defined]
            twice = {s: len(new_runs(report, s)) for s in [*R, *S] if len(new_runs(report, s)) > 1}
            assert twice == {}, twice
        return
    report = lab.creport if vid.endswith("cfg") else lab.report  # type: ignore[attr-defined]
    assert len(new_runs(report, "r-01")) == 1, valid_runs(report, "r-01")
    if vid.endswith("cfg"):
        flagged = [f for f in report.get("findings", []) if f.get("commit") == lab.replay]  # type: ignore[attr-defined]
        assert flagged, [
            (f.get("kind"), f.get("plan"), f.get("commit", "")[:8])
            for f in report.get("findings", [])
        ][:20]
