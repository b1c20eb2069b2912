"""The layers of docs/architecture.md hold: checked with import-linter's contracts."""

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
