"""Round 45, who may make a plan run through a pull request whose branch is BEHIND main, or
that merged main in: the merge result versus what the merger saw, and ``plangate check``
versus the controller on those shapes.

Config: the bench's plus ``plans/two/**`` needs two approvals (one elsewhere). Each plan
``plans/<one|two>/<vid>`` is the agent's (one action ``rec``, params ``tag`` and ``n: 1``).
The agent opens ``pr-<vid>`` setting ``status: approved``; Bob merges it (``--no-ff``).

- ``inner-merge``: the branch is cut before the controller's freeze (its ``approved`` is on
  the unfrozen file); after the freeze the agent merges ``main`` into the branch; Bob merges
  (the result is the frozen version, approved: a legitimate approval; it starts).
- ``behind-vote`` (two): cut after the freeze; on main Alice approves (``partial``) after the
  cut; Bob merges: Alice + Bob (starts).
- ``behind-edit``: cut after the freeze; on main the agent then edits ``n: 1`` -> ``n: 2`` (the
  controller freezes the new version); the merge combines cleanly: the result is the agent's
  NEW version with ``approved``, which Bob never saw in the pull request (the merged branch
  holds the old version): an evil merge, ``E_PLAN_HASH_MISMATCH``; nothing runs.
- ``behind-edit-vote`` (two): as ``behind-edit`` with Alice's vote on the old version first.
- ``behind-edit-quorum`` (two): as ``behind-edit``, and after the new version's freeze Alice
  approves the NEW version on main (``partial``); Bob then merges the stale branch (the old
  version): his merge must not complete a quorum for a version he was never shown.
- ``behind-move-edit``: as ``behind-edit``, but on main the agent also ``git mv``s the plan to
  ``plans/one/behind-move-edit2`` in the edit's commit (git's rename detection carries the
  branch's ``approved`` to the new path).
- ``behind-lib``: the parent pins the agent's library ``plans/one/behind-lib-lib``; on main
  the agent edits the library (``n: 2``) and re-pins the parent to it; Bob merges the stale
  branch (the parent pinning the OLD library version).
- ``behind-edit-back``: as ``behind-edit``, and the branch also holds the agent's edit
  ``n: 2`` (same new content, but the controller's freeze of it is only on main): the merged
  branch's version equals the result: Bob saw it; it starts.
- ``unsigned-trailer`` (two): the branch holds Carol's unsigned empty commit
  ``Plan-Approved: plans/two/<vid> <hash>`` (no signatures configured): it never counts; Bob
  alone is ``partial``.
- ``ctl``: a plain pull request merged by Bob (starts).

Asserted: the controller starts exactly the legitimate ones (``rec`` ran once) and never the
others (ran zero times); a clone's ``plangate check --as bob`` before the merge predicts
``start`` exactly when the controller then started.

Seen: held: ``inner-merge``, ``behind-vote``, ``behind-edit-back``, ``ctl`` (each ran once),
``behind-edit-vote`` (Alice's old vote voided; Bob alone: partial), ``unsigned-trailer``
(partial); ``check`` agreed with the controller on every variant. BROKE (strict xfails):
``behind-edit``, ``behind-edit-quorum``, ``behind-move-edit``, ``behind-lib``: the merge
whose second parent holds the OLD version (``n: 1``) plus ``approved`` is taken as Bob's
approval of main's NEW version (``n: 2``, or the re-pinned library's ``n: 2``), which the
merged branch never held, and ``rec`` ran with ``n: 2`` (``behind-edit-quorum``: recorded
approvals Alice (new version, on main) + Bob (the stale merge)). The docs (§5 table, "Merges")
call a merge whose result differs from the merged branch's version an evil merge,
``E_PLAN_HASH_MISMATCH``. ``check`` predicted the same start (it agrees, both wrong).

**Fixed** (the same session): a merge that changes no content of the plan but its status
approves the version a merged branch held with that status: when no merged branch holds
this content with this status at that path (the branch held an older version, or the plan
was moved on the first parent since), the merge is judged as one that changed what runs
(``Lifecycle._merged_another_version``): ``E_PLAN_HASH_MISMATCH`` ("approves content its
merged branch did not hold"), for the controller, the audit and ``check`` alike.
``behind-move-edit`` stays open (strict xfail): the plan was moved on the first parent, so
no merged branch holds a file at its new path, and the status git's rename detection
carried there reads as one the merge wrote itself (a status a merge writes is the merger's
own approval, as in any commit: round 40's ``mergetag-approval`` relies on it). Telling the
two apart needs the merge's rename pairs; not done.

**Fixed** (``behind-move-edit``, issue 11): a merge's status at a path came from a merged
branch when the branch holds it at the path's counterpart: the same path, or, when the
first parent moved the plan since the merge base, the path it had there (or where the
branch moved it in turn), by git's own rename pairs (``GitRepo.renames``, ``git diff
--find-renames`` from the merge base; asked only for a merge that changes a plan's status
at a path its branch does not hold: ``Lifecycle._moved_counterpart``). The stale branch
held the old version (``n: 1``) with ``approved`` at ``plans/one/behind-move-edit``: the
merge approves content its merged branch did not hold, ``E_PLAN_HASH_MISMATCH``; nothing
runs, and ``check --as bob`` (the same Lifecycle on its simulated merge) predicts no start.
A status the merge writes itself, at a path no merged branch holds or moved from, stays
the merger's approval. ``INDEX_VERSION`` 14: an index stored before kept such a merge's
request as the merger's. The branch moving the plan while main edited it (held already: git
carries main's edit to the branch's path, whose file the branch holds: an evil merge), the
same moves without the edit, and an honest pull request that moves a plan and approves it
(they start): ``tests/approval/test_merge_moves.py``.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, CAROL, Lab, plan_text
from test_round2_execution_kit import shared

RULES = 'rules:\n  - match: {paths: ["plans/two/**"]}\n    require: [{count: 2}]\n'
WHERE = {
    "inner-merge": "one",
    "behind-vote": "two",
    "behind-edit": "one",
    "behind-edit-vote": "two",
    "behind-edit-back": "one",
    "behind-edit-quorum": "two",
    "behind-move-edit": "one",
    "behind-lib": "one",
    "unsigned-trailer": "two",
    "ctl": "one",
}
STARTS = {"inner-merge", "behind-vote", "behind-edit-back", "ctl"}
CASES = list(WHERE)

#: none open: ``behind-move-edit`` was fixed (round 45, the merge's rename pairs)
FOUND: dict[str, pytest.MarkDecorator] = {}


def _slug(vid: str) -> str:
    return f"{WHERE[vid]}/{vid}"


def _final(vid: str) -> str:
    """Where the plan is after the attack (``behind-move-edit`` moved on main)."""
    return _slug(vid) + ("2" if vid == "behind-move-edit" else "")


def _lib(n: int) -> str:
    return plan_text("behind-lib-lib", status="draft", params=f"n: {n}\n")


def _parent(digest: str) -> str:
    return plan_text("behind-lib", params="n: 1\n") + (
        f'  - id: 2\n    plan: {{path: plans/one/behind-lib-lib, hash: "{digest}"}}\n    why: lib\n'
    )


def _hash(lab: Lab, slug: str) -> str:
    result = lab.cli("hash", "--config", str(lab.config), f"plans/{slug}", cwd=lab.repo)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout.strip().split()[-1]


def _edit(lab: Lab, vid: str) -> None:
    text = lab.read(_slug(vid))
    assert "n: 1" in text, text
    lab.write(_slug(vid), text.replace("n: 1", "n: 2"))


def _build(root: Path) -> Lab:
    lab = Lab(root, approval=RULES)
    for vid in CASES:
        lab.write(_slug(vid), plan_text(vid, params="n: 1\n"))
    lab.write("one/behind-lib-lib", _lib(1))
    lab.write("one/behind-lib", _parent(_hash(lab, "one/behind-lib-lib")))
    lab.commit("agent adds plans", AGENT)
    lab.git("checkout", "-q", "-b", "pr-inner-merge", "main")
    lab.set_status(_slug("inner-merge"), "approved")
    lab.commit("agent asks inner-merge", AGENT)
    lab.git("checkout", "-q", "main")
    lab.run()  # freeze
    time.sleep(1.05)
    for vid in CASES:
        if vid == "inner-merge":
            continue
        lab.git("checkout", "-q", "-b", f"pr-{vid}", "main")
        if vid == "unsigned-trailer":
            digest = lab.plan(_slug(vid))["frozen"]["hash"]
            lab.commit(f"approve (trailer)\n\nPlan-Approved: plans/{_slug(vid)} {digest}", CAROL)
        if vid == "behind-edit-back":
            _edit(lab, vid)
            lab.commit("agent edits on the branch too", AGENT)
        lab.set_status(_slug(vid), "approved")
        lab.commit(f"agent asks {vid}", AGENT)
        lab.git("checkout", "-q", "main")
    for vid in ("behind-vote", "behind-edit-vote"):
        lab.approve(_slug(vid), ALICE)
    lab.run()  # partial
    time.sleep(1.05)
    for vid in ("behind-edit", "behind-edit-vote", "behind-edit-back", "behind-edit-quorum"):
        _edit(lab, vid)
    _edit(lab, "behind-move-edit")
    lab.git("mv", f"plans/{_slug('behind-move-edit')}", f"plans/{_final('behind-move-edit')}")
    lab.write("one/behind-lib-lib", _lib(2))
    old = lab.read("one/behind-lib")
    new = _parent(_hash(lab, "one/behind-lib-lib"))
    lab.write("one/behind-lib", old[: old.index("  - id: 2")] + new[new.index("  - id: 2") :])
    lab.commit("agent edits on main", AGENT)
    lab.run()  # freeze the new versions
    time.sleep(1.05)
    lab.approve(_slug("behind-edit-quorum"), ALICE)
    lab.run()  # partial: Alice's vote for the NEW version
    time.sleep(1.05)
    lab.git("checkout", "-q", "pr-inner-merge")
    lab.git("merge", "-q", "--no-ff", "-m", "merge main", "main", who=AGENT)
    lab.git("checkout", "-q", "main")
    chk = root / "chk"
    lab.git("clone", "-q", str(lab.repo), str(chk))
    report: dict[str, Any] = {}
    for vid in CASES:
        out = lab.cli(
            "check", "--config", str(lab.config), "--base", "origin/main",
            "--head", f"origin/pr-{vid}", "--as", BOB[1], "--format", "json",
            cwd=chk,
        )  # fmt: skip
        report[vid] = {"out": out.stdout, "err": out.stderr[-2000:]}
    lab.check_report = report  # type: ignore[attr-defined]
    shutil.rmtree(chk, ignore_errors=True)
    merged: dict[str, str] = {}
    for vid in CASES:
        res = _merge(lab, vid)
        merged[vid] = res
    lab.merged = merged  # type: ignore[attr-defined]
    lab.run()
    lab.run()
    return lab


def _merge(lab: Lab, vid: str) -> str:
    out = lab.git(
        "merge", "--no-ff", "-q", "-m", f"merge pr-{vid}", f"pr-{vid}", who=BOB, check=False
    )
    if lab.git("ls-files", "-u").strip():
        lab.git("merge", "--abort", check=False)
        return "conflict"
    return "ok" + out


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r45-prshapes", _build)


def _p(vids: list[str], prefix: str = "") -> list[Any]:
    return [
        pytest.param(v, id=prefix + v, marks=[FOUND[prefix + v]] if prefix + v in FOUND else [])
        for v in vids
    ]


def test_every_merge_was_clean(lab: Lab) -> None:
    assert all(v.startswith("ok") for v in lab.merged.values()), lab.merged  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", _p(sorted(STARTS)))
def test_the_legitimate_ones_run_once(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 1, lab.codes(_slug(vid))


@pytest.mark.parametrize("vid", _p([v for v in CASES if v not in STARTS]))
def test_the_others_never_run(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(_final(vid))
    assert lab.calls(f"{vid}-lib") == [], lab.codes(_final(vid))
    assert not lab.started(_final(vid)), lab.codes(_final(vid))


@pytest.mark.parametrize("vid", _p(CASES, "check-"))
def test_check_matches_the_controller(lab: Lab, vid: str) -> None:
    row = lab.check_report[vid]  # type: ignore[attr-defined]
    assert row["out"].strip(), row["err"]
    report = json.loads(row["out"])
    rows = report if isinstance(report, list) else report.get("plans", [])
    mine = [r for r in rows if r.get("plan") in (f"plans/{_slug(vid)}", f"plans/{_final(vid)}")]
    assert mine, row["out"][:2000]
    predicted = any(r.get("outcome") == "start" for r in mine)
    assert predicted == lab.started(_final(vid)), json.dumps(mine)[:2000]
