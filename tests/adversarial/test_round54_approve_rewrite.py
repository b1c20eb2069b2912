"""Round 54, self-approval: an approver's plan text written OVER an existing file outside the
plan paths (an edit in place of a scratch file, not an add), then moved into a new plan
folder.

docs/approvals.md ("Who changed the content", round 51): a plan a commit makes takes the
writers of whatever git pairs it from; for a file outside the plan paths, "the writers of
its text followed back: the authors of its bytes and of their hashed content, the makers of
every edit in place of that path, and, at the commit that added it, the writers of what git
pairs it from in turn (there with ``--find-copies-harder`` ...), so a copy of an unchanged
plan with an edit is found". Round 51 copied her plan into a NEW file (an add); here the
agent's scratch file already exists, so the copy lands as a modification: git pairs nothing
for it (no ``-B``), and "the makers of every edit in place" are the agent alone.

Config: the bench's, plus a ``count: 2`` rule for ``plans/rw-two2``. Alice (an allowed
approver) commits ``plans/a/<vid>/PLAN.yml`` (``draft``), and the agent commits its own
scratch files (``drafts/<vid>.yml`` holding ``scratch``; for ``rw-infolder`` a
``notes.txt`` in its own plan folder ``plans/own-rw-infolder``). Then, in the agent's own
commits (her plan file always stays where it is, unchanged):

- ``add-edit`` (control, round 51's ``cpedit-outside``): her text with an edit as a NEW file
  ``drafts/add-edit-new.yml``, then ``git mv`` to ``plans/add-edit2/PLAN.yml``.
- ``rw-edit``: her text with an edit written over ``drafts/rw-edit.yml``; then ``git mv``.
- ``rw-exact``: her exact bytes over the scratch file; a later commit edits it in place;
  then ``git mv``.
- ``rw-exact-mvedit``: her exact bytes over the scratch file; then ``git mv`` with the edit
  in the carrying commit.
- ``rw-infolder``: her text with an edit over the agent's ``notes.txt`` in its own plan
  folder; then ``git mv`` of that file to ``plans/rw-infolder2/PLAN.yml``.
- ``rw-pr``: ``rw-edit`` on a branch merged ``--no-ff``; the ``git mv`` on main.
- ``rw-two``: ``rw-edit`` at a path the rule gives ``count: 2``: Bob approves first
  (``partial``), then Alice; her vote must not complete the quorum.

The controller freezes each ``plans/<vid>2``; Alice approves them in one commit; two passes;
``plangate audit --json`` in the repo.

Asserted (the defence): her approval is refused ``E_SELF_APPROVAL``, ``rec`` never runs for
the variant, the audit lists no run of it.

Seen: ``add-edit`` and ``rw-exact-mvedit`` held (``E_SELF_APPROVAL``: the carrying commit
pairs the plan with a file holding exactly her bytes). BROKE (strict xfails): ``rw-edit``,
``rw-exact``, ``rw-infolder``, ``rw-pr`` and ``rw-two`` (Bob's and Alice's votes): the
controller froze the carried plan, took Alice's approval, started and completed it (``rec``
ran once); the audit lists the run as valid. ``git diff-tree -M -C --find-copies-harder``
shows the rewriting commit as ``M drafts/rw-edit.yml``: a file whose bytes are replaced is
never paired (git's ``-B`` breaks only files of 400 bytes or more), and the exact bytes the
scratch path held in between (``rw-exact``) are not traced to her plan. Fix direction: treat
a commit that rewrites a followed file as one that adds it (pair it with ``--find-copies-
harder`` as for an add), and take the authors of every byte-exact version a followed path
held.

Fixed (2026-11-29): every edit in place met while following a path back is judged as git
judges a rewrite: the commit is paired against its parent's tree in a scratch index where
the path's old version lies at another name (``Lifecycle._rewritten_from``). When git pairs
the new text with that old version the change is an edit in place (its makers are writers,
the walk goes on); otherwise the text was written there anew and takes the writers of what
git pairs it from (her plan: ``C`` from ``plans/a/<vid>/PLAN.yml``), and the walk stops (no
writer of the bytes that did not survive). ``rw-edit``, ``rw-exact``, ``rw-infolder``,
``rw-pr`` and ``rw-two`` are refused ``E_SELF_APPROVAL``; the audit lists no run.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab, cases, plan_text
from test_round2_execution_kit import shared

VIDS = ["add-edit", "rw-edit", "rw-exact", "rw-exact-mvedit", "rw-infolder", "rw-pr", "rw-two"]
BROKEN: dict[str, object] = {}
RULE = "rules:\n  - {match: {paths: ['plans/rw-two2']}, require: [{count: 2}]}\n"


def _scratch(vid: str) -> str:
    return "plans/own-rw-infolder/notes.txt" if vid == "rw-infolder" else f"drafts/{vid}.yml"


def _tidy(lab: Lab, path: str, vid: str) -> None:
    file = lab.repo / path
    text = file.read_text(encoding="utf-8").replace("status: draft", "status: pending_approval")
    file.write_text(text.replace(f"attack variant {vid}", f"attack variant {vid}, tidied"))


def _build(root: Path) -> Lab:
    lab = Lab(root, approval=RULE)
    for vid in VIDS:
        lab.write(f"a/{vid}", plan_text(vid, status="draft"))
    lab.commit("alice writes her plans", ALICE)
    lab.write("own-rw-infolder", plan_text("own-rw-infolder", status="draft"))
    for vid in VIDS[1:]:
        (lab.repo / _scratch(vid)).parent.mkdir(parents=True, exist_ok=True)
        (lab.repo / _scratch(vid)).write_text("scratch\n")
    lab.commit("agent keeps scratch files", AGENT)
    lab.run()

    def mine(vid: str) -> Path:
        return lab.repo / f"plans/a/{vid}/PLAN.yml"

    def carry(src: str, vid: str, edit: bool = False) -> None:
        dst = f"plans/{vid}2/PLAN.yml"
        (lab.repo / dst).parent.mkdir(parents=True, exist_ok=True)
        lab.git("mv", src, dst)
        if edit:
            _tidy(lab, dst, vid)
        lab.commit(f"agent submits {vid}", AGENT)

    # control: a copy with an edit as a new file (round 51 follows it)
    (lab.repo / "drafts").mkdir(exist_ok=True)
    shutil.copyfile(mine("add-edit"), lab.repo / "drafts/add-edit-new.yml")
    _tidy(lab, "drafts/add-edit-new.yml", "add-edit")
    for vid in ("rw-edit", "rw-infolder", "rw-two"):
        shutil.copyfile(mine(vid), lab.repo / _scratch(vid))
        _tidy(lab, _scratch(vid), vid)
    for vid in ("rw-exact", "rw-exact-mvedit"):
        shutil.copyfile(mine(vid), lab.repo / _scratch(vid))
    lab.commit("agent rewrites its scratch files", AGENT)
    _tidy(lab, _scratch("rw-exact"), "rw-exact")
    lab.commit("agent edits a scratch file", AGENT)
    lab.git("checkout", "-q", "-b", "rw-pr")
    shutil.copyfile(mine("rw-pr"), lab.repo / _scratch("rw-pr"))
    _tidy(lab, _scratch("rw-pr"), "rw-pr")
    lab.commit("agent rewrites on a branch", AGENT)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "--no-ff", "-q", "-m", "merge rw-pr", "rw-pr", who=AGENT)
    carry("drafts/add-edit-new.yml", "add-edit")
    for vid in ("rw-edit", "rw-exact", "rw-infolder", "rw-pr", "rw-two"):
        carry(_scratch(vid), vid)
    carry(_scratch("rw-exact-mvedit"), "rw-exact-mvedit", edit=True)
    lab.run()
    time.sleep(1.05)
    lab.approve("rw-two2", BOB)
    lab.run()
    time.sleep(1.05)
    for vid in VIDS:
        lab.set_status(f"{vid}2", "approved")
    lab.commit("alice approves", ALICE)
    lab.run()
    lab.run()
    _code, lab.report = lab.audit()  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r54-rewrite", _build)


def test_the_bench_froze_every_carried_plan(lab: Lab) -> None:
    for vid in VIDS:
        assert (lab.plan(f"{vid}2").get("frozen") or {}).get("hash"), lab.codes(f"{vid}2")


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))
def test_her_text_written_over_a_scratch_file_is_not_hers_to_approve(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(f"{vid}2")
    assert "E_SELF_APPROVAL" in lab.codes(f"{vid}2"), lab.codes(f"{vid}2")


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))
def test_the_audit_lists_no_run(lab: Lab, vid: str) -> None:
    report = lab.report  # type: ignore[attr-defined]
    runs = [e for e in report.get("executions", []) if e.get("plan") == f"plans/{vid}2"]
    assert runs == [], runs
