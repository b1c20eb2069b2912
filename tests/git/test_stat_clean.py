"""Bytes equal to the commit are clean only when git would call them clean (round 78,
controller/git/worktree.py ``WorkTree.as_git_compares``): git's conversion reads them as the
blob, or the index's stat data vouches for the file (git 2.39 then never reads it). The oracle
is real git: ``git status`` asked AFTER plangate's check, with ``--no-optional-locks`` so that
it rewrites no index, in the same repository (a copy has other inodes and change times, which
git compares: the copy's files would all be read again).

- SHIFT-JIS (``core.checkRoundtripEncoding``'s default): git checks out the blob's ``\\`` as
  0x5C and reads it back as ``¥``; a racily clean entry (the index no later than the file, to
  the second) is read: modified, as git says right after its own checkout;
- the same file whose index entry was recorded before the attribute came and the index
  written later: clean by its stat data; touched (another mtime): read, modified;
- round 8: a UTF-8 file left untouched when ``working-tree-encoding=UTF-16LE`` is committed
  later: clean by its stat data; touched: modified.
"""

from __future__ import annotations

import os
from pathlib import Path

from controller.git.gitrepo import GitRepo
from tests.support.gitenv import AGENT, commit_all, git, identity

PATH = "plans/p/PLAN.yml"
BLOB = b'name: p\ntask: "a \\\\x41 b ~ end"\n'  # what the agent committed (UTF-8)


def _verdict(repo: Path) -> tuple[bool, bool]:
    """(plangate calls the file modified, git status calls it modified), git asked last."""
    gitrepo = GitRepo(repo)
    try:
        modified, _ = gitrepo.worktree_changes(["plans"])
        raw = (repo / PATH).read_bytes()
        compared = gitrepo.as_git_compares(PATH, raw, BLOB)
    finally:
        gitrepo.close()
    assert (PATH in modified) == (compared != BLOB)  # one rule, whoever asks
    status = git(repo, "--no-optional-locks", "status", "--porcelain", "--", PATH)
    return PATH in modified, status == f" M {PATH}\n"


def _committed_then_attribute(repo: Path, encoding: str, *, later: bool) -> None:
    """The blob committed without attributes, then ``working-tree-encoding=<encoding>``
    committed with the file untouched; ``later``: the index written after the file (its
    entry not racy); else dated the file's own second (racily clean)."""
    (repo / PATH).parent.mkdir(parents=True)
    (repo / PATH).write_bytes(BLOB)
    commit_all(repo, "the plan")
    (repo / ".gitattributes").write_text(f"plans/*/PLAN.yml working-tree-encoding={encoding}\n")
    for step in (("add", ".gitattributes"), ("commit", "-q", "-m", "the attribute")):
        # each index git writes is dated after the file: a racy entry would be read (and
        # smudged) under the new attribute at the next write
        _date_index(repo, later=True)
        git(repo, *step, env=identity(*AGENT))
    _date_index(repo, later=later)


def _date_index(repo: Path, *, later: bool) -> None:
    """The index file dated well after the plan file's mtime, or in its very second."""
    mtime = (repo / PATH).stat().st_mtime_ns
    at = mtime + 5_000_000_000 if later else mtime
    os.utime(repo / ".git" / "index", ns=(at, at))


def _touch(repo: Path) -> None:
    """The same bytes, another mtime (an editor's save of the same text)."""
    at = (repo / PATH).stat().st_mtime_ns - 3_000_000_000
    os.utime(repo / PATH, ns=(at, at))


def test_shift_jis_checked_out_in_the_index_second_is_modified(repo: Path) -> None:
    (repo / PATH).parent.mkdir(parents=True)
    (repo / PATH).write_bytes(BLOB)
    commit_all(repo, "the plan")
    (repo / ".gitattributes").write_text("plans/*/PLAN.yml working-tree-encoding=SHIFT-JIS\n")
    git(repo, "add", ".gitattributes")  # only it: the plan's blob stays the agent's
    git(repo, "commit", "-q", "-m", "the attribute", env=identity(*AGENT))
    (repo / PATH).unlink()
    git(repo, "checkout", "-q", "--", PATH)  # git's own checkout: 0x5C, read back as ¥
    assert (repo / PATH).read_bytes() == BLOB
    _date_index(repo, later=False)
    assert _verdict(repo) == (True, True)


def test_shift_jis_clean_by_stat_data_until_touched(repo: Path) -> None:
    _committed_then_attribute(repo, "SHIFT-JIS", later=True)
    assert _verdict(repo) == (False, False)
    _touch(repo)
    assert _verdict(repo) == (True, True)


def test_shift_jis_racily_clean_entry_is_read(repo: Path) -> None:
    _committed_then_attribute(repo, "SHIFT-JIS", later=False)
    assert _verdict(repo) == (True, True)


def test_round_8_untouched_utf8_under_a_later_encoding_clean_until_touched(repo: Path) -> None:
    _committed_then_attribute(repo, "UTF-16LE", later=True)
    assert _verdict(repo) == (False, False)
    _touch(repo)
    assert _verdict(repo) == (True, True)


def test_equal_bytes_without_any_attribute_ask_git_nothing_more(repo: Path) -> None:
    """The usual repository: no ``.gitattributes`` anywhere, the bytes are the blob: clean,
    without ``git check-attr`` or ``git ls-files --debug`` (a racy entry included)."""
    (repo / PATH).parent.mkdir(parents=True)
    (repo / PATH).write_bytes(BLOB)
    commit_all(repo, "the plan")
    _date_index(repo, later=False)
    gitrepo = GitRepo(repo)
    asked: list[tuple[str, ...]] = []
    run_raw = gitrepo.run_raw

    def counted(*args: str, **kwargs: object) -> object:
        asked.append(args)
        return run_raw(*args, **kwargs)  # type: ignore[arg-type]

    try:
        gitrepo._eol_settings()  # the config, read once per process anyway
        gitrepo.run_raw = counted  # type: ignore[method-assign]
        assert gitrepo.as_git_compares(PATH, BLOB, BLOB) == BLOB
    finally:
        gitrepo.close()
    assert asked == []
