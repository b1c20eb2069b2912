"""The approval-history labs of rounds 62-64 (the policy in force, flipped lines, lapsed
approvals), played on a past clock here.

Every commit and pass of such a lab is dated on a clock two hours back that moves a few
seconds a step, so the order of decisions is the order of their dates without a sleep:
:class:`PastClock` dates through ``lab.git_date`` (commits and passes alike);
:func:`dated_git` dates one git command by its author and committer (and names the
committer, as a forge's merge button does), :func:`pass_at` one pass. The approvers the
config allows change between passes with :func:`set_approvers`. A module keeps its
variants, its story (which commits, on which branch, by whom), its ``BROKEN`` entries and
its assertions.
"""

from __future__ import annotations

import json
import subprocess
import time

from advkit import ALICE, Lab
from pairkit import dated, pair_plan

Who = tuple[str, str]


def agent_plan(slug: str) -> str:
    """:func:`pairkit.pair_plan` with its tools listed in block style (rounds 63-64's text)."""
    return pair_plan(slug).replace(
        "available_tools: [{name: rec}]\n", "available_tools:\n  - name: rec\n"
    )


class PastClock:
    """A clock ``back`` seconds in the past that each :meth:`tick` moves ``step`` seconds on
    and sets as the lab's date (``lab.git_date``)."""

    def __init__(self, lab: Lab, back: int = 7200, step: int = 30) -> None:
        self.lab = lab
        self.t = int(time.time()) - back
        self.step = step

    def tick(self) -> None:
        self.t += self.step
        self.lab.git_date = f"@{self.t} +0000"

    def run(self, check: bool = True) -> subprocess.CompletedProcess[str]:
        """A tick, then one pass."""
        self.tick()
        return self.lab.run(check=check)


def dated_git(
    lab: Lab,
    t: int,
    *args: str,
    who: Who = ALICE,
    late: int = 0,
    by: Who | None = None,
    input: str | None = None,
) -> str:
    """``git <args>`` as ``who``, authored at ``t`` and committed ``late`` seconds after it
    (by ``by`` when given): the tip after it."""
    with dated(lab, t, t + late, by):
        lab.git(*args, who=who, input=input)
    return lab.head()


def pass_at(lab: Lab, t: int) -> None:
    """One pass dated ``t``; the lab back on the real clock after it."""
    lab.git_date = f"@{t} +0000"
    lab.run()
    lab.git_date = None


def set_approvers(lab: Lab, approvers: list[str]) -> None:
    """The config's ``approval.approvers`` list replaced by ``approvers`` (the rest kept)."""
    text = lab.config.read_text()
    first = text.split("approvers: ", 1)[1].split("\n", 1)[0]
    lab.config.write_text(
        text.replace(f"approvers: {first}", f"approvers: {json.dumps(approvers)}")
    )
