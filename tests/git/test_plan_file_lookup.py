"""A plan id maps to its file on a branch one way for every reader (round 68): ``PLAN.yml``
or ``PLAN.yaml``, whichever is there; both there is E_PLAN_AMBIGUOUS, neither is no plan."""

from __future__ import annotations

import pytest

from controller.errors import PlanAmbiguous
from controller.git.planstate import plan_file_of, plan_id_of
from controller.plan.plans import PLAN_FILES


@pytest.mark.parametrize("name", PLAN_FILES)
def test_either_file_name_is_the_plans_file(name: str) -> None:
    file = plan_file_of("plans/x", {f"plans/x/{name}", "plans/x/EXECUTION_LOG.md"}.__contains__)
    assert file == f"plans/x/{name}"
    assert plan_id_of(str(file), "plans") == "plans/x"  # and back to its id


def test_a_folder_without_a_plan_file_has_none() -> None:
    present = {"plans/x/EXECUTION_LOG.md", "plans/x/PLAN.json", "plans/xy/PLAN.yml"}
    assert plan_file_of("plans/x", present.__contains__) is None


def test_both_file_names_are_ambiguous() -> None:
    with pytest.raises(PlanAmbiguous):
        plan_file_of("plans/x", {f"plans/x/{n}" for n in PLAN_FILES}.__contains__)
