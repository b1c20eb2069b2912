"""Text the controller commits is text its checkout gives back (round 79): a blob git would
check out under the path's ``working-tree-encoding`` and read back as other text (a ``\\`` or
``~`` in a ``SHIFT-JIS`` folder: 0x5C/0x7E, read back ``¥``/``‾``) is never committed where a
person or an agent wrote the text: the daemon's freeze waits ``E_ATTRIBUTE_UNSUPPORTED``, as
``plangate approve`` refuses (MCP ``submit``: tests/service/test_mcp.py). The controller's
own records are committed as they are: git stores them, and its checkout of a log iconv
cannot write (``✅`` in ``SHIFT-JIS``) keeps the UTF-8 bytes, which ``git status`` calls
clean. The oracle is git: ``git status`` with the files' stat data changed (git reads them)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
import structlog.testing

from controller.git import iconv
from tests.support.gitenv import ALICE, commit_all, git, identity, run_cli
from tests.support.gitkit import PLAN, controller, head_plan, subjects, write_plan

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
