"""Git's built-in ``ident`` and ``working-tree-encoding`` conversions in-process
(controller/git/conversion.py) agree with git itself: what ``git checkout`` writes for a blob
and what ``git hash-object --path`` (``git add``) stores for those bytes (round 76: such a
plan, clean to ``git status``, waited forever on "uncommitted edits")."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.errors import AttributeUnsupported
from controller.git.gitrepo import GitRepo
from tests.support.gitenv import commit_all, git

ATTRIBUTES = ["ident", "ident text eol=crlf", "working-tree-encoding=ISO-8859-1",
              "working-tree-encoding=UTF-16", "working-tree-encoding=UTF-16LE",
              "working-tree-encoding=UTF-16LE-BOM",
              "working-tree-encoding=utf-32", "working-tree-encoding=UTF-8",
              "working-tree-encoding=SHIFT-JIS",
              "ident text eol=crlf working-tree-encoding=UTF-16LE-BOM"]  # fmt: skip
CONTENTS = {
    "id": "# $Id$\nplan:\n  name: café\n",
    "ids": "$Id$ $Id:$ $Id: x $ $Id:  y  $\n$Id: two\nlines $\n",
    "foreign": "# $Id: PLAN.yml,v 1.2 2001/01/01 alice $\n",
    "expanded": "# $Id: 0123456789012345678901234567890123456789 $\n",
    "plain": "plan:\n  name: x\n",
    "crlf": "plan:\r\n  name: x\r\n",
}


@pytest.mark.parametrize("attr", ATTRIBUTES)
def test_checked_out_and_stored_as_git_does(repo: Path, attr: str) -> None:
    gitrepo = GitRepo(repo)
    try:
        for name, text in CONTENTS.items():
            (repo / f"{name}.yml").write_bytes(text.encode("utf-8"))
        commit_all(repo, "blobs, before the attribute")
        (repo / ".gitattributes").write_text(f"*.yml {attr}\n")
        for name in CONTENTS:
            (repo / f"{name}.yml").unlink()
        git(repo, "checkout", "-q", "--", ".")
        for name in CONTENTS:
            path = f"{name}.yml"
            blob = gitrepo.blob(gitrepo.blob_sha("HEAD", path) or "")
            want = (repo / path).read_bytes()
            assert gitrepo.as_checked_out({path: blob})[path] == want, (name, blob, want)
            stored = git(repo, "hash-object", "--path", path, str(repo / path)).strip()
            mine = gitrepo.as_committed(path, want)
            assert gitrepo.run("hash-object", "--stdin", input=mine).strip() == stored, name
    finally:
        gitrepo.close()


@pytest.mark.parametrize(
    ("attr", "data"),
    [
        ("working-tree-encoding=UTF-16", "plan: x\n".encode("utf-16-le")),  # no mark
        ("working-tree-encoding=UTF-16LE", "plan: x\n".encode("utf-16")),  # a mark
        ("working-tree-encoding=ISO-8859-1", b"plan: x\n"),
        ("ident", b"# $Id: 0123 $\n"),
    ],
)
def test_bytes_git_would_refuse_or_keep(repo: Path, attr: str, data: bytes) -> None:
    """A mark where git's rules forbid one (or none where they need one) is stored as it is:
    the file reads as edited, never decoded by a guess."""
    (repo / ".gitattributes").write_text(f"*.yml {attr}\n")
    gitrepo = GitRepo(repo)
    try:
        mine = gitrepo.as_committed("x.yml", data)
        if "UTF-16" in attr:
            assert mine == data
        elif attr == "ident":
            assert mine == b"# $Id$\n"
        else:
            assert mine == data
    finally:
        gitrepo.close()


@pytest.mark.parametrize("encoding", ["X-NO-SUCH-ENC", "UTF-16BE-BOM", "base64"])
def test_an_encoding_it_cannot_read_is_refused_with_its_remedy(repo: Path, encoding: str) -> None:
    """git's iconv cannot open it (``base64`` is a Python codec, no encoding iconv knows;
    round 77), or git itself cannot store a file in it (``UTF-16BE-BOM``: ``git add`` fails
    "failed to encode"): refused with a code, never compared by a guess."""
    (repo / ".gitattributes").write_text(f"*.yml working-tree-encoding={encoding}\n")
    gitrepo = GitRepo(repo)
    try:
        with pytest.raises(AttributeUnsupported) as caught:
            gitrepo.as_committed("plans/a/PLAN.yml", b"plan: x\n")
        assert f"working-tree-encoding={encoding}" in caught.value.message
        assert "remove the working-tree-encoding attribute" in caught.value.remedy
        # checked out as git checks it out (the bytes as they are where it cannot convert)
        want = b"\xfe\xff\x00x\x00\n" if "BOM" in encoding else b"x\n"
        assert gitrepo.as_checked_out({"a.yml": b"x\n"})["a.yml"] == want
    finally:
        gitrepo.close()
