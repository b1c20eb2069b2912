"""Round 70, approval side: round 69's copies (docs/approvals.md, "Replayed approvals": a copy
of her decision moved onto another plan by another hand is ``E_APPROVAL_REPLAYED`` and binds
nothing, however often it comes; "Policy: quorum": refusing a replay or a copy keeps the votes
collected, only a refusal about the version drops them). Copies made other ways than round
69's ``am``, in other orders, honest approvals after a refused copy, and kept votes against
what must void them.

Lab (one, local mode, fake dates). Config: ``plans/q-leave/**`` needs two of group ``ops``
(Alice and ``*@ops.example.com``), ``plans/q-*/**`` two of anyone. Every plan's first lines
are alike, so a status patch of one applies to another. P0 freezes; P1: Alice's votes on
``q-newver``, ``q-newver-after``, ``q-leave``, ``q-policy``, ``q-her-twice``, and her
approval S of ``zz-src`` (``lgtm``; it runs). S is what is copied. A copy is S re-pathed:

- ``r-merge``: the agent ``am``s the copy on its branch and merges it ``--no-ff`` itself.
- ``r-squash``: the agent's branch with the copy, ``merge --squash`` onto main committed
  with ``git commit -C <copy>`` (author Alice, her date and subject; committer the agent).
- ``r-rebase``: the agent's branch with the copy rebased onto a newer main, fast-forwarded.
- ``r-pick-copy``: the copy made on an unmerged branch, cherry-picked onto main.
- ``r-two``: ``git apply`` of S's diff to two plans (``r-two``, ``r-two-b``) committed with
  ``git commit -C S``: one copy onto two plans.
- ``q-newver``: (Alice voted) the agent's copy AND a content edit in one push; Bob votes.
- ``q-newver-after``: (Alice voted) the copy (refused, vote kept), then an edit (new version),
  then Bob votes.
- ``q-leave``: (Alice voted) the copy (kept); two passes later the operator drops Alice from
  ``ops`` and Bob votes.
- ``q-policy``: (Alice voted) the copy (kept); two passes later the rule becomes three and Bob
  votes.
- ``q-merge-never``, ``q-squash-never``: Alice never votes; the copy merged (``--no-ff``) or
  squashed (``commit -C``) by the agent; Bob votes.
Asserted for all of them: ``rec`` never ran, no valid run in either audit.

Honest (asserted: ran, the ``approved`` block names distinct people, both audits valid):

- ``r-honest-after``: the agent's copy (refused), then Alice approves it herself (``lgtm``).
- ``r-her-am``: Alice herself ``am``s her S onto this plan (her own hand: her decision).
- ``r-her-after-copy``: the agent's copy (refused), then Alice ``am``s S herself.
- ``q-honest-after``: the agent's copy (refused), Alice votes, Bob votes.
- ``q-her-twice``: (Alice voted) Alice ``am``s S onto it (her second decision: one person,
  still partial), then Bob votes: runs with two people.

Seen (round 70): every id held. The copies were refused ``E_APPROVAL_REPLAYED`` (squash with
``commit -C``, rebase, a pick of a copy, ``apply`` + ``commit -C`` onto two plans) or, merged
by the agent, the merge was the agent's request (``E_APPROVER_NOT_ALLOWED``); the kept vote
was voided by a new version (with the copy in one push, ``E_PLAN_HASH_MISMATCH``, or a pass
later), judged again after Alice left the group and under a rule of three (``partial``); her
own ``am`` of S counted as her decision, once per person in a quorum; her approval after a
refused copy ran. The fresh-clone audit agreed with the controller on every id.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab, cases, clone_audit, valid_runs
from policykit import StepClock
from test_round2_execution_kit import shared

POL = """\
groups:
  ops: ["alice@example.com", "*@ops.example.com"]
rules:
  - {match: {paths: ['plans/q-leave/**']}, require: [{group: ops, count: 2}]}
  - {match: {paths: ['plans/q-*/**']}, require: [{count: 2}]}
"""
POL_LATER = """\
groups:
  ops: ["*@ops.example.com"]
rules:
  - {match: {paths: ['plans/q-leave/**']}, require: [{group: ops, count: 2}]}
  - {match: {paths: ['plans/q-policy/**']}, require: [{count: 3}]}
  - {match: {paths: ['plans/q-*/**']}, require: [{count: 2}]}
"""
NEVER = [
    "r-merge", "r-squash", "r-rebase", "r-pick-copy", "r-two", "q-newver", "q-newver-after",
    "q-leave", "q-policy", "q-merge-never", "q-squash-never",
]  # fmt: skip
HONEST = ["r-honest-after", "r-her-am", "r-her-after-copy", "q-honest-after", "q-her-twice"]
ALL = [*NEVER, *HONEST]
#: the pass by which an honest id has run
RUNS_AT = {
    "r-honest-after": "P3",
    "r-her-am": "P2",
    "r-her-after-copy": "P3",
    "q-honest-after": "P4",
    "q-her-twice": "P3",
}
BROKEN: dict[str, object] = {}


def _plan(tag: str) -> str:
    return (
        'plan:\n  name: "copy plan"\n  task: "a plan"\n'
        "  status: pending_approval\navailable_tools:\n  - name: rec\nactions:\n  - id: 1\n"
        f'    tool: rec\n    why: "record {tag}"\n    params:\n      tag: "{tag}"\n'
    )


def _build(root: Path) -> Lab:
    lab = Lab(root, approval=POL)
    c = StepClock(lab)
    for v in [*ALL, "r-two-b", "zz-src"]:
        lab.write(v, _plan(v))
    lab.git("add", "-A")
    c.git("commit", "-q", "-m", "agent plans")
    c.run()  # P0
    for v in ("q-newver", "q-newver-after", "q-leave", "q-policy", "q-her-twice"):
        c.vote(v)
    src = c.vote("zz-src", msg="lgtm")
    c.run()  # P1
    patch = lab.git("format-patch", "-1", "--stdout", src)
    diff = lab.git("diff", f"{src}~1", src, "--", "plans/zz-src/PLAN.yml")

    def patch_for(v: str) -> str:
        return patch.replace("plans/zz-src/", f"plans/{v}/")

    def am(v: str, who=AGENT) -> str:  # type: ignore[no-untyped-def]
        return c.git("am", "-q", "-3", who=who, input=patch_for(v))

    def on_branch(v: str) -> str:
        c.git("checkout", "-q", "-b", f"agent/{v}", "main")
        copy = am(v)
        c.git("checkout", "-q", "main")
        return copy

    def merge(v: str) -> None:
        on_branch(v)
        c.git("merge", "-q", "--no-ff", "-m", f"merge agent/{v}", f"agent/{v}")

    def squash(v: str) -> None:
        copy = on_branch(v)
        c.git("merge", "-q", "--squash", f"agent/{v}")
        c.git("commit", "-q", "-C", copy)

    def rebase(v: str) -> None:
        on_branch(v)
        (lab.repo / "docs").mkdir(exist_ok=True)
        (lab.repo / "docs" / f"{v}.md").write_text("x\n")
        lab.git("add", "-A")
        c.git("commit", "-q", "-m", "docs")
        c.git("checkout", "-q", f"agent/{v}")
        c.git("rebase", "-q", "main")
        c.git("checkout", "-q", "main")
        c.git("merge", "-q", "--ff-only", f"agent/{v}")

    def pick_copy(v: str) -> None:
        copy = on_branch(v)
        c.git("cherry-pick", copy)

    def two(v: str) -> None:
        for p in (v, "r-two-b"):
            lab.git("apply", input=diff.replace("plans/zz-src/", f"plans/{p}/"))
        lab.git("add", "-A")
        c.git("commit", "-q", "-C", src)

    def edit(v: str) -> None:
        path = lab.repo / "plans" / v / "PLAN.yml"
        path.write_text(path.read_text().replace(f'"record {v}"', f'"record {v}, v2"'))
        lab.git("add", "-A")
        c.git("commit", "-q", "-m", f"agent: rework {v}")

    def copy_and_edit(v: str) -> None:
        am(v)
        edit(v)

    def vote(who):  # type: ignore[no-untyped-def]
        return lambda v: None if lab.calls(v) else c.vote(v, who=who, msg="lgtm")

    def policy_then_bob(v: str) -> None:
        lab.write_config(approval=POL_LATER)
        c.vote(v, who=BOB)

    steps = {  # steps 2.. (a pass after each)
        "r-merge": [merge],
        "r-squash": [squash],
        "r-rebase": [rebase],
        "r-pick-copy": [pick_copy],
        "r-two": [two],
        "q-newver": [copy_and_edit, vote(BOB)],
        "q-newver-after": [am, edit, vote(BOB)],
        "q-leave": [am, None, policy_then_bob],
        "q-policy": [am, None, policy_then_bob],
        "q-merge-never": [merge, vote(BOB)],
        "q-squash-never": [squash, vote(BOB)],
        "r-honest-after": [am, vote(ALICE)],
        "r-her-am": [lambda v: am(v, ALICE)],
        "r-her-after-copy": [am, lambda v: am(v, ALICE)],
        "q-honest-after": [am, vote(ALICE), vote(BOB)],
        "q-her-twice": [lambda v: am(v, ALICE), vote(BOB)],
    }
    lab.after = {}  # type: ignore[attr-defined]
    lab.steps_codes = {}  # type: ignore[attr-defined]
    for n in range(3):
        for v, todo in steps.items():
            if n < len(todo) and todo[n] is not None:
                todo[n](v)
        c.run()  # P2..P4
        lab.after[f"P{n + 2}"] = {v: len(lab.calls(v)) for v in [*ALL, "r-two-b"]}  # type: ignore[attr-defined]
        lab.steps_codes[f"P{n + 2}"] = {v: lab.codes(v) for v in [*ALL, "r-two-b"]}  # type: ignore[attr-defined]
    lab.by = {}  # type: ignore[attr-defined]
    for v in ALL:
        approval = lab.plan(v).get("approval") or {}
        lab.by[v] = [a.get("by") for a in approval.get("approvals") or []] or [  # type: ignore[attr-defined]
            approval.get("by")
        ]
    lab.status()
    _code, lab.report = lab.audit("--config", str(lab.config))  # type: ignore[attr-defined]
    lab.fresh, _valid = clone_audit(lab, root)  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r70-copies", _build)


@pytest.mark.parametrize("vid", cases(NEVER, NEVER, BROKEN))  # type: ignore[arg-type]
def test_a_copy_or_a_kept_vote_never_makes_a_run(lab: Lab, vid: str) -> None:
    slugs = [vid, "r-two-b"] if vid == "r-two" else [vid]
    for s in slugs:
        assert lab.calls(s) == [], (lab.by.get(s), lab.codes(s)[:1500])  # type: ignore[attr-defined]
        assert valid_runs(lab.report, s) == []  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(HONEST, HONEST, BROKEN))  # type: ignore[arg-type]
def test_her_own_decision_after_a_copy_counts(lab: Lab, vid: str) -> None:
    at = RUNS_AT[vid]
    before = f"P{int(at[1]) - 1}"
    if before in lab.after:  # type: ignore[attr-defined]
        assert lab.after[before][vid] == 0, lab.steps_codes[before][vid][:1500]  # type: ignore[attr-defined]
    assert lab.after[at][vid] == 1, lab.steps_codes[at][vid][:1500]  # type: ignore[attr-defined]
    assert len(lab.calls(vid)) == 1
    people = {re.sub(r"\+[^@]*@", "@", b) for b in lab.by[vid]}  # type: ignore[attr-defined]
    assert len(people) == len(lab.by[vid]) == (2 if vid.startswith("q-") else 1), lab.by[vid]  # type: ignore[attr-defined]
    runs = valid_runs(lab.report, vid)  # type: ignore[attr-defined]
    assert len(runs) == 1, runs


@pytest.mark.parametrize("vid", [*ALL, "r-two-b"])
def test_a_fresh_clones_audit_agrees_with_the_controller(lab: Lab, vid: str) -> None:
    fresh = valid_runs(lab.fresh, vid)  # type: ignore[attr-defined]
    assert len(fresh) == len(lab.calls(vid)), (fresh, lab.calls(vid))
    assert len(valid_runs(lab.report, vid)) == len(fresh)  # type: ignore[attr-defined]
