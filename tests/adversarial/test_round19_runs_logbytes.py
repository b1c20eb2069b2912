"""Round 19, what is recorded: the ``grow-many`` and ``log-fallbacks`` variants of
``test_round19_runs_planbytes.py`` (its docstring says what each does and what broke), in a
lab of their own so that the two modules' labs are built side by side.

- ``grow-many``: 500 ``echo`` actions, each with a failing ``verify`` and one ``echo``
  fallback step (870-byte params): a 962 KB plan, 1000 tool calls. **Broke**: committed
  PLAN.yml 1.19 MB and EXECUTION_LOG.md 1.14 MB after the run; ``status`` calls the
  completed plan ``unreadable``, the audit flags the outcome commit.
- ``log-fallbacks``: 250 such actions with three fallback steps each (600-byte params).
  **Broke**: a 1.21 MB EXECUTION_LOG.md (the round-18 budget's 512-byte floor per block and
  each section's fixed text, times 1000 steps).

Asserted (the defence): every file the controller commits for the plan is at most 1 MiB,
``status`` never calls it ``unreadable``, the audit has no finding about it, and the honest
``zz`` runs once.
"""

from __future__ import annotations

import pytest
from advkit import Lab
from test_round2_execution_kit import shared
from test_round19_runs_planbytes import R19, build, check

HERE = ["grow-many", "log-fallbacks", "zz"]
# round 19: both broke; fixed since (see test_round19_runs_planbytes.py)
FOUND = {"grow-many", "log-fallbacks"}
BROKEN: set[str] = set()


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r19-logbytes", lambda root: build(root, HERE))


def test_the_honest_plan_ran_once(lab: Lab) -> None:
    assert len(lab.calls("zz")) == 1
    assert lab.rows["plans/zz"]["status"] == "completed"  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    "slug",
    [
        pytest.param(
            s,
            id=s,
            marks=[pytest.mark.xfail(strict=True, raises=AssertionError, reason=R19)]
            if s in BROKEN
            else [],
        )
        for s in HERE
        if s != "zz"
    ],
)
def test_the_controller_never_grows_a_plan_past_the_limits(lab: Lab, slug: str) -> None:
    check(lab, slug)
