"""``ident`` and ``working-tree-encoding`` are git built-ins, applied as git applies them
(round 76): a plan committed under them, which ``git status`` calls clean, is frozen,
approved and run, and every controller write leaves ``git status`` clean (before: every pass
waited on "uncommitted edits" that no commit or discard could remove). An encoding plangate
cannot apply holds the plan with ``E_ATTRIBUTE_UNSUPPORTED`` and a remedy that works."""

from __future__ import annotations

from pathlib import Path

import pytest
import structlog.testing

from controller.git import iconv
from tests.support.gitenv import AGENT, ALICE, commit_all, git, identity
from tests.support.gitkit import PLAN, controller, head_plan, write_plan

#: attribute -> (the plan text, its working-tree bytes as the agent writes them)
CASES = {
    "ident": ("# $Id$\n" + PLAN, lambda text: text.encode("utf-8")),
    "working-tree-encoding=ISO-8859-1": (
        PLAN.replace("Say hello", "Say hello, café,"),
        lambda text: text.encode("latin-1"),
    ),
    "working-tree-encoding=UTF-16": (
        PLAN.replace("Say hello", "Say hello, ✓,"),
        lambda text: text.encode("utf-16"),
    ),
    # round 77: git's iconv tables, not Python's (which read 0x5C as "\\", write "／" as
    # bytes git reads as "∕")
    "working-tree-encoding=SHIFT-JIS": (
        PLAN.replace("Say hello", "Say hello, ¥ ‾,"),
        lambda text: _iconv(text, "SHIFT-JIS"),
    ),
    "working-tree-encoding=BIG5": (
        PLAN.replace("Say hello", "Say hello, a ／ b,"),
        lambda text: _iconv(text, "BIG5"),
    ),
}


def _iconv(text: str, encoding: str) -> bytes:
    data = iconv.convert(text.encode(), encoding, "UTF-8")
    assert data is not None
    return data


def _checked_out(repo: Path, attr: str) -> Path:
    text, encode = CASES[attr]
    plan = write_plan(repo)
    plan.write_bytes(encode(text))
    (repo / ".gitattributes").write_text(f"plans/*/PLAN.yml {attr}\n")
    commit_all(repo, "agent plan")
    plan.unlink()
    git(repo, "checkout", "-q", "--", ".")
    assert git(repo, "status", "--porcelain") == ""
    return plan


def _as_git_checks_out(repo: Path, plan: Path) -> bytes:
    """What ``git checkout`` writes for the committed blob (the working tree's truth)."""
    plan.unlink()
    git(repo, "checkout", "-q", "--", ".")
    return plan.read_bytes()


@pytest.mark.parametrize("attr", list(CASES))
def test_a_plan_git_calls_clean_is_frozen_approved_and_run(repo: Path, attr: str) -> None:
    plan = _checked_out(repo, attr)
    with controller(repo) as ctl:
        ctl.run_once()
    assert head_plan(repo)["frozen"]["hash"].startswith("sha256:")
    assert git(repo, "status", "--porcelain") == ""
    written = plan.read_bytes()
    assert written == _as_git_checks_out(repo, plan)  # what git would check out
    plan.write_bytes(written.replace(b"pending_approval", b"approved")
                     if "UTF-16" not in attr else
                     written.decode("utf-16").replace("pending_approval", "approved")
                     .encode("utf-16"))  # fmt: skip
    commit_all(repo, "approve", ALICE)
    with controller(repo) as ctl:
        ctl.run_once()
        rows = {row["plan"]: row for row in ctl.status(reasons=True)}
    assert head_plan(repo)["execution"]["status"] == "completed", rows
    assert git(repo, "status", "--porcelain") == ""
    assert plan.read_bytes() == _as_git_checks_out(repo, plan)


def test_the_ident_is_the_blobs_id_in_the_working_tree(repo: Path) -> None:
    plan = _checked_out(repo, "ident")
    with controller(repo) as ctl:
        ctl.run_once()
    assert "frozen" in head_plan(repo)  # a new blob: its id, not the agent's, in the file
    blob = git(repo, "rev-parse", "HEAD:plans/greet/PLAN.yml").strip()
    assert plan.read_bytes().startswith(b"# $Id: %s $\n" % blob.encode())
    assert git(repo, "show", "HEAD:plans/greet/PLAN.yml").startswith("# $Id$\n")


def test_an_edit_git_sees_under_the_attributes_still_waits(repo: Path) -> None:
    plan = _checked_out(repo, "working-tree-encoding=ISO-8859-1")
    plan.write_bytes(plan.read_bytes().replace(b"Written by the agent", b"Edited by hand"))
    with controller(repo) as ctl:
        ctl.run_once()
        rows = {row["plan"]: row for row in ctl.status(reasons=True)}
    assert "uncommitted edits" in (rows["plans/greet"]["waiting"] or "")
    assert "frozen" not in head_plan(repo)


def test_an_encoding_it_cannot_apply_holds_with_its_code(repo: Path) -> None:
    plan = write_plan(repo)
    commit_all(repo, "agent plan")
    (repo / ".gitattributes").write_text("plans/*/PLAN.yml working-tree-encoding=X-NO-SUCH\n")
    git(repo, "add", ".gitattributes")  # git itself cannot store the plan under it
    git(repo, "commit", "-qm", "agent names an encoding nobody knows", env=identity(*AGENT))
    plan.write_bytes(plan.read_bytes() + b"# more\n")
    with controller(repo) as ctl:
        ctl.run_once()
        rows = {row["plan"]: row for row in ctl.status(reasons=True)}
    said = rows["plans/greet"]["waiting"] or ""
    assert "E_ATTRIBUTE_UNSUPPORTED" in said and "working-tree-encoding=X-NO-SUCH" in said
    assert "remove the working-tree-encoding attribute" in said
    assert "frozen" not in head_plan(repo)


def test_an_adoption_git_add_would_refuse_waits_with_its_code(repo: Path) -> None:
    """Local mode commits an uncommitted plan file as ``git add`` would store it: bytes git
    refuses to add in the encoding (UTF-8 ``✓`` is no EUC-JP) are never committed as a guess
    (round 77)."""
    (repo / ".gitattributes").write_text("plans/*/PLAN.yml working-tree-encoding=EUC-JP\n")
    commit_all(repo, "the attribute")
    write_plan(repo, text=PLAN.replace("Say hello", "Say hello, ✓,"))
    refused = git(repo, "add", "plans/greet/PLAN.yml", check=False)  # git's own answer
    assert git(repo, "ls-files", "plans") == "", refused
    # the events themselves, however an earlier test in this worker configured logging
    with structlog.testing.capture_logs() as events, controller(repo) as ctl:
        ctl.run_once()
    said = [str(e.get("reason")) for e in events if e["event"] == "plan_waiting"]
    assert len(said) == 1 and "cannot adopt plans/greet/PLAN.yml" in said[0], said
    assert "E_ATTRIBUTE_UNSUPPORTED" in said[0] and "`git add` refuses it" in said[0]
    assert git(repo, "ls-files", "plans") == ""  # nothing committed
