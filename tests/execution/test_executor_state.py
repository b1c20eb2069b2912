"""What the engine writes and when: checkpoints, concurrency between plans, timeouts."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from controller.errors import PlangateError
from controller.execution.executor import Engine
from tests.support.executor_kit import PY, execution, make_plan, run
from tests.support.gitenv import ROOT

# Prints the inode of PLAN.yml and the statuses in its execution block, as this tool sees them.
PEEK = (
    "import os,sys,json,time; p=sys.argv[1]; time.sleep(float(sys.argv[2])); "
    "from controller.plan import yamlio; d=yamlio.read_yaml(open(p).read()).data; "
    "print(json.dumps({'ino': os.stat(p).st_ino, "
    "'seen': [a['status'] for a in d['execution']['actions']]}))"
)


def peek_plan(
    tmp_path: Path, interval: float, count: int = 4, pause: float = 0.0
) -> tuple[Path, list[dict]]:
    plan_file = tmp_path / "plans" / "demo" / "PLAN.yml"
    tools = {
        "peek": {
            "kind": "exec",
            "argv": [PY, "-c", PEEK, str(plan_file), str(pause)],
            "env": {"PYTHONPATH": str(ROOT)},
        }
    }
    actions = [
        {"id": i, "tool": "peek", "outputs": [{"name": "v", "path": "$.json"}]}
        for i in range(1, count + 1)
    ]
    config, plan_file = make_plan(
        tmp_path, actions, tools, extra_config={"execution": {"checkpoint_interval": interval}}
    )
    assert run(Engine(config), plan_file).status == "completed"
    return plan_file, [a["outputs"]["v"] for a in execution(plan_file)["actions"]]


def test_state_is_not_rewritten_per_action(tmp_path: Path) -> None:
    _, seen = peek_plan(tmp_path, interval=3600)
    assert len({s["ino"] for s in seen}) == 1  # written at the start, then only at the end
    assert all(s["seen"] == ["pending"] * 4 for s in seen)


def test_checkpoints_bring_state_up_to_date_while_running(tmp_path: Path) -> None:
    # Checkpoints are spaced by at least 10x their own cost, so the tools take a while here.
    _, seen = peek_plan(tmp_path, interval=0.001, pause=0.3)
    assert len({s["ino"] for s in seen}) >= 2
    assert seen[0]["seen"] == ["pending"] * 4
    assert seen[-1]["seen"][0] == "succeeded" and seen[-1]["seen"][-1] == "pending"


def test_action_timeout_overrides_the_catalog(tmp_path: Path) -> None:
    tools = {
        "sleep": {"kind": "exec", "argv": [PY, "-c", "import time; time.sleep(30)"], "timeout": 600}
    }
    config, plan_file = make_plan(tmp_path, [{"id": 1, "tool": "sleep", "timeout": 0.5}], tools)
    outcome = run(Engine(config), plan_file)
    assert outcome.error is not None and outcome.error.code == "E_TIMEOUT"
    assert execution(plan_file)["actions"][0]["error"]["code"] == "E_TIMEOUT"


def test_plans_run_concurrently_on_one_engine(tmp_path: Path) -> None:
    tools = {"say": {"kind": "echo"}}
    actions = [
        {"id": i, "tool": "say", "params": {"i": i}, "outputs": [{"name": "i", "path": "$.i"}]}
        for i in range(1, 31)
    ]
    config, first = make_plan(tmp_path, actions, tools, slug="one")
    _, second = make_plan(tmp_path, actions, tools, slug="two")
    engine = Engine(config)
    results: dict[str, str] = {}

    def go(slug: str, plan_file: Path) -> None:
        results[slug] = run(engine, plan_file, slug=slug).status

    threads = [threading.Thread(target=go, args=a) for a in (("one", first), ("two", second))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert results == {"one": "completed", "two": "completed"}
    for plan_file in (first, second):
        assert [a["outputs"]["i"] for a in execution(plan_file)["actions"]] == list(range(1, 31))


def test_one_plan_cannot_run_twice_at_once(tmp_path: Path) -> None:
    gate = tmp_path / "gate"
    code = f"import os,time\nwhile not os.path.exists({str(gate)!r}): time.sleep(0.02)"
    config, plan_file = make_plan(
        tmp_path, [{"id": 1, "tool": "wait"}], {"wait": {"kind": "exec", "argv": [PY, "-c", code]}}
    )
    engine = Engine(config)
    outcome: list[str] = []
    thread = threading.Thread(target=lambda: outcome.append(run(engine, plan_file).status))
    thread.start()
    journals = tmp_path / "state" / "journal"
    try:
        deadline = time.monotonic() + 30
        while not list(journals.rglob("*.jsonl")) or "start" not in _text(journals):
            assert thread.is_alive() and time.monotonic() < deadline
            thread.join(0.02)
        with pytest.raises(PlangateError) as info:
            run(engine, plan_file)
        assert info.value.code == "E_LOCKED"
    finally:
        gate.write_text("")
        thread.join(60)
    assert outcome == ["completed"]


def _text(folder: Path) -> str:
    return "".join(p.read_text() for p in folder.rglob("*.jsonl"))


def test_a_pending_actions_section_is_rendered_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from controller.execution import logbook

    rendered: list[tuple[object, str]] = []
    real = logbook.render_action

    def counting(action: object, view: logbook.ActionView, *args: object, **kw: object) -> str:
        rendered.append((getattr(action, "id", None), view.status))
        return real(action, view, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(logbook, "render_action", counting)
    # Checkpoints are spaced by 10x their own cost, which grows on a loaded machine: slower
    # tools until several checkpoints fell while actions were pending (else the test is void).
    for pause in (0.3, 1.0, 3.0):
        rendered.clear()
        (base := tmp_path / f"p{pause}").mkdir()
        plan_file, seen = peek_plan(base, interval=0.001, pause=pause)
        if len({s["ino"] for s in seen}) >= 3:
            break
    assert len({s["ino"] for s in seen}) >= 3  # several checkpoints while actions were pending
    pending = [a for a, status in rendered if status == "pending"]
    assert sorted(pending) == [1, 2, 3, 4]  # each once, however many checkpoints showed it
    log = plan_file.with_name("EXECUTION_LOG.md").read_text()
    assert log.count("**Status:** ✅ succeeded") == 4  # none shown stale at the end
