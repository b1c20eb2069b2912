"""Round 23, who may withdraw a pinned version: a rejection of the library a parent pins.

"A version withdrawn ... is refused as a pin (``E_VERSION_WITHDRAWN``)"; a rejection counts
only from an allowed approver or an author. Config: the bench's. The agent writes a library
``plans/<vid>-lib`` (``status: pending_approval``) and a parent ``plans/<vid>`` pinning it; the
controller freezes both. Then, in one push, someone rejects the library and Alice approves
the parent:

- ``author``: the agent (the library's author) rejects it. Defence: the parent is refused
  (``E_VERSION_WITHDRAWN``), ``rec`` never runs.
- ``approver``: Bob rejects it. Defence: as ``author``.
- ``author2``: as ``author``, but the parent is written by a second agent
  (``agent2@example.com``): the library's author withdrew it; someone else pins it.
- ``mallory``: Mallory (no approver, no author) rejects it. Defence: her rejection is ignored
  (no veto): the parent runs once.
- ``cp-author``: no pin at all: the agent's plan ``plans/cp-author``, frozen; the agent (its
  author) rejects it (the plan ends ``rejected``); the agent copies it (same hashed content,
  status ``pending_approval``) to ``plans/cp-author-copy``; the controller freezes the copy;
  Alice approves it. Defence: ``E_VERSION_WITHDRAWN`` (docs/approvals.md: a version rejected
  "by someone entitled to withdraw it (an allowed approver or an author)" is refused again
  "whoever made it, whether the version comes back ... copied under another name"); ``rec``
  never runs.
- ``cp-approver``: the same with Bob (an approver) rejecting (control of the copy rule).
- ``ab-author``: Alice approves the agent's plan and, in the same push, the agent sets it
  ``aborted`` (a withdrawal "while its first approval waited"); the copy is approved by Alice.
  ``ab-approver``: the same with Bob aborting (control).
- ``readd-author``: the agent rejects its plan, deletes the folder and adds the same plan
  again under the same name; Alice approves it.
- ``after``: Alice approves the parent first (its own push, one pass: it runs); the agent then
  rejects the library. Control: the parent ran once and does not run again.

Results: ``approver``, ``cp-approver``, ``mallory`` and the control held. Three BROKE (strict
xfails), one root: a rejection by the version's author who is no approver is accepted as a
status (``plangate status``: "agent@example.com set status rejected", the plan stays
``rejected``) but not remembered as a withdrawn version. ``author``/``author2``: Alice's
approval of the parent started it and ``rec`` ran the rejected library (``author-lib``,
``author2-lib``); Bob's rejection of the same kind of library refused the parent
``E_VERSION_WITHDRAWN``. ``cp-author``: Alice's approval of the exact copy started it (``rec``
ran ``cp-author``); after Bob's rejection the copy is refused ``E_VERSION_WITHDRAWN``. Same
root, also BROKE: ``ab-author`` (the agent's abort while Alice's approval waited: the copy ran;
Bob's abort: refused) and ``readd-author`` (rejected, deleted, added again: Alice's approval ran
it).

Changed (2026-12-06, round 120 child-author-vetoes-pinning-parent, fix121c merged as
fix122c): ``author2`` is asserted the other way. A rejection counts "only when its commit is
by an allowed approver or by an author of the plan" (SPEC §4); the parent is the second
agent's plan, and the library's author is none of its authors, so her withdrawal of her
library binds her own plans (the library, its copies, re-adds, a parent she wrote: ``author``,
``cp-author``, ``readd-author`` still refused) and not a parent someone else wrote and an
allowed approver approved with the library's exact version in it. An allowed approver's
withdrawal of the library still binds every parent (``approver``). Round 120's attacker
showed the old reading let a library's writer withdraw any parent pinning it by a status
flip (``draft`` -> ``pending_approval`` -> ``rejected``), which the draft rule was written
to prevent. docs/approvals.md, "The authors who may reject or abort a plan".
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, MALLORY, Lab, plan_text
from test_round2_execution_kit import shared
from test_round23_approve_libwriters import _parent

WHO = {"author": AGENT, "approver": BOB, "mallory": MALLORY, "author2": AGENT}
AGENT2 = ("Agent Two", "agent2@example.com")
COPIES = {"cp-author": AGENT, "cp-approver": BOB}


def _build(root: Path) -> Lab:
    lab = Lab(root)
    for vid in [*WHO, "after"]:
        lab.write(f"{vid}-lib", plan_text(f"{vid}-lib"))
    lab.commit("agent libraries", AGENT)
    for vid in [*WHO, "after"]:
        result = lab.cli("hash", "--config", str(lab.config), f"plans/{vid}-lib", cwd=lab.repo)
        assert result.returncode == 0, result.stdout + result.stderr
        if vid != "author2":
            lab.write(vid, _parent(vid, f"{vid}-lib", result.stdout.strip().split()[-1]))
        else:
            digest2 = result.stdout.strip().split()[-1]
    lab.commit("agent parents", AGENT)
    lab.write("author2", _parent("author2", "author2-lib", digest2))
    lab.commit("a second agent's parent", AGENT2)
    for vid in [*COPIES, "ab-author", "ab-approver", "readd-author"]:
        lab.write(vid, plan_text(vid))
    lab.commit("agent plans", AGENT)
    lab.run()  # freeze
    time.sleep(1.05)
    lab.approve("after", ALICE)
    lab.run()
    time.sleep(1.05)
    for vid, who in WHO.items():
        lab.set_status(f"{vid}-lib", "rejected")
        lab.commit(f"reject {vid}-lib", who)
        lab.approve(vid, ALICE)
    lab.set_status("after-lib", "rejected")
    lab.commit("reject after-lib", AGENT)
    for vid, who in COPIES.items():
        lab.set_status(vid, "rejected")
        lab.commit(f"reject {vid}", who)
    for vid, who in {"ab-author": AGENT, "ab-approver": BOB}.items():
        lab.approve(vid, ALICE)
        lab.set_status(vid, "aborted")
        lab.commit(f"abort {vid}", who)
    lab.set_status("readd-author", "rejected")
    lab.commit("reject readd-author", AGENT)
    lab.run()
    time.sleep(1.05)
    for vid in [*COPIES, "ab-author", "ab-approver"]:
        text = lab.read(vid).replace("status: rejected", "status: pending_approval")
        lab.write(f"{vid}-copy", text.replace("status: aborted", "status: pending_approval"))
    lab.git("rm", "-rq", "plans/readd-author")
    lab.commit("agent copies the withdrawn plans, deletes readd-author", AGENT)
    lab.write("readd-author", plan_text("readd-author"))
    lab.commit("agent adds readd-author again", AGENT)
    lab.run()  # freeze the copies
    time.sleep(1.05)
    for vid in [*COPIES, "ab-author", "ab-approver"]:
        lab.approve(f"{vid}-copy", ALICE)
    lab.approve("readd-author", ALICE)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r23-libwithdraw", _build)


#: What round 23 found (fixed: an author's withdrawal vetoes the version when she wrote it
#: wherever else it is).
FOUND = {
    vid: pytest.mark.xfail(
        strict=True,
        raises=AssertionError,
        reason="round 23: a rejection by the plan's author (no approver) sets the plan "
        f"rejected but does not withdraw the version: {what} runs it",
    )
    for vid, what in {
        "ab-author": "an exact copy approved by Alice (aborted while approved)",
        "readd-author": "the plan deleted and added again, approved by Alice",
        "author": "a parent pinning it",
        "author2": "another agent's parent pinning it",
        "cp-author": "an exact copy approved by Alice",
    }.items()
}
BROKEN: dict[str, pytest.MarkDecorator] = {}


@pytest.mark.parametrize(
    "vid",
    [
        pytest.param(v, id=v, marks=[BROKEN[v]] if v in BROKEN else [])
        for v in ["author", "approver"]
    ],
)
def test_a_withdrawn_library_is_no_pin(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [] and lab.calls(f"{vid}-lib") == [], lab.codes(vid)
    assert not lab.started(vid), lab.codes(vid)
    assert lab.refusal(vid) == "E_VERSION_WITHDRAWN", lab.codes(vid)


def test_a_library_authors_withdrawal_binds_no_parent_someone_else_wrote(lab: Lab) -> None:
    """``author2`` since round 120 (see the module docstring): the agent's rejection of its
    library rejects the library, but withdraws nothing of the second agent's parent, which
    Alice approved: the parent runs once, the library inside it once."""
    assert lab.plan("author2-lib")["plan"]["status"] == "rejected", lab.codes("author2-lib")
    assert lab.started("author2"), lab.codes("author2")
    assert len(lab.calls("author2")) == 1, lab.codes("author2")
    assert len(lab.calls("author2-lib")) == 1, lab.codes("author2")


@pytest.mark.parametrize(
    "vid",
    [
        pytest.param(v, id=v, marks=[BROKEN[v]] if v in BROKEN else [])
        for v in [*COPIES, "ab-author", "ab-approver", "readd-author"]
    ],
)
def test_a_copy_of_a_withdrawn_version_is_refused(lab: Lab, vid: str) -> None:
    slug = f"{vid}-copy"
    if vid == "readd-author":
        slug = vid
    else:
        assert lab.plan(vid)["plan"]["status"] in ("rejected", "aborted"), lab.codes(vid)
    assert lab.calls(vid) == [], lab.codes(slug)
    assert not lab.started(slug), lab.codes(slug)
    assert lab.refusal(slug) == "E_VERSION_WITHDRAWN", lab.codes(slug)


def test_a_stranger_cannot_veto_the_library(lab: Lab) -> None:
    assert len(lab.calls("mallory")) == 1, lab.codes("mallory")
    assert len(lab.calls("mallory-lib")) == 1, lab.codes("mallory")


def test_the_control_ran_once(lab: Lab) -> None:
    assert len(lab.calls("after")) == 1, lab.codes("after")
    assert len(lab.calls("after-lib")) == 1, lab.codes("after")
