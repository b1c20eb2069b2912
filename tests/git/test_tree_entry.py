"""One entry of a big tree found without decoding the tree (``objects.tree_entry``): the
answer, and the error, are ``parse_tree(data).get(name)``'s on any bytes (perf76: a cold
scan asks the mode of each changed plan file in its parent's 10,000-entry plans folder)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.git.gitrepo import GitRepo, parse_tree
from controller.git.objects import BIG_TREE, tree_entry
from tests.support.gitkit import commit_all, git


def _answer(fn, *args):  # type: ignore[no-untyped-def]
    try:
        return ("ok", fn(*args))
    except Exception as exc:  # the kind of error is compared
        return ("error", type(exc))


def _same(data: bytes, name: str) -> None:
    assert _answer(tree_entry, data, name) == _answer(lambda: parse_tree(data).get(name))


_NAMES = ["p0", "p1", "PLAN.yml", "", "a b", "x\0y", "é", "\udcff", "\ud800", "p0\0"]
_MODES = [b"100644", b"100755", b"40000", b"120000", b"160000", b"0100644", b"100664", b"7"]
_ODD_MODES = [b"+100644", b"1_0", b" 100644", b"10064x", b"", b"0o100644"]


def _entry(mode: bytes, name: bytes, sha: bytes) -> bytes:
    return mode + b" " + name + b"\0" + sha


@settings(max_examples=400, deadline=None)
@given(
    entries=st.lists(
        st.tuples(
            st.sampled_from(_MODES + _ODD_MODES),
            st.sampled_from(
                [n.encode("utf-8", "surrogatepass") for n in _NAMES] + [b"\xff", b"p0 x"]
            ),
            st.binary(min_size=20, max_size=20)
            | st.sampled_from([b" p0\0" + b"1" * 16, b"100644 p1\0" + b"\0" * 10]),
        ),
        max_size=12,
    ),
    cut=st.integers(min_value=0, max_value=25),
    name=st.sampled_from(_NAMES),
)
def test_tree_entry_is_parse_trees_get(
    entries: list[tuple[bytes, bytes, bytes]], cut: int, name: str
) -> None:
    """Duplicates (the last kept), ids holding ``<mode> <name>\\0``, odd modes, a cut last
    entry, NULs and lone surrogates in the name asked: the same answer or the same error."""
    data = b"".join(_entry(*e) for e in entries)
    _same(data, name)
    _same(data[: max(0, len(data) - cut)], name)


def test_tree_entry_on_a_big_tree() -> None:
    rng = random.Random(76)
    names = sorted(f"p{i}" for i in range(3000))
    data = b"".join(_entry(b"40000", n.encode(), rng.randbytes(20)) for n in names)
    assert len(data) > BIG_TREE
    parsed = parse_tree(data)
    for name in ["p0", "p1500", "p2999", "p3000", "p15", "p"]:
        assert tree_entry(data, name) == parsed.get(name)
    # an id that spells an entry of another name is no entry
    fake = _entry(b"100644", b"q1", b" p77\0" + b"9" * 15) + data
    assert tree_entry(fake, "p77") == parse_tree(fake).get("p77")
    # a second entry of a name: the last one, as the dict keeps it
    twice = data + _entry(b"100755", b"p5", b"\1" * 20)
    assert tree_entry(twice, "p5") == ("01" * 20, 0o100755) == parse_tree(twice)["p5"]


def test_mode_of_in_a_big_folder(repo: Path) -> None:
    """``mode_of`` through a plans folder over :data:`BIG_TREE` bytes: git's modes."""
    for i in range(700):
        (repo / "plans" / f"p{i:03d}").mkdir(parents=True)
        (repo / "plans" / f"p{i:03d}" / "PLAN.yml").write_text(f"n: {i}\n")
    (repo / "plans" / "p123" / "PLAN.yml").chmod(0o755)
    commit_all(repo, "plans", ("Agent", "agent@example.com"))
    head = git(repo, "rev-parse", "HEAD").strip()
    big = git(repo, "rev-parse", "HEAD:plans").strip()
    size = int(git(repo, "cat-file", "-s", big).strip())
    assert size > BIG_TREE
    gr = GitRepo(repo)
    try:
        assert gr.mode_of(head, "plans/p123/PLAN.yml") == "100755"
        assert gr.mode_of(head, "plans/p124/PLAN.yml") == "100644"
        assert gr.mode_of(head, "plans/p124") is None  # a folder
        assert gr.mode_of(head, "plans/p999/PLAN.yml") is None
        assert gr.mode_of(head, "plans/p124/PLAN.yml/x") is None
    finally:
        gr.close()


@pytest.mark.parametrize("name", ["p1", "p1\0", "\ud800"])
def test_tree_entry_small_odd_names(name: str) -> None:
    data = _entry(b"100644", b"p1", b"a" * 20)
    _same(data, name)
