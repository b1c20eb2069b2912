"""``plangate hash PATH``: the plan hash of the file as written (SPEC §5)."""

from __future__ import annotations

import sys


def hash_plan(path: str, config_path: str | None = None) -> int:
    """Print the hash of the plan at ``path``, read as the controller the config names reads
    it, by ``validate``'s reader (:func:`~controller.commands._shared.read_as_controller`):
    its limits (``max_plan_bytes`` of the file, or of the PLAN.yml a source converts to,
    ``max_actions``) and its validation, a PLAN.yml's as a source's; a plan it would not
    freeze is its problems, no hash. Without a config a PLAN.yml is only read (its own hash
    as written, the one a parent's pin names); a source is converted and validated either
    way. Round 125, ``hash-source-ignores-size-limit``: ``hash --config`` read no config;
    round 128, ``hash-config-ignores-plan-yml-validity``: it validated a source and not a
    PLAN.yml (a tool not in the catalog got a hash)."""
    from controller.commands._shared import (
        optional_config,
        plan_path,
        print_problems,
        read_as_controller,
    )
    from controller.plan.discovery import source_name
    from controller.plan.plans import non_json_problems

    plan_file = plan_path(path, "hash")
    config = optional_config(config_path)
    source = source_name(plan_file) is not None
    # with a config, what the controller would freeze (as `validate` reads it); without
    # one, a PLAN.yml's own hash as written (the pin a parent names)
    plan = read_as_controller(plan_file, config, checked=config is not None, plain=True)[0]
    if not plan.problems and not isinstance(plan.data, dict):
        from controller.errors import Problem

        plan.problems.append(Problem("E_SCHEMA_INVALID", "the file must be a mapping"))
    problems = plan.problems or non_json_problems(plan.data)
    if problems:
        print_problems(plan_file, problems)
        return 1
    from controller.display import visible
    from controller.plan.discovery import discovery_warning

    if source:  # say where it stands (round 81)
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
