"""A plan id maps to its file on a branch one way for every reader (round 68): ``PLAN.yml``
or ``PLAN.yaml``, whichever is there; both there is E_PLAN_AMBIGUOUS, neither is no plan."""

from __future__ import annotations

import pytest

from controller.errors import PlanAmbiguous
from controller.git.planstate import plan_file_of, plan_id_of
from controller.plan.plans import PLAN_FILES, unsafe_name


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


@pytest.mark.parametrize(
    "path",
    ["plans/x/PLAN.yml/PLAN.yml", "plans/x/PLAN.yaml/y/PLAN.yml", "plans/x/PLAN.md/PLAN.yaml"],
)
def test_a_folder_named_as_a_plan_file_is_no_plan_folder(path: str) -> None:
    """Round 69: a plan id is a folder and a path naming a plan file is read as its
    folder, so a folder under a plan file's name holds no plan (E_UNSAFE_PATH where plans
    are found), and counts as that file beside a plan file of its parent (ambiguous)."""
    assert "no plan folder" in (unsafe_name(path) or "")
    assert unsafe_name("plans/x/PLAN.yml") is None and unsafe_name("plans/PLAN-x/PLAN.yml") is None
    present = {"plans/x/PLAN.yaml", "plans/x/PLAN.yml"}  # the second one a folder
    with pytest.raises(PlanAmbiguous):
        plan_file_of("plans/x", present.__contains__)


@pytest.mark.parametrize(
    "path",
    [
        "plans/x/EXECUTION_LOG.md/PLAN.yml",
        "plans/x/execution_log.MD/y/PLAN.yml",
        "plans/x/PLAN.YML/PLAN.yml",
        "plans/x/plan.yml/PLAN.yml",
        "plans/x/Plan.Yaml/PLAN.yaml",
        "plans/x/plan.JSON/PLAN.yml",
    ],
)
def test_a_folder_named_as_the_record_or_a_case_variant_is_no_plan_folder(path: str) -> None:
    """Round 70: a folder at the place of the controller's record (``EXECUTION_LOG.md``) or
    named as a case variant of a plan file or source (a checkout on a case-insensitive file
    system makes ``PLAN.YML`` the plan file) was frozen as a plan of its own. One rule, the
    names compared case-insensitively; a capital letter elsewhere in a folder is fine."""
    assert "no plan folder" in (unsafe_name(path) or "")
    for fine in (
        "plans/Deploy/PLAN.yml",
        "plans/x/EXECUTION_LOG/PLAN.yml",
        "plans/PLAN.ymlx/PLAN.yml",
    ):
        assert unsafe_name(fine) is None, fine
