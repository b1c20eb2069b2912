"""Git's line-end conversion in-process (controller/git/eol.py) agrees with git itself: what
``git add`` stores and what ``git checkout`` writes, attribute by attribute (round 75)."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.git.gitrepo import GitRepo
from tests.support.gitenv import commit_all, git

ATTRIBUTES = ["text eol=crlf", "text eol=lf", "text", "text=auto", "text=auto eol=crlf",
              "eol=crlf", "-text", "crlf", "-crlf", "binary"]  # fmt: skip
CONTENTS = {
    "lf": b"plan:\n  name: x\n",
    "crlf": b"plan:\r\n  name: x\r\n",
    "mixed": b"plan:\r\n  name: x\n",
    "lonecr": b"plan:\r  name: x\n",
    "nul": b"plan:\n\0name\n",
}


@pytest.mark.parametrize("autocrlf", ["", "true", "input"])
@pytest.mark.parametrize("attr", ATTRIBUTES)
def test_stored_and_checked_out_as_git_does(repo: Path, attr: str, autocrlf: str) -> None:
    (repo / ".gitattributes").write_text(f"*.yml {attr}\n")
    if autocrlf:
        git(repo, "config", "core.autocrlf", autocrlf)
    gitrepo = GitRepo(repo)
    try:
        for name, data in CONTENTS.items():
            path = f"{name}.yml"
            (repo / path).write_bytes(data)
            stored = git(repo, "hash-object", "--path", path, str(repo / path))
            mine = gitrepo.as_committed(path, data)
            assert gitrepo.run("hash-object", "--stdin", input=mine).strip() == stored.strip(), name
        commit_all(repo, "files")
        for name in CONTENTS:
            (repo / f"{name}.yml").unlink()
        git(repo, "checkout", "-q", "--", ".")
        for name in CONTENTS:
            path = f"{name}.yml"
            blob = gitrepo.blob(gitrepo.blob_sha("HEAD", path) or "")
            want = (repo / path).read_bytes()
            assert gitrepo.as_checked_out({path: blob})[path] == want, (name, blob, want)
    finally:
        gitrepo.close()


def test_a_global_line_end_setting_applies_to_the_next_read(repo: Path) -> None:
    """``git config --global core.autocrlf true`` while the daemon runs: what git checks out
    from then on has CR LF, and the controller's next write does too (it read the repository's
    config file only: its writes kept LF, which git then read as edits)."""
    gitrepo = GitRepo(repo)
    try:
        blob = b"plan:\n  name: x\n"
        assert gitrepo.as_checked_out({"a.yml": blob})["a.yml"] == blob
        git(repo, "config", "--global", "core.autocrlf", "true")
        try:
            assert gitrepo.as_checked_out({"a.yml": blob})["a.yml"] == blob.replace(b"\n", b"\r\n")
        finally:
            git(repo, "config", "--global", "--unset", "core.autocrlf")
        assert gitrepo.as_checked_out({"a.yml": blob})["a.yml"] == blob
    finally:
        gitrepo.close()
