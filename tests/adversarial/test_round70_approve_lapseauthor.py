"""Round 70, approval side: round 69's lapse dating (docs/approvals.md, "When the lapse was
made": only a lapse she WROTE and COMMITTED, author and committer her identity, aliases
included, is dated by its own dates, the earlier of the two; any other, one she only committed
included, is another hand's, dated by the next controller commit). Lapses whose author is her
name written by the agent (``--author``), mixed aliases, and honest flows refused more than
once.

Lab (one, local mode, fake dates, no sleep): ``identity_aliases`` names
``a.smith@corp.example`` as Alice and folds plus tags of ``*@example.com``. The agent commits
one ``rec`` plan per id; P0 freezes them, P1 freezes a filler plan (a controller commit).
Alice approves each plan on main (X); for the lapsed ids she also approved the same version
on her unmerged review branch (Y), after P1 and before the lapse. ``old`` is 1990.

Lapsed, then the agent cherry-picks Y (asserted: ``rec`` never ran, no valid run in the
controller-side and fresh-clone audits):

- ``fa-agent``: the agent reverts X with ``--author "Alice <alice@example.com>"``, both dates
  1990, committer the agent (a claimed author, another hand's commit).
- ``fa-alias``: the same with the author ``a.smith@corp.example`` (her alias).
- ``fa-pick``: the agent's revert with her name as author, both dates 1990, on its branch;
  Alice cherry-picks it onto main herself (committer Alice now; author "Alice", 1990).
- ``fa-amend``: the same revert; Alice checks out the agent's branch, ``commit --amend
  --no-edit`` (say to re-run hooks), fast-forwards main.
- ``fa-rebase``: the same revert; Alice rebases the agent's branch onto main and
  fast-forwards.
- ``fa-am``: the same revert applied by Alice with ``format-patch | git am``.
- ``fa-plus``: the agent's revert with author ``alice+bot@example.com`` (a plus tag of hers,
  1990), picked onto main by Alice.
- ``fa-cdi`` (the accepted limit, added with the fix): the same revert; Alice rebases the
  agent's branch with ``--committer-date-is-author-date`` and fast-forwards: author "Alice"
  1990, committer Alice 1990, exactly a commit she made in 1990 (docs/threat-model.md,
  "Accepted limits"). A strict xfail of class ``limit``; under ``approval.require_signed`` the
  agent's pick of Y carries no signature of hers and is refused (the signed lab below).

Honest:

- ``mix-a`` / ``mix-b``: Alice reverts X herself with author ``a.smith@corp.example`` and
  committer ``alice+laptop@example.com`` (``mix-a``) or the reverse (``mix-b``), then
  re-approves in the forge's web editor (committer the forge) before P2. Asserted: ran at P2,
  approver alice (her own lapse: dated by its dates).
- ``web-twice``: she reverts X in the forge's web editor (author Alice, committer the forge:
  another hand's lapse), re-approves in the web editor before P2 (the documented one refusal,
  ``E_APPROVAL_REPLAYED``), and again after it. Asserted: not run at P2, ran at P3.
- ``agent-twice``: the agent reverts X; her web-editor re-approval before P2 (refused once),
  and again after it. Asserted: not run at P2, ran at P3.

Seen (round 70): ``fa-pick``, ``fa-amend``, ``fa-rebase``, ``fa-am``, ``fa-plus`` BROKE (slip):
the agent writes its revert of X with HER name as author (``--author``, or her plus-tag
address), both dates 1990, on its branch; Alice brings it onto main with her own hand
(cherry-pick, amend, rebase, ``am``): author "Alice" 1990, committer Alice now, so a lapse "she
wrote and committed", dated the earlier of its dates, 1990; her review-branch approval Y (made
before the lapse) then reads as a new decision and the agent's cherry-pick of Y RAN (approver
alice, the controller-side and fresh-clone audits valid). The author field is the agent's claim
and its date the agent's word (the committer, her real hand, is no forgery; with
``require_signed`` her own signature would cover the claim, not tested here). Should: a lapse
she committed is dated by no date she did not write: her committer date (or the next controller
commit), never an author date she cannot be shown to have written. Held: ``fa-agent``,
``fa-alias`` (the claimed author committed by the agent: another hand's). Honest ``mix-a``,
``mix-b`` (author and committer two different aliases of hers) ran at once; ``web-twice``,
``agent-twice`` were refused once (``E_APPROVAL_REPLAYED``, documented) and ran on her next
web-editor approval. The fresh-clone audit agreed with the controller on every id.

Fixed (2026-11-30): ``fa-pick``, ``fa-amend``, ``fa-rebase``, ``fa-am``, ``fa-plus``. A lapse
is dated by the words of the hand that put it on the branch (``Lifecycle._lapse_time``): one
she committed by its COMMITTER date (her word, never past the reader's clock nor the next
controller commit), never by its author date, a claim anyone writes; a committer date that is
a copy of the author date of a commit someone else wrote (``--committer-date-is-author-date``,
``Lifecycle._carried_date``) and a lapse she did not commit are another hand's (:data:`OPEN`,
dated by the next controller commit). Her pick, amend, rebase or ``am`` of the agent's revert
claiming her name is dated now, so Y, made before it, is the lapsed decision: the agent's
pick of it is ``E_APPROVAL_REPLAYED``. Left: ``fa-cdi`` (an accepted limit, above).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, cases, valid_runs, xfail
from policykit import LapseClock, config_audits, filler, lapse_plans, review_approvals
from policykit import agent_plan as plan
from signkit import signed_lab, signed_run
from test_round2_execution_kit import shared

FORGE = ("GitHub", "noreply@github.com")
SMITH = ("A. Smith", "a.smith@corp.example")
LAPTOP = ("Alice", "alice+laptop@example.com")
BOT_TAG = ("Alice", "alice+bot@example.com")
OLD = 631152000  # 1990-01-01
LAPSED = ["fa-agent", "fa-alias", "fa-pick", "fa-amend", "fa-rebase", "fa-plus", "fa-am", "fa-cdi"]
HONEST_NOW = ["mix-a", "mix-b"]
HONEST_LATER = ["web-twice", "agent-twice"]
ALL = [*LAPSED, *HONEST_NOW, *HONEST_LATER]
_WHY = (
    "the agent's revert of X written with {author} as author, both dates 1990, brought onto "
    "main by Alice herself ({how}): a lapse 'she wrote and committed', dated 1990, so her "
    "review-branch approval Y (made before the lapse) counts as a new decision and the "
    "agent's cherry-pick of Y RAN, approver alice, both audits valid; should: the claimed "
    "author's date is the agent's word (another hand's lapse, dated by the next controller "
    "commit), E_APPROVAL_REPLAYED"
)
BROKEN: dict[str, object] = {
    "fa-cdi": xfail(
        "limit",
        _WHY.format(author="her name", how="git rebase --committer-date-is-author-date")
        + "; git holds nothing to tell it from her own commit made in 1990 (docs/threat-model"
        ".md, Accepted limits; require_signed refuses the pick: the signed lab)",
    ),
}
ALIASES = """\
identity_aliases:
  plus_tags: ["*@example.com"]
  people: [[alice@example.com, a.smith@corp.example]]
"""


def _build(root: Path) -> Lab:
    lab = Lab(root, approval=ALIASES)
    c = LapseClock(lab)
    lapse_plans(c, ALL)  # P0, P1
    old = f"@{OLD} +0000"
    x: dict[str, str] = {}
    y = review_approvals(c, LAPSED)
    for v in ALL:
        x[v] = c.set(v, "approved", msg="approve")

    def forged_revert(v: str, author: tuple[str, str] = ALICE) -> None:
        c.git("revert", "--no-edit", x[v], who=author, by=AGENT, adate=old, cdate=old)

    # the agent's claimed-author reverts, committed by the agent on main
    forged_revert("fa-agent")
    forged_revert("fa-alias", SMITH)
    # fa-pick / fa-plus: the agent's branch, Alice cherry-picks the revert onto main
    for v, author in (("fa-pick", ALICE), ("fa-plus", BOT_TAG)):
        c.git("checkout", "-q", "-b", f"agent/{v}", "main")
        forged_revert(v, author)
        rev = lab.head()
        c.git("checkout", "-q", "main")
        filler(c, v)
        c.git("cherry-pick", rev, who=ALICE, by=ALICE)
    lab.shape = lab.git("log", "-1", "--format=%ae %ad|%ce %cd", "--date=unix")  # type: ignore[attr-defined]
    # fa-am: Alice applies the agent's revert with format-patch | git am
    c.git("checkout", "-q", "-b", "agent/fa-am", "main")
    forged_revert("fa-am")
    fa_patch = lab.git("format-patch", "-1", "--stdout", "HEAD")
    c.git("checkout", "-q", "main")
    c.feed(fa_patch, "am", "-q", who=ALICE, by=ALICE)
    # fa-amend: Alice amends the agent's revert, fast-forwards
    c.git("checkout", "-q", "-b", "agent/fa-amend", "main")
    forged_revert("fa-amend")
    c.git("commit", "-q", "--amend", "--no-edit", who=ALICE, by=ALICE, adate=old)
    c.git("checkout", "-q", "main")
    c.git("merge", "-q", "--ff-only", "agent/fa-amend", who=ALICE, by=ALICE)
    # fa-rebase: Alice rebases the agent's branch onto a newer main
    c.git("checkout", "-q", "-b", "agent/fa-rebase", "main")
    forged_revert("fa-rebase")
    c.git("checkout", "-q", "main")
    filler(c, "fa-rebase")
    c.git("checkout", "-q", "agent/fa-rebase")
    c.git("rebase", "-q", "main", who=ALICE, by=ALICE)
    c.git("checkout", "-q", "main")
    c.git("merge", "-q", "--ff-only", "agent/fa-rebase", who=ALICE, by=ALICE)
    # fa-cdi: the same, rebased with --committer-date-is-author-date (the accepted limit)
    c.git("checkout", "-q", "-b", "agent/fa-cdi", "main")
    forged_revert("fa-cdi")
    c.git("checkout", "-q", "main")
    filler(c, "fa-cdi")
    c.git("checkout", "-q", "agent/fa-cdi")
    c.git("rebase", "-q", "--committer-date-is-author-date", "main", who=ALICE, by=ALICE)
    lab.cdi_shape = lab.git("log", "-1", "--format=%ae %at|%ce %ct")  # type: ignore[attr-defined]
    c.git("checkout", "-q", "main")
    c.git("merge", "-q", "--ff-only", "agent/fa-cdi", who=ALICE, by=ALICE)
    # honest lapses
    c.git("revert", "--no-edit", x["mix-a"], who=SMITH, by=LAPTOP)
    c.git("revert", "--no-edit", x["mix-b"], who=LAPTOP, by=SMITH)
    c.git("revert", "--no-edit", x["web-twice"], who=ALICE, by=FORGE)
    c.git("revert", "--no-edit", x["agent-twice"])
    for v in [*HONEST_NOW, *HONEST_LATER]:
        c.set(v, "approved", msg="Update PLAN.yml", by=FORGE)
    # the agent's picks of Y
    for v in LAPSED:
        c.git("cherry-pick", y[v])
    c.run()  # P2
    lab.first = {v: len(lab.calls(v)) for v in ALL}  # type: ignore[attr-defined]
    lab.first_codes = {v: lab.codes(v) for v in ALL}  # type: ignore[attr-defined]
    lab.file_status = {v: lab.plan(v)["plan"]["status"] for v in HONEST_LATER}  # type: ignore[attr-defined]
    for v in HONEST_LATER:
        if not lab.calls(v) and lab.plan(v)["plan"]["status"] != "approved":
            c.set(v, "approved", msg="Update PLAN.yml", by=FORGE)
    c.run()  # P3
    lab.status()
    lab.final = {v: lab.codes(v) for v in ALL}  # type: ignore[attr-defined]
    return config_audits(lab, root)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r70-lapseauthor", _build)


def test_her_pick_keeps_the_claimed_author_and_its_date(lab: Lab) -> None:
    author, committer = lab.shape.strip().split("|")  # type: ignore[attr-defined]
    assert author == f"alice+bot@example.com {OLD}", author
    assert committer.split()[0] == "alice@example.com" and int(committer.split()[1]) > OLD


def test_her_cdi_rebase_looks_like_her_own_commit_of_1990(lab: Lab) -> None:
    author, committer = lab.cdi_shape.strip().split("|")  # type: ignore[attr-defined]
    assert author == committer == f"alice@example.com {OLD}", lab.cdi_shape  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(LAPSED, LAPSED, BROKEN))  # type: ignore[arg-type]
def test_a_claimed_author_does_not_date_the_lapse(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.final[vid][:1500]  # type: ignore[attr-defined]
    assert valid_runs(lab.report, vid) == [], valid_runs(lab.report, vid)  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(HONEST_NOW, HONEST_NOW, BROKEN))  # type: ignore[arg-type]
def test_her_own_lapse_under_two_aliases_is_hers(lab: Lab, vid: str) -> None:
    assert lab.first[vid] == 1, lab.first_codes[vid][:1500]  # type: ignore[attr-defined]
    assert len(lab.calls(vid)) == 1
    runs = valid_runs(lab.report, vid)  # type: ignore[attr-defined]
    assert len(runs) == 1 and runs[0]["approver"] == ALICE[1], runs


@pytest.mark.parametrize("vid", cases(HONEST_LATER, HONEST_LATER, BROKEN))  # type: ignore[arg-type]
def test_after_another_hands_lapse_she_is_refused_once_only(lab: Lab, vid: str) -> None:
    assert lab.first[vid] == 0, lab.first_codes[vid][:1500]  # type: ignore[attr-defined]
    assert "E_APPROVAL_REPLAYED" in lab.first_codes[vid], lab.first_codes[vid][:1500]  # type: ignore[attr-defined]
    assert len(lab.calls(vid)) == 1, (lab.file_status[vid], lab.final[vid][:1500])  # type: ignore[attr-defined]
    runs = valid_runs(lab.report, vid)  # type: ignore[attr-defined]
    assert len(runs) == 1 and runs[0]["approver"] == ALICE[1], runs


@pytest.mark.parametrize("vid", ALL)
def test_a_fresh_clones_audit_agrees_with_the_controller(lab: Lab, vid: str) -> None:
    fresh = valid_runs(lab.fresh, vid)  # type: ignore[attr-defined]
    assert len(fresh) == len(lab.calls(vid)), (fresh, lab.calls(vid))
    assert len(valid_runs(lab.report, vid)) == len(fresh)  # type: ignore[attr-defined]


def _signed_set(lab: Lab, vid: str, msg: str, when: int) -> str:
    """Alice sets ``vid`` approved in a commit signed with her key, dated ``when``."""
    lab.set_status(vid, "approved")
    lab.git("add", "-A")
    key = lab.root / "keys" / "alice"
    stamp = f"@{when} +0000"
    lab.extra_env = {"GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp}  # type: ignore[attr-defined]
    try:
        lab.git("-c", "gpg.format=ssh", "-c", f"user.signingkey={key}", "commit", "-q", "-S",
                "-m", msg, who=ALICE)  # fmt: skip
    finally:
        lab.extra_env = {}  # type: ignore[attr-defined]
    return lab.head()


def _signed(root: Path) -> Lab:
    lab, _expires = signed_lab(root, valid_for=3600)
    lab.write("fa-cdi", plan("fa-cdi"))
    lab.git("add", "-A")
    lab.git("commit", "-q", "-m", "agent plan", who=AGENT)
    signed_run(lab)
    lab.git("checkout", "-q", "-b", "alice/y", "main")
    # Y, then X a second later: a decision in the second of a carrier of the lapsed one is
    # that decision (the lapse rule), and this lab checks the signature rule
    now = int(time.time())
    y = _signed_set(lab, "fa-cdi", "lgtm (review)", now)
    lab.git("checkout", "-q", "main")
    x = _signed_set(lab, "fa-cdi", "approve", now + 1)
    old = f"@{OLD} +0000"
    lab.git("checkout", "-q", "-b", "agent/fa-cdi", "main")
    lab.extra_env = {  # type: ignore[attr-defined]
        "GIT_AUTHOR_DATE": old, "GIT_COMMITTER_DATE": old,
        "GIT_COMMITTER_NAME": AGENT[0], "GIT_COMMITTER_EMAIL": AGENT[1],
    }  # fmt: skip
    try:
        lab.git("revert", "--no-edit", x, who=ALICE)
    finally:
        lab.extra_env = {}  # type: ignore[attr-defined]
    lab.git("checkout", "-q", "main")
    (lab.repo / "docs").mkdir(exist_ok=True)
    (lab.repo / "docs" / "fa-cdi.md").write_text("fa-cdi\n")
    lab.git("add", "-A")
    lab.git("commit", "-q", "-m", "docs fa-cdi", who=AGENT)
    lab.git("checkout", "-q", "agent/fa-cdi")
    # her signature over the rebased revert that claims her authorship
    key = lab.root / "keys" / "alice"
    lab.git("-c", "gpg.format=ssh", "-c", f"user.signingkey={key}", "rebase", "-q",
            "--committer-date-is-author-date", "-S", "main", who=ALICE)  # fmt: skip
    shape = lab.git("log", "-1", "--format=%ae %at|%ce %ct", "HEAD").strip()
    signed = "gpgsig" in lab.git("cat-file", "commit", "HEAD")
    lab.lapse = f"{shape}|{signed}"  # type: ignore[attr-defined]
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--ff-only", "agent/fa-cdi", who=ALICE)
    lab.git("cherry-pick", y, who=AGENT)
    signed_run(lab)
    signed_run(lab)
    return lab


@pytest.fixture(scope="module")
def signed(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r70-lapseauthor-signed", _signed)


def test_require_signed_refuses_the_pick_after_her_cdi_rebase(signed: Lab) -> None:
    """``fa-cdi`` under ``approval.require_signed``: her signature over the rebased revert
    claiming her authorship makes it no less "hers" (the lapse still dates 1990), but the
    agent's cherry-pick of Y carries no signature of hers and is refused."""
    author, committer, mark = signed.lapse.strip().split("|")  # type: ignore[attr-defined]
    assert author == committer == f"alice@example.com {OLD}" and mark == "True", signed.lapse  # type: ignore[attr-defined]
    assert signed.calls("fa-cdi") == [], signed.codes("fa-cdi")[:1500]
    codes = signed.codes("fa-cdi")
    # refused as unsigned, or (round 104's rule, checked first) as another hand's copy made
    # in the second her version came to be: either way the agent's pick approves nothing
    assert "E_SIGNATURE_INVALID" in codes or "E_APPROVAL_REPLAYED" in codes, codes[:1500]
