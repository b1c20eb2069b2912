"""A status value changed in place is no writing of the plan, however its key is spelled
(round 75, r75status; docs/approvals.md, "Who changed the content"): the history index
decides it on what the parser reads (``yamlio.scalar_alone_changed``: nothing but the
``plan.status`` value's span differs), not on the spelling of ``status:``. Any byte outside
that span (a comment, the key respelled) still makes the committer a writer."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from controller.git.gitrepo import GitRepo
from controller.git.history import HistoryIndex
from controller.git.lifecycle import _lf_lines, _status_rewritten
from controller.git.planstate import folder_key
from controller.plan import yamlio
from tests.support.gitenv import BOT
from tests.support.gitkit import AGENT, BOB, commit_all, git, submitted

FILE = "plans/greet/PLAN.yml"

#: The agent's status key as the reader also reads it (round 75's layouts).
SPELLINGS: dict[str, Callable[[str], str]] = {
    "as-written": lambda t: t,
    "commented": lambda t: t.replace("status: pending_approval", "status: pending_approval  # a"),
    "x-escape": lambda t: t.replace("  status:", '  "\\x73tatus":', 1),
    "u-escape": lambda t: t.replace("  status:", '  "\\u0073tatus":', 1),
    "explicit": lambda t: t.replace(
        "  status: pending_approval", "  ? status\n  : pending_approval"
    ),
    "next-line": lambda t: t.replace(
        "  status: pending_approval", "  status:\n    pending_approval"
    ),
}


def _bobs_approval(repo: Path, spelling: str, edit: Callable[[str], str]) -> bool:
    """Whether Bob is a writer of the plan's folder after his approval ``edit`` of the
    agent's plan with its status key spelled ``spelling`` (read from history alone)."""
    return _bobs_edit(repo, _as_bytes(SPELLINGS[spelling]), _as_bytes(edit))


def _as_bytes(edit: Callable[[str], str]) -> Callable[[bytes], bytes]:
    return lambda raw: edit(raw.decode()).encode()


def _bobs_edit(
    repo: Path, layout: Callable[[bytes], bytes], edit: Callable[[bytes], bytes]
) -> bool:
    """Whether Bob is a writer of the plan's folder after his approval ``edit`` of the file's
    bytes, the agent's ``layout`` of them committed before (read from history alone)."""
    submitted(repo)
    path = repo / FILE
    path.write_bytes(layout(path.read_bytes()))
    commit_all(repo, "agent: the layout", AGENT)
    path.write_bytes(edit(path.read_bytes()))
    commit_all(repo, "approve greet", BOB)
    index = HistoryIndex(repo.parent / "index.sqlite", plans_dir="plans", controller_email=BOT[1])
    index.scan(GitRepo(repo), git(repo, "rev-parse", "HEAD").strip())
    return BOB[1] in index.authors.get(folder_key("plans/greet"), frozenset())


@pytest.mark.parametrize("spelling", list(SPELLINGS))
def test_the_value_changed_in_place_under_any_key_spelling_writes_nothing(
    repo: Path, spelling: str
) -> None:
    assert not _bobs_approval(repo, spelling, lambda t: t.replace("pending_approval", "approved"))


@pytest.mark.parametrize("spelling", list(SPELLINGS))
def test_a_byte_beside_the_value_still_writes(repo: Path, spelling: str) -> None:
    def commented(text: str) -> str:
        return text.replace("pending_approval", "approved  # bob: ok")

    assert _bobs_approval(repo, spelling, commented)


#: The status line rewritten with a byte beside its key or value outside the value's span
#: (round 76: a blank or a tab before or after the new value, a blank before the colon): his
#: writing, though the line is one and the value reads the same.
PADDED: dict[str, Callable[[str], str]] = {
    "two-blanks": lambda t: t.replace("status: pending_approval", "status:  approved"),
    "trailing-blank": lambda t: t.replace("status: pending_approval", "status: approved "),
    "tab-before": lambda t: t.replace("status: pending_approval", "status:\tapproved"),
    "blank-tab-before": lambda t: t.replace("pending_approval", "\tapproved"),
    "tab-after": lambda t: t.replace("pending_approval", "approved\t"),
    "blank-before-colon": lambda t: t.replace("status: pending_approval", "status : approved"),
}


@pytest.mark.parametrize("edit", list(PADDED))
def test_a_blank_beside_the_rewritten_status_line_writes(repo: Path, edit: str) -> None:
    assert _bobs_approval(repo, "as-written", PADDED[edit])


@pytest.mark.parametrize(
    "edit",
    [
        lambda t: t.replace("pending_approval", "approved"),  # the agent's comment kept
        lambda t: t.replace("status: pending_approval  # a", "status: approved"),  # dropped
        lambda t: t.replace("status: pending_approval  # a", "status: 'approved'"),
    ],
)
def test_the_status_line_rewritten_plainly_writes_nothing(
    repo: Path, edit: Callable[[str], str]
) -> None:
    assert not _bobs_approval(repo, "commented", edit)


#: A flow ``plan:`` over several lines, whose status line may be reindented and read the same.
FLOW_LINES = b"plan: {\n  name: x,\n  status: pending_approval\n}\nactions: []\n"


@pytest.mark.parametrize(
    ("old", "new", "plain"),
    [
        (b"  status: pending_approval", b"  status: approved", True),
        (b"  status: pending_approval", b"      status: approved", False),  # reindented
        (b"  status: pending_approval", b"  status:\tapproved", False),
        # its line end changed: a CR added (round 76 took it; round 77 ``lonecr``)
        (b"  status: pending_approval\n", b"  status: approved\r\n", False),
    ],
)
def test_the_rewritten_status_line_keeps_its_indent(old: bytes, new: bytes, plain: bool) -> None:
    after = FLOW_LINES.replace(old, new)
    assert yamlio.read_yaml(after.decode()).data["plan"] == {"name": "x", "status": "approved"}
    assert _status_rewritten(_lf_lines(FLOW_LINES), _lf_lines(after)) is plain


#: The agent's file and the status line's own end in it: LF, CR LF throughout, an LF file
#: whose status line alone ends CR LF, the status line last with no end.
LINE_ENDS: dict[str, bytes] = {
    "lf": b"plan:\n  name: x\n  status: pending_approval\n  task: t\n",
    "crlf": b"plan:\r\n  name: x\r\n  status: pending_approval\r\n  task: t\r\n",
    "mixed": b"plan:\n  name: x\n  status: pending_approval\r\n  task: t\n",
    "last": b"plan:\n  name: x\n  status: pending_approval",
}


@pytest.mark.parametrize("layout", list(LINE_ENDS))
def test_the_status_line_keeping_its_line_end_is_plain(layout: str) -> None:
    before = LINE_ENDS[layout]
    after = before.replace(b"status: pending_approval", b"status: approved")
    assert _status_rewritten(_lf_lines(before), _lf_lines(after))


#: The status line rewritten ``status: approved`` with another line end than its own (round
#: 77, ``lonecr``/``crlfdrop``): a byte outside the value, the writer's, however it reads.
ENDS_CHANGED: list[tuple[str, bytes, bytes]] = [
    ("lf", b"pending_approval\n", b"approved\r\n"),  # a CR added
    ("crlf", b"pending_approval\r\n", b"approved\n"),  # its CR dropped
    ("mixed", b"pending_approval\r\n", b"approved\n"),
    ("last", b"pending_approval", b"approved\r"),
    ("last", b"pending_approval", b"approved\n"),  # a line end added
    ("lf", b"pending_approval\n", b"approved\r\r\n"),
]


@pytest.mark.parametrize(("layout", "old", "new"), ENDS_CHANGED)
def test_the_status_line_with_another_line_end_is_no_plain_change(
    layout: str, old: bytes, new: bytes
) -> None:
    before = LINE_ENDS[layout]
    after = before.replace(b"status: " + old, b"status: " + new)
    assert after != before
    assert not _status_rewritten(_lf_lines(before), _lf_lines(after))


@pytest.mark.parametrize(
    ("layout", "edit", "writes"),
    [
        (b"\n", (b"pending_approval\n", b"approved\r\n"), True),  # lonecr
        (b"\r\n", (b"status: pending_approval\r\n", b"status: approved\n"), True),  # crlfdrop
        (b"\r\n", (b"pending_approval", b"approved"), False),  # a CRLF file's value in place
        (b"\r\n", (b"status: pending_approval\r\n", b"status: approved\r\n"), False),
    ],
)
def test_a_status_line_whose_line_end_changed_writes(
    repo: Path, layout: bytes, edit: tuple[bytes, bytes], writes: bool
) -> None:
    def crlf(raw: bytes) -> bytes:
        return raw.replace(b"\n", layout)

    def approve(raw: bytes) -> bytes:
        assert raw.count(edit[0]) == 1
        return raw.replace(*edit)

    assert _bobs_edit(repo, crlf, approve) is writes


def test_the_key_respelled_with_the_approval_writes(repo: Path) -> None:
    def respelled(text: str) -> str:
        return text.replace('"\\x73tatus": pending_approval', '"status": approved')

    assert _bobs_approval(repo, "x-escape", respelled)
