"""Round 126, approval side (atk126a): "only enough allowed people, none an author, approve
exactly the frozen version; vetoes count only from the right people", against last session's
rule (veto125: a non-approver's, a producer's, withdrawal binds only the plans she is an author
of; an allowed approver's binds every plan holding the version), the landings a pull request
really gets (cherry-pick, rebase, squash, the forge's rebase or squash merge), merges of
merges, copies, moves, renames, undo, ``Co-authored-by:`` and its spellings, a folder reused
after deletion, quorum with one person in two groups, risk changed between freeze and
approval, and an approval commit that edits another plan; ``plangate check --as`` predicting
each verdict.

Labs (local mode, ``run --once`` after every round, the recording tool ``rec``; ``hrec`` the
same script as a ``risk: high`` tool): approvers Alice, Bob, Carol, Erin (``@example.com``);
groups ``ops: [alice, bob, erin]``, ``sec: [carol, erin]`` (Erin in both); rule ``{risk:
high}`` needs one of ``ops`` and one of ``sec``; ``identity: author``. The agent writes plans;
Mallory is nobody; ``GitHub <noreply@github.com>`` is the forge's committer. The variants are
split over two identical labs built side by side (rounds 0-3, round 4 for the risk variants:
before it the config swaps ``rec`` to high and ``hrec`` to low). The last act of each variant
(the approval) is made on a branch ``ap-<v>``, ``plangate check --base main --head ap-<v> --as
<approver> --format json`` is asked, then main fast-forwards to it. Then ``plangate audit
--json`` in a fresh clone (no config) of each lab.

"The race" (``rc*``, ``au*``, ``mrj*``): the agent opens a PR adding ``plans/<v>``; Mallory
commits its bytes at ``plans/<v>-m`` on main first (``rc*``: and sets her copy ``rejected``,
also before the PR lands); then the PR lands: merged ``--no-ff`` by Bob (``rcnote``, ``rcmv*``,
``rcren``, ``rcundo``, ``rccp*``, ``auflat``), cherry-picked by Bob (``rcpick``, ``aupick``:
Alice approves, Bob being its committer), rebased by the agent and merged ``--no-ff`` by Bob
(``rcrebase``, ``rcrebcp``, ``aurebase``, ``mrjrebase``), rebased by Mallory (``rcmrebase``),
squashed by Bob (``rcsqbob``, Alice approves) or by the forge (author the agent, committer
GitHub: ``rcsqforge``, ``ausqforge``, ``mrjsquash``), rebased and fast-forwarded by the forge
(``rcrbforge``), merged by Mallory (``rcmmerge``), or her copy and rejection sit on a branch
merged into an integration branch merged into main (``rcnest``). Then: Mallory adds a note in
the agent's folder (``rcnote``), the agent or Mallory ``git mv``s the plan (``rcmvag``,
``rcmvm``), the agent renames ``PLAN.yml`` to ``PLAN.yaml`` (``rcren``), edits and ``git
revert``s (``rcundo``), copies it (``rccpag``; and deletes the source: ``rccpdel``; after the
rebase: ``rcrebcp``); the agent's PR carries ``Co-authored-by: Mallory`` (``rcco``; spelled
``MALLORY@Example.COM``: ``rccoup``); Carol (an approver) rejects Mallory's copy
(``rccarol``); the agent rejects its own plan (``au*``); Mallory rejects the agent's plan
(``mrj*``). Bob (or the named approver) then approves.

"Escape" (``esc*``): Mallory writes X at ``plans/<v>-m`` and rejects it; then she (``escedm``)
or the agent (``escedag``) writes another version at ``plans/<v>`` and edits it to exactly X;
the agent copies her rejected plan to ``plans/<v>`` as pending and moves it (``esccpmv``) or
Mallory deletes hers (``esccpdel``); the agent, on a branch forked before her commit, writes X
at ``plans/<v>`` with ``Co-authored-by: Mallory`` (``escco``, spelled otherwise ``esccoup``);
Mallory's rejected ``plans/<v>`` deleted and the folder reused by the agent with X
(``escreuse``). Bob approves.

Merges of merges (``nest*``, ``flat*``): the agent's plan (``nestown``) or Mallory's copy of
the agent's plan on main (``nestcp``) on a branch merged ``--no-ff`` into an integration branch
(holding a note of the agent's) that is merged ``--no-ff`` into main; inner merger Bob, outer
Bob (``nestown``, ``nestcp``, ``nestownA``: Alice approves), inner Carol and outer Bob
(``nestinC``: Carol approves, ``nestoutB``: Bob approves); the same branch merged straight
into main (``flatown``, ``flatcp``). The other directions: Alice writes the plan on the inner
branch and approves it (``nestself``); the agent rejects its nested-merged plan (``nestaurj``);
Mallory is the inner merger and rejects it (``nestmrj``); Alice's approval on a branch merged
into an integration branch by Mallory and into main by Bob (``apnestB``: counts as Bob's) or by
Carol and then Mallory (``apnestM``: Mallory's, refused). Controls without a race: the PR
rebased onto main and fast-forwarded, the agent rejects (``aurbplain``); squashed by the forge,
Bob approves (``sqplain``).

An edit taken back: after the race, Mallory edits the agent's plan and ``git revert``s it, Bob
approves (``mundo``); with no race, she edits the agent's pending plan, a pass freezes her v2,
she reverts it and rejects the plan in the next round (``mundorj``; with a pass between the
revert and the rejection, on ``hrec``: ``mundorj2``); her rejection with no edit
(``mrjplain``). Authorship: Alice's plan deleted and the folder reused by the agent with the
same bytes (``reuseself``), the agent's commit carrying ``CO-AUTHORED-BY: Alice`` (``coself1``),
``Co-authored-by: A <ALICE@Example.COM>`` followed by more text (``coself2``),
``co-authored-by:Alice`` (``coself3``); Alice approves each. Votes: Erin's approval
co-authored by Carol (``gEcoB``) or committed by Carol (``gEcomB``).

Quorum (``g*``, plan on ``hrec``): Erin alone, Erin + Bob, Erin + Carol, Erin + Alice, Erin +
``ERIN@Example.COM``, Bob + Alice. Risk (round 4 swaps the tools' risk after the freeze):
``rkup`` (frozen on low ``rec``, Alice alone after it became high), ``rkdown`` (frozen on high
``hrec``, Alice alone after it became low). An approval commit that also edits another pending
plan of the agent (``apedit``: the approval counts; ``apedit2``: the editor's later approval of
the edited plan is refused; ``apedit3``: Carol's runs it).

Ids (269; 67 variants x 4 + ``passes``): ``<vid>`` (``rec`` calls of the approved plan),
``<vid>:status`` (its final ``status --json`` row), ``<vid>:audit`` (valid starts of it in the
fresh-clone audit), ``<vid>:check`` (``check --as`` said ``start`` exactly when the controller
started it and the docs want a run), ``passes`` (every pass exited 0, no traceback).

Seen (round 126: 269 ids, 201 passed, 68 xfailed (strict); 60-125 s wall with -n 1 on a machine
at load 8, two labs built side by side), 4 classes:

- **racer-owns-plan-landed-on-her-copy** (32 ids: ``rcpick``, ``rcrebase``, ``rcrebcp``,
  ``rcsqbob``, ``rcsqforge``, ``rcrbforge``, ``mrjrebase``, ``mrjsquash``, each with
  ``:status``, ``:audit``, ``:check``). FAIL CLOSED. The fix of round 124's
  ``racer-veto-before-merge`` holds only when the PR lands as a merge commit (``rcnote``,
  ``rcmv*``, ``rccpag``... pass). When it lands as a commit ON TOP of Mallory's copy (Bob's
  cherry-pick, the agent's rebase then Bob's ``--no-ff`` merge, Bob's squash, the forge's
  squash or rebase merge: GitHub's two other merge buttons), Bob's approval of the agent's
  ``plans/<v>`` is ``E_VERSION_WITHDRAWN: this exact version (...) was rejected in
  plans/<v>-m (... by mallory@example.com) before it ran``, so is his approval of the agent's
  copy of it (``rcrebcp``), and Mallory's rejection of the agent's plan itself (without her
  rejecting her copy) sets it ``rejected`` (``mrjrebase``, ``mrjsquash``: Bob's approval then
  ``E_ILLEGAL_TRANSITION``). ``check --as`` and the fresh-clone audit agree with the
  controller. docs/threat-model.md, "Accepted limits": "A racer's copy at ANOTHER folder takes
  nothing from the author and vetoes nothing of hers (rounds 122 and 124: decided the other
  way, and fixed)"; docs/approvals.md: "Mallory's copy takes nothing from it and gives her
  nothing there (her rejection of plans/r is ignored)". (The docs' definition of originators,
  "a making that descends from one already counted ... re-makes it", read literally calls the
  landed commit a re-making of her copy; the same-path limit's reasoning, "the history is the
  one the agent copying her would leave", could be extended to this, for the lead to decide;
  today the docs say the other folder is decided the other way.) Repro (shell): ``git
  checkout -b pr``; the agent commits ``plans/r/PLAN.yml`` (pending); ``git checkout main``;
  Mallory commits the same file at ``plans/r-m/PLAN.yml`` then ``status: rejected`` there;
  ``git checkout pr && git rebase main`` (the agent); ``git checkout main && git merge --no-ff
  pr`` (Bob); ``run --once``; Bob commits ``status: approved`` in ``plans/r``; ``run --once``:
  ``pending_approval``, ``E_VERSION_WITHDRAWN``.
- Decided (2026-12-07, lead): this class and the next are an accepted limit, not a defect
  (docs/threat-model.md "Accepted limits", docs/approvals.md). A pull request landed as a
  commit of its own on top of Mallory's identical bytes (cherry-pick, rebase, squash) leaves
  the history the agent copying her would leave, and an author date is whatever its
  committer wrote: Mallory is the version's maker. Her rejection of her copy vetoes it (the
  ``rc*`` ids now assert ``E_VERSION_WITHDRAWN``, nothing runs), her rejection of the agent's
  plan withdraws it (``mrjrebase``, ``mrjsquash``: ``rejected``), and the agent's own
  rejection is ignored (``au*``: Bob's approval runs it, an allowed approver's approval of
  exactly that version). The merge-commit landings (``rcnote``, ``auflat``...) keep the
  author's right, and the ids assert that as before.
- **author-right-lost-to-landing-on-a-copy** (12 ids: ``aurebase``, ``aupick``,
  ``ausqforge`` with ``:status``, ``:audit``, ``:check``). FAIL OPEN. The same race without
  Mallory's rejection, the PR landing rebased, cherry-picked or squashed by the forge: the
  agent's rejection of its own plan is ``E_APPROVER_NOT_ALLOWED: agent@example.com set status
  rejected ..., but only an allowed approver or an author of the plan may; ignored`` and Bob's
  (Alice's after a pick) approval runs the plan its author withdrew; the audit calls the start
  valid and ``check`` predicts ``start``. The merge-commit landing (``auflat``) and a rebase
  without a copy (``aurebase`` vs ``aurbplain``) keep the author's right. Round 122's
  ``author-withdrawal-lost-to-a-raced-copy`` back through the landings that are no merge.
  docs/approvals.md: "Now the agent, who made the version at plans/r, may withdraw plans/r as
  its author; Mallory's copy takes nothing from it". Probably one cause with the class above
  (the landing commit, descending from her copy, is no making afresh at the plan's folder).
  Repro: as above without Mallory's rejection; after ``run --once`` the agent commits
  ``status: rejected`` in ``plans/r``; ``run --once``; Bob commits ``status: approved``;
  ``run --once``: ``completed``.
- **inner-merger-counted-as-writer** (16 ids: ``rcnest``, ``nestcp``, ``nestown``,
  ``nestinC`` with ``:status``, ``:audit``, ``:check``). FAIL CLOSED. The agent's plan on a
  branch ``m``, forked from an integration branch ``mid`` (one note commit of the agent's),
  merged ``--no-ff`` into ``mid`` by Bob, then ``mid`` merged ``--no-ff`` into main by Bob:
  the plan's notes say ``bob@example.com set status pending_approval`` and Bob's approval is
  ``E_SELF_APPROVAL: bob@example.com wrote or changed this plan's content and cannot approve
  it``; with Carol the inner merger and Bob the outer, Carol is refused (``nestinC``) and Bob
  runs it (``nestoutB``): the INNER merge commit is read as the plan's writing. The same for a
  branch holding only Mallory's copy of the agent's plan on main (``nestcp``: Bob may not
  approve the agent's plan) and for the race (``rcnest``). The branch merged straight into
  main (``flatown``, ``flatcp``) and Alice (no merger) approving (``nestownA``) run. Only the
writer's side is wrong: the inner merger gains no right to withdraw (``nestmrj``: Mallory's
rejection ignored), the real writer stays one (``nestself``: Alice refused) and keeps her
right (``nestaurj``).
  docs/approvals.md: "For a merge, these are the identities of the commits the merge brought
  in through its second parent that changed the plan, not the person who merged (unless the
  merge itself changed the content)". Repro: ``git checkout -b mid``; the agent commits a
  note; ``git checkout -b m``; the agent commits ``plans/n/PLAN.yml`` (pending); ``git
  checkout mid && git merge --no-ff m`` (Bob); ``git checkout main && git merge --no-ff mid``
  (Bob); ``run --once``; Bob commits ``status: approved``; ``run --once``: ``E_SELF_APPROVAL``.

  Fixed (2026-12-07, fix127n): the cause was the logs of a merged branch (``git log
  p1..p2 -- path``, merges shown against their first parent): the outer merge's writers
  (``Lifecycle._changers``), a content's producers over a whole history (``_producers``) and
  the makers of what a merge brought into a held plan's claims (``_merged_makers``) counted
  every commit listed with a change, so the INNER merge, which lacked the plan in its first
  parent, was read as writing it. Now each listed commit is asked the one rule for every
  merge wherever it sits (round 68): ``Lifecycle._wrote_content`` (a merge wrote content only
  when no parent held it and it did not bring it: no side's blob, no clean join of git's, no
  hands-off settlement, ``_brought``) and ``_made_by`` (the same for any change, a twin's
  removal too); the sides' commits, listed too, stay the writers, at any depth and through an
  octopus. A merge that writes new bytes by hand is still its merger's writing. Tests:
  tests/approval/test_nested_merge_writers.py (depths 2 and 3, inner, middle and outer
  mergers, a carried copy, an octopus inside a merge, a twin's removal released through a
  merge of a merge; controls: an inner merge writing new content, the inner branch's writer).

- **undone-edit-gives-withdrawal** (8 ids: ``mundorj``, ``mundorj2`` with ``:status``,
  ``:audit``, ``:check``). FAIL CLOSED. The agent's pending plan (frozen v1); Mallory edits a
  param (``run --once`` freezes her v2), ``git revert``s her edit (v1 again) and commits
  ``status: rejected`` (in the revert's round, or after another pass): the plan is ``rejected
  by mallory@example.com``, final, and Bob's approval is ``E_ILLEGAL_TRANSITION ... (from
  rejected)``; ``check`` and the audit agree. Without her edit (``mrjplain``) her rejection
  is ignored. docs/threat-model.md (round 20 row): "a non-approver edits a plan and restores
  it (or ``git revert``s her edit), then rejects it" is ``E_APPROVER_NOT_ALLOWED``, ignored;
  docs/approvals.md: "an edit taken back leaves its maker nothing: the version at stake came
  from none of hers". (Round 20's own lab, ``revert-rej``, tries it on a run paused at a gate,
  where the version at stake is the approved one: its 18 ids pass today; the pending plan,
  before any approval, is what breaks.) Repro: the agent commits ``plans/u/PLAN.yml``
  (pending); ``run --once``; Mallory adds a param and commits; ``run
  --once``; Mallory ``git revert --no-edit HEAD``; (``run --once``;) Mallory commits
  ``status: rejected``; ``run --once``: ``rejected``.

  Fixed (2026-12-07, fix127u): two causes, one in this lab, one in the controller. (1) The
  lab's ``revert`` ran ``git revert --no-edit HEAD`` after a pass: HEAD was the
  controller's freeze of her v2 (the shared labs: another variant's commit, such as an
  "Agent: remove" or a freeze of ``nestcp-m``), so her edit was never taken back; the plan
  held her v2, whose originator she is, and her rejection withdrew it as its author (round
  119: an editor is an author of the version she made; the controller was right, and
  stays so: ``test_the_freeze_reverted_leaves_her_version_hers`` in the tests below).
  ``revert`` now reverts the variant's own ``edit`` commit (``_EDITS``; ``mundo`` and
  ``rcundo`` now really undo too, and pass). (2) Undone for real, her
  rejection is ignored (``E_APPROVER_NOT_ALLOWED``), but in the revert's own push
  (``mundorj``) the agent's v1 was never frozen again: ``Freezing._freeze`` froze only a
  file that said ``pending_approval``, hers said ``rejected``, so the file kept her v2's
  ``frozen.hash`` and Bob's approval was refused ``E_PLAN_HASH_MISMATCH`` (``check`` agreed).
  A plan the index holds pending under a status it ignored (``Deciding._act``: ``ignored``)
  now has a version not frozen yet frozen in that pass, its status put back to
  ``pending_approval`` in the freeze commit (``freezing._as_pending``); nothing is written
  when the version is frozen already. Tests: ``tests/approval/test_undone_edits.py`` (6; 3
  fail on main's code: the revert and the restore by hand in the rejection's push, and the
  agent's own new version under Mallory's ignored rejection).

What held (``check --as``, the audit and the controller agreeing in every variant): Mallory's
veto of her copy binds nothing of the agent's after a merge-commit landing whatever follows
(her note in the agent's folder, a move by either, a ``PLAN.yaml`` rename, an edit and its
revert, a copy and the source deleted), nor when she merges the PR herself; it binds when she
is a producer at the plan's folder (her rebase of the PR as committer, ``Co-authored-by:``
her in either spelling: documented); Carol's rejection of the copy binds the agent's plan;
none of the escapes ran (edits to exactly X by her or by the agent, copy then move, copy then
her deletion, a co-authored re-making in either spelling, the folder reused: all
``E_VERSION_WITHDRAWN`` or rejected); Erin counts once, in the group the quorum needs (alone
and twice in two spellings partial; with Bob, Carol or Alice it runs); Bob + Alice (both ops)
partial on the high-risk tool; the risk is recomputed at the decision (``rkup`` partial,
``rkdown`` runs with one); an approval commit that also edits another plan approves its plan
and makes its author a writer of the other plan's new version (``E_SELF_APPROVAL``; Carol's
approval runs it); Mallory's edit and revert after the race take nothing (``mundo``);
authorship follows the content into a reused folder and every spelling of the co-author
trailer tried (``E_SELF_APPROVAL``); a co-author or a committer of Erin's approval casts no
vote (partial); an approval inside a merge of a merge counts as the outer merger's
(``apnestB`` runs, ``apnestM`` is ``E_APPROVER_NOT_ALLOWED`` for Mallory).

Not tried: ``identity: committer``, signed commits and ``require_signed``, ``identity_aliases``,
gates and aborts, pinned libraries, drafts and sources, remote mode, the daemon, MCP
``submit`` of the raced version, octopus merges of the new landings, criss-cross merges.
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


CO_M = "Co-authored-by: Mallory <mallory@example.com>"
CO_MUP = "Co-authored-by: M. <MALLORY@Example.COM>"

#: vid -> (calls wanted, final statuses of the approved plan, the approved plan's slug,
#: the final approver), [round 0, 1, 2, 3]; round 3 runs on a branch ``ap-<v>`` that
#: ``check --as <approver>`` reads before it is fast-forwarded onto main
V = tuple[tuple[int, set[str]], str, tuple[str, str], list[Act]]
VARIANTS: dict[str, V] = {
    # -- fail closed? a producer's veto must not bind a plan she did not write --------------
    "rcnote": (RUN, "{v}", BOB, [race(), note_in("{v}", MALLORY), none, approve(BOB)]),
    "rcmvag": (
        RUN,
        "{v}-x",
        BOB,
        [race(), mv("{v}", "{v}-x", AGENT), none, approve(BOB, "{v}-x")],
    ),
    "rcmvm": (
        RUN,
        "{v}-x",
        BOB,
        [race(), mv("{v}", "{v}-x", MALLORY), none, approve(BOB, "{v}-x")],
    ),
    "rcren": (
        RUN,
        "{v}",
        BOB,
        [race(), rename_yaml(AGENT), none, approve(BOB, fn="PLAN.yaml")],
    ),
    "rcundo": (RUN, "{v}", BOB, [race(), edit(AGENT), revert(AGENT), approve(BOB)]),
    "rccpag": (
        RUN,
        "{v}-c",
        BOB,
        [race(), copy("{v}", "{v}-c", AGENT), none, approve(BOB, "{v}-c")],
    ),
    "rccpdel": (
        RUN,
        "{v}-c",
        BOB,
        [race(), copy("{v}", "{v}-c", AGENT), delete("{v}", AGENT), approve(BOB, "{v}-c")],
    ),
    "rcpick": (WD, "{v}", ALICE, [race(merger=pr_pick(BOB)), none, none, approve(ALICE)]),
    "rcrebase": (WD, "{v}", BOB, [race(merger=pr_rebase(AGENT, BOB)), none, none, approve(BOB)]),
    "rcrebcp": (
        WD,
        "{v}-c",
        BOB,
        [
            race(merger=pr_rebase(AGENT, BOB)),
            copy("{v}", "{v}-c", AGENT),
            none,
            approve(BOB, "{v}-c"),
        ],
    ),
    "rcmmerge": (RUN, "{v}", BOB, [race(merger=pr_merge(MALLORY)), none, none, approve(BOB)]),
    "rcnest": (RUN, "{v}", BOB, [nested_race, none, none, approve(BOB)]),
    "rcsqbob": (WD, "{v}", ALICE, [race(merger=pr_squash(BOB, BOB)), none, none, approve(ALICE)]),
    "rcsqforge": (
        WD,
        "{v}",
        BOB,
        [race(merger=pr_squash(AGENT, FORGE)), none, none, approve(BOB)],
    ),
    "rcrbforge": (
        WD,
        "{v}",
        BOB,
        [race(merger=pr_rebase(FORGE, None)), none, none, approve(BOB)],
    ),
    # the author's own right after the same shapes (no rejection by Mallory); controls: the
    # same landings without Mallory's copy
    "aurbplain": (
        REJ,
        "{v}",
        BOB,
        [
            seq(pr_open(), lambda lab, v: lab.note(f"{v}-n", BOB) and None, pr_rebase(AGENT, None)),
            rej("{v}", AGENT),
            none,
            approve(BOB),
        ],
    ),
    "sqplain": (
        RUN,
        "{v}",
        BOB,
        [seq(pr_open(), pr_squash(AGENT, FORGE)), none, none, approve(BOB)],
    ),
    "auflat": (REJ, "{v}", BOB, [race0(), rej("{v}", AGENT), none, approve(BOB)]),
    "aurebase": (
        RUN,
        "{v}",
        BOB,
        [race0(pr_rebase(AGENT, BOB)), rej("{v}", AGENT), none, approve(BOB)],
    ),
    "aupick": (RUN, "{v}", ALICE, [race0(pr_pick(BOB)), rej("{v}", AGENT), none, approve(ALICE)]),
    "ausqforge": (
        RUN,
        "{v}",
        BOB,
        [race0(pr_squash(AGENT, FORGE)), rej("{v}", AGENT), none, approve(BOB)],
    ),
    # merges of merges: a merger who only merged writes nothing
    "nestcp": (RUN, "{v}", BOB, [write(AGENT), nested(copy_pr(MALLORY)), none, approve(BOB)]),
    "flatcp": (RUN, "{v}", BOB, [write(AGENT), on_branch(copy_pr(MALLORY)), none, approve(BOB)]),
    "nestown": (RUN, "{v}", BOB, [nested(write(AGENT)), none, none, approve(BOB)]),
    "flatown": (RUN, "{v}", BOB, [on_branch(write(AGENT)), none, none, approve(BOB)]),
    "nestownA": (RUN, "{v}", ALICE, [nested(write(AGENT)), none, none, approve(ALICE)]),
    "nestinC": (RUN, "{v}", CAROL, [nested(write(AGENT), CAROL, BOB), none, none, approve(CAROL)]),
    "nestoutB": (RUN, "{v}", BOB, [nested(write(AGENT), CAROL, BOB), none, none, approve(BOB)]),
    # the other directions of a merge of a merge: the real writer stays one, the inner
    # merger withdraws nothing, an approval inside counts only as the outer merger's
    "nestself": (PEND, "{v}", ALICE, [nested(write(ALICE)), none, none, approve(ALICE)]),
    "nestaurj": (
        REJ,
        "{v}",
        ALICE,
        [nested(write(AGENT)), rej("{v}", AGENT), none, approve(ALICE)],
    ),
    "nestmrj": (
        RUN,
        "{v}",
        BOB,
        [nested(write(AGENT), MALLORY, BOB), rej("{v}", MALLORY), none, approve(BOB)],
    ),
    "apnestB": (
        RUN,
        "{v}",
        BOB,
        [write(AGENT), none, none, nested_here(approve(ALICE), MALLORY, BOB)],
    ),
    "apnestM": (
        PEND,
        "{v}",
        MALLORY,
        [write(AGENT), none, none, nested_here(approve(ALICE), CAROL, MALLORY)],
    ),
    # an edit taken back leaves its maker nothing (round 20): Mallory's undo at the agent's
    # folder makes her no originator there
    "mundo": (RUN, "{v}", BOB, [race(), edit(MALLORY), revert(MALLORY), approve(BOB)]),
    "mundorj": (
        RUN,
        "{v}",
        BOB,
        [write(AGENT), edit(MALLORY), seq(revert(MALLORY), rej("{v}", MALLORY)), approve(BOB)],
    ),
    # the same with a pass between the revert and the rejection (round 4 makes hrec low)
    "mundorj2": (
        RUN,
        "{v}",
        BOB,
        [high, edit(MALLORY), revert(MALLORY), rej("{v}", MALLORY), approve(BOB)],
    ),
    # her rejection with no edit of hers before it (control)
    "mrjplain": (RUN, "{v}", BOB, [write(AGENT), none, rej("{v}", MALLORY), approve(BOB)]),
    # authorship as the docs define it: who wrote a content stays its author
    "reuseself": (
        PEND,
        "{v}",
        ALICE,
        [write(ALICE), delete("{v}", ALICE), write(AGENT), approve(ALICE)],
    ),
    "coself1": (
        PEND,
        "{v}",
        ALICE,
        [write(AGENT, msg="CO-AUTHORED-BY: Alice <alice@example.com>"), none, none, approve(ALICE)],
    ),
    "coself2": (
        PEND,
        "{v}",
        ALICE,
        [
            write(AGENT, msg="Co-authored-by: A <ALICE@Example.COM>\n\nmore text after"),
            none,
            none,
            approve(ALICE),
        ],
    ),
    "coself3": (
        PEND,
        "{v}",
        ALICE,
        [write(AGENT, msg="co-authored-by:Alice <alice@example.com>"), none, none, approve(ALICE)],
    ),
    # a vote is its author's: a co-author or a committer of an approval casts none
    "gEcoB": (
        PEND,
        "{v}",
        ERIN,
        [high, none, none, approve_msg(ERIN, "Co-authored-by: Carol <carol@example.com>")],
    ),
    "gEcomB": (PEND, "{v}", ERIN, [high, none, none, approve_msg(ERIN, "ok", committer=CAROL)]),
    # Mallory rejects the agent's plan itself after the PR landed rebased on her copy
    "mrjrebase": (
        REJ,
        "{v}",
        BOB,
        [race0(pr_rebase(AGENT, BOB)), rej("{v}", MALLORY), none, approve(BOB)],
    ),
    "mrjsquash": (
        REJ,
        "{v}",
        BOB,
        [race0(pr_squash(AGENT, FORGE)), rej("{v}", MALLORY), none, approve(BOB)],
    ),
    # an approval commit that also edits another plan: the approval counts, the approver is
    # a writer of the other plan's new version
    "apedit": (RUN, "{v}", BOB, [two_plans, none, none, approve_and_edit(BOB)]),
    "apedit2": (
        PEND,
        "{v}-o",
        BOB,
        [two_plans, none, approve_and_edit(BOB), approve(BOB, "{v}-o")],
    ),
    "apedit3": (
        RUN,
        "{v}-o",
        CAROL,
        [two_plans, none, approve_and_edit(BOB), approve(CAROL, "{v}-o")],
    ),
    # risk changed between freeze and approval (round 4 swaps rec and hrec): the controller
    # recomputes the requirement when it decides
    "rkup": (PEND, "{v}", ALICE, [write(AGENT), none, none, none, approve(ALICE)]),
    "rkdown": (RUN, "{v}", ALICE, [high, none, none, none, approve(ALICE)]),
    # documented: a committer and a co-author of the making at the plan's folder are its
    # producers, so authors: her veto binds the plan
    "rcmrebase": (WD, "{v}", BOB, [race(merger=pr_rebase(MALLORY, BOB)), none, none, approve(BOB)]),
    "rcco": (WD, "{v}", BOB, [race(trailer=CO_M), none, none, approve(BOB)]),
    "rccoup": (WD, "{v}", BOB, [race(trailer=CO_MUP), none, none, approve(BOB)]),
    # an allowed approver's withdrawal binds every plan holding the version
    "rccarol": (
        WD,
        "{v}",
        BOB,
        [seq(pr_open(), copy_pr(MALLORY), pr_merge()), rej("{v}-m", CAROL), none, approve(BOB)],
    ),
    # -- fail open? an author's own withdrawal must follow her content ----------------------
    "escedm": (
        WD,
        "{v}",
        BOB,
        [own_rejected(), write(MALLORY, "y"), edit_to_x(MALLORY), approve(BOB)],
    ),
    "escedag": (
        WD,
        "{v}",
        BOB,
        [own_rejected(), write(AGENT, "y"), edit_to_x(AGENT), approve(BOB)],
    ),
    "esccpmv": (
        WD,
        "{v}-x",
        BOB,
        [
            own_rejected(),
            copy("{v}-m", "{v}", AGENT, "pending_approval"),
            mv("{v}", "{v}-x", AGENT),
            approve(BOB, "{v}-x"),
        ],
    ),
    "esccpdel": (
        WD,
        "{v}",
        BOB,
        [
            own_rejected(),
            copy("{v}-m", "{v}", AGENT, "pending_approval"),
            delete("{v}-m", MALLORY),
            approve(BOB),
        ],
    ),
    "escco": (
        WD,
        "{v}",
        BOB,
        [fork, seq(own_rejected(), forked_before(write(AGENT, msg=CO_M))), none, approve(BOB)],
    ),
    "esccoup": (
        WD,
        "{v}",
        BOB,
        [fork, seq(own_rejected(), forked_before(write(AGENT, msg=CO_MUP))), none, approve(BOB)],
    ),
    "escreuse": (
        NORUN,
        "{v}",
        BOB,
        [own_rejected("{v}"), delete("{v}", MALLORY), write(AGENT), approve(BOB)],
    ),
    # -- quorum: Erin is in ops and sec; one person counts once -----------------------------
    "gE": (PEND, "{v}", ERIN, [high, none, none, approve(ERIN)]),
    "gEB": (RUN, "{v}", BOB, [high, none, approve(ERIN), approve(BOB)]),
    "gEC": (RUN, "{v}", CAROL, [high, none, approve(ERIN), approve(CAROL)]),
    "gEE": (PEND, "{v}", ERIN_UP, [high, none, approve(ERIN), approve(ERIN_UP)]),
    "gEA": (RUN, "{v}", ALICE, [high, none, approve(ERIN), approve(ALICE)]),
    "gBA": (PEND, "{v}", ALICE, [high, none, approve(BOB), approve(ALICE)]),
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
    return shared(tmp_path_factory, "r126-approve-atk126a", _build)


KINDS = ("", ":status", ":audit", ":check")
IDS = [f"{v}{k}" for v in VIDS for k in KINDS] + ["passes"]
CLS_LAND = "racer-owns-plan-landed-on-her-copy"
CLS_AUTH = "author-right-lost-to-landing-on-a-copy"
CLS_NEST = "inner-merger-counted-as-writer"
_WHY_LAND = (
    "FAIL CLOSED: Mallory commits the bytes of the agent's open PR at plans/<v>-m (and rejects "
    "that copy); the PR then lands on main by a cherry-pick, a rebase (merged --no-ff or "
    "fast-forwarded by the forge) or a squash: Bob's approval of the agent's plans/<v> (or of "
    "the agent's copy of it) is E_VERSION_WITHDRAWN 'rejected in plans/<v>-m by mallory', and "
    "Mallory's rejection of plans/<v> itself sets it rejected; docs/threat-model.md 'Accepted "
    "limits': 'A racer's copy at ANOTHER folder takes nothing from the author and vetoes "
    "nothing of hers'"
)
_WHY_AUTH = (
    "FAIL OPEN: the same race (Mallory's copy at plans/<v>-m first, the PR rebased, "
    "cherry-picked or squash-merged by the forge after it): the agent's rejection of its own "
    "plans/<v> is E_APPROVER_NOT_ALLOWED, ignored, and Bob's (Alice's) approval runs it; "
    "docs/approvals.md: 'Now the agent, who made the version at plans/r, may withdraw "
    "plans/r as its author; Mallory's copy takes nothing from it'"
)
_WHY_NEST = (
    "FAIL CLOSED: a branch merged (--no-ff) into an integration branch, which is then merged "
    "into main (a merge of a merge): the INNER merge's author is read as the plan's writer "
    "(its notes say '<inner merger> set status pending_approval') and that approver's approval "
    "is E_SELF_APPROVAL, for the agent's own plan and for a plan whose copy the branch held; "
    "docs/approvals.md: 'For a merge, these are the identities of the commits the merge "
    "brought in through its second parent that changed the plan, not the person who merged'"
)
_BROKE = {
}  # fmt: skip
BROKEN: dict[str, Any] = {
    f"{v}{k}": xfail(cls, why) for cls, (vids, why) in _BROKE.items() for v in vids for k in KINDS
}


def _params(ids: list[str]) -> list[Any]:
    return [pytest.param(i, id=i, marks=[BROKEN[i]] if i in BROKEN else []) for i in ids]


@pytest.mark.parametrize("vid", _params(IDS))
def test_round126_atk126a(lab: Any, vid: str) -> None:
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
