"""Round 64, approval side: round 63's lapse rule (docs/approvals.md, "Replayed approvals":
"the same decision for the same version and pause after that decision **lapsed** ... and
another hand than the one that committed it carries it" is ``E_APPROVAL_REPLAYED``) against
lapses made through MERGES and side branches, a lapse taken back twice, and honest ways a
lapsed approval comes back.

Lab (one, local mode, author/committer dates set, no sleep): the agent commits one ``rec``
plan per id; a pass freezes them. Then, before any pass (unless said):

Lapsed, another hand brings it back (asserted: never runs, no valid run in the audit):

- ``br-pick``: on her review branch Alice approves (X, ``lgtm``) and ``git revert``s X; she
  merges the branch ``--no-ff`` into main (nothing changes there); the agent cherry-picks X
  onto main.
- ``br-pick-seen``: the same, with a pass between her merge and the agent's pick.
- ``br-pick-bob``: as ``br-pick``, her branch merged by Bob (a forge's merge button).
- ``ff-pick``: as ``br-pick``, main fast-forwarded to her branch (X and its revert on the
  first-parent line; round 63's ``lapse-pick`` through a push of both).
- ``forge-hand``: her approval (X, ``Update PLAN.yml``) and her revert made in the forge's
  web editor (committer ``GitHub``); the agent's pull request holds its cherry-pick of X and
  is rebase-merged by the forge (author, author date, subject kept; committer ``GitHub``:
  the hand that committed X).
- ``viamerge``: Alice approves on main (X); her revert of X is made on a branch she merges
  ``--no-ff``; the agent cherry-picks X.
- ``twice``: Alice approves (X), reverts, cherry-picks X back herself (X'), reverts again;
  the agent cherry-picks X'.
- ``pick-x``: Alice approves (X), reverts; the agent ``cherry-pick -x``s X.

Honest (asserted: runs once, valid in the audit, credited as said):

- ``merge-alice``: Alice approves (X), reverts; the agent puts a cherry-pick of X on its
  branch ``agent/m`` and ALICE merges that branch ``--no-ff`` (her merge is her decision).
- ``br-self``: as ``br-pick``, but ALICE cherry-picks X herself (her hand): runs, hers.
- ``revrev-bob``: Alice approves (X), reverts; Bob (an approver) ``git revert``s her revert.

Seen (FINDINGS.md, round 64): ``br-pick``, ``br-pick-seen`` and ``br-pick-bob`` BROKE: the
plan ran on her approval (approver alice, audit valid): a lapse made on a branch merged with a
merge commit leaves no mark, so the agent's cherry-pick of her approval counts.
``forge-hand`` BROKE: the lapse was marked (``status`` notes it), but the forge's
rebase-merge of the agent's pull request has the committer of her web-editor approval
(``GitHub``), so it reads as her own hand: ran on her approval, audit valid. Held:
``ff-pick`` (the same branch fast-forwarded), ``viamerge`` (the revert arriving by her merge),
``twice``, ``pick-x`` (never run); honest: ``merge-alice`` (credited to her merge),
``br-self`` (her own pick) and ``revrev-bob`` (credited to Bob) ran once, valid.

Fixed (2026-11-29): a decision lapses wherever the history shows it taken back before the
controller acted on it, on a merged branch too: where the merged branches are read one by one
(``Lifecycle.merged_authors``), a commit that sets a plan away from ``approved`` marks the
decision that set it (the newest commit of that file's history setting ``approved``, no status
change since: ``_side_lapse``, ``_approved_by``) lapsed, counted from the merge that brought
it in, as the branch's makings are (the controller's scans and the fresh-clone audit agree).
A decision the line never held is kept bound to no version or pause (``UNBOUND``). And a
lapsed decision comes back only in a commit its author committed herself (``_own_hand``):
the forge's or a maintainer's hand is everyone's they merge for. ``br-pick``,
``br-pick-seen``, ``br-pick-bob`` and ``forge-hand`` never run, no valid run; the honest ids
(her own pick, a merge of hers, Bob's revert of her revert) run as before. What this leaves
(docs/threat-model.md, "Accepted limits"): her own copy of a lapsed decision carried onto the
branch by the forge's rebase-merge is refused (make a new decision: ``plangate approve``).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab, cases, valid_runs
from policykit import DatedClock
from policykit import agent_plan as plan
from test_round2_execution_kit import shared

LAPSED = [
    "br-pick",
    "br-pick-seen",
    "br-pick-bob",
    "ff-pick",
    "viamerge",
    "twice",
    "pick-x",
    "forge-hand",
]
FORGE = ("GitHub", "noreply@github.com")
HONEST = ["merge-alice", "revrev-bob", "br-self"]
BROKEN: dict[str, object] = {}


def _build(root: Path) -> Lab:
    lab = Lab(root)
    c = DatedClock(lab)
    for v in [*LAPSED, *HONEST]:
        lab.write(v, plan(v))
    lab.git("add", "-A")
    c.git("commit", "-q", "-m", "agent plans", who=AGENT)
    c.run()
    # her review branches: approve, revert, merged into main by her
    picks: dict[str, str] = {}
    for v in ("br-pick", "br-pick-seen", "br-pick-bob", "ff-pick", "br-self"):
        c.git("checkout", "-q", "-b", f"alice/{v}")
        picks[v] = c.set(v, "approved")
        c.git("revert", "--no-edit", picks[v])
        c.git("checkout", "-q", "main")
        if v == "ff-pick":
            c.git("merge", "-q", "--ff-only", f"alice/{v}")
        else:
            who = BOB if v == "br-pick-bob" else ALICE
            c.git("merge", "-q", "--no-ff", "-m", f"merge alice/{v}", f"alice/{v}", who=who)
    # viamerge: approval on main, the revert through her branch
    picks["viamerge"] = c.set("viamerge", "approved")
    c.git("checkout", "-q", "-b", "alice/undo")
    c.git("revert", "--no-edit", picks["viamerge"])
    c.git("checkout", "-q", "main")
    c.git("merge", "-q", "--no-ff", "-m", "merge alice/undo", "alice/undo")
    # twice
    x = c.set("twice", "approved")
    c.git("revert", "--no-edit", x)
    c.git("cherry-pick", x, by=ALICE)
    picks["twice"] = lab.head()
    c.git("revert", "--no-edit", picks["twice"])
    # pick-x, merge-alice, revrev-bob: approve and revert on main
    undo = {}
    for v in ("pick-x", "merge-alice", "revrev-bob"):
        picks[v] = c.set(v, "approved")
        undo[v] = c.git("revert", "--no-edit", picks[v])
    # forge-hand: her approval and her revert made in the forge's web editor (committer
    # GitHub); the agent's pull request holding its cherry-pick of X is rebase-merged by the
    # forge (author, author date and subject kept, committer GitHub again)
    lab.set_status("forge-hand", "approved")
    lab.git("add", "-A")
    x = c.git("commit", "-q", "-m", "Update PLAN.yml", by=FORGE)
    c.git("revert", "--no-edit", x, by=FORGE)
    c.git("checkout", "-q", "-b", "agent/fh")
    c.git("cherry-pick", x, who=AGENT, by=AGENT)
    pr = lab.head()
    c.git("checkout", "-q", "main")
    c.git("cherry-pick", pr, who=AGENT, by=FORGE)
    # the agent brings hers back
    for v in ("br-pick", "br-pick-bob", "ff-pick", "viamerge", "twice"):
        c.git("cherry-pick", picks[v], who=AGENT, by=AGENT)
    c.git("cherry-pick", picks["br-self"], who=ALICE, by=ALICE)
    c.git("cherry-pick", "-x", picks["pick-x"], who=AGENT, by=AGENT)
    c.git("checkout", "-q", "-b", "agent/m")
    c.git("cherry-pick", picks["merge-alice"], who=AGENT, by=AGENT)
    c.git("checkout", "-q", "main")
    c.git("merge", "-q", "--no-ff", "-m", "merge agent/m", "agent/m", who=ALICE)
    c.git("revert", "--no-edit", undo["revrev-bob"], who=BOB)
    c.run()
    c.git("cherry-pick", picks["br-pick-seen"], who=AGENT, by=AGENT)
    c.run()
    c.run()
    _code, lab.report = lab.audit()  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r64-lapse", _build)


@pytest.mark.parametrize("vid", cases(LAPSED, LAPSED, BROKEN))  # type: ignore[arg-type]
def test_a_lapsed_approval_brought_back_by_another_hand_does_not_run(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)[:1500]
    assert valid_runs(lab.report, vid) == [], valid_runs(lab.report, vid)  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(HONEST, HONEST, BROKEN))  # type: ignore[arg-type]
def test_a_new_decision_by_an_approver_runs(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 1, lab.codes(vid)[:1500]
    runs = valid_runs(lab.report, vid)  # type: ignore[attr-defined]
    assert runs, lab.report  # type: ignore[attr-defined]
    want = {"merge-alice": ALICE[1], "revrev-bob": BOB[1], "br-self": ALICE[1]}[vid]
    assert runs[0]["approver"] == want, runs
