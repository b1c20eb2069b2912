"""A journal the disk cannot take (round 56, issue 11).

A per-file size limit (``RLIMIT_FSIZE``: Python ignores SIGXFSZ, so a write past it fails
``EFBIG``) stands for a full disk in a child engine process. What a user relies on: the run
ends with what is known (the action whose record could not be written whole is in doubt,
E_ACTION_IN_DOUBT, when its tool ran; failed without a call, E_STORAGE, when it never ran),
the journal stays line-aligned, and a journal entry that is not a regular file (a FIFO, a
folder) is refused at once, never blocked on.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from controller.errors import StorageFailed
from controller.execution.journal import Journal, journal_path
from controller.plan import plans
from controller.settings import config_from_data
from tests.support.executor_kit import PY, execution, make_plan
from tests.support.gitenv import ROOT

LIMIT = 40_000
DRIVER = """
import json, sys
from pathlib import Path
from controller.settings import config_from_data
from controller.execution.executor import Engine
root = Path(sys.argv[1])
config = config_from_data(json.loads((root / "config.json").read_text()), root / "plangate.yml")
out = Engine(config).run(root / "plans/demo/PLAN.yml", plan_id="plans/demo",
                         approval={"by": "alice@example.com"}, resume=sys.argv[2] == "resume")
print(json.dumps({"status": out.status, "action": out.action,
                  "code": out.error.code if out.error else None,
                  "execution": out.execution, "log": out.log is not None}))
"""


def _limited_run(root: Path, mode: str = "run") -> dict[str, Any]:
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, LIMIT))

    proc = subprocess.run(
        [sys.executable, "-c", DRIVER, str(root), mode],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=limit,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


def _printer(calls: Path) -> dict[str, Any]:
    """An exec tool that notes its call and prints ``n`` hex characters."""
    code = (
        "import sys,json,os; d=json.load(sys.stdin); "
        f"open({str(calls)!r},'a').write(d['tag']+'\\n'); "
        "print(json.dumps({'blob': os.urandom(d['n'] // 2).hex()}))"
    )
    return {"kind": "exec", "argv": [PY, "-c", code]}


def _plan(root: Path, n: int, refs: int = 0) -> Path:
    calls = root / "calls.txt"
    ref = "$<actions[1].outputs.b>"
    actions = [
        {
            "id": 1,
            "tool": "big",
            "params": {"tag": "one", "n": n},
            "outputs": [{"name": "b", "path": "$.json.blob"}],
        },
        {"id": 2, "tool": "big", "params": {"tag": "two", "n": 2, "x": [ref] * refs}},
    ]
    _config, plan_file = make_plan(root, actions, {"big": _printer(calls)})
    return plan_file


def _calls(root: Path) -> list[str]:
    path = root / "calls.txt"
    return path.read_text().split() if path.exists() else []


def _lines(root: Path, plan_file: Path) -> list[dict[str, Any]]:
    config = config_from_data(json.loads((root / "config.json").read_text()), root / "x.yml")
    frozen = plans.load_plan(plan_file, config).frozen_hash
    assert frozen
    text = journal_path(config.state_path(), "plans/demo", frozen).read_text()
    assert text.endswith("\n")  # line-aligned: the torn record was cut back
    return [json.loads(line) for line in text.splitlines()]


def test_an_end_record_cut_short_leaves_the_action_in_doubt(tmp_path: Path) -> None:
    plan_file = _plan(tmp_path, 30_000)  # its end record (stdout, json, output) > 40 KB
    out = _limited_run(tmp_path)
    assert _calls(tmp_path) == ["one"]
    assert out["status"] == "failed" and out["code"] == "E_ACTION_IN_DOUBT"
    assert out["log"], "the outcome carries the log the controller commits"
    first = out["execution"]["actions"][0]
    assert first["status"] == "in_doubt" and first["error"]["code"] == "E_ACTION_IN_DOUBT"
    ends = [r for r in _lines(tmp_path, plan_file) if r["t"] == "end"]
    assert [(r["id"], r["status"]) for r in ends] == [(1, "in_doubt")]
    # without a resume nothing runs again
    assert _limited_run(tmp_path)["status"] == "failed" and _calls(tmp_path) == ["one"]


def test_a_start_record_that_does_not_fit_never_calls_its_tool(tmp_path: Path) -> None:
    plan_file = _plan(tmp_path, 6_000, refs=4)  # action 2's params: 24 KB on top of 1's
    out = _limited_run(tmp_path)
    assert _calls(tmp_path) == ["one"]
    assert out["status"] == "failed" and out["code"] == "E_STORAGE"
    states = [(a["id"], a["status"]) for a in out["execution"]["actions"]]
    assert states == [(1, "succeeded"), (2, "failed")]
    second = [r for r in _lines(tmp_path, plan_file) if r["t"] == "end" and r["id"] == 2]
    assert second and second[-1].get("no_call") is True
    assert execution(plan_file)["actions"][1]["status"] == "failed"


@pytest.mark.parametrize("kind", ["fifo", "folder"])
def test_a_journal_entry_that_is_no_file_is_refused_at_once(tmp_path: Path, kind: str) -> None:
    path = journal_path(tmp_path, "plans/x", "sha256:" + "0" * 64)
    path.parent.mkdir(parents=True)
    if kind == "fifo":
        os.mkfifo(path)  # opening it to read would block for good
    else:
        path.mkdir()
    with pytest.raises(StorageFailed) as caught, Journal(path):
        pass
    assert caught.value.code == "E_STORAGE" and str(path) in str(caught.value)
    assert caught.value.remedy
