"""Round 68, approval side: round 67's lapse dating by HAND (docs/approvals.md, "Replayed
approvals": a lapse someone other than the decision's author committed is dated by the first
controller commit after it on the branch, until then by the reader's clock; a lapse she
committed herself keeps round 66's rule, the earlier of its author and committer dates).

Lab (one, local mode, fake dates, no sleep; ``approval.identity_aliases`` names
``a.smith@corp.example`` as Alice and ``*@example.com`` plus tags): the agent commits one
``rec`` plan per id; pass P0 freezes them. Alice's approval of the plan on main is X, her
approval of the same version on her unmerged review branch is Y (made before the lapse was
really made unless said). Then pass P1 (a controller commit: the freeze of a plan the agent
adds), the rest, passes P2 and P3.

Lapsed, then brought back by another hand (asserted: ``rec`` never ran, no valid run in the
controller-side and fresh-clone audits):

- ``her-pick``: the agent reverts X on its branch with both dates in 1990; Alice cherry-picks
  that revert onto main herself (committer Alice, now; git keeps the agent's 1990 author
  date): a lapse "she committed herself", dated "the earlier of its dates". The agent picks Y.
- ``her-pick-case``: the same, Alice's committer spelled ``ALICE@EXAMPLE.COM``.
- ``her-am``: the same through ``format-patch | git am`` by Alice (author date kept).
- ``her-rebase``: the same through Alice rebasing the agent's branch onto main herself and
  fast-forwarding main to it (a maintainer's local "rebase and merge": committer Alice).
- ``bob-pick``: the control: Bob (another approver) cherry-picks the agent's 1990 revert
  (another hand than hers: dated by the controller), then the agent picks Y.
- ``side-early``: X on her review branch; the agent's branch forks there and reverts X (1990);
  meanwhile P1 commits on main (another plan's freeze); Alice approves again on another
  review branch (Y, after P1, before the agent's lapse); the agent merges its branch (X and
  the lapse) and picks Y. The only controller commit "before" Y is one NOT after the lapse.
- ``her-merge``: the agent's 1990 revert of X on its branch, merged ``--no-ff`` by Alice
  (merge committed and dated by her, now); the agent picks Y.
- ``in-merge``: the agent's merge of an empty branch with ``--no-commit``, the status set
  back to pending inside it, merge dated 1990; the agent picks Y.
- ``same-pass``: the agent's 1990 revert and its pick of Y in one push (no pass between).
- ``forge-lapse``: the lapse and the pick both committed by the forge (``GitHub``), the
  revert authored by the agent in 1990.

Honest (asserted: ran at the first pass after her approval, once, hers, both audits valid):

- ``case-self``, ``alias-self``, ``plus-self``: Alice reverts X herself from a laptop whose
  git identity is ``ALICE@EXAMPLE.COM`` / ``a.smith@corp.example`` (an alias the config
  names) / ``alice+laptop@example.com`` (a plus tag the config folds); then she approves
  again in the forge's web editor (author Alice, committer GitHub, dated after). Her own
  lapse: no refusal is documented.
- ``ctl-other``: the agent reverts X; P1 commits (another plan's freeze); Alice approves again
  in the web editor: the lapse is dated by P1, her approval after it.

Seen (round 68): ``her-pick``, ``her-pick-case``, ``her-am``, ``her-rebase`` BROKE (slip):
the agent's revert of X dated 1990 becomes a lapse "she committed herself" as soon as Alice's
hand re-commits it (cherry-pick, ``am``, a local rebase of the agent's branch: git keeps the
agent's author date, she is the committer), and round 66's rule dates such a lapse the
EARLIER of its dates, 1990: her review-branch approval Y, made before she brought the lapse
in, is "a decision dated after the lapse", and the agent's cherry-pick of Y ran on her
approval (approver alice), the git-alone and fresh-clone audits valid. Should: a lapse she
committed is dated no earlier than her commit of it (its committer date), or the author
date counts only when she is also its author. ``alias-self``, ``plus-self`` BROKE (honest
refused): Alice's own revert committed as ``a.smith@corp.example`` (a ``people`` alias) or
``alice+laptop@example.com`` (a ``plus_tags`` fold) is taken for another hand's lapse: her
web-editor re-approval is refused ``E_APPROVAL_REPLAYED`` (``case-self``, the same address
in capitals, runs): "compared as identities are" is not applied to the lapse's committer.
Held: ``bob-pick`` (another approver's pick of the agent's revert), ``side-early``,
``her-merge``, ``in-merge``, ``same-pass``, ``forge-lapse``; honest ``case-self``,
``ctl-other``. The fresh-clone audit agreed with the controller on every id.

Fixed (2026-11-30): all six. A lapse she committed herself is dated by the dates SHE wrote:
its committer date, and its author date only when she is its author too (an author date git
carried from the agent's commit through her cherry-pick, ``am`` or rebase is the agent's
word), the earlier, bounded as before by the reader's clock and the first controller commit
after it (``Lifecycle._lapse_time``). "She committed it herself" compares the committer
with the decision's author as the approval rules compare identities, the mailbox's
spellings and ``approval.identity_aliases`` (people, plus tags: ``Lifecycle._same_person``,
``_committed_by``, ``_own_hand``), with the aliases of the policy in force there: the
controller and a rebuilt index follow the recorded policy (``RecordedPolicies.aliases``),
the fresh-clone audit reads the same aliases from ``.plangate/policy.json``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from advkit import ALICE, BOB, Lab, cases, valid_runs
from policykit import LapseClock, with_audits
from policykit import agent_plan as plan
from test_round2_execution_kit import shared

FORGE = ("GitHub", "noreply@github.com")
OLD = 631152000  # 1990-01-01
LAPSED = [
    "her-pick",
    "her-pick-case",
    "her-am",
    "her-rebase",
    "bob-pick",
    "side-early",
    "her-merge",
    "in-merge",
    "same-pass",
    "forge-lapse",
]
HONEST = ["case-self", "alias-self", "plus-self", "ctl-other"]
SPELL = {
    "case-self": ("Alice", "ALICE@EXAMPLE.COM"),
    "alias-self": ("A. Smith", "a.smith@corp.example"),
    "plus-self": ("Alice", "alice+laptop@example.com"),
}
BROKEN: dict[str, object] = {}
ALIASES = """\
identity_aliases:
  plus_tags: ["*@example.com"]
  people: [[alice@example.com, a.smith@corp.example]]
"""


def _build(root: Path) -> Lab:
    lab = Lab(root, approval=ALIASES)
    c = LapseClock(lab)
    for v in [*LAPSED, *HONEST]:
        lab.write(v, plan(v))
    lab.git("add", "-A")
    c.git("commit", "-q", "-m", "agent plans")
    c.run()  # P0
    old = f"@{OLD} +0000"
    x: dict[str, str] = {}
    y: dict[str, str] = {}
    # side-early: X on her review branch, the agent's branch from there, lapse dated 1990
    c.git("checkout", "-q", "-b", "alice/side-early", "main")
    x["side-early"] = c.set("side-early", "approved", msg="approve")
    c.git("checkout", "-q", "-b", "agent/side-early")
    c.git("revert", "--no-edit", x["side-early"], adate=old, cdate=old)
    c.git("checkout", "-q", "main")
    # ctl-other: the agent's lapse of X before P1
    x["ctl-other"] = c.set("ctl-other", "approved", msg="approve")
    c.git("revert", "--no-edit", x["ctl-other"])
    lab.write("zz-filler", plan("zz-filler"))
    lab.git("add", "-A")
    c.git("commit", "-q", "-m", "agent: another plan")
    c.run()  # P1: freezes zz-filler (a controller commit)
    # her review-branch approvals (Y)
    for v in ("her-pick", "her-pick-case", "her-am", "her-rebase", "bob-pick", "side-early",
              "her-merge", "in-merge", "same-pass", "forge-lapse"):  # fmt: skip
        c.git("checkout", "-q", "-b", f"alice/y-{v}", "main")
        y[v] = c.set(v, "approved", msg="lgtm (review)")
        c.git("checkout", "-q", "main")
    # X on main, herself
    for v in ("her-pick", "her-pick-case", "her-am", "her-rebase", "bob-pick", "her-merge",
              "in-merge", "same-pass", "forge-lapse", *SPELL):  # fmt: skip
        x[v] = c.set(v, "approved", msg="approve")
    # her-pick / her-pick-case / her-am: the agent's 1990 revert on its branch, brought by her
    for v, by in (("her-pick", ALICE), ("her-pick-case", ("Alice", "ALICE@EXAMPLE.COM")),
                  ("bob-pick", BOB)):  # fmt: skip
        c.git("checkout", "-q", "-b", f"agent/{v}", "main")
        r = c.git("revert", "--no-edit", x[v], adate=old, cdate=old)
        c.git("checkout", "-q", "main")
        c.git("cherry-pick", r, who=by, by=by, adate=old)
    c.git("checkout", "-q", "-b", "agent/her-am", "main")
    c.git("revert", "--no-edit", x["her-am"], adate=old, cdate=old)
    patch = lab.git("format-patch", "-1", "--stdout", "HEAD")
    c.git("checkout", "-q", "main")
    c.t += 20
    lab.extra_env = {"GIT_COMMITTER_DATE": f"@{c.t} +0000"}  # type: ignore[attr-defined]
    lab.git("am", "-q", who=ALICE, input=patch)
    lab.extra_env = {}  # type: ignore[attr-defined]
    # her-rebase: Alice rebases the agent's branch onto main and fast-forwards main
    c.git("checkout", "-q", "-b", "agent/her-rebase", "main~1")
    c.git("revert", "--no-edit", x["her-rebase"], adate=old, cdate=old)
    c.git("rebase", "-q", "main", who=ALICE, by=ALICE, adate=old)
    c.git("checkout", "-q", "main")
    c.git("merge", "-q", "--ff-only", "agent/her-rebase", who=ALICE, by=ALICE)
    # her-merge: the agent's 1990 revert merged by Alice
    c.git("checkout", "-q", "-b", "agent/her-merge", "main")
    c.git("revert", "--no-edit", x["her-merge"], adate=old, cdate=old)
    c.git("checkout", "-q", "main")
    c.git("merge", "-q", "--no-ff", "-m", "merge agent/her-merge", "agent/her-merge",
          who=ALICE, by=ALICE)  # fmt: skip
    # in-merge: the lapse inside the agent's merge, dated 1990
    c.git("checkout", "-q", "-b", "agent/in-merge", "main")
    (lab.repo / "agent-notes.txt").write_text("x\n")
    lab.git("add", "-A")
    c.git("commit", "-q", "-m", "agent: unrelated")
    c.git("checkout", "-q", "main")
    c.git("merge", "-q", "--no-ff", "--no-commit", "agent/in-merge")
    lab.set_status("in-merge", "pending_approval")
    lab.git("add", "-A")
    c.git("commit", "-q", "-m", "merge agent/in-merge", adate=old, cdate=old)
    # same-pass: the 1990 revert; forge-lapse: the revert committed by the forge
    c.git("revert", "--no-edit", x["same-pass"], adate=old, cdate=old)
    c.git("revert", "--no-edit", x["forge-lapse"], by=FORGE, adate=old, cdate=old)
    # side-early: the agent merges its branch (X and its lapse) now
    c.git("merge", "-q", "--no-ff", "-m", "merge agent/side-early", "agent/side-early")
    # the agent's picks of Y
    for v in ("her-pick", "her-pick-case", "her-am", "her-rebase", "bob-pick", "side-early",
              "her-merge", "in-merge", "same-pass"):  # fmt: skip
        c.git("cherry-pick", y[v])
    c.git("cherry-pick", y["forge-lapse"], by=FORGE)
    # honest: her own lapse under another spelling, then the web editor
    for v, who in SPELL.items():
        c.git("revert", "--no-edit", x[v], who=who, by=who)
    for v in [*SPELL, "ctl-other"]:
        c.set(v, "approved", msg="Update PLAN.yml", by=FORGE)
    c.run()  # P2
    lab.first = {v: len(lab.calls(v)) for v in [*LAPSED, *HONEST]}  # type: ignore[attr-defined]
    c.run()  # P3
    return with_audits(lab, root)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r68-lapsehand", _build)


@pytest.mark.parametrize("vid", cases(LAPSED, LAPSED, BROKEN))  # type: ignore[arg-type]
def test_a_lapsed_decision_brought_back_by_another_hand_does_not_run(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)[:1500]
    assert valid_runs(lab.report, vid) == [], valid_runs(lab.report, vid)  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(HONEST, HONEST, BROKEN))  # type: ignore[arg-type]
def test_her_new_decision_after_her_own_or_a_dated_lapse_runs_at_once(lab: Lab, vid: str) -> None:
    assert lab.first[vid] == 1, lab.codes(vid)[:1500]  # type: ignore[attr-defined]
    assert len(lab.calls(vid)) == 1
    runs = valid_runs(lab.report, vid)  # type: ignore[attr-defined]
    assert len(runs) == 1 and runs[0]["approver"] == ALICE[1], runs


@pytest.mark.parametrize("vid", [*LAPSED, *HONEST])
def test_a_fresh_clones_audit_agrees_with_the_controller(lab: Lab, vid: str) -> None:
    fresh = valid_runs(lab.fresh, vid)  # type: ignore[attr-defined]
    assert len(fresh) == len(lab.calls(vid)), (fresh, lab.calls(vid))
    assert len(valid_runs(lab.report, vid)) == len(fresh)  # type: ignore[attr-defined]
