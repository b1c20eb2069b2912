# ruff: noqa: E501  (attack steps read best on one line)
"""Round 17, who may make a plan run: an approver's plan carried to a new folder *and edited
in the same commit* (git records a rename or copy with changes), then approved by her.

docs/approvals.md: the history index records, per plan, everyone who changed its hashed
content, and per hash everyone who ever produced that exact content ("a plan moved or
copied to another folder ... keeps the authors of every commit that ever produced it").
Edited in place, the approver's plan stays hers (``inplace``: ``E_SELF_APPROVAL``). Moved
unchanged it stays hers (round 2, ``moved``/``copied``). Moved *and* changed in one commit,
the new folder's content is a hash nobody produced before and the folder has no history:
the text is still hers, git shows the rename (``git log --follow``, ``diff -M``).

Config: the bench's (approvers Alice and ``*@ops.example.com``), plus ``plans/two/**``
needs two approvals. Alice (or Bob) writes each ``<vid>-src``; the controller freezes; the
agent then carries it to ``plans/<vid>`` changing only ``plan.task`` (a new version):

- ``mv-edit``: ``git mv`` plus the edit in one agent commit; Alice approves ``plans/mv-edit``.
- ``cp-edit``: the folder copied plus the edit in one agent commit (the source stays).
- ``pr-mv-edit``: the rename-with-edit made on a branch, merged ``--no-ff`` into main by the
  agent; Alice approves on main.
- ``pin-mv-edit``: Alice's draft library, renamed-with-edit by the agent to
  ``plans/pin-mv-edit-lib`` and pinned by the agent's parent ``plans/pin-mv-edit``; Alice
  approves the parent (approving a parent approves the versions it pins).
- ``two-mv-edit``: quorum. ``plans/two/two-mv-edit-src`` is Alice's; renamed-with-edit to
  ``plans/two/two-mv-edit``; Bob approves (partial), Alice approves: her vote must not count.
- ``gate-mv-edit``: Bob's gated plan, renamed-with-edit; Alice approves (action 1 runs, the
  gate pauses); Bob approves the gate.
- ``mv-then-edit`` / ``cp-then-edit``: the move (copy) and the edit in two agent commits.
- ``wrapped-mv``: round 11's ``commented`` draft (Alice's ``draft.yml``, every line of her
  plan commented out, a writer of its folder); in one commit the agent ``git mv``s the folder
  to ``plans/wrapped-mv`` (the draft moves along, byte for byte) and writes ``PLAN.yml``
  holding exactly her plan; Alice approves. (Unwrapped in place, round 11 held.)
- ``notes-mv``: the agent's plan; Alice commits ``NOTES.md`` into its folder (a writer of the
  plan that folder holds, docs/approvals.md); the agent ``git mv``s the folder unchanged
  (her note moves along) to ``plans/notes-mv``; Alice approves.
- ``notes-inplace``: the same without the move (a control of the folder rule).
- ``legacy-mv`` / ``legacy-cp``: Alice's plan uses a legacy ``${plan.name}`` reference; the
  controller's freeze rewrites it to ``$<plan.name>`` (a new hashed content, written in the
  controller's commit); the agent moves (copies) the folder *unchanged*; Alice approves.
- ``legacy-inplace``: the same, approved where she wrote it (control).
- ``legacy-pin``: nothing moves. Alice's ``plans/legacy-pin-lib`` (``pending_approval``, a
  legacy reference) is frozen (rewritten) by the controller; the agent's parent
  ``plans/legacy-pin`` pins it by that hash; Alice approves the parent ("the authors of every
  pinned content (by hash, from the author index) are authors of the parent's version").
- ``inplace``: the agent edits Alice's plan in its own folder (a control of the defence).

Defence: the approval (or vote, or gate approval) by the plan's writer is ``E_SELF_APPROVAL``
and nothing (of that part) runs. Control: ``ctl`` (the agent's plan, Alice approves) runs once.

Results: ``mv-edit``, ``cp-edit``, ``pr-mv-edit``, ``pin-mv-edit``, ``two-mv-edit`` and
``gate-mv-edit`` BROKE (the writer's approval counted: her plan ran with one word changed by
the agent; ``two-mv-edit`` started on Bob's and Alice's votes, ``gate-mv-edit``'s gated action
ran on Bob's gate approval). ``wrapped-mv`` and ``notes-mv`` BROKE (the folder's writer is
forgotten when the folder is renamed: Alice's approval ran her unwrapped plan, and the plan
whose folder she wrote in). ``legacy-mv``, ``legacy-cp`` and ``legacy-pin`` BROKE with no
edit by anyone but the controller: its freeze rewrote ``${plan.name}`` (a new hash, produced
in the controller's commit), and that hash's writers are the controller's commit only, so a
plain ``git mv`` (``R100``), a copy, or a pin by hash of Alice's plan ran on her approval.
``mv-then-edit``, ``cp-then-edit``, ``inplace``, ``notes-inplace`` and ``legacy-inplace``
held (``E_SELF_APPROVAL``).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab, plan_text
from test_round2_execution_kit import shared

RULE = "rules:\n  - match: {paths: ['plans/two/**']}\n    require: [{count: 2}]\n"
GATE = """\
  - id: 2
    tool: rec
    why: "after a second look"
    requires_approval: true
    params:
      tag: "{tag}-gated"
"""
LIB = """\
plan:
  name: "lib {tag}"
  task: "a plan meant to be nested"
  status: draft
available_tools:
  - name: rec
actions:
  - id: 1
    tool: rec
    why: "the library's step"
    params:
      tag: "{tag}"
"""
PIN = """\
  - id: 2
    plan: {{path: plans/{tag}-lib, hash: "{pin}"}}
    why: "run the library"
"""
# variant -> the plan Alice approves (relative to plans/)
SLUG = {
    "mv-edit": "mv-edit",
    "cp-edit": "cp-edit",
    "pr-mv-edit": "pr-mv-edit",
    "pin-mv-edit": "pin-mv-edit",
    "two-mv-edit": "two/two-mv-edit",
    "mv-then-edit": "mv-then-edit",
    "cp-then-edit": "cp-then-edit",
    "inplace": "inplace",
    "wrapped-mv": "wrapped-mv",
    "notes-mv": "notes-mv",
    "notes-inplace": "notes-inplace",
    "legacy-mv": "legacy-mv",
    "legacy-cp": "legacy-cp",
    "legacy-inplace": "legacy-inplace",
    "legacy-pin": "legacy-pin",
}
#: the tag whose ``rec`` call would show the writer's approval counted
TAG = {v: v for v in SLUG} | {"pin-mv-edit": "pin-mv-edit-nested", "legacy-pin": "legacy-pin-lib"}
_WHY = "round 17: a plan renamed or copied with an edit in one commit loses its writer"
BROKEN = {
    v: pytest.mark.xfail(strict=True, raises=AssertionError, reason=_WHY)
    for v in ("mv-edit", "cp-edit", "pr-mv-edit", "pin-mv-edit", "two-mv-edit")
}
_LEGACY = "round 17: the controller's freeze rewriting legacy ${...} references makes a new hash whose writers are lost"
for _v in ("legacy-mv", "legacy-cp", "legacy-pin"):
    BROKEN[_v] = pytest.mark.xfail(strict=True, raises=AssertionError, reason=_LEGACY)
for _v in ("wrapped-mv", "notes-mv"):
    BROKEN[_v] = pytest.mark.xfail(
        strict=True,
        raises=AssertionError,
        reason="round 17: a folder's writers do not follow a move of the folder",
    )
GATE_BROKEN = pytest.mark.xfail(strict=True, raises=AssertionError, reason=_WHY + " (gate)")
# round 17: every BROKEN variant broke when found; fixed since but cp-edit (an edited copy:
# accepted limit, docs/threat-model.md): a commit's moves carry their folder's writers (files
# arriving with the same bytes, or the likest plan text, paired one to one as git pairs
# renames), and content the controller rewrites keeps its writers (Lifecycle._moved_writers)
FOUND = dict(BROKEN)
BROKEN = {"cp-edit": FOUND["cp-edit"]}
GATE_BROKEN_FOUND = GATE_BROKEN


def _edit(lab: Lab, slug: str) -> None:
    path = lab.repo / "plans" / slug / "PLAN.yml"
    text = path.read_text()
    assert 'task: "' in text
    path.write_text(text.replace('task: "', 'task: "(tidied) ', 1))


def _build(root: Path) -> Lab:
    lab = Lab(root, approval=RULE)
    # the writers' plans
    for vid in ("mv-edit", "cp-edit", "pr-mv-edit", "mv-then-edit", "cp-then-edit"):
        lab.write(f"{vid}-src", plan_text(vid))
    lab.write("two/two-mv-edit-src", plan_text("two-mv-edit"))
    lab.write("inplace", plan_text("inplace"))
    lab.write("pin-mv-edit-src", LIB.format(tag="pin-mv-edit-nested"))
    for vid in ("legacy-mv-src", "legacy-cp-src", "legacy-inplace", "legacy-pin-lib"):
        lab.write(vid, plan_text(vid.removesuffix("-src"), params='name: "${plan.name}"\n'))
    commented = "".join(f"# {line}\n" for line in plan_text("wrapped-mv").splitlines())
    lab.write("wrapped-mv-src", commented, filename="draft.yml")
    lab.commit("alice drafts plans", ALICE)
    lab.write(
        "gate-mv-edit-src", plan_text("gate-mv-edit", extra_actions=GATE.format(tag="gate-mv-edit"))
    )
    lab.commit("bob drafts a gated plan", BOB)
    lab.write("ctl", plan_text("ctl"))
    lab.write("notes-mv-src", plan_text("notes-mv"))
    lab.write("notes-inplace", plan_text("notes-inplace"))
    lab.commit("agent adds ctl and two plans", AGENT)
    lab.run()  # freeze
    for slug in ("notes-mv-src", "notes-inplace"):
        lab.write(slug, "Looks fine, but see step 1.\n", filename="NOTES.md")
    lab.commit("alice comments in the folders", ALICE)
    lab.git("mv", "plans/notes-mv-src", "plans/notes-mv")
    lab.commit("agent renames notes-mv", AGENT)
    # the agent carries them on, one word changed, in one commit each kind
    for vid in ("mv-edit", "mv-then-edit", "gate-mv-edit"):
        lab.git("mv", f"plans/{vid}-src", f"plans/{vid}")
    lab.git("mv", "plans/two/two-mv-edit-src", "plans/two/two-mv-edit")
    lab.git("mv", "plans/pin-mv-edit-src", "plans/pin-mv-edit-lib")
    lab.git("mv", "plans/legacy-mv-src", "plans/legacy-mv")  # unchanged: the controller's text
    shutil.copytree(lab.repo / "plans" / "legacy-cp-src", lab.repo / "plans" / "legacy-cp")
    for vid in ("cp-edit", "cp-then-edit"):
        shutil.copytree(lab.repo / "plans" / f"{vid}-src", lab.repo / "plans" / vid)
    for slug in (
        "mv-edit",
        "cp-edit",
        "gate-mv-edit",
        "two/two-mv-edit",
        "pin-mv-edit-lib",
        "inplace",
    ):
        _edit(lab, slug)
    # round 11's unwrapping (the folder's writer is hers), with the folder moved along
    lab.git("mv", "plans/wrapped-mv-src", "plans/wrapped-mv")
    lab.write("wrapped-mv", plan_text("wrapped-mv"))
    lab.commit("agent tidies plans", AGENT)
    for vid in ("mv-then-edit", "cp-then-edit"):
        _edit(lab, vid)
    lab.commit("agent edits the moved and copied plans", AGENT)
    # the pull request: rename with edit on a branch, merged by the agent
    lab.git("checkout", "-q", "-b", "pr-mv-edit")
    lab.git("mv", "plans/pr-mv-edit-src", "plans/pr-mv-edit")
    _edit(lab, "pr-mv-edit")
    lab.commit("agent tidies pr-mv-edit", AGENT)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge pr-mv-edit", "pr-mv-edit", who=AGENT)
    # the parent pinning the edited library
    pin = lab.cli("hash", str(lab.repo / "plans" / "pin-mv-edit-lib")).stdout.strip()
    assert pin.startswith("sha256:"), pin
    lab.write(
        "pin-mv-edit",
        plan_text("pin-mv-edit-parent", extra_actions=PIN.format(tag="pin-mv-edit", pin=pin)),
    )
    pin = lab.cli("hash", str(lab.repo / "plans" / "legacy-pin-lib")).stdout.strip()
    assert pin.startswith("sha256:"), pin
    lab.write(
        "legacy-pin",
        plan_text("legacy-pin-parent", extra_actions=PIN.format(tag="legacy-pin", pin=pin)),
    )
    lab.commit("agent adds the parents", AGENT)
    lab.run()  # freeze the new versions
    lab.approve("two/two-mv-edit", BOB)
    lab.run()  # partial: Bob
    for slug in [s for v, s in SLUG.items() if v != "two-mv-edit"] + ["ctl", "gate-mv-edit"]:
        lab.approve(slug, ALICE)
    lab.approve("two/two-mv-edit", ALICE)
    lab.run()  # the writers' approvals; gate-mv-edit pauses at its gate
    lab.approve("gate-mv-edit", BOB)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r17-derived", _build)


def test_control_runs_once(lab: Lab) -> None:
    assert len(lab.calls("ctl")) == 1, lab.codes("ctl")


@pytest.mark.parametrize("vid", [pytest.param(v, id=v, marks=BROKEN.get(v, [])) for v in SLUG])
def test_the_writer_of_a_carried_plan_cannot_approve_it(lab: Lab, vid: str) -> None:
    assert lab.calls(TAG[vid]) == [], lab.codes(SLUG[vid])
    assert not lab.started(SLUG[vid]), lab.codes(SLUG[vid])


def test_the_gate_ran_to_its_pause(lab: Lab) -> None:
    assert len(lab.calls("gate-mv-edit")) == 1, lab.codes("gate-mv-edit")


@pytest.mark.parametrize("vid", [pytest.param("gate-mv-edit", id="gate-mv-edit", marks=[])])
def test_the_writer_of_a_carried_plan_cannot_approve_its_gate(lab: Lab, vid: str) -> None:
    assert lab.calls(f"{vid}-gated") == [], lab.codes(vid)
    assert "E_SELF_APPROVAL" in lab.codes(vid), lab.codes(vid)
