"""``plangate freeze PATH... [--check]``: write ``frozen:``, or check it is current.

``frozen:`` holds the hash and time, and with a config also the plan's risk, estimate and
the approvals the policy requires (SPEC §11).

A plan that fails validation is never frozen (the file is left untouched). ``--check`` writes
nothing and exits 1 when any plan is invalid, not frozen, or frozen with a stale hash, so it
can run in CI and as a pre-commit hook.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from controller.commands._shared import (
    as_git_checks_out,
    as_git_stores,
    frozen_facts_for,
    optional_config,
    plan_paths,
    print_problems,
)
from controller.display import visible

if TYPE_CHECKING:
    from pathlib import Path

    from controller.settings import Config


def freeze(paths: list[str], check: bool = False, config_path: str | None = None) -> int:
    from controller.fsutil import write_atomic
    from controller.plan.plans import SOURCE_FILES, freeze_text, load_plan

    config = optional_config(config_path)
    exit_code = 0
    for path in plan_paths(paths, "freeze --check" if check else "freeze"):
        stored = as_git_stores(path, config)  # as git would store it (round 80)
        if path.name in SOURCE_FILES:
            exit_code |= _source(path, config, stored)
            continue
        loaded = load_plan(path, config, data=stored)
        outcome = freeze_text(loaded, facts=frozen_facts_for(loaded, config))
        shown = visible(str(path))  # a folder name is the plan author's text
        if outcome.plan.problems:
            print_problems(path, outcome.plan.problems)
            print(f"{shown}: not frozen ({len(outcome.plan.problems)} problem(s))")
            exit_code = 1
        elif check and outcome.changed:
            state = "stale" if outcome.plan.frozen_hash else "not frozen"
            print(f"{shown}: {state}; run `plangate freeze {shown}`")
            exit_code = 1
        elif outcome.changed:
            # as git would check it out (or refused); a symlinked plan stays a symlink
            text = as_git_checks_out(path.resolve(), outcome.text.encode("utf-8"))
            write_atomic(path.resolve(), text)
            print(f"{shown}: frozen {outcome.hash}")
        else:
            print(f"{shown}: frozen {outcome.hash} (unchanged)")
    return exit_code


def _source(path: Path, config: Config | None, stored: bytes | None) -> int:
    """A plan source (PLAN.json, PLAN.toon, PLAN.md) is never written: the controller
    converts it to PLAN.yml and freezes that (docs/formats.md); ``frozen:`` written into the
    source was the author's text, a block the controller owns (round 80: a plain-YAML
    PLAN.md got one). Validated as the daemon reads it: 0 and the hash it will freeze, or 1
    and its problems (``--check`` alike: a source is never "not frozen"); 0 and the warning
    ``validate`` prints where the controller would not convert it (a PLAN.yml beside it,
    outside the plans folder; round 81: it printed a hash the controller never froze)."""
    from controller.commands._shared import checkout_holds
    from controller.plan.discovery import discovery_warning, load_source

    with checkout_holds(path) as holds:  # the daemon's rules of it (round 122)
        plan = load_source(path, config, data=stored, holds=holds)
    shown = visible(str(path))
    if not plan.valid:
        print_problems(path, plan.problems)
        print(f"{shown}: not frozen ({len(plan.problems)} problem(s))")
        return 1
    warning = discovery_warning(path, config)
    if warning is not None:  # beside a PLAN.yml, or where no controller looks (round 81)
        print(f"{shown}: warning: {visible(warning)}", file=sys.stderr)
        print(f"{shown}: a plan source, not written; the controller would not convert it")
        return 0  # as `validate` answers it: the warning says it all
    print(
        f"{shown}: a plan source, not written: the controller converts it to PLAN.yml and "
        f"freezes that as {plan.hash} (`plangate convert` writes the PLAN.yml yourself)"
    )
    return 0
