"""Helpers for the engine tests: a frozen plan on disk with a config, and reading its state."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from controller import fsutil, settings
from controller.execution.executor import Engine, RunOutcome
from controller.execution.journal import journal_path
from controller.plan import plans, yamlio

PY = sys.executable
APPROVAL = {"by": "alice@example.com", "at": "2026-01-01T00:00:00Z", "commit": "c0ffee"}


def make_plan(
    root: Path,
    actions: list[dict[str, Any]],
    tools: dict[str, Any],
    *,
    inputs: dict[str, Any] | None = None,
    slug: str = "demo",
    extra_config: dict[str, Any] | None = None,
    top: dict[str, Any] | None = None,
) -> tuple[settings.Config, Path]:
    """A frozen PLAN.yml under ``root/plans/<slug>`` and a config whose catalog is ``tools``."""
    data = {
        "repo": str(root),
        "state_dir": str(root / "state"),
        "tools": tools,
        "limits": {"max_actions": 5000},
        **(extra_config or {}),
    }
    config = settings.config_from_data(data, root / "plangate.yml")
    (root / "config.json").write_text(json.dumps(data))  # for engine child processes
    folder = root / "plans" / slug
    folder.mkdir(parents=True, exist_ok=True)
    document = {
        "plan": {"name": "Demo plan", "task": "Exercise the engine", "status": "pending_approval"},
        "inputs": inputs or {},
        "available_tools": [{"name": name} for name in tools],
        **(top or {}),
        "actions": [{"why": f"step {a['id']}", **a} for a in actions],
    }
    plan_file = folder / "PLAN.yml"
    plan_file.write_text("# written by the test\n" + yamlio.dump(document))
    loaded = plans.load_plan(plan_file, config)
    assert loaded.valid, loaded.problems
    fsutil.write_atomic(plan_file, plans.freeze_text(loaded).text)
    return config, plan_file


def run(engine: Engine, plan_file: Path, slug: str = "demo", **kwargs: Any) -> RunOutcome:
    return engine.run(plan_file, plan_id=f"plans/{slug}", approval=APPROVAL, **kwargs)


def execution(plan_file: Path) -> dict[str, Any]:
    """The ``execution:`` block the engine wrote into PLAN.yml."""
    data = yamlio.read_yaml(plan_file.read_text()).data
    return data["execution"]


def statuses(plan_file: Path) -> list[str]:
    return [a["status"] for a in execution(plan_file)["actions"]]


def journal_records(config: settings.Config, plan_file: Path, slug: str = "demo") -> list[Any]:
    frozen = plans.load_plan(plan_file, config).frozen_hash
    assert frozen
    path = journal_path(config.state_path(), f"plans/{slug}", frozen)
    return [json.loads(line) for line in path.read_text().splitlines()]


def appender(target: Path, extra: str = "") -> dict[str, Any]:
    """An exec tool that appends one line to ``target`` (not idempotent)."""
    code = (
        "import sys,json; d=json.load(sys.stdin); "
        f"open({str(target)!r},'a').write(d.get('line','x')+'\\n'); {extra}"
        "print(json.dumps({'ok': True}))"
    )
    return {"kind": "exec", "argv": [PY, "-c", code]}
