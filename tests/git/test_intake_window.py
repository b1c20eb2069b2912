"""The quick intake beside a big tree's base (controller/git/store.py, ``changed_entries``):
an approval changes one entry of a 10,000-entry plans tree, and the intake reads only the
bytes between what the new tree and its base have in common at their start and end. It must
find every entry whole sets would find (never skip one), on trees git writes and on trees
a hostile commit writes, and still read and hash each one it takes."""

from __future__ import annotations

import hashlib
import random
import re
from pathlib import Path

import pytest

from controller.git import store
from controller.git.gitrepo import GitRepo
from controller.git.store import NotTaken, changed_entries
from tests.support.gitenv import ALICE, commit_all, git

_WHOLE = re.compile(rb"[0-7]+ [^\0]*\0.{20}", re.S)
MODES = (b"40000", b"100644", b"100755", b"120000", b"160000")


def _entry(rng: random.Random, name: bytes) -> bytes:
    return rng.choice(MODES) + b" " + name + b"\0" + rng.randbytes(20)


def _tree(entries: dict[bytes, bytes]) -> bytes:
    return b"".join(entries[name] for name in sorted(entries))


def _exact(new: bytes, old: bytes) -> tuple[frozenset[bytes], frozenset[bytes]]:
    a, b = frozenset(_WHOLE.findall(new)), frozenset(_WHOLE.findall(old))
    return a - b, b - a


@pytest.mark.parametrize("seed", range(40))
def test_on_trees_git_writes_it_finds_exactly_what_whole_sets_find(seed: int) -> None:
    rng = random.Random(seed)
    names = [b"plan-%05d" % i for i in rng.sample(range(100_000), rng.randint(0, 400))]
    old = {name: _entry(rng, name) for name in names}
    new = dict(old)
    for _ in range(rng.randint(0, 6)):  # ids replaced, entries added and removed anywhere
        action = rng.random()
        if action < 0.5 and new:
            name = rng.choice(sorted(new))
            new[name] = new[name][:-20] + rng.randbytes(20)
        elif action < 0.8:
            name = b"plan-%05d" % rng.randrange(100_000)
            new[name] = _entry(rng, name)
        elif new:
            del new[rng.choice(sorted(new))]
    found = changed_entries(_tree(new), _tree(old))
    assert found == _exact(_tree(new), _tree(old))  # a few changes: never left to sets


def test_more_changes_than_its_steps_are_left_to_whole_sets() -> None:
    rng = random.Random(3)
    old = {b"plan-%05d" % i: _entry(rng, b"plan-%05d" % i) for i in range(1000)}
    new = {name: entry[:-20] + rng.randbytes(20) for name, entry in old.items()}
    assert changed_entries(_tree(new), _tree(old)) is None
    few = dict(old)
    for name in sorted(old)[:: 1000 // (store.WINDOW_STEPS // 4)]:
        few[name] = new[name]
    assert changed_entries(_tree(few), _tree(old)) == _exact(_tree(few), _tree(old))


@pytest.mark.parametrize("seed", range(60))
def test_on_hostile_trees_it_never_skips_an_entry(seed: int) -> None:
    """Entries said twice, out of order, names holding spaces and id bytes that look like
    entries: whatever it answers holds every entry whole sets call new (read, hashed) and
    nothing that is not an entry of the tree it says it is from."""
    rng = random.Random(seed)
    pool = [b"a", b"a b", b"\x00"[:0] + b"x", b"plan", b"40000 x", b"z" * 30]
    old_entries = [_entry(rng, rng.choice(pool)) for _ in range(rng.randint(1, 60))]
    if rng.random() < 0.5:  # an id whose bytes spell the start of another entry
        old_entries.append(b"100644 q\0" + b"100644 a\0" + b"\x01" * 11)
    new_entries = list(old_entries)
    for _ in range(rng.randint(1, 5)):
        at = rng.randrange(len(new_entries) + 1)
        choice = rng.random()
        if choice < 0.4:
            new_entries.insert(at, rng.choice(old_entries))  # a duplicate
        elif choice < 0.7 and new_entries:
            new_entries[min(at, len(new_entries) - 1)] = _entry(rng, rng.choice(pool))
        elif new_entries:
            del new_entries[min(at, len(new_entries) - 1)]
    new, old = b"".join(new_entries), b"".join(old_entries)
    found = changed_entries(new, old)
    if found is None:
        return
    added, removed = found
    exact_added, exact_removed = _exact(new, old)
    assert added >= exact_added and removed >= exact_removed
    assert added <= frozenset(_WHOLE.findall(new)) and removed <= frozenset(_WHOLE.findall(old))


def test_garbage_between_the_common_ends_is_left_to_whole_sets() -> None:
    rng = random.Random(7)
    old = _tree({b"plan-%03d" % i: _entry(rng, b"plan-%03d" % i) for i in range(50)})
    cut = len(old) // 2
    assert changed_entries(old[:cut] + b"\xff not an entry" + old[cut:], old) is None


def _big_plans(repo: Path, count: int) -> None:
    plans = repo / "plans"
    plans.mkdir(exist_ok=True)
    for i in range(count):
        (plans / f"plan-{i:05d}.yml").write_text(f"plan {i}\n")


def _windows(monkeypatch: pytest.MonkeyPatch) -> list[tuple[frozenset[bytes], frozenset[bytes]]]:
    """The answers ``changed_entries`` gave the intake (the quick path was taken)."""
    seen: list[tuple[frozenset[bytes], frozenset[bytes]]] = []
    real = store.changed_entries

    def spy(new: bytes, old: bytes) -> tuple[frozenset[bytes], frozenset[bytes]] | None:
        found = real(new, old)
        if found is not None:
            seen.append(found)
        return found

    monkeypatch.setattr(store, "changed_entries", spy)
    return seen


def _names(entries: frozenset[bytes]) -> set[bytes]:
    return {entry.partition(b"\0")[0] for entry in entries}


def test_an_approval_in_a_big_plans_tree_is_taken_in_whole(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _big_plans(repo, 3000)  # a plans tree of ~110 KB: over STORE_RAW_ABOVE
    commit_all(repo, "3,000 plans", ALICE)
    GitRepo(repo, store=tmp_path / "state" / "objects.git").branch_head("main")  # a fetch
    gitrepo = GitRepo(repo, store=tmp_path / "state" / "objects.git")
    seen = _windows(monkeypatch)
    monkeypatch.setattr(gitrepo, "_fetch_into_store", lambda ref: pytest.fail("fetched"))
    (repo / "plans" / "plan-01500.yml").write_text("plan 1500, approved\n")
    approval = commit_all(repo, "approve", ALICE)
    assert gitrepo.branch_head("main") == approval
    assert [_names(added) for added, _ in seen] == [{b"100644 plan-01500.yml"}]
    assert [_names(removed) for _, removed in seen] == [{b"100644 plan-01500.yml"}]
    (repo / "plans" / "plan-00000.yml").unlink()
    (repo / "plans" / "plan-01501.yml").write_text("plan 1501, approved\n")
    (repo / "plans" / "plan-02999a.yml").write_text("a new plan at the end\n")
    tip = commit_all(repo, "remove, approve, add", ALICE)
    assert gitrepo.branch_head("main") == tip
    assert _names(seen[-1][0]) == {b"100644 plan-01501.yml", b"100644 plan-02999a.yml"}
    assert _names(seen[-1][1]) == {b"100644 plan-00000.yml", b"100644 plan-01501.yml"}
    store_dir = tmp_path / "state" / "objects.git"
    git(store_dir, "--git-dir", str(store_dir), "fsck", "--connectivity-only", "--no-dangling")
    assert gitrepo.read_file(tip, "plans/plan-01500.yml") == b"plan 1500, approved\n"
    assert gitrepo.read_file(tip, "plans/plan-02999a.yml") == b"a new plan at the end\n"


def test_a_forged_blob_in_a_big_plans_tree_is_still_refused(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The changed entry's object is read and hashed on the quick path too: the shared
    store's bytes for it that hash to another name stop the intake (git fetch decides)."""
    import os
    import zlib

    _big_plans(repo, 3000)
    commit_all(repo, "3,000 plans", ALICE)
    gitrepo = GitRepo(repo, store=tmp_path / "state" / "objects.git")
    gitrepo.branch_head("main")
    (repo / "plans" / "plan-01500.yml").write_text("plan 1500, approved\n")
    tip = commit_all(repo, "approve", ALICE)
    blob = git(repo, "rev-parse", f"{tip}:plans/plan-01500.yml").strip()
    path = repo / ".git" / "objects" / blob[:2] / blob[2:]
    os.chmod(path, 0o644)
    path.write_bytes(zlib.compress(b"blob 11\0forged plan"[:19]))
    seen = _windows(monkeypatch)
    with pytest.raises(NotTaken, match="does not hash to its name"):
        gitrepo._intake().take(tip)
    assert seen, "the quick path was not taken"
    assert hashlib.sha1(b"blob 11\0forged plan"[:19]).hexdigest() != blob
