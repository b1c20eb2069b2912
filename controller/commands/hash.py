"""``plangate hash PATH``: the plan hash of the file as written (SPEC §5)."""

from __future__ import annotations

import sys


def hash_plan(path: str, config_path: str | None = None) -> int:
    """Print the hash of the plan at ``path``, read as the controller the config names reads
    it (as ``validate`` does): its limits (``max_plan_bytes`` of the file, or of the PLAN.yml
    a source converts to, ``max_actions``) and, for a source, its validation. Round 125,
    ``hash-source-ignores-size-limit``: ``hash --config`` read no config, and printed the
    hash of a source whose PLAN.yml was over the config's ``max_plan_bytes``, where the
    controller froze nothing."""
    from controller.commands._shared import (
        as_git_stores,
        checkout_holds,
        optional_config,
        plan_path,
        print_problems,
    )
    from controller.plan.names import SOURCE_FILES
    from controller.plan.plans import non_json_problems, read_plan

    plan_file = plan_path(path, "hash")
    config = optional_config(config_path)
    stored = as_git_stores(plan_file, config)  # as git would store it (round 80)
    if plan_file.name in SOURCE_FILES:  # as the daemon reads it: converted (round 113)
        from controller.plan.discovery import load_source

        with checkout_holds(plan_file) as holds:  # the daemon's rules (round 122)
            plan = load_source(plan_file, config, data=stored, holds=holds)
    else:
        plan = read_plan(plan_file, config, data=stored)
    if not plan.problems and not isinstance(plan.data, dict):
        from controller.errors import Problem

        plan.problems.append(Problem("E_SCHEMA_INVALID", "the file must be a mapping"))
    problems = plan.problems or non_json_problems(plan.data)
    if problems:
        print_problems(plan_file, problems)
        return 1
    from controller.display import visible
    from controller.plan.discovery import discovery_warning

    if plan_file.name in SOURCE_FILES:  # say where it stands (round 81)
        warning = discovery_warning(plan_file, config)
        if warning is not None:
            print(f"{visible(str(plan_file))}: warning: {visible(warning)}", file=sys.stderr)
    from controller.plan.plans import frozen_form_hash

    frozen = frozen_form_hash(plan)  # the freeze rewrites legacy ``${...}`` references
    if frozen != plan.hash:  # stdout stays the file's own hash: the one a nested pin names
        print(
            f"{visible(str(plan_file))}: note: the freeze rewrites its legacy ${{...}} "
            f"references in params to $<...>: frozen as a plan, its hash will be {frozen}",
            file=sys.stderr,
        )
    print(plan.hash)
    return 0
