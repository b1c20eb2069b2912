"""Round 62, approval side: round 60's replay rule against rebases an approver does not make
herself (a forge's "rebase and merge", a teammate rebasing her branch) and re-applications she
makes (her own cherry-pick, ``commit --amend``).

docs/approvals.md, "Replayed approvals": an approval with "the author, author date and
subject of an approval already seen and a committer date of its own" is a replay when it
decides the same for another pause, "or it decides something else and is carried: its
committer is not its author (a cherry-pick, ``git am``, ``merge -C`` or ``rebase -r`` by
someone else)"; "Her own commits, committed by her, are her own decisions: two plans approved
in one second with one stock message (``lgtm``), or one approved and another rejected, then
``git pull --rebase``d, are two approvals, and the rejection counts (round 60)".

But a pull request merged by the forge's "rebase and merge" (GitHub, Gitea, GitLab's
semi-linear merge) re-creates every commit of the branch with the forge (or the maintainer who
clicked) as committer and a new committer date, author and author date kept: git writes
exactly what a cherry-pick by someone else writes. An approver's review branch (two plans
approved in one second with ``lgtm``; one approved and one rejected with ``review``) merged so
is two decisions of hers that nobody replayed.

Lab (one, local mode, commit dates set with ``GIT_AUTHOR_DATE``/``GIT_COMMITTER_DATE``, no
sleep): the agent commits plans ``<v>-a`` and ``<v>-b`` per variant; a pass freezes them.
Alice's two commits are made on a branch (author = committer = Alice, one author second), then
re-created onto main with ``git cherry-pick`` as each variant's re-creator (committer dates 90 s
later):

- ``forge``: ``-a`` and ``-b`` approved (``lgtm``), re-created by ``GitHub
  <noreply@github.com>`` (the forge's rebase-merge). Asserted: both run once, audit valid.
- ``maint``: the same re-created by Bob (a maintainer's ``git rebase main`` before merging).
  Asserted: both run once, audit valid.
- ``forge-rej``: ``-a`` approved and ``-b`` REJECTED (``review``), re-created by the forge;
  then Bob approves ``-b``. Asserted: ``-b`` never runs (her rejection vetoes), ``-a`` runs.
- ``web``: ``-a`` and ``-b`` approved in the forge's web editor (author Alice, committer the
  forge, its default subject ``Update PLAN.yml``) in one second, each committer date equal to
  its author date; ``web-late``: the second one's committer date a second later (the forge's
  API). Asserted: both run.
- ``self-pick`` (control): the same as ``forge`` re-created by Alice herself. Asserted: both
  run.
- ``amend`` (control): ``-a`` and ``-b`` approved on main (``lgtm``, one second), then Alice
  ``commit --amend``s the second (committer date moved). Asserted: both run.

Seen: four broke (FINDINGS.md, round 62): ``forge-b``, ``maint-b`` and ``web-late-b`` (her
second approval ``E_APPROVAL_REPLAYED``, never runs) and ``forge-rej-b`` (her rejection
ignored as a replay; Bob's later approval ran ``-b``, the audit called it valid).

Fixed (2026-11-29): a replay is judged by the decision, not by who committed it. The same
decision (author, author date, subject, plan and status) already on the branch, brought back
for another version or pause, is a replay whoever carries it (round 6's ``skew-version``
included). A decision about another plan under the same author, date and subject is her own
when the hand that committed it is the hand that put her first decision of that second on
the branch: her own commits, a forge's rebase-merge, a maintainer's rebase, the web editor
commit them all alike (``controller.git.lifecycle.Lifecycle._replayed``). Moved by another
hand (round 4's ``git am --directory`` by the agent) it is still a replay, and so is a merge
re-created by someone else (round 18's ``veto``: no forge re-creates a merge). What this
leaves (docs/threat-model.md, "Accepted limits"): her decision committed by herself and
another of the same second and subject landing through a forge's rebase-merge.
"""

from __future__ import annotations

from pathlib import Path

import pairkit
import pytest
from advkit import ALICE, BOB, Lab, cases, valid_runs
from test_round2_execution_kit import shared

FORGE = ("GitHub", "noreply@github.com")
#: Fixed (2026-11-29): forge-b, maint-b, web-late-b, forge-rej-b (see the docstring).
BROKEN: dict[str, object] = {}

PICKED = {"forge": FORGE, "maint": BOB, "forge-rej": FORGE, "self-pick": ALICE}
WEB = {"web": 0, "web-late": 1}
VIDS = [*PICKED, "amend", *WEB]


def _commit(lab: Lab, msg: str, t: int, by: tuple[str, str] | None = None, late: int = 0) -> str:
    pairkit.commit_dated(lab, ALICE, msg, t, t + late, by)
    return lab.head()


def _build(root: Path) -> Lab:
    lab, t = pairkit.pairs_lab(root, VIDS, 7200)
    lab.git_date = None
    base = lab.head()
    for v, by in PICKED.items():
        t += 120
        lab.git("checkout", "-q", "-b", f"alice/{v}", base)
        second = "rejected" if v == "forge-rej" else "approved"
        msg = "review" if v == "forge-rej" else "lgtm"
        lab.set_status(f"{v}-a", "approved")
        one = _commit(lab, msg, t)
        lab.set_status(f"{v}-b", second)
        two = _commit(lab, msg, t)
        lab.git("checkout", "-q", "main")
        for i, sha in enumerate((one, two)):
            with pairkit.dated(lab, t, t + 90 + i, by):
                lab.git("cherry-pick", "--allow-empty", sha, who=by)
    t += 120
    lab.set_status("amend-a", "approved")
    _commit(lab, "lgtm", t)
    lab.set_status("amend-b", "approved")
    _commit(lab, "lgtm", t)
    with pairkit.dated(lab, t, t + 50):
        lab.git("commit", "-q", "--amend", "--no-edit", who=ALICE)
    for v, late in WEB.items():
        t += 120
        lab.set_status(f"{v}-a", "approved")
        _commit(lab, "Update PLAN.yml", t, FORGE)
        lab.set_status(f"{v}-b", "approved")
        _commit(lab, "Update PLAN.yml", t, FORGE, late)
    pairkit.second_look(lab, t, "forge-rej-b")
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r62-forgerebase", _build)


HONEST = [f"{v}-{s}" for v in VIDS for s in "ab" if f"{v}-{s}" != "forge-rej-b"]


@pytest.mark.parametrize("vid", cases(HONEST, HONEST, BROKEN))  # type: ignore[arg-type]
def test_her_approval_rebased_by_someone_else_runs(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 1, lab.codes(vid)[:1500]
    assert valid_runs(lab.report, vid), lab.report  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(["forge-rej-b"], ["forge-rej-b"], BROKEN))  # type: ignore[arg-type]
def test_her_rebased_rejection_vetoes(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)[:1500]
    assert valid_runs(lab.report, vid) == [], valid_runs(lab.report, vid)  # type: ignore[attr-defined]
