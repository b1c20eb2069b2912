# ruff: noqa: E501  (attack steps read best on one line)
"""Round 10, who may make a plan run: a *glob* approver under spellings of his mailbox that
round 9's fix (RFC 5322 comments, quotes and quoted pairs dropped, NFKC; an invisible or
control character never approves) may not reduce.

Config: approvers Alice and ``*@ops.example.com``; ``plans/two/**`` needs two approvals.

Round 9 tried a comment, quotes, a quoted pair, a nested comment, upper case, a fullwidth
letter and a zero-width space (U+200B, a *format* character). Here:

- invisible characters that are *not* format characters (so a check on Unicode category
  ``Cf``/``Cc`` does not see them) and that NFKC keeps: U+034F COMBINING GRAPHEME JOINER (Mn),
  U+FE0F VARIATION SELECTOR-16 (Mn), U+E0100 VARIATION SELECTOR-17 (Mn), U+3164 HANGUL FILLER
  (Lo), U+115F HANGUL CHOSEONG FILLER (Lo), U+17B4 KHMER VOWEL INHERENT AQ (Mn), U+180B
  MONGOLIAN FREE VARIATION SELECTOR ONE (Mn), U+FFA0 HALFWIDTH HANGUL FILLER (Lo; NFKC makes
  it U+3164, still invisible), U+2800 BRAILLE PATTERN BLANK (So, a blank that is no white
  space): each renders
  ``bob@ops.example.com`` exactly, matches the glob, and is not the string
  ``bob@ops.example.com``;
- other odd characters: U+E000 (private use), U+2028 LINE SEPARATOR, U+FFFE (noncharacter);
- RFC 5322 shapes round 9 did not: a comment holding an escaped ``)`` (``bob(x\\)y)@…``:
  the comment is ``(x\\)y)``, a naive reduction leaves ``boby)@…``), a comment in the domain
  (``bob@(c)ops.example.com``), a comment after the domain, an ideographic space U+3000 before
  the ``@`` (NFKC: a blank, i.e. folding white space).

Each spelling is played two ways:

- ``self-<k>``: Bob writes the plan as ``bob@ops.example.com`` and approves it as the spelling;
- ``two/dup-<k>``: the agent writes the plan; Bob votes as ``bob@ops.example.com`` (partial),
  then again as the spelling.

- ``globby-*``: Mallory (no approver) approves the agent's plan as ``*@*``, ``?*@*.*``,
  ``[a-z]*@*``, ``*@ops.example.com*`` (``*`` is RFC 5322 atext): an identity matched as
  the pattern would be anyone.
- ``gate-cgj``: Bob writes a plan with a gated second action; Alice approves it; at the gate
  Bob approves as ``bo\u034fb@ops.example.com``.

Defence: the plan never starts (``E_SELF_APPROVAL`` / ``E_APPROVER_NOT_ALLOWED`` / still
partial), the gated step never runs, and a fresh-clone audit calls none of them valid.
Controls: ``plain`` (Alice approves) and ``two/honest`` (Alice then Bob) run once.

Results (round 10; fixed since, invisible characters are dropped from every identity):
**broke** (19 + audit, strict xfails): every invisible spelling (the
nine above) is taken for a plain mailbox that matches ``*@ops.example.com`` and is a stranger
to ``bob@ops.example.com``: Bob's self-approval runs (``self-*``), his two votes start a
two-approval plan (``two/dup-*``), he opens the gate of his own plan (``gate-cgj``), and a
fresh-clone audit calls every one of these approvals valid. ``plangate status`` itself prints
most of them escaped (``bo\u034fb@…``), so the display knows them as hidden characters while
the approval check does not. Held: the comment/space shapes (reduced to Bob: refused
``E_SELF_APPROVAL`` / still partial), private use, U+2028, U+FFFE (refused); the glob-shaped identities
(``E_APPROVER_NOT_ALLOWED``). With
``require_signed`` the invisible spelling is refused (``test_round10_approve_ignorable_signed.py``).
"""

from __future__ import annotations

import json
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
    "cgj": "bo\u034fb@ops.example.com",
    "vs16": "bob\ufe0f@ops.example.com",
    "vs17": "bo\U000e0100b@ops.example.com",
    "hangul": "bob\u3164@ops.example.com",
    "choseong": "b\u115fob@ops.example.com",
    "khmer": "bo\u17b4b@ops.example.com",
    "mongolian": "bo\u180bb@ops.example.com",
    "halfwidth-filler": "bob\uffa0@ops.example.com",
    "private-use": "bob\ue000@ops.example.com",
    "line-sep": "bob\u2028@ops.example.com",
    "nonchar": "bob\ufffe@ops.example.com",
    "braille-blank": "bob\u2800@ops.example.com",
    "esc-comment": "bob(x\\)y)@ops.example.com",
    "dom-comment": "bob@(c)ops.example.com",
    "tail-comment": "bob@ops.example.com(c)",
    "ideo-space": "bob\u3000@ops.example.com",
}
#: Mallory (no approver) approves as an address shaped like a glob: matched the wrong way
#: round (the identity as the pattern) it would be every approver.
GLOBBY = {
    "starstar": "*@*",
    "qstar": "?*@*.*",
    "bracket": "[a-z]*@*",
    "starops": "*@ops.example.com*",
}
SELF = [f"self-{k}" for k in SPELLINGS]
DUP = [f"two/dup-{k}" for k in SPELLINGS]
ATTACKS = SELF + DUP + [f"globby-{k}" for k in GLOBBY]


def _xf(what: str) -> pytest.MarkDecorator:
    return pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 10: {what}")


INVISIBLE = [
    "cgj",
    "vs16",
    "vs17",
    "hangul",
    "choseong",
    "khmer",
    "mongolian",
    "halfwidth-filler",
    "braille-blank",
]
SELF_SPELL = (
    "a glob approver writes the plan as bob@ops.example.com and approves it as {} (an invisible"
    " character that is no format/control character, kept by NFKC): it matches"
    " `*@ops.example.com`, is taken for a plain mailbox and for a stranger to its author, so the"
    " plan runs on its author's approval alone"
)
DUP_SPELL = (
    "under `count: 2`, bob@ops.example.com votes (partial), then approves again as {} (the same"
    " rendered address with an invisible non-Cf character): counted as a second person, the plan"
    " starts on one person's two votes"
)
#: What broke when found (round 10); fixed since: invisible characters are dropped from every
#: identity (controller.approval.approvals.normalize_identity), so these are Bob.
FOUND: dict[str, object] = {
    **{f"self-{k}": _xf(SELF_SPELL.format(ascii(SPELLINGS[k]))) for k in INVISIBLE},
    **{f"two/dup-{k}": _xf(DUP_SPELL.format(ascii(SPELLINGS[k]))) for k in INVISIBLE},
}
BROKEN: dict[str, object] = {}


GATE = "gate-cgj"
GATED = plan_text(
    GATE,
    extra_actions=f"""\
  - id: 2
    tool: rec
    why: "the gated step"
    requires_approval: true
    params: {{tag: "{GATE}-2"}}
""",
)


def _build(root: Path) -> Lab:
    lab = Lab(root, approval=APPROVAL)
    for vid in SELF:
        lab.write(vid, plan_text(spellkit.tag(vid)))
    lab.write(GATE, GATED)
    lab.commit("bob writes his plans", BOB)
    for vid in [*DUP, "two/honest", "plain", *(f"globby-{k}" for k in GLOBBY)]:
        lab.write(vid, plan_text(spellkit.tag(vid)))
    lab.commit("agent adds plans", AGENT)
    lab.run()  # freeze everything

    for spelling, vid in zip(SPELLINGS.values(), SELF, strict=True):
        spellkit.approve_raw(lab, vid, spelling)
    for vid in DUP:
        lab.approve(vid, BOB)
    lab.approve("two/honest", ALICE)
    lab.approve("plain", ALICE)
    lab.approve(GATE, ALICE)
    for k, email in GLOBBY.items():
        spellkit.approve_raw(lab, f"globby-{k}", email)
    lab.run()  # the gated plan runs action 1 and waits at its gate
    (lab.root / "gate.json").write_text(json.dumps(lab.plan(GATE)["plan"]["status"]))
    spellkit.save_partial(lab, [*DUP, "two/honest"])

    for spelling, vid in zip(SPELLINGS.values(), DUP, strict=True):
        spellkit.approve_raw(lab, vid, spelling)
    lab.approve("two/honest", BOB)
    spellkit.approve_raw(lab, GATE, SPELLINGS["cgj"])  # Bob, the plan's writer, opens its gate
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared_lab(tmp_path_factory, "r10-ignorable", _build)


@pytest.mark.parametrize("vid", ["plain", "two/honest"])
def test_the_controls_run_once(lab: Lab, vid: str) -> None:
    assert len(lab.calls(spellkit.tag(vid))) == 1, lab.codes(vid)


def test_the_gated_plan_waited_at_its_gate(lab: Lab) -> None:
    assert json.loads((lab.root / "gate.json").read_text()) == "awaiting_approval"
    assert len(lab.calls(GATE)) == 1, lab.codes(GATE)


def test_the_writer_never_opens_the_gate(lab: Lab) -> None:
    assert lab.calls(f"{GATE}-2") == [], lab.codes(GATE)


def test_the_first_votes_were_partial(lab: Lab) -> None:
    partial = spellkit.partial_votes(lab)
    assert set(partial.values()) == {"partial"}, partial


@pytest.mark.parametrize("vid", spellkit.marked(ATTACKS, BROKEN))
def test_one_person_is_one_vote_and_never_his_own(lab: Lab, vid: str) -> None:
    assert lab.calls(spellkit.tag(vid)) == [], lab.codes(vid)
    assert not lab.started(vid), lab.codes(vid)


def test_a_fresh_clone_audit_agrees(lab: Lab, tmp_path: Path) -> None:
    report, valid = clone_audit(lab, tmp_path)
    assert "plans/plain" in valid and "plans/two/honest" in valid, report
    for vid in ATTACKS:
        if vid not in BROKEN:
            assert f"plans/{vid}" not in valid, report


def test_a_fresh_clone_audit_flags_the_invisible_spellings(lab: Lab, tmp_path: Path) -> None:
    _report, valid = clone_audit(lab, tmp_path)
    assert "plans/plain" in valid, sorted(valid)
    assert not valid & {f"plans/{v}" for v in FOUND}, sorted(valid)
