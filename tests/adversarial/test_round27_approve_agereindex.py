"""Round 27, ``max_age`` after the history index is rebuilt: a version's first freeze that only
the index remembers.

docs/approvals.md: ``max_age`` counts from "the first freeze of the version (its hash, on any
path, ever ...)", and the index keeps "each version's first freeze ... by hash, through
rewrites"; "Deleting the file [index.sqlite] is always safe". Config: the bench's plus
``max_age: 5s``. The agent adds ``plans/age-kept`` and ``plans/age-rebuilt``; the controller
freezes them (t0). Six seconds later the agent ``reset --hard``s main to before that commit
(the freezes are erased). The controller passes. The agent adds ``age-kept``'s text back; the
controller freezes it again; a second later Alice approves. Then the operator deletes
``index.sqlite``; the agent adds ``age-rebuilt``'s text back; the controller freezes it again;
a second later Alice approves.

Asserted: both are refused ``E_PLAN_EXPIRED`` (first frozen more than 5 s before the
approval); the tool never runs.

Results: ``age-kept`` held (``E_PLAN_EXPIRED``). ``age-rebuilt`` BROKE (strict xfail): after
the rebuild the version's first freeze is the second one, Alice's approval starts it and it
runs once.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab, plan_text
from test_round2_execution_kit import shared

VIDS = ["age-kept", "age-rebuilt"]


def _build(root: Path) -> Lab:
    lab = Lab(root, approval="max_age: 5s\n")
    lab.write("base", plan_text("base"))
    lab.commit("agent adds base", AGENT)
    lab.run()
    keep = lab.head()
    for vid in VIDS:
        lab.write(vid, plan_text(vid))
    lab.commit("agent adds the plans", AGENT)
    lab.run()  # first freeze (t0)
    time.sleep(6)
    lab.git("reset", "-q", "--hard", keep)  # the freezes are erased
    lab.run()
    lab.write("age-kept", plan_text("age-kept"))
    lab.commit("agent re-adds age-kept", AGENT)
    lab.run()  # frozen again
    time.sleep(1.05)
    lab.approve("age-kept", ALICE)
    lab.run()
    (lab.state / "index.sqlite").unlink()
    lab.run()
    lab.write("age-rebuilt", plan_text("age-rebuilt"))
    lab.commit("agent re-adds age-rebuilt", AGENT)
    lab.run()  # frozen again
    time.sleep(1.05)
    lab.approve("age-rebuilt", ALICE)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r27-agereindex", _build)


#: What round 27 broke (strict xfails until fixed in the same round; kept as the record).
FOUND: dict[str, pytest.MarkDecorator] = {
    "age-rebuilt": pytest.mark.xfail(
        strict=True,
        raises=AssertionError,
        reason="round 27: after index.sqlite is deleted (documented safe) the index forgets a "
        "version's first freeze erased by a rewrite: max_age counts from the second freeze and "
        "Alice's approval of a version first frozen past max_age runs it (twin age-kept: "
        "E_PLAN_EXPIRED)",
    ),
}


def _p(vids: list[str]) -> list[Any]:
    return [pytest.param(v, id=v, marks=[]) for v in vids]


@pytest.mark.parametrize("vid", _p(VIDS))
def test_expired_version_never_runs(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)
    assert not lab.started(vid), lab.codes(vid)
