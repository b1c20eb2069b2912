"""Plan and git text cannot act on the reader: `status`, `audit` and EXECUTION_LOG.md show
ANSI escapes, carriage returns, bidi overrides and zero-width characters escaped."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import commit_all, run_cli
from gitkit import AGENT, PLAN, approve, edit_status, git, write_plan
from test_reconcile import controller, run_once

from controller.display import visible, visible_json

RAW = ("\x1b", "\r", "\u202e", "\u200b")
EVE = ("Eve", "eve\x1b[2J\u202e\u200b@ops.example.com")  # an allowed approver (*@ops...)
MALLORY = ("Mallory", "mal\x1b[2J\r\u202e\u200b@example.com")
CONFIG = """\
repo: repo
approval:
  approvers: ["alice@example.com", "*@ops.example.com"]
tools:
  greet: {kind: echo}
"""
# YAML double-quoted escapes: \e is ESC, \r CR, \u202E RIGHT-TO-LEFT OVERRIDE, \u200B ZWSP
EVIL = (
    PLAN.replace('name: "Greet"', 'name: "Greet\\e[2J\\r\\u202E\\u200B now"')
    .replace('task: "Say hello to the world"', 'task: "Say hello\\e[2J\\r\\u202E\\u200B"')
    .replace('why: "say hello"', 'why: "say\\e[2J\\r\\u202E\\u200B hello\\nsecond | line"')
    .replace("who: world", 'who: "w\\e[2J\\u202E\\u200B\\x85"')
)


def _no_raw(text: str) -> None:
    for raw in RAW:
        assert raw not in text, f"raw {raw!r} in output"


@pytest.fixture
def history(repo: Path) -> Path:
    """A hostile plan approved by a hostile-looking (allowed) identity and run to completion,
    and a second plan given an illegal status by another one."""
    write_plan(repo, "greet", EVIL)
    write_plan(repo, "other")
    commit_all(repo, "add plans", AGENT)
    with controller(repo) as ctl:
        assert ctl.reconcile() == []
    approve(repo, "greet", who=EVE)
    run_once(repo)
    edit_status(repo, "other", "completed")
    commit_all(repo, "done, trust me", MALLORY)
    (repo.parent / "plangate.yml").write_text(CONFIG)
    return repo.parent / "plangate.yml"


def test_status_shows_plan_and_git_text_escaped(history: Path) -> None:
    result = run_cli("status", "--config", str(history))
    assert result.returncode == 0, result.stderr
    _no_raw(result.stdout + result.stderr)
    lines = {line.split()[1]: line for line in result.stdout.splitlines()}
    assert "eve\\x1b[2J\\u202e\\u200b@ops.example.com" in lines["plans/greet"]
    assert "completed" in lines["plans/greet"]
    assert "mal\\x1b[2J\\r\\u202e\\u200b@example.com set status completed" in lines["plans/other"]


def test_status_json_keeps_the_values_as_they_are(history: Path) -> None:
    result = run_cli("status", "--json", "--config", str(history))
    assert result.returncode == 0, result.stderr
    _no_raw(result.stdout)  # JSON's own escaping keeps them inert...
    rows = {row["plan"]: row for row in json.loads(result.stdout)}
    assert rows["plans/greet"]["approver"] == EVE[1]  # ...and the values exact
    assert MALLORY[1] in rows["plans/other"]["last_event"]


def test_audit_shows_git_text_escaped(history: Path) -> None:
    result = run_cli("audit", "--config", str(history))
    assert result.returncode == 1, result.stderr  # the illegal status is flagged
    _no_raw(result.stdout + result.stderr)
    assert "approved by eve\\x1b[2J\\u202e\\u200b@ops.example.com in" in result.stdout
    assert "FLAG illegal: plans/other" in result.stdout
    assert "mal\\x1b[2J\\r\\u202e\\u200b@example.com set status completed" in result.stdout
    raw = run_cli("audit", "--json", "--config", str(history))
    report = json.loads(raw.stdout)
    assert report["executions"][0]["approver"] == EVE[1]
    assert MALLORY[1] in report["findings"][0]["detail"]


def test_execution_log_shows_plan_and_git_text_escaped(history: Path) -> None:
    log = (history.parent / "repo/plans/greet/EXECUTION_LOG.md").read_text()
    _no_raw(log)
    assert "\x85" not in log
    assert log.startswith("# Execution log: Greet\\x1b[2J \\u202e\\u200b now\n")
    assert "| Approved by | eve\\x1b[2J\\u202e\\u200b@ops.example.com |" in log
    # a multi-line why stays on its line, and its pipe cannot open a table cell
    assert "**Why:** say\\x1b[2J \\u202e\\u200b hello second \\| line\n" in log
    # params (and the echo tool's result) stay valid JSON with the exact value
    blocks = re.findall(r"```json\n(.*?)\n```", log, re.S)
    assert [json.loads(b)["who"] for b in blocks] == ["w\x1b[2J\u202e\u200b\x85"] * 2
    committed = git(history.parent / "repo", "show", "HEAD:plans/greet/EXECUTION_LOG.md")
    assert committed == log


def test_plan_folder_name_is_escaped_in_status_and_log(repo: Path) -> None:
    slug = "x\x1b[2J\u202e\u200b|y"
    write_plan(repo, slug)
    commit_all(repo, "add", AGENT)
    with controller(repo) as ctl:
        assert ctl.reconcile() == []
    approve(repo, slug)
    run_once(repo)
    (repo.parent / "plangate.yml").write_text(CONFIG)
    result = run_cli("status", "--config", str(repo.parent / "plangate.yml"))
    assert result.returncode == 0, result.stderr
    _no_raw(result.stdout)
    assert "plans/x\\x1b[2J\\u202e\\u200b|y" in result.stdout
    log = (repo / "plans" / slug / "EXECUTION_LOG.md").read_text()
    _no_raw(log)
    assert "| Plan | `plans/x\\x1b[2J\\u202e\\u200b\\|y` |" in log


def test_visible_escapes_hidden_characters_and_nothing_else() -> None:
    assert visible("a\x1b[31mb\rc\u202ed\u200be\x9bf\u2066\ufeff\x7f") == (
        "a\\x1b[31mb\\rc\\u202ed\\u200be\\x9bf\\u2066\\ufeff\\x7f"
    )
    plain = "Grüße, 日本語, emoji 🚀, quotes \"' and \\ backslash"
    assert visible(plain) == plain


@pytest.mark.parametrize("indent", [None, 2])
def test_visible_json_stays_valid_json_with_the_same_value(indent: int | None) -> None:
    value = {"k\u202e": ["\x1b[2J\r\n", "\u200b\x85\x7f\u2028", "é 🚀"], "n": 1}
    text = visible_json(json.dumps(value, ensure_ascii=False, indent=indent))
    _no_raw(text)
    assert not re.search("[\x7f-\x9f\u2028]", text)
    assert json.loads(text) == value
    assert "é 🚀" in text  # readable text is not escaped
