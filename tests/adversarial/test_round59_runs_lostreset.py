"""Round 59 (runs): round 52's lost-record fix against a branch moved BACK over the record.

The attack: after a loss the controller goes on only from its own last record (its last
commit of the plan that wrote the ``execution:`` block, docs/execution.md "Whose record").
Here the agent does not edit that record: it erases it. A plan with three actions, gates on
2 and 3; Alice approves (action 1 runs, pause at gate 2), Alice approves gate 2 (action 2,
non-idempotent, runs; pause at gate 3). Then a loss, and the agent ``git reset --hard`` the
branch to Alice's gate-2 approval (and expires the reflog): the branch again shows the
controller's own pause at gate 2 with Alice's approval after it, exactly the bytes the
controller once wrote and she once committed, and no later record. Two passes.

Labs (local mode, one reset or revert per lab, all its plans at once): ``lr1``: ``kept``
(nothing lost) and ``journal`` (its journal folder deleted); ``lr2``: ``index``
(``<state_dir>/index.sqlite`` deleted: docs/approvals.md "State and speed": "Deleting the
file is always safe: it is a cache of git") and ``index-journal``
(both); ``lr3``: ``memory`` (``memory.sqlite`` deleted) and ``memory-journal``; ``lr4``: the
agent ``git revert``s the controller's commits since the gate approval instead
(``revert-journal``, ``revert-index-journal``); ``lr5``: reset to Alice's FIRST approval,
before the start (``first-index-journal``); ``lr6``: the plan runs to ``completed`` (Alice
approves gate 3 too), then index and journal lost and the branch reset to her gate-3
approval (``done-index-journal``).

Asserted per variant: each action's tool ran as often as before the loss (action 1 once,
action 2 once, action 3 never, or once in ``done-index-journal``).

Broke (2, strict xfail): ``index-journal``: two passes after the reset, action 2
(``idempotent: false``) ran a SECOND time and the plan paused at gate 3 again, no code, no
``E_HISTORY_REWRITTEN``; ``done-index-journal``: the completed plan's action 3 ran a second
time and the plan completed again. In both, ``plangate audit`` on a ``--no-local`` clone is
``ok`` with no finding: git history alone shows one honest run, the erased record is gone,
while the controller's own ``<state_dir>/commits`` still lists the commits the reset
erased. Should: a run whose journal is lost goes on from the controller's record only if its
newest own commit of the plan (by ``<state_dir>/commits``, not the index) is still on the
branch; else ``E_HISTORY_REWRITTEN`` / ``E_ACTION_IN_DOUBT``, nothing runs.

Fixed (2026-11-29): the controller's record of the commits it made (``<state_dir>/commits``,
oldest first) outlives the index and the journals. When the index is built from nothing,
and before any run goes on from the controller's own last record, the commits it recorded
after its newest one still on the branch are read: each plan they name (not a refusal or a
vote, which are decided again) is held ``E_HISTORY_REWRITTEN``, as when ``memory.sqlite``
sees the rewrite. ``index-journal`` and ``done-index-journal``: held, nothing ran again;
``index`` is now held too (it said nothing of the rewrite before).

Held (8): ``kept``, ``journal``, ``memory``, ``memory-journal`` (``E_HISTORY_REWRITTEN``,
nothing ran: the history index noticed the rewrite), ``index`` (the journal knew action 2
ran: recovered, paused at gate 3 again, nothing twice; but no word of the rewrite either),
``revert-journal``, ``revert-index-journal`` (the agent's revert is its own commit: the
gate approval no longer stands, ``E_APPROVER_NOT_ALLOWED``, nothing ran),
``first-index-journal`` (``E_ALREADY_EXECUTED``: ``executed.jsonl`` knows the hash).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab, cases
from test_round2_execution_kit import shared


def _plan(tag: str) -> str:
    return f"""\
plan:
  name: {tag}
  task: t
  status: pending_approval
available_tools: [{{name: rec}}]
actions:
  - {{id: 1, tool: rec, why: first, params: {{tag: {tag}-1}}}}
  - {{id: 2, tool: rec, why: second, idempotent: false, requires_approval: true,
     params: {{tag: {tag}-2}}}}
  - {{id: 3, tool: rec, why: third, requires_approval: true, params: {{tag: {tag}-3}}}}
"""


def _journal(lab: Lab, vid: str) -> Path:
    return lab.state / "journal" / f"plans%2F{vid}"


def _build(root: Path, vids: list[str], lose: list[str], how: str = "reset") -> Lab:
    lab = Lab(root)
    for vid in vids:
        lab.write(vid, _plan(vid))
    lab.commit("plans")
    lab.run()
    for vid in vids:
        lab.set_status(vid, "approved")
    first = lab.commit("approve", ALICE)
    lab.run()  # action 1, pause at gate 2
    for vid in vids:
        lab.set_status(vid, "approved")
    gate2 = lab.commit("approve gate 2", ALICE)
    lab.run()  # action 2, pause at gate 3
    if how == "reset-first":
        gate2 = first  # Alice's first approval (before the run's start)
        how = "reset"
    if how == "reset-done":
        for vid in vids:
            lab.set_status(vid, "approved")
        gate2 = lab.commit("approve gate 3", ALICE)
        lab.run()  # action 3, completed
        how = "reset"
    lab.before = {v: lab.plan(v)["plan"]["status"] for v in vids}  # type: ignore[attr-defined]
    lab.ran2 = {v: len(lab.calls(f"{v}-2")) for v in vids}  # type: ignore[attr-defined]
    lab.ran3 = {v: len(lab.calls(f"{v}-3")) for v in vids}  # type: ignore[attr-defined]
    for vid in vids:
        if "journal" in vid and _journal(lab, vid).exists():
            shutil.rmtree(_journal(lab, vid))
    for name in lose:
        (lab.state / name).unlink()
    if how == "reset":
        lab.git("reset", "-q", "--hard", gate2)
        lab.git("reflog", "expire", "--expire=now", "--all")
    else:  # the agent reverts the controller's commits since Alice's gate-2 approval
        mine = lab.git("rev-list", f"{gate2}..HEAD").split()
        lab.git("revert", "--no-edit", *mine, who=AGENT)
    lab.runs = [lab.run(check=False), lab.run(check=False)]  # type: ignore[attr-defined]
    lab.after = {v: lab.plan(v)["plan"]["status"] for v in vids}  # type: ignore[attr-defined]
    return lab


LABS: dict[str, tuple[list[str], list[str], str]] = {
    "lr1": (["kept", "journal"], [], "reset"),
    "lr2": (["index", "index-journal"], ["index.sqlite"], "reset"),
    "lr3": (["memory", "memory-journal"], ["memory.sqlite"], "reset"),
    "lr4": (["revert-journal", "revert-index-journal"], ["index.sqlite"], "revert"),
    "lr5": (["first-index-journal"], ["index.sqlite"], "reset-first"),
    "lr6": (["done-index-journal"], ["index.sqlite"], "reset-done"),
}


@pytest.fixture(scope="module")
def labs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Lab]:
    found = {}
    for key, (vids, lose, how) in LABS.items():
        lab = shared(
            tmp_path_factory,
            f"r59-{key}",
            lambda r, k=key, v=vids, lo=lose, h=how: _build(r / k, v, lo, h),
        )
        found.update({vid: lab for vid in vids})
    return found


VARIANTS = [vid for vids, _, _ in LABS.values() for vid in vids]
BROKEN: dict[str, Any] = {}  # fixed 2026-11-29: see the docstring


DONE = "done-index-journal"


def test_each_plan_paused_at_gate_3_before_the_reset(labs: dict[str, Lab]) -> None:
    for vid in VARIANTS:
        lab = labs[vid]
        want = "completed" if vid == DONE else "awaiting_approval"
        assert lab.before[vid] == want, lab.before  # type: ignore[attr-defined]
        assert lab.ran2[vid] == 1, lab.ran2  # type: ignore[attr-defined]
        assert lab.ran3[vid] == (1 if vid == DONE else 0), lab.ran3  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(VARIANTS, VARIANTS, BROKEN))
def test_no_action_runs_again(labs: dict[str, Lab], vid: str) -> None:
    lab = labs[vid]
    passes = [(r.returncode, r.stderr[-400:]) for r in lab.runs]  # type: ignore[attr-defined]
    ran3 = 1 if vid == DONE else 0
    assert len(lab.calls(f"{vid}-1")) == 1, (lab.after, passes, lab.codes(vid)[-1500:])  # type: ignore[attr-defined]
    assert len(lab.calls(f"{vid}-2")) == 1, (lab.after, passes, lab.codes(vid)[-1500:])  # type: ignore[attr-defined]
    assert len(lab.calls(f"{vid}-3")) == ran3, (lab.after, lab.calls(f"{vid}-3"))  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", ["index", "index-journal", "done-index-journal"])
def test_the_rewrite_is_said_after_a_lost_index(labs: dict[str, Lab], vid: str) -> None:
    """The controller's record of its commits names what the reset erased (round 59)."""
    lab = labs[vid]
    assert "E_HISTORY_REWRITTEN" in lab.codes(vid), lab.codes(vid)[-1500:]
