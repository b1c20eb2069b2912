"""Round 50, self-approval: an approver's plan carried to a new folder WITH an edit, in two
commits, through a place the history index does not read as a plan: a folder outside the
plans folder, another file name in its own folder, a path the controller refuses to read,
or nowhere (deleted, then written again).

docs/approvals.md ("Who changed the content"): "A plan moved with an edit in the same commit
keeps its source's writers when git would call it a move"; "The index keeps who wrote any
file under the plans folder by the file's bytes, so the writers follow the bytes wherever
they go: a source (or a draft, or a file under another name) renamed, moved or copied".

Config: the bench's. Alice (an allowed approver) commits each ``plans/m/<vid>/PLAN.yml``
herself (``draft``: her plan). Then the agent, in its own commits:

- ``direct`` (control of the rule): ``git mv`` to ``plans/m/<vid>2`` plus an edit of
  ``plan.task`` (and ``status: pending_approval``) in ONE commit.
- ``via-unsafe``: ``git mv`` to ``plans/m/a<TAB>via-unsafe`` (a path the controller never
  reads, ``E_UNSAFE_PATH``), then ``git mv`` from there to ``plans/m/via-unsafe2`` plus the
  edit.
- ``via-hidden``: through ``plans/.hidden/via-hidden``, then to ``plans/m/via-hidden2`` + edit.
- ``via-outside``: ``git mv`` to ``drafts/via-outside`` (outside the plans folder), then
  ``git mv`` back to ``plans/m/via-outside2`` plus the edit (git pairs it as a rename).
- ``via-notes``: ``git mv plans/m/via-notes/PLAN.yml plans/m/via-notes/notes.txt`` (her bytes
  under another name in her folder), then ``git mv`` that file to
  ``plans/m/via-notes2/PLAN.yml`` plus the edit (git pairs it as a rename).
- ``via-draft``: the same through ``plans/m/via-draft/PLAN.draft.yml``.
- ``via-deleted``: ``git rm`` her folder, then a new commit writes her text with the edit at
  ``plans/m/via-deleted2`` (nothing for git to pair: the round-17 ``cp-edit`` shape spread
  over two commits).
- ``out-same`` / ``notes-same`` (controls of the hash rule): the same two moves as
  ``via-outside`` / ``via-notes`` without the edit.

- ``via-host``: through ``plans/m/host/review.md``, a file in the folder of the agent's own
  (draft) plan ``plans/m/host``, then to ``plans/m/via-host2/PLAN.yml`` plus the edit.
- ``via-source``: through ``plans/m/via-source/old/PLAN.json`` (a plan source's name, YAML
  bytes), then to ``plans/m/via-source2/PLAN.yml`` plus the edit.
- ``via-root``: through ``plans/PLAN.yml`` (a plan file directly in the plans folder).
- ``via-yaml`` / ``via-nested`` (controls: plan file names): through
  ``plans/m/via-yaml/PLAN.yaml`` / ``plans/m/via-nested/inner/PLAN.yml``.
- ``pr-via-outside``: ``via-outside``'s two commits on a branch the agent merges ``--no-ff``.
- ``pin-via-notes``: as ``via-notes`` (the tidied text a library); the
  agent's parent ``plans/m/pin-via-notes-parent`` pins ``plans/m/pin-via-notes2`` by hash;
  Alice approves the PARENT (approving a parent approves the versions it pins).
- ``two-via-notes``: as ``via-notes``, at a path a rule gives ``count: 2``; Bob approves
  first (``partial``), then Alice: her vote must not complete the quorum.

The controller freezes each ``<vid>2``; Alice approves all in one commit; two passes.

Asserted (the defence): Alice wrote the text, so her approval is refused
``E_SELF_APPROVAL`` and ``rec`` never runs; a fresh clone's ``plangate audit`` lists no run.

Seen: ``direct``, ``via-unsafe``, ``via-hidden``, ``via-yaml``, ``via-nested``,
``out-same``, ``notes-same`` and ``pr-via-outside`` (the merge's first-parent change is one
move with an edit) held (``E_SELF_APPROVAL``). BROKE (strict xfails): ``via-outside``,
``via-notes``, ``via-draft``, ``via-deleted``, ``via-host``, ``via-source``, ``via-root``:
the controller started the tidied copy of Alice's own plan on her approval
(``approval.status: approved``, ``rec`` ran once); so did ``pin-via-notes`` (the parent ran
her library) and ``two-via-notes`` (Bob's and Alice's votes started it); the audit lists the
runs as valid. In every broken variant but ``via-deleted`` git itself pairs the second
commit's change as a rename with edits (the source is her bytes under another name or
outside the plans folder); ``via-deleted`` is round 17's accepted ``cp-edit`` shape (nothing
to pair), listed for completeness.

Fixed (issue 11): a plan's writers follow its bytes through git's own rename/copy pairing
wherever they are parked between plan paths (:meth:`Lifecycle._follow_parked`): a commit
that takes a plan file out of the plan paths is paired whole-tree by git (``diff-tree -M
-C``) and the paths its bytes went to are kept (index ``meta``: ``parked``) and followed,
path-limited, commit by commit, for as many hops as git pairs them (an edit in place adds
its makers), until they come back to a plan (its writers join the plan's) or vanish. Every
variant but ``via-deleted`` now holds (``E_SELF_APPROVAL``, no run, the audit agrees).
``via-deleted`` stays a strict xfail: ``git rm``, then a later commit writing the edited text
anew, is round 17's accepted ``cp-edit`` limit (git pairs nothing; docs/threat-model.md).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab, plan_text
from test_round2_execution_kit import shared

#: variant -> the intermediate path of the carried PLAN.yml (relative to the repo), or None
VIA: dict[str, str | None] = {
    "direct": None,
    "via-unsafe": "plans/m/a\tvia-unsafe/PLAN.yml",
    "via-hidden": "plans/.hidden/via-hidden/PLAN.yml",
    "via-outside": "drafts/via-outside/PLAN.yml",
    "via-notes": "plans/m/via-notes/notes.txt",
    "via-draft": "plans/m/via-draft/PLAN.draft.yml",
    "via-deleted": None,
    "out-same": "drafts/out-same/PLAN.yml",
    "notes-same": "plans/m/notes-same/notes.txt",
    "pin-via-notes": "plans/m/pin-via-notes/notes.txt",
    "two-via-notes": "plans/m/two-via-notes/notes.txt",
    "via-host": "plans/m/host/review.md",
    "via-source": "plans/m/via-source/old/PLAN.json",
    "via-root": "plans/PLAN.yml",
    "via-yaml": "plans/m/via-yaml/PLAN.yaml",
    "via-nested": "plans/m/via-nested/inner/PLAN.yml",
    "pr-via-outside": "drafts/pr-via-outside/PLAN.yml",
}
EDITED = {v for v in VIA if not v.endswith("-same")}
CASES = list(VIA)
_R50 = (
    "round 50: an approver's plan carried with an edit in two commits through a place "
    "the index does not read as a plan"
)
FOUND: dict[str, pytest.MarkDecorator] = {
    v: pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"{_R50} ({v})")
    for v in [
        # the accepted ``cp-edit`` limit (docs/threat-model.md): nothing for git to pair
        "via-deleted",
    ]
}
RULE = "rules:\n  - {match: {paths: ['plans/m/two-via-notes2']}, require: [{count: 2}]}\n"
PARENT = """\
plan:
  name: "pin-via-notes-parent"
  task: "run the tidied library"
  status: pending_approval
actions:
  - id: 1
    plan: {{path: plans/m/pin-via-notes2, hash: "{digest}"}}
    why: "run the child"
"""


def _approved(lab: Lab, vid: str) -> str:
    """The folder Alice approves for ``vid``."""
    return "m/pin-via-notes-parent" if vid == "pin-via-notes" else f"m/{vid}2"


def _build(root: Path) -> Lab:
    lab = Lab(root, approval=RULE)
    for vid in CASES:
        lab.write(f"m/{vid}", plan_text(vid, status="draft"))
    lab.commit("alice writes her plans", ALICE)
    lab.write("m/host", plan_text("host", status="draft"))
    lab.commit("the agent's own draft plan", AGENT)
    lab.run()

    def mv(src: str, dst: str) -> None:
        (lab.repo / dst).parent.mkdir(parents=True, exist_ok=True)
        lab.git("mv", src, dst)

    def tidy(path: str, vid: str) -> None:
        file = lab.repo / path
        text = file.read_text(encoding="utf-8").replace("status: draft", "status: pending_approval")
        if vid in EDITED:
            text = text.replace(f"attack variant {vid}", f"attack variant {vid}, tidied")
        file.write_text(text, encoding="utf-8")

    for vid, via in VIA.items():
        src, dst = f"plans/m/{vid}/PLAN.yml", f"plans/m/{vid}2/PLAN.yml"
        if vid == "via-deleted":
            text = (lab.repo / src).read_text(encoding="utf-8")
            lab.git("rm", "-q", "-r", f"plans/m/{vid}")
            lab.commit(f"agent removes {vid}", AGENT)
            (lab.repo / dst).parent.mkdir(parents=True)
            (lab.repo / dst).write_text(text, encoding="utf-8")
        elif via is None:
            mv(src, dst)
        else:
            if vid.startswith("pr-"):
                lab.git("checkout", "-q", "-b", vid)
            mv(src, via)
            lab.commit(f"agent parks {vid}", AGENT)
            mv(via, dst)
        tidy(dst, vid)
        lab.commit(f"agent carries {vid}", AGENT)
        if vid.startswith("pr-"):
            lab.git("checkout", "-q", "main")
            lab.git("merge", "--no-ff", "-q", "-m", f"merge {vid}", vid, who=AGENT)
    digest = lab.cli("hash", "plans/m/pin-via-notes2", cwd=lab.repo).stdout.strip().split()[-1]
    lab.write("m/pin-via-notes-parent", PARENT.format(digest=digest))
    lab.commit("agent pins the library", AGENT)
    lab.run()
    time.sleep(1.05)
    lab.approve("m/two-via-notes2", BOB)
    lab.run()
    time.sleep(1.05)
    for vid in CASES:
        lab.set_status(_approved(lab, vid), "approved")
    lab.commit("alice approves", ALICE)
    lab.run()
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r50-moveaway", _build)


def _p(vids: list[str]) -> list[object]:
    return [pytest.param(v, id=v, marks=[FOUND[v]] if v in FOUND else []) for v in vids]


def test_the_bench_froze_every_carried_plan(lab: Lab) -> None:
    for vid in CASES:
        frozen = lab.plan(_approved(lab, vid)).get("frozen") or {}
        assert frozen.get("hash"), (vid, lab.codes(_approved(lab, vid)))


@pytest.mark.parametrize("vid", _p(CASES))
def test_her_own_plan_carried_elsewhere_is_not_hers_to_approve(lab: Lab, vid: str) -> None:
    slug = _approved(lab, vid)
    assert lab.calls(vid) == [], lab.codes(slug)
    assert "E_SELF_APPROVAL" in lab.codes(slug), lab.codes(slug)


@pytest.mark.parametrize("vid", _p(CASES))
def test_the_audit_lists_no_run(lab: Lab, vid: str) -> None:
    _code, report = lab.audit()
    runs = [
        e for e in report.get("executions", []) if e.get("plan") == f"plans/{_approved(lab, vid)}"
    ]
    assert runs == [], runs
