"""Round 63, approval side: round 62's replay rule against an approval she let LAPSE, and
against her honest decisions landing in threes, squashed, or across a merge.

docs/approvals.md: "An approval lapses when the plan stops saying `approved` before the
controller acted on it ... the plan is back where the approval was made"; "Replayed approvals":
the same decision (author, date, subject, plan, status) brought back "for another version or
pause" is a replay whoever carries it; another plan's decision under her author, date and
subject is hers when the hand that committed it committed her first decision of that second.
Neither sentence covers the same decision brought back for the SAME version and pause after
she took it back.

Lab (one, local mode, author and committer dates set with GIT_AUTHOR_DATE/GIT_COMMITTER_DATE,
no sleep): the agent commits one ``rec`` plan per id (tag = its slug); a pass freezes them.

Lapsed approvals (asserted: never runs; her approval was taken back by her):

- ``lapse-pick``: Alice approves (commit X, ``lgtm``), then ``git revert``s X herself (back to
  ``pending_approval``, before any pass); the agent ``git cherry-pick``s X (author, author date
  and subject hers, committer the agent).
- ``lapse-am``: the same with ``git format-patch -1 X | git am`` by the agent.
- ``lapse-seen``: the same pick after a pass that saw her revert.
- ``lapse-agent`` (control): the agent ``git revert``s her revert (author the agent).

Honest (asserted: runs once, audit valid):

- ``lapse-self``: Alice cherry-picks her own approval back after her revert.
- ``reapply-self``: Alice ``git revert``s her own revert ("Reapply").
- ``three-a``/``-b``/``-c``: three approvals of hers in one second (``lgtm``) on her review
  branch, re-created onto main by the forge's rebase-merge (committer ``GitHub``, committer
  dates 90, 91, 92 s later).
- ``rej3-a``/``-b``: with ``rej3-c`` REJECTED in the same second (``review``), forge
  rebase-merged; Bob approves ``rej3-c`` later: asserted ``rej3-c`` never runs.
- ``sq-a``/``sq-b``: her two approvals squash-merged by the forge (one commit, author Alice,
  committer GitHub, subject ``Approve (#12)``).
- ``xm-a``/``xm-b``: ``xm-a`` approved by her on main and ``xm-b`` on her branch in the same
  second (``lgtm``, both committed by her), the branch merged by the forge's merge button.

Seen: ``BROKEN`` below and FINDINGS.md, round 63: ``lapse-pick``, ``lapse-am``,
``lapse-seen`` ran on her approval she had reverted, audit valid. Held: ``lapse-agent``
(never runs), every honest id ran once (valid), ``rej3-c`` vetoed.

Fixed (2026-11-29): a decision that LAPSED (a later commit, by anyone, set the plan away from
the status it set before the controller acted on it) keeps that mark with its identity
(author, author date, subject, plan, status; the version and pause it was made for): the
same decision appearing again counts only when the hand that carries it is the hand that
committed it (her own cherry-pick, rebase or re-apply); another hand's copy is
``E_APPROVAL_REPLAYED`` (``controller.git.lifecycle.Lifecycle._note_lapse``,
``_seen_approval``). ``lapse-pick``, ``lapse-am`` and ``lapse-seen`` (the mark is kept in the
history index's memory across passes) never run, no valid run. ``lapse-self`` (her hand),
``reapply-self`` (a new commit of hers: another identity) and the forge's rebase-merges run.
One rule for the controller, ``plangate check`` and the audit. What this leaves
(docs/threat-model.md, "Accepted limits"): her approval committed by one hand, taken back, and
brought back by another hand of hers (a forge's rebase-merge of her cherry-pick) is refused.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab, cases, valid_runs
from policykit import agent_plan as plan
from policykit import dated_git, pass_at
from test_round2_execution_kit import shared

FORGE = ("GitHub", "noreply@github.com")
LAPSED = ["lapse-pick", "lapse-am", "lapse-seen", "lapse-agent"]
HONEST = [
    "lapse-self",
    "reapply-self",
    "three-a",
    "three-b",
    "three-c",
    "rej3-a",
    "rej3-b",
    "sq-a",
    "sq-b",
    "xm-a",
    "xm-b",
]
VETOED = ["rej3-c"]
#: Fixed (2026-11-29): lapse-pick, lapse-am, lapse-seen (see the docstring).
BROKEN: dict[str, object] = {}


def _approve(lab: Lab, slug: str, t: int, msg: str = "lgtm", status: str = "approved") -> str:
    lab.set_status(slug, status)
    lab.git("add", "-A")
    return dated_git(lab, t, "commit", "-q", "-m", msg)


def _build(root: Path) -> Lab:
    lab = Lab(root)
    t = int(time.time()) - 7200
    lab.git_date = f"@{t} +0000"
    for v in [*LAPSED, *HONEST, *VETOED]:
        lab.write(v, plan(v))
    lab.commit("agent plans", AGENT)
    lab.git_date = None
    t += 60
    pass_at(lab, t)
    base = lab.head()
    # lapsed approvals: hers, her revert, then someone brings hers back
    picks = {}
    for v in [*LAPSED, "lapse-self", "reapply-self"]:
        t += 30
        x = _approve(lab, v, t)
        picks[v] = (x, dated_git(lab, t + 5, "revert", "--no-edit", x))
    for v, by in (("lapse-pick", AGENT), ("lapse-self", ALICE)):
        t += 30
        dated_git(lab, t, "cherry-pick", picks[v][0], who=by, by=by)
    t += 30
    patch = lab.git("format-patch", "-1", "--stdout", picks["lapse-am"][0])
    dated_git(lab, t, "am", "-q", who=AGENT, by=AGENT, input=patch)
    t += 30
    dated_git(lab, t, "revert", "--no-edit", picks["lapse-agent"][1], who=AGENT)
    t += 30
    dated_git(lab, t, "revert", "--no-edit", picks["reapply-self"][1], who=ALICE)
    t += 30
    pass_at(lab, t)
    t += 30
    dated_git(lab, t, "cherry-pick", picks["lapse-seen"][0], who=AGENT, by=AGENT)
    # her review branches
    for group, decisions, msg in (
        ("three", {"a": "approved", "b": "approved", "c": "approved"}, "lgtm"),
        ("rej3", {"a": "approved", "b": "approved", "c": "rejected"}, "review"),
    ):
        t += 120
        lab.git("checkout", "-q", "-b", f"alice/{group}", base)
        shas = [_approve(lab, f"{group}-{s}", t, msg, st) for s, st in decisions.items()]
        lab.git("checkout", "-q", "main")
        for i, sha in enumerate(shas):
            dated_git(lab, t, "cherry-pick", "--allow-empty", sha, who=FORGE, late=90 + i, by=FORGE)
    t += 120
    lab.git("checkout", "-q", "-b", "alice/sq", base)
    _approve(lab, "sq-a", t)
    _approve(lab, "sq-b", t)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--squash", "alice/sq")
    dated_git(lab, t + 60, "commit", "-q", "-m", "Approve (#12)", by=FORGE)
    t += 120
    lab.git("checkout", "-q", "-b", "alice/xm", lab.head())
    _approve(lab, "xm-b", t)
    lab.git("checkout", "-q", "main")
    _approve(lab, "xm-a", t)
    dated_git(
        lab, t + 60, "merge", "-q", "--no-ff", "-m", "Merge pull request #13", "alice/xm", by=FORGE
    )
    t += 120
    pass_at(lab, t)
    t += 60
    lab.set_status("rej3-c", "approved")
    lab.git("add", "-A")
    dated_git(lab, t, "commit", "-q", "-m", "bob approves rej3-c", who=BOB)
    t += 60
    pass_at(lab, t)
    t += 60
    pass_at(lab, t)
    _code, lab.report = lab.audit()  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r63-lapse", _build)


@pytest.mark.parametrize("vid", cases(LAPSED, LAPSED, BROKEN))  # type: ignore[arg-type]
def test_a_lapsed_approval_brought_back_by_another_hand_does_not_run(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)[:1500]
    assert valid_runs(lab.report, vid) == [], valid_runs(lab.report, vid)  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(HONEST, HONEST, BROKEN))  # type: ignore[arg-type]
def test_her_own_decisions_run(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 1, lab.codes(vid)[:1500]
    assert valid_runs(lab.report, vid), lab.report  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(VETOED, VETOED, BROKEN))  # type: ignore[arg-type]
def test_her_rejection_in_a_triple_vetoes(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)[:1500]
    assert valid_runs(lab.report, vid) == [], valid_runs(lab.report, vid)  # type: ignore[attr-defined]
