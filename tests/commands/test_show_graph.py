"""`plangate show` draws a graph plan as text (SPEC §12): levels of `needs`, the checks and
failure handling under each action, a nested plan's pinned actions under the action that
runs it; deterministic, and hostile names stay on their line. Chains keep their output."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from controller.plan import graphtext, yamlio
from tests.support.gitenv import commit_all, git, run_cli

CHILD: dict[str, Any] = {
    "plan": {"name": "Notify", "task": "Tell the team", "status": "draft"},
    "inputs": {"channel": "ops"},
    "available_tools": [{"name": "echo"}],
    "actions": [
        {"id": 1, "tool": "echo", "why": "post", "params": {"to": "$<inputs.channel>"}},
        {"id": 2, "tool": "echo", "why": "log it", "needs": [1],
         "verify": {"expect": {"path": "$.to", "equals": "ops"}}},
        {"id": 3, "tool": "echo", "why": "tidy up", "needs": []},
    ],
}  # fmt: skip


def graph_plan(pin: str, why: str = "Deploy") -> dict[str, Any]:
    return {
        "plan": {"name": "Release", "task": "Deploy and tell", "status": "pending_approval"},
        "available_tools": [{"name": "echo"}],
        "preconditions": [
            {"tool": "echo", "params": {"ok": True}, "expect": {"path": "$.ok", "equals": True}}
        ],
        "actions": [
            {"id": 1, "tool": "echo", "why": why, "needs": [],
             "preconditions": [{"tool": "echo", "params": {"free": True},
                                "expect": {"path": "$.free", "equals": True}}],
             "verify": {"tool": "echo", "params": {"s": "done"}, "timeout": 30, "interval": 2,
                        "expect": [{"path": "$.s", "equals": "done"},
                                   {"path": "$.s", "matches": "d.*"}]},
             "on_failure": "fallback",
             "fallback": [{"id": "1.1", "tool": "echo", "why": "roll back"}]},
            {"id": 2, "tool": "echo", "why": "Lint", "needs": [], "on_failure": "retry",
             "retry": {"attempts": 2}},
            {"id": 3, "plan": {"path": "plans/common/notify", "hash": pin}, "why": "Tell",
             "needs": [1, 2], "inputs": {"channel": "releases"}},
            {"id": 4, "tool": "echo", "why": "Close", "needs": [3], "requires_approval": True},
        ],
    }  # fmt: skip


def repo_with(tmp_path: Path, parent: dict[str, Any], child: dict[str, Any] = CHILD) -> Path:
    """A plans repository (a real git repo) holding the child and the parent plan."""
    git(tmp_path, "init", "-q", "-b", "main")
    for slug, data in (("common/notify", child), ("release", parent)):
        folder = tmp_path / "plans" / slug
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "PLAN.yml").write_text(yamlio.dump(data))
    commit_all(tmp_path, "plans")
    return tmp_path / "plans" / "release"


def pin_of(tmp_path: Path, child: dict[str, Any] = CHILD) -> str:
    folder = tmp_path / "plans" / "common" / "notify"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "PLAN.yml").write_text(yamlio.dump(child))
    found = run_cli("hash", str(folder))
    assert found.returncode == 0, found.stderr
    return found.stdout.split()[0]


def graph_section(out: str) -> list[str]:
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Graph"))
    end = lines.index("", start)
    return lines[start:end]


def test_show_draws_levels_checks_fallbacks_and_the_nested_plan(tmp_path: Path) -> None:
    pin = pin_of(tmp_path)
    folder = repo_with(tmp_path, graph_plan(pin))
    shown = run_cli("show", str(folder))
    assert shown.returncode == 0, shown.stderr
    assert graph_section(shown.stdout) == [
        "Graph (needs): 4 actions in 3 levels; the actions of one level may run at once",
        '  before the first action: precondition echo {"ok": true}: $.ok equals true',
        "  level 1",
        "    [1] echo - Deploy",
        '        precondition echo {"free": true}: $.free equals true',
        '        verify echo {"s": "done"}, polled every 2 s for up to 30 s: $.s equals "done"'
        ' and $.s matches "d.*"',
        "        on failure: run instead, in order:",
        "          [1.1] echo - roll back",
        "    [2] echo - Lint",
        "        on failure: retry",
        "  level 2",
        "    [3] plan plans/common/notify - Tell  <- needs 1, 2",
        f'        runs plan plans/common/notify pinned at {pin} ("Notify")',
        "        | [3/1] echo - post",
        "        | [3/2] echo - log it  <- needs 3/1",
        '        |     verify: $.to equals "ops" (over its own result)',
        "        | [3/3] echo - tidy up",
        "  level 3",
        "    [4] echo - Close  <- needs 3",
        "        GATE: waits for a second approval before it runs",
    ]
    # the details list the nested plan's actions under the action, with the inputs it gets
    details = shown.stdout.split("[3] plan plans/common/notify - Tell\n", 1)[1]
    assert '    input channel = "releases"' in details
    # the inputs its actions run with: the parent's over the nested plan's defaults (round 17)
    assert '    its actions ("Notify", inputs {"channel": "releases"}):' in details
    assert '      [3/1] echo - post\n          param to = "«$<inputs.channel>»"' in details
    assert run_cli("show", str(folder)).stdout == shown.stdout  # deterministic


def test_show_json_carries_the_nested_plan_it_drew(tmp_path: Path) -> None:
    pin = pin_of(tmp_path)
    folder = repo_with(tmp_path, graph_plan(pin))
    view = json.loads(run_cli("show", "--format", "json", str(folder)).stdout)
    [child] = view["nested"]
    assert child["action"] == 3 and child["hash"] == pin and child["name"] == "Notify"
    assert [a["id"] for a in child["actions"]] == [1, 2, 3]


def test_a_run_shows_each_status_on_its_line(tmp_path: Path) -> None:
    pin = pin_of(tmp_path)
    folder = repo_with(tmp_path, graph_plan(pin))
    plan_file = folder / "PLAN.yml"
    runs = [
        {"id": 1, "status": "failed"},
        {"id": "1.1", "status": "succeeded"},
        {"id": 2, "status": "succeeded"},
        {"id": 3, "status": "running"},
        {"id": "3/1", "status": "succeeded"},
    ]
    plan_file.write_text(
        plan_file.read_text() + yamlio.dump({"execution": {"status": "running", "actions": runs}})
    )
    drawn = graph_section(run_cli("show", str(folder)).stdout)
    assert "    [1] echo - Deploy  [failed]" in drawn
    assert "          [1.1] echo - roll back  [succeeded]" in drawn
    assert "    [3] plan plans/common/notify - Tell  <- needs 1, 2  [running]" in drawn
    assert "        | [3/1] echo - post  [succeeded]" in drawn
    assert "        | [3/2] echo - log it  <- needs 3/1" in drawn  # not run yet: no status


def test_hostile_names_stay_on_their_line(tmp_path: Path) -> None:
    hostile = "ok\n    [9] echo - fake step\x1b[2J\u202eevil"
    child = {**CHILD, "plan": {**CHILD["plan"], "name": hostile}}
    child["actions"] = [{**CHILD["actions"][0], "why": hostile}]
    pin = pin_of(tmp_path, child)
    folder = repo_with(tmp_path, graph_plan(pin, why=hostile), child)
    shown = run_cli("show", str(folder))
    assert shown.returncode == 0, shown.stderr
    assert "\x1b" not in shown.stdout and "\u202e" not in shown.stdout
    assert not any(line.lstrip().startswith("[9]") for line in shown.stdout.splitlines())
    drawn = graph_section(shown.stdout)
    assert "    [1] echo - ok\\n    [9] echo - fake step\\x1b[2J\\u202eevil" in drawn
    assert "        | [3/1] echo - ok\\n    [9] echo - fake step\\x1b[2J\\u202eevil" in drawn


def test_a_chain_keeps_the_plain_action_list(tmp_path: Path) -> None:
    plan = graph_plan("sha256:" + "0" * 64)
    plan["actions"] = [
        {k: v for k, v in a.items() if k != "needs"} for a in plan["actions"] if "tool" in a
    ]
    for number, action in enumerate(plan["actions"], 1):
        action["id"] = number
    folder = repo_with(tmp_path, plan)
    shown = run_cli("show", str(folder)).stdout
    assert "Graph" not in shown and "level 1" not in shown
    assert "[1] echo - Deploy\n    precondition echo" in shown


acyclic = st.integers(1, 12).flatmap(
    lambda n: st.tuples(
        *[st.lists(st.integers(1, i - 1), max_size=3) if i > 1 else st.just([])
          for i in range(1, n + 1)]
    )
)  # fmt: skip


@settings(max_examples=80, deadline=None)
@given(acyclic)
def test_levels_put_each_action_once_after_everything_it_needs(
    needs: tuple[list[int], ...],
) -> None:
    actions = [{"id": i, "needs": list(n)} for i, n in enumerate(needs, 1)]
    rows = graphtext.levels(actions)
    level = {a["id"]: k for k, row in enumerate(rows) for a in row}
    assert sorted(level) == [a["id"] for a in actions]
    for action in actions:
        assert all(level[n] < level[action["id"]] for n in action["needs"])
        if action["needs"]:  # as early as its needs allow: one level after the deepest
            assert level[action["id"]] == 1 + max(level[n] for n in action["needs"])
        else:
            assert level[action["id"]] == 0
    for row in rows:
        assert [a["id"] for a in row] == sorted(a["id"] for a in row)


def test_markdown_lists_nested_actions_and_draws_the_graph(tmp_path: Path) -> None:
    pin = pin_of(tmp_path)
    folder = repo_with(tmp_path, graph_plan(pin, why="Deploy ``` <b>x</b>"))
    shown = run_cli("show", "--format", "markdown", str(folder))
    assert shown.returncode == 0, shown.stderr
    rows = shown.stdout.splitlines()
    at = rows.index("| 3 | plan plans/common/notify | Tell | stop \\(plan default\\) |")
    assert rows[at + 1 : at + 4] == [
        "| 3/1 | echo | post | stop \\(plan default\\) |",
        "| 3/2 | echo | log it | stop \\(plan default\\) |",
        "| 3/3 | echo | tidy up | stop \\(plan default\\) |",
    ]
    block = shown.stdout.split("<details><summary>Graph</summary>", 1)[1].split("</details>")[0]
    fence = block.strip().splitlines()[0]
    assert fence == "````"  # longer than the backtick run in the author's text: it cannot close it
    assert "    [1] echo - Deploy ``` <b>x</b>" in block and "  level 3" in block
