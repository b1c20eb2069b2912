"""``plangate show PATH [--format text|json|toon|markdown] [--verbose|--quiet]``.

What a reviewer needs to see before approving a plan (text), the same as data (``json``,
and ``toon``, which decodes back to the json output) and as a pull-request comment
(``markdown``). The renderers live in :mod:`controller.plan.rendering`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

FORMATS = ("text", "json", "toon", "markdown")


def show(
    path: str,
    as_json: bool = False,
    config_path: str | None = None,
    fmt: str = "text",
    verbosity: str = "normal",
) -> int:
    from controller.commands._shared import optional_config, print_problems
    from controller.errors import PlanInvalid
    from controller.plan import rendering
    from controller.plan.plans import load_plan, plan_file_in

    plan_file = plan_file_in(Path(path))
    config = optional_config(config_path)
    plan = load_plan(plan_file, config)
    fmt = "json" if as_json else fmt
    if plan.model is None:
        if fmt in ("json", "toon"):  # the --json error shape, with every problem
            raise PlanInvalid(plan.problems, str(plan_file))
        print_problems(plan_file, plan.problems)
        return 1
    view = rendering.plan_view(plan, config, _review(plan, config))
    level = verbosity if verbosity in ("quiet", "verbose") else "normal"
    if fmt == "json":
        print(rendering.to_json(view))
    elif fmt == "toon":
        print(rendering.to_toon(view))
    elif fmt == "markdown":
        sys.stdout.write(rendering.to_markdown(view, level))  # type: ignore[arg-type]
    else:
        print(rendering.to_text(view, level, color=sys.stdout.isatty()))  # type: ignore[arg-type]
    return 0


def _review(plan: Any, config: Any) -> dict[str, Any]:
    """Risk, estimate and required approvals: from the catalog and policy when a config is
    given (what the controller will use), else as written in ``frozen:`` at freeze."""
    if config is None:
        frozen = plan.block("frozen")
        found = {k: frozen[k] for k in ("risk", "estimate", "policy") if k in frozen}
        return {**found, "source": "frozen"} if found else {}
    from controller.commands._shared import frozen_facts_for

    return {**(frozen_facts_for(plan, config) or {}), "source": "config"}
