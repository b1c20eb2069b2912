"""Round 127, approval side (atk127a): "only enough allowed people, none an author, approve
exactly the frozen version; vetoes count only from the right people", against last session's
rules: a merge inside a merged branch no longer makes its merger a writer of content she only
combined (fix127n: ``Lifecycle._wrote_content``, ``_made_by``), a producer's withdrawal binds
only the plans she is an author of, an allowed approver's every plan holding the version.
Attacked: merges written by hand inside merged branches (an "evil" inner merge adding a param
or a note, an add/add conflict resolved by hand or by ``-X theirs``, depth 3, octopus),
committers that are not authors (of the plan's commit, of a clean inner merge), a producer's
veto after merges she only made, an author's veto after an edit on a merged branch, the same
version in two folders, a rejection reverted, a withdrawn version re-added in its emptied
folder, approvals carried in octopus merges and merges of merges (also into a quorum), and an
approval commit that puts a note in another plan's folder; ``plangate check --as`` predicting
each verdict.

Labs (round 126's, local mode, ``run --once`` after every round, the recording tool ``rec``;
``hrec`` the same script as a ``risk: high`` tool): approvers Alice, Bob, Carol, Erin
(``@example.com``); groups ``ops: [alice, bob, erin]``, ``sec: [carol, erin]``; rule ``{risk:
high}`` needs one of ``ops`` and one of ``sec``; ``identity: author``. The agent writes plans;
Mallory is nobody. The variants are split over two identical labs built side by side (rounds
0-3). The last act of each variant (the approval) is made on a branch ``ap-<v>``, ``plangate
check --base main --head ap-<v> --as <approver> --format json`` is asked, then main
fast-forwards to it. Then ``plangate audit --json`` in a fresh clone (no config) of each lab.

Shapes: ``mid`` is an integration branch ``br-mid-<v>`` (a note of the agent's) merged
``--no-ff`` into main by Bob; the agent's plan is written on ``br-m-<v>`` forked from it.

- Inner merges written by hand, the writer approving (``PEND``: ``E_SELF_APPROVAL``): Alice
  merges ``br-m`` into ``br-mid`` ``--no-commit`` and adds a param (``evin``) or a
  ``NOTES.txt`` in the plan's folder (``evnote``); the agent adds ``plans/<v>`` with other
  bytes on ``br-m1`` and ``br-m2``, Alice merges both and resolves the add/add by hand
  (``confin``); three levels deep, Alice's evil middle merge (``ev3``); Alice's own plan inside
  Bob's octopus (``octself``) or three levels deep, every merge Bob's (``deepself``); the
  agent's plan committed by Alice (``git commit`` as author agent, committer Alice:
  ``cmtself``; the same on ``br-m``: ``cmtnest``). Controls that run: Bob approves after
  Alice's evil inner merge (``evinB``), Alice's ``-X theirs`` settlement of the add/add
  (``xthA``), her clean middle merge at depth 3 (``deepmidA``), her clean inner octopus
  (``octA``), her clean inner and middle merges at depth 3 (``deepA``), a clean inner merge
  authored by Bob and committed by Alice (``cmtmrgA``).
- A producer who only merged withdraws nothing (``RUN``: Mallory's rejection ignored, Bob's
  approval runs): her ``-X theirs`` add/add settlement (``mXth``), her inner octopus
  (``moct``), her inner and middle merges at depth 3 (``mdeep``), her inner merge resolving a
  conflict by hand in a note outside the plans folder (``mnoteconf``), a clean inner merge
  she only committed (``mcmt``). She is an author of bytes she wrote in an inner merge
  (``REJ``): an evil param (``mevil``), an add/add resolved by hand (``mconf``).
- An author's veto (``REJ`` / ``WD`` / no run): the agent rejects its plan after Alice's evil
  inner merge (``aurjev``), after Alice's edit (a commit of hers) on the agent's branch merged
  through ``mid`` (``aurjed``) or straight into main (``aurjedf``), after Mallory's edit there
  (``aurjedm``, Bob approving); controls: the same edit on main after a pass (``aurjline``) or
  in the agent's push (``aurjpush``), Alice's evil merge of the agent's branch ON main
  (``aurjevf``), the agent's own edit on its branch (``aurjed2``), Alice's edit on a branch of
  a plan frozen on main first (``aurjpr``), the agent's plan merged in Bob's inner octopus
  (``aurjoct``); Mallory's rejection of the v2 she wrote on the agent's branch binds
  (``mrjed``: ``rejected``), and Alice may not approve it (``edself``: ``E_SELF_APPROVAL``);
  Mallory writes v1 on the branch and the agent edits it there, she rejects (``mrjv1``: the
  writer of v1 withdraws the plan); controls: the agent's v1 and Alice's edit squash-merged by
  the forge (``aurjsq``) or fast-forwarded onto main (``aurjff``); Alice's X merged ``-s ours``
  into the agent's branch, the agent then writes X there, Alice approves (``oursX``:
  ``E_SELF_APPROVAL``); the agent writes the same bytes at ``plans/<v>`` and ``plans/<v>-2`` in
  one commit (``aurj2f``) or copies it (``aurj2fc``) and rejects ``plans/<v>-2``: Bob's
  approval of ``plans/<v>`` is ``E_VERSION_WITHDRAWN``; the agent reverts its own rejection
  commit (``aurjrev``: stays rejected); the agent rejects, deletes the folder, and Mallory
  re-adds the same bytes there (``aurjre``: nothing runs).
- Approvals carried: Alice's approval on a branch octopus-merged by Bob (``apoctB``: runs,
  Bob's) or by Mallory (``apoctM``: ``E_APPROVER_NOT_ALLOWED``), three levels deep with
  Mallory and Carol inner and Bob outer (``apdeepB``: runs); on ``hrec``: Erin's approval
  octopus-merged by Carol is Carol's (sec); Bob's approval after it completes the quorum
  (``gEoctB``), Carol's does not (``gEoctC``: partial). Bob approves ``plans/<v>`` and in the
  same commit adds a note in ``plans/<v>-o``: his later approval of it is ``E_SELF_APPROVAL``
  (``apnote``), Carol's runs it (``apnoteC``).

Ids (193; 48 variants x 4 + ``passes``): ``<vid>`` (``rec`` calls of the approved plan),
``<vid>:status`` (its final ``status --json`` row), ``<vid>:audit`` (valid starts of it in the
fresh-clone audit), ``<vid>:check`` (``check --as`` said ``start`` exactly when the controller
started it and the docs want a run), ``passes`` (every pass exited 0, no traceback).

Seen (round 127: 193 ids, 173 passed, 20 xfailed (strict); 90-120 s wall with -n 1, two labs
built side by side), 1 class (fixed: below):

- **author-right-lost-to-edit-on-merged-branch** (20 ids: ``aurjed``, ``aurjedf``, ``aurjev``,
  ``aurjedm``, ``mrjv1``, each with ``:status``, ``:audit``, ``:check``). FAIL OPEN. The agent
  writes ``plans/<v>`` (v1) on a branch; Alice (an approver) changes a param there, by a commit
  of her own on that branch (``aurjed``, ``aurjedf``; Mallory: ``aurjedm``) or by writing it in
  her ``--no-commit`` merge of the agent's branch into an integration branch (``aurjev``); the
  branch is merged into main ``--no-ff`` by Bob (through the integration branch, or straight:
  ``aurjedf``, ``aurjedm``). The agent's rejection of its plan is ``E_APPROVER_NOT_ALLOWED:
  agent@example.com set status rejected ..., but only an allowed approver or an author of the
  plan may; ignored``, and Carol's (Bob's) approval runs v2 (``completed``, the fresh-clone
  audit calls the start valid, ``check --as carol`` says ``start``). The same edit made on main
  (after a pass: ``aurjline``; in the agent's own push, no pass between: ``aurjpush``) and
  Alice's evil merge of the agent's branch made ON main (``aurjevf``) keep the agent's right
  (``rejected``, Carol refused), as do the agent's own edit on the branch (``aurjed2``) and
  Alice's edit on a branch when v1 was on main first (``aurjpr``); Mallory's rejection of the
  v2 she wrote on the branch binds (``mrjed``): only the FIRST version, made and edited on the
  merged branch before main ever held the plan, loses its maker (so does Mallory as the writer
  of v1 the agent edited on the branch: ``mrjv1``, her rejection ignored, Bob's approval runs
  it; the squash and fast-forward landings, ``aurjsq``, ``aurjff``, keep the agent's right).
  docs/approvals.md: the authors who may withdraw are the originators "of the version at stake
  ... and of the versions it was edited from at that plan (the content the plan held when each
  first came there ...)", "So Dave may reject his plan however many copies of it others made,
  and the agent may reject its plan after Dave changed a param"; the merged branch's history of
  a plan is read as the line's elsewhere ("One rule for every merge the history brings,
  wherever it sits"). A pull request reviewed and touched up by a reviewer before the merge is
  an ordinary flow, and its author loses the veto. Repro: ``git checkout -b pr``; the agent
  commits ``plans/r/PLAN.yml`` (pending); Alice adds a param and commits; ``git checkout main
  && git merge --no-ff pr`` (Bob); ``run --once``; the agent commits ``status: rejected``;
  ``run --once``; Carol commits ``status: approved``; ``run --once``: ``completed``.

What held (``check --as``, the audit and the controller agreeing in every variant): bytes an
approver wrote in an inner merge (a param, a note in the folder, an add/add resolved by hand,
at depth 2 and 3) bar her (``E_SELF_APPROVAL``), as does her plan inside an octopus or three
levels down, and her being the committer of the agent-authored plan commit (on the line or
a merged branch); a merger who only merged (clean, ``-X theirs``, octopus, depth 3, or only
the committer of a clean merge) is no writer and, as a producer, withdraws nothing; a
merger's own bytes make her an author whose rejection binds; the agent's rejection of one of
two folders holding its version vetoes the other; a reverted rejection stays final; a
withdrawn version re-added by another in its emptied folder never runs; approvals carried
in octopus merges and merges of merges count as the outer merger's (Mallory's refused),
once per person in a quorum; an approval commit that drops a note into another plan's folder
makes its committer that plan's writer.

Fixed (2026-12-07 afternoon, fix128a): **author-right-lost-to-edit-on-merged-branch**.
Cause: two parts of the history index read a merged branch's versions of a plan as nothing.
(1) The versions a version was edited from (``PlanState.versions``) were noted only by the
first-parent line's commits: Bob's ``--no-ff`` merge brought v2 into a plan main never held,
so v2 came "from nothing" and the agent's v1, edited by Alice on the branch, was no version
of it. (2) A making on a merged branch counted only when the merge kept that very content
(``Lifecycle._merge_keeps``): v1, edited away on the branch, made nothing, so it had no
originators at the plan's folder either. The authors (``Lifecycle.withdrawers``) were Alice
alone. Fix: ``Lifecycle._merged_lineage`` (a merge of the line that brings a version into a
plan reads what its merged branches edited it from there, ``_branch_made``: one
``GitRepo.lineage_log`` walk per merge, every parent of an inner merge followed, a merge's
own bytes made of every parent's content), ``PlanState.versions`` now lists every content a
version was made of (an add/add resolved by hand has two; ``_lineage`` walks them), and
``Lifecycle._kept_by_edit`` keeps a branch's making when the merge keeps, at that folder, a
version edited from it (as a fast-forward of the same commits does); ``INDEX_VERSION`` 149.
The controller, ``check --as`` and the fresh-clone audit read the one index. Tests: the 20
ids pass; tests/approval/test_branch_edited_withdrawals.py.

Not tried: criss-cross merges around an approval, ``identity: committer``, signed trailers
inside merged branches, ``identity_aliases``, gates and aborts, remote mode, MCP ``submit``.
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
    Lab,
    brief,
    build_all,
    clone_audit_got,
    plan_text,
    xfail,
)

BOB = ("Bob", "bob@example.com")
CAROL = ("Carol", "carol@example.com")
ERIN = ("Erin", "erin@example.com")
FORGE = ("GitHub", "noreply@github.com")
ERIN_UP = ("Erin", "ERIN@Example.COM")

RUN = (1, {"completed"})
WD = (0, {"pending_approval"})  # E_VERSION_WITHDRAWN: the plan stays waiting, nothing runs
NORUN = (0, {"pending_approval", "rejected"})
REJ = (0, {"rejected"})
PEND = (0, {"pending_approval"})


def _config(lab: Lab, swapped: bool = False) -> None:
    """The lab's config; ``swapped``: ``rec`` is ``risk: high`` and ``hrec`` low (round 4)."""
    low, hi = ("high", "low") if swapped else ("low", "high")
    rec = json.dumps([sys.executable, str(lab.recorder), "{tag}"])
    env = f"env: {{REC_LOG: {json.dumps(str(lab.log))}}}"
    lab.config.write_text(
        f"repo: {lab.repo}\nstate_dir: {lab.state}\n"
        "identity: {name: plangate, email: plangate@localhost}\n"
        "approval:\n"
        '  approvers: ["alice@example.com", "bob@example.com", "carol@example.com",'
        ' "erin@example.com"]\n'
        "  groups:\n"
        '    ops: ["alice@example.com", "bob@example.com", "erin@example.com"]\n'
        '    sec: ["carol@example.com", "erin@example.com"]\n'
        "  rules:\n"
        "    - match: {risk: high}\n"
        "      require: [{group: ops, count: 1}, {group: sec, count: 1}]\n"
        "tools:\n"
        f"  rec: {{kind: exec, argv: {rec}, {env}, risk: {low}}}\n"
        f"  hrec: {{kind: exec, argv: {rec}, {env}, risk: {hi}}}\n"
    )


def _plan(tag: str, status: str = "pending_approval", tool: str = "rec", extra: str = "") -> str:
    text = plan_text(tag, status=status)
    if tool != "rec":
        text = text.replace("  - name: rec\n", f"  - name: {tool}\n").replace(
            "    tool: rec\n", f"    tool: {tool}\n", 1
        )
    if extra:
        text += f'      extra: "{extra}"\n'
    return text


# -- the acts ------------------------------------------------------------------------------
Act = Callable[[Lab, str], None]


def setc(lab: Lab, slug: str, status: str, who: tuple[str, str], fn: str = "PLAN.yml") -> str:
    lab.set_status(slug, status, filename=fn)
    return lab.commit(f"{who[0]}: {status} {slug}", who)


def merge(lab: Lab, who: tuple[str, str], *refs: str, opts: tuple[str, ...] = ()) -> str:
    lab.git("merge", "-q", "--no-ff", *opts, "-m", f"merge {' '.join(refs)}", *refs, who=who)
    return lab.head()


def main(lab: Lab) -> None:
    lab.git("checkout", "-q", "main")


def seq(*acts: Act) -> Act:
    def run(lab: Lab, v: str) -> None:
        for act in acts:
            act(lab, v)
            main(lab)

    return run


def both(*acts: Act) -> Act:
    """``acts`` one after the other on the branch checked out (no return to main)."""

    def run(lab: Lab, v: str) -> None:
        for act in acts:
            act(lab, v)

    return run


def none(lab: Lab, v: str) -> None:
    return None


def pr_open(trailer: str = "") -> Act:
    """The agent's pull request ``br-pr-<v>`` adding ``plans/<v>`` (not merged yet)."""

    def run(lab: Lab, v: str) -> None:
        lab.branch(f"br-pr-{v}", "main")
        lab.write(v, _plan(v))
        lab.commit(f"agent: {v}" + (f"\n\n{trailer}" if trailer else ""), AGENT)
        main(lab)

    return run


def mallory_copy_rejected(lab: Lab, v: str) -> None:
    """Mallory commits the bytes of the agent's open PR at ``plans/<v>-m`` and rejects it."""
    lab.put(f"plans/{v}-m/PLAN.yml", _plan(v))
    lab.commit(f"mallory: {v}-m", MALLORY)
    setc(lab, f"{v}-m", "rejected", MALLORY)


def pr_merge(who: tuple[str, str] = BOB) -> Act:
    return lambda lab, v: merge(lab, who, f"br-pr-{v}") and None


def pr_pick(who: tuple[str, str]) -> Act:
    """``who`` cherry-picks the PR's commit onto main (no merge)."""
    return lambda lab, v: lab.git("cherry-pick", f"br-pr-{v}", who=who) and None


def pr_rebase(rebaser: tuple[str, str], merger: tuple[str, str] | None) -> Act:
    """``rebaser`` rebases the PR onto main (her committer line), ``merger`` merges it
    ``--no-ff`` (None: main fast-forwards to it, the forge's "rebase and merge")."""

    def run(lab: Lab, v: str) -> None:
        lab.git("checkout", "-q", f"br-pr-{v}")
        lab.git("rebase", "-q", "main", who=rebaser)
        main(lab)
        if merger is None:
            lab.git("merge", "-q", "--ff-only", f"br-pr-{v}")
        else:
            merge(lab, merger, f"br-pr-{v}")

    return run


def pr_squash(author: tuple[str, str], committer: tuple[str, str]) -> Act:
    """The PR squash-merged: one commit by ``author``, committed by ``committer``."""

    def run(lab: Lab, v: str) -> None:
        lab.git("merge", "-q", "--squash", f"br-pr-{v}")
        lab.extra_env = {"GIT_COMMITTER_NAME": committer[0], "GIT_COMMITTER_EMAIL": committer[1]}
        try:
            lab.git("commit", "-q", "-m", f"{v} (#1)", "--author", f"{author[0]} <{author[1]}>")
        finally:
            lab.extra_env = {}

    return run


def nested(side: Act, inner: tuple[str, str] = BOB, outer: tuple[str, str] = BOB) -> Act:
    """``side`` on ``br-m-<v>`` forked from ``br-mid-<v>`` (a note of the agent's on main),
    Bob merges ``br-m`` into ``br-mid`` and then ``br-mid`` into main (a merge of a merge)."""

    def run(lab: Lab, v: str) -> None:
        lab.branch(f"br-mid-{v}", "main")
        lab.note(f"{v}-mid", AGENT)
        lab.branch(f"br-m-{v}", f"br-mid-{v}")
        side(lab, v)
        lab.git("checkout", "-q", f"br-mid-{v}")
        merge(lab, inner, f"br-m-{v}")
        main(lab)
        merge(lab, outer, f"br-mid-{v}")

    return run


def nested_here(side: Act, inner: tuple[str, str], outer: tuple[str, str]) -> Act:
    """As :func:`nested`, merged into the branch checked out (the approval round's)."""

    def run(lab: Lab, v: str) -> None:
        here = lab.git("rev-parse", "--abbrev-ref", "HEAD").strip()
        lab.branch(f"br-mid-{v}", here)
        lab.note(f"{v}-mid", AGENT)
        lab.branch(f"br-m-{v}", f"br-mid-{v}")
        side(lab, v)
        lab.git("checkout", "-q", f"br-mid-{v}")
        merge(lab, inner, f"br-m-{v}")
        lab.git("checkout", "-q", here)
        merge(lab, outer, f"br-mid-{v}")

    return run


def on_branch(side: Act, merger: tuple[str, str] = BOB) -> Act:
    def run(lab: Lab, v: str) -> None:
        lab.branch(f"br-m-{v}", "main")
        side(lab, v)
        main(lab)
        merge(lab, merger, f"br-m-{v}")

    return run


def race0(merger: Act | None = None) -> Act:
    """The race without a rejection: Mallory's copy at ``plans/<v>-m`` lands first."""
    return seq(pr_open(), copy_pr(MALLORY), merger or pr_merge())


def race(*then: Act, trailer: str = "", merger: Act | None = None) -> Act:
    """The agent's PR is open; Mallory's copy of its bytes lands at ``plans/<v>-m`` and she
    rejects it BEFORE the PR is merged (by Bob, or ``merger``)."""
    return seq(pr_open(trailer), mallory_copy_rejected, merger or pr_merge(), *then)


def nested_race(lab: Lab, v: str) -> None:
    """Mallory's copy and rejection on ``br-m-<v>``, merged by Bob into ``br-mid-<v>``, which
    Bob merges into main (a merge of a merge), then the agent's PR is merged."""
    pr_open()(lab, v)
    lab.branch(f"br-mid-{v}", "main")
    lab.note(f"{v}-mid", AGENT)
    lab.branch(f"br-m-{v}", f"br-mid-{v}")
    mallory_copy_rejected(lab, v)
    lab.git("checkout", "-q", f"br-mid-{v}")
    merge(lab, BOB, f"br-m-{v}")
    main(lab)
    merge(lab, BOB, f"br-mid-{v}")
    pr_merge()(lab, v)


def mv(src: str, dst: str, who: tuple[str, str]) -> Act:
    def run(lab: Lab, v: str) -> None:
        lab.git("mv", f"plans/{src.format(v=v)}", f"plans/{dst.format(v=v)}")
        lab.commit(f"{who[0]}: move", who)

    return run


def copy(src: str, dst: str, who: tuple[str, str], status: str | None = None) -> Act:
    def run(lab: Lab, v: str) -> None:
        text = lab.read(src.format(v=v))
        if status:
            text = text.replace("status: rejected", f"status: {status}", 1)
        lab.put(f"plans/{dst.format(v=v)}/PLAN.yml", text)
        lab.commit(f"{who[0]}: copy", who)

    return run


def note_in(slug: str, who: tuple[str, str]) -> Act:
    def run(lab: Lab, v: str) -> None:
        lab.put(f"plans/{slug.format(v=v)}/NOTES.txt", "looks fine\n")
        lab.commit(f"{who[0]}: note", who)

    return run


def rename_yaml(who: tuple[str, str]) -> Act:
    def run(lab: Lab, v: str) -> None:
        lab.git("mv", f"plans/{v}/PLAN.yml", f"plans/{v}/PLAN.yaml")
        lab.commit(f"{who[0]}: rename", who)

    return run


#: (lab root, variant) -> the variant's last ``edit`` commit, for ``revert`` to take back
_EDITS: dict[tuple[str, str], str] = {}


def edit(who: tuple[str, str]) -> Act:
    def run(lab: Lab, v: str) -> None:
        path = lab.repo / "plans" / v / "PLAN.yml"
        text = path.read_text()
        marker = f'      tag: "{v}"\n'
        path.write_text(text.replace(marker, marker + '      extra: "v2"\n', 1))
        _EDITS[(str(lab.root), v)] = lab.commit(f"{who[0]}: edit {v}", who)

    return run


def revert(who: tuple[str, str]) -> Act:
    """``who`` ``git revert``s the variant's own ``edit`` commit (fix127u: this reverted
    ``HEAD``, which after a pass is the controller's freeze commit, or another variant's
    commit in the shared lab: her v2 stayed in the plan)."""
    return lambda lab, v: (
        lab.git("revert", "--no-edit", _EDITS[(str(lab.root), v)], who=who) and None
    )


def own_rejected(slug: str = "{v}-m", who: tuple[str, str] = MALLORY, tool: str = "rec") -> Act:
    """``who`` writes the version X at ``plans/<slug>`` (pending) and rejects it."""

    def run(lab: Lab, v: str) -> None:
        s = slug.format(v=v)
        lab.put(f"plans/{s}/PLAN.yml", _plan(v, tool=tool))
        lab.commit(f"{who[0]}: {s}", who)
        setc(lab, s, "rejected", who)

    return run


def write(who: tuple[str, str], extra: str = "", msg: str = "") -> Act:
    """``who`` writes ``plans/<v>`` (pending): X, or X with an ``extra`` param (a version Y)."""

    def run(lab: Lab, v: str) -> None:
        lab.write(v, _plan(v, extra=extra))
        lab.commit(f"{who[0]}: {v}" + (f"\n\n{msg}" if msg else ""), who)

    return run


def edit_to_x(who: tuple[str, str]) -> Act:
    """``who`` edits ``plans/<v>`` (version Y) to exactly X (its frozen block dropped)."""

    def run(lab: Lab, v: str) -> None:
        lab.write(v, _plan(v))
        lab.commit(f"{who[0]}: edit {v}", who)

    return run


def forked_before(*acts: Act, who: tuple[str, str] = BOB) -> Act:
    """``acts`` on a branch forked before this round's other acts ran, merged by ``who``
    after them: a branch ``br-early-<v>`` made first, played, merged at the end."""

    def run(lab: Lab, v: str) -> None:
        lab.git("checkout", "-q", f"br-early-{v}")
        for act in acts:
            act(lab, v)
            lab.git("checkout", "-q", f"br-early-{v}")
        main(lab)
        merge(lab, who, f"br-early-{v}")

    return run


def fork(lab: Lab, v: str) -> None:
    lab.git("branch", f"br-early-{v}", "main")


def delete(slug: str, who: tuple[str, str]) -> Act:
    def run(lab: Lab, v: str) -> None:
        lab.git("rm", "-q", "-r", f"plans/{slug.format(v=v)}")
        lab.commit(f"{who[0]}: remove", who)

    return run


def copy_pr(who: tuple[str, str]) -> Act:
    """``who`` commits the bytes of the agent's open PR at ``plans/<v>-m`` (pending)."""

    def run(lab: Lab, v: str) -> None:
        lab.put(f"plans/{v}-m/PLAN.yml", _plan(v))
        lab.commit(f"{who[0]}: {v}-m", who)

    return run


def rej(slug: str, who: tuple[str, str]) -> Act:
    return lambda lab, v: setc(lab, slug.format(v=v), "rejected", who) and None


def two_plans(lab: Lab, v: str) -> None:
    """The agent's two plans: ``plans/<v>`` and ``plans/<v>-o`` (another version, same tag)."""
    lab.write(v, _plan(v))
    lab.put(f"plans/{v}-o/PLAN.yml", _plan(f"{v}o"))
    lab.commit(f"agent: {v} and {v}-o", AGENT)


def approve_and_edit(who: tuple[str, str]) -> Act:
    """``who`` approves ``plans/<v>`` and, in the same commit, edits ``plans/<v>-o``."""

    def run(lab: Lab, v: str) -> None:
        lab.set_status(v, "approved")
        path = lab.repo / "plans" / f"{v}-o" / "PLAN.yml"
        text = path.read_text()
        path.write_text(text.replace(f'tag: "{v}o"\n', f'tag: "{v}o"\n      extra: "o2"\n'))
        lab.commit(f"{who[0]}: approve {v} (and tidy {v}-o)", who)

    return run


def approve_msg(who: tuple[str, str], body: str, committer: tuple[str, str] | None = None) -> Act:
    """``who`` approves ``plans/<v>`` with ``body`` in the message (committed by ``committer``)."""

    def run(lab: Lab, v: str) -> None:
        lab.set_status(v, "approved")
        if committer:
            lab.extra_env = {
                "GIT_COMMITTER_NAME": committer[0],
                "GIT_COMMITTER_EMAIL": committer[1],
            }
        try:
            lab.commit(f"{who[0]}: approve {v}\n\n{body}", who)
        finally:
            lab.extra_env = {}

    return run


def approve(who: tuple[str, str], slug: str = "{v}", fn: str = "PLAN.yml") -> Act:
    return lambda lab, v: setc(lab, slug.format(v=v), "approved", who, fn) and None


def high(lab: Lab, v: str) -> None:
    lab.write(v, _plan(v, tool="hrec"))
    lab.commit(f"agent: {v}", AGENT)


# -- round 127's acts: merges of merges written by hand, octopus, depth 3 -------------------


def mid(build: Act, outer: tuple[str, str] = BOB, here: str = "main") -> Act:
    """``br-mid-<v>`` forked from ``here`` (a note of the agent's), ``build`` plays on it
    (ending on ``br-mid-<v>``), then ``outer`` merges it ``--no-ff`` into ``here``."""

    def run(lab: Lab, v: str) -> None:
        lab.branch(f"br-mid-{v}", here)
        lab.note(f"{v}-mid", AGENT)
        build(lab, v)
        lab.git("checkout", "-q", here)
        merge(lab, outer, f"br-mid-{v}")

    return run


def side(name: str, act: Act) -> Act:
    """``act`` on ``br-<name>-<v>`` forked from ``br-mid-<v>``; back on ``br-mid-<v>``."""

    def run(lab: Lab, v: str) -> None:
        lab.branch(f"br-{name}-{v}", f"br-mid-{v}")
        act(lab, v)
        lab.git("checkout", "-q", f"br-mid-{v}")

    return run


def evil_merge(who: tuple[str, str], name: str = "m", what: str = "param") -> Act:
    """``who`` merges ``br-<name>-<v>`` into the branch checked out with ``--no-commit`` and
    writes new bytes in the merge: a param in the plan (``param``) or a note in its folder
    (``note``)."""

    def run(lab: Lab, v: str) -> None:
        lab.git("merge", "-q", "--no-ff", "--no-commit", f"br-{name}-{v}", who=who)
        if what == "param":
            path = lab.repo / "plans" / v / "PLAN.yml"
            text = path.read_text()
            marker = f'      tag: "{v}"\n'
            path.write_text(text.replace(marker, marker + '      extra: "ev"\n', 1))
        else:
            lab.put(f"plans/{v}/NOTES.txt", "merged with care\n")
        lab.commit(f"merge br-{name}-{v}", who)

    return run


def plain_merge(who: tuple[str, str], *names: str, opts: tuple[str, ...] = ()) -> Act:
    """``who`` merges ``br-<name>-<v>`` (several: an octopus) into the branch checked out."""
    return lambda lab, v: merge(lab, who, *[f"br-{n}-{v}" for n in names], opts=opts) and None


def conflict_merge(who: tuple[str, str], name: str, how: str) -> Act:
    """``who`` merges ``br-<name>-<v>``, which adds ``plans/<v>`` with other bytes than the
    branch checked out holds (add/add): resolved by hand to a third version (``hand``), or
    by git's ``-X theirs`` (``theirs``)."""

    def run(lab: Lab, v: str) -> None:
        if how == "theirs":
            merge(lab, who, f"br-{name}-{v}", opts=("-X", "theirs"))
            return
        lab.git("merge", "-q", "--no-ff", f"br-{name}-{v}", who=who, check=False)
        lab.write(v, _plan(v, extra="c"))
        lab.commit(f"merge br-{name}-{v} (resolved)", who)

    return run


def note_conflict_merge(who: tuple[str, str]) -> Act:
    """``who`` merges ``br-n-<v>`` whose note ``notes/<v>-mid.txt`` conflicts with the one
    on ``br-mid-<v>`` (edited after the fork), resolved by hand: no plan byte involved."""

    def run(lab: Lab, v: str) -> None:
        lab.git("merge", "-q", "--no-ff", f"br-n-{v}", who=who, check=False)
        lab.put(f"notes/{v}-mid.txt", "resolved by hand\n")
        lab.commit(f"merge br-n-{v} (resolved)", who)

    return run


def note_edit(text: str, who: tuple[str, str] = AGENT) -> Act:
    def run(lab: Lab, v: str) -> None:
        lab.put(f"notes/{v}-mid.txt", text)
        lab.commit(f"{who[0]}: note edit", who)

    return run


def note_only(lab: Lab, v: str) -> None:
    lab.note(f"{v}-side", AGENT)


def write_as(author: tuple[str, str], committer: tuple[str, str]) -> Act:
    """``plans/<v>`` (X) written by ``author`` and committed by ``committer``."""

    def run(lab: Lab, v: str) -> None:
        lab.write(v, _plan(v))
        lab.extra_env = {"GIT_COMMITTER_NAME": committer[0], "GIT_COMMITTER_EMAIL": committer[1]}
        try:
            lab.commit(f"agent: {v}", author)
        finally:
            lab.extra_env = {}

    return run


def merge_as(author: tuple[str, str], committer: tuple[str, str], name: str = "m") -> Act:
    """A clean ``--no-ff`` merge of ``br-<name>-<v>`` by ``author``, committed by ``committer``."""

    def run(lab: Lab, v: str) -> None:
        lab.extra_env = {"GIT_COMMITTER_NAME": committer[0], "GIT_COMMITTER_EMAIL": committer[1]}
        try:
            merge(lab, author, f"br-{name}-{v}")
        finally:
            lab.extra_env = {}

    return run


def deep3(
    act: Act, m1: tuple[str, str], m2: tuple[str, str], m3: tuple[str, str], evil: bool = False
) -> Act:
    """``act`` on ``br-d1-<v>`` forked from ``br-d2-<v>`` forked from ``br-d3-<v>`` (each with
    a note of the agent's); ``m1`` merges d1 into d2, ``m2`` d2 into d3 (``evil``: writing a
    param of its own in that merge), ``m3`` d3 into the branch checked out."""

    def run(lab: Lab, v: str) -> None:
        here = lab.git("rev-parse", "--abbrev-ref", "HEAD").strip()
        lab.branch(f"br-d3-{v}", here)
        lab.note(f"{v}-d3", AGENT)
        lab.branch(f"br-d2-{v}", f"br-d3-{v}")
        lab.note(f"{v}-d2", AGENT)
        lab.branch(f"br-d1-{v}", f"br-d2-{v}")
        act(lab, v)
        lab.git("checkout", "-q", f"br-d2-{v}")
        merge(lab, m1, f"br-d1-{v}")
        lab.git("checkout", "-q", f"br-d3-{v}")
        if evil:
            evil_merge(m2, "d2")(lab, v)
        else:
            merge(lab, m2, f"br-d2-{v}")
        lab.git("checkout", "-q", here)
        merge(lab, m3, f"br-d3-{v}")

    return run


def octo_here(act: Act, who: tuple[str, str]) -> Act:
    """``act`` on ``br-o1-<v>``, a note on ``br-o2-<v>``, both forked from the branch checked
    out, octopus-merged into it by ``who``."""

    def run(lab: Lab, v: str) -> None:
        here = lab.git("rev-parse", "--abbrev-ref", "HEAD").strip()
        lab.branch(f"br-o1-{v}", here)
        act(lab, v)
        lab.branch(f"br-o2-{v}", here)
        lab.note(f"{v}-o2", AGENT)
        lab.git("checkout", "-q", here)
        merge(lab, who, f"br-o1-{v}", f"br-o2-{v}")

    return run


def two_folders(lab: Lab, v: str) -> None:
    """The agent writes the same bytes at ``plans/<v>`` and ``plans/<v>-2`` in one commit."""
    lab.write(v, _plan(v))
    lab.put(f"plans/{v}-2/PLAN.yml", _plan(v))
    lab.commit(f"agent: {v} twice", AGENT)


def revert_last(who: tuple[str, str], path: str) -> Act:
    """``who`` reverts the last commit that touched ``plans/<path>``."""

    def run(lab: Lab, v: str) -> None:
        sha = lab.git("log", "-1", "--format=%H", "--", f"plans/{path.format(v=v)}").strip()
        lab.git("revert", "--no-edit", sha, who=who)

    return run


def note_other(who: tuple[str, str]) -> Act:
    """``who`` approves ``plans/<v>`` and, in the same commit, adds a note in ``plans/<v>-o``."""

    def run(lab: Lab, v: str) -> None:
        lab.set_status(v, "approved")
        lab.put(f"plans/{v}-o/NOTES.txt", "see also\n")
        lab.commit(f"{who[0]}: approve {v} (and a note in {v}-o)", who)

    return run


def side_main(name: str, act: Act) -> Act:
    """``act`` on ``br-<name>-<v>`` forked from main; back on main."""

    def run(lab: Lab, v: str) -> None:
        lab.branch(f"br-{name}-{v}", "main")
        act(lab, v)
        main(lab)

    return run


def squash_m(author: tuple[str, str], committer: tuple[str, str]) -> Act:
    """``br-m-<v>`` squash-merged onto main: one commit by ``author``, committed by
    ``committer``."""

    def run(lab: Lab, v: str) -> None:
        lab.git("merge", "-q", "--squash", f"br-m-{v}")
        lab.extra_env = {"GIT_COMMITTER_NAME": committer[0], "GIT_COMMITTER_EMAIL": committer[1]}
        try:
            lab.git("commit", "-q", "-m", f"{v} (#2)", "--author", f"{author[0]} <{author[1]}>")
        finally:
            lab.extra_env = {}

    return run


def ff_m(lab: Lab, v: str) -> None:
    lab.git("merge", "-q", "--ff-only", f"br-m-{v}")


def ours_then_x(lab: Lab, v: str) -> None:
    """Alice writes X at ``plans/<v>`` on ``br-a-<v>``; the agent merges it ``-s ours`` into
    ``br-m-<v>`` (X discarded), then writes X itself there; Bob merges ``br-m-<v>``."""
    lab.branch(f"br-a-{v}", "main")
    write(ALICE)(lab, v)
    lab.branch(f"br-m-{v}", "main")
    lab.note(f"{v}-m", AGENT)
    merge(lab, AGENT, f"br-a-{v}", opts=("-s", "ours"))
    write(AGENT)(lab, v)
    main(lab)
    merge(lab, BOB, f"br-m-{v}")


# the inner branch shapes: the agent's plan on br-m (or br-m1 and br-m2 with other bytes)
AG_M = side("m", write(AGENT))
AG_M1 = side("m1", write(AGENT, "a"))
AG_M2 = side("m2", write(AGENT, "b"))


def conflicted(who: tuple[str, str], how: str) -> Act:
    return both(AG_M1, AG_M2, plain_merge(who, "m1"), conflict_merge(who, "m2", how))


#: vid -> (calls wanted, final statuses of the approved plan, the approved plan's slug,
#: the final approver), [round 0, 1, 2, 3]; the last round runs on a branch ``ap-<v>`` that
#: ``check --as <approver>`` reads before it is fast-forwarded onto main
V = tuple[tuple[int, set[str]], str, tuple[str, str], list[Act]]
VARIANTS: dict[str, V] = {
    # -- an inner merge's own bytes stay its merger's: Alice may not approve them -----------
    "evin": (PEND, "{v}", ALICE, [mid(both(AG_M, evil_merge(ALICE))), none, none, approve(ALICE)]),
    "evinB": (RUN, "{v}", BOB, [mid(both(AG_M, evil_merge(ALICE))), none, none, approve(BOB)]),
    "evnote": (
        PEND,
        "{v}",
        ALICE,
        [mid(both(AG_M, evil_merge(ALICE, what="note"))), none, none, approve(ALICE)],
    ),
    "confin": (PEND, "{v}", ALICE, [mid(conflicted(ALICE, "hand")), none, none, approve(ALICE)]),
    "xthA": (RUN, "{v}", ALICE, [mid(conflicted(ALICE, "theirs")), none, none, approve(ALICE)]),
    "ev3": (
        PEND,
        "{v}",
        ALICE,
        [deep3(write(AGENT), BOB, ALICE, BOB, True), none, none, approve(ALICE)],
    ),
    "deepmidA": (
        RUN,
        "{v}",
        ALICE,
        [deep3(write(AGENT), BOB, ALICE, BOB), none, none, approve(ALICE)],
    ),
    "octself": (
        PEND,
        "{v}",
        ALICE,
        [
            mid(both(side("m", write(ALICE)), side("n", note_only), plain_merge(BOB, "m", "n"))),
            none,
            none,
            approve(ALICE),
        ],
    ),
    "octA": (
        RUN,
        "{v}",
        ALICE,
        [
            mid(both(AG_M, side("n", note_only), plain_merge(ALICE, "m", "n"))),
            none,
            none,
            approve(ALICE),
        ],
    ),
    "deepself": (
        PEND,
        "{v}",
        ALICE,
        [deep3(write(ALICE), BOB, BOB, BOB), none, none, approve(ALICE)],
    ),
    "deepA": (
        RUN,
        "{v}",
        ALICE,
        [deep3(write(AGENT), ALICE, ALICE, BOB), none, none, approve(ALICE)],
    ),
    # committer, not author: the person who put the agent's bytes on a branch wrote them
    "cmtself": (PEND, "{v}", ALICE, [write_as(AGENT, ALICE), none, none, approve(ALICE)]),
    "cmtnest": (
        PEND,
        "{v}",
        ALICE,
        [
            mid(both(side("m", write_as(AGENT, ALICE)), plain_merge(BOB, "m"))),
            none,
            none,
            approve(ALICE),
        ],
    ),
    # a clean inner merge committed by Alice (authored by Bob): nobody wrote anything there
    "cmtmrgA": (
        RUN,
        "{v}",
        ALICE,
        [mid(both(AG_M, merge_as(BOB, ALICE))), none, none, approve(ALICE)],
    ),
    # -- fail closed? a producer who only merged withdraws nothing -------------------------
    "mXth": (
        RUN,
        "{v}",
        BOB,
        [mid(conflicted(MALLORY, "theirs")), rej("{v}", MALLORY), none, approve(BOB)],
    ),
    "moct": (
        RUN,
        "{v}",
        BOB,
        [
            mid(both(AG_M, side("n", note_only), plain_merge(MALLORY, "m", "n"))),
            rej("{v}", MALLORY),
            none,
            approve(BOB),
        ],
    ),
    "mdeep": (
        RUN,
        "{v}",
        BOB,
        [deep3(write(AGENT), MALLORY, MALLORY, BOB), rej("{v}", MALLORY), none, approve(BOB)],
    ),
    "mnoteconf": (
        RUN,
        "{v}",
        BOB,
        [
            mid(
                both(
                    AG_M,
                    side("n", note_edit("theirs\n")),
                    note_edit("ours\n"),
                    plain_merge(MALLORY, "m"),
                    note_conflict_merge(MALLORY),
                )
            ),
            rej("{v}", MALLORY),
            none,
            approve(BOB),
        ],
    ),
    "mcmt": (
        RUN,
        "{v}",
        BOB,
        [mid(both(AG_M, merge_as(BOB, MALLORY))), rej("{v}", MALLORY), none, approve(BOB)],
    ),
    # -- fail open? whoever wrote bytes in an inner merge is an author: she may withdraw -----
    "mevil": (
        REJ,
        "{v}",
        BOB,
        [mid(both(AG_M, evil_merge(MALLORY))), rej("{v}", MALLORY), none, approve(BOB)],
    ),
    "mconf": (
        REJ,
        "{v}",
        BOB,
        [mid(conflicted(MALLORY, "hand")), rej("{v}", MALLORY), none, approve(BOB)],
    ),
    # the agent keeps its right whatever Alice wrote in the inner merge (it wrote v1 there)
    "aurjev": (
        REJ,
        "{v}",
        CAROL,
        [mid(both(AG_M, evil_merge(ALICE))), rej("{v}", AGENT), none, approve(CAROL)],
    ),
    # controls: Alice's edit as a commit of its own on the branch, or her evil merge on main
    "aurjed": (
        REJ,
        "{v}",
        CAROL,
        [
            mid(both(side("m", both(write(AGENT), edit(ALICE))), plain_merge(BOB, "m"))),
            rej("{v}", AGENT),
            none,
            approve(CAROL),
        ],
    ),
    "aurjedf": (
        REJ,
        "{v}",
        CAROL,
        [
            side_main("m", both(write(AGENT), edit(ALICE))),
            plain_merge(BOB, "m"),
            rej("{v}", AGENT),
            approve(CAROL),
        ],
    ),
    # more of the same shape: the editor is Mallory (she may withdraw her v2, and the agent
    # its v1's plan), the agent itself, or the plan was on main (frozen) before the branch
    "mrjed": (
        REJ,
        "{v}",
        BOB,
        [
            side_main("m", both(write(AGENT), edit(MALLORY))),
            plain_merge(BOB, "m"),
            rej("{v}", MALLORY),
            approve(BOB),
        ],
    ),
    "aurjedm": (
        REJ,
        "{v}",
        BOB,
        [
            side_main("m", both(write(AGENT), edit(MALLORY))),
            plain_merge(BOB, "m"),
            rej("{v}", AGENT),
            approve(BOB),
        ],
    ),
    "aurjed2": (
        REJ,
        "{v}",
        CAROL,
        [
            side_main("m", both(write(AGENT), edit(AGENT))),
            plain_merge(BOB, "m"),
            rej("{v}", AGENT),
            approve(CAROL),
        ],
    ),
    "aurjpr": (
        REJ,
        "{v}",
        CAROL,
        [
            write(AGENT),
            side_main("m", edit(ALICE)),
            plain_merge(BOB, "m"),
            rej("{v}", AGENT),
            approve(CAROL),
        ],
    ),
    "edself": (
        PEND,
        "{v}",
        ALICE,
        [
            side_main("m", both(write(AGENT), edit(ALICE))),
            plain_merge(BOB, "m"),
            none,
            approve(ALICE),
        ],
    ),
    # the writer of v1 on the branch is Mallory, the agent edits it there: she may withdraw
    # the plan (docs: "the writer of v1 withdrawing v2 withdraws the plan")
    "mrjv1": (
        REJ,
        "{v}",
        BOB,
        [
            side_main("m", both(write(MALLORY), edit(AGENT))),
            plain_merge(BOB, "m"),
            rej("{v}", MALLORY),
            approve(BOB),
        ],
    ),
    # the same branch squash-merged by the forge (one making, the agent's), or fast-forwarded
    # (both commits on the line)
    "aurjsq": (
        REJ,
        "{v}",
        CAROL,
        [
            side_main("m", both(write(AGENT), edit(ALICE))),
            squash_m(AGENT, FORGE),
            rej("{v}", AGENT),
            approve(CAROL),
        ],
    ),
    "aurjff": (
        REJ,
        "{v}",
        CAROL,
        [
            both(side_main("m", both(write(AGENT), edit(ALICE))), ff_m),
            none,
            rej("{v}", AGENT),
            approve(CAROL),
        ],
    ),
    # Alice's X merged -s ours into the agent's branch (discarded), the agent writes X there
    "oursX": (PEND, "{v}", ALICE, [ours_then_x, none, none, approve(ALICE)]),
    "aurjline": (REJ, "{v}", CAROL, [write(AGENT), edit(ALICE), rej("{v}", AGENT), approve(CAROL)]),
    "aurjpush": (
        REJ,
        "{v}",
        CAROL,
        [both(write(AGENT), edit(ALICE)), rej("{v}", AGENT), none, approve(CAROL)],
    ),
    "aurjevf": (
        REJ,
        "{v}",
        CAROL,
        [
            both(side_main("m", write(AGENT)), evil_merge(ALICE)),
            rej("{v}", AGENT),
            none,
            approve(CAROL),
        ],
    ),
    "aurjoct": (
        REJ,
        "{v}",
        BOB,
        [
            mid(both(AG_M, side("n", note_only), plain_merge(BOB, "m", "n"))),
            rej("{v}", AGENT),
            none,
            approve(BOB),
        ],
    ),
    # the same version in two folders: the agent's rejection of one vetoes the other
    "aurj2f": (WD, "{v}", BOB, [two_folders, rej("{v}-2", AGENT), none, approve(BOB)]),
    "aurj2fc": (
        WD,
        "{v}",
        BOB,
        [write(AGENT), copy("{v}", "{v}-2", AGENT), rej("{v}-2", AGENT), approve(BOB)],
    ),
    # a rejection taken back by a revert stays final
    "aurjrev": (
        NORUN,
        "{v}",
        BOB,
        [write(AGENT), rej("{v}", AGENT), revert_last(AGENT, "{v}"), approve(BOB)],
    ),
    # the withdrawn version re-added by Mallory in the emptied folder
    "aurjre": (
        NORUN,
        "{v}",
        BOB,
        [
            write(AGENT),
            rej("{v}", AGENT),
            seq(delete("{v}", AGENT), write(MALLORY)),
            approve(BOB),
        ],
    ),
    # -- approvals carried in octopus merges and merges of merges ---------------------------
    "apoctB": (RUN, "{v}", BOB, [write(AGENT), none, none, octo_here(approve(ALICE), BOB)]),
    "apoctM": (
        PEND,
        "{v}",
        MALLORY,
        [write(AGENT), none, none, octo_here(approve(ALICE), MALLORY)],
    ),
    "apdeepB": (
        RUN,
        "{v}",
        BOB,
        [write(AGENT), none, none, deep3(approve(ALICE), MALLORY, CAROL, BOB)],
    ),
    # quorum: Erin's approval carried by Carol's octopus is Carol's (sec), Bob's after it: ops
    "gEoctB": (RUN, "{v}", BOB, [high, none, octo_here(approve(ERIN), CAROL), approve(BOB)]),
    "gEoctC": (PEND, "{v}", CAROL, [high, none, octo_here(approve(ERIN), CAROL), approve(CAROL)]),
    # an approval commit that also puts a note in another plan's folder: a writer of it
    "apnote": (PEND, "{v}-o", BOB, [two_plans, none, note_other(BOB), approve(BOB, "{v}-o")]),
    "apnoteC": (RUN, "{v}-o", CAROL, [two_plans, none, note_other(BOB), approve(CAROL, "{v}-o")]),
}
VIDS = list(VARIANTS)


def _tag(v: str) -> str:
    """The tag the approved plan's ``rec`` call records (``plans/<v>-o``: ``<v>o``)."""
    return v + "o" if VARIANTS[v][1] == "{v}-o" else v


def _play(lab: Lab, vids: list[str]) -> dict[str, Any]:
    got: dict[str, Any] = {"passes": [], "check": {}}

    def step(phase: str) -> None:
        res = lab.run(check=False)
        got["passes"].append((phase, res.returncode, "Traceback" in res.stderr, res.stderr[-900:]))

    for rnd in range(5):
        if rnd == 4:
            _config(lab, swapped=True)
        for v in vids:
            _want, _slug, who, acts = VARIANTS[v]
            if rnd >= len(acts):
                continue
            if rnd == len(acts) - 1:
                lab.branch(f"ap-{v}", "main")
                acts[rnd](lab, v)
                got["check"][v] = lab.check_plans(f"ap-{v}", who[1])
                main(lab)
                lab.git("merge", "-q", "--ff-only", f"ap-{v}")
            else:
                acts[rnd](lab, v)
            main(lab)
        step(f"r{rnd}")
    got["rows"] = lab.rows()
    got["ran"] = {v: len(lab.calls(_tag(v))) for v in vids}
    got["starts"] = {
        v: [s for s in lab.subjects(VARIANTS[v][1].format(v=v)) if s.startswith("plangate: start ")]
        for v in vids
    }
    got["clone"] = clone_audit_got(lab, lab.root)
    return got


def _build_one(root: Path, vids: list[str]) -> dict[str, Any]:
    lab = Lab(root)
    _config(lab)
    return _play(lab, vids)


def _build(root: Path) -> Lab:
    """Two labs (the variants split in halves) built side by side; their ``got`` merged."""
    halves = {"a": VIDS[0::2], "b": VIDS[1::2]}
    labs = build_all(
        root, {k: (lambda r, vs=vs: _build_one(r, vs)) for k, vs in halves.items()}, workers=2
    )
    got: dict[str, Any] = {"passes": [], "check": {}, "rows": {}, "ran": {}, "starts": {}}
    execs: list[Any] = []
    for part in labs.got.values():
        got["passes"] += part["passes"]
        for key in ("check", "rows", "ran", "starts"):
            got[key].update(part[key])
        execs += part["clone"]["report"].get("executions", [])
    got["clone"] = {"report": {"executions": execs}}
    lab = Lab.__new__(Lab)
    lab.got = got  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return shared(tmp_path_factory, "r127-approve-atk127a", _build)


KINDS = ("", ":status", ":audit", ":check")
IDS = [f"{v}{k}" for v in VIDS for k in KINDS] + ["passes"]
CLS_EDIT = "author-right-lost-to-edit-on-merged-branch"
_WHY_EDIT = (
    "FAIL OPEN: the agent (Mallory: mrjv1) writes plans/<v> (v1) on a branch, Alice (the "
    "agent, Mallory) edits it there (a commit "
    "of her own, or new bytes in her inner merge of the agent's branch), the branch is merged "
    "into main (--no-ff, directly or through an integration branch); the agent's rejection "
    "of its plan is E_APPROVER_NOT_ALLOWED, ignored, and Carol's approval runs it (audit "
    "valid, check says start); the same edit on main (even in one push) or in Alice's merge "
    "on main keeps the agent's right; docs/approvals.md: 'the agent may reject its plan after "
    "Dave changed a param', the authors who may withdraw include the originators 'of the "
    "versions it was edited from at that plan'"
)
# fixed (fix128a): CLS_EDIT's ["aurjed", "aurjedf", "aurjev", "aurjedm", "mrjv1"]
_BROKE: dict[str, tuple[list[str], str]] = {}
BROKEN: dict[str, Any] = {
    f"{v}{k}": xfail(cls, why) for cls, (vids, why) in _BROKE.items() for v in vids for k in KINDS
}


def _params(ids: list[str]) -> list[Any]:
    return [pytest.param(i, id=i, marks=[BROKEN[i]] if i in BROKEN else []) for i in ids]


@pytest.mark.parametrize("vid", _params(IDS))
def test_round127_atk127a(lab: Any, vid: str) -> None:
    got = lab.got
    if vid == "passes":
        bad = [p for p in got["passes"] if p[1] != 0 or p[2]]
        assert not bad, bad
        return
    v, _, kind = vid.partition(":")
    (want_runs, want_status), slug, _who, _acts = VARIANTS[v]
    plan = "plans/" + slug.format(v=v)
    row = got["rows"].get(plan, {})
    if kind == "status":
        assert row.get("status") in want_status, brief(row, 5)
    elif kind == "audit":
        execs = got["clone"]["report"].get("executions", [])
        valid = [e for e in execs if e.get("plan") == plan and e.get("approval_valid")]
        assert len(valid) == want_runs, (valid, brief(row, 5))
    elif kind == "check":
        outcome, codes = got["check"][v].get(plan, ("absent", []))
        started = len(got["starts"][v])
        assert (outcome == "start") == (started > 0) == (want_runs > 0), (
            outcome,
            codes,
            started,
            brief(row, 5),
        )
    else:
        assert got["ran"][v] == want_runs, (got["ran"][v], brief(row, 5))
