"""A plan's writers follow its bytes through git's own rename/copy pairing wherever they are
parked between plan paths (round 50, issue 11): outside the plans folder, under another
name in a plan folder, for two and three hops, an edit in place of the parked file adding
its editor; a plan pinning the carried library by hash counts them too. A repository that
never parks plan bytes runs no git command for it."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from controller.git.gitrepo import GitRepo
from controller.git.history import HistoryIndex
from controller.git.lifecycle import Lifecycle
from tests.support.gitkit import AGENT, ALICE, BOB, PLAN, commit_all, git, write_plan

ALICE_EMAIL, AGENT_EMAIL, BOB_EMAIL = ALICE[1], AGENT[1], BOB[1]


def _index(tmp_path: Path, name: str = "index.sqlite") -> HistoryIndex:
    return HistoryIndex(tmp_path / name, plans_dir="plans", controller_email="plangate@localhost")


def _scan(repo: Path, tmp_path: Path, name: str = "index.sqlite") -> HistoryIndex:
    index = _index(tmp_path, name)
    index.scan(GitRepo(repo), git(repo, "rev-parse", "HEAD").strip())
    return index


def _mv(repo: Path, src: str, dst: str) -> None:
    (repo / dst).parent.mkdir(parents=True, exist_ok=True)
    git(repo, "mv", src, dst)


def _edit(repo: Path, path: str) -> None:
    file = repo / path
    file.write_text(file.read_text().replace("Say hello to the world", "Say hello, tidied"))


def _writers(index: HistoryIndex, plan_id: str) -> set[str]:
    state = index.plans[plan_id]
    found = set(state.changers)
    assert state.hash is not None
    return found | set(index.authors.get(state.hash, frozenset()))


HOPS = {
    "outside-2": ["drafts/x/PLAN.yml"],
    "notes-2": ["plans/greet/notes.txt"],
    "outside-3": ["drafts/x/PLAN.yml", "elsewhere/y.txt"],
    "notes-outside-3": ["plans/greet/PLAN.draft.yml", "drafts/z/PLAN.yml"],
    "source-3": ["plans/greet/old/PLAN.json", "plans/other/review.md"],
}


@pytest.mark.parametrize("hops", list(HOPS.values()), ids=list(HOPS))
def test_writers_follow_parked_bytes_hop_by_hop(
    repo: Path, tmp_path: Path, hops: list[str]
) -> None:
    write_plan(repo)
    commit_all(repo, "alice writes her plan", ALICE)
    here = "plans/greet/PLAN.yml"
    for via in hops:
        _mv(repo, here, via)
        commit_all(repo, f"agent parks at {via}", AGENT)
        here = via
    _mv(repo, here, "plans/greet2/PLAN.yml")
    _edit(repo, "plans/greet2/PLAN.yml")
    commit_all(repo, "agent carries it back with an edit", AGENT)
    index = _scan(repo, tmp_path)
    assert ALICE_EMAIL in _writers(index, "plans/greet2")
    # incremental scans (one commit at a time) learn the same
    assert _scan_one_by_one(repo, tmp_path) >= {ALICE_EMAIL, AGENT_EMAIL}


def _scan_one_by_one(repo: Path, tmp_path: Path) -> set[str]:
    line = git(repo, "rev-list", "--first-parent", "--reverse", "HEAD").split()
    index = _index(tmp_path, "steps.sqlite")
    gitrepo = GitRepo(repo)
    for sha in line:
        index.scan(gitrepo, sha)
    index.close()
    index = _index(tmp_path, "steps.sqlite")  # reloaded: the parked paths were saved
    return _writers(index, "plans/greet2")


def test_an_edit_in_place_of_the_parked_file_adds_its_editor(repo: Path, tmp_path: Path) -> None:
    write_plan(repo)
    commit_all(repo, "alice writes her plan", ALICE)
    _mv(repo, "plans/greet/PLAN.yml", "drafts/x/PLAN.yml")
    commit_all(repo, "agent parks it", AGENT)
    (repo / "drafts/x/PLAN.yml").write_text(PLAN.replace("world", "planet", 1))
    commit_all(repo, "bob edits the parked file (no plan path touched)", BOB)
    _mv(repo, "drafts/x/PLAN.yml", "plans/greet2/PLAN.yml")
    _edit(repo, "plans/greet2/PLAN.yml")
    commit_all(repo, "agent carries it back", AGENT)
    assert {ALICE_EMAIL, BOB_EMAIL} <= _writers(_scan(repo, tmp_path), "plans/greet2")


def test_a_plan_pinning_the_carried_library_counts_its_writers(repo: Path, tmp_path: Path) -> None:
    write_plan(repo)
    commit_all(repo, "alice writes her plan", ALICE)
    _mv(repo, "plans/greet/PLAN.yml", "plans/greet/notes.txt")
    commit_all(repo, "agent parks it", AGENT)
    _mv(repo, "plans/greet/notes.txt", "plans/lib/PLAN.yml")
    _edit(repo, "plans/lib/PLAN.yml")
    commit_all(repo, "agent makes a library of it", AGENT)
    index = _scan(repo, tmp_path)
    library = index.plans["plans/lib"]
    assert library.hash is not None
    # the hash a parent pins: whoever approves the parent approves the pinned version
    assert ALICE_EMAIL in index.authors.get(library.hash, frozenset())


def test_bytes_that_vanish_are_no_longer_followed(repo: Path, tmp_path: Path) -> None:
    write_plan(repo)
    commit_all(repo, "alice writes her plan", ALICE)
    _mv(repo, "plans/greet/PLAN.yml", "drafts/x/PLAN.yml")
    commit_all(repo, "agent parks it", AGENT)
    index = _scan(repo, tmp_path)
    assert set(index._parked) == {"drafts/x/PLAN.yml"}
    git(repo, "rm", "-q", "drafts/x/PLAN.yml")
    write_plan(repo, "unrelated", PLAN.replace("Greet", "Unrelated"))
    commit_all(repo, "agent deletes it", AGENT)
    index.scan(GitRepo(repo), git(repo, "rev-parse", "HEAD").strip())
    assert index._parked == {}


@pytest.fixture
def commands(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[list[str]]]:
    """Every git command run (its arguments, ``-c`` options left out)."""
    seen: list[list[str]] = []
    real = subprocess.Popen

    class Counting(real):  # type: ignore[misc,valid-type]
        def __init__(self, args: Any, *rest: Any, **kwargs: Any) -> None:
            argv = [str(a) for a in args] if isinstance(args, (list, tuple)) else [str(args)]
            if argv and argv[0] == "git":
                seen.append(argv)
            super().__init__(args, *rest, **kwargs)

    monkeypatch.setattr(subprocess, "Popen", Counting)
    yield seen


def _parking(argv: list[str]) -> bool:
    return ("diff-tree" in argv and "-M" in argv) or any(a.startswith(":(literal)") for a in argv)


def test_a_repo_that_parks_nothing_asks_one_pairing_per_scan(
    repo: Path, tmp_path: Path, commands: list[list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """No bytes parked: the scan's only extra git command is ONE ``diff-tree --stdin`` for
    all the commits that make plans (round 51: a plan takes the writers of what git pairs it
    from), none path-limited; a scan whose commits make no plan asks nothing."""
    write_plan(repo)
    write_plan(repo, "other", PLAN.replace("Greet", "Other"))
    commit_all(repo, "alice writes", ALICE)
    for n in range(5):
        write_plan(repo, f"more{n}", PLAN.replace("Greet", f"More {n}"))
        commit_all(repo, f"agent writes more{n}", AGENT)
    _edit(repo, "plans/greet/PLAN.yml")
    commit_all(repo, "agent edits", AGENT)
    _mv(repo, "plans/greet/PLAN.yml", "plans/moved/PLAN.yml")
    _edit(repo, "plans/moved/PLAN.yml")
    (repo / "plans/other/notes.txt").write_text("notes\n")
    commit_all(repo, "agent moves one plan to another plan folder and writes notes", AGENT)
    (repo / "docs").mkdir()
    (repo / "docs/x.md").write_text("x\n")
    commit_all(repo, "outside the plans folder", BOB)
    commands.clear()
    _scan(repo, tmp_path, "a.sqlite")
    with_rule = [argv for argv in commands]
    commands.clear()
    follow = Lifecycle._follow_parked
    monkeypatch.setattr(Lifecycle, "_follow_parked", lambda self, repo, record, ctl: {})
    _scan(repo, tmp_path, "b.sqlite")
    without = [argv for argv in commands]
    extra = [argv for argv in with_rule if _parking(argv)]
    assert len(extra) == 1 and "--stdin" in extra[0], extra
    assert len(with_rule) == len(without) + 1, (with_rule, without)
    # later scans of commits that make no plan (an edit, a file outside) ask nothing more
    _edit(repo, "plans/other/PLAN.yml")
    commit_all(repo, "agent edits other", AGENT)
    (repo / "docs/y.md").write_text("y\n")
    commit_all(repo, "outside again", BOB)
    commands.clear()
    monkeypatch.setattr(Lifecycle, "_follow_parked", follow)
    _scan(repo, tmp_path, "a.sqlite")
    assert not any(_parking(argv) for argv in commands), commands


def test_a_parked_plan_costs_its_pairings_and_a_path_limited_walk(
    repo: Path, tmp_path: Path, commands: list[list[str]]
) -> None:
    write_plan(repo)
    commit_all(repo, "alice writes her plan", ALICE)
    _mv(repo, "plans/greet/PLAN.yml", "drafts/x/PLAN.yml")
    commit_all(repo, "agent parks it", AGENT)
    _mv(repo, "drafts/x/PLAN.yml", "plans/greet2/PLAN.yml")
    _edit(repo, "plans/greet2/PLAN.yml")
    commit_all(repo, "agent carries it back", AGENT)
    write_plan(repo, "later", PLAN.replace("Greet", "Later"))
    commit_all(repo, "a later plan: nothing parked any more", AGENT)
    commands.clear()
    _scan(repo, tmp_path)
    extra = [argv for argv in commands if _parking(argv)]
    # the whole-tree pairings where the plan leaves and where it comes back (one batch), one
    # path-limited walk; nothing once no bytes are parked (round 54: the later commit only
    # adds a plan and changes nothing outside the plans folder: no pairing is asked for it)
    assert len(extra) == 2, [" ".join(a) for a in extra]
    assert "--stdin" in extra[0], extra


def _asked_ahead(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The commits each ``diff-tree --stdin`` pairing is asked for."""
    asked: list[str] = []
    real = GitRepo.run

    def run(self: GitRepo, *args: str, **kwargs: Any) -> str:
        if "diff-tree" in args and "--stdin" in args:
            asked.extend(line.split()[0] for line in kwargs["input"].decode().splitlines())
        return real(self, *args, **kwargs)

    monkeypatch.setattr(GitRepo, "run", run)
    return asked


def test_a_cold_scan_asks_no_pairing_where_no_source_could_be(
    repo: Path, tmp_path: Path, commands: list[list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Round 54's cost: a commit whose root trees change nothing outside the plans folder and
    which only adds files inside it can pair nothing without ``--find-copies-harder``: the
    cold scan asks git nothing for it (10,000 such commits inflated the 10,000-plan tree
    twice each). A commit that also changes a file outside, or removes one inside, is asked:
    only those are in the one ``diff-tree --stdin``."""
    write_plan(repo)
    commit_all(repo, "alice writes", ALICE)
    for n in range(4):
        write_plan(repo, f"more{n}", PLAN.replace("Greet", f"More {n}"))
        commit_all(repo, f"agent adds more{n}, nothing else", AGENT)
    commands.clear()
    _scan(repo, tmp_path, "quiet.sqlite")
    assert not [argv for argv in commands if _parking(argv)], commands
    (repo / "drafts").mkdir()
    (repo / "drafts/x.yml").write_text("scratch\n")
    write_plan(repo, "beside", PLAN.replace("Greet", "Beside"))
    commit_all(repo, "agent adds a plan and a file outside", AGENT)
    git(repo, "rm", "-q", "plans/more0/PLAN.yml")
    write_plan(repo, "after", PLAN.replace("Greet", "After"))
    commit_all(repo, "agent removes one plan and adds another", AGENT)
    write_plan(repo, "last", PLAN.replace("Greet", "Last"))
    commit_all(repo, "agent adds one more, nothing else", AGENT)
    commands.clear()
    asked = _asked_ahead(monkeypatch)
    _scan(repo, tmp_path, "loud.sqlite")
    extra = [argv for argv in commands if _parking(argv)]
    assert len(extra) == 1 and "--stdin" in extra[0], extra
    expected = git(repo, "rev-list", "--first-parent", "HEAD~1", "-2").split()
    assert sorted(asked) == sorted(expected), (asked, expected)


def test_an_approvers_text_written_over_a_scratch_file_keeps_her(
    repo: Path, tmp_path: Path
) -> None:
    """Round 54: a change git would not pair with the path's old version is where the text
    was made: her plan copied over the agent's scratch file (an ``M``) brings her as writer."""
    write_plan(repo)
    commit_all(repo, "alice writes her plan", ALICE)
    (repo / "drafts").mkdir()
    (repo / "drafts/x.yml").write_text("scratch\n")
    commit_all(repo, "the agent keeps a scratch file", AGENT)
    (repo / "drafts/x.yml").write_text((repo / "plans/greet/PLAN.yml").read_text())
    _edit(repo, "drafts/x.yml")
    commit_all(repo, "agent writes her text over its scratch file", AGENT)
    _mv(repo, "drafts/x.yml", "plans/greet2/PLAN.yml")
    commit_all(repo, "agent submits", AGENT)
    assert ALICE_EMAIL in _writers(_scan(repo, tmp_path), "plans/greet2")


LIBRARY = """\
plan:
  name: stage
  task: a library that stages four values
  status: draft
inputs: {a: own-1, b: own-2}
available_tools:
  - name: greet
actions:
  - id: 1
    tool: greet
    why: "stage the values"
    params: {who: "$<inputs.a>", what: "$<inputs.b>"}
"""


@pytest.mark.parametrize("readable", [True, False])
def test_a_plan_pinning_a_version_the_commit_cannot_read_is_unjudged(
    repo: Path, tmp_path: Path, readable: bool
) -> None:
    """Round 63's ``lib-later``: the rework pins a library by the hash of a version (her
    values its input defaults) committed only LATER; what the pin gets is unknown at the
    rework, so the new plan is compared with nothing and takes the writers of every folder
    the commit removed. A pin the commit reads is compared as before (not hers)."""
    write_plan(repo)
    commit_all(repo, "alice writes her plan", ALICE)
    write_plan(repo, "stage", LIBRARY)
    commit_all(repo, "agent's library", AGENT)
    from controller.plan import hashing, yamlio

    text = LIBRARY if readable else LIBRARY.replace("own-1", "her value")
    digest = hashing.plan_hash(yamlio.read_yaml(text, "PLAN.yml").data)
    git(repo, "rm", "-q", "-r", "plans/greet")
    parent = (
        "plan:\n  name: run\n  task: run the stage library\n  status: draft\n"
        "actions:\n  - id: 1\n    plan: {path: plans/stage, hash: '" + digest + "'}\n"
        '    why: "run the staged library"\n'
    )
    write_plan(repo, "run", parent)
    commit_all(repo, "agent removes her draft, pins the library", AGENT)
    assert (ALICE_EMAIL in _writers(_scan(repo, tmp_path), "plans/run")) is not readable
