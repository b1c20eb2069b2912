"""Text the controller commits is text its checkout gives back (round 79): a blob git would
check out under the path's ``working-tree-encoding`` and read back as other text (a ``\\`` or
``~`` in a ``SHIFT-JIS`` folder: 0x5C/0x7E, read back ``¥``/``‾``) is never committed where a
person or an agent wrote the text: the daemon's freeze waits ``E_ATTRIBUTE_UNSUPPORTED``, as
``plangate approve`` refuses (MCP ``submit``: tests/service/test_mcp.py). The controller's
own records are committed as they are: git stores them, and its checkout of a log iconv
cannot write (``✅`` in ``SHIFT-JIS``) keeps the UTF-8 bytes, which ``git status`` calls
clean. The oracle is git: ``git status`` with the files' stat data changed (git reads them)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
import structlog.testing

from controller.git import iconv
from tests.support.gitenv import ALICE, commit_all, git, identity, run_cli
from tests.support.gitkit import PLAN, approve, controller, head_plan, subjects, write_plan

pytestmark = pytest.mark.skipif(not iconv.available(), reason="no glibc iconv")

TEXT = PLAN.replace('"Say hello to the world"', "'a \\ b ~ c'")


def _status(repo: Path) -> str:
    """``git status`` having read every tracked plan file (its stat data changed)."""
    later = time.time() + 5
    for path in git(repo, "ls-files", "plans").split():
        os.utime(repo / path, (later, later))
    return git(repo, "status", "--porcelain").strip()


def _attribute_after(repo: Path, encoding: str) -> None:
    """The plan is committed (UTF-8, before the attribute), then the owner's attribute; the
    file settled (the index's stat data vouches for it: ``git status`` calls it clean)."""
    write_plan(repo, text=TEXT)
    commit_all(repo, "the plan", ALICE)
    _settle(repo)
    _attribute(repo, encoding)


def _settle(repo: Path) -> None:
    """The plan file dated in the past and its index entry refreshed (not racily clean)."""
    past = time.time() - 60
    os.utime(repo / "plans/greet/PLAN.yml", (past, past))
    git(repo, "update-index", "-q", "--refresh")


def _attribute(repo: Path, encoding: str) -> None:
    """The owner commits ``.gitattributes`` alone (``git add -A`` would read the plan anew)."""
    (repo / ".gitattributes").write_text(f"plans/** working-tree-encoding={encoding}\n")
    git(repo, "add", ".gitattributes")
    git(repo, "commit", "-q", "-m", "the attribute")


def test_a_freeze_its_checkout_would_not_give_back_waits(repo: Path) -> None:
    _attribute_after(repo, "SHIFT-JIS")
    tip = git(repo, "rev-parse", "HEAD").strip()
    with structlog.testing.capture_logs() as events, controller(repo) as ctl:
        ctl.run_once()
    said = [str(e.get("reason")) for e in events if e["event"] == "plan_waiting"]
    assert len(said) == 1 and "E_ATTRIBUTE_UNSUPPORTED" in said[0], said
    assert "SHIFT-JIS does not give back '\\\\' '~'" in said[0], said
    assert git(repo, "log", "--format=%s", f"{tip}..HEAD", "--", "plans").strip() == ""
    assert git(repo, "status", "--porcelain").strip() == ""  # nothing written: still settled


def test_the_same_text_in_an_encoding_that_holds_it_is_frozen(repo: Path) -> None:
    """A control: ``UTF-16`` holds ``\\`` and ``~``; frozen, and the checkout reads clean."""
    _attribute_after(repo, "UTF-16")
    with controller(repo) as ctl:
        ctl.run_once()
    assert subjects(repo)[0] == "plangate: freeze plans/greet"
    assert head_plan(repo)["plan"]["task"] == "a \\ b ~ c"
    assert _status(repo) == ""


def test_approve_refuses_a_status_edit_its_checkout_would_not_give_back(repo: Path) -> None:
    """The plan frozen before the attribute came; ``plangate approve`` would commit a blob
    whose checkout reads as other text: refused with the code, nothing committed."""
    write_plan(repo, text=TEXT)
    commit_all(repo, "the plan", ALICE)
    with controller(repo) as ctl:
        ctl.run_once()
    assert subjects(repo)[0] == "plangate: freeze plans/greet"
    _settle(repo)
    _attribute(repo, "SHIFT-JIS")
    tip = git(repo, "rev-parse", "HEAD").strip()
    done = run_cli("approve", "plans/greet", cwd=repo, env=identity(*ALICE))
    assert done.returncode != 0 and "E_ATTRIBUTE_UNSUPPORTED" in done.stderr, done.stderr
    assert "'\\\\' '~'" in done.stderr, done.stderr
    assert git(repo, "rev-parse", "HEAD").strip() == tip
    assert git(repo, "status", "--porcelain").strip() == ""  # nothing written: still settled


def test_the_controllers_own_log_is_committed_and_reads_clean(repo: Path) -> None:
    """A plan in a ``SHIFT-JIS`` folder runs; its ``EXECUTION_LOG.md`` holds ``✅``, which
    iconv cannot write there: git checks it out as the UTF-8 bytes ("failed to encode") and
    calls it clean, so it is committed as it is."""
    (repo / ".gitattributes").write_text("plans/** working-tree-encoding=SHIFT-JIS\n")
    commit_all(repo, "the attribute")
    write_plan(repo)
    with controller(repo) as ctl:
        ctl.run_once()
    text = git(repo, "show", "HEAD:plans/greet/PLAN.yml")
    (repo / "plans/greet/PLAN.yml").write_bytes(
        iconv.convert(text.replace("pending_approval", "approved").encode(), "SHIFT-JIS", "UTF-8")
        or b""
    )
    commit_all(repo, "approve", ALICE)
    for _ in range(2):
        with controller(repo) as ctl:
            ctl.run_once()
    assert head_plan(repo)["execution"]["status"] == "completed"
    log = git(repo, "show", "HEAD:plans/greet/EXECUTION_LOG.md")
    assert "✅" in log
    assert _status(repo) == ""


def _ran_in(repo: Path, encoding: str) -> None:
    """A plan runs to completion in a folder whose working tree is in ``encoding``."""
    (repo / ".gitattributes").write_text(f"plans/** working-tree-encoding={encoding}\n")
    commit_all(repo, "the attribute")
    write_plan(repo)
    with controller(repo) as ctl:
        ctl.run_once()
    approve(repo)
    for _ in range(2):
        with controller(repo) as ctl:
            ctl.run_once()
    assert head_plan(repo)["execution"]["status"] == "completed"


@pytest.mark.parametrize("encoding", ["ISO-8859-1", "ISO-8859-15", "CP1252", "KOI8-R"])
def test_the_log_s_own_marks_are_written_so_its_checkout_gives_it_back(
    repo: Path, encoding: str
) -> None:
    """Round 80: a single-byte encoding reads any bytes, so the UTF-8 bytes of a ``✅`` git
    could not write there read back as other text (``â\\x9c\\x85``): ``git status`` listed the
    log modified after every run and a person's next ``git commit -a`` committed it so. The
    controller's marks are written in their ASCII forms there; the log reads clean and an
    unrelated ``git commit -a`` carries none of its records."""
    _ran_in(repo, encoding)
    log = git(repo, "show", "HEAD:plans/greet/EXECUTION_LOG.md")
    assert "| Status | [ok] completed |" in log and "✅" not in log, log[:600]
    assert _status(repo) == ""
    (repo / "README").write_text("notes\n")
    git(repo, "add", "README")
    git(repo, "commit", "-q", "-a", "-m", "alice: notes", env=identity(*ALICE))
    assert git(repo, "show", "--name-only", "--format=", "HEAD").split() == ["README"]


def test_a_person_s_commit_of_a_changed_log_is_noted_by_the_audit_and_status(
    repo: Path, tmp_path: Path
) -> None:
    """Round 80: the record the controller committed is the reference, by blob. A person's
    commit of the log as git read it back (the controller's ``✅`` written as UTF-8 into an
    ``ISO-8859-1`` working tree, stored as ``â\\x9c\\x85``) is ``log-changed`` to the audit of
    a fresh clone and ``E_OWNED_BLOCK_CHANGED`` on the status row; nothing runs again."""
    _ran_in(repo, "ISO-8859-1")
    path = repo / "plans/greet/EXECUTION_LOG.md"
    text = git(repo, "show", "HEAD:plans/greet/EXECUTION_LOG.md").replace("[ok]", "✅")
    path.write_bytes(text.encode("utf-8"))
    git(repo, "commit", "-q", "-a", "-m", "alice: notes", env=identity(*ALICE))
    assert "â\x9c\x85 completed" in git(repo, "show", "HEAD:plans/greet/EXECUTION_LOG.md")
    with controller(repo) as ctl:
        ctl.run_once()
        (row,) = [r for r in ctl.status() if r["plan"] == "plans/greet"]
    assert row["status"] == "completed"
    assert any(n.startswith("E_OWNED_BLOCK_CHANGED: EXECUTION_LOG.md") and ALICE[1] in n
               for n in row["notes"]), row["notes"]  # fmt: skip
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    report = json.loads(run_cli("audit", "--json", cwd=clone).stdout)
    found = [(f["plan"], f["kind"]) for f in report["findings"]]
    assert ("plans/greet", "log-changed") in found, report["findings"]
    assert [e["plan"] for e in report["executions"] if e.get("approval_valid")] == ["plans/greet"]
