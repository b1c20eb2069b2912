# ruff: noqa: E501  (attack steps read best on one line)
"""Round 9, who may make a plan run: a *glob* approver under another spelling of her own
mailbox, and votes that outlive their approver's withdrawal.

Config: approvers Alice and ``*@ops.example.com``; ``plans/two/**`` needs two approvals.

Round 5 tried other spellings of Alice's address (an exact approver entry), so each spelling
was simply no approver. Here the approver is Bob, allowed through the glob
``*@ops.example.com``: every spelling of his mailbox under that domain is "an approver", so
only identity normalisation stands between Bob and approving his own plan, or voting twice.

Attacks:

- ``self-<spelling>``: Bob writes the plan's content as ``bob@ops.example.com`` and approves it
  as ``<spelling>``: an RFC 5322 comment ``bob(ops)@ops.example.com``, a quoted local part
  ``"bob"@ops.example.com`` (written as a raw commit: git's ident code would strip the leading
  quote), upper case (control: normalised, must hold), a fullwidth first letter
  (``\uff42ob@``, equal to ``bob@`` under NFKC; round 5 tried it only on an exact entry).
- ``two/dup-<spelling>``: the agent writes the plan; Bob approves as ``bob@ops.example.com``
  (partial), then again as ``<spelling>``: one person, one vote.
- ``two/cw``: Alice votes on ``two/cw`` (partial), then changes her mind and rejects it. The
  agent copies the file as it stood during the vote (same bytes, ``pending_approval``) to
  ``two/cw2``; Bob approves the copy. Alice's withdrawn vote must not be the second vote.

Defence: refused (``E_SELF_APPROVAL`` / still partial / ``E_APPROVER_NOT_ALLOWED``), the tool
never runs.

Results (round 9): **broke** (6, strict xfails, since fixed: every identity is reduced to its
mailbox, RFC 5322 comments, quotes and quoted pairs dropped, NFKC; what is still no plain
address, such as one with a zero-width space, never approves): the comment, quoted and fullwidth spellings are both a valid glob
approver and a stranger to ``bob@ops.example.com`` (self-approval runs; two votes from one
mailbox start a two-approval plan; a fresh-clone audit calls them valid). Held: upper case
(normalised), the copy of a plan whose voter withdrew (``two/cw2`` stays partial). With
``require_signed`` the double vote holds (``test_round9_approve_globsigned.py``:
E_SIGNATURE_INVALID, "signed by bob@ops.example.com but the approver identity is
bob(ops)@ops.example.com"), so these breaks live where identities are claims; unlike writing
as someone else, though, every spelling here is the approver's own mailbox. Controls: ``plain`` (Alice approves), ``two/honest`` (Alice then Bob) run once.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import spellkit
from advkit import AGENT, ALICE, BOB, Lab, clone_audit, plan_text
from test_round2_approval_authors import shared_lab

APPROVAL = """\
rules:
  - match: {paths: ["plans/two/**"]}
    require: [{count: 2}]
"""

SPELLINGS = {
    "comment": "bob(ops)@ops.example.com",
    "quoted": '"bob"@ops.example.com',
    "upper": "BOB@OPS.EXAMPLE.COM",
    "fullwidth": "\uff42ob@ops.example.com",
    # added with the fix: a quoted pair, a nested comment, a zero-width space (no address)
    "pair": "b\\ob@ops.example.com",
    "nested": "bob((a)b)@ops.example.com",
    "zwsp": "bo\u200bb@ops.example.com",
}
SELF = [f"self-{k}" for k in SPELLINGS]
DUP = [f"two/dup-{k}" for k in SPELLINGS]
COPY = ["two/cw2"]
ATTACKS = SELF + DUP + COPY


def _xf(what: str) -> pytest.MarkDecorator:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 9: {what}")


SELF_SPELL = (
    "a glob approver writes the plan as bob@ops.example.com and approves it under another spelling"
    " of the same mailbox ({}), which matches `*@ops.example.com` but is not normalised to"
    " bob@ops.example.com: not E_SELF_APPROVAL, the plan runs on its author's approval alone"
)
DUP_SPELL = (
    "under `count: 2`, bob@ops.example.com votes (partial), then the same mailbox spelled {}"
    " approves: counted as a second person, the plan starts on one person's two votes"
)
#: Fixed after round 9 (identities reduced to their mailbox, controller.approval.approvals
#: normalize_identity); the strict xfails the attacker left are gone.
BROKEN: dict[str, object] = {}


def approve_as(lab: Lab, slug: str, email: str) -> str:
    if email.startswith('"') or "\\" in email:
        return spellkit.approve_raw(lab, slug, email)
    lab.set_status(slug, "approved")
    lab.git("add", "-A")
    lab.git("commit", "-q", "-m", f"approve {slug} ({email})", who=("Bob", email))
    return lab.head()


def _build(root: Path) -> Lab:
    lab = Lab(root, approval=APPROVAL)
    for vid in SELF:
        lab.write(vid, plan_text(spellkit.tag(vid)))
    lab.commit("bob writes his plans", BOB)
    for vid in [*DUP, "two/cw", "two/honest", "plain"]:
        lab.write(vid, plan_text(spellkit.tag(vid)))
    lab.commit("agent adds plans", AGENT)
    lab.run()  # freeze everything

    for spelling, vid in zip(SPELLINGS.values(), SELF, strict=True):
        approve_as(lab, vid, spelling)
    for vid in DUP:
        lab.approve(vid, BOB)
    lab.approve("two/cw", ALICE)
    lab.approve("two/honest", ALICE)
    lab.approve("plain", ALICE)
    lab.run()  # self-*: decided; dup/cw/honest: partial; plain starts
    spellkit.save_partial(lab, [*DUP, "two/cw", "two/honest"])
    during_vote = lab.read("two/cw")

    for spelling, vid in zip(SPELLINGS.values(), DUP, strict=True):
        approve_as(lab, vid, spelling)
    lab.set_status("two/cw", "rejected")
    lab.commit("alice changed her mind", ALICE)
    lab.approve("two/honest", BOB)
    lab.run()
    lab.write("two/cw2", during_vote)
    lab.commit("agent copies two/cw", AGENT)
    lab.run()  # the copy: seen (already frozen, same hash)
    lab.approve("two/cw2", BOB)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared_lab(tmp_path_factory, "r9-globspell", _build)


@pytest.mark.parametrize("vid", ["plain", "two/honest"])
def test_the_controls_run_once(lab: Lab, vid: str) -> None:
    assert len(lab.calls(spellkit.tag(vid))) == 1, lab.codes(vid)


def test_the_first_votes_were_partial(lab: Lab) -> None:
    partial = spellkit.partial_votes(lab)
    assert set(partial.values()) == {"partial"}, partial


@pytest.mark.parametrize("vid", spellkit.marked(ATTACKS, BROKEN))
def test_one_person_is_one_vote_and_never_her_own(lab: Lab, vid: str) -> None:
    assert lab.calls(spellkit.tag(vid)) == [], lab.codes(vid)
    assert not lab.started(vid), lab.codes(vid)


def test_a_fresh_clone_audit_agrees(lab: Lab, tmp_path: Path) -> None:
    report, valid = clone_audit(lab, tmp_path)
    assert "plans/plain" in valid, report
    for vid in ATTACKS:
        if vid not in BROKEN:
            assert f"plans/{vid}" not in valid, report
