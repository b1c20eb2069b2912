"""``working-tree-encoding`` converted with git's own converter, glibc's iconv
(controller/git/iconv.py, through controller/git/conversion.py), compared with git itself over
every character of each encoding: what ``git checkout`` writes for a UTF-8 blob, and what
``git hash-object --path`` (``git status``) and ``git add`` store for the working tree's bytes
(round 77: Python's codecs of the same names read SHIFT-JIS ``¥``/``‾``, EUC-JP ``～``, BIG5
``¯`` and GBK ``€`` otherwise, and wrote BIG5 ``／`` as bytes git reads as ``∕``: a plan
``git status`` called clean waited "uncommitted edits" forever, and a freeze left it dirty)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from controller.errors import AttributeUnsupported
from controller.git import iconv
from controller.git.gitrepo import GitRepo
from tests.support.gitenv import commit_all, git

pytestmark = pytest.mark.skipif(not iconv.available(), reason="no glibc iconv")

#: the round's tables, names Python does not know (``UCS-2``), a stateful one (git makes no
#: final reset of ``ISO-2022-JP``) and the UTF-16 forms git handles behind marks
ENCODINGS = ["SHIFT-JIS", "SJIS", "EUC-JP", "BIG5", "GBK", "CP932", "EUC-KR", "UCS-2",
             "ISO-2022-JP", "UTF-16", "UTF-16LE-BOM", "ISO_8859-1:1987", "latin-1"]  # fmt: skip


#: iconv's own name where git's differs (git's ``fallback_encoding``, its mark names)
ICONV_NAME = {"latin-1": "ISO-8859-1", "UTF-16LE-BOM": "UTF-16LE"}


def _characters(encoding: str) -> str:
    """Every BMP character iconv writes in ``encoding`` (no line ends: no eol conversion),
    in lines of 64."""
    encoding = ICONV_NAME.get(encoding, encoding)
    chars = []
    for point in range(0x20, 0x10000):
        char = chr(point)
        if 0xD800 <= point < 0xE000:
            continue
        if iconv.convert(char.encode(), encoding, "UTF-8") is not None:
            chars.append(char)
    assert len(chars) > 90, encoding
    return "".join("".join(chars[i : i + 64]) + "\n" for i in range(0, len(chars), 64))


def _hash_as_git_stores(repo: Path, path: str) -> str:
    return git(repo, "hash-object", "--path", path, str(repo / path)).strip()


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_every_character_checks_out_and_reads_back_as_git_does(repo: Path, encoding: str) -> None:
    tail = "# ends in kanji 日本"  # ISO-2022-JP: git writes no reset to ASCII after it
    if iconv.convert(tail.encode(), ICONV_NAME.get(encoding, encoding), "UTF-8") is None:
        tail = ""
    text = _characters(encoding) + tail
    (repo / "all.yml").write_bytes(text.encode())
    commit_all(repo, "the blob, before the attribute")
    (repo / ".gitattributes").write_text(f"*.yml working-tree-encoding={encoding}\n")
    (repo / "all.yml").unlink()
    git(repo, "checkout", "-q", "--", "all.yml")
    gitrepo = GitRepo(repo)
    try:
        blob = gitrepo.blob(gitrepo.blob_sha("HEAD", "all.yml") or "")
        written = (repo / "all.yml").read_bytes()
        assert written != blob  # converted
        mine = gitrepo.as_checked_out({"all.yml": blob})["all.yml"]
        assert mine == written, _first_difference(mine, written)
        stored = gitrepo.as_committed("all.yml", written)
        want = _hash_as_git_stores(repo, "all.yml")
        assert gitrepo.run("hash-object", "--stdin", input=stored).strip() == want
        # a table's character iconv writes but reads back as another: dirty to git too
        clean = git(repo, "status", "--porcelain", "--", "all.yml") == ""
        assert (stored == blob) == clean
    finally:
        gitrepo.close()


#: double-byte tables: every lead and trail byte pair, and every single byte
TABLES = ["SHIFT-JIS", "EUC-JP", "BIG5", "GBK", "CP932"]


def _sequences(encoding: str) -> bytes:
    """Every one- and two-byte sequence iconv reads in ``encoding`` (not a line end)."""
    found = [bytes([b]) for b in range(0x20, 0x100) if _reads(bytes([b]), encoding)]
    for lead in range(0x80, 0x100):
        found += [
            bytes([lead, t]) for t in range(0x40, 0x100) if _reads(bytes([lead, t]), encoding)
        ]
    return b"\n".join(b"".join(found[i : i + 64]) for i in range(0, len(found), 64)) + b"\n"


def _reads(data: bytes, encoding: str) -> bool:
    return iconv.convert(data, "UTF-8", encoding) is not None


@pytest.mark.parametrize("encoding", TABLES)
def test_every_sequence_of_a_table_is_stored_as_git_stores_it(repo: Path, encoding: str) -> None:
    """The working tree's bytes as ``git status`` hashes them and as ``git add`` stores them
    (``git cat-file`` of the staged blob)."""
    (repo / ".gitattributes").write_text(f"*.yml working-tree-encoding={encoding}\n")
    commit_all(repo, "the attribute")
    data = _sequences(encoding)
    (repo / "all.yml").write_bytes(data)
    gitrepo = GitRepo(repo)
    try:
        stored = gitrepo.as_committed("all.yml", data)
        assert stored != data  # converted
        want = _hash_as_git_stores(repo, "all.yml")
        assert gitrepo.run("hash-object", "--stdin", input=stored).strip() == want
        assert _added(repo, "all.yml") == gitrepo.as_committed("all.yml", data, adding=True)
    finally:
        gitrepo.close()


def _added(repo: Path, path: str) -> bytes | None:
    """What ``git add`` stages for ``path`` (``git cat-file`` of its blob); None: refused."""
    if subprocess.run(["git", "add", path], cwd=repo, capture_output=True).returncode != 0:
        return None
    blob = git(repo, "ls-files", "-s", path).split()[1]
    return subprocess.run(["git", "cat-file", "blob", blob], cwd=repo, capture_output=True,
                          check=True).stdout  # fmt: skip


def _adding(gitrepo: GitRepo, path: str, data: bytes) -> bytes | None:
    try:
        return gitrepo.as_committed(path, data, adding=True)
    except AttributeUnsupported as exc:
        assert "`git add` refuses it" in exc.message and exc.code == "E_ATTRIBUTE_UNSUPPORTED"
        return None


@pytest.mark.parametrize(
    ("encoding", "listed", "data"),
    [
        ("BIG5", None, b"ten \xa2\xcc\n"),  # read as 十, written back as 0xA451: not checked
        ("BIG5", "BIG5", b"ten \xa2\xcc\n"),  # checked: git add refuses it
        ("BIG5", "SHIFT-JIS, big5", b"ten \xa2\xcc\n"),
        ("BIG5", "BIG5-HKSCS", b"ten \xa2\xcc\n"),  # not the name: another one
        ("BIG5", "", b"ten \xa2\xcc\n"),  # none checked
        ("CP932", "CP932", b"approx \x87\x90\n"),  # NEC's ≒, written as JIS's 0x81E0
        ("SHIFT-JIS", None, b"yen \\ \x81"),  # a lead byte alone: failed to encode
        ("UTF-16", None, "plan: x\n".encode("utf-16-le")),  # no mark where git needs one
        ("UTF-16LE", None, "plan: x\n".encode("utf-16")),  # a mark where git forbids one
        ("EUC-JP", None, "wave 日本\n".encode("euc-jp")),  # a control: stored
    ],
)
def test_bytes_git_add_refuses_are_refused_when_committed(
    repo: Path, encoding: str, listed: str | None, data: bytes
) -> None:
    """An adoption commits the working tree's bytes as ``git add`` would store them: what it
    refuses (iconv's "failed to encode", the mark rules, ``core.checkRoundtripEncoding``'s
    round trip) is refused with a code, never stored by a guess; what it stores, stored."""
    if listed is not None:
        git(repo, "config", "core.checkRoundtripEncoding", listed)
    (repo / ".gitattributes").write_text(f"*.yml working-tree-encoding={encoding}\n")
    commit_all(repo, "the attribute")
    (repo / "x.yml").write_bytes(data)
    gitrepo = GitRepo(repo)
    try:
        assert _adding(gitrepo, "x.yml", data) == _added(repo, "x.yml")
        stored = gitrepo.as_committed("x.yml", data)  # git status: never refused
        want = _hash_as_git_stores(repo, "x.yml")
        assert gitrepo.run("hash-object", "--stdin", input=stored).strip() == want
    finally:
        gitrepo.close()


@pytest.mark.parametrize(
    ("encoding", "data"),
    [
        ("UTF-16LE-BOM", "plan: x\n".encode("utf-16-be")),  # no mark: git reads big-endian
        ("UTF-16LE-BOM", "plan: x\n".encode("utf-16")),
        ("SHIFT-JIS", b"plan: \x81"),  # a lead byte alone: iconv refuses, hashed as it is
        ("UCS-2", "plan: é\n".encode("utf-16-le")),
        ("EUC-JP", b"wave \x8f\xa2\xb7 end\n"),  # JIS X 0212 ～, which Python reads as ~
        ("GBK", b"euro \x80 end\n"),  # which Python's gbk cannot read
    ],
)
def test_edges_are_read_as_git_reads_them(repo: Path, encoding: str, data: bytes) -> None:
    (repo / ".gitattributes").write_text(f"*.yml working-tree-encoding={encoding}\n")
    (repo / "x.yml").write_bytes(data)
    gitrepo = GitRepo(repo)
    try:
        stored = gitrepo.as_committed("x.yml", data)
        want = _hash_as_git_stores(repo, "x.yml")
        assert gitrepo.run("hash-object", "--stdin", input=stored).strip() == want
    finally:
        gitrepo.close()


@pytest.mark.parametrize("encoding", ["unicode_escape", "utf_8_sig", "latin_1", "rot13"])
def test_a_name_only_python_knows_is_held(repo: Path, encoding: str) -> None:
    """git's iconv cannot open it (git checks the blob out as it is and cannot add an edit):
    held with its code, never converted by Python's codec of that name."""
    (repo / ".gitattributes").write_text(f"*.yml working-tree-encoding={encoding}\n")
    gitrepo = GitRepo(repo)
    try:
        with pytest.raises(AttributeUnsupported) as caught:
            gitrepo.as_committed("x.yml", "plan: é\n".encode("latin-1"))
        assert "iconv -l" in caught.value.remedy
        assert gitrepo.as_checked_out({"x.yml": "é\n".encode()})["x.yml"] == "é\n".encode()
    finally:
        gitrepo.close()


def test_iconv_refuses_as_git_does() -> None:
    assert iconv.convert(b"\xff", "UTF-8", "UTF-16") is None  # an incomplete unit
    assert iconv.convert("日本".encode(), "ISO-8859-1", "UTF-8") is None  # not in the table
    assert iconv.convert(b"a" * 100_000, "UTF-32LE", "UTF-8") == "a".encode("utf-32-le") * 100_000
    with pytest.raises(iconv.NoConverter):
        iconv.convert(b"x", "UTF-8", "no-such-encoding")


def _first_difference(a: bytes, b: bytes) -> str:
    at = next(
        (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
    )
    return f"first difference at {at}: {a[at - 8 : at + 8]!r} != {b[at - 8 : at + 8]!r}"
