"""The layers of docs/architecture.md hold: checked with import-linter's contracts, which must
cover every module."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_import_contracts_are_kept() -> None:
    lint = shutil.which("lint-imports") or str(Path(sys.executable).parent / "lint-imports")
    result = subprocess.run(
        [lint, "--config", str(ROOT / "pyproject.toml")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-3000:]
    assert "0 broken" in result.stdout


def test_cli_starts_without_heavy_imports() -> None:
    """`plangate hash` must not import GitPython, httpx or pydantic (fast start-up)."""
    code = (
        "import sys; from controller.cli import main; "
        "main(['hash', sys.argv[1]]); "
        "print(sorted(m for m in ('git', 'httpx', 'pydantic', 'watchdog') if m in sys.modules))"
    )
    plan = ROOT / "controller" / "templates" / "hello-PLAN.yml"
    out = subprocess.run(
        [sys.executable, "-c", code, str(plan)], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip().splitlines()[-1] == "[]"


def _contracts() -> list[dict[str, object]]:
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return list(config["tool"]["importlinter"]["contracts"])


def test_every_module_sits_in_a_package_layer() -> None:
    """A module outside every layer would escape the contract: a new module must be placed."""
    import grimp

    [packages] = [c for c in _contracts() if str(c["name"]).startswith("Packages:")]
    layers = [
        name.strip()
        for layer in packages["layers"]  # type: ignore[attr-defined]
        for name in str(layer).replace(":", "|").split("|")
    ]
    graph = grimp.build_graph("controller")
    unplaced = [
        module
        for module in sorted(graph.modules)
        if not any(module == layer or module.startswith(layer + ".") for layer in layers)
        and not any(layer.startswith(module + ".") for layer in layers)  # a parent package
    ]
    assert unplaced == []


def test_each_library_has_one_owner() -> None:
    """GitPython, ruamel, pydantic, watchdog and httpx each stay behind their owner module."""
    owners = {
        tuple(c["protected_modules"]): tuple(c["allowed_importers"])  # type: ignore[arg-type]
        for c in _contracts()
        if c["type"] == "protected"
    }
    assert owners == {
        ("git",): ("controller.git",),
        ("ruamel",): ("controller.plan.yamlio",),
        ("pydantic", "pydantic_core"): ("controller.plan.schema", "controller.settings"),
        ("watchdog",): ("controller.service.watcher",),
        ("httpx",): ("controller.execution.tools.http",),
    }
