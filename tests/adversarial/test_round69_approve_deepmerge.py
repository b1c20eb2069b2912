"""Round 69, approval side: round 68's merges on merged branches (docs/approvals.md, "Who
changed the content": a merge a merged branch holds is judged like one on the line, against
its own parents; what it did not bring, no side's blob, no clean join, no hands-off
settlement, is its maker's writing).

Lab (one, local mode, fake dates): the agent commits one ``rec`` plan per id with a
twelve-line ``NOTES.md`` in its folder; a pass freezes them. Per id a story of branches and
merges (the PLAN.yml never changes: the frozen version is the one she approves); then Alice
approves every plan in one commit, and two passes.

Slips (asserted: never ran, ``E_SELF_APPROVAL``, no valid run in either audit):

- ``deep2``: Alice merges two agent branches on her branch and writes line 5 of the note by
  hand; the agent's branch merges her branch (``--no-ff``); the agent merges its branch into
  main: her merge two levels below the line.
- ``deep3``: the same one level deeper (Bob's branch merges hers, the agent's merges Bob's).
- ``octo-evil``: Alice's octopus of three agent branches (lines 2, 6, 10) on her branch, with
  ``--no-commit`` and line 12 written by her; the agent merges her branch.
- ``unrelated``: Alice merges an agent branch with no common history
  (``--allow-unrelated-histories``) into her branch: an add/add of the folder's ``EXTRA.md``,
  resolved by her hand; the agent merges her branch.
- ``twice-evil``: the agent's side branch merged into her branch twice, the second time
  with a conflict at line 1 she resolves by hand; the agent merges her branch.
- ``ff-evil``: her hand-resolved merge of two agent branches; the agent merges main into
  her branch and fast-forwards main to that merge (her merge lands on the first-parent line
  by a fast-forward, the tip the controller read behind a second parent).

Honest (asserted: ran once at the first pass, hers, both audits valid):

- ``team-docs``: Alice merges main into her review branch and resolves a conflict in Bob's
  ``docs/runbook-team-docs.md`` (outside the plans folder) by hand; main had brought the
  agent's note edit too; Bob merges her branch (the PR).
- ``team-other``: the same, the conflict she resolves in ANOTHER plan's folder
  (``plans/team-other-x/NOTES.md``); she approves ``team-other``.
- ``team-squash``: as ``team-docs``, Bob squash-merges her branch (his commit writes the
  agent's note edit main already had and her resolved runbook).
- ``deep-clean``: as ``deep2`` with Alice's merge a clean join (lines 2 and 9): two levels
  below the line, nothing of hers.
- ``side-ours``: Alice merges the agent's note edit on her branch ``-s ours`` (keeping her
  side, the note as frozen), the agent merges her branch.
- ``octo-clean``: Alice's clean octopus of three agent note edits on her branch, merged by
  the agent.
- ``side-join``: Alice's ``--no-ff`` clean join of two agent note edits (lines 2 and 9) on her
  branch, merged by the agent.
- ``line-join``: Alice's clean join of the agent's branch on main (main edited line 9, the
  branch line 2): the maker of a clean merge on the line.
- ``twice-clean``: the agent's side branch merged into her branch, then extended and merged
  into main by Alice directly (a side branch merged twice, no conflict).

Pairs (asserted: the merge on a merged branch is judged like the same merge on the line,
both ways; whatever that is, both audits agree):

- ``del-side`` / ``del-line``: Alice's merge (``--no-commit``) of an agent note edit that
  also deletes the folder's ``OTHER.md``: on her branch merged by the agent / on main.
- ``mv-side`` / ``mv-line``: the same, renaming ``OTHER.md`` to ``OTHER-old.md``.

Seen (round 69): every id held. The slips are ``E_SELF_APPROVAL`` and never ran; the honest
flows ran once at the first pass, hers; ``del-side``/``del-line`` both ran (a deletion in the
folder is nobody's writing), ``mv-side``/``mv-line`` both refused (the moved file is the
merger's); the fresh-clone audit agreed with the controller on every id.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab, cases, clone_audit, valid_runs
from policykit import NOTE_LINES, StepClock, Who, edit_note
from policykit import agent_plan as plan
from test_round2_execution_kit import shared

SLIPS = ["deep2", "deep3", "octo-evil", "unrelated", "twice-evil", "ff-evil"]
HONEST = [
    "team-docs",
    "team-other",
    "team-squash",
    "octo-clean",
    "side-join",
    "line-join",
    "twice-clean",
    "deep-clean",
    "side-ours",
]
PAIRS = [("del-side", "del-line"), ("mv-side", "mv-line")]
ALL = [*SLIPS, *HONEST, *[p for pair in PAIRS for p in pair]]
BROKEN: dict[str, object] = {}


class C(StepClock):
    def branch(self, name: str, base: str = "main", who: Who = AGENT, **edits: str) -> None:
        """``name`` from ``base`` with one note edit (``l<n>=text`` for ``plans/<v>``)."""
        v = edits.pop("v")
        self("checkout", "-q", "-b", name, base)
        edit_note(self.lab, f"plans/{v}/NOTES.md", **edits)
        self.commit(f"edit {name}", who=who)


def _hand_merge(g: C, lab: Lab, v: str, branch: str) -> None:
    """On ``branch``: Alice merges ``agent/<v>-a`` and ``-b`` (both edit line 5) by hand."""
    g.branch(f"agent/{v}-a", v=v, l5="agent a")
    g.branch(f"agent/{v}-b", v=v, l5="agent b")
    g("checkout", "-q", "-b", branch, f"agent/{v}-a")
    g("merge", "-q", f"agent/{v}-b", who=ALICE, check=False)
    edit_note(lab, f"plans/{v}/NOTES.md", l5="alice resolved this by hand")
    g.commit("alice: merge a and b", who=ALICE)


def _build(root: Path) -> Lab:
    lab = Lab(root)
    g = C(lab)
    for v in [*ALL, "team-other-x"]:
        lab.write(v, plan(v))
        edit_note(lab, f"plans/{v}/NOTES.md")
    for v in ("del-side", "del-line", "mv-side", "mv-line"):
        edit_note(lab, f"plans/{v}/OTHER.md")
    edit_note(lab, "plans/unrelated/EXTRA.md")
    for v in ("team-docs", "team-other", "team-squash"):
        edit_note(lab, f"docs/runbook-{v}.md")
    g.commit("agent plans and notes")
    g.run()
    # deep2 / deep3
    _hand_merge(g, lab, "deep2", "alice/deep2")
    g("checkout", "-q", "-b", "agent/deep2-c", "main")
    g("merge", "-q", "--no-ff", "-m", "agent: take alice/deep2", "alice/deep2")
    g("checkout", "-q", "main")
    g("merge", "-q", "--no-ff", "-m", "merge agent/deep2-c", "agent/deep2-c")
    _hand_merge(g, lab, "deep3", "alice/deep3")
    g("checkout", "-q", "-b", "bob/deep3", "main")
    g("merge", "-q", "--no-ff", "-m", "bob: take alice/deep3", "alice/deep3", who=BOB)
    g("checkout", "-q", "-b", "agent/deep3-c", "main")
    g("merge", "-q", "--no-ff", "-m", "agent: take bob/deep3", "bob/deep3")
    g("checkout", "-q", "main")
    g("merge", "-q", "--no-ff", "-m", "merge agent/deep3-c", "agent/deep3-c")
    # octopus merges on her branch: evil and clean
    for v in ("octo-evil", "octo-clean"):
        for i, line in ((1, "l2"), (2, "l6"), (3, "l10")):
            g.branch(f"agent/{v}-{i}", v=v, **{line: f"agent {i}"})
        g("checkout", "-q", "-b", f"alice/{v}", "main")
        extra = ["--no-commit"] if v == "octo-evil" else ["-m", "octopus"]
        g("merge", "-q", "--no-ff", *extra, f"agent/{v}-1", f"agent/{v}-2", f"agent/{v}-3",
          who=ALICE)  # fmt: skip
        if v == "octo-evil":
            edit_note(lab, f"plans/{v}/NOTES.md", l12="alice wrote this in the octopus")
            g.commit("octopus", who=ALICE)
        g("checkout", "-q", "main")
        g("merge", "-q", "--no-ff", "-m", f"merge alice/{v}", f"alice/{v}")
    # unrelated: an add/add of EXTRA.md over no common history, resolved by her hand
    g("checkout", "-q", "--orphan", "agent/unrelated")
    lab.git("rm", "-rq", "--cached", ".")
    for p in list(lab.repo.iterdir()):
        if p.name != ".git":
            lab.git("clean", "-fdq")
    edit_note(lab, "plans/unrelated/EXTRA.md", l1="agent orphan")
    lab.git("add", "plans/unrelated/EXTRA.md")
    g("commit", "-q", "-m", "agent: orphan")
    g("checkout", "-q", "-f", "-b", "alice/unrelated", "main")
    g("merge", "-q", "--allow-unrelated-histories", "agent/unrelated", who=ALICE, check=False)
    (lab.repo / "plans/unrelated/EXTRA.md").write_text(
        "".join(["alice by hand\n", *NOTE_LINES[1:]])
    )
    g.commit("alice: merge the orphan", who=ALICE)
    g("checkout", "-q", "main")
    g("merge", "-q", "--no-ff", "-m", "merge alice/unrelated", "alice/unrelated")
    # twice-evil / twice-clean
    g.branch("agent/twice-evil", v="twice-evil", l2="agent s")
    g("checkout", "-q", "-b", "alice/twice-evil", "main")
    g("merge", "-q", "--no-ff", "-m", "take s", "agent/twice-evil", who=ALICE)
    edit_note(lab, "plans/twice-evil/NOTES.md", l1="alice side 1")
    g.commit("alice: line 1", who=ALICE)
    g("checkout", "-q", "agent/twice-evil")
    edit_note(lab, "plans/twice-evil/NOTES.md", l1="agent s 1")
    g.commit("agent: s again")
    g("checkout", "-q", "alice/twice-evil")
    g("merge", "-q", "agent/twice-evil", who=ALICE, check=False)
    edit_note(lab, "plans/twice-evil/NOTES.md", l1="alice and agent, by hand")
    g.commit("alice: take s again", who=ALICE)
    g("checkout", "-q", "main")
    g("merge", "-q", "--no-ff", "-m", "merge alice/twice-evil", "alice/twice-evil")
    g.branch("agent/twice-clean", v="twice-clean", l2="agent s")
    g("checkout", "-q", "-b", "alice/twice-clean", "main")
    g("merge", "-q", "--no-ff", "-m", "take s", "agent/twice-clean", who=ALICE)
    g("checkout", "-q", "agent/twice-clean")
    edit_note(lab, "plans/twice-clean/NOTES.md", l9="agent s 9")
    g.commit("agent: s again")
    g("checkout", "-q", "main")
    g("merge", "-q", "--no-ff", "-m", "merge alice/twice-clean", "alice/twice-clean")
    g("merge", "-q", "--no-ff", "-m", "merge s again", "agent/twice-clean", who=ALICE)
    # ff-evil: her hand merge, main merged into it by the agent, main fast-forwarded
    _hand_merge(g, lab, "ff-evil", "alice/ff-evil")
    g("merge", "-q", "--no-ff", "-m", "agent: main into alice/ff-evil", "main")
    g("checkout", "-q", "main")
    g("merge", "-q", "--ff-only", "alice/ff-evil")
    # side-join / line-join
    g.branch("agent/side-join-a", v="side-join", l2="agent a")
    g.branch("agent/side-join-b", v="side-join", l9="agent b")
    g("checkout", "-q", "-b", "alice/side-join", "agent/side-join-a")
    g("merge", "-q", "--no-ff", "-m", "join", "agent/side-join-b", who=ALICE)
    g("checkout", "-q", "main")
    g("merge", "-q", "--no-ff", "-m", "merge alice/side-join", "alice/side-join")
    g.branch("agent/line-join", v="line-join", l2="agent branch")
    g("checkout", "-q", "main")
    edit_note(lab, "plans/line-join/NOTES.md", l9="agent main")
    g.commit("agent: main line 9")
    g("merge", "-q", "--no-ff", "-m", "merge agent/line-join", "agent/line-join", who=ALICE)
    # deep-clean: her CLEAN join two levels below the line; side-ours: her -s ours on her branch
    g.branch("agent/deep-clean-a", v="deep-clean", l2="agent a")
    g.branch("agent/deep-clean-b", v="deep-clean", l9="agent b")
    g("checkout", "-q", "-b", "alice/deep-clean", "agent/deep-clean-a")
    g("merge", "-q", "--no-ff", "-m", "join", "agent/deep-clean-b", who=ALICE)
    g("checkout", "-q", "-b", "agent/deep-clean-c", "main")
    g("merge", "-q", "--no-ff", "-m", "agent: take alice/deep-clean", "alice/deep-clean")
    g("checkout", "-q", "main")
    g("merge", "-q", "--no-ff", "-m", "merge agent/deep-clean-c", "agent/deep-clean-c")
    g.branch("agent/side-ours", v="side-ours", l2="agent, dropped by her merge")
    g("checkout", "-q", "-b", "alice/side-ours", "main")
    g("merge", "-q", "--no-ff", "-s", "ours", "-m", "not this one", "agent/side-ours", who=ALICE)
    g("checkout", "-q", "main")
    g("merge", "-q", "--no-ff", "-m", "merge alice/side-ours", "alice/side-ours")
    # team flows
    for v, conflict in (("team-docs", "docs/runbook-team-docs.md"),
                        ("team-other", "plans/team-other-x/NOTES.md"),
                        ("team-squash", "docs/runbook-team-squash.md")):  # fmt: skip
        g("checkout", "-q", "-b", f"alice/{v}", "main")
        edit_note(lab, conflict, l3="alice review")
        g.commit("alice: review notes", who=ALICE)
        g("checkout", "-q", "main")
        edit_note(lab, conflict, l3="bob on main")
        g.commit("bob: runbook", who=BOB)
        edit_note(lab, f"plans/{v}/NOTES.md", l7="agent note on main")
        g.commit("agent: note")
        g("checkout", "-q", f"alice/{v}")
        g("merge", "-q", "main", who=ALICE, check=False)
        edit_note(lab, conflict, l3="alice and bob, by hand")
        g.commit("alice: merge main", who=ALICE)
        g("checkout", "-q", "main")
        if v == "team-squash":
            g("merge", "-q", "--squash", f"alice/{v}", who=BOB)
            g.commit(f"Squashed pull request alice/{v}", who=BOB)
        else:
            g("merge", "-q", "--no-ff", "-m", f"Merge pull request alice/{v}", f"alice/{v}",
              who=BOB)  # fmt: skip
    # pairs: a merge that also deletes / renames OTHER.md, on her branch or on main
    for v, op in (("del-side", "rm"), ("del-line", "rm"), ("mv-side", "mv"), ("mv-line", "mv")):
        g.branch(f"agent/{v}", v=v, l2="agent")
        g("checkout", "-q", "-b", f"alice/{v}", "main") if v.endswith("side") else g(
            "checkout", "-q", "main"
        )
        g("merge", "-q", "--no-ff", "--no-commit", f"agent/{v}", who=ALICE)
        if op == "rm":
            lab.git("rm", "-q", f"plans/{v}/OTHER.md")
        else:
            lab.git("mv", f"plans/{v}/OTHER.md", f"plans/{v}/OTHER-old.md")
        g.commit(f"merge agent/{v}", who=ALICE)
        if v.endswith("side"):
            g("checkout", "-q", "main")
            g("merge", "-q", "--no-ff", "-m", f"merge alice/{v}", f"alice/{v}")
    for v in ALL:
        lab.set_status(v, "approved")
    g.commit("approve", who=ALICE)
    g.run()
    lab.first = {v: len(lab.calls(v)) for v in ALL}  # type: ignore[attr-defined]
    g.run()
    lab.status()
    _code, lab.report = lab.audit("--config", str(lab.config))  # type: ignore[attr-defined]
    lab.fresh, _valid = clone_audit(lab, root)  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r69-deepmerge", _build)


@pytest.mark.parametrize("vid", cases(SLIPS, SLIPS, BROKEN))  # type: ignore[arg-type]
def test_her_hand_in_a_merge_below_the_line_bars_her(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)[:1500]
    assert valid_runs(lab.report, vid) == [], valid_runs(lab.report, vid)  # type: ignore[attr-defined]
    assert "E_SELF_APPROVAL" in lab.codes(vid), lab.codes(vid)[:1500]


@pytest.mark.parametrize("vid", cases(HONEST, HONEST, BROKEN))  # type: ignore[arg-type]
def test_an_honest_merge_leaves_her_free_to_approve(lab: Lab, vid: str) -> None:
    assert lab.first[vid] == 1, lab.codes(vid)[:1500]  # type: ignore[attr-defined]
    assert len(lab.calls(vid)) == 1
    runs = valid_runs(lab.report, vid)  # type: ignore[attr-defined]
    assert len(runs) == 1 and runs[0]["approver"] == ALICE[1], runs


@pytest.mark.parametrize("side,line", cases(["del", "mv"], PAIRS, BROKEN))  # type: ignore[arg-type]
def test_a_merge_below_the_line_is_judged_like_one_on_it(lab: Lab, side: str, line: str) -> None:
    assert len(lab.calls(side)) == len(lab.calls(line)), (
        lab.codes(side)[:800],
        lab.codes(line)[:800],
    )
    assert ("E_SELF_APPROVAL" in lab.codes(side)) == ("E_SELF_APPROVAL" in lab.codes(line))


@pytest.mark.parametrize("vid", ALL)
def test_a_fresh_clones_audit_agrees_with_the_controller(lab: Lab, vid: str) -> None:
    fresh = valid_runs(lab.fresh, vid)  # type: ignore[attr-defined]
    assert len(fresh) == len(lab.calls(vid)), (fresh, lab.calls(vid))
    assert len(valid_runs(lab.report, vid)) == len(fresh)  # type: ignore[attr-defined]
