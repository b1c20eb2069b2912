r"""How the controller's commit messages name a plan (round 50, issue 11): one injective,
reversible text, :func:`controller.git.records.plan_text`, read back by every reader with
:func:`controller.git.records.plan_named`.

Before, the subject and ``Plan:`` trailers held the path as ``visible`` shows it: a name NFC
would change (``cafe\u0301``, U+212B) was written escaped and the audit, comparing that text
with the path, flagged the controller's own commits; a folder named with the six ASCII
characters ``\u212b`` was written as the folder U+212B was, and the audit confused them.

Round 76 (r76uppins): a folder name holding a backslash is E_UNSAFE_PATH (git for Windows
reads ``a\b`` as the path ``a/b``); the end-to-end names with one no longer run (held, no
run to audit), and their record's text is still read back by the unit tests here.
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path
from typing import Any

import pytest

from controller.display import HIDDEN, visible
from controller.git.message import batch_message, commit_message
from controller.git.records import (
    CommitRecord,
    Person,
    batch_groups,
    parse_trailers,
    plan_event,
    plan_named,
    plan_text,
    record_events,
)
from tests.support.gitenv import AGENT, ALICE, commit_all, git, run_cli
from tests.support.gitkit import edit_status
from tests.support.plantext import greet_plan

HOSTILE = [
    "plans/cafe\u0301",  # NFD
    "plans/caf\u00e9",  # NFC
    "plans/\u212b",  # ANGSTROM SIGN: NFC makes it U+00C5
    "plans/\u00c5",
    "plans/\\u212b",  # the six ASCII characters
    "plans/\\\\u212b",
    "plans/\uf900x",  # CJK compatibility ideograph
    "plans/\u1100\u1161",  # conjoining jamo
    "plans/\u1100\\u1161",
    "plans/a\\b",  # a backslash
    "plans/a\\\\b",
    "plans/x\\",  # a trailing backslash
    "plans/\\",
    "plans/\\x1b[1m",  # what an escape looks like, typed
    "plans/\\U0001d159",
    "plans/\U0001d159",  # a blank glyph (never a plan name: refused, but still encoded)
    "plans/e\\\u0301",  # a mark on a backslash
    "plans/a\tb",  # a tab (refused as a plan name; the text still round-trips)
    "plans/a\nPlan: plans/b",
    "plans/q\"u'o te",  # quotes and an inner space
    "plans/k: v",
    "plans/ab",
]


@pytest.mark.parametrize("path", HOSTILE, ids=[ascii(p) for p in HOSTILE])
def test_the_text_reads_back_as_the_path(path: str) -> None:
    text = plan_text(path)
    assert plan_named(text) == path
    assert visible(text) == text  # safe to show: nothing left for visible to escape
    assert HIDDEN.search(text) is None and unicodedata.is_normalized("NFC", text)
    assert "\n" not in text and text == text.strip()


def test_the_text_is_injective() -> None:
    texts = [plan_text(p) for p in HOSTILE]
    assert len(set(texts)) == len(HOSTILE)
    assert plan_text("plans/\u212b") == "plans/\\u212b"
    assert plan_text("plans/\\u212b") == "plans/\\\\u212b"
    assert plan_text("plans/cafe\u0301") == "plans/cafe\\u0301"
    assert plan_text("plans/a\\b") == "plans/a\\\\b"


@pytest.mark.parametrize(
    "path", [p for p in HOSTILE if "\\" not in p], ids=[ascii(p) for p in HOSTILE if "\\" not in p]
)
def test_a_path_without_a_backslash_is_written_as_before(path: str) -> None:
    """Old history still reads: what ``visible`` wrote before round 50 is the same text."""
    assert plan_text(path) == visible(path)
    assert plan_named(visible(path)) == path


@pytest.mark.parametrize(
    ("old", "path"),
    [
        ("plans/a\\b", "plans/a\\b"),  # a backslash that starts no escape: taken as written
        ("plans/x\\", "plans/x\\"),
        ("plans/\\x61", "plans/\\x61"),  # an escape plan_text never writes (``a`` is itself)
        ("plans/\\u00e9", "plans/\\u00e9"),  # NFC text: never escaped
        ("plans/\\U00110000", "plans/\\U00110000"),  # no code point
        ("plans/cafe\u0301", "plans/cafe\u0301"),  # a hidden character left in: as written
        ("plans/\\u212b", "plans/\u212b"),  # the one reading that changed (docs/formats.md)
    ],
)
def test_text_no_writer_of_ours_makes_is_taken_as_written(old: str, path: str) -> None:
    assert plan_named(old) == path


def _record(message: str) -> CommitRecord:
    subject, _, rest = message.partition("\n")
    return CommitRecord(
        "0" * 40,
        (),
        Person("plangate", "plangate@localhost"),
        Person("plangate", "plangate@localhost"),
        0,
        0,
        subject,
        parse_trailers(rest),
        [],
        rest.strip("\n"),
    )


def test_a_one_plan_commit_names_its_plan() -> None:
    for path in HOSTILE:
        named = plan_text(path)
        message = commit_message(f"plangate: start {named}", "", [("Plan", named)])
        record = _record(message)
        event = plan_event(record, path)
        assert event is not None and (event.verb, event.plan) == ("start", path)
        assert record_events(record) == {path: "start"}


def test_a_batch_names_each_twin_once() -> None:
    twins = ["plans/\u212b", "plans/\\u212b", "plans/a\\b", "plans/a\\\\b", "plans/cafe\u0301"]
    groups = [[("Plan", plan_text(p)), ("Plan-Event", "start")] for p in twins]
    record = _record(batch_message(groups, [("Controller", "c1")]))
    assert [plan for plan, _ in batch_groups(record.body)] == twins
    assert record_events(record) == dict.fromkeys(twins, "start")
    for path in twins:
        event = plan_event(record, path)
        assert event is not None and event.batched and event.plan == path
        assert event.trailers["Plan"] == plan_text(path)
        assert event.subject == f"plangate: start {plan_text(path)}"
        assert event.trailers["Controller"] == "c1"
    assert plan_event(record, "plans/A\u030a") is None  # U+212B's NFC twin: not named


# --- end to end: the controller runs hostile names, a fresh clone's audit explains them ---

E2E = {
    "nfd": "cafe\u0301",
    "angstrom": "\u212b",
    "quotes": "q\"u'o te",
    "colon": "k: v",
    "hangul": "\u1100\u1161",
}
#: Names holding a backslash, held E_UNSAFE_PATH since round 76 (git for Windows reads
#: ``a\\b`` as the path ``a/b`` and checks no such folder out); they ran here before. Their
#: record's text (backslashes doubled) is read back by the unit tests above.
BACKSLASHED = {
    "lit-angstrom": "\\u212b",
    "lit-lit": "\\\\u212b",
    "bslash": "a\\b",
    "tail": "x\\",
}


def _config(repo: Path) -> Path:
    config = repo.parent / "plangate.yml"
    config.write_text(
        f"repo: {repo}\nstate_dir: {repo.parent / 'state'}\n"
        'approval:\n  approvers: ["alice@example.com"]\n'
        "tools:\n  greet: {kind: echo, risk: low}\n"
    )
    return config


def _run(config: Path) -> None:
    result = run_cli("run", "--once", "--config", str(config), timeout=120)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr[-2000:]


def _status(config: Path) -> dict[str, Any]:
    result = run_cli("status", "--json", "--config", str(config))
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    return {row["plan"]: row for row in json.loads(result.stdout)}


def test_a_fresh_clone_audits_hostile_names(repo: Path, tmp_path: Path) -> None:
    config = _config(repo)
    for tag, name in {**E2E, **BACKSLASHED}.items():
        folder = repo / "plans" / name
        folder.mkdir(parents=True)
        (folder / "PLAN.yml").write_text(greet_plan(f"Greet {tag}", f"say {tag}", tag))
    commit_all(repo, "plans", AGENT)
    _run(config)
    for name in {**E2E, **BACKSLASHED}.values():
        edit_status(repo, name, "approved")
    commit_all(repo, "approve all", ALICE)
    _run(config)
    _run(config)
    rows = _status(config)
    for name in E2E.values():
        assert rows[f"plans/{name}"]["status"] == "completed", rows.get(f"plans/{name}")
    for name in BACKSLASHED.values():
        row = rows[f"plans/{name}"]
        assert row.get("status") != "completed" and "E_UNSAFE_PATH" in json.dumps(row), row
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    result = run_cli("audit", "--json", cwd=clone)
    assert "Traceback" not in result.stderr, result.stderr[-2000:]
    report = json.loads(result.stdout)
    assert result.returncode == 0, report.get("findings")
    assert not report.get("findings"), report["findings"][:3]
    plans = [e.get("plan") for e in report.get("executions", [])]
    for name in E2E.values():
        assert plans.count(f"plans/{name}") == 1, (name, plans)
    for name in BACKSLASHED.values():
        assert f"plans/{name}" not in plans, (name, plans)
