"""Round 72, bursts: exactly once when the daemon is SIGKILLed mid-burst and the state
directory comes back older than the branch (a backup from before the burst, or a point-in-time
snapshot taken while the burst ran), with and without the agent's one commit renaming every
plan ``PLAN.yml`` -> ``PLAN.yaml`` before the restart (round 71: a state directory adopts the
commits its key verifies; a run counted as the controller's own with no journal fails
``E_ACTION_IN_DOUBT``, resumable).

Lab (one, local mode). The agent adds ``b-01``..``b-20`` (one ``rec`` action each, not idempotent;
``b-10``'s a ``slow`` one that records its call and, the first time, waits: the action the SIGKILL
cuts, every time) and the gated ``gb-1``..``gb-4``; a pass freezes them; the state directory is
copied (``stale``). Alice's review branch approves ``b-01``..``b-16`` and the four gated plans,
merged ``--no-ff`` (one merge approving 20); ``b-17``..``b-20`` are never approved. The daemon
(``plangate run``) works the burst: it commits the 20 starts in one batch, then runs them one by
one. After five calls the state directory is copied point-in-time (the daemon's process group
SIGSTOPped for the ``cp -a``, then SIGCONTed: what a filesystem snapshot takes, docs/operations.md
"Stop the service (or snapshot the filesystem) for a consistent copy"); after ten calls the daemon
is SIGKILLed (``b-10``'s action cut). The repo is cloned once per way the operator restarts (each
clone its own config, state and ``ran.log`` seeded with what ran by then):

- ``live``: the killed state directory as it was (the control: crash recovery as documented);
- ``stale``: the copy from before the burst (no journal of any of its runs);
- ``snap``: the snapshot (the journals as they stood after five calls: ``b-10``'s only ``begin``);
- ``renlive``/``rensnap``: as ``live``/``snap``, after the agent's ONE commit renaming all 24
  plans (completed, started, approved not started, pending) to ``PLAN.yaml``.

In each: one ``run --once`` (the restart), Alice approves the gate of every gated plan paused
at its gate (on whichever name its file has), one more pass. Asserted per clone
(``<clone>-<v>``):

- ``start``: both passes exit 0 (a restored state adopts its own sealed commits: no refusal);
- ``once``: no tag ran twice (every action at most once over crash, restore and restart);
- ``all``: every approved plain plan ran once, or is ``failed`` ``E_ACTION_IN_DOUBT`` (its
  journal lost or its action cut by the kill; the documented safe side), never neither;
- ``doubt``: ``live``/``renlive`` put at most one plan in doubt (the action cut by the kill:
  the journal kept every other run), and no plan in doubt ran twice;
- ``never``: ``b-17``..``b-20`` never ran, their rows ``pending_approval``;
- ``gates``: each gated plan's action 1 ran once (or the run is in doubt) and, unless in
  doubt, action 2 once after her gate approval;
- ``rows``: no row stays ``executing`` or reads ``pending_approval`` for a plan that ran;
- ``audit``: ``plangate audit --json`` on a fresh clone of that clone lists exactly one valid
  run of each plain plan that ran or is in doubt (a gated one: its start and, once it passed
  its gate, its resume) and none of the unapproved.

Seen (round 72): BROKEN (4 ids, 1 class; FIXED 2026-11-30 by r72snap, below). ``snap-once``,
``snap-all``, ``rensnap-once``, ``rensnap-all``: the state directory restored from the
point-in-time snapshot (taken after
five calls, the 20 starts committed, ``b-10``'s journal holding only its ``begin`` record)
restarts without a refusal, adopts the sealed ``complete`` commits of ``b-06``..``b-09`` made
after the snapshot (completed, not rerun: held), and runs ``b-10``'s non-idempotent
action A SECOND TIME: its start is sealed, its journal (from the snapshot) says no action
began, so the run "continues" from action 1; the killed daemon had already called it.
``b-10``'s row reads ``completed`` and the fresh-clone audit lists one valid run: nothing in git
shows the double call. The ``stale`` copy (no journals) and the ``live`` state hold (``b-10``
``E_ACTION_IN_DOUBT``). Should (docs/operations.md, Back up: a snapshot of the filesystem is a
consistent copy; Restore: "no action a commit of it shows started runs again"; SPEC §15, at most
once): a run whose start the restored record did not make before its copy (a start commit
adopted by ``own_commits_restored``, or any start older than the journal can vouch for) goes
the lost-journal way, ``E_ACTION_IN_DOUBT`` until a person approves a resume; a journal older
than the branch is never taken as the run's last word. The renames before the restart change
nothing (``renlive`` held as ``live``; ``rensnap`` broke as ``snap``).
FIXED (2026-11-30, r72snap): the 4 ids pass. Once ``_adopt_sealed`` finds commits the
state's key sealed after its record ends, the controller notes durably that its state is older
than the branch (``<state_dir>/older-than-branch``, before recording them); the first pass,
before deciding anything, sets aside the journal of every run open on the branch (its newest own
run event a start or checkpoint, no outcome committed), kept as
``<hash>.jsonl.older-than-branch-<time>`` (``Starting._distrust_older_journals``, logged
``journal_older_than_branch``): each run goes the lost-journal way (``_adopt_orphans``' rule),
``E_ACTION_IN_DOUBT`` until a person approves a resume. ``snap``/``rensnap`` now end as ``stale``:
``b-10``..``b-16`` and the four gated plans in doubt, none run again, ``b-01``..``b-09`` completed.
HELD: ``live``/``renlive`` (one plan in doubt, every other approved plan once, gates' action 2
once after her approval, unapproved never, rows and audit agree); ``stale`` (every run begun
after the copy ``E_ACTION_IN_DOUBT``, none rerun, the completed ones adopted as completed); the
agent's rename of all 24 plans in every state before the restart changed no state and reran
nothing.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from advkit import Lab, cases, clone_audit, plan_text
from burstkit import daemon, date_steps, gated, review_merge
from test_round2_execution_kit import shared
from test_round72_burst_flipseal import Clone

B = [f"b-{i:02d}" for i in range(1, 21)]
G = [f"gb-{i}" for i in range(1, 5)]
APPROVED = B[:16]
NEVER = B[16:]
TAGS = [*B, *(f"{g}-{n}" for g in G for n in (1, 2))]
CLONES = ["live", "stale", "snap", "renlive", "rensnap"]
#: Fixed (r72snap): the snapshot's journals set aside once its key's later commits show it
#: older than the branch; every run open on the branch in doubt, none run again.
BROKEN: dict[str, object] = {}


#: ``slow``: records its call as ``rec`` does, then (the first call only) waits until
#: ``<marks>/release`` exists (at most 20 s): the action the SIGKILL cuts, every time.
SLOW = """\
import json, os, pathlib, sys, time
marks = pathlib.Path(sys.argv[2])
with open(os.environ["REC_LOG"], "a", encoding="utf-8") as f:
    f.write(json.dumps({"argv": [sys.argv[1]], "stdin": ""}) + "\\n")
if not (marks / "held").exists():
    (marks / "held").write_text("1")
    for _ in range(400):
        if (marks / "release").exists():
            break
        time.sleep(0.05)
print(json.dumps({"ok": True}))
"""


def _slow_plan(tag: str) -> str:
    return (
        f'plan:\n  name: "{tag}"\n  task: "agent task {tag}"\n  status: pending_approval\n'
        "available_tools:\n  - name: slow\nactions:\n"
        f'  - id: 1\n    tool: slow\n    why: "record {tag}"\n    params: {{tag: "{tag}"}}\n'
    )


def _file(clone: Clone, slug: str) -> Path:
    d = clone.repo / "plans" / slug
    return d / "PLAN.yaml" if (d / "PLAN.yaml").exists() else d / "PLAN.yml"


def _approve_gates(clone: Clone, rows: dict) -> list[str]:
    paused = [g for g in G if rows.get(g, {}).get("status") == "awaiting_approval"]
    for g in paused:
        path = _file(clone, g)
        lines = path.read_text().split("\n")
        for i, line in enumerate(lines):
            if line.startswith("  status:") and i < 6:
                lines[i] = "  status: approved"
                break
        path.write_text("\n".join(lines))
    if paused:
        clone.git("add", "-A")
        clone.git("commit", "-q", "-m", "approve the gates", who=("Alice", "alice@example.com"))
    return paused


def _rename_all(clone: Clone) -> None:
    for slug in [*B, *G]:
        clone.git("mv", f"plans/{slug}/PLAN.yml", f"plans/{slug}/PLAN.yaml")
    clone.git("commit", "-q", "-m", "rename every plan", who=("Agent", "agent@example.com"))


def _restart(clone: Clone, name: str, out: dict, date) -> None:  # type: ignore[no-untyped-def]
    res: dict = {}
    if name.startswith("ren"):
        _rename_all(clone)
    date()
    s = clone.run()
    res["start"] = {"rc": s.returncode, "err": s.stderr[-2000:]}
    res["rows_start"] = clone.rows()
    date()
    res["gates_approved"] = _approve_gates(clone, res["rows_start"])
    date()
    a = clone.run()
    res["after"] = {"rc": [a.returncode], "err": a.stderr[-1500:]}
    res["ran"] = {t: clone.count(t) for t in TAGS}
    res["rows"] = clone.rows()
    report, _valid = clone_audit(clone, clone.root)  # type: ignore[arg-type]
    res["runs"] = {
        t: len([e for e in report.get("executions", []) if e.get("plan") == f"plans/{t}"
                and e.get("approval_valid")])
        for t in [*B, *G]
    }  # fmt: skip
    out[name] = res


def _build(root: Path) -> Lab:
    marks = root / "marks"
    marks.mkdir(parents=True)
    (root / "slow.py").write_text(SLOW)
    log = json.dumps(str(root / "lab" / "ran.log"))
    argv = json.dumps([sys.executable, str(root / "slow.py"), "{tag}", str(marks)])
    lab = Lab(root / "lab", tools=f"slow: {{kind: exec, argv: {argv}, env: {{REC_LOG: {log}}}}}\n")
    date = date_steps(lab, 1790000000)
    date()
    for v in B:
        lab.write(v, _slow_plan(v) if v == "b-10" else plan_text(v))
    for g in G:
        lab.write(g, gated(g))
    lab.commit("agent plans")
    lab.run()
    stale = root / "stale-copy"
    shutil.copytree(lab.state, stale, symlinks=True)
    date()
    review_merge(lab, [*APPROVED, *G], date, "approve the burst of 20")
    lab.log.touch()
    lab.git_date = None  # the daemon's own clock from here
    hot = root / "snapshot"
    with daemon(lab, root) as d:
        d.wait_for_calls(5, 90)
        # a point-in-time copy, as a filesystem snapshot takes one (docs/operations.md: "Stop
        # the service (or snapshot the filesystem) for a consistent copy"): the service frozen
        # for the copy, then let go on
        os.killpg(d.proc.pid, signal.SIGSTOP)
        try:
            subprocess.run(["cp", "-a", str(lab.state), str(hot)], check=True)
        finally:
            os.killpg(d.proc.pid, signal.SIGCONT)
        lab.at_snapshot = d.ran()  # type: ignore[attr-defined]
        d.wait_for_calls(10, 90)
        killed_at = d.ran()
    (marks / "release").write_text("1")  # the cut call (its own process group) ends
    lab.killed_at = killed_at  # type: ignore[attr-defined]
    git_dir = lab.repo / ".git"  # a kill mid-commit leaves its locks: the operator clears them
    for lock in [*(git_dir / "refs" / "heads").glob("*.lock"), *git_dir.glob("*.lock")]:
        lock.unlink()
    lab.git("reset", "-q", "--hard", "HEAD")
    lab.tip_killed = lab.head()  # type: ignore[attr-defined]
    date = date_steps(lab, 1790100000)
    states = {"live": lab.state, "stale": stale, "snap": hot}
    clones: dict[str, Clone] = {}
    for name in CLONES:
        state = root / name / "state"
        clones[name] = Clone(lab, root, name, state)
        src = states[name[3:] if name.startswith("ren") else name]
        shutil.copytree(src, state, symlinks=True)
        lock = state / "lock"
        if lock.exists():  # the killed daemon's lock names a dead pid
            lock.unlink()
    out: dict = {}
    for name, clone in clones.items():
        _restart(clone, name, out, date)
    lab.out = out  # type: ignore[attr-defined]
    (root / "out.json").write_text(json.dumps(out, indent=1, default=str))
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r72-killrestore", _build)


def test_the_lab_was_killed_mid_burst(lab: Lab) -> None:
    ran = lab.killed_at  # type: ignore[attr-defined]
    assert ran[-1:] == ["b-10"] and len(ran) == 10, ran  # killed in b-10's (slow) action
    assert 5 <= len(lab.at_snapshot) < len(ran), lab.at_snapshot  # type: ignore[attr-defined]


def _doubt(row: dict) -> bool:
    return row.get("status") == "failed" and "E_ACTION_IN_DOUBT" in str(row.get("reason"))


VS = ["start", "once", "all", "doubt", "never", "gates", "rows", "audit"]
IDS = [f"{c}-{v}" for c in CLONES for v in VS]


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))  # type: ignore[arg-type]
def test_exactly_once_across_the_kill(lab: Lab, vid: str) -> None:
    name, v = vid.split("-", 1)
    out = lab.out[name]  # type: ignore[attr-defined]
    ran, rows = out["ran"], out["rows"]
    said = (ran, rows, out["start"]["err"][-800:], out["after"]["err"][-600:])
    doubt = {s for s in [*B, *G] if _doubt(rows.get(s, {}))}
    if v == "start":
        assert out["start"]["rc"] == 0 and out["after"]["rc"] == [0], said
    elif v == "once":
        assert all(n <= 1 for n in ran.values()), said
    elif v == "all":
        for s in APPROVED:
            assert ran[s] == 1 or s in doubt, (s, said)
            assert rows[s]["status"] in ("completed", "failed"), (s, said)
    elif v == "doubt":
        if name in ("live", "renlive"):
            assert len(doubt) <= 1, (doubt, said)
        assert all(ran.get(s, 0) <= 1 for s in doubt), said
    elif v == "never":
        for s in NEVER:
            assert ran[s] == 0 and rows[s]["status"] == "pending_approval", (s, said)
    elif v == "gates":
        for g in G:
            assert ran[f"{g}-1"] == 1 or g in doubt, (g, said)
            assert ran[f"{g}-2"] == (0 if g in doubt else 1), (g, said)
    elif v == "rows":
        for s in [*B, *G]:
            assert rows[s]["status"] != "executing", (s, said)
            if ran.get(s) or ran.get(f"{s}-1"):
                assert rows[s]["status"] != "pending_approval", (s, said)
    elif v == "audit":
        runs = out["runs"]
        for s in B:
            want = 1 if (ran[s] or s in doubt) else 0
            assert runs[s] == want, (s, runs, said)
        for g in G:
            want = 1 if g in doubt or not ran[f"{g}-2"] else 2
            assert runs[g] == want, (g, runs, said)
