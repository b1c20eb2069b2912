"""No file or git blob over ``fsutil.READ_LIMIT`` is read whole (round 31: a 60 MB PLAN.yml,
read to be found too large, cost the controller 3.3 times its size on every pass).

Each bound is shown by what the reader returns or refuses, and by the memory the read
allocates (``tracemalloc``: an unbounded read of the file would allocate its size).
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from controller import fsutil
from controller.errors import BlobTooLarge, PlangateError, PlanTooLarge
from controller.git.gitrepo import GitRepo
from controller.git.objects import file_blob_id
from controller.settings import config_from_data
from tests.support.gitkit import commit_all, git

BIG = fsutil.READ_LIMIT * 3


def _peak(call: Callable[[], Any]) -> tuple[Any, int]:
    """What ``call`` returned or raised, and the most memory it held at once (bytes)."""
    tracemalloc.start()
    try:
        try:
            result: Any = call()
        except PlangateError as exc:
            result = exc
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _big_file(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as handle:
        for _ in range(BIG // (1 << 20)):
            handle.write(b"x" * (1 << 20))
    return path


def test_a_working_tree_file_over_the_limit_is_refused_unread(tmp_path: Path) -> None:
    big = _big_file(tmp_path / "plans" / "big" / "PLAN.yml")
    result, peak = _peak(lambda: fsutil.read_regular(big, root=tmp_path))
    assert isinstance(result, PlanTooLarge) and result.code == "E_PLAN_TOO_LARGE"
    assert peak < fsutil.READ_LIMIT * 1.5  # at most the limit and a byte, never the file
    small = tmp_path / "small.yml"
    small.write_bytes(b"x" * 100)
    assert fsutil.read_regular(small) == b"x" * 100
    assert fsutil.read_regular(small, 10) == b"x" * 11  # an explicit bound: a byte over
    assert len(fsutil.read_regular(big, None)) == BIG  # None: the controller's own files


def test_a_blob_over_the_limit_is_refused_by_its_size(repo: Path) -> None:
    _big_file(repo / "plans" / "big" / "PLAN.yml")
    (repo / "plans" / "small.txt").write_text("small\n")
    commit_all(repo, "a big file")
    gitrepo = GitRepo(repo)
    big = git(repo, "rev-parse", "HEAD:plans/big/PLAN.yml").strip()
    small = git(repo, "rev-parse", "HEAD:plans/small.txt").strip()
    result, peak = _peak(lambda: gitrepo.blob(big))
    assert isinstance(result, BlobTooLarge) and result.size == BIG
    assert result.code == "E_PLAN_TOO_LARGE" and "not read" in result.message
    assert peak < fsutil.READ_LIMIT
    assert gitrepo.blob(small) == b"small\n"  # the persistent reader is still in step
    assert gitrepo.blob_sizes([big, small, "0" * 40]) == {big: BIG, small: 6}
    tree = git(repo, "rev-parse", "HEAD^{tree}").strip()
    assert gitrepo._object(tree, fsutil.READ_LIMIT)  # only blobs are bounded


def test_an_uncommitted_files_id_is_hashed_in_pieces(tmp_path: Path, repo: Path) -> None:
    big = _big_file(repo / "big.bin")
    result, peak = _peak(lambda: file_blob_id(big))
    assert result == git(repo, "hash-object", "big.bin").strip()
    assert peak < 4 * (1 << 20)
    (repo / "link").symlink_to("big.bin")
    assert file_blob_id(repo / "link") is None  # never followed
    assert file_blob_id(repo / "missing") is None


@pytest.mark.parametrize("size", [fsutil.READ_LIMIT, 1])
def test_max_plan_bytes_may_not_exceed_what_is_read(size: int) -> None:
    config = config_from_data({"repo": "/tmp", "limits": {"max_plan_bytes": size}})
    assert config.limits.max_plan_bytes == size
    with pytest.raises(PlangateError) as raised:
        config_from_data({"repo": "/tmp", "limits": {"max_plan_bytes": fsutil.READ_LIMIT + 1}})
    assert raised.value.code == "E_CONFIG_INVALID" and "max_plan_bytes" in str(raised.value)
