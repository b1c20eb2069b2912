"""The pair labs of rounds 60 and 62 (her approval's dates), played here.

Every variant ``v`` is two agent plans, ``plans/<v>-a`` and ``plans/<v>-b``, frozen on a
clock an hour or two back that the lab's commits and the controller's passes follow (no
sleep): :func:`pairs_lab`. Alice approves them in commits whose author and committer dates
(and committer) the module sets: :func:`commit_dated`, or any git command inside
:func:`dated`. :func:`second_look` plays the end: a pass, Bob approves the plan her
rejection vetoed, two passes and ``plangate audit --json``. A module keeps its variants, its
dates, its ``BROKEN`` entries and its assertions.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from pathlib import Path

from advkit import AGENT, BOB, Lab

Who = tuple[str, str]


def pair_plan(slug: str) -> str:
    """The agent's plan ``slug``: one ``rec`` call tagged ``slug``."""
    return (
        f'plan:\n  name: "{slug}"\n  task: "agent task {slug}"\n  status: pending_approval\n'
        "available_tools: [{name: rec}]\nactions:\n  - id: 1\n    tool: rec\n"
        f'    why: "agent: record {slug}"\n    params: {{tag: "{slug}"}}\n'
    )


def pairs_lab(root: Path, vids: list[str], back: int) -> tuple[Lab, int]:
    """A lab whose agent commits ``<v>-a`` and ``<v>-b`` per variant ``back`` seconds ago
    and a pass freezes them a minute later: the lab and that pass's time (epoch seconds)."""
    lab = Lab(root)
    t = int(time.time()) - back
    lab.git_date = f"@{t} +0000"
    for v in vids:
        lab.write(f"{v}-a", pair_plan(f"{v}-a"))
        lab.write(f"{v}-b", pair_plan(f"{v}-b"))
    lab.commit("agent plans", AGENT)
    t += 60
    lab.git_date = f"@{t} +0000"
    lab.run()
    return lab, t


@contextlib.contextmanager
def dated(lab: Lab, author: int, committer: int, by: Who | None = None) -> Iterator[None]:
    """The lab's git commands inside date their commits ``author`` and ``committer``
    (epoch seconds) and name ``by`` as the committer when given."""
    env = {"GIT_AUTHOR_DATE": f"@{author} +0000", "GIT_COMMITTER_DATE": f"@{committer} +0000"}
    if by:
        env.update(GIT_COMMITTER_NAME=by[0], GIT_COMMITTER_EMAIL=by[1])
    lab.extra_env = env  # type: ignore[attr-defined]
    try:
        yield
    finally:
        lab.extra_env = {}  # type: ignore[attr-defined]


def commit_dated(
    lab: Lab, who: Who, msg: str, author: int, committer: int, by: Who | None = None
) -> None:
    """Everything in the tree committed by ``who`` (``by`` committing, when given), dated
    as :func:`dated` says."""
    lab.git("add", "-A")
    with dated(lab, author, committer, by):
        lab.git("commit", "-q", "--allow-empty-message", "-m", msg, who=who)


def second_look(lab: Lab, t: int, vetoed: str) -> None:
    """From ``t`` on: 2 min later a pass; a minute later Bob approves ``vetoed``; a pass a
    minute later, and another; ``plangate audit --json`` as ``lab.report``; the lab back on
    the real clock."""
    lab.git_date = f"@{t + 120} +0000"
    lab.run()
    lab.git_date = f"@{t + 180} +0000"
    lab.set_status(vetoed, "approved")
    lab.commit(f"bob approves {vetoed}", BOB)
    for later in (t + 240, t + 300):
        lab.git_date = f"@{later} +0000"
        lab.run()
    _code, lab.report = lab.audit()  # type: ignore[attr-defined]
    lab.git_date = None
