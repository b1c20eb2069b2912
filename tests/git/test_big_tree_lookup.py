"""A path looked up through a commit's big plans folder without git reading that folder
again (``Objects._through_big_tree``, issue 17: git read the 10,000-entry tree whole for
each lookup, and a 10,000-plan burst's cost grew with the square of the plans).

What users rely on: the answer is git's own, on any tree. Trees are built with real git
(``hash-object -t tree --literally`` takes any bytes), from canonical ones to hostile ones
(entries out of order, a name twice, a file and a folder of one name, odd modes, names
around ``/`` in git's order), and each lookup is compared with ``git cat-file
--batch-check`` of the same ``<commit>:<path>``."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

import pytest

from controller.errors import GitError
from controller.git import objects
from controller.git.gitrepo import GitRepo
from controller.git.objects import BIG_TREE, INDEX_AFTER, _TreeIndex
from tests.support.gitenv import git


def _write(repo: Path, kind: str, data: bytes) -> str:
    out = subprocess.run(
        ["git", "hash-object", "-t", kind, "--literally", "-w", "--stdin"],
        cwd=repo, input=data, capture_output=True, check=True,
    )  # fmt: skip
    return out.stdout.decode().strip()


def _entry(mode: bytes, name: bytes, sha: str) -> bytes:
    return mode + b" " + name + b"\0" + bytes.fromhex(sha)


def _commit(repo: Path, plans: str) -> str:
    root = _write(repo, "tree", _entry(b"40000", b"plans", plans))
    return git(repo, "commit-tree", root, "-m", "plans").strip()


def _git_answers(repo: Path, specs: list[str]) -> list[tuple[str, str] | None]:
    out = subprocess.run(
        ["git", "cat-file", "--batch-check"], cwd=repo, capture_output=True, check=True,
        input="".join(f"{s}\n" for s in specs).encode(),
    )  # fmt: skip
    answers: list[tuple[str, str] | None] = []
    for line in out.stdout.decode().splitlines():
        parts = line.split()
        answers.append(None if parts[-1] == "missing" else (parts[0], parts[1]))
    return answers


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    git(tmp_path, "init", "-q")
    return tmp_path


def _reader(repo: Path) -> GitRepo:
    reader = GitRepo(repo)
    reader.checks_objects = False  # the daemon's reads (its own store): git is asked
    return reader


def _objects(repo: Path) -> dict[str, str]:
    blob = _write(repo, "blob", b"name: p\n")
    folder = _write(repo, "tree", _entry(b"100644", b"PLAN.yml", blob))
    return {"blob": blob, "folder": folder, "missing": "ab" * 20}


_NAMES = [f"p{i:04d}" for i in range(600)]  # over BIG_TREE bytes
_NEAR = ["p0001-x", "p0001.x", "p0001/", "p0001 ", "p0001\u00e9", "q", "P0001", "p", ""]


def _asked(names: list[bytes]) -> list[str]:
    decoded = [n.decode("utf-8", "replace") for n in names]
    return sorted(set(decoded + _NEAR + ["p0001", "p0599", "zz"]))


def _answer(reader: GitRepo, spec: str) -> tuple[str, object]:
    try:
        return ("ok", reader._lookup(spec))
    except GitError as exc:  # an object the path goes through is missing: E_GIT, as before
        return ("error", str(exc))


def _check(repo: Path, entries: list[tuple[bytes, bytes, str]], patch: pytest.MonkeyPatch) -> bool:
    """Every lookup through the plans tree of ``entries`` answers as git does (and as the
    reader did before: git asked each time, errors included); True when the fast path was
    taken (the tree indexed)."""
    data = b"".join(_entry(*e) for e in entries)
    assert len(data) >= BIG_TREE
    commit = _commit(repo, _write(repo, "tree", data))
    names = [n for n in _asked([name for _, name, _ in entries]) if n]
    specs = [f"{commit}:plans/{n}" for n in names] + [f"{commit}:plans/{n}/PLAN.yml" for n in names]
    reader = _reader(repo)
    try:
        for spec in specs[:INDEX_AFTER]:  # asked often enough to be indexed
            _answer(reader, spec)
        got = [_answer(reader, spec) for spec in specs]
        indexed = reader._indexes.get((commit, "plans")) is not None
    finally:
        reader.close()
    with patch.context() as never:
        never.setattr(objects, "INDEX_AFTER", 10**9)
        before = _reader(repo)
        try:
            want = [_answer(before, spec) for spec in specs]
        finally:
            before.close()
    assert got == want
    git_says = _git_answers(repo, specs)
    for (how, value), said in zip(got, git_says, strict=True):
        assert value == said if how == "ok" else said is None
    return indexed


def test_a_canonical_big_tree_is_indexed_and_answers_as_git(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    obj = _objects(repo)
    entries = [(b"40000", n.encode(), obj["folder"]) for n in _NAMES]
    entries += [(b"100644", b"p0001-x", obj["blob"]), (b"100644", b"p0001.x", obj["blob"])]
    entries += [
        (b"160000", b"p0002-sub", obj["missing"]),
        (b"40000", b"p0003-gone", obj["missing"]),
    ]
    entries += [(b"100755", b"p0004-x", obj["blob"]), (b"120000", b"p0005-l", obj["blob"])]
    entries.sort(key=lambda e: e[1] + b"/" if e[0] == b"40000" else e[1])
    assert _check(repo, entries, monkeypatch)


@pytest.mark.parametrize(
    "damage",
    ["swap", "twice", "file-and-folder", "mode-0", "mode-odd", "dot", "slash-free-dotdot"],
)
def test_a_hostile_big_tree_answers_as_git(
    repo: Path, damage: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not canonical: never indexed, git answers (entries out of order or twice: git's
    lookup misses or takes the first, round 58)."""
    obj = _objects(repo)
    entries = [(b"40000", n.encode(), obj["folder"]) for n in _NAMES]
    if damage == "swap":
        entries[10], entries[11] = entries[11], entries[10]
    elif damage == "twice":
        entries.insert(20, (b"100644", b"p0019", obj["blob"]))
    elif damage == "file-and-folder":  # "p0030" the file sorts before "p0030-x" and "p0030/"
        entries.insert(30, (b"100644", b"p0030", obj["blob"]))
        entries.insert(31, (b"100644", b"p0030-x", obj["blob"]))
    elif damage == "mode-0":
        entries[40] = (b"040000", entries[40][1], obj["folder"])
    elif damage == "mode-odd":
        entries[40] = (b"100664", entries[40][1], obj["blob"])
    elif damage == "dot":
        entries.insert(0, (b"40000", b".", obj["folder"]))
    else:
        entries.insert(0, (b"40000", b"..", obj["folder"]))
    assert not _check(repo, entries, monkeypatch)


def test_random_trees_answer_as_git(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Random names from an alphabet around ``/`` in git's order (``-``, ``.``, ``0``), random
    modes, sorted by git's rule or shuffled: indexed or not, every answer git's."""
    obj = _objects(repo)
    rng = random.Random(17)
    indexed = 0
    for _ in range(12):
        names = {"".join(rng.choice("ab-.0") for _ in range(rng.randint(1, 4))) for _ in range(40)}
        names -= {".", ".."}  # never canonical: the hostile cases try them
        entries = [(b"40000", n.encode(), obj["folder"]) for n in _NAMES[:550]]
        for n in names:
            mode = rng.choice([b"40000", b"100644", b"100755", b"160000"])
            sha = obj["folder"] if mode == b"40000" else obj["blob"]
            entries.append((mode, n.encode(), sha))
        if rng.random() < 0.7:
            entries.sort(key=lambda e: e[1] + b"/" if e[0] == b"40000" else e[1])
        else:
            rng.shuffle(entries)
        indexed += _check(repo, entries, monkeypatch)
    assert indexed  # the fast path was exercised


def test_tree_index_on_its_own() -> None:
    data = b"".join(_entry(b"40000", n.encode(), "11" * 20) for n in _NAMES)
    index = _TreeIndex.of(data)
    assert index is not None
    assert index.get("p0300") == ("11" * 20, 0o40000)
    assert index.get("p0300x") is None and index.get("p") is None
    assert _TreeIndex.of(data[:-1]) is None  # a cut last entry
