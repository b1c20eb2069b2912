"""Round 20, the ``guard-many`` and ``expect-many`` variants of
``test_round20_runs_checkcost.py`` (its docstring says what each does, what is asserted and
what broke), in a lab of their own so that the two modules' labs are built side by side.

- ``guard-many``: 20 guards with one slowly-succeeding pattern on one param, a list of 5
  strings: 100 checks of about 0.03 s each, none cut, no total bound.
- ``expect-many``: 60 ``verify.expect`` clauses with a slowly-succeeding I-Regexp.
"""

from __future__ import annotations

import pytest
from advkit import Lab
from test_round2_execution_kit import shared
from test_round20_runs_checkcost import build, check

HERE = ["guard-many", "expect-many"]


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r20-expectcost", lambda root: build(root / "lab", HERE))


# round 20: broke; fixed since (one time budget per evaluation)
@pytest.mark.parametrize("slug", [pytest.param(s, id=s) for s in HERE])
def test_checks_on_values_are_bounded_in_total(lab: Lab, slug: str) -> None:
    check(lab, slug)


def test_the_honest_plan_ran_once(lab: Lab) -> None:
    assert len(lab.calls("zz")) == 1
    assert lab.status()["plans/zz"]["status"] == "completed"
