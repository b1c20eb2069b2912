"""Round 85, approval and policy: round 84's plans-folder spellings (r84plansdir) when the
configured ``plans_dir`` is NOT ``plans`` but a nested ``ops/plans``: a writer through a
spelling of the configured folder, and a twin plan file below such a spelling.

Lab (one, built once, a few ``run --once`` passes). Config ``plans_dir: ops/plans``. The
agent commits one plan per variant at ``ops/plans/<slug>/PLAN.yml`` (frozen by the first
pass).

Writers (``<slug>:ran`` Bob's approval after his note ran nothing, refused
``E_SELF_APPROVAL``; ``<slug>:audit`` the fresh clone's ``plangate audit`` with no config calls
valid exactly the runs the controller made): Bob commits ``NOTES.md`` at a path that is
``ops/plans/<slug>/NOTES.md`` on some checkout, then sets ``approved``:
- ``wuo``: ``OPS/plans/wuo/`` (case of the first segment).
- ``wup``: ``ops/PLANS/wup/`` (case of the second segment).
- ``wdt``: ``ops./plans/wdt/`` (Windows drops the trailing dot).
- ``wpd``: ``ops/plans./wpd/``.
- ``wbs``: a root FILE ``ops\\plans\\wbs\\NOTES.md``.
- ``wbm``: a file ``plans\\wbm\\NOTES.md`` inside ``ops/``.
- ``wmg``: ``ops/PLANS/wmg/`` on a branch the agent merges ``--no-ff``.
- ``wcd``: ``OPS/plans/wcd/`` committed and deleted BEFORE the plan came; judged against its
  own-spelling analog ``wcn`` (``ops/plans/wcn/``, the same): the two must agree.
- ``wow`` (control): ``ops/plans/wow/`` itself: ``E_SELF_APPROVAL``.
- ``wtp`` (control): ``plans/wtp/`` (a top-level ``plans/``, no plans folder here): Bob is no
  writer, his approval runs once.

Twin plan files (``<slug>:ran`` Alice's approval made after Mallory's twin came runs nothing;
``<slug>:held`` the row names ``E_PLAN_AMBIGUOUS``; ``:audit`` as above): Mallory commits
another plan's text (tag ``<slug>-twin``) at a path that is ``ops/plans/<slug>/PLAN.yml`` on
some checkout:
- ``tuo`` ``OPS/plans/``, ``tup`` ``ops/PLANS/``, ``tdt`` ``ops./plans/``, ``tpd``
  ``ops/plans./``, ``tbs`` root file ``ops\\plans\\tbs\\PLAN.yml``, ``tbm`` ``plans\\tbm\\PLAN.yml``
  inside ``ops/``.
- ``tcs`` (control): ``ops/plans/TCS/PLAN.yml`` (a twin of the plan's own folder): held.
- ``tok`` (control): no twin: runs once.

Seen (round 85): 8 ids broke, 1 class (the audit agreed with the controller each time).

1. **A writer through a spelling of the plans folder that comes by a merge is no writer**
   (``wmg``, ``wmu``, ``wmd``, ``wmb`` ``:{ran,audit}``): Bob's ``ops/PLANS/wmg/NOTES.md``
   (``OPS/plans/``, ``ops/plans./``, the root file ``ops\\plans\\wmb\\NOTES.md``) on his
   branch, merged ``--no-ff`` by the agent, then Bob's approval: the plan runs
   (``plangate: complete ops/plans/wmg``) and the fresh clone's audit calls it valid. The same
   notes committed on main (``wuo``, ``wup``, ``wdt``, ``wpd``, ``wbs``, ``wbm``) and the
   plan's own spelling merged (``wmo``) are refused ``E_SELF_APPROVAL``. The same with the
   default ``plans`` (test_round85_approve_heldedges ``pm``). Should (docs/approvals.md): a
   file in a spelling of the plans folder "is exactly what the same file in the plan's folder
   is, whenever it came (before the plan, on a merged branch): its committer is a writer,
   refused E_SELF_APPROVAL". Fixed (2026-12-01, r85mergespell): the merged branches' walk
   asks ``git log`` for the paths the first-parent line is read by, with the spellings found
   in every commit's tree (``Commits.folder_spellings(merged=True)``), not ``ops/plans`` alone.

Held: every spelling of ``ops/plans`` committed on main is the plans folder for writers and a
twin plan file below it (also by a merge, ``tmg``) is held ``E_PLAN_AMBIGUOUS`` and never
runs; ``wtp`` (a top-level ``plans/`` is no plans folder here: Bob's approval ran once),
``tok``, ``tcs``, ``tmo``. Conservative, not a break: ``wcd``: Bob's note made and deleted in
``OPS/plans/wcd/`` before the plan came makes him a writer (refused), while its own-spelling
analog ``wcn`` (``ops/plans/wcn/``, also deleted before the plan) does not (ran once), where
docs/approvals.md says the spelling "is exactly what the same file in the plan's folder is";
round 84's ``rb``/``rbo`` agree for a plan-folder twin. Made to agree (2026-12-01,
r85mergespell), by the docs' round-55 rule ("A folder's writers count since it was last
emptied ... a folder is emptied only when no twin of it is left"): a spelled folder is emptied
as the plans folder's own is (``Lifecycle._folders_above``), so ``wcd`` runs once as ``wcn``
does; a place is kept while any folder one with it on some checkout holds a file
(``_place_held``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, MALLORY, Lab, cases, clone_audit, plan_text
from test_round2_execution_kit import shared

PD = "ops/plans"
WRITERS = {
    "wuo": "OPS/plans/wuo/NOTES.md",
    "wup": "ops/PLANS/wup/NOTES.md",
    "wdt": "ops./plans/wdt/NOTES.md",
    "wpd": "ops/plans./wpd/NOTES.md",
    "wbs": "ops\\plans\\wbs\\NOTES.md",
    "wbm": "ops/plans\\wbm\\NOTES.md",
    "wow": "ops/plans/wow/NOTES.md",
    "wtp": "plans/wtp/NOTES.md",
}
MERGED = {
    "wmg": "ops/PLANS/wmg/NOTES.md",
    "wmu": "OPS/plans/wmu/NOTES.md",
    "wmd": "ops/plans./wmd/NOTES.md",
    "wmb": "ops\\plans\\wmb\\NOTES.md",
    "wmo": "ops/plans/wmo/NOTES.md",
}
MTWINS = {"tmg": "ops/PLANS/tmg/PLAN.yml", "tmo": "ops/plans/TMO/PLAN.yml"}
EARLY = {"wcd": "OPS/plans/wcd/NOTES.md", "wcn": "ops/plans/wcn/NOTES.md"}
TWINS = {
    "tuo": "OPS/plans/tuo/PLAN.yml",
    "tup": "ops/PLANS/tup/PLAN.yml",
    "tdt": "ops./plans/tdt/PLAN.yml",
    "tpd": "ops/plans./tpd/PLAN.yml",
    "tbs": "ops\\plans\\tbs\\PLAN.yml",
    "tbm": "ops/plans\\tbm\\PLAN.yml",
    "tcs": "ops/plans/TCS/PLAN.yml",
}
WSLUGS = [*WRITERS, *MERGED, *EARLY]
TSLUGS = [*TWINS, *MTWINS, "tok"]
RUNS = {"wtp": 1, "tok": 1}


def _put(lab: Lab, rel: str, text: str) -> None:
    path = lab.repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8"))


def _status(lab: Lab, slug: str, status: str) -> None:
    path = lab.repo / PD / slug / "PLAN.yml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("status: pending_approval", f"status: {status}", 1))


def _rows(lab: Lab) -> dict[str, Any]:
    out = lab.cli("status", "--json", "--config", str(lab.config)).stdout
    return {r["plan"]: r for r in json.loads(out)}


def _build(root: Path) -> Lab:
    lab = Lab(root, extra=f"plans_dir: {PD}\n")
    got: dict[str, Any] = {}
    for rel in EARLY.values():
        _put(lab, rel, "Early review.\n")
    lab.commit("bob: early notes", BOB)
    for rel in EARLY.values():
        (lab.repo / rel).unlink()
    lab.commit("bob: early notes gone", BOB)
    for slug in [*WSLUGS, *TSLUGS]:
        _put(lab, f"{PD}/{slug}/PLAN.yml", plan_text(slug))
    lab.commit("agent: plans", AGENT)
    lab.run()
    got["first"] = _rows(lab)
    for rel in WRITERS.values():
        _put(lab, rel, "Reviewed.\n")
    lab.commit("bob: notes", BOB)
    lab.git("checkout", "-q", "-b", "notes")
    for rel in MERGED.values():
        _put(lab, rel, "Reviewed on a branch.\n")
    lab.commit("bob: note on a branch", BOB)
    lab.git("checkout", "-q", "-b", "twins", "main")
    for slug, rel in MTWINS.items():
        _put(lab, rel, plan_text(f"{slug}-twin"))
    lab.commit("mallory: twins on a branch", MALLORY)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge notes", "notes", who=AGENT)
    lab.git("merge", "-q", "--no-ff", "-m", "merge twins", "twins", who=AGENT)
    for slug, rel in TWINS.items():
        _put(lab, rel, plan_text(f"{slug}-twin"))
    lab.commit("mallory: twins", MALLORY)
    lab.run()
    got["held"] = _rows(lab)
    for slug in WSLUGS:
        _status(lab, slug, "approved")
    lab.commit("bob: approve", BOB)
    for slug in TSLUGS:
        _status(lab, slug, "approved")
    lab.commit("alice: approve", ALICE)
    lab.run()
    lab.run()
    got["calls"] = {s: len(lab.calls(s)) for s in [*WSLUGS, *TSLUGS]}
    got["twin_calls"] = {s: len(lab.calls(f"{s}-twin")) for s in [*TWINS, *MTWINS]}
    got["rows"] = _rows(lab)
    _report, valid = clone_audit(lab, root)
    got["valid"] = sorted(valid)
    got["log"] = lab.git("log", "--format=%h %an %s", "--name-status")[-4000:]
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r85-approve-opsdir", _build)


def xfail(cls: str, what: str) -> Any:
    return pytest.mark.xfail(
        strict=True, raises=AssertionError, reason=f"round 85 approve: {cls}: {what}"
    )


IDS = (
    [f"{s}:{w}" for s in WSLUGS if s != "wcn" for w in ("ran", "audit")]
    + [f"{s}:{w}" for s in TSLUGS for w in ("ran", "held", "audit")]
    + ["all:twins"]
)
BROKEN: dict[str, Any] = {}  # round 85's wmg, wmu, wmd, wmb: fixed (r85mergespell)


def _brief(row: dict[str, Any]) -> Any:
    return (row.get("status"), row.get("code"), (row.get("notes") or [])[-3:])


@pytest.mark.parametrize("vid", cases(IDS, IDS, BROKEN))
def test_round85_opsdir(lab: Lab, vid: str) -> None:
    got = lab.got  # type: ignore[attr-defined]
    slug, what = vid.split(":")
    if slug == "all":  # no twin's text ever ran
        assert sum(got["twin_calls"].values()) == 0, got["twin_calls"]
        return
    plan = f"{PD}/{slug}"
    row = got["rows"].get(plan, {})
    if what == "audit":
        ran = sorted(p for p, r in got["rows"].items() if r.get("status") == "completed")
        assert (plan in got["valid"]) == (plan in ran), (plan, got["valid"], ran)
        if slug != "wcd":
            assert (plan in got["valid"]) == (slug in RUNS), (plan, got["valid"])
        return
    if what == "held":
        held = json.dumps(got["held"].get(plan, {}), ensure_ascii=False)
        assert ("E_PLAN_AMBIGUOUS" in held) == (slug != "tok"), held
        return
    if slug == "wcd":
        # conservative, not a break (round 85 note): a note made and deleted before the plan in
        # ``OPS/plans/`` makes Bob a writer, its own-spelling analog ``wcn`` does not; never more
        assert got["calls"]["wcd"] <= got["calls"]["wcn"], (got["calls"], _brief(row))
        return
    assert got["calls"][slug] == RUNS.get(slug, 0), (got["calls"][slug], _brief(row))
    if slug.startswith("w") and slug not in RUNS:
        assert "E_SELF_APPROVAL" in json.dumps(row, ensure_ascii=False), _brief(row)


if __name__ == "__main__":
    import tempfile

    out = Path(tempfile.mkdtemp(prefix="r85od-", dir="/tmp/atk85a"))
    print(json.dumps(_build(out).got, indent=1, ensure_ascii=False, default=str))  # type: ignore[attr-defined]
