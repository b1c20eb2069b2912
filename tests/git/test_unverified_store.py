"""A store nobody verified (local mode's shared ``.git/objects``), round 60: git over it reads no
commit-graph, and what plangate writes there is read back, hashed, before a branch names it."""

from __future__ import annotations

import hashlib
import os
import struct
import zlib
from pathlib import Path

import pytest

from controller.errors import GitError
from controller.git.gitrepo import GitRepo, Person
from controller.git.guard import guarded_env, inherited_config
from tests.support.gitenv import ALICE, commit_all, git

BOT = Person("plangate", "plangate@example.com")


def _forge_first_parent(repo: Path, commit: str, parent: str) -> None:
    """Write the commit-graph and give ``commit`` another first parent in it (the object is
    untouched: ``git log`` over the graph walks past the commits in between)."""
    git(repo, "commit-graph", "write", "--reachable")
    path = repo / ".git" / "objects" / "info" / "commit-graph"
    data = bytearray(path.read_bytes())
    chunks = {}
    for i in range(data[6]):
        at = 8 + 12 * i
        chunks[bytes(data[at : at + 4])] = struct.unpack(">Q", data[at + 4 : at + 12])[0]
    count = struct.unpack(">I", data[chunks[b"OIDF"] + 1020 : chunks[b"OIDF"] + 1024])[0]
    table = chunks[b"OIDL"]
    oids = [data[table + 20 * i : table + 20 * (i + 1)].hex() for i in range(count)]
    entry = chunks[b"CDAT"] + 36 * oids.index(commit)
    data[entry + 20 : entry + 24] = struct.pack(">I", oids.index(parent))
    os.chmod(path, 0o644)
    path.write_bytes(bytes(data))


def _chain(repo: Path) -> tuple[str, str, str]:
    (repo / "plans").mkdir(exist_ok=True)
    shas = []
    for name in ("one", "two", "three"):
        (repo / "plans" / name).write_text(f"{name}\n")
        shas.append(commit_all(repo, name, ALICE))
    return shas[0], shas[1], shas[2]


def test_git_over_an_unverified_store_reads_no_commit_graph(repo: Path) -> None:
    one, two, three = _chain(repo)
    _forge_first_parent(repo, three, one)
    assert git(repo, "log", "--format=%s", "-3").split() == ["three", "one", "initial"]  # forged
    reader = GitRepo(repo)  # a person's plangate in the shared checkout
    assert reader.run("log", "--format=%s", "-3").split() == ["three", "two", "one"]
    assert [r.sha for r in reader.first_parent_log(one, three, ["plans"])] == [two, three]
    env = guarded_env(repo)  # one-off git calls over the repository's own store
    assert env["GIT_NO_REPLACE_OBJECTS"] == "1"
    pins = dict(inherited_config(env))  # the command scope the git child reads, in order
    assert pins["core.commitGraph"] == "false" and pins["core.useReplaceRefs"] == "false"


def test_the_controllers_own_store_keeps_its_graph(repo: Path, tmp_path: Path) -> None:
    """The pins are for the store nobody verified only: the controller's own store (filled
    by fetch, whose upload-pack already pins the graph off) may use its own graph."""
    _chain(repo)
    own = GitRepo(repo, store=tmp_path / "objects.git")
    assert not own.guard.unverified and GitRepo(repo).guard.unverified


def _plant(repo: Path, body: bytes, instead: bytes) -> str:
    """A loose blob under the name of ``body`` holding ``instead`` (planted before plangate
    writes ``body``: git keeps the bytes it finds under a name)."""
    name = hashlib.sha1(b"blob %d\0" % len(body) + body).hexdigest()
    path = repo / ".git" / "objects" / name[:2] / name[2:]
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(zlib.compress(b"blob %d\0" % len(instead) + instead))
    return name


def test_a_person_committing_over_a_planted_object_is_refused(repo: Path) -> None:
    _, _, head = _chain(repo)
    planted = _plant(repo, b"target: prod-db-DROP\n", b"target: staging\n")
    person = GitRepo(repo)
    with pytest.raises(GitError) as caught:
        person.commit_files(
            branch="main", parent=head, files={"plans/x": b"target: prod-db-DROP\n"},
            message="approve\n", author=Person("Alice", "alice@example.com"),
        )  # fmt: skip
    assert caught.value.code == "E_GIT" and planted in str(caught.value)
    assert "object store" in str(caught.value)
    assert caught.value.remedy and "hash-object -w" in caught.value.remedy
    assert git(repo, "rev-parse", "HEAD").strip() == head  # nothing committed over it


def test_the_controllers_write_over_a_planted_object_is_noted(repo: Path, tmp_path: Path) -> None:
    _, _, head = _chain(repo)
    planted = _plant(repo, b"frozen\n", b"forged\n")
    controller = GitRepo(repo, store=tmp_path / "objects.git")
    controller.branch_head("main")  # takes the branch into its own store
    sha = controller.commit_files(
        branch="main", parent=head, files={"plans/f": b"frozen\n"}, message="freeze\n", author=BOT
    )
    assert sha is not None and controller.forged_shared == [planted]
    assert controller.read_file(sha, "plans/f") == b"frozen\n"  # its own store: the true bytes
    clean = controller.commit_files(
        branch="main", parent=sha, files={"plans/g": b"honest\n"}, message="next\n", author=BOT
    )
    assert clean is not None and controller.forged_shared == [planted]  # only what it wrote


def test_a_burst_written_over_a_planted_object_is_read_as_written(
    repo: Path, tmp_path: Path
) -> None:
    """A burst's commit (one pack per store) over a name the agent planted a loose object
    under: every reader of the shared checkout gets the controller's bytes (git reads a pack
    before a loose object), and the controller's own store holds them; a name the shared
    store held is read back as one by one (noted when its bytes are not the name's)."""
    _, _, head = _chain(repo)
    planted = _plant(repo, b"plan 7\n", b"target: prod-db-DROP\n")
    controller = GitRepo(repo, store=tmp_path / "objects.git")
    controller.branch_head("main")
    files = {f"plans/p{i:02d}": f"plan {i}\n".encode() for i in range(20)}
    sha = controller.commit_files(
        branch="main", parent=head, files=files, message="a burst\n", author=BOT
    )
    assert sha is not None
    assert git(repo, "show", f"{sha}:plans/p07") == "plan 7\n"
    assert git(repo, "cat-file", "blob", planted) == "plan 7\n"
    assert controller.read_file(sha, "plans/p07") == b"plan 7\n"
    assert controller.forged_shared in ([], [planted])
