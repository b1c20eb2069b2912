"""The approval-history labs of rounds 62-66 (the policy in force, flipped lines, lapsed
approvals, merges' writers), played on a past clock here.

Every commit and pass of such a lab is dated on a clock two hours back that moves a few
seconds a step, so the order of decisions is the order of their dates without a sleep:
:class:`PastClock` dates through ``lab.git_date`` (commits and passes alike);
:func:`dated_git` dates one git command by its author and committer (and names the
committer, as a forge's merge button does), :func:`pass_at` one pass; :class:`DatedClock`
dates every git command and pass it plays that way. :class:`Pulls` plays the stale pulls
of rounds 64-65 (her docs branch forked at a tip the controller read, pulled onto main).
:class:`LapseClock` is the lapse labs' clock of rounds 67-68: the agent makes its git
commands, dated as git writes a date (so a zone of its own), and each lab ends with the
controller's and a fresh clone's audits (:func:`with_audits`).
The approvers the config allows change between passes with :func:`set_approvers`. A module
keeps its variants, its story (which commits, on which branch, by whom), its ``BROKEN``
entries and its assertions.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from advkit import AGENT, ALICE, Lab, clone_audit, valid_runs
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


class DatedClock:
    """A clock ``back`` seconds in the past that moves ``step`` seconds on before each git
    command (:meth:`git`, dated as :func:`dated_git`) and each pass (:meth:`run`, as
    :func:`pass_at`); a command is made by ``who`` unless it names another."""

    def __init__(self, lab: Lab, who: Who = ALICE, back: int = 7200, step: int = 20) -> None:
        self.lab = lab
        self.who = who
        self.t = int(time.time()) - back
        self.step = step

    def git(
        self,
        *args: str,
        who: Who | None = None,
        by: Who | None = None,
        adate: int | None = None,
        cdate: int | None = None,
        input: str | None = None,
    ) -> str:
        """``git <args>`` authored ``adate`` and committed ``cdate`` (both the clock's time by
        default; by ``by`` when given): the tip after it."""
        self.t += self.step
        author = self.t if adate is None else adate
        committer = self.t if cdate is None else cdate
        with dated(self.lab, author, committer, by):
            self.lab.git(*args, who=who or self.who, input=input)
        return self.lab.head()

    def commit(self, msg: str, who: Who | None = None, **dates: Any) -> str:
        """Everything in the tree committed (:meth:`git`'s ``by``/``adate``/``cdate``)."""
        self.lab.git("add", "-A")
        return self.git("commit", "-q", "-m", msg, who=who, **dates)

    def set(self, slug: str, status: str, who: Who = ALICE, msg: str = "lgtm", **dates: Any) -> str:
        """``who`` sets ``plans/<slug>`` to ``status`` in a commit of its own."""
        self.lab.set_status(slug, status)
        return self.commit(msg, who, **dates)

    def approve(self, slugs: Iterable[str], who: Who = ALICE, msg: str = "approve") -> str:
        """``who`` approves ``slugs`` in one commit."""
        for slug in slugs:
            self.lab.set_status(slug, "approved")
        return self.commit(msg, who)

    def run(self) -> None:
        self.t += self.step
        pass_at(self.lab, self.t)


class LapseClock:
    """A clock two hours back that moves 20 s on before each git command (:meth:`git`) and
    each pass (:meth:`run`, as :func:`pass_at`); a command is the agent's unless it names
    another."""

    def __init__(self, lab: Lab) -> None:
        self.lab = lab
        self.t = int(time.time()) - 7200

    def git(
        self,
        *args: str,
        who: Who = AGENT,
        by: Who | None = None,
        adate: str | None = None,
        cdate: str | None = None,
    ) -> str:
        """``git <args>`` as ``who`` (``by`` committing, when given), authored ``adate`` and
        committed ``cdate`` (git dates, ``@<epoch> <zone>``; the clock's time by default):
        the tip after it."""
        return self.feed(None, *args, who=who, by=by, adate=adate, cdate=cdate)

    def feed(
        self,
        text: str | None,
        *args: str,
        who: Who = AGENT,
        by: Who | None = None,
        adate: str | None = None,
        cdate: str | None = None,
    ) -> str:
        """:meth:`git` with ``text`` on the command's stdin (a patch for ``git am``)."""
        self.t += 20
        a = f"@{self.t} +0000" if adate is None else adate
        c = f"@{self.t} +0000" if cdate is None else cdate
        env = {"GIT_AUTHOR_DATE": a, "GIT_COMMITTER_DATE": c}
        if by:
            env.update(GIT_COMMITTER_NAME=by[0], GIT_COMMITTER_EMAIL=by[1])
        self.lab.extra_env = env  # type: ignore[attr-defined]
        try:
            self.lab.git(*args, who=who, input=text)
        finally:
            self.lab.extra_env = {}  # type: ignore[attr-defined]
        return self.lab.head()

    def set(self, slug: str, status: str, who: Who = ALICE, msg: str = "lgtm", **kw: Any) -> str:
        """``who`` sets ``plans/<slug>`` to ``status`` in a commit of its own, committed by
        ``who`` unless ``by`` names another (:meth:`git`'s ``adate``/``cdate``)."""
        self.lab.set_status(slug, status)
        self.lab.git("add", "-A")
        return self.git("commit", "-q", "-m", msg, who=who, by=kw.pop("by", who), **kw)

    def run(self) -> None:
        self.t += 20
        pass_at(self.lab, self.t)


def with_audits(lab: Lab, root: Path) -> Lab:
    """The lab after a ``status`` read, with the controller's audit (``lab.report``) and a
    fresh clone's in ``root`` (``lab.fresh``)."""
    lab.status()
    _code, lab.report = lab.audit()  # type: ignore[attr-defined]
    lab.fresh, _valid = clone_audit(lab, root)  # type: ignore[attr-defined]
    return lab


def lapse_plans(c: LapseClock, slugs: Iterable[str]) -> None:
    """The agent's plans ``slugs`` (:func:`agent_plan`) committed, a pass (P0, which records
    the policy); one more plan of its own, ``zz-filler``, a pass (P1)."""
    lab = c.lab
    for v in slugs:
        lab.write(v, agent_plan(v))
    lab.git("add", "-A")
    c.git("commit", "-q", "-m", "agent plans")
    c.run()
    lab.write("zz-filler", agent_plan("zz-filler"))
    lab.git("add", "-A")
    c.git("commit", "-q", "-m", "agent: another plan")
    c.run()


def review_approvals(c: LapseClock, slugs: Iterable[str]) -> dict[str, str]:
    """Alice's approval Y of each of ``slugs`` on a review branch of its own
    (``alice/y-<slug>``, off main): Y by slug."""
    y: dict[str, str] = {}
    for v in slugs:
        c.git("checkout", "-q", "-b", f"alice/y-{v}", "main")
        y[v] = c.set(v, "approved", msg="lgtm (review)")
        c.git("checkout", "-q", "main")
    return y


def filler(c: LapseClock, name: str) -> None:
    """The agent's docs commit (``docs/<name>.md``) on the checked-out branch: it moves on."""
    docs = c.lab.repo / "docs"
    docs.mkdir(exist_ok=True)
    (docs / f"{name}.md").write_text(name + "\n")
    c.lab.git("add", "-A")
    c.git("commit", "-q", "-m", f"docs {name}")


def config_audits(lab: Lab, root: Path) -> Lab:
    """:func:`with_audits` with the controller's audit read by its config (``audit
    --config``)."""
    lab.status()
    _code, lab.report = lab.audit("--config", str(lab.config))  # type: ignore[attr-defined]
    lab.fresh, _valid = clone_audit(lab, root)  # type: ignore[attr-defined]
    return lab


#: The repo's owner, whose docs commit starts each phase of a :class:`Pulls` story.
OWNER = ("Owner", "owner@example.com")


class Pulls(PastClock):
    """A :class:`PastClock` for the stale-pull labs of rounds 64-65: Alice's docs branch
    forked at a tip the controller read (:meth:`note`) and pulled onto main
    (:meth:`pull_ff`), each phase settled by a pass that follows it or holds
    (:meth:`settle`: ``lab.phases`` and ``lab.errors`` by variant), and a fresh stale point
    for the next (:meth:`fork`)."""

    def __init__(self, lab: Lab) -> None:
        super().__init__(lab)
        self.forks = 0
        lab.phases = {}  # type: ignore[attr-defined]
        lab.errors = {}  # type: ignore[attr-defined]

    def note(self, branch: str, name: str, base: str, who: Who = ALICE) -> None:
        """``who``'s branch ``branch`` off ``base`` with a docs commit of the file ``name``."""
        self.tick()
        self.lab.git("checkout", "-q", "-b", branch, base)
        (self.lab.repo / name).write_text(f"{name}\n")
        self.lab.commit(f"docs: {name}", who)

    def pull_ff(self, branch: str, *also: str) -> None:
        """On ``branch`` (checked out): main (and ``also``) merged into it by Alice, main
        fast-forwarded to it."""
        self.tick()
        self.lab.git(
            "merge", "-q", "--no-ff", "-m", "merge main into the branch", "main", *also, who=ALICE
        )
        self.lab.git("checkout", "-q", "main")
        self.lab.git("merge", "-q", "--ff-only", branch, who=ALICE)

    def settle(self, vid: str, seen: str) -> str:
        """A pass: ``followed``, or ``held`` (E_HISTORY_REWRITTEN) and main reset to ``seen``,
        the tip read; the tip after it."""
        lab = self.lab
        result = self.run(check=False)
        if result.returncode != 0:
            lab.errors[vid] = result.stderr[-600:]  # type: ignore[attr-defined]
            assert "E_HISTORY_REWRITTEN" in result.stderr, result.stderr[-800:]
            lab.phases[vid] = "held"  # type: ignore[attr-defined]
            lab.git("checkout", "-q", "main")
            lab.git("reset", "-q", "--hard", seen)
        else:
            lab.phases[vid] = "followed"  # type: ignore[attr-defined]
        return lab.head()

    def fork(self) -> tuple[str, str]:
        """A fresh stale point: main's tip now, then the owner's docs commit and a pass (the
        tip read). Only that docs commit sits between them, so no controller record of an
        earlier phase goes behind a later phase's second parent."""
        self.forks += 1
        self.lab.git("checkout", "-q", "main")
        base = self.lab.head()
        self.tick()
        (self.lab.repo / "README").write_text(f"plans, read by the controller ({self.forks})\n")
        self.lab.commit("docs", OWNER)
        self.run()
        return base, self.lab.head()


def moved_runs(lab: Lab, vid: str) -> list[dict[str, Any]]:
    """The valid executions in ``lab.report`` of ``plans/<vid>`` and of its moved folder
    ``plans/<vid>-2``."""
    report = lab.report  # type: ignore[attr-defined]
    return valid_runs(report, vid) + valid_runs(report, f"{vid}-2")


def moved_codes(lab: Lab, vid: str, moved: Iterable[str]) -> str:
    """:meth:`Lab.codes` of ``plans/<vid>``, or of ``plans/<vid>-2`` when ``vid`` is among
    ``moved`` (its first 1500 characters)."""
    return (lab.codes(f"{vid}-2") if vid in moved else lab.codes(vid))[:1500]


# -- rounds 68-70: the merge and quorum labs ---------------------------------------------------
#: The twelve lines a note (:func:`edit_note`) starts from.
NOTE_LINES = [f"line {i}\n" for i in range(1, 13)]


def edit_note(lab: Lab, path: str, **edits: str) -> None:
    """The repo's file ``path`` (:data:`NOTE_LINES` when new) with line ``n`` replaced by the
    text of each ``l<n>=text`` of ``edits``, not committed."""
    f = lab.repo / path
    lines = f.read_text().splitlines(True) if f.exists() else list(NOTE_LINES)
    for k, v in edits.items():
        lines[int(k[1:]) - 1] = v + "\n"
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text("".join(lines))


class StepClock:
    """A clock two hours back that moves 20 s on before each git command and each pass,
    which it dates by ``lab.git_date`` (author and committer alike); a command is the
    agent's unless it names another."""

    def __init__(self, lab: Lab) -> None:
        self.lab, self.t = lab, int(time.time()) - 7200

    def __call__(
        self, *args: str, who: Who = AGENT, check: bool = True, input: str | None = None
    ) -> str:
        """``git <args>`` as ``who``, dated by the clock: its output."""
        self.t += 20
        self.lab.git_date = f"@{self.t} +0000"
        try:
            return self.lab.git(*args, who=who, check=check, input=input)
        finally:
            self.lab.git_date = None

    def git(self, *args: str, who: Who = AGENT, input: str | None = None) -> str:
        """``git <args>`` as ``who``, dated by the clock: the tip after it."""
        self(*args, who=who, input=input)
        return self.lab.head()

    def commit(self, msg: str, who: Who = AGENT) -> str:
        """Everything in the tree committed by ``who``: the tip."""
        self.lab.git("add", "-A")
        return self.git("commit", "-q", "-m", msg, who=who)

    def vote(self, slug: str, who: Who = ALICE, msg: str | None = None) -> str:
        """``who`` approves ``plans/<slug>`` in a commit of its own: the tip."""
        self.lab.set_status(slug, "approved")
        return self.commit(msg or f"approve {slug}", who)

    def run(self) -> None:
        self.t += 20
        pass_at(self.lab, self.t)
