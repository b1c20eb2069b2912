"""The daemon's source finder follows the branch by its changes and answers as a whole listing.

``SourceFinder.committed`` lists the plans folder once, then reads each new head as the files
added and deleted since the last one (issue 17: listing 10,000 folders and judging each was
40% of an approving pass). Its answer (which folders hold a source to convert, which wait and
why) must be exactly a fresh listing's at every head, whatever the history does: sources
added, renamed, twinned (in one folder, or in twin folders: round 82), replaced by a folder,
a plan file written beside them, the plans folder removed, the branch rewound to an
unrelated commit, and the controller's own commits carried over by ``advance``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.git.gitrepo import GitRepo
from controller.git.records import Person
from controller.service.sources import SourceFinder
from tests.support.gitenv import commit_all, git

SOURCE = '{"goal": "g", "steps": []}\n'


def _fresh(repo: GitRepo, head: str) -> tuple[dict[str, str], dict[str, tuple[str, str]]]:
    finder = SourceFinder("plans")
    return finder.committed(repo, head), dict(finder.held)


def _write(root: Path, files: dict[str, str | None]) -> None:
    for path, text in files.items():
        target = root / path
        if text is None:
            if target.is_dir():
                git(root, "rm", "-r", "-q", path)
            else:
                git(root, "rm", "-q", path)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)


#: each step: files written (None: removed), committed; the finder must agree after each
STEPS: list[dict[str, str | None]] = [
    {"plans/a/PLAN.json": SOURCE, "plans/b/PLAN.yml": "plan: b\n", "plans/c/PLAN.md": "x\n"},
    {"plans/a/plan.JSON": SOURCE},  # a twin: both wait E_PLAN_AMBIGUOUS
    {"plans/a/plan.JSON": None, "plans/c/PLAN.yml": "plan: c\n"},  # twin gone; c has a plan
    {"plans/d/plan.json": SOURCE, "plans/e/sub/PLAN.toon": "goal: g\n"},  # a lone odd name
    {"plans/d/plan.json": None, "plans/d/PLAN.json": SOURCE},  # renamed right
    {"plans/e/sub/PLAN.toon": None, "plans/e/sub/PLAN.toon/x": "folder now\n"},  # file->folder
    {"plans/f /PLAN.json": SOURCE, "plans/g/PLAN.yml": "plan: g\n", "plans/g/PLAN.json": SOURCE},
    {"plans/g/PLAN.yml": None},  # the source alone again
    {"plans/a/PLAN.json": None, "plans/b/PLAN.yml": None},  # folders emptied
    {"plans/h/PLAN.json": SOURCE, "plans/h/EXECUTION_LOG.md": "log\n"},
    # twin folders (round 82): a twin source or plan file holds the source, its removal frees it
    {"plans/tw/PLAN.md": "x\n", "plans/TW/PLAN.json": SOURCE, "plans/Y/PLAN.yml": "plan: y\n"},
    {"plans/TW/PLAN.json": None, "plans/y/PLAN.json": SOURCE},  # tw freed; y held by Y's plan
    {"plans/Y/PLAN.yml": None, "plans/longfolder/PLAN.md": "x\n", "plans/LONGFO~1/x": "n\n"},
    {"plans/LONGFO~1/PLAN.json": SOURCE, "plans/team/z/PLAN.md": "x\n"},  # an 8.3 twin
    {"plans/Team/z/PLAN.yml": "plan: z\n", "plans/LONGFO~1/PLAN.json": None},  # a twin above
]


def test_every_head_answers_as_a_fresh_listing(repo: Path) -> None:
    git_repo = GitRepo(repo)
    finder = SourceFinder("plans")
    for step in STEPS:
        _write(repo, step)
        head = commit_all(repo, "step")
        answer = finder.committed(git_repo, head)
        assert (answer, finder.held) == _fresh(git_repo, head), step
    assert finder.committed(git_repo, head) == _fresh(git_repo, head)[0]  # cached
    git(repo, "rm", "-r", "-q", "plans")  # the plans folder gone
    head = commit_all(repo, "no plans")
    assert finder.committed(git_repo, head) == {} and finder.held == {}


def test_a_rewound_or_unrelated_head_is_listed_whole(repo: Path) -> None:
    git_repo = GitRepo(repo)
    finder = SourceFinder("plans")
    _write(repo, {"plans/a/PLAN.json": SOURCE})
    first = commit_all(repo, "a")
    assert finder.committed(git_repo, first) == {"plans/a": "plans/a/PLAN.json"}
    git(repo, "checkout", "-q", "--orphan", "other")
    git(repo, "rm", "-r", "-q", "--cached", ".")
    _write(repo, {"plans/z/PLAN.toon": "goal: g\n"})
    git(repo, "add", "plans/z")
    other = commit_all(repo, "unrelated")
    assert finder.committed(git_repo, other) == _fresh(git_repo, other)[0]
    assert finder.committed(git_repo, first) == {"plans/a": "plans/a/PLAN.json"}  # back again


@pytest.mark.parametrize("held", [False, True])
def test_the_controllers_own_commit_is_carried_over_and_judged_again(
    repo: Path, held: bool
) -> None:
    """``advance`` settles the folders the controller wrote; the next head judges them from
    the tree, as a whole listing would (a held folder stays held)."""
    git_repo = GitRepo(repo)
    finder = SourceFinder("plans")
    files = {
        "plans/a/PLAN.json": SOURCE,
        "plans/a/EXECUTION_LOG.md": "old\n",
        "plans/k/PLAN.md": "x\n",
    }
    if held:
        files["plans/a/plan.json "] = SOURCE
    _write(repo, files)
    head = commit_all(repo, "sources")
    assert finder.committed(git_repo, head) == _fresh(git_repo, head)[0]
    written: dict[str, bytes | None] = {"plans/a/EXECUTION_LOG.md": b"note\n"}  # no new entry
    sha = git_repo.commit_files(
        branch="main", parent=head, files=written, message="plangate: note",
        author=Person("plangate", "plangate@localhost"),
    )  # fmt: skip
    assert sha is not None
    git(repo, "reset", "-q", "--hard", sha)
    finder.advance(head, sha, written)
    assert "plans/a" not in finder.committed(git_repo, sha)  # carried over, not listed
    _write(repo, {"plans/m/PLAN.json": SOURCE})
    later = commit_all(repo, "another source")
    assert (finder.committed(git_repo, later), finder.held) == _fresh(git_repo, later)


def test_a_folder_of_one_file_is_held_as_its_name(repo: Path) -> None:
    """perf80mem: a plan folder's one entry is held as its name, not a dict per folder; a
    second file at or below an entry makes it a count again, and back, as a whole listing of
    each head holds it."""
    git_repo = GitRepo(repo)
    finder = SourceFinder("plans")
    steps: list[dict[str, str | None]] = [
        {"plans/a/PLAN.yml": "plan: a\n", "plans/x/sub/one": "1\n"},
        {"plans/x/sub/two": "2\n", "plans/a/PLAN.json": SOURCE},
        {"plans/x/sub/one": None, "plans/a/PLAN.json": None},
        {"plans/x/sub/two": None, "plans/x/PLAN.md": "x\n"},
    ]
    for step in steps:
        _write(repo, step)
        head = commit_all(repo, "step")
        finder.committed(git_repo, head)
        whole = SourceFinder("plans")
        whole.committed(git_repo, head)
        assert finder._entries == whole._entries, step
        if step.get("plans/x/sub/two"):  # two files below one entry
            assert finder._entries["plans/x"] == {"sub": 2}
            assert finder._entries["plans/a"] == {"PLAN.yml": 1, "PLAN.json": 1}
    assert finder._entries["plans/a"] == "PLAN.yml" and finder._entries["plans/x"] == "PLAN.md"
    assert finder._entries["plans/a"] is whole._entries["plans/a"]  # one copy of the name
