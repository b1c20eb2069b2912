"""Round 4, approval side: history the agent rewrites under the controller (local mode: the
agent writes the branch and ``.git``), so that what the controller knew about a plan is gone.

Attacks (Alice is an approver, the agent is not):

- ``forget``: Alice writes a plan; the controller freezes it (its index now knows she wrote
  it). The agent resets the branch to before her commit and commits the very same bytes (the
  frozen file) as its own; Alice approves. The index, rebuilt because its last commit is no
  longer an ancestor, no longer knows who produced that content.
- ``replay``: Alice approves version 1 on a review branch (after the controller froze it);
  the agent writes version 2 and the controller freezes it (a controller commit *after*
  Alice's approval: the documented replay check has its trusted birth). The agent then resets
  the branch to before every controller commit, commits version 2 with the controller's
  frozen block, and cherry-picks Alice's approval of version 1.
- ``grafts``: ``.git/info/grafts`` cuts history just after Alice's content commit (git log
  shows the agent's commit as the root); Alice approves.
- ``rewind``: a run paused at gate 3 after Alice approved gate 2; the agent resets the branch
  to her gate-2 approval commit. ``aborted``: Alice aborts a run paused at its gate; the agent
  resets to before her abort; Bob, then Carol approve the gate.
- ``shallow``: ``.git/shallow`` written by the agent does the same (own repo: the controller
  refuses the whole repository).

Defence: E_SELF_APPROVAL / E_APPROVAL_REPLAYED, nothing runs; no gate passes without its own
approval; an aborted run stays aborted. Control: an honest plan the
agent writes after the rewrite runs on Alice's approval.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, CAROL, Lab, plan_text
from test_round2_approval_authors import shared_lab


def _build_rewrite(root: Path) -> Lab:
    lab = Lab(root)
    base = lab.head()
    lab.write("forget", plan_text("forget"))
    lab.commit("alice writes forget", ALICE)
    lab.write("replay", plan_text("replay", params="note: v1\n"))
    lab.commit("agent writes replay", AGENT)
    lab.run()  # the controller freezes both, indexes Alice as forget's writer
    frozen_forget = lab.read("forget")
    lab.git("checkout", "-q", "-b", "review")
    time.sleep(1.1)  # Alice's approval is dated after the freeze of v1 ...
    lab.approve("replay", ALICE)
    approval_v1 = lab.head()
    lab.git("checkout", "-q", "main")
    time.sleep(1.1)  # ... and before the controller's freeze of v2
    path = lab.repo / "plans" / "replay" / "PLAN.yml"
    path.write_text(path.read_text().replace("note: v1", "note: v2"))
    lab.commit("agent writes replay v2", AGENT)
    lab.run()  # the controller freezes v2: a trusted birth after Alice's approval
    frozen_v2 = lab.read("replay")
    # the rewrite: the branch goes back to before every plan and every controller commit
    lab.git("reset", "-q", "--hard", base)
    lab.write("forget", frozen_forget)
    lab.write("replay", frozen_v2)
    lab.write("honest", plan_text("honest"))
    lab.commit("agent writes forget (Alice's bytes), replay v2 (frozen), honest", AGENT)
    lab.git("cherry-pick", approval_v1, who=AGENT)
    lab.approve("forget", ALICE)
    lab.run()  # freezes honest; decides forget and replay
    lab.approve("honest", ALICE)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def rewrite(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared_lab(tmp_path_factory, "r4-rewrite", _build_rewrite)


def test_the_honest_plan_runs_after_the_rewrite(rewrite: Lab) -> None:
    assert len(rewrite.calls("honest")) == 1, rewrite.codes("honest")


def test_a_rewritten_branch_does_not_forget_who_wrote_the_plan(rewrite: Lab) -> None:
    assert rewrite.calls("forget") == [], f"ran: {rewrite.codes('forget')}"
    assert not rewrite.started("forget"), rewrite.codes("forget")
    assert rewrite.refusal("forget") == "E_SELF_APPROVAL", rewrite.codes("forget")


def test_a_rewritten_branch_does_not_let_an_old_approval_approve_a_new_version(
    rewrite: Lab,
) -> None:
    assert rewrite.calls("replay") == [], f"ran: {rewrite.calls('replay')}"
    assert not rewrite.started("replay"), rewrite.codes("replay")
    # the rewrite erased the controller's freeze of v2, but the index keeps the controller's
    # first freeze of each version (round 13): the approval, written before it, is a replay;
    # and the controller, which made the erased commits, holds the plan as well
    assert rewrite.refusal("replay") == "E_APPROVAL_REPLAYED", rewrite.codes("replay")
    assert "E_HISTORY_REWRITTEN" in str(rewrite.status()["plans/replay"]["waiting"])


# -- history cut by files the agent writes in .git ----------------------------------------


def _build_cut(root: Path, how: str) -> Lab:
    lab = Lab(root)
    lab.write("cut", plan_text("cut"))
    lab.commit("alice writes cut", ALICE)
    (lab.repo / "README").write_text("agent\n")
    tip = lab.commit("agent edits README", AGENT)
    if how == "grafts":
        (lab.repo / ".git" / "info").mkdir(exist_ok=True)
        (lab.repo / ".git" / "info" / "grafts").write_text(tip + "\n")
    else:
        (lab.repo / ".git" / "shallow").write_text(tip + "\n")
    lab.run(check=False)
    lab.approve("cut", ALICE)
    lab.run(check=False)
    return lab


@pytest.mark.parametrize("how", ["grafts", "shallow"])
def test_history_cut_in_git_dir_does_not_hide_the_writer(tmp_path: Path, how: str) -> None:
    lab = _build_cut(tmp_path, how)
    assert lab.calls("cut") == [], f"ran: {lab.codes('cut')}"
    assert not lab.started("cut")
    if how == "grafts":  # the controller ignores grafts: Alice is the writer
        assert lab.refusal("cut") == "E_SELF_APPROVAL", lab.codes("cut")
    else:  # a shallow repository is refused as a whole (E_GIT)
        result = lab.run(check=False)
        assert result.returncode == 2 and "E_GIT" in result.stderr and "shallow" in result.stderr


# -- a run rewound to an approval it already acted on -----------------------------------------

GATED = plan_text(
    "{tag}",
    extra_actions="""\
  - id: 2
    tool: rec
    why: "gate two"
    requires_approval: true
    params: {tag: "{tag}-2"}
  - id: 3
    tool: rec
    why: "gate three"
    requires_approval: true
    params: {tag: "{tag}-3"}
""",
)


def _paused_at_gate_2(root: Path, *slugs: str) -> Lab:
    """A lab where the agent's gated plans ``slugs`` ran action 1 on Alice's approval and
    wait at gate 2."""
    lab = Lab(root)
    for slug in slugs:
        lab.write(slug, GATED.replace("{tag}", slug))
    lab.commit(f"agent adds {', '.join(slugs)}", AGENT)
    lab.run()
    for slug in slugs:
        lab.approve(slug, ALICE)
    lab.run()
    return lab


def _build_rewind(root: Path) -> Lab:
    """``rewind``: Alice approves the plan and gate 2; action 2 runs and the run pauses at
    gate 3. The agent resets the branch to Alice's gate-2 approval commit (the controller's
    start-of-step and await commits are gone). ``aborted``: Alice aborts the paused plan; the
    agent resets to before her abort; Bob approves the gate (the controller commits a start and
    pauses at gate 2 again), then Carol approves it."""
    lab = _paused_at_gate_2(root, "rewind", "aborted")
    gate2 = lab.approve("rewind", ALICE)
    lab.run()  # rewind: action 2, paused at gate 3
    lab.set_status("aborted", "aborted")
    lab.commit("alice aborts", ALICE)
    lab.run()  # the controller commits aborted
    lab.git("reset", "-q", "--hard", gate2)  # also drops Alice's abort and the controller's
    lab.run()
    lab.approve("aborted", BOB)
    lab.run()  # the controller starts it and pauses at gate 2 again
    lab.approve("aborted", CAROL)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def rewind(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared_lab(tmp_path_factory, "r4-rewind", _build_rewind)


def test_a_rewound_gate_approval_does_not_pass_the_next_gate(rewind: Lab) -> None:
    assert len(rewind.calls("rewind-2")) == 1, rewind.codes("rewind")
    assert rewind.calls("rewind-3") == [], f"gate 3 ran: {rewind.codes('rewind')}"


def test_an_abort_erased_by_a_rewrite_still_holds(rewind: Lab) -> None:
    assert len(rewind.calls("aborted")) == 1, rewind.codes("aborted")
    assert rewind.calls("aborted-2") == [], f"the aborted plan went on: {rewind.codes('aborted')}"


# -- the hold: what a team sees, and how it ends ----------------------------------------------


def _build_restore(root: Path) -> tuple[Lab, str]:
    """``rewind`` again, then the team puts the branch back where the controller left it."""
    lab = _paused_at_gate_2(root, "kept", "dropped")
    before = lab.head()
    lab.approve("kept", BOB)
    lab.run()  # kept: action 2, paused at gate 3
    tip = lab.head()
    lab.git("reset", "-q", "--hard", before)  # erases the controller's commits of kept
    lab.status()  # a reader sees the rewrite first: the hold must not depend on who scans
    lab.run()
    return lab, tip


def test_a_held_plan_says_why_and_is_released_when_its_commits_are_back(tmp_path: Path) -> None:
    lab, tip = _build_restore(tmp_path)
    row = lab.status()["plans/kept"]
    assert "E_HISTORY_REWRITTEN" in (row["waiting"] or ""), row
    assert lab.status()["plans/dropped"]["waiting"] is None  # untouched by the rewrite
    lab.approve("kept", CAROL)  # Carol's approval of gate 2 on the rewritten branch
    lab.run()
    assert lab.refusal("kept") == "E_HISTORY_REWRITTEN", lab.codes("kept")
    assert len(lab.calls("kept-2")) == 1 and lab.calls("kept-3") == []
    # the team restores the branch from the reflog: the hold ends, gate 3 is approved anew
    lab.git("reset", "-q", "--hard", tip)
    lab.run()
    assert lab.status()["plans/kept"]["waiting"] is None, lab.codes("kept")
    lab.approve("kept", CAROL)
    lab.run()
    assert len(lab.calls("kept-3")) == 1, lab.codes("kept")
    assert len(lab.calls("kept-2")) == 1, lab.codes("kept")


def test_a_held_plan_deleted_and_added_again_is_a_new_plan(tmp_path: Path) -> None:
    lab, _tip = _build_restore(tmp_path)
    lab.git("rm", "-q", "-r", "plans/kept")
    lab.commit("agent deletes kept", AGENT)
    lab.run()
    lab.write("kept", plan_text("kept-again"))
    lab.commit("agent adds kept again", AGENT)
    lab.run()  # frozen anew; no hold
    lab.approve("kept", ALICE)
    lab.run()
    assert len(lab.calls("kept-again")) == 1, lab.codes("kept")
