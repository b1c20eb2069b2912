"""A cold scan reads history from the plans folder's raw trees (controller.git.treediff): it must
find exactly the commits and changes ``git log --raw -- plans/`` finds, and build exactly the
index that reading builds, on histories with merges, deletions, re-adds, links, submodules,
hostile names and a folder big enough for the prefix and suffix search."""

from __future__ import annotations

import os
import sqlite3
import subprocess
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.git import commits, prefetch, treediff
from controller.git.commits import Commits
from controller.git.gitrepo import GitRepo
from controller.git.history import HistoryIndex
from controller.git.objects import serialize_tree
from controller.git.planstate import history_paths
from tests.support.gitenv import BOT, MALLORY, identity
from tests.support.gitkit import AGENT, ALICE, BOB, commit_all, edit_status, git, write_plan


def _busy_history(repo: Path) -> str:
    """A history with most things a plans folder lives through; returns the head."""
    write_plan(repo, "p000")
    commit_all(repo, "first plan", AGENT)
    for start in range(0, 240, 60):  # a folder of 240 plans: a tree of ~8 KB
        for i in range(start, start + 60):
            (repo / f"plans/q{i:03d}").mkdir(parents=True)
            (repo / f"plans/q{i:03d}/PLAN.yml").write_text(f"plan: {{name: q{i}}}\n")
        commit_all(repo, f"plans from {start}", AGENT)
    for name in ("q000", "q119", "q239", "q120"):  # first, middle, last entries of the folder
        edit_status(repo, "p000", "draft")
        (repo / f"plans/{name}/PLAN.yml").write_text(f"plan: {{name: {name}, v: 2}}\n")
        commit_all(repo, f"edit {name}", BOB)
        edit_status(repo, "p000", "pending_approval")
        commit_all(repo, "back", BOT)
    for name in ("q010", "q200"):  # two changes far apart in one commit
        (repo / f"plans/{name}/EXECUTION_LOG.md").write_text("# log\n")
    commit_all(repo, "logs", BOT)
    git(repo, "rm", "-rq", "plans/q050")
    commit_all(repo, "delete q050", AGENT)
    (repo / "plans/q050").mkdir()
    (repo / "plans/q050/PLAN.yml").write_text("plan: {name: q50}\n")
    commit_all(repo, "re-add q050", AGENT)
    os.chmod(repo / "plans/q051/PLAN.yml", 0o755)
    commit_all(repo, "mode only", AGENT)
    (repo / "plans/q052/PLAN.yml").unlink()
    os.symlink("../q053/PLAN.yml", repo / "plans/q052/PLAN.yml")
    commit_all(repo, "a link", AGENT)
    git(repo, "rm", "-rq", "plans/q054")
    (repo / "plans/q054").write_text("a file where a folder was\n")
    commit_all(repo, "folder to file", AGENT)
    (repo / "plans/q054").unlink()
    (repo / "plans/q054/deep/er").mkdir(parents=True)
    (repo / "plans/q054/deep/er/PLAN.yml").write_text("plan: {name: deep}\n")
    commit_all(repo, "file to deep folder", AGENT)
    (repo / "plans/q055/a\x01b").mkdir(parents=True)
    (repo / "plans/q055/a\x01b/PLAN.yml").write_text("plan: {name: hostile}\n")
    os.makedirs(repo.joinpath("plans").as_posix().encode() + b"/\xff\xfe", exist_ok=True)
    Path(
        os.fsdecode(repo.joinpath("plans").as_posix().encode() + b"/\xff\xfe/PLAN.yml")
    ).write_text("plan: {name: bytes}\n")
    commit_all(repo, "hostile names", MALLORY)
    sub = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{sub},plans/q056/PLAN.yml")
    git(repo, "commit", "-qm", "a gitlink", env=identity(*AGENT))
    git(repo, "switch", "-q", "-c", "side")
    write_plan(repo, "merged")
    (repo / "plans/q100/PLAN.yml").write_text("plan: {name: q100, side: yes}\n")
    commit_all(repo, "on a branch", BOB)
    git(repo, "switch", "-q", "main")
    (repo / "notes.txt").write_text("main moved\n")
    commit_all(repo, "not a plan", ALICE)
    git(repo, "merge", "-q", "--no-ff", "-m", "merge side", "side", env=identity(*ALICE))
    git(repo, "switch", "-q", "-c", "ours")
    edit_status(repo, "merged", "approved")
    commit_all(repo, "approve on a branch", ALICE)
    git(repo, "switch", "-q", "main")
    git(repo, "merge", "-q", "-s", "ours", "-m", "keep ours", "ours", env=identity(*ALICE))
    git(repo, "rm", "-rq", "plans/merged")
    commit_all(repo, "delete merged", AGENT)
    git(repo, "merge", "-q", "--no-ff", "-m", "merge back", "ours", env=identity(*ALICE))
    git(repo, "rm", "-rq", "plans")
    (repo / "plans").write_text("the folder is a file now\n")
    commit_all(repo, "plans is a file", AGENT)
    (repo / "plans").unlink()
    write_plan(repo, "reborn")
    commit_all(repo, "plans is a folder again", AGENT)
    return git(repo, "rev-parse", "HEAD").strip()


def _logged_view(record: Any) -> dict[str, Any]:
    """A walked record as git log reads it (which cannot say ``outside_quiet``, nor the
    parent's mode of a change: ``old_mode``, nor an added file's folder id: ``folder``)."""
    view = {**asdict(record), "outside_quiet": False}
    view["changes"] = [{**change, "old_mode": "?", "folder": ""} for change in view["changes"]]
    return view


def _folders_hold(repo: Path, walked: list[Any]) -> int:
    """Every folder id a walked change carries (a file added) is the tree git finds at the
    file's folder in that commit; returns how many."""
    known = 0
    for record in walked:
        for change in record.changes:
            if not change.folder:
                continue
            assert change.old_blob is None, (record.subject, change)
            parent = change.path.rpartition("/")[0]
            found = git(repo, "rev-parse", f"{record.sha}:{parent}").strip()
            assert change.folder == found, (record.subject, change)
            known += 1
    return known


def _parent_modes_hold(gitrepo: GitRepo, walked: list[Any]) -> int:
    """Every parent's mode a walked change carries is ``mode_of``'s; returns how many."""
    known = 0
    for record in walked:
        for change in record.changes:
            if change.old_mode == "?":
                continue
            assert record.parents, record.subject
            was = gitrepo.mode_of(record.parents[0], change.path)
            assert change.old_mode == (was or ""), (record.subject, change)
            known += 1
    return known


def _changed_outside(repo: Path, sha: str) -> list[bytes]:
    args = ["git", "diff-tree", "-r", "-z", "--name-only", "--no-commit-id", f"{sha}^", sha]
    out = subprocess.run(args, cwd=repo, capture_output=True, check=True).stdout
    return [p for p in out.split(b"\0") if p and p != b"plans" and not p.startswith(b"plans/")]


@pytest.mark.parametrize("chunk", [None, 3])
def test_the_tree_walk_finds_what_git_log_finds(
    repo: Path, chunk: int | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Also with the records read in chunks of 3 commits while the walk goes on."""
    if chunk is not None:
        monkeypatch.setattr(commits, "RECORDS_CHUNK", chunk)
    head = _busy_history(repo)
    gitrepo = GitRepo(repo)
    logged = [asdict(r) for r in gitrepo.first_parent_log(None, head, ["plans"])]
    walked = gitrepo.first_parent_changes(None, head, "plans")
    assert walked is not None
    assert [_logged_view(r) for r in walked] == logged
    # what the walk knows beyond git log: the root trees changed nothing outside the folder
    for record in walked:
        outside = _changed_outside(repo, record.sha) if record.parents else None
        assert record.outside_quiet == (outside == []), (record.subject, outside)
    paths = {c["path"] for r in logged for c in r["changes"]}
    assert "plans" in paths and "plans/q054/deep/er/PLAN.yml" in paths  # the walk went there
    assert _parent_modes_hold(gitrepo, walked) > 10
    assert _folders_hold(repo, walked) > 10
    made_executable = [
        c for r in walked if r.subject == "mode only" for c in r.changes if c.mode == "100755"
    ]
    assert [c.old_mode for c in made_executable] == ["100644"]
    middle = git(repo, "rev-list", "--first-parent", "--skip=12", "-1", head).strip()
    since = gitrepo.first_parent_changes(middle, head, "plans")
    assert since is not None
    assert [_logged_view(r) for r in since] == [
        asdict(r) for r in gitrepo.first_parent_log(middle, head, ["plans"])
    ]


@pytest.mark.parametrize("small", [False, True])
def test_a_cold_scan_from_trees_builds_the_index_git_log_builds(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, small: bool
) -> None:
    """Also with small batches: records read while the walk goes on, plan versions parsed
    by the scan's parsing children."""
    if small:
        monkeypatch.setattr(commits, "RECORDS_CHUNK", 3)
        monkeypatch.setattr(prefetch, "PREFETCH_BLOBS", 4)
    head = _busy_history(repo)
    gitrepo = GitRepo(repo)

    def cold(name: str) -> list[object]:
        index = HistoryIndex(
            tmp_path / name,
            plans_dir="plans",
            controller_email="plangate@localhost",
            memory=tmp_path / f"{name}.memory",
        )
        count = index.scan(gitrepo, head)
        index.close()
        db = sqlite3.connect(tmp_path / name)
        db.execute("ATTACH DATABASE ? AS memory", (str(tmp_path / f"{name}.memory"),))
        tables = [list(db.execute(f"SELECT * FROM {t} ORDER BY 1")) for t in ("plans", "authors")]
        return [count, *tables, list(db.execute("SELECT * FROM meta ORDER BY 1"))]

    from_trees = cold("trees.sqlite")
    monkeypatch.setattr(Commits, "first_parent_changes", lambda *a, **k: None)  # git log
    assert cold("log.sqlite") == from_trees
    assert from_trees[0] > 20 and "plans/reborn" in str(from_trees[1]) and from_trees[2]


def test_a_walk_that_must_ask_git_after_applying_commits_builds_the_same_index(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cold scan applies commits while it walks: a tree met late that git must read
    (TreeError) undoes them, and `git log` builds the index from scratch, as if the walk had
    never begun."""
    monkeypatch.setattr(commits, "RECORDS_CHUNK", 3)
    monkeypatch.setattr(commits, "CHUNK_COMMITS", 2)
    monkeypatch.setattr(prefetch, "PREFETCH_BLOBS", 4)
    head = _busy_history(repo)
    gitrepo = GitRepo(repo)

    def cold(name: str) -> list[object]:
        index = HistoryIndex(
            tmp_path / name,
            plans_dir="plans",
            controller_email="plangate@localhost",
            memory=tmp_path / f"{name}.memory",
        )
        count = index.scan(gitrepo, head)
        index.close()
        db = sqlite3.connect(tmp_path / name)
        db.execute("ATTACH DATABASE ? AS memory", (str(tmp_path / f"{name}.memory"),))
        tables = [list(db.execute(f"SELECT * FROM {t} ORDER BY 1")) for t in ("plans", "authors")]
        return [count, *tables, list(db.execute("SELECT * FROM meta ORDER BY 1"))]

    with monkeypatch.context() as patch:
        patch.setattr(Commits, "first_parent_changes", lambda *a, **k: None)  # git log
        logged = cold("log.sqlite")
    applied: list[str] = []
    apply, top_ops = HistoryIndex.apply, commits._top_ops
    records_ready, facts_ready = commits._RecordReader.ready, prefetch._Prefetcher.ready
    calls = 0

    def records_read(self: commits._RecordReader) -> list[object]:
        for future in self.futures:  # what was asked for is there (no race with the reader)
            future.result()
        return records_ready(self)  # type: ignore[return-value]

    def facts_read(self: prefetch._Prefetcher) -> int:
        for _, future in self.futures:
            future.result()
        return facts_ready(self)

    def counting(self: HistoryIndex, repo: GitRepo, record: object, sink: object = None) -> None:
        applied.append(record.sha)  # type: ignore[attr-defined]
        apply(self, repo, record, sink)  # type: ignore[arg-type]

    def late(*args: object) -> object:
        nonlocal calls
        calls += 1
        if calls > 20:  # deep into the walk, after some commits were applied
            raise treediff.TreeError("a tree git would read differently")
        return top_ops(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(HistoryIndex, "apply", counting)
    monkeypatch.setattr(commits, "_top_ops", late)
    monkeypatch.setattr(commits._RecordReader, "ready", records_read)
    monkeypatch.setattr(prefetch._Prefetcher, "ready", facts_read)
    assert cold("undone.sqlite") == logged
    assert len(applied) > logged[0]  # commits applied by the walk, then again from git log


def test_a_cold_scan_holds_full_collections_off_and_gives_them_back(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No full collection of the cyclic collector while a cold scan builds its index (each
    walks every object); the thresholds are as they were afterwards, also when it fails."""
    import gc

    head = _busy_history(repo)
    before = gc.get_threshold()
    during: list[tuple[int, ...]] = []
    apply = HistoryIndex.apply

    def watching(self: HistoryIndex, *args: object) -> None:
        during.append(gc.get_threshold())
        apply(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(HistoryIndex, "apply", watching)
    index = HistoryIndex(None, plans_dir="plans", controller_email="plangate@localhost")
    assert index.scan(GitRepo(repo), head) > 20
    assert gc.get_threshold() == before
    assert during and all(t[:2] == before[:2] and t[2] > 10**9 for t in during)

    def failing(self: HistoryIndex, *args: object) -> None:
        raise RuntimeError("apply failed")

    monkeypatch.setattr(HistoryIndex, "apply", failing)
    fresh = HistoryIndex(None, plans_dir="plans", controller_email="plangate@localhost")
    with pytest.raises(RuntimeError):
        fresh.scan(GitRepo(repo), head)
    assert gc.get_threshold() == before


def test_a_folder_not_plainly_named_is_left_to_git(repo: Path) -> None:
    head = git(repo, "rev-parse", "HEAD").strip()
    assert GitRepo(repo).first_parent_changes(None, head, "pla*s") is None


def test_a_tree_name_holding_a_slash_is_left_to_git() -> None:
    raw = b"100644 a/b\0" + bytes(20)
    with pytest.raises(treediff.TreeError):
        treediff.diff_level(b"", raw)


_names = st.lists(st.sampled_from([f"n{i:03d}" for i in range(400)]), unique=True, max_size=300)
_kinds = st.sampled_from([0o100644, 0o100755, 0o40000, 0o120000])


@settings(max_examples=60, deadline=None)
@given(
    st.dictionaries(st.sampled_from([f"n{i:03d}" for i in range(400)]), _kinds, max_size=300),
    st.lists(st.tuples(st.sampled_from([f"n{i:03d}" for i in range(400)]), _kinds), max_size=12),
    st.integers(0, 3),
)
def test_diff_level_matches_a_full_merge_of_both_trees(
    base: dict[str, int], edits: list[tuple[str, int]], salt: int
) -> None:
    """Against a naive diff of the whole trees, through a chain of versions (marks kept)."""
    old = {n: (f"{hash((n, salt)) & 0xFFFF:040x}", m) for n, m in base.items()}
    marks = treediff.diff_level(b"", serialize_tree(old))[1]
    for step, (name, mode) in enumerate(edits):
        new = dict(old)
        if name in new and step % 3 == 0:
            del new[name]
        else:
            new[name] = (f"{step + 1:040x}", mode)
        ops, marks = treediff.diff_level(serialize_tree(old), serialize_tree(new), marks)
        assert ops == _naive(old, new)
        old = new


def _naive(old: dict[str, tuple[str, int]], new: dict[str, tuple[str, int]]) -> list[object]:
    def key(name: str, mode: int) -> bytes:
        return name.encode() + (b"/" if mode == 0o40000 else b"")

    def entry(sha: str, mode: int) -> treediff.Entry:
        return treediff.Entry(treediff.canon_mode(mode), bytes.fromhex(sha))

    sides = {}
    for n, (sha, mode) in old.items():
        sides.setdefault(key(n, mode), [n, None, None])[1] = entry(sha, mode)
    for n, (sha, mode) in new.items():
        sides.setdefault(key(n, mode), [n, None, None])[2] = entry(sha, mode)
    return [(n.encode(), o, w) for _, (n, o, w) in sorted(sides.items()) if o != w]


def _crafted_tree(repo: Path, entries: list[tuple[bytes, bytes, str]]) -> str:
    """A tree object written as given (git mktree would sort, check and canonicalise)."""
    raw = b"".join(mode + b" " + name + b"\0" + bytes.fromhex(sha) for mode, name, sha in entries)
    return subprocess.run(
        ["git", "hash-object", "-w", "-t", "tree", "--literally", "--stdin"],
        cwd=repo, input=raw, capture_output=True, check=True,
    ).stdout.decode().strip()  # fmt: skip


def _commit_tree(repo: Path, tree: str, parent: str) -> str:
    return git(
        repo, "commit-tree", tree, "-p", parent, "-m", "crafted", env=identity(*MALLORY)
    ).strip()


def _crafted_history(repo: Path, plans: list[tuple[bytes, bytes, str]]) -> tuple[str, str]:
    """main, then a commit whose plans folder is ``plans`` (entries as given), then one
    approving p000 in it: (the crafted commit, the head)."""
    write_plan(repo, "p000")
    commit_all(repo, "first plan", AGENT)
    head = git(repo, "rev-parse", "HEAD").strip()
    folder = git(repo, "rev-parse", "HEAD:plans/p000").strip()
    readme = git(repo, "rev-parse", "HEAD:README").strip()
    entries = [(mode, name, folder if sha == "p000" else sha) for mode, name, sha in plans]
    crafted = _commit_tree(
        repo,
        _crafted_tree(
            repo,
            [(b"100644", b"README", readme), (b"40000", b"plans", _crafted_tree(repo, entries))],
        ),
        head,
    )
    git(repo, "reset", "-q", "--hard", crafted)
    edit_status(repo, "p000", "approved")
    commit_all(repo, "approve", ALICE)
    return crafted, git(repo, "rev-parse", "HEAD").strip()


def test_a_mode_git_shows_otherwise_is_left_to_git(repo: Path) -> None:
    """perf76: a walk accepts only modes stored as git shows them, so that a change's
    ``old_mode`` is what the parent's tree holds: ``040755`` for a folder is git log's."""
    _, head = _crafted_history(repo, [(b"40755", b"p000", "p000")])
    gitrepo = GitRepo(repo)
    assert gitrepo.first_parent_changes(None, head, "plans") is None
    with pytest.raises(treediff.TreeError):
        treediff.read_entry(b"100664 x\0" + bytes(20), 0)
    assert treediff.read_entry(b"0100644 x\0" + bytes(20), 0)[1].mode == 0o100644


def test_a_name_twice_in_the_parent_leaves_its_mode_unknown(repo: Path) -> None:
    """Two entries ``p000`` in the parent's folder (the second's file executable): the walk
    diffs the first, a plain parse keeps the last; the change says it does not know the
    parent's mode, and the lifecycle reads the parent's tree, as before."""
    write_plan(repo, "p000")
    commit_all(repo, "first plan", AGENT)
    base = git(repo, "rev-parse", "HEAD").strip()
    readme = git(repo, "rev-parse", "HEAD:README").strip()
    plan = git(repo, "rev-parse", "HEAD:plans/p000/PLAN.yml").strip()
    text = git(repo, "cat-file", "blob", plan).replace("pending_approval", "approved")
    approved = git(repo, "hash-object", "-w", "--stdin", data=text.encode()).strip()

    def folder(mode: bytes, blob: str) -> str:
        return _crafted_tree(repo, [(mode, b"PLAN.yml", blob)])

    def root(plans: list[tuple[bytes, bytes, str]]) -> str:
        return _crafted_tree(
            repo, [(b"100644", b"README", readme), (b"40000", b"plans", _crafted_tree(repo, plans))]
        )

    twice = [
        (b"40000", b"p000", folder(b"100644", plan)),
        (b"40000", b"p000", folder(b"100755", plan)),
    ]
    crafted = _commit_tree(repo, root(twice), base)
    head = _commit_tree(repo, root([(b"40000", b"p000", folder(b"100755", approved))]), crafted)
    gitrepo = GitRepo(repo)
    assert gitrepo.mode_of(crafted, "plans/p000/PLAN.yml") == "100755"  # the last one
    walked = gitrepo.first_parent_changes(None, head, "plans")
    if walked is None:
        return  # left to git log: nothing carried
    changes = [c for r in walked if r.sha == head for c in r.changes]
    assert changes and all(c.old_mode == "?" for c in changes)
    _parent_modes_hold(gitrepo, walked)


def test_a_name_twice_in_the_new_folder_leaves_its_id_unknown(repo: Path) -> None:
    """Two entries ``p001`` in the plans folder of the commit that adds a plan under one of
    them: the walk carries no folder id for the added files (the lifecycle asks git to find
    the folder, as before); a plan added under a name stored once carries its folder's."""
    write_plan(repo, "p000")
    commit_all(repo, "first plan", AGENT)
    base = git(repo, "rev-parse", "HEAD").strip()
    readme = git(repo, "rev-parse", "HEAD:README").strip()
    plan = git(repo, "rev-parse", "HEAD:plans/p000/PLAN.yml").strip()
    p000 = git(repo, "rev-parse", "HEAD:plans/p000").strip()

    def folder(name: bytes) -> str:
        return _crafted_tree(repo, [(b"100644", name, plan)])

    def root(plans: list[tuple[bytes, bytes, str]]) -> str:
        return _crafted_tree(
            repo, [(b"100644", b"README", readme), (b"40000", b"plans", _crafted_tree(repo, plans))]
        )

    twice = [
        (b"40000", b"p000", p000),
        (b"40000", b"p001", folder(b"PLAN.yml")),
        (b"40000", b"p001", folder(b"PLAN.yaml")),
        (b"40000", b"p002", folder(b"PLAN.yml")),
    ]
    head = _commit_tree(repo, root(twice), base)
    walked = GitRepo(repo).first_parent_changes(None, head, "plans")
    assert walked is not None
    changes = {c.path: c for r in walked if r.sha == head for c in r.changes}
    assert changes["plans/p001/PLAN.yml"].folder == ""
    assert changes["plans/p002/PLAN.yml"].folder == folder(b"PLAN.yml")
    _folders_hold(repo, walked)


@pytest.mark.parametrize("plans_dir", ["plans", "deploy/plans"])
def test_the_walk_finds_the_backslash_names_above_the_folder_git_log_finds(
    repo: Path, plans_dir: str
) -> None:
    """Round 79: the index reads the entries above the plans folder whose own name holds a
    backslash (``history_paths``: git for Windows writes the root file ``plans\\rt\\PLAN.yml``
    into ``plans/rt``); the walk finds them in the listings it reads on its way to the folder,
    as ``git log`` does: added, changed, made executable, removed, in a commit changing
    nothing else; the files below a folder so named too (a root folder ``plans\\rf`` IS
    ``plans/rf`` there: round 79, the lead), a name deeper down in neither."""
    top = plans_dir.rpartition("/")[0]
    above = [""] + ([top] if top else [])

    def put(rel: str, text: str) -> None:
        path = repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

    put(f"{plans_dir}/rt/PLAN.yml", "a\n")
    for folder in above:
        put(f"{folder}/plans\\rt\\PLAN.yml".lstrip("/"), "twin\n")
    commit_all(repo, "with the plan", AGENT)
    for folder in above:
        put(f"{folder}/PLANS\\rt\\notes.md".lstrip("/"), "notes\n")
        put(f"{folder}/dir\\x/PLAN.yml".lstrip("/"), "in a folder so named\n")
        put(f"{folder}/other/deep\\PLAN.yml".lstrip("/"), "deeper\n")
    commit_all(repo, "alone", AGENT)
    for folder in above:
        put(f"{folder}/plans\\rt\\PLAN.yml".lstrip("/"), "edited\n")
    put(f"{plans_dir}/rt/PLAN.yml", "b\n")
    commit_all(repo, "both", AGENT)
    os.chmod(repo / "plans\\rt\\PLAN.yml", 0o755)
    commit_all(repo, "mode only", AGENT)
    for folder in above:
        (repo / f"{folder}/PLANS\\rt\\notes.md".lstrip("/")).unlink()
    commit_all(repo, "removed", AGENT)
    head = git(repo, "rev-parse", "HEAD").strip()
    gitrepo = GitRepo(repo)
    logged = [asdict(r) for r in gitrepo.first_parent_log(None, head, history_paths(plans_dir))]
    walked = gitrepo.first_parent_changes(None, head, plans_dir)
    assert walked is not None
    assert [_logged_view(r) for r in walked] == logged
    found = {c["path"] for r in logged for c in r["changes"]}
    assert f"{top}/plans\\rt\\PLAN.yml".lstrip("/") in found and "PLANS\\rt\\notes.md" in found
    assert f"{top}/dir\\x/PLAN.yml".lstrip("/") in found, found
    assert not any("deep\\" in p for p in found), found
    assert [r["subject"] for r in logged] == ["with the plan", "alone", "both", "mode only",
                                              "removed"]  # fmt: skip


#: round 80: root folders ending in a backslash that land on the plans folder (``plans\\``,
#: ``PLANS\\``, three backslashes, a folder ``\\`` below one, one at the root), and a trailing
#: backslash at every level; each file is ``plans/<slug>/PLAN.yml`` on git for Windows
TRAILING = {"tbf": "plans\\/tbf/PLAN.yml", "tbu": "PLANS\\/tbu/PLAN.yml",
            "tbs": "plans\\/tbs\\PLAN.yml", "t3": "plans\\\\\\/t3/PLAN.yml",
            "te": "plans\\/\\/te/PLAN.yml", "tv": "plans\\/tv\\/PLAN.yml\\",
            "tr": "\\/plans/tr/PLAN.yml"}  # fmt: skip


def test_the_walk_and_git_log_agree_below_a_root_folder_ending_in_a_backslash(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Round 80: below the root folder ``plans\\`` (the plans folder's own name and a trailing
    backslash) the cold walk finds the files ``git log`` finds (``history_paths``): added,
    edited, made executable, removed; and the index either builds holds every plan so
    landed on E_PLAN_AMBIGUOUS (it was entered by no walk: ``plans/tbf`` ran), the plan
    beside a ``notes.md`` in such a folder and the control not."""

    def put(rel: str, text: str) -> None:
        path = repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)

    for slug in [*TRAILING, "ok"]:
        write_plan(repo, slug)
    commit_all(repo, "the plans", AGENT)
    for rel in TRAILING.values():
        put(rel, "twin\n")
    put("plans\\/ok/notes.md", "notes\n")
    commit_all(repo, "the twins", AGENT)
    put(TRAILING["tbf"], "edited\n")
    commit_all(repo, "edited", AGENT)
    os.chmod(repo / TRAILING["tbu"], 0o755)
    commit_all(repo, "mode only", AGENT)
    (repo / TRAILING["te"]).unlink()
    commit_all(repo, "removed", AGENT)
    head = git(repo, "rev-parse", "HEAD").strip()
    gitrepo = GitRepo(repo)
    logged = [asdict(r) for r in gitrepo.first_parent_log(None, head, history_paths("plans"))]
    walked = gitrepo.first_parent_changes(None, head, "plans")
    assert walked is not None
    assert [_logged_view(r) for r in walked] == logged
    found = {c["path"] for r in logged for c in r["changes"]}
    assert set(TRAILING.values()) | {"plans\\/ok/notes.md"} <= found, found

    def cold(name: str) -> HistoryIndex:
        index = HistoryIndex(tmp_path / name, plans_dir="plans",
                             controller_email="plangate@localhost")  # fmt: skip
        index.scan(gitrepo, head)
        return index

    for index in (cold("trees.sqlite"), _logged_index(cold, monkeypatch)):
        held = sorted(p for p, s in index.plans.items() if s.ambiguous)
        assert held == sorted(f"plans/{s}" for s in TRAILING if s != "te"), index.plans
        assert index.plans["plans/te"].blob is not None and not index.plans["plans/ok"].ambiguous
        index.close()


def _logged_index(cold: Any, monkeypatch: pytest.MonkeyPatch) -> HistoryIndex:
    """The index built from ``git log`` (the walk refused)."""
    monkeypatch.setattr(Commits, "first_parent_changes", lambda *a, **k: None)
    return cold("log.sqlite")
