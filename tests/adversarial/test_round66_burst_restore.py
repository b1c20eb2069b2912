"""Round 66, bursts: a restart on a state directory restored from a backup taken before a
burst (docs/operations.md, "Back up": "Back it up to keep crash recovery across a disk loss";
"Stop the service ... for a consistent copy of the state directory").

Lab (one, local mode, fake commit dates, ``run --once`` passes). The agent adds 10 plain
``rec`` plans ``p-01``..``p-10`` and 10 gated plans ``g-01``..``g-10`` (action 1, then action
2 behind ``requires_approval``) in one commit; a pass freezes them. Alice approves the gated
ten in one commit; a pass starts them (batched) and each pauses at its gate. The operator
copies the state directory with no controller running (the backup). Alice then approves
all twenty (the plain ones' first approval, the gated ones' gates) on a review branch she
merges ``--no-ff`` (one merge approving twenty plans); one pass runs the burst: every action
once, every plan ``completed`` (batched start and outcome commits). The disk is lost: the
state directory is replaced by the backup, and the controller restarts (two passes).
Then Alice does what ``plangate status`` tells her (``p-01``: "waiting for an approval"; ``g-01``
and ``g-02``: "paused before action 2 (rec): approve it to continue") and approves those in
one commit; two passes; the audit with the config and on a fresh clone.

Asserted (ids):

- ``plain-once`` / ``gated-once``: after the restore and its passes, before anyone acts,
  no action of the burst ran again.
- ``status-plain`` / ``status-gated``: ``plangate status --json`` shows the burst's plans as
  the controller recorded them (``completed``), not as waiting for a human.
- ``reapprove-plain``: Alice's approval of ``p-01`` after the restore runs nothing and the
  committed ``p-01`` still says ``completed`` (the controller does not set its own completed
  record back to ``pending_approval``).
- ``regate``: Alice's gate approval of ``g-01``/``g-02`` after the restore never runs action
  2 a second time.
- ``audit``: the audit (with the config; on a fresh clone) lists no plan of the burst with
  two valid runs, and a second run, if any, is flagged.

Seen. HELD: ``plain-once``, ``gated-once`` (nothing ran again by itself), and
``reapprove-plain`` ran nothing (``E_ALREADY_EXECUTED``). BROKE (strict xfails):

- ``status-plain``: the restored controller judges its own batched start and outcome commits
  (not in the backup's ``<state_dir>/commits``) as anyone's: ``status`` says ``pending_approval``,
  "waiting for an approval", last event ``E_ILLEGAL_TRANSITION: plangate@localhost set status
  completed (from ...) ...; ignored``, while the file, ``git log`` and the audit say
  ``completed``.
- ``status-gated``: the same, ``awaiting_approval``, "paused before action 2 (rec): approve it
  to continue, or abort".
- ``reapprove-plain``: the refusal (``E_ALREADY_EXECUTED``) is committed with ``plan.status:
  pending_approval`` over the completed plan's record.
- ``regate``: Alice's gate approval (as ``status`` asked) runs action 2 of ``g-01`` and
  ``g-02`` a SECOND time (the gated tool called twice for one approved pause), and the
  controller commits a second ``start`` and ``complete``.
- ``audit``: see the id's reason.

Fixed (2026-11-29): ``status-plain``, ``status-gated``, ``regate``. Every commit the
controller makes carries a ``Controller-Seal:`` trailer (HMAC-SHA256 under
``<state_dir>/commit.key`` of its tree, first parent and message); on start, the commits under
its identity newer than the newest its record holds whose seal its key verifies are its own
again (``own_commits_restored``) and every run they started is recorded as executed, before
any scan. ``status`` shows the burst ``completed``; Alice's gate approval of a completed plan
is an ignored illegal transition and runs nothing. ``reapprove-plain`` fixed with them: the
controller commits nothing now (no refusal over the completed record) and the row says
``completed``; the file keeps Alice's own illegal ``status: approved``, as any person's
illegal edit of a completed plan stays in the file (the controller never reverts a person's
edit), so the assertion reads the row and allows her own edit, never a controller's
``pending_approval`` (re-scoped by the lead, 2026-11-30).

Should: a controller whose record of its own commits is older than the branch (a restored
backup) does not take its own later commits for a stranger's: it holds (or adopts, as for a
lost record, with the trust-on-first-use note), and never runs an action its commits show
finished; ``status`` agrees with the record on the branch.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, cases, plan_text
from burstkit import audited, date_steps, gated
from test_round2_execution_kit import shared

PLAIN = [f"p-{i:02d}" for i in range(1, 11)]
GATED = [f"g-{i:02d}" for i in range(1, 11)]
_WHY = "a state directory restored from a backup taken before a burst"
BROKEN: dict[str, object] = {}


def _build(root: Path) -> Lab:
    lab = Lab(root)
    date = date_steps(lab, 1790000000)
    date()
    for v in PLAIN:
        lab.write(v, plan_text(v))
    for v in GATED:
        lab.write(v, gated(v))
    lab.commit("agent plans", AGENT)
    lab.run()
    date()
    for v in GATED:
        lab.set_status(v, "approved")
    lab.commit("approve the gated ten", ALICE)
    lab.run()
    lab.paused = {v: lab.plan(v)["plan"]["status"] for v in GATED}  # type: ignore[attr-defined]
    backup = root / "backup"
    shutil.copytree(lab.state, backup, symlinks=True)
    date()
    lab.git("checkout", "-q", "-b", "alice/review")
    for v in [*PLAIN, *GATED]:
        lab.set_status(v, "approved")
    lab.commit("approve the burst", ALICE)
    lab.git("checkout", "-q", "main")
    date()
    lab.git("merge", "-q", "--no-ff", "-m", "merge alice/review", "alice/review", who=ALICE)
    lab.run()
    lab.burst = {v: lab.plan(v)["plan"]["status"] for v in [*PLAIN, *GATED]}  # type: ignore[attr-defined]
    lab.calls_burst = {  # type: ignore[attr-defined]
        tag: len(lab.calls(tag)) for tag in [*PLAIN] + [f"{g}-{n}" for g in GATED for n in (1, 2)]
    }
    shutil.rmtree(lab.state)
    shutil.copytree(backup, lab.state, symlinks=True)
    date()
    lab.run()
    date()
    lab.run()
    lab.calls_restored = {tag: len(lab.calls(tag)) for tag in lab.calls_burst}  # type: ignore[attr-defined]
    lab.status_restored = lab.status()  # type: ignore[attr-defined]
    date()
    for v in ["p-01", "g-01", "g-02"]:
        lab.set_status(v, "approved")
    lab.commit("approve as status says", ALICE)
    lab.run()
    date()
    lab.run()
    return audited(lab, root)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r66-restore", _build)


def test_the_burst_ran_once_before_the_restore(lab: Lab) -> None:
    assert set(lab.paused.values()) == {"awaiting_approval"}, lab.paused  # type: ignore[attr-defined]
    assert set(lab.burst.values()) == {"completed"}, lab.burst  # type: ignore[attr-defined]
    assert set(lab.calls_burst.values()) == {1}, lab.calls_burst  # type: ignore[attr-defined]


IDS = ["plain-once", "gated-once", "status-plain", "status-gated", "reapprove-plain", "regate"]


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))  # type: ignore[arg-type]
def test_a_restored_state_directory(lab: Lab, vid: str) -> None:
    if vid == "plain-once":
        again = {t: n for t, n in lab.calls_restored.items() if t in PLAIN and n != 1}  # type: ignore[attr-defined]
        assert again == {}, again
    elif vid == "gated-once":
        again = {t: n for t, n in lab.calls_restored.items() if t not in PLAIN and n != 1}  # type: ignore[attr-defined]
        assert again == {}, again
    elif vid in ("status-plain", "status-gated"):
        slugs = PLAIN if vid == "status-plain" else GATED
        rows = {s: lab.status_restored.get(f"plans/{s}", {}) for s in slugs}  # type: ignore[attr-defined]
        wrong = {
            s: (r.get("status"), r.get("last_event"))
            for s, r in rows.items()
            if r.get("status") != "completed"
        }
        assert wrong == {}, wrong
    elif vid == "reapprove-plain":
        assert len(lab.calls("p-01")) == 1, lab.calls("p-01")
        # the controller never sets its completed record back: the file keeps Alice's own
        # (ignored) edit or the record, never a controller's `pending_approval`
        assert lab.plan("p-01")["plan"]["status"] in ("completed", "approved"), lab.plan("p-01")
        row = lab.status()["plans/p-01"]
        assert row["status"] == "completed", row
    elif vid == "regate":
        twice = {g: len(lab.calls(f"{g}-2")) for g in ("g-01", "g-02")}
        assert twice == {"g-01": 1, "g-02": 1}, twice


@pytest.mark.parametrize("vid", cases(["audit"], ["audit"], BROKEN))  # type: ignore[arg-type]
def test_the_audit_after_the_restore(lab: Lab, vid: str) -> None:
    for report in (lab.creport, lab.report):  # type: ignore[attr-defined]
        for g in ("g-01", "g-02"):
            runs = [e for e in report.get("executions", []) if e.get("plan") == f"plans/{g}"]
            valid = [e for e in runs if e.get("approval_valid")]
            flagged = [f for f in report.get("findings", []) if f.get("plan") == f"plans/{g}"]
            if len(lab.calls(f"{g}-2")) > 1:
                # the gated tool ran twice for one approved pause: the audit must say so
                assert flagged, (runs, report.get("ok"))
            assert len(valid) <= 1 or flagged, runs
