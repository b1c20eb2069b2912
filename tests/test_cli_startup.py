"""The CLI starts without the libraries its command does not need (issue 17, fast start-up).

Each test runs the real ``plangate`` (``python -m controller``) in a fresh process and looks
at what it imported and which package-metadata files it opened, not at how long it took
(timing lives in bench/bench_startup.py).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import controller
from controller import cli
from tests.support.gitenv import commit_all, git, run_cli

ROOT = Path(__file__).resolve().parent.parent

# Run plangate as `python -m controller` does, then report sys.modules and every
# *.dist-info / *.egg-info file opened (an audit hook sees each open()).
_PROBE = """
import atexit, json, runpy, sys
opened = []
def _hook(event, args):
    if event == "open" and isinstance(args[0], str) and "-info" in args[0]:
        opened.append(args[0])
sys.addaudithook(_hook)
atexit.register(lambda: print("PROBE " + json.dumps({"modules": sorted(sys.modules),
                                                    "opened": opened}), file=sys.stderr))
sys.argv = ["plangate", *sys.argv[1:]]
runpy.run_module("controller", run_name="__main__", alter_sys=True)
"""

#: Never on the way of --help or validate: git, HTTP, logging, watching, serving, the
#: JSONPath and JSON Schema libraries (a plain query needs neither), and the RFC 8785
#: library (plain JSON data is hashed through the C encoder).
NEVER = (
    "rfc8785",
    "git",
    "httpx",
    "structlog",
    "watchdog",
    "mcp",
    "prometheus_client",
    "jsonpath_rfc9535",
    "iregexp_check",
    "jsonschema",
    "regex",
    "controller.git",
    "controller.service",
    "controller.execution",
)

#: Not counted: the stand-in for pydantic's plugin loader that importing ``controller`` puts
#: in place, and the look for attribute files (no git run, no GitPython: a plan file in a
#: working tree whose attributes may convert it is read as git stores it, round 80).
LIGHT = ("pydantic.plugin._loader", "controller.git", "controller.git.attrfiles")

PLAN = """\
plan:
  name: "ten"
  task: "ten echo actions"
  status: pending_approval
inputs:
  start: 1
available_tools:
  - name: echo
actions:
"""


def _probe(*args: str, cwd: Path) -> tuple[subprocess.CompletedProcess[str], dict[str, list[str]]]:
    result = subprocess.run(
        [sys.executable, "-c", _PROBE, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    [line] = [x for x in result.stderr.splitlines() if x.startswith("PROBE ")]
    return result, json.loads(line.removeprefix("PROBE "))


def _loaded(found: dict[str, list[str]], names: tuple[str, ...]) -> list[str]:
    """Which of ``names`` (or their submodules) were imported (not counting :data:`LIGHT`)."""
    modules = [m for m in found["modules"] if m not in LIGHT]
    return sorted({n for n in names for m in modules if m == n or m.startswith(n + ".")})


def _plan(folder: Path, actions: int = 10) -> Path:
    """A plans repository holding one valid plan of ``actions`` echo actions."""
    git(folder, "init", "-q", "-b", "main")
    lines = [PLAN]
    for i in range(1, actions + 1):
        value = '"$<inputs.start>"' if i == 1 else f'"$<actions[{i - 1}].outputs.value>"'
        lines.append(
            f'  - id: {i}\n    tool: echo\n    why: "step {i}"\n'
            f"    params:\n      value: {value}\n"
            "    outputs:\n      - name: value\n        path: \"$['value']\"\n"
            '    verify:\n      expect: {path: "$.value", not_equals: null}\n'
        )
    path = folder / "plans" / "ten" / "PLAN.yml"
    path.parent.mkdir(parents=True)
    path.write_text("".join(lines))
    return path


def test_the_version_constant_is_the_one_in_pyproject() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert controller.__version__ == project["version"]


def test_version_prints_the_constant(tmp_path: Path) -> None:
    result = run_cli("--version", cwd=tmp_path)
    assert result.returncode == 0
    assert result.stdout.strip() == f"plangate {controller.__version__}"


def test_help_imports_only_the_parser(tmp_path: Path) -> None:
    result, found = _probe("--help", cwd=tmp_path)
    assert result.returncode == 0 and "validate" in result.stdout
    heavy = (*NEVER, "pydantic", "pydantic_core", "importlib.metadata", "ruamel")
    assert _loaded(found, heavy) == []
    assert _loaded(found, ("controller.plan", "controller.settings", "controller.errors")) == []
    assert _loaded(found, ("controller.display",)) == []  # its tables: 4 ms, for errors only
    assert found["opened"] == []  # no package metadata read for the version string


def test_validate_without_a_config_builds_no_config_model(tmp_path: Path) -> None:
    plan = _plan(tmp_path)
    result, found = _probe("validate", str(plan), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "valid (sha256:" in result.stdout
    assert _loaded(found, NEVER) == []
    # the plan's own schema is pydantic; the config's models are not built without a config
    assert _loaded(found, ("controller.settings",)) == [
        "controller.settings"
    ]  # the package alone: the lookup
    assert "controller.settings.models" not in found["modules"]
    assert "controller.settings.loading" not in found["modules"]
    # data flows are checked against a catalog: without one they are not imported
    assert "controller.plan.flows" not in found["modules"]
    # no distribution's METADATA read (the version string is a constant), and no entry
    # points either: pydantic's plugin lookup is refused (controller/__init__.py)
    assert [p for p in found["opened"] if p.endswith("METADATA")] == []
    assert found["opened"] == []
    assert "importlib.metadata" not in found["modules"]


def test_validate_of_the_usual_plan_imports_no_pydantic(tmp_path: Path) -> None:
    """A plan of tool calls with params and outputs is checked without the pydantic models
    (controller.plan.shape; tests/plan/test_shape.py holds it to the schema's answers)."""
    plan = _plan(tmp_path)
    plan.write_text(re.sub(r"    verify:\n.*\n", "", plan.read_text()))  # no verify:
    result, found = _probe("validate", str(plan), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "valid (sha256:" in result.stdout
    assert _loaded(found, ("pydantic", "pydantic_core", "controller.plan.schema")) == []
    assert _loaded(found, NEVER) == []


def test_validate_of_an_invalid_plan_still_reports_through_the_schema(tmp_path: Path) -> None:
    plan = _plan(tmp_path, actions=2)
    plan.write_text(plan.read_text().replace('why: "step 2"', 'why: ""'))
    result, found = _probe("validate", str(plan), cwd=tmp_path)
    assert result.returncode == 1
    assert "E_SCHEMA_INVALID" in result.stdout + result.stderr
    assert "controller.plan.schema" in found["modules"]


def test_validate_with_a_config_reads_it(tmp_path: Path) -> None:
    plan = _plan(tmp_path)
    config = tmp_path / "plangate.yml"
    config.write_text("tools:\n  echo: {kind: echo}\n")
    result, found = _probe("validate", str(plan), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "controller.settings.models" in found["modules"]  # ./plangate.yml was found and read
    assert _loaded(found, NEVER) == []


def test_a_query_outside_the_plain_form_still_goes_to_the_library(tmp_path: Path) -> None:
    plan = _plan(tmp_path, actions=1)
    plan.write_text(plan.read_text().replace("$['value']", "$.items[?@.id > 1]"))
    result, found = _probe("validate", str(plan), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "jsonpath_rfc9535" in found["modules"]


@pytest.mark.parametrize("content", ["tools: [1, 2]\n", "tols: {}\n", "approval: {quorum: x}\n"])
def test_a_bad_config_is_still_refused_with_its_code(tmp_path: Path, content: str) -> None:
    plan = _plan(tmp_path, actions=1)
    (tmp_path / "plangate.yml").write_text(content)
    result = run_cli("validate", str(plan), cwd=tmp_path)
    assert result.returncode == 2
    assert "plangate: E_CONFIG_INVALID: " in result.stderr and "Traceback" not in result.stderr
    assert f"{tmp_path / 'plangate.yml'}:1: " in result.stderr and "remedy: " in result.stderr


def _controller(tmp_path: Path) -> Path:
    """A plans repository with one committed plan and a controller config for it."""
    repo = tmp_path / "repo"
    repo.mkdir()
    _plan(repo, actions=1)
    commit_all(repo, "add a plan")
    config = tmp_path / "plangate.yml"
    config.write_text(
        f"repo: {repo}\nstate_dir: {tmp_path / 'state'}\n"
        "identity: {name: plangate, email: plangate@localhost}\n"
        "tools:\n  echo: {kind: echo}\n"
    )
    return config


def test_status_imports_no_logging_nor_http(tmp_path: Path) -> None:
    """``status`` logs nothing and posts nothing: structlog (with asyncio and rich) and
    urllib's HTTP client are not imported on its way (the controller's logger and the
    notifier import theirs when first used)."""
    config = _controller(tmp_path)
    result, found = _probe("status", "--json", "--config", str(config), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert [row["plan"] for row in json.loads(result.stdout)] == ["plans/ten"]
    assert "controller.service.reconcile" in found["modules"]  # the controller's own code
    assert _loaded(found, ("structlog", "asyncio", "rich", "urllib.request", "http")) == []


def test_run_once_imports_no_rich_nor_http(tmp_path: Path) -> None:
    """``run --once`` logs through structlog, which would import rich (a development
    dependency) for tracebacks plangate renders itself; and a pass without notify URLs
    posts nothing."""
    config = _controller(tmp_path)
    result, found = _probe("run", "--once", "--config", str(config), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "structlog" in found["modules"]  # it logs
    assert _loaded(found, ("rich", "urllib.request", "http.client")) == []


def test_rich_still_imports_after_the_logs_module(tmp_path: Path) -> None:
    """Hiding rich from structlog's import leaves it importable for whoever wants it."""
    code = (
        "import sys, controller.logs, structlog.dev, rich; "
        "print(structlog.dev.rich is None, sys.modules['rich'] is not None)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.split() == ["True", "True"]


# Run plangate's entry point with the command's function wrapped: was the cyclic garbage
# collector on when the command ran, and after?
_GC_PROBE = """
import gc, importlib, sys
from controller import cli
module, name = cli.HANDLERS[sys.argv[1]][0].split(":")
mod = importlib.import_module(module)
command = getattr(mod, name)
def wrapped(**kwargs):
    print("GC-DURING", gc.isenabled(), file=sys.stderr)
    return command(**kwargs)
setattr(mod, name, wrapped)
sys.argv = ["plangate", *sys.argv[1:]]
try:
    cli.entry()
finally:
    print("GC-AFTER", gc.isenabled(), file=sys.stderr)
"""


def _gc_states(*args: str, cwd: Path) -> list[str]:
    result = subprocess.run(
        [sys.executable, "-c", _GC_PROBE, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    return [x for x in result.stderr.splitlines() if x.startswith("GC-")]


def test_the_collector_is_off_while_a_brief_command_starts_and_runs(tmp_path: Path) -> None:
    plan = _plan(tmp_path, actions=1)
    assert _gc_states("validate", str(plan), cwd=tmp_path) == ["GC-DURING False", "GC-AFTER False"]
    assert _gc_states("hash", str(plan), cwd=tmp_path) == ["GC-DURING False", "GC-AFTER False"]


def test_the_collector_is_back_on_for_other_commands(tmp_path: Path) -> None:
    plan = _plan(tmp_path, actions=1)
    from controller.cli import BRIEF_PLANS

    many = [str(plan)] * (BRIEF_PLANS + 1)  # more than a brief validate: cycles add up
    assert _gc_states("validate", *many, cwd=tmp_path) == ["GC-DURING True", "GC-AFTER True"]
    assert _gc_states("schema", cwd=tmp_path) == ["GC-DURING True", "GC-AFTER True"]


def _subparser(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
    [sub] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    found: argparse.ArgumentParser = sub.choices[name]
    return found


@pytest.mark.parametrize("name", sorted(cli.HANDLERS))
def test_a_subcommand_parses_alike_when_built_alone(name: str) -> None:
    whole, alone = cli._build_parser(), cli._build_parser(name)
    assert _subparser(alone, name).format_help() == _subparser(whole, name).format_help()
    assert [a.dest for a in _subparser(alone, name)._actions] == [
        a.dest for a in _subparser(whole, name)._actions
    ]
    [sub] = [a for a in alone._actions if isinstance(a, argparse._SubParsersAction)]
    assert list(sub.choices) == [name]  # the siblings were really skipped


def test_a_ctrl_c_before_mains_own_handler_is_a_quiet_exit_130(tmp_path: Path) -> None:
    """A Ctrl-C landing after ``entry`` marked the command started but before ``main``'s
    ``try`` (the CI check of 2026-12-07: round 110's ``int:startup`` caught one in
    ``wants_json``) is exit 130 with nothing on stderr, never a traceback. The interrupt is
    raised where the signal handler would raise it: ``main``'s first call."""
    probe = (
        "import sys\n"
        "from controller import cli\n"
        "def interrupted(argv):\n"
        "    raise KeyboardInterrupt\n"
        "cli.wants_json = interrupted\n"
        "sys.argv = ['plangate', 'validate', 'x']\n"
        "sys.exit(cli.entry())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert done.returncode == 130, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr
