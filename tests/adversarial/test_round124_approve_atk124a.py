"""Round 124, approval side (atk124a): the two rules changed in the last session (content a
merge DISCARDS makes nothing and withdraws nothing; an author's right to withdraw is read
from the makings at the plan's OWN folder first), quorum and risk, and many passes against
one pass over the same history.

Labs (local mode, ``run --once`` passes, the recording tool ``rec``; ``hrec`` is the same
script as a ``risk: high`` tool): approvers ``alice@example.com``, ``bob@example.com``,
``carol@example.com``; groups ``ops: [alice, bob]``, ``sec: [carol]``; rules ``{risk: high}``
needs one from ``ops`` and one from ``sec``, ``plans/q*/**`` needs two approvals; ``identity:
author``. The agent writes plans, Mallory (``mallory@example.com``) and Dave
(``dave@example.com``) are nobody. Two twin labs play the SAME acts (59 variants, rounds 0-3:
0 the plans are written, 1-2 the attack, 3 Bob approves; round 4 both labs give again an
approval refused only ``E_PLAN_NOT_FROZEN``, a plan first seen by a pass after its approval):
lab "many" runs ``run --once`` after every round, lab "one" after rounds 0, 2, 3 and 4 only (the
attack's two rounds read in one pass). Then ``plangate audit --json`` in a fresh clone (no
config) of each.

Variants: a side's draft submission merged ``-s ours``, ``--no-ff``, with the resolution
restoring the line's ``draft``, ``-X ours``, in an octopus (``ds*``); the author's or Alice's
draft rejection merged ``-s ours`` / restored, then submitted (``drg*``, ``dra*``); Mallory's
edit (v2) and rejection on a branch merged ``-s ours``, restored by Bob or by herself, kept,
``-X theirs``, squashed by Alice (``v2*``); Alice's, Carol's, the agent's and Mallory's
rejection on a branch merged ``-s ours``, restored, ``-X ours/theirs`` (``aours``,
``arestore``, ``axours``, ``gours``, ``grestore``, ``mours``, ``mxtheirs``); Mallory's copy of
the agent's open pull request at ``plans/<v>-m``, rejected by her, merged ``-s ours``, dropped,
kept, or forked before the PR and merged ``-s ours`` after it (``cp*``); the PR's very file at
the plan's own path on Mallory's branch merged ``-s ours``/dropped before the PR, or forked
before and merged ``-s ours``/``--no-ff`` after it, then the agent (or Mallory) rejects
(``same*``); a race at another folder then Mallory rejects her copy or the agent's plan, the
agent rejects Mallory's copy or its own plan, Mallory's draft copy submitted and rejected by
her, Mallory deletes and re-adds the agent's plan, Mallory ``git mv``s it then the agent (or
she) rejects at the new folder, her copy and rejection in an octopus (``rc*``); copies without
a race (``cpm``, ``cpa``, ``cpcarol``); rejections on the line by Mallory, Carol,
``Carol@Example.COM``, Dave (``l*``); quorum (Alice + Mallory, Alice + Bob, Alice's vote on a
branch merged ``-s ours``, the author's or Mallory's or Dave's rejection between two votes,
Mallory's on a merged branch: ``q*``); risk (Alice + Bob, Alice + Carol, Carol's vote merged
``-s ours``, Mallory's vote: ``rk*``).

Ids (414; 59 variants x 7 + ``passes``): ``<vid>`` (``rec`` calls of the vid's tag in lab
"many"), ``<vid>:status`` (its final ``status --json`` row; at ``plans/<v>-x`` after a move),
``<vid>:audit`` (valid starts in the fresh-clone audit of lab "many"), ``<vid>:agree`` (that
audit calls valid exactly the starts lab "many" committed), ``<vid>:one`` (calls in lab
"one"), ``<vid>:oneagree`` (the same agreement for lab "one"), ``<vid>:twin`` (both labs reach
the same runs and status), ``passes`` (every pass of both labs exited 0, no traceback).

Seen (round 124: 414 ids, 394 passed, 20 xfailed; about 60-80 s wall with -n 1 on a loaded
machine), 3 classes:

- **racer-veto-before-merge** (12 ids: ``rcearly``, ``cpkeep``, ``rcocto`` with ``:status``,
  ``:audit``, ``:one``). FAIL CLOSED. The agent opens a pull request adding ``plans/<v>``
  (pending); Mallory commits its bytes at ``plans/<v>-m`` (on main ``rcearly``, on her branch
  merged ``--no-ff`` by Bob ``cpkeep``, or in an octopus ``rcocto``) and sets HER copy
  ``rejected`` BEFORE Bob merges the PR. After the merge, Bob's approval of the agent's own plan
  is refused ``E_VERSION_WITHDRAWN: this exact version (...) was rejected in plans/<v>-m (...
  by mallory@example.com) before it ran``; the fresh-clone audit and both labs agree. Mallory,
  no approver, so vetoes by hash any content she sees in an open pull request. The same copy
  rejected AFTER the PR's merge (``rcown``), or merged ``-s ours``/dropped (``cpours``,
  ``cpdrop``), vetoes nothing (held). docs/approvals.md: "At her own folder she is its
  originator: her rejection of ``plans/r-m`` withdraws that plan, and vetoes no version (the
  producers, who may veto it by hash, stay the people in both makings)"; brief: "the racer may
  reject her own copy at her folder, which vetoes nothing elsewhere". (The "judged by what had
  been made before it" rule reads the other way: at her rejection she was the content's only
  producer; round 35's ``ours-copy`` was this very outcome for discarded content.) Repro
  (shell, echo tool): ``git checkout -b pr``; the agent commits ``plans/r/PLAN.yml`` (pending);
  ``git checkout main``; Mallory commits the same file as ``plans/r-m/PLAN.yml``, then
  ``status: rejected`` there; Bob ``git merge --no-ff pr``; ``run --once``; Bob commits
  ``status: approved`` in ``plans/r``; ``run --once``: ``plans/r`` stays ``pending_approval``,
  ``E_VERSION_WITHDRAWN``.
- **ours-merged-same-path-copy-counts** (4 ids: ``samelateours`` with ``:status``, ``:audit``,
  ``:one``). FAIL OPEN. Mallory's branch, forked BEFORE the agent's PR, adds the PR's very file
  at ``plans/<v>``; Bob merges the PR, then merges Mallory's branch ``git merge -s ours``; the
  agent sets its pending plan ``rejected``: ``E_APPROVER_NOT_ALLOWED: agent@example.com set
  status rejected ..., but only an allowed approver or an author of the plan may; ignored``, and
  Bob's approval runs it (both labs, the audit agrees). The same branch merged ``-s ours`` (or
  with the file dropped) BEFORE the PR (``sameours``, ``samedrop``) leaves the agent its right
  (held). docs/approvals.md: "What a merged branch MADE counts from its merge only when the merge
  keeps it: content a merge discards (``git merge -s ours``, ...) makes nothing, so its writer is
  no producer or originator of it"; its mechanical reading (``_merge_keeps``: "a file under the
  plans folder holding the content both in the merge and at the same path in a merged parent")
  calls identical bytes kept, so the two sentences conflict, for the lead to decide (the
  ``--no-ff`` twin ``samelateff`` is the documented accepted limit: "two makings at one folder
  keep only someone in both", asserted as documented). Repro: ``git checkout -b m``; Mallory
  commits ``plans/s/PLAN.yml`` (pending); ``git checkout main``; ``git checkout -b pr``; the
  agent commits the same file; ``git checkout main``; Bob ``git merge --no-ff pr``; Bob ``git
  merge -s ours m``; ``run --once``; the agent commits ``status: rejected``; ``run --once``; Bob
  commits ``status: approved``; ``run --once``: ``completed``.
- **author-withdrawal-lost-to-race-then-move** (4 ids: ``rcmv`` with ``:status``, ``:audit``,
  ``:one``). FAIL OPEN. Mallory races the agent's PR at ``plans/<v>-m`` (her copy first on main,
  then Bob merges the PR), then ``git mv plans/<v> plans/<v>-x``; the agent sets
  ``plans/<v>-x`` ``rejected``: ``E_APPROVER_NOT_ALLOWED``, and Bob's approval at
  ``plans/<v>-x`` runs it. Without the move (``rcauth``), or with a move and no race (round
  122's ``ormv``), the agent's rejection counts. The docs' rule ("the originators at the plan's
  own folder (else, when none was made there, a copy or a move, the originators everywhere)")
  sends a moved plan to the originators everywhere, which the race made nobody: the round-122
  fix is undone by a ``git mv`` anyone may commit. docs/approvals.md: "So Dave may reject his
  plan however many copies of it others made"; "Mallory's copy takes nothing from it". Repro:
  as ``racer-veto-before-merge`` without Mallory's rejection; ``run --once``; Mallory ``git mv
  plans/r plans/r-x`` and commits; the agent commits ``status: rejected`` in ``plans/r-x``;
  ``run --once``; Bob commits ``status: approved`` there; ``run --once``: ``completed``.

Fixed (2026-12-07, fix125o): ``author-withdrawal-lost-to-race-then-move`` (``rcmv``,
``rcmv:status``, ``rcmv:audit``, ``rcmv:one``). The cause: who may withdraw a plan
(``Lifecycle.withdrawers``) read the originators at the plan's own folder
(``IndexStore.origins_at``, round 122) and, when no making was there, the originators
everywhere; a move makes nothing, so at ``plans/<v>-x`` the originators everywhere were read,
which the race had made nobody. Now a move carries the plan's lineage with it
(``Lifecycle._carry_lineage``, from ``_apply_plan_change`` for the file ``_paired_from`` pairs
the new one with, on the line or in a merge; a copy, whose source stays, pairs none): the
versions it was edited from at its old folder and their originators there
(``IndexStore.carry_origins_at``), so a chain of moves reads back to the folder the plan was
made at, and only a lineage with no making at any of its folders falls back to the
originators everywhere (``INDEX_VERSION`` 146: an older index is rebuilt). The agent's
rejection at ``plans/<v>-x`` counts, Bob's approval there runs nothing, in both labs and the
fresh-clone audit; ``rcmvm`` (Mallory's rejection after her move) still runs: the move gives
its mover nothing. Tests: tests/approval/test_raced_withdrawals.py (a move after a race: on
the line with passes between, in one pass, twice, on a merged branch; the mover gains
nothing; a move without a race; a moved plan keeps the versions it was edited from; a copy of
a raced plan gives nobody its withdrawal; the racer moving her copy keeps her right there and
vetoes nothing; a move into the racer's emptied folder; her copy removed in the commit that
rejects the author's plan, paired as a move onto it, gives her nothing).

Fixed (2026-12-07, veto125): ``racer-veto-before-merge`` (``rcearly``, ``cpkeep``, ``rcocto``
with ``:status``, ``:audit``, ``:one``). The cause: a producer's withdrawal was kept by the
version's hash (``Lifecycle._veto``, rounds 16 and 23: her own re-add, copy or pin must stay
withdrawn) and bound every plan holding that version (``verdicts._binding_veto`` for the plan's
own version), so Mallory, the only producer when she rejected her copy, vetoed the agent's
independent making that reached the branch later. Now a producer's (non-approver's) withdrawal
binds a plan only where she may withdraw that plan as its author
(``Lifecycle.withdrawers``: the originators at its folder, else everywhere), the rule SPEC §4
already gives a rejection of the plan itself; an allowed approver's still binds every plan. The
controller (``Deciding._decide``), ``plangate check``, the fresh-clone audit, the status row's
``E_VERSION_WITHDRAWN`` reason and MCP ``submit`` read it from one function
(``verdicts.binding_withdrawal``). Her own re-add, a copy of her content and her re-making stay
vetoed (their authors are hers). Tests: tests/approval/test_racer_veto.py.

Decided (2026-12-07, veto125): ``ours-merged-same-path-copy-counts`` (``samelateours`` with
``:status``, ``:audit``, ``:one``) is the accepted limit of the same-path race and now asserts
it, as its ``--no-ff`` twin ``samelateff`` did: an ``-s ours`` merge of a branch holding the
very file the line already holds leaves the tree a plain merge leaves, so "content a merge
discards" cannot be told from content both sides made; two makings at one folder keep only
someone in both, and only an allowed approver withdraws the plan (round 122's ``orrace5``,
decided the same way; docs/threat-model.md, "Accepted limits").

What held (both labs, and the fresh-clone audit agreeing with each controller in every
``:agree``/``:oneagree``): a side's draft submission counts only when the merge keeps it
(``-s ours`` or a resolution restoring ``draft``: the plan stays a draft and Bob's approval runs
nothing; ``--no-ff``, ``-X ours``, an octopus: it runs); the author's draft rejection merged
``-s ours`` or restored is ignored and the submitted plan runs; Alice's draft rejection merged
either way stays (``rejected``); Mallory's v2 and its rejection, discarded (``-s ours``, restored
by Bob or by herself), withdraw nothing and v1 runs, kept (``--no-ff``, ``-X theirs``, Alice's
squash) withdraw v2; Alice's, Carol's and the author's rejections on a branch win whatever the
merge resolves (``-s ours``, restored, ``-X ours``), Mallory's never count; Mallory's copy of an
open PR merged ``-s ours``, dropped, or forked earlier and merged ``-s ours`` later vetoes
nothing; the same-path copy discarded BEFORE the PR leaves the author its right; in a race the
author keeps its right at its own folder, Mallory's rejections of the agent's plan or of her
(submitted draft) copy after the merge veto nothing, the agent's rejection of her copy does not
touch its plan, a delete-and-re-add by Mallory keeps the agent's right; Carol's rejection of
Mallory's (non-race) copy vetoes the version everywhere (``E_VERSION_WITHDRAWN``, the row stays
``pending_approval`` as documented); ``Carol@Example.COM`` counts, Mallory and Dave don't;
quorum and risk: Alice + Mallory, Alice twice, Alice + Bob on a high-risk tool, Carol's vote
discarded by ``-s ours`` stay partial, Alice + Bob and Alice + Carol run, the author's rejection
between votes counts. Many passes against one: every verdict agreed except the documented
lapse (``ONE``): Alice's quorum vote not yet collected by a pass lapses when Mallory or Dave
(no rights) set ``rejected`` after it ("a status change by anyone makes the approval lapse"),
so in lab "one" Bob's vote leaves ``qrejm``, ``qrejmg``, ``qrejd`` partial where lab "many"
ran them (asserted as documented; a non-approver can so delay a quorum). Also seen, not
asserted: in lab "one" a plan whose file says ``rejected`` by someone with no right before its
first pass is not frozen by that pass, and Bob's next approval is refused
``E_PLAN_NOT_FROZEN`` (round 4 gives it again).

Not tried: ``identity: committer``, signed approvals and ``Plan-Approved:`` trailers,
``plangate check`` pull requests, criss-cross merges, cherry-picks and the forge's rebase of the
new cases, gates (``aborted``), pinned libraries, folders reused after a completed plan is
deleted, holds (twin files), remote mode, the daemon, MCP, the page, sources (``PLAN.md``),
``identity_aliases``, ``max_age``, policy changes between decisions.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from test_round2_execution_kit import shared

from tests.adversarial.advkit import (
    AGENT,
    ALICE,
    MALLORY,
    BenchError,
    Lab,
    brief,
    build_all,
    clone_audit_got,
    plan_text,
)

BOB = ("Bob", "bob@example.com")
CAROL = ("Carol", "carol@example.com")
DAVE = ("Dave", "dave@example.com")
FORGE = ("GitHub", "noreply@github.com")

REJ = (0, {"rejected"})
RUN = (1, {"completed"})
NORUN_DRAFT = (0, {"draft"})
PEND = (0, {"pending_approval"})


def _config(lab: Lab) -> None:
    rec = json.dumps([sys.executable, str(lab.recorder), "{tag}"])
    env = f"env: {{REC_LOG: {json.dumps(str(lab.log))}}}"
    lab.config.write_text(
        f"repo: {lab.repo}\nstate_dir: {lab.state}\n"
        "identity: {name: plangate, email: plangate@localhost}\n"
        "approval:\n"
        '  approvers: ["alice@example.com", "bob@example.com", "carol@example.com"]\n'
        "  groups:\n"
        '    ops: ["alice@example.com", "bob@example.com"]\n'
        '    sec: ["carol@example.com"]\n'
        "  rules:\n"
        "    - match: {risk: high}\n"
        "      require: [{group: ops, count: 1}, {group: sec, count: 1}]\n"
        '    - match: {paths: ["plans/q*/**"]}\n      require: [{count: 2}]\n'
        "tools:\n"
        f"  rec: {{kind: exec, argv: {rec}, {env}, risk: low}}\n"
        f"  hrec: {{kind: exec, argv: {rec}, {env}, risk: high}}\n"
        "  echo: {kind: echo}\n"
    )


def _plan(tag: str, status: str = "pending_approval", tool: str = "rec") -> str:
    text = plan_text(tag, status=status)
    if tool != "rec":
        text = text.replace("  - name: rec\n", f"  - name: {tool}\n").replace(
            "    tool: rec\n", f"    tool: {tool}\n", 1
        )
    return text


# -- the acts ------------------------------------------------------------------------------
def setc(lab: Lab, slug: str, status: str, who: tuple[str, str]) -> str:
    lab.set_status(slug, status)
    return lab.commit(f"{who[0]}: {status} {slug}", who)


def edit(lab: Lab, slug: str, who: tuple[str, str], commit: bool = True) -> str:
    path = lab.repo / "plans" / slug / "PLAN.yml"
    text = path.read_text()
    marker = f'      tag: "{slug}"\n'
    if marker not in text:
        raise BenchError(f"no tag line in {slug}")
    path.write_text(text.replace(marker, marker + '      extra: "v2"\n', 1))
    return lab.commit(f"{who[0]}: edit {slug}", who) if commit else ""


def merge(lab: Lab, who: tuple[str, str], *refs: str, opts: tuple[str, ...] = ()) -> str:
    lab.git("merge", "-q", "--no-ff", *opts, "-m", f"merge {' '.join(refs)}", *refs, who=who)
    return lab.head()


def main(lab: Lab) -> None:
    lab.git("checkout", "-q", "main")


def restore(lab: Lab, slug: str) -> Callable[[], None]:
    """A resolution that restores the line's version of ``plans/<slug>`` (an evil merge)."""
    return lambda: lab.git("checkout", "HEAD", "--", f"plans/{slug}")


def drop(lab: Lab, slug: str) -> Callable[[], None]:
    """A resolution that drops the side's ``plans/<slug>``."""
    return lambda: lab.git("rm", "-q", "-r", "-f", f"plans/{slug}")


def _as_committer(lab: Lab, committer: tuple[str, str], *args: str) -> str:
    lab.extra_env = {"GIT_COMMITTER_NAME": committer[0], "GIT_COMMITTER_EMAIL": committer[1]}
    try:
        lab.git(*args)
    finally:
        lab.extra_env = {}
    return lab.head()


# Each variant: vid -> (want, acts by round). Round 0: plans are written (the agent's pending
# plan ``plans/<vid>`` unless the variant writes its own); round 1 and 2: the attack; round 3:
# Bob approves ``plans/<vid>`` (unless ``NOBOB``). Lab "many" runs a pass after every round,
# lab "one" only after the last: both must reach the same verdicts (SPEC: git history alone).
Act = Callable[[Lab, str], None]


def r0_draft(lab: Lab, v: str) -> None:
    lab.write(v, _plan(v, "draft"))
    lab.commit(f"agent: draft {v}", AGENT)


def r0_pending(lab: Lab, v: str) -> None:
    lab.write(v, _plan(v))
    lab.commit(f"agent: {v}", AGENT)


def side_then(
    who: tuple[str, str],
    merger: tuple[str, str],
    act: Act,
    how: str,
    slug_of: Callable[[str], str] = lambda v: v,
) -> Act:
    """``act`` on a branch off main, merged by ``merger``: ``how`` is ``ff`` (``--no-ff``),
    ``ours`` (``-s ours``), ``xours``/``xtheirs`` (``-X``), ``restore`` (the resolution
    restores the line's version of the plan), ``drop`` (the resolution drops the file),
    ``squash`` (the merger's squash commit), ``octo`` (an octopus with a note branch)."""

    def run(lab: Lab, v: str) -> None:
        lab.branch(f"br-{v}", "main")
        act(lab, v)
        main(lab)
        slug = slug_of(v)
        if how == "ff":
            merge(lab, merger, f"br-{v}")
        elif how == "ours":
            merge(lab, merger, f"br-{v}", opts=("-s", "ours"))
        elif how in ("xours", "xtheirs"):
            merge(lab, merger, f"br-{v}", opts=("-X", how[1:]))
        elif how == "restore":
            lab.rmerge(merger, [f"br-{v}"], restore(lab, slug))
        elif how == "drop":
            lab.rmerge(merger, [f"br-{v}"], drop(lab, slug))
        elif how == "squash":
            lab.git("merge", "-q", "--squash", f"br-{v}", who=merger)
            lab.commit(f"{merger[0]}: squash br-{v}", merger)
        elif how == "octo":
            lab.branch(f"br-{v}-n", "main")
            lab.note(f"{v}-n", AGENT)
            main(lab)
            merge(lab, merger, f"br-{v}", f"br-{v}-n")
        else:
            raise BenchError(how)

    return run


def submit(lab: Lab, v: str) -> None:
    setc(lab, v, "pending_approval", AGENT)


def rej_by(who: tuple[str, str], slug: Callable[[str], str] = lambda v: v) -> Act:
    return lambda lab, v: setc(lab, slug(v), "rejected", who) and None


def mallory_v2_rejects(lab: Lab, v: str) -> None:
    edit(lab, v, MALLORY)
    setc(lab, v, "rejected", MALLORY)


def mallory_same(at: str, status: str = "pending_approval", then_reject: bool = False) -> Act:
    """Mallory commits the bytes of the agent's open pull request (``br-pr-<v>``) at ``at``
    (``{v}`` filled in)."""

    def run(lab: Lab, v: str) -> None:
        slug = at.format(v=v)
        lab.put(f"plans/{slug}/PLAN.yml", _plan(v, status))
        lab.commit(f"mallory: {slug}", MALLORY)
        if then_reject:
            setc(lab, slug, "rejected", MALLORY)

    return run


def pr_open(lab: Lab, v: str) -> None:
    """The agent's pull request ``br-pr-<v>`` adding ``plans/<v>`` (not merged yet)."""
    lab.branch(f"br-pr-{v}", "main")
    lab.write(v, _plan(v))
    lab.commit(f"agent: {v}", AGENT)
    main(lab)


def pr_merge(lab: Lab, v: str) -> None:
    merge(lab, BOB, f"br-pr-{v}")


def seq(*acts: Act) -> Act:
    def run(lab: Lab, v: str) -> None:
        for act in acts:
            act(lab, v)

    return run


def race(at: str, how: str = "line", status: str = "pending_approval", rej: bool = False) -> Act:
    """Round 1 of a race: the agent's PR is open; Mallory's same bytes land at ``at`` first,
    on the line (``how == "line"``) or on her branch merged ``-s ours`` (``ours``) or with the
    file dropped (``drop``) or kept (``ff``) by Bob; then Bob merges the PR."""

    def run(lab: Lab, v: str) -> None:
        pr_open(lab, v)
        act = mallory_same(at, status, rej)
        if how == "line":
            act(lab, v)
        else:
            side_then(MALLORY, BOB, act, how, slug_of=lambda x: at.format(v=x))(lab, v)
        pr_merge(lab, v)

    return run


def race_late(at: str, how: str) -> Act:
    """Mallory's branch forked before the agent's PR, with the same bytes at ``at``; the PR is
    merged first, then her branch (``how``)."""

    def run(lab: Lab, v: str) -> None:
        lab.branch(f"br-m-{v}", "main")
        mallory_same(at)(lab, v)
        main(lab)
        pr_open(lab, v)
        pr_merge(lab, v)
        slug = at.format(v=v)
        if how == "ours":
            merge(lab, BOB, f"br-m-{v}", opts=("-s", "ours"))
        elif how == "drop":
            lab.rmerge(BOB, [f"br-m-{v}"], drop(lab, slug))
        else:
            merge(lab, BOB, f"br-m-{v}")

    return run


def mv(src: str, dst: str, who: tuple[str, str]) -> Act:
    def run(lab: Lab, v: str) -> None:
        lab.git("mv", f"plans/{src.format(v=v)}", f"plans/{dst.format(v=v)}")
        lab.commit(f"{who[0]}: move", who)

    return run


def copy(src: str, dst: str, who: tuple[str, str]) -> Act:
    def run(lab: Lab, v: str) -> None:
        lab.put(f"plans/{dst.format(v=v)}/PLAN.yml", lab.read(src.format(v=v)))
        lab.commit(f"{who[0]}: copy", who)

    return run


def readd(who: tuple[str, str]) -> Act:
    def run(lab: Lab, v: str) -> None:
        saved = lab.read(v)
        lab.git("rm", "-q", "-r", f"plans/{v}")
        lab.commit(f"{who[0]}: remove {v}", who)
        lab.write(v, saved)
        lab.commit(f"{who[0]}: add {v} back", who)

    return run


def approve(who: tuple[str, str], slug: str = "{v}") -> Act:
    return lambda lab, v: setc(lab, slug.format(v=v), "approved", who) and None


def none(lab: Lab, v: str) -> None:
    return None


S = side_then
M = "{v}-m"
#: vid -> (calls of the tag wanted, final statuses of ``plans/<vid>``), [round 0, 1, 2, 3]
#: (None for round 3: Bob approves ``plans/<vid>``)
VARIANTS: dict[str, tuple[tuple[int, set[str]], list[Act | None]]] = {
    # -- a side's draft submission counts only when the merge keeps it -----------------------
    "dsours": (NORUN_DRAFT, [r0_draft, S(AGENT, BOB, submit, "ours"), none, None]),
    "dsff": (RUN, [r0_draft, S(AGENT, BOB, submit, "ff"), none, None]),
    "dsrestore": (NORUN_DRAFT, [r0_draft, S(AGENT, BOB, submit, "restore"), none, None]),
    "dsxours": (RUN, [r0_draft, S(AGENT, BOB, submit, "xours"), none, None]),
    "dsocto": (RUN, [r0_draft, S(AGENT, BOB, submit, "octo"), none, None]),
    # -- draft rejections merged ---------------------------------------------------------------
    "drgours": (RUN, [r0_draft, S(AGENT, BOB, rej_by(AGENT), "ours"), submit, None]),
    "drgrestore": (RUN, [r0_draft, S(AGENT, BOB, rej_by(AGENT), "restore"), submit, None]),
    "draours": (REJ, [r0_draft, S(ALICE, BOB, rej_by(ALICE), "ours"), submit, None]),
    "drarestore": (REJ, [r0_draft, S(ALICE, AGENT, rej_by(ALICE), "restore"), submit, None]),
    # -- Mallory's edit (v2) and rejection on a branch: discarded vs kept ---------------------
    "v2ours": (RUN, [r0_pending, S(MALLORY, BOB, mallory_v2_rejects, "ours"), none, None]),
    "v2restore": (RUN, [r0_pending, S(MALLORY, BOB, mallory_v2_rejects, "restore"), none, None]),
    "v2restorem": (
        RUN,
        [r0_pending, S(MALLORY, MALLORY, mallory_v2_rejects, "restore"), none, None],
    ),
    "v2ff": (REJ, [r0_pending, S(MALLORY, BOB, mallory_v2_rejects, "ff"), none, None]),
    "v2xtheirs": (REJ, [r0_pending, S(MALLORY, BOB, mallory_v2_rejects, "xtheirs"), none, None]),
    "v2squash": (REJ, [r0_pending, S(MALLORY, ALICE, mallory_v2_rejects, "squash"), none, None]),
    # -- an approver's or author's withdrawal on a branch, whatever the merge resolves --------
    "aours": (REJ, [r0_pending, S(ALICE, AGENT, rej_by(ALICE), "ours"), none, None]),
    "arestore": (REJ, [r0_pending, S(ALICE, MALLORY, rej_by(ALICE), "restore"), none, None]),
    "axours": (REJ, [r0_pending, S(CAROL, MALLORY, rej_by(CAROL), "xours"), none, None]),
    "gours": (REJ, [r0_pending, S(AGENT, MALLORY, rej_by(AGENT), "ours"), none, None]),
    "grestore": (REJ, [r0_pending, S(AGENT, BOB, rej_by(AGENT), "restore"), none, None]),
    "mours": (RUN, [r0_pending, S(MALLORY, BOB, rej_by(MALLORY), "ours"), none, None]),
    "mxtheirs": (RUN, [r0_pending, S(MALLORY, BOB, rej_by(MALLORY), "xtheirs"), none, None]),
    # -- Mallory's copy of the agent's open PR, merged discarded or kept ----------------------
    "cpours": (RUN, [none, race(M, "ours", rej=True), none, None]),
    "cpdrop": (RUN, [none, race(M, "drop", rej=True), none, None]),
    "rcearly": (RUN, [none, race(M, rej=True), none, None]),
    "cpkeep": (RUN, [none, race(M, "ff", rej=True), none, None]),
    "cplateours": (RUN, [none, race_late(M, "ours"), rej_by(MALLORY), None]),
    # -- the same bytes at the plan's OWN path, discarded: the agent stays its originator ----
    "sameours": (REJ, [none, race("{v}", "ours"), rej_by(AGENT), None]),
    "samedrop": (REJ, [none, race("{v}", "drop"), rej_by(AGENT), None]),
    # the same-path race, merged -s ours: the accepted limit (decided 2026-12-07, veto125)
    "samelateours": (RUN, [none, race_late("{v}", "ours"), rej_by(AGENT), None]),
    "samelateff": (RUN, [none, race_late("{v}", "ff"), rej_by(AGENT), None]),
    "sameoursm": (RUN, [none, race("{v}", "ours"), rej_by(MALLORY), None]),
    # -- a race at another folder: read at the plan's own folder -------------------------------
    "rcown": (RUN, [none, race(M), rej_by(MALLORY, lambda v: v + "-m"), None]),
    "rcother": (RUN, [none, race(M), rej_by(MALLORY), None]),
    "rcagcopy": (RUN, [none, race(M), rej_by(AGENT, lambda v: v + "-m"), None]),
    "rcauth": (REJ, [none, race(M), rej_by(AGENT), None]),
    "rcdraft": (
        RUN,
        [
            none,
            race(M, status="draft"),
            seq(
                lambda lab, v: setc(lab, v + "-m", "pending_approval", MALLORY) and None,
                rej_by(MALLORY, lambda v: v + "-m"),
            ),
            None,
        ],
    ),
    "rcreadd": (REJ, [none, race(M), seq(readd(MALLORY), rej_by(AGENT)), None]),
    "rcmv": (
        REJ,
        [
            none,
            race(M),
            seq(mv("{v}", "{v}-x", MALLORY), rej_by(AGENT, lambda v: v + "-x")),
            approve(BOB, "{v}-x"),
        ],
    ),
    "rcmvm": (
        RUN,
        [
            none,
            race(M),
            seq(mv("{v}", "{v}-x", MALLORY), rej_by(MALLORY, lambda v: v + "-x")),
            approve(BOB, "{v}-x"),
        ],
    ),
    "rcocto": (RUN, [none, race(M, "octo", rej=True), none, None]),
    # -- copies and moves without a race --------------------------------------------------------
    "cpm": (RUN, [r0_pending, copy("{v}", M, MALLORY), rej_by(MALLORY, lambda v: v + "-m"), None]),
    "cpa": (REJ, [r0_pending, copy("{v}", M, MALLORY), rej_by(AGENT), None]),
    "cpcarol": (
        PEND,
        [r0_pending, copy("{v}", M, MALLORY), rej_by(CAROL, lambda v: v + "-m"), None],
    ),
    # -- withdrawals on the line ------------------------------------------------------------
    "lm": (RUN, [r0_pending, rej_by(MALLORY), none, None]),
    "lc": (REJ, [r0_pending, rej_by(CAROL), none, None]),
    "lcase": (REJ, [r0_pending, rej_by(("Carol", "Carol@Example.COM")), none, None]),
    "ldave": (RUN, [r0_pending, rej_by(DAVE), none, None]),
    # -- quorum (plans/q*) and risk -----------------------------------------------------------
    "qam": (PEND, [r0_pending, approve(ALICE), approve(MALLORY), approve(ALICE)]),
    "qab": (RUN, [r0_pending, approve(ALICE), none, None]),
    "qaours": (
        PEND,
        [r0_pending, S(ALICE, MALLORY, approve(ALICE), "ours"), approve(ALICE), approve(ALICE)],
    ),
    "qrej": (REJ, [r0_pending, approve(ALICE), rej_by(AGENT), None]),
    "qrejm": (RUN, [r0_pending, approve(ALICE), rej_by(MALLORY), None]),
    "qrejmg": (RUN, [r0_pending, approve(ALICE), S(MALLORY, BOB, rej_by(MALLORY), "ff"), None]),
    "qrejd": (RUN, [r0_pending, approve(ALICE), rej_by(DAVE), None]),
}
#: risk variants: the plan uses ``hrec`` (needs one of ops and one of sec)
HIGH: dict[str, tuple[tuple[int, set[str]], list[Act | None]]] = {
    "rkab": (PEND, [r0_pending, approve(ALICE), none, None]),
    "rkac": (RUN, [r0_pending, approve(CAROL), none, None]),
    "rkcours": (
        PEND,
        [r0_pending, S(CAROL, MALLORY, approve(CAROL), "ours"), none, None],
    ),
    "rkcm": (PEND, [r0_pending, approve(ALICE), approve(MALLORY), approve(ALICE)]),
}
VARIANTS.update(HIGH)
VIDS = list(VARIANTS)


def _r0_high(lab: Lab, v: str) -> None:
    lab.write(v, _plan(v, tool="hrec"))
    lab.commit(f"agent: {v}", AGENT)


def _slug(v: str) -> str:
    """The folder of a vid's plan: quorum plans under ``plans/q*``."""
    return v


def _play(lab: Lab, passes: bool) -> dict[str, Any]:
    got: dict[str, Any] = {"passes": []}

    def step(phase: str) -> None:
        res = lab.run(check=False)
        got["passes"].append((phase, res.returncode, "Traceback" in res.stderr, res.stderr[-900:]))

    for rnd in range(4):
        for v, (_want, acts) in VARIANTS.items():
            act = acts[rnd]
            if rnd == 0 and v in HIGH and act is r0_pending:
                act = _r0_high
            if act is None:
                setc(lab, v, "approved", BOB)
            else:
                act(lab, v)
            main(lab)
        if passes or rnd != 1:
            step(f"r{rnd}")
    # round 4 (both labs): an approval the controller refused only because it came before the
    # plan's freeze (E_PLAN_NOT_FROZEN: a plan first seen in a pass after its approval) is given
    # again by Bob, once the plan is frozen and pending: freezing needs a pass, the verdicts
    # compared are the withdrawals'
    rows = lab.rows()
    again = []
    for v in VIDS:
        slug = v if f"plans/{v}" in rows else f"{v}-x"
        row = rows.get(f"plans/{slug}", {})
        refused = "E_PLAN_NOT_FROZEN" in json.dumps(row) and row.get("status") == "pending_approval"
        if refused and lab.plan(slug).get("plan", {}).get("status") == "pending_approval":
            setc(lab, slug, "approved", BOB)
            again.append(v)
    got["again"] = again
    step("r4")
    got["rows"] = lab.rows()
    got["ran"] = {v: len(lab.calls(v)) for v in VIDS}
    got["starts"] = {
        v: [
            s
            for x in (v, f"{v}-m", f"{v}-x")
            for s in lab.subjects(x)
            if s.startswith("plangate: start ")
        ]
        for v in VIDS
    }
    got["clone"] = clone_audit_got(lab, lab.root)
    return got


def _build_one(root: Path, passes: bool) -> Lab:
    lab = Lab(root)
    _config(lab)
    lab.got = _play(lab, passes)  # type: ignore[attr-defined]
    return lab


def _build(root: Path) -> Lab:
    labs = build_all(
        root,
        {"many": lambda r: _build_one(r, True).got, "one": lambda r: _build_one(r, False).got},
        workers=2,
    )
    lab = Lab.__new__(Lab)
    lab.got = labs.got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return shared(tmp_path_factory, "r124-approve-atk124a", _build)


KINDS = ("", ":status", ":audit", ":agree", ":one", ":oneagree", ":twin")
IDS = [f"{v}{k}" for v in VIDS for k in KINDS] + ["passes"]

#: the lab with one pass for rounds 1-2: documented differences ("An approval lapses when the
#: plan stops saying `approved` before the controller acted on it ... a status change by anyone
#: makes the approval lapse"): Alice's quorum vote, not yet collected by a pass when Mallory or
#: Dave sets `rejected` (ignored), lapses; Bob's vote is then the only one (vid -> runs wanted)
ONE = {"qrejm": 0, "qrejmg": 0, "qrejd": 0}

CLS_VETO = "racer-veto-before-merge"
CLS_OURS = "ours-merged-same-path-copy-counts"
CLS_MV = "author-withdrawal-lost-to-race-then-move"
_WHY_VETO = (
    "FAIL CLOSED: the agent's pull request adds plans/<v>; Mallory commits its bytes at "
    "plans/<v>-m (on the line, on her branch merged --no-ff, or in an octopus) and sets her "
    "copy `rejected` BEFORE Bob merges the PR; Bob's approval of the agent's plan is "
    "E_VERSION_WITHDRAWN ('rejected in plans/<v>-m by mallory@example.com'); docs: 'At her "
    "own folder she is its originator: her rejection of plans/r-m withdraws that plan, and "
    "vetoes no version'"
)
_WHY_OURS = (
    "FAIL OPEN: Mallory's branch forked before the agent's PR adds the PR's very file at "
    "plans/<v>; the PR is merged, then Bob merges her branch `-s ours`; the agent's rejection "
    "is E_APPROVER_NOT_ALLOWED and Bob's approval runs it; docs: 'content a merge discards "
    "(`git merge -s ours`, ...) makes nothing' (the same branch merged -s ours BEFORE the PR "
    "is read right)"
)
_WHY_MV = (
    "FAIL OPEN: Mallory races the agent's PR at plans/<v>-m, then `git mv`s the agent's "
    "plans/<v> to plans/<v>-x; the agent's rejection there is E_APPROVER_NOT_ALLOWED and "
    "Bob's approval runs it; docs: 'Dave may reject his plan however many copies of it "
    "others made', 'Mallory's copy takes nothing from it'"
)
# racer-veto-before-merge (rcearly, cpkeep, rcocto and their :status, :audit, :one): fixed
# (veto125), see the module docstring; _WHY_VETO is kept as the record of what was seen.
_SEEN: dict[str, tuple[str, str]] = {
    # samelateours (and :status, :audit, :one): decided as the accepted limit (veto125)
}
BROKEN: dict[str, Any] = {
    i: pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 124: {c}: {w}")
    for i, (c, w) in _SEEN.items()
}


def _params(ids: list[str]) -> list[Any]:
    return [pytest.param(i, id=i, marks=[BROKEN[i]] if i in BROKEN else []) for i in ids]


def _valid(clone: dict[str, Any], v: str) -> list[dict[str, Any]]:
    slugs = {f"plans/{x}" for x in (v, f"{v}-m", f"{v}-x")}
    return [
        e for e in clone.get("executions", []) if e.get("plan") in slugs and e.get("approval_valid")
    ]


def _row(got: dict[str, Any], v: str) -> dict[str, Any]:
    rows = got["rows"]
    return rows.get(f"plans/{v}") or rows.get(f"plans/{v}-x") or {}


@pytest.mark.parametrize("vid", _params(IDS))
def test_round124_atk124a(lab: Any, vid: str) -> None:
    many, one = lab.got["many"], lab.got["one"]
    if vid == "passes":
        bad = [p for g in (many, one) for p in g["passes"] if p[1] != 0 or p[2]]
        assert not bad, bad
        return
    v, _, kind = vid.partition(":")
    (want_runs, want_status), _acts = VARIANTS[v]
    row = _row(many, v)
    if kind == "status":
        assert row.get("status") in want_status, brief(row, 5)
    elif kind == "audit":
        valid = _valid(many["clone"]["report"], v)
        assert len(valid) == want_runs, (valid, brief(row, 5))
    elif kind == "agree":
        valid = _valid(many["clone"]["report"], v)
        assert len(valid) == len(many["starts"][v]), (many["starts"][v], valid)
    elif kind == "oneagree":
        valid = _valid(one["clone"]["report"], v)
        assert len(valid) == len(one["starts"][v]), (one["starts"][v], valid)
    elif kind == "one":
        orow = _row(one, v)
        assert one["ran"][v] == ONE.get(v, want_runs), (one["ran"][v], brief(orow, 5))
    elif kind == "twin" and v in ONE:
        orow = _row(one, v)
        assert (many["ran"][v], one["ran"][v]) == (want_runs, ONE[v]), (brief(row), brief(orow))
    elif kind == "twin":
        orow = _row(one, v)
        assert (many["ran"][v], row.get("status")) == (one["ran"][v], orow.get("status")), (
            brief(row, 5),
            brief(orow, 5),
        )
    else:
        assert many["ran"][v] == want_runs, (many["ran"][v], brief(row, 5))
