"""Round 23, self-approval through a pinned plan: who wrote the library a parent pins.

Approving a parent approves the versions it pins, so whoever wrote a pinned version may not
approve the parent. Config: the bench's, plus ``plans/two/**`` needs two approvals. Each
variant: a library ``plans/<vid>-lib`` (``status: draft``) and the agent's parent
``plans/<vid>`` (or ``plans/two/<vid>``) pinning it by hash. Alice is involved only with
the library:

- ``own``: Alice commits the library (control: the documented case).
- ``note``: the agent commits the library; Alice commits ``NOTES.md`` into its folder.
- ``draft``: the agent commits the library; Alice commits ``PLAN.draft.yml`` (its text) into
  its folder.
- ``draft-diff``: the same with a draft of other text (its tag ``draft-diff-v2``).
- ``coauthor``: the agent commits the library with ``Co-authored-by: Alice``.
- ``moved``: Alice commits the library at ``plans/<vid>-src``; the agent ``git mv``s it to
  ``plans/<vid>-lib`` (same bytes).
- ``copied``: Alice commits the library at ``plans/<vid>-src`` (kept); the agent commits the
  same bytes at ``plans/<vid>-lib``.
- ``merged``: Alice commits the library on a side branch; the agent merges it ``--no-ff``.
- ``two/vote-note``: the agent commits the library; Alice votes for the parent (``partial``);
  then she commits ``NOTES.md`` into the library's folder; Bob approves.

Alice approves each parent (and the agent freezes nothing himself: the controller does).
Defence: ``rec`` never runs; the parent is not started (``E_SELF_APPROVAL`` for the one-vote
parents).

Results: ``own``, ``draft`` (same bytes: the per-content index), ``coauthor``, ``moved``,
``copied``, ``merged`` held (``E_SELF_APPROVAL``). Three BROKE (strict xfails): ``note``,
``draft-diff`` and ``two/vote-note``: a file Alice committed into the pinned library's folder
does not make her a writer of the parent's version: Alice's approval started the parent and
``rec`` ran for the parent's action and the library's (``note``/``note-lib``,
``draft-diff``/``draft-diff-lib``); her collected vote plus Bob's started ``two/vote-note``.
The same files in the plan's own folder refuse her (``E_SELF_APPROVAL``; round 23
``test_round23_approve_voterwrites.py``: her vote is dropped), and docs/approvals.md makes
whoever commits any file into a plan's folder a writer of that plan and a pinned version's
authors authors of the parent.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab, plan_text
from test_round2_execution_kit import shared

RULES = 'rules:\n  - match: {paths: ["plans/two/**"]}\n    require: [{count: 2}]\n'
SOLO = ["own", "note", "draft", "draft-diff", "coauthor", "moved", "copied", "merged"]


def _lib(vid: str) -> str:
    return plan_text(f"{vid}-lib", status="draft")


def _parent(vid: str, lib: str, digest: str) -> str:
    return (
        f'plan:\n  name: "{vid}"\n  task: "attack variant {vid}"\n  status: pending_approval\n'
        "available_tools:\n  - name: rec\n"
        "actions:\n  - id: 1\n    tool: rec\n    why: parent\n"
        f'    params: {{tag: "{vid}"}}\n'
        f'  - id: 2\n    plan: {{path: plans/{lib}, hash: "{digest}"}}\n    why: the library\n'
    )


def _build(root: Path) -> Lab:
    lab = Lab(root, approval=RULES)
    g = lab.git
    lab.write("own-lib", _lib("own"))
    lab.commit("alice writes the library", ALICE)
    for vid in ["note", "draft", "draft-diff", "vote-note"]:
        lab.write(f"{vid}-lib", _lib(vid))
    lab.commit("agent writes libraries", AGENT)
    lab.write("note-lib", "Alice: fine\n", filename="NOTES.md")
    lab.write("draft-lib", _lib("draft"), filename="PLAN.draft.yml")
    lab.write("draft-diff-lib", _lib("draft-diff-v2"), filename="PLAN.draft.yml")
    lab.commit("alice writes beside", ALICE)
    lab.write("coauthor-lib", _lib("coauthor"))
    lab.commit("agent library\n\nCo-authored-by: Alice <alice@example.com>", AGENT)
    lab.write("moved-src", _lib("moved"))
    lab.write("copied-src", _lib("copied"))
    lab.commit("alice drafts", ALICE)
    g("mv", "plans/moved-src", "plans/moved-lib")
    lab.write("copied-lib", _lib("copied"))
    lab.commit("agent moves and copies", AGENT)
    g("checkout", "-q", "-b", "side")
    lab.write("merged-lib", _lib("merged"))
    lab.commit("alice on a side branch", ALICE)
    g("checkout", "-q", "main")
    g("merge", "--no-ff", "-q", "-m", "merge side", "side", who=AGENT)
    for vid in [*SOLO, "vote-note"]:
        result = lab.cli("hash", "--config", str(lab.config), f"plans/{vid}-lib", cwd=lab.repo)
        assert result.returncode == 0, result.stdout + result.stderr
        digest = result.stdout.strip().split()[-1]
        slug = f"two/{vid}" if vid == "vote-note" else vid
        lab.write(slug, _parent(vid, f"{vid}-lib", digest))
    lab.commit("agent adds parents", AGENT)
    lab.run()  # freeze
    time.sleep(1.05)
    for vid in SOLO:
        lab.approve(vid, ALICE)
    lab.approve("two/vote-note", ALICE)
    lab.run()
    time.sleep(1.05)
    lab.write("vote-note-lib", "Alice: one more thought\n", filename="NOTES.md")
    lab.commit("alice notes", ALICE)
    lab.run()
    time.sleep(1.05)
    lab.approve("two/vote-note", BOB)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r23-libwriters", _build)


def _broken(what: str) -> pytest.MarkDecorator:
    return pytest.mark.xfail(
        strict=True,
        raises=AssertionError,
        reason=f"round 23: {what} in a pinned library's folder does not make Alice a writer "
        "of the parent that pins it (the same file in the plan's own folder does)",
    )


#: What round 23 found (fixed: a pinned folder's writers are writers of the parent).
FOUND = {"note": _broken("a NOTES.md"), "draft-diff": _broken("a draft of other text")}
BROKEN: dict[str, pytest.MarkDecorator] = {}
FOUND_VOTE = _broken("a NOTES.md committed after her vote")


@pytest.mark.parametrize(
    "vid", [pytest.param(v, id=v, marks=[BROKEN[v]] if v in BROKEN else []) for v in SOLO]
)
def test_the_librarys_writer_cannot_approve_the_parent(lab: Lab, vid: str) -> None:
    assert lab.plan(vid).get("frozen"), lab.codes(vid)
    assert lab.calls(vid) == [], lab.codes(vid)
    assert not lab.started(vid), lab.codes(vid)
    assert lab.refusal(vid) == "E_SELF_APPROVAL", lab.codes(vid)


def test_a_vote_is_lost_by_writing_into_the_library(lab: Lab) -> None:
    slug = "two/vote-note"
    assert lab.calls("vote-note") == [], lab.codes(slug)
    assert not lab.started(slug), lab.codes(slug)
