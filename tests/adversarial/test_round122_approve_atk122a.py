"""Round 122, approval side (atk122a): WHO MAY WITHDRAW, after round 120's merged-withdrawal rule
and round 121's originators rule; quorum, groups and risk; the fresh-clone audit and
``plangate check`` against what the controller did.

Labs (local mode, ``run --once`` passes, the recording tool ``rec``; ``hrec`` is the same
script as a ``risk: high`` tool): approvers ``alice@example.com``, ``bob@example.com``,
``carol@example.com``; groups ``ops: [alice, bob]``, ``sec: [carol]``; rules ``{risk: high}``
needs one from ``ops`` and one from ``sec``, ``plans/q*/**`` needs two approvals. The agent
(``agent@example.com``) and Dave (``dave@example.com``) write plans, Mallory
(``mallory@example.com``) is nobody, the forge is ``GitHub <noreply@github.com>``.

- Lab A (``identity: author``, 70 variants + 5 ``check`` pull requests): pass A, the agent
  writes pending plans (one draft), gated plans, ``rec`` and ``hrec`` plans, libraries its own
  parent and Dave's parents pin by ``plangate hash`` (one library Dave edited first), Dave's
  plan the agent edits; the agent's pull requests whose bytes Mallory commits first at another
  folder (the races); the agent's commit cherry-picked onto main by Mallory. Pass B, first
  decisions: originators (Mallory copies, deletes and re-adds, edits and reverts, ``git mv``s
  the agent's plan, then the agent rejects; the agent co-edits Dave's plan and Dave rejects;
  Mallory edits and rejects, or is reverted and rejects; Mallory's copy or move rejected by
  her); merges of every shape carrying a rejection by Alice, Mallory or the author (octopus,
  the rejection as 2nd or 3rd parent, ``-s ours``, criss-cross, squash, nested branches, an
  evil merge resolving to pending, the rejection reverted on its branch, the forge's
  rebase-merge, cherry-picks both ways, a PR adding the plan and rejecting it);
  ``Co-authored-by:`` claims on Mallory's rejection; a draft rejected by its author on a
  merged branch then submitted (same push, or a pass between); library rejections by the
  author (on the line, on a merged branch), Alice (on the line, in an octopus merged by
  Mallory), Alice on Mallory's copy; a plan added already ``approved`` by Mallory, the agent,
  Bob; a plan added ``rejected`` by its author and copied pending; quorum and risk votes;
  gates paused after Alice's approval. Passes C-D: Bob approves everything, second votes
  (Alice again, Mallory, a vote voided by an edit, Mallory's or the author's rejection between
  votes, Bob's vote in a merge of a PR where Mallory rejected), gate aborts (Mallory on the
  line or on a branch merged by Alice, the author on the line or on a branch merged by
  Mallory, Alice on a branch merged by Mallory) and gate answers (Bob; the author, then
  Mallory). Pass E: five pull requests ``plangate check --base main --as bob@example.com``'d,
  then merged by Bob. Then ``plangate audit --json`` in a fresh clone (no config).
- Lab C (``identity: committer``, 7 variants): a rejection whose author and committer differ
  (``git am`` by Alice of Mallory's patch, Alice's commit put on a branch by Mallory, the
  agent's by Mallory, Mallory's patch applied by the agent, the forge's rebase-merge, an
  octopus), on a branch merged by Bob, Alice or Mallory, or on the line; then Bob approves.

Ids (346; 82 variants: 70 + 5 ``check`` + 7 committer): ``<vid>`` (``rec`` calls of the vid's
tag, copies included), ``<vid>:status`` (the final ``status --json`` row; at the new folder
for a move or an approved copy), ``<vid>:audit`` (valid starts of the vid's folders in the
fresh-clone audit; gates: first and gate approvals apart), ``<vid>:agree`` (the audit calls
valid exactly the starts and resumes the controller committed), ``<vid>:gate`` (gated action
runs), ``<vid>:lib`` (the pinned library's action ran with its parent), ``mgdr2:early`` (the
row right after the merge: still ``draft``), ``check:<pr>`` (``check --as bob`` predicts
``start`` exactly when it should), ``<pr>:merged`` (after Bob merges it, the plan ran or not
as it should), ``<pr>:agree``, ``passes``; ``cm:<vid>`` with ``:status``, ``:audit``,
``:agree``, ``:early`` and ``cm:passes`` for lab C.

Seen (round 122: 346 ids, 326 passed, 20 xfailed; about 65-100 s wall alone with -n 1 on a
loaded machine), 2 classes:

- **author-withdrawal-lost-to-a-raced-copy** (17 ids: ``orrace``, ``orrace2``, ``orrace3``,
  ``orrace4``, ``orrace5`` with ``:status``, ``:audit``; ``check:chkr``, ``chkr:merged``).
  FAIL OPEN. The agent opens a pull request adding ``plans/orrace`` (pending). Mallory commits
  the same bytes at ``plans/orrace-m`` on main before Bob merges the PR (pending, as a
  ``draft`` (``orrace2``), or added and deleted again before the merge (``orrace3``)), or on a
  branch forked before the PR and merged AFTER Bob merged it and the plan was on main
  (``orrace4``), or the very file at the same path ``plans/orrace5`` (the PR's merge then
  changes nothing). The agent then sets its own pending plan ``rejected``:
  ``E_APPROVER_NOT_ALLOWED: agent@example.com set status rejected ..., but only an allowed
  approver or an author of the plan may; ignored``, and Bob's approval RUNS it; the
  fresh-clone audit calls the run valid, and ``check --as bob`` of a PR where the agent
  rejects and Mallory sets ``approved`` predicts ``start`` (``chkr``). The controller and the
  audit agree, on the wrong thing: the race leaves the version with no originator (the
  intersection of the two makings is empty), so its author may never withdraw it again, and
  Mallory can do this to any plan whose bytes she sees in a pull request, even after it is
  merged (``orrace4``). docs/approvals.md: "So Dave may reject his plan however many copies of
  it others made"; "Withdrawals (``aborted`` or ``rejected``, by an allowed approver or an
  author of the plan)"; SPEC §4's author. The originators rule's race clause ("two makings
  neither of which holds the other (round 35's race ...) keep only someone in both") reads the
  other way for ``orrace5`` (its very case) and ``orrace``-``orrace3``: the two rules
  conflict, for the lead to decide; ``orrace4`` (Mallory's copy lands after the plan, from a
  branch she forked earlier) is no race on the branch at all. Repro (shell, echo tool): ``git
  checkout -b pr``; the agent commits ``plans/r/PLAN.yml`` (pending); ``git checkout main``;
  Mallory commits the same file as ``plans/r-m/PLAN.yml``; Bob runs ``git merge --no-ff pr``;
  ``run --once``; the agent commits ``status: rejected`` in ``plans/r``; ``run --once``; Bob
  commits ``status: approved`` there; ``run --once``: ``plans/r`` is ``completed``.
- **merged-draft-rejection-judged-after-submit** (3 ids: ``mgdr`` with ``:status``,
  ``:audit``). FAIL CLOSED. The agent sets its DRAFT ``rejected`` on a branch, Bob merges it
  ``--no-ff``, and in the same push (no pass between) the agent sets it ``pending_approval``
  on main: the pass reads the row as ``rejected by agent@example.com in <branch commit>``
  (notes: ``set status pending_approval`` then ``set status rejected on a merged branch``):
  the draft-time rejection was judged as a withdrawal of the pending plan the agent submitted
  after the merge, and Bob's approval is ``E_ILLEGAL_TRANSITION (from rejected)``. With a pass
  between the merge and the submission (``mgdr2``) it is rightly ignored (the row stays
  ``draft``, Bob's approval runs it). docs/approvals.md: "A draft has no author withdrawers:
  its author setting it ``rejected`` is ignored"; "A commit of a merged branch counts from the
  merge that brought it in, in the order of the first-parent line: a withdrawal is judged by
  what had been made before it ... so a cold scan, a live controller whatever its passes, and
  the fresh-clone audit agree" (the outcome depends on where the passes fell). Impact is small
  (the agent could reject its pending plan anyway). Repro: the agent commits
  ``plans/d/PLAN.yml`` (``draft``); ``run --once``; ``git checkout -b dr``; the agent commits
  ``status: rejected``; ``git checkout main``; Bob ``git merge --no-ff dr``; the agent commits
  ``status: pending_approval``; ``run --once``: ``plangate status`` shows ``rejected ...
  rejected by agent@example.com``.

Fixed (2026-12-07, fix124m): **merged-draft-rejection-judged-after-submit** (3 ids). The
cause: a scan kept every withdrawal found on a merged branch (``Lifecycle._side_withdrawal``)
until its END and judged them all there (``HistoryIndex.scan`` ->
``Lifecycle.apply_side_withdrawals``), against each plan as the scan's LAST commit left it,
while the fresh-clone audit applies them after each merge. The agent's rejection of its draft,
merged, then the draft submitted in the same push, was judged against the submitted pending
plan (its author may withdraw that) and withdrew it; with a pass between the merge and the
submission (``mgdr2``) it was judged against the draft (no author withdrawers) and ignored.
The makings and take-backs of merged branches were already counted where their merge is
(``_place_side_made``); the withdrawals were not. Now ``_place_side_made`` places each
withdrawal at the first-parent merge that brought it, and ``Lifecycle.apply`` applies it after
that merge's own changes (``apply_side_withdrawals(sink, upto)``), or, for a merge that
changed nothing under the plans folder, before the line's next commit
(``_apply_side_before``, that merge's makings and take-backs first); the scan's end applies
only those of its last merges. That alone (fix123m, reverted) broke round 35's ``ours-copy``:
a making on a merged branch counted from its merge even when the merge DISCARDED that content
(``git merge -s ours``), so Mallory, whose copy of the agent's unmerged plan and rejection of
it came in by an ``-s ours`` merge, was that content's producer until the agent's pull request
was merged, and her rejection, now judged at her merge, vetoed the version by hash (the audit,
and a controller with a pass between the two merges, did so already on the old code). A
merged branch's making now counts only when the first-parent merge that brings it keeps that
content (a file under the plans folder holding it in the merge and at the same path in a
merged parent: ``Lifecycle._merge_keeps``); content a merge discards makes nothing and so
withdraws nothing, while a withdrawal the merge brings (kept or resolved away) counts from
the merge. The controller, ``check`` and the audit read the one rule, so a cold scan, a live
controller whatever its passes, and the audit agree. The same fix makes Alice's merged
rejection followed in the same push by the agent's edit on main withdraw the plan (it was read
as a withdrawal of another version, ignored, and Bob's approval ran the edit).
``INDEX_VERSION`` 143. Tests: ``tests/approval/test_merged_withdrawals.py``
(``*merged_draft_rejection*``, ``*edit_on_the_line*``, ``*discarded*``).

What held (the fresh-clone audit agreeing with the controller in every ``:agree``): the author
keeps the right to withdraw her plan through a copy Mallory made at another folder, a delete
and re-add, an edit and its revert, a ``git mv``, a cherry-pick of her commit by Mallory or
rebased onto main by Bob, a co-edit (Dave rejects after the agent's edit), and as
``AGENT@Example.com``; Alice's rejection reverted by the agent stays; Mallory's copy,
move-with-rejection, or rejection after her edit was reverted withdraws nothing (a control:
her own edit makes her a writer who may withdraw). Merges: Alice's rejection counts (octopus,
as second or third parent, ``-s ours``, criss-cross, nested branches merged by Mallory, an
evil merge resolving to pending, the merge resolved by deleting the plan and the agent
re-adding it pending (``mgrmre``: never runs), reverted on its branch, rebase-merged by the
forge, cherry-picked by Mallory, the author's own rejection merged by Mallory, a PR adding and
rejecting the plan); Mallory's is ignored (octopus, ``-s ours``, criss-cross, forge rebase,
cherry-picked by Alice; Mallory's merged rejection of v1 followed by her own edit to v2 on
main in the same push, ``mgme``: ignored, v2 runs); a squash is its squasher's (Alice's squash
of Mallory's rejection counts); ``Co-authored-by: Alice`` or ``Co-authored-by: Agent`` on
Mallory's rejection gives it no rights. Libraries: the author's rejection (on the line, on a
merged branch) leaves Dave's parent running and refuses her own parent; Alice's rejection (on
the line, in Mallory's octopus, of Mallory's copy) refuses Dave's parent; the author's
rejection of a library Dave edited (v2) leaves Dave's parent pinning v2 running. A plan added
already ``approved`` by Mallory, the agent or Bob never runs; a plan added ``rejected`` by its
author vetoes its pending copy. Quorum: the same person twice, Mallory's vote, a vote voided
by an edit stay partial; Mallory's rejection between votes is ignored, the author's counts;
Bob's vote in a merge of Mallory's PR counts; a vote on a plan does not carry to Mallory's
copy. Risk: two ``ops`` votes are partial, ``ops`` + ``sec`` runs, a parent pinning an
``hrec`` library needs ``sec`` too. Gates: Mallory's abort (line or merged by Alice) ignored,
Bob's answer runs the gate; the author's abort (line, or merged by Mallory) and Alice's merged
by Mallory abort it; the author's and Mallory's gate answers run nothing. ``check --as bob``
predicted each other PR as the controller then did. ``identity: committer``: the committer
decides on a merged branch and on the line (Alice's ``git am`` of Mallory's patch counts;
Alice's or the agent's commit put on a branch by Mallory, the forge's rebase, and an octopus
by Alice of Mallory's re-commit are ignored; Mallory's patch applied by the plan's author
counts).

Fixed (2026-12-07, fix124o): author-withdrawal-lost-to-a-raced-copy at another folder (14
ids: ``orrace``-``orrace4`` with ``:status``, ``:audit``; ``check:chkr``, ``chkr:merged``).
The cause: ``Lifecycle.withdrawers`` read an author's right from the version's originators
everywhere (``IndexStore.originators_of``), and round 35's race clause (two makings neither
of which holds the other keep only someone in both) made them nobody once Mallory's copy and
the agent's pull request both made the content, at any folders. The lead's decision: an
author's right to withdraw the plan at a folder is read from the makings of the version AT
that folder (``IndexStore.origins_at``: the makings afresh there, the people in every one of
them, kept per folder key and version in ``memory.sqlite``, ``INDEX_VERSION`` 144), the
originators everywhere only when none was made there (a copy, a move). So Mallory's copy at
another folder takes nothing from the agent and gives her nothing at the agent's plan (her
rejection of it stays ``E_APPROVER_NOT_ALLOWED``; her copy's version is vetoed by nobody,
its producers staying the people in both); ``orrace4`` is read the same way. ``check``, the
controller and the audit share the rule. Still open (strict xfails, 3 ids): ``orrace5``, the
same file raced in at the plan's own path: two makings at one path keep only someone in both
(git cannot tell who copied whom), as docs/approvals.md says. New tests:
tests/approval/test_raced_withdrawals.py.

Decided (2026-12-07, veto125): ``orrace5`` (and ``:status``, ``:audit``) is the accepted limit
and now asserts it (the agent's rejection is ignored, Bob's approval runs the plan once, the
audit agrees). Mallory first on the branch with the very file at the plan's own path, then a
merge that changes nothing, leaves a history git cannot tell from the agent copying her:
either rule that gives one of them the right (the first on the line, or both) hands it to
whoever chose to land first, which is round 35's ``pre-same`` (her rejection must count for
nothing). So only an allowed approver may withdraw it; the author's remedy is to change or
delete the plan before an approval, the deployment's is branch protection (pull requests
only). docs/threat-model.md, "Accepted limits".

Not tried: ``require_signed`` and signed ``Plan-Approved:`` trailers, remote mode and the
daemon, MCP, the web page, ``identity_aliases``, ``allow_self_approval``, ``max_age``, holds
(twin files) with merges, ``plangate reject``/``abort`` CLI commands, sources
(``PLAN.md``/``PLAN.json``), a race copy made by an approver, merges whose conflict the merger
resolves to ``rejected`` by hand, a policy change between a withdrawal and an approval.
"""

from __future__ import annotations

import json
import sys
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
    clone_audit_got,
    plan_text,
)

BOB = ("Bob", "bob@example.com")
CAROL = ("Carol", "carol@example.com")
DAVE = ("Dave", "dave@example.com")
FORGE = ("GitHub", "noreply@github.com")

PIN = """\
  - id: 2
    plan: {{path: plans/{lib}, hash: "{digest}"}}
    why: "the library"
"""
GATE = """\
  - id: 2
    tool: rec
    why: "second, gated"
    requires_approval: true
    params:
      tag: "{tag}-2"
"""

REJ = (0, {"rejected"})
RUN = (1, {"completed"})
#: vid -> (calls of its tag wanted at the end, statuses accepted for its row at the end)
WANT: dict[str, tuple[int, set[str]]] = {
    # -- originators: the agent (author) keeps the right to withdraw its pending plan --------
    "orcp": REJ,  # Mallory copies it to plans/orcp-2; the agent rejects plans/orcp; Bob
    "orre": REJ,  # Mallory deletes it and re-adds the same bytes; the agent rejects; Bob
    "orrevert": REJ,  # Mallory edits a param, reverts her edit; the agent rejects; Bob
    "ormv": REJ,  # Mallory `git mv`s it to plans/ormv-2; the agent rejects there; Bob
    "orcpk": REJ,  # the agent's commit cherry-picked onto main by Mallory; the agent rejects
    "orcoed": REJ,  # Dave's plan, the agent edits a param (v2); Dave rejects v2; Bob
    "medit": REJ,  # control: Mallory edits a param (v2, she wrote it) and rejects; Bob
    "mrevert": RUN,  # Mallory edits, the agent reverts her edit; Mallory rejects (ignored)
    "orrace": REJ,  # Mallory commits the agent's PR's bytes at orrace-m first; Bob merges the PR
    "orrace2": REJ,  # ... Mallory's early copy is a DRAFT
    "orrace3": REJ,  # ... Mallory's early copy added and deleted again before the merge
    "orrace4": REJ,  # the agent's PR merged first; Mallory's branch forked BEFORE it, merged after
    # Mallory commits the PR's very file at the same path first; Bob merges it: the accepted
    # limit (decided 2026-12-07, veto125; see the docstring): nobody but an approver withdraws
    "orrace5": RUN,
    "rbagent": REJ,  # the agent's rejection on a branch rebased onto main by Bob (committer)
    "orcase": REJ,  # the agent rejects as AGENT@Example.com
    "rvp": REJ,  # Alice rejects; the agent `git revert`s her commit; Bob approves
    "mcp": (1, {"completed"}),  # Mallory copies to mcp-2 and rejects her copy; Bob: the copy
    "mmv": (1, {"completed"}),  # Mallory `git mv`s to mmv-2 setting rejected; Bob: mmv-2
    # -- merges: a withdrawal belongs to the commit that made it -------------------------------
    "mgoct": RUN,  # Mallory rejects on a branch; Bob merges it in an octopus
    "mgocta": REJ,  # Alice rejects on a branch; the agent merges it in an octopus
    "mgocta3": REJ,  # ... Alice's branch as the octopus's THIRD parent
    "mgnest": REJ,  # Alice's branch merged by Mallory into the agent's, the agent's into main
    "mgaback": REJ,  # Alice rejects on a branch, the agent reverts it there; Bob merges
    "mgevilp": REJ,  # Alice rejects on a branch; the agent's merge resolves it to pending
    "mgrmre": (0, {"rejected", "pending_approval"}),  # Alice's merged veto, plan re-added
    "mgours": REJ,  # Alice rejects on a branch; the agent merges it `-s ours`
    "mgoursm": RUN,  # Mallory rejects on a branch; Bob merges it `-s ours`
    "mgcc": RUN,  # Mallory rejects on X; criss-cross of X and Y; Bob merges both
    "mgcca": REJ,  # Alice rejects on X; criss-cross; the agent merges both
    "mgsq": REJ,  # Mallory rejects on a branch; Alice squash-merges it (her commit)
    "mgrb": RUN,  # Mallory's rejection rebase-merged by the forge (committer forge)
    "mgrba": REJ,  # Alice's rejection rebase-merged by the forge
    "mgaddg": REJ,  # a PR adds the agent's plan, the agent rejects it there; Bob merges
    "onerej": REJ,  # the agent adds its plan `rejected` in one commit; its pending copy: Bob
    "mgagt": REJ,  # the agent rejects its pending plan on a branch; Mallory merges it
    "cpal": REJ,  # Alice rejects on a side branch; Mallory cherry-picks it onto main
    "cpmal": RUN,  # Mallory rejects on a side branch; Alice cherry-picks it onto main
    "mgdr": RUN,  # the agent rejects its DRAFT on a branch; Bob merges; submitted; Bob
    "mgme": RUN,  # Mallory rejects the agent's plan on a branch, Bob merges; she edits it (v2)
    "mgdr2": RUN,  # ... the merge read in one pass, the submission in the next
    "cotrail": RUN,  # Mallory rejects with `Co-authored-by: Alice` (a claim); Bob approves
    "cotrailg": RUN,  # Mallory rejects with `Co-authored-by: Agent` (the author); Bob
    # -- pinned libraries (parents pin `<vid>-lib`, the agent's pending library) --------------
    "libg": RUN,  # the agent rejects its library; Bob approves Dave's parent (runs)
    "liba": (0, {"pending_approval", "rejected"}),  # Alice rejects the library; Bob: parent
    "libown": (0, {"pending_approval", "rejected"}),  # the agent rejects; Bob: its OWN parent
    "libmga": (0, {"pending_approval", "rejected"}),  # Alice's library rejection, octopus
    "libmg": RUN,  # the agent rejects its library on a branch, Bob merges; Bob: Dave's parent
    "libcopy": (0, {"pending_approval", "rejected"}),  # Mallory copies the lib; Alice rejects
    "libco": RUN,  # Dave edits the agent's library (v2) and pins v2; the agent rejects it
    # -- a plan and its approval in one commit ---------------------------------------------
    "onem": (0, {"pending_approval", "draft", "rejected", "invalid"}),  # Mallory adds it approved
    "onea": (0, {"pending_approval", "draft", "rejected", "invalid"}),  # the agent adds approved
    "oneb": (0, {"pending_approval", "draft", "rejected", "invalid"}),  # Bob adds it approved
    # -- quorum (plans/q*: two approvals) ----------------------------------------------------
    "q1": (0, {"pending_approval"}),  # Alice twice
    "q2": RUN,  # control: Alice, then Bob
    "q3": (0, {"pending_approval"}),  # Alice, then Mallory
    "q4": (0, {"pending_approval"}),  # Alice; the agent edits (votes void); Bob
    "q5": RUN,  # Alice; Mallory rejects (ignored); Bob
    "q6": REJ,  # Alice; the agent (author) rejects; Bob
    "qmg": RUN,  # Alice; a PR where Mallory rejects then sets approved, merged by Bob
    "qcp": (0, {"pending_approval"}),  # Alice votes for q-cp; Mallory's copy qcp-2: Bob there
    # -- risk high (tool hrec): one from ops (alice, bob), one from sec (carol) ---------------
    "rk1": (0, {"pending_approval"}),  # Alice, then Bob (both ops)
    "rk2": RUN,  # control: Alice, then Carol
    "rk3": (0, {"pending_approval"}),  # Dave's parent pins the agent's hrec library: Bob, Alice
    "rk4": RUN,  # control: ... Alice, then Carol
    # -- gates (action 2 `requires_approval`, tag `<vid>-2`; Alice's first approval) ------------
    "gtm": (1, {"completed"}),  # paused; Mallory sets aborted (ignored); Bob answers the gate
    "gta": (1, {"aborted"}),  # paused; the agent (author) sets aborted; Bob answers
    "gtmg": (1, {"completed"}),  # paused; Mallory aborts on a branch, Alice merges; Bob
    "gtag": (1, {"awaiting_approval"}),  # paused; the agent answers the gate, then Mallory
    "gtam": (1, {"aborted"}),  # paused; the agent aborts on a branch, Mallory merges; Bob
    "gtaa": (1, {"aborted"}),  # paused; Alice aborts on a branch, Mallory merges; Bob
}
VIDS = list(WANT)
#: gate plans: gated runs (tag `<vid>-2`) wanted
GATES = {"gtm": 1, "gta": 0, "gtmg": 1, "gtag": 0, "gtam": 0, "gtaa": 0}
LIBS = ["libg", "liba", "libown", "libmg", "libmga", "libcopy", "libco"]
#: the folder whose row is read at the end (a move, a copy approved instead)
ROWAT = {"ormv": "ormv-2", "mcp": "mcp-2", "mmv": "mmv-2"}
#: the folders whose runs and audit count for a vid
EXTRA = {"orcp": ["orcp-2"], "ormv": ["ormv-2"], "mcp": ["mcp-2"], "mmv": ["mmv-2"]}
EXTRA["qcp"] = ["qcp-2"]
EXTRA["onerej"] = ["onerej-2"]
#: plans written late (pass B) or by others
RACES = ["orrace", "orrace2", "orrace3", "orrace4", "orrace5"]
LATE = {"onem", "onea", "oneb", "orcpk", "mgaddg", "onerej", *RACES}
PINNED = {"rk3": "rk3-lib", "rk4": "rk4-lib"}
#: the row right after pass B: (vid, status wanted)
EARLY = {"mgdr2": "draft"}
HIGH = {"rk1", "rk2"}
#: `plangate check --as bob` of pull requests against main, then merged by Bob: plan, start?
CHECKS = {
    "chkm": True,  # Mallory rejects then sets approved on the PR: Bob's merge approves
    "chka": False,  # Alice rejects, the agent sets approved: withdrawn
    "chkg": False,  # the agent (author) rejects, Mallory sets approved: withdrawn
    "chkc": True,  # Mallory rejects with `Co-authored-by: Alice`, then sets approved
    "chkr": False,  # raced as `orrace` (Mallory's copy first); the agent rejects, Mallory approves
}


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


def _plan(tag: str, status: str = "pending_approval", extra: str = "", tool: str = "rec") -> str:
    text = plan_text(tag, status=status, extra_actions=extra)
    if tool != "rec":
        text = text.replace("  - name: rec\n", f"  - name: {tool}\n").replace(
            "    tool: rec\n", f"    tool: {tool}\n", 1
        )
    return text


def _as_committer(lab: Lab, committer: tuple[str, str], *args: str) -> str:
    """``git *args`` with only the committer set (a cherry-pick keeps its author)."""
    lab.extra_env = {"GIT_COMMITTER_NAME": committer[0], "GIT_COMMITTER_EMAIL": committer[1]}
    try:
        lab.git(*args)
    finally:
        lab.extra_env = {}
    return lab.head()


def _build(root: Path) -> Lab:
    lab = Lab(root)
    _config(lab)
    got: dict[str, Any] = {}
    lab.got = got  # type: ignore[attr-defined]
    passes: list[tuple[str, int, bool, str]] = []
    lab.passes = passes  # type: ignore[attr-defined]

    def step(phase: str) -> None:
        res = lab.run(check=False)
        passes.append((phase, res.returncode, "Traceback" in res.stderr, res.stderr[-900:]))

    def setc(slug: str, status: str, who: tuple[str, str], msg: str = "") -> str:
        lab.set_status(slug, status)
        return lab.commit(msg or f"{who[0]}: {status} {slug}", who)

    def edit(slug: str, who: tuple[str, str]) -> str:
        path = lab.repo / "plans" / slug / "PLAN.yml"
        text = path.read_text()
        marker = f'      tag: "{slug}"\n'
        if marker not in text:
            raise BenchError(f"no tag line in {slug}")
        path.write_text(text.replace(marker, marker + '      extra: "v2"\n', 1))
        return lab.commit(f"{who[0]}: edit {slug}", who)

    def copy(src: str, dst: str, who: tuple[str, str]) -> str:
        lab.put(f"plans/{dst}/PLAN.yml", lab.read(src))
        return lab.commit(f"{who[0]}: copy {src} to {dst}", who)

    def merge(who: tuple[str, str], *refs: str, opts: tuple[str, ...] = ()) -> str:
        lab.git("merge", "-q", "--no-ff", *opts, "-m", f"merge {' '.join(refs)}", *refs, who=who)
        return lab.head()

    # -- A: the agent writes pending plans (a draft), Dave his; one pass -------------------------
    for v in VIDS:
        if v in LATE or v in LIBS or v in ("orcoed", *PINNED):
            continue
        if v in ("mgdr", "mgdr2"):
            lab.write(v, _plan(v, "draft"))
        elif v in GATES:
            lab.write(v, _plan(v, extra=GATE.format(tag=v)))
        elif v in HIGH:
            lab.write(v, _plan(v, tool="hrec"))
        else:
            lab.write(v, _plan(v))
    for v in CHECKS:
        if v != "chkr":
            lab.write(v, _plan(v))
    for v in LIBS:
        lab.write(f"{v}-lib", _plan(f"{v}-lib"))
    for lib in PINNED.values():
        lab.write(lib, _plan(lib, tool="hrec"))
    lab.commit("agent: plans", AGENT)
    edit("libco-lib", DAVE)
    digests = {}
    for lib in [f"{v}-lib" for v in LIBS] + list(PINNED.values()):
        out = lab.cli("hash", f"plans/{lib}", cwd=lab.repo).stdout.strip()
        digests[lib] = out.split()[-1]
    got["digests"] = digests
    lab.write(
        "libown", _plan("libown", extra=PIN.format(lib="libown-lib", digest=digests["libown-lib"]))
    )
    lab.commit("agent: a parent of its own", AGENT)
    lab.branch("br-orrace4-m", "main")
    lab.put("plans/orrace4-m/PLAN.yml", _plan("orrace4"))
    lab.commit("mallory: the same bytes on a branch", MALLORY)
    lab.git("checkout", "-q", "main")
    lab.branch("br-chkr", "main")
    lab.write("chkr", _plan("chkr"))
    lab.commit("agent: chkr", AGENT)
    lab.git("checkout", "-q", "main")
    lab.put("plans/chkr-m/PLAN.yml", _plan("chkr"))
    lab.commit("mallory: the same bytes first", MALLORY)
    merge(BOB, "br-chkr")
    for v in RACES:
        lab.branch(f"br-{v}", "main")
        lab.write(v, _plan(v))
        lab.commit(f"agent: {v}", AGENT)
        lab.git("checkout", "-q", "main")
        if v == "orrace4":
            merge(BOB, f"br-{v}")
            merge(MALLORY, "br-orrace4-m")
            continue
        at = f"plans/{v}/PLAN.yml" if v == "orrace5" else f"plans/{v}-m/PLAN.yml"
        lab.put(at, _plan(v, "draft" if v == "orrace2" else "pending_approval"))
        lab.commit("mallory: the same bytes first", MALLORY)
        if v == "orrace3":
            lab.git("rm", "-q", "-r", f"plans/{v}-m")
            lab.commit("mallory: gone again", MALLORY)
        merge(BOB, f"br-{v}")
    for v in [*[x for x in LIBS if x != "libown"], *PINNED]:
        lab.write(v, _plan(v, extra=PIN.format(lib=f"{v}-lib", digest=digests[f"{v}-lib"])))
    lab.write("orcoed", _plan("orcoed"))
    lab.commit("dave: my plans", DAVE)
    # the agent's plan on its branch, cherry-picked onto main by Mallory
    lab.branch("br-orcpk")
    lab.write("orcpk", _plan("orcpk"))
    sha = lab.commit("agent: orcpk", AGENT)
    lab.git("checkout", "-q", "main")
    _as_committer(lab, MALLORY, "cherry-pick", sha)
    step("a")
    got["rows_a"] = lab.rows()

    # -- B: first decisions --------------------------------------------------------------
    for v in [*GATES, "q1", "q2", "q3", "q4", "q5", "q6", "qcp", "qmg", "rk1", "rk2"]:
        setc(v, "approved", ALICE)
    setc("rk3", "approved", BOB)
    setc("rk4", "approved", ALICE)
    lab.branch("br-mgaddg", "main")
    lab.write("mgaddg", _plan("mgaddg"))
    lab.commit("agent: add mgaddg", AGENT)
    setc("mgaddg", "rejected", AGENT)
    lab.git("checkout", "-q", "main")
    merge(BOB, "br-mgaddg")
    lab.write("onerej", _plan("onerej", "rejected"))
    lab.commit("agent: add onerej rejected", AGENT)
    lab.write("onerej-2", _plan("onerej"))
    lab.commit("agent: onerej again, pending", AGENT)
    lab.branch("br-libmga", "main")
    setc("libmga-lib", "rejected", ALICE)
    lab.branch("br-libmga-n", "main")
    lab.note("libmga-n", AGENT)
    lab.git("checkout", "-q", "main")
    merge(MALLORY, "br-libmga", "br-libmga-n")
    # originators
    copy("orcp", "orcp-2", MALLORY)
    setc("orcp", "rejected", AGENT)
    saved = lab.read("orre")
    lab.git("rm", "-q", "-r", "plans/orre")
    lab.commit("mallory: remove orre", MALLORY)
    lab.write("orre", saved)
    lab.commit("mallory: add orre back", MALLORY)
    setc("orre", "rejected", AGENT)
    e = edit("orrevert", MALLORY)
    lab.git("revert", "--no-edit", e, who=MALLORY)
    setc("orrevert", "rejected", AGENT)
    lab.git("mv", "plans/ormv", "plans/ormv-2")
    lab.commit("mallory: move ormv", MALLORY)
    setc("ormv-2", "rejected", AGENT)
    setc("orcpk", "rejected", AGENT)
    for v in RACES:
        setc(v, "rejected", AGENT)
    setc("orcase", "rejected", ("Agent", "AGENT@Example.com"))
    r = setc("rvp", "rejected", ALICE)
    lab.git("revert", "--no-edit", r, who=AGENT)
    edit("orcoed", AGENT)
    setc("orcoed", "rejected", DAVE)
    edit("medit", MALLORY)
    setc("medit", "rejected", MALLORY)
    e = edit("mrevert", MALLORY)
    lab.git("revert", "--no-edit", e, who=AGENT)
    setc("mrevert", "rejected", MALLORY)
    copy("mcp", "mcp-2", MALLORY)
    setc("mcp-2", "rejected", MALLORY)
    lab.git("mv", "plans/mmv", "plans/mmv-2")
    lab.set_status("mmv-2", "rejected")
    lab.commit("mallory: move mmv, rejected", MALLORY)
    # merges
    for v, rej, merger in (("mgoct", MALLORY, BOB), ("mgocta", ALICE, AGENT)):
        lab.branch(f"br-{v}", "main")
        setc(v, "rejected", rej)
        lab.branch(f"br-{v}-n", "main")
        lab.note(f"{v}-n", AGENT)
        lab.git("checkout", "-q", "main")
        merge(merger, f"br-{v}", f"br-{v}-n")
    lab.branch("br-mgocta3", "main")
    setc("mgocta3", "rejected", ALICE)
    lab.branch("br-mgocta3-n", "main")
    lab.note("mgocta3-n", AGENT)
    lab.git("checkout", "-q", "main")
    merge(AGENT, "br-mgocta3-n", "br-mgocta3")
    lab.branch("br-mgnest-x", "main")
    setc("mgnest", "rejected", ALICE)
    lab.branch("br-mgnest-y", "main")
    lab.note("mgnest-y", AGENT)
    merge(MALLORY, "br-mgnest-x")
    lab.git("checkout", "-q", "main")
    merge(AGENT, "br-mgnest-y")
    lab.branch("br-mgevilp", "main")
    setc("mgevilp", "rejected", ALICE)
    lab.git("checkout", "-q", "main")
    lab.rmerge(AGENT, ["br-mgevilp"], lambda: lab.set_status("mgevilp", "pending_approval"))
    lab.branch("br-mgaback", "main")
    r = setc("mgaback", "rejected", ALICE)
    lab.git("revert", "--no-edit", r, who=AGENT)
    lab.git("checkout", "-q", "main")
    merge(BOB, "br-mgaback")
    lab.branch("br-mgme", "main")
    setc("mgme", "rejected", MALLORY)
    lab.git("checkout", "-q", "main")
    merge(BOB, "br-mgme")
    lab.set_status("mgme", "pending_approval")
    edit("mgme", MALLORY)
    lab.branch("br-rbagent", "main")
    sha = setc("rbagent", "rejected", AGENT)
    lab.git("checkout", "-q", "main")
    _as_committer(lab, BOB, "cherry-pick", sha)
    lab.branch("br-mgrmre", "main")
    setc("mgrmre", "rejected", ALICE)
    lab.git("checkout", "-q", "main")
    saved = lab.read("mgrmre")
    lab.rmerge(AGENT, ["br-mgrmre"], lambda: lab.git("rm", "-q", "-r", "-f", "plans/mgrmre"))
    lab.write("mgrmre", saved.replace("status: rejected", "status: pending_approval"))
    lab.commit("agent: mgrmre back", AGENT)
    lab.branch("br-mgdr2", "main")
    setc("mgdr2", "rejected", AGENT)
    lab.git("checkout", "-q", "main")
    merge(BOB, "br-mgdr2")
    for v, rej, merger in (("mgours", ALICE, AGENT), ("mgoursm", MALLORY, BOB)):
        lab.branch(f"br-{v}", "main")
        setc(v, "rejected", rej)
        lab.git("checkout", "-q", "main")
        merge(merger, f"br-{v}", opts=("-s", "ours"))
    for v, rej, merger in (("mgcc", MALLORY, BOB), ("mgcca", ALICE, AGENT)):
        lab.branch(f"br-{v}-x", "main")
        x1 = setc(v, "rejected", rej)
        lab.branch(f"br-{v}-y", "main")
        y1 = lab.note(f"{v}-y", AGENT)
        lab.git("checkout", "-q", f"br-{v}-x")
        merge(rej, y1)
        lab.git("checkout", "-q", f"br-{v}-y")
        merge(AGENT, x1)
        lab.git("checkout", "-q", "main")
        merge(merger, f"br-{v}-x")
        merge(merger, f"br-{v}-y")
    lab.branch("br-mgsq", "main")
    setc("mgsq", "rejected", MALLORY)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--squash", "br-mgsq", who=ALICE)
    lab.commit("alice: squash br-mgsq", ALICE)
    for v, rej in (("mgrb", MALLORY), ("mgrba", ALICE)):
        lab.branch(f"br-{v}", "main")
        sha = setc(v, "rejected", rej)
        lab.git("checkout", "-q", "main")
        _as_committer(lab, FORGE, "cherry-pick", sha)
    lab.branch("br-mgagt", "main")
    setc("mgagt", "rejected", AGENT)
    lab.git("checkout", "-q", "main")
    merge(MALLORY, "br-mgagt")
    for v, rej, picker in (("cpal", ALICE, MALLORY), ("cpmal", MALLORY, ALICE)):
        lab.branch(f"br-{v}", "main")
        sha = setc(v, "rejected", rej)
        lab.git("checkout", "-q", "main")
        _as_committer(lab, picker, "cherry-pick", sha)
    lab.branch("br-mgdr", "main")
    setc("mgdr", "rejected", AGENT)
    lab.git("checkout", "-q", "main")
    merge(BOB, "br-mgdr")
    setc("mgdr", "pending_approval", AGENT)
    for v, co in (("cotrail", ALICE), ("cotrailg", AGENT)):
        lab.set_status(v, "rejected")
        lab.commit(f"mallory: reject {v}\n\nCo-authored-by: {co[0]} <{co[1]}>", MALLORY)
    # libraries
    setc("libg-lib", "rejected", AGENT)
    setc("liba-lib", "rejected", ALICE)
    setc("libown-lib", "rejected", AGENT)
    setc("libco-lib", "rejected", AGENT)
    lab.branch("br-libmg", "main")
    setc("libmg-lib", "rejected", AGENT)
    lab.git("checkout", "-q", "main")
    merge(BOB, "br-libmg")
    copy("libcopy-lib", "libcopy-lib2", MALLORY)
    setc("libcopy-lib2", "rejected", ALICE)
    # a plan and its approval in one commit
    for v, who in (("onem", MALLORY), ("onea", AGENT), ("oneb", BOB)):
        lab.write(v, _plan(v, "approved"))
        lab.commit(f"{who[0]}: add {v} approved", who)
    copy("qcp", "qcp-2", MALLORY)
    step("b")
    got["rows_b"] = lab.rows()
    got["ran_b"] = {v: len(lab.calls(v)) for v in VIDS}

    # -- C: approvals and second decisions --------------------------------------------------
    setc("mgdr2", "pending_approval", AGENT)
    for v in VIDS:
        if v in GATES or v in LATE or v.startswith(("q", "rk")) or v == "mgdr2":
            continue
        slug = ROWAT.get(v, v)
        if lab.plan(slug).get("plan", {}).get("status") == "approved":
            continue
        setc(slug, "approved", BOB)
    setc("q1", "approved", ALICE)
    setc("q2", "approved", BOB)
    setc("q3", "approved", MALLORY)
    edit("q4", AGENT)
    setc("q5", "rejected", MALLORY)
    setc("q6", "rejected", AGENT)
    setc("qcp-2", "approved", BOB)
    setc("rk1", "approved", BOB)
    setc("rk2", "approved", CAROL)
    setc("rk3", "approved", ALICE)
    setc("rk4", "approved", CAROL)
    setc("onerej-2", "approved", BOB)
    setc("mgaddg", "approved", BOB)
    setc("gtm", "aborted", MALLORY)
    setc("gta", "aborted", AGENT)
    lab.branch("br-gtmg", "main")
    setc("gtmg", "aborted", MALLORY)
    lab.git("checkout", "-q", "main")
    merge(ALICE, "br-gtmg")
    lab.branch("br-gtam", "main")
    setc("gtam", "aborted", AGENT)
    lab.git("checkout", "-q", "main")
    merge(MALLORY, "br-gtam")
    setc("gtag", "approved", AGENT)
    lab.branch("br-gtaa", "main")
    setc("gtaa", "aborted", ALICE)
    lab.git("checkout", "-q", "main")
    merge(MALLORY, "br-gtaa")
    lab.branch("br-qmg", "main")
    setc("qmg", "rejected", MALLORY)
    setc("qmg", "approved", MALLORY)
    lab.git("checkout", "-q", "main")
    merge(BOB, "br-qmg")
    for v in RACES:
        setc(v, "approved", BOB)
    step("c")
    got["rows_c"] = lab.rows()

    # -- D: the last approvals -----------------------------------------------------------------
    for v in ("q4", "q5", "q6"):
        setc(v, "approved", BOB)
    setc("mgdr2", "approved", BOB)
    for v in ("gtm", "gta", "gtmg", "gtam", "gtaa"):
        setc(v, "approved", BOB)
    setc("gtag", "approved", MALLORY)
    step("d")

    # -- E: pull requests checked `--as bob`, then merged by Bob --------------------------------
    checks: dict[str, Any] = {}
    for v in CHECKS:
        lab.branch(f"pr-{v}", "main")
        if v == "chkm":
            setc(v, "rejected", MALLORY)
            setc(v, "approved", MALLORY)
        elif v == "chka":
            setc(v, "rejected", ALICE)
            setc(v, "approved", AGENT)
        elif v in ("chkg", "chkr"):
            setc(v, "rejected", AGENT)
            setc(v, "approved", MALLORY)
        else:
            lab.set_status(v, "rejected")
            lab.commit(f"mallory: reject {v}\n\nCo-authored-by: Alice <{ALICE[1]}>", MALLORY)
            setc(v, "approved", MALLORY)
        lab.git("checkout", "-q", "main")
        checks[v] = lab.check_plans(f"pr-{v}", BOB[1])
    got["checks"] = checks
    for v in CHECKS:
        merge(BOB, f"pr-{v}")
    step("e")
    lab.got_rows = lab.rows()  # type: ignore[attr-defined]
    lab.ran = {v: len(lab.calls(v)) for v in [*VIDS, *CHECKS]}  # type: ignore[attr-defined]
    got["gate_ran"] = {v: len(lab.calls(f"{v}-2")) for v in GATES}
    got["libran"] = {v: len(lab.calls(f"{v}-lib")) for v in LIBS}
    lab.subjects_of = {  # type: ignore[attr-defined]
        v: [s for x in [v, *EXTRA.get(v, [])] for s in lab.subjects(x)] for v in [*VIDS, *CHECKS]
    }
    got["clone"] = clone_audit_got(lab, root)
    return lab


#: identity: committer: vid -> (calls wanted, final statuses); the rejection's (author,
#: committer) on a branch, then who merges it (None: on the line)
CWANT: dict[str, tuple[int, set[str]]] = {
    "cam": REJ,  # Mallory's patch applied by Alice (committer) on a branch; Bob merges
    "cma": RUN,  # Alice's commit put on a branch by Mallory (committer); Bob merges
    "cgm": RUN,  # the agent's commit put on a branch by Mallory; Bob merges
    "cmg": REJ,  # Mallory's patch applied by the agent (the plan's author) on the line
    "crb": RUN,  # Alice's rejection rebase-merged by the forge (committer forge)
    "coct": RUN,  # Alice's commit put on a branch by Mallory; Alice merges it in an octopus
    "cmrg": REJ,  # control: Alice's own commit on a branch; Mallory merges it
}
CVIDS = list(CWANT)
CSTEPS: dict[str, tuple[tuple[str, str], tuple[str, str], tuple[str, str] | None]] = {
    "cam": (MALLORY, ALICE, BOB),
    "cma": (ALICE, MALLORY, BOB),
    "cgm": (AGENT, MALLORY, BOB),
    "cmg": (MALLORY, AGENT, None),
    "crb": (ALICE, FORGE, None),
    "coct": (ALICE, MALLORY, ALICE),
    "cmrg": (ALICE, ALICE, MALLORY),
}


def _build_committer(root: Path) -> Lab:
    lab = Lab(root)
    _config(lab)
    text = lab.config.read_text()
    lab.config.write_text(text.replace("approval:\n", "approval:\n  identity: committer\n", 1))
    passes: list[tuple[str, int, bool, str]] = []
    lab.passes = passes  # type: ignore[attr-defined]

    def step(phase: str) -> None:
        res = lab.run(check=False)
        passes.append((phase, res.returncode, "Traceback" in res.stderr, res.stderr[-900:]))

    for v in CVIDS:
        lab.write(v, _plan(v))
    lab.commit("agent: plans", AGENT)
    step("a")
    for v, (author, committer, merger) in CSTEPS.items():
        if merger is not None:
            lab.branch(f"br-{v}", "main")
        lab.set_status(v, "rejected")
        lab.git("add", "-A")
        lab.extra_env = {"GIT_COMMITTER_NAME": committer[0], "GIT_COMMITTER_EMAIL": committer[1]}
        try:
            lab.git("commit", "-q", "-m", f"reject {v}", who=author)
        finally:
            lab.extra_env = {}
        if merger is None:
            continue
        refs = [f"br-{v}"]
        if v == "coct":
            lab.branch("br-coct-n", "main")
            lab.note("coct-n", AGENT)
            refs.append("br-coct-n")
        lab.git("checkout", "-q", "main")
        lab.git("merge", "-q", "--no-ff", "-m", f"merge {v}", *refs, who=merger)
    step("b")
    lab.rows_b = lab.rows()  # type: ignore[attr-defined]
    for v in CVIDS:
        lab.set_status(v, "approved")
        lab.commit(f"bob: approve {v}", BOB)
    step("c")
    lab.got_rows = lab.rows()  # type: ignore[attr-defined]
    lab.ran = {v: len(lab.calls(v)) for v in CVIDS}  # type: ignore[attr-defined]
    lab.subjects_of = {v: lab.subjects(v) for v in CVIDS}  # type: ignore[attr-defined]
    lab.got = {"clone": clone_audit_got(lab, root)}  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def labc(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return shared(tmp_path_factory, "r122-approve-atk122a-committer", _build_committer)


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return shared(tmp_path_factory, "r122-approve-atk122a", _build)


IDS = [*VIDS, *[f"{v}:status" for v in VIDS], *[f"{v}:audit" for v in VIDS]]
IDS += [f"{v}:agree" for v in VIDS] + ["passes"]
IDS += [f"{v}:gate" for v in GATES] + [f"{v}:lib" for v in LIBS]
IDS += [f"check:{v}" for v in CHECKS] + [f"{v}:merged" for v in CHECKS]
IDS += [f"{v}:agree" for v in CHECKS] + [f"{v}:early" for v in EARLY]

CLS_RACE = "author-withdrawal-lost-to-a-raced-copy"
CLS_DRAFT = "merged-draft-rejection-judged-after-submit"
_WHY_RACE = (
    "Mallory commits the bytes of the agent's open pull request at another folder (pending, "
    "a draft, deleted again before the merge, or on a branch forked before the PR and merged "
    "after it); Bob merges the PR; the agent's rejection of its own pending plan is "
    "'E_APPROVER_NOT_ALLOWED ... only an allowed approver or an author of the plan may; "
    "ignored' and Bob's approval runs it; docs: 'Dave may reject his plan however many "
    "copies of it others made'"
)
_WHY_DRAFT = (
    "the agent sets its DRAFT `rejected` on a branch; Bob merges it --no-ff; the agent sets "
    "it `pending_approval` on main in the same push: the row says 'rejected by "
    "agent@example.com' (its draft-time rejection counted) and Bob's approval is "
    "E_ILLEGAL_TRANSITION; docs: 'A draft has no author withdrawers', 'a withdrawal is judged "
    "by what had been made before it' (with a pass between merge and submission: ignored)"
)
#: merged-draft-rejection-judged-after-submit (3 ids, _WHY_DRAFT): fixed 2026-12-07 (fix124m);
#: see the docstring
_WHY_SAME = (
    "Mallory commits the PR's very file at the same path first (the merge changes nothing); "
    "left open by the fix of 2026-12-07 (fix124o): two makings at one path keep only someone "
    "in both (round 35: git cannot tell who copied whom)"
)
_SEEN: dict[str, tuple[str, str]] = {
    # fixed (2026-12-07, fix124o): orrace-orrace4, check:chkr, chkr:merged (see the docstring)
    # orrace5 (and :status, :audit): decided as the accepted limit (2026-12-07, veto125)
}
BROKEN: dict[str, Any] = {
    i: pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 122: {c}: {w}")
    for i, (c, w) in _SEEN.items()
}


def _params(ids: list[str]) -> list[Any]:
    return [pytest.param(i, id=i, marks=[BROKEN[i]] if i in BROKEN else []) for i in ids]


def _valid(clone: dict[str, Any], v: str) -> list[dict[str, Any]]:
    slugs = {f"plans/{x}" for x in [v, *EXTRA.get(v, [])]}
    return [
        e for e in clone.get("executions", []) if e.get("plan") in slugs and e.get("approval_valid")
    ]


@pytest.mark.parametrize("vid", _params(IDS))
def test_round122_atk122a(lab: Any, vid: str) -> None:
    got = lab.got
    clone = got["clone"]["report"]
    if vid == "passes":
        bad = [p for p in lab.passes if p[1] != 0 or p[2]]
        assert not bad, bad
        return
    v, _, kind = vid.partition(":")
    if v == "check":
        told = got["checks"][kind]
        outcome, codes = told.get(f"plans/{kind}", (None, []))
        assert f"plans/{kind}" in told, told
        assert (outcome == "start") is CHECKS[kind], (outcome, codes)
        return
    if kind == "early":
        row = got["rows_b"].get(f"plans/{v}", {})
        assert row.get("status") == EARLY[v], brief(row, 5)
        return
    if kind == "merged":
        row = lab.got_rows.get(f"plans/{v}", {})
        assert lab.ran[v] == (1 if CHECKS[v] else 0), (lab.ran[v], brief(row, 5))
        return
    row = lab.got_rows.get(f"plans/{ROWAT.get(v, v)}", {})
    valid = _valid(clone, v)
    if kind == "agree":
        starts = [s for s in lab.subjects_of[v] if s.startswith("plangate: start ")]
        assert len(valid) == len(starts), (starts, valid, clone.get("findings"))
        return
    if kind == "gate":
        assert got["gate_ran"][v] == GATES[v], (got["gate_ran"][v], brief(row, 5))
        return
    if kind == "lib":
        assert got["libran"][v] == WANT[v][0], (got["libran"][v], brief(row, 5))
        return
    want_runs, want_status = WANT[v]
    if kind == "status":
        assert row.get("status") in want_status, brief(row, 5)
        return
    if kind == "audit":
        if v in GATES:
            gate = [e for e in valid if e.get("approval_kind") == "gate"]
            first = [e for e in valid if e.get("approval_kind") != "gate"]
            assert (len(first), len(gate)) == (want_runs, GATES[v]), (valid, brief(row, 5))
            return
        assert len(valid) == want_runs, (valid, brief(row, 5))
        return
    assert lab.ran[v] == want_runs, (lab.ran[v], brief(row, 5))


CIDS = [f"cm:{v}{k}" for v in CVIDS for k in ("", ":status", ":audit", ":agree", ":early")]
CIDS += ["cm:passes"]


@pytest.mark.parametrize("vid", _params(CIDS))
def test_round122_atk122a_committer(labc: Any, vid: str) -> None:
    clone = labc.got["clone"]["report"]
    v, _, kind = vid.removeprefix("cm:").partition(":")
    if v == "passes":
        bad = [p for p in labc.passes if p[1] != 0 or p[2]]
        assert not bad, bad
        return
    row = labc.got_rows.get(f"plans/{v}", {})
    want_runs, want_status = CWANT[v]
    valid = _valid(clone, v)
    if kind == "early":
        early = labc.rows_b.get(f"plans/{v}", {})
        wanted = "rejected" if want_runs == 0 else "pending_approval"
        assert early.get("status") == wanted, brief(early, 5)
        return
    if kind == "status":
        assert row.get("status") in want_status, brief(row, 5)
        return
    if kind == "audit":
        assert len(valid) == want_runs, (valid, brief(row, 5))
        return
    if kind == "agree":
        starts = [s for s in labc.subjects_of[v] if s.startswith("plangate: start ")]
        assert len(valid) == len(starts), (starts, valid)
        return
    assert labc.ran[v] == want_runs, (labc.ran[v], brief(row, 5))
