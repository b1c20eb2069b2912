"""Crash safety with real processes: the engine is SIGKILLed at chosen points, then resumed.

The invariant a user relies on: a non-idempotent tool (here one that appends a line to a file)
never takes effect twice unless a human approves a resume of an action in doubt.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from executor_kit import PY, appender, journal_records, make_plan, statuses

ROOT = Path(__file__).resolve().parent.parent
DRIVER = """
import json, sys
from pathlib import Path
from controller.settings import config_from_data
from controller.executor import Engine
root = Path(sys.argv[1])
config = config_from_data(json.loads((root / "config.json").read_text()), root / "plangate.yml")
out = Engine(config).run(root / "plans/demo/PLAN.yml", plan_id="plans/demo",
                         approval={"by": "alice@example.com"}, resume=sys.argv[2] == "resume")
print(json.dumps({"status": out.status, "action": out.action,
                  "code": out.error.code if out.error else None}))
"""


def engine_process(
    root: Path, mode: str = "run", crash_at: str | None = None
) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("PLANGATE_TEST_CRASH_AT", None)
    if crash_at:
        env["PLANGATE_TEST_CRASH_AT"] = crash_at
    return subprocess.Popen(
        [sys.executable, "-c", DRIVER, str(root), mode],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def run_engine(root: Path, mode: str = "run", crash_at: str | None = None) -> dict[str, Any]:
    proc = engine_process(root, mode, crash_at)
    out, err = proc.communicate(timeout=60)
    if crash_at:
        assert proc.returncode == -signal.SIGKILL, err
        return {}
    assert proc.returncode == 0, err
    return json.loads(out.strip().splitlines()[-1])


def three_appends(root: Path, tool: dict[str, Any] | None = None) -> tuple[Path, Path]:
    effects = root / "effects.txt"
    actions = [{"id": i, "tool": "add", "params": {"line": str(i)}} for i in (1, 2, 3)]
    _config, plan_file = make_plan(root, actions, {"add": tool or appender(effects)})
    return effects, plan_file


def test_killed_before_start_is_journaled_runs_the_action_once(tmp_path: Path) -> None:
    effects, _ = three_appends(tmp_path)
    run_engine(tmp_path, crash_at="before-start:2")
    assert effects.read_text() == "1\n"
    assert run_engine(tmp_path)["status"] == "completed"
    assert effects.read_text() == "1\n2\n3\n"


@pytest.mark.parametrize("point", ["after-start:2", "after-tool:2"])
def test_killed_mid_action_leaves_it_in_doubt_not_repeated(tmp_path: Path, point: str) -> None:
    effects, plan_file = three_appends(tmp_path)
    run_engine(tmp_path, crash_at=point)
    before = effects.read_text()
    outcome = run_engine(tmp_path)
    assert outcome == {"status": "failed", "action": 2, "code": "E_ACTION_IN_DOUBT"}
    assert effects.read_text() == before  # not appended again
    assert statuses(plan_file) == ["succeeded", "in_doubt", "pending"]
    # Still in doubt without a human's resume; nothing runs.
    assert run_engine(tmp_path)["status"] == "failed"
    assert effects.read_text() == before
    # A human checked and approved a resume: the action runs again, then the rest.
    assert run_engine(tmp_path, "resume")["status"] == "completed"
    assert effects.read_text() == before + "2\n3\n"


def test_killed_while_the_tool_runs(tmp_path: Path) -> None:
    effects = tmp_path / "effects.txt"
    pidfile = tmp_path / "tool.pid"
    slow = appender(
        effects,
        f"import os,time; open({str(pidfile)!r},'w').write(str(os.getpid())); "
        "time.sleep(0 if d['line']!='2' else 60); ",
    )
    three_appends(tmp_path, slow)
    proc = engine_process(tmp_path)
    deadline = time.monotonic() + 30
    while not (pidfile.exists() and effects.read_text() == "1\n2\n"):
        assert time.monotonic() < deadline, "the tool never reached action 2"
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=30)
    os.kill(int(pidfile.read_text()), signal.SIGKILL)  # the orphaned tool, as an operator would
    assert run_engine(tmp_path)["code"] == "E_ACTION_IN_DOUBT"
    assert effects.read_text() == "1\n2\n"


def test_killed_after_the_end_record_continues_with_the_next(tmp_path: Path) -> None:
    effects, _ = three_appends(tmp_path)
    run_engine(tmp_path, crash_at="after-end:2")
    assert effects.read_text() == "1\n2\n"
    assert run_engine(tmp_path)["status"] == "completed"
    assert effects.read_text() == "1\n2\n3\n"


def test_idempotent_tool_is_rerun_after_a_crash(tmp_path: Path) -> None:
    store = tmp_path / "store.json"
    code = (
        "import sys,json,os; d=json.load(sys.stdin); p=" + repr(str(store)) + "; "
        "s=json.load(open(p)) if os.path.exists(p) else {}; "
        "s[os.environ['PLANGATE_IDEMPOTENCY_KEY']]=d['line']; json.dump(s,open(p,'w')); print('{}')"
    )
    _effects, plan_file = three_appends(
        tmp_path, {"kind": "exec", "argv": [PY, "-c", code], "idempotent": True}
    )
    run_engine(tmp_path, crash_at="after-tool:2")
    assert run_engine(tmp_path)["status"] == "completed"
    assert sorted(json.loads(store.read_text()).values()) == ["1", "2", "3"]
    config_data = json.loads((tmp_path / "config.json").read_text())
    from controller.settings import config_from_data

    config = config_from_data(config_data, tmp_path / "plangate.yml")
    starts = [r["id"] for r in journal_records(config, plan_file) if r["t"] == "start"]
    assert starts == [1, 2, 2, 3]
