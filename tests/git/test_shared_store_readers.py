"""Readers of the shared ``.git/objects`` (local mode without the controller's own store: a
person's ``plangate approve``/``show``/``status``/``audit``, the page of a controller that has
none): every object read is hashed against its name (round 58). The lab: a loose object
rewritten with another object's bytes, as a one-object pack shadowing it would give them."""

from __future__ import annotations

import io
import os
import subprocess
import zlib
from pathlib import Path

import pytest

from controller.errors import GitError
from controller.git.commits import _read_object
from controller.git.gitrepo import GitRepo
from controller.git.store import check_object, object_id
from tests.support.gitenv import ALICE, commit_all, git


def _shadow(repo: Path, name: str, with_object: str) -> None:
    """Store the bytes of ``with_object`` under ``name`` (a loose object rewritten in place)."""
    kind = git(repo, "cat-file", "-t", with_object).strip()
    body = subprocess.run(
        ["git", "cat-file", kind, with_object], cwd=repo, capture_output=True, check=True
    ).stdout
    path = repo / ".git" / "objects" / name[:2] / name[2:]
    os.chmod(path, 0o644)
    path.write_bytes(zlib.compress(f"{kind} {len(body)}\0".encode() + body))


def _two_versions(repo: Path) -> tuple[str, str, str]:
    """(first commit, its note blob, the second version's blob) of ``plans/x/note``."""
    (repo / "plans" / "x").mkdir(parents=True, exist_ok=True)
    (repo / "plans" / "x" / "note").write_text("target: prod-db-DROP\n")
    first = commit_all(repo, "one", ALICE)
    (repo / "plans" / "x" / "note").write_text("target: staging\n")
    second = commit_all(repo, "two", ALICE)
    return first, _blob(repo, first, "plans/x/note"), _blob(repo, second, "plans/x/note")


def _blob(repo: Path, commit: str, path: str) -> str:
    return git(repo, "rev-parse", f"{commit}:{path}").strip()


def _names_the_store(caught: pytest.ExceptionInfo[GitError], sha: str) -> None:
    assert caught.value.code == "E_GIT", caught.value
    assert sha in str(caught.value) and "object store" in str(caught.value)
    assert caught.value.remedy and "git fsck" in caught.value.remedy


def test_a_shadowed_blob_read_by_path_is_refused_naming_the_store(repo: Path) -> None:
    first, blob, other = _two_versions(repo)
    _shadow(repo, blob, other)
    assert git(repo, "show", f"{first}:plans/x/note") == "target: staging\n"  # git trusts it
    reader = GitRepo(repo)
    with pytest.raises(GitError) as caught:
        reader.read_file(first, "plans/x/note")
    _names_the_store(caught, blob)
    with pytest.raises(GitError) as caught:
        GitRepo(repo).blob(blob)
    _names_the_store(caught, blob)


def test_a_shadowed_blob_in_a_batch_read_is_refused(repo: Path) -> None:
    _, blob, other = _two_versions(repo)
    _shadow(repo, blob, other)
    with pytest.raises(GitError) as caught:
        GitRepo(repo).blobs([other, blob])
    _names_the_store(caught, blob)


def test_a_shadowed_tree_cannot_redirect_a_path(repo: Path) -> None:
    """git resolves ``<commit>:<path>`` through trees it never hashes: a shadowed folder would
    name another (whole, honest) blob. The path is walked through checked trees instead."""
    first, _, _ = _two_versions(repo)
    folder = _blob(repo, first, "plans/x")
    _shadow(repo, folder, _blob(repo, "HEAD", "plans/x"))
    assert git(repo, "show", f"{first}:plans/x/note") == "target: staging\n"
    with pytest.raises(GitError) as caught:
        GitRepo(repo).read_file(first, "plans/x/note")
    _names_the_store(caught, folder)


def test_honest_reads_of_the_shared_store_pass(repo: Path) -> None:
    first, blob, other = _two_versions(repo)
    reader = GitRepo(repo)
    assert reader.checks_objects
    assert reader.read_file(first, "plans/x/note") == b"target: prod-db-DROP\n"
    assert reader.read_file("HEAD", "plans/x/note") == b"target: staging\n"
    assert reader.read_file(first, "plans/x/missing") is None
    assert reader.is_tree(first, "plans/x") and reader.is_gone(first, "plans/y")
    assert reader.blobs([blob, other]) == {
        blob: b"target: prod-db-DROP\n",
        other: b"target: staging\n",
    }


def test_the_scans_batch_stream_checks_each_object() -> None:
    good = b"target: prod-db-DROP\n"
    name = object_id(b"blob", good)
    forged = b"target: staging\n"
    answer = b"%s blob %d\n%s\n" % (name.encode(), len(forged), forged)
    with pytest.raises(GitError) as caught:
        _read_object(io.BytesIO(answer), Path("/repo/.git/objects"))
    assert name in str(caught.value) and "/repo/.git/objects" in str(caught.value)
    honest = b"%s blob %d\n%s\n" % (name.encode(), len(good), good)
    assert _read_object(io.BytesIO(honest), Path("/x")) == ("blob", good)
    assert _read_object(io.BytesIO(answer)) == ("blob", forged)  # the own store: not hashed
    check_object(name, b"blob", good, "/x")


def test_the_intake_names_a_shadowed_version_the_new_commit_replaces(
    repo: Path, tmp_path: Path
) -> None:
    """The controller needs none of it (its own copy is whole), but it says so."""
    (repo / "plans" / "x").mkdir(parents=True, exist_ok=True)
    (repo / "plans" / "x" / "note").write_text("target: prod-db-DROP\n")
    first = commit_all(repo, "one", ALICE)
    controller = GitRepo(repo, store=tmp_path / "state" / "objects.git")
    assert not controller.checks_objects
    assert controller.branch_head("main") == first
    blob = _blob(repo, first, "plans/x/note")
    (repo / "plans" / "x" / "other").write_text("target: staging\n")
    commit_all(repo, "decoy", ALICE)
    _shadow(repo, blob, _blob(repo, "HEAD", "plans/x/other"))
    (repo / "plans" / "x" / "note").write_text("target: prod-db-DROP\nstatus: approved\n")
    second = commit_all(repo, "alice approves", ALICE)
    assert controller.branch_head("main") == second
    assert controller.forged_shared == [blob]
    assert controller.read_file(first, "plans/x/note") == b"target: prod-db-DROP\n"
