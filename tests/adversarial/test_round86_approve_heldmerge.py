"""Round 86, approval and policy: a withdrawal a MERGE brings while a plan is held
``E_PLAN_AMBIGUOUS`` (a twin ``PLAN.yaml`` beside its ``PLAN.yml``): whose is it at the
release, the branch commit's that made it (as with no hold) or the merge commit's?

Lab (one, built once, a few ``run --once`` passes). Policy: ``plans/q-*`` needs 2 of group
``ops`` (Alice and ``*@ops.example.com``: Bob, Carol). The agent commits its plans (frozen
by the first pass), then a twin ``plans/<slug>/PLAN.yaml`` beside each (``nh`` excepted);
a pass holds them. While held, each variant's branch is forked from main, its commits made
there, and the branch merged into main (by Mallory, who is no approver and may push);
a pass; the agent removes the twins (the release); a pass; the follow-up approvals come.
``<slug>:ran`` counts the recording tool's calls, ``<slug>:audit`` the fresh clone's
``plangate audit`` (no config) calls valid exactly the runs the controller made.

- ``rj``: Alice ``rejected`` on her branch, Mallory's ``git merge --no-ff``; Bob approves
  after the release: nothing runs (a withdrawal by an allowed approver wins).
- ``q-rj``: the same in the 2-of-``ops`` quorum (Bob ``rejected`` on his branch); Alice and
  Carol approve after: nothing runs.
- ``ag``: the AGENT (the plan's author) ``rejected`` on its branch, Mallory's merge; Alice
  approves after: nothing runs.
- ``ff``: Alice ``rejected`` on her branch, fast-forwarded onto main by Mallory (no merge
  commit: her commit is on the line); Bob after: nothing runs.
- ``ra``: Alice ``rejected`` then MALLORY ``approved`` on the branch, Mallory's merge (it
  brings ``approved``); Bob after: nothing runs.
- r86heldmerge's variants (not tried by the attacker; nothing runs): ``rp``: Alice
  ``rejected`` then Mallory ``pending_approval`` on the branch (the merge changes nothing of
  the plan file: a quiet merge for it); ``pe``: Alice's branch merged BEFORE the twin comes,
  both read in one pass (the scan applies merged withdrawals at its end, the plan held by
  then); ``rr``: Alice's branch merged by Mallory, the plan's
  release in that very merge commit (Mallory removes the twin while merging); ``q-2``: two
  branches of Bob (``rejected``) and Carol (``approved``) merged by Mallory one after the
  other, Alice and Carol after.
- Controls: ``mo``: MALLORY ``rejected`` on her own branch, merged by her: not allowed,
  ignored; Bob after: runs once. ``mw``: Alice's branch changes nothing of the plan; the
  MERGE writes ``rejected`` itself (``--no-commit``, Mallory's hand: the merge's own change
  is the merger's, docs/approvals.md): ignored; Bob after: runs once. ``nh``: no twin, no
  hold: Alice's ``rejected`` on her branch merged by Mallory counts; Bob after: nothing runs.
  ``ok``: held and released, no merge; Bob after: runs once. ``q-ok``: the same in the
  quorum, Alice and Carol after: runs once.

Seen (round 86): the attacker's 8 ids broke (``rj``, ``q-rj``, ``ag``, ``ra``
``:{ran,audit}``), 1 class (the audit agreed with the controller each time).

1. **A withdrawal a merge brings while held is judged as the merge's** (``rj``, ``q-rj``,
   ``ag``, ``ra``): at the release the controller judges the status the merge brought as the
   merge commit's, Mallory's ("E_APPROVER_NOT_ALLOWED: mallory@example.com set status
   rejected ...; ignored"), and the merged branch's own withdrawal (Alice's, Bob's, the
   author's), which with no hold counts as hers (``nh``: rejected), is dropped while the
   plan is held: the next approval runs the plan once, and the fresh-clone audit calls it
   valid. Should (docs/approvals.md): withdrawals "win in every status a plan can still run
   from, in any order of commits"; "Who releases the hold lends the status no rights and
   takes none from it, by a plain commit or by a merge".
   The lab found 6 more ids of the class before the fix (``rp``, ``pe``, ``q-2``
   ``:{ran,audit}``): 14 of 29 broke.
   Fixed (2026-12-01, r86heldmerge): a withdrawal a merged branch made, read while the plan
   is held, is judged as its own commit against what the hold found (its version, status and
   authors; the key at the commit's time) and, when its maker may withdraw, kept in
   ``held_from.side`` (``Lifecycle._held_withdrawal``) and applied at the release as that
   commit's, as ``apply_side_withdrawals`` applies one with no hold (``_apply_held_side``):
   the approval opened since lapses, the version is vetoed, the plan stays ``rejected``; the
   merge's own status change stays the merger's (``mo``, ``mw``). The controller and the
   fresh-clone audit alike; ``INDEX_VERSION`` 114.

Held: ``ff`` (her commit is on the line), ``rr``, ``mo``, ``mw``, ``nh``, ``ok``, ``q-ok``; no twin
ran.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, CAROL, MALLORY, Lab, cases, clone_audit, plan_text
from test_round2_execution_kit import shared

APPROVAL = """\
groups:
  ops: ["alice@example.com", "*@ops.example.com"]
rules:
  - match: {paths: ["plans/q-*"]}
    require: [{group: ops, count: 2}]
"""
#: each variant's branch: the statuses set on it, in order (who, status); merged by Mallory
BRANCH: dict[str, list[tuple[tuple[str, str], str]]] = {
    "rj": [(ALICE, "rejected")],
    "q-rj": [(BOB, "rejected")],
    "ag": [(AGENT, "rejected")],
    "ra": [(ALICE, "rejected"), (MALLORY, "approved")],
    "rp": [(ALICE, "rejected"), (MALLORY, "pending_approval")],
    "rr": [(ALICE, "rejected")],
    "pe": [(ALICE, "rejected")],
    "mo": [(MALLORY, "rejected")],
    "nh": [(ALICE, "rejected")],
}
AFTER = {
    "rj": [BOB],
    "q-rj": [ALICE, CAROL],
    "ag": [ALICE],
    "ff": [BOB],
    "ra": [BOB],
    "rp": [BOB],
    "rr": [BOB],
    "pe": [BOB],
    "q-2": [ALICE, CAROL],
    "mo": [BOB],
    "mw": [BOB],
    "nh": [BOB],
    "ok": [BOB],
    "q-ok": [ALICE, CAROL],
}
SLUGS = list(AFTER)
NO_HOLD = {"nh"}
#: held only after its merge, in the same pass (the twin committed after the merge)
LATE = {"pe"}
RUNS = {"mo": 1, "mw": 1, "ok": 1, "q-ok": 1}


def _rows(lab: Lab) -> dict[str, Any]:
    out = lab.cli("status", "--json", "--config", str(lab.config)).stdout
    return {r["plan"]: r for r in json.loads(out)}


def _branch(lab: Lab, name: str, moves: list[tuple[tuple[str, str], str]], slug: str) -> None:
    lab.git("checkout", "-q", "-b", name, "main")
    for who, status in moves:
        lab.set_status(slug, status)
        lab.commit(f"{who[0]}: {status} {slug} on {name}", who)
    lab.git("checkout", "-q", "main")


def _merge(lab: Lab, name: str) -> None:
    lab.git("merge", "-q", "--no-ff", "-m", f"Mallory: merge {name}", name, who=MALLORY)


def _build(root: Path) -> Lab:
    lab = Lab(root, approval=APPROVAL)
    got: dict[str, Any] = {}
    for slug in SLUGS:
        lab.write(slug, plan_text(slug))
    lab.commit("agent: plans", AGENT)
    lab.run()
    for slug in SLUGS:
        if slug not in NO_HOLD | LATE:
            lab.write(slug, plan_text(f"{slug}-twin"), "PLAN.yaml")
    lab.commit("agent: twins", AGENT)
    lab.run()
    got["held"] = _rows(lab)
    # ff: Alice's branch fast-forwarded onto main (no merge commit), while held
    _branch(lab, "b-ff", [(ALICE, "rejected")], "ff")
    lab.git("merge", "-q", "--ff-only", "b-ff", who=MALLORY)
    for slug, moves in BRANCH.items():
        _branch(lab, f"b-{slug}", moves, slug)
    # mw: Alice's branch changes nothing of the plan; the merge writes the status itself
    lab.git("checkout", "-q", "-b", "b-mw", "main")
    (lab.repo / "mw.txt").write_text("Alice's note\n")
    lab.commit("Alice: a note", ALICE)
    lab.git("checkout", "-q", "main")
    # q-2: Bob's and Carol's branches, forked from the same main, merged one after the other
    _branch(lab, "b-q-2b", [(BOB, "rejected")], "q-2")
    _branch(lab, "b-q-2c", [(CAROL, "approved")], "q-2")
    for slug in BRANCH:
        if slug != "rr":
            _merge(lab, f"b-{slug}")
    lab.git("merge", "-q", "--no-ff", "--no-commit", "b-mw", who=MALLORY)
    lab.set_status("mw", "rejected")
    lab.commit("Mallory: merge b-mw", MALLORY)
    _merge(lab, "b-q-2b")
    lab.git(
        "merge",
        "-q",
        "--no-ff",
        "-X",
        "theirs",
        "-m",
        "Mallory: merge b-q-2c",
        "b-q-2c",
        who=MALLORY,
    )
    for slug in LATE:
        lab.write(slug, plan_text(f"{slug}-twin"), "PLAN.yaml")
    lab.commit("agent: late twins", AGENT)
    lab.run()
    got["merged"] = _rows(lab)
    # rr: the release in the merge commit itself (Mallory removes the twin while merging)
    lab.git("merge", "-q", "--no-ff", "--no-commit", "b-rr", who=MALLORY)
    lab.git("rm", "-q", "plans/rr/PLAN.yaml")
    lab.commit("Mallory: merge b-rr, twin gone", MALLORY)
    for slug in SLUGS:
        if slug not in NO_HOLD | {"rr"}:
            lab.git("rm", "-q", f"plans/{slug}/PLAN.yaml")
    lab.commit("agent: twins gone", AGENT)
    lab.run()
    got["released"] = _rows(lab)
    for step in range(2):
        for slug, whos in AFTER.items():
            if step < len(whos):
                lab.set_status(slug, "approved")
                lab.commit(f"{whos[step][0]}: approve {slug}", whos[step])
        lab.run()
    lab.run()
    got["calls"] = {s: len(lab.calls(s)) for s in SLUGS}
    got["twin_calls"] = {s: len(lab.calls(f"{s}-twin")) for s in SLUGS}
    got["rows"] = _rows(lab)
    _report, valid = clone_audit(lab, root)
    got["valid"] = sorted(valid)
    got["log"] = lab.git("log", "--graph", "--format=%h %an %s", "--name-status")[-6000:]
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r86-approve-heldmerge", _build)


def xfail(cls: str, what: str) -> Any:
    return pytest.mark.xfail(
        strict=True, raises=AssertionError, reason=f"round 86 approve: {cls}: {what}"
    )


IDS = [f"{s}:{w}" for s in SLUGS for w in ("ran", "audit")] + ["all:twins"]
_A = "a withdrawal a merge brings while held is judged as the merge's"
_WHY: dict[str, str] = {}
BROKEN: dict[str, Any] = {
    f"{s}:{w}": xfail(_A, why) for s, why in _WHY.items() for w in ("ran", "audit")
}


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_round86_heldmerge(lab: Lab, vid: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    slug, what = vid.rsplit(":", 1)
    if slug == "all":
        assert sum(got["twin_calls"].values()) == 0, got["twin_calls"]
        return
    plan = f"plans/{slug}"
    row = got["rows"].get(plan, {})
    if what == "audit":
        ran = sorted(p for p, r in got["rows"].items() if r.get("status") == "completed")
        assert (plan in got["valid"]) == (plan in ran), (plan, got["valid"], ran)
        assert (plan in got["valid"]) == (slug in RUNS), (plan, got["valid"])
        return
    notes = (row.get("status"), (row.get("notes") or [])[-4:])
    assert got["calls"][slug] == RUNS.get(slug, 0), (got["calls"][slug], notes)


if __name__ == "__main__":
    import tempfile

    out = Path(tempfile.mkdtemp(prefix="r86heldmerge-", dir="/tmp"))
    print(json.dumps(_build(out).got, indent=1, ensure_ascii=False, default=str))  # type: ignore[attr-defined]
