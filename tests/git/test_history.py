"""The incremental history index: scans only new commits, rebuilds on rewritten history,
and knows who changed each plan's content (including through merges)."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.errors import FirstParentSwapped
from controller.git.gitrepo import GitRepo
from controller.git.history import HistoryIndex
from controller.plan import yamlio
from tests.support.gitenv import identity
from tests.support.gitkit import AGENT, ALICE, BOB, PLAN, commit_all, edit_status, git, write_plan


def _index(tmp_path: Path) -> HistoryIndex:
    return HistoryIndex(
        tmp_path / "index.sqlite", plans_dir="plans", controller_email="plangate@localhost"
    )


def test_scan_is_incremental_and_survives_restart(repo: Path, tmp_path: Path) -> None:
    write_plan(repo)
    commit_all(repo, "add", AGENT)
    gitrepo = GitRepo(repo)
    index = _index(tmp_path)
    assert index.scan(gitrepo, git(repo, "rev-parse", "HEAD").strip()) == 1
    index.close()
    edit_status(repo, "greet", "draft")
    commit_all(repo, "back to draft", AGENT)
    (repo / "other").write_text("x")
    commit_all(repo, "not a plan", BOB)
    index = _index(tmp_path)
    assert index.plans["plans/greet"].status == "pending_approval"
    assert index.scan(gitrepo, git(repo, "rev-parse", "HEAD").strip()) == 1  # path-limited
    assert index.plans["plans/greet"].status == "draft"


def test_rewritten_history_triggers_a_full_rescan(repo: Path, tmp_path: Path) -> None:
    write_plan(repo)
    commit_all(repo, "add", AGENT)
    edit_status(repo, "greet", "draft")
    commit_all(repo, "draft", AGENT)
    gitrepo = GitRepo(repo)
    index = _index(tmp_path)
    index.scan(gitrepo, git(repo, "rev-parse", "HEAD").strip())
    assert index.plans["plans/greet"].status == "draft"
    git(repo, "reset", "-q", "--hard", "HEAD~1")
    (repo / "other").write_text("x")
    commit_all(repo, "rewritten", BOB)
    assert index.scan(gitrepo, git(repo, "rev-parse", "HEAD").strip()) == 1
    assert index.plans["plans/greet"].status == "pending_approval"


def test_a_flipped_merge_holds_the_scan_and_keeps_the_index(repo: Path, tmp_path: Path) -> None:
    """Round 63: the agent's `approved` on main, then a docs branch that merged main and main
    fast-forwarded to it: the approval would read as the merger's. The scan refuses the line
    (E_HISTORY_REWRITTEN) and the index stays at the tip it read; back there, it goes on."""
    write_plan(repo)
    commit_all(repo, "add", AGENT)
    git(repo, "switch", "-q", "-c", "docs")
    (repo / "NOTES.md").write_text("notes\n")
    commit_all(repo, "docs", ALICE)
    git(repo, "switch", "-q", "main")
    (repo / "other").write_text("x")
    commit_all(repo, "not a plan", BOB)  # the docs branch is older than the tip read
    gitrepo = GitRepo(repo)
    index = _index(tmp_path)
    read = git(repo, "rev-parse", "HEAD").strip()
    index.scan(gitrepo, read)
    edit_status(repo, "greet", "approved")
    commit_all(repo, "agent approves", AGENT)
    git(repo, "switch", "-q", "docs")
    git(repo, "merge", "-q", "--no-ff", "-m", "merge main", "main", env=identity(*ALICE))
    flipped = git(repo, "rev-parse", "HEAD").strip()
    with pytest.raises(FirstParentSwapped) as raised:
        index.scan(gitrepo, flipped)
    assert raised.value.code == "E_HISTORY_REWRITTEN" and read in str(raised.value)
    assert index.meta("last_commit") == read
    assert index.plans["plans/greet"].status == "pending_approval"
    git(repo, "switch", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "-m", "merge docs", "docs^1", env=identity(*ALICE))
    index.scan(gitrepo, git(repo, "rev-parse", "HEAD").strip())
    assert index.plans["plans/greet"].status == "approved"


def test_changers_include_merged_branch_commits_but_not_the_merger(
    repo: Path, tmp_path: Path
) -> None:
    git(repo, "switch", "-q", "-c", "feature")
    write_plan(repo)
    commit_all(repo, "agent writes", AGENT)
    path = repo / "plans/greet/PLAN.yml"
    path.write_text(path.read_text().replace("who: world", "who: bob's world"))
    commit_all(repo, "bob edits", BOB)
    git(repo, "switch", "-q", "main")
    (repo / "other").write_text("x")
    commit_all(repo, "main moves", ALICE)
    git(
        repo,
        "merge",
        "-q",
        "--no-ff",
        "-m",
        "merge",
        "feature",
        env={
            "GIT_AUTHOR_NAME": "Alice",
            "GIT_AUTHOR_EMAIL": "alice@example.com",
            "GIT_COMMITTER_NAME": "Alice",
            "GIT_COMMITTER_EMAIL": "alice@example.com",
        },
    )
    index = _index(tmp_path)
    index.scan(GitRepo(repo), git(repo, "rev-parse", "HEAD").strip())
    assert index.plans["plans/greet"].changers == ["agent@example.com", "bob@ops.example.com"]


def test_status_only_changes_do_not_make_a_changer(repo: Path, tmp_path: Path) -> None:
    write_plan(repo, text=PLAN)
    commit_all(repo, "add", AGENT)
    edit_status(repo, "greet", "draft")
    commit_all(repo, "draft", BOB)
    index = _index(tmp_path)
    index.scan(GitRepo(repo), git(repo, "rev-parse", "HEAD").strip())
    assert index.plans["plans/greet"].changers == ["agent@example.com"]


def test_a_cold_scan_cut_in_halves_builds_the_same_index(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A long cold scan is walked by two git processes at once (two halves of the
    first-parent chain); the index must be exactly the one a single walk builds, merges and
    plan versions shared between the halves included."""
    from dataclasses import asdict

    from controller.git import history

    for i in range(6):
        write_plan(repo, f"p{i}")
        commit_all(repo, f"add p{i}", AGENT)
        if i % 2:
            edit_status(repo, f"p{i - 1}", "approved")
            commit_all(repo, f"approve p{i - 1}", ALICE)
    git(repo, "switch", "-q", "-c", "side")
    write_plan(repo, "merged")
    commit_all(repo, "on a branch", BOB)
    git(repo, "switch", "-q", "main")
    (repo / "notes.txt").write_text("main moved\n")
    commit_all(repo, "notes", BOB)
    git(repo, "merge", "-q", "--no-ff", "-m", "merge side", "side")
    edit_status(repo, "p4", "draft")
    commit_all(repo, "p4 back to draft", AGENT)
    gitrepo = GitRepo(repo)
    head = git(repo, "rev-parse", "HEAD").strip()

    def cold(split_min: int, name: str) -> tuple[int, dict[str, object]]:
        monkeypatch.setattr(history, "SPLIT_MIN", split_min)
        index = HistoryIndex(
            tmp_path / name, plans_dir="plans", controller_email="plangate@localhost"
        )
        count = index.scan(gitrepo, head)
        plans = {pid: asdict(state) for pid, state in index.plans.items()}
        index.close()
        return count, plans

    whole = cold(10_000, "whole.sqlite")
    halves = cold(2, "halves.sqlite")
    assert len(history._segments(gitrepo, None, head)) == 2  # really cut (SPLIT_MIN is 2)
    assert halves == whole
    assert whole[0] == 11 and whole[1]["plans/p2"]["status"] == "approved"


def test_a_file_name_cannot_forge_a_controller_commit(repo: Path, tmp_path: Path) -> None:
    """A file name may hold any byte but NUL and '/', the log format's separators too: a
    name that spells out a commit must not make the next file's change look like one the
    controller made (which sets any status without an approval)."""
    write_plan(repo, "p")
    commit_all(repo, "add p", AGENT)
    fake = "\x1f".join(["f" * 40, "", "plangate", "plangate@localhost", "0"])
    fake += "\x1f" + "\x1f".join(["plangate", "plangate@localhost", "0", "forged", ""])
    (repo / "plans" / f"a\x1e{fake}\x1d").write_text("x\n")  # sorts before plans/p
    edit_status(repo, "p", "executing")
    commit_all(repo, "sneak", AGENT)
    index = _index(tmp_path)
    assert index.scan(GitRepo(repo), git(repo, "rev-parse", "HEAD").strip()) == 2
    state = index.plans["plans/p"]
    assert state.status == "pending_approval"  # executing by a human is illegal: ignored
    assert state.last_commit == git(repo, "rev-parse", "HEAD").strip()


def test_a_scan_that_fails_while_applying_leaves_the_index_as_saved(
    repo: Path, tmp_path: Path
) -> None:
    """An error part way through applying (git, or the audit's event handler) must not leave
    some commits applied in memory: the next scan would apply them a second time."""
    from dataclasses import asdict

    write_plan(repo, "p")
    commit_all(repo, "add p", AGENT)
    edit_status(repo, "p", "approved")
    commit_all(repo, "approve p", ALICE)
    edit_status(repo, "p", "completed")
    commit_all(repo, "complete p by hand", BOB)
    gitrepo = GitRepo(repo)
    head = git(repo, "rev-parse", "HEAD").strip()

    def failing(event: object) -> None:
        if getattr(event, "kind", "") == "illegal":
            raise RuntimeError("handler failed")

    index = _index(tmp_path)
    with pytest.raises(RuntimeError):
        index.scan(gitrepo, head, failing)
    assert index.plans == {}
    assert index.scan(gitrepo, head) == 3
    clean = HistoryIndex(
        tmp_path / "clean.sqlite", plans_dir="plans", controller_email="plangate@localhost"
    )
    clean.scan(gitrepo, head)
    assert asdict(index.plans["plans/p"]) == asdict(clean.plans["plans/p"])
    # Bob's illegal "completed" is ignored, and Alice's approval, which the controller never
    # acted on and the file no longer says, lapses (tests/git/test_lifecycle_withdrawals.py)
    assert index.plans["plans/p"].status == "pending_approval"


@pytest.mark.parametrize("incremental", [False, True])
def test_an_author_on_a_merged_branch_is_kept_when_main_made_the_same_change(
    repo: Path, tmp_path: Path, incremental: bool
) -> None:
    """Alice's edit on a side branch and the agent's identical edit on main: the merge
    changes nothing (git's default history simplification hides the side branch), yet Alice
    produced that content, and the author index must say so, cold or incremental."""
    write_plan(repo)
    commit_all(repo, "add", AGENT)
    index = _index(tmp_path)
    if incremental:
        index.scan(GitRepo(repo), git(repo, "rev-parse", "HEAD").strip())
    edited = PLAN.replace("to the world", "to everyone")
    git(repo, "switch", "-q", "-c", "side")
    write_plan(repo, text=edited)
    commit_all(repo, "alice edits", ALICE)
    git(repo, "switch", "-q", "main")
    write_plan(repo, text=edited)
    commit_all(repo, "agent makes the same edit", AGENT)
    git(repo, "merge", "-q", "--no-ff", "-m", "merge side", "side")
    index.scan(GitRepo(repo), git(repo, "rev-parse", "HEAD").strip())
    content = index.plans["plans/greet"].hash
    assert content is not None
    assert ALICE[1] in index.authors[content] and AGENT[1] in index.authors[content]


def test_an_approval_on_a_merged_branch_does_not_make_the_approver_an_author(
    repo: Path, tmp_path: Path
) -> None:
    """The usual pull request: Alice sets `approved` on a branch and it is merged. A status
    edit writes no content: she is no author of the plan (merged branches are walked for
    authors, but only commits that changed hashed content count)."""
    write_plan(repo)
    commit_all(repo, "add", AGENT)
    git(repo, "switch", "-q", "-c", "approve")
    edit_status(repo, "greet", "approved")
    commit_all(repo, "approve", ALICE)
    git(repo, "switch", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "-m", "merge approval", "approve", env=identity(*BOB))
    index = _index(tmp_path)
    index.scan(GitRepo(repo), git(repo, "rev-parse", "HEAD").strip())
    content = index.plans["plans/greet"].hash
    assert content is not None and ALICE[1] not in index.authors.get(content, set())


def test_a_cold_scan_keeps_one_copy_of_equal_values(repo: Path, tmp_path: Path) -> None:
    """50,000 plans repeat a few statuses, emails and author sets: after a cold scan the
    index holds each once, and no plan version's facts (they are parsed again when needed)."""
    write_plan(repo, "a")
    write_plan(repo, "b", text=PLAN.replace("Say hello to the world", "Say hello again"))
    commit_all(repo, "two plans", AGENT)
    index = _index(tmp_path)
    index.scan(GitRepo(repo), git(repo, "rev-parse", "HEAD").strip())
    a, b = index.plans["plans/a"], index.plans["plans/b"]
    assert a.hash != b.hash and index._facts == {}
    assert a.status is b.status and a.changers is b.changers  # one list, one email
    # One commit touched both: its id, its notes and the last event are held once.
    assert a.last_commit is b.last_commit and a.notes is b.notes and a.last_event is b.notes[-1]
    assert index.compactions == 1 and yamlio._PARSED.chars == 0  # nor their parses
    assert index.authors[a.hash] is index.authors[b.hash] == frozenset({"agent@example.com"})
    edit_status(repo, "a", "draft")
    commit_all(repo, "a back to draft", AGENT)  # the old version's facts are read again
    index.scan(GitRepo(repo), git(repo, "rev-parse", "HEAD").strip())
    assert index.plans["plans/a"].status == "draft"


def test_a_cold_scan_keeps_nothing_it_built_from_its_own_plans(repo: Path, tmp_path: Path) -> None:
    """perf80mem: after a cold scan the index holds no map built from the scan's plan states
    (the plans by blob held all of them through the reload, both maps their ids), no object
    read and no answer about a path: each is built again from the plans as loaded at its
    next look-up, and the next commit is judged as by a controller started afresh on the
    same index: an exact copy of a plan found by its blob takes its writers, a twin folder
    holds both plans."""
    import shutil

    from controller.git import lifecycle
    from controller.plan import names

    write_plan(repo, "a")
    write_plan(repo, "b", text=PLAN.replace("Say hello to the world", "Say hello again"))
    commit_all(repo, "two plans", AGENT)
    first = git(repo, "rev-parse", "HEAD").strip()
    shutil.copytree(repo / "plans/a", repo / "plans/copy")  # no source touched: by its blob
    write_plan(repo, "B", text=PLAN.replace("Say hello to the world", "Say hello twice"))
    commit_all(repo, "a copy and a twin", BOB)
    second = git(repo, "rev-parse", "HEAD").strip()

    gitrepo = GitRepo(repo)
    (tmp_path / "compacted").mkdir()
    index = _index(tmp_path / "compacted")
    index.scan(gitrepo, first)
    assert index.compactions == 1 and index._by_blob is None and index._twins is None
    assert gitrepo._kept == {} and lifecycle._unsafe_name.cache_info().currsize == 0
    assert names.fold.cache_info().currsize == 0
    assert lifecycle._claimed_folder.cache_info().currsize == 0
    index.scan(gitrepo, second)
    assert index._by_blob is not None and index._by_blob[0] is index.plans  # built again
    assert index._twins is not None

    (tmp_path / "restarted").mkdir()
    fresh = _index(tmp_path / "restarted")
    fresh.scan(GitRepo(repo), first)
    fresh.close()
    fresh = _index(tmp_path / "restarted")  # started afresh: the plans as saved
    fresh.scan(GitRepo(repo), second)
    assert index.plans == fresh.plans and index.authors == fresh.authors
    assert index.plans["plans/B"].ambiguous and index.plans["plans/b"].ambiguous
    # found by the blob map built again: the source's writer writes the copy's folder
    assert AGENT[1] in index.authors["folder:plans/copy"]
    index.close()
    fresh.close()


@pytest.mark.parametrize("cold", [True, False], ids=["cold-scan", "pass-by-pass"])
def test_a_decision_taken_back_on_a_merged_branch_lapses(
    repo: Path, tmp_path: Path, cold: bool
) -> None:
    """Round 64 ``br-pick``: Alice approves on her review branch and reverts it there; the
    branch is merged with a merge commit (the line never says `approved`). Her decision is
    kept lapsed, from the merge, so a copy of it on the line counts only from her own hand;
    a decision her branch kept (merged approved) is not marked."""
    from controller.git.lifecycle import UNBOUND, _approval_identity, _decision, _seen_fields

    write_plan(repo)
    write_plan(repo, slug="kept")
    commit_all(repo, "add", AGENT)
    index = _index(tmp_path)
    gitrepo = GitRepo(repo)
    if not cold:
        index.scan(gitrepo, git(repo, "rev-parse", "HEAD").strip())
    git(repo, "switch", "-q", "-c", "review")
    edit_status(repo, "greet", "approved")
    taken_back = commit_all(repo, "lgtm", ALICE)
    git(repo, "revert", "--no-edit", taken_back, env=identity(*ALICE))
    edit_status(repo, "kept", "approved")
    kept = commit_all(repo, "lgtm kept", ALICE)
    git(repo, "switch", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "-m", "merge review", "review", env=identity(*BOB))
    index.scan(gitrepo, git(repo, "rev-parse", "HEAD").strip())
    key = _approval_identity(gitrepo.commit(taken_back), _decision("plans/greet", "approved"))
    entry = _seen_fields(index.approval_ids[key])
    assert entry[0] == taken_back and entry[1] == UNBOUND and entry[3]
    other = _approval_identity(gitrepo.commit(kept), _decision("plans/kept", "approved"))
    assert other not in index.approval_ids


def _folder_writers(index: HistoryIndex, folder: str = "plans/greet") -> set[str]:
    from controller.git.planstate import folder_key

    return set(index.authors.get(folder_key(folder), frozenset()))


@pytest.mark.parametrize("cold", [True, False], ids=["cold-scan", "pass-by-pass"])
def test_a_note_a_merge_brings_is_written_by_its_committer_not_the_merger(
    repo: Path, tmp_path: Path, cold: bool
) -> None:
    """Round 65: the agent commits a note (a plan source beside PLAN.yml, a plan below it)
    into its plan's folder on Alice's review branch and Alice merges it. The note's writer is
    the agent (its file in the folder still bars it); Alice, who merged, wrote nothing there."""
    write_plan(repo)
    commit_all(repo, "add", AGENT)
    index = _index(tmp_path)
    gitrepo = GitRepo(repo)
    if not cold:
        index.scan(gitrepo, git(repo, "rev-parse", "HEAD").strip())
    git(repo, "switch", "-q", "-c", "review")
    edit_status(repo, "greet", "approved")
    commit_all(repo, "lgtm", ALICE)
    (repo / "plans/greet/NOTES.md").write_text("# notes\n")
    (repo / "plans/greet/PLAN.json").write_text('{"plan": {"name": "greet"}}\n')
    write_plan(repo, "greet/child")  # a plan below it is a file of its folder (round 41)
    commit_all(repo, "agent: notes", AGENT)
    git(repo, "switch", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "-m", "merge review", "review", env=identity(*ALICE))
    index.scan(gitrepo, git(repo, "rev-parse", "HEAD").strip())
    assert _folder_writers(index) == {AGENT[1]}


def test_a_note_the_merge_itself_writes_is_the_mergers(repo: Path, tmp_path: Path) -> None:
    """A merge that writes bytes no merged branch brought (a conflict in the note resolved by
    hand) wrote them: the merger is a writer of the folder, as in any commit. Since round 71
    (r72comment) the agent who wrote the plan file is one too: any byte of a plan's own file
    beside a plain status change is writing of its folder, its first bytes included."""
    write_plan(repo)
    commit_all(repo, "add", AGENT)
    git(repo, "switch", "-q", "-c", "side")
    (repo / "plans/greet/NOTES.md").write_text("side\n")
    commit_all(repo, "side note", BOB)
    git(repo, "switch", "-q", "main")
    (repo / "plans/greet/NOTES.md").write_text("main\n")
    commit_all(repo, "main note", BOB)
    git(repo, "merge", "-q", "--no-ff", "-m", "merge side", "side", check=False)
    (repo / "plans/greet/NOTES.md").write_text("resolved by alice\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-edit", env=identity(*ALICE))
    index = _index(tmp_path)
    index.scan(GitRepo(repo), git(repo, "rev-parse", "HEAD").strip())
    assert _folder_writers(index) == {AGENT[1], BOB[1], ALICE[1]}


def test_her_own_note_on_a_merged_branch_makes_her_a_writer(repo: Path, tmp_path: Path) -> None:
    """The merged commits' makers are the folder's writers: Alice's own note, merged by Bob,
    is hers (and not Bob's); the agent's, who wrote the plan file, since round 71."""
    write_plan(repo)
    commit_all(repo, "add", AGENT)
    git(repo, "switch", "-q", "-c", "review")
    (repo / "plans/greet/NOTES.md").write_text("# mine\n")
    commit_all(repo, "alice: notes", ALICE)
    git(repo, "switch", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "-m", "merge review", "review", env=identity(*BOB))
    index = _index(tmp_path)
    index.scan(GitRepo(repo), git(repo, "rev-parse", "HEAD").strip())
    assert _folder_writers(index) == {AGENT[1], ALICE[1]}


def test_the_index_knows_the_last_commit_of_each_file_of_the_record(
    repo: Path, tmp_path: Path
) -> None:
    """Round 66: the status row reads the record again when any file of it (the plan file,
    its EXECUTION_LOG.md) was last committed by someone else, so the index keeps the last
    commit of each: a commit of the log alone moves only the log's, and a folder copied with
    its log in one commit (the log sorts before PLAN.yml) gives the new plan both."""
    folder = write_plan(repo).parent
    commit_all(repo, "add", AGENT)
    added = _tip(repo)
    index = _index(tmp_path)
    index.scan(GitRepo(repo), added)
    assert index.plans["plans/greet"].record_commits() == (added,)
    (folder / "EXECUTION_LOG.md").write_text("# forged\n")
    commit_all(repo, "log only", AGENT)
    index.scan(GitRepo(repo), _tip(repo))
    state = index.plans["plans/greet"]
    assert (state.last_commit, state.log_commit) == (added, _tip(repo))
    copy = repo / "plans" / "copy"
    copy.mkdir()
    for name in ("PLAN.yml", "EXECUTION_LOG.md"):
        (copy / name).write_text((folder / name).read_text())
    commit_all(repo, "copy", AGENT)
    index.scan(GitRepo(repo), _tip(repo))
    assert index.plans["plans/copy"].record_commits() == (_tip(repo),) * 2
    index.close()
    assert _index(tmp_path).plans["plans/greet"].log_commit != ""  # saved with the index


def _tip(repo: Path) -> str:
    return git(repo, "rev-parse", "HEAD").strip()


@pytest.mark.parametrize("cold", [True, False], ids=["cold-scan", "pass-by-pass"])
def test_a_note_git_joined_cleanly_is_written_by_the_sides_not_the_merger(
    repo: Path, tmp_path: Path, cold: bool
) -> None:
    """Round 66 ``join-clean``: Bob edits the note's first line on a branch and its last line
    on main; Alice's merge joins both without a conflict: git's bytes, every line from one
    side or the base. Bob wrote them; Alice, who merged, wrote nothing in the folder."""
    write_plan(repo)
    (repo / "plans/greet/NOTES.md").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    commit_all(repo, "add", AGENT)
    index = _index(tmp_path)
    gitrepo = GitRepo(repo)
    if not cold:
        index.scan(gitrepo, git(repo, "rev-parse", "HEAD").strip())
    note = repo / "plans/greet/NOTES.md"
    git(repo, "switch", "-q", "-c", "side")
    note.write_text(note.read_text().replace("line 1\n", "line 1: side\n"))
    commit_all(repo, "side note", BOB)
    git(repo, "switch", "-q", "main")
    note.write_text(note.read_text().replace("line 10\n", "line 10: main\n"))
    commit_all(repo, "main note", BOB)
    git(repo, "merge", "-q", "--no-ff", "-m", "merge side", "side", env=identity(*ALICE))
    assert "line 1: side" in note.read_text() and "line 10: main" in note.read_text()
    index.scan(gitrepo, git(repo, "rev-parse", "HEAD").strip())
    assert _folder_writers(index) == {AGENT[1], BOB[1]}


def test_a_clean_join_the_merger_edits_further_is_the_mergers(repo: Path, tmp_path: Path) -> None:
    """A byte of the merge's own beside git's join (a line added in ``--no-commit``) is the
    merger's writing, as in any commit."""
    write_plan(repo)
    (repo / "plans/greet/NOTES.md").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    commit_all(repo, "add", AGENT)
    note = repo / "plans/greet/NOTES.md"
    git(repo, "switch", "-q", "-c", "side")
    note.write_text(note.read_text().replace("line 1\n", "line 1: side\n"))
    commit_all(repo, "side note", BOB)
    git(repo, "switch", "-q", "main")
    note.write_text(note.read_text().replace("line 10\n", "line 10: main\n"))
    commit_all(repo, "main note", BOB)
    git(repo, "merge", "-q", "--no-ff", "--no-commit", "side")
    note.write_text(note.read_text() + "line 11: alice\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "merge side", env=identity(*ALICE))
    index = _index(tmp_path)
    index.scan(GitRepo(repo), git(repo, "rev-parse", "HEAD").strip())
    assert ALICE[1] in _folder_writers(index)


def _conflicting_notes(repo: Path) -> Path:
    """Bob edits the note's line 1 and 10 on a branch, lines 1 and 5 on main: line 1
    conflicts, the others join."""
    write_plan(repo)
    note = repo / "plans/greet/NOTES.md"
    note.write_text("".join(f"line {i}\n" for i in range(1, 11)))
    commit_all(repo, "add", AGENT)
    git(repo, "switch", "-q", "-c", "side")
    text = note.read_text().replace("line 1\n", "line 1: side\n")
    note.write_text(text.replace("line 10\n", "line 10: side\n"))
    commit_all(repo, "side note", BOB)
    git(repo, "switch", "-q", "main")
    text = note.read_text().replace("line 1\n", "line 1: main\n")
    note.write_text(text.replace("line 5\n", "line 5: main\n"))
    commit_all(repo, "main note", BOB)
    return note


@pytest.mark.parametrize("favor", ["ours", "theirs"])
@pytest.mark.parametrize("cold", [True, False], ids=["cold-scan", "pass-by-pass"])
def test_a_note_git_settled_by_a_strategy_option_is_written_by_the_sides(
    repo: Path, tmp_path: Path, cold: bool, favor: str
) -> None:
    """Round 67 ``xtheirs``/``xours``: Alice merges ``-X theirs`` (``-X ours``) over a
    conflicting line: every line is one side's, none hers, though git's default merge
    conflicts and the merge commit does not record the option."""
    index = _index(tmp_path)
    gitrepo = GitRepo(repo)
    note = _conflicting_notes(repo)
    if not cold:
        index.scan(gitrepo, git(repo, "rev-parse", "HEAD").strip())
    merge = ["merge", "-q", "--no-ff", "-X", favor, "-m", "merge side", "side"]
    git(repo, *merge, env=identity(*ALICE))
    assert f"line 1: {'side' if favor == 'theirs' else 'main'}\n" in note.read_text()
    index.scan(gitrepo, git(repo, "rev-parse", "HEAD").strip())
    assert _folder_writers(index) == {AGENT[1], BOB[1]}


def test_past_the_settle_budget_a_settled_conflict_is_the_mergers(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each conflicted path costs three ``git merge-file`` runs, so one merge asks at most
    ``SETTLE_BUDGET`` of them: past it (here, at once) the settled note counts against the
    merger, the side that refuses honest work and lets nothing through."""
    from controller.git import lifecycle

    monkeypatch.setattr(lifecycle, "SETTLE_BUDGET", 0)
    index = _index(tmp_path)
    _conflicting_notes(repo)
    git(repo, "merge", "-q", "--no-ff", "-X", "theirs", "-m", "m", "side", env=identity(*ALICE))
    index.scan(GitRepo(repo), git(repo, "rev-parse", "HEAD").strip())
    assert ALICE[1] in _folder_writers(index)


def test_a_settled_conflict_in_a_folder_moved_on_the_branch_is_the_sides(
    repo: Path, tmp_path: Path
) -> None:
    """The branch moves the folder and edits line 1, main edits lines 1 and 5; ``-X theirs``
    settles the note at its new path, over the stages git merged there."""
    write_plan(repo)
    note = repo / "plans/greet/NOTES.md"
    note.write_text("".join(f"line {i}\n" for i in range(1, 11)))
    commit_all(repo, "add", AGENT)
    git(repo, "switch", "-q", "-c", "side")
    git(repo, "mv", "plans/greet", "plans/greet-2")
    moved = repo / "plans/greet-2/NOTES.md"
    moved.write_text(moved.read_text().replace("line 1\n", "line 1: side\n"))
    commit_all(repo, "side moves", BOB)
    git(repo, "switch", "-q", "main")
    note.write_text(note.read_text().replace("line 1\n", "line 1: main\n").replace("5\n", "5: m\n"))
    commit_all(repo, "main note", BOB)
    git(repo, "merge", "-q", "--no-ff", "-X", "theirs", "-m", "m", "side", env=identity(*ALICE))
    assert moved.read_text().startswith("line 1: side\n") and "line 5: m\n" in moved.read_text()
    index = _index(tmp_path)
    index.scan(GitRepo(repo), git(repo, "rev-parse", "HEAD").strip())
    assert _folder_writers(index, "plans/greet-2") == {AGENT[1], BOB[1]}


def test_a_union_of_a_conflict_is_written_by_the_sides(repo: Path, tmp_path: Path) -> None:
    """A ``merge=union`` resolution (both sides' lines) is git's too: ``git merge-file
    --union`` makes it."""
    note = _conflicting_notes(repo)
    git(repo, "merge", "-q", "--no-ff", "--no-commit", "side", check=False)
    main = git(repo, "show", "main:plans/greet/NOTES.md")
    lines = main.replace("line 10\n", "line 10: side\n").splitlines(keepends=True)
    note.write_text("".join([lines[0], "line 1: side\n", *lines[1:]]))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "merge side", env=identity(*ALICE))
    index = _index(tmp_path)
    index.scan(GitRepo(repo), git(repo, "rev-parse", "HEAD").strip())
    assert _folder_writers(index) == {AGENT[1], BOB[1]}


@pytest.mark.parametrize("favor", ["ours", "theirs"])
def test_a_settled_conflict_the_merger_edits_further_is_the_mergers(
    repo: Path, tmp_path: Path, favor: str
) -> None:
    """A byte of the merger's beside git's ``-X`` settlement is hers; so is a conflict she
    resolved to a line of her own."""
    note = _conflicting_notes(repo)
    git(repo, "merge", "-q", "--no-ff", "--no-commit", "-X", favor, "side")
    note.write_text(note.read_text().replace("line 5: main\n", "line 5: alice\n"))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "merge side", env=identity(*ALICE))
    index = _index(tmp_path)
    index.scan(GitRepo(repo), git(repo, "rev-parse", "HEAD").strip())
    assert ALICE[1] in _folder_writers(index)


def _her_merge_on_her_branch(repo: Path, by_hand: bool) -> Path:
    """Bob edits the note on two branches (line 1 and 5 on ``a``; line 5, or line 9, on
    ``b``); Alice, on her branch cut from ``a``, merges ``b``: line 5 conflicts and she
    writes it by hand (``by_hand``), or the two join cleanly. Nothing is merged into main."""
    write_plan(repo)
    note = repo / "plans/greet/NOTES.md"
    note.write_text("".join(f"line {i}\n" for i in range(1, 11)))
    commit_all(repo, "add", AGENT)
    for branch, edits in (("a", {1: "bob a", 5: "bob a"}), ("b", {5 if by_hand else 9: "bob b"})):
        git(repo, "switch", "-q", "-c", branch, "main")
        lines = note.read_text().splitlines(keepends=True)
        for at, text in edits.items():
            lines[at - 1] = f"line {at}: {text}\n"
        note.write_text("".join(lines))
        commit_all(repo, f"bob: {branch}", BOB)
    git(repo, "switch", "-q", "-c", "alice", "a")
    git(repo, "merge", "-q", "--no-ff", "-m", "merge b", "b", env=identity(*ALICE), check=False)
    if by_hand:
        note.write_text(note.read_text().split("<<<<<<<")[0] + "line 5: alice\n" + "".join(
            f"line {i}\n" for i in range(6, 11)
        ))  # fmt: skip
        commit_all(repo, "alice: merge b", ALICE)
    git(repo, "switch", "-q", "main")
    return note


@pytest.mark.parametrize("how", ["clean", "ours"])
@pytest.mark.parametrize("cold", [True, False], ids=["cold-scan", "pass-by-pass"])
def test_a_merge_on_a_merged_branch_that_wrote_bytes_makes_its_maker_a_writer(
    repo: Path, tmp_path: Path, cold: bool, how: str
) -> None:
    """Round 68 ``mm-clean``/``mm-ours``: Alice's merge of two of Bob's branches, line 5
    written by her hand, on HER branch, merged into main by Bob (a clean ``--no-ff`` merge,
    or ``-X ours`` over a conflict at line 1): her bytes are in the note, so she is a writer,
    as when she merges on main itself. Only the merged commits' makers once counted."""
    index = _index(tmp_path)
    gitrepo = GitRepo(repo)
    note = _her_merge_on_her_branch(repo, by_hand=True)
    if how == "ours":
        note.write_text(note.read_text().replace("line 1\n", "line 1: main\n"))
        commit_all(repo, "bob: main", BOB)
    if not cold:
        index.scan(gitrepo, _tip(repo))
    merge = ["merge", "-q", "--no-ff", "-X", "ours", "-m", "merge alice", "alice"]
    git(repo, *merge, env=identity(*BOB))
    assert "line 5: alice\n" in note.read_text()
    index.scan(gitrepo, _tip(repo))
    assert ALICE[1] in _folder_writers(index)


def test_a_clean_merge_on_a_merged_branch_leaves_its_maker_free(repo: Path, tmp_path: Path) -> None:
    """The honest control: Alice's merge of Bob's two branches on her branch joins cleanly
    (git's bytes, every line a side's): Bob wrote the note, Alice wrote nothing."""
    _her_merge_on_her_branch(repo, by_hand=False)
    git(repo, "merge", "-q", "--no-ff", "-m", "merge alice", "alice", env=identity(*BOB))
    index = _index(tmp_path)
    index.scan(GitRepo(repo), _tip(repo))
    assert _folder_writers(index) == {AGENT[1], BOB[1]}


def test_plan_content_a_merge_on_a_merged_branch_wrote_is_its_makers(
    repo: Path, tmp_path: Path
) -> None:
    """A plan a merge on a merged branch writes with content no parent held (a param added in
    ``--no-commit``) has that merge's maker among its content's authors, as on the line."""
    write_plan(repo)
    commit_all(repo, "add", AGENT)
    git(repo, "switch", "-q", "-c", "b", "main")
    (repo / "other").write_text("b\n")
    commit_all(repo, "bob: b", BOB)
    git(repo, "switch", "-q", "-c", "alice", "main")
    git(repo, "merge", "-q", "--no-ff", "--no-commit", "b", env=identity(*ALICE))
    plan = repo / "plans/greet/PLAN.yml"
    plan.write_text(plan.read_text() + "      times: 2\n")
    commit_all(repo, "alice: merge b", ALICE)
    git(repo, "switch", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "-m", "merge alice", "alice", env=identity(*BOB))
    index = _index(tmp_path)
    index.scan(GitRepo(repo), _tip(repo))
    made = index.plans["plans/greet"].hash
    assert made is not None and ALICE[1] in index.authors.get(made, frozenset())


def _her_plan_moved(repo: Path, in_merge: bool) -> None:
    """Alice's draft branch adds her plan; the agent's branch merges it and moves the plan
    with one param added: inside the merge (``--no-commit``) or in its next commit; the
    agent's branch is then merged into main."""
    git(repo, "switch", "-q", "-c", "drafts")
    write_plan(repo)
    commit_all(repo, "alice: my draft", ALICE)
    git(repo, "switch", "-q", "main")
    (repo / "other").write_text("x")
    commit_all(repo, "main moves", AGENT)
    git(repo, "switch", "-q", "-c", "carry")
    merge = ["merge", "-q", "--no-ff", *(["--no-commit"] if in_merge else ["-m", "m"]), "drafts"]
    git(repo, *merge, env=identity(*AGENT))
    git(repo, "mv", "plans/greet", "plans/greet-2")
    path = repo / "plans/greet-2/PLAN.yml"
    path.write_text(path.read_text() + "      times: 2\n")
    commit_all(repo, "agent: carry", AGENT)
    git(repo, "switch", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "-m", "merge carry", "carry", env=identity(*ALICE))


@pytest.mark.parametrize("in_merge", [True, False], ids=["inside-the-merge", "after-the-merge"])
@pytest.mark.parametrize("cold", [True, False], ids=["cold-scan", "pass-by-pass"])
def test_her_plan_moved_and_edited_where_a_merge_brought_it_keeps_her_a_writer(
    repo: Path, tmp_path: Path, cold: bool, in_merge: bool
) -> None:
    """Round 66 ``merge-move``/``merge-then-move``: the moved plan, all of hers and one param
    more, is paired with her plan as a first-parent move is (rounds 55-57): she wrote it."""
    (repo / "README").write_text("r\n")
    commit_all(repo, "start", AGENT)
    index = _index(tmp_path)
    gitrepo = GitRepo(repo)
    if not cold:
        index.scan(gitrepo, git(repo, "rev-parse", "HEAD").strip())
    _her_plan_moved(repo, in_merge)
    index.scan(gitrepo, git(repo, "rev-parse", "HEAD").strip())
    moved = index.plans["plans/greet-2"].hash
    assert moved is not None
    assert {ALICE[1], AGENT[1]} <= set(index.authors.get(moved, frozenset()))


def test_a_log_committed_before_its_plan_is_a_file_of_the_plans_record(
    repo: Path, tmp_path: Path
) -> None:
    """Round 67: an EXECUTION_LOG.md committed where no plan is yet becomes the plan's
    ``log_commit`` once a plan is put there (the row reads a record someone else committed a
    file of last), also across index saves; a log removed before the plan leaves none."""
    folder = repo / "plans" / "greet"
    folder.mkdir(parents=True)
    (folder / "EXECUTION_LOG.md").write_text("# forged\n")
    commit_all(repo, "log first", AGENT)
    logged = _tip(repo)
    index = _index(tmp_path)
    index.scan(GitRepo(repo), logged)
    index.close()
    write_plan(repo)
    commit_all(repo, "add", AGENT)
    index = _index(tmp_path)
    index.scan(GitRepo(repo), _tip(repo))
    assert index.plans["plans/greet"].record_commits() == (_tip(repo), logged)
    index.close()
    other = repo / "plans" / "other"
    other.mkdir()
    (other / "EXECUTION_LOG.md").write_text("# forged\n")
    commit_all(repo, "log", AGENT)
    (other / "EXECUTION_LOG.md").unlink()
    commit_all(repo, "no log", AGENT)
    write_plan(repo, "other")
    commit_all(repo, "add other", AGENT)
    index = _index(tmp_path)
    index.scan(GitRepo(repo), _tip(repo))
    assert index.plans["plans/other"].record_commits() == (_tip(repo),)


def test_the_index_knows_a_path_with_no_record_nor_a_claim_of_one(
    repo: Path, tmp_path: Path
) -> None:
    """Round 67: the row reads a path's record for a plan in every state, but not where the
    index knows there is none to judge (no commit of the controller's, no log, no owned
    block: a draft no one ran); a forged block or a log makes a claim the row must judge."""
    write_plan(repo, text=PLAN.replace("status: pending_approval", "status: draft"))
    commit_all(repo, "draft", AGENT)
    index = _index(tmp_path)
    index.scan(GitRepo(repo), _tip(repo))
    assert not index.plans["plans/greet"].has_record()
    write_plan(repo, "forged", PLAN + "execution: {status: completed}\n")
    write_plan(repo, "logged")
    (repo / "plans/logged/EXECUTION_LOG.md").write_text("# forged\n")
    commit_all(repo, "claims", AGENT)
    index.scan(GitRepo(repo), _tip(repo))
    assert index.plans["plans/forged"].has_record()
    assert index.plans["plans/logged"].has_record()
    assert (index.plans["plans/logged"].owned, index.plans["plans/greet"].owned) == (False, False)
