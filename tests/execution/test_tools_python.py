"""The python tool kind: module:function in a child process, kwargs, errors, real timeouts."""

from __future__ import annotations

import os
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from controller.errors import PlangateError
from controller.execution.tools import CallContext, Catalog, ToolError
from controller.settings import config_from_data

MODULE = """
import os, time

def add(a, b):
    return {"sum": a + b}

def keyed(x, idempotency_key):
    return {"x": x, "key": idempotency_key, "env": os.environ.get("PLANGATE_IDEMPOTENCY_KEY")}

def noisy():
    print("chatter on stdout must not break the result")
    return [1, 2]

def explode(msg):
    raise RuntimeError(msg)

class Permanent(Exception):
    permanent = True

def refuse():
    raise Permanent("no such customer")

def not_json():
    return {1, 2}

def int_key():
    return {"ok": [{1: "a", "1": "b"}]}

def huge():
    return 10 ** 5000

def slow(path):
    open(path, "w").write(str(os.getpid()))
    time.sleep(60)
    return "never"

def stubborn(path):
    import signal
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    return slow(path)
"""


@pytest.fixture
def catalog(tmp_path: Path) -> Catalog:
    folder = tmp_path / "lib"
    folder.mkdir()
    (folder / "mytools.py").write_text(textwrap.dedent(MODULE))
    names = ["add", "keyed", "noisy", "explode", "refuse", "not_json", "slow", "stubborn",
             "int_key", "huge"]  # fmt: skip
    tools: dict[str, Any] = {n: {"kind": "python", "target": f"mytools:{n}"} for n in names}
    tools["missing"] = {"kind": "python", "target": "nosuchmodule:f"}
    config = config_from_data({"tools": tools, "python_path": [str(folder)]}, tmp_path / "p.yml")
    return Catalog(config)


def ctx(timeout: float = 30) -> CallContext:
    return CallContext(
        idempotency_key="step:00000000000000aa", timeout=timeout, env=dict(os.environ)
    )


def test_called_with_params_as_kwargs(catalog: Catalog) -> None:
    assert catalog.get("add").call({"a": 2, "b": 3}, ctx()) == {"sum": 5}


def test_idempotency_key_passed_when_accepted(catalog: Catalog) -> None:
    result = catalog.get("keyed").call({"x": 1}, ctx())
    assert result == {"x": 1, "key": "step:00000000000000aa", "env": "step:00000000000000aa"}


def test_prints_do_not_corrupt_the_result(catalog: Catalog) -> None:
    assert catalog.get("noisy").call({}, ctx()) == [1, 2]


def test_exception_is_a_temporary_failure_with_its_message(catalog: Catalog) -> None:
    with pytest.raises(ToolError) as info:
        catalog.get("explode").call({"msg": "disk full"}, ctx())
    assert info.value.code == "E_TOOL_FAILED" and not info.value.permanent
    assert "RuntimeError: disk full" in info.value.message


def test_permanent_exception_is_permanent(catalog: Catalog) -> None:
    with pytest.raises(ToolError) as info:
        catalog.get("refuse").call({}, ctx())
    assert info.value.permanent and "no such customer" in info.value.message


def test_wrong_params_and_import_errors_are_permanent(catalog: Catalog) -> None:
    with pytest.raises(ToolError) as info:
        catalog.get("add").call({"a": 1, "c": 2}, ctx())
    assert info.value.permanent and "params do not fit" in info.value.message
    with pytest.raises(ToolError) as info:
        catalog.get("missing").call({}, ctx())
    assert info.value.permanent and "nosuchmodule" in info.value.message


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("not_json", "not JSON serializable"),
        # round 24: json.dumps wrote 1 as "1" and dropped the member it collided with
        ("int_key", "the key 1 (int) is not a string"),
        ("huge", "4300 digits"),  # 5,000 digits: past the int-to-text limit of json.dumps
    ],
)
def test_result_must_be_json(catalog: Catalog, name: str, why: str) -> None:
    with pytest.raises(PlangateError) as info:
        catalog.get(name).call({}, ctx())
    assert info.value.code == "E_TOOL_OUTPUT_INVALID", info.value
    assert why in info.value.message


@pytest.mark.parametrize("name", ["slow", "stubborn"])
def test_timeout_really_stops_the_function(catalog: Catalog, tmp_path: Path, name: str) -> None:
    marker = tmp_path / f"{name}.pid"
    with pytest.raises(PlangateError) as info:
        catalog.get(name).call({"path": str(marker)}, ctx(timeout=1.5))
    assert info.value.code == "E_TIMEOUT"
    pid = int(marker.read_text())
    deadline = time.monotonic() + 10
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not Path(f"/proc/{pid}").exists()


def test_unknown_tool_is_refused(catalog: Catalog) -> None:
    with pytest.raises(PlangateError) as info:
        catalog.get("rm_rf")
    assert info.value.code == "E_TOOL_UNKNOWN"
