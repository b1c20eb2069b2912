"""Round 69, bursts: starts forged under the controller's name around a burst (round 68's
``foreign_run``: a latest start whose seal this key does not verify is another controller's;
an unsealed start is anyone's; a replay of its own sealed commit is no such run).

Lab (one, local mode, fake commit dates, ``run --once`` passes). The agent adds plain plans
``p-01``..``p-06`` and gated plans ``g-01``..``g-05`` (action 1, then action 2 behind
``requires_approval``) in one commit; a pass freezes them (one batched freeze). Alice approves
the five gated plans in one commit; a pass runs action 1 of each (one batched start ``S``,
sealed) and pauses them at their gates. Then the agent commits, under the controller's
identity (``plangate@localhost``), in this order:

- ``fake``: a start of ``p-01`` (file ``executing``, the freeze's ``Plan-Hash``) with a
  ``Controller-Seal:`` of 64 random hex digits;
- ``copied``: one batched start of ``p-02`` and ``p-03`` carrying ``S``'s real seal line;
- ``unsealed``: a start of ``p-04`` with no seal;
- ``resume``: a resume start of ``g-03`` (file ``executing``) with a random seal;
- ``unsealedres``: a resume start of ``g-05`` (file ``executing``) with no seal;
- ``replay``: ``S``'s very message (seal included) onto the tip, tree unchanged.

Then Alice's review branch approves ``p-01``..``p-05`` and the gates of ``g-01``..``g-05``, merged
``--no-ff`` (one merge approving ten); one pass. Then the agent writes a new version of
``p-01``, ``p-02`` and ``p-03``; a pass freezes them; Alice approves the three; a pass.

Asserted: ``<v>-once``: nothing the forgery touched ran twice (per tag); ``fake-stall``,
``copied-stall``: the forged version runs nothing and ``status`` says it waits on "another
controller" (docs/approvals.md: the documented safe side); ``fake-newversion``,
``copied-newversion``: the new version Alice approved runs once (docs: "A changed version of the
plan is decided as usual"); ``unsealed-runs``: her approval runs ``p-04`` once;
``replay-gates``: her gate approvals of ``g-01``/``g-02`` run action 2 once each, action 1 never
again; ``resume-gate``: ``g-03``'s action 2 does not run twice and its row names "another
controller"; ``control``: ``p-05`` and ``g-04``'s gate run once, ``p-06`` (unapproved) never;
``rows``: every plan that ran is ``completed`` at the end; ``audit``: the fresh-clone audit and
``audit --config`` list exactly the runs that happened as valid (a gate's resume counts one more
start), no forged one.

Seen. HELD: every ``*-once``; ``fake-stall`` and ``copied-stall`` (a random seal, or ``S``'s
real seal line on a forged batch of two: the version waits, "another controller or a lost key",
nothing runs: the documented safe side); ``fake-newversion``, ``copied-newversion`` (the new
version Alice approves runs once); ``unsealed-runs``; ``replay-gates`` (``S`` replayed onto the
tip is no one's start: both gates run action 2 once, action 1 never again); ``resume-gate`` (a
forged resume of ``g-03`` with a random seal: her gate approval runs nothing, the row names
another controller); ``unsealedres-gate`` (an unsealed forged resume of ``g-05``: her gate
approval runs action 2 once, the row ``completed``); ``control``; ``rows``; ``audit-config``.
BROKE (strict xfail):

- ``audit-clone``: after the agent's UNSEALED start of ``p-04`` under the controller's name and
  Alice's approval in the merged burst, the controller runs ``p-04`` once (as docs/approvals.md
  says: an unsealed start is anyone's, an honest approval after it runs) and ``audit --config``
  lists that run valid; but ``plangate audit`` in a fresh clone reads the forged commit as the
  plan's start (``start-without-approval``), her approval as ``illegal`` ("from executing"), and
  the controller's real start as ``start-without-approval`` AND ``started-twice`` ("a version
  runs at most once"): 0 valid runs of a plan that ran once on a valid approval. The same for
  the unsealed forged resume of ``g-05``: the controller runs its gate once and ``audit
  --config`` lists 2 valid starts, the fresh clone 1. Should: by git alone, too, a start with no
  seal decides nothing; the controller's run is valid and listed once.

Fixed (2026-11-30): by git alone, a commit under the controller's name that records a run event
(a start, an outcome, a checkpoint) and carries no ``Controller-Seal:`` of 64 hex digits is no
controller's (:func:`controller.git.lifecycle.unsealed_run_events`, read by
``Lifecycle._is_controller``, ``disowned`` and ``side_disowned_why``): the history index applies
it as anyone's commit (an ``illegal`` status, ignored), the audit flags it
``controller-unexplained`` ("no Controller-Seal:"), her approval stands and the controller's real
start is the run, valid and listed once, as ``audit --config`` reads it by the controller's
record. A seal of the right shape (``fake``, ``copied``, ``resume``) is verifiable by nobody in
a fresh clone: it keeps rounds 67-68's reading there (a start, judged by its approval)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from advkit import ALICE, Lab, cases, clone_audit, plan_text, valid_runs
from burstkit import (
    bot_rows,
    counts,
    date_steps,
    forge,
    gates_held,
    review_merge,
    save_out,
    set_committed,
    status_rows,
)
from test_round2_execution_kit import shared

P = [f"p-{i:02d}" for i in range(1, 7)]
G = [f"g-{i:02d}" for i in range(1, 6)]
BROKEN: dict[str, object] = {}  # fixed (2026-11-30): see the docstring


def _tags() -> list[str]:
    return [*P] + [f"{g}-{n}" for g in G for n in (1, 2)]


def _hash_of(lab: Lab, slug: str) -> str:
    for r in bot_rows(lab):
        body = r[4]
        at = body.find(f"Plan: plans/{slug}\n")
        if at < 0:
            continue
        for line in body[at:].split("\n")[1:]:
            if line.startswith("Plan: "):
                break
            if line.startswith("Plan-Hash: "):
                return line.split(": ", 1)[1]
    raise AssertionError(f"no Plan-Hash for {slug}")


def _group(lab: Lab, slug: str, approval: str) -> str:
    return (
        f"Plan: plans/{slug}\nPlan-Event: start\nPlan-Hash: {_hash_of(lab, slug)}\n"
        f"Plan-Status: executing\nApproved-By: alice@example.com\nApproval-Commit: {approval}\n"
    )


def _build(root: Path) -> Lab:
    lab = Lab(root / "lab")
    date = date_steps(lab, 1790000000)
    approval = gates_held(lab, date, P, G, "approve the gated four")
    starts = [
        r
        for r in bot_rows(lab)
        if "Plan-Event: start" in r[4] or r[3].startswith("plangate: start")
    ]
    s_row = starts[-1]  # the oldest start: the batched first start of g-01..g-04
    lab.s_message = s_row[4]  # type: ignore[attr-defined]
    seal = [x for x in s_row[4].split("\n") if x.startswith("Controller-Seal:")]
    assert seal, s_row[4]
    lab.first = counts(lab, _tags())  # type: ignore[attr-defined]
    date()
    # fake: p-01, a random seal
    set_committed(lab, "p-01", "executing")
    forge(
        lab,
        "plangate: start plans/p-01\n\n"
        + _group(lab, "p-01", approval)
        + f"Controller: host/3f2a9c1b\nController-Seal: {os.urandom(32).hex()}\n",
    )
    # copied: p-02 + p-03 in one batch, S's real seal line
    set_committed(lab, "p-02", "executing")
    set_committed(lab, "p-03", "executing")
    forge(
        lab,
        "plangate: start 2 plans\n\n"
        + _group(lab, "p-02", approval)
        + _group(lab, "p-03", approval)
        + "Controller: host/3f2a9c1b\n"
        + seal[0]
        + "\n",
    )
    # unsealed: p-04
    set_committed(lab, "p-04", "executing")
    forge(
        lab,
        "plangate: start plans/p-04\n\n"
        + _group(lab, "p-04", approval)
        + "Controller: host/3f2a9c1b\n",
    )
    # resume: g-03, a random seal
    set_committed(lab, "g-03", "executing")
    forge(
        lab,
        "plangate: start plans/g-03\n\n"
        + _group(lab, "g-03", approval)
        + f"Controller: host/3f2a9c1b\nController-Seal: {os.urandom(32).hex()}\n",
    )
    # unsealedres: g-05, a resume start with no seal
    set_committed(lab, "g-05", "executing")
    forge(
        lab,
        "plangate: start plans/g-05\n\n"
        + _group(lab, "g-05", approval)
        + "Controller: host/3f2a9c1b\n",
    )
    # replay: S's very message onto the tip
    forge(lab, s_row[4])
    lab.git("reset", "-q", "--hard")
    lab.forged = lab.head()  # type: ignore[attr-defined]
    date()
    review_merge(lab, [*P[:5], *G], date, "approve five plans and four gates")
    run = lab.run(check=False)
    lab.pass1 = {"rc": run.returncode, "err": run.stderr[-1200:]}  # type: ignore[attr-defined]
    lab.after1 = counts(lab, _tags())  # type: ignore[attr-defined]
    lab.rows1 = status_rows(lab)  # type: ignore[attr-defined]
    date()
    for v in P[:3]:
        lab.write(v, plan_text(v, name=f"{v} v2", params='note: "v2"\n'))
    lab.commit("new versions of p-01..p-03")
    lab.run(check=False)
    date()
    for v in P[:3]:
        lab.set_status(v, "approved")
    lab.commit("approve the new versions", ALICE)
    lab.run(check=False)
    lab.after2 = counts(lab, _tags())  # type: ignore[attr-defined]
    lab.rows2 = status_rows(lab)  # type: ignore[attr-defined]
    report, _ = clone_audit(lab, root)
    lab.valid = {s: len(valid_runs(report, s)) for s in [*P, *G]}  # type: ignore[attr-defined]
    seen = ("plans/p-04", "plans/g-05")
    lab.p04 = [f for f in report.get("findings", []) if f.get("plan") in seen]  # type: ignore[attr-defined]
    _, creport = lab.audit(config=lab.config)
    lab.cvalid = {s: len(valid_runs(creport, s)) for s in [*P, *G]}  # type: ignore[attr-defined]
    names = ["first", "pass1", "after1", "rows1", "after2", "rows2", "valid", "cvalid", "p04"]
    save_out(lab, root, names)
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r69-forgedstarts", _build)


def test_the_lab(lab: Lab) -> None:
    first = lab.first  # type: ignore[attr-defined]
    assert all(first[f"{g}-1"] == 1 and first[f"{g}-2"] == 0 for g in G), first
    assert lab.pass1["rc"] == 0, lab.pass1  # type: ignore[attr-defined]


IDS = [
    "fake-once",
    "copied-once",
    "unsealed-once",
    "resume-once",
    "unsealedres-once",
    "replay-once",
    "fake-stall",
    "copied-stall",
    "fake-newversion",
    "copied-newversion",
    "unsealed-runs",
    "replay-gates",
    "resume-gate",
    "unsealedres-gate",
    "control",
    "rows",
    "audit-clone",
    "audit-config",
]
#: valid runs (starts: a gate's resume is one more) each audit should list
EXPECTED = {
    "p-01": 1,
    "p-02": 1,
    "p-03": 1,
    "p-04": 1,
    "p-05": 1,
    "p-06": 0,
    "g-01": 2,
    "g-02": 2,
    "g-03": 1,
    "g-04": 2,
    "g-05": 2,
}
WHO = {
    "fake": ["p-01"],
    "copied": ["p-02", "p-03"],
    "unsealed": ["p-04"],
    "resume": ["g-03-1", "g-03-2"],
    "unsealedres": ["g-05-1", "g-05-2"],
    "replay": ["g-01-1", "g-01-2", "g-02-1", "g-02-2"],
}


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))  # type: ignore[arg-type]
def test_a_forged_start_in_a_burst(lab: Lab, vid: str) -> None:
    a1, a2 = lab.after1, lab.after2  # type: ignore[attr-defined]
    r1, r2 = lab.rows1, lab.rows2  # type: ignore[attr-defined]
    how, _, what = vid.partition("-")
    if what == "once":
        twice = {t: a2[t] for t in WHO[how] if a2[t] > 1}
        assert twice == {}, (a2, r2)
    elif what == "stall":
        slugs = WHO[how]
        assert all(a1[s] == 0 for s in slugs), (a1, r1)
        said = json.dumps({s: r1.get(s) for s in slugs})
        assert all("another controller" in json.dumps(r1.get(s)) for s in slugs), said
    elif what == "newversion":
        assert all(a2[s] == 1 for s in WHO[how]), ({s: a2[s] for s in WHO[how]}, r2)
    elif vid == "unsealed-runs":
        assert a1["p-04"] == 1, (a1["p-04"], r1.get("p-04"))
    elif vid == "replay-gates":
        got = {t: a1[t] for t in WHO["replay"]}
        assert got == {"g-01-1": 1, "g-01-2": 1, "g-02-1": 1, "g-02-2": 1}, (got, r1)
    elif vid == "resume-gate":
        assert a2["g-03-1"] == 1 and a2["g-03-2"] <= 1, (a2, r1.get("g-03"))
        assert "another controller" in json.dumps(r1.get("g-03")), r1.get("g-03")
    elif vid == "unsealedres-gate":
        assert (a1["g-05-1"], a1["g-05-2"]) == (1, 1), (a1, r1.get("g-05"))
        assert (r2.get("g-05") or {}).get("status") == "completed", r2.get("g-05")
    elif vid == "control":
        got = {t: a1[t] for t in ("p-05", "g-04-1", "g-04-2", "p-06")}
        assert got == {"p-05": 1, "g-04-1": 1, "g-04-2": 1, "p-06": 0}, (got, r1)
    elif vid == "rows":
        ran = [*P[:5], "g-01", "g-02", "g-04", "g-05"]
        bad = {s: r2.get(s) for s in ran if (r2.get(s) or {}).get("status") != "completed"}
        assert bad == {}, bad
    else:
        assert a2["p-04"] == 1 and a2["g-03-2"] == 0, a2  # what really ran
        valid = lab.valid if what == "clone" else lab.cvalid  # type: ignore[attr-defined]
        wrong = {s: (valid[s], n) for s, n in EXPECTED.items() if valid[s] != n}
        assert wrong == {}, (wrong, lab.p04)  # type: ignore[attr-defined]
