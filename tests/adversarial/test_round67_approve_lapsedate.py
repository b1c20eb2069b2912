"""Round 67, approval side: round 66's lapse dating (docs/approvals.md, "Replayed approvals":
the lapse is dated the EARLIER of its author and committer dates, never past the reader's
clock nor the next controller commit; a copy is recognised by its carrier's author date; a
decision of hers "dated after the lapse and not a carrier's date is a new one, whoever
commits it") against lapses the AGENT dates far behind, so that another commit of hers that
made the same decision (never the carrier) looks newer than the lapse.

Lab (one, local mode, fake dates, no sleep): the agent commits one ``rec`` plan per id; a
pass freezes them. Then, before any further pass (except where said):

Lapsed, another hand brings it back (asserted: ``rec`` never ran for the id, no valid run in
the git-alone audit):

- ``early-other``: Alice approves the plan on her review branch (Y, never merged) and again
  on main (X, herself). The agent reverts X with author AND committer dates in 1990, then
  cherry-picks Y (her approval of the same version, dated before the agent's lapse was
  really made, but after the 1990 the lapse claims).
- ``early-other-a``: the same, the agent's revert with only its AUTHOR date in 1990
  (committer date now): the lapse is the earlier of the two.
- ``early-merge``: the same lapse (both dates 1990) made on the agent's branch and merged
  ``--no-ff`` by the agent (merge dated now); the agent picks Y.
- ``early-pick-x``: the agent's 1990 lapse of X (both dates); the agent cherry-picks X itself
  (the carrier's date is the mark).
- ``early-merge-both``: as ``early-merge``, the agent's merge commit dated 1990 too.
- ``pick-revert``: no date written by anyone: Alice approves (X1) and reverts it herself
  (R1); she approves the plan on her review branch (Y, never merged) and on main again (X2,
  a new decision of hers, after R1). The agent cherry-picks R1 (git keeps her old author
  date: a lapse of X2 dated before X2 and Y), then cherry-picks Y.
- ``tz-other``: Y authored (before the lapse) at ``+1400``; the agent's revert of X dated a
  minute later at ``-1200`` (its wall clock a day behind Y's); the agent picks Y.
- ``now-other``: the control: the agent's revert of X dated now; the agent picks Y (a
  decision of hers dated before the lapse: only her hand brings it back).
- ``tz-sec``: X authored at ``-1200``, her revert in the same second at ``+1400`` (one epoch
  second, two wall clocks twenty-six hours apart); the agent picks X.
- ``refreeze-pick``: Alice approves (X) and reverts X herself; the agent changes a param (a
  pass freezes v2) and changes it back (a pass freezes v1 again: the same frozen hash); the
  agent picks X.
- ``ignore-date``: Alice approves (X) and reverts X; the agent picks X and re-dates the copy
  with ``git rebase --ignore-date`` (git's own option: author Alice, author date now).

Honest (asserted: ran once, valid in the audit, credited to Alice):

- ``refreeze-web``: as ``refreeze-pick``, then Alice approves v1 again in the forge's web
  editor (author Alice, committer ``GitHub``, dated now).
- ``early-self``: the agent's 1990 lapse of X; Alice approves again in a commit of her own.

Seen (FINDINGS.md, round 67): ``early-other``, ``early-other-a``, ``early-merge-both`` and
``pick-revert`` BROKE (slip): the lapse is dated the earlier of its author and committer
dates and "a lapse dated too early bars less"; but the one who dates it is whoever sets the
plan away, here the agent: its revert of X dated 1990 (both dates, or the author date
alone; on its branch with its merge dated 1990 too), or, with no date written at all, its
cherry-pick of Alice's own OLD revert R1 (git keeps R1's author date) as the lapse of her
newer approval X2, makes her other approval of the same version (Y, on her unmerged review
branch, made before the lapse) "a decision dated after the lapse": the agent's cherry-pick
of Y ran on her approval (approver alice), the git-alone and fresh-clone audits valid. The
same pick after the agent's revert dated now (``now-other``) is ``E_APPROVAL_REPLAYED``.
``ignore-date`` BROKE (slip): the agent's cherry-pick of her lapsed X re-dated by git's own
``rebase --ignore-date`` (author Alice, author date now: no carrier's date, after the
lapse) ran on her approval, audit valid (its commit is what a forged-authorship commit would
be; git's option wrote it). Held: ``early-merge`` (the 1990 lapse on the agent's branch,
merged by a merge dated now: the merge's date bounds it), ``early-pick-x`` (the carrier's
date), ``now-other``, ``tz-sec``, ``tz-other`` (zones: epoch seconds compared),
``refreeze-pick`` (v1 re-frozen after a detour through v2: the agent's pick of X is
refused); honest, ran once, hers: ``refreeze-web``, ``early-self``.

Fixed (2026-11-30): ``early-other``, ``early-other-a``, ``early-merge-both`` and
``pick-revert``: both dates of a commit are its committer's to write, so a lapse the
decision's author did not commit herself (the agent's revert, its cherry-pick of her old
revert) is dated by what the history proves it existed by: the first controller commit after
it on the branch, and until one the reader's clock (``Lifecycle._lapse_time``: ``OPEN``;
``_bound_open_lapses``; ``_lapsed_decision``); its own dates count neither way. Her own lapse
keeps round 66's rule. The agent's pick of Y is ``E_APPROVAL_REPLAYED``; the controller, the
git-alone and the fresh-clone audits agree. ``ignore-date`` is re-scoped, not special-cased:
the re-dated copy (author Alice, author date now, committer the agent) is what a commit with
her authorship forged looks like, out of scope on an unprotected branch (docs/threat-model.md,
"Accepted limits"); ``approval.require_signed`` is the defence, and with it the copy is refused
``E_SIGNATURE_INVALID`` (a second lab, signed approvals:
:func:`test_a_re_dated_copy_is_refused_when_approvals_must_be_signed`). The unsigned id
stays in the lab for the controller/audit agreement check only.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, cases, valid_runs
from policykit import LapseClock, with_audits
from policykit import agent_plan as plan
from signkit import sign, signed_lab, signed_run
from test_round2_execution_kit import shared

FORGE = ("GitHub", "noreply@github.com")
OLD = 631152000  # 1990-01-01
LAPSED = [
    "early-other",
    "early-other-a",
    "early-merge",
    "now-other",
    "early-pick-x",
    "early-merge-both",
    "pick-revert",
    "tz-other",
    "tz-sec",
    "refreeze-pick",
]
HONEST = ["refreeze-web", "early-self"]
#: Forged authorship (docs/threat-model.md): out of scope unsigned; ``require_signed`` refuses it
#: (:func:`test_a_re_dated_copy_is_refused_when_approvals_must_be_signed`).
FORGED = ["ignore-date"]
BROKEN: dict[str, object] = {}


def _param(lab: Lab, slug: str, on: bool) -> None:
    path = lab.repo / "plans" / slug / "PLAN.yml"
    a, b = f'{{tag: "{slug}"}}', f'{{tag: "{slug}", n: "2"}}'
    path.write_text(path.read_text().replace(a, b) if on else path.read_text().replace(b, a))


def _build(root: Path) -> Lab:
    lab = Lab(root)
    c = LapseClock(lab)
    for v in [*LAPSED, *HONEST, *FORGED]:
        lab.write(v, plan(v))
    lab.git("add", "-A")
    c.git("commit", "-q", "-m", "agent plans")
    c.run()
    old = f"@{OLD} +0000"
    x: dict[str, str] = {}
    y: dict[str, str] = {}
    # re-frozen identical versions first (they need passes)
    for v in ("refreeze-pick", "refreeze-web"):
        x[v] = c.set(v, "approved")
        c.git("revert", "--no-edit", x[v], who=ALICE, by=ALICE)
        _param(lab, v, True)
        lab.git("add", "-A")
        c.git("commit", "-q", "-m", f"agent: tweak {v}")
    c.run()
    for v in ("refreeze-pick", "refreeze-web"):
        _param(lab, v, False)
        lab.git("add", "-A")
        c.git("commit", "-q", "-m", f"agent: untweak {v}")
    c.run()
    c.git("cherry-pick", x["refreeze-pick"], who=AGENT, by=AGENT)
    c.set("refreeze-web", "approved", msg="Update PLAN.yml", by=FORGE)
    # pick-revert: her own old revert, picked by the agent as a lapse of her newer approval
    x1 = c.set("pick-revert", "approved")
    r1 = c.git("revert", "--no-edit", x1, who=ALICE, by=ALICE)
    c.git("checkout", "-q", "-b", "alice/pick-revert", "main")
    y["pick-revert"] = c.set("pick-revert", "approved", msg="lgtm (review)")
    c.git("checkout", "-q", "main")
    c.set("pick-revert", "approved", msg="approve again")
    c.git("cherry-pick", r1)
    c.git("cherry-pick", y["pick-revert"])
    # her review-branch approvals (Y), never merged, then her approvals on main (X)
    for v in (
        "early-other",
        "early-other-a",
        "early-merge",
        "now-other",
        "early-merge-both",
        "tz-other",
    ):
        c.git("checkout", "-q", "-b", f"alice/{v}", "main")
        zone = f"@{c.t + 20} +1400" if v == "tz-other" else None
        y[v] = c.set(v, "approved", msg="lgtm (review)", adate=zone, cdate=zone)
        c.git("checkout", "-q", "main")
    for v in (
        "early-other",
        "early-other-a",
        "early-merge",
        "now-other",
        "early-self",
        "early-pick-x",
        "early-merge-both",
        "tz-other",
    ):
        x[v] = c.set(v, "approved", msg="approve")
    # the agent's lapses
    c.git("revert", "--no-edit", x["early-other"], adate=old, cdate=old)
    c.git("revert", "--no-edit", x["early-other-a"], adate=old)
    c.git("revert", "--no-edit", x["early-self"], adate=old, cdate=old)
    c.git("revert", "--no-edit", x["early-pick-x"], adate=old, cdate=old)
    c.git("cherry-pick", x["early-pick-x"])
    c.git("revert", "--no-edit", x["now-other"])
    c.git("checkout", "-q", "-b", "agent/em", "main")
    c.git("revert", "--no-edit", x["early-merge"], adate=old, cdate=old)
    c.git("checkout", "-q", "main")
    c.git("merge", "-q", "--no-ff", "-m", "merge agent/em", "agent/em")
    c.git("checkout", "-q", "-b", "agent/emb", "main")
    c.git("revert", "--no-edit", x["early-merge-both"], adate=old, cdate=old)
    c.git("checkout", "-q", "main")
    c.git("merge", "-q", "--no-ff", "-m", "merge agent/emb", "agent/emb", adate=old, cdate=old)
    c.t += 20
    c.git("revert", "--no-edit", x["tz-other"], adate=f"@{c.t} -1200", cdate=f"@{c.t} -1200")
    for v in (
        "early-other",
        "early-other-a",
        "early-merge",
        "now-other",
        "early-merge-both",
        "tz-other",
    ):
        c.git("cherry-pick", y[v])
    c.set("early-self", "approved", msg="approve again")
    # tz-sec: one epoch second, two zones
    c.t += 20
    x["tz-sec"] = c.set("tz-sec", "approved", adate=f"@{c.t} -1200", cdate=f"@{c.t} -1200")
    c.git(
        "revert",
        "--no-edit",
        x["tz-sec"],
        who=ALICE,
        by=ALICE,
        adate=f"@{c.t - 20} +1400",
        cdate=f"@{c.t - 20} +1400",
    )
    c.git("cherry-pick", x["tz-sec"])
    # ignore-date: her approval and her revert; the agent's pick re-dated by git's rebase
    x["ignore-date"] = c.set("ignore-date", "approved")
    c.git("revert", "--no-edit", x["ignore-date"], who=ALICE, by=ALICE)
    c.git("cherry-pick", x["ignore-date"])
    c.git("rebase", "-q", "--ignore-date", "HEAD~1")
    lab.picked = lab.git("log", "-1", "--format=%an %ad %cn", "HEAD")  # type: ignore[attr-defined]
    c.run()
    c.run()
    return with_audits(lab, root)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r67-lapsedate", _build)


@pytest.mark.parametrize("vid", cases(LAPSED, LAPSED, BROKEN))  # type: ignore[arg-type]
def test_a_lapsed_decision_brought_back_by_another_hand_does_not_run(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)[:1500]
    assert valid_runs(lab.report, vid) == [], valid_runs(lab.report, vid)  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(HONEST, HONEST, BROKEN))  # type: ignore[arg-type]
def test_a_new_decision_of_hers_runs(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 1, lab.codes(vid)[:1500]
    runs = valid_runs(lab.report, vid)  # type: ignore[attr-defined]
    assert len(runs) == 1 and runs[0]["approver"] == ALICE[1], runs


@pytest.mark.parametrize("vid", [*LAPSED, *HONEST, *FORGED])
def test_a_fresh_clones_audit_agrees_with_the_controller(lab: Lab, vid: str) -> None:
    fresh = valid_runs(lab.fresh, vid)  # type: ignore[attr-defined]
    assert len(fresh) == len(lab.calls(vid)), (fresh, lab.calls(vid))
    assert len(valid_runs(lab.report, vid)) == len(fresh)  # type: ignore[attr-defined]


def _signed(root: Path) -> Lab:
    lab, _expires = signed_lab(root, valid_for=3600)
    lab.write("ignore-date", plan("ignore-date"))
    lab.git("add", "-A")
    lab.git("commit", "-q", "-m", "agent plan", who=AGENT)
    signed_run(lab)
    sign(lab, "ignore-date", "alice", ALICE, "approved")
    # her revert dated two minutes back (her own lapse: the earlier of its dates), so the
    # re-dated copy is surely "after" it and only the signature rule can refuse it
    lab.git("revert", "--no-commit", "HEAD", who=ALICE)
    back = f"@{int(time.time()) - 120} +0000"
    lab.git("commit", "-q", "-m", "revert her approval", f"--date={back}", who=ALICE)
    signed_run(lab)
    lab.git("cherry-pick", "HEAD~1", who=AGENT)
    # re-dated as ``rebase --ignore-date`` does (author Alice, a fresh author date), but two
    # seconds on: git's option takes the wall clock, which can fall in her approval's second,
    # and a copy with her author, date and subject is refused as a copy before any signature
    # check (the property holds either way; this lab checks the signature rule)
    date = f"@{int(time.time()) + 2} +0000"
    ahead = {**lab.env(AGENT), "GIT_COMMITTER_DATE": date}
    subprocess.run(
        ["git", "commit", "-q", "--amend", "--no-edit", f"--date={date}"],
        cwd=lab.repo, env=ahead, check=True,
    )  # fmt: skip
    lab.picked = lab.git("log", "-1", "--format=%an %cn %G?", "HEAD")  # type: ignore[attr-defined]
    signed_run(lab)
    signed_run(lab)
    return lab


@pytest.fixture(scope="module")
def signed(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r67-lapsedate-signed", _signed)


def test_a_re_dated_copy_is_refused_when_approvals_must_be_signed(signed: Lab) -> None:
    """``ignore-date`` under ``approval.require_signed`` (the defence against forged
    authorship): git's re-dated copy carries no signature of hers, and is refused."""
    assert signed.picked.split()[-1] == "N", signed.picked  # type: ignore[attr-defined]
    assert signed.calls("ignore-date") == [], signed.codes("ignore-date")[:1500]
    assert "E_SIGNATURE_INVALID" in signed.codes("ignore-date"), signed.codes("ignore-date")
