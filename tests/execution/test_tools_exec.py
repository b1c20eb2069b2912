"""The exec tool kind: no shell, one argv element per placeholder, capped output, timeouts."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from controller.errors import PlangateError
from controller.execution.tools import CallContext, ToolError
from controller.execution.tools.exec import ExecTool
from controller.settings import ToolSpec

PY = sys.executable
ARGV_DUMP = "import sys,json; print(json.dumps(sys.argv[1:]))"


def ctx(timeout: float = 30, limit: int = 65_536, env: dict[str, str] | None = None) -> CallContext:
    return CallContext(
        idempotency_key="step:0123456789abcdef",
        timeout=timeout,
        max_result_bytes=limit,
        env=env if env is not None else dict(os.environ),
    )


def tool(argv: list[str], **extra: Any) -> ExecTool:
    return ExecTool("t", ToolSpec(kind="exec", argv=argv, **extra))


@pytest.mark.parametrize(
    "hostile",
    ["; rm -rf /tmp/x", "$(id)", "`id`", "a b\tc\nd", "'\"", "--help", "${HOME}", "*"],
)
def test_placeholder_value_is_one_inert_argv_element(tmp_path: Path, hostile: str) -> None:
    result = tool([PY, "-c", ARGV_DUMP, "{v}", "x={v}"]).call({"v": hostile}, ctx())
    assert result["exit_code"] == 0
    assert result["json"] == [hostile, f"x={hostile}"]


def test_non_string_params_fill_as_compact_json() -> None:
    result = tool([PY, "-c", ARGV_DUMP, "{n}", "{o}"]).call({"n": 3, "o": {"a": [1]}}, ctx())
    assert result["json"] == ["3", '{"a":[1]}']


def test_missing_placeholder_param_is_params_invalid() -> None:
    with pytest.raises(PlangateError) as info:
        tool([PY, "-c", "pass", "{absent}"]).call({}, ctx())
    assert info.value.code == "E_PARAMS_INVALID" and info.value.permanent


@pytest.mark.parametrize("element", ["{v}", "x={v}", "--{v}--"])
def test_a_nul_in_an_argv_value_is_params_invalid_not_an_internal_error(element: str) -> None:
    # once: subprocess raised ValueError('embedded null byte'), shown as an internal error
    with pytest.raises(PlangateError) as info:
        tool([PY, "-c", "pass", element]).call({"v": "a\0b"}, ctx())
    assert info.value.code == "E_PARAMS_INVALID" and info.value.permanent
    assert "NUL" in info.value.message and "argv element 3" in info.value.message


def test_a_nul_inside_a_json_param_stays_escaped_in_argv() -> None:
    result = tool([PY, "-c", ARGV_DUMP, "{o}"]).call({"o": ["a\0b"]}, ctx())
    assert result["json"] == ['["a\\u0000b"]']


def test_params_on_stdin_and_idempotency_key_in_env() -> None:
    code = (
        "import sys,json,os; d=json.load(sys.stdin); "
        "d['key']=os.environ['PLANGATE_IDEMPOTENCY_KEY']; print(json.dumps(d))"
    )
    result = tool([PY, "-c", code]).call({"a": [1, "two"], "b": None}, ctx())
    assert result["json"] == {"a": [1, "two"], "b": None, "key": "step:0123456789abcdef"}
    assert set(result) == {"exit_code", "stdout", "stderr", "json"}


def test_catalog_env_is_added() -> None:
    code = "import os; print(os.environ['EXTRA'])"
    result = tool([PY, "-c", code], env={"EXTRA": "yes"}).call({}, ctx())
    assert result["stdout"] == "yes\n" and result["json"] is None


def test_nonzero_exit_is_a_temporary_failure_with_the_result() -> None:
    code = "import sys; print('partial'); sys.stderr.write('it broke\\n'); sys.exit(4)"
    with pytest.raises(ToolError) as info:
        tool([PY, "-c", code]).call({}, ctx())
    assert info.value.code == "E_TOOL_FAILED" and not info.value.permanent
    assert "status 4" in info.value.message and "it broke" in info.value.message
    assert info.value.result["exit_code"] == 4 and info.value.result["stdout"] == "partial\n"


def test_missing_program_is_a_permanent_failure() -> None:
    with pytest.raises(ToolError) as info:
        tool(["/nonexistent/program"]).call({}, ctx())
    assert info.value.permanent and "cannot start" in info.value.message


def test_output_is_cut_at_the_limit_and_noted() -> None:
    code = "import sys; sys.stdout.write('x' * 100000)"
    result = tool([PY, "-c", code]).call({}, ctx(limit=1000))
    assert result["stdout"].startswith("x" * 1000)
    assert "99000 more bytes dropped" in result["stdout"]
    assert result["json"] is None


def test_big_stdin_and_big_output_do_not_deadlock() -> None:
    code = "import sys; data=sys.stdin.read(); sys.stdout.write(data)"
    blob = "y" * 300_000
    result = tool([PY, "-c", code]).call({"blob": blob}, ctx(limit=1_000_000))
    assert result["json"] == {"blob": blob}


def test_timeout_kills_the_whole_group_even_if_sigterm_is_ignored(tmp_path: Path) -> None:
    marker = tmp_path / "grandchild.pid"
    # The tool starts a grandchild that ignores SIGTERM; both must die.
    code = (
        "import signal,subprocess,sys,time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
        "p=subprocess.Popen([sys.executable,'-c','import signal,time; "
        "signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)']); "
        f"open({str(marker)!r},'w').write(str(p.pid)); time.sleep(60)"
    )
    with pytest.raises(PlangateError) as info:
        tool([PY, "-c", code]).call({}, ctx(timeout=1.5))
    assert info.value.code == "E_TIMEOUT"
    pid = int(marker.read_text())
    deadline = time.monotonic() + 10
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers kill(0); it is dead for our purpose.
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_no_shell_is_involved(tmp_path: Path) -> None:
    target = tmp_path / "pwned"
    hostile = f"x; touch {target}"
    result = tool(["echo", "{v}"]).call({"v": hostile}, ctx())
    assert result["stdout"] == hostile + "\n"
    assert not target.exists()
    assert json.loads(json.dumps(result))  # the result is plain JSON data
