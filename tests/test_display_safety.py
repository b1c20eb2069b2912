"""Plan and git text cannot act on the reader: `status`, `audit`, `show`, `validate`, error
messages, the console log and EXECUTION_LOG.md show ANSI escapes, carriage returns, bidi
overrides, zero-width and tag characters escaped; `--json` outputs keep the values exact."""

from __future__ import annotations

import io
import json
import logging
import re
import unicodedata
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_logs import Tty

from controller import logs
from controller.display import HIDDEN, visible, visible_json
from tests.support.gitenv import commit_all, run_cli
from tests.support.gitkit import (
    AGENT,
    PLAN,
    approve,
    controller,
    edit_status,
    git,
    run_once,
    write_plan,
)

RAW = ("\x1b", "\r", "\u202e", "\u200b")
# matches the approvers' glob *@ops.example.com, but an identity with hidden characters is no
# address and never approves (controller.approval.approvals.is_address): refused, and shown
EVE = ("Eve", "eve\x1b[2J\u202e\u200b@ops.example.com")
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
    """A hostile plan approved and run to completion, a plan a hostile-looking identity
    tried to approve, and a third plan given an illegal status by another one."""
    write_plan(repo, "greet", EVIL)
    write_plan(repo, "eve")
    write_plan(repo, "other")
    commit_all(repo, "add plans", AGENT)
    with controller(repo) as ctl:
        assert ctl.reconcile() == []
    approve(repo, "greet")
    approve(repo, "eve", who=EVE)
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
    assert "completed" in lines["plans/greet"]
    # the refused identity, in the reason under plans/eve
    assert "E_APPROVER_NOT_ALLOWED: eve\\x1b[2J\\u202e\\u200b@ops.example.com" in result.stdout
    assert "mal\\x1b[2J\\r\\u202e\\u200b@example.com set status completed" in lines["plans/other"]


def test_status_json_keeps_the_values_as_they_are(history: Path) -> None:
    result = run_cli("status", "--json", "--config", str(history))
    assert result.returncode == 0, result.stderr
    _no_raw(result.stdout)  # JSON's own escaping keeps them inert...
    rows = {row["plan"]: row for row in json.loads(result.stdout)}
    # ...and the values exact, as recorded
    assert EVE[1] in rows["plans/eve"]["reason"]
    assert rows["plans/eve"]["approver"] is None
    assert MALLORY[1] in rows["plans/other"]["last_event"]


def test_audit_shows_git_text_escaped(history: Path) -> None:
    result = run_cli("audit", "--config", str(history))
    assert result.returncode == 1, result.stderr  # the illegal status is flagged
    _no_raw(result.stdout + result.stderr)
    assert "approved by alice@example.com in" in result.stdout
    assert "FLAG illegal: plans/other" in result.stdout
    assert "mal\\x1b[2J\\r\\u202e\\u200b@example.com set status completed" in result.stdout
    raw = run_cli("audit", "--json", "--config", str(history))
    report = json.loads(raw.stdout)
    assert [e["plan"] for e in report["executions"]] == ["plans/greet"]  # never Eve's
    assert MALLORY[1] in report["findings"][0]["detail"]


def test_execution_log_shows_plan_and_git_text_escaped(history: Path) -> None:
    log = (history.parent / "repo/plans/greet/EXECUTION_LOG.md").read_text()
    _no_raw(log)
    assert "\x85" not in log
    # shown escaped, and each escape's backslash and bracket escaped for markdown (inert)
    assert log.startswith("# Execution log: Greet\\\\x1b\\[2J \\\\u202e\\\\u200b now\n")
    assert "| Approved by | alice@example.com |" in log
    # a multi-line why stays on its line, and its pipe cannot open a table cell
    assert "**Why:** say\\\\x1b\\[2J \\\\u202e\\\\u200b hello second \\| line\n" in log
    # params (and the echo tool's result) stay valid JSON with the exact value
    blocks = re.findall(r"```json\n(.*?)\n```", log, re.S)
    assert [json.loads(b)["who"] for b in blocks] == ["w\x1b[2J\u202e\u200b\x85"] * 2
    committed = git(history.parent / "repo", "show", "HEAD:plans/greet/EXECUTION_LOG.md")
    assert committed == log


def test_plan_folder_name_is_escaped_in_status_and_never_runs(repo: Path) -> None:
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
    # such a name is E_UNSAFE_PATH (issue 11): recorded, never run, no log written
    rows = json.loads(
        run_cli("status", "--json", "--config", str(repo.parent / "plangate.yml")).stdout
    )
    (row,) = [r for r in rows if r["plan"] == f"plans/{slug}"]
    assert row["status"] is None and row["notes"][-1].startswith("E_UNSAFE_PATH")
    assert not (repo / "plans" / slug / "EXECUTION_LOG.md").exists()


def test_visible_escapes_hidden_characters_and_nothing_else() -> None:
    assert visible("a\x1b[31mb\rc\u202ed\u200be\x9bf\u2066\ufeff\x7f") == (
        "a\\x1b[31mb\\rc\\u202ed\\u200be\\x9bf\\u2066\\ufeff\\x7f"
    )
    plain = "Grüße, 日本語, emoji 🚀, quotes \"' and \\ backslash"
    assert visible(plain) == plain


@pytest.mark.parametrize("indent", [None, 2])
def test_visible_json_stays_valid_json_with_the_same_value(indent: int | None) -> None:
    value = {
        "k\u202e": ["\x1b[2J\r\n", "\u200b\x85\x7f\u2028", "é 🚀"],
        "tags and private use": "a\U000e0041\U000e007f\ue000\U000f0001\U0010fffd\xad",
        "n": 1,
    }
    text = visible_json(json.dumps(value, ensure_ascii=False, indent=indent))
    _no_raw(text)
    assert not HIDDEN.search(text.replace("\n", ""))
    assert "\\udb40\\udc41" in text  # U+E0041 above the BMP: a UTF-16 surrogate pair
    assert json.loads(text) == value
    assert "é 🚀" in text  # readable text is not escaped


# --- validation and error messages, the console log ------------------------------------

# a key the schema does not know: its message quotes it as written
HOSTILE_KEY = "own\x1b[2J\r\u202e\u200b\U000e0041er"
SHOWN_KEY = "own\\x1b[2J\\r\\u202e\\u200b\\U000e0041er"
UNKNOWN_KEY = PLAN.replace(
    "  status: pending_approval\n",
    '  status: pending_approval\n  "own\\e[2J\\r\\u202E\\u200B\\U000E0041er": x\n',
)


def _no_hidden(text: str) -> None:
    _no_raw(text)
    assert not HIDDEN.search(text.replace("\n", "")), "a hidden character in the output"


#: a work tree whose own folder has a hostile name: the CLI reads its plans (a plan FOLDER so
#: named is no plan: E_UNSAFE_PATH, round 75), and prints every path through it escaped
ROOT = "ops\x1b[2J\r\u202e\u200b"
SHOWN_ROOT = "ops\\x1b[2J\\r\\u202e\\u200b"


def _hostile_root(tmp_path: Path) -> Path:
    root = tmp_path / ROOT
    (root / ".git").mkdir(parents=True)
    return root


@pytest.mark.parametrize("command", ["validate", "show"])
def test_validation_messages_quote_plan_text_escaped(tmp_path: Path, command: str) -> None:
    root = _hostile_root(tmp_path)
    plan = write_plan(root, "x", UNKNOWN_KEY)
    result = run_cli(command, str(plan), cwd=root)
    assert result.returncode == 1, result.stderr
    _no_hidden(result.stdout + result.stderr)
    # one problem, on one line, then its remedy (and a warning that no controller would pick
    # this file up)
    (problem, remedy) = [line for line in result.stderr.splitlines() if ": warning: " not in line]
    assert remedy == "  remedy: correct the field as the message says (see docs/plan-format.md)"
    assert problem.startswith(f"{tmp_path}/{SHOWN_ROOT}/plans/x/PLAN.yml:")
    assert ": E_SCHEMA_INVALID at plan[" in problem
    assert problem.endswith(
        f"unknown key `{SHOWN_KEY}`; allowed: name, task, status, created, version"
    )


@pytest.mark.parametrize("command", ["validate", "show", "hash", "freeze"])
def test_a_hostile_plan_folder_is_refused_escaped(tmp_path: Path, command: str) -> None:
    """Round 75: a plan folder whose name holds a control or invisible character is no plan
    (the history index holds it E_UNSAFE_PATH); every command says so, escaped."""
    plan = write_plan(_hostile_root(tmp_path), "x\x1b[2J\u202e")
    result = run_cli(command, str(plan), cwd=tmp_path)
    assert result.returncode != 0 and "E_UNSAFE_PATH" in result.stdout + result.stderr, result
    _no_hidden(result.stdout + result.stderr)
    assert "frozen:" not in plan.read_text()


def test_validate_json_keeps_the_plan_text_exact(tmp_path: Path) -> None:
    root = _hostile_root(tmp_path)
    plan = write_plan(root, "x", UNKNOWN_KEY)
    result = run_cli("validate", "--json", str(plan), cwd=root)
    assert result.returncode == 1, result.stderr
    _no_hidden(result.stdout)  # JSON escapes only: still one JSON object...
    record = json.loads(result.stdout)
    assert record["path"] == str(plan)  # ...whose values are exactly the plan's
    (error,) = record["errors"]
    assert error["message"].startswith(f"unknown key `{HOSTILE_KEY}`;")
    assert error["code"] == "E_SCHEMA_INVALID"
    assert error["line"] == UNKNOWN_KEY.splitlines().index("  status: pending_approval") + 2


def test_error_messages_quote_plan_text_escaped(repo: Path) -> None:
    hostile = PLAN.replace(
        "status: pending_approval", 'status: "pending\\e[2J\\r\\u202E\\U000E0041"'
    )
    write_plan(repo, "greet", hostile)
    commit_all(repo, "add", AGENT)
    result = run_cli("approve", str(repo / "plans" / "greet"), cwd=repo)
    assert result.returncode == 1, result.stderr
    _no_hidden(result.stdout + result.stderr)
    assert result.stderr.splitlines() == [
        "plangate: E_ILLEGAL_TRANSITION: plans/greet is pending\\x1b[2J\\r\\u202e"
        "\\U000e0041; approve works on a plan that is pending_approval or awaiting_approval"
        " or failed",
        "  remedy: check `plangate status` for where the plan is",
    ]


def test_an_error_listing_several_problems_keeps_its_lines(tmp_path: Path) -> None:
    config = tmp_path / "plangate.yml"
    config.write_text("metrics: {listen: nope}\nlimits: {max_actions: -1}\n")
    result = run_cli("validate", "--config", str(config), str(write_plan(tmp_path)), cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert "\\n" not in result.stderr  # line breaks are not escaped...
    lines = result.stderr.splitlines()
    assert lines[0].startswith("plangate: E_CONFIG_INVALID: ")
    assert all(line.startswith("  ") for line in lines[1:])
    assert lines[-1].startswith("  remedy: ")  # ...the remedy keeps its own line


@pytest.fixture
def console(monkeypatch: pytest.MonkeyPatch) -> Iterator[io.StringIO]:
    """The daemon's log as a person at a terminal sees it (secrets: hunter2)."""
    monkeypatch.setattr(logs, "_redactors", [lambda text: text.replace("hunter2", "***")])
    out = Tty()
    logs.configure(stream=out)
    yield out
    logs.configure()


def test_console_log_shows_plan_text_escaped(console: io.StringIO) -> None:
    log = logs.get_logger()
    with logs.plan_context("plans/x\x1b[2J\u202e\u200b", "sha256:abc"):
        log.info("plan.seen\r", tool="gr\x1b[2J\u202eeet\U000e0041", **{"k\x1b[2J": ["v\u202e"]})
        logging.getLogger("some.library").warning("from %s", "lib\x1b[2J\r\u202e")
    text = console.getvalue()
    for raw in ("\x1b[2J", "\r", "\u202e", "\u200b", "\U000e0041"):
        assert raw not in text  # (the renderer's own colour codes remain)
    assert "plans/x\\x1b[2J\\u202e\\u200b" in text
    assert "gr\\x1b[2J\\u202eeet\\U000e0041" in text and "plan.seen\\r" in text
    assert "k\\x1b[2J" in text and "['v\\u202e']" in text
    assert "from lib\\x1b[2J\\r\\u202e" in text
    assert len(text.splitlines()) == 2  # one line per event


def test_console_log_shows_a_traceback_escaped_and_redacted(console: io.StringIO) -> None:
    try:
        token = "hunter2"
        raise RuntimeError(f"tool said \x1b[2J\r\u202e{token}")
    except RuntimeError:
        logs.get_logger().exception("tool_crashed", action=1)
    text = console.getvalue()
    _no_raw(text.replace("\x1b[", "ESC["))  # colour codes aside...
    assert "\x1b[2J" not in text and "hunter2" not in text
    assert "RuntimeError: tool said \\x1b[2J\\r\\u202e***" in text  # ...nothing raw
    assert "Traceback (most recent call last):\n" in text  # its lines stay lines


def test_json_log_keeps_plan_text_exact() -> None:
    out = io.StringIO()
    logs.configure(stream=out)
    try:
        logs.get_logger().info("plan.seen", plan="plans/x\x1b[2J\u202e\U000e0041")
    finally:
        logs.configure()
    assert json.loads(out.getvalue())["plan"] == "plans/x\x1b[2J\u202e\U000e0041"


def test_visible_escapes_tags_soft_hyphens_and_annotations() -> None:
    assert visible("a\U000e0041\U000e007fb\xadc\ufff9d\ufffbe\ue000f\ud800") == (
        "a\\U000e0041\\U000e007fb\\xadc\\ufff9d\\ufffbe\\ue000f\\ud800"
    )


def test_every_control_format_separator_and_private_use_character_is_hidden() -> None:
    """All of Cc, Cf, Zl, Zp, Co, Cs are escaped; nothing assigned outside them is."""
    hidden_categories = {"Cc", "Cf", "Zl", "Zp", "Co", "Cs"}
    everything = "".join(map(chr, range(0x110000)))
    matched = set(HIDDEN.findall(everything))
    by_category = {c for c in everything if unicodedata.category(c) in hidden_categories}
    assert sorted(f"U+{ord(c):04X}" for c in by_category - matched) == []
    # beyond them only unassigned code points, kept for later assignments (the tag block),
    # and the invisible blanks and selectors attacks hide text or data with (issue 11;
    # round 10: every default-ignorable code point, and the Braille blank)
    invisible = set("\u034f\u115f\u1160\u17b4\u17b5\u180b\u180c\u180d\u180f\u3164\uffa0")
    invisible |= {chr(c) for c in range(0xE0100, 0xE01F0)}
    invisible |= {chr(c) for c in range(0xFE00, 0xFE10)} | {"\u2800"}
    # the graphic characters drawn blank (round 49): a null notehead, the Khitan filler
    invisible |= {"\U0001d159", "\U00016fe4"}
    # and every blank but the plain space: it reads as a space (round 46)
    invisible |= {c for c in everything if unicodedata.category(c) == "Zs"} - {" "}
    assert invisible <= matched and " " not in matched
    assert {unicodedata.category(c) for c in matched - by_category - invisible} == {"Cn"}
    assert {"\U000e0000", "\U000e0002", "\U000e007f"} <= matched
    # Unicode 15's Egyptian blanks and modifiers after the format controls (round 47)
    assert {chr(c) for c in range(0x13430, 0x13456)} <= matched


# --- what the plan commands print about a plan: its path, its folder, the branch -------

SLUG = "x\x1b[2J\r\u202e\u200b"
SHOWN_SLUG = "x\\x1b[2J\\r\\u202e\\u200b"


def test_freeze_prints_a_hostile_plan_path_escaped(tmp_path: Path) -> None:
    root = _hostile_root(tmp_path)
    plan = write_plan(root, "x")
    shown = f"{tmp_path}/{SHOWN_ROOT}/plans/x/PLAN.yml"
    check = run_cli("freeze", "--check", str(plan), cwd=root)
    assert check.returncode == 1, check.stderr
    assert check.stdout == f"{shown}: not frozen; run `plangate freeze {shown}`\n"
    frozen = run_cli("freeze", str(plan), cwd=root)
    assert frozen.returncode == 0, frozen.stderr
    assert re.fullmatch(rf"{re.escape(shown)}: frozen sha256:[0-9a-f]{{64}}\n", frozen.stdout)
    again = run_cli("freeze", str(plan), cwd=root)
    assert again.stdout == frozen.stdout.replace("\n", " (unchanged)\n")
    plan.write_text(plan.read_text().replace("say hello", "say goodbye"))
    stale = run_cli("freeze", "--check", str(plan), cwd=root)
    assert stale.stdout == f"{shown}: stale; run `plangate freeze {shown}`\n"
    plan.write_text(UNKNOWN_KEY)
    invalid = run_cli("freeze", str(plan), cwd=root)
    assert invalid.returncode == 1
    assert invalid.stdout == f"{shown}: not frozen (1 problem(s))\n"
    for result in (check, frozen, again, stale, invalid):
        _no_hidden(result.stdout + result.stderr)


@pytest.mark.parametrize(("command", "done"), [("approve", "approved"), ("reject", "rejected")])
def test_status_commands_print_plan_folder_and_branch_escaped(
    repo: Path, command: str, done: str
) -> None:
    branch = "main\u202e\u200b"
    git(repo, "checkout", "-q", "-b", branch)
    plan = write_plan(repo, "x")
    hostile = write_plan(repo, SLUG)
    assert run_cli("freeze", str(plan), cwd=repo).returncode == 0
    commit_all(repo, "add", AGENT)
    result = run_cli(command, str(plan.parent), "-m", "looked", cwd=repo)
    assert result.returncode == 0, result.stderr
    _no_hidden(result.stdout + result.stderr)
    assert result.stdout.startswith(f"{done} plans/x in ")
    assert " on main\\u202e\\u200b" in result.stdout
    # a plan folder so named is no plan (round 75): refused, escaped, nothing committed
    head = git(repo, "rev-parse", "HEAD")
    refused = run_cli(command, str(hostile.parent), "-m", "looked", cwd=repo)
    assert refused.returncode != 0 and "E_UNSAFE_PATH" in refused.stderr, refused
    _no_hidden(refused.stdout + refused.stderr)
    assert f"plans/{SHOWN_SLUG}" in refused.stderr
    assert git(repo, "rev-parse", "HEAD") == head


def test_init_prints_a_hostile_folder_and_email_escaped(tmp_path: Path) -> None:
    target = tmp_path / "ops\x1b[2J\r\u202e"
    email = "me\u202e\u200b@example.com"
    result = run_cli("init", str(target), env={"GIT_AUTHOR_EMAIL": email})
    assert result.returncode == 0, result.stderr
    _no_hidden(result.stdout + result.stderr)
    shown = f"{tmp_path}/ops\\x1b[2J\\r\\u202e"
    lines = result.stdout.splitlines()
    assert lines[0] == f"Initialized plangate in {shown}"
    assert "approver: me\\u202e\\u200b@example.com" in lines[2]
    first_step = lines.index("Try it (each line as printed):") + 1
    assert lines[first_step] == f"  $ cd '{shown}/plans-repo'"


# Round 49 (issue 11): the rule, "show never displays two different strings the same".


def test_the_committed_table_is_the_rule_applied_to_the_unicode_data() -> None:
    """The table ``controller.display`` compiles (generated once, so that its import scans
    no code point) is what :func:`hidden_table_source` makes of this Python's
    ``unicodedata``; under another Unicode version it still escapes everything the rule
    hides there (a character assigned since is escaped: fails closed)."""
    from controller import display

    generated: dict[str, object] = {}
    exec(display.hidden_table_source(), generated)
    if unicodedata.unidata_version == display.HIDDEN_UNICODE:
        assert generated["_HIDDEN_CLASS"] == display._HIDDEN_CLASS
        assert generated["_INVISIBLE_CLASS"] == display._INVISIBLE_CLASS
        assert generated["_COMPOSES_BACK"] == display._COMPOSES_BACK
        source = Path(display.__file__).read_text(encoding="utf-8")
        assert display.hidden_table_source() in source
    hidden = re.compile(f"[{generated['_HIDDEN_CLASS']}]")
    everything = "".join(map(chr, range(0x110000)))
    assert set(hidden.findall(everything)) <= set(HIDDEN.findall(everything))
    # HIDDEN is the table split at U+10000 (a regex tests the first part by a bitmap; the
    # redactor builds its runs of drawn text on both parts): the same characters, no other
    whole = re.compile(f"[{display._HIDDEN_CLASS}]")
    assert set(HIDDEN.findall(everything)) == set(whole.findall(everything))
    assert not re.search(f"[{display.HIDDEN_BMP}]", "".join(map(chr, range(0x10000, 0x110000))))
    # INVISIBLE (round 122) is its table split the same way, and every character of it hidden
    invisible = set(display.INVISIBLE.findall(everything))
    assert invisible == set(re.findall(f"[{display._INVISIBLE_CLASS}]", everything))
    assert invisible <= set(HIDDEN.findall(everything))


@pytest.mark.parametrize(
    "char",
    [
        "\U0001d159",  # MUSICAL SYMBOL NULL NOTEHEAD (So, blank)
        "\U00016fe4",  # KHITAN SMALL SCRIPT FILLER (Mn, draws nothing)
        "\u2800",  # BRAILLE PATTERN BLANK
        "\u3164",  # HANGUL FILLER
        "\u0378",  # unassigned (Cn)
        "\u0e00",  # unassigned (Cn)
        "\U000e0080",  # unassigned, default ignorable
        "\U0003134b",  # unassigned in Unicode 14 (a CJK ideograph of Unicode 15)
        "\ufdd0",  # noncharacters (Cn)
        "\ufdef",
        "\ufffe",
        "\uffff",
        "\U0001fffe",
        "\U0010ffff",
        "\u180f",  # a variation selector (Mn, default ignorable)
        "\u3000",  # a blank that reads as a space (Zs)
    ],
)
def test_visible_escapes_what_draws_as_nothing_or_is_no_character(char: str) -> None:
    escape = char.encode("unicode_escape").decode("ascii")
    assert visible(f"a{char}b") == f"a{escape}b"
    assert json.loads(visible_json(json.dumps(f"a{char}b", ensure_ascii=False))) == f"a{char}b"
    assert char not in visible_json(json.dumps(f"a{char}b", ensure_ascii=False))


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("cafe\u0301", "cafe\\u0301"),  # e + COMBINING ACUTE: reads as café
        ("caf\u00e9", "caf\u00e9"),  # café as NFC writes it: shown as written
        ("\u1100\u1161", "\u1100\\u1161"),  # conjoining jamo: read as U+AC00
        ("\uac00\u11a8", "\uac00\\u11a8"),  # a syllable and a final jamo: read as U+AC01
        ("\u212b", "\\u212b"),  # ANGSTROM SIGN: NFC makes it U+00C5
        ("\uf900", "\\uf900"),  # a CJK compatibility ideograph: NFC makes it U+8C48
        ("\u0958", "\\u0958"),  # DEVANAGARI QA: NFC writes U+0915 U+093C
        ("e\u0302\u0323", "e\\u0302\\u0323"),  # marks out of canonical order
        ("\u09c7\u09be", "\u09c7\\u09be"),  # Bengali O written in two: NFC composes it
        ("\u0301x", "\u0301x"),  # a mark with nothing to compose with: NFC already
    ],
)
def test_visible_escapes_what_nfc_would_change(text: str, shown: str) -> None:
    assert visible(text) == shown
    assert json.loads(visible_json(json.dumps(text, ensure_ascii=False))) == text


@pytest.mark.parametrize(
    "text",
    [
        "\u0928\u092e\u0938\u094d\u0924\u0947 \u0915\u093c",  # Hindi, a virama, a nukta
        "\u0645\u064f\u062d\u064e\u0645\u064e\u0651\u062f",  # Arabic with harakat
        "\ud55c\uad6d\uc5b4 \u1100\u0301",  # Korean, a jamo with a mark
        "Ti\u1ebfng Vi\u1ec7t",  # Vietnamese, two marks on a letter
        "\u0e20\u0e32\u0e29\u0e32\u0e44\u0e17\u0e22\u0e48",  # Thai with a tone mark
        "\u05e9\u05b8\u05c1\u05dc\u05d5\u05b9\u05dd",  # Hebrew with niqqud
        "\u304c\u30d1 \u6f22\u5b57",  # Japanese, voiced kana
        "\u0b95\u0bca \u0d15\u0d4a \u0c95\u0cca",  # Tamil, Malayalam, Kannada vowels
        "\U0001f468\u200d\U0001f469",  # an emoji sequence: its ZWJ is escaped, not the rest
    ],
)
def test_visible_shows_nfc_text_of_any_script_as_written(text: str) -> None:
    text = unicodedata.normalize("NFC", text)
    expected = text.replace("\u200d", "\\u200d")
    assert visible(text) == expected
    assert visible_json(json.dumps(text, ensure_ascii=False)) == json.dumps(
        text, ensure_ascii=False
    ).replace("\u200d", "\\u200d")


def test_no_composed_character_is_shown_as_its_decomposition() -> None:
    """Every character with a canonical decomposition and the decomposition itself are shown
    differently (the rule, for the whole Unicode data)."""
    clashes = []
    for code in range(0x110000):
        char = chr(code)
        nfd = unicodedata.normalize("NFD", char)
        if nfd != char and visible(nfd) == visible(char):
            clashes.append(f"U+{code:04X}")
    assert clashes == []
