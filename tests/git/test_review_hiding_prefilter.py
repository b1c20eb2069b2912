"""``worktree._may_hide``, the look without git before ``WorkTree.review_hiding`` asks
``git check-attr`` whether a committed attribute hides a plan from its review (round 113).

It is a pre-filter: a "no" skips git. So it must never say "no" where git gives the path
one of the hiding attributes. Each attribute line here is read by real git (``check-attr``
on a real repository), and wherever git says the plan is hidden the look must say "maybe".
The everyday lines (``*.png binary``, ``*.sh text eol=lf``) must stay a "no": they cost
no process."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.git.worktree import _REVIEW_ATTRIBUTES, _may_hide
from tests.support.gitenv import git

#: a plan's file, and one whose folder's name is not ASCII (git's ``?`` is one byte of it)
PATHS = ["plans/greet/PLAN.yml", "plans/grüße/PLAN.yml"]

#: attribute-file bodies (bytes, as committed), each tried at the root and beside the plan
LINES: list[bytes] = [
    b"plans/greet/PLAN.yml -diff\n",
    b"PLAN.yml -diff\n",
    b"*.yml binary\n",
    b"* binary\n",
    b"/plans/** binary\n",
    b"**/PLAN.yml -diff\n",
    b"plans/**/PLAN.yml -diff\n",
    b"plans/*/PLAN.yml linguist-generated\n",
    b"plans/*/PLAN.yml linguist-generated=true\n",
    b"PLAN.yml gitlab-generated\n",
    b"PLAN.[yY][mM][lL] -diff\n",
    b"PLAN.y?l binary\n",
    b"PLAN.[!x]ml -diff\n",
    b"PLAN.y[^x]l -diff\n",
    b"PLAN.[[:alpha:]]ml -diff\n",
    b"plans/?????/PLAN.yml -diff\n",
    b"plans/???????/PLAN.yml -diff\n",
    b"PLAN\\.yml -diff\n",
    b'"PLAN.yml" -diff\n',
    b'"plans/greet/PLAN\\056yml" -diff\n',
    b"[attr]hide -diff\nPLAN.yml hide\n",
    b"PLAN.yml -text -diff\n",
    b"PLAN.yml\t-diff\n",
    b"  PLAN.yml   -diff  \n",
    b"PLAN.yml -diff\r\n",
    b"PLAN.yml\r-diff\n",
    b"PLAN.yml \r-diff\n",
    b"PLAN.yml\r\t-diff\n",
    b"\xef\xbb\xbfPLAN.yml -diff\n",
    b"# a comment\nPLAN.yml -diff",
    b"plans/greet/ -diff\n",
    b"plans/greet/* -diff\n",
    b"greet/PLAN.yml -diff\n",
    b"*.YML -diff\n",
    b"PLAN.yml diff=yaml\n",
    b"PLAN.yml !diff\n",
    b"PLAN.yml binary -binary\n",
    b"PLAN.yml -diff diff\n",
    b"PLAN.yml linguist-generated=false\n",
    b"PLAN.yml\x0b-diff\n",
    b"PLAN.yml\x0c-diff\n",
    b"PLAN.yml\xc2\x85-diff\n",
    b"PLAN.yml\xe2\x80\xa8-diff\n",
    b"PLAN.yml -diff\x1c\n",
    b"*.png binary\n*.sh text eol=lf\n",
]

#: what the controller must not pay a process for
EVERYDAY = [b"*.png binary\n*.sh text eol=lf\n", b"*.yml text eol=lf\n", b"# nothing\n"]


def _hidden_by_git(repo: Path, place: str, data: bytes, path: str) -> bool:
    (repo / place).parent.mkdir(parents=True, exist_ok=True)
    (repo / place).write_bytes(data)
    try:
        got = git(
            repo, "-c", "core.attributesFile=", "check-attr", "-z", *_REVIEW_ATTRIBUTES, "--", path
        )
    finally:
        (repo / place).unlink()
    values = dict(zip(got.split("\0")[1::3], got.split("\0")[2::3], strict=False))
    return (
        values.get("binary") == "set"
        or values.get("diff") == "unset"
        or any(values.get(name) in ("set", "true") for name in _REVIEW_ATTRIBUTES[2:])
    )


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("beside", [False, True], ids=["root", "beside"])
def test_the_look_never_says_no_where_git_hides_the_plan(
    repo: Path, path: str, beside: bool
) -> None:
    place = path.replace("PLAN.yml", ".gitattributes") if beside else ".gitattributes"
    hidden = {data: _hidden_by_git(repo, place, data, path) for data in LINES}
    assert sum(hidden.values()) >= 12, hidden  # the corpus does reach git's hiding
    missed = [
        data for data, is_hidden in hidden.items() if is_hidden and not _may_hide(data, place, path)
    ]
    assert not missed, missed


@pytest.mark.parametrize("data", EVERYDAY)
def test_the_everyday_attributes_cost_no_process(data: bytes) -> None:
    assert not any(_may_hide(data, ".gitattributes", path) for path in PATHS)
