"""Repositories with long histories, built in one ``git fast-import`` run.

A test or benchmark that needs thousands of commits cannot afford one ``git commit`` each;
:class:`FastImport` writes them as a fast-import stream (one commit a second from a fixed
time, each on the previous one) and :func:`build_repo` loads it into a new repository.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from tests.support.gitenv import git


class FastImport:
    """A git fast-import stream of commits on ``main``, oldest first."""

    def __init__(self, start_time: int = 1_700_000_000) -> None:
        self.parts: list[bytes] = []
        #: How many commits the stream holds (the last one's mark).
        self.mark = 0
        self.time = start_time

    def commit(self, who: tuple[str, str], message: str, files: Mapping[str, bytes | str]) -> None:
        """One commit by ``who`` writing ``files`` (path -> content) over the previous one."""
        self.mark += 1
        self.time += 1
        ident = f"{who[0]} <{who[1]}> {self.time} +0000".encode()
        msg = message.encode()
        body = [b"commit refs/heads/main\nmark :%d\n" % self.mark]
        body.append(b"author " + ident + b"\ncommitter " + ident + b"\n")
        body.append(b"data %d\n%s\n" % (len(msg), msg))
        if self.mark > 1:
            body.append(b"from :%d\n" % (self.mark - 1))
        for path, content in files.items():
            data = content.encode() if isinstance(content, str) else content
            body.append(b"M 100644 inline %s\ndata %d\n%s\n" % (path.encode(), len(data), data))
        self.parts.append(b"".join(body) + b"\n")

    def data(self) -> bytes:
        return b"".join(self.parts)


def build_repo(path: Path, stream: FastImport) -> None:
    """A new repository at ``path`` holding ``stream`` on ``main``, checked out."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "fast-import", "--quiet", data=stream.data())
    git(path, "reset", "-q", "--hard", "main")
