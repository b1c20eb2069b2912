"""Round 69, approval side: quorums across a refusal (docs/approvals.md, "Policy: quorum":
a person-level refusal keeps the votes collected, a plan-level one does not; a refusal is a
controller commit). Can an agent reset a quorum at will without touching the plan, or make one
approver's vote count twice across a refusal?

Lab (one, local mode, fake dates). Config: ``plans/q-*/**`` needs two approvals;
``identity_aliases`` names ``a.smith@ops.example.com`` as Alice and folds plus tags of
``*@example.com``. The agent commits one ``rec`` plan per id and ``zz-src`` (every plan's
first seven lines alike, so a status patch of one applies to another); P0 freezes them. P1:
Alice's vote on every ``q-*`` plan (one commit each) and her approval of ``zz-src`` (it runs;
its commit S is what the agent replays). Step 2 (then P2), step 3 (then P3), step 4 (P4):

- ``q-replay``: the agent applies S, re-pathed to this plan (``format-patch`` of S with its
  path rewritten, ``git am``: author Alice, her date and subject; a replay onto another plan,
  ``E_APPROVAL_REPLAYED``); step 3: Bob votes. Asserted: runs at P3 on Alice's and Bob's
  votes (the agent's replay is no decision of Alice's: her collected vote stands).
- ``q-replay-twice``: as ``q-replay`` (P2 refusal, Bob at step 3), then the agent replays S
  again at step 4 and Carol votes at step 5. Asserted: ran at P3 (Alice's and Bob's votes
  met), with two people.
- ``q-pick-same``: the agent cherry-picks Alice's own vote commit (same decision, same
  version) after P1's ``partial``; step 3 Bob votes. Asserted: not run at P2 (one person);
  runs at P3.
- ``q-agent``: the agent approves (``E_APPROVER_NOT_ALLOWED``, person-level); step 3 Bob.
  Asserted: runs at P3 (the documented keep).
- ``q-writer``: Bob commits a note into the folder and votes (``E_SELF_APPROVAL``,
  person-level); step 3 Carol. Asserted: runs at P3, never on Bob's vote.
- ``q-alias``: ``a.smith@ops.example.com`` votes at step 2, the agent replays S at step 3,
  ``alice+laptop@example.com`` votes at step 4. Asserted: never runs (one person, three
  spellings, across a refusal).
- ``q-alias-bob``: the agent replays S at step 2, ``alice+laptop@example.com`` votes at step
  3, Bob at step 4. Asserted: runs at P4 with two people named in the ``approved`` block.
- ``q-never``: Alice never votes; the agent replays S (step 2), Bob votes (step 3), the
  agent replays S again (step 4). Asserted: never runs (no vote of Alice's on this plan).
- ``r-never``: a plan outside ``q-*`` (one approval): the agent replays S at step 2 and again
  at step 4. Asserted: never runs.
- ``l-twice``: the control of ``r-never`` on the lapse rule: Alice approves (X) and the agent
  reverts X before a pass (step 2); the agent cherry-picks X at step 3 and again at step 4.
  Asserted: never runs.

Every run's ``approved`` block names distinct people; the fresh-clone audit calls valid
exactly the runs the controller made.

Seen (round 69): ``q-replay``, ``q-replay-twice`` BROKE (honest work refused): the agent's
``git am`` of S re-pathed onto the quorum plan is refused ``E_APPROVAL_REPLAYED`` (rule four:
moved onto another plan by another hand), and the refusal drops Alice's REAL vote collected
at P1: after Bob's vote the plan is ``partial`` ("1 more approval") at P3. The agent resets any
quorum at will with one commit that changes no hashed content, the version and its freeze
untouched (docs list only ``E_PLAN_NOT_FROZEN``, ``E_PLAN_HASH_MISMATCH``, ``E_PLAN_EXPIRED``
and the lapse case as dropping votes). Should: a refusal of a decision that is no voter's
(a replay, a copy) keeps the votes collected, as a person-level refusal does.
``q-never``, ``r-never`` BROKE (slip): the agent's SECOND ``git am`` of S onto the same plan,
one pass after the first was refused, is taken as Alice's approval: ``r-never`` (one approval
needed) ran with approver alice, and ``q-never`` ran on Bob's vote plus that copy (Alice never
approved either plan; ``q-replay-twice`` ran at P5 the same way); the controller-side and
fresh-clone audits call both runs valid. Should: every copy of S moved onto another plan by
another hand is ``E_APPROVAL_REPLAYED``, however often it is brought. Held: ``q-pick-same``
(her own vote cherry-picked by the agent: one person, not run until Bob), ``q-agent``,
``q-writer`` (person-level refusals keep Alice's vote; Bob the note's writer never counted),
``q-alias`` (alice, ``a.smith@ops``, ``alice+laptop`` across a refusal: never a quorum),
``q-alias-bob``, ``l-twice`` (the lapsed X picked twice: refused ``E_APPROVAL_REPLAYED`` both
times). The fresh-clone audit agreed with the controller on every id.

Fixed (2026-11-30): all four run as asserted. ``q-never``, ``r-never`` (and ``q-replay-twice``'s
second copy): a copy refused as her decision moved onto another plan by another hand is
nobody's decision and binds no decision identity (``Lifecycle._seen_approval`` remembers the
identity "this plan, this status" only for a commit ``_replayed`` does not refuse), so the
second ``am`` is judged as the first was, ``E_APPROVAL_REPLAYED``, however often it comes
(an identity a state directory remembered from such a copy before the fix binds nothing
either: ``_moved_first``);
before, the refused first copy had become the decision's first carrier and the second was
"the same approval, same version" of it. ``q-replay``, ``q-replay-twice``:
``E_APPROVAL_REPLAYED`` is no longer in ``quorum.PLAN_LEVEL``: a refusal of a replay or a copy
(nobody's vote) keeps the votes collected, as a person-level refusal does; only a refusal
about the version (not frozen, hash mismatch, expired) drops them. ``INDEX_VERSION`` 50.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from advkit import AGENT, BOB, CAROL, Lab, cases, clone_audit, valid_runs
from policykit import StepClock
from test_round2_execution_kit import shared

SMITH = ("A. Smith", "a.smith@ops.example.com")
PLUS = ("Alice", "alice+laptop@example.com")
POL = """\
identity_aliases:
  plus_tags: ["*@example.com"]
  people: [[alice@example.com, a.smith@ops.example.com]]
rules:
  - {match: {paths: ['plans/q-*/**']}, require: [{count: 2}]}
"""
RUN_BY_P3 = ["q-replay", "q-pick-same", "q-agent", "q-writer"]
RUN_BY_P4 = ["q-replay-twice", "q-alias-bob"]
NEVER = ["q-alias", "q-never", "r-never", "l-twice"]
ALL = [*RUN_BY_P3, *RUN_BY_P4, *NEVER]
BROKEN: dict[str, object] = {}


def _plan(tag: str) -> str:
    return (
        'plan:\n  name: "quorum plan"\n  task: "a plan that needs two"\n'
        "  status: pending_approval\navailable_tools:\n  - name: rec\nactions:\n  - id: 1\n"
        f'    tool: rec\n    why: "record {tag}"\n    params:\n      tag: "{tag}"\n'
    )


def _replay(lab: Lab, c: StepClock, src: str, slug: str) -> None:
    """The agent applies Alice's approval commit ``src`` of zz-src to ``slug``'s plan."""
    patch = lab.git("format-patch", "-1", "--stdout", src)
    patch = patch.replace("plans/zz-src/", f"plans/{slug}/")
    c.git("am", "-q", "-3", who=AGENT, input=patch)


def _approvers(lab: Lab, slug: str) -> list[str]:
    data = lab.plan(slug)
    approval = data.get("approval") or {}
    return [a.get("by") for a in approval.get("approvals") or []]


def _build(root: Path) -> Lab:
    lab = Lab(root, approval=POL)
    c = StepClock(lab)
    for v in [*ALL, "zz-src"]:
        lab.write(v, _plan(v))
    lab.git("add", "-A")
    c.git("commit", "-q", "-m", "agent plans")
    c.run()  # P0
    votes = {}
    for v in ALL:
        if v not in ("q-alias", "q-alias-bob", "q-never", "r-never", "l-twice"):
            votes[v] = c.vote(v)
    src = c.vote("zz-src", msg="lgtm")
    c.run()  # P1
    lab.after = {}  # type: ignore[attr-defined]
    lab.steps_codes = {}  # type: ignore[attr-defined]

    def replay(v: str) -> None:
        if not lab.calls(v):  # a completed plan's file no longer takes the patch
            _replay(lab, c, src, v)

    def note_and_vote(v: str) -> None:
        (lab.repo / "plans" / v / "NOTES.md").write_text("bob: looks fine\n")
        lab.git("add", "-A")
        c.git("commit", "-q", "-m", "bob: note", who=BOB)
        c.vote(v, who=BOB)

    def approve_and_lapse(v: str) -> None:
        votes[v] = c.vote(v, msg="approve")
        c.git("revert", "--no-edit", votes[v])

    def pick_x(v: str) -> None:
        if not lab.calls(v):
            c.git("cherry-pick", votes[v])

    def vote(who):  # type: ignore[no-untyped-def]
        return lambda v: None if lab.calls(v) else c.vote(v, who=who)

    steps = {  # steps 2.. (a pass after each)
        "q-replay": [replay, vote(BOB)],
        "q-replay-twice": [replay, vote(BOB), replay, vote(CAROL)],
        "q-pick-same": [lambda v: c.git("cherry-pick", votes[v]), vote(BOB)],
        "q-agent": [vote(AGENT), vote(BOB)],
        "q-writer": [note_and_vote, vote(CAROL)],
        "q-alias": [vote(SMITH), replay, vote(PLUS)],
        "q-alias-bob": [replay, vote(PLUS), vote(BOB)],
        "q-never": [replay, vote(BOB), replay],
        "r-never": [replay, None, replay],
        "l-twice": [approve_and_lapse, pick_x, pick_x],
    }
    for n in range(4):
        for v, todo in steps.items():
            if n < len(todo) and todo[n] is not None:
                todo[n](v)
        c.run()  # P2..P5
        lab.after[f"P{n + 2}"] = {v: len(lab.calls(v)) for v in ALL}  # type: ignore[attr-defined]
        lab.steps_codes[f"P{n + 2}"] = {v: lab.codes(v) for v in ALL}  # type: ignore[attr-defined]
    lab.by = {v: _approvers(lab, v) for v in ALL}  # type: ignore[attr-defined]
    lab.status()
    _code, lab.report = lab.audit("--config", str(lab.config))  # type: ignore[attr-defined]
    lab.fresh, _valid = clone_audit(lab, root)  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r69-quorumreset", _build)


def _people(lab: Lab, vid: str) -> set[str]:
    fold = {
        "a.smith@ops.example.com": "alice@example.com",
        "alice+laptop@example.com": "alice@example.com",
    }
    return {fold.get(b, re.sub(r"\+[^@]*@", "@", b)) for b in lab.by[vid]}  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(RUN_BY_P3, RUN_BY_P3, BROKEN))  # type: ignore[arg-type]
def test_a_refusal_keeps_the_quorum_it_did_not_concern(lab: Lab, vid: str) -> None:
    assert lab.after["P2"][vid] == 0, lab.steps_codes["P2"][vid][:1500]  # type: ignore[attr-defined]
    assert lab.after["P3"][vid] == 1, lab.steps_codes["P3"][vid][:1500]  # type: ignore[attr-defined]
    assert len(lab.calls(vid)) == 1
    assert len(lab.by[vid]) == 2 and len(_people(lab, vid)) == 2, lab.by[vid]  # type: ignore[attr-defined]
    assert BOB[1] not in lab.by[vid] or vid != "q-writer", lab.by[vid]  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(RUN_BY_P4, RUN_BY_P4, BROKEN))  # type: ignore[arg-type]
def test_a_repeated_replay_does_not_reset_the_quorum_for_ever(lab: Lab, vid: str) -> None:
    assert lab.after["P5"][vid] == 1, lab.codes(vid)[:1500]  # type: ignore[attr-defined]
    # two people's votes met at the pass after the second person's vote
    assert lab.after["P3" if vid == "q-replay-twice" else "P4"][vid] == 1, (
        lab.steps_codes["P3" if vid == "q-replay-twice" else "P4"][vid][:1500]  # type: ignore[attr-defined]
    )
    assert len(_people(lab, vid)) == 2, lab.by[vid]  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(NEVER, NEVER, BROKEN))  # type: ignore[arg-type]
def test_a_vote_she_never_gave_never_counts(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], (lab.by[vid], lab.codes(vid)[:1500])  # type: ignore[attr-defined]
    assert valid_runs(lab.report, vid) == []  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", ALL)
def test_a_fresh_clones_audit_agrees_with_the_controller(lab: Lab, vid: str) -> None:
    fresh = valid_runs(lab.fresh, vid)  # type: ignore[attr-defined]
    assert len(fresh) == len(lab.calls(vid)), (fresh, lab.calls(vid))
    assert len(valid_runs(lab.report, vid)) == len(fresh)  # type: ignore[attr-defined]
