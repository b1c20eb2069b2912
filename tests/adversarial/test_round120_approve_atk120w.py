"""Round 120, approval side (atk120w): WITHDRAWALS OF DRAFTS after round 119's fix
(``draft`` -> ``rejected`` is a withdrawal by an allowed approver only; a draft has no author
withdrawers).

Labs (local mode, ``run --once`` passes, the recording tool ``rec``): approvers Alice and
``*@ops.example.com`` (Bob, Carol); ``identity_aliases: {plus_tags: ["*@example.com"]}``;
rule ``plans/q*/**`` needs two approvals; Mallory and Dave (``dave@example.com``, a human plan
author) are no approvers; the forge is ``GitHub <noreply@github.com>``.

- Lab A (``identity: author``, 71 variants): A, the agent writes drafts (a few pending, a
  ``PLAN.md`` and a ``PLAN.json`` draft, legacy ``${inputs.who}`` drafts, draft libraries the
  parents Dave writes pin by ``plangate hash``), the controller freezes/converts. B, first
  decisions: rejections of drafts by Alice (as herself, ``alice+review@``, ``ALICE@Example.COM``,
  a fullwidth ``ａlice``), Carol of her own draft, the agent, Mallory, Dave, the forge's
  web editor; ``plangate reject`` by Alice, the agent, Mallory; branches merged ``--no-ff`` by
  the agent, Bob or Alice, an evil merge, a squash, the forge's rebase-merge, a cherry-pick,
  a fast-forward; rejections written in a ``PLAN.md``/``PLAN.json`` source before the
  controller converts it; draft -> pending -> rejected in one push; gates paused and
  aborted. C, the agent submits (sets pending), copies (same bytes, respelled, legacy in either
  spelling, ``PLAN.md``, ``PLAN.json``), moves, deletes. D, Bob approves everything (Carol
  votes in a quorum). E, F: Bob approves again what reads ``pending_approval``. Then a
  fresh-clone ``audit --json`` (no config), ``show``, and ``check --as bob`` on ten PR branches.
- Lab B (``identity: committer``, 7 variants): the agent's drafts rejected with author and
  committer split (the agent's patch applied by Alice, Alice's commit put on the line by
  Mallory or by the agent, the forge's rebase-merge, branches merged ``--no-ff``).

Ids (538; 88 variants: 71 + 7 + 10 ``check`` branches): ``<vid>`` (``rec`` calls of the vid's
tag, copies included: 0 for a withdrawn plan, 1 for a control), ``<vid>:status`` (the final
status row, at the new path for a move), ``<vid>:audit`` (valid starts in the fresh-clone
audit; gates: first and gate approvals apart), ``<vid>:agree`` (the audit calls valid exactly
the starts the controller committed), ``<vid>:decision`` (a counted rejection is listed under
``decisions``), ``<vid>:code`` (the copy/move/re-add of a vetoed version: ``E_VERSION_WITHDRAWN``
after Bob's approval), ``<vid>:copyrow`` (that copy's row BEFORE any approval names
``E_VERSION_WITHDRAWN``), ``<vid>:early`` and ``<vid>:bshow`` (``status --json`` and ``show``
right after the decision: ``rejected``, or ``draft`` when it must be ignored),
``<vid>:reported``/``:flagged`` (a non-entitled withdrawal is ``E_APPROVER_NOT_ALLOWED`` on the
row and ``withdraw-not-allowed`` in the audit), ``<vid>:lib`` (the pinned library's action
ran with its parent), ``<vid>:gate``, ``<vid>:show``, ``clia|clig|clim:cli`` (``plangate reject``
commits for Alice, refuses the draft's author and Mallory with ``E_APPROVER_NOT_ALLOWED`` and
commits nothing), ``mga:clean``/``cm:cmag:clean`` (an honest merge of Alice's rejection is not
flagged as the merger's ignored withdrawal), ``check:*``, ``passes``, and ``cm:*`` for lab B.

Seen (round 120: 538 ids, 436 passed, 102 xfailed; about 75-100 s wall alone with -n 1 on a
loaded machine), 4 classes:

- **draft-legacy-veto-missed** (22 ids: ``adrleg``, ``adrleg2``, ``adrlegmv``, ``adrlegp`` with
  ``:audit``, ``:code``, ``:copyrow``; ``adrlegre`` with ``:audit``, ``:code``, ``:status``;
  ``adrlegmv:status``, ``check:leg``). FAIL OPEN. Alice rejects the agent's draft written with
  a legacy ``${inputs.who}`` reference; the agent copies it to another slug (as written, or in
  the ``$<inputs.who>`` form the freeze converts it to), ``git mv``s it there, or deletes and
  re-adds it, ``pending_approval``: the controller freezes it, its row says "waiting for an
  approval" and Bob's approval RUNS the version Alice rejected (the fresh-clone audit calls
  the run valid; ``check --as bob`` predicts ``start``). The same with a legacy plan the agent
  submitted pending and Alice rejected in the same push, before any freeze (``adrlegp``): not
  draft-only, a version rejected before its first freeze. The vetoed hash is the raw text's
  (``plangate hash plans/adrleg`` prints ``sha256:d80e...``; the copy freezes as
  ``sha256:1790...``), not the version as frozen. A draft written ``$<inputs.who>`` copied as
  ``${inputs.who}`` is withdrawn (``adrleg3``), as round 119's frozen legacy ``cplegacy`` is.
  docs/approvals.md: an allowed approver's rejection of a draft "withdraws its version under
  any name, as a pending plan's rejection does (``E_VERSION_WITHDRAWN`` for a copy of it)";
  "whether the version comes back deleted and re-added, moved, copied under another name".
  Repro (shell, echo tool): the agent commits ``plans/l/PLAN.yml`` (``status: draft``, an
  ``inputs: {who: ops}`` and a param ``"${inputs.who}"``); ``run --once``; Alice commits
  ``status: rejected``; ``run --once``; the agent commits ``plans/l2/PLAN.yml``, the same file
  with ``status: pending_approval``; ``run --once``; Bob commits ``status: approved`` in
  ``plans/l2``; ``run --once``: ``plans/l2`` is ``completed``.
- **source-rejection-dropped-at-conversion** (28 ids: ``mdsrc``, ``mdsrc0``, ``jsrc0``,
  ``mdsrcp``, ``mdsrcdv`` with ``:status``, ``:audit``, ``:decision``; ``mdsrc0``, ``mdsrcp``,
  ``mdsrcdv`` with ``:early``, ``:bshow``; ``mdsrc:code``, ``mdsrc:copyrow``). FAIL OPEN. The
  agent commits a ``PLAN.md`` (one fenced yaml block) or ``PLAN.json`` plan, ``draft`` or
  ``pending_approval``; before the controller's pass Alice commits ``status: rejected`` in that
  source (or Dave, the source's writer, rejects his own pending ``PLAN.md``). The pass converts
  it to ``PLAN.yml`` with ``status: "pending_approval"`` (``metadata.converted_from.notes:
  ["plan.status: status 'rejected' not carried over"]``), freezes it, and Bob's approval runs
  it; its copy runs too; no decision in the audit; ``status``, ``show`` and the audit all read
  it ``pending_approval`` (they agree, on the wrong thing). Mallory's rejection in a source is
  rightly without effect (``mdsrcm``). A ``PLAN.md``/``PLAN.json`` draft rejected AFTER its
  conversion is withdrawn (``adrmd``, ``jsrc``). docs/formats.md: "The converted plan takes
  what its content would have taken had the source's writer committed that PLAN.yml
  herself"; docs/approvals.md: "A reviewer's objection to content counts whether or not it
  was submitted yet"; threat model (round 117): "A plan whose first version on the branch says
  ``rejected``, in a commit that is not a merge, is rejected and its version vetoed when that
  commit's maker may withdraw it". Repro: the agent commits ``plans/s/PLAN.md`` (a fenced
  yaml plan, ``status: draft``); Alice commits ``status: rejected`` in it; ``run --once``
  (``plangate: convert``, ``freeze``: pending); Bob sets ``approved`` in ``plans/s/PLAN.yml``;
  ``run --once``: ``completed``.
- **merged-rejection-charged-to-merger** (40 ids: ``mgm``, ``mgmp``, ``mgma``, ``mgdm`` with
  ``:status``, ``:audit``, ``:reported``, ``:flagged``; ``mgm:early``, ``mgm:bshow``;
  ``mgaddm:early``, ``:bshow``, ``:reported``; ``mgab:gate``, ``:status``, ``:audit``,
  ``:reported``, ``:flagged``; ``mga:clean``; ``check:agcp``, ``check:mcp``, ``check:libg``,
  ``check:libm``; ``cm:cmmg`` with ``:status``, ``:audit``, ``:early``; ``cm:cmag:clean``).
  FAIL CLOSED. Mallory sets a plan ``rejected`` on her branch (a draft, a frozen PENDING plan
  ``mgmp``, Dave's own draft rejected by Dave ``mgdm``), and Bob (or Alice, ``mgma``) merges it
  with ``git merge --no-ff``: the row says ``rejected by bob@ops.example.com in <merge>:
  merge br-mgm``, the plan is withdrawn for good, its version vetoed, and Bob's approval is
  ``E_ILLEGAL_TRANSITION (from rejected)``; the audit lists the decision as Bob's. The same for
  an ABORT: Mallory's ``aborted`` of a run paused at its gate, merged by Bob, is "abort
  requested by bob@ops.example.com" and the run is aborted (``mgab``; on the line it is
  ignored and the gate answer runs it, ``mgabl``). Also under ``identity: committer``
  (``cmmg``). ``check --as bob`` predicts the same for PR branches where the draft's author or
  Mallory rejects a draft (a copy of it, or a parent pinning it, ``refuse
  E_VERSION_WITHDRAWN``), and replaying those merges on the lab made the controller refuse
  alike. Where the merger is no approver the merge commit is flagged as HIS ignored
  withdrawal: the agent merging Alice's genuine rejection gets ``withdraw-not-allowed:
  agent@example.com set status rejected in <merge>`` beside Alice's counted decision
  (``mga:clean``, ``cm:cmag:clean``), and a PR adding the plan with Mallory's rejection,
  merged by Bob, leaves a row with no status and ``E_ILLEGAL_TRANSITION: bob@ops.example.com
  set status rejected (from nothing)`` (``mgaddm``; ``show`` says ``rejected``). A fast-forward,
  the forge's rebase-merge and the agent's merge of Mallory's rejection are rightly ignored
  (``mgmff``, ``mgmrb``, ``mgmg``); Bob's squash is his own commit and counts (``mgmsq``).
  docs/approvals.md: "A merge commit that brings such a plan is no withdrawal of the
  merger's: the merged branch's statuses are read there, by who set them (... a
  non-approver's move and rejection on it withdraws nothing, round 34)"; "a rejection or an
  abort a commit on a merged branch made is judged as that commit ... by the withdrawal rule,
  whatever the merge resolved the status to"; "so the merge of a branch where Mallory set
  ``rejected`` counts for nothing, held or not". Repro: the agent commits ``plans/m/PLAN.yml``
  (``draft``); ``run --once``; ``git checkout -b mal``, Mallory commits ``status:
  rejected``; ``git checkout main``; Bob runs ``git merge --no-ff mal``; ``run --once``:
  ``plangate status`` shows ``rejected ... bob@ops.example.com set status rejected``.
- **child-author-vetoes-pinning-parent** (12 ids: ``libflip``, ``libcp``, ``libpend`` with
  ``:status``, ``:audit``, ``:lib``). FAIL CLOSED. Dave's parent pins the agent's DRAFT
  library; the agent sets its library ``pending_approval`` and then ``rejected`` (two commits,
  one push, ``libflip``), or commits a pending copy of it elsewhere and rejects that
  (``libcp``), or the library was pending from the start (``libpend``, round 37's
  ``reject-child`` with a pending child): the library's version is withdrawn and Bob's approval
  of the parent is ``E_VERSION_WITHDRAWN: ... plans/libflip-lib (pinned as ...) was set
  rejected by agent@example.com``. The draft's own rejection by its author is ignored
  (``libg``), Mallory's copy-and-reject is (``libmc``). docs/approvals.md gives the draft rule
  its reason: "Otherwise a library author's rejection of her own draft library would withdraw
  the parents that pin it (round 37, ``reject-child``: the writer of a pinned child may not
  withdraw the parent)"; a status flip away, it does. The producers rule ("The authors who
  may reject or abort a plan are the producers of the version at stake") and "a new approval
  of that exact version is refused ... pinned by a parent" say the opposite for a pending
  library: the two rules conflict, for the lead to decide (``libpend`` is the plainest case).
  Repro: the agent commits ``plans/lib/PLAN.yml`` (``draft``); Dave commits ``plans/p``
  pinning it (``plan: {path: plans/lib, hash: <plangate hash plans/lib>}``, pending); ``run
  --once``; the agent commits ``status: pending_approval`` in ``plans/lib``, then ``status:
  rejected``; ``run --once``; Bob approves ``plans/p``; ``run --once``: ``E_VERSION_WITHDRAWN``.

Fixed (2026-12-06, fix121c): **merged-rejection-charged-to-merger**. Cause: a merge commit's
status change from its first parent (``draft`` -> ``rejected``) was judged by
``Lifecycle._human_commit`` as the merge's own, the merger's withdrawal, beside the merged
commit's own judgement (``_side_withdrawal``). Now ``Lifecycle._merger_status`` reads a
``rejected``/``aborted`` that a non-merge commit of a merged branch set (``range_log`` of the
merge's branch) as that commit's alone: the merge brings the status the branch held before it
when that is ``draft`` or ``pending_approval`` (``mgaddm``: the draft), else none (an open
approval lapses); only a withdrawal the merge writes itself is the merger's. An ignored merged
withdrawal is noted on the row (``_side_allowed``: ``E_APPROVER_NOT_ALLOWED`` by its maker).
``check --as`` reads the same index. 35 ids fixed. ``mgdm``'s 5 ids were the attacker's
misreading, not a bug: the lab makes Dave's plan PENDING (he submits it in pass A), and a
producer of the version at stake may withdraw it (docs/approvals.md, the producers rule), so
his merged rejection counts as his. ``mgdm`` is now a control of that rule (the lead, merging
as fix122c): the plan is rejected, its decision listed by the fresh-clone audit
(``mgdm:decision``), nothing reported as not allowed. Tests:
tests/approval/test_merged_withdrawals.py.

Fixed (2026-12-06, fix121c): **child-author-vetoes-pinning-parent**. Cause: a producer's
withdrawal vetoed the version by hash for every reader, a parent someone else wrote pinning it
included (``verdicts._vetoes``). The lead's decision (round 37's rule stands): the index keeps
who withdrew (``Lifecycle._veto``: ``as`` approver or author; an approver's after a
producer's kept beside it), and ``verdicts._binding_veto`` refuses a pinning parent for a
producer's veto only when she is one of the parent's own writers; an allowed approver's binds
every parent; a copy or re-add is refused as before. Index version 137. Tests:
tests/approval/test_pinned_withdrawals.py.

What held (the fresh-clone audit agreeing with the controller in every ``:agree``): round
119's fix: an allowed approver's rejection of a draft counts (``rejected`` at once in
``status`` and ``show``, listed under ``decisions``) and withdraws the version under any name:
a copy as the same bytes, respelled (flow style, key order, comments, ``created``,
``metadata``), a ``$<...>`` draft copied as ``${...}``, a ``PLAN.md`` or ``PLAN.json`` draft
converted then rejected and copied as a source, a ``git mv``, a delete and re-add, a revert of
the rejection, an edit-and-reject reverted, Carol (an approver) rejecting her own draft (and
her own draft library: the parent is refused), Alice as ``alice+review@``, ``ALICE@Example.COM``
and fullwidth ``ａlice``, the agent's draft copy of Dave's pending plan rejected by Alice
vetoing Dave's plan (documented); merges of Alice's rejection (the agent's ``--no-ff``, an evil
merge resolving to ``draft``, a PR adding the draft merged by Mallory, the forge's squash as
Alice's, the forge's rebase-merge, the agent's cherry-pick); quorum (a vote, the plan set back
to draft, Alice's rejection, then two votes: rejected); draft -> pending -> rejected by the
author in one push (counts, as a pending plan's author may); a frozen plan set back to draft
then rejected by its author (ignored, as documented) or by Alice (counts); ignored and
reported (``E_APPROVER_NOT_ALLOWED``, ``withdraw-not-allowed``): the draft's author (the agent,
Dave), Mallory, the forge's web editor, their copies of the version running; Alice's
``aborted`` of a draft ignored; ``plangate reject``: commits for Alice, refuses the draft's
author and Mallory (``E_APPROVER_NOT_ALLOWED``, nothing committed); ``check --as bob``: a
frozen copy of a vetoed draft version refused ``E_VERSION_WITHDRAWN`` (also with Alice's
rejection on the same PR), a parent pinning a library Alice rejects refused, controls
``start``; ``identity: committer``: the committer decides (the agent's patch applied by Alice
counts; Alice's commit put on the line by Mallory, by the agent or by the forge's rebase is
ignored).

Fixed (2026-12-06, fix121a): **draft-legacy-veto-missed** (22 ids). The cause: a withdrawal
vetoed the version by ``BlobFacts.hash``, the hash of the text as written
(``Lifecycle._veto``); a draft (or a plan rejected before its first freeze) written with a
legacy ``${inputs.who}`` is never rewritten, so its veto was keyed on ``sha256:d80e...``
while every copy, move or re-add of it froze (the freeze converts legacy references) as
``sha256:1790...``, a hash no veto named. Now a version's facts carry the hash it has as the
freeze writes it (``BlobFacts.form_hash``: ``plans.frozen_form``, legacy references
converted by the freeze's own rule, the value tree that runs), and a withdrawal vetoes the
version under both hashes, its permission still judged on the producers of the version as
written: every spelling of it is withdrawn under any name, ``check --as`` agreeing (it
replays the same index). ``INDEX_VERSION`` 137. Tests:
``tests/approval/test_draft_withdrawals.py`` (``*legacy*``).

Fixed (2026-12-06, fix121a): **source-rejection-dropped-at-conversion** (28 ids). The cause:
the history index reads statuses in plan files only; a ``PLAN.md``/``PLAN.json`` source is
none, and the controller's ``convert`` commit (which writes ``draft`` or ``pending_approval``
only, the source's ``rejected`` "not carried over") was the plan's first version, so a
rejection committed in the source before the pass was nobody's and the plan was frozen
(``Lifecycle._controller_commit``, ``Freezing._commit_conversion``). Now, at the convert
commit, the index reads the source's history (``Lifecycle.source_withdrawal``: each source
version's status and converted hash, ``Conversion.source_status``) and judges its newest
``rejected`` as ``Lifecycle._human_commit`` judges one in PLAN.yml: a draft's by an allowed approver
only, a submitted version's (or one first seen ``rejected``) by an allowed approver or a
producer of that version in the source. An entitled one makes the converted plan
``rejected`` from the convert commit on, its version vetoed, the decision its maker's
(``status``, ``show --config`` and the fresh-clone audit agree; a copy is
``E_VERSION_WITHDRAWN``), and the controller does not freeze it; Mallory's stays without
effect (``mdsrcm``). The converted PLAN.yml still says what a conversion writes
(``status`` and ``show`` name the controller's ``rejected``). Tests:
``tests/approval/test_source_withdrawals.py``.

Not tried: ``require_signed`` (signatures), remote mode and the daemon, MCP (``submit``,
``status``), the web page, ``identity_aliases.people`` (only ``plus_tags``), ``PLAN.toon``
sources, octopus merges, holds (twin files/folders) with drafts, quorum groups beyond a
count of two, ``plangate abort``, ``plangate approve``'s precheck of a vetoed copy.
"""

from __future__ import annotations

import contextlib
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from test_round2_execution_kit import shared

from tests.adversarial.advkit import (
    AGENT,
    ALICE,
    BOB,
    CAROL,
    LEGACY_PLAN,
    MALLORY,
    RESPELLED_PLAN,
    BenchError,
    Lab,
    brief,
    clone_audit_got,
    identity,
    plan_text,
)

FORGE = ("GitHub", "noreply@github.com")
DAVE = ("Dave", "dave@example.com")
ALICE_PLUS = ("Alice", "alice+review@example.com")
ALICE_CASE = ("Alice", "ALICE@Example.COM")

LEGACY = LEGACY_PLAN

RESPELLED = RESPELLED_PLAN

PIN = """\
  - id: 2
    plan: {{path: plans/{lib}, hash: "{digest}"}}
    why: "the library"
"""

REJ = (0, {"rejected"})
RUN = (1, {"completed"})
#: vid -> (calls of its tag wanted at the end, statuses accepted for plans/<vid> at the end)
WANT: dict[str, tuple[int, set[str]]] = {
    # -- an allowed approver rejects the agent's draft; the version brought back -------------
    "adr": REJ,  # Alice rejects the draft; the agent submits it; Bob approves
    "adrcp": REJ,  # ... the agent copies it to plans/adrcp-2, pending; Bob approves the copy
    "adrresp": REJ,  # ... the copy respelled (flow style, comments, created, metadata)
    "adrleg": REJ,  # ... a draft written with legacy `${inputs.who}`, copied pending
    "adrmd": REJ,  # ... a PLAN.md draft (converted), copied as plans/adrmd-2/PLAN.md
    "jsrc": REJ,  # ... a PLAN.json draft (converted), copied as plans/jsrc-2/PLAN.json
    "adrleg2": REJ,  # ... a legacy draft, the copy written `$<inputs.who>` (the frozen form)
    "adrleg3": REJ,  # ... a `$<inputs.who>` draft, the copy written `${inputs.who}`
    "adrlegmv": (0, {"rejected", "pending_approval"}),  # ... a legacy draft `git mv`d, pending
    "mdsrc": REJ,  # Alice rejects in PLAN.md before it is converted; copied; Bob approves
    "mdsrc0": REJ,  # ... the same, no copy: Bob approves the converted plan
    "jsrc0": REJ,  # ... in a PLAN.json source before its conversion
    "mdsrcp": (0, {"rejected"}),  # ... a source submitted pending, rejected before conversion
    "mdsrcm": RUN,  # control: Mallory rejects in the PLAN.md source (ignored)
    "mdsrcdv": REJ,  # Dave submits a PLAN.md source pending, rejects it before conversion
    "adrlegre": (0, {"pending_approval"}),  # a legacy draft rejected, deleted, re-added pending
    "adrlegp": REJ,  # a legacy plan submitted and rejected by Alice in one push; copied
    "adrp": REJ,  # control: the same written `$<...>`
    "adrmv": (0, {"rejected", "pending_approval"}),  # ... `git mv` to plans/adrmv-2, pending
    "adredit": (1, {"rejected"}),  # control: ... v2 (one param more) at plans/adredit-2 runs
    "rvd": REJ,  # Alice rejects; the agent `git revert`s her commit; submits; Bob approves
    "aded": REJ,  # Alice edits (v2) and rejects in one commit; the agent reverts it; Bob
    "delre": (0, {"rejected", "pending_approval"}),  # Alice rejects; deleted; re-added pending
    # -- who rejects ----------------------------------------------------------------------------
    "agd": RUN,  # the agent rejects its own draft (ignored, reported); submits; Bob approves
    "mald": RUN,  # Mallory rejects the agent's draft (ignored, reported)
    "fgd": RUN,  # the forge's web editor (noreply) rejects the draft (ignored)
    "dvd": RUN,  # Dave (a human author, no approver) rejects his own draft (ignored)
    "crd": REJ,  # Carol (an approver) rejects her OWN draft; the agent copies it, pending
    "aplus": REJ,  # Alice rejects as alice+review@example.com (plus_tags)
    "acase": REJ,  # Alice rejects as ALICE@Example.COM
    "afw": REJ,  # Alice rejects as a fullwidth U+FF41 `alice@example.com` (NFKC)
    "agdcp": (1, {"draft"}),  # control: the agent's rejection ignored; its copy runs
    "maldcp": (1, {"draft"}),  # control: Mallory's rejection ignored; the agent's copy runs
    # -- draft -> pending -> rejected ---------------------------------------------------------
    "flip1": REJ,  # one push: the agent submits its draft, then rejects it; Bob approves
    "flip2": REJ,  # control: submitted (frozen in a pass), then the agent rejects; Bob
    "pdr": RUN,  # documented: frozen pending, the agent sets draft, then rejects (ignored)
    "pdra": REJ,  # frozen pending, the agent sets draft, Alice rejects; submitted; Bob
    # -- quorum (plans/q*: two approvals) ---------------------------------------------------
    "qdr1": REJ,  # Bob votes; the agent sets draft; Alice rejects; submitted; Carol, Bob
    "qdr2": RUN,  # a draft; Mallory rejects (ignored); submitted; Bob votes; Carol votes
    # -- merges -------------------------------------------------------------------------------
    "mga": REJ,  # Alice rejects on her branch; the agent merges it --no-ff
    "mgm": RUN,  # Mallory rejects on her branch; Bob merges it --no-ff (ignored)
    "mgmp": RUN,  # ... the same for a PENDING (frozen) plan
    "mgma": RUN,  # ... a draft, Mallory's branch merged --no-ff by Alice
    "mgmg": RUN,  # ... a draft, Mallory's branch merged --no-ff by the agent
    "mgmff": RUN,  # control: ... a draft, Mallory's branch fast-forwarded by Bob
    "mgmrb": RUN,  # control: ... Mallory's commit rebase-merged by the forge (committer)
    "mgmsq": REJ,  # control: ... squash-merged by Bob (a squash is its squasher's commit)
    "mgdm": REJ,  # Dave rejects his own PENDING plan on his branch; Bob merges: Dave's
    "mgevil": REJ,  # Alice rejects on her branch; the agent's merge resolves it to draft
    "mgadd": REJ,  # a PR adds the draft, Alice rejects there; Mallory merges; copied pending
    "mgaddm": RUN,  # a PR adds the draft, Mallory rejects there; Bob merges (ignored)
    "sqa": REJ,  # a PR adds the draft, Alice rejects; the forge squashes it as Alice's
    "rba": REJ,  # Alice rejects on her branch; the forge rebase-merges it (committer forge)
    "cpk": REJ,  # Alice rejects on a side branch; the agent cherry-picks it onto main
    "mgab": RUN,  # paused at its gate; Mallory aborts on her branch, Bob merges; Bob's gate
    "mgabl": RUN,  # control: paused; Mallory aborts on the line (ignored); Bob's gate answer
    "adab": RUN,  # documented: Alice sets the agent's draft `aborted` (ignored); submitted
    # -- `plangate reject` ---------------------------------------------------------------------
    "clia": REJ,  # Alice runs `plangate reject` on the agent's draft: committed
    "clig": RUN,  # the agent runs it on its own draft: refused, nothing committed
    "clim": RUN,  # Mallory runs it: refused, nothing committed
    # -- pinned libraries (Dave's parent pins the agent's library; tags <vid>, <vid>-lib) ------
    "liba": (0, {"pending_approval"}),  # Alice rejects the draft library; Bob approves parent
    "libg": RUN,  # the agent (library author) rejects its draft library (ignored)
    "libm": RUN,  # Mallory rejects the draft library (ignored)
    "libflip": RUN,  # one push: the agent submits its draft library, then rejects it
    "libcp": RUN,  # the agent copies its draft library to a pending plan, rejects the copy
    "libmc": RUN,  # Mallory copies the draft library to a pending plan, rejects her copy
    "libpend": RUN,  # the library was pending (frozen); its author the agent rejects it
    "libc": (0, {"pending_approval"}),  # Carol (an approver) rejects her own draft library
    # -- a draft copy of someone else's pending version (Dave's plan; copy plans/<vid>-d) ----
    "dcp": RUN,  # the agent adds a draft copy and rejects it in one push; Bob approves Dave's
    "dcpa": (0, {"pending_approval"}),  # Alice rejects the agent's draft copy; Bob: Dave's
    "dcpm": RUN,  # Mallory rejects the agent's draft copy (ignored); Bob approves Dave's
}
VIDS = list(WANT)
#: drafts the agent writes in pass A (all others: below)
PENDING_A = {"flip2", "pdr", "pdra", "qdr1", "mgmp", "mgab", "mgabl"}
#: gate plans (action 2 `requires_approval`, tag ``<vid>-2``): gated runs wanted
GATES = {"mgab": 1, "mgabl": 1}
GATE = """\
  - id: 2
    tool: rec
    why: "second, gated"
    requires_approval: true
    params:
      tag: "{tag}-2"
"""
DAVES = {"dvd", "dcp", "dcpa", "dcpm", "mgdm"}
LIBS = {"liba", "libg", "libm", "libflip", "libcp", "libmc", "libpend", "libc"}
#: plans that come on a pull request (not written in pass A)
LATE = {"mgadd", "mgaddm", "sqa", "mdsrc", "mdsrc0", "jsrc0", "mdsrcp", "mdsrcm", "mdsrcdv"}
LATE |= {"adrlegp", "adrp"}
#: the other plan folder each vid puts its version in (a copy, a move)
COPY = {
    "adrcp": "adrcp-2",
    "adrresp": "adrresp-2",
    "adrleg": "adrleg-2",
    "adrleg2": "adrleg2-2",
    "adrleg3": "adrleg3-2",
    "adrlegmv": "adrlegmv-2",
    "adrlegre": "adrlegre",
    "adrlegp": "adrlegp-2",
    "adrp": "adrp-2",
    "agdcp": "agdcp-2",
    "maldcp": "maldcp-2",
    "adrmd": "adrmd-2",
    "jsrc": "jsrc-2",
    "mdsrc": "mdsrc-2",
    "adrmv": "adrmv-2",
    "adredit": "adredit-2",
    "crd": "crd-2",
    "mgadd": "mgadd-2",
    "sqa": "sqa-2",
    "delre": "delre",
}
#: copies that must be refused E_VERSION_WITHDRAWN (not the v2 control, not a re-add)
VETOED = [v for v in COPY if v not in ("adredit", "delre", "agdcp", "maldcp")]
#: re-added at the same path: no row while deleted
READDED = {"delre", "adrlegre"}


def _config(lab: Lab, committer: bool = False) -> None:
    rec = json.dumps([sys.executable, str(lab.recorder), "{tag}"])
    env = f"env: {{REC_LOG: {json.dumps(str(lab.log))}}}"
    lab.config.write_text(
        f"repo: {lab.repo}\nstate_dir: {lab.state}\n"
        "identity: {name: plangate, email: plangate@localhost}\n"
        "approval:\n"
        '  approvers: ["alice@example.com", "*@ops.example.com"]\n'
        + ("  identity: committer\n" if committer else "")
        + '  identity_aliases: {plus_tags: ["*@example.com"]}\n'
        "  rules:\n"
        '    - match: {paths: ["plans/q*/**"]}\n      require: [{count: 2}]\n'
        "tools:\n"
        f"  rec: {{kind: exec, argv: {rec}, {env}}}\n"
        "  echo: {kind: echo}\n"
    )


def _plan(tag: str, status: str = "draft", extra: str = "") -> str:
    return plan_text(tag, status=status, extra_actions=extra)


def _json_plan(tag: str, status: str) -> str:
    return json.dumps(
        {
            "plan": {"name": tag, "task": f"attack variant {tag}", "status": status},
            "available_tools": [{"name": "rec"}],
            "actions": [
                {
                    "id": 1,
                    "tool": "rec",
                    "why": f"record that variant {tag} ran",
                    "params": {"tag": tag},
                }
            ],
        },
        indent=1,
    )


def _c2(lab: Lab, msg: str, author: tuple[str, str], committer: tuple[str, str]) -> str:
    lab.git("add", "-A")
    lab.extra_env = {"GIT_COMMITTER_NAME": committer[0], "GIT_COMMITTER_EMAIL": committer[1]}
    try:
        lab.git("commit", "-q", "--allow-empty", "-m", msg, who=author)
    finally:
        lab.extra_env = {}
    return lab.head()


def _set(lab: Lab, slug: str, status: str, fname: str = "PLAN.yml") -> None:
    """Set the status as an editor would: the status line, or in a flow mapping its value."""
    try:
        lab.set_status(slug, status, fname)
    except BenchError:
        path = lab.repo / "plans" / slug / fname
        text = path.read_text(encoding="utf-8")
        new = re.sub(r'status: ("?)\w+("?)', rf"status: \g<1>{status}\g<2>", text, count=1)
        new = re.sub(r'"status": "\w+"', f'"status": "{status}"', new, count=1)
        if new == text:
            raise
        path.write_text(new)


def _fname(lab: Lab, slug: str) -> str:
    for name in ("PLAN.yml", "PLAN.md", "PLAN.json"):
        if (lab.repo / "plans" / slug / name).exists():
            return name
    raise BenchError(f"no plan file in plans/{slug}")


def _build(root: Path) -> Lab:
    lab = Lab(root)
    _config(lab)
    got: dict[str, Any] = {}
    lab.got = got  # type: ignore[attr-defined]
    passes: list[tuple[str, int, bool, str]] = []
    lab.passes = passes  # type: ignore[attr-defined]
    sha: dict[str, str] = {}

    def step(phase: str) -> None:
        res = lab.run(check=False)
        passes.append((phase, res.returncode, "Traceback" in res.stderr, res.stderr[-900:]))

    def setc(slug: str, status: str, who: tuple[str, str], fname: str | None = None) -> str:
        _set(lab, slug, status, fname or _fname(lab, slug))
        return lab.commit(f"{who[0]}: {status} {slug}", who)

    # -- A: the agent writes drafts (and a few pending plans), Dave his; one pass -----------
    original: dict[str, str] = {}
    for v in VIDS:
        if v in LATE or v in DAVES or v in LIBS or v == "crd":
            continue
        status = "pending_approval" if v in PENDING_A else "draft"
        if v in ("adrleg", "adrleg2", "adrleg3", "adrlegmv", "adrlegre"):
            ref = "$<inputs.who>" if v == "adrleg3" else "${inputs.who}"
            original[v] = LEGACY.format(tag=v, status="draft", ref=ref)
            lab.write(v, original[v])
        elif v == "adrmd":
            original[v] = _plan(v)
            lab.write(v, original[v], "PLAN.md")
        elif v == "jsrc":
            original[v] = _json_plan(v, "draft")
            lab.write(v, original[v], "PLAN.json")
        else:
            original[v] = _plan(v, status, GATE.format(tag=v) if v in GATES else "")
            lab.write(v, original[v])
    # libraries (the agent's): drafts, one pending
    for v in LIBS - {"libc"}:
        lib = f"{v}-lib"
        original[lib] = _plan(lib, "pending_approval" if v == "libpend" else "draft")
        lab.write(lib, original[lib])
    lab.write("chkpar-lib", _plan("chkpar-lib"))
    # for `check`: drafts Alice rejects (one legacy), a draft nobody touches on main
    original["chkcp"] = _plan("chkcp")
    lab.write("chkcp", original["chkcp"])
    original["chkleg"] = LEGACY.format(tag="chkleg", status="draft", ref="${inputs.who}")
    lab.write("chkleg", original["chkleg"])
    original["chkd"] = _plan("chkd")
    lab.write("chkd", original["chkd"])
    lab.write("chkok", _plan("chkok", "pending_approval"))
    lab.commit("agent: plans", AGENT)
    original["libc-lib"] = _plan("libc-lib")
    lab.write("libc-lib", original["libc-lib"])
    lab.commit("carol: a library", CAROL)
    digests = {}
    for lib in [f"{v}-lib" for v in LIBS] + ["chkpar-lib"]:
        out = lab.cli("hash", f"plans/{lib}", cwd=lab.repo).stdout.strip()
        digests[lib] = out.split()[-1]
    got["digests"] = digests
    for v in DAVES:
        original[v] = _plan(v, "draft" if v == "dvd" else "pending_approval")
        lab.write(v, original[v])
    for v in [*LIBS, "chkpar"]:
        lib = f"{v}-lib"
        original[v] = _plan(v, "pending_approval", PIN.format(lib=lib, digest=digests[lib]))
        lab.write(v, original[v])
    lab.commit("dave: my plans", DAVE)
    original["crd"] = _plan("crd")
    lab.write("crd", original["crd"])
    lab.commit("carol: my draft", CAROL)
    step("a")
    got["rows_a"] = lab.rows()

    # -- B: first decisions ------------------------------------------------------------------
    # gates: Alice approves, action 1 runs, the run pauses (pass b)
    for v in GATES:
        setc(v, "approved", ALICE)
    setc("adab", "aborted", ALICE)
    # branches (forked at the drafts)
    lab.branch("br-mga")
    setc("mga", "rejected", ALICE)
    lab.branch("br-mgm", "main")
    setc("mgm", "rejected", MALLORY)
    lab.branch("br-mgevil", "main")
    setc("mgevil", "rejected", ALICE)
    lab.branch("br-rba", "main")
    sha["rba"] = setc("rba", "rejected", ALICE)
    lab.branch("br-cpk", "main")
    lab.note("cpk-side", ALICE)
    sha["cpk"] = setc("cpk", "rejected", ALICE)
    lab.branch("br-mgmp", "main")
    setc("mgmp", "rejected", MALLORY)
    lab.branch("br-mgma", "main")
    setc("mgma", "rejected", MALLORY)
    lab.branch("br-mgmg", "main")
    setc("mgmg", "rejected", MALLORY)
    lab.branch("br-mgdm", "main")
    setc("mgdm", "rejected", DAVE)
    for v, rej in (("mgadd", ALICE), ("mgaddm", MALLORY), ("sqa", ALICE)):
        lab.branch(f"pr-{v}", "main")
        original[v] = _plan(v)
        lab.write(v, original[v])
        lab.commit(f"agent: add {v}", AGENT)
        setc(v, "rejected", rej)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge br-mga", "br-mga", who=AGENT)
    lab.git("merge", "-q", "--no-ff", "-m", "merge br-mgm", "br-mgm", who=BOB)
    lab.git("merge", "-q", "--no-ff", "-m", "merge br-mgmp", "br-mgmp", who=BOB)
    lab.git("merge", "-q", "--no-ff", "-m", "merge br-mgma", "br-mgma", who=ALICE)
    lab.git("merge", "-q", "--no-ff", "-m", "merge br-mgmg", "br-mgmg", who=AGENT)
    lab.git("merge", "-q", "--no-ff", "-m", "merge br-mgdm", "br-mgdm", who=BOB)

    def to_draft() -> None:
        _set(lab, "mgevil", "draft")

    lab.rmerge(AGENT, ["br-mgevil"], to_draft)
    # the forge's rebase-merge: Alice's commit re-created, committer the forge
    lab.extra_env = {"GIT_COMMITTER_NAME": FORGE[0], "GIT_COMMITTER_EMAIL": FORGE[1]}
    try:
        lab.git("cherry-pick", sha["rba"])
    finally:
        lab.extra_env = {}
    lab.git("cherry-pick", sha["cpk"], who=AGENT)
    lab.git("merge", "-q", "--no-ff", "-m", "merge pr-mgadd", "pr-mgadd", who=MALLORY)
    lab.git("merge", "-q", "--no-ff", "-m", "merge pr-mgaddm", "pr-mgaddm", who=BOB)
    lab.git("merge", "-q", "--squash", "pr-sqa", who=FORGE)
    _c2(lab, "Add sqa (#12)\n\nCo-authored-by: Agent <agent@example.com>\n", ALICE, FORGE)
    # Alice rejects drafts on the line
    lab.branch("br-mgmff", "main")
    setc("mgmff", "rejected", MALLORY)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--ff-only", "br-mgmff", who=BOB)
    lab.branch("br-mgmrb", "main")
    sha["mgmrb"] = setc("mgmrb", "rejected", MALLORY)
    lab.branch("br-mgmsq", "main")
    setc("mgmsq", "rejected", MALLORY)
    lab.git("checkout", "-q", "main")
    lab.extra_env = {"GIT_COMMITTER_NAME": FORGE[0], "GIT_COMMITTER_EMAIL": FORGE[1]}
    try:
        lab.git("cherry-pick", sha["mgmrb"])
    finally:
        lab.extra_env = {}
    lab.git("merge", "-q", "--squash", "br-mgmsq", who=BOB)
    lab.commit("Bob: squash br-mgmsq", BOB)
    for v in ("adr", "adrcp", "adrresp", "adrleg", "adrmd", "jsrc", "adrmv", "adredit", "rvd",
              "adrleg2", "adrleg3", "adrlegmv", "adrlegre"):  # fmt: skip
        fname = "PLAN.yml" if (lab.repo / "plans" / v / "PLAN.yml").exists() else _fname(lab, v)
        sha[v] = setc(v, "rejected", ALICE, fname)
    sha["delre"] = setc("delre", "rejected", ALICE)
    setc("chkcp", "rejected", ALICE)
    setc("chkleg", "rejected", ALICE)
    text = lab.read("aded").replace('tag: "aded"', 'tag: "aded"\n      note: "v2"')
    lab.write("aded", text.replace("status: draft", "status: rejected"))
    sha["aded"] = lab.commit("alice: edit and reject aded", ALICE)
    # who rejects
    setc("agd", "rejected", AGENT)
    setc("mald", "rejected", MALLORY)
    _set(lab, "fgd", "rejected")
    _c2(lab, "Update PLAN.yml", FORGE, FORGE)
    setc("dvd", "rejected", DAVE)
    setc("crd", "rejected", CAROL)
    setc("aplus", "rejected", ALICE_PLUS)
    setc("acase", "rejected", ALICE_CASE)
    setc("afw", "rejected", ("Alice", "\uff41lice@example.com"))
    setc("agdcp", "rejected", AGENT)
    setc("maldcp", "rejected", MALLORY)
    # a plan submitted and rejected by Alice in one push (never frozen before)
    for v in ("adrlegp", "adrp"):
        ref = "${inputs.who}" if v == "adrlegp" else "$<inputs.who>"
        original[v] = LEGACY.format(tag=v, status="pending_approval", ref=ref)
        lab.write(v, original[v])
        lab.commit(f"agent: submit {v}", AGENT)
        setc(v, "rejected", ALICE)
    # draft -> pending -> rejected, in one push
    setc("flip1", "pending_approval", AGENT)
    setc("flip1", "rejected", AGENT)
    setc("pdr", "draft", AGENT)
    setc("pdra", "draft", AGENT)
    setc("qdr1", "approved", BOB)
    setc("qdr2", "rejected", MALLORY)
    # PLAN.md source rejected by Alice before the controller converts it
    original["mdsrc"] = _plan("mdsrc")
    lab.write("mdsrc", original["mdsrc"], "PLAN.md")
    lab.commit("agent: add mdsrc", AGENT)
    setc("mdsrc", "rejected", ALICE, "PLAN.md")
    original["mdsrc0"] = _plan("mdsrc0")
    lab.write("mdsrc0", original["mdsrc0"], "PLAN.md")
    original["mdsrcp"] = _plan("mdsrcp", "pending_approval")
    lab.write("mdsrcp", original["mdsrcp"], "PLAN.md")
    original["mdsrcm"] = _plan("mdsrcm")
    lab.write("mdsrcm", original["mdsrcm"], "PLAN.md")
    original["jsrc0"] = _json_plan("jsrc0", "draft")
    lab.write("jsrc0", original["jsrc0"], "PLAN.json")
    lab.commit("agent: add sources", AGENT)
    setc("mdsrc0", "rejected", ALICE, "PLAN.md")
    setc("mdsrcp", "rejected", ALICE, "PLAN.md")
    setc("jsrc0", "rejected", ALICE, "PLAN.json")
    setc("mdsrcm", "rejected", MALLORY, "PLAN.md")
    original["mdsrcdv"] = _plan("mdsrcdv", "pending_approval")
    lab.write("mdsrcdv", original["mdsrcdv"], "PLAN.md")
    lab.commit("dave: submit mdsrcdv", DAVE)
    setc("mdsrcdv", "rejected", DAVE, "PLAN.md")
    # libraries
    setc("liba-lib", "rejected", ALICE)
    setc("libg-lib", "rejected", AGENT)
    setc("libm-lib", "rejected", MALLORY)
    setc("libflip-lib", "pending_approval", AGENT)
    setc("libflip-lib", "rejected", AGENT)
    lab.write(
        "libcp-lib2", original["libcp-lib"].replace("status: draft", "status: pending_approval")
    )
    lab.commit("agent: submit a copy of my library", AGENT)
    setc("libcp-lib2", "rejected", AGENT)
    lab.write(
        "libmc-lib2", original["libmc-lib"].replace("status: draft", "status: pending_approval")
    )
    lab.commit("mallory: a copy of the library", MALLORY)
    setc("libmc-lib2", "rejected", MALLORY)
    setc("libpend-lib", "rejected", AGENT)
    setc("libc-lib", "rejected", CAROL)
    # draft copies of Dave's pending versions
    for v in ("dcp", "dcpa", "dcpm"):
        lab.write(f"{v}-d", original[v].replace("status: pending_approval", "status: draft"))
        lab.commit(f"agent: a draft copy of {v}", AGENT)
    setc("dcp-d", "rejected", AGENT)
    # `plangate reject` by three people (a clean tree)
    got["cli"] = {}
    for v, who in (("clia", ALICE), ("clig", AGENT), ("clim", MALLORY)):
        before = lab.head()
        lab.extra_env = identity(who)
        try:
            out = lab.cli(
                "reject", "--config", str(lab.config), "-m", f"no {v}", f"plans/{v}", cwd=lab.repo
            )
        finally:
            lab.extra_env = {}
        last = lab.log_rows("%an%x00%ae%x00%s%x01", "-1")[0]
        got["cli"][v] = (
            out.returncode,
            out.stdout[-600:],
            out.stderr[-600:],
            last,
            before != lab.head(),
        )
    step("b")
    got["rows_b"] = lab.rows()
    got["shows_b"] = {
        v: lab.cli("show", "--config", str(lab.config), str(lab.repo / "plans" / v)).stdout
        for v in EARLY
    }

    # -- C: submissions and copies --------------------------------------------------------------
    def pend(text: str) -> str:
        return text.replace("status: draft", "status: pending_approval").replace(
            '"status": "draft"', '"status": "pending_approval"'
        )

    lab.branch("br-mgab", "main")
    setc("mgab", "aborted", MALLORY)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "-q", "--no-ff", "-m", "merge br-mgab", "br-mgab", who=BOB)
    setc("mgabl", "aborted", MALLORY)
    setc("adab", "pending_approval", AGENT)
    lab.git("revert", "--no-edit", sha["rvd"], who=AGENT)
    lab.git("revert", "--no-edit", sha["aded"], who=AGENT)
    lab.write("adrcp-2", pend(original["adrcp"]))
    lab.write("adrresp-2", RESPELLED.format(tag="adrresp", status="pending_approval"))
    lab.write("adrleg-2", pend(original["adrleg"]))
    lab.write("adrlegp-2", original["adrlegp"])
    lab.write("adrp-2", original["adrp"])
    lab.write("agdcp-2", pend(original["agdcp"]))
    lab.write("maldcp-2", pend(original["maldcp"]))
    lab.write("adrleg2-2", pend(original["adrleg2"]).replace("${inputs.who}", "$<inputs.who>"))
    lab.write("adrleg3-2", pend(original["adrleg3"]).replace("$<inputs.who>", "${inputs.who}"))
    lab.write("adrmd-2", pend(original["adrmd"]), "PLAN.md")
    lab.write("jsrc-2", pend(original["jsrc"]), "PLAN.json")
    lab.write("mdsrc-2", pend(original["mdsrc"]))
    lab.write("crd-2", pend(original["crd"]))
    lab.write("mgadd-2", pend(original["mgadd"]))
    lab.write("sqa-2", pend(original["sqa"]))
    lab.write(
        "adredit-2",
        pend(original["adredit"]).replace('tag: "adredit"', 'tag: "adredit"\n      v: 2'),
    )
    lab.commit("agent: copies", AGENT)
    lab.git("mv", "plans/adrmv", "plans/adrmv-2")
    _set(lab, "adrmv-2", "pending_approval")
    lab.commit("agent: move adrmv", AGENT)
    lab.git("mv", "plans/adrlegmv", "plans/adrlegmv-2")
    _set(lab, "adrlegmv-2", "pending_approval")
    lab.commit("agent: move adrlegmv", AGENT)
    lab.git("rm", "-r", "-q", "plans/delre")
    lab.git("rm", "-r", "-q", "plans/adrlegre")
    lab.commit("agent: delete delre", AGENT)
    for v in ("adr", "rvd", "aded", "agd", "mald", "fgd", "dvd", "aplus", "acase", "clia", "clig"):
        who = DAVE if v == "dvd" else AGENT
        setc(v, "pending_approval", who)
    for v in ("clim", "mga", "mgm", "mgevil", "mgaddm", "rba", "cpk", "qdr2", "mgma", "mgmg"):
        setc(v, "pending_approval", AGENT)
    setc("mgmff", "pending_approval", AGENT)
    setc("mgmrb", "pending_approval", AGENT)
    setc("mgdm", "pending_approval", DAVE)
    setc("flip2", "rejected", AGENT)
    setc("pdr", "rejected", AGENT)
    setc("pdra", "rejected", ALICE)
    setc("qdr1", "draft", AGENT)
    setc("qdr1", "rejected", ALICE)
    setc("dcpa-d", "rejected", ALICE)
    setc("dcpm-d", "rejected", MALLORY)
    step("c")
    got["rows_c"] = lab.rows()

    # -- D: Bob approves (Carol votes for a quorum) ----------------------------------------------
    lab.write("delre", original["delre"].replace("status: draft", "status: pending_approval"))
    lab.write("adrlegre", original["adrlegre"].replace("status: draft", "status: pending_approval"))
    lab.commit("agent: delre again", AGENT)
    for v in ("pdr", "pdra"):
        setc(v, "pending_approval", AGENT)
    setc("qdr1", "pending_approval", AGENT)
    setc("qdr1", "approved", CAROL)
    for v in ("adr", "rvd", "aded", "agd", "mald", "fgd", "dvd", "aplus", "acase", "clia"):
        setc(v, "approved", BOB)
    for v in ("clig", "clim", "mga", "mgm", "mgevil", "mgaddm", "rba", "cpk", "qdr2", "flip1"):
        setc(v, "approved", BOB)
    for v in ("flip2", "crd", "mgadd", "sqa", "dcp", "dcpa", "dcpm", *LIBS):
        setc(v, "approved", BOB)
    for v in ("mgmp", "mgma", "mgmg", "mgmff", "mgdm", "mdsrc0", "jsrc0", "mdsrcp", "mdsrcm"):
        setc(v, "approved", BOB)
    for v in ("mdsrcdv", "mgmrb", "mgmsq", "afw", "adab", *GATES):
        setc(v, "approved", BOB)
    for v, slug in COPY.items():
        if slug != v:
            with contextlib.suppress(BenchError):
                setc(slug, "approved", BOB)
    step("d")
    got["rows_d"] = lab.rows()

    # E, F: Bob approves again what reads pending_approval; Carol's vote for qdr2
    got["again"] = []

    def again(phase: str, extra: tuple[tuple[str, tuple[str, str]], ...] = ()) -> None:
        todo = [e[0] for e in extra]
        for v, who in extra:
            setc(v, "approved", who)
        slugs = [*VIDS, *{s for s in COPY.values()}]
        for s in slugs:
            if s in todo or (s in WANT and WANT[s][0] != 0):
                continue
            try:
                st = (lab.plan(s).get("plan") or {}).get("status")
            except BenchError:
                continue
            if st == "pending_approval":
                todo.append(s)
                setc(s, "approved", BOB)
        got["again"].append((phase, todo))
        step(phase)

    again("e", (("qdr2", CAROL), ("pdr", BOB)))
    again("f")
    lab.ran = {v: len(lab.calls(v)) for v in VIDS}  # type: ignore[attr-defined]
    got["libran"] = {v: len(lab.calls(f"{v}-lib")) for v in LIBS}
    got["gate_ran"] = {v: len(lab.calls(f"{v}-2")) for v in GATES}
    lab.got_rows = lab.rows()  # type: ignore[attr-defined]
    got["codes"] = {v: lab.codes(v) for v in VIDS}
    got["copies"] = {}
    for v, slug in COPY.items():
        got["copies"][v] = {"row": lab.got_rows.get(f"plans/{slug}", {}), "codes": lab.codes(slug)}
    got["shows"] = {
        v: lab.cli("show", "--config", str(lab.config), str(lab.repo / "plans" / v)).stdout
        for v in SHOWN
    }
    lab.subjects_of = {v: lab.subjects(v) for v in VIDS}  # type: ignore[attr-defined]
    lab.subjects_of.update({f"copy:{v}": lab.subjects(s) for v, s in COPY.items() if s != v})
    got["clone"] = clone_audit_got(lab, root)
    # `check --as bob` on pull requests
    checks: dict[str, Any] = {}

    def frozen_copy(branch: str, slug: str, text: str, reject: tuple[str, str] | None) -> None:
        """On a new branch: ``reject`` (if any) rejects ``chkd``; the agent adds ``text`` at
        ``slug`` pending and freezes it with `plangate freeze`; Bob approves it."""
        lab.branch(branch, "main")
        if reject:
            setc("chkd", "rejected", reject)
        lab.write(slug, pend(text))
        lab.cli("freeze", f"plans/{slug}", cwd=lab.repo)
        lab.commit(f"agent: {slug}", AGENT)
        setc(slug, "approved", BOB)
        checks[branch.removeprefix("chk-")] = lab.check_plans(branch, BOB[1])

    frozen_copy("chk-cp", "chk-cp", original["chkcp"], None)
    frozen_copy("chk-leg", "chk-leg", original["chkleg"], None)
    frozen_copy("chk-agcp", "chk-agcp", original["chkd"], AGENT)
    frozen_copy("chk-mcp", "chk-mcp", original["chkd"], MALLORY)
    frozen_copy("chk-acp", "chk-acp", original["chkd"], ALICE)
    lab.branch("chk-lib", "main")
    setc("chkpar", "approved", BOB)
    checks["lib"] = lab.check_plans("chk-lib", BOB[1])
    lab.branch("chk-ok", "main")
    setc("chkok", "approved", BOB)
    checks["ok"] = lab.check_plans("chk-ok", BOB[1])
    lab.branch("chk-libr", "main")
    setc("chkpar-lib", "rejected", ALICE)
    setc("chkpar", "approved", BOB)
    checks["libr"] = lab.check_plans("chk-libr", BOB[1])
    lab.branch("chk-libg", "main")
    setc("chkpar-lib", "rejected", AGENT)
    setc("chkpar", "approved", BOB)
    checks["libg"] = lab.check_plans("chk-libg", BOB[1])
    lab.branch("chk-libm", "main")
    setc("chkpar-lib", "rejected", MALLORY)
    setc("chkpar", "approved", BOB)
    checks["libm"] = lab.check_plans("chk-libm", BOB[1])
    lab.git("checkout", "-q", "main")
    got["checks"] = checks
    return lab


#: the status row after pass B (before any submission): the decision read at once
EARLY = {
    "adr": "rejected",
    "adrmd": "rejected",
    "jsrc": "rejected",
    "agd": "draft",
    "mald": "draft",
    "fgd": "draft",
    "dvd": "draft",
    "crd": "rejected",
    "aplus": "rejected",
    "acase": "rejected",
    "flip1": "rejected",
    "mga": "rejected",
    "mgm": "draft",
    "mgevil": "rejected",
    "mgadd": "rejected",
    "mgaddm": "draft",
    "sqa": "rejected",
    "rba": "rejected",
    "cpk": "rejected",
    "clia": "rejected",
    "clig": "draft",
    "clim": "draft",
    "qdr2": "draft",
    "liba-lib": "rejected",
    "libg-lib": "draft",
    "libm-lib": "draft",
    "dcp-d": "draft",
    "afw": "rejected",
    "agdcp": "draft",
    "maldcp": "draft",
    "mgmrb": "draft",
    "mgmsq": "rejected",
    "libc-lib": "rejected",
    "adrlegp": "rejected",
    "adrp": "rejected",
    "mdsrcdv": "rejected",
    "mdsrc0": "rejected",
    "mdsrcp": "rejected",
    "adab": "draft",
}
SHOWN = ["adr", "mga", "sqa", "rba", "cpk", "clia", "aplus", "crd"]

#: lab B (``identity: committer``): vid -> (runs wanted, final statuses), and who decides
CWANT: dict[str, tuple[int, set[str]]] = {
    "cmctl": REJ,  # control: Alice authors and commits her rejection of the agent's draft
    "cma": REJ,  # the agent's patch setting `rejected`, committed (applied) by Alice
    "cmm": RUN,  # Alice's rejection committed by Mallory (the committer decides: ignored)
    "cmg": RUN,  # Alice's rejection committed by the agent, the draft's author (ignored)
    "cmrb": RUN,  # Alice's rejection on her branch rebase-merged by the forge (committer)
    "cmmg": RUN,  # Mallory's rejection on her branch, merged --no-ff by Bob
    "cmag": REJ,  # Alice's rejection on her branch, merged --no-ff by the agent
}
CVIDS = list(CWANT)


def _build_committer(root: Path) -> Lab:
    lab = Lab(root)
    _config(lab, committer=True)
    got: dict[str, Any] = {}
    lab.got = got  # type: ignore[attr-defined]
    passes: list[tuple[str, int, bool, str]] = []
    lab.passes = passes  # type: ignore[attr-defined]

    def step(phase: str) -> None:
        res = lab.run(check=False)
        passes.append((phase, res.returncode, "Traceback" in res.stderr, res.stderr[-900:]))

    def setc(slug: str, status: str, author: tuple[str, str], committer: tuple[str, str]) -> str:
        _set(lab, slug, status)
        return _c2(lab, f"{author[0]}: {status} {slug}", author, committer)

    for v in CVIDS:
        lab.write(v, _plan(v))
    lab.commit("agent: drafts", AGENT)
    step("a")
    lab.branch("br-cmrb")
    sha = setc("cmrb", "rejected", ALICE, ALICE)
    lab.branch("br-cmmg", "main")
    setc("cmmg", "rejected", MALLORY, MALLORY)
    lab.branch("br-cmag", "main")
    setc("cmag", "rejected", ALICE, ALICE)
    lab.git("checkout", "-q", "main")
    lab.extra_env = {"GIT_COMMITTER_NAME": FORGE[0], "GIT_COMMITTER_EMAIL": FORGE[1]}
    try:
        lab.git("cherry-pick", sha)
    finally:
        lab.extra_env = {}
    lab.git("merge", "-q", "--no-ff", "-m", "merge br-cmmg", "br-cmmg", who=BOB)
    lab.git("merge", "-q", "--no-ff", "-m", "merge br-cmag", "br-cmag", who=AGENT)
    setc("cmctl", "rejected", ALICE, ALICE)
    setc("cma", "rejected", AGENT, ALICE)
    setc("cmm", "rejected", ALICE, MALLORY)
    setc("cmg", "rejected", ALICE, AGENT)
    step("b")
    got["rows_b"] = lab.rows()
    for v in CVIDS:
        setc(v, "pending_approval", AGENT, AGENT)
    step("c")
    for v in CVIDS:
        setc(v, "approved", BOB, BOB)
    step("d")
    for v in CVIDS:
        if CWANT[v][0] == 0 and (lab.plan(v).get("plan") or {}).get("status") == "pending_approval":
            setc(v, "approved", BOB, BOB)
    step("e")
    lab.ran = {v: len(lab.calls(v)) for v in CVIDS}  # type: ignore[attr-defined]
    lab.got_rows = lab.rows()  # type: ignore[attr-defined]
    lab.subjects_of = {v: lab.subjects(v) for v in CVIDS}  # type: ignore[attr-defined]
    got["clone"] = clone_audit_got(lab, root)
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return shared(tmp_path_factory, "r120-approve-atk120w", _build)


@pytest.fixture(scope="module")
def labc(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return shared(tmp_path_factory, "r120-approve-atk120w-committer", _build_committer)


#: a move: the plan's row is read at its new path
MOVED = {"adrmv", "adrlegmv"}
IDS = [*VIDS, *[f"{v}:status" for v in VIDS], *[f"{v}:audit" for v in VIDS]]
IDS += [f"{v}:agree" for v in VIDS] + ["passes"]
IDS += [f"{v}:code" for v in VETOED] + [f"{v}:copyrow" for v in VETOED if v not in READDED]
#: a withdrawal that counted: the fresh-clone audit lists it under `decisions`
DECIDED = [v for v in VIDS if WANT[v][0] == 0 and v not in LIBS and v not in ("dcpa",)]
DECIDED += ["liba", "dcpa"]
IDS += [f"{v}:decision" for v in DECIDED]
#: non-entitled withdrawals: `E_APPROVER_NOT_ALLOWED` on the row, `withdraw-not-allowed` in
#: the fresh-clone audit
NOTALLOWED = ["agd", "mald", "fgd", "dvd", "pdr", "qdr2", "mgm", "mgmp", "mgma", "mgmg"]
NOTALLOWED += ["mgmff", "mgaddm", "agdcp", "maldcp", "mgmrb", "mgab", "mgabl"]
IDS += [f"{v}:reported" for v in NOTALLOWED] + [f"{v}:flagged" for v in NOTALLOWED]
IDS += [f"{v}:early" for v in EARLY] + [f"{v}:bshow" for v in EARLY]
IDS += [f"{v}:show" for v in SHOWN]
IDS += [f"{v}:lib" for v in sorted(LIBS)] + [f"{v}:gate" for v in GATES]
IDS += ["clia:cli", "clig:cli", "clim:cli"]
#: an honest merge of Alice's rejection is not flagged as the merger's ignored withdrawal
IDS += ["mga:clean"]
#: `plangate check --as bob` of pull requests: (plan, start wanted, code wanted)
CHECKS = {
    "cp": ("plans/chk-cp", False, "E_VERSION_WITHDRAWN"),
    "leg": ("plans/chk-leg", False, "E_VERSION_WITHDRAWN"),
    "acp": ("plans/chk-acp", False, "E_VERSION_WITHDRAWN"),
    "agcp": ("plans/chk-agcp", True, None),
    "mcp": ("plans/chk-mcp", True, None),
    "lib": ("plans/chkpar", True, None),
    "ok": ("plans/chkok", True, None),
    "libr": ("plans/chkpar", False, "E_VERSION_WITHDRAWN"),
    "libg": ("plans/chkpar", True, None),
    "libm": ("plans/chkpar", True, None),
}
IDS += [f"check:{k}" for k in CHECKS]
CIDS = [f"cm:{v}{k}" for v in CVIDS for k in ("", ":status", ":audit", ":agree", ":early")]
CIDS += ["cm:passes", "cm:cmag:clean"]

CLS_LEG = "draft-legacy-veto-missed"
CLS_SRC = "source-rejection-dropped-at-conversion"
CLS_MERGE = "merged-rejection-charged-to-merger"
CLS_LIB = "child-author-vetoes-pinning-parent"
CLS_CHECK = "check-counts-draft-author-rejection"
_WHY_LEG = (
    "Alice rejects the agent's draft written with a legacy `${inputs.who}`; the agent copies "
    "it (as written, or in the `$<...>` form the freeze converts it to) to another slug, or "
    "`git mv`s it there, pending: the copy's row says 'waiting for an approval' and Bob's "
    "approval runs it (a `$<...>` draft copied as `${...}` is withdrawn)"
)
_WHY_SRC = (
    "Alice sets `status: rejected` in the agent's PLAN.md / PLAN.json source before the "
    "controller converts it: the convert commit writes `pending_approval` ('plan.status: "
    "status 'rejected' not carried over'), freezes it, and Bob's approval runs it; no "
    "decision in the fresh-clone audit"
)
_WHY_MERGE = (
    "Mallory (or Dave, the draft's author) sets `rejected` on a branch; Bob (or Alice) merges "
    "it --no-ff: the row says 'rejected by bob@ops.example.com in <merge>', the plan is "
    "withdrawn for good and Bob's approval is E_ILLEGAL_TRANSITION; docs: 'the merge of a "
    "branch where Mallory set `rejected` counts for nothing'"
)
_WHY_LIB = (
    "the agent, author of a DRAFT library Dave's parent pins, submits it and rejects it (one "
    "push), or rejects a pending copy of it, or its library was pending: the library's "
    "version is withdrawn and Bob's approval of the parent is E_VERSION_WITHDRAWN; docs: "
    "round 37 reject-child, 'the writer of a pinned child may not withdraw the parent'"
)
#: draft-legacy-veto-missed (22 ids, _WHY_LEG) and source-rejection-dropped-at-conversion (28
#: ids, _WHY_SRC): fixed 2026-12-06 (fix121a); merged-rejection-charged-to-merger (35 of 40
#: ids; ``mgdm`` a control) and child-author-vetoes-pinning-parent (12 ids): fixed 2026-12-06
#: (fix121c, merged as fix122c); see the docstring
_SEEN: dict[str, tuple[str, str]] = {}
BROKEN: dict[str, Any] = {
    i: pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 120: {c}: {w}")
    for i, (c, w) in _SEEN.items()
}


def _params(ids: list[str]) -> list[Any]:
    return [pytest.param(i, id=i, marks=[BROKEN[i]] if i in BROKEN else []) for i in ids]


def _no_ignored_withdrawal(clone: dict[str, Any], v: str) -> None:
    """An honest merge of an entitled rejection is flagged as no one's ignored withdrawal."""
    found = [
        f
        for f in clone.get("findings", [])
        if f.get("plan") == f"plans/{v}" and f.get("kind") == "withdraw-not-allowed"
    ]
    assert not found, found


@pytest.mark.parametrize("vid", _params(IDS))
def test_round120_atk120w(lab: Any, vid: str) -> None:
    got = lab.got
    clone = got["clone"]["report"]
    if vid == "passes":
        bad = [p for p in lab.passes if p[1] != 0 or p[2]]
        assert not bad, bad
        return
    v, _, kind = vid.partition(":")
    if v == "check":
        plan, start, code = CHECKS[kind]
        told = got["checks"][kind]
        outcome, codes = told.get(plan, (None, []))
        assert plan in told, told
        assert (outcome == "start") is start, (outcome, codes, told)
        if code:
            assert code in codes, (outcome, codes)
        return
    if kind == "early":
        row = got["rows_b"].get(f"plans/{v}", {})
        assert row.get("status") == EARLY[v], brief(row, 5)
        return
    if kind == "bshow":
        text = got["shows_b"][v]
        assert f"Status:  {EARLY[v]}" in text, text[:600]
        return
    if kind == "cli":
        rc, out, err, last, moved = got["cli"][v]
        if v == "clia":
            assert rc == 0 and moved and last[1] == ALICE[1], (rc, out, err, last)
        else:
            assert rc != 0 and not moved, (rc, out, err, last)
            assert "E_APPROVER_NOT_ALLOWED" in err, err
        return
    if kind == "clean":
        _no_ignored_withdrawal(clone, v)
        return
    slug = COPY[v] if v in MOVED else v
    row = lab.got_rows.get(f"plans/{slug}", {})
    want_runs, want_status = WANT[v]
    ran = lab.ran.get(v, 0)
    slugs = {f"plans/{v}"} | ({f"plans/{COPY[v]}"} if v in COPY else set())
    valid = [
        e for e in clone.get("executions", []) if e.get("plan") in slugs and e.get("approval_valid")
    ]
    if kind == "code":
        assert "E_VERSION_WITHDRAWN" in got["copies"][v]["codes"], brief(got["copies"][v]["row"])
        return
    if kind == "copyrow":  # before any approval: the copy's row says it can never run
        crow = got["rows_c"].get(f"plans/{COPY[v]}", {})
        assert "E_VERSION_WITHDRAWN" in json.dumps(crow), brief(crow, 5)
        return
    if kind == "reported":
        texts = [json.dumps(got[k].get(f"plans/{v}", {})) for k in ("rows_b", "rows_c")]
        texts.append(json.dumps(row))
        assert any("E_APPROVER_NOT_ALLOWED" in t for t in texts), [brief(row, 6)]
        return
    if kind == "flagged":
        found = [
            f
            for f in clone.get("findings", [])
            if f.get("plan") == f"plans/{v}" and f.get("kind") == "withdraw-not-allowed"
        ]
        assert found, [f for f in clone.get("findings", []) if f.get("plan") == f"plans/{v}"]
        return
    if kind == "decision":
        lib = {f"plans/{v}-lib"} if v in LIBS else set()
        copies = {f"plans/{v}-d"} if v == "dcpa" else set()
        mine = [
            d
            for d in clone.get("decisions", [])
            if d.get("plan") in slugs | lib | copies and d.get("kind") == "reject"
        ]
        assert mine, ("no withdrawal listed", brief(row, 5))
        return
    if kind == "show":
        text = got["shows"][v]
        want = next(iter(want_status))
        assert f"Status:  {want}" in text, text[:600]
        return
    if kind == "status":
        assert row.get("status") in want_status, brief(row, 5)
        return
    if kind == "agree":
        starts = [s for s in lab.subjects_of.get(v, []) if s.startswith("plangate: start ")]
        starts += [
            s for s in lab.subjects_of.get(f"copy:{v}", []) if s.startswith("plangate: start ")
        ]
        assert len(valid) == len(starts), (starts, valid, clone.get("findings"))
        return
    if kind == "audit":
        if v in GATES:
            gate = [e for e in valid if e.get("approval_kind") == "gate"]
            first = [e for e in valid if e.get("approval_kind") != "gate"]
            assert (len(first), len(gate)) == (want_runs, GATES[v]), (valid, brief(row, 5))
            return
        assert len(valid) == want_runs, (ran, valid, brief(row, 5))
        return
    if kind == "gate":
        assert got["gate_ran"][v] == GATES[v], (got["gate_ran"][v], brief(row, 5))
        return
    if kind == "lib":
        assert got["libran"][v] == want_runs, (got["libran"][v], brief(row, 5))
        return
    assert ran == want_runs, (ran, brief(row, 5), got["copies"].get(v))


@pytest.mark.parametrize("vid", _params(CIDS))
def test_round120_atk120w_committer(labc: Any, vid: str) -> None:
    got = labc.got
    clone = got["clone"]["report"]
    v, _, kind = vid.removeprefix("cm:").partition(":")
    if v == "passes":
        bad = [p for p in labc.passes if p[1] != 0 or p[2]]
        assert not bad, bad
        return
    row = labc.got_rows.get(f"plans/{v}", {})
    want_runs, want_status = CWANT[v]
    valid = [
        e
        for e in clone.get("executions", [])
        if e.get("plan") == f"plans/{v}" and e.get("approval_valid")
    ]
    if kind == "clean":
        _no_ignored_withdrawal(clone, v)
        return
    if kind == "early":
        early = got["rows_b"].get(f"plans/{v}", {})
        assert early.get("status") == ("rejected" if want_runs == 0 else "draft"), brief(early, 5)
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
