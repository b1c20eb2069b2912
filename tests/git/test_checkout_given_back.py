"""A blob git would not give back from its own checkout is never committed by the controller
(controller/git/conversion.py ``check_checkout``, WorkTree ``check_checkouts``; round 79:
MCP ``submit`` committed into a ``SHIFT-JIS`` folder a ``\\`` and a ``~`` git checks out as
0x5C/0x7E and reads back as ``¥``/``‾``, the file modified at once). The oracle is git: the
blob committed as it is, checked out by ``git checkout``, and ``git status`` asked with the
file's stat data changed (so git reads its content)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from controller.errors import AttributeUnsupported
from controller.git import iconv
from controller.git.gitrepo import GitRepo
from tests.support.gitenv import commit_all, git

pytestmark = pytest.mark.skipif(not iconv.available(), reason="no glibc iconv")

CASES = [
    ("working-tree-encoding=SHIFT-JIS", "task: a \\ b ~ c\n", "'\\\\' '~'"),
    ("working-tree-encoding=SHIFT-JIS", "task: yen \\\n", "'\\\\'"),
    ("working-tree-encoding=SHIFT-JIS", "task: 日本\n", None),
    ("working-tree-encoding=SHIFT-JIS", "log: ✅ done\n", None),  # iconv fails: kept as UTF-8
    ("working-tree-encoding=SHIFT-JIS", "task: plain\n", None),
    ("working-tree-encoding=EUC-JP", "task: a \\ b ~ c\n", None),
    ("working-tree-encoding=ISO-2022-JP", "task: 日本 ✅\n", None),
    ("working-tree-encoding=UTF-16", "task: a \\ b ~ c ✅\n", None),
    ("working-tree-encoding=UTF-16LE-BOM eol=crlf", "task: a \\ b\n", None),
    ("working-tree-encoding=UTF-7", "task: a \\ b ~ c\n", None),
    ("working-tree-encoding=rot13", "task: a \\ b\n", None),  # iconv cannot open: as it is
    ("ident", "id: $Id: someone else's $\n", ""),
    ("ident", "id: $Id$\n", None),
    ("text eol=crlf", "a: 1\r\nb: 2\n", ""),  # the CRLF reads back as LF
    ("text=auto eol=crlf", "a: 1\r\nb: 2\n", None),  # git keeps a CR blob's line ends
    ("text eol=crlf", "a: 1\nb: 2\n", None),
]


def _committed_as_is(repo: Path, path: str, blob: bytes) -> None:
    """``blob`` committed at ``path`` without any conversion, then checked out by git."""
    sha = git(repo, "hash-object", "-w", "--no-filters", "--stdin", data=blob).strip()
    git(repo, "update-index", "--add", "--cacheinfo", f"100644,{sha},{path}")
    git(repo, "commit", "-q", "-m", "the blob")
    (repo / path).unlink(missing_ok=True)
    git(repo, "checkout", "-q", "--", path)
    later = time.time() + 5  # stat data the index does not vouch for: git reads the file
    os.utime(repo / path, (later, later))


@pytest.mark.parametrize(("attributes", "text", "lost"), CASES)
def test_refused_exactly_where_git_status_calls_the_checkout_modified(
    repo: Path, attributes: str, text: str, lost: str | None
) -> None:
    (repo / ".gitattributes").write_text(f"*.yml {attributes}\n")
    commit_all(repo, "the attributes")
    blob = text.encode()
    gitrepo = GitRepo(repo)
    try:
        try:
            gitrepo.check_checkouts({"plan.yml": blob})
            refused = None
        except AttributeUnsupported as exc:
            refused = exc
        _committed_as_is(repo, "plan.yml", blob)
        dirty = git(repo, "status", "--porcelain", "--", "plan.yml").strip()
    finally:
        gitrepo.close()
    assert (refused is not None) == bool(dirty), (refused, dirty)
    assert (lost is not None) == bool(dirty)
    if refused is not None:
        assert refused.code == "E_ATTRIBUTE_UNSUPPORTED" and refused.path == "plan.yml"
        assert "plan.yml" in refused.message and "not committed" in refused.message
        if lost:
            encoding = attributes.split("=", 1)[1]
            assert f"working-tree-encoding={encoding} does not give back {lost}" in (
                refused.message
            )
            assert f"leave out {lost}" in refused.remedy
