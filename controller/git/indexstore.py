"""The history index's storage: sqlite in WAL mode, one JSON :class:`PlanState` per plan.

Index format (``index.sqlite`` in the state directory)::

    meta(key TEXT PRIMARY KEY, value TEXT)   last_commit, branch, version, parked, parked_at
    plans(plan_id TEXT PRIMARY KEY, data TEXT)  one JSON PlanState per plan
    jobs(plan_id TEXT PRIMARY KEY, data TEXT)   plans this controller started (Controller)
    authors(hash TEXT PRIMARY KEY, data TEXT)   everyone who ever wrote or carried a content
    producers(hash TEXT PRIMARY KEY, data TEXT) who made a content, in every commit that did
    originators(hash TEXT PRIMARY KEY, data TEXT) who made a content in every commit that made
        it afresh (none re-making it from a making it descends from), and those commits
    origins_at(key TEXT PRIMARY KEY, data TEXT) the same, per plan folder: who made a content
        afresh AT that folder, or at the folder a plan holding it was moved from (key: the
        folder's key, NUL, the content's hash)
    approvals(key TEXT PRIMARY KEY, sha TEXT)   approval identities seen (replay detection):
        key: sha256 of author, author time, subject (and, for one decision, plan and
        status); sha: "<first commit> <what it was made for> <its committer's digest>"
    started(hash TEXT PRIMARY KEY, data TEXT)   each frozen hash's first start commit (at most once)

The plans are a cache rebuilt from git, so their saves are not fsynced; the jobs, which a
crash must not lose, are. Deleting the file is always safe: the next scan rebuilds it.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import fields
from pathlib import Path
from typing import Any

from controller.git.planstate import (
    AuthorIndex,
    BlobFacts,
    PlanState,
    _needs_attention,
    folder_key,
    too_large,
)
from controller.plan.plans import DEFAULT_MAX_BYTES

#: The problem of a plan version over ``limits.max_plan_bytes`` (:func:`too_large`).
_BIG = "E_PLAN_TOO_LARGE:"

_PLANS = "SELECT data FROM plans"
#: What a rewrite of history can erase, kept apart from the index (see _attach_memory).
_MEMORY_TABLES = {
    "authors": "hash TEXT PRIMARY KEY, data TEXT",
    "approvals": "key TEXT PRIMARY KEY, sha TEXT",
    "withdrawn": "hash TEXT PRIMARY KEY, data TEXT",
    "freezes": "hash TEXT PRIMARY KEY, first INTEGER, controller INTEGER",
    "producers": "hash TEXT PRIMARY KEY, data TEXT",
    "originators": "hash TEXT PRIMARY KEY, data TEXT",
    "origins_at": "key TEXT PRIMARY KEY, data TEXT",
    "started": "hash TEXT PRIMARY KEY, data TEXT",
}
INDEX_VERSION = "151"  # 3: risk and estimate per plan; 4: approval identities, file writers;
# 5: identities reduced to their mailbox (RFC 5322 spellings, NFKC); 6: withdrawn versions;
# 7: each version's first freeze; 8: IDNA spellings of a domain made one, approval
# identities across plans (round 18); 9: folded and several-person Co-authored-by values,
# each version's changers (round 20); 10: an author's withdrawal vetoes a version she wrote
# wherever it is (round 23); 11: a certified key's signature kept as its certificate (round 30);
# 12: each content's producers (rounds 34-35: who moved, copied or raced a content is no
# author who may withdraw it); each version's changers per plan dropped; 13: a nested plan
# file's committer and the writers its bytes carry write every plan folder above it, a
# status change only when nothing but the status line changed (rounds 41-42); 14: a merge
# whose status came from a merged branch holding another version, at the same path or where
# the first parent moved the plan from, is a change of what runs (round 45: a stored request
# or vote from such a merge was kept as the merger's); 15: a status a merge brought through
# git's merge machinery (merge-tree) counts only when a merged branch changed a file holding
# that very version with it, at any path (round 46: moves past git's rename limit or into the
# plans folder read as the merger's own approval); 16: a continuation (gate, ask, resume) a
# merge brought counts only from a branch that held it over the first parent's pause, its
# ``execution:`` block (round 47: a stored request from a stale gate approval was valid); 17:
# a merge brought a status whenever a merged branch holds it for that plan, whatever the
# merger resolved, no re-merge asked (round 48: a conflict or -X laundered a stale approval);
# 18: the plan a controller commit names is read back from its message (``Plan:``, subject,
# batch groups: controller.git.records.plan_named), no more compared with its display form
# (round 50: a name NFC would change, or one holding a backslash, named no plan or another);
# 19: a plan's writers follow its bytes through git's rename/copy pairing wherever they are
# parked between plan paths, the parked paths kept in ``meta`` (round 50);
# 20: each frozen hash's first start commit, read from history (round 50: a controller with a
# new state directory ran a copy of a version whose start commit was on the branch); 21: a
# plan a commit makes takes the writers of whatever git pairs it from, its text followed back
# through copies and edits outside the plan paths (round 51: a copy, not a move, parked)
# 22: a commit under the controller's name it did not make, naming a run event of a plan in
# its message whatever it changes, noted on the plan (round 51's take-over check missed an
# empty one: the plan's last commit stayed the start)
# 23: that text followed by what survives: a rewrite (as git pairs it) is where it was made,
# a copy only --find-copies-harder finds counts from 66%, and past the bound its writers are
# "*unfollowed": nobody may approve (round 54)
# 24: a move in one commit paired by content, not lines (controller.plan.likeness), a
# PLAN.json source included; a folder's writers count since it was last emptied (round 55)
# 25: a plan changed in place paired like one added, by how much of the removed plan it keeps
# (controller.plan.likeness.kept_share), ties carried to every plan tied (round 56)
# 26: content pairing measured both ways, actions matched by what they say, each source's
# writers carried to every plan made of it (controller.plan.likeness.made_share, round 57)
# 27: plans compared by the calls they make (inputs resolved; fallback steps, checks and a
# pinned plan's inputs as calls), a short why no action by itself (likeness, round 58)
# 28: calls compared as received (plan fields, list indexes and echo results resolved, a
# value whatever JSON type spells it), a why at most half the evidence (likeness, round 59)
# 29: an echo's declared outputs evaluated; a reference to a real tool's result stands in for
# her value the plan carries elsewhere (likeness, round 60)
# 30: an approval's identity includes what it decides (plan, status, version); another
# decision under one author, date and subject is a replay only when carried by another
# committer (round 60: her own two approvals in one second, rebased, read as a replay)
# 31: the withdraw policy is the controller's last record COMMIT (subject, Policy-Hash,
# author and committer, its record), never a change of the file's bytes (round 61: bytes
# committed first by someone else left no record and a stale withdraw policy)
# 32: an approval identity's decision is its plan and status (the version binds it through
# what it was made for); its entry adds the hand that committed it: another decision under
# one author, date and subject is a replay only when another hand carried it (round 62: a
# forge's rebase-merge of her two decisions read as a replay); and a result stands in for
# her value only where the plan fed it to that producer (or upstream) under a key the read
# names, a pinned plan's input defaults included (round 62)
# 33: an output's query names the keys the engine parses from it (an escape decoded, a
# bracketed blank, ``..name`` its name only), and a new plan pinning a version the commit
# cannot read is compared with nothing, taking every removed folder's writers (round 63)
# (33 also) an approval request keeps its identity, and an identity's entry is marked ``lapsed``
# once the plan left that status before the controller acted: the same decision brought back
# counts only from the hand that committed it (round 63: her reverted approval re-applied)
# 34: a descendant segment followed by an index or slice (``..[0]``, ``$..[-1]``) names
# every key it passes through, as a wildcard or filter does (round 64)
# (34 also) a decision taken back on a merged branch is marked ``lapsed`` too (bound to no version
# or pause, ``-``, when the line never held it), and a lapsed decision counts again only in a
# commit its author committed herself (round 64: a side branch's lapse left no mark; the
# forge's rebase-merge of the agent's copy matched her web-editor approval's hand)
# 35: a file a merge brought as a merged branch changed it (the very blob) is written by the
# merged commits' makers, not the merger: no folder writer, blob or draft author from the
# merge itself (round 65: Alice, merging the agent's note in its plan's folder, its writer)
# 36: a lapse marks the DECISION too (her, the plan, the version, the status: a request keeps
# its ``decision`` key, the identities its lapse date): a copy of any commit carrying it, dated
# not after the lapse, counts only from her own hand (round 65: her merge or squash reverted,
# the agent's cherry-pick of the branch commit behind it ran on her name); the lapse's author's
# own earlier decisions for the version and a lapsed merge's branches' decisions lapse too
# 37: read by git alone (no record of the controller's commits), a commit under its name
# recording an abort of a plan with no abort request open is anyone's commit (round 65: a
# forged ``plangate: abort`` ended her paused run, her gate approval then read as illegal)
# 38: a decision's mark has no plan path (her, the frozen version, the status: a move keeps
# it), and its entry is "<commit> <lapse time> <carrier dates>": the lapse dated the earlier of
# its author and committer dates, bounded by the clock and the next controller commit (round
# 66: a move dodged the mark; a lapse dated ahead barred her later web-editor decisions)
# 39: each plan's last commit of its EXECUTION_LOG.md (``log_commit``): the status row reads
# the record again when any file of it was last committed by someone else (round 66: a log
# alone rewritten, deleted or swapped by the agent left the row without ``show``'s note)
# 40: a file git's merge of a merge's parents makes byte for byte (a clean join) is the merged
# sides' writing, not the merger's; a plan a merge or a merged branch's commit writes, made of
# a plan file it takes away, has that content's writers (round 66: her plan moved and edited
# inside the agent's merge, or after it on the agent's branch, lost her)
# 41: the same for every run event: by git alone, an outcome or checkpoint under its name of a
# plan it had not started (not executing or paused) is anyone's commit (round 66: a
# look-alike batched ``complete`` of a plan never started)
# 42: a file under the plans folder that git's merge of the parents conflicted at and settles
# without a hand (for ours, for theirs, a union: ``git merge-file`` over the stages git used)
# is the sides' writing too (round 67: ``-X theirs`` made Alice a writer of the agent's note)
# 43: a lapse another hand than the decision's author committed is dated by the first
# controller commit after it, the reader's clock until then (round 67: the agent's revert dated
# 1990 made her other approval of the version look newer than the lapse); the open lapses are
# kept in the index's meta (``lapses_open``)
# 44: the last commit of an EXECUTION_LOG.md in a folder the index holds no plan of
# (``loose_logs``), given to the plan put there later as its ``log_commit`` (round 67: an
# agent's log committed before its plan left the row silent where ``show`` noted it); each
# plan's ``controller_commit`` and ``owned`` (:meth:`PlanState.has_record`): the row of a
# draft, pending or invalid plan reads the record too, but not for a path with none
# 45: each plan's last start under the controller's name that it did not make
# (``foreign_start``: another controller's run, or a lost key's; round 67)
# 46: one rule for a run event under the controller's name not its own (round 67): by git
# alone an outcome or checkpoint of a plan paused at its gate is anyone's; a later start, a
# ``fail`` or an ``abort`` of a run executing (the file showing that end, the same version)
# moves the run on, read as the end the branch shows, as the take-over check drops the run
# 47: ``foreign_start`` only from a start carrying a seal (an unsealed one under the
# controller's name is no controller's: anyone's commit, which decides nothing)
# 48: a merge on a merged branch writes what it did not bring, as one on the first-parent
# line (round 68: Alice's hand-written line in her merge on her branch made her no writer)
# 49: a lapse she committed herself is dated by the dates she wrote (its committer date; its
# author date only when she is its author too), and "herself" is told by the approval
# rules' identities, ``identity_aliases`` included (round 68: her cherry-pick of the agent's
# revert dated 1990 kept its 1990 author date; her revert as her alias was another hand's)
# 50: a copy of an approval refused as moved onto another plan by another hand binds no
# decision identity (round 69: the agent's second copy read as "the same approval" as its
# refused first one, and ran)
# 50 (also): a file in a folder named as a plan file (``plans/x/PLAN.yml/PLAN.yml``) is
# E_UNSAFE_PATH, no plan, and its parent plan, holding a plan file too, E_PLAN_AMBIGUOUS
# (round 69: the agent's folder was read as Alice's completed plan's file)
# 50 (also): only a lapse she wrote and committed is dated by its dates, one she committed only is
# another hand's (round 69: ``--committer-date-is-author-date`` copied the agent's date into
# hers); a plan file moved with its bytes kept (all but a plain status line), its folder or
# its file's name changed, writes no content (round 69: PLAN.yml renamed PLAN.yaml)
# 51: by git alone, a run event under the controller's name with no ``Controller-Seal:`` is
# anyone's commit (round 69: an unsealed forged start read as the plan's run in a fresh clone)
# 52: a lapse she committed is dated by its committer date, never its author date (a claim:
# round 70's revert under ``--author "Alice"`` she picked); one whose committer date copies
# another author's date is another hand's
# 52 (also): plans trading folders byte for byte (a swap, a rotation: no file removed) are moves,
# approved with the move as into a new folder, and a merged branch's move writes nothing
# (round 70: her swap, her ``--no-ff`` merged folder move made her the plan's changer)
# 52 (also): a folder named as the record's file (``EXECUTION_LOG.md``) or as a case variant
# of a plan file's or source's name (``PLAN.YML``, ``plan.yml``) is no plan folder either:
# what it holds is E_UNSAFE_PATH (round 70: such folders were frozen as plans MCP could not name)
# 52 (also): a plan file's removal with its folder's other name added in the same commit is a
# rename, no end of the plan, in whichever order the commit lists them (round 70: a rename back to
# PLAN.yml made a new plan "from nothing", its run's state lost)
# 53: a plan file beside a folder or file named as a plan file in another case (``plan.yml/``
# beside ``PLAN.yml``) is E_PLAN_AMBIGUOUS, the folder's names compared case-insensitively
# (round 71: one path on a case-insensitive checkout, read as a plain plan and run)
# 53 (also): a commit produces a content only where it changed it, not its status alone (round
# 71: her approval after a move on her merged branch made her a producer); a rename is an edit in
# place in any commit, a merge's too, edited or not (a gate approval with a rename read as new)
# 53 (also): a lapse is dated by the commit that made it, on the line or on a merged branch,
# never by the merge that brought it (round 71: her revert merged ``--no-ff`` by Bob dated as his)
# 54: a plan file's bytes beside a plain status line (a comment, a blank line, ``metadata:``, a
# mode) make their committer a writer of the plan's own folder, a merge's judged against git's
# join; an edit of the owned blocks alone writes the versions after it (round 71: Bob's comment,
# or his action commented out and uncommented by the agent, ran on his own approval)
# 56: an entry of any kind (a symlink, a gitlink, a file, a folder) claiming a plan file's place
# makes its folder's plan E_PLAN_AMBIGUOUS however late it comes, and names are compared folded
# (case, the code points HFS+ ignores, NFC/NFD: ``PLAN.y<U+200C>ml/``) (round 72: a symlink
# ``plan.yml`` added beside a frozen plan, or such a folder, let Alice's approval run it)
# 55: the status a moved plan file carries is a status change of the moved plan (its source's
# state -> the new status), on the line and on a merged branch: her approval lapses, ``rejected``
# withdraws the version (round 72: her folder move setting ``pending_approval`` was no lapse);
# a rename's lapse on a merged branch is dated by the branch commit that made it, not the merge
# 57: 54, 55 and 56 together (each branch's index had one of them alone)
# 58: a removed entry held E_UNSAFE_PATH (a symlink or gitlink ``plan.yml``, a folder
# ``PLAN.YML/``) takes its row with it when nothing of its plan is left at its path (round 73:
# a deleted symlink ``plan.yml`` kept its row in ``status`` for ever)
# 59: 58, and each plan's ``log_claimed``: its folder holds an entry named as its log in another
# spelling (``execution_log.md``, ``EXECUTION_LOG.md<U+200C>``: the log's name folded as the
# plan file's, :func:`controller.plan.names.log_twins`); the status row reads and notes the
# record while one is there (round 73: a forged log so named was noted by no reader)
# 60: 59, and a copy takes its source's owned-block editors' hold (``@held``), and a plan
# file byte for byte the file of a plan the index holds takes that plan's writers, however git
# pairs it; a plan moved in one commit onto a recorded path, frozen as another than the
# controller's last commit there holds, starts a new life of the path (round 73: a lifted copy
# ran on Bob's approval; a plan swapped onto a ran plan's path kept its ``completed``)
# 61: 60, and a merge that brings onto a recorded path a plan that was elsewhere before it
# (a swap or a replacement on the merged branch, in one commit or two) starts the new life too
# (the lead, 2026-11-30: a merged pull request's replacement of a ran plan kept ``completed``)
# 64: 61, and names NTFS makes one (a trailing dot or space, ``::$DATA``, the 8.3 short name
# ``EXECUT~1.MD``) claim the plan file's and the log's place as the fold's do (round 74: a
# forged ``EXECUT~1.MD`` beside a ran plan's log was noted by no reader)
# 62: 61, and the writers of every version the index holds (its plan's changers, its folder's
# writers) and its owned-block editors' hold kept by its content hash (``version:<hash>``,
# ``@held``): a plan a commit writes holding that content later, by any route, takes them
# (round 74: a copy of an older version, of a deleted plan, its ``frozen:`` block cut, lifted)
# 65: 62 and 64 together (each branch's index had one of them alone)
# 71: 65, and each version notes a top level that parses but is no block mapping (a JSON or
# flow root: ``unwritable``): every reader shows it ``unreadable`` (round 75)
# 67: 65, and a plan moved with an edit onto a recorded path (a removed plan file's content,
# edited, rewriting the path's: likelier the removed one's than its own, git's ``-B -M`` pair)
# starts the new life as the byte-exact move does, on the line and in a merge (round 75: the
# ``why`` edited with the move kept ``completed``; Bob's approval of it was ignored)
# 72: 67 and 71 together
# 70: 65, and a plan file's status value changed in place is no writing of the plan however
# its key is spelled: decided on the parse (``yamlio.scalar_alone_changed``: nothing but the
# ``plan.status`` value's span differs), not on ``status:`` and its value on one line (round 75:
# her edit, or ``plangate approve``'s, under ``"\x73tatus":``, ``? status`` or the value on the
# next line made her a writer: E_SELF_APPROVAL)
# 73: 72 and 70 together
# 68: 65, and every part of a plan's path is compared as its file's name is (``same_path``):
# a plan folder beside a folder one with it on a case-insensitive, HFS+ or NTFS checkout
# (``plans/fcase/`` of ``plans/FCASE/``, ``plans/rotate~1/``) holding a plan file is
# E_PLAN_AMBIGUOUS, both plans, however late either came; a log in such a folder sets
# ``log_claimed`` (round 75: the base ran while a Mac showed the twin's bytes)
# 74: 73 and 68 together
# 66: 65, and a plan the controller's ``convert`` commit writes takes what its content would
# have taken had the source's writer committed it: its writers carried into its folder and
# hash, and the writers and ``@held`` of every version that held the content (round 75: a
# ``PLAN.json`` of a held content, converted, dropped them; a parent pinning it counted none)
# 75: 74 and 66 together
# 79: 75, and a plan path's parts are split at a backslash too, as git for Windows splits them
# (``names.path_parts``): a folder ``plans/bs\x`` is E_UNSAFE_PATH and the twin of
# ``plans/bs/x``, which is E_PLAN_AMBIGUOUS (round 76: ``bs/x`` ran beside it)
# 78: 75, and a plan moved with an edit onto a recorded path pairs with any plan content that
# leaves its path in the commit, removed or overwritten by other content (its path's new content
# another plan's moved there, or under half of it kept), as the byte-exact swap does (round 76:
# two plans swapped, three rotated, each edited, no file removed, kept ``completed``)
# 81: 79 and 78 together
# 80: 75, and a log in a folder one with a plan's on some checkout at any level from the plans
# folder down (``names.twin_folders``: ``plans/lg/x/`` of ``plans/Lg/x``) sets ``log_claimed``
# (round 76: round 75 looked beside the plan's own folder only)
# 82: 81 and 80 together
# 76: 75, and a plan file's status line rewritten is no writing only as ``status: <word>`` and
# nothing else, its indent kept: a blank or a tab beside the key or the new value
# (``status:  approved``, ``approved\t``) is its committer's writing (round 76: it ran)
# 83: 82 and 76 together
# 84: 83, and each plan's row keeps the blob the controller's last change of its file left
# (``controller_blob``), which a swap's check read from git's trees for every human change
# 85: 83, and a plan file's status line rewritten keeps its own line end too: a CR added to an
# LF line or dropped from a CR LF one (``status: approved^M``) is its committer's writing
# (round 77: it ran)
# 86: 85 and 84 together
# 87: 83, and a FILE's own name is split at a backslash too (``names.split_files``): a file
# above a plan's folder that git for Windows writes into it (``plans/fy\PLAN.yml``) is a claim
# of its plan file's place (E_PLAN_AMBIGUOUS) or of its log's (``log_claimed``; round 77); the
# index keeps such paths (meta ``split_names``) and walks a folder only where one of them lands
# 88: 87 and 86 together
# 89: 83, and a byte-exact move of a plan whose first approval is open carries that request
# (its commit, author and kind) to the new path, as it carries the status its source had
# (round 77: Alice's approval, then the agent's swap or ``git mv`` before any pass, was read
# as the agent's approval there)
# 90: 89 and 88 together
# 93: 90, and the index reads the entries above the plans folder whose own name holds a
# backslash (``planstate.history_paths``: a root file ``plans\rt\PLAN.yml`` claims
# ``plans/rt``'s plan file's place), and a folder's own entry is named as git for Windows
# writes it (``names.own_name``: ``plans/tb/\PLAN.yml`` IS ``plans/tb/PLAN.yml``; round 79)
# 95: a decision a merged branch took back lapses the line's open approval when the merge is
# applied, whatever the merge's net diff (its bytes written back in place, or moved byte-exact:
# the move carries nothing; a content change there voids it), and its withdrawal of a plan
# moved or removed since vetoes the version by hash (round 79: the agent's branch took Alice's
# approval back, wrote her bytes back, merged --no-ff, and it ran on her approval)
# 96: 95 and 93 together
# 97: 96, and the files below a root folder whose name holds a backslash (``plans\rf/PLAN.yml``
# IS ``plans/rf/PLAN.yml`` on git for Windows) are read and claim the plan's place (round 79)
# 99: 97, and every part of a path lands where ``names.path_parts`` splits it (empty parts
# dropped): the root folder ``plans\`` IS the plans folder, ``plans\/tb/PLAN.yml`` claims
# ``plans/tb``'s plan file's place, a folder ``\`` is the folder it lies in (round 80)
# 101: 99, and a folder's writers are keyed by its place on a checkout (``folder_key`` folds
# every part, ``names.fold_path``): a file in a twin folder (``plans/NC``, ``plans\nb``,
# ``plans/dt.``, the plans folder's case twin ``PLANS/rr``, read by the history walk) writes
# the plan's folder; an 8.3 short-named folder's writers are matched by ``same_path``
# (round 83; 100 is perf83mem's)
# 102: a plan held E_PLAN_AMBIGUOUS keeps what the hold found (``held_from``: status,
# version, request) and its release takes it back; a status set while held is a decision
# made while held, refused E_PLAN_AMBIGUOUS by its own author (round 83)
# 103: 101 and 102 together (both landed on 2026-12-01)
# 104: a status set while held is kept as its commit and the time its key had to be valid
# (``held_from.decision``: ``commit``, ``status``, ``at``), every kind (a rejection or an abort
# too): the release judges it as that commit's (round 84)
# 106: a plan whose pinned nested plan has a YAML error hashes as its own text (round 84,
# r84nestkill), not None (with 104)
# 105: 103, and the plans folder's other spellings (``plans./``, ``plans /``, ``Plans/``,
# ``PLANS~1/``, a root file ``plans\pf\x``) are read by the history walk and ``git log``:
# their files' committers write the folder they land on, and a plan file there is kept among
# the split names (``_split_names``) as a twin claim holding the plan at that path (round 84;
# 104 left to the other round-84 fixers)
# 107: 104, 105 and 106 together (round 84)
# 109: a hold keeps every status set while held, in commit order (``held_from.decisions``:
# ``commit``, ``status``, ``blob``, ``at`` each; bounded, every withdrawal kept), each judged
# at the release as its own commit (round 85, r85heldmany; 108 left to the other fixers)
# 110: 107, and the merged branches read the plans folder's spellings as the first-parent
# line does (their notes' committers write the folder), any entry committed in a plan's
# folder (a symlink, a gitlink) makes its committer a writer, and a spelled folder emptied
# before a plan forgets its writers as the plans folder's own does (round 85, r85mergespell;
# 108 and 109 left to the other round-85 fixers)
# 111: a plan held E_UNSAFE_PATH for its own file (a symlink or gitlink PLAN.yml) keeps what
# the hold found (``held_from``, as 102's twin hold) and a regular file back ends the hold
# (round 85, r85linkheld; 108-110 left to the other round-85 helpers)
# 112: 109, 110 and 111 together (round 85; 108 unused)
# 113: an E_UNSAFE_PATH hold names the entries that hold it (``held_from.unsafe_at``): only a
# regular file at one of them ends it (a link PLAN.yaml beside a changed PLAN.yml does not)
# 114: a hold keeps the version it found (``held_from.hash``) and the withdrawals merged
# branches made while held (``held_from.side``: ``commit``, ``status``, ``hash`` each, judged
# as with no hold), applied at the release as their own commits' (round 86, r86heldmerge)
# 115: an E_UNSAFE_PATH hold ends when the folder holds one regular plan file alone, under
# either name (round 87, r87linkrename: the link removed and the plan back as PLAN.yaml stayed
# held); a link's removal keeps the row while another claim holds the folder. The rows'
# format is 113's: rebuilt so that a plan an older index held for good is read again
# 116: a status set while held in ANY plan file of the folder or of a twin folder is a held
# decision (``decisions``: ``file`` and ``hash`` each; ``held_from.files``: the other files'
# blobs last seen), mirrored to the held twin folders' plans (round 87, r87heldtwin)
# 117: the held decisions are kept for every file the hold's own rule counts as the plan's
# (``PLANS/x/``, ``plans./x/``, split names, ``plan.yml``, U+200C twins), a merged branch's
# too; a merged withdrawal of another version vetoes it. Rows as 116's: rebuilt so that a
# status an older index lost is judged again (round 88, r88held)
# 118: a merged branch's withdrawal in a file claiming a plan's place is its plan's, held
# or not when read (a hold made and ended on the branch), and one of another version set
# while that tree held it vetoes it; a release leaving a twin's withdrawal of another
# version vetoes it. Rows as 117's: rebuilt so the vetoes are found (round 89, r89held2)
# 119: a hold's touch of a claim is its maker's: what a merge brought (a twin's removal too)
# its branches' makers', a status line alone in any claim (a twin's) no writing. Rows as
# 118's: rebuilt so a merger or a held status setter is no writer (round 91, r91held)
# 120: a deletion of a claim in the held plan's own folder (``PLAN.yaml``, ``plan.yml``,
# ``PLAN<U+200D>.yml``; by ``git mv -f`` over the plan file too) is its maker's touch. Rows as
# 119's: rebuilt so the deleter is a writer (round 91, r91held2)
# 121: a removal a merge leaves that a merged branch made is its branch makers' even where
# git's join conflicted (a modify/delete resolved by ``git rm``: the merger's too), and the
# removal of a link or gitlink claim that releases an E_UNSAFE_PATH hold is its maker's
# touch. Rows as 120's: rebuilt so those deleters are writers (round 92, r92held)
# 122: a twin folder's claims are listed at the commit read from every plan folder the index
# holds or held (a twin removed by a merged branch is still a claim at the first parent), so
# its deleter is a writer. Rows as 121's: rebuilt so those deleters are writers (round 93)
# 123: a plan's twin folders are listed from the tree at the commit read, whatever they hold
# (a folder ``PLAN.yml/`` in a twin folder that was never a plan is a claim: the plan held,
# the claim's deleter a writer). Rows as 122's: rebuilt so those plans hold (round 94)
# 124: plain numbers are read by YAML 1.2's core schema alone (``1_000``, ``0b101``, ``0x_1F``,
# ``-0x10`` strings; ``.5e3`` a float): a version holding such a form hashes anew. Rows as
# 123's: rebuilt so every version's hash is the new reading's (round 95, r95values)
# 125: a merged branch's commit removing one of a plan's claims (by the hold's rule, read in
# its parent's own tree) makes its makers writers of the plan's folder and of the version
# left, held on the line or not. Rows as 124's: rebuilt so those deleters are writers (round
# 96, r96held)
# 126: ``sealing_seen`` in meta: once a sealed controller commit was read, an unsealed one
# under its name is anyone's (round 95, ``mx``). Rows as 125's: rebuilt so the flag is read
# 127: a merge whose own resolution leaves out a claim (by the hold's rule) a merged parent's
# tree held makes its makers writers of the plan's folder and of the version left. Rows as
# 126's: rebuilt so those mergers are writers (round 97, r97held)
# 128: a commit under the controller's name whose status change no controller event makes
# (a ``freeze`` setting ``rejected``) is anyone's, by its record or not (round 97, ``fx``;
# ``Lifecycle.impossible``). Rows as 127's: rebuilt so such a commit's status is a person's
# 129: an unsealed commit in the controller's record (trust on first use) is its own only
# as git alone reads it (an event with its cause, no run event), and a ``refuse`` needs an
# open approval request (round 98, r98appr; ``Lifecycle.unproven``). Rows as 128's: rebuilt
# so such a commit's status is a person's
# 130: a criss-cross merge's clean-join test asks git's own merge of the parents (every
# merge base, joined as git joins them), not one base (round 98, r98held). Rows as 129's:
# rebuilt so such a merge's dropping merger is a writer
# 131: a sealed commit adopted on trust (``--take-over``: no key here verifies it) is its
# own only as git alone reads it, as 129's unsealed ones (round 99, atk99d;
# ``OwnCommits.on_trust``). Rows as 130's: rebuilt so such a commit's status is a person's
# 132: a withdrawal's identity is remembered as an approval's is, and another hand's copy of
# a decision is a replay whatever its committer date (round 107 samepass-crossplan-copy,
# round 108 laterpass-withdrawal-copy): rebuilt so past copies are judged so
# 133: under ``identity: committer`` a withdrawal is its committer's, never a replay of the
# author's (round 116, committer-withdrawal-read-as-replay): rebuilt so ignored ones count
# 134: a plan's ``approvers``, every ``Approved-By:`` of its last event naming one (round
# 117, quorum-approvers-not-shown): rebuilt so a quorum's run names all its voters
# 135: an entitled withdrawal counts whoever copied it and whenever dated, and a plan first
# seen ``rejected`` is rejected (round 117, fix117w): rebuilt so ignored ones count
# 136: an allowed approver's rejection of a draft is a withdrawal, its version vetoed (round
# 119, draft-rejection-ignored): rebuilt so ignored ones count
# 137: a withdrawn version is vetoed by its hash as frozen too (legacy references converted;
# round 120, draft-legacy-veto-missed), and a rejection an entitled person committed in a
# PLAN.md/PLAN.json source before its conversion counts (source-rejection-dropped-at-
# conversion): rebuilt so both are found in history
# 138: a rejection or abort a merged commit made is that commit's, never the merger's, and a
# veto keeps who made it (an approver's binds every pinning parent, a producer's only her
# own: round 120, merged-rejection-charged-to-merger, child-author-vetoes-pinning-parent)
# 140 (139 is another branch's): each content's originators (makings afresh, a re-making
# counted for nobody) and each plan's ``versions``: who may withdraw a plan reads them
# (round 119, author-withdrawal-lost-to-another-copy): rebuilt so an author's ignored
# withdrawal counts
# 143: a merged branch's rejection or abort is judged where its merge is on the first-parent
# line, after the merge's own changes, not at the scan's end (round 122, merged-draft-
# rejection-judged-after-submit): rebuilt so one read in the same scan as a later commit of
# the line is judged as a pass between them (and the audit) judge it; and a merged branch's
# making counts only when its merge keeps that content (round 35 ``ours-copy``: content an
# ``-s ours`` merge discarded made its writer a producer, whose rejection vetoed it by hash)
# 144 (fix124o): each content's originators per plan folder, the
# makings afresh AT that folder: who may withdraw a plan reads them before the originators
# everywhere (round 122, author-withdrawal-lost-to-a-raced-copy: a copy raced in at another
# folder emptied the originators): rebuilt so an author's ignored withdrawal counts
# 145: 143 and 144 together (both merged on 2026-12-07)
# 146 (fix125o): a move carries the moved plan's originators at its folder (and the versions
# it was edited from) to its new folder (round 124, author-withdrawal-lost-to-race-then-
# move: a raced plan moved to a folder of no making fell back to the originators
# everywhere, nobody): rebuilt so an author's ignored withdrawal counts
# 147 (runs-once across folders): a cold scan notes the starts made under the other plans
# folders the controller's policy records name, each in its stretch (HistoryIndex._starts_elsewhere)
# 148 (fix127n): a merge among the commits a merge brought (a merge of a merge, at any depth)
# wrote only content no parent of its own held and it did not bring (round 126, inner-merger-
# counted-as-writer: Bob's inner merge made him the plan's writer): rebuilt so those mergers
# are no changers (the authors memory keeps whom an earlier scan counted: SPEC §15)
# 149 (fix128a): each plan's ``versions`` lists every content a version was made of (a merge's
# every parent's) and what merged branches edited it from before the line held it (round 127,
# author-right-lost-to-edit-on-merged-branch: the agent's v1 edited by Alice on its branch,
# merged --no-ff, left the agent no author of v2): rebuilt so an author's ignored withdrawal
# counts
# 150 (fix129a): a ``Co-authored-by:`` credit names its person anywhere in a commit's message,
# the subject too, after any prefix, blank or invisible character (round 128, coauthor-credit-
# read-only-at-line-start: one in the subject, quoted or after words named nobody, so the
# credited Alice approved and credited Mallory's withdrawal was ignored): rebuilt so those
# co-authors are the writers, changers and producers they are
# 151 (fix129p): history before the controller's first policy record is judged by that
# record, not today's config (round 128, pre-record-withdrawal-judged-by-todays-config), and a
# cold scan keeps the versions withdrawn under each other plans folder the records name:
# rebuilt so withdrawals read under the old rule are judged again

#: PlanState's fields, in order (the JSON of a row names them as ``asdict`` did).
_FIELDS = tuple(f.name for f in fields(PlanState))


def _encode(state: PlanState) -> str:
    """A plan's row: the JSON of ``asdict(state)``, written from the state's own values
    (``asdict`` deep-copies each list and dict only for ``json.dumps`` to read it: 1.3 s of
    a cold scan's save of 10,000 plans). A state holds no dataclass below it, and the JSON
    of a tuple is a list's, so the text is the same."""
    return json.dumps({name: getattr(state, name) for name in _FIELDS})


class IndexStore:
    """The per-plan index, in memory, persisted to sqlite after each scan."""

    def __init__(
        self,
        path: Path | None,
        *,
        plans_dir: str,
        controller_email: str,
        may_withdraw: Callable[..., bool] | None = None,
        clock: Callable[[], float] | None = None,
        max_plan_bytes: int = DEFAULT_MAX_BYTES,
        own_commit: Callable[[str], bool] | None = None,
        on_trust: Callable[[str], bool] | None = None,
        memory: Path | None = None,
    ) -> None:
        #: Did the controller make this commit (by its record, not its name)? None: a commit
        #: under the controller's identity is its (read-only use without a record).
        self.own_commit = own_commit
        #: Was a commit of that record adopted on trust (no key of this state verified it)?
        #: Such a one stands only with its cause on the branch, sealed or not (round 99).
        self.on_trust = on_trust
        #: Plan versions larger than this are never parsed (limits.max_plan_bytes).
        self.max_plan_bytes = max_plan_bytes
        #: Called with (plan id, note) for each coded problem history finds (E_UNSAFE_PATH,
        #: E_PLAN_TOO_LARGE, E_PLAN_AMBIGUOUS, ...): the controller logs it.
        self.on_problem: Callable[[str, str], None] | None = None
        self.plans_dir = plans_dir.strip("/") or "."
        self.controller_email = controller_email.lower()
        #: Who may reject or abort a plan (SPEC §4); None: anyone (tests of the index alone).
        self.may_withdraw = may_withdraw
        #: The verifier's clock (the live controller: time.time): a human commit's time
        #: later than it is a lie, and never makes a freeze look younger (max_age).
        self.clock = clock

        self._db = sqlite3.connect(str(path) if path else ":memory:", check_same_thread=False)
        self._meta: dict[str, str | None] = {}  # meta rows read or written, by key
        #: The jobs table, decoded (see jobs()); None until first asked for.
        self._jobs: dict[str, dict[str, Any]] | None = None
        #: inside jobs_together(): set_job leaves the commit to the block's end
        self._together = False
        # WAL: one fsync per durable commit instead of a rollback journal's several. The plan
        # index is a cache rebuilt from git, so its saves need not be fsynced (NORMAL);
        # set_job, which a crash must not lose, commits with FULL.
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(
            "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);"
            "CREATE TABLE IF NOT EXISTS plans(plan_id TEXT PRIMARY KEY, data TEXT);"
            "CREATE TABLE IF NOT EXISTS jobs(plan_id TEXT PRIMARY KEY, data TEXT);"
        )
        self._attach_memory(path, memory)
        if self.meta("version") not in (None, INDEX_VERSION):
            self.reset()
        self._load()
        self._facts: dict[str, BlobFacts] = {}
        #: Withdrawals found on merged branches during a scan (Lifecycle._side_withdrawal).
        self._side: list[Any] = []
        #: How many times a rewritten history forced a rebuild (callers drop their caches).
        self.rebuilds = 0

    # --- persistence ------------------------------------------------------------------

    def _attach_memory(self, path: Path | None, memory: Path | None) -> None:
        """What history showed that a rewrite can erase (every content's authors, the
        approvals already seen, the versions withdrawn, each version's first freeze) lives in
        ``memory`` (the state directory's ``memory.sqlite``; by default ``<index>.memory``
        beside the index file): the index is a cache, rebuilt from git when
        deleted, but these are not in git any more once a rewrite erased them (round 27: a
        deleted index.sqlite forgot an erased writer, an erased withdrawal and a first
        freeze). An index of the layout before keeps its rows: they move there."""
        if memory is None and path is not None:
            memory = path.with_name(f"{path.stem}.memory{path.suffix}")
        where = str(memory) if memory is not None else ":memory:"
        self._db.execute("ATTACH DATABASE ? AS memory", (where,))
        self._db.execute("PRAGMA memory.journal_mode=WAL")
        self._db.execute("PRAGMA memory.synchronous=NORMAL")
        for table, columns in _MEMORY_TABLES.items():
            self._db.execute(f"CREATE TABLE IF NOT EXISTS memory.{table}({columns})")
            found = self._db.execute(
                "SELECT 1 FROM main.sqlite_master WHERE type='table' AND name=?", (table,)
            ).fetchone()
            if found:  # the layout before: its rows move, then the table goes
                self._db.execute(f"INSERT OR IGNORE INTO memory.{table} SELECT * FROM main.{table}")
                self._db.execute(f"DROP TABLE main.{table}")
        self._db.commit()

    def _load(self) -> None:
        """The plans as last saved (also after a scan failed part way through applying)."""
        #: One copy of each set of authors (author_set); the plans' own values are shared
        #: through a pool dropped after loading (most of its keys are held once).
        self._pool: dict[Any, Any] = {}
        pool: dict[Any, Any] = {}
        self.plans: dict[str, PlanState] = {}
        for (data,) in self._db.execute(_PLANS):
            # Shared as it is read: the decoded duplicates die before the next plan is read
            # and their memory holds it (sharing after loading them all left 50,000 plans'
            # duplicates as holes among the kept values: 35 MB the arenas could not give back).
            state = PlanState(**json.loads(data))
            state.share(pool)
            self.plans[state.plan_id] = state
        del pool
        self._dirty: set[str] = set()
        #: Everyone who ever produced each hashed content, on any path (never forgotten:
        #: content moved, copied, deleted and brought back keeps its authors).
        hashes = {s.hash: s.hash for s in self.plans.values() if s.hash}  # one copy each

        def loaded(kind: str, rest: str) -> str:  # a version key's hash held once too
            return hashes.get(rest, rest) if kind == "version" else self._held_string(kind, rest)

        self.authors = AuthorIndex(loaded)
        for h, d in self._db.execute("SELECT hash, data FROM memory.authors"):
            self.authors[hashes.get(h, h)] = self.author_set(json.loads(d))
        self.authors.canon = self._held_string
        hashes.clear()  # (the closure keeps the dict, not its entries)
        del loaded
        self._dirty_authors: set[str] = set()
        #: Every author key is saved at the next save (a cold scan: nearly all are new,
        #: and a set of their keys held each one's string to the scan's end; perf83mem).
        self._authors_all_dirty = False
        #: Approval identities (author, author time, subject; with a decision: plan, status)
        #: -> "<commit> <what it was for> <hand>[ lapsed]" (Lifecycle._seen_approval).
        self.approval_ids: dict[str, str] = dict(
            self._db.execute("SELECT key, sha FROM memory.approvals").fetchall()
        )
        self._new_approval_ids: dict[str, str] = {}
        #: Versions withdrawn before they ran, by plan hash -> the withdrawal (plan, commit,
        #: by, time) as JSON: never approved again under any name (kept through rewrites).
        self.withdrawn: dict[str, str] = dict(
            self._db.execute("SELECT hash, data FROM memory.withdrawn").fetchall()
        )
        self._new_withdrawn: dict[str, str] = {}
        #: Frozen hashes started on the branch -> the first start ("<commit> <plan>"): by the
        #: controller's start commits, and by any start commit under its name (kept through
        #: rewrites, as executed.jsonl is: a version runs at most once; see note_start).
        self.started: dict[str, str] = dict(
            self._db.execute("SELECT hash, data FROM memory.started").fetchall()
        )
        self._new_started: dict[str, str] = {}
        #: First freezes found since the last save (the rest are read from sqlite when asked:
        #: one row per version ever frozen is too many to hold; see :meth:`freezes`).
        self._new_freezes: dict[str, tuple[int | None, int | None]] = {}
        #: Producers found since the last save (the rest are read when asked: producers_of).
        self._new_producers: dict[str, frozenset[str]] = {}
        #: Originators found since the last save (:meth:`originators_of`): makers, commits.
        self._new_originators: dict[str, tuple[frozenset[str], tuple[str, ...]]] = {}
        #: Originators per plan folder found since the last save (:meth:`origins_at`).
        self._new_origins_at: dict[str, frozenset[str]] = {}
        #: Makings found on merged branches (Lifecycle): (side commit, hash, makers, the
        #: file written, plan folder) until placed, then (position of their merge on the
        #: first-parent line, hash, makers, side commit, plan folder) until that merge is
        #: applied (one whose merge discards the content is dropped); and the positions of
        #: the line's commits.
        self._side_found: list[tuple[str, str, set[str], str, str | None]] = []
        self._side_made: list[tuple[int, str, set[str], str, str | None]] = []
        #: Decisions taken back on merged branches (Lifecycle._side_lapse, round 64): (side
        #: commit, approval identity, "<commit> <hand>" of the decision) until placed, then
        #: (position of their merge, identity, the same) until that merge is applied.
        self._side_lapse_found: list[tuple[str, str, str]] = []
        self._side_lapses: list[tuple[int, str, str]] = []
        self._line_at: dict[str, int] = {}
        self.controller_time = int(self.meta("controller_time") or 0)
        #: Whether a sealed commit under the controller's name was read (by git alone): from
        #: then on an unsealed one is anyone's (round 95, ``mx``; Lifecycle._is_controller).
        self.sealing_seen = bool(self.meta("sealing_seen"))
        #: Plan bytes parked where the index reads no plan (Lifecycle._follow_parked, round
        #: 50): path -> the writers its bytes carry; and the commit they were followed to.
        self._parked: dict[str, set[str]] = {
            path: set(who) for path, who in json.loads(self.meta("parked") or "{}").items()
        }
        self._parked_at: str | None = self.meta("parked_at") or None
        #: The last commit of each EXECUTION_LOG.md committed where the index held no plan
        #: (plan id -> commit): a plan put there later takes it as its ``log_commit`` (round
        #: 67: a log the agent committed before the plan file is a file of that plan's record).
        self._loose_logs: dict[str, str] = json.loads(self.meta("loose_logs") or "{}")
        #: The paths under the plans folder whose own name holds a backslash, as committed
        #: (round 77: git for Windows writes ``plans/fy\\PLAN.yml`` into ``plans/fy``): a
        #: plan's folder is walked for them only when one of them lands in it.
        self._split_names: set[str] = set(json.loads(self.meta("split_names") or "[]"))
        #: The commits a scan will apply, in order (Lifecycle._pair_ahead asks git for the
        #: pairings of those that make plans in batches), and the pairings asked ahead.
        self.upcoming: list[Any] = []
        self._ahead_at = 0
        self._paired: dict[str, list[tuple[str, str, str, str | None]]] = {}
        self._uncapped = {pid for pid, st in self.plans.items() if st.frozen_uncapped}
        #: Decisions whose lapse no controller commit has followed yet (Lifecycle
        #: ._mark_decision_lapsed, round 66): the next one bounds the lapse's date, and dates
        #: another hand's lapse (round 67). Kept across passes and rewrites: a pass that saw
        #: the lapse is not always the one that sees the controller commit after it.
        self._lapses_open: set[str] = set(json.loads(self.meta("lapses_open") or "[]"))
        #: Plans that may need the controller (see pending()); kept up to date on changes.

        self._attention = {pid for pid, state in self.plans.items() if _needs_attention(state)}

    def author_set(self, emails: Iterable[str]) -> frozenset[str]:
        """The one copy of this set of authors (most contents share theirs)."""
        found = frozenset(emails)
        shared: frozenset[str] = self._pool.setdefault(("authors", found), found)
        return shared

    def meta(self, key: str) -> str | None:
        """A ``meta`` row, read once: this object is its only writer (the state directory's
        lock), and a burst asks ``last_commit`` per plan while the workers' job rows hold
        the connection (a wait of a tenth of the main thread, issue 17)."""
        if key not in self._meta:
            row = self._db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
            self._meta[key] = row[0] if row else None
        return self._meta[key]

    def set_meta(self, key: str, value: str | None) -> None:
        self._db.execute("INSERT OR REPLACE INTO meta VALUES(?, ?)", (key, value))
        self._meta[key] = value

    def reset(self) -> None:
        """Forget what a rewritten history may have changed (jobs this controller owns are
        kept, and so are the authors of every content, the approvals already seen and the
        versions withdrawn and the first freeze of each version: they happened, and a rewrite
        must not make the index forget who wrote a plan, let an approval count again, lift a
        veto or make a version younger; SPEC §15)."""
        self._db.execute("DELETE FROM plans")
        self._db.execute(
            "DELETE FROM meta WHERE key IN ('last_commit', 'controller_time', 'parked', "
            "'parked_at', 'loose_logs', 'sealing_seen')"
        )
        for key in ("last_commit", "controller_time", "parked", "parked_at", "loose_logs",
                    "split_names", "sealing_seen"):  # fmt: skip
            self._meta[key] = None
        self.set_meta("version", INDEX_VERSION)
        self._db.commit()
        self.plans = {}
        self._parked, self._parked_at = {}, None
        self._loose_logs = {}
        self._split_names = set()
        self._pool = {}
        self._dirty = set()
        self._attention = set()
        self.controller_time = 0
        self.sealing_seen = False
        self._uncapped = set()

    def author_dirty(self, key: str) -> None:
        """The authors of ``key`` changed: saved at the next save."""
        if not self._authors_all_dirty:
            self._dirty_authors.add(key)

    def _held_string(self, kind: str, rest: str) -> str:
        """A plan's id as the plan holds it, for an author key made from it (else ``rest``)."""
        state = self.plans.get(rest) if kind != "version" else None
        return state.plan_id if state is not None else rest

    def save(self, last_commit: str) -> None:
        # A generator: the rows are encoded one at a time as sqlite takes them (a controller
        # commit capping 50,000 human freezes otherwise held 47 MB of JSON at once).
        rows = ((pid, _encode(self.plans[pid])) for pid in self._dirty if pid in self.plans)
        gone = [(pid,) for pid in self._dirty if pid not in self.plans]
        self._db.executemany("INSERT OR REPLACE INTO plans VALUES(?, ?)", rows)
        self._db.executemany("DELETE FROM plans WHERE plan_id=?", gone)
        self._db.executemany(
            "INSERT OR REPLACE INTO memory.authors VALUES(?, ?)",
            # a generator too: a cold scan's 80,000 rows of 20,000 plans held 10 MB (perf83mem)
            (
                (h, json.dumps(sorted(self.authors[h])))
                for h in (self.authors if self._authors_all_dirty else self._dirty_authors)
            ),
        )
        self._db.executemany(
            "INSERT OR REPLACE INTO memory.approvals VALUES(?, ?)",
            list(self._new_approval_ids.items()),
        )
        self._db.executemany(
            "INSERT OR REPLACE INTO memory.withdrawn VALUES(?, ?)",
            list(self._new_withdrawn.items()),
        )
        self._db.executemany(
            "INSERT OR IGNORE INTO memory.started VALUES(?, ?)", list(self._new_started.items())
        )
        self._db.executemany(
            "INSERT OR REPLACE INTO memory.freezes VALUES(?, ?, ?)",
            [(h, first, ctl) for h, (first, ctl) in self._new_freezes.items()],
        )
        self._db.executemany(
            "INSERT OR REPLACE INTO memory.producers VALUES(?, ?)",
            [(h, json.dumps(sorted(who))) for h, who in self._new_producers.items()],
        )
        self._db.executemany(
            "INSERT OR REPLACE INTO memory.originators VALUES(?, ?)",
            [
                (h, json.dumps({"who": sorted(who), "at": list(at)}))
                for h, (who, at) in self._new_originators.items()
            ],
        )
        self._db.executemany(
            "INSERT OR REPLACE INTO memory.origins_at VALUES(?, ?)",
            [(key, json.dumps(sorted(who))) for key, who in self._new_origins_at.items()],
        )
        self._dirty_authors.clear()
        self._authors_all_dirty = False
        self._new_producers.clear()
        self._new_originators.clear()
        self._new_origins_at.clear()
        self._new_approval_ids.clear()
        self._new_withdrawn.clear()
        self._new_started.clear()
        self._new_freezes.clear()
        self.set_meta("controller_time", str(self.controller_time))
        self.set_meta("sealing_seen", "1" if self.sealing_seen else "")
        self.set_meta("parked", json.dumps({p: sorted(w) for p, w in sorted(self._parked.items())}))
        self.set_meta("parked_at", self._parked_at or "")
        self.set_meta("lapses_open", json.dumps(sorted(self._lapses_open)))
        self.set_meta("loose_logs", json.dumps(self._loose_logs, sort_keys=True))
        self.set_meta("split_names", json.dumps(sorted(self._split_names)))
        self.set_meta("last_commit", last_commit)
        self.set_meta("version", INDEX_VERSION)
        self._db.commit()
        self._refresh_attention()
        self._dirty.clear()

    def freezes(self, plan_hash: str) -> tuple[int | None, int | None]:
        """When this version was first frozen on any path, ever (a human freeze's time once
        capped, or the controller's), and when the controller first froze it (its own clock):
        kept through moves, copies, deletions and rewrites (``max_age`` counts from the first;
        an approval must be written after the second)."""
        found = self._new_freezes.get(plan_hash)
        if found is not None:
            return found
        row = self._db.execute(
            "SELECT first, controller FROM memory.freezes WHERE hash=?", (plan_hash,)
        ).fetchone()
        return (row[0], row[1]) if row else (None, None)

    def read_by_limit(self, repo: Any, limit: int) -> None:
        """Read the plan versions from here on by ``limit`` (``limits.max_plan_bytes``): the
        audit follows the limit of the policy in force at each commit, as the controller read
        them then (round 128: the audit read the whole history by one limit, ``--config`` by
        today's, so a limit lowered after a plan ran made the controller's own freeze, start
        and complete of it unexplained). The versions already read are judged again by their
        size: one ``cat-file --batch-check`` when the limit is lowered; raised, those left
        unread are read when next asked. A limit changes rarely: nothing is asked otherwise."""
        was = self.max_plan_bytes
        if limit == was:
            return
        self.max_plan_bytes = limit
        facts = self._facts
        for sha in [s for s, found in facts.items() if (found.problem or "").startswith(_BIG)]:
            del facts[sha]  # read again by the new limit when next asked
        if limit < was and facts:
            for sha, size in repo.blob_sizes(list(facts)).items():
                if size > limit:
                    facts[sha] = too_large(size, limit)

    def note_start(self, plan_hash: str | None, plan_id: str, commit: str) -> None:
        """A start commit on the branch started ``plan_hash`` as ``plan_id``: the first one
        is kept (SPEC §15, a frozen hash runs at most once). The history scan calls it for
        every start commit under the controller's name as it applies it, whatever the state
        directory holds: the controller (cold start, rebuild, its own new commits), ``check``
        and the audit learn what ran from the same commits (round 50)."""
        if plan_hash and plan_hash not in self.started:
            self.started[plan_hash] = self._new_started[plan_hash] = f"{commit} {plan_id}"

    def ran_as(self, plan_hash: str | None) -> str | None:
        """Where ``plan_hash`` first started on the branch (``plan (start sha)``), if it did."""
        found = self.started.get(plan_hash or "")
        if found is None:
            return None
        commit, _, plan_id = found.partition(" ")
        return f"{plan_id} (start {commit[:12]})"

    def note_freeze(self, plan_hash: str, at: int, by_controller: bool) -> None:
        """A freeze of ``plan_hash`` at ``at`` (0: a time that cannot be known, not noted)."""
        if not at:
            return
        first, ctl = self.freezes(plan_hash)
        new = (
            at if first is None else min(first, at),
            (at if ctl is None else min(ctl, at)) if by_controller else ctl,
        )
        if new != (first, ctl):
            self._new_freezes[plan_hash] = new

    def producers_of(self, plan_hash: str) -> frozenset[str] | None:
        """Who may withdraw this content as its author: the people who made it in *every*
        commit that made it (kept through rewrites; see :meth:`note_producers`). None for a
        content no commit has made yet."""
        found = self._new_producers.get(plan_hash)
        if found is not None:
            return found
        row = self._db.execute(
            "SELECT data FROM memory.producers WHERE hash=?", (plan_hash,)
        ).fetchone()
        return self.author_set(json.loads(row[0])) if row else None

    def note_producers(self, plan_hash: str, who: Iterable[str]) -> None:
        """A commit made ``plan_hash`` (wrote it where the file held other content), ``who``
        being its makers: the content's producers are the people in every such commit. Two
        commits that made the same content independently (neither holds the other: a copy of
        an open pull request's plan landed on the branch first, a cherry-pick, a draft; round
        35) cannot be told from a copy, so only someone in both may withdraw it as its
        author (an allowed approver always may). The intersection is the same in any order,
        so a cold scan, which reads merged branches first, agrees with a live controller."""
        found = self.producers_of(plan_hash)
        made = self.author_set(who) if found is None else self.author_set(found & set(who))
        if made != found:
            self._new_producers[plan_hash] = made

    def _origins(self, plan_hash: str) -> tuple[frozenset[str], tuple[str, ...]] | None:
        found = self._new_originators.get(plan_hash)
        if found is not None:
            return found
        row = self._db.execute(
            "SELECT data FROM memory.originators WHERE hash=?", (plan_hash,)
        ).fetchone()
        if row is None:
            return None
        data = json.loads(row[0])
        return self.author_set(data["who"]), tuple(data["at"])

    def originators_of(self, plan_hash: str) -> frozenset[str] | None:
        """Who made this content as its author, for the plans that hold it (who may withdraw
        a plan: :meth:`Lifecycle.withdrawers`): the people in every commit that made it
        afresh, none of them a re-making, a commit that descends from a making counted
        (round 119, ``author-withdrawal-lost-to-another-copy``: anyone's copy at another
        slug, revert back to it or re-add of it, all made after the author's commit and on
        top of it, removed the author's right to withdraw her own plan, as they rightly
        remove it from :meth:`producers_of`, the veto by hash). Two makings neither of which
        holds the other (round 35's race: a copy of an open pull request's plan landed
        first) still keep only the people in both. None for a content nobody made yet."""
        found = self._origins(plan_hash)
        return found[0] if found is not None else None

    def note_originators(
        self,
        plan_hash: str,
        who: Iterable[str],
        commit: str,
        descends: Callable[[str, str], bool],
    ) -> bool:
        """``commit`` made ``plan_hash``, ``who`` being its makers: the first making counts,
        and a later one only when it descends from none counted (``descends(ancestor,
        commit)``): then only someone in both stays (:meth:`originators_of`). Whether the
        making was one afresh (counted: the first, or one descending from none counted)."""
        found = self._origins(plan_hash)
        if found is None:
            self._new_originators[plan_hash] = (self.author_set(who), (commit,))
            return True
        makers, at = found
        if commit in at:
            return True  # counted already (a history read again after a rebuild)
        if any(descends(sha, commit) for sha in at):
            return False  # a re-making (a revert, a re-add, a copy): it removes nobody
        self._new_originators[plan_hash] = (self.author_set(makers & set(who)), (*at, commit))
        return True

    def origins_at(self, folder: str, plan_hash: str) -> frozenset[str] | None:
        """Who made this content afresh AT the plan folder ``folder`` (the people in every
        making afresh there, :meth:`note_originators`): an author of the plan there, whoever
        made the same content elsewhere (round 122, ``author-withdrawal-lost-to-a-raced-
        copy``: a copy of a pull request's plan raced in at another folder, made on top of
        none of its commits, emptied the originators everywhere, and its author could never
        withdraw it). A move brings its source folder's (:meth:`carry_origins_at`, round 124).
        None when no making afresh was ever at that folder, nor brought by a move (a copy)."""
        key = f"{folder_key(folder)}\0{plan_hash}"
        found = self._new_origins_at.get(key)
        if found is not None:
            return found
        row = self._db.execute("SELECT data FROM memory.origins_at WHERE key=?", (key,)).fetchone()
        return self.author_set(json.loads(row[0])) if row else None

    def note_origins_at(self, folder: str, plan_hash: str, who: Iterable[str]) -> None:
        """A making afresh of ``plan_hash`` at the plan folder ``folder`` by ``who``: only
        someone in every such making there stays (two at one path: git cannot tell who
        copied whom, round 35)."""
        found = self.origins_at(folder, plan_hash)
        made = self.author_set(who) if found is None else self.author_set(found & set(who))
        if made != found:
            self._new_origins_at[f"{folder_key(folder)}\0{plan_hash}"] = made

    def carry_origins_at(self, folder: str, plan_hash: str, who: Iterable[str]) -> None:
        """A move brought a plan holding ``plan_hash`` to the plan folder ``folder``, ``who``
        being its originators at the folder it left (:meth:`origins_at` there): they are its
        originators here (round 124, ``author-withdrawal-lost-to-race-then-move``: the new
        folder had no making, so the originators everywhere, which a race made nobody, were
        read). It replaces what an earlier plan of the same content left at this folder
        (the caller keeps the folder's own where the move lands onto a plan file)."""
        made = self.author_set(who)
        if made != self.origins_at(folder, plan_hash):
            self._new_origins_at[f"{folder_key(folder)}\0{plan_hash}"] = made

    def touch(self, plan_id: str) -> None:
        self._dirty.add(plan_id)

    def jobs(self) -> dict[str, dict[str, Any]]:
        """The jobs this controller started, by plan id: decoded once, then kept in step with
        :meth:`set_job` (a pass asks for them per executing plan; decoding every row each
        time made a thousand running plans cost a million decodes per pass)."""
        if self._jobs is None:
            rows = self._db.execute("SELECT plan_id, data FROM jobs")
            self._jobs = {pid: json.loads(data) for pid, data in rows}
        return self._jobs

    @contextmanager
    def jobs_together(self) -> Iterator[None]:
        """:meth:`set_job` calls inside share one durable transaction, committed (FULL) when
        the block ends, also when it fails: the jobs of one batched commit, one fsync
        instead of one each. Nothing may rely on a row's durability inside the block."""
        if self._together:
            yield
            return
        self._db.commit()  # the safety level can only change outside a transaction
        self._db.execute("PRAGMA synchronous=FULL")
        self._together = True
        try:
            yield
        finally:
            self._together = False
            try:
                self._db.commit()
            except BaseException:
                self._jobs = None  # the table is the truth: read it again
                raise
            finally:
                self._db.execute("PRAGMA synchronous=NORMAL")

    def set_job(self, plan_id: str, job: dict[str, Any] | None) -> None:
        if self._together:
            self._write_job(plan_id, job)
            return
        self._db.commit()  # the safety level can only change outside a transaction
        self._db.execute("PRAGMA synchronous=FULL")
        try:
            self._write_job(plan_id, job)
        finally:
            self._db.execute("PRAGMA synchronous=NORMAL")

    def _write_job(self, plan_id: str, job: dict[str, Any] | None) -> None:
        try:
            if job is None:
                self._db.execute("DELETE FROM jobs WHERE plan_id=?", (plan_id,))
            else:
                row = (plan_id, json.dumps(job))
                self._db.execute("INSERT OR REPLACE INTO jobs VALUES(?, ?)", row)
            if not self._together:
                self._db.commit()
        except BaseException:
            self._jobs = None  # the table is the truth: read it again
            raise
        else:
            jobs = self.jobs()
            if job is None:
                jobs.pop(plan_id, None)
            else:
                jobs[plan_id] = json.loads(json.dumps(job))

    def close(self) -> None:
        self._db.close()

    def pending(self) -> Iterator[PlanState]:
        """Plans the controller may have to act on (everything else is settled), by id."""
        self._refresh_attention()
        for plan_id in sorted(self._attention):
            yield self.plans[plan_id]

    def _refresh_attention(self) -> None:
        for plan_id in self._dirty:
            state = self.plans.get(plan_id)
            if state is not None and _needs_attention(state):
                self._attention.add(plan_id)
            else:
                self._attention.discard(plan_id)
