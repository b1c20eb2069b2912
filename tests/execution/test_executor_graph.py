"""Plans as graphs (``needs:``, SPEC §12): every action runs once, never before what it needs,
at most ``max_parallel_actions`` at once, whatever the timing; gates, aborts and crashes work
with actions in flight in parallel."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from controller.execution.executor import Engine
from tests.execution.test_crash_resume import run_engine
from tests.support.executor_kit import execution, journal_records, make_plan, run, statuses

SH = shutil.which("sh") or "/bin/sh"


def sleeper(log: Path | None = None) -> dict[str, Any]:
    """An exec tool that sleeps ``{delay}`` seconds, then appends ``{line}`` to ``log``."""
    script = 'sleep "$1"; printf "%s\\n" "$2" >> "$3"; echo "{\\"line\\": \\"$2\\"}"'
    target = str(log) if log else "/dev/null"
    return {"kind": "exec", "argv": [SH, "-c", script, "sh", "{delay}", "{line}", target]}


def check_order(records: list[dict[str, Any]], needs: dict[int, list[int]], limit: int) -> None:
    """Each action started once and ended once, after the ends of all it needs; never more
    than ``limit`` running at once."""
    started: dict[int, int] = {}
    ended: dict[int, int] = {}
    running = peak = 0
    for index, record in enumerate(records):
        if record["t"] == "start":
            assert record["id"] not in started, f"action {record['id']} started twice"
            started[record["id"]] = index
            running += 1
            peak = max(peak, running)
        elif record["t"] == "end":
            assert record["id"] not in ended and record["status"] == "succeeded"
            ended[record["id"]] = index
            running -= 1
    assert set(started) == set(ended) == set(needs)
    for action, needed in needs.items():
        for n in needed:
            assert ended[n] < started[action], f"{action} started before {n} ended"
    assert peak <= limit


@st.composite
def graphs(draw: st.DrawFn) -> tuple[dict[int, list[int]], dict[int, str]]:
    """A random DAG over ids 1..n (edges in any id direction) and a sleep per action."""
    n = draw(st.integers(1, 8))
    order = draw(st.permutations(list(range(1, n + 1))))
    needs: dict[int, list[int]] = {}
    for k, action in enumerate(order):
        earlier = order[:k]
        needs[action] = (
            sorted(draw(st.sets(st.sampled_from(earlier), max_size=3))) if earlier else []
        )
    delays = {i: draw(st.sampled_from(["0", "0.005", "0.02"])) for i in needs}
    return needs, delays


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(case=graphs(), limit=st.integers(1, 4))
def test_any_graph_runs_every_action_once_in_needs_order(
    tmp_path_factory: Any, case: tuple[dict[int, list[int]], dict[int, str]], limit: int
) -> None:
    needs, delays = case
    root = tmp_path_factory.mktemp("g")
    actions = [
        {"id": i, "tool": "work", "needs": needs[i], "params": {"delay": delays[i], "line": str(i)}}
        for i in sorted(needs)
    ]
    config, plan_file = make_plan(
        root,
        actions,
        {"work": sleeper()},
        extra_config={"execution": {"max_parallel_actions": limit}},
    )
    assert run(Engine(config), plan_file).status == "completed"
    check_order(journal_records(config, plan_file), needs, limit)


def test_independent_actions_overlap(tmp_path: Path) -> None:
    log = tmp_path / "log"
    actions = [
        {"id": 1, "tool": "work", "needs": [], "params": {"delay": "0.3", "line": "slow"}},
        {"id": 2, "tool": "work", "needs": [], "params": {"delay": "0", "line": "fast"}},
        {"id": 3, "tool": "work", "needs": [1, 2], "params": {"delay": "0", "line": "last"}},
    ]
    config, plan_file = make_plan(tmp_path, actions, {"work": sleeper(log)})
    assert run(Engine(config), plan_file).status == "completed"
    # Action 2 did not wait for the slow action 1.
    assert log.read_text() == "fast\nslow\nlast\n"
    assert "a1 --> a3" in plan_file.with_name("EXECUTION_LOG.md").read_text()


def test_a_failure_lets_running_actions_end_and_starts_no_more(tmp_path: Path) -> None:
    log = tmp_path / "log"
    actions = [
        {"id": 1, "tool": "work", "needs": [], "params": {"delay": "0.3", "line": "slow"}},
        {"id": 2, "tool": "broken", "needs": []},
        {"id": 3, "tool": "work", "needs": [], "params": {"delay": "0", "line": "never"}},
    ]
    broken = {"kind": "exec", "argv": [SH, "-c", "exit 3"]}
    config, plan_file = make_plan(
        tmp_path, actions, {"work": sleeper(log), "broken": broken},
        extra_config={"execution": {"max_parallel_actions": 2}},
    )  # fmt: skip
    outcome = run(Engine(config), plan_file)
    assert (outcome.status, outcome.action) == ("failed", 2)
    assert log.read_text() == "slow\n"
    assert statuses(plan_file) == ["succeeded", "failed", "pending"]


def test_skipped_action_lets_its_dependents_run(tmp_path: Path) -> None:
    broken = {"kind": "exec", "argv": [SH, "-c", "exit 3"]}
    actions = [
        {"id": 1, "tool": "broken", "needs": [], "on_failure": "skip"},
        {"id": 2, "tool": "echo", "needs": [1]},
    ]
    config, plan_file = make_plan(tmp_path, actions, {"broken": broken, "echo": {"kind": "echo"}})
    assert run(Engine(config), plan_file).status == "completed"
    assert statuses(plan_file) == ["skipped", "succeeded"]


def test_gate_in_a_graph_pauses_only_its_branch_start(tmp_path: Path) -> None:
    actions = [
        {"id": 1, "tool": "echo", "needs": []},
        {"id": 2, "tool": "echo", "needs": [1], "requires_approval": True},
        {"id": 3, "tool": "echo", "needs": [1]},
    ]
    config, plan_file = make_plan(tmp_path, actions, {"echo": {"kind": "echo"}})
    engine = Engine(config)
    first = run(engine, plan_file)
    assert (first.status, first.action) == ("awaiting_approval", 2)
    assert run(engine, plan_file, gate_approved=2).status == "completed"
    assert statuses(plan_file) == ["succeeded"] * 3
    assert execution(plan_file)["status"] == "completed"


def test_sigkill_with_actions_in_flight_repeats_no_side_effect(tmp_path: Path) -> None:
    """Three chains run in parallel; the engine is killed while action 4 starts. Nothing that
    ended runs again; what was in flight is in doubt, never repeated."""
    log = tmp_path / "log"
    actions = [
        {"id": 1, "tool": "work", "needs": [], "params": {"delay": "0", "line": "1"}},
        {"id": 2, "tool": "work", "needs": [], "params": {"delay": "0.3", "line": "2"}},
        {"id": 3, "tool": "work", "needs": [], "params": {"delay": "0.3", "line": "3"}},
        {"id": 4, "tool": "work", "needs": [1], "params": {"delay": "0", "line": "4"}},
        {"id": 5, "tool": "work", "needs": [2, 3, 4], "params": {"delay": "0", "line": "5"}},
    ]
    make_plan(tmp_path, actions, {"work": sleeper(log)})
    run_engine(tmp_path, crash_at="after-start:4")
    seen_before = log.read_text().splitlines() if log.exists() else []
    outcome = run_engine(tmp_path)
    assert (outcome["status"], outcome["code"]) == ("failed", "E_ACTION_IN_DOUBT")
    lines = log.read_text().splitlines()
    assert sorted(lines) == sorted(set(lines)), "a side effect ran twice"
    assert "4" not in lines[len(seen_before) :]
    assert "5" not in lines
    # A human resumes: the in-doubt actions run again (that is what resume means), then 5.
    assert run_engine(tmp_path, "resume")["status"] == "completed"
    assert log.read_text().splitlines()[-1] == "5"


def test_the_longest_remaining_chain_starts_first(tmp_path: Path) -> None:
    """Admission order: the action with the most actions waiting on it first, then the
    smaller id; so no slot idles at the end while one long chain runs alone."""
    needs = {1: [], 2: [], 3: [2], 4: [], 5: [4], 6: [5]}
    actions = [
        {"id": i, "tool": "work", "needs": n, "params": {"delay": "0", "line": str(i)}}
        for i, n in needs.items()
    ]
    config, plan_file = make_plan(
        tmp_path, actions, {"work": sleeper()},
        extra_config={"execution": {"max_parallel_actions": 1}},
    )  # fmt: skip
    assert run(Engine(config), plan_file).status == "completed"
    starts = [r["id"] for r in journal_records(config, plan_file) if r["t"] == "start"]
    assert starts == [4, 2, 5, 1, 3, 6]
