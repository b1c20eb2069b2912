"""Round 51, self-approval: an approver's plan copied to a new folder with an edit in ONE
commit that also touches the source, so git's own default copy detection pairs it.

docs/threat-model.md accepts round 17's ``cp-edit`` (a copy with an edit in one commit is not
followed) because "git keeps no record of copies, and comparing every added plan with every
existing one costs too much". git's default ``diff-tree -M -C`` does pair a copy whose source
the same commit modified (``C0xx``), at no cost beyond the commit's own changes.

Config: the bench's. Alice (an allowed approver) commits ``plans/t/<vid>/PLAN.yml``
(``draft``). Then the agent, in ONE commit, copies it to ``plans/t/<vid>2/PLAN.yml`` with an
edit of ``plan.task`` (``status: pending_approval``) and:

- ``touch-comment``: appends a comment line to Alice's file;
- ``touch-status``: sets Alice's file ``status: pending_approval`` (so her plan is frozen too).

The controller freezes ``<vid>2``; Alice approves it; two passes.

Asserted (the defence): ``E_SELF_APPROVAL``, ``rec`` never runs, the fresh-clone audit lists
no run; the bench asserts git pairs each copy (``C``) by default.

Seen: both BROKE (strict xfails): git's default ``diff-tree -M -C`` pairs the agent's commit
``C071 plans/t/<vid>/PLAN.yml -> plans/t/<vid>2/PLAN.yml``, yet the controller froze
``<vid>2``, took Alice's approval (``approval.status: approved``), started and completed it
(``rec`` ran once), and the fresh-clone audit lists the run as valid. This is round 17's
``cp-edit`` shape with the source touched: listed because the limit's stated reason (git
keeps no record of copies) does not hold here; the maintainers may judge it the same limit.

Fixed (2026-11-29): each commit that adds a plan file has git's pairing asked for it
(``diff-tree -M -C``, whole tree), and the plan takes the writers of what git pairs it from:
here Alice's plan, so both are ``E_SELF_APPROVAL`` (``Lifecycle._pair_parked``; index
version 21).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, plan_text
from test_round2_execution_kit import shared

CASES = ["touch-comment", "touch-status"]
FOUND: dict[str, pytest.MarkDecorator] = {}  # fixed (see the docstring)


def _build(root: Path) -> Lab:
    lab = Lab(root)
    for vid in CASES:
        lab.write(f"t/{vid}", plan_text(vid, status="draft"))
    lab.commit("alice writes her plans", ALICE)
    lab.run()
    lab.pairs = {}  # type: ignore[attr-defined]
    for vid in CASES:
        src = lab.repo / f"plans/t/{vid}/PLAN.yml"
        text = src.read_text(encoding="utf-8").replace("status: draft", "status: pending_approval")
        lab.write(f"t/{vid}2", text.replace("attack variant", "tidied attack variant"))
        if vid == "touch-comment":
            src.write_text(src.read_text(encoding="utf-8") + "# reviewed\n", encoding="utf-8")
        else:
            lab.set_status(f"t/{vid}", "pending_approval")
        lab.commit(f"agent copies {vid}", AGENT)
        out = lab.git("diff-tree", "-r", "-M", "-C", "--name-status", "HEAD")
        lab.pairs[vid] = [r for r in out.splitlines() if r.endswith(f"{vid}2/PLAN.yml")]  # type: ignore[attr-defined]
    lab.run()
    time.sleep(1.05)
    for vid in CASES:
        lab.set_status(f"t/{vid}2", "approved")
    lab.commit("alice approves", ALICE)
    lab.run()
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r51-copytouch", _build)


def _p(vids: list[str]) -> list[object]:
    return [pytest.param(v, id=v, marks=[FOUND[v]] if v in FOUND else []) for v in vids]


@pytest.mark.parametrize("vid", CASES)
def test_git_pairs_the_copy(lab: Lab, vid: str) -> None:
    rows = lab.pairs[vid]  # type: ignore[attr-defined]
    assert rows and rows[0].startswith("C"), lab.pairs  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", _p(CASES))
def test_her_copied_plan_is_not_hers_to_approve(lab: Lab, vid: str) -> None:
    slug = f"t/{vid}2"
    assert lab.calls(vid) == [], lab.codes(slug)
    assert "E_SELF_APPROVAL" in lab.codes(slug), lab.codes(slug)


@pytest.mark.parametrize("vid", _p(CASES))
def test_the_audit_lists_no_run(lab: Lab, vid: str) -> None:
    _code, report = lab.audit()
    runs = [e for e in report.get("executions", []) if e.get("plan") == f"plans/t/{vid}2"]
    assert runs == [], runs
