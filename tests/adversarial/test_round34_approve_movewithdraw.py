"""Round 34, who may reject: withdraw rights gained by *moving* (or copying and deleting) a
plan someone else wrote, without writing any of its content.

docs/approvals.md: rejections count "only from an allowed approver or an author of the
plan"; a withdrawn version is remembered by its hash when withdrawn "by someone entitled to
withdraw it (an allowed approver, or an author who wrote that version wherever else it is: a
copier withdraws her copy only, round 16; round 23)". Round 32 (``notewithdraw``) held that
writing a file into the plan's folder gives no right to withdraw, round 20 the same for an
edit and its undo. A move writes nothing either: "a plan moved ... keeps the authors of every
commit that ever produced it".

Config: the bench's (approvers Alice and ``*@ops.example.com``). The agent writes every plan;
the controller freezes them. Mallory is no approver and writes no plan content:

- ``mv-rej``: Mallory ``git mv``s ``plans/mv-rej`` to ``plans/mv-rej-moved`` (no edit), the
  controller passes, she sets the moved plan ``rejected``; Alice approves it there.
- ``mv-back``: as ``mv-rej``; then the agent moves the folder back (``git rm`` the moved
  folder, ``git checkout <before> -- plans/mv-back``) and Alice approves it.
- ``cp-rm-back``: Mallory copies the folder byte for byte to ``plans/cp-rm-back-copy`` (one
  commit) and deletes the original (another), then rejects her copy; the agent restores the
  original (``git checkout <before> --``) and Alice approves the original.
- ``mv-side``: on a side branch Mallory moves ``plans/mv-side`` to ``plans/mv-side-moved``
  and then rejects it (two commits); the agent merges the branch ``--no-ff``; Alice approves
  the moved plan.
- ``mv-mv-rej``: Mallory moves the folder away and back (two commits: the net change is
  nothing), the controller passes, she rejects the plan at its own path; Alice approves it.
- ``cp-keep``: Mallory copies the folder (the original stays) and rejects her copy; Alice
  approves the original (round 16's rule, a control).
- ``mv-same``: Mallory moves the folder and sets ``rejected`` in the same commit; Alice
  approves the moved plan.
- ``ctl``: Alice approves (control).

Asserted: Mallory's rejection withdraws nothing the agent wrote: each approved plan runs
once.

Self-approval after the same moves (Bob, an approver, writes the plan; Mallory moves it):

- ``bob-mv``: Mallory ``git mv``s Bob's plan; Bob approves it at the new path.
- ``bob-cp-rm``: Mallory copies Bob's folder and deletes the original (two commits); Bob
  approves the copy.

Asserted: ``E_SELF_APPROVAL``, ``rec`` never runs.

Results: ``bob-mv``, ``bob-cp-rm``, ``cp-keep``, ``mv-same`` (``E_ILLEGAL_TRANSITION``:
"rejected from nothing") and ``ctl`` held. BROKE (strict xfails until fixed, below):
``mv-rej`` (her rejection counted: the plan stays ``rejected``, Alice's approval is an
illegal transition), ``mv-side``
(the same through a merged branch: "mallory@example.com set status rejected on a merged
branch"), ``mv-mv-rej`` (a move and its undo: her rejection at the plan's own path counted,
as round 20's edit and undo once did), ``mv-back`` and ``cp-rm-back`` (Alice's approval of
the agent's own folder is refused ``E_VERSION_WITHDRAWN``: "plans/... was set rejected by
mallory@example.com"). The fresh clone's audit lists her rejections under ``decisions`` (it
agrees with the controller).

Fixed: the index keeps each content's *producers* (who made it exist where nobody had) apart
from its authors (everyone who wrote or carried it): a move, a copy, an undo or a re-add
carries a version, and its carrier may not approve it (an author) nor withdraw it (no
producer). The audit reads the same record, so its verdicts agree.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, MALLORY, Lab, plan_text
from test_round2_execution_kit import shared

#: variant -> the folder Alice approves at the end
APPROVED = {
    "mv-rej": "mv-rej-moved",
    "mv-back": "mv-back",
    "cp-rm-back": "cp-rm-back",
    "cp-keep": "cp-keep",
    "mv-same": "mv-same-moved",
    "mv-side": "mv-side-moved",
    "mv-mv-rej": "mv-mv-rej",
    "ctl": "ctl",
}
SELF = {"bob-mv": "bob-mv-moved", "bob-cp-rm": "bob-cp-rm-copy"}
#: Nothing left open: round 34's five breaks are fixed (a content's producers, kept apart
#: from whoever carried it: docs/approvals.md).
FOUND: dict[str, pytest.MarkDecorator] = {}


def _build(root: Path) -> Lab:
    lab = Lab(root)
    for vid in APPROVED:
        lab.write(vid, plan_text(vid))
    lab.commit("agent adds plans", AGENT)
    for vid in SELF:
        lab.write(vid, plan_text(vid))
    lab.commit("bob adds plans", BOB)
    lab.run()  # freeze
    time.sleep(1.05)
    before = lab.head()
    lab.git("mv", "plans/mv-rej", "plans/mv-rej-moved")
    lab.commit("mallory moves mv-rej", MALLORY)
    lab.git("mv", "plans/mv-back", "plans/mv-back-moved")
    lab.commit("mallory moves mv-back", MALLORY)
    for vid in ("cp-rm-back", "cp-keep"):
        shutil.copytree(lab.repo / "plans" / vid, lab.repo / "plans" / f"{vid}-copy")
        lab.commit(f"mallory copies {vid}", MALLORY)
    lab.git("rm", "-q", "-r", "plans/cp-rm-back")
    lab.commit("mallory removes cp-rm-back", MALLORY)
    lab.git("mv", "plans/mv-same", "plans/mv-same-moved")
    lab.set_status("mv-same-moved", "rejected")
    lab.commit("mallory moves and rejects mv-same", MALLORY)
    lab.git("mv", "plans/mv-mv-rej", "plans/mv-mv-tmp")
    lab.commit("mallory moves mv-mv-rej away", MALLORY)
    lab.git("mv", "plans/mv-mv-tmp", "plans/mv-mv-rej")
    lab.commit("mallory moves mv-mv-rej back", MALLORY)
    lab.git("checkout", "-q", "-b", "side")
    lab.git("mv", "plans/mv-side", "plans/mv-side-moved")
    lab.commit("mallory moves mv-side", MALLORY)
    lab.set_status("mv-side-moved", "rejected")
    lab.commit("mallory rejects mv-side", MALLORY)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge side", "side", who=AGENT)
    lab.git("mv", "plans/bob-mv", "plans/bob-mv-moved")
    lab.commit("mallory moves bob-mv", MALLORY)
    shutil.copytree(lab.repo / "plans" / "bob-cp-rm", lab.repo / "plans" / "bob-cp-rm-copy")
    lab.commit("mallory copies bob-cp-rm", MALLORY)
    lab.git("rm", "-q", "-r", "plans/bob-cp-rm")
    lab.commit("mallory removes bob-cp-rm", MALLORY)
    lab.run()
    for slug in ("mv-mv-rej", "mv-rej-moved", "mv-back-moved", "cp-rm-back-copy", "cp-keep-copy"):
        lab.set_status(slug, "rejected")
        lab.commit(f"mallory rejects {slug}", MALLORY)
    lab.run()
    lab.git("rm", "-q", "-r", "plans/mv-back-moved")
    lab.git("checkout", before, "--", "plans/mv-back")
    lab.commit("agent moves mv-back back", AGENT)
    lab.git("checkout", before, "--", "plans/cp-rm-back")
    lab.commit("agent restores cp-rm-back", AGENT)
    lab.run()
    for slug in APPROVED.values():
        lab.approve(slug, ALICE)
    for slug in SELF.values():
        lab.approve(slug, BOB)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r34-movewithdraw", _build)


@pytest.mark.parametrize(
    "vid", [pytest.param(v, id=v, marks=[FOUND[v]] if v in FOUND else []) for v in APPROVED]
)
def test_a_mover_withdraws_nothing(lab: Lab, vid: str) -> None:
    slug = APPROVED[vid]
    assert len(lab.calls(vid)) == 1, lab.codes(slug)


@pytest.mark.parametrize("vid", list(SELF))
def test_a_move_keeps_the_writer(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(SELF[vid])
    assert "E_SELF_APPROVAL" in lab.codes(SELF[vid]), lab.codes(SELF[vid])


def test_the_audit_counts_no_carried_withdrawal(lab: Lab) -> None:
    """The fresh-clone audit reads the same producers: none of Mallory's rejections of a
    plan she only carried is a decision; each is flagged as not allowed."""
    _, report = lab.audit()
    decisions = [
        (d["plan"], d["kind"]) for d in report.get("decisions", []) if d["by"] == MALLORY[1]
    ]
    assert decisions == [], report.get("decisions")
    flagged = {
        f.get("plan") for f in report.get("findings", []) if f.get("kind") == "withdraw-not-allowed"
    }
    assert {f"plans/{s}" for s in ("mv-rej-moved", "mv-mv-rej", "cp-rm-back-copy")} <= flagged, (
        report.get("findings")
    )
