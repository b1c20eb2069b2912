"""Round 52 (runs): plan paths whose URL-quoted journal names could meet.

The journal is ``<state_dir>/journal/<plan id, URL-quoted>/<hash>.jsonl``; two plans whose
quoted ids were equal would share a journal (an action "already done" for the other, or
E_LOCKED). Lab ``jn``: six plans, each its own content and ``rec`` tag, at ``plans/a/b``,
``plans/a%2Fb``, ``plans/x%2fb``, ``plans/a%252Fb``, ``plans/c.d``, ``plans/c%2Ed``; Alice
approves all; one pass. (Until round 75 the third was ``plans/A%2fb``: a case twin of
``plans/a%2Fb``, one folder on a case-insensitive checkout, both held since r75twinfold;
``x%2fb`` keeps the lower-case escape.)

Asserted: the pass finishes; each plan completes and its ``rec`` ran exactly once; six
journal folders. All held.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from advkit import ALICE, Lab, plan_text
from test_round2_execution_kit import shared

SLUGS = ["a/b", "a%2Fb", "x%2fb", "a%252Fb", "c.d", "c%2Ed"]


def _build(root: Path) -> Lab:
    lab = Lab(root / "jn")
    for i, slug in enumerate(SLUGS):
        lab.write(slug, plan_text(f"jn{i}"))
    lab.commit("plans")
    lab.run()
    for slug in SLUGS:
        lab.set_status(slug, "approved")
    lab.commit("approve", ALICE)
    lab.run()
    lab.folders = sorted(p.name for p in (lab.state / "journal").iterdir())  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r52-journalnames", _build)


def test_one_journal_per_plan(lab: Lab) -> None:
    assert len(lab.folders) == len(SLUGS), lab.folders  # type: ignore[attr-defined]


@pytest.mark.parametrize("i", range(len(SLUGS)), ids=SLUGS)
def test_each_plan_ran_once(lab: Lab, i: int) -> None:
    assert len(lab.calls(f"jn{i}")) == 1, lab.calls(f"jn{i}")
    assert lab.plan(SLUGS[i])["plan"]["status"] == "completed"
