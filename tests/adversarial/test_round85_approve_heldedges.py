"""Round 85, approval and policy: round 84's held-status release (r84heldwd: a status set
while a plan is held ``E_PLAN_AMBIGUOUS`` is judged at the release as the commit that set it)
when MORE than one status is set while held, when the release is a merge whose other side set
the status, and when the status is set in the release commit itself; and round 84's
plans-folder spellings (r84plansdir) for writers when the spelling arrives by a merge.

Lab (one, built once, a few ``run --once`` passes; ``plans_dir`` the default ``plans``). The
agent commits one plan per variant (frozen by the first pass); for the held variants it then
commits a twin ``plans/<SLUG>/PLAN.yml``; statuses are set while held; the twin goes; Bob
(an allowed approver) approves; ``<slug>:ran`` counts the recording tool's calls,
``<slug>:audit`` the fresh clone's ``plangate audit`` (no config) calls valid exactly the
runs the controller made.

Held statuses (each expected to run NOTHING: "Withdrawals ... win in every status a plan can
still run from, in any order of commits"):
- ``am``: Alice ``rejected`` while held, then MALLORY sets ``pending_approval`` back while held.
- ``ar``: Alice ``rejected`` while held, then Mallory ``git revert``s Alice's commit while held.
- ``aa``: Alice ``rejected`` while held, then Alice ``approved`` while held.
- ``ma``: Mallory ``rejected`` while held (ignored), then Alice ``rejected`` while held.
- ``gd``: a gated plan paused at its gate: Alice ``aborted`` while held, then Mallory
  ``approved`` while held; later Bob approves the gate: action 2 (``gd2``) never runs.
- ``rc``: Alice sets ``rejected`` in the release commit itself (her ``git rm`` of the twin).
- ``bm``: on a branch made while held Alice sets ``rejected`` and removes the twin; MALLORY
  merges it ``--no-ff`` (the release is Mallory's merge; its other side set the status).
- ``bx``: on a branch made while held Alice sets ``rejected``; the agent removes the twin on
  main (the release); Mallory merges Alice's branch afterwards.
- ``nh`` (control, no hold): Alice ``rejected``, Mallory ``pending_approval``: nothing runs.
- ``mc`` (control): MALLORY sets ``rejected`` in the release commit (her ``git rm``): ignored,
  Alice's later approval runs once. ``ok`` (control): Alice approves: runs once.

Writers through a merged spelling of the plans folder (Bob's note, then Bob's approval:
``E_SELF_APPROVAL``, nothing runs):
- ``pm``: ``PLANS/pm/NOTES.md``, ``pd``: ``plans./pd/NOTES.md``, ``pb``: the root file
  ``plans\\pb\\NOTES.md``, each on Bob's branch the agent merges ``--no-ff``.
- ``pff``: ``Plans/pff/NOTES.md`` on Bob's branch fast-forwarded into main.
- ``sl``: a SYMLINK ``PLANS/sl/NOTES.md`` (to ``../../README``) committed by Bob on main.
- ``slo`` (control): the same symlink at ``plans/slo/NOTES.md``: ``E_SELF_APPROVAL``.
- ``po`` (control): ``plans/po/NOTES.md`` on the merged branch: ``E_SELF_APPROVAL``.

Seen (round 85): 18 ids broke, 3 classes (the audit agreed with the controller each time).

1. **Of several statuses set while held only the last is judged** (``am``, ``ar``, ``aa``,
   ``gd`` ``:{ran,audit}``; more in test_round85_approve_heldmany): Alice's ``rejected`` set
   while held is lost when a later commit, still while held, sets another status (Mallory's
   ``pending_approval``, Mallory's ``git revert`` of Alice's commit, Alice's own
   ``approved``; for a paused run Alice's ``aborted`` then Mallory's ``approved``): after
   the release Bob's approval runs the plan (``gd``: action 2 ran). Without a hold (``nh``)
   the same pair leaves the plan ``rejected`` ("E_ILLEGAL_TRANSITION: mallory@example.com set
   status pending_approval (from rejected)") and Bob's approval is ignored::

       # plans/am frozen; the agent's twin plans/AM/PLAN.yml committed; run --once (held)
       sed -i 's/  status: .*/  status: rejected/' plans/am/PLAN.yml
       git -c user.name=Alice -c user.email=alice@example.com commit -qam "alice: reject am"
       sed -i 's/  status: .*/  status: pending_approval/' plans/am/PLAN.yml
       git -c user.name=Mallory -c user.email=mallory@example.com commit -qam "mallory: back"
       git rm -rq plans/AM && git commit -qm "agent: twin gone"
       plangate run --once --config ../plangate.yml
       sed -i 's/  status: .*/  status: approved/' plans/am/PLAN.yml
       git -c user.name=Bob -c user.email=bob@ops.example.com commit -qam "bob: approve am"
       plangate run --once --config ../plangate.yml
       plangate status: completed  plans/am ... bob@ops.example.com  plangate: complete plans/am
       (fresh clone) plangate audit: plans/am: start cfe37fdf0c91 ... approved by
           bob@ops.example.com in 0ae99b92fcae: valid -> complete

   Should (docs/approvals.md): withdrawals by an allowed approver "win in every status a plan
   can still run from, in any order of commits"; "The rule is one for every status a human
   sets while held: the release judges it as the commit that set it" (every such commit, not
   only the last one's).
   Fixed (2026-12-01, r85heldmany): a hold keeps every status set while held, in commit order
   (``held_from.decisions``, bounded: every withdrawal and the last status kept), and the
   release judges each as its own commit in that order (``Lifecycle._held_steps``, then the
   last by ``_held_maker``), as with no hold (``nh``); the controller and the audit alike.
2. **A writer through a spelling of the plans folder that comes by a merge is no writer**
   (``pm``, ``pd``, ``pb`` ``:{ran,audit}``; with ``plans_dir: ops/plans`` in
   test_round85_approve_opsdir): Bob's ``PLANS/pm/NOTES.md`` (``plans./pd/``, the root file
   ``plans\\pb\\NOTES.md``) on his branch, merged ``--no-ff`` by the agent, then his approval:
   it runs, the audit calls it valid. The same note committed on main (round 84's ``PLANS/rr``),
   fast-forwarded (``pff``), or merged in the plan's own spelling (``po``) is
   ``E_SELF_APPROVAL``::

       git checkout -qb notes; mkdir -p PLANS/pm; echo Reviewed > PLANS/pm/NOTES.md
       git add -A; git -c user.name=Bob -c user.email=bob@ops.example.com commit -qm "bob: note"
       git checkout -q main; git merge -q --no-ff -m "merge notes" notes
       (Bob sets approved in plans/pm/PLAN.yml; run --once)
       completed  plans/pm  d19b1437a3e7 medium bob@ops.example.com  plangate: complete plans/pm

   Should (docs/approvals.md): a file in a spelling of the plans folder "is exactly what the
   same file in the plan's folder is, whenever it came (before the plan, on a merged branch):
   its committer is a writer, refused E_SELF_APPROVAL". Fixed (2026-12-01, r85mergespell):
   the merged branches' walk (``Lifecycle.merged_authors``) asked ``git log`` for ``plans``
   alone; it asks the paths the first-parent line is read by, with the spellings found in
   every commit's tree (``Commits.folder_spellings(merged=True)``).
3. **A symlink committed into the plan's folder makes no writer** (``sl``, ``slo``
   ``:{ran,audit}``): Bob commits ``plans/slo/NOTES.md`` as a symlink (``-> ../../README``;
   ``PLANS/sl/NOTES.md`` alike), then approves: it runs; ``plangate status`` lists the link
   only as "E_UNSAFE_PATH: plans/sy/NOTES.md is a symbolic link in the plans folder; it is
   not followed". Should (docs/approvals.md): "Whoever commits any file into a plan's folder
   (notes, a draft, a patch, anything but the status change of an approval) is a writer of the
   plan that folder holds or will hold, whatever the file's bytes". (The lead may rule a link
   no file; then ``slo``/``sl`` become "decided".) Fixed (2026-12-01, r85mergespell): any
   entry committed in a plan's folder, whatever its mode (a link, a gitlink), makes its
   committer a writer (``Lifecycle._blob_writers``); the link stays unread.

Held: ``ma`` (Mallory's rejection then Alice's: rejected), ``rc`` (Alice's rejection in the
release commit: rejected), ``bm`` (her rejection and release on a branch Mallory merges:
rejected), ``bx`` (her rejection on a branch merged after the release: rejected), ``nh``,
``mc`` (Mallory's rejection in her release commit ignored; Alice's approval ran once), ``ok``,
``pff``, ``po``; no twin's text ever ran; the lab is live (``gd`` paused at its gate).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, MALLORY, Lab, cases, clone_audit, plan_text
from test_round2_execution_kit import shared

HELD = ["am", "ar", "aa", "ma", "gd", "rc", "mc", "bm", "bx"]
MERGED = {
    "pm": "PLANS/pm/NOTES.md",
    "pd": "plans./pd/NOTES.md",
    "pb": "plans\\pb\\NOTES.md",
    "po": "plans/po/NOTES.md",
}
WRITERS = [*MERGED, "pff", "sl", "slo"]
SLUGS = [*HELD, "nh", "ok", *WRITERS]
RUNS = {"mc": 1, "ok": 1}


def _put(lab: Lab, rel: str, text: str) -> None:
    path = lab.repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))


def _gated(v: str) -> str:
    return plan_text(v) + (
        f'  - id: 2\n    tool: rec\n    why: "second"\n    requires_approval: true\n'
        f'    params: {{tag: "{v}2"}}\n'
    )


def _rows(lab: Lab) -> dict[str, Any]:
    out = lab.cli("status", "--json", "--config", str(lab.config)).stdout
    return {r["plan"]: r for r in json.loads(out)}


def _set(lab: Lab, slug: str, status: str, who: tuple[str, str]) -> str:
    lab.set_status(slug, status)
    return lab.commit(f"{who[0]}: {status} {slug}", who)


def _build(root: Path) -> Lab:
    lab = Lab(root)
    got: dict[str, Any] = {}
    for slug in SLUGS:
        lab.write(slug, _gated(slug) if slug == "gd" else plan_text(slug))
    lab.commit("agent: plans", AGENT)
    lab.run()
    # writers: a fast-forward, then a --no-ff merge, then a symlink on main
    lab.git("checkout", "-q", "-b", "ff1")
    _put(lab, "Plans/pff/NOTES.md", "Reviewed.\n")
    lab.commit("bob: note (ff)", BOB)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--ff-only", "ff1", who=AGENT)
    lab.git("checkout", "-q", "-b", "notes")
    for rel in MERGED.values():
        _put(lab, rel, "Reviewed on a branch.\n")
    lab.commit("bob: notes on a branch", BOB)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge notes", "notes", who=AGENT)
    (lab.repo / "PLANS" / "sl").mkdir(parents=True)
    os.symlink("../../README", lab.repo / "PLANS" / "sl" / "NOTES.md")
    (lab.repo / "plans" / "slo").mkdir(parents=True, exist_ok=True)
    os.symlink("../../README", lab.repo / "plans" / "slo" / "NOTES.md")
    lab.commit("bob: symlink notes", BOB)
    _set(lab, "gd", "approved", ALICE)
    lab.run()
    got["paused"] = _rows(lab).get("plans/gd", {}).get("status")
    _set(lab, "nh", "rejected", ALICE)
    _set(lab, "nh", "pending_approval", MALLORY)
    for slug in HELD:
        lab.write(slug.upper(), plan_text(f"{slug}-twin"))
    lab.commit("agent: twins", AGENT)
    lab.run()
    got["held"] = _rows(lab)
    _set(lab, "am", "rejected", ALICE)
    _set(lab, "am", "pending_approval", MALLORY)
    bad = _set(lab, "ar", "rejected", ALICE)
    lab.git("revert", "--no-edit", bad, who=MALLORY)
    _set(lab, "aa", "rejected", ALICE)
    _set(lab, "aa", "approved", ALICE)
    _set(lab, "ma", "rejected", MALLORY)
    lab.set_status("ma", "pending_approval")
    lab.commit("mallory: back", MALLORY)
    _set(lab, "ma", "rejected", ALICE)
    _set(lab, "gd", "aborted", ALICE)
    _set(lab, "gd", "approved", MALLORY)
    lab.git("checkout", "-q", "-b", "bmb")
    _set(lab, "bm", "rejected", ALICE)
    lab.git("rm", "-rq", "plans/BM")
    lab.commit("alice: twin BM gone", ALICE)
    lab.git("checkout", "-q", "-b", "bxb", "main")
    _set(lab, "bx", "rejected", ALICE)
    lab.git("checkout", "-q", "main")
    lab.run()
    got["while"] = _rows(lab)
    for slug in ("am", "ar", "aa", "ma", "gd", "bx"):
        lab.git("rm", "-rq", f"plans/{slug.upper()}")
    lab.commit("agent: twins gone", AGENT)
    lab.git("rm", "-rq", "plans/RC")
    _set(lab, "rc", "rejected", ALICE)
    lab.git("rm", "-rq", "plans/MC")
    _set(lab, "mc", "rejected", MALLORY)
    lab.git("merge", "-q", "--no-ff", "-m", "merge bmb", "bmb", who=MALLORY)
    lab.git("merge", "-q", "--no-ff", "-m", "merge bxb", "bxb", who=MALLORY)
    lab.run()
    got["released"] = _rows(lab)
    for slug in ("am", "ar", "aa", "ma", "rc", "bm", "bx", "nh", "gd", *WRITERS):
        lab.set_status(slug, "approved")
    lab.commit("bob: approve", BOB)
    for slug in ("mc", "ok"):
        lab.set_status(slug, "approved")
    lab.commit("alice: approve", ALICE)
    lab.run()
    lab.run()
    got["calls"] = {s: len(lab.calls(s)) for s in SLUGS}
    got["calls"]["gd"] = len(lab.calls("gd2"))
    got["gd1"] = len(lab.calls("gd"))
    got["twin_calls"] = {s: len(lab.calls(f"{s}-twin")) for s in HELD}
    got["rows"] = _rows(lab)
    _report, valid = clone_audit(lab, root)
    got["valid"] = sorted(valid)
    got["log"] = lab.git("log", "--format=%h %an %s", "--name-status")[-4000:]
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r85-approve-heldedges", _build)


def xfail(cls: str, what: str) -> Any:
    return pytest.mark.xfail(
        strict=True, raises=AssertionError, reason=f"round 85 approve: {cls}: {what}"
    )


IDS = [f"{s}:{w}" for s in SLUGS for w in ("ran", "audit")] + ["all:twins", "gd:paused"]
#: every class found here is fixed (r85heldmany: A; r85mergespell: B, C)
_WHY: dict[str, tuple[str, str]] = {}
BROKEN: dict[str, Any] = {
    f"{s}:{w}": xfail(*why) for s, why in _WHY.items() for w in ("ran", "audit")
}


def _brief(row: dict[str, Any]) -> Any:
    return (row.get("status"), (row.get("notes") or [])[-3:])


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_round85_heldedges(lab: Lab, vid: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    slug, what = vid.split(":")
    if slug == "all":
        assert sum(got["twin_calls"].values()) == 0, got["twin_calls"]
        return
    plan = f"plans/{slug}"
    row = got["rows"].get(plan, {})
    if what == "paused":  # the lab is live: gd stopped at its gate, action 1 ran once
        assert got["paused"] == "awaiting_approval" and got["gd1"] == 1, got["paused"]
        return
    if what == "audit":
        ran = sorted(p for p, r in got["rows"].items() if r.get("status") == "completed")
        if slug == "gd":  # started on Alice's first approval: valid, never completed
            assert plan in got["valid"] and plan not in ran, (got["valid"], ran)
            return
        assert (plan in got["valid"]) == (plan in ran), (plan, got["valid"], ran)
        assert (plan in got["valid"]) == (slug in RUNS), (plan, got["valid"])
        return
    assert got["calls"][slug] == RUNS.get(slug, 0), (got["calls"][slug], _brief(row))
    if slug in WRITERS:
        assert "E_SELF_APPROVAL" in json.dumps(row, ensure_ascii=False), _brief(row)


if __name__ == "__main__":
    import tempfile

    out = Path(tempfile.mkdtemp(prefix="r85he-", dir="/tmp/atk85a"))
    print(json.dumps(_build(out).got, indent=1, ensure_ascii=False, default=str))  # type: ignore[attr-defined]
