"""Round 60, honest approvals and rejections caught by the replay rule's approval identity:
two commits of one approver with the same author, author date (to the second) and subject.

docs/approvals.md, "Replayed approvals": an approval is ``E_APPROVAL_REPLAYED`` when "it has
the author, author date and subject of an approval already seen, of this plan or any other,
and a committer date of its own (git moves it on every replay)"; "A rejection or abort
re-created so is ignored too". But an approver's own honest commits can share all three: a
script (or a quick hand) approving two plans in two commits within one second with one
stock message (``lgtm``), then ``git pull --rebase`` before pushing because the controller
pushed meanwhile (git keeps each author date and gives each a new committer date: the
shape of a replay, made by nobody but her).

Lab (one, local mode): the agent commits plans ``<v>-a`` and ``<v>-b`` per variant; a pass
freezes them. Alice's commits are then dated with ``GIT_AUTHOR_DATE``/``GIT_COMMITTER_DATE``
(no sleeping):

- ``plain``: ``-a`` then ``-b`` approved in two commits ``lgtm``, one author second, each
  committer date equal to it (no rebase). Asserted: both run once, audit valid.
- ``rebased``: the same, committer dates 40 s and 41 s later (her ``pull --rebase``).
  Asserted: both run once, audit valid.
- ``empty``: ``rebased`` with empty messages (``--allow-empty-message``). Asserted: both run.
- ``apart`` (control): ``lgtm`` both, author dates a minute apart. Asserted: both run.
- ``reject``: Alice approves ``-a`` (``review``) and REJECTS ``-b`` (``review``) in the same
  second, rebased; then Bob approves ``-b``. Asserted: ``-b`` never runs (her rejection
  vetoes it), ``-a`` runs once.

Seen: three broke. ``rebased-b`` and ``empty-b``: her second approval is refused
``E_APPROVAL_REPLAYED: <b> repeats the approval <a> (same author, time and subject): an
approval counts once, in the commit that made it``; ``-b`` never runs (``-a`` ran). ``reject-b``:
her honest rejection is ignored as a re-creation of her approval of ``-a``; Bob's later
approval starts ``-b`` and ``rec`` runs it; the fresh-clone audit lists the run valid (it flags
the rejection ``withdraw-not-allowed``: "a commit that re-creates ... not a withdrawal of this
plan; ignored"). Held: ``plain`` (committer date = author date: both run), ``apart``, ``-a`` of
every pair. The rule reads "same author, author second and subject, committer date moved" as a
replay, which an approver's own ``pull --rebase`` of two quick commits also is.
Fix direction: an approval identity seen in the same push (or the same approver's commits
that the branch holds both of, neither a copy of the other's tree change: different plans,
different status changes) is no replay; compare what the commit changes (the plan and status
it sets), not only author, date and subject; or include the tree change in the identity.

Fixed (2026-11-29): an approval's identity includes what the commit decides (the plan, the
status it sets, the version: ``controller.git.lifecycle._decision``). The same decision
brought back (a new committer date) for another pause is still ``E_APPROVAL_REPLAYED``;
another decision under the same author, author date and subject is a replay only when carried,
its committer not its author (a cherry-pick, ``git am``, ``merge -C`` by someone else: rounds
4, 6 and 18 still hold). Her own rebased commits are hers: ``rebased-b`` and ``empty-b`` run,
and ``reject-b``'s rejection vetoes (Bob's approval then starts nothing). One rule for the
controller, ``plangate check`` and the audit (all read the history index's lifecycle).
"""

from __future__ import annotations

from pathlib import Path

import pairkit
import pytest
from advkit import ALICE, Lab, cases, valid_runs
from test_round2_execution_kit import shared

#: Fixed (2026-11-29): rebased-b, empty-b, reject-b (see the docstring).
BROKEN: dict[str, object] = {}

VIDS = ["plain", "rebased", "empty", "apart", "reject"]


def _build(root: Path) -> Lab:
    lab, t = pairkit.pairs_lab(root, VIDS, 3600)
    t += 60
    for v, msg, late, gap in (
        ("plain", "lgtm", 0, 0),
        ("rebased", "lgtm", 40, 0),
        ("empty", "", 40, 0),
        ("apart", "lgtm", 0, 60),
    ):
        t += 120
        lab.set_status(f"{v}-a", "approved")
        pairkit.commit_dated(lab, ALICE, msg, t, t + late)
        lab.set_status(f"{v}-b", "approved")
        pairkit.commit_dated(lab, ALICE, msg, t + gap, t + gap + late + (1 if late else 0))
    t += 120
    lab.set_status("reject-a", "approved")
    pairkit.commit_dated(lab, ALICE, "review", t, t + 40)
    lab.set_status("reject-b", "rejected")
    pairkit.commit_dated(lab, ALICE, "review", t, t + 41)
    pairkit.second_look(lab, t, "reject-b")
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r60-samesecond", _build)


HONEST = [f"{v}-{s}" for v in VIDS[:4] for s in "ab"] + ["reject-a"]


@pytest.mark.parametrize("vid", cases(HONEST, HONEST, BROKEN))  # type: ignore[arg-type]
def test_her_honest_approval_runs(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 1, lab.codes(vid)[:1500]
    assert valid_runs(lab.report, vid), lab.report  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(["reject-b"], ["reject-b"], BROKEN))  # type: ignore[arg-type]
def test_her_rejection_vetoes(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)[:1500]
    assert valid_runs(lab.report, vid) == [], valid_runs(lab.report, vid)  # type: ignore[attr-defined]
