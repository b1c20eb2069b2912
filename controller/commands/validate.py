"""``plangate validate PATH... [--json]``: report every problem of each plan file."""

from __future__ import annotations

import json
import sys

from controller.commands._shared import (
    as_git_stores,
    checkout_holds,
    controller_text,
    optional_config,
    plan_paths,
    print_problems,
    printed,
)
from controller.display import visible, visible_json


def validate(paths: list[str], as_json: bool = False, config_path: str | None = None) -> int:
    from controller.plan.discovery import discovery_warning, load_source, source_name
    from controller.plan.plans import load_plan

    config = optional_config(config_path)
    exit_code = 0
    for path in plan_paths(paths, "validate"):
        data = as_git_stores(path, config)  # as git would store it (round 80)
        if source_name(path) is not None:  # PLAN.json, PLAN.toon, PLAN.md, x.json, ...
            with checkout_holds(path) as holds:  # the daemon's rules of it (round 122)
                plan = load_source(path, config, data=data, holds=holds)
        else:
            plan = load_plan(path, config, plain=True, data=data)  # its model is not read here
            plan.format = "plan.yml"
        if not plan.valid:
            exit_code = 1
        shown = visible(str(path))
        warning = discovery_warning(path, config)
        warnings = [printed(warning)] if warning and as_json else [warning] if warning else []
        if config is not None and plan.valid:
            # a secret placed into an exec tool's argv: refused at run time (round 128); the
            # warning is the plan's own text and fixed words, kept as written (no oracle)
            from controller.plan.flows import secrets_into_argv

            warnings += secrets_into_argv(plan.data, config.tools)
        if as_json:
            record = _record(path, plan)
            record["warnings"] = warnings
            # ensure_ascii=False keeps readable text as it is; bidi and C1 controls escaped;
            # the plan's own text as written, the catalog's secrets it quotes hidden (round 61)
            print(visible_json(json.dumps(record, ensure_ascii=False)))
            continue
        for said in warnings:
            print(f"{shown}: warning: {visible(said)}", file=sys.stderr)
        if plan.valid:
            print(f"{shown}: valid ({plan.hash})")
            if _has_legacy_refs(plan.data):
                print(
                    f"{shown}: note: legacy ${{...}} references are converted to $<...> on freeze"
                )
        else:
            print_problems(path, plan.problems)
            print(f"{shown}: invalid, {len(plan.problems)} problem(s)")
    return exit_code


def _record(path: object, plan: object) -> dict[str, object]:
    from controller.plan.plans import LoadedPlan

    assert isinstance(plan, LoadedPlan)
    return {
        "path": str(path),
        # the format it was read as, whatever the conversion's outcome (round 127)
        "format": plan.format,
        "valid": plan.valid,
        "hash": plan.hash if plan.valid else None,
        "errors": [p.answered(controller_text).to_json() for p in plan.problems],
    }


def _has_legacy_refs(data: object) -> bool:
    from controller.plan.plans import convert_legacy_params

    return isinstance(data, dict) and convert_legacy_params(data) != data
