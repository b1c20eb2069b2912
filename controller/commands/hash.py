"""``plangate hash PATH``: the plan hash of the file as written (SPEC §5)."""

from __future__ import annotations

import sys


def hash_plan(path: str) -> int:
    from controller.commands._shared import (
        as_git_stores,
        checkout_holds,
        plan_path,
        print_problems,
    )
    from controller.plan.names import SOURCE_FILES
    from controller.plan.plans import non_json_problems, read_plan

    plan_file = plan_path(path, "hash")
    stored = as_git_stores(plan_file, None)  # as git would store it (round 80)
    if plan_file.name in SOURCE_FILES:  # as the daemon reads it: converted (round 113)
        from controller.plan.discovery import load_source

        with checkout_holds(plan_file) as holds:  # the daemon's rules (round 122)
            plan = load_source(plan_file, None, data=stored, holds=holds)
    else:
        plan = read_plan(plan_file, data=stored)
    if not plan.problems and not isinstance(plan.data, dict):
        from controller.errors import Problem

        plan.problems.append(Problem("E_SCHEMA_INVALID", "the file must be a mapping"))
    problems = plan.problems or non_json_problems(plan.data)
    if problems:
        print_problems(plan_file, problems)
        return 1
    from controller.plan.discovery import discovery_warning

    if plan_file.name in SOURCE_FILES:  # say where it stands (round 81)
        warning = discovery_warning(plan_file, None)
        if warning is not None:
            from controller.display import visible

            print(f"{visible(str(plan_file))}: warning: {visible(warning)}", file=sys.stderr)
    print(plan.hash)
    return 0
