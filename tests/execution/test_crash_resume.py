"""Crash safety with real processes: the engine is SIGKILLed at chosen points, then resumed.

The invariant a user relies on: a non-idempotent tool (here one that appends a line to a file)
never takes effect twice unless a human approves a resume of an action in doubt. And a tool
process the dead engine left running is stopped on recovery before anything is decided (only
that very process: a pid reused by another process is left alone).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from controller.execution.executor import Engine
from controller.execution.journal import journal_path, replay
from controller.execution.tools.process import Spawned, boot_id, identify
from controller.plan import plans
from controller.settings import config_from_data
from tests.support.executor_kit import PY, appender, execution, make_plan, run, statuses
from tests.support.gitenv import ROOT

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
    starts = [r["id"] for r in journal_of(tmp_path, plan_file) if r["t"] == "start"]
    assert starts == [1, 2, 2, 3]


# --- orphans: the tool process a SIGKILLed engine left running ---------------------------


def journal_of(root: Path, plan_file: Path) -> list[dict[str, Any]]:
    config = config_from_data(json.loads((root / "config.json").read_text()), root / "plangate.yml")
    path = journal_path(
        config.state_path(), "plans/demo", plans.load_plan(plan_file, config).frozen_hash or ""
    )
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.endswith("}")]


def spawns(root: Path, plan_file: Path) -> list[dict[str, Any]]:
    return [r for r in journal_of(root, plan_file) if r["t"] == "spawn"]


def alive(pid: int) -> bool:
    """Running and not a zombie (an orphan's new parent may never reap it)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2] != "Z"


def wait_until(condition: Any, what: str) -> None:
    deadline = time.monotonic() + 30
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting until {what}"
        time.sleep(0.02)


def kill_engine_mid_tool(root: Path, plan_file: Path, tool_started: Any) -> None:
    """Start the engine, wait until its tool runs and is journaled, then SIGKILL the engine."""
    proc = engine_process(root)

    def running() -> bool:
        if proc.poll() is not None:
            raise AssertionError(f"the engine ended before its tool ran: {proc.communicate()}")
        return bool(tool_started() and spawns(root, plan_file))

    try:
        wait_until(running, "the tool ran")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)


def test_orphan_of_a_non_idempotent_tool_is_stopped_and_the_action_is_in_doubt(
    tmp_path: Path,
) -> None:
    pids = tmp_path / "tool.pids"
    # The leader (sh) and a member of its process group (sleep) both outlive the engine.
    script = 'sleep 60 & echo "$$ $!" > "$1.tmp"; mv "$1.tmp" "$1"; wait'
    tool = {"kind": "exec", "argv": ["sh", "-c", script, "sh", str(pids)]}
    _config, plan_file = make_plan(
        tmp_path, [{"id": 1, "tool": "slow", "params": {}}], {"slow": tool}
    )
    kill_engine_mid_tool(tmp_path, plan_file, pids.exists)
    leader, member = (int(pid) for pid in pids.read_text().split())
    try:
        assert alive(leader) and alive(member), "the orphan should outlive the engine"
        assert run_engine(tmp_path) == {
            "status": "failed",
            "action": 1,
            "code": "E_ACTION_IN_DOUBT",
        }
        assert not alive(leader) and not alive(member)
        [spawn] = spawns(tmp_path, plan_file)
        assert (spawn["id"], spawn["attempt"], spawn["pid"], spawn["pgid"]) == (
            1,
            1,
            leader,
            leader,
        )
        assert statuses(plan_file) == ["in_doubt"]
        error = execution(plan_file)["actions"][0]["error"]
        assert f"tool process {leader} was still running and was stopped" in error["message"]
    finally:
        for pid in (leader, member):
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


#: Notes its start and its end (also when stopped by SIGTERM); no braces: argv placeholders.
IDEMPOTENT_TOOL = """
import os, signal, sys, time
def note(what):
    with open(LOG, "a") as f:
        f.write("%s %d\\n" % (what, os.getpid()))
def stop(*_):
    note("end")
    sys.exit(143)
signal.signal(signal.SIGTERM, stop)
note("start")
if os.path.exists(SLOW):
    time.sleep(60)
note("end")
print("{}")
"""


def test_orphan_of_an_idempotent_tool_is_stopped_before_the_rerun(tmp_path: Path) -> None:
    log, slow = tmp_path / "tool.log", tmp_path / "slow"
    code = IDEMPOTENT_TOOL.replace("LOG", repr(str(log))).replace("SLOW", repr(str(slow)))
    tool = {"kind": "exec", "argv": [PY, "-c", code], "idempotent": True}
    _config, plan_file = make_plan(
        tmp_path, [{"id": 1, "tool": "put", "params": {}}], {"put": tool}
    )
    slow.touch()
    kill_engine_mid_tool(tmp_path, plan_file, log.exists)
    orphan = int(log.read_text().split()[1])
    try:
        assert alive(orphan), "the orphan should outlive the engine"
        slow.unlink()  # the re-run finishes at once; the orphan still sleeps
        assert run_engine(tmp_path)["status"] == "completed"
        assert not alive(orphan)
        first, second = (s["pid"] for s in spawns(tmp_path, plan_file))
        assert first == orphan and second != orphan
        # One copy at a time: the orphan ended before the re-run started.
        assert log.read_text().splitlines() == [
            f"start {orphan}",
            f"end {orphan}",
            f"start {second}",
            f"end {second}",
        ]
    finally:
        if alive(orphan):
            os.kill(orphan, signal.SIGKILL)


#: How a forged spawn record differs from the bystander process whose pid it names.
FORGERIES: dict[str, Callable[[Spawned], dict[str, Any]]] = {
    "the very process": lambda real: {},
    "pid reused by a later process": lambda real: {"start_ticks": (real.start_ticks or 0) + 1},
    "recorded in another boot": lambda real: {"boot_id": "00000000-0000-0000-0000-000000000000"},
    "unverifiable (no /proc)": lambda real: {"start_ticks": None, "boot_id": None},
}


@pytest.mark.parametrize("case", FORGERIES)
def test_a_spawn_record_is_acted_on_only_for_the_very_process(tmp_path: Path, case: str) -> None:
    effects = tmp_path / "effects.txt"
    config, plan_file = make_plan(
        tmp_path, [{"id": 1, "tool": "add", "params": {"line": "1"}}], {"add": appender(effects)}
    )
    bystander = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        real = identify(bystander.pid)
        assert real.start_ticks is not None and real.boot_id == boot_id()
        spawn = {"pid": real.pid, "pgid": real.pgid, "start_ticks": real.start_ticks}
        spawn |= {"boot_id": real.boot_id, **FORGERIES[case](real)}
        frozen = plans.load_plan(plan_file, config).frozen_hash or ""
        path = journal_path(config.state_path(), "plans/demo", frozen)
        path.parent.mkdir(parents=True)
        at = "2026-01-01T00:00:00Z"
        records = [
            {"t": "run", "at": at, "resume": False, "pid": 1},
            {"t": "start", "at": at, "id": 1, "attempt": 1, "key": "step:x", "params": {}},
            {"t": "spawn", "at": at, "id": 1, "attempt": 1, **spawn},
        ]
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
        outcome = run(Engine(config), plan_file)
        assert outcome.error is not None and outcome.error.code == "E_ACTION_IN_DOUBT"
        assert not effects.exists()
        if case == "the very process":
            assert bystander.wait(5) == -signal.SIGTERM
        else:
            time.sleep(0.2)
            assert bystander.poll() is None, "a process that is not the recorded one was killed"
    finally:
        bystander.kill()
        bystander.wait()


def test_identify_reads_the_stat_line_past_a_command_name_with_parentheses(tmp_path: Path) -> None:
    odd = tmp_path / "a) R 1 (b"
    odd.symlink_to(Path(PY))
    child = subprocess.Popen(
        [str(odd), "-c", "import time; time.sleep(30)"], start_new_session=True
    )
    try:
        me, it = identify(os.getpid()), identify(child.pid)
        assert Path(f"/proc/{child.pid}/comm").read_text().startswith("a) R 1 (b")
        assert it.pgid == child.pid != me.pgid
        assert it.start_ticks is not None and me.start_ticks is not None
        assert me.start_ticks <= it.start_ticks
        assert it.boot_id == Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    finally:
        child.kill()
        child.wait()


def test_replay_keeps_the_spawn_of_the_open_start_only() -> None:
    spawn = {"t": "spawn", "id": 1, "attempt": 1, "pid": 10, "pgid": 10}
    start1, start2 = ({"t": "start", "id": 1, "attempt": n} for n in (1, 2))
    end1 = {"t": "end", "id": 1, "attempt": 1, "status": "failed", "retry": True}
    assert replay([start1, spawn]).actions[1].spawn == spawn
    assert replay([start1, spawn, end1]).actions[1].spawn is None
    # A new attempt started: the earlier attempt's child was waited for, it is not an orphan.
    assert replay([start1, spawn, end1, start2]).actions[1].spawn is None
    assert replay([start1, spawn, end1, start2, spawn]).actions[1].spawn is None


def test_each_spawned_tool_process_is_journaled_between_start_and_end(tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "whoami.py").write_text("import os\n\ndef pid():\n    return {'pid': os.getpid()}\n")
    tools = {
        "say": {"kind": "echo"},
        "sh": {"kind": "exec", "argv": [PY, "-c", "import os; print(os.getpid())"]},
        "py": {"kind": "python", "target": "whoami:pid"},
    }
    actions = [{"id": i, "tool": name, "params": {}} for i, name in enumerate(tools, 1)]
    config, plan_file = make_plan(
        tmp_path, actions, tools, extra_config={"python_path": [str(lib)]}
    )
    assert run(Engine(config), plan_file).status == "completed"
    records = journal_of(tmp_path, plan_file)
    kinds = {i: [r["t"] for r in records if r.get("id") == i] for i in (1, 2, 3)}
    assert kinds == {
        1: ["start", "end"],
        2: ["start", "spawn", "end"],
        3: ["start", "spawn", "end"],
    }
    ends = {r["id"]: r["result"] for r in records if r["t"] == "end"}
    for spawn in (r for r in records if r["t"] == "spawn"):
        assert spawn["attempt"] == 1 and spawn["pgid"] == spawn["pid"]
        assert spawn["boot_id"] == boot_id() and isinstance(spawn["start_ticks"], int)
    pids = {r["id"]: r["pid"] for r in records if r["t"] == "spawn"}
    assert pids == {2: ends[2]["json"], 3: ends[3]["pid"]}


# --- a lost journal (SPEC §15: a run whose journal is missing treats every started action as
# in doubt) ------------------------------------------------------------------------------------


def _begun(config: Any, plan_file: Path) -> Path:
    from controller.execution.executor import begin

    frozen = plans.load_plan(plan_file, config).frozen_hash
    assert frozen
    begin(config.state_path(), "plans/demo", frozen, "0" * 40)
    return journal_path(config.state_path(), "plans/demo", frozen)


def test_a_started_run_whose_journal_was_begun_runs_normally(tmp_path: Path) -> None:
    target = tmp_path / "effects.txt"
    config, plan_file = make_plan(
        tmp_path, [{"id": 1, "tool": "add", "params": {"line": "one"}}], {"add": appender(target)}
    )
    _begun(config, plan_file)
    assert run(Engine(config), plan_file, journal_expected=True).status == "completed"
    assert target.read_text() == "one\n"


@pytest.mark.parametrize("loss", ["deleted", "emptied"])
def test_a_lost_journal_runs_nothing_and_says_in_doubt(tmp_path: Path, loss: str) -> None:
    target = tmp_path / "effects.txt"
    config, plan_file = make_plan(
        tmp_path,
        [
            {"id": 1, "tool": "add", "params": {"line": "one"}},
            {"id": 2, "tool": "add", "params": {"line": "two"}},
        ],
        {"add": appender(target)},
    )
    journal = _begun(config, plan_file)
    if loss == "deleted":
        journal.unlink()
    else:
        journal.write_text("")
    outcome = run(Engine(config), plan_file, journal_expected=True)
    assert outcome.status == "failed" and outcome.action is None
    assert outcome.error is not None and outcome.error.code == "E_ACTION_IN_DOUBT"
    assert "approve a resume" in (outcome.error.remedy or "")
    assert not target.exists()  # nothing ran
    block = execution(plan_file)
    assert block["status"] == "failed" and block["error"]["code"] == "E_ACTION_IN_DOUBT"
    assert statuses(plan_file) == ["pending", "pending"]
    # a human approves a resume: the actions run (their effects checked by the human first)
    assert run(Engine(config), plan_file, resume=True, journal_expected=True).status == "completed"
    assert target.read_text() == "one\ntwo\n"


# --- round 68: a journal begun by the run's first start holds the whole run -------------------

NO_RECORD = (None, "no commit of its own wrote the execution: block")


def _first_begun(config: Any, plan_file: Path, first: bool = True) -> None:
    """The begin of the run's first start (``first``: a first approval's), as the service
    writes it before its start commit."""
    from controller.execution.executor import begin

    frozen = plans.load_plan(plan_file, config).frozen_hash
    assert frozen
    begin(config.state_path(), "plans/demo", frozen, "0" * 40, first=first)


def _resumed(config: Any, plan_file: Path) -> Any:
    """Her resume of the failed run: its own begin, then the run continued, the controller
    holding no record of its own of the run (a look-alike ``fail`` ended it)."""
    from controller.execution.executor import begin

    frozen = plans.load_plan(plan_file, config).frozen_hash
    assert frozen
    begin(config.state_path(), "plans/demo", frozen, "1" * 40)
    return run(
        Engine(config),
        plan_file,
        resume=True,
        journal_expected=True,
        continued=True,
        record=lambda start: NO_RECORD,
    )


def test_a_resume_of_a_run_stopped_before_its_first_action_runs_each_action_once(
    tmp_path: Path,
) -> None:
    effects, plan_file = three_appends(tmp_path)
    config = _config_of(tmp_path)
    _first_begun(config, plan_file)  # started, then killed before the engine began
    outcome = _resumed(config, plan_file)
    assert outcome.status == "completed", outcome.error
    assert effects.read_text() == "1\n2\n3\n"


def test_a_journal_begun_by_a_later_start_is_still_read_as_lost(tmp_path: Path) -> None:
    """Round 52 stands: a journal whose first begin is not a first start's lost what ran
    before it, and without the controller's own record nothing runs."""
    effects, plan_file = three_appends(tmp_path)
    config = _config_of(tmp_path)
    _first_begun(config, plan_file, first=False)
    outcome = _resumed(config, plan_file)
    assert outcome.status == "failed" and outcome.error is not None
    assert outcome.error.code == "E_ACTION_IN_DOUBT", outcome.error.message
    assert not effects.exists()


def test_a_resume_after_a_crash_mid_action_leaves_it_in_doubt(tmp_path: Path) -> None:
    """Exactly once: her resume of a run killed mid-action (a non-idempotent tool started,
    no end) finds the start in the whole journal: the action is in doubt, not run again."""
    effects, plan_file = three_appends(tmp_path)
    config = _config_of(tmp_path)
    _first_begun(config, plan_file)
    run_engine(tmp_path, crash_at="after-tool:2")
    before = effects.read_text()
    outcome = _resumed(config, plan_file)
    assert (outcome.status, outcome.action) == ("failed", 2)
    assert outcome.error is not None and outcome.error.code == "E_ACTION_IN_DOUBT"
    assert effects.read_text() == before == "1\n2\n"


def _config_of(root: Path) -> Any:
    return config_from_data(json.loads((root / "config.json").read_text()), root / "plangate.yml")


def test_a_whole_journal_older_than_the_controllers_record_runs_nothing_again(
    tmp_path: Path,
) -> None:
    """A state directory restored from a backup taken right after a first start holds a
    journal begun by that start (whole, by its first record) but older than what ran: the
    controller's own committed record, which shows every action succeeded, wins, and no
    action runs a second time."""
    from controller.execution.executor import begin

    effects, plan_file = three_appends(tmp_path)
    config = _config_of(tmp_path)
    _first_begun(config, plan_file)
    assert run(Engine(config), plan_file, journal_expected=True).status == "completed"
    assert effects.read_text() == "1\n2\n3\n"
    block = execution(plan_file)
    frozen = plans.load_plan(plan_file, config).frozen_hash
    assert frozen
    journal = journal_path(config.state_path(), "plans/demo", frozen)
    journal.write_text(journal.read_text().splitlines(keepends=True)[0])  # the old backup's
    begin(config.state_path(), "plans/demo", frozen, "1" * 40)
    outcome = run(
        Engine(config),
        plan_file,
        resume=True,
        journal_expected=True,
        continued=True,
        record=lambda start: (block, "the controller's own commit"),
    )
    assert effects.read_text() == "1\n2\n3\n", outcome


@pytest.mark.parametrize("point", ["after-start:2", "after-tool:2"])
def test_an_abort_after_a_crash_mid_action_records_it_in_doubt(tmp_path: Path, point: str) -> None:
    """Round 119, abort-after-crash-records-running: killed mid-action, then an abort before
    the restart. Nothing runs (the action is not called again), and the aborted run's record
    says what a resume would: the started action is ``in_doubt`` (E_ACTION_IN_DOUBT), in the
    ``execution:`` block and in EXECUTION_LOG.md, never ``running`` under ``aborted``."""
    effects, plan_file = three_appends(tmp_path)
    run_engine(tmp_path, crash_at=point)
    before = effects.read_text()
    outcome = run(Engine(_config_of(tmp_path)), plan_file, abort_requested=lambda: True)
    assert (outcome.status, outcome.error and outcome.error.code) == ("aborted", "E_ABORTED")
    assert effects.read_text() == before  # not called again
    block = execution(plan_file)
    assert block["status"] == "aborted"
    assert statuses(plan_file) == ["succeeded", "in_doubt", "pending"]
    assert block["actions"][1]["error"]["code"] == "E_ACTION_IN_DOUBT"
    log = (plan_file.parent / "EXECUTION_LOG.md").read_text()
    assert "⏳" not in log and "E_ACTION_IN_DOUBT" in log, log
