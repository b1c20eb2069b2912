"""Round 11, who may make a plan run: the operator's identity aliases (``plus_tags``,
``people``) meeting the spellings rounds 9 and 10 normalised.

Config: approvers Alice and ``*@ops.example.com``; ``identity_aliases``: plus tags on
``*@example.com`` and ``*@ops.example.com``; people ``[alice@example.com,
a.smith@corp.example]`` and ``[bob@ops.example.com, rob@ops.example.com]``;
``plans/two/**`` needs two approvals.

Rounds 2 and 9/10 tried the aliases with plain spellings (``alice+bot@``, upper case) and
the RFC 5322 / Unicode spellings without aliases. Here both at once: if the alias or plus
tag is applied before (or without) the mailbox normalisation, a spelling that normalises to
an alias of the approver is neither recognised as her nor refused as no mailbox.

- ``a-*``: Alice writes the plan's content under a spelling of her alias
  (``a.smith(x)@corp.example``, ``"a.smith"@corp.example``, fullwidth, CGJ, a trailing dot)
  or of a plus-tagged address (``alice＋x@`` with a fullwidth plus, ``alice+x＠`` with a
  fullwidth at, a comment, quotes, two tags, an empty tag, a domain comment) and approves it
  as ``alice@example.com``: must be ``E_SELF_APPROVAL``.
- ``b-*``: Bob (a *glob* approver) writes the plan as ``bob@ops.example.com`` and approves it
  under a spelling of his alias ``rob@`` or of a plus tag: every spelling matches the glob,
  so only the alias stands between Bob and his own plan.
- ``two/dup-*``: the agent writes; Bob votes as ``bob@ops.example.com`` (partial), then
  approves again as each ``b-*`` spelling: one person, one vote.

Defence: nothing of any attack runs or starts; a fresh-clone audit agrees. Controls:
``plain`` (Alice approves), ``two/honest`` (Alice then Bob) run once.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import spellkit
from advkit import AGENT, ALICE, BOB, Lab, clone_audit, plan_text
from test_round2_approval_authors import shared_lab

APPROVAL = """\
identity_aliases:
  plus_tags: ["*@example.com", "*@ops.example.com"]
  people: [[alice@example.com, a.smith@corp.example], [bob@ops.example.com, rob@ops.example.com]]
rules:
  - match: {paths: ["plans/two/**"]}
    require: [{count: 2}]
"""

#: Alice writes under these, approves as alice@example.com
A_SPELL = {
    "alias-comment": "a.smith(x)@corp.example",
    "alias-quoted": '"a.smith"@corp.example',
    "alias-fullwidth": "\uff41.smith@corp.example",
    "alias-cgj": "a.smi\u034fth@corp.example",
    "alias-dot": "a.smith@corp.example.",
    "alias-fwat": "a.smith\uff20corp.example",
    "plus-fwplus": "alice\uff0bx@example.com",
    "plus-fwat": "alice+x\uff20example.com",
    "plus-comment": "alice+x(c)@example.com",
    "plus-quoted": '"alice+x"@example.com',
    "plus-two": "alice+x+y@example.com",
    "plus-empty": "alice+@example.com",
    "plus-fwdomain": "alice+x@\uff25XAMPLE.com",
    "plus-smallplus": "alice\ufe62x@example.com",
}
#: Bob writes as bob@ops.example.com, approves under these (each matches *@ops.example.com)
B_SPELL = {
    "rob": "rob@ops.example.com",
    "rob-comment": "rob(c)@ops.example.com",
    "rob-quoted": '"rob"@ops.example.com',
    "rob-fullwidth": "\uff52ob@ops.example.com",
    "rob-plus": "rob+x@ops.example.com",
    "rob-fwplus": "\uff52ob\uff0bx@ops.example.com",
    "plus-fwplus": "bob\uff0bx@ops.example.com",
    "plus-smallplus": "bob\ufe62x@ops.example.com",
    "plus-comment": "bob+x(c)@ops.example.com",
    "plus-quoted": '"bob+x"@ops.example.com',
    "plus-fwat": "bob+x\uff20ops.example.com",
}
#: trimmed for suite time (held when tried, round 11): a-alias-upper, a-alias-domcomment,
#: a-plus-domcomment, a-plus-cgj; b-rob-upper, b-rob-cgj, b-plus-two, b-plus-empty, b-plus-cgj
#: (and their two/dup- twins)
A_IDS = [f"a-{k}" for k in A_SPELL]
B_IDS = [f"b-{k}" for k in B_SPELL]
DUP_IDS = [f"two/dup-{k}" for k in B_SPELL]
ATTACKS = A_IDS + B_IDS + DUP_IDS
BROKEN: dict[str, object] = {}


def _xf(what: str) -> pytest.MarkDecorator:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 11: {what}")


def _build(root: Path) -> Lab:
    lab = Lab(root, approval=APPROVAL)
    for k, email in A_SPELL.items():  # Alice writes each under a spelling of her alias
        lab.write(f"a-{k}", plan_text(f"a-{k}"))
        spellkit.raw_commit(lab, f"write a-{k}", "A. Smith", email)
    for vid in B_IDS:
        lab.write(vid, plan_text(spellkit.tag(vid)))
    lab.commit("bob writes his plans", BOB)
    for vid in [*DUP_IDS, "two/honest", "plain"]:
        lab.write(vid, plan_text(spellkit.tag(vid)))
    lab.commit("agent adds plans", AGENT)
    lab.run()  # freeze everything

    for vid in A_IDS:
        lab.approve(vid, ALICE)
    for k, email in B_SPELL.items():
        spellkit.approve_raw(lab, f"b-{k}", email)
    for vid in DUP_IDS:
        lab.approve(vid, BOB)
    lab.approve("two/honest", ALICE)
    lab.approve("plain", ALICE)
    lab.run()
    spellkit.save_partial(lab, [*DUP_IDS, "two/honest"])

    for k, email in B_SPELL.items():
        spellkit.approve_raw(lab, f"two/dup-{k}", email)
    lab.approve("two/honest", BOB)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared_lab(tmp_path_factory, "r11-aliasspell", _build)


@pytest.mark.parametrize("vid", ["plain", "two/honest"])
def test_the_controls_run_once(lab: Lab, vid: str) -> None:
    assert len(lab.calls(spellkit.tag(vid))) == 1, lab.codes(vid)


def test_the_first_votes_were_partial(lab: Lab) -> None:
    partial = spellkit.partial_votes(lab)
    assert set(partial.values()) == {"partial"}, partial


@pytest.mark.parametrize("vid", spellkit.marked(ATTACKS, BROKEN))
def test_an_alias_under_any_spelling_is_the_same_person(lab: Lab, vid: str) -> None:
    assert lab.calls(spellkit.tag(vid)) == [], lab.codes(vid)
    assert not lab.started(vid), lab.codes(vid)


def test_a_fresh_clone_audit_agrees(lab: Lab, tmp_path: Path) -> None:
    report, valid = clone_audit(lab, tmp_path)
    assert "plans/plain" in valid and "plans/two/honest" in valid, report
    for vid in ATTACKS:
        if vid not in BROKEN:
            assert f"plans/{vid}" not in valid, sorted(valid)
