"""Round 67, bursts: the controller seal (round 66's fix) against forgeries that carry or
copy a seal, and three restores of the state directory after two bursts.

Lab (one, local mode, fake commit dates, ``run --once`` passes). The agent adds 6 plain plans
``p-01``..``p-06``, 4 plain plans ``q-01``..``q-04`` and 8 gated plans ``g-01``..``g-08`` (action
1, then action 2 behind ``requires_approval``) in one commit; a pass freezes them (backup
``bk0``: the state directory after the freeze). Alice approves the gated eight in one
commit; a pass runs their action 1 and pauses each at its gate (backup ``bk``, and ``bk``
without ``commit.key``). Burst 1: Alice's review branch approves ``p-*`` and the gates of
``g-01``..``g-04``, merged ``--no-ff``; one pass (batched sealed start and outcome commits).
Then the agent commits, under the controller's name (author and committer ``plangate``):

- ``F1`` (seal copied into its own commit): a batched ``plangate: 2 plan events`` setting
  ``g-05`` ``failed`` (``Plan-Event: fail``) and ``g-06`` ``completed``, ending with the
  ``Controller-Seal:`` line copied from burst 1's start commit;
- ``F2`` (a sealed message over another tree): burst 1's outcome commit's whole message,
  seal included, over a tree setting ``g-07`` ``completed``;
- ``F3`` (replayed onto another parent): burst 1's start commit's tree and message, seal
  included, with the tip as parent (the burst's plans back at ``executing``).

Burst 2: Alice approves ``q-*`` and the gates of ``g-05``..``g-08`` in one commit on main
(from the files as they are); one pass; the audit with the config. Then three restores,
one after another: ``key`` (``bk``, with its key; two passes), after which Alice approves
again ``p-01``, ``q-01``, ``g-01``, ``g-05``, ``g-06``, ``g-07`` (one commit, two passes);
``older`` (``bk0``, with its key; one pass); ``nokey`` (``bk`` without ``commit.key``; one
pass). Finally the audit with the config and on a fresh clone.

Asserted (ids):

- ``live-*``: before any restore, the forgeries change nothing: ``g-05``..``g-08`` ran action 2
  once on Alice's gate approval, every plan of both bursts ran each action once, ``status``
  says ``completed`` for every plan (``live-rows``, also after ``F3`` put ``executing`` back in
  the files).
- ``key-*``, ``older-*``, ``nokey-*``: after each restore, no action runs a second time
  (``*-once``) and ``status`` says ``completed`` for every plan of both bursts (``*-rows``:
  the sealed commits after the forgeries adopted too).
- ``forged-not-adopted``: ``F1``, ``F2``, ``F3`` are not in ``<state_dir>/commits`` after the
  ``key`` restore.
- ``audit``: no plan has two valid runs; the three forgeries are flagged.

Seen. HELD: ``live-*`` (the live controller ignores F1..F3: every plan ran each action once,
``status`` says ``completed``, also while F3 put ``executing`` back in the files), ``key-*`` and
``older-*`` (the sealed commits of both bursts adopted across the three forgeries; nothing
ran again; every row ``completed``), ``forged-not-adopted`` (none of F1..F3 in ``commits``),
``audit-once``, ``audit-flags-cfg`` (the config audit flags F1, F2, F3).
BROKE (strict xfails):

- ``nokey-once``: restored from the backup WITHOUT ``commit.key`` (docs/operations.md names
  the key among the files to back up, and says a copy without it "takes those commits for a
  stranger's"), one pass after the restore runs action 2 of g-01, g-05, g-06 and g-07 a
  SECOND time on Alice's gate approvals already in the history (her repeated approval of
  the completed plans): the round-66 regate break comes back whenever the key is missing.
  The controller makes a new key beside a non-empty record and says nothing.
- ``nokey-rows``: the same restore's ``status`` shows p-*/q-* ``pending_approval`` and g-02..g-04,
  g-08 ``awaiting_approval`` (paused before action 2) though they completed.
- ``audit-flags-clone``: F1 (a batched look-alike ``fail`` of g-05 and ``complete`` of g-06 at
  their gates, with a copied seal line) has no finding in the fresh-clone audit, which
  reads g-05's run as ended by that ``fail``.

Should: a state directory whose record is not empty but has no ``commit.key`` refuses to
start (or holds every plan its identity committed after the record) rather than minting a
new key and reading its own commits as a stranger's; a gated action its commits show
finished never runs again. The audit by git alone disowns an outcome of a plan paused at its
gate with no gate approval since (as round 66 does for a plan not started).

Fixed (2026-11-30): ``nokey-once``, ``nokey-rows`` (r67key). A record that lists a sealed
commit and has no ``commit.key`` is an incomplete restore: ``run`` and ``status`` refuse with
``E_STORAGE`` naming ``commit.key`` and the remedy, and no key is made (the key is made with
the record, on the first start). The ids re-scoped to the refusal and the remedy: the
refused pass runs nothing and commits nothing, ``status`` names the missing file instead of
showing a row; with the key restored from the same backup, one pass adopts the sealed
commits, nothing runs a second time (``nokey-once``) and every row says ``completed``
(``nokey-rows``).

Fixed (2026-11-30): ``audit-flags-clone``: by git alone an outcome or checkpoint under the
controller's name has a cause only while the run is ``executing`` (``Lifecycle.disowned``,
``unmatched_event``): a run paused at its gate is ended only by a resume start after its
gate approval or an abort answering a request, so F1 is ``controller-unexplained`` at g-05
and g-06 and her gate approvals stay valid (``test_round67_burst_forgedends.py``).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from advkit import ALICE, BOT, Lab, cases, plan_text, valid_runs
from burstkit import audited, date_steps, gated, new_runs
from test_round2_execution_kit import shared

P = [f"p-{i:02d}" for i in range(1, 7)]
Q = [f"q-{i:02d}" for i in range(1, 5)]
G = [f"g-{i:02d}" for i in range(1, 9)]
G1, G2 = G[:4], G[4:]
REAPPROVE = ["p-01", "q-01", "g-01", "g-05", "g-06", "g-07"]
BROKEN: dict[str, object] = {}


def _tags() -> list[str]:
    return [*P, *Q] + [f"{g}-{n}" for g in G for n in (1, 2)]


def _counts(lab: Lab) -> dict[str, int]:
    return {t: len(lab.calls(t)) for t in _tags()}


def _rows(lab: Lab) -> dict[str, str]:
    out = lab.cli("status", "--json", "--config", str(lab.config)).stdout
    rows = {r["plan"]: r for r in json.loads(out)}
    return {s: rows.get(f"plans/{s}", {}).get("status", "?") for s in [*P, *Q, *G]}


def _restore(lab: Lab, backup: Path) -> None:
    shutil.rmtree(lab.state)
    shutil.copytree(backup, lab.state, symlinks=True)


def _build(root: Path) -> Lab:
    lab = Lab(root)
    date = date_steps(lab, 1790000000)

    date()
    for v in [*P, *Q]:
        lab.write(v, plan_text(v))
    for v in G:
        lab.write(v, gated(v))
    lab.commit("agent plans", ("Agent", "agent@example.com"))
    lab.run()
    shutil.copytree(lab.state, root / "bk0", symlinks=True)
    date()
    for v in G:
        lab.set_status(v, "approved")
    lab.commit("approve the gated eight", ALICE)
    lab.run()
    shutil.copytree(lab.state, root / "bk", symlinks=True)
    shutil.copytree(lab.state, root / "bk-nokey", symlinks=True)
    (root / "bk-nokey" / "commit.key").unlink()
    # burst 1
    date()
    base = lab.head()
    lab.git("checkout", "-q", "-b", "alice/review")
    for v in [*P, *G1]:
        lab.set_status(v, "approved")
    lab.commit("approve burst 1", ALICE)
    lab.git("checkout", "-q", "main")
    date()
    lab.git("merge", "-q", "--no-ff", "-m", "merge alice/review", "alice/review", who=ALICE)
    lab.run()
    rows = lab.log_rows(rev=f"{base}..HEAD")
    mine = [r for r in rows if r[2] == BOT[1]]
    start = next(r for r in mine if r[3].startswith("plangate: start"))
    outcome = next(r for r in mine if not r[3].startswith("plangate: start"))
    lab.burst1 = [r[3] for r in mine]  # type: ignore[attr-defined]
    lab.burst1_shas = [r[0] for r in mine]  # type: ignore[attr-defined]
    seal = next(x for x in start[4].splitlines() if x.startswith("Controller-Seal:"))
    # F1: a seal copied into the agent's own batched look-alike
    date()
    lab.set_status("g-05", "failed")
    lab.set_status("g-06", "completed")
    lab.git("add", "-A")
    msg = (
        "plangate: 2 plan events\n\n"
        "Plan: plans/g-05\nPlan-Event: fail\nPlan-Status: failed\n"
        "Plan: plans/g-06\nPlan-Event: complete\nPlan-Status: completed\n"
        f"Controller: host/3f2a9c1b\n{seal}\n"
    )
    lab.git("commit", "-q", "-m", msg, who=BOT)
    f1 = lab.head()
    # F2: a real sealed message over another tree
    date()
    lab.set_status("g-07", "completed")
    lab.git("add", "-A")
    lab.git("commit", "-q", "--cleanup=verbatim", "-m", outcome[4].strip("\n") + "\n", who=BOT)
    f2 = lab.head()
    # F3: the start commit's tree and message onto another parent
    date()
    tree = lab.git("rev-parse", f"{start[0]}^{{tree}}").strip()
    f3 = lab.git("commit-tree", tree, "-p", f2, input=start[4].strip("\n") + "\n", who=BOT).strip()
    lab.git("reset", "-q", "--hard", f3)
    lab.forged = {"F1": f1, "F2": f2, "F3": f3}  # type: ignore[attr-defined]
    lab.seals = {  # type: ignore[attr-defined]
        k: [x for x in lab.git("log", "-1", "--format=%B", v).splitlines() if "Seal" in x]
        for k, v in lab.forged.items()  # type: ignore[attr-defined]
    }
    lab.run()
    lab.rows_f3 = _rows(lab)  # type: ignore[attr-defined]
    # burst 2
    date()
    for v in [*Q, *G2]:
        lab.set_status(v, "approved")
    lab.commit("approve burst 2", ALICE)
    lab.run()
    lab.live = _counts(lab)  # type: ignore[attr-defined]
    lab.live_rows = _rows(lab)  # type: ignore[attr-defined]
    lab.live_files = {v: lab.plan(v)["plan"]["status"] for v in [*P, *Q, *G]}  # type: ignore[attr-defined]
    lab.git_date = None
    _code, lab.live_creport = lab.audit("--config", str(lab.config))  # type: ignore[attr-defined]
    # restore 1: the backup with its key
    _restore(lab, root / "bk")
    date()
    lab.run()
    date()
    lab.run()
    lab.key_rows = _rows(lab)  # type: ignore[attr-defined]
    lab.key_commits = (
        (lab.state / "commits").read_text() if (lab.state / "commits").exists() else ""
    )  # type: ignore[attr-defined]
    date()
    for v in REAPPROVE:
        lab.set_status(v, "approved")
    lab.commit("approve again", ALICE)
    lab.run()
    date()
    lab.run()
    lab.key = _counts(lab)  # type: ignore[attr-defined]
    # restore 2: an older backup (after the freeze), with its key
    _restore(lab, root / "bk0")
    date()
    lab.run()
    lab.older_rows = _rows(lab)  # type: ignore[attr-defined]
    lab.older = _counts(lab)  # type: ignore[attr-defined]
    # restore 3: the backup without commit.key: refused (round 67), then the remedy
    _restore(lab, root / "bk-nokey")
    date()
    refused = lab.run(check=False)
    lab.nokey_refused = (refused.returncode, refused.stderr[-800:])  # type: ignore[attr-defined]
    status = lab.cli("status", "--json", "--config", str(lab.config))
    lab.nokey_status = (status.returncode, status.stdout[-800:])  # type: ignore[attr-defined]
    lab.nokey_refused_counts = _counts(lab)  # type: ignore[attr-defined]
    shutil.copy2(root / "bk" / "commit.key", lab.state / "commit.key")
    lab.run()
    lab.nokey_rows = _rows(lab)  # type: ignore[attr-defined]
    lab.nokey = _counts(lab)  # type: ignore[attr-defined]
    return audited(lab, root)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r67-sealrestore", _build)


def test_the_lab(lab: Lab) -> None:
    assert any(s.startswith("plangate: start") for s in lab.burst1), lab.burst1  # type: ignore[attr-defined]
    assert all(lab.seals.values()), lab.seals  # type: ignore[attr-defined]


LIVE = ["live-once", "live-rows", "live-f3-rows"]


@pytest.mark.parametrize("vid", cases(LIVE, LIVE, BROKEN))  # type: ignore[arg-type]
def test_the_forgeries_change_nothing_live(lab: Lab, vid: str) -> None:
    if vid == "live-once":
        wrong = {t: n for t, n in lab.live.items() if n != 1}  # type: ignore[attr-defined]
        assert wrong == {}, wrong
    elif vid == "live-rows":
        wrong = {s: st for s, st in lab.live_rows.items() if st != "completed"}  # type: ignore[attr-defined]
        assert wrong == {}, (wrong, lab.live_files)  # type: ignore[attr-defined]
    else:
        done = [*P, *G1]
        wrong = {s: lab.rows_f3[s] for s in done if lab.rows_f3[s] != "completed"}  # type: ignore[attr-defined]
        assert wrong == {}, wrong


RESTORES = ["key", "older", "nokey"]
IDS = [f"{r}-{k}" for r in RESTORES for k in ("once", "rows")]


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))  # type: ignore[arg-type]
def test_a_restore_after_two_bursts_and_three_forgeries(lab: Lab, vid: str) -> None:
    which, what = vid.split("-")
    if which == "nokey":  # refused until the key is back: nothing ran, no row said waiting
        code, err = lab.nokey_refused  # type: ignore[attr-defined]
        assert code != 0 and "E_STORAGE" in err and "commit.key" in err, (code, err)
        code, out = lab.nokey_status  # type: ignore[attr-defined]
        assert code != 0 and "commit.key" in out, (code, out)
        assert lab.nokey_refused_counts == lab.older, lab.nokey_refused_counts  # type: ignore[attr-defined]
    if what == "once":
        counts = getattr(lab, which)
        wrong = {t: n for t, n in counts.items() if n != 1}
        assert wrong == {}, wrong
    else:
        rows = getattr(lab, f"{which}_rows")
        wrong = {s: st for s, st in rows.items() if st != "completed"}
        assert wrong == {}, wrong


@pytest.mark.parametrize("vid", cases(["forged-not-adopted"], ["x"], BROKEN))  # type: ignore[arg-type]
def test_no_forgery_is_adopted(lab: Lab, vid: str) -> None:
    assert lab.burst1_shas[0] in lab.key_commits, "the record was not read"  # type: ignore[attr-defined]
    adopted = {k: v for k, v in lab.forged.items() if v in lab.key_commits}  # type: ignore[attr-defined]
    assert adopted == {}, adopted


AUD = ["audit-once", "audit-flags-cfg", "audit-flags-clone"]


@pytest.mark.parametrize("vid", cases(AUD, AUD, BROKEN))  # type: ignore[arg-type]
def test_the_audit(lab: Lab, vid: str) -> None:
    reports = {
        "audit-once": (lab.creport, lab.report),  # type: ignore[attr-defined]
        "audit-flags-cfg": (lab.live_creport,),  # type: ignore[attr-defined]
        "audit-flags-clone": (lab.report,),  # type: ignore[attr-defined]
    }[vid]
    for report in reports:
        if vid == "audit-once":
            twice = {
                s: len(new_runs(report, s)) for s in [*P, *Q, *G] if len(new_runs(report, s)) > 1
            }
            gates = {
                s: [
                    e.get("outcome")
                    for e in valid_runs(report, s)
                    if e.get("approval_kind") == "gate"
                ]
                for s in G
            }
            twice.update({s: o for s, o in gates.items() if len(o) > 1})
            assert twice == {}, twice
            continue
        flagged = {f.get("commit") for f in report.get("findings", [])}
        missed = {k: v for k, v in lab.forged.items() if v not in flagged}  # type: ignore[attr-defined]
        assert missed == {}, (
            missed,
            [(f.get("kind"), f.get("commit", "")[:8]) for f in report.get("findings", [])][:20],
        )
