"""Round 106, approval (atk106a): the edges of round 104's same-second fix.

Round 104 (r104tie): an approval authored in the very second of its version's birth (the
controller's freeze) or of the pause it answers counts only when committed by its own author
or when it carries a ``Plan-Approved:`` trailer naming this version. Both are things a
commit SAYS: this round asks who wrote them.

Two labs (advkit ``Lab``), built once per module. Policy: ``plans/q/**`` -> ``{count: 2}``,
else one approval. Lab ``tie``: every commit, the controller's too, carries ONE date (what
round 104 showed the real clock gives on a quick push). Lab ``tick``: a new minute per step.

Variants (``plans/<group>/<name>``; every plan is the agent's):

- ``d/c1``: Alice approves (control, runs).
- ``d/tr``: Alice approves version 1 on a review branch never merged; the agent changes a
  param (version 2, frozen by the controller) and cherry-picks her commit, then ``commit
  --amend``s its MESSAGE only (git keeps her as author, her date) adding
  ``Plan-Approved: plans/d/tr <v2 hash>``. ``d/ph``: the same with the ``Plan:`` /
  ``Plan-Hash:`` trailers ``plangate approve`` writes, naming version 2. ``d/phv1``: her
  commit carried ``Plan-Hash:`` naming version 1, picked unchanged (control of the trailer
  rule). ``q/tr`` (``count: 2``): ``d/tr``'s amended pick plus Bob's real vote of version 2.
- ``d/gph``, ``d/gpa``: a gate on action 2; Alice's FIRST approval carries ``Plan:`` /
  ``Plan-Hash:`` (``plangate approve``'s form) or ``Plan-Approved:`` naming the version (a
  gate keeps the hash); at the pause the agent cherry-picks that first approval unchanged.
  ``d/rph``: action 1 fails (its ``verify`` never holds); the agent cherry-picks Alice's
  first approval (``Plan-Hash:`` trailer) as a resume.
- ``d/own``, ``q/own``: Alice approves version 1 on her branch; the agent pushes version 2
  (frozen); Alice ``git rebase``s her branch onto main HERSELF (``-X theirs``: her
  committer) and main is fast-forwarded to it: her approval of version 1 lands on version 2
  from her own hand. ``q/own``: plus Bob's vote of version 2.
- ``d/stale``: version 2 frozen first; then Alice, on a checkout cut at version 1 (she never
  pulled), approves; the agent cherry-picks that commit onto main (her approval written
  AFTER the freeze of a version she never saw).
- ``d/cname``: ``d/tr``'s pick unchanged, committed under the name ``Alice`` with the
  agent's address.

Ids ``<lab>/<plan>:<what>``: ``ran`` (the recording tool's calls for action 1 and for the
gated ``~2`` equal what the promise allows); ``audit`` (``plangate audit --json`` in a fresh
clone, no config: valid exactly the approvals the promise allows).

Seen (round 106): 48 ids, 16 broke in 4 classes, 32 held. Wall ~5 s (two labs built in parallel).

- BROKE ``trailer-by-copier`` (4 ids: ``tie/d/tr``, ``tie/d/ph``, ``:ran``/``:audit``): the
  trailer that lets a same-second approval count is text the COPIER writes. The agent's
  cherry-pick of Alice's review-branch approval of version 1, its message amended (git keeps
  her as author, her date) to carry ``Plan-Approved: plans/d/tr <v2>`` or ``plangate
  approve``'s ``Plan:``/``Plan-Hash: <v2>``, runs version 2 on her approval of version 1;
  the fresh-clone audit calls it valid. In ``tick`` it is ``E_APPROVAL_REPLAYED`` (written
  before the version). ``q/tr`` (the same plus Bob) held: one vote counted.
- BROKE ``trailer-names-version-not-pause`` (6 ids: ``tie/d/gph``, ``tie/d/gpa``,
  ``tie/d/rph``, ``:ran``/``:audit``): a trailer names a version, and a gate or a resume
  keeps the version. Alice's FIRST approval made the way ``plangate approve`` makes it
  (``Plan-Hash:``), or with ``Plan-Approved:``, cherry-picked UNCHANGED by the agent in the
  second of the pause (gate) or of the failure, is taken as the gate approval (action 2
  runs) or as a resume (the failed action is called again); the audit lists a valid
  ``gate``/``resume``. Round 104's ``d/gate``/``d/res`` (no trailer) stay refused; in
  ``tick`` round 62's rule refuses both (a committer date of its own).
- BROKE ``own-rebase-same-second`` (4 ids: ``tie/d/own``, ``tie/q/own``): Alice approves
  version 1 on her branch; the agent's version 2 is frozen in that second; Alice's own
  ``git rebase`` (``pull --rebase``) lands her approval on version 2, which she never saw,
  and it counts (alone, and as one of two votes with Bob's). In ``tick`` her rebased
  approval is ``E_APPROVAL_REPLAYED`` (written before the version): the "own hand" clause
  of r104tie lets a rebase count that the date rule refuses a second later.
- BROKE ``stale-checkout-pick`` (2 ids: ``tick/d/stale``): version 2 frozen first, then
  Alice approves on a checkout cut at version 1 (she never pulled) and the agent
  cherry-picks that commit onto main: its author date is after the birth, the commit was
  never on the line, no trailer: it runs version 2; audit valid. (Related to the documented
  "What dates cannot show", but here the controller froze version 2 itself.) In ``tie`` the
  r104 committer rule refuses it.
- Held: ``d/phv1`` (her ``Plan-Hash:`` naming version 1, picked unchanged:
  ``E_APPROVAL_REPLAYED``), ``d/cname`` (committer name ``Alice``, the agent's address: another
  hand), ``q/tr`` (an amended copy plus Bob's real vote: one vote), every ``tick`` variant
  but ``d/stale``, and every control ran once, audit valid.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, Lab, Labs, build_all, cases, clone_audit_got, plan_text
from advkit import xfail as _xfail
from test_round2_execution_kit import shared

DATE = "@1800000000 +0000"
POLICY = """\
rules:
  - match: {paths: ["plans/q/**"]}
    require: [{count: 2}]
"""
MODES = ["tie", "tick"]
CNAME = ("Alice", "agent@example.com")


def gate_text(slug: str) -> str:
    return plan_text(
        slug,
        extra_actions=(
            "  - id: 2\n    tool: rec\n    why: gated\n    requires_approval: true\n"
            f'    params:\n      tag: "{slug}~2"\n'
        ),
    )


def res_text(slug: str) -> str:
    return plan_text(slug).replace(
        "    params:", '    verify: {expect: {path: "$.json.ok", equals: false}}\n    params:', 1
    )


def edit(lab: Lab, slug: str, value: str) -> None:
    path = lab.repo / "plans" / slug / "PLAN.yml"
    text = path.read_text()
    path.write_text(text.replace(f'tag: "{slug}"\n', f'tag: "{slug}"\n      v: "{value}"\n', 1))


def vote(lab: Lab, slug: str, who: tuple[str, str], trailer: str = "") -> str:
    """``who`` sets ``approved``; ``trailer``: ``ph`` (``plangate approve``'s ``Plan:`` /
    ``Plan-Hash:``) or ``pa`` (``Plan-Approved:``) naming the version in the file."""
    msg = f"approve plans/{slug}"
    if trailer:
        h = lab.plan(slug, rev="HEAD")["frozen"]["hash"]
        msg += (
            f"\n\nPlan: plans/{slug}\nPlan-Hash: {h}"
            if trailer == "ph"
            else f"\n\nPlan-Approved: plans/{slug} {h}"
        )
    return lab.approve(slug, who, message=msg)


def _build(root: Path, mode: str) -> dict[str, Any]:
    lab = Lab(root / mode, approval=POLICY)
    clock = [1700000000]

    def tick() -> None:
        clock[0] += 60
        lab.git_date = DATE if mode == "tie" else f"@{clock[0]} +0000"

    tick()
    got: dict[str, Any] = {"notes": {}}
    plain = ["d/c1", "d/tr", "d/ph", "d/phv1", "q/tr", "d/own", "q/own", "d/stale", "d/cname"]
    for s in plain:
        lab.write(s, plan_text(s))
    for s in ["d/gph", "d/gpa"]:
        lab.write(s, gate_text(s))
    lab.write("d/rph", res_text("d/rph"))
    lab.commit("plans", AGENT)
    tick()
    lab.run()
    tick()

    # -- stage 1: review branches (version 1), first approvals on main ---------------------
    revs: dict[str, str] = {}
    for s, tr in [("d/tr", ""), ("d/ph", ""), ("d/phv1", "ph"), ("q/tr", ""), ("d/cname", "")]:
        lab.branch(f"rev-{s[0]}-{s[2:]}")
        revs[s] = vote(lab, s, ALICE, tr)
        lab.git("checkout", "-q", "main")
    for s in ["d/own", "q/own"]:
        lab.branch(f"own-{s[0]}-{s[2:]}")
        vote(lab, s, ALICE)
        lab.git("checkout", "-q", "main")
    lab.git("branch", "old-stale", "main")  # Alice's checkout, never pulled again
    vote(lab, "d/c1", ALICE)
    first = {s: vote(lab, s, ALICE, tr) for s, tr in [("d/gph", "ph"), ("d/gpa", "pa")]}
    first["d/rph"] = vote(lab, "d/rph", ALICE, "ph")
    tick()
    lab.run()
    tick()

    # -- stage 2: the agent's version 2, frozen by the pass ---------------------------------
    for s in ["d/tr", "d/ph", "d/phv1", "q/tr", "d/own", "q/own", "d/stale", "d/cname"]:
        edit(lab, s, "v2")
        lab.commit(f"agent: v2 {s}", AGENT)
    tick()
    lab.run()
    tick()
    v2 = {s: lab.plan(s)["frozen"]["hash"] for s in ["d/tr", "d/ph", "q/tr"]}

    # -- stage 3: the replays ----------------------------------------------------------------
    lab.git("checkout", "-q", "old-stale")
    stale = vote(lab, "d/stale", ALICE)
    lab.git("checkout", "-q", "main")
    lab.git("cherry-pick", "-X", "theirs", stale, who=AGENT)
    for s in ["d/tr", "q/tr"]:
        lab.git("cherry-pick", "-X", "theirs", revs[s], who=AGENT)
        msg = f"approve plans/{s}\n\nPlan-Approved: plans/{s} {v2[s]}"
        lab.git("commit", "-q", "--amend", "-m", msg, who=AGENT)
    lab.git("cherry-pick", "-X", "theirs", revs["d/ph"], who=AGENT)
    msg = f"approve plans/d/ph\n\nPlan: plans/d/ph\nPlan-Hash: {v2['d/ph']}"
    lab.git("commit", "-q", "--amend", "-m", msg, who=AGENT)
    lab.git("cherry-pick", "-X", "theirs", revs["d/phv1"], who=AGENT)
    lab.git("cherry-pick", "-X", "theirs", revs["d/cname"], who=CNAME)
    for s in ["d/gph", "d/gpa", "d/rph"]:
        lab.git("cherry-pick", "-X", "theirs", first[s], who=AGENT)
    for s in ["d/own", "q/own"]:
        br = f"own-{s[0]}-{s[2:]}"
        lab.git("checkout", "-q", br)
        lab.git("rebase", "-q", "-X", "theirs", "main", who=ALICE)
        lab.git("checkout", "-q", "main")
        lab.git("merge", "-q", "--ff-only", br)
    got["notes"]["log"] = lab.git("log", "-14", "--format=%an|%ae|%cn|%ce|%ad|%s")
    tick()
    lab.run()
    tick()

    # -- stage 4: Bob's real votes of version 2 -----------------------------------------------
    for s in ["q/tr", "q/own"]:
        vote(lab, s, BOB)
    tick()
    lab.run()
    calls: dict[str, int] = {}
    for line in lab.log.read_text().splitlines() if lab.log.exists() else []:
        tag = json.loads(line)["argv"][0]
        calls[tag] = calls.get(tag, 0) + 1
    got["calls"] = calls
    got["rows"] = {k: (v.get("status"), v.get("reason")) for k, v in lab.rows().items()}
    got.update(clone_audit_got(lab, root / mode))
    return got


def _build_all(root: Path) -> Labs:
    return build_all(root, {m: (lambda r, m=m: _build(r.parent, m)) for m in MODES}, workers=2)


#: plan -> (action 1 calls, action 2 calls or None) the promise allows
WANT: dict[str, tuple[int, int | None]] = {
    "d/c1": (1, None), "d/tr": (0, None), "d/ph": (0, None), "d/phv1": (0, None),
    "q/tr": (0, None), "d/gph": (1, 0), "d/gpa": (1, 0), "d/rph": (1, None),
    "d/own": (0, None), "q/own": (0, None), "d/stale": (0, None), "d/cname": (0, None),
}  # fmt: skip
VALUES = [(m, s, w) for m in MODES for s in WANT for w in ("ran", "audit")]
IDS = [f"{m}/{s}:{w}" for m, s, w in VALUES]
#: Fixed the same session (r106tie): ``trailer-by-copier`` (``tie/d/tr``, ``tie/d/ph``) and
#: ``trailer-names-version-not-pause`` (``tie/d/gph``, ``gpa``, ``rph``): in its version's
#: own second an approval counts only when made at once by its author, whatever its
#: trailers say. Accepted limits, kept as strict xfails (docs/threat-model.md, "Accepted
#: limits"): ``own-rebase-same-second`` (every date of her rebase is the freeze's second:
#: no git fact tells it from her new approval) and ``stale-checkout-pick`` (dated after the
#: freeze, applied by another hand: forged authorship without signatures; ``plangate
#: approve``'s trailer or ``require_signed`` refuse it).
_CLASSES = {
    "own-rebase-same-second": (
        ["tie/d/own", "tie/q/own"],
        "accepted limit: her own rebase of her v1 approval onto v2, every date in v2's "
        "freeze second, counts for v2",
    ),
    "stale-checkout-pick": (
        ["tick/d/stale"],
        "accepted limit: her bare v1 approval made on a stale checkout after v2's freeze, "
        "picked by the agent, runs v2",
    ),
}
BROKEN: dict[str, Any] = {
    f"{v}:{w}": _xfail(cls, what)
    for cls, (vs, what) in _CLASSES.items()
    for v in vs
    for w in ("ran", "audit")
}


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return shared(tmp_path_factory, "r106-atk106a", _build_all)


def _kinds(report: dict[str, Any], plan: str) -> set[str]:
    return {
        str(e.get("approval_kind"))
        for e in report.get("executions", [])
        if e.get("plan") == plan and e.get("approval_valid")
    }


@pytest.mark.parametrize(("mode", "slug", "what"), cases(IDS, VALUES, BROKEN))
def test_round106_atk106a(lab: Any, mode: str, slug: str, what: str) -> None:
    got = lab.got[mode]
    want1, want2 = WANT[slug]
    plan = f"plans/{slug}"
    first, second = got["calls"].get(slug, 0), got["calls"].get(f"{slug}~2", 0)
    if what == "ran":
        assert (first, second) == (want1, want2 or 0), (slug, first, second, got["rows"].get(plan))
    else:
        report = got["report"]
        assert report.get("code") is None and got["rc"] in (0, 1), (got["rc"], str(report)[:600])
        kinds = _kinds(report, plan)
        allowed = (want1 > 0, bool(want2), False)
        assert ("approve" in kinds, "gate" in kinds, "resume" in kinds) == allowed, (
            kinds, first, second,
            [f for f in report.get("findings", []) if f.get("plan") == plan],
        )  # fmt: skip


if __name__ == "__main__":
    import sys
    import tempfile

    os.makedirs("/tmp/atk106a", exist_ok=True)
    out = Path(tempfile.mkdtemp(prefix="r106a-", dir="/tmp/atk106a"))
    got = _build(out, sys.argv[1] if len(sys.argv) > 1 else "tie")
    rep = got.pop("report")
    got["findings"] = [(f.get("kind"), f.get("plan"), str(f.get("message"))[:160])
                       for f in rep.get("findings", [])]  # fmt: skip
    got["execs"] = [(e.get("plan"), e.get("approval_kind"), e.get("approval_valid"), e.get("code"))
                    for e in rep.get("executions", [])]  # fmt: skip
    print(json.dumps(got, indent=1, default=str))
