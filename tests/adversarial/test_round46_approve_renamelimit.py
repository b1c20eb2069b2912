"""Round 46, who may make a plan run: round 45's fix finds the merged branch's file for a
plan that main MOVED since the merge base by "git's own rename pairs" (``git diff
--find-renames`` from the merge base). The merge itself (ort) pairs renames over the whole
tree and only for the sources the other side changed; the pairs the controller asks for are
asked of the plans folder only, and ``git diff`` gives up inexact rename detection past
``diff.renameLimit`` (1000 sources x 1000 destinations, after exact and unique-basename
matches). Wherever the two disagree, the stale branch's ``approved`` that ort carried to the
moved and edited plan reads as a status the merge wrote itself: the merger's own approval.

Config: the bench's. The agent adds ``plans/one/<vid>`` (``n: 1``) and 1001 junk index entries
``plans/zz-junk/a<i>.txt`` (skip-worktree, one blob). The controller freezes. The agent opens a
stale ``pr-<vid>`` per plan setting ``approved`` (Bob reviews ``n: 1``). On main the agent then
edits the plan (``n: 2``) and ``git mv``s it to ``plans/one/<vid>2``, adding another plan
``plans/one/<vid>-other`` in the same commit (``PLAN.yml`` is then no unique basename); the
controller freezes the new version; Bob merges the stale ``pr-<vid>`` (``--no-ff``, clean: ort
carries ``approved`` to ``<vid>2``).

- ``plain-move-edit``: that alone (round 45's shape; merged before the junk commit);
- ``limit-move-edit``: the same commit also replaces the 1001 junk entries by 1001 others
  (``b<i>.txt``, another blob): ``git diff --find-renames`` over ``plans/`` skips inexact
  renames ("exhaustive rename detection was skipped"), ort does not (one relevant source);
- ``outside-move-edit``: the plan starts OUTSIDE the plans folder (``drafts/<vid>``, the
  stale branch sets ``approved`` there); on main the agent edits it and moves it into
  ``plans/one/<vid>2``: git's rename pair leaves the plans folder;
- ``ctl``: a plain pull request merged by Bob (starts);
- ``limit-writer-move`` / ``plain-writer-move``: Alice's own draft ``plans/one/<vid>-alice``
  is moved by the agent below the agent's ``plans/one/<vid>`` (in the junk commit / in the
  plain one); Alice then approves ``plans/one/<vid>``.

Asserted (the defence): the merged branch held ``n: 1`` with ``approved``; the result is
``n: 2``: ``E_PLAN_HASH_MISMATCH``, ``rec`` never runs for it; ``check --as bob`` on a clone
before the merge predicts the controller's verdict (``limit-move-edit``, ``ctl``); Alice wrote
a file in the plan's folder: ``E_SELF_APPROVAL``.

Seen: held: ``plain-move-edit`` (``E_PLAN_HASH_MISMATCH``), ``ctl`` (ran once), both
``*-writer-move`` (``E_SELF_APPROVAL``: writers are content-based, no rename limit).
BROKE (strict xfails): ``limit-move-edit`` and ``outside-move-edit``: the merge is recorded
as Bob's approval of the new version (``approval.by: bob``, ``plan_hash`` of ``n: 2``) and
``rec`` ran once with ``n: 2``, a version the merged branch never held. ``check --as bob``
predicted ``start`` for ``limit-move-edit`` (it agrees with the controller: both wrong).

Fixed (round 46): no rename pairs are asked any more. A merge that changes a plan's status
brought it through git's merge machinery when merging its parents again (``git merge-tree``)
gives the merge's own blob there; such a status counts only when a merged branch held that
very version (plan hash) with it in a file the branch changed since the merge base, at any
path (``diff-tree --no-renames``): the branch held ``n: 1``, so both merges are refused
``E_PLAN_HASH_MISMATCH`` and ``check --as bob`` predicts no start (docs/approvals.md
"Merges"). The xfail markers are off.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, Lab, plan_text
from test_round2_execution_kit import shared

ATTACKS = ["limit-move-edit", "plain-move-edit", "outside-move-edit"]
CASES = [*ATTACKS, "ctl"]
#: Alice's own plan moved (by the agent) below the agent's plan, then Alice approves it
WRITERS = ["limit-writer-move", "plain-writer-move"]
CHECKED = ["limit-move-edit", "ctl"]
N = 1001

FOUND: dict[str, pytest.MarkDecorator] = {}


def _junk(lab: Lab, prefix: str, remove: str | None = None) -> None:
    """N index entries ``plans/zz-junk/<prefix><i>.txt`` of one blob (skip-worktree: the
    working tree stays small; git and the controller see them in every commit), replacing
    the ``remove`` ones (a different blob: no exact renames)."""
    blob = lab.git("hash-object", "-w", "--stdin", input=f"{prefix} junk\n" * 40).strip()
    rows = []
    for i in range(N):
        if remove:
            rows.append(f"0 {'0' * 40}\tplans/zz-junk/{remove}{i}.txt")
        rows.append(f"100644 {blob}\tplans/zz-junk/{prefix}{i}.txt")
    lab.git("update-index", "--index-info", input="\n".join(rows) + "\n")
    names = "\n".join(f"plans/zz-junk/{prefix}{i}.txt" for i in range(N)) + "\n"
    lab.git("update-index", "--skip-worktree", "--stdin", input=names)


def _move_edit(lab: Lab, vid: str) -> None:
    text = lab.read(f"one/{vid}")
    lab.write(f"one/{vid}", text.replace("n: 1", "n: 2"))
    lab.git("mv", f"plans/one/{vid}", f"plans/one/{vid}2")
    lab.write(f"one/{vid}-other", plan_text(f"{vid}-other", params="n: 2\n"))


def _merge(lab: Lab, vid: str) -> str:
    lab.git("merge", "--no-ff", "-q", "-m", f"merge pr-{vid}", f"pr-{vid}", who=BOB)
    if vid in ATTACKS:
        return str(lab.plan(f"one/{vid}2")["plan"]["status"])
    return "ok"


def _build(root: Path) -> Lab:
    lab = Lab(root)
    for vid in CASES:
        if vid != "outside-move-edit":
            lab.write(f"one/{vid}", plan_text(vid, params="n: 1\n"))
    lab.write("../drafts/outside-move-edit", plan_text("outside-move-edit", params="n: 1\n"))
    for vid in WRITERS:
        lab.write(f"one/{vid}", plan_text(vid))
    _junk(lab, "a")
    lab.commit("agent adds plans", AGENT)
    for vid in WRITERS:
        lab.write(f"one/{vid}-alice", plan_text(f"{vid}-alice", status="draft"))
    lab.commit("alice writes her own plans", ALICE)
    lab.run()  # freeze
    time.sleep(1.05)
    for vid in CASES:
        lab.git("checkout", "-q", "-b", f"pr-{vid}", "main")
        where = "../drafts" if vid == "outside-move-edit" else "one"
        lab.set_status(f"{where}/{vid}", "approved")
        lab.commit(f"agent asks {vid}", AGENT)
        lab.git("checkout", "-q", "main")
    _move_edit(lab, "plain-move-edit")
    lab.git("mv", "plans/one/plain-writer-move-alice", "plans/one/plain-writer-move/sub")
    text = lab.read("../drafts/outside-move-edit")
    lab.write("../drafts/outside-move-edit", text.replace("n: 1", "n: 2"))
    lab.git("mv", "drafts/outside-move-edit", "plans/one/outside-move-edit2")
    lab.commit("agent edits and moves plain-move-edit", AGENT)
    lab.run()  # freeze the new version
    time.sleep(1.05)
    merged = {v: _merge(lab, v) for v in ("plain-move-edit", "outside-move-edit")}
    lab.run()
    _move_edit(lab, "limit-move-edit")
    lab.git("mv", "plans/one/limit-writer-move-alice", "plans/one/limit-writer-move/sub")
    _junk(lab, "b", remove="a")
    lab.commit("agent edits and moves limit-move-edit, tidies", AGENT)
    lab.run()  # freeze the new version
    time.sleep(1.05)
    for vid in WRITERS:
        lab.approve(f"one/{vid}", ALICE)
    chk = root / "chk"
    lab.git("clone", "-q", str(lab.repo), str(chk))
    report: dict[str, Any] = {}
    for vid in CHECKED:
        out = lab.cli(
            "check", "--config", str(lab.config), "--base", "origin/main",
            "--head", f"origin/pr-{vid}", "--as", BOB[1], "--format", "json",
            cwd=chk,
        )  # fmt: skip
        report[vid] = {"out": out.stdout, "err": out.stderr[-2000:]}
    lab.check_report = report  # type: ignore[attr-defined]
    shutil.rmtree(chk, ignore_errors=True)
    for vid in CHECKED:
        merged[vid] = _merge(lab, vid)
    lab.merged = merged  # type: ignore[attr-defined]
    lab.run()
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r46-renamelimit", _build)


def _p(vids: list[str], prefix: str = "") -> list[Any]:
    return [
        pytest.param(v, id=prefix + v, marks=[FOUND[prefix + v]] if prefix + v in FOUND else [])
        for v in vids
    ]


def _final(vid: str) -> str:
    return f"one/{vid}2" if vid in ATTACKS else f"one/{vid}"


def test_the_merges_carried_approved(lab: Lab) -> None:
    for vid in ATTACKS:
        assert lab.merged[vid] == "approved", lab.merged  # type: ignore[attr-defined]


def test_control_runs_once(lab: Lab) -> None:
    assert len(lab.calls("ctl")) == 1, lab.codes("one/ctl")


@pytest.mark.parametrize("vid", _p(list(ATTACKS)))
def test_the_stale_merge_never_runs(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(_final(vid))
    assert not lab.started(_final(vid)), lab.codes(_final(vid))
    assert "E_PLAN_HASH_MISMATCH" in lab.codes(_final(vid)), lab.codes(_final(vid))


@pytest.mark.parametrize("vid", _p(CHECKED, "check-"))
def test_check_matches_the_controller(lab: Lab, vid: str) -> None:
    row = lab.check_report[vid]  # type: ignore[attr-defined]
    assert row["out"].strip(), row["err"]
    report = json.loads(row["out"])
    rows = report if isinstance(report, list) else report.get("plans", [])
    mine = [r for r in rows if r.get("plan") in (f"plans/one/{vid}", f"plans/{_final(vid)}")]
    assert mine, row["out"][:2000]
    predicted = any(r.get("outcome") == "start" for r in mine)
    assert predicted == lab.started(_final(vid)), json.dumps(mine)[:2000]


@pytest.mark.parametrize("vid", _p(WRITERS))
def test_the_moved_plans_writer_cannot_approve(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(f"one/{vid}")
    assert not lab.started(f"one/{vid}"), lab.codes(f"one/{vid}")
    assert "E_SELF_APPROVAL" in lab.codes(f"one/{vid}"), lab.codes(f"one/{vid}")
