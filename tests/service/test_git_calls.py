"""The git processes a run spawns, counted in front of git (:mod:`tests.support.gitcalls`;
issue 17: by git's own ``GIT_TRACE`` before round 111, which no git child of plangate gets).

A run's outcome is committed only when the plan file holds no edits of anyone's: the check
compares the file's bytes with the commit and with the engine's own last write, and asks
git's attributes (``git check-attr``, for its built-in conversions: round 75's line ends,
round 76's ``ident`` and ``working-tree-encoding``) only when the bytes match neither. It
asked for every run before: a 1,000-plan burst spawned 1,027 ``check-attr`` processes.
(Each commit the controller writes into the working tree still asks once, for the form git
would check its files out in: docs/performance.md.) Round 78: bytes equal to the commit are
clean only if git's conversion reads them as the blob (or the index's stat data vouches), so
where any attribute can apply a pass asks its plan files' attributes once, together, and its
commits reuse the answer; where none can, nothing more is asked.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tests.support.gitcalls import git_commands, trace_git_calls
from tests.support.gitenv import ALICE, commit_all, git
from tests.support.gitkit import approve, head_plan, run_once, submitted, write_plan


def _traced_pass(repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """One ``run --once`` pass; the git commands it spawned, by subcommand, and the commits
    it made (``made``)."""
    before = int(git(repo, "rev-list", "--count", "HEAD"))
    with monkeypatch.context() as patch:
        log = trace_git_calls(tmp_path, patch)
        run_once(repo)
    commands: Counter[str] = Counter(made=int(git(repo, "rev-list", "--count", "HEAD")) - before)
    commands.update(git_commands(log))
    return commands


def test_a_run_asks_no_attributes_when_the_file_is_as_committed(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    submitted(repo)
    approve(repo)
    commands = _traced_pass(repo, tmp_path, monkeypatch)
    assert head_plan(repo)["execution"]["status"] == "completed"
    assert commands["made"] == 2, commands  # start and outcome
    # no attribute file anywhere: git's conversion is the config's alone, asked of nobody,
    # for the outcome's check and for each commit's working-tree write (issue 17)
    assert commands["check-attr"] == 0, commands
    # the approving pass reads its few new commits in-process: no ``rev-parse`` of a tree,
    # no ``git log`` of the first-parent chain or of policy records beside the scan's
    assert commands["rev-parse"] == 0, commands


ELSEWHERE = {
    "info": lambda repo, mine: repo / ".git" / "info" / "attributes",
    "global": lambda repo, mine: mine / "xdg" / "git" / "attributes",
    "attributesFile": lambda repo, mine: mine / "attrs",
}


@pytest.mark.parametrize("place", list(ELSEWHERE))
def test_an_attribute_from_outside_the_tree_still_shapes_what_the_controller_writes(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, place: str
) -> None:
    """The shortcut asks "could any attribute apply?" of every place git reads: with
    ``eol=crlf`` set in ``info/attributes``, the global file or ``core.attributesFile``,
    the controller's commits write the plan file with CRLF, as ``git checkout`` would, and
    the working tree stays clean."""
    mine = tmp_path / "elsewhere"  # this test's own: the session's HOME is shared
    target = ELSEWHERE[place](repo, mine)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("PLAN.yml text eol=crlf\n")
    if place == "attributesFile":
        git(repo, "config", "core.attributesFile", str(target))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(mine / "xdg"))
    submitted(repo)
    approve(repo)
    commands = _traced_pass(repo, tmp_path, monkeypatch)
    assert head_plan(repo)["execution"]["status"] == "completed"
    assert commands["check-attr"] >= 1, commands
    assert b"\r\n" in (repo / "plans" / "greet" / "PLAN.yml").read_bytes()
    assert git(repo, "status", "--porcelain") == ""


def test_a_file_git_converts_is_still_read_as_git_stores_it(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A CRLF checkout under ``eol=crlf`` differs from its LF blob byte for byte: the pass
    asks git's attributes, finds the file clean, and the run's outcome is committed (its
    check before the outcome knows the start commit's own checkout: the run writes nothing
    into the tree, round 81)."""
    plan = write_plan(repo)
    (repo / ".gitattributes").write_text("plans/*/PLAN.yml text eol=crlf\n")
    commit_all(repo, "agent plan")
    plan.unlink()
    git(repo, "checkout", "-q", "--", ".")
    run_once(repo)
    approve(repo, who=ALICE)
    commands = _traced_pass(repo, tmp_path, monkeypatch)
    assert head_plan(repo)["execution"]["status"] == "completed"
    assert 1 <= commands["check-attr"] <= commands["made"], commands
    assert git(repo, "status", "--porcelain") == ""


def test_attributes_asked_once_a_pass_where_a_gitattributes_exists(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Round 78: bytes equal to the commit are clean only if git's conversion reads them as
    the blob (or the index's stat data vouches), so a repository with a ``.gitattributes``
    has its plan files' attributes asked: once for the pass's files together, and the
    commits' working-tree writes reuse that answer (no more processes than before)."""
    (repo / ".gitattributes").write_text("*.png binary\n")
    commit_all(repo, "attributes")
    submitted(repo)
    approve(repo)
    commands = _traced_pass(repo, tmp_path, monkeypatch)
    assert head_plan(repo)["execution"]["status"] == "completed"
    assert commands["made"] == 2, commands
    assert commands["check-attr"] <= commands["made"], commands
