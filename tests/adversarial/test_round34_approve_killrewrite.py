"""Round 34, who may make a plan run after a killed start whose start commit (and approval)
a history rewrite then erases before the restart.

The killed-start recovery (rounds 28-33, fresh) finishes a run from the start commit's
content on the restart; docs/approvals.md ("A rewritten branch"): a plan whose start commit
is gone is held, no approval starts or continues it; "Replayed approvals": an approval
brought back for another version is ``E_APPROVAL_REPLAYED``.

Per variant, in one lab per group (variants played one after another): the agent adds a
plan, the controller freezes it, Alice approves, and a pass is SIGKILLed right after the
branch moved to its ``plangate: start`` commit (retried on a new plan until the kill lands
there; the action has not run). Before the restart:

- ``reset-approval``: ``git reset --hard`` to the freeze (Alice's approval and the start
  are gone). Asserted: ``rec`` never runs (no approval is left).
- ``agent-approves``: the same reset, then the agent (no approver) sets ``approved``.
  Asserted: never runs.
- ``replay-v2``: the same reset; the agent edits the plan, freezes it itself
  (``plangate freeze``) and commits, then ``git cherry-pick``s Alice's erased approval onto
  the new version. Asserted: never runs (``E_APPROVAL_REPLAYED``).
- ``reset-start``: ``git reset --hard HEAD~1`` (only the start commit is gone, Alice's
  approval stays). Asserted: runs at most once, and the fresh clone's audit finds nothing.
- ``replay-v1``: reset to the freeze, then the agent cherry-picks Alice's approval back
  onto the same version. Asserted: runs at most once; the audit finds nothing.

Then two passes. (Seen while building, left out for suite time: the same reset followed by
the agent's edit of the plan, a new version: never ran.)

Results: every variant held (after the reset the controller logged ``history_rewritten``
with no plan held: the killed start had recorded nothing to hold, and the killed job was
dropped without running; ``replay-v2`` refused ``E_APPROVAL_REPLAYED``; ``reset-start`` and
``replay-v1`` ran once on Alice's approval of that version, and the audit agreed).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BenchError, Lab, plan_text
from test_round2_execution_kit import shared
from test_round28_runs_killwrite import _killed_pass

from tests.support.gitenv import remove_stale_index_lock

GROUPS = {
    "a": ["reset-approval", "agent-approves", "reset-start"],
    "b": ["replay-v2", "replay-v1"],
}
NEVER = {"reset-approval", "agent-approves", "replay-v2"}
FOUND: dict[str, pytest.MarkDecorator] = {}


def _kill_a_start(lab: Lab, vid: str) -> tuple[str, str, str]:
    """Returns (victim slug, the freeze commit before the approval, the approval commit)."""
    for attempt in range(8):
        victim = f"{vid}-{attempt}"
        lab.write(victim, plan_text(victim))
        lab.commit(f"plan {victim}", AGENT, f"plans/{victim}")
        lab.run()
        before = lab.head()
        approval = lab.approve(victim, ALICE)
        killed_at = _killed_pass(lab, 1)
        time.sleep(1.1)  # a git child of the killed controller may still finish
        tree = lab.git("status", "--porcelain", "--untracked-files=all").strip()
        remove_stale_index_lock(lab.repo)  # git's advice to the agent's next command
        if killed_at == f"plangate: start plans/{victim}" and tree == f"M  plans/{victim}/PLAN.yml":
            return victim, before, approval
        lab.run()
    raise BenchError("no kill landed right after a start commit")


def _play(lab: Lab, vid: str) -> None:
    victim, before, approval = _kill_a_start(lab, vid)
    lab.victims[vid] = victim  # type: ignore[attr-defined]
    lab.ran_before[vid] = len(lab.calls(victim))  # type: ignore[attr-defined]
    if vid == "reset-start":
        lab.git("reset", "-q", "--hard", "HEAD~1")
    else:
        lab.git("reset", "-q", "--hard", before)
    if vid == "agent-approves":
        lab.approve(victim, AGENT)
    elif vid == "replay-v2":
        lab.write(victim, plan_text(victim, params="extra: 1\n"))
        done = lab.cli("freeze", str(lab.repo / "plans" / victim / "PLAN.yml"), cwd=lab.repo)
        if done.returncode != 0:
            raise BenchError(f"freeze: {done.stderr[-500:]}")
        lab.commit("edit and freeze", AGENT)
        time.sleep(1.05)
        lab.git("cherry-pick", approval, who=AGENT)
    elif vid == "replay-v1":
        time.sleep(1.05)
        lab.git("cherry-pick", approval, who=AGENT)
    lab.run()
    lab.run()


def _build(group: str):  # type: ignore[no-untyped-def]
    def build(root: Path) -> Lab:
        lab = Lab(root)
        lab.victims = {}  # type: ignore[attr-defined]
        lab.ran_before = {}  # type: ignore[attr-defined]
        for vid in GROUPS[group]:
            _play(lab, vid)
        lab.write("zz", plan_text("zz"))
        lab.commit("plan zz", AGENT, "plans/zz")
        lab.run()
        lab.approve("zz", ALICE)
        lab.run()
        return lab

    return build


def _lab(factory: pytest.TempPathFactory, group: str) -> Lab:
    built = shared(factory, f"r34-killrewrite-{group}", _build(group))
    built.group = group  # type: ignore[attr-defined]
    return built


GROUP_OF = {vid: group for group, vids in GROUPS.items() for vid in vids}


@pytest.fixture(scope="module", params=list(GROUPS))
def lab(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return _lab(tmp_path_factory, request.param)


def test_the_kill_came_before_the_action(lab: Lab) -> None:
    assert set(lab.ran_before.values()) == {0}  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "vid", [pytest.param(v, id=v, marks=[FOUND[v]] if v in FOUND else []) for v in GROUP_OF]
)
def test_who_may_make_it_run(tmp_path_factory: pytest.TempPathFactory, vid: str) -> None:
    lab = _lab(tmp_path_factory, GROUP_OF[vid])
    victim = lab.victims[vid]  # type: ignore[attr-defined]
    ran = len(lab.calls(victim))
    if vid in NEVER:
        assert ran == 0, (vid, lab.codes(victim))
    else:
        assert ran <= 1, (vid, lab.codes(victim))


def test_the_fresh_clone_audit_agrees(lab: Lab) -> None:
    rc, report = lab.audit()
    assert rc == 0 and not report.get("findings"), report


def test_bystander(lab: Lab) -> None:
    assert len(lab.calls("zz")) == 1
