"""Round 51, self-approval: an approver's plan COPIED (not moved) out of the plan paths,
then carried back into a new plan folder with an edit in a later commit.

docs/approvals.md ("Who changed the content", round 50): "a plan file moved or copied out of
the plan paths ... keeps its plan's writers at each path git pairs it to, for as many hops as
git pairs them". Round 50 tried parking by MOVE (the commit takes a plan file out of the plan
paths); here the first commit leaves Alice's plan where it is and only adds a copy.

Config: the bench's. Alice (an allowed approver) commits each ``plans/c/<vid>/PLAN.yml``
herself (``draft``). Then the agent, in its own commits:

- ``mv-outside`` (control, round 50's fixed shape): ``git mv`` to ``drafts/<vid>/PLAN.yml``,
  then ``git mv`` to ``plans/c/<vid>2/PLAN.yml`` plus an edit of ``plan.task``.
- ``cp-outside``: ``cp`` to ``drafts/<vid>/PLAN.yml`` (her plan stays), then ``git mv`` to
  ``plans/c/<vid>2/PLAN.yml`` plus the edit (git pairs it as a rename with edits).
- ``cp-notes``: ``cp`` to ``plans/c/<vid>/notes.txt`` (in her folder), then ``git mv`` that
  file to ``plans/c/<vid>2/PLAN.yml`` plus the edit.
- ``cp-draft``: the same through ``plans/c/<vid>/PLAN.draft.yml``.
- ``cp-hops``: ``cp`` to ``drafts/<vid>/a.yml``, ``git mv`` to ``drafts/<vid>/b.yml``, then
  ``git mv`` to ``plans/c/<vid>2/PLAN.yml`` plus the edit.
- ``cp-rmlater``: ``cp`` to ``drafts/<vid>/PLAN.yml``; a later commit ``git rm``s her
  folder; then ``git mv`` back to ``plans/c/<vid>2`` plus the edit.
- ``cp-editparked``: ``cp`` to ``drafts/<vid>/PLAN.yml``; a commit edits that parked file
  in place (the edit); then ``git mv`` to ``plans/c/<vid>2/PLAN.yml`` (no further edit).
- ``pr-cp-outside``: the copy on a branch merged ``--no-ff``; then ``git mv`` back plus the
  edit on main.
- ``two-cp-notes``: as ``cp-notes``, at a path a rule gives ``count: 2``; Bob approves first
  (``partial``), then Alice: her vote must not complete the quorum.
- ``mv-cpback``: round 50's park by ``git mv`` to ``drafts/<vid>/PLAN.yml``, then a COPY of
  the parked file to ``plans/c/<vid>2/PLAN.yml`` plus the edit (the parked file stays,
  unchanged).
- ``mv-cpback-touch`` (control): the same, the carrying commit also appending a comment to
  the parked file (so git's default ``-C`` pairs the copy).

The controller freezes each ``<vid>2``; Alice approves all in one commit; two passes.

Asserted (the defence): Alice wrote the text, so her approval is refused
``E_SELF_APPROVAL`` and ``rec`` never runs; a fresh clone's ``plangate audit`` lists no run.

Seen: ``mv-outside`` and ``mv-cpback-touch`` held (``E_SELF_APPROVAL``). BROKE (strict xfails):
every copy variant (``cp-outside``, ``cp-notes``, ``cp-draft``, ``cp-hops``, ``cp-rmlater``,
``cp-editparked``, ``pr-cp-outside``, and ``two-cp-notes`` on Bob's and Alice's votes): the
controller froze ``<vid>2``, took Alice's approval (``approval.status: approved``), started and
completed it (``rec`` ran once); the audit lists the run as valid. git itself pairs the
carrying commit as a rename with edits (``{drafts/cp-outside =>
plans/c/cp-outside2}/PLAN.yml``, 2 lines changed) from a file whose bytes are exactly Alice's
plan: only the parking step differs from round 50 (a copy leaves her plan file in place, so no
commit takes a plan file out of the plan paths; git pairs the copy itself, ``C100``, with
``--find-copies-harder``). BROKE too: ``mv-cpback`` (run once, audit valid): git's default
``diff-tree -M -C`` shows the carrying commit as a plain add; with ``--find-copies-harder`` it
pairs it ``C070`` from the parked path the index holds.

Fixed (2026-11-29): a plan a commit makes takes the writers of whatever git pairs it from
(``diff-tree -M -C``, whole tree, for each commit that adds a plan file; plus
``--find-copies-harder`` over the parked paths while any are parked): a plan path's writers,
parked bytes' writers, or, for any other file, the writers of its text followed back: the
authors of its bytes and of their hashed content, every edit in place of that path, and the
commit that added it paired in turn (``--find-copies-harder`` over the plans folder, the
parked paths and that file), for up to 16 hops (``Lifecycle._text_writers``; index version
21). Every copy variant above now holds. Added with the fix, shapes the probes did not have:
``cpedit-outside`` (the copy takes the edit, in one commit, her file untouched; the carry back
is a plain ``git mv``), ``cp-editnotes`` (``cp-editparked`` through ``notes.txt`` in her
folder, whose bytes the index keeps), ``cp-cpedit`` (a copy with an edit, then a copy of that
copy in a commit that touches it, then moved into a plan folder): all hold. ``cp-cpback`` is
the accepted ``cp-edit`` limit (strict xfail, docs/threat-model.md): a copy of an unchanged
copy, with the edit, in one commit: git pairs it with nothing short of a whole-tree copy
search (every file of the tree a source for every plan added).
"""

from __future__ import annotations

import itertools
import shutil
import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab, plan_text
from test_round2_execution_kit import shared

#: variant -> the parked path(s) of the copy, in hop order
VIA: dict[str, list[str]] = {
    "mv-outside": ["drafts/mv-outside/PLAN.yml"],
    "cp-outside": ["drafts/cp-outside/PLAN.yml"],
    "cp-notes": ["plans/c/cp-notes/notes.txt"],
    "cp-draft": ["plans/c/cp-draft/PLAN.draft.yml"],
    "cp-hops": ["drafts/cp-hops/a.yml", "drafts/cp-hops/b.yml"],
    "cp-rmlater": ["drafts/cp-rmlater/PLAN.yml"],
    "cp-editparked": ["drafts/cp-editparked/PLAN.yml"],
    "pr-cp-outside": ["drafts/pr-cp-outside/PLAN.yml"],
    "two-cp-notes": ["plans/c/two-cp-notes/notes.txt"],
    "mv-cpback": ["drafts/mv-cpback/PLAN.yml"],
    "mv-cpback-touch": ["drafts/mv-cpback-touch/PLAN.yml"],
    # added with the fix (2026-11-29): the same rule, shapes no probe above had
    "cpedit-outside": ["drafts/cpedit-outside/PLAN.yml"],
    "cp-editnotes": ["plans/c/cp-editnotes/notes.txt"],
    "cp-cpedit": ["drafts/cp-cpedit/a.yml", "drafts/cp-cpedit/b.yml"],
    "cp-cpback": ["drafts/cp-cpback/PLAN.yml"],
}
CASES = list(VIA)
_R51 = "round 51: an approver's plan copied out of the plan paths and carried back with an edit"
FOUND: dict[str, pytest.MarkDecorator] = {
    # docs/threat-model.md, accepted limits ("cp-edit"): a copy of an unchanged file that is
    # neither a plan file nor parked, with an edit, in one commit: git pairs nothing without a
    # whole-tree copy search
    "cp-cpback": pytest.mark.xfail(
        strict=True,
        raises=AssertionError,
        reason="cp-edit limit: copied back with an edit from an unchanged copy (cp-cpback)",
    ),
}


RULE = "rules:\n  - {match: {paths: ['plans/c/two-cp-notes2']}, require: [{count: 2}]}\n"


def _tidy(lab: Lab, path: str, vid: str) -> None:
    file = lab.repo / path
    text = file.read_text(encoding="utf-8").replace("status: draft", "status: pending_approval")
    text = text.replace(f"attack variant {vid}", f"attack variant {vid}, tidied")
    file.write_text(text, encoding="utf-8")


def _build(root: Path) -> Lab:
    lab = Lab(root, approval=RULE)
    for vid in CASES:
        lab.write(f"c/{vid}", plan_text(vid, status="draft"))
    lab.commit("alice writes her plans", ALICE)
    lab.run()

    def mv(src: str, dst: str) -> None:
        (lab.repo / dst).parent.mkdir(parents=True, exist_ok=True)
        lab.git("mv", src, dst)

    def cp(src: str, dst: str) -> None:
        (lab.repo / dst).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(lab.repo / src, lab.repo / dst)
        lab.git("add", dst)

    for vid, hops in VIA.items():
        src, dst = f"plans/c/{vid}/PLAN.yml", f"plans/c/{vid}2/PLAN.yml"
        if vid.startswith("mv-cpback"):
            mv(src, hops[0])
            lab.commit(f"agent parks {vid}", AGENT)
            cp(hops[0], dst)
            _tidy(lab, dst, vid)
            if vid.endswith("-touch"):
                with open(lab.repo / hops[0], "a", encoding="utf-8") as fh:
                    fh.write("# parked copy\n")
                lab.git("add", hops[0])
            lab.commit(f"agent carries {vid}", AGENT)
            continue
        if vid == "cp-cpback":  # a copy, then a copy of the copy with an edit, both left
            cp(src, hops[0])
            lab.commit(f"agent copies {vid}", AGENT)
            cp(hops[0], dst)
            _tidy(lab, dst, vid)
            lab.commit(f"agent carries {vid}", AGENT)
            continue
        if vid == "cp-cpedit":  # a copy with an edit, then a copy of it: git -C pairs each
            cp(src, hops[0])
            _tidy(lab, hops[0], vid)
            lab.commit(f"agent copies {vid} with an edit", AGENT)
            cp(hops[0], hops[1])
            with open(lab.repo / hops[0], "a", encoding="utf-8") as fh:
                fh.write("# copied on\n")
            lab.git("add", hops[0])
            lab.commit(f"agent copies {vid} on", AGENT)
            mv(hops[1], dst)
            lab.commit(f"agent carries {vid}", AGENT)
            continue
        if vid.startswith("mv-"):
            mv(src, hops[0])
        elif vid == "cpedit-outside":  # the copy takes the edit; the carry back takes none
            cp(src, hops[0])
            _tidy(lab, hops[0], vid)
        else:
            if vid.startswith("pr-"):
                lab.git("checkout", "-q", "-b", vid)
            cp(src, hops[0])
        lab.commit(f"agent parks {vid}", AGENT)
        if vid.startswith("pr-"):
            lab.git("checkout", "-q", "main")
            lab.git("merge", "--no-ff", "-q", "-m", f"merge {vid}", vid, who=AGENT)
        for a, b in itertools.pairwise(hops):
            mv(a, b)
            lab.commit(f"agent moves the parked {vid}", AGENT)
        if vid == "cp-rmlater":
            lab.git("rm", "-q", "-r", f"plans/c/{vid}")
            lab.commit(f"agent removes {vid}", AGENT)
        if vid in ("cp-editparked", "cp-editnotes"):
            _tidy(lab, hops[-1], vid)
            lab.commit(f"agent edits the parked {vid}", AGENT)
            mv(hops[-1], dst)
        elif vid == "cpedit-outside":
            mv(hops[-1], dst)
        else:
            mv(hops[-1], dst)
            _tidy(lab, dst, vid)
        lab.commit(f"agent carries {vid}", AGENT)
    lab.run()
    time.sleep(1.05)
    lab.approve("c/two-cp-notes2", BOB)
    lab.run()
    time.sleep(1.05)
    for vid in CASES:
        lab.set_status(f"c/{vid}2", "approved")
    lab.commit("alice approves", ALICE)
    lab.run()
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r51-copypark", _build)


def _p(vids: list[str]) -> list[object]:
    return [pytest.param(v, id=v, marks=[FOUND[v]] if v in FOUND else []) for v in vids]


def test_the_bench_froze_every_carried_plan(lab: Lab) -> None:
    for vid in CASES:
        frozen = lab.plan(f"c/{vid}2").get("frozen") or {}
        assert frozen.get("hash"), (vid, lab.codes(f"c/{vid}2"))


@pytest.mark.parametrize("vid", _p(CASES))
def test_her_own_plan_copied_out_is_not_hers_to_approve(lab: Lab, vid: str) -> None:
    slug = f"c/{vid}2"
    assert lab.calls(vid) == [], lab.codes(slug)
    assert "E_SELF_APPROVAL" in lab.codes(slug), lab.codes(slug)


@pytest.mark.parametrize("vid", _p(CASES))
def test_the_audit_lists_no_run(lab: Lab, vid: str) -> None:
    _code, report = lab.audit()
    runs = [e for e in report.get("executions", []) if e.get("plan") == f"plans/c/{vid}2"]
    assert runs == [], runs
