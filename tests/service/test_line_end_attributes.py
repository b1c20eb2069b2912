"""What git calls clean is clean to the controller, through git's line-end conversion only
(round 75): a ``.gitattributes`` ``text eol=crlf`` keeps LF blobs and a CRLF working tree
that ``git status`` calls clean; the controller froze nothing there ("has uncommitted
edits"). And a plan file whose top level is a JSON/flow mapping reads ``unreadable``."""

from __future__ import annotations

import json
from pathlib import Path

from controller.plan import yamlio
from tests.support.gitenv import ALICE, commit_all, git
from tests.support.gitkit import approve, controller, head_plan, write_plan

CRLF_ATTRS = "plans/*/PLAN.yml text eol=crlf\n"


def _checked_out_crlf(repo: Path, attributes: str = CRLF_ATTRS) -> Path:
    """A plan committed under ``attributes`` and checked out again (LF blob, CRLF file)."""
    plan = write_plan(repo)
    (repo / ".gitattributes").write_text(attributes)
    commit_all(repo, "agent plan")
    plan.unlink()
    git(repo, "checkout", "-q", "--", ".")
    return plan


def _rows(repo: Path) -> dict[str, dict]:
    with controller(repo) as ctl:
        return {row["plan"]: row for row in ctl.status(reasons=True)}


def _waiting(repo: Path) -> str:
    """Why a pass left ``plans/greet`` waiting (the controller's word, in its process)."""
    with controller(repo) as ctl:
        ctl.run_once()
        rows = {row["plan"]: row for row in ctl.status(reasons=True)}
    return rows["plans/greet"]["waiting"] or ""


def test_a_crlf_checkout_git_calls_clean_is_frozen_approved_and_run(repo: Path) -> None:
    plan = _checked_out_crlf(repo)
    assert b"\r\n" in plan.read_bytes() and git(repo, "status", "--porcelain") == ""
    with controller(repo) as ctl:
        ctl.run_once()
    assert head_plan(repo)["frozen"]["hash"].startswith("sha256:")
    # the controller's write is what git would check out: CRLF, and git status clean
    assert b"\r\n" in plan.read_bytes() and b"\n" not in plan.read_bytes().replace(b"\r\n", b"")
    assert git(repo, "status", "--porcelain") == ""
    assert b"\r" not in git(repo, "cat-file", "blob", "HEAD:plans/greet/PLAN.yml").encode()
    approve(repo, who=ALICE)  # her edit of the CRLF file, committed by git (LF blob)
    with controller(repo) as ctl:
        ctl.run_once()
    assert head_plan(repo)["execution"]["status"] == "completed"
    assert git(repo, "status", "--porcelain") == ""


def test_an_edit_git_sees_under_the_attribute_still_waits(repo: Path) -> None:
    plan = _checked_out_crlf(repo)
    plan.write_bytes(plan.read_bytes().replace(b"Written by the agent", b"Edited by hand"))
    assert "uncommitted edits" in _waiting(repo)
    assert "frozen" not in head_plan(repo)


def test_a_filter_driver_is_never_honoured_nor_run(repo: Path, tmp_path: Path) -> None:
    """Only git's built-in conversion: a clean filter the attributes name (which ``git
    status`` would run, and then call the CRLF file clean) is no reason to call it clean."""
    ran = tmp_path / "filter-ran"
    plan = write_plan(repo)
    (repo / ".gitattributes").write_text("plans/*/PLAN.yml -text filter=strip\n")
    git(repo, "config", "filter.strip.clean", f"touch {ran}; tr -d '\\r'")
    commit_all(repo, "agent plan")
    ran.unlink(missing_ok=True)
    plan.write_bytes(plan.read_bytes().replace(b"\n", b"\r\n"))
    assert "uncommitted edits" in _waiting(repo)
    assert "frozen" not in head_plan(repo)
    assert not ran.exists()


def test_a_flow_mapping_root_reads_unreadable_with_its_code(repo: Path) -> None:
    write_plan(repo)
    write_plan(repo, "plain")
    commit_all(repo, "agent plans")
    with controller(repo) as ctl:
        ctl.run_once()
    doc = yamlio.read_yaml(git(repo, "show", "HEAD:plans/greet/PLAN.yml")).data
    write_plan(repo, text=json.dumps(doc) + "\n")  # the same parse, a flow mapping at the top
    commit_all(repo, "agent respells its plan as JSON")
    rows = _rows(repo)
    assert rows["plans/greet"]["status"] == "unreadable", rows["plans/greet"]
    assert rows["plans/greet"]["problem"]["code"].startswith("E_"), rows["plans/greet"]
    assert rows["plans/plain"]["status"] == "pending_approval"  # the control
