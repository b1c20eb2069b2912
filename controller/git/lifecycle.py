"""The plan lifecycle (SPEC §4) applied to one first-parent commit at a time.

A controller commit (authored by ``identity.email``) sets the status; a human commit makes a
transition that :func:`controller.approval.approvals.classify` judges, so an illegal status is
ignored (and reported) and the plan keeps its *effective* status. Per plan it keeps the
identities (author and committer emails) of every commit that changed the plan's hashed
content, including commits a merge brought in through its second parent, so self-approval is
checked without walking history again.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import re
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import PurePosixPath
from typing import Any

from controller.approval import approvals
from controller.approval.approvals import Transition
from controller.display import visible
from controller.errors import BlobTooLarge, PlangateError
from controller.git.gitrepo import CommitRecord, FileChange, GitRepo
from controller.git.indexstore import IndexStore
from controller.git.ownrecord import EXECUTION_EVENTS, other_name
from controller.git.planstate import (
    LOG_NAME,
    NOT_A_FILE,
    BlobFacts,
    EventSink,
    HistoryEvent,
    PlanState,
    _content_changed,
    _same_hash,
    facts_of,
    file_key,
    folder_key,
    history_paths,
    is_text,
    path_name,
    plan_id_of,
    too_large,
    version_key,
)
from controller.git.records import (
    CLOSES_START,
    EVENT_TRAILER,
    RUN_START,
    PlanEvent,
    batch_groups,
    plan_event,
    plan_named,
    record_events,
    status_unexplained,
    trailer_values,
)
from controller.git.twins import FolderTwins, Listing, SeenFolders, add_held
from controller.plan import hashing, likeness, yamlio
from controller.plan.names import (
    fold,
    fold_path,
    is_log_twin,
    log_claims,
    log_twins,
    path_parts,
    plan_file_claims,
    same_name,
    same_path,
    short_named,
    spelled_under,
    split_files,
    twin_folders,
)
from controller.plan.plans import MAX_PATH_PARTS, PLAN_FILES, SOURCE_FILES, unsafe_name
from controller.settings import IdentityAliases

_APPROVED_STATES = ("executing", "awaiting_approval", "completed", "failed", "aborted")
#: The controller's events of a run: its start, and what writes its ``execution:`` block.
RUN_EVENTS = EXECUTION_EVENTS | {"start"}
#: Where a plan's run is under way: only a run executing has an outcome or checkpoint to
#: record. A run paused at its gate (``awaiting_approval``) is ended only by what the
#: lifecycle lets the controller do to a paused plan: a resume start after the gate's
#: approval (the plan ``approved`` by then), or an abort answering a request (a rejection or
#: an abort by an allowed aborter); a lapse of the gate approval commits nothing (round 67).
_RUNNING = "executing"
_PAUSED = "awaiting_approval"
#: Where a plan stands when a refusal has a cause: an approval request open (round 98).
_ASKED = "approved"
#: Where a refused gate or resume approval leaves the plan (else ``pending_approval``).
_REFUSED_BACK = frozenset({"awaiting_approval", "failed"})
#: The run events another host can make of a run executing on the branch (round 51: a
#: rebuilt host, with a new state directory and so without this run's journal, adopts the
#: run and ends it E_ACTION_IN_DOUBT, or records the abort asked for; a resume is its own
#: start). Progress (``complete``, ``checkpoint``, ``await-approval``) needs the run's
#: journal: one not the controller's own is anyone's (round 66).
TAKE_OVER_EVENTS = frozenset({"start", "fail", "abort"})
#: The status each of those events writes.
_TAKE_OVER_STATUS = {"start": "executing", "fail": "failed", "abort": "aborted"}


def unmatched_event(event: str, status: str | None, asked: bool) -> bool:
    """Whether a controller ``event`` of a plan in ``status`` has no cause on the branch,
    so that no controller made it (one rule for every run event, rounds 65-67): an outcome
    or checkpoint ends or marks a run it started and that is executing (not one paused at
    its gate: round 67); an abort answers an abort request (``asked``, or the plan
    ``aborted`` by an allowed aborter's own commit: a withdrawal before it ran). Other
    events (a freeze, a start) are judged by what they change (the audit's
    ``controller-unexplained`` and ``start-without-approval``). A refusal answers an
    approval request: the plan ``approved`` (``status``: :func:`refusal_stands`) and not yet
    acted on; one of a plan nobody asked for is no controller's (round 98, ``rf``: an
    unsealed ``refuse`` setting a never-started plan ``failed`` vetoed it)."""
    if event == "abort":
        return not asked and status != "aborted"
    if event == "refuse":
        return status != _ASKED
    return event in EXECUTION_EVENTS and status != _RUNNING


def refusal_stands(state: PlanState | None) -> str | None:
    """Where a plan stands for the cause of a refusal: ``approved`` while an approval request
    is open (the index's ``request``), else its status (:func:`unmatched_event`)."""
    if state is None:
        return None
    return _ASKED if state.request is not None else (state.status or "")


def judged_status(state: PlanState | None) -> str | None:
    """The plan's status as the controller has judged it: while an approval request is open
    (``approved`` committed, no pass has decided it yet) the status it was asked from
    (``pending_approval``, ``awaiting_approval`` or ``failed``), else its status. What MCP
    ``wait`` answers as a change (round 118, ``unjudged-self-approval-answered``: the agent's
    own ``approved`` was answered ``changed`` before the pass refused it)."""
    if state is None:
        return None
    if state.status == "approved" and state.request is not None:
        return _ASKED_FROM.get(str(state.request.get("kind") or ""), "pending_approval")
    return state.status


#: Where each kind of approval request was asked from (:data:`approvals.APPROVED_FROM`).
_ASKED_FROM = {kind.value: status for kind, status in approvals.APPROVED_FROM.items()}


def takes_over(event: str | None, own: bool) -> bool:
    """Whether a run event after a controller's start moves the run on without it: a later
    start by anyone, or an end another controller could make (:data:`TAKE_OVER_EVENTS`)."""
    return event == "start" or (not own and event in TAKE_OVER_EVENTS)


def moves_run_on(event: str | None, status: str | None, writes: str | None) -> bool:
    """Whether a run event under the controller's name that is not its own (by its record,
    or by git alone) still moves the plan's run on: the one rule the take-over check
    (:func:`takes_over`), the history index and the audit read (round 67). Only a run
    executing on the branch (``status``) is moved on, by an end another host can make that
    the file shows (``writes``): the index reads it as the end the branch shows (the run
    dropped, fail-closed; ``failed`` goes on by a resume, and an abort ends it, as for any
    stopped run). A paused run's end and progress are anyone's."""
    return (
        status == _RUNNING
        and takes_over(event, own=False)
        and _TAKE_OVER_STATUS.get(event or "") == writes
    )


def shows_end(
    event: str | None, status: str | None, after: BlobFacts | None, version: str | None
) -> bool:
    """Whether a run event under the controller's name that is not its own moves the run
    on, read from the facts (round 68): the plan's file at that commit (``after``) shows the
    end the event writes (:func:`moves_run_on`), of the run's version (``version``). The one
    function the history index (:meth:`Lifecycle._moves_run_on`) and the take-over check
    (:meth:`Lifecycle.moved_on_by`) read: a trailer the file does not show is anyone's, and
    the run goes on (round 68: a batched ``fail`` whose tree left the file ``executing``
    dropped the run while the index read nothing: ``executing`` for good)."""
    if after is None or not version or after.hash != version:
        return False  # another version (or none): not the run's end
    return moves_run_on(event, status, after.status)


#: Where a run has ended: an outcome or checkpoint after it has no cause.
_ENDED = frozenset({"completed", "failed", "aborted"})
#: A human's withdrawals of a plan (a rejection; an abort).
_WITHDRAWALS = frozenset({"rejected", "aborted"})
#: What a merge brings of its branch's statuses from before a withdrawal a merged commit made
#: (:meth:`Lifecycle._merger_status`): no approval, nothing the controller alone writes.
_BROUGHT_BEFORE = frozenset({"draft", "pending_approval"})


def _run_stands(state: PlanState | None) -> str | None:
    """Where the plan's run stands for the cause of a run event: its status, except that a
    gate or resume approval the controller has not acted on yet (no resume start since)
    leaves the run where that approval was made, paused or failed (round 67)."""
    if state is None:
        return None
    kind = (state.request or {}).get("kind") if state.status == "approved" else None
    return _APPROVAL_MADE_AT.get(kind or "", state.status)


#: Where a gate or resume approval was made (:data:`approvals.APPROVED_FROM`).
_APPROVAL_MADE_AT = {
    kind.value: status
    for kind, status in approvals.APPROVED_FROM.items()
    if kind is not Transition.APPROVE
}


def _event_hashes(record: CommitRecord) -> dict[str, str]:
    """Plan path -> the frozen hash a controller commit's event names (``Plan-Hash:``)."""
    if f"\n{EVENT_TRAILER}: " in f"\n{record.body}":
        return {plan: items.get("Plan-Hash", "") for plan, items in batch_groups(record.body)}
    return {plan: record.trailers.get("Plan-Hash", "") for plan in record_events(record)}


#: The texts a start commit's message holds (a start's subject, a batch's event trailer): what
#: a reader of starts off the index's own scan asks ``git log --grep`` for.
START_MENTIONS = ("plangate: start ", f"{EVENT_TRAILER}: start")


def named_starts(record: CommitRecord, email: str, own: bool | None) -> list[tuple[str, str]]:
    """(frozen hash, plan) of each start ``record`` makes as a run of the controller named
    ``email``, read off the index's own scan (another plans folder's stretch, another
    branch): its name as author and committer, and by its record of its commits (``own``),
    else (None: no record knows it) a seal, as every reader takes a start by git alone. A
    forged one only refuses a run (fails closed)."""
    named = email.lower()
    if record.author.email.lower() != named or record.committer.email.lower() != named:
        return []
    if own is False or (own is None and not _sealed(record)):
        return []
    hashes = _event_hashes(record)
    return [
        (hashes.get(plan, ""), plan)
        for plan, event in record_events(record).items()
        if event == "start" and hashes.get(plan, "").startswith("sha256:")
    ]


def unsealed_run_events(record: CommitRecord) -> list[str]:
    """``<event> <plan>`` for each run event (a start, an outcome, a checkpoint) a commit's
    message records when it carries no ``Controller-Seal:`` (:func:`_sealed`): every
    controller commit since round 66 is sealed, so by git alone such a commit is no
    controller's, anyone's, and decides nothing, as the live controller reads it by its
    record (round 69: a fresh clone's audit took the agent's unsealed ``start`` for the
    plan's run). A seal of the right shape is verifiable by no one without the key: by git
    alone it stands (another controller's, or a forgery, as rounds 67-68 judge it)."""
    if _sealed(record):
        return []
    return [
        f"{event} {plan}" for plan, event in record_events(record).items() if event in RUN_EVENTS
    ]


def _no_cause(unmatched: list[str]) -> str:
    return (
        f"records {', '.join(unmatched)} with no cause on the branch: no start of the plan "
        "for an outcome, no abort request for an abort (Aborted-By: is a claim)"
    )


def _not_its_own(unmatched: list[str], unsealed: list[str]) -> str | None:
    """Why a commit under the controller's name is not its own by git alone (None: it is)."""
    why = [_no_cause(unmatched)] if unmatched else []
    if unsealed:
        why.append(
            f"records {', '.join(unsealed)} with no Controller-Seal: (every controller commit "
            "carries one since round 66)"
        )
    return "; ".join(why) or None


#: Where a plan stands before it first runs: a withdrawal there vetoes its version.
NEVER_STARTED = frozenset({"draft", "pending_approval", "approved"})
#: The rename/copy pairing of parked plan bytes (:meth:`Lifecycle._pair_parked`) considers
#: this many files on each side, given on git's command line so that the repository's own
#: ``diff.renameLimit`` chooses nothing (round 52: a limit of 1 in ``.git/config``, or a
#: commit past git's default of 1,000 files, hid a parked plan's writers); git's own merge
#: uses the same number (``merge.renameLimit``: ``controller.git.commits._MERGE_PINS``).
PARKED_RENAME_LIMIT = 7000
#: How far the text a plan is made from is followed back (:meth:`Lifecycle._text_writers`):
#: copies or moves of it, and edits in place of one path, before the writers found so far
#: are taken as all there are.
FOLLOW_HOPS = 16
#: The pairing of a commit that makes plans (:meth:`Lifecycle._pair_parked`); a scan asks git
#: for it for up to PAIR_AHEAD of the commits it will apply next at once (git keeps every tree
#: it read in one process: 4,096 commits adding a plan each to a 2,000-plan folder took
#: 128 MB, 256 take no more than the scan's other git children, 68 MB).
_PAIRING = ("-M", "-C")
PAIR_AHEAD = 256
FOLLOW_COMMITS = 256
#: A copy into a plan counts from this score of git's on (``C075``); moves count from git's
#: own 50. Round 54: plans for one tool share their shape (ids, tool, step names, params): an
#: agent's own runbook paired at 61% with an approver's (``--find-copies-harder``); and git
#: reuses a file the commit deletes as the source of further copies once a rename took it
#: (round 11's lab: one draft of Alice's paired at 50% with four new plans, one the agent's).
COPY_SCORE = 66
#: The writers a folder had when it was last emptied (:meth:`Lifecycle._forget_emptied`):
#: no writers of a plan later put there, still of the text that left it.
_EMPTIED = "@emptied"
#: The spellings of a folder's place :meth:`Lifecycle._place_held` follows at each level.
_PLACES = 64
#: Where the old version of a path followed back is put in the scratch index that pairs an
#: edit of it as if the commit added it (:meth:`Lifecycle._rewritten_from`).
_WAS = ".plangate-was"
#: git's merge as ``git merge`` runs it, whatever the repository's config (round 66's joins).
_JOIN_PINS = (("merge.renames", "true"), ("merge.renameLimit", "7000"))


class Lifecycle(IndexStore):
    """Applies commits to the per-plan states."""

    #: ``approval.identity_aliases`` in force where the scan is (the recorded policy's, as
    #: ``may_withdraw`` follows it): who committed a lapse or a copy herself is told as the
    #: approval rules tell one person (round 68). None: mailboxes compared alone.
    identity_aliases: IdentityAliases | None = None
    #: ``approval.identity`` in force where the scan is (followed as ``identity_aliases``
    #: is): under ``committer`` a decision is its committer's, made when she committed it
    #: (SPEC §5), so her commit is always her own hand (:meth:`_own_hand`, :meth:`_maker`).
    identity_mode = "author"
    #: The audit reads the run records each merge brings back (:meth:`apply_merged_back`)
    #: from the merged commits :meth:`merged_authors` read for it: kept until then.
    keeps_merged_in = False
    #: The audit's other recorded plans folders (a ``plans_dir`` change, round 125): a
    #: controller event of a plan under one of them (and not under this index's folder) is
    #: judged by that folder's replay, never as one with no cause here.
    other_folders: tuple[str, ...] = ()
    _merged_in_read: tuple[str | None, str, list[CommitRecord]] | None = None
    _merged_back_writes: tuple[str, dict[str, str]] | None = None
    #: The plans by the blob of their file (:meth:`_plans_holding`): the plans dict it was
    #: built from, the map, the plans touched since (read again at the next look-up).
    #: A blob's one plan is held as its id alone, a set only when several hold it
    #: (perf83mem: a set per blob was 4.5 MB of a 20,000-plan cold scan).
    _by_blob: tuple[dict[str, PlanState], dict[str, str | set[str]], set[str]] | None = None
    #: The plans by the fold of their path (:meth:`_folder_twins`), built at the first
    #: look-up: every plan a commit touches is added to it after that commit.
    _twins: FolderTwins | None = None
    #: The folders last listed by the fold of their names (:meth:`_listing`), by (commit,
    #: folder): a commit's plans folder folded once for every plan judged there (round 94).
    _listings: dict[tuple[str, str], Listing] | None = None
    #: Every folder spelling below the plans folder seen since the filter was seeded
    #: (:meth:`_may_twin`): where it holds no other spelling, no tree is listed for a twin.
    _seen: SeenFolders | None = None
    #: The first-parent commit being applied (:meth:`apply`): the filter speaks for its
    #: tree and its first parent's alone.
    _record: CommitRecord | None = None
    #: The repository of the commit applied last: whether a making descends from another
    #: (:meth:`_note_origin`).
    _origin_repo: GitRepo | None = None
    #: The folded folders with an 8.3 short-named part that have writers (round 83): read
    #: from the author index at the first look-up (:meth:`_short_folders`), kept after it.
    _shorts: set[str] | None = None
    #: The plans a commit released from a hold, with what the hold found (:meth:`_ambiguity`),
    #: until :meth:`_apply_plan_change` applies the release.
    _released: dict[str, dict[str, Any]] | None = None
    #: The withdrawals merged branches made while a plan was held (``held_from.side``:
    #: :meth:`_held_withdrawal`), by plan, from its release (:meth:`_ambiguity`,
    #: :meth:`_unsafe_release`) until :meth:`_apply_plan_change` applies them (round 86).
    _held_side: dict[str, list[dict[str, Any]]] | None = None
    #: The held decision the release applies now (:meth:`_held_maker`): its commit and the
    #: time its key had to be valid, fixed when it was seen (:meth:`signed_at`).
    _decided_at: tuple[str, float] | None = None
    #: A version's hash as written -> its hash as the freeze writes it, where the two differ
    #: (legacy ``${...}`` references: :attr:`BlobFacts.form_hash`), for every version whose
    #: facts were asked: a withdrawal vetoes both (:meth:`_veto`).
    _forms: dict[str, str] | None = None
    #: A plan source's blob -> (the status it says, the hash it converts to), as read by
    #: :meth:`_source_version`.
    _sources_read: dict[str, tuple[str | None, str | None]]
    #: The merge last read by :meth:`_branch_made` and what its merged branches made of
    #: each plan folder: folder -> content -> the contents it was made of there.
    _made_on_branches: tuple[str, dict[str, dict[str, list[str]]]] | None = None

    def _load(self) -> None:
        # Built from the plans as they were: rebuilt from the plans loaded at their next
        # look-up, as in a controller started afresh. Dropped first: kept through a cold
        # scan's reload, the blob map held the scan's 20,000 plan states, and both maps
        # their ids, among the new copies (perf80mem).
        self._by_blob = None
        self._twins = None
        self._shorts = None
        self._seen = None  # seeded again from the next commit's tree
        super()._load()
        #: The plans whose version's writers to key again after the commit applied
        #: (:meth:`_key_versions`): touched, or their folder written.
        self._versions_due: set[str] = set()
        #: The paths held plans saw in the commit applied (:meth:`_held_note`), and the files
        #: a hold's release judged there as the commit leaves them (:meth:`_apply_plan_change`).
        self._held_noted: set[str] = set()
        self._release_judged: set[str] = set()

    def facts(self, repo: GitRepo, blob: str | None) -> BlobFacts | None:
        if blob is None:
            return None
        found = self._facts.get(blob)
        if found is None:
            try:
                found = facts_of(repo.blob(blob), self.max_plan_bytes)
            except BlobTooLarge as exc:  # its size was asked first: never read
                found = too_large(exc.size, self.max_plan_bytes)
            if len(self._facts) > 200_000:
                self._facts.clear()
            self._facts[blob] = found
        if found.form_hash is not None and found.hash is not None:
            forms = self._forms if self._forms is not None else {}
            if len(forms) > 100_000:
                forms.clear()
            forms[found.hash] = found.form_hash
            self._forms = forms
        return found

    def apply(self, repo: GitRepo, record: CommitRecord, sink: EventSink | None = None) -> None:
        """Apply one first-parent commit to the index."""
        self._apply_side_before(record.sha, sink)  # what the merges before it withdrew
        self._record, self._origin_repo = record, repo
        if self._seen is not None:
            self._note_seen(record)
        by_controller = self._is_controller(record, repo)
        if by_controller:
            self._controller_clock(record.commit_time)
        carried = {} if by_controller else self._moved_writers(repo, record)
        for target, held in ({} if by_controller else self._held_moved).items():
            self._add_authors(folder_key(target) + _HELD, held)  # before the move's own edit
        self._lapse_side_taken(record.sha, repo)  # before the moves it may carry are read
        self._before_move = {} if by_controller else self._move_sources(repo, record)
        self._held_copied: dict[str, set[str]] = {}
        self._same_content: dict[str, set[str]] = {}
        self._held_noted, self._release_judged = set(), set()  # this commit's alone
        for target, writers in self._follow_parked(repo, record, by_controller).items():
            carried[target] = carried.get(target, set()) | writers
        self.flush_side_made(record.sha)  # the merged branches' makings, in the line's order
        self._carried_here = set() if by_controller else self._left(repo, record)
        recorded: set[str] = set()
        logs: set[str] = set()
        twins: set[str] = set()  # plans beside an entry named as their log in another spelling
        added: dict[str, bool] = {}  # new plans -> by the controller (or its move)
        back = self._brought_back(record)
        for change in record.changes:
            if change.new_blob is not None and back.get(change.path) == change.new_blob:
                continue  # the controller's run record a merge brought back, read before it
            if self._split_path(change.path):  # before any plan of the commit is judged
                self._note_split(change)
            plan_id = plan_id_of(change.path, self.plans_dir)
            # the merged commits' makers, not the merger, wrote what a merge brought
            writes = not by_controller and not self._brought(repo, record, change)
            if plan_id is None:
                twin = _log_twin_folder(change.path, self.plans_dir)
                if twin is not None:
                    twins.add(twin)
                self._link_outside_plan_files(change)
                if writes and not self._status_claim(repo, record, change):
                    self._blob_writers(repo, change, self.identities(record), self._carried_here)
                # a symlink, gitlink or file named as a plan file (in any case or spelling),
                # or a file below a folder so named: it claims its folder's plan file's place
                self._shadowed(repo, record, change, by_controller, sink)
                continue
            if writes:
                self._plan_file_writers(repo, record, change, plan_id, self.identities(record))
            why = _unsafe_why(change)
            if why is not None:
                if change.new_blob is not None or not self._unsafe_gone(repo, record, plan_id):
                    self._unsafe(plan_id, change.path, why)
                self._shadowed(repo, record, change, by_controller, sink)
                continue
            if path_name(change.path) == LOG_NAME:
                logs.add(plan_id)
                if by_controller and sink:
                    self._run_record(record, plan_id, sink)
                    recorded.add(plan_id)
                if not by_controller and sink and not _ends_life(record, change):
                    state = self.plans.get(plan_id)
                    sink(
                        HistoryEvent(
                            "log-changed",
                            plan_id,
                            record,
                            state,
                            state,
                            f"{LOG_NAME} changed by a commit not from the controller",
                        )
                    )
                continue
            own = by_controller or self._moves_run_on(repo, record, change, plan_id)
            if plan_id not in self.plans:
                added[plan_id] = own
            self._apply_plan_change(repo, record, change, plan_id, own, sink)
            if any(f"{plan_id}/{name}" in self.plans for name in PLAN_FILES):
                self._rejudge(repo, record, plan_id, own, sink)  # beside a folder so named
        self._judge_added(repo, record, added, sink)
        self._judge_twins(repo, record, by_controller, sink)
        self._held_elsewhere(repo, record, by_controller)
        self._note_logs(record, logs)
        # a log in a folder one with a plan's: judged after the commit's plans, new ones too
        self._note_log_twins(repo, record, (twins - set(added)) | self._log_twin_plans(record))
        if by_controller and sink:  # round 44: a run recorded with no file of its folder
            for plan_id in sorted(self._run_starts(record) - recorded):
                self._run_record(record, plan_id, sink)
        if not by_controller and record.author.email.lower() == self.controller_email:
            self._named_by_another(record)
        for plan_id, writers in self._same_content.items():  # its content's earlier holders
            carried[plan_id] = carried.get(plan_id, set()) | writers
        if carried:
            self._carry(carried)
        for target, held in sorted(self._held_copied.items()):  # after the copy's own change
            self._add_authors(folder_key(target) + _HELD, held)
        self._key_versions()
        self._forget_emptied(repo, record)
        self.apply_side_withdrawals(sink, record.sha)  # the merge's own: after its changes

    def _note_logs(self, record: CommitRecord, plan_ids: set[str]) -> None:
        """Record ``record`` as the last commit of these plans' logs (round 66: a reader of
        the record asks who committed each of its files last, :meth:`PlanState.record_commits`).
        After the commit's plan files: a plan a commit adds with its log (a copied folder)
        exists by then. A log where no plan is yet is kept for the plan put there later
        (round 67: an agent's log committed before its plan file)."""
        for plan_id in sorted(plan_ids):
            state = self.plans.get(plan_id)
            if state is None:
                self._note_loose_log(record, plan_id)
                continue
            self._loose_logs.pop(plan_id, None)
            state.log_commit = record.sha
            self.touch(plan_id)

    def folder_twins(self, path: str) -> list[str]:
        """The plans whose folder is one folder with ``path`` on some checkout, as the index
        last read them (:meth:`_folder_twins`): what a conversion into ``path`` must not
        land beside (round 81)."""
        return self._folder_twins(path)

    def _folder_twins(self, path: str) -> list[str]:
        """The plans whose folder is one folder with ``path`` on some checkout
        (:class:`controller.git.twins.FolderTwins`: ``plans/fcase`` of ``plans/FCASE``,
        ``plans/rotate~1`` of ``plans/rotate-keys-prod``; round 75)."""
        if self._twins is None:
            self._twins = FolderTwins(self.plans)
        return self._twins.of(path, self.plans)

    def _twin_folders(self, repo: GitRepo, sha: str, path: str) -> list[str]:
        """The folders one with ``path`` on some checkout at ``sha``, for a reader listing
        each there (:meth:`_claim_sets`): those the TREE holds, whatever they hold
        (:meth:`_tree_twins`; round 94: ``plans/YA/`` holding only a folder ``PLAN.yml/``
        was never a plan of the index, so the plan was never held and the twin's deletion
        was no touch), and the plan folders the index holds or held
        (:meth:`controller.git.twins.FolderTwins.known`: round 93, a twin folder deleted
        on Bob's branch and merged by Mallory, listed at the first parent)."""
        if self._twins is None:
            self._twins = FolderTwins(self.plans)
        return sorted({*self._tree_twins(repo, sha, path), *self._twins.known(path)})

    def _tree_twins(self, repo: GitRepo, sha: str, path: str) -> list[str]:
        """The folders at ``sha`` other than ``path`` that are one folder with it on some
        checkout (:func:`controller.plan.names.twin_folders`, every part compared from the
        plans folder down), whatever they hold: a plan file, a folder ``PLAN.yml/``, a link,
        notes. Each level's listing is read once per commit and kept by the fold of its
        names (:class:`controller.git.twins.Listing`): a plans folder of 10,000 entries is
        read and folded once for the commit, each plan's look-up a few compares."""
        if not self._may_twin(repo, sha, path):
            return []
        parts = path_parts(path)

        def near(folder: str) -> list[str]:
            at = len(path_parts(folder))
            if at >= len(parts):  # the folder itself: only a ``\\`` in it is it too (round 80)
                return [name for name in repo.names_in(sha, folder) if not path_parts(name)]
            return self._listing(repo, sha, folder).near(parts[at])

        return twin_folders(path, near, self.plans_dir)

    def _may_twin(self, repo: GitRepo, sha: str, path: str) -> bool:
        """Whether ``path`` may have a twin folder at ``sha`` (False: none can, no tree
        need be listed): asked of the commit being applied or its first parent, whose
        folders the filter has all seen (:class:`controller.git.twins.SeenFolders`, seeded
        at the first question from the commit's tree and its changes, then fed each
        commit's changes as it is applied); any other commit's tree is listed. A cold scan
        of 10,000 new plans lists the plans folder only where a twin spelling was seen."""
        record = self._record
        below = self._below_plans(path)
        if record is None or below is None or (sha != record.sha and sha not in record.parents[:1]):
            return True
        if self._seen is None:
            self._seen = SeenFolders()
            for folder in repo.folders_under(record.sha, self.plans_dir):
                inside = self._below_plans(folder)
                if inside:
                    self._seen.add(inside)
            self._note_seen(record)
        return self._seen.may_twin(below)

    def _seen_from_nothing(self) -> None:
        """A cold scan: the twin filter starts empty, every folder met in a change it applies
        (the first commit touching the plans folder had none there before it)."""
        self._seen = SeenFolders()

    def _note_seen(self, record: CommitRecord) -> None:
        """Feed the twin filter a first-parent commit's changed paths (:meth:`_may_twin`)."""
        assert self._seen is not None
        for change in record.changes:
            inside = self._below_plans(change.path)
            if inside:
                self._seen.add_file(inside)

    def _below_plans(self, path: str) -> list[str] | None:
        """``path``'s names below the plans folder, as git writes them, or None outside it."""
        if self.plans_dir in ("", "."):
            return path.split("/")
        prefix = f"{self.plans_dir.strip('/')}/"
        return path[len(prefix) :].split("/") if path.startswith(prefix) else None

    def _listing(self, repo: GitRepo, sha: str, folder: str) -> Listing:
        """``folder``'s entries at ``sha`` by their fold (:meth:`_tree_twins`), kept for the
        last few folders read (a commit's plans folder, read for each plan it judges)."""
        if self._listings is None:
            self._listings = {}
        key = (sha, folder)
        found = self._listings.get(key)
        if found is None:
            if len(self._listings) >= 16:
                self._listings.clear()
            found = self._listings[key] = Listing(repo.names_in(sha, folder))
        return found

    def _judge_twins(
        self, repo: GitRepo, record: CommitRecord, by_controller: bool, sink: EventSink | None
    ) -> None:
        """A plan folder came or went beside a folder that is one with it on some checkout
        (:meth:`_folder_twins`): each plan of the group is judged again (:meth:`_ambiguity`
        counts the twin's plan file as a claim of its own: round 75, ``plans/fcase`` beside
        ``plans/FCASE`` ran the one while a Mac showed the other), however late either came,
        as a twin plan FILE is (round 72); the last one left is read afresh."""
        files = [c for c in record.changes if path_name(c.path) in PLAN_FILES]
        touched = {c: plan_id_of(c.path, self.plans_dir) for c in files}
        if not any(touched.values()):
            return
        if self._twins is None:
            self._twins = FolderTwins(self.plans)
        for plan_id in {p for p in touched.values() if p in self.plans}:
            # every plan a commit makes, by whatever route; by the plan's own id string
            self._twins.add(self.plans[plan_id].plan_id)
        came = {  # plan files added or removed: an edit changes no folder's twins
            plan_id
            for change, plan_id in touched.items()
            if plan_id is not None and (change.old_blob is None or change.new_blob is None)
        }
        for plan_id in sorted(came):
            twins = self._folder_twins(plan_id)
            for each in [plan_id, *twins] if twins else ():
                self._rejudge(repo, record, each, by_controller, sink)

    def _log_twin_plans(self, record: CommitRecord) -> set[str]:
        """The plans beside whose folder ``record`` changed an entry named as the log (any
        spelling) in a folder one with theirs on some checkout (round 75: ``plans/ship/
        EXECUTION_LOG.md`` IS ``plans/Ship``'s log on a case-insensitive one)."""
        folders: set[str] = set()
        split: set[str] = set()  # round 77: ``plans/lo\\EXECUTION_LOG.md`` is ``plans/lo``'s log
        for change in record.changes:
            parts = path_parts(change.path)  # none for a name of backslashes alone
            if not parts or not is_log_name(parts[-1]):
                continue
            if self._under_plans(change.path):
                folders.add(change.path.rpartition("/")[0])
            if self._split_path(change.path):  # a root file ``plans\\ok\\EXECUTION_LOG.md``,
                split.add("/".join(parts[:-1]))  # ``plans\\/ok/`` (round 80), ``PLANS./ok/`` (84)
        return {t for folder in sorted(folders | split) for t in self._folder_twins(folder)} | split

    def _loose_twin(self, plan_id: str) -> bool:
        """Is a log kept where no plan is (:meth:`_note_loose_log`) in a folder one with
        ``plan_id``'s on some checkout?"""
        return any(same_path(plan_id, f) for f in self._loose_logs if f != plan_id)

    def _twin_logged(self, repo: GitRepo, sha: str, plan_id: str) -> bool:
        """Does a folder one with ``plan_id``'s on some checkout, at any level from the plans
        folder down (:func:`controller.plan.names.twin_folders`; round 76: ``plans/lg/x`` of
        ``plans/Lg/x``), hold an entry named as the log
        (:func:`controller.plan.names.log_claims`) at ``sha``?"""
        twins = twin_folders(plan_id, lambda f: repo.names_in(sha, f), self.plans_dir)
        if any(log_claims(repo.names_in(sha, twin)) for twin in twins):
            return True
        return any(log_claims([name]) for name in self._split_files(repo, sha, plan_id).values())

    def _split_files(
        self, repo: GitRepo, sha: str, plan_id: str, walk: bool = False
    ) -> dict[str, str]:
        """The files above ``plan_id``'s folder at ``sha`` that git for Windows writes into it
        (:func:`controller.plan.names.split_files`: ``plans/fy\\PLAN.yml`` IS
        ``plans/fy/PLAN.yml`` there; round 77), each -> its name in the folder; walked only
        when a committed name lands in the folder (:meth:`_split_into`), or when ``walk``
        (a path so named is asked about: :meth:`_file_owners`, a merged branch's too)."""
        if not walk and not self._split_into(plan_id):
            return {}
        return split_files(plan_id, lambda f: repo.names_in(sha, f), self.plans_dir)

    def _split_path(self, path: str) -> bool:
        """Does ``path`` land in a plan's folder on some checkout other than as written: a
        part holding a backslash (round 77), or below another spelling of the plans folder
        (:func:`controller.plan.names.spelled_under`: ``PLANS/uc/PLAN.yml``, ``plans./uc/``;
        round 84)? Kept in ``_split_names``, walked by :meth:`_split_files`."""
        if "\\" in path:
            return True
        if not spelled_under(path, self.plans_dir):
            return False
        # kept only where it claims a plan file's or the log's place (a folder ``PLANS/`` of
        # many notes is no claim: its files are read for their writers alone)
        parts = path_parts(path)
        return _claimed_folder(path) is not None or is_log_name(parts[-1])

    def _split_into(self, plan_id: str) -> bool:
        """Does a committed path that lands elsewhere than written (``_split_names``,
        :meth:`_split_path`) split into a folder one with ``plan_id``'s
        (:func:`controller.plan.names.same_path`)?"""
        return any(
            same_path("/".join(path_parts(p)[:-1]), plan_id)
            or same_path(_claimed_folder(p) or "", plan_id)  # ``PLANS/uc/PLAN.yml/x`` (round 84)
            for p in self._split_names
        )

    def _note_split(self, change: FileChange) -> None:
        """Keep (or forget, deleted) a path a part of which holds a backslash (round 77; a
        root folder ``plans\\rf`` holding ``PLAN.yml``, round 79)."""
        if change.new_blob is None:
            self._split_names.discard(change.path)
        else:
            self._split_names.add(change.path)

    def _note_log_twins(self, repo: GitRepo, record: CommitRecord, plan_ids: set[str]) -> None:
        """Do these plans' folders still hold, after ``record`` changed one, an entry named
        as the log in another spelling (:func:`controller.plan.names.log_twins`:
        ``execution_log.md``, ``EXECUTION_LOG.md<U+200C>``, one path with the log on a
        case-insensitive or HFS+ checkout)? Kept as ``log_claimed``: the status row reads the
        record (and notes it) while one is there, whoever committed the plan's files last
        (round 73). A plan added with its folder is judged from the folder's listing
        (:meth:`_judge_added`)."""
        held = sorted(plan_id for plan_id in plan_ids if plan_id in self.plans)
        listed = repo.names_among(record.sha, held) if held else {}
        for plan_id in held:
            state = self.plans[plan_id]
            claimed = bool(log_twins(listed.get(plan_id, ())))
            claimed = claimed or self._twin_logged(repo, record.sha, plan_id)
            if claimed != state.log_claimed:
                state.log_claimed = claimed
                self.touch(plan_id)

    def _note_loose_log(self, record: CommitRecord, plan_id: str) -> None:
        """A log committed where no plan is: kept for a plan put there later, forgotten when
        removed (no log is no record, ``ownrecord.shown_record``)."""
        removed = any(
            c.new_blob is None and plan_id_of(c.path, self.plans_dir) == plan_id
            for c in record.changes
            if path_name(c.path) == LOG_NAME
        )
        if removed:
            self._loose_logs.pop(plan_id, None)
        else:
            self._loose_logs[plan_id] = record.sha

    def _forget_emptied(self, repo: GitRepo, record: CommitRecord) -> None:
        """A folder's writers count since it was last emptied (round 55): a folder every file
        of which is gone at a commit (removed, or moved away) starts again with nobody; a
        note an approver once left there wrote nothing of the plans later put at its path.
        Its plans' content keeps its authors by hash, and the bytes leaving it keep theirs."""
        folders: set[PurePosixPath] = set()
        for change in record.changes:
            if change.new_blob is None and change.old_blob is not None:
                folders.update(self._folders_above(PurePosixPath(change.path).parent))
        listed: dict[str, tuple[Counter[str], list[str]]] = {}
        for folder in sorted(folders):
            key = folder_key(str(folder))
            held = self.authors.get(key + _HELD)
            if not (self.authors.get(key) or held) or not repo.is_gone(record.sha, str(folder)):
                continue
            if self._twin_stays(repo, record.sha, str(folder), listed):
                continue  # its place still holds a twin's files (round 83: one key for both)
            if self.authors.get(key):
                # kept apart for the trails that lead back to what the folder held
                self._add_authors(key + _EMPTIED, set(self.authors[key]))
                self.authors[key] = self.author_set(())
                self.author_dirty(key)
            if held:  # an owned block's editors: of the plan gone (a move carried them)
                self.authors[key + _HELD] = self.author_set(())
                self.author_dirty(key + _HELD)

    def _twin_stays(
        self,
        repo: GitRepo,
        sha: str,
        folder: str,
        listed: dict[str, tuple[Counter[str], list[str]]],
    ) -> bool:
        """Is a folder one with ``folder`` on some checkout still there at ``sha``: a twin
        plan's (:meth:`_folder_twins`) or a twin beside it (its parent's entries by
        :func:`fold`, listed once a commit; a name that splits or may be an 8.3 name by
        :func:`same_path`)? Its writers' key is the twin's too (:func:`folder_key`), so
        the place is not emptied (round 83)."""
        if self._folder_twins(folder):
            return True
        parent, _, name = folder.rpartition("/")
        if parent not in listed:
            names = repo.names_in(sha, parent)
            odd = [entry for entry in names if "~" in entry or "\\" in entry]
            listed[parent] = (Counter(fold(entry) for entry in names), odd)
        folds, odd = listed[parent]
        if folds[fold(name)]:  # ``folder`` itself is gone: any entry of its fold is a twin
            return True
        if any(entry != name and same_path(entry, name) for entry in odd):
            return True
        return self._place_held(repo, sha, folder)

    def _place_held(self, repo: GitRepo, sha: str, folder: str) -> bool:
        """Does a folder one with ``folder`` on some checkout by a folder ABOVE it hold
        anything at ``sha`` (``ops/plans/x`` of ``OPS/plans/x``, ``plans./x`` of
        ``plans/x``): each part followed from the root through every entry :func:`same_path`
        with it (round 85: a spelling of the plans folder is emptied as its own is, and only
        when no twin of it is left)? A name holding a backslash is not followed (its folder
        is kept: the safe side)."""
        here = [""]
        for part in folder.split("/"):
            here = [
                f"{at}/{entry}" if at else entry
                for at in here
                for entry in repo.names_in(sha, at)
                if "\\" not in entry and (fold(entry) == fold(part) or same_path(entry, part))
            ]
            if not here or len(here) > _PLACES:
                return len(here) > _PLACES  # too many spellings to follow: kept
        return True

    def _folders_above(self, folder: PurePosixPath) -> list[PurePosixPath]:
        """``folder`` and every plan folder it lies in, below the plans folder or below
        another spelling of it (``OPS/plans/x``, ``plans./x``: its files are the plans
        folder's on some checkout, their writers forgotten as the plans folder's own are
        when the place is emptied; round 85, ``wcd`` and ``wcn`` agree). A folder whose name
        holds a backslash is never emptied (kept: the safe side)."""
        top = PurePosixPath(self.plans_dir)
        spelled = "\\" not in str(folder) and spelled_under(str(folder), self.plans_dir)
        if self.plans_dir != "." and top not in folder.parents and not spelled:
            return []
        found = []
        for inside in (folder, *folder.parents):
            if str(inside) == "." or len(inside.parts) <= len(top.parts) != 0:
                break
            if len(inside.parts) > MAX_PATH_PARTS:
                break
            found.append(inside)
        return found

    def _named_by_another(self, record: CommitRecord) -> None:
        """A commit under the controller's name that it did not make (by its record: a
        rebuilt host's, another controller's, a forgery) naming run events of plans in its
        message, whatever files it changes (an empty one changes none, and the plan's last
        commit stays the start): noted on each plan it names until this controller starts
        the plan again, for the take-over check (round 51; Committing._taken_over)."""
        for plan_id, event in record_events(record).items():
            state = self.plans.get(plan_id)
            if state is not None and event in RUN_EVENTS:
                state.foreign_event = record.sha
                if event == "start" and _sealed(record):
                    found = plan_event(record, plan_id)
                    started = found.trailers.get("Plan-Hash", "") if found else ""
                    state.foreign_start = f"{record.sha} {started}".strip()
                self.touch(plan_id)

    def _moves_run_on(
        self, repo: GitRepo, record: CommitRecord, change: FileChange, plan_id: str
    ) -> bool:
        """A commit under the controller's name, not its own, that moves the plan's run on
        as the take-over check reads it (:func:`moves_run_on`): read as the end the branch
        shows, so the index and the check agree (round 67: the check dropped the run while
        the index called the same entry ignored: ``executing`` for good, her resume
        refused)."""
        if record.author.email.lower() != self.controller_email:
            return False
        state = self.plans.get(plan_id)
        if state is None or state.file != change.path or path_name(change.path) == LOG_NAME:
            return False
        event = record_events(record).get(plan_id)
        return shows_end(event, state.status, self.facts(repo, change.new_blob), state.hash)

    def moved_on_by(
        self, repo: GitRepo, record: CommitRecord, plan_id: str, version: str | None
    ) -> bool:
        """Did ``record``, a commit under the controller's name that this controller did not
        make, move on the plan's run of ``version`` (executing) as the index reads it
        (:func:`shows_end`)? For the take-over check: the plan's file at that commit shows
        the end its event writes, of that version; a trailer alone moves nothing."""
        state = self.plans.get(plan_id)
        if state is None:
            return False
        event = record_events(record).get(plan_id)
        after = self.facts(repo, repo.blob_sha(record.sha, state.file))
        return shows_end(event, _RUNNING, after, version)

    def _run_starts(self, record: CommitRecord) -> set[str]:
        """The plans a controller commit names with a ``Run-Start:`` trailer (its ``Plan:``,
        or the groups of a batch that hold one). Such a commit may change no file of the
        plan's folder (round 44: a folder, FIFO or identical file where the log goes, which
        the controller never writes over): the history scan and the audit read it from its
        message (:func:`controller.approval.audit._with_run_records`), not from its files."""
        if EVENT_TRAILER not in record.trailers:
            named = (
                [plan_named(record.trailers.get("Plan", ""))]
                if record.trailers.get(RUN_START)
                else []
            )
        else:
            named = [plan for plan, items in batch_groups(record.body) if items.get(RUN_START)]
        return {
            plan
            for plan in named
            if plan and plan_id_of(f"{plan}/{LOG_NAME}", self.plans_dir) == plan
        }

    def _run_record(self, record: CommitRecord, plan_id: str, sink: EventSink) -> None:
        """A controller outcome commit that records a run without writing its plan file
        (``Run-Start:``, round 42: the run's path holds another plan since) is a controller
        event of the plan all the same; the plan's state, another plan's, is left alone."""
        event = plan_event(record, plan_id)
        if event is None or not event.trailers.get(RUN_START):
            return
        state = self.plans.get(plan_id)
        sink(HistoryEvent("controller", plan_id, record, state, state))

    def _moved_writers(self, repo: GitRepo, record: CommitRecord) -> dict[str, set[str]]:
        """Writers a commit carries to each plan it writes from a plan folder it removes files
        from, as a move: a file of that folder arrives in the new one with the same bytes, or
        the new plan is made of the removed one's content: at least :data:`likeness.MOVE_KEPT`
        of either kept in the other (:func:`likeness.made_share`: by leaves, not lines, so a
        respelled plan is still its source, two plans of one tool's shape are not one (round
        55), additions do not dilute the source (round 56), nor padding of the source, and a
        part of hers is hers (round 57)). A plan written is one added OR changed in place
        (round 56: her text written over an existing plan file, ``git mv -f``, is a delete
        and a modification to git); a plan file rewritten in place (its new content keeps
        under half of its old) counts as removed too, when the commit writes other plans
        (two or three plans trading folders). git keeps no record of a move: a folder renamed
        with an edit in the same commit, or a draft moved beside a new PLAN.yml, made a new
        plan whose only writer was the mover (round 17). A copy edited in the same commit is
        not followed (docs/threat-model.md, accepted limits)."""
        self._moved_from: set[str] = set()
        self._held_moved: dict[str, set[str]] = {}
        written = [c for c in record.changes if self._writes_plan(repo, c)]
        if not written:
            return {}
        texts = _Texts(repo, record.sha)
        removed = self._removed_folders(record)
        if len(written) > 1:
            removed.update(self._rewritten_in_place(written, removed, texts))
            removed.update(self._moved_out_in_place(repo, record, written, removed))
        if not removed:
            return {}
        arrived: dict[str, set[str]] = {}
        for change in record.changes:
            folder = self._folder_of(change.path)
            if folder is not None and change.new_blob is not None:
                arrived.setdefault(folder, set()).add(change.new_blob)
        pairs: list[tuple[float, str, str]] = []
        unjudged: set[str] = set()  # targets left with pairs not compared (over the budget)
        for change in written:
            target = (
                plan_id_of(change.path, self.plans_dir)
                if _is_plan_file(change.path)
                else self._folder_of(change.path)
            )
            if target is None:
                continue
            for source, gone in removed.items():
                if source == target:
                    continue
                if arrived.get(target, set()) & {c.old_blob for c in gone}:
                    pairs.append((2.0, target, source))
                    continue
                plan = next((c for c in gone if _is_plan_or_source(c.path)), None)
                if plan is None:
                    continue
                kept = texts.similarity((plan.path, plan.old_blob), (change.path, change.new_blob))
                if kept is None:
                    unjudged.add(target)
                elif kept >= likeness.MOVE_KEPT:
                    pairs.append((kept, target, source))
        carried = self._pair_moves(pairs)
        for target in sorted(unjudged - carried.keys()):
            # Round 31: comparing every added plan with every removed one grew with the square
            # of a commit's moves (80 swapped 300 KB plans: an 80 s pass). Past the budget a
            # plan whose likest source was not found takes the writers of every removed folder
            # left: none can approve it (the safe direction; docs/approvals.md).
            carried[target] = self._writers_of(removed.keys() - self._moved_from)
            self._hold_moved(target, removed.keys() - self._moved_from)
        return carried

    def _pair_moves(self, pairs: list[tuple[float, str, str]]) -> dict[str, set[str]]:
        """Each written plan with the writers of EVERY source it is made from (round 57: a
        decoy folder holding her exact text, written in the same commit, took her writers
        from the plan she approves when only the likest plan got them; round 56's ties
        were the same case). Files that arrived with the same bytes count as the content
        does. The safe direction: a plan made of two removed plans has both's writers."""
        carried: dict[str, set[str]] = {}
        for _kept, target, source in sorted(pairs, reverse=True):
            carried[target] = carried.get(target, set()) | self._writers_of([source])
            self._hold_moved(target, [source])
            if target not in (self.plans_dir, "."):  # moved to a plan, not parked (round 50)
                self._moved_from.add(source)
        return carried

    def _writes_plan(self, repo: GitRepo, change: FileChange) -> bool:
        """Whether a change writes a plan's content: a plan file or source added, or changed
        in place with its hashed content (not its status alone) changed."""
        if change.new_blob is None or not _is_plan_or_source(change.path):
            return False
        if change.old_blob is None:
            return True
        if change.old_blob == change.new_blob:
            return False
        try:
            old, new = self.facts(repo, change.old_blob), self.facts(repo, change.new_blob)
        except Exception:  # unreadable: judged by its content, if it has any
            return True
        return old is None or new is None or old.hash is None or old.hash != new.hash

    def _move_source(
        self, repo: GitRepo, record: CommitRecord, change: FileChange
    ) -> FileChange | None:
        """``change`` (a plan file ``record`` adds or rewrites) as the edit of the plan file it
        moves: another plan file the commit removes OR changes whose old bytes it holds (all,
        or all but a plain status line: an approval made with the move), wherever the path
        changed, its folder or its file's name (round 69: PLAN.yml renamed PLAN.yaml in its
        folder; round 70: two plans swapped, three rotated, where no file is removed). A move
        writes no content: the content's writers are those of the content moved (by hash; a
        folder's are carried by :meth:`_moved_writers`). None when it writes no such file,
        and in a merge (what a merge writes is told by what it brought: :meth:`_brought`,
        :meth:`_changers`; a merge's rename is still the same plan: :meth:`_rename_edit`)."""
        gone = self._move_from(repo, record, change)
        if gone is None:
            return None
        assert gone.old_blob is not None  # for the type checker: a content went
        return FileChange(change.path, gone.old_blob, change.new_blob, change.mode)

    def _move_from(
        self, repo: GitRepo, record: CommitRecord, change: FileChange, merges: bool = False
    ) -> FileChange | None:
        """The change of the plan file (or source) ``change`` is a move of, as
        :meth:`_move_source` pairs them: its path is where the moved plan was (round 72: the
        source's state is where the status the move carries is judged from,
        :meth:`_moved_state`). ``merges``: a merge's too, against its first parent (the
        status a merge's file carries is the merge's status change, whoever wrote it)."""
        if record.is_merge and not merges:
            return None
        if change.new_blob is None or not _is_plan_file(change.path):
            return None
        if change.mode in NOT_A_FILE or change.old_blob == change.new_blob:
            return None
        for gone in self._moved_contents(repo, record):
            if gone.path == change.path:
                continue
            assert gone.old_blob is not None  # for the type checker: a content went
            edit = FileChange(change.path, gone.old_blob, change.new_blob, change.mode)
            if gone.old_blob == change.new_blob or (
                _is_plan_file(gone.path) and not self._writes_file(repo, edit)
            ):
                return gone
        return None

    def _paired_from(
        self, repo: GitRepo, record: CommitRecord, change: FileChange
    ) -> FileChange | None:
        """The change of the plan file ``change`` moves onto its path, in any commit (a merge
        against its first parent): its bytes moved (:meth:`_move_from`), or, where the path
        held a plan file, a rename git pairs with an edit (:meth:`_edited_move`). What a path's
        new life (:meth:`_swapped_in`) and the status a move carries (:meth:`_moved_state`)
        are told from; a move with an edit still writes (:meth:`_move_source` pairs none).
        Told once per change of a commit (the lineage a move carries asks it too:
        :meth:`_carry_lineage`)."""
        cached: tuple[CommitRecord, dict[FileChange, FileChange | None]] | None = getattr(
            self, "_paired_in", None
        )
        if cached is None or cached[0] is not record:
            cached = (record, {})
            self._paired_in = cached
        if change not in cached[1]:
            cached[1][change] = self._move_from(
                repo, record, change, merges=True
            ) or self._edited_move(repo, record, change)
        return cached[1][change]

    def _edited_move(
        self, repo: GitRepo, record: CommitRecord, change: FileChange
    ) -> FileChange | None:
        """The plan file content that leaves its path in ``record`` (:meth:`_left_path`:
        removed, or overwritten by other content) that ``change``, a rewrite of a plan file
        at its path, is a move of with an edit, as git pairs a rename with a rewrite broken
        (``-B -M``): the new content keeps at least :data:`likeness.MOVE_KEPT` of the content
        that left (:func:`likeness.made_share`), more than of the path's own old content, the
        likest taken (round 75: ``git rm -r`` of a ran plan's folder and ``git mv`` of another
        onto it with its ``why`` edited kept the path's ``completed``; the same move without
        the edit was a new life; round 76: two plans swapped, three rotated, each edited in
        the same commit, no file removed, kept it too). An edit of the path's own plan stays
        an edit in place; a move into a new folder is a new plan as before. None when none
        pairs."""
        best = self._likest_source(repo, record, change)
        if best is None or not self._left_path(repo, record, best):
            return None
        return best

    def _likest_source(
        self, repo: GitRepo, record: CommitRecord, change: FileChange
    ) -> FileChange | None:
        """The content of another plan file ``record`` removes or rewrites (:meth:`_moved_contents`)
        that ``change``, a rewrite of a plan file at its path, is made of most: at least
        :data:`likeness.MOVE_KEPT` kept and more than of the path's own old content (ties are
        the path's own). None when none is, or when the pair is unjudged (over the budget:
        the path's own plan edited, as before)."""
        if change.old_blob is None or change.new_blob is None or change.old_blob == change.new_blob:
            return None
        if change.mode in NOT_A_FILE or not _is_plan_file(change.path):
            return None
        gone = [
            c
            for c in self._moved_contents(repo, record)
            if c.path != change.path and _is_plan_file(c.path)
        ]
        if not gone:
            return None
        texts = self._texts_for(repo, record)
        own = texts.similarity((change.path, change.old_blob), (change.path, change.new_blob))
        if own is None:
            return None
        best: tuple[float, FileChange] | None = None
        for c in gone:
            kept = texts.similarity((c.path, c.old_blob), (change.path, change.new_blob))
            if kept is None or kept < likeness.MOVE_KEPT or kept <= own:
                continue  # unjudged, or not made of it more than of the path's own plan
            if best is None or kept > best[0]:
                best = (kept, c)
        return best[1] if best is not None else None

    def _left_path(self, repo: GitRepo, record: CommitRecord, gone: FileChange) -> bool:
        """Whether the content ``gone`` held before ``record`` leaves its path in it (round
        76): the file removed, or overwritten by other content: the path's new content keeps
        under :data:`likeness.MOVE_KEPT` of it (a rewrite git breaks, ``-B``), or is itself
        another plan's content moved there, byte for byte or with an edit
        (:meth:`_likest_source`: a swap, a rotation). A content edited in place stays where
        it is: a copy of it, edited, onto another plan's path moves nothing."""
        if gone.new_blob is None:
            return True
        cached: tuple[CommitRecord, dict[str, bool]] | None = getattr(self, "_left_in", None)
        if cached is None or cached[0] is not record:
            cached = (record, {})
            self._left_in = cached
        if gone.path not in cached[1]:
            cached[1][gone.path] = self._overwritten(repo, record, gone)
        return cached[1][gone.path]

    def _overwritten(self, repo: GitRepo, record: CommitRecord, gone: FileChange) -> bool:
        """Whether ``gone``, a plan file's content that ``record`` rewrites, is overwritten by
        other content (:meth:`_left_path`); unjudged (over the budget): edited in place."""
        if self._move_from(repo, record, gone, merges=True) is not None:
            return True
        texts = self._texts_for(repo, record)
        own = texts.similarity((gone.path, gone.old_blob), (gone.path, gone.new_blob))
        if own is not None and own < likeness.MOVE_KEPT:
            return True
        return self._likest_source(repo, record, gone) is not None

    def _texts_for(self, repo: GitRepo, record: CommitRecord) -> _Texts:
        """One commit's plan texts for :meth:`_edited_move` (read once per commit)."""
        cached: tuple[CommitRecord, _Texts] | None = getattr(self, "_edited_texts", None)
        if cached is None or cached[0] is not record:
            cached = self._edited_texts = (record, _Texts(repo, record.sha))
        return cached[1]

    def _move_sources(self, repo: GitRepo, record: CommitRecord) -> dict[str, PlanState]:
        """The states, as they were before ``record``, of the plans whose files it may move
        (:meth:`_moved_contents`), by path: what the status a moved plan file carries is
        judged from (:meth:`_moved_state`), whichever order the commit lists the two halves
        in (the source removed, or rewritten by a swap, before its target is read)."""
        if not any(
            c.new_blob is not None and c.old_blob != c.new_blob and _is_plan_file(c.path)
            for c in record.changes
        ):
            return {}
        found: dict[str, PlanState] = {}
        for gone in self._moved_contents(repo, record):
            plan_id = plan_id_of(gone.path, self.plans_dir)
            state = self.plans.get(plan_id) if plan_id is not None else None
            if state is not None and state.file == gone.path and not state.ambiguous:
                found[gone.path] = PlanState(**asdict(state))
        return found

    def _moved_state(
        self,
        repo: GitRepo,
        record: CommitRecord,
        change: FileChange,
        plan_id: str,
        status: str | None,
    ) -> PlanState | None:
        """The state, before ``record``, of the plan ``change`` moves into ``plan_id`` (another
        folder, or a folder whose plan left in the same commit: a swap), when the status the
        moved file carries is a status CHANGE of that plan (round 72): the move keeps the
        frozen hash, so her decisions follow the version (round 66), and a move whose file
        says other than ``approved`` takes back the approval the old file held open (the lapse,
        as the same change made in place) and a ``rejected`` withdraws the version, where it
        was read as a new plan's first status ("set rejected (from nothing)"). A move whose
        file says ``approved`` where its source said otherwise is an approval of the version
        moved, made by the move's commit (round 70: judged as any approval, the version
        approved the one moved), as before.
        The source's run does not follow the path (docs/plan-format.md: a moved folder is a
        new plan for its record): a source that started, or withdrawn already (its veto
        follows the hash), and a swap onto a plan that started or ended, are read as before.
        None for a rename between the folder's two names (the same plan: :meth:`_rename_edit`),
        and for a move a merged branch made, which a merge carries and does not make (round 71):
        the branch's commit is read where the merged branches are (:meth:`_side_lapse`,
        :meth:`_side_withdrawal`, judged by who made it; round 34's ``mv-side``: Mallory's move
        and rejection on her branch, merged by the agent, would have been the agent's
        withdrawal); a move the merge wrote itself is its own status change.
        A move whose file says ``approved`` carries the approval its source held open, its
        request (commit, author, kind) too, when it moves the very bytes approved
        (:func:`_carries_approval`; on the line, and in a merge whichever side moved them:
        round 77, Alice's approval, then the agent's byte-exact swap or ``git mv`` before any
        pass, was read as the agent's approval at the new path, where a pass between the two
        commits ran it on hers); any other approval a move's file says is the move's own."""
        before: dict[str, PlanState] = getattr(self, "_before_move", {})
        if status == "approved" and not any(s.status == "approved" for s in before.values()):
            return None  # no approval open to carry: one made with the move (round 70)
        target = self.plans.get(plan_id)
        if target is not None and target.status is not None and target.status not in NEVER_STARTED:
            return None  # a swap onto a plan that started or ended: its record, as before
        if (
            status != "approved"
            and record.is_merge
            and change.new_blob in self._side_plans(repo, record).files.get(change.path, ())
        ):
            return None  # a merged branch's move: read on that branch (:meth:`_side_lapse`)
        gone = self._paired_from(repo, record, change)
        source = before.get(gone.path) if gone is not None else None
        if source is None or source.plan_id == plan_id or source.status not in NEVER_STARTED:
            return None
        if status == "approved" and not _carries_approval(source, gone, change):
            return None  # an approval made with the move: the move's commit's (round 70)
        return source

    def _moved_contents(self, repo: GitRepo, record: CommitRecord) -> list[FileChange]:
        """The plan files or sources ``record`` removes, or whose content it changes (not its
        status alone), in the commit's order: the contents a plan file it adds or rewrites may
        be a move of (:meth:`_move_source`). Told once per commit, not once per plan file it
        writes (issue 17: a commit approving 1,000 plans asked each of its 1,000 changes about
        the other 999)."""
        cached = getattr(self, "_moved_in", None)
        if cached is not None and cached[0] is record:
            return cached[1]
        found = [
            gone
            for gone in record.changes
            if gone.old_blob is not None
            and gone.old_blob != gone.new_blob
            and gone.mode not in NOT_A_FILE
            and _is_plan_or_source(gone.path)
            # a content that stays where it was is copied, not moved
            and (gone.new_blob is None or self._writes_plan(repo, gone))
        ]
        self._moved_in = (record, found)
        return found

    def _merged_move(self, repo: GitRepo, commit: CommitRecord, change: FileChange) -> bool:
        """Whether ``change``, as a log limited to its path shows it, is half of a move in
        ``commit`` (:meth:`_move_source`, asked of the commit's whole plans folder): a merged
        branch's move writes nothing, as on the line (round 70: Alice's folder move on her
        branch, merged ``--no-ff``, made her the plan's changer)."""
        if commit.is_merge or not commit.parents or not _is_plan_file(change.path):
            return False
        return self._move_source(repo, self._whole(repo, commit), change) is not None

    def _whole(self, repo: GitRepo, commit: CommitRecord) -> CommitRecord:
        """``commit`` (not a merge) with its changes in the whole plans folder, not only the
        paths a limited log showed (once per commit, kept for the last 512)."""
        wholes: dict[str, CommitRecord] = getattr(self, "_wholes", {})
        whole = wholes.get(commit.sha)
        if whole is None:
            scope = [self.plans_dir] if self.plans_dir != "." else []
            found = repo.range_log(commit.parents[0], commit.sha, scope)
            whole = next((c for c in found if c.sha == commit.sha), commit)
            wholes = {} if len(wholes) > 512 else wholes
            wholes[commit.sha] = whole
            self._wholes = wholes
        return whole

    def _kept_rename(self, repo: GitRepo, record: CommitRecord, change: FileChange) -> bool:
        """Whether ``change`` is half of a rename between the folder's two names that keeps the
        file's bytes (all, or all but a plain status line): the move :meth:`_move_source`
        tells on the line, told in a merge too, where the merged commits' makers are the
        writers (:meth:`_changers`), not the merger (round 71: her approval made with a
        rename on her branch, merged ``--no-ff``, counted the merger as touching the plan)."""
        edit = self._rename_edit(record, change)
        if edit is None:
            return False
        return edit.old_blob == edit.new_blob or not self._writes_file(repo, edit)

    def _rename_edit(self, record: CommitRecord, change: FileChange) -> FileChange | None:
        """``change``, either half of a rename between the folder's two names (:func:`_renamed`),
        as the edit in place it is: the old name's bytes to the new name's. A rename is no new
        plan in any commit, with or without an edit, a merge's included (round 71: a gate
        approval merged with a rename back read as a new plan whose version had already run,
        the paused run committed ``pending_approval``); who wrote an edit made with it is the
        edit's to tell (by content, and :meth:`_ambiguity`'s touch). The commit's changes are
        indexed by path once per commit (issue 17: no scan of them per change)."""
        other = other_name(change.path)
        cached = getattr(self, "_paths_in", None)
        if cached is None or cached[0] is not record:
            cached = self._paths_in = (record, {c.path: c for c in record.changes})
        # both halves as the commit lists them (an ambiguity's file taken as added is not one)
        pair, own = (cached[1].get(other), cached[1].get(change.path)) if other else (None, None)
        if pair is None or own is None:
            return None
        gone, made = (own, pair) if own.new_blob is None else (pair, own)
        if gone.old_blob is None or gone.new_blob is not None or made.old_blob is not None:
            return None
        if made.new_blob is None or _unsafe_why(made) is not None:
            return None  # not a plain file added under the other name: no rename
        return FileChange(made.path, gone.old_blob, made.new_blob, made.mode)

    def _rename_from(self, record: CommitRecord, change: FileChange) -> FileChange | None:
        """The removed half of the rename between the folder's two names that ``change`` (the
        added half) makes (:meth:`_rename_edit`), else None."""
        if self._rename_edit(record, change) is None or change.old_blob is not None:
            return None
        return self._paths_in[1].get(other_name(change.path) or "")

    def _moved_away(self, repo: GitRepo, record: CommitRecord, change: FileChange) -> bool:
        """Whether ``change`` removes a plan file another plan file of ``record`` is a move of
        (:meth:`_move_source`): the other half of that move."""
        if change.new_blob is not None or change.old_blob is None:
            return False
        cached: tuple[CommitRecord, set[str | None]] | None = getattr(self, "_moves_out", None)
        if cached is None or cached[0] is not record:  # once per commit (issue 17)
            moved = {
                edit.old_blob
                for other in record.changes
                if (edit := self._move_source(repo, record, other)) is not None
            }
            cached = self._moves_out = (record, moved)
        return change.old_blob in cached[1]

    def _removed_folders(self, record: CommitRecord) -> dict[str, list[FileChange]]:
        """The plan folders a commit removes files from, with those files."""
        removed: dict[str, list[FileChange]] = {}
        for change in record.changes:
            if change.new_blob is None and change.old_blob is not None:
                folder = self._folder_of(change.path)
                if folder is not None:
                    removed.setdefault(folder, []).append(change)
        return removed

    def _rewritten_in_place(
        self, written: list[FileChange], removed: dict[str, list[FileChange]], texts: _Texts
    ) -> dict[str, list[FileChange]]:
        """Plan folders whose plan file a commit rewrites in place: its new content keeps
        under :data:`likeness.MOVE_KEPT` of its old (round 56: plans trading folders). Their
        old content left as if the folder were removed (git's ``-B`` break)."""
        found: dict[str, list[FileChange]] = {}
        for change in written:
            folder = self._folder_of(change.path)
            if change.old_blob is None or folder is None or folder in removed:
                continue
            kept = texts.similarity((change.path, change.old_blob), (change.path, change.new_blob))
            if kept is not None and kept < likeness.MOVE_KEPT:
                found[folder] = [FileChange(change.path, change.old_blob, None)]
        return found

    def _moved_out_in_place(
        self,
        repo: GitRepo,
        record: CommitRecord,
        written: list[FileChange],
        removed: dict[str, list[FileChange]],
    ) -> dict[str, list[FileChange]]:
        """Plan folders whose plan file's old bytes another plan file of the commit now holds
        (a swap or a rotation however alike the plans: :meth:`_move_source`, round 70): their
        old content left as if the folder were removed, its writers carried with it."""
        moved = {edit.old_blob for c in written if (edit := self._move_source(repo, record, c))}
        found: dict[str, list[FileChange]] = {}
        for change in written:
            folder = self._folder_of(change.path)
            if change.old_blob in moved and folder is not None and folder not in removed:
                found[folder] = [FileChange(change.path, change.old_blob, None)]
        return found

    def _follow_parked(
        self, repo: GitRepo, record: CommitRecord, by_controller: bool
    ) -> dict[str, set[str]]:
        """Writers that plan bytes parked where the index reads no plan bring back to the
        plans this commit makes of them (round 50): a plan file moved (or copied) out of the
        plan paths, to a folder outside the plans folder, another name in a plan folder
        (``notes.txt``, ``PLAN.draft.yml``, ``old/PLAN.json``) or ``plans/PLAN.yml``, then in
        a later commit renamed, with an edit, into a new plan folder, made a plan whose only
        writer was the mover. git's own rename/copy pairing (``diff-tree -M -C``, the whole
        tree) is asked only for a commit that takes a plan file out of the plan paths (not
        moved to another plan in the same commit: :meth:`_moved_writers`) and, while any
        bytes are parked, for the commits that change a parked path (found path-limited):
        each pairing carries the source's writers (a parked file's, or a plan's changers and
        folder writers), plus the commit's makers when it edits them, to the destination: a
        plan (returned: plan id -> writers) or a new parked path, for as many hops as git
        pairs them; an edit in place adds its makers; a removal unpairs it. A repository
        that never parks plan bytes runs no git command for it."""
        carried: dict[str, set[str]] = {}
        touched = False
        since = self._parked_at
        while self._parked and not touched:
            paths = [f":(literal){p}" for p in sorted(self._parked)]
            moved = False
            for commit in list(repo.first_parent_log(since, record.sha, paths)):
                if commit.sha == record.sha:
                    touched = True
                    break
                was = set(self._parked)
                self._pair_parked(repo, commit, None)  # outside the plans folder: no plan here
                since = commit.sha
                if set(self._parked) - was:  # a new hop: the walk goes on with its path
                    moved = True
                    break
            if not moved:
                break
        if not touched and not by_controller:
            touched = self._plan_files_leave(record) or bool(self._plans_made(record))
        if touched:
            self._pair_parked(repo, record, carried)
        self._parked_at = record.sha if self._parked else None
        return carried

    def _plan_files_leave(self, record: CommitRecord) -> bool:
        """Whether a commit removes a plan file whose bytes went to no other plan path in it
        (same bytes, or a move :meth:`_moved_writers` paired): only then may they be parked."""
        arrived = {
            c.new_blob
            for c in record.changes
            if c.new_blob is not None and self._plan_path(c.path) is not None
        }
        return any(
            c.new_blob is None
            and c.old_blob is not None
            and c.old_blob not in arrived
            and self._plan_path(c.path) is not None
            and self._plan_path(c.path) not in self._moved_from
            for c in record.changes
        )

    def _source_of_plan(self, path: str) -> bool:
        """Whether ``path`` is a plan source the controller converts (``plans/x/PLAN.json``)."""
        return path_name(path) in SOURCE_FILES and self._folder_of(path) is not None

    def _plan_path(self, path: str) -> str | None:
        """The plan a path holds the file of (None: the index reads no plan there)."""
        if not _is_plan_file(path):
            return None
        plan_id = plan_id_of(path, self.plans_dir)
        return None if plan_id in (None, self.plans_dir, ".") else plan_id

    def _plans_made(self, record: CommitRecord) -> list[str]:
        """The plan files a commit adds where no plan file was (round 51: a plan made of
        bytes copied from anywhere is paired to them as git pairs it)."""
        return [
            c.path
            for c in record.changes
            if c.old_blob is None and c.new_blob is not None and self._plan_path(c.path)
        ]

    def _plans_written(self, record: CommitRecord) -> list[str]:
        """The plan files a commit adds or changes in place (round 56: parked bytes moved with
        ``git mv -f`` over an existing plan file are a modification of it to git)."""
        changed = [
            c.path
            for c in record.changes
            if c.old_blob is not None
            and c.new_blob is not None
            and c.old_blob != c.new_blob
            and self._plan_path(c.path)
        ]
        return [*self._plans_made(record), *changed]

    def _pairings(
        self, repo: GitRepo, commit: CommitRecord, how: Sequence[str], paths: Sequence[str] = ()
    ) -> list[tuple[str, str, str, str | None]]:
        """git's pairing of one first-parent commit: (status, source, target or path, the
        source's blob), whole tree or limited to ``paths`` (each literal)."""
        if not paths and tuple(how) == _PAIRING:
            if _pairs_nothing(commit):
                return []
            found = self._paired.pop(commit.sha, None)
            if found is None and self.upcoming:
                self._pair_ahead(repo, commit.sha)
                found = self._paired.pop(commit.sha, None)
            if found is not None:
                return found
        out = repo.run(
            "-c", "core.quotePath=false", "diff-tree", "-r", "-z", "--raw", "--no-abbrev",
            *how, f"-l{PARKED_RENAME_LIMIT}", "--no-commit-id", "--no-ext-diff",
            "--no-textconv", commit.parents[0], commit.sha,
            *(["--", *(f":(literal){p}" for p in paths)] if paths else []),
        )  # fmt: skip
        return _raw_pairs(out.split("\0"), 0)[0]

    def _pair_ahead(self, repo: GitRepo, sha: str) -> None:
        """git's pairing of the next commits the scan will apply that make plans, from
        ``sha`` on, in one ``diff-tree --stdin`` (a cold scan of 2,000 commits each adding a
        plan spent 20 s starting one git per commit)."""
        ahead = self.upcoming
        start = max(0, self._ahead_at - PAIR_AHEAD)  # the commit is after the last batch's
        at = next((i for i in range(start, len(ahead)) if ahead[i].sha == sha), None)
        if at is None:
            return  # not one the scan applies (a commit followed back)
        self._ahead_at = at
        wanted = []
        for record in self.upcoming[self._ahead_at : self._ahead_at + PAIR_AHEAD]:
            ours = record.author.email.lower() == self.controller_email
            if _pairs_nothing(record):
                continue  # its root trees say git has no source to pair (round 54)
            if record.parents and not ours and (record.sha == sha or self._plans_made(record)):
                wanted.append(f"{record.sha} {record.parents[0]}\n")
        out = repo.run(
            "-c", "core.quotePath=false", "diff-tree", "--stdin", "-r", "-z", "--raw",
            "--no-abbrev", *_PAIRING, f"-l{PARKED_RENAME_LIMIT}", "--no-ext-diff",
            "--no-textconv", input="".join(wanted).encode(),
        )  # fmt: skip
        fields, i = out.split("\0"), 0
        while i < len(fields) and fields[i]:
            commit = fields[i]
            self._paired[commit], i = _raw_pairs(fields, i + 1)
        self._ahead_at += PAIR_AHEAD

    def _pair_parked(
        self, repo: GitRepo, commit: CommitRecord, carried: dict[str, set[str]] | None
    ) -> None:
        """Apply one commit's rename/copy pairings (git's, whole tree) to the parked bytes;
        ``carried`` hears the plans they come back to (None: park them all).

        For the commit being applied (``carried`` given), a plan it makes also takes the
        writers of whatever git pairs it from (round 51): a plan path's, parked bytes', or,
        for any other file, the writers of its text followed back (:meth:`_text_writers`).
        git's ``-C`` pairs a copy only from a file the same commit changes; copies of parked
        bytes left where they lie are looked for among the parked paths too
        (``--find-copies-harder`` limited to them and the plans made)."""
        if not commit.parents:
            return
        found = self._pairings(repo, commit, _PAIRING)
        made = self._plans_written(commit) if carried is not None else []
        if made and self._parked:
            paired = {target for status, _, target, _ in found if status[0] in "RC"}
            if set(made) - paired:
                found += [
                    row
                    for row in self._pairings(
                        repo, commit, ("-C", "--find-copies-harder"), [*self._parked, *made]
                    )
                    if row[0][0] == "C" and row[2] not in paired and _score(row[0]) >= COPY_SCORE
                ]
        before = {path: set(who) for path, who in self._parked.items()}
        who = self.identities(commit)
        landed: list[tuple[str, set[str]]] = []
        if made and carried is not None:
            landed += self._parked_alike(repo, commit, found, made, before)
            landed += self._exact_copies(repo, commit, found, made)
        for status, source, target, blob in found:
            if status[0] == "C" and target in made and _score(status) < COPY_SCORE:
                continue  # a look-alike, or a deleted file's second use (git's renames are 1:1)
            if status[0] in "RC":
                writers = before.get(source)
                plan_id = self._plan_path(source)
                if writers is None and plan_id is not None:
                    if (
                        target in made
                        and _score(status) < COPY_SCORE
                        and self._not_kept(repo, commit, (source, blob), target)
                    ):
                        continue  # equal lines, not her content (round 56: a template, R052)
                    writers = self._writers_of([plan_id])
                    if target in made and carried is not None:
                        writers |= self._hold_copied(repo, commit, plan_id, blob, target)
                if writers is None and target in made and blob is not None:
                    writers = self._text_writers(repo, commit, source, blob)
                if writers is None:
                    continue
                if status[1:] != "100" and not (target in made and carried is not None):
                    # an edit on the way to parked bytes: its makers wrote them (an edit that
                    # makes a plan is the commit's own change of that plan, recorded as such:
                    # a merge's by the merged branch's makers, a status line by nobody)
                    writers = set(writers) | who
                if status[0] == "R":
                    self._parked.pop(source, None)
                landed.append((target, set(writers)))
                if blob is not None and self._source_of_plan(target):
                    # parked bytes moved in as a plan's source: the plan the controller
                    # converts it into is theirs (round 55: a respelled PLAN.json)
                    self._add_authors(_blob_key(blob), set(writers) - {self.controller_email})
                continue
            if source not in before:
                continue
            if status[0] == "D":
                self._parked.pop(source, None)
            elif status[0] in "MT":  # an edit in place: its makers wrote the parked bytes too
                self._parked[source] = self._parked.get(source, set()) | who
        for target, writers in landed:
            writers.discard(self.controller_email)
            if not writers:
                continue
            plan_id = self._plan_path(target)
            if plan_id is not None and carried is not None:
                carried[plan_id] = carried.get(plan_id, set()) | writers
            else:
                self._parked[target] = self._parked.get(target, set()) | writers

    def _not_kept(
        self, repo: GitRepo, commit: CommitRecord, source: tuple[str, str | None], target: str
    ) -> bool:
        """Whether a plan git pairs with a plan a commit writes at a score under
        :data:`COPY_SCORE` is one the new plan keeps under :data:`likeness.MOVE_KEPT` of
        (round 56: two weeks of one template share their name, task and layout, R052 to git):
        between git's 50 and the score a copy needs, the content pairing has the last word,
        as for moves in one commit (unjudged: git's). From 66 on git's pairing stands (round
        51: her 3,000-character note kept, every short param edited, R088)."""
        new = next((c.new_blob for c in commit.changes if c.path == target), None)
        if source[1] is None or new is None:
            return False
        kept = _Texts(repo, commit.sha).similarity(source, (target, new))
        return kept is not None and kept < likeness.MOVE_KEPT

    def _parked_alike(
        self,
        repo: GitRepo,
        commit: CommitRecord,
        found: list[tuple[str, str, str, str | None]],
        made: list[str],
        before: dict[str, set[str]],
    ) -> list[tuple[str, set[str]]]:
        """Plans a commit writes (adds, or changes in place: round 56's ``git mv -f`` over a
        plan file) that git paired with nothing, each with the writers of the parked bytes
        the commit takes away (removed, or moved elsewhere) whose content it keeps
        (:func:`likeness.kept_share`, as a move in one commit: round 55). Round 52's
        ``dil2``: git paired Alice's padded parked plan with another new plan, and hers,
        brought back unpadded with an edit, with nothing."""
        paired = {target for status, _, target, _ in found if status[0] in "RC"}
        gone = [source for status, source, _, _ in found if status[0] in "RD" and source in before]
        new_blobs = {c.path: c.new_blob for c in commit.changes if c.new_blob is not None}
        if not gone or not commit.parents:
            return []
        texts = _Texts(repo, commit.sha)
        olds = {source: repo.blob_sha(commit.parents[0], source) for source in gone}
        landed: list[tuple[str, set[str]]] = []
        for target in made:
            if target in paired or target not in new_blobs:
                continue
            for source in gone:
                alike = texts.similarity((source, olds[source]), (target, new_blobs[target]))
                if alike is None or alike >= likeness.MOVE_KEPT:  # unjudged: safe side
                    landed.append((target, set(before[source])))
        return landed

    def _exact_copies(
        self,
        repo: GitRepo,
        commit: CommitRecord,
        found: list[tuple[str, str, str, str | None]],
        made: list[str],
    ) -> list[tuple[str, set[str]]]:
        """Plans a commit writes byte for byte as a plan the index holds at another path, that
        git did not pair as such (its ``-C`` pairs a copy only from a file the commit changes,
        so an exact copy of an untouched plan is paired with nothing, or with a look-alike):
        each with the writers of every plan holding those bytes (:meth:`_writers_of`: its
        changers and its folder's writers), and their owned-block editors' hold
        (:meth:`_hold_copied`). Round 73: an exact copy of an untouched plan was followed
        by hash alone, which has no folder writers: an approver's note copied with the
        folder, or his owned block, lifted into the copy in the agent's next commit, ran on
        his approval of it; the same copy git paired (the source touched) was refused. Found
        by the index's blobs (:meth:`_plans_holding`), not by a copy search: no comparison
        of every new plan with every plan (the ``cp-edit`` limit's cost). Round 74: a plan
        holding the CONTENT of any version held before, by any route, takes its holders'
        writers by the content hash too (:meth:`_took_content`)."""
        exact = {target for status, _, target, _ in found if status in ("R100", "C100")}
        new_blobs = {
            c.path: c.new_blob
            for c in commit.changes
            if c.new_blob is not None and c.mode not in NOT_A_FILE
        }
        landed: list[tuple[str, set[str]]] = []
        for target in made:
            here, blob = self._plan_path(target), new_blobs.get(target)
            if target in exact or here is None or blob is None:
                continue
            sources = [source for source in self._plans_holding(blob) if source != here]
            for source in sources:
                self._hold_copied(repo, commit, source, blob, target)
            if sources:
                landed.append((target, self._writers_of(sources)))
        return landed

    def _plans_holding(self, blob: str) -> list[str]:
        """The plans whose file the index holds as ``blob`` (readable, not ambiguous), from a
        map of the plans by blob built once and kept in step with the plans touched since
        (:meth:`touch`), each checked against its state."""
        index = self._by_blob
        if index is None or index[0] is not self.plans:
            by: dict[str, str | set[str]] = {}
            for plan_id, state in self.plans.items():
                if state.blob:
                    add_held(by, state.blob, plan_id)
            index = self._by_blob = (self.plans, by, set())
        plans, by, pending = index
        for plan_id in pending:
            found = plans.get(plan_id)
            if found is not None and found.blob:
                add_held(by, found.blob, plan_id)
        pending.clear()
        entry = by.get(blob)
        held = {entry} if isinstance(entry, str) else entry or set()
        held = {p for p in held if (s := plans.get(p)) is not None and s.blob == blob}
        if not held:
            by.pop(blob, None)
        else:
            by[blob] = next(iter(held)) if len(held) == 1 else held
        return sorted(
            plan_id for plan_id in held if not (plans[plan_id].ambiguous or plans[plan_id].unsafe)
        )

    def touch(self, plan_id: str) -> None:
        super().touch(plan_id)
        self._versions_due.add(plan_id)
        index = self._by_blob
        if index is not None:
            index[2].add(plan_id)  # its blob read again at the next look-up

    def _key_versions(self) -> None:
        """Keep the writers of each plan a commit touched (its changers, its folder's
        writers) and its owned-block editors' hold by the content hash it holds
        (:func:`version_key`): a plan holding that content later, by whatever route, takes
        them (:meth:`_took_content`). Only the plans touched and the folders written since
        the last commit are read (a keyed write each, never a scan of all plans)."""
        for plan_id in sorted(self._versions_due):
            state = self.plans.get(plan_id)
            if state is None:
                continue
            self._short_writers(plan_id)
            # A cold scan's keys hold the plan's own strings (perf85mem); only then: a key
            # re-keyed grows its table as a new one would (the pass touches every plan),
            # and after a load the keys already hold them (IndexStore._held_string).
            cold = self._authors_all_dirty
            if cold:
                self.authors.adopt("folder", state.plan_id)
                self.authors.adopt("file", state.plan_id)
            if not state.hash or state.ambiguous or state.unsafe:
                continue
            key = version_key(state.hash)
            writers = set(state.changers) | self.authors.get(folder_key(plan_id), frozenset())
            self._add_authors(key, writers - {self.controller_email})
            if cold:
                self.authors.adopt("version", state.hash)
            held = self.authors.get(folder_key(plan_id) + _HELD, frozenset())
            if held:
                self._add_authors(key + _HELD, set(held))
        self._versions_due.clear()

    def _took_content(self, plan_id: str, plan_hash: str | None) -> None:
        """A plan a commit writes holding a content the index held before, at any path, in
        any version since (round 74): it takes the writers of every plan that held it,
        carried as a copy's (:meth:`_carry`), and their owned-block editors' hold, kept as
        its folder's ``@held`` after the commit's own change (no writers of this version,
        of its later ones: :meth:`_hold_copied`). "An exact copy is a copy" by its content,
        whatever bytes spell it (its ``frozen:`` block cut, CRLF line ends), an older
        version, a deleted plan's, assembled over commits, brought by a merge or a pick."""
        if plan_hash is None:
            return
        key = version_key(plan_hash)
        writers = self.authors.get(key, frozenset())
        if writers:
            self._same_content.setdefault(plan_id, set()).update(writers)
        held = self.authors.get(key + _HELD, frozenset())
        if held and plan_id not in (self.plans_dir, "."):
            self._held_copied.setdefault(plan_id, set()).update(held)

    def _hold_copied(
        self, repo: GitRepo, commit: CommitRecord, source: str, blob: str | None, target: str
    ) -> set[str]:
        """The owned-block editors of a plan copied to ``target`` (its folder's ``@held``
        writers, :meth:`_plan_file_writers`) hold the copy too, as a move's do
        (:meth:`_hold_moved`): writers of its later versions, kept as the copy's folder's
        ``@held`` after the commit's own change of it (round 73: Bob's ``approval:`` block,
        lifted into an exact copy's params in the agent's next commit, ran on his approval;
        a copy is the plan "wherever it moves"). Returned: the editors when the copy is
        already another version than its source (a copy with an edit, as git pairs it):
        writers of it now; none for the same version (an owned-block editor is no writer of
        the version it sits beside)."""
        held = set(self.authors.get(folder_key(source) + _HELD, frozenset()))
        here = self._plan_path(target)
        if not held or here is None:
            return set()
        self._held_copied.setdefault(here, set()).update(held)
        new = next((c.new_blob for c in commit.changes if c.path == target), None)
        try:
            was, now = self.facts(repo, blob), self.facts(repo, new)
        except Exception:  # unreadable: another version, the safe side
            return held
        if was is not None and now is not None and was.hash is not None and was.hash == now.hash:
            return set()
        return held

    def _text_writers(
        self, repo: GitRepo, commit: CommitRecord, path: str, blob: str, hops: int = 0
    ) -> set[str]:
        """The writers of the text at ``path`` (neither a plan file nor parked) just before
        ``commit``, which git pairs to a plan it makes (round 51: an approver's plan copied
        out of the plan paths, her file left in place, then carried back with an edit).
        The authors of its bytes and of their hashed content (SPEC §15: by hash, never
        forgotten), and its history followed back as git pairs it: every edit in place adds
        its makers; the commit that added it brings the writers of what git pairs it from
        (a plan file, parked bytes, or another such file, for up to :data:`FOLLOW_HOPS`
        hops; ``--find-copies-harder`` over the plans folder, the parked paths and the
        file: a copy of an unchanged plan with an edit is found here), else its makers."""
        found = set(self.authors.get(_blob_key(blob), frozenset()))
        try:
            facts = self.facts(repo, blob)
        except Exception:  # not a blob git can read as text: its bytes are all there is
            facts = None
        if facts is not None and facts.hash is not None:
            found |= self.authors.get(facts.hash, frozenset())
        back = repo.first_parent_log(
            None, commit.parents[0], [f":(literal){path}"], newest_first=True
        )
        for walked, record in enumerate(back, 1):
            change = next((c for c in record.changes if c.path == path), None)
            if change is None or change.new_blob is None:
                break  # not there before this
            if walked > FOLLOW_COMMITS:  # its first writers are past the bound: fail safe
                found.add(approvals.UNFOLLOWED)
                break
            if change.old_blob is None:  # added here: from what git pairs it with
                found |= self._from_pairs(
                    repo, record, path, self._pairs_to(repo, record, path), hops
                )
                break
            rewritten = (
                None  # the same plan respelled or edited (round 55): an edit, whatever git says
                if self._alike_versions(repo, path, change)
                else self._rewritten_from(repo, record, path, change.old_blob)
            )
            if rewritten is not None:  # written here anew: from what git pairs it with
                found |= self._from_pairs(repo, record, path, rewritten, hops)
                break  # what the path held before did not survive (round 54)
            found |= self._makers(repo, record, path)  # an edit in place
        found.discard(self.controller_email)
        return found

    def _alike_versions(self, repo: GitRepo, path: str, change: FileChange) -> bool:
        """Whether an edit in place keeps the plan its path held: content at least
        :data:`likeness.MOVE_KEPT` kept (a respelling with an edit shares no line)."""
        alike = _Texts(repo).similarity((path, change.old_blob), (path, change.new_blob))
        return alike is not None and alike >= likeness.MOVE_KEPT

    def _makers(self, repo: GitRepo, record: CommitRecord, path: str) -> set[str]:
        """Who made a first-parent commit's change of ``path``: its identities, or, for a
        merge, those of the merged commits that changed it (never the merger's alone)."""
        if len(record.parents) < 2:
            return self.identities(record)
        found: set[str] = set()
        for commit in repo.range_log(record.parents[0], record.sha, [f":(literal){path}"]):
            if len(commit.parents) < 2:
                found |= self.identities(commit)
        return found

    def _pairs_to(
        self, repo: GitRepo, record: CommitRecord, path: str
    ) -> list[tuple[str, str, str, str | None]]:
        """git's pairings of a commit that added ``path`` to it: a move, or a copy of a file
        the commit changes, whole tree; else a copy of a file left unchanged
        (``--find-copies-harder`` over the plans folder, the parked paths and the file, from
        :data:`COPY_SCORE`)."""
        if not record.parents:
            return []
        scope = [self.plans_dir] if self.plans_dir != "." else []
        return [
            row
            for how, paths in (
                (_PAIRING, []),
                (("-C", "--find-copies-harder"), [*scope, *self._parked, path] if scope else []),
            )
            for row in self._pairings(repo, record, how, paths)
            if row[0][0] in "RC" and row[2] == path and (not paths or _kept_copy(row))
        ]

    def _rewritten_from(
        self, repo: GitRepo, record: CommitRecord, path: str, old_blob: str
    ) -> list[tuple[str, str, str, str | None]] | None:
        """Whether a commit's change of ``path`` is a rewrite, as git judges it: None when git
        pairs the new text with the old (an edit in place), else git's pairings of it as if
        the commit had added it (possibly none). git's ``-B`` breaks no file under 400
        bytes (round 54: an approver's plan copied over an agent's 8-byte scratch file was
        an "M" git paired with nothing), so the commit is compared with its parent's tree
        in a scratch index where the old version lies at another path: that old version is
        a source like any other, and the new text was made where it is not the best one."""
        import os
        import tempfile

        was = path + _WAS
        entries = "".join(
            f"{mode} {blob}\t{name}\x00"
            for mode, blob, name in (("0", "0" * len(old_blob), path), ("100644", old_blob, was))
        ).encode("utf-8", "surrogateescape")
        scope = [self.plans_dir] if self.plans_dir != "." else []
        rows: list[tuple[str, str, str, str | None]] = []
        with tempfile.TemporaryDirectory(prefix="plangate-pair-") as tmp:
            env = {"GIT_INDEX_FILE": os.path.join(tmp, "index")}
            repo.run("read-tree", record.parents[0], env=env)
            repo.run("update-index", "-z", "--index-info", input=entries, env=env)
            for how, paths in (
                (_PAIRING, []),
                (("-C", "--find-copies-harder"), [*scope, *self._parked, path, was]),
            ):
                out = repo.run(
                    "-c", "core.quotePath=false", "diff-index", "--cached", "-R", "-r", "-z",
                    "--raw", "--no-abbrev", *how, f"-l{PARKED_RENAME_LIMIT}", "--no-ext-diff",
                    "--no-textconv", record.sha,
                    *(["--", *(f":(literal){p}" for p in paths)] if paths else []), env=env,
                )  # fmt: skip
                rows += [
                    row
                    for row in _raw_pairs(out.split("\0"), 0)[0]
                    if row[0][0] in "RC" and row[2] == path and (not paths or _kept_copy(row))
                ]
        rows.sort(key=lambda row: -_score(row[0]))
        if rows and rows[0][1] == was:
            return None
        return [row for row in rows if row[1] != was]

    def _from_pairs(
        self,
        repo: GitRepo,
        record: CommitRecord,
        path: str,
        pairs: list[tuple[str, str, str, str | None]],
        hops: int,
    ) -> set[str]:
        """The writers a commit that wrote ``path`` anew (added or rewrote it) brought to it:
        its makers and the writers of the best source git pairs it from (see
        :meth:`_text_writers`); past :data:`FOLLOW_HOPS`, a source is one not followed:
        :data:`approvals.UNFOLLOWED` (nobody may approve what is made of it: round 54)."""
        who = self._makers(repo, record, path)
        for status, source, _, blob in pairs[:1]:
            if hops >= FOLLOW_HOPS:
                return who | {approvals.UNFOLLOWED}
            made = who if status[1:] != "100" else set()  # a byte-exact move or copy: none
            if source in self._parked:
                return made | self._parked[source]
            plan_id = self._plan_path(source)
            if plan_id is not None:
                return made | self._writers_of([plan_id])
            if blob is not None:
                return made | self._text_writers(repo, record, source, blob, hops + 1)
        return who

    def _left(self, repo: GitRepo, record: CommitRecord) -> set[str]:
        """The contents a commit takes from where they were: the hashed content of every plan
        file or draft it removes or rewrites. A plan it makes of one of them was moved (or
        moved back, restored, renamed from a draft, converted from its source), not made:
        its maker produced nothing (round 34)."""
        if not any(c.old_blob is not None for c in record.changes):
            return set()
        found: set[str] = set()
        for change in record.changes:
            if change.old_blob is None or change.old_blob == change.new_blob:
                continue
            if plan_id_of(change.path, self.plans_dir) is None:
                if self.plans_dir == "." or PurePosixPath(self.plans_dir) in (
                    PurePosixPath(change.path).parents
                ):
                    found.add(self._draft_hash(repo, change.path, change.old_blob) or "")
            elif _is_plan_file(change.path):
                facts = self.facts(repo, change.old_blob)
                found.add(facts.hash if facts is not None and facts.hash else "")
        found.discard("")
        return found

    def _produced(
        self,
        plan_hash: str | None,
        makers: Iterable[str],
        left: set[str],
        side: str | None = None,
        path: str = "",
        at: str | None = None,
    ) -> None:
        """A commit wrote ``plan_hash`` where its file held other content, and did not take
        it from another file it removed or rewrote (``left``): its makers made it (``at``:
        in that plan folder). A commit of a merged branch (``side``: its id; ``path``: the
        file it wrote) counts from the merge that brought it in, in the order of the
        first-parent line, and only when that merge keeps the content
        (:meth:`_place_side_made`): a withdrawal made before that merge was judged without it
        (round 36)."""
        if plan_hash is None or plan_hash in left:
            return
        people = {m for m in makers if not m.startswith(approvals.KEY_PREFIX)}
        people.discard(approvals.EVERYONE)
        if side is not None:
            self._side_found.append((side, plan_hash, people, path, at))
            return
        self.note_producers(plan_hash, people)
        if self._record is not None:
            self._note_origin(plan_hash, people, self._record.sha, at)

    def _note_origin(
        self, plan_hash: str, people: Iterable[str], commit: str, at: str | None = None
    ) -> None:
        """``commit`` made ``plan_hash`` (``at``: in that plan folder): its originators, who
        may withdraw the plans holding it as their author (:meth:`IndexStore.originators_of`,
        round 119). A making that descends from one counted already re-makes it (a revert
        back, a re-add, a copy elsewhere, on the line or on a merged branch forked after it)
        and removes nobody. A commit of the first-parent line descends from every making
        counted before it (one of the line, or of a branch merged before it: a merged
        branch's making counts from its merge); only a merged branch's commit asks git. A
        making afresh is also one at its folder (:meth:`IndexStore.origins_at`, round 122):
        a race elsewhere, which empties the originators everywhere, leaves those there."""
        repo = self._origin_repo
        line = self._record is not None and commit == self._record.sha

        def descends(ancestor: str, sha: str) -> bool:
            return line or (repo is not None and repo.is_ancestor(ancestor, sha))

        if self.note_originators(plan_hash, people, commit, descends) and at is not None:
            self.note_origins_at(at, plan_hash, people)

    def _place_side_made(self, repo: GitRepo, since: str | None, until: str) -> None:
        """Put each making found on a merged branch at the merge that brought it in: the
        first merge of the first-parent line (oldest first) whose other parents reach it.
        A making whose content that merge discards (``git merge -s ours``, a resolution that
        drops it, a later commit of the branch that edited or deleted it) makes nothing
        (:meth:`_merge_keeps`), wherever the line's passes fall (round 122: Mallory's copy
        of the agent's pull request on her branch, rejected there and merged ``-s ours``,
        counted from her merge made her the content's producer until the agent's pull request
        was merged, so her rejection vetoed its version by hash when a pass, or the audit,
        judged it in between)."""
        found, self._side_found = self._side_found, []
        lapses, self._side_lapse_found = self._side_lapse_found, []
        unplaced = [i for i, entry in enumerate(self._side) if entry[0] is None]
        if not found and not lapses and not unplaced:
            return
        spec = f"{since}..{until}" if since else until
        parents: dict[str, list[str]] = {}
        for line in repo.run("rev-list", "--parents", spec).splitlines():
            sha, *theirs = line.split()
            parents[sha] = theirs
        order = repo.run("rev-list", "--first-parent", "--reverse", spec).split()
        at = {sha: i for i, sha in enumerate(order)}
        owner: dict[str, int] = {}
        for merge in order:
            stack = list(parents.get(merge, [])[1:])
            while stack:
                sha = stack.pop()
                if sha in at or sha in owner or sha not in parents:
                    continue
                owner[sha] = at[merge]
                stack.extend(parents[sha])
        self._line_at.update(at)
        kept: dict[str, dict[str, set[str]]] = {}  # per merge: what it keeps, read once
        walked: dict[str, dict[str, dict[str, list[str]]]] = {}  # and what it edited from what
        for side, plan_hash, people, path, folder in found:
            position = owner.get(side, len(order))
            if position < len(order):
                merge = order[position]
                if not self._merge_keeps(
                    repo, merge, parents[merge][1:], plan_hash, path, kept
                ) and not self._kept_by_edit(
                    repo, merge, parents[merge], plan_hash, folder, walked
                ):
                    continue  # content the merge discarded makes nothing
            self._side_made.append((position, plan_hash, people, side, folder))
        for side, key, first in lapses:
            self._side_lapses.append((owner.get(side, len(order)), key, first))
        for i in unplaced:  # a withdrawal: applied after its merge's own changes (apply)
            _, *rest = self._side[i]
            self._side[i] = (owner.get(rest[1].sha, len(order)), *rest)

    def _merge_keeps(
        self,
        repo: GitRepo,
        merge: str,
        merged: Sequence[str],
        plan_hash: str,
        path: str,
        kept: dict[str, dict[str, set[str]]],
    ) -> bool:
        """Whether the first-parent ``merge`` keeps ``plan_hash`` from its ``merged``
        parents: a file under the plans folder (a plan file, a draft, a source by its
        conversion) holds that content both in the merge and at the same path in a merged
        parent. ``path`` (the file a merged commit wrote it in) is asked first; the trees are
        listed (once per merge: ``kept``) only when it does not answer: a merge ``-s ours``
        keeps only its first parent's, so nothing its branch made (round 35, ``ours-copy``)."""

        def held(commit: str) -> bool:
            return self._draft_hash(repo, path, repo.blob_sha(commit, path)) == plan_hash

        if path and held(merge) and any(held(parent) for parent in merged):
            return True
        if merge not in kept:
            ours = self._tree_hashes(repo, merge)
            both: dict[str, set[str]] = {}
            for parent in merged:
                for name, found in self._tree_hashes(repo, parent, set(ours)).items():
                    if ours[name] == found:
                        both.setdefault(found, set()).add(name)
            kept[merge] = both
        return plan_hash in kept[merge]

    def _tree_hashes(
        self, repo: GitRepo, commit: str, only: set[str] | None = None
    ) -> dict[str, str]:
        """The hashed content of each file under the plans folder in ``commit``'s tree that
        is a plan file, a draft or a source (:meth:`_draft_hash`), by path (``only``: of
        those paths alone)."""
        out = repo.run("-c", "core.quotePath=false", "ls-tree", "-r", "-z", "--full-tree", commit)
        found: dict[str, str] = {}
        for entry in out.split("\0"):
            meta, _, name = entry.partition("\t")
            if not name or (only is not None and name not in only):
                continue
            mode, kind, blob = [*meta.split(), "", "", ""][:3]
            if kind != "blob" or mode not in _FILE_MODES or not self._writes_under_plans(name):
                continue
            plan_hash = self._draft_hash(repo, name, blob)
            if plan_hash is not None:
                found[name] = plan_hash
        return found

    def flush_side_made(self, upto: str | None = None) -> None:
        """Count the makings of merged branches brought in by merges up to ``upto`` on the
        first-parent line (inclusive; None: all of them), and the decisions taken back there
        (:meth:`_side_lapse`)."""
        if not self._side_made and not self._side_lapses:
            return
        if upto is None:  # a merge applied reads them first (apply)
            self._lapse_side_taken(None)
        stop = self._line_at.get(upto, -1) if upto is not None else None
        if stop != -1:
            self._flush_side_to(stop)

    def _flush_side_to(self, stop: int | None) -> None:
        """:meth:`flush_side_made` up to the line's position ``stop`` (None: all)."""
        kept = []
        for position, plan_hash, people, side, folder in self._side_made:
            if stop is None or position <= stop:
                self.note_producers(plan_hash, people)
                self._note_origin(plan_hash, people, side, folder)
            else:
                kept.append((position, plan_hash, people, side, folder))
        self._side_made = kept
        lapses, self._side_lapses = self._side_lapses, []
        for position, key, first in lapses:
            if (stop is None or position <= stop) and first.startswith(_TAKEN):
                continue  # the line's open approval: taken back already (_lapse_side_taken)
            if (stop is None or position <= stop) and first.startswith(_DECIDED):
                self._mark_decision_lapsed(key, first.removeprefix(_DECIDED))
            elif stop is None or position <= stop:
                self._mark_lapsed(key, first)
            else:
                self._side_lapses.append((position, key, first))
        if not kept and not self._side_lapses and not self._side_due():
            self._line_at = {}

    def _lapse_side_taken(self, upto: str | None, repo: GitRepo | None = None) -> None:
        """Lapse the open approvals that the branches merged by ``upto`` (and not yet
        applied) took back (:meth:`_side_lapse`: set away from ``approved`` there, by anyone),
        as the same change on the line does, before ``upto``'s own changes are read: the
        merge carries the lapse whatever its net diff (round 79: the branch's take-back or
        withdrawal, then the approved bytes written back in place or moved byte-exact, merged
        ``--no-ff``, ran on the approval taken back); a content change made there (its bytes
        written back since) voids it, as on the line. So a move it brings carries nothing
        (:meth:`_moved_state`) and bytes back in place approve nothing of hers (a merge that
        changed no plan file is no commit applied: the next one, or the scan's end, lapses
        it; ``upto`` None: all of them). A merge whose own file there says otherwise than
        ``approved`` lapses it as any commit of the line does, dated as before (``repo``:
        to read it; round 71, :meth:`_lapse_maker`)."""
        stop = self._line_at.get(upto, -1) if upto is not None else None
        if stop != -1:
            self._lapse_taken_to(stop, upto, repo)

    def _lapse_taken_to(self, stop: int | None, upto: str | None, repo: GitRepo | None) -> None:
        """:meth:`_lapse_side_taken` up to the line's position ``stop`` (None: all), the
        commit there being ``upto`` (read with ``repo``)."""
        for position, key, first in self._side_lapses:
            if (stop is not None and position > stop) or not first.startswith(_TAKEN):
                continue
            plan_id, sha, status = first.removeprefix(_TAKEN).split("\0")
            state = self.plans.get(plan_id)
            request = (state.request or {}) if state is not None else {}
            if state is None or state.status != "approved" or request.get("identity") != key:
                continue
            if repo is not None and upto is not None and position == stop:
                there = self.facts(repo, repo.blob_sha(upto, state.file))
                if there is not None and there.status != "approved":
                    continue  # the merge's own status change: read as on the line
            if status == "approved":  # its content changed there, as on the line (_human_commit)
                state.request = {**request, "voided_by": request.get("voided_by") or sha}
                state.note(f"{sha[:12]} changed its content on a merged branch after approval")
            else:
                self._lapse_at(state, sha, status or None, " on a merged branch")
            self.touch(plan_id)

    def withdrawers(self, state: PlanState) -> frozenset[str] | list[str]:
        """The authors who may withdraw a plan (SPEC §4: "an author of the plan"): the
        originators (:meth:`IndexStore.originators_of`) of the version at stake and of the
        versions it was edited from at this plan (:attr:`PlanState.versions`): not who moved
        it (a move makes nothing: round 34), nor who raced its author to the branch with the
        same content (two makings, neither on top of the other: only someone in both;
        round 35), nor who edited it and took the edit back (round 20: the version at stake
        came from none of hers). For a plan with no valid version, its changers. A draft has
        none: only an allowed approver's rejection of it counts (round 119, draft-rejection-
        ignored: a reviewer's objection to content nobody submitted yet vetoes that content;
        its author setting it ``rejected`` is no withdrawal, as round 37's library author's
        of her own draft library, pinned by parents, must not withdraw them).

        Round 119 (``author-withdrawal-lost-to-another-copy``,
        ``plan-author-loses-withdrawal-to-coeditor``): this read the producers of the version
        at stake, the people in EVERY commit that made it anywhere, so anyone's copy of the
        plan at another slug (even deleted since, or merged from a branch), revert back to
        it or re-add of it removed its author's right to withdraw it, and so did another's
        edit (v2 was hers alone); Bob's approval then ran what its author had rejected. A
        re-making now removes nobody here. Whether a withdrawal also vetoes the version by
        hash everywhere is still the producers' (:meth:`_veto`: rounds 16 and 23).

        Round 122 (``author-withdrawal-lost-to-a-raced-copy``): a version's originators are
        read AT this plan's folder first (:meth:`IndexStore.origins_at`: its makings afresh
        there, or those a move brought from the folder it left, :meth:`_carry_lineage`, round
        124), those everywhere only when none was there (a copy). Mallory's copy of
        an open pull request's plan landed first at another folder (pending, a draft,
        deleted again, or from a branch forked before it and merged after) made the two
        makings neither of which holds the other: the originators everywhere were nobody,
        the author's rejection was ignored and Bob's approval ran the plan. Now her copy
        takes nothing from the author and gives her nothing at the author's plan; two
        makings at the plan's own path still keep only someone in both (round 35: git
        cannot tell who copied whom)."""
        if state.status == "draft":
            return frozenset()
        stake = state.stake()
        if stake is None:
            return state.changers
        found: set[str] = set()
        for plan_hash in _lineage(state.versions, stake):
            here = self.origins_at(state.plan_id, plan_hash)
            found |= here if here is not None else self.originators_of(plan_hash) or frozenset()
        return self.author_set(found)

    def _merged_lineage(
        self, repo: GitRepo, record: CommitRecord, plan_id: str, state: PlanState, plan_hash: str
    ) -> set[str]:
        """The contents ``plan_hash`` was made of, brought into ``plan_id`` by the merge
        ``record`` of the first-parent line: what its merged branches edited it from there
        (:meth:`_branch_made`), or, written by the merge itself, every parent's content
        there. What the branches edited those from goes into :attr:`PlanState.versions`
        too, where the plan never held them before (the first time each came counts).

        Round 127 (``author-right-lost-to-edit-on-merged-branch``): only the line's commits
        noted what a version was edited from, so the agent's v1, edited by Alice (a commit
        of hers, or her ``--no-commit`` inner merge) on the agent's branch before main held
        the plan, was no version of the plan Bob's ``--no-ff`` merge brought: the agent's
        rejection was ``E_APPROVER_NOT_ALLOWED`` and Carol's approval ran Alice's v2."""
        if self._made_on_branches is None or self._made_on_branches[0] != record.sha:
            self._made_on_branches = (
                record.sha,
                self._branch_made(repo, record.sha, record.parents),
            )
        made = self._made_on_branches[1].get(plan_id, {})
        for each, earlier in made.items():
            state.versions.setdefault(each, earlier)
        held = [self._folder_hashes(repo, parent, plan_id) for parent in record.parents]
        if any(plan_hash in hashes for hashes in held):
            return set(made.get(plan_hash, ()))
        return set().union(*held)  # the merge wrote it: made of what each parent held

    def _kept_by_edit(
        self,
        repo: GitRepo,
        merge: str,
        parents: Sequence[str],
        plan_hash: str,
        folder: str | None,
        walked: dict[str, dict[str, dict[str, list[str]]]],
    ) -> bool:
        """Whether the first-parent ``merge`` keeps, at the plan folder ``folder``, a
        version its merged branches edited there from ``plan_hash`` (at any remove: v1
        edited into v2, v2 into v3): the making of ``plan_hash`` there is one of the
        makings of what the merge brings, as it is when the branch lands as commits of the
        line (a fast-forward); so is one the merge itself edited there (its own bytes, made
        of every parent's content). Round 127: a version edited away on the merged branch
        made nothing, so the writer of v1 was no originator of the plan her v1 became.
        ``walked``: each merge's :meth:`_branch_made`, read once. A merge that keeps only
        its first parent's content (``-s ours``) keeps nothing of its branches."""
        if folder is None:
            return False
        if merge not in walked:
            walked[merge] = self._branch_made(repo, merge, parents)
        made = dict(walked[merge].get(folder, {}))
        if not made:
            return False
        ours = self._folder_hashes(repo, merge, folder)
        held = [self._folder_hashes(repo, parent, folder) for parent in parents]
        every: set[str] = set().union(*held)
        for own in ours - every:
            made[own] = sorted(every)
        kept = (ours - every) | (ours & set().union(*held[1:]))
        return any(plan_hash in _lineage(made, h) for h in kept)

    def _branch_made(
        self, repo: GitRepo, merge: str, parents: Sequence[str]
    ) -> dict[str, dict[str, list[str]]]:
        """Per plan folder: each content a commit of the merged branches of ``merge``
        (``parents``: all of its parents) wrote there that none of that commit's parents
        held there, and what they held (the content it was edited from; none for a plan
        made from nothing; every side's for a merge's own content, an add/add resolved by
        hand), the first making of each content kept. One walk of the branches under the
        plans folder, whatever the plans the merge brings."""
        scope = [self.plans_dir] if self.plans_dir != "." else []
        found: dict[str, dict[str, list[str]]] = {}
        seen: set[str] = set()
        for parent in parents[1:]:
            for commit in repo.lineage_log(parents[0], parent, scope):
                if commit.sha not in seen:
                    seen.add(commit.sha)
                    self._note_made(repo, commit, found)
        return found

    def _note_made(
        self, repo: GitRepo, commit: CommitRecord, found: dict[str, dict[str, list[str]]]
    ) -> None:
        """:meth:`_branch_made` of one commit of a merged branch."""
        for folder in {plan_id_of(c.path, self.plans_dir) for c in commit.changes}:
            if folder is None:
                continue
            here = self._folder_hashes(repo, commit.sha, folder)
            before = set().union(*(self._folder_hashes(repo, p, folder) for p in commit.parents))
            for plan_hash in here - before:
                found.setdefault(folder, {}).setdefault(plan_hash, sorted(before))

    def _folder_hashes(self, repo: GitRepo, commit: str, folder: str) -> set[str]:
        """The content of each plan file the plan folder ``folder`` holds in ``commit``."""
        found: set[str] = set()
        for name in PLAN_FILES:
            facts = self.facts(repo, repo.blob_sha(commit, _folder_file(folder, name)))
            if facts is not None and facts.hash:
                found.add(facts.hash)
        return found

    def _carry_lineage(
        self,
        repo: GitRepo,
        gone: FileChange | None,
        plan_id: str,
        state: PlanState,
        onto: bool,
    ) -> None:
        """A plan moved into ``plan_id`` from another folder (``gone``: the file it left,
        :meth:`_paired_from`; a copy leaves its source and is none) brings who may withdraw
        it there (:meth:`withdrawers`): the versions it was edited from at its old folder
        (:attr:`PlanState.versions`, the moved content first) and their originators at that
        folder (:meth:`IndexStore.carry_origins_at`, those it had brought by its own earlier
        moves included), so a chain of moves reads back to the folder the plan was made at.
        A version with no making at its old folder carries nothing: the originators
        everywhere are read for it, as there. Into a path holding no plan file, the moved
        plan's lineage replaces what an earlier plan left at the folder (Mallory's copy raced
        in at ``plans/x`` and deleted, then the agent's plan moved there, is the agent's). A
        plan file moved ONTO another (``onto``: a swap, an overwrite, or a removal paired
        with a status change of a plan of the same content) brings its originators only
        where the folder has none for that content, and no versions: what the folder's own
        plan was made of stays its own (Mallory's copy removed in the commit that sets the
        agent's plan ``rejected`` gives her no right there).

        Round 124 (``author-withdrawal-lost-to-race-then-move``): once the raced plan of round
        122 was moved (``git mv plans/r plans/r-x``, by anyone), its new folder had no making
        and the originators everywhere, which the race made nobody, were read: the agent's
        rejection at ``plans/r-x`` was ``E_APPROVER_NOT_ALLOWED`` and Bob's approval ran it.
        The move makes nothing and gives its mover nothing (round 34)."""
        if gone is None or gone.old_blob is None:
            return
        source = plan_id_of(gone.path, self.plans_dir)
        if source is None or source == plan_id:
            return  # not a plan's file, or a rename between the folder's two names
        facts = self.facts(repo, gone.old_blob)
        moved = facts.hash if facts is not None else None
        if not moved:
            return
        was: PlanState | None = getattr(self, "_before_move", {}).get(gone.path)
        lineage = was.versions if was is not None and was.hash == moved else {}
        for plan_hash in _lineage(lineage, moved):
            here = self.origins_at(source, plan_hash)
            if here is not None and not (onto and self.origins_at(plan_id, plan_hash) is not None):
                self.carry_origins_at(plan_id, plan_hash, here)
            if not onto:
                state.versions.setdefault(plan_hash, list(lineage.get(plan_hash, ())))

    def _hold_moved(self, target: str, sources: Iterable[str]) -> None:
        """The owned-block editors of the plans moved to ``target`` (their folders' ``@held``
        writers, :meth:`_plan_file_writers`) go on writing its later versions: an action left
        in ``approval:`` and unwrapped by the agent in the commit that moves the plan is still
        theirs."""
        for source in sources:
            held = self.authors.get(folder_key(source) + _HELD, frozenset())
            if held and target not in (self.plans_dir, "."):
                self._held_moved.setdefault(target, set()).update(held)

    def _writers_of(self, sources: Iterable[str]) -> set[str]:
        found: set[str] = set()
        for source in sources:
            state = self.plans.get(source)
            if state is not None:
                found |= set(state.changers)
            found |= self.authors.get(folder_key(source), frozenset())
            found |= self.authors.get(folder_key(source) + _EMPTIED, frozenset())
        found.discard(self.controller_email)
        return found

    def _folder_of(self, path: str) -> str | None:
        """The plan folder a file under the plans folder lies in (a plan's id)."""
        folder = PurePosixPath(path).parent
        if self.plans_dir != "." and PurePosixPath(self.plans_dir) not in folder.parents:
            return None
        return None if str(folder) in (self.plans_dir, ".") else str(folder)

    def _carry(self, carried: dict[str, set[str]]) -> None:
        for plan_id, writers in carried.items():
            state = self.plans.get(plan_id)
            if state is None and writers and plan_id not in (self.plans_dir, "."):
                # a source (PLAN.json) not yet converted: the plan its folder will hold
                self._folder_writers(PurePosixPath(plan_id), writers)
            if state is None or not writers:
                continue
            state.changers = sorted(set(state.changers) | writers)
            # its folder and every plan folder it lies in (round 42: a plan moved below
            # another's folder brings its writers there too)
            self._folder_writers(PurePosixPath(plan_id), writers)
            if state.hash is not None:
                self._add_authors(state.hash, writers)  # a copy of it: the same writers
            self.touch(plan_id)

    def _brought(self, repo: GitRepo, record: CommitRecord, change: FileChange) -> bool:
        """Whether a merge brought ``change``'s file as a merged branch changed it since its
        merge base with the first parent (the very blob): a merge's writers are the merged
        commits, whose makers :meth:`merged_authors` counted, not the person who merged
        (round 65: Alice merging her review branch became a writer of the agent's note in its
        plan's folder, and could never approve that plan). So is a file git's own merge of the
        parents makes byte for byte where it met no conflict (round 66: both sides' edits
        joined cleanly, every line from one side or the base: git's join, not the merger's
        hand; the sides' makers wrote it), and, in a plan's folder, one git's merge settles
        without a hand where it conflicted (round 67: :meth:`_settled`). What a merge wrote
        otherwise (a conflict resolved by hand, an edit of its own, a file no branch changed)
        is its own."""
        if not record.is_merge:
            return False
        if change.new_blob is None:
            return self._brought_removal(repo, record, change.path)
        if change.new_blob in self._side_plans(repo, record).files.get(change.path, ()):
            return True
        join = self._join(repo, record)
        if join is None:
            return False
        stages = join[1].get(change.path)
        if stages is None:
            return change.new_blob == repo.blob_sha(join[0], change.path)
        return self._under_plans(change.path) and self._settle(repo, record, stages, change)

    def _brought_removal(self, repo: GitRepo, record: CommitRecord, path: str) -> bool:
        """Whether the merge ``record`` removed ``path`` as a merged branch removed it: a side
        parent lacks it and git's own join of the parents does too, with no conflict there
        (round 91: the agent's branch deleting a held plan's twin, merged ``--no-ff`` by Bob,
        made Bob the release's writer; the branch's commits made it). An entry of any kind
        (a symlink, a gitlink: round 92) is there or not alike."""
        if all(repo.mode_of(parent, path) for parent in record.parents[1:]):
            return False
        join = self._join(repo, record)
        return join is not None and path not in join[1] and not repo.mode_of(join[0], path)

    def _made_by(self, repo: GitRepo, commit: CommitRecord, change: FileChange) -> bool:
        """Whether ``commit``, listed by a log of a merged branch (every commit behind a
        merge's other parents, at any depth; a merge there shown against its first parent),
        made ``change`` itself: a merge made only what it did not bring (:meth:`_brought`:
        a side's blob, git's clean join, a hands-off settlement), the one rule for every
        merge wherever it sits (round 68). What it brought its sides' commits made, and the
        same log lists them (round 127, inner-merger-counted-as-writer: the agent's plan on
        a branch merged ``--no-ff`` by Bob into an integration branch that Bob merged into
        main made Bob its writer, his approval ``E_SELF_APPROVAL``)."""
        return not commit.is_merge or not self._brought(repo, commit, change)

    def _wrote_content(self, repo: GitRepo, commit: CommitRecord, change: FileChange) -> bool:
        """Whether ``commit``, listed by a log of a merged branch (:meth:`_made_by`), wrote
        the plan content ``change`` holds: it changed the hashed content, and, a merge, left
        content none of its parents held there (:meth:`_new_content`: a status or comment
        joined writes none) that it did not bring (a conflict resolved by hand, an edit in
        a ``--no-commit`` merge, a removal no side made)."""
        if not self._changed_content(repo, change):
            return False
        if not commit.is_merge:
            return True
        if change.new_blob is not None and not self._new_content(
            repo, commit.parents, change.path, change.new_blob
        ):
            return False
        return self._made_by(repo, commit, change)

    def _side_removed(self, repo: GitRepo, record: CommitRecord, path: str) -> bool:
        """Whether a merged branch of the merge ``record`` removed ``path`` (an entry of any
        kind): a side parent lacks it and its merge base with the first parent had it. The
        removal the merge leaves is that branch's commits' too, whether or not git's join
        conflicted there (round 92: Bob's branch deleting a held twin the agent rewrote on
        main, the modify/delete resolved by Mallory's ``git rm``, left Bob no writer). In a
        criss-cross any merge base that had it counts (round 98): this only adds the
        branch's makers to the merger, never takes him away."""
        for side in record.parents[1:]:
            if repo.mode_of(side, path):
                continue
            if any(repo.mode_of(base, path) for base in repo.merge_bases(record.parents[0], side)):
                return True
        return False

    def _merged_makers(self, repo: GitRepo, record: CommitRecord, path: str) -> set[str]:
        """Who made what the merge ``record`` brought at ``path`` (:meth:`_brought`): the
        makers of the merged branches' commits that changed it (a status line alone is no
        writing there either: :meth:`_status_only`), not the person who merged."""
        found: set[str] = set()
        for parent in record.parents[1:]:
            for commit in repo.range_log(record.parents[0], parent, [path]):
                for change in commit.changes:
                    if change.path != path or not self._made_by(repo, commit, change):
                        continue  # a merge of the branch brought it: its sides are listed too
                    if change.new_blob is None or not self._status_only(repo, commit, change):
                        found |= self.identities(commit)
        found.discard(self.controller_email)
        return found

    def _touchers(
        self, repo: GitRepo, record: CommitRecord, change: FileChange, plan_id: str
    ) -> set[str]:
        """Who wrote what ``record`` changed of ``plan_id``'s claims (:meth:`_ambiguity`:
        ``change``, or, when that names no change of the commit, a re-judging's, the claims
        the commit changed by the hold's rule, :meth:`_file_owners`), the one rule for every
        commit: a status line alone writes nothing (:meth:`_status_only`, a twin's too: round
        91, Bob's ``approved`` in a byte copy ``PLANS/sw/PLAN.yml`` made while held), what a
        merge brought is its branches' makers' (:meth:`_merged_makers`: round 91, a twin's
        deletion merged ``--no-ff`` by Bob), anything else the commit's own; a removal a merge
        leaves that a merged branch made is that branch's makers' too where git's join
        conflicted (:meth:`_side_removed`: round 92, a modify/delete resolved by ``git rm``
        is the branch's deletion and the merger's resolution). A commit whose touch is found
        nowhere is its own writer (the safe side)."""
        own = {  # as the hold has always counted a commit's own touch
            approvals.normalize_identity(record.author.email),
            approvals.normalize_identity(record.committer.email),
        }
        if change.old_blob != change.new_blob and any(
            c.path == change.path for c in record.changes
        ):
            touched = [change]
        else:
            touched = [c for c in record.changes if self._claims_plan(repo, record, c, plan_id)]
            if not touched:
                return own
        found: set[str] = set()
        for each in touched:
            if each.new_blob is not None and self._status_only(repo, record, each):
                continue  # a removal chose the content left: never a status alone
            if record.is_merge and self._brought(repo, record, each):
                found |= self._merged_makers(repo, record, each.path)
                continue
            found |= own  # the merger's resolution of a conflict too (a modify/delete's)
            if (
                each.new_blob is None
                and record.is_merge
                and self._side_removed(repo, record, each.path)
            ):
                found |= self._merged_makers(repo, record, each.path)  # the branch's removal too
        return found

    def _claims_plan(
        self, repo: GitRepo, record: CommitRecord, change: FileChange, plan_id: str
    ) -> bool:
        """Whether ``change`` is of a file claiming ``plan_id``'s plan file place (the hold's
        rule, :meth:`_file_owners`) as ``record`` leaves it or as its first parent had it."""
        claim = _claim_entry(change.path)
        if claim is None:
            return False
        target = self.plans.get(plan_id)
        if target is None:
            return False
        shas = [record.sha] if change.new_blob is not None else []
        shas += record.parents[:1] if change.old_blob is not None else []
        return any(  # only this plan's files are listed (a burst's other plans never)
            self._file_owners(repo, sha, claim, lambda state: state is target) for sha in shas
        )

    def _status_claim(self, repo: GitRepo, record: CommitRecord, change: FileChange) -> bool:
        """Whether ``change`` (a path that is no plan's own file as written) set a status
        alone in a file claiming some plan's plan file place (a twin ``PLANS/x/PLAN.yml``,
        ``plans/x\\PLAN.yml``, ``plans/x/plan.yml``): as in the plan's own file, no writing of
        the plan (round 91: Bob's ``approved`` in a byte-copy twin while held made him a
        writer of the plan, his next approval ``E_SELF_APPROVAL``)."""
        parts = path_parts(change.path)
        if not parts or not plan_file_claims([parts[-1]]) or change.new_blob is None:
            return False
        if change.mode not in _FILE_MODES:
            return False
        if not self._status_only(repo, record, change):
            return False
        return bool(self._file_owners(repo, record.sha, change.path, unknown=True))

    def _settle(
        self, repo: GitRepo, record: CommitRecord, stages: _Stages, change: FileChange
    ) -> bool:
        """:func:`_settled` for at most :data:`SETTLE_BUDGET` paths of one merge (three ``git
        merge-file`` runs each): past it, what the merge wrote is the merger's, the side that
        refuses honest work and lets nothing through (a hostile merge of thousands of
        conflicted notes would otherwise cost a pass thousands of processes)."""
        sha, used = getattr(self, "_settle_used", ("", 0))
        used = used if sha == record.sha else 0
        if used >= SETTLE_BUDGET:
            return False
        self._settle_used = (record.sha, used + 1)
        assert change.new_blob is not None
        return _settled(repo, stages, change.new_blob)

    def _join(self, repo: GitRepo, record: CommitRecord) -> _Join | None:
        """git's merge of a merge's parents (ort, as ``git merge`` runs it): asked once per
        merge (:func:`_merge_of`)."""
        cache: tuple[str, _Join | None] | None = getattr(self, "_join_cache", None)
        if cache is None or cache[0] != record.sha:
            cache = (record.sha, _merge_of(repo, record.parents))
            self._join_cache = cache
        return cache[1]

    def _is_controller(self, record: CommitRecord, repo: GitRepo | None = None) -> bool:
        """Whether the controller made this commit: a commit under its name that it did not
        make is anyone's commit. The controller knows its commits by record; git alone (the
        audit, a fresh clone) by both identities: the controller writes itself as author
        and committer, and git's own rewrites (`commit --amend`, a rebase, a cherry-pick)
        keep the author but write whoever ran them as committer (round 58: the agent's
        amended `complete` commit, its log rewritten, read as the controller's own); and
        by what it records: an event with no cause on the branch, or a run event with no
        seal, is not one (:meth:`disowned`); and once a sealed commit under its name was read
        (``sealing_seen``), an unsealed one is not one whatever it records (round 95, ``mx``:
        an unsealed record commit that set a plan ``rejected`` stood for the audit and
        ``check``; history from before round 66's seals reads as it did); nor, by its record
        or not, sealed or not, one whose status changes no controller event makes
        (:meth:`impossible`, round 97). An UNSEALED commit in its record (one adopted by
        trust on first use: the controller seals every commit it makes) is judged by the
        same git-alone rule as the audit and ``check`` (:meth:`unproven`, round 98)."""
        if record.author.email.lower() != self.controller_email:
            return False
        if self.impossible(record, repo):
            return False
        if self.own_commit is not None:
            return self.own_commit(record.sha) and self.unproven(record, repo) is None
        if record.committer.email.lower() != self.controller_email:
            return False
        if _sealed(record):
            self.sealing_seen = True
        elif self.sealing_seen:  # the controller has sealed every commit since (round 95)
            return False
        return not (self._unmatched_events(record, repo) or unsealed_run_events(record))

    def impossible(self, record: CommitRecord, repo: GitRepo | None) -> str | None:
        """Why a commit under the controller's name is one it could never have made, by the
        status changes it makes to plan files (:func:`status_unexplained`, the audit's rule):
        a ``freeze`` that sets ``rejected``, any status no controller event sets. Whatever
        its seal or the controller's record, it is anyone's (round 97, ``fx``: an unsealed
        ``plangate: freeze`` setting ``rejected`` before the controller's first pass was
        adopted by trust on first use, and a rejection by no approver vetoed the plan).
        Reads only the plan files the commit changes; asked once per commit."""
        cached: tuple[str, str | None] | None = getattr(self, "_impossible_cache", None)
        if cached is None or cached[0] != record.sha:
            why = None if repo is None else self._status_unexplained(repo, record)
            cached = (record.sha, why)
            self._impossible_cache = cached
        return cached[1]

    def _status_unexplained(self, repo: GitRepo, record: CommitRecord) -> str | None:
        events = record_events(record)
        for change in record.changes:
            plan_id = plan_id_of(change.path, self.plans_dir)
            if plan_id is None or not _is_plan_file(change.path) or change.new_blob is None:
                continue
            after = self.facts(repo, change.new_blob)
            before = self.facts(repo, change.old_blob)
            if after is None or after.status is None:
                continue
            if before is not None and before.status == after.status:
                continue  # a status it left as it was is no change it made
            why = status_unexplained(events.get(plan_id, ""), after.status)
            if why:
                return f"{why} ({change.path})"
        return None

    def disowned(self, record: CommitRecord, repo: GitRepo | None = None) -> str | None:
        """Why a commit under the controller's name (author and committer) is not its own
        (None: it is, or it does not claim to be). By its record of the commits it made when
        there is one, for every event kind; git alone, by the cause every controller event
        has on the branch (:func:`unmatched_event`) and the seal every run event of it
        carries (:func:`unsealed_run_events`): an outcome ends a run the controller
        started, an abort answers an abort request, an allowed aborter's own commit setting
        ``aborted`` (SPEC §4), never the controller's own word (round 65: a well-shaped
        ``plangate: abort`` with ``Aborted-By: alice`` under its name ended her paused run in
        the audit; round 66: a batched ``complete`` of a plan never started read as its
        outcome; round 69: an unsealed ``start`` read as the plan's run, so the controller's
        real start after an honest approval was flagged started twice)."""
        named = self.controller_email
        if record.author.email.lower() != named or record.committer.email.lower() != named:
            return None
        cannot = self.impossible(record, repo)
        if cannot:
            return f"{cannot}: a status change no controller event makes (round 97)"
        if self.own_commit is not None:
            if self.own_commit(record.sha):
                return self.unproven(record, repo)
            return "not in the controller's record of the commits it made (<state_dir>/commits)"
        if self.sealing_seen and not _sealed(record):
            return (
                "no Controller-Seal: (the controller has sealed every commit it made on this "
                "branch since its first sealed one; an unsealed one is anyone's commit)"
            )
        return _not_its_own(self._unmatched_events(record, repo), unsealed_run_events(record))

    def unproven(self, record: CommitRecord, repo: GitRepo | None = None) -> str | None:
        """Why a commit in the controller's record that carries no seal is not its own all
        the same (None: it is sealed, or what it records has its cause on the branch). The
        controller seals every commit it makes, so an unsealed one in its record was adopted
        by trust on first use (docs/operations.md): it stands only as the audit and ``check``
        read it by git alone, an event with its cause and no run event (round 98: an unsealed
        ``start`` before the first pass was adopted, shown as the plan's status, its honest
        approvals illegal; one naming the real hash was failed in doubt by the controller,
        then ONE vote of two read as a resume ran it). A SEALED commit adopted on trust
        (``--take-over``: the key that sealed it is gone, no key here verifies it) is judged
        the same way, its seal line being anyone's to copy (round 99, atk99d: a forged
        ``complete`` with a real commit's seal read ``completed``, the tool never run)."""
        if _sealed(record) and not (self.on_trust is not None and self.on_trust(record.sha)):
            return None
        return _not_its_own(self._unmatched_events(record, repo), unsealed_run_events(record))

    def _unmatched_events(self, record: CommitRecord, repo: GitRepo | None = None) -> list[str]:
        """``<event> <plan>`` for each event a commit's message says the controller made that
        has no cause in the index's state of the plan (:func:`unmatched_event`). A
        ``Run-Start:`` record of a run whose path holds another plan is judged against that
        run by the audit instead."""
        recorded = self._run_starts(record)
        hashes = _event_hashes(record)
        found = []
        for plan, event in record_events(record).items():
            if self._read_elsewhere(plan):
                continue
            state = self.plans.get(plan)
            asked = state is not None and state.abort_requested
            if event == "refuse":
                if unmatched_event(event, refusal_stands(state), asked) or not self._refused_back(
                    repo, record, plan, state
                ):
                    found.append(f"{event} {plan}")
                continue
            status = _run_stands(state)
            if (
                status != _PAUSED
                and (status not in _ENDED or asked)
                and self._started_at(hashes.get(plan), plan)
            ):
                status = _RUNNING  # its start is on the branch: a person's edit of the
                # file since (a removal and its revert), or an abort request made while it
                # ran (round 42's o-abort), ends no run (round 66's lookalike fix)
            if plan not in recorded and unmatched_event(event, status, asked):
                if repo is not None and self.closes_start(repo, record, plan) is not None:
                    continue  # it closes a run whose start stands beside the line
                found.append(f"{event} {plan}{_closed_elsewhere(record, plan)}")
        return found

    def _read_elsewhere(self, plan: str) -> bool:
        """Is ``plan`` under another recorded plans folder than this index's (the audit's
        :attr:`other_folders`)?"""
        if not self.other_folders or _in_folder(plan, self.plans_dir):
            return False
        return any(_in_folder(plan, folder) for folder in self.other_folders)

    def _brought_back(self, record: CommitRecord) -> dict[str, str]:
        """What :meth:`apply_merged_back` read for the merge ``record``: path -> blob."""
        found = self._merged_back_writes
        return found[1] if found is not None and found[0] == record.sha else {}

    def merged_back_runs(self, repo: GitRepo, merge: CommitRecord) -> list[CommitRecord]:
        """The controller's run records (a start and what followed it: checkpoint, pause,
        outcome) that ``merge`` brings back beside the branch's line, oldest first: commits
        behind its other parents, not behind its first, made by the controller (by name and
        sealed, as :meth:`closes_start` reads a start there; by its record when the index
        has one), each on top of the line or of another of them, among them the start of
        each plan they record. The shape of a reset that erased a run's start and a ``git
        merge --no-ff`` of the erased tip (round 111): the run goes on from that start (a
        controller that never saw it erased reads the merge as any merge,
        docs/execution.md), so its records are read where the merge put them (round 122,
        atk122d ``merged-back-start-unaudited``: the fresh-clone audit listed no execution
        of the run and flagged the controller's own outcome)."""
        if not merge.is_merge:
            return []
        ours = [r for r in self._merged_commits(repo, merge) if r.parents and self._made_here(r)]
        if not ours:
            return []
        # the erased tip: the controller's commits on top of the line or of one another
        # (never a foxtrot's other line), parents first
        line = merge.parents[0]
        chain = [r for r in ours if repo.is_ancestor(r.parents[0], line)]
        while True:
            made = {r.sha for r in chain}
            more = [r for r in ours if r.sha not in made and r.parents[0] in made]
            if not more:
                break
            chain += more
        found = [r for r in chain if any(e in RUN_EVENTS for e in record_events(r).values())]
        started: set[str] = set()
        kept = []
        for record in found:
            events = record_events(record)
            started |= {plan for plan, event in events.items() if event == "start"}
            if started & set(events):
                kept.append(record)
        return kept

    def apply_merged_back(self, repo: GitRepo, merge: CommitRecord, sink: EventSink | None) -> None:
        """Apply the run records ``merge`` brings back (:meth:`merged_back_runs`) before it,
        each judged as a first-parent commit is (one :meth:`disowned` names stays anyone's,
        unread here); the merge's own change of a file to the very blob they last wrote is
        then theirs, read already, not the merger's edit of the controller's blocks."""
        writes: dict[str, str] = {}
        for record in self.merged_back_runs(repo, merge):
            if self.disowned(record, repo) is not None:
                continue
            self.apply(repo, record, sink)
            writes.update({c.path: c.new_blob for c in record.changes if c.new_blob})
        self._merged_back_writes = (merge.sha, writes)

    def _merged_commits(self, repo: GitRepo, merge: CommitRecord) -> list[CommitRecord]:
        """The commits behind ``merge``'s other parents, not behind its first: as
        :meth:`merged_authors` just read them for it, or read now."""
        read, self._merged_in_read = self._merged_in_read, None
        if read is not None and read[0] == merge.parents[0] and read[1] == merge.sha:
            return read[2]
        found: list[CommitRecord] = []
        for side in merge.parents[1:]:
            found += repo.range_log(merge.parents[0], side, [self.plans_dir])
        return [r for r in found if not r.is_merge]

    def _made_here(self, record: CommitRecord) -> bool:
        """A commit of the controller's: by its record, or by git alone (its name as author
        and committer, sealed)."""
        if self.own_commit is not None:
            return self.own_commit(record.sha)
        return _controller_made_by_name(record, self.controller_email) and _sealed(record)

    def closes_start(self, repo: GitRepo, record: CommitRecord, plan: str) -> str | None:
        """The start a controller ``fail`` of ``plan`` closes (its ``Closes-Start:``), when
        that commit is reachable from it and is the controller's start of the plan by git
        alone (author and committer the controller, sealed, ``plangate: start <plan>``): a
        run whose start came back beside the branch's line (behind a merge's second parent,
        round 111) has its cause there (round 112, ``merged-back-fail-unexplained``: the
        fresh-clone audit flagged the controller's own closing ``fail``). None otherwise:
        a start erased for good (the branch holds only a person's copies of it) is in the
        controller's record alone (``audit --config``), not in git."""
        said = plan_event(record, plan)
        start = said.trailers.get(CLOSES_START, "") if said is not None else ""
        if not said or said.verb != "fail" or not re.fullmatch("[0-9a-f]{40}", start):
            return None
        if start == record.sha or not repo.is_ancestor(start, record.sha):
            return None  # absent from this history (or not behind it): no cause here
        try:
            found = repo.commit(start)
        except PlangateError:
            return None
        if not _controller_made_by_name(found, self.controller_email) or not _sealed(found):
            return None
        return start if record_events(found).get(plan) == "start" else None

    def _refused_back(
        self, repo: GitRepo | None, record: CommitRecord, plan: str, state: PlanState | None
    ) -> bool:
        """Whether a refusal leaves the plan where its request was made (as the controller
        refuses: a gate approval back to ``awaiting_approval``, a resume to ``failed``, a first
        approval to ``pending_approval``); True when the file is not read (no ``repo``) or
        sets no status. Round 98: a refusal of a first approval that wrote ``failed`` made the
        next vote a resume."""
        if repo is None or state is None:
            return True
        for change in record.changes:
            if change.new_blob is None or not _is_plan_file(change.path):
                continue
            if plan_id_of(change.path, self.plans_dir) != plan:
                continue
            after = self.facts(repo, change.new_blob)
            if after is not None and after.status is not None:
                stands = _run_stands(state)
                return after.status == (stands if stands in _REFUSED_BACK else "pending_approval")
        return True

    def _started_at(self, plan_hash: str | None, plan: str) -> bool:
        """Did a start commit on the branch start ``plan_hash`` at ``plan``?"""
        found = self.started.get(plan_hash or "")
        return found is not None and found.partition(" ")[2] == plan

    def side_disowned_why(self, repo: GitRepo, commit: CommitRecord) -> str | None:
        """:meth:`disowned` for a commit of a merged branch (the controller commits on the
        watched branch; its commits come back by a merge only after a rewrite): by its
        record, or git alone by the cause each event has in the plan's file at the commit's
        parent (what that branch showed when the event was made)."""
        named = self.controller_email
        if commit.author.email.lower() != named or commit.committer.email.lower() != named:
            return None
        if self.own_commit is not None:
            return self.disowned(commit)
        unmatched = []
        for plan, event in record_events(commit).items():
            facts = self._parent_facts(repo, commit, plan)
            status = facts.status if facts is not None else None
            if unmatched_event(event, status, asked=False):
                unmatched.append(f"{event} {plan}")
        return _not_its_own(unmatched, unsealed_run_events(commit))

    def _parent_facts(self, repo: GitRepo, commit: CommitRecord, plan: str) -> BlobFacts | None:
        """The plan's file at ``commit``'s first parent (None: none there, or a folder
        holding both names, which is no plan: ``E_PLAN_AMBIGUOUS``, as every reader finds a
        plan's file, round 68)."""
        if not commit.parents:
            return None
        blobs = [repo.blob_sha(commit.parents[0], f"{plan}/{name}") for name in PLAN_FILES]
        found = [blob for blob in blobs if blob]
        return self.facts(repo, found[0]) if len(found) == 1 else None

    def _controller_clock(self, at: int) -> None:
        """A controller commit: its time is the controller's clock. Every commit after it on
        the branch was made later; every human freeze before it was made earlier."""
        self.controller_time = max(self.controller_time, at)
        self._bound_open_lapses(at)
        for plan_id in self._uncapped:
            state = self.plans.get(plan_id)
            if state is not None and state.frozen_since is not None:
                state.frozen_since = _capped(state.frozen_since, at)
                state.frozen_uncapped = False
                if state.frozen_hash and state.frozen_hash == state.hash:
                    self.note_freeze(state.hash, state.frozen_since, by_controller=False)
                self.touch(plan_id)
        self._uncapped.clear()

    def _problem(self, state: PlanState, note: str) -> None:
        """Note a coded problem on a plan once, and report it (the daemon logs it)."""
        if note in state.notes:
            return
        state.note(note)
        if self.on_problem is not None:
            self.on_problem(state.plan_id, note)

    def _under_plans(self, path: str) -> bool:
        """Whether ``path`` lies under the plans folder (its files have writers)."""
        return self.plans_dir == "." or PurePosixPath(self.plans_dir) in PurePosixPath(path).parents

    def _blob_writers(
        self,
        repo: GitRepo,
        change: FileChange,
        who: set[str],
        left: set[str],
        side: str | None = None,
    ) -> None:
        """Whoever wrote a file under the plans folder that is not a plan file (a plan source
        ``PLAN.json``/``PLAN.md``, a draft, any file): kept by the file's bytes (its git blob
        id), so that a plan made of those bytes (the file renamed, moved or copied to
        ``PLAN.yml``, the source converted wherever it went) counts them as its authors. The
        author index never forgets them (SPEC §15; round 5). And whoever writes any file in
        a folder writes the plan that folder holds or will hold: plan text wrapped so that
        it reads as no plan (commented out, fenced in notes, under another key, a patch) and
        unwrapped by someone else is still hers (round 11). A draft's content it did not take
        from a file of the same commit (``left``) is also made by its writers (producers).
        Any entry git commits in the folder is a file of it, whatever its mode: a symbolic
        link or a submodule entry makes its committer a writer of the folders above it
        (round 85: Bob's ``plans/sy/NOTES.md -> ../../README``), its target never read."""
        if change.new_blob is None or not is_text(change.path):
            return
        if not self._writes_under_plans(change.path):
            return
        # its folder as split (a root file ``plans\\pf\\NOTES.md`` is in ``plans/pf``: round 84)
        self._folder_writers(PurePosixPath("/".join(path_parts(change.path)[:-1]) or "."), who)
        if change.mode in NOT_A_FILE:
            return  # a link's or gitlink's id names no bytes of the folder's: not read
        self._add_authors(_blob_key(change.new_blob), who)
        plan_hash = self._draft_hash(repo, change.path, change.new_blob)
        if plan_hash is not None:  # plan text under another name: its content is theirs too
            self._add_authors(plan_hash, who)
            if change.old_blob is None or plan_hash != self._draft_hash(
                repo, change.path, change.old_blob
            ):
                self._produced(
                    plan_hash, who, left, side, change.path, self._folder_of(change.path)
                )

    def _writes_file(self, repo: GitRepo, change: FileChange) -> bool:
        """Whether a change to a plan file writes bytes of its maker's into the folders
        above: anything but a status change of the same version (an approval or a
        withdrawal of that plan is no writing of the plan whose folder holds it)."""
        if change.new_blob is None:
            return False
        if change.mode in NOT_A_FILE:
            return True  # a link or submodule entry: never read, and never a status change
        try:
            old, new = self.facts(repo, change.old_blob), self.facts(repo, change.new_blob)
        except Exception:  # an old side git cannot read as a blob (a submodule entry before)
            return True
        if old is None or new is None or old.hash is None or old.hash != new.hash:
            return True
        return old.status == new.status or not self._status_line_only(repo, change)

    def _plan_file_writers(
        self,
        repo: GitRepo,
        record: CommitRecord,
        change: FileChange,
        plan_id: str,
        who: set[str],
        moved: bool = False,
    ) -> None:
        """``who`` wrote ``change`` (a plan file ``record`` changed, not brought by a merge):
        whose is it? Its bytes beside a plain status line (a comment, a blank line, a
        reindent, ``metadata:``, line ends, a BOM, its mode) make them writers of the plan's
        OWN folder (round 71: a comment beside an approval was no writing of that plan, and
        an action committed commented out in the plan file, uncommented by the agent, ran on
        its committer's lone approval: round 11's wrapped text, the plan file the wrapper),
        of every plan folder above it (a plan file below another plan's folder is a file in
        that folder too: round 41) and of the file (what a parent pins: round 23). A move
        writes nothing (``moved``: ``change`` is already its edit); a merge's own change is
        judged against its parents and git's join of them (:meth:`_bases`). A change inside the
        controller's owned blocks alone is no writing of this version (it is judged by the
        owned record: ``E_OWNED_BLOCK_CHANGED``) but its bytes may become plan content: its
        committer writes every later version of the plan: kept as the folder's ``@held``
        writers, who become its writers at the next commit that writes the plan file (and
        go with the plan when it moves: :meth:`_hold_moved`)."""
        if not moved:
            change = self._move_source(repo, record, change) or change
        verdict, change = min(
            (
                (self._plan_file_verdict(repo, record, edit), edit)
                for edit in self._bases(repo, record, change)
            ),
            key=lambda found: _RANK[found[0]],
        )
        if verdict is None and not self._writes_file(repo, change):
            return  # a byte-exact move still puts a file into the folders above: theirs
        self._folder_writers(
            PurePosixPath(plan_id).parent, who | self._carried_writers(repo, change)
        )
        self._add_authors(file_key(plan_id), who)
        if verdict == _OWNED:
            self._add_authors(folder_key(plan_id) + _HELD, who)
        elif verdict == _WRITES:
            held = self.authors.get(folder_key(plan_id) + _HELD, frozenset())
            self._folder_writers(PurePosixPath(plan_id), who | set(held))

    def _bases(self, repo: GitRepo, record: CommitRecord, change: FileChange) -> list[FileChange]:
        """The edits a commit's change of a plan file may be judged as: itself; in a merge,
        also the edit of each parent's file at that path and of git's join of the parents
        (the blob ``git merge-tree`` makes there): the merger wrote what none of them held,
        so an approval made in the merge of a branch that moved the plan writes its status
        line alone, and so does one beside a conflict settled by keeping a side (round 67:
        taking a side is no hand's writing)."""
        if not record.is_merge:
            return [change]
        made = [repo.blob_sha(parent, change.path) for parent in record.parents[1:]]
        join = self._join(repo, record)
        if join is not None:
            made.append(repo.blob_sha(join[0], change.path))
        olds = dict.fromkeys(blob for blob in made if blob and blob != change.old_blob)
        return [change, *(FileChange(change.path, b, change.new_blob, change.mode) for b in olds)]

    def _plan_file_verdict(
        self, repo: GitRepo, record: CommitRecord, change: FileChange
    ) -> str | None:
        """What a change of a plan file writes: None (nothing: a plain status line change,
        the bytes :meth:`_status_line_only` accepts, or no new file), :data:`_OWNED` (bytes
        inside the controller's ``approval:``/``execution:`` blocks alone, a plain status
        line beside them or not: a forged vote, a human's revert of the controller's
        record), or :data:`_WRITES` (any other byte: the hashed content, a comment, a blank
        line, a reindent, ``metadata:``, line ends, a BOM, a mode made executable)."""
        if change.new_blob is None:
            return None
        if change.mode in NOT_A_FILE:
            return _WRITES
        try:
            old, new = self.facts(repo, change.old_blob), self.facts(repo, change.new_blob)
            if old is None or new is None or old.hash is None or old.hash != new.hash:
                return _WRITES  # another version (or none readable): the content's writing
            before, after = repo.blob(change.old_blob or ""), repo.blob(change.new_blob)
        except Exception:  # an old side git cannot read as a blob (a submodule entry before)
            return _WRITES
        if self._mode_changed(repo, record, change):
            return _WRITES
        old_lines, new_lines = _set_aside_owned(before), _set_aside_owned(after)
        if old_lines == new_lines:
            return None if before == after else _OWNED
        if old.status == new.status or not _status_rewritten(old_lines, new_lines):
            return _WRITES
        return None if _owned_lines(before) == _owned_lines(after) else _OWNED

    def _mode_changed(self, repo: GitRepo, record: CommitRecord, change: FileChange) -> bool:
        """Whether the commit gave the plan file another mode than its parent held (a file
        made executable, round 42's ``status-mode``): a path the parent lacks (a move) was
        a plain file."""
        if not record.parents:
            return change.mode != _PLAIN_MODE
        if change.old_mode != "?" and any(c is change for c in record.changes):
            was: str | None = change.old_mode  # the walk proved it from the parent's trees
        else:
            was = repo.mode_of(record.parents[0], change.path)
        return change.mode != (was or _PLAIN_MODE)

    def _status_line_only(self, repo: GitRepo, change: FileChange) -> bool:
        """Whether the change rewrote nothing but the status (the line as ``status: approved``,
        no comment, or the value alone where the parser reads it: :func:`_status_rewritten`):
        byte for byte the same file otherwise. Round 42: a comment, a ``metadata:`` block, CRLF
        line ends or a BOM added with a nested plan's approval were bytes of the approver's in
        the folder above, unseen by the hash."""
        try:
            before, after = repo.blob(change.old_blob or ""), repo.blob(change.new_blob or "")
        except Exception:
            return False
        return _status_rewritten(_lf_lines(before), _lf_lines(after))

    def _carried_writers(self, repo: GitRepo, change: FileChange) -> set[str]:
        """The writers a plan file brings with its bytes into the folders above (round 42:
        an approver's own plan moved or copied below another plan's folder by someone else):
        the authors of its content and of its blob."""
        found = set(self.authors.get(_blob_key(change.new_blob or ""), frozenset()))
        if change.mode in NOT_A_FILE:
            return found
        try:
            facts = self.facts(repo, change.new_blob)
        except Exception:
            return found
        if facts is not None and facts.hash is not None:
            found |= self.authors.get(facts.hash, frozenset())
        found.discard(self.controller_email)
        return found

    def _folder_writers(self, folder: PurePosixPath, who: set[str]) -> None:
        """``who`` wrote a file in ``folder``: a writer of every plan folder it lies in,
        whatever the file's bytes (round 11), its name a plan's too (round 41). Each folder
        is its place on a checkout (round 83, :func:`folder_key`: ``plans/NC/`` is
        ``plans/nc/``, ``plans\\nb/`` is ``plans/nb/``, ``PLANS/rr/`` is ``plans/rr/``), split
        as git for Windows splits it (:func:`controller.plan.names.path_parts`); a folder that
        is one with a plan's only by an 8.3 short name (``plans/SHORTN~1``) writes that
        plan's folder too, and is kept for a plan put there later (:meth:`_short_writers`)."""
        parts = path_parts(str(folder))
        if len(parts) > MAX_PATH_PARTS:
            return
        for end in range(len(parts), self._plans_parts(parts), -1):
            inside = "/".join(parts[:end])
            self._add_authors(folder_key(inside), who)
            self._versions_due.add(inside)  # the version it holds: keyed again
            for twin in self._folder_twins(inside):  # its twin plans, 8.3 names too
                self._add_authors(folder_key(twin), who)
                self._versions_due.add(twin)
            if short_named(inside):
                self._short_folders().add(fold_path(inside))

    def _plans_parts(self, parts: list[str]) -> int:
        """How many of the first ``parts`` of a path are the plans folder on some checkout
        (:func:`controller.plan.names.same_path`: ``PLANS``, ``plans\\`` too; round 83), or
        0 for a path outside it (or a plans folder ``.``)."""
        top = 0 if self.plans_dir in ("", ".") else len(path_parts(self.plans_dir))
        if not top or len(parts) < top or not same_path("/".join(parts[:top]), self.plans_dir):
            return 0
        return top

    def _writes_under_plans(self, path: str) -> bool:
        """Does ``path`` lie under the plans folder on some checkout, so that its file has
        writers (:meth:`_folder_writers`)? ``plans\\nb/NOTES.md`` and ``PLANS/rr/NOTES.md``
        are files of ``plans/nb`` and ``plans/rr`` there (round 83): the safe side for
        writers, who gain a refusal of self-approval only (withdrawal rights are a
        version's originators': :meth:`withdrawers`). What is a plan stays
        :meth:`_under_plans`'s (round 80)."""
        parts = path_parts(path)
        return self._under_plans(path) or 0 < self._plans_parts(parts) < len(parts)

    def _short_folders(self) -> set[str]:
        """The folded folders with writers that have an 8.3 short-named part (round 83),
        read once from the author index's folder keys."""
        if self._shorts is None:
            head = len(folder_key(""))
            self._shorts = {
                key[head:]
                for key in self.authors
                if key.startswith("folder:") and "~" in key and "@" not in key
                if short_named(key[head:])
            }
        return self._shorts

    def _short_writers(self, plan_id: str) -> None:
        """A plan's folder takes the writers of every folder one with it on some checkout
        by an 8.3 short name (round 83: Bob's ``plans/SHORTN~1/NOTES.md`` before or after
        the plan ``plans/shortname-long``), matched by :func:`same_path` when its version is
        keyed; a short-named plan's folder asks every folder with writers (rare)."""
        if short_named(plan_id):
            head = len(folder_key(""))
            found = [
                key[head:] for key in self.authors if key.startswith("folder:") and "@" not in key
            ]
        else:
            found = list(self._short_folders())
        for folder in found:
            if folder != fold_path(plan_id) and same_path(folder, plan_id):
                self._add_authors(
                    folder_key(plan_id), set(self.authors.get(folder_key(folder), ()))
                )

    def _draft_hash(self, repo: GitRepo, file: str, blob: str | None) -> str | None:
        """The hashed content of a file under the plans folder that is plan text under
        another name (``draft.yml``) or a plan source (``PLAN.json``, ``draft.json``,
        ``.md``) once converted: whoever wrote it wrote that content, however its bytes are
        later rewritten (a comment, flow style, re-indented, converted; round 7)."""
        path = PurePosixPath(file)
        if blob is None or path.suffix.lower() not in DRAFT_SUFFIXES or not is_text(file):
            return None
        try:
            if path.suffix.lower() in (".yml", ".yaml"):
                facts = self.facts(repo, blob)
                return facts.hash if facts is not None else None
            data = repo.blob(blob)
            if len(data) > self.max_plan_bytes:
                return None
            from controller.plan.convert import convert_text

            converted = convert_text(
                data.decode("utf-8"), path.name, nested_base=str(path.parent), verify=False
            )
            return facts_of(converted.text.encode("utf-8"), self.max_plan_bytes).hash
        except Exception:
            return None

    def _link_outside_plan_files(self, change: FileChange) -> None:
        """A gitlink or symlink elsewhere in the plans folder (a plan folder that is a link):
        recorded under its own path with E_UNSAFE_PATH; it is never followed."""
        path = PurePosixPath(change.path)
        if change.new_blob is None:  # a link removed: its row goes with it (round 73)
            gone = self.plans.get(change.path)
            if gone is not None and gone.unsafe and gone.file == change.path:
                self._unsafe_gone(None, None, change.path)
            return
        if change.mode not in NOT_A_FILE or not is_text(change.path):
            return
        if self.plans_dir != "." and PurePosixPath(self.plans_dir) not in path.parents:
            return
        self._unsafe(
            change.path,
            change.path,
            f"{change.path} is {NOT_A_FILE[change.mode]} in the plans folder; it is not followed",
        )

    def _unsafe_gone(self, repo: GitRepo | None, record: CommitRecord | None, plan_id: str) -> bool:
        """An entry of a plan held E_UNSAFE_PATH was removed: when none of its folder's plan
        files or record is left at ``record`` (``repo`` None: the entry was the state's own
        path, a link), its row goes with it, as a plan's row goes with its folder (round 73:
        a symlink ``plan.yml`` or a folder ``PLAN.YML/`` deleted kept its E_UNSAFE_PATH row
        in ``status`` for ever). True when the state went (or there was none)."""
        state = self.plans.get(plan_id)
        if state is not None and not state.unsafe:
            return False
        if repo is not None and record is not None:
            names = repo.names_in(record.sha, plan_id)
            if any(name in (*PLAN_FILES, LOG_NAME) for name in names):
                return False
        if state is not None:
            del self.plans[plan_id]
            self.touch(plan_id)
        return True

    def _unsafe_release(
        self,
        repo: GitRepo,
        record: CommitRecord,
        state: PlanState,
        change: FileChange,
        sole: str,
    ) -> FileChange:
        """End an E_UNSAFE_PATH hold of a plan whose folder, as ``record`` leaves it, holds
        the regular plan file ``sole`` alone (:meth:`_sole_file`; round 85, linkheld: a
        PLAN.yml once committed as a symlink stayed held for good after a regular file was
        back; round 87, linkrename: the same when the file came back as PLAN.yaml). The
        change to judge is ``sole``'s, judged as a rename or a new file is judged without a
        hold. As a twin hold's release (round 83, :meth:`_ambiguity`): at the file the hold
        found, or under the other name in the commit that removed the link that held it (a
        rename), the plan goes on from the version, status and request the hold kept (an
        executing run is still the run it was, its crash recovered), the file judged as
        changed from there; else from nothing, as a new file."""
        state.unsafe = False
        self.touch(state.plan_id)
        if state.ambiguous:  # a twin hold's too: what it found is its release's (_ambiguity)
            return change
        kept, state.held_from = state.held_from or {}, None
        self._carry_held_side(state.plan_id, kept)
        if change.path == sole:
            blob, mode = change.new_blob, change.mode
        else:  # the last link removed, the file beside it unchanged: the plan is that file
            blob, mode = repo.blob_sha(record.sha, sole), repo.mode_of(record.sha, sole) or ""
        at = kept.get("file")
        renamed = at != sole and any(
            c.path == at and c.new_blob is None and c.old_blob for c in record.changes
        )
        if kept.get("blob") and (at == sole or renamed):
            state.file = sole
            state.status, state.file_status = kept.get("status"), kept.get("file_status")
            state.request, state.blob = kept.get("request"), kept["blob"]
            if self._released is None:
                self._released = {}
            self._released[state.plan_id] = kept
            return FileChange(sole, kept["blob"], blob, mode)
        return FileChange(sole, None, blob, mode)

    def _unsafe(self, plan_id: str, path: str, why: str) -> None:
        """A plan under a hostile name, or a link where its file should be: recorded with
        E_UNSAFE_PATH, never read or acted on."""
        state = self.plans.get(plan_id) or PlanState(plan_id, path)
        self._problem(state, f"E_UNSAFE_PATH: {why}")
        if not (state.unsafe or state.ambiguous):
            # what the hold leaves intact (round 85, as a twin hold's: round 83): a regular
            # plan file back at the path takes the plan on from there (_unsafe_release)
            state.held_from = _held_from(state)
        if state.held_from is not None:
            # the entries that hold it: only a regular file AT one of them ends the hold (a
            # link PLAN.yaml beside the plan's PLAN.yml stays a claim on its place while the
            # PLAN.yml changes: round 85, tests/commands/test_check.py)
            held_at = state.held_from.setdefault("unsafe_at", [])
            if path not in held_at:
                held_at.append(path)
        state.unsafe = True  # nothing reads, writes or acts on it
        state.status = state.file_status = state.request = None
        state.hash = state.frozen_hash = state.blob = None
        self.plans[plan_id] = state
        if self._twins is not None:  # a folder one with another's: found as its twin
            self._twins.add(plan_id)
        self.touch(plan_id)

    def _apply_plan_change(
        self,
        repo: GitRepo,
        record: CommitRecord,
        change: FileChange,
        plan_id: str,
        by_controller: bool,
        sink: EventSink | None,
    ) -> None:
        before = self.plans.get(plan_id)
        if change.path in self._release_judged:
            # a hold's release in this commit judged this file as the commit leaves it (its
            # content and status from what the hold kept): its own change is that one, not a
            # second change of the releaser's (round 88: ``git mv -f PLAN.yaml PLAN.yml``, the
            # twin's ``approved`` read again as the releaser's edit of PLAN.yml)
            return
        released_here = False
        if before is not None and before.unsafe:
            # the hold ends when the folder, as the commit leaves it, holds one regular plan
            # file alone under either name (round 87, linkrename: the link removed and the
            # plan back as PLAN.yaml kept it held for good), judged at that file's own change
            # or, unchanged, at the change that removed the last entry holding it
            sole = self._sole_file(repo, record, plan_id)
            if sole and (sole == change.path or not any(c.path == sole for c in record.changes)):
                if not by_controller and change.path != sole:
                    # the claim removed (a symlink, a gitlink, any kind) is its maker's touch,
                    # by the one rule (round 92: Bob's deletion of a symlink PLAN.yaml beside
                    # the plan released it, and his approval ran it)
                    touched = self._touchers(repo, record, change, plan_id)
                    before.changers = sorted(set(before.changers) | touched)
                change = self._unsafe_release(repo, record, before, change, sole)
                released_here = not before.ambiguous
            elif sole == "" and change.new_blob is not None:
                # no link left, two regular files: a twin hold alone (_ambiguity holds it)
                before.unsafe, before.held_from = False, before.held_from or _held_from(before)
                self.touch(plan_id)
        if before is not None and (before.ambiguous or before.file != change.path):
            held, asked = before.ambiguous, change.path
            change = self._ambiguity(repo, record, change, before, by_controller)
            if before.ambiguous:
                self._held_decision(repo, record, change, before, by_controller)
                return
            if held and change.path != asked:
                self._release_judged.add(change.path)
        released = self._released.pop(plan_id, None) if self._released else None
        side = self._held_side.pop(plan_id, None) if self._held_side else None
        snapshot = PlanState(**asdict(before)) if before and sink else None
        moved = self._move_source(repo, record, change) if not by_controller else None
        came = self._paired_from(repo, record, change) if not by_controller else None
        onto = change.old_blob is not None  # the path held a plan file (a swap, an overwrite)
        if (
            before is not None
            and self._swapped_in(repo, before, change)
            and (moved is not None or self._moved_onto(repo, record, change, by_controller))
        ):
            # a new life (round 73): the moved plan's state from nothing, its source's as a
            # move carries it (_moved_state; an approval made with the move is one, round
            # 70), not the path's old plan's; the path's record stays git's (its log, the
            # controller's last commit of the file) and its writers stay (the safe side).
            # The audit still hears that a plan approved or run there was replaced in one
            # commit (round 63's one-commit swap is flagged; two commits are a reuse)
            if before.status in _APPROVED_STATES:
                self._emit(
                    sink,
                    "content-after-approval",
                    before,
                    record,
                    snapshot,
                    f"{record.author.email} put another plan onto the path of a "
                    f"{before.status} plan in one commit (a new life of {before.file})",
                )
            before, snapshot = self._new_life(record, before), None
        if before is not None and change.old_blob is None and not released_here:
            # renamed in its folder: the same plan, an edit in place (in a merge too, round 71;
            # a hold's release judged its own: the removed half was a link, not the plan)
            change = moved or self._rename_edit(record, change) or change
        new = self.facts(repo, change.new_blob)
        old = self.facts(repo, change.old_blob)
        self.touch(plan_id)
        if new is None:
            # a rename to the folder's other name is no end of the plan (round 70: the
            # removal read first, the name added after it made a new plan "from nothing")
            if (
                before is not None
                and before.file == change.path
                and not _renamed(record, change)
                and not (before.unsafe and self._claims(repo, record.sha, plan_id, plan_id)[1])
            ):  # a link (or any claim) left under the other name still holds it (round 87)
                del self.plans[plan_id]
            self._held_vetoes(repo, plan_id, released)  # the versions vetoed by hash
            self._apply_held_side(repo, plan_id, side, sink)
            return
        state = before or PlanState(plan_id, change.path)
        if before is None:  # the folder's log committed before its plan is its plan's
            state.log_commit = self._loose_logs.pop(plan_id, "")
        state.file = change.path
        self._carry_lineage(repo, came, plan_id, state, onto)
        if new.problem is not None:
            self._problem(state, new.problem)
        content_changed = _content_changed(old, new, change)
        wrote = content_changed and moved is None  # a move writes none (its folder's carried)
        changers, evil = self._changers(repo, record, change, new) if wrote else (set(), False)
        # votes are for one hash: an edit and its undo on a merged branch void them as the
        # same two commits on the branch do (round 21)
        if (
            state.collected
            and record.is_merge
            and not content_changed
            and not by_controller
            and self._side_changed(repo, record, change.path)
        ):
            state.collected = None
        # Did the commit itself change what runs? A merge only if it is an "evil" merge;
        # a new plan's author is a changer, so self-approval covers that case.
        # A move (a swap, round 70) brings a version, as into a new folder: not written here
        state_changed_here = evil if record.is_merge else wrote and old is not None
        other_pause = False
        if record.is_merge and not content_changed and not by_controller:
            # a merge that only flips the status approves the version its merged branch
            # held, not the first parent's: a pull request behind main approved a newer
            # version it never showed (rounds 45-46); of a started run, the pause it held
            # (round 47: a stale gate approval answered a later gate)
            stale = self._merged_another_version(repo, record, change, old, new, state)
            state_changed_here, other_pause = stale == "version", stale == "pause"
        since_before = state.version_since
        # The new version's facts first: event handlers (the audit) see the state after it.
        if content_changed and not by_controller:
            self._took_content(plan_id, new.hash)
            self._produced(new.hash, changers, self._carried_here, at=plan_id)
            changers |= self.authors.get(_blob_key(change.new_blob or ""), set())  # a draft
            if new.hash is not None:
                self._add_authors(new.hash, changers)
                changers |= self.authors.get(new.hash, set())
            state.changers = sorted(set(state.changers) | changers)
        elif content_changed and old is not None and new.hash is not None and old.hash:
            # the controller rewrote the content (legacy references at its freeze): what it
            # derives keeps its source's writers, on any path it is copied to (round 17)
            self._add_authors(new.hash, set(self.authors.get(old.hash, frozenset())))
            made = self.producers_of(old.hash)
            if made is not None:
                self.note_producers(new.hash, made)
            origin = self.originators_of(old.hash)
            if origin is not None:
                self._note_origin(new.hash, origin, record.sha)
            here = self.origins_at(plan_id, old.hash)
            if here is not None:
                self.note_origins_at(plan_id, new.hash, here)
        elif content_changed and old is None:  # the controller converted a PLAN.json & co.
            self._converted(repo, record, state, new.hash)
        if content_changed:
            # No version is older than the controller's last commit before the one that
            # wrote it: the controller's clock, a time nobody else can write (the writing
            # commit's own time is a claim, and is not used).
            state.version_since = self.controller_time or None
        frozen_changed = new.frozen_hash != (old.frozen_hash if old else None)
        if frozen_changed or state.frozen_since is None:
            self._set_frozen_since(state, record, new, by_controller)
        if by_controller and frozen_changed and new.frozen_hash:
            state.version_since = max(state.version_since or 0, record.commit_time)
        if (content_changed or frozen_changed) and new.hash:
            # A version the controller froze before (on any path, in erased history too) is
            # no younger than that freeze: an approval written before it was for another
            # version (round 13: a rewrite erased the freeze, the plan was re-added).
            controller_froze = self.freezes(new.hash)[1]
            if controller_froze:
                state.version_since = max(state.version_since or 0, controller_froze)
        state.blob, state.file_status = change.new_blob, new.status
        if new.hash and new.hash not in state.versions:  # its authors (withdrawers), round 119
            earlier = {state.hash} - {None, new.hash}
            if record.is_merge and not by_controller:  # and its merged branches' (round 127)
                earlier |= self._merged_lineage(repo, record, plan_id, state, new.hash)
            state.versions[new.hash] = sorted(h for h in earlier if h)
        state.hash, state.frozen_hash = new.hash, new.frozen_hash
        # ``frozen:`` is the controller's to write: its risk and estimate are taken from a
        # controller commit that wrote them, never from an agent's edit, nor from one the
        # controller's later commits (a refusal, a vote) carried over (round 114, atk114a:
        # status showed a forged ``risk: low``; the reader judges a version it never froze)
        wrote_facts = old is None or (new.risk, new.estimate) != (old.risk, old.estimate)
        if by_controller and (wrote_facts or frozen_changed):
            state.risk, state.estimate = new.risk, new.estimate
        elif content_changed:
            state.risk = state.estimate = None  # a new version: no risk until it is frozen
        state.last_commit, state.owned = record.sha, new.owned
        state.unwritable = new.unwritable
        if by_controller:
            state.controller_commit, state.controller_blob = record.sha, change.new_blob or ""
        self.plans[plan_id] = state
        if by_controller:
            self._controller_commit(repo, state, record, old, new, sink, snapshot)
        else:
            source = self._moved_state(repo, record, change, plan_id, new.status)
            if source is not None:  # a move's status: a change of the moved plan's (round 72)
                state.status = source.status
                state.request = dict(source.request) if source.request else None
                old = self.facts(repo, source.blob)
                if new.status == "approved":  # its approval carried (round 77): not voided
                    content_changed = False
                    self._carried_request(state, source, record, sink, snapshot)
            # the statuses set while held before the last, each its own commit's (round 85)
            judge = (change, new, since_before, sink, snapshot)
            old = self._held_steps(repo, state, record, old, released, judge)
            approved = state.status == "approved"  # an approval open before this commit
            try:
                # a status set while the plan was held is its maker's (round 84), not the
                # release's: judged as that commit, its key at the time the hold saw it
                judged = self._held_maker(repo, record, change, new, released)
                if approved and old is not None and new.status != old.status:
                    maker = self._lapse_maker(repo, judged, change)
                    self._note_decision_lapse(repo, state.request, judged, change.path, maker)
                    self._note_lapse(state.request, maker)
                self._human_commit(
                    state,
                    judged,
                    change,
                    old,
                    self._merger_status(repo, judged, change, new),
                    (content_changed, state_changed_here, since_before, other_pause),
                    sink,
                    snapshot,
                )
            finally:
                self._decided_at = None
            self._held_request(state, judged, record)
            if approved and record.author.email.lower() == self.controller_email:
                # a start commit under the controller's name that it did not make (by its
                # record or signature), of a plan an approval had reached, still says the
                # version ran: refusing it is safe. One with no approval before it is an
                # illegal transition, ignored (round 2: the plan runs once when approved)
                self._note_if_start(record, plan_id, new.hash, plan_event(record, plan_id))
        # the withdrawals merged branches made while it was held, each its own commit's, as
        # with no hold (round 86): applied after the release's own change is judged, as
        # apply_side_withdrawals applies them after the merge that brought them
        self._apply_held_side(repo, plan_id, side, sink)

    def _merger_status(
        self, repo: GitRepo, record: CommitRecord, change: FileChange, new: BlobFacts
    ) -> BlobFacts:
        """The status a merge commit sets as its own change (round 120,
        merged-rejection-charged-to-merger: Mallory's ``rejected`` on her branch, merged
        ``--no-ff`` by Bob, was Bob's rejection and withdrew the plan for good; Alice's,
        merged by the agent, was flagged as the agent's ignored withdrawal). A rejection or an
        abort a merged commit made is that commit's, judged where the merged branches are read
        (:meth:`_side_withdrawal`, by who made it), never the merger's, whatever the merge
        resolved the status to. The merge brings the status its branch had before that
        withdrawal when that is ``draft`` or ``pending_approval`` (the merger's change, as any
        status a merge brings); otherwise it sets none of its own (an approval open on the
        line lapses: the file no longer says ``approved``). A withdrawal the merge writes that
        no merged commit made (a conflict resolved by hand, a ``--no-commit`` edit) stays the
        merger's."""
        if not record.is_merge or new.status not in _WITHDRAWALS:
            return new
        found, before = self._merged_withdrawal(repo, record, change.path, new.status)
        if not found:
            return new
        return replace(new, status=before if before in _BROUGHT_BEFORE else None)

    def _merged_withdrawal(
        self, repo: GitRepo, record: CommitRecord, path: str, status: str
    ) -> tuple[bool, str | None]:
        """Whether a non-merge commit of a branch ``record`` merges set ``path`` to
        ``status`` (the newest such commit), and the status its parent's version said there
        (None: the commit added the file so)."""
        for parent in record.parents[1:]:
            for commit in repo.range_log(record.parents[0], parent, [path]):
                if commit.is_merge:
                    continue  # a merge on the branch: its sides' commits are listed too
                for each in commit.changes:
                    if each.path != path or each.new_blob is None:
                        continue
                    made = self.facts(repo, each.new_blob)
                    was = self.facts(repo, each.old_blob) if each.old_blob else None
                    before = was.status if was else None
                    if made is not None and made.status == status != before:
                        return True, before
        return False, None

    def _carried_request(
        self,
        state: PlanState,
        source: PlanState,
        record: CommitRecord,
        sink: EventSink | None,
        snapshot: PlanState | None,
    ) -> None:
        """The approval request ``source`` held open, carried by the byte-exact move
        ``record`` to ``state`` (:meth:`_moved_state`, round 77): its commit, author and kind
        stay; the audit hears the request where the plan now is, as the controller reads it."""
        request = state.request or {}
        kind, who = str(request.get("kind")), str(request.get("author"))
        state.note(
            f"{record.sha[:12]} moved from {source.file}: approval request ({kind}) by {who} "
            f"in {str(request.get('commit'))[:12]} carried"
        )
        self._emit(sink, "request", state, record, snapshot, kind)

    def _converted(
        self, repo: GitRepo, record: CommitRecord, state: PlanState, plan_hash: str | None
    ) -> None:
        """The plan the controller's ``convert`` commit wrote takes what its content would
        have taken had the source's writer committed that PLAN.yml herself: the source's
        committers and its content's authors, as changers, as writers of its folder (what a
        parent pinning it reads: :func:`controller.approval.verdicts.pinned_writers`) and of
        its hash; and the writers and owned-block hold of every version that held the content
        (:meth:`_took_content`). Round 75: a ``PLAN.json`` of a held content, converted, kept
        none of the content's folder writers or hold (the rule read the writer's commits, and
        the convert commit is the controller's), and a parent pinning it none of its writers."""
        writers = self._source_authors(repo, record)
        if plan_hash is not None:
            self._add_authors(plan_hash, writers)  # a copy or a pin of it: the same writers
            writers |= self.authors.get(plan_hash, set())
        state.changers = sorted(set(state.changers) | writers)
        self._folder_writers(PurePosixPath(state.plan_id), writers)
        self._took_content(state.plan_id, plan_hash)

    def _swapped_in(self, repo: GitRepo, before: PlanState, change: FileChange) -> bool:
        """Does ``change``, a plan file moved onto the path of a plan in the same commit (a
        swap, ``git rm -r`` and ``git mv`` onto it: :meth:`_move_source`), put there a plan
        frozen as another (``frozen.hash``) than the one the controller last recorded there
        (docs/plan-format.md, a path's life; :func:`controller.git.ownrecord.life_of`)? Then
        the path's life ends (round 73: the moved plan kept the recorded plan's state, a
        ``completed``, ``rejected`` or ``failed`` that refused its approval, where the same
        two steps in two commits made a new plan). A path the controller never recorded has
        no life to end (its plans' states are traded as moves: :meth:`_moved_state`), and a
        run executing or paused at a gate there keeps the path until its outcome, which the
        controller writes back where the run started (docs/plan-format.md)."""
        if before.file != change.path or change.old_blob is None or not before.controller_commit:
            return False
        if before.status in (_RUNNING, "awaiting_approval"):
            return False
        blob = before.controller_blob or None
        if blob is None:  # not recorded (no row leaves it empty since index 84): git's
            names = (change.path, *filter(None, [other_name(change.path)]))
            blob = next(
                (b for n in names if (b := repo.blob_sha(before.controller_commit, n))), None
            )
        recorded = self.facts(repo, blob) if blob else None
        if recorded is None or recorded.frozen_hash is None:
            return False
        new = self.facts(repo, change.new_blob)
        return new is not None and new.frozen_hash != recorded.frozen_hash

    def _merged_in(self, repo: GitRepo, record: CommitRecord, change: FileChange) -> bool:
        """Does the merge ``record`` bring onto ``change``'s path a plan that was elsewhere
        before it (against its first parent, :meth:`_move_from`): a swap or a replacement
        made on the merged branch, in one commit or in two (the folder removed, another moved
        there), reads on the line as the merge's move, a new life of the path when frozen as
        another plan (:meth:`_swapped_in`; the lead, 2026-11-30: Bob's approval of the plan
        a merged pull request put at a ran plan's path was ignored, "from completed")."""
        return self._paired_from(repo, record, change) is not None

    def _moved_onto(
        self, repo: GitRepo, record: CommitRecord, change: FileChange, by_controller: bool
    ) -> bool:
        """Whether ``change`` is a plan moved onto its path that :meth:`_move_source` (bytes
        moved, on the line) does not tell: a merge's move (:meth:`_merged_in`), or a human
        commit's move with an edit (:meth:`_edited_move`, round 75)."""
        if record.is_merge:
            return self._merged_in(repo, record, change)
        return not by_controller and self._edited_move(repo, record, change) is not None

    def _new_life(self, record: CommitRecord, before: PlanState) -> PlanState:
        """The state a path's new life starts from (:meth:`_swapped_in`): nothing of the plan
        that left (its status, approval request, votes, run, approver, notes), as a plan put
        at an emptied path; what is the path's and not the plan's kept: the last commits of
        its record's files (every reader reads the record within the life by git:
        :func:`controller.git.ownrecord.life_of`), a foreign run event noted there (the
        take-over check's, bound to its version), and the writers (the folder was not
        emptied: who wrote in it still did; the safe side)."""
        state = PlanState(before.plan_id, before.file)
        state.changers = list(before.changers)
        state.log_commit, state.controller_commit = before.log_commit, before.controller_commit
        state.controller_blob = before.controller_blob
        state.foreign_event, state.foreign_start = before.foreign_event, before.foreign_start
        state.note(
            f"{record.sha[:12]} a plan frozen as another than the one the controller recorded "
            f"at {before.file} moved there: a new life of the path"
        )
        self.plans[before.plan_id] = state
        return state

    def _note_if_start(
        self, record: CommitRecord, plan_id: str, plan_hash: str | None, event: PlanEvent | None
    ) -> None:
        """A start commit (under the controller's name) that writes ``plan_hash`` at
        ``plan_id``: the hash started (SPEC §15, at most once; :meth:`note_start`). A batched
        commit whose groups name the plan ambiguously (two folders written alike) still
        started the version when a start group of it names that hash (fails closed)."""
        if not plan_hash:
            return
        if event is not None:
            started = event.verb == "start"
        else:
            started = EVENT_TRAILER in record.trailers and any(
                items.get(EVENT_TRAILER) == "start" and items.get("Plan-Hash") == plan_hash
                for _plan, items in batch_groups(record.body)
            )
        if started:
            self.note_start(plan_hash, plan_id, record.sha)

    def _set_frozen_since(
        self, state: PlanState, record: CommitRecord, new: BlobFacts, by_controller: bool
    ) -> None:
        """When this version was first frozen, for max_age: the first freeze of its hash on
        any path, ever (round 13: a re-add, a copy, a flip of frozen.hash or a re-freeze
        restarted the count), else when frozen.hash took its value here. A controller
        commit's time is the controller's clock. A human commit's time is a claim (a freeze
        dated in the future would make a plan look young): it is capped by the verifier's
        clock now and by the next controller commit on the branch, which git proves came
        after it, and noted as the version's first freeze only then."""
        plan_hash = new.frozen_hash
        if not plan_hash:
            state.frozen_since, state.frozen_uncapped = None, False
            self._uncapped.discard(state.plan_id)
            return
        at = record.commit_time
        if by_controller and plan_hash == new.hash:
            self.note_freeze(plan_hash, at, by_controller=True)
        elif not by_controller and self.clock is not None:
            at = _capped(at, int(self.clock()))
        first = self.freezes(plan_hash)[0]
        if by_controller or (first is not None and (at == UNKNOWABLE or at >= first)):
            state.frozen_since = at if first is None else min(at, first)
            state.frozen_uncapped = False
            self._uncapped.discard(state.plan_id)
            return
        state.frozen_since, state.frozen_uncapped = at, True
        self._uncapped.add(state.plan_id)

    def _seen_approval(self, record: CommitRecord, decision: str, made_for: str) -> str | None:
        """The commit that already made this approval for another version or pause
        (``made_for``: plan, hash, the date the version or pause began), if another commit
        did. git keeps a commit's author, author date and subject through cherry-pick,
        ``am``, rebase and ``merge -C``/``rebase -r`` (a merge re-created); with what the
        commit decides (``decision``: the plan and the status it sets) that is the
        approval's identity (:func:`_approval_identity`), and ``made_for`` binds it to the
        version and pause it was made for. A second commit with the same identity and a
        committer date of its own (git moves it on every replay) is that approval brought
        back for another version (round 6: a clock that runs fast would otherwise let it
        follow a version made after it; a new version needs the controller's freeze in
        between, so nobody approves two versions of a plan in one second) or pause; in the
        same second for the same version and pause it is the same approval (it counts once
        anyway), unless it lapsed (round 63: :meth:`_note_lapse`; on a merged branch too:
        :meth:`_side_lapse`): then only a commit its author committed herself brings it back
        (her own cherry-pick, rebase or re-apply); another hand's copy revives a decision she
        took back, and a forge or a maintainer that committed her first one is the hand of
        everyone whose pull request it merges (round 64). A decision about another plan under
        the same author, date and subject is judged by :meth:`_replayed`, and a copy it
        refuses is nobody's decision: it binds nothing, so each later copy is judged as the
        first was (round 69: the agent's second ``am`` of her approval of another plan was
        "the same approval, same version" as its refused first one, and ran). The identities
        are kept for good (a rewrite does not make the index forget them)."""
        made = _digest(made_for)[:16]
        key = _approval_identity(record, decision)
        seen = self.approval_ids.get(key)
        if seen is None:
            replayed = self._replayed(record)
            if replayed is None:
                self._remember_approval(key, record, made)
            self._remember_approval(_approval_identity(record), record, made)
            return replayed
        sha, seen_for, hand, lapsed = _seen_fields(seen)
        if sha == record.sha:
            return self._replayed(record)
        if seen_for == UNBOUND and self._own_hand(record):  # the line's first commit of that second
            self._remember_approval(_approval_identity(record), record, made)
        if seen_for not in (made, UNBOUND):
            copied = _brought_back(record) or _hand(record) != _first_hand(hand, record)
            return sha if copied else None
        if lapsed and not self._own_hand(record):
            return sha
        return self._replayed(record) if self._moved_first(sha, hand, record) else None

    def _moved_first(self, sha: str, hand: str, record: CommitRecord) -> bool:
        """The decision identity ``record`` shares was first carried (``sha``, by ``hand``) by
        another commit and another hand than her first decision of that author, date and
        subject: a copy moved onto this plan, which binds nothing (an entry remembered
        before round 69, when a refused copy still bound it)."""
        base = self.approval_ids.get(_approval_identity(record))
        if not base:
            return False
        first, _made, base_hand, _lapsed = _seen_fields(base)
        return first != sha and _first_hand(hand, record) != _first_hand(base_hand, record)

    def _note_lapse(self, request: dict[str, Any] | None, at: CommitRecord | None = None) -> None:
        """Her decision taken back on the branch before the controller acted on it (a later
        commit, by anyone, set the plan away from the status it set: :meth:`_lapse`; ``at``:
        the commit that made that lapse, :meth:`_lapse_maker`).
        The same decision for the same version and pause appearing again counts only in a
        commit its author committed herself (round 63: the agent's cherry-pick or ``am`` of
        her approval she had reverted ran on her name), whatever commit carries it (round
        65: :meth:`_mark_decision_lapsed`). Kept for good, as the identity is."""
        request = request or {}
        key = request.get("identity")
        if key and key in self.approval_ids:
            self._mark_lapsed(key)
        mark = request.get("decision")
        if mark and at is not None:
            made = int(request.get("author_time") or 0)
            when = self._lapse_time(at, str(request.get("author") or ""))
            self._mark_decision_lapsed(mark, _lapse_entry(str(request["commit"]), when, {made}))

    def _note_decision_lapse(
        self,
        repo: GitRepo,
        request: dict[str, Any] | None,
        at: CommitRecord,
        path: str,
        maker: CommitRecord,
    ) -> None:
        """The decisions a lapse (``at``) takes back besides the one carried onto the line
        (:meth:`_note_lapse`), for that version: the lapse's author's own, made before she
        set the plan away (round 65 ``squash-bob``: she reverted Bob's squash of her branch),
        and, for a decision a MERGE carried, those its merged branches carried, whoever made
        the merge (``revm-bob``): the commit of each branch setting ``path`` ``approved``, no
        status change since (:meth:`_approved_by`). Each is dated by the commit that made the
        lapse (``maker``: :meth:`_lapse_maker`), not by a merge that brought it."""
        if not request or not request.get("commit"):
            return
        plan_id = plan_id_of(path, self.plans_dir)
        facts = self.facts(repo, request.get("blob"))
        if plan_id is None or facts is None:
            return
        made = {int(request.get("author_time") or 0)}
        when = self._lapse_time(maker, at.author.email)
        lapses = [(at.author.email, _lapse_entry(str(request["commit"]), when, made))]
        for parent in (
            repo.commit(str(request["commit"])).parents[1:] if request.get("merge") else ()
        ):
            decided = self._approved_by(repo, parent, path)
            if decided is not None:
                when = self._lapse_time(maker, decided.author.email)
                entry = _lapse_entry(decided.sha, when, {decided.author_time})
                lapses.append((decided.author.email, entry))
        for author, lapse in lapses:
            self._mark_decision_lapsed(_decision_mark(author, facts.hash, "approved"), lapse)

    def _mark_decision_lapsed(self, mark: str, lapse: str) -> None:
        """Her DECISION lapsed (round 65), not only the commit that carried it onto the line:
        ``lapse`` is :func:`_lapse_entry` (that commit, when the lapse was made:
        :meth:`_lapse_time`, the author dates of the commits that carried the decision).
        Her merge or squash commit reverted, the branch commit it came from (or any copy:
        another subject, a message edited, the plan moved) decides the same
        (:meth:`_lapsed_decision`). The newest lapse is kept, with every carrier's date."""
        sha, when, made = _lapse_fields(lapse)
        seen = self.approval_ids.get(mark)
        if seen is not None:
            seen_sha, seen_when, seen_made = _lapse_fields(seen)
            sha, when = (sha, when) if when > seen_when else (seen_sha, seen_when)
            made |= seen_made
        entry = _lapse_entry(sha, when, made)
        if entry != seen:
            self.approval_ids[mark] = self._new_approval_ids[mark] = entry
        self._lapses_open.add(mark)

    def _lapse_time(self, at: CommitRecord, author: str) -> int:
        """When the lapse ``at`` of a decision of ``author`` was made, as far as anyone can
        know. Both dates of a commit are its committer's to write (round 67: the agent's
        revert dated 1990, or its cherry-pick of her OLD revert, made her other approval of
        the version, made before the lapse, look newer than it), and the author field is a
        claim anyone writes (round 70: the agent's revert under ``--author "Alice"``, 1990,
        brought in by her own pick, ``am``, amend or rebase). So only the hand that put the
        lapse on the branch dates it: a lapse she committed is dated by its committer date
        (her word), never past the reader's clock nor the first controller commit after it
        (it can only cost her), and never by its author date. A committer date that is the
        date of another's writing (:meth:`_carried_date`: round 69's
        ``--committer-date-is-author-date``) and a lapse she did not commit are another
        hand's word: :data:`OPEN`, dated by the first controller commit after it on the
        branch (:meth:`_bound_open_lapses`, the controller's clock), and until then by the
        reader's clock (:meth:`_lapsed_decision`); its own dates count neither way. ``at`` is
        the commit that made the lapse, on the line or on a merged branch, never the merge
        that brought it (:meth:`_lapse_maker`, round 71)."""
        if not self._committed_by(at, author) or self._carried_date(at):
            return OPEN
        return min(at.commit_time, self._now())

    def _lapse_maker(self, repo: GitRepo, at: CommitRecord, change: FileChange) -> CommitRecord:
        """The commit that made the lapse ``at`` put on the line: ``at`` itself, or, for a
        merge that brought the file as a merged branch set it, the commit of that branch
        that set the plan away from ``approved`` (:meth:`_set_away_by`). A merge by another
        hand carries a lapse, it does not make it (round 71: her own revert, merged
        ``--no-ff`` or in an octopus by Bob, was dated as Bob's, and her re-approval in the
        web editor after it was refused); a merge that wrote the file itself (a conflict
        resolved by hand) made it."""
        if not at.is_merge or change.new_blob is None:
            return at
        if change.new_blob not in self._side_plans(repo, at).files.get(change.path, ()):
            return at
        for side in at.parents[1:]:
            if repo.blob_sha(side, change.path) == change.new_blob:
                return self._set_away_by(repo, side, change.path) or at
        return at

    def _set_away_by(self, repo: GitRepo, tip: str, path: str) -> CommitRecord | None:
        """The commit in ``tip``'s history that set ``path`` away from ``approved`` (its first
        parent's version approved), no commit since setting it back; None when a commit since
        approved it, or none of the last 32 changes of the file did (as
        :meth:`_approved_by`)."""
        out = repo.run(
            "log", "-n", "32", "--topo-order", "--no-show-signature", "--format=%H %P", tip,
            "--", path,
        )  # fmt: skip
        other = other_name(path)
        for line in out.splitlines():
            sha, *parents = line.split()
            facts = self.facts(repo, repo.blob_sha(sha, path))
            if facts is None or facts.status == "approved":
                return None
            was = repo.blob_sha(parents[0], path) if parents else None
            if was is None and parents and other and repo.blob_sha(sha, other) is None:
                # renamed from the folder's other name: the edit in place it is (round 72,
                # :meth:`_rename_edit`): the commit that set the plan away made the lapse
                was = repo.blob_sha(parents[0], other)
            before = self.facts(repo, was)
            if before is not None and before.status == "approved":
                return repo.commit(sha)
        return None

    def _carried_date(self, record: CommitRecord) -> bool:
        """Its committer date is a copy of the author date of a commit someone else wrote
        (``rebase``/``am --committer-date-is-author-date``, round 69): another's word."""
        return record.commit_time == record.author_time and not self._own_hand(record)

    def _same_person(self, one: str, other: str) -> bool:
        """Two addresses of one person, compared as the approval rules compare identities:
        the mailbox's spellings and ``approval.identity_aliases`` (people, plus tags)."""
        aliases = self.identity_aliases
        return approvals.canonical(one, aliases) == approvals.canonical(other, aliases)

    def _committed_by(self, record: CommitRecord, who: str) -> bool:
        """``who`` committed ``record`` (round 68: under any address of hers)."""
        return self._same_person(record.committer.email, who)

    def _own_hand(self, record: CommitRecord) -> bool:
        """Its author committed it herself: the one hand that brings back a decision of hers
        that lapsed (a forge's or a maintainer's is the hand of everyone they merge for).
        Under ``identity: committer`` always: the committer is who decides, whoever wrote
        the commit first and whenever (round 116, ``committer-withdrawal-read-as-replay``:
        Alice's rejection of a commit Mallory authored before the freeze was ignored as
        a replay, and Bob's approval then ran the plan)."""
        if self.identity_mode == "committer":
            return True
        return self._committed_by(record, record.author.email)

    def _maker(self, record: CommitRecord) -> str:
        """Who made the decision ``record`` carries, as the rules count it (SPEC §5): its
        committer under ``identity: committer``, else its author. What every note, event
        and the audit's ``decisions`` name (round 116: they named the author)."""
        return (record.committer if self.identity_mode == "committer" else record.author).email

    def _now(self) -> int:
        return int(self.clock() if self.clock is not None else time.time())

    def _bound_open_lapses(self, at: int) -> None:
        """A controller commit at ``at`` follows every lapse applied before it: none was made
        later (the fresh-clone audit and a rebuilt index read their clock long after, and
        judge a lapse dated ahead as the controller did at the time). Another hand's lapse
        (:data:`OPEN`) takes exactly that time: the first the history proves it existed by."""
        for mark in self._lapses_open:
            seen = self.approval_ids.get(mark)
            sha, when, made = _lapse_fields(seen or "")
            if when > at:
                self.approval_ids[mark] = self._new_approval_ids[mark] = _lapse_entry(sha, at, made)
        self._lapses_open.clear()

    def _lapsed_decision(self, record: CommitRecord, mark: str) -> str | None:
        """The commit that carried the decision ``record`` makes (:func:`_decision_mark`: her,
        this version, this status, wherever the plan is) when that decision lapsed and
        ``record`` is not her own hand's (round 65: the agent's cherry-pick of the branch
        commit behind her merge or squash she reverted; round 66: of her approval onto the
        plan's moved folder): ``record`` is a copy of a commit that carried it (git keeps the
        author date: the same date, however far ahead her clock ran) or a decision of hers
        dated not after the lapse was made (:meth:`_lapse_time`; an :data:`OPEN` lapse, no
        controller commit after it yet, at the reader's clock: fail closed). A decision of
        hers dated after it is a new one, and her own commit brings the old one back (round
        64)."""
        seen = self.approval_ids.get(mark)
        if seen is None or self._own_hand(record):
            return None
        sha, when, made = _lapse_fields(seen)
        when = min(when, self._now())
        if sha == record.sha or (record.author_time > when and record.author_time not in made):
            return None
        return sha

    def _mark_lapsed(self, key: str, first: str = "") -> None:
        """Mark the decision ``key`` lapsed; one no commit of the line made yet (``first``:
        "<commit> <hand>" of the decision read on a merged branch) is kept bound to no
        version or pause (:data:`UNBOUND`): a copy of it counts only from her own hand."""
        seen = self.approval_ids.get(key)
        if seen is None:
            sha, _, hand = first.partition(" ")
            entry = f"{sha} {UNBOUND} {hand} {LAPSED}"
        elif _seen_fields(seen)[3]:
            return
        else:
            sha, made, hand, _ = _seen_fields(seen)
            entry = f"{sha} {made} {hand} {LAPSED}"
        self.approval_ids[key] = self._new_approval_ids[key] = entry

    def _remember_withdrawal(self, record: CommitRecord, plan_id: str) -> None:
        """Remember the identity of the withdrawal ``record`` makes as a decision of its
        maker's (round 108), so a copy of it can never count as her APPROVAL of anything
        (:meth:`_replayed`). The withdrawal itself counts whoever copied it and whenever it
        is dated (round 117, ``pr-withdrawal-older-than-line-birth``,
        ``same-second-withdrawal-by-another-hand``): rounds 108-109 read a rejection that
        looked like a copy (written before the version's birth or in its second, put on the
        branch by another hand; or the author, date and subject of a decision already seen)
        as withdrawing nothing, to stop the agent vetoing a plan with an approver's old
        rejection. That only defended a denial of service, which the plan's author can
        cause anyway by rejecting her own plan, and it cost a fail-open: the forge's
        rebase-merge, a ``git am`` or another approver's rebase of a genuine rejection was
        ignored, and Bob's approval then ran the plan. Approvals fail open, withdrawals fail
        closed: a copy of an entitled person's withdrawal withdraws (docs/threat-model.md,
        "Accepted limits"); under ``identity: committer`` the committer is who decides."""
        if self.identity_mode != "committer":
            made = _digest(f"{plan_id}\0withdrawal")[:16]
            self._remember_approval(_approval_identity(record), record, made)

    def _remember_approval(self, key: str, record: CommitRecord, made: str) -> None:
        if key not in self.approval_ids:
            entry = f"{record.sha} {made} {_hand(record)}"
            self.approval_ids[key] = self._new_approval_ids[key] = entry

    def _replayed(self, record: CommitRecord) -> str | None:
        """The approval ``record`` brings back under another decision (another plan, or a
        withdrawal), for a commit that approves something no commit of its author, date and
        subject approved (a withdrawal is never refused so: round 117,
        :meth:`_remember_withdrawal`). Two decisions of hers under one author, date and
        subject are two decisions, whoever committed them, as long as ONE hand carried them
        (round 62): her own commits, her ``pull --rebase``, a forge's rebase-merge or a
        maintainer's rebase of her branch, the forge's web editor re-create or commit every
        one of them alike. Her decision moved onto another plan by another hand than the
        one that put it on the branch (``git am --directory`` by the agent: round 4) is
        hers for the first plan only, and a merge brought back (``merge -C``, ``rebase -r``:
        round 18) approves nothing new: a forge's rebase-merge re-creates no
        merge and its merge button dates one when it is made. The hand is the one committer
        condition left, where git holds nothing else to tell her decision from its copy
        (docs/threat-model.md, "Accepted limits")."""
        seen = self.approval_ids.get(_approval_identity(record))
        if not seen:
            return None
        sha, _made, hand, _lapsed = _seen_fields(seen)
        if sha == record.sha:
            return None
        other_hand = _hand(record) != _first_hand(hand, record)
        if record.is_merge:  # re-created (``merge -C``, ``rebase -r``): no forge does that
            return sha if other_hand or _brought_back(record) else None
        # another hand's copy is a copy whatever its committer date says: ``commit -C`` or
        # ``am`` in the second the original was made keeps both dates equal (round 107:
        # read in the original's pass, the agent's copy counted as Bob's)
        return sha if other_hand else None

    def _add_authors(self, plan_hash: str, who: set[str]) -> None:
        known = self.authors.get(plan_hash, frozenset())
        if not who <= known:
            self.authors[plan_hash] = self.author_set(known | who)
            self.author_dirty(plan_hash)

    def signed_at(self, record: CommitRecord, *, on_line: bool = True) -> float:
        """When a withdrawal's signing key must have been valid (``valid-after``,
        ``valid-before``, a certificate's lifetime): a time history fixes, so the controller,
        a rebuilt index and the fresh-clone audit judge it alike (round 38: each judged it
        at its own clock, and a key that expired in between turned a counted rejection into
        an ignored one). The commit's date, unless it claims a time past the reader's clock
        (with skew: then that clock), and on the first-parent line never before the
        controller's last commit before it (a withdrawal cannot have been made earlier: a
        key retired by then withdraws nothing, however the commit is dated)."""
        if self._decided_at is not None and self._decided_at[0] == record.sha and on_line:
            return self._decided_at[1]  # a decision made while held: as it was seen then
        now = self.clock() if self.clock is not None else time.time()
        claimed = float(record.commit_time)
        at = claimed if claimed <= now + CLOCK_SKEW else now
        return max(at, float(self.controller_time)) if on_line else at

    def identities(self, record: CommitRecord) -> set[str]:
        """Everyone a commit names as its makers: author, committer, ``Co-authored-by:``
        (anywhere in its message, the subject too: :func:`approvals.coauthors`), and the key
        that signed it (``key:<fingerprint>``: whoever holds it made the commit, whatever
        names it carries; the policy's allowed_signers says whose it is)."""
        found = {
            approvals.normalize_identity(record.author.email),
            approvals.normalize_identity(record.committer.email),
            *approvals.coauthors(approvals.message_of(record.subject, record.body)),
        }
        found.discard(self.controller_email)
        if record.signing_key:
            found.add(approvals.KEY_PREFIX + record.signing_key)
        if record.oversized:
            found.add(approvals.EVERYONE)  # its co-authors past the cut cannot be read
        return found

    def _shadowed(
        self,
        repo: GitRepo,
        record: CommitRecord,
        change: FileChange,
        by_controller: bool,
        sink: EventSink | None,
    ) -> None:
        """An entry claiming a plan file's place came or went (:func:`_claimed_folder`: a file
        in a folder named as a plan file, ``plans/x/PLAN.yml/...``, no plan folder by
        :func:`controller.plan.plans.plan_named_folder`; a symlink, gitlink or file so named):
        the plan of the folder holding the claim is judged again, as when its other plan file
        comes or goes (round 69). Every kind of entry alike, however late it came (round 72:
        a symlink or gitlink ``plan.yml`` added beside a frozen plan was never judged)."""
        folder = _claimed_folder(change.path)
        if folder is not None:
            self._rejudge(repo, record, folder, by_controller, sink)
            # its folder by the split (round 77): ``FC\\PLAN.yml``; below another spelling
            # of the plans folder (round 84); a twin folder's claim of any kind, the twin no
            # plan of the index (round 94: ``plans/YA/PLAN.yml/x.txt`` beside ``plans/ya``)
            for twin in self._folder_twins(folder):
                self._rejudge(repo, record, twin, by_controller, sink)

    def _judge_added(
        self, repo: GitRepo, record: CommitRecord, added: dict[str, bool], sink: EventSink | None
    ) -> None:
        """New plans beside an entry claiming to be their file (``PLAN.YML/`` beside
        ``PLAN.yml``, there before the plan: an earlier commit, or a name sorting first) are
        judged again (round 71), their folders listed in one batch (a burst's thousand new
        plans, issue 17)."""
        # a cold scan's walk read each new plan's folder: listed by its id (issue 17)
        walked = {c.path.rpartition("/")[0]: c.folder for c in record.changes if c.folder}
        known = {plan_id: walked[plan_id] for plan_id in added if plan_id in walked}
        rest = [plan_id for plan_id in added if plan_id not in known]
        listed = repo.names_of(known) if known else {}
        listed.update(repo.names_among(record.sha, rest) if rest else {})
        for plan_id, own in added.items():
            state = self.plans.get(plan_id)
            if state is not None:  # beside an entry named as its log (round 73), or a folder
                # one with its own holding a log (round 75; a log where no plan is is loose),
                # or below a name git for Windows writes into it (round 77)
                state.log_claimed = bool(log_twins(listed.get(plan_id, ()))) or bool(
                    (
                        self._folder_twins(plan_id)
                        or self._loose_twin(plan_id)
                        or self._split_into(plan_id)
                    )
                    and self._twin_logged(repo, record.sha, plan_id)
                )
            if (
                len(plan_file_claims(listed.get(plan_id, ()))) > 1
                or self._split_into(plan_id)
                or self._tree_twins(repo, record.sha, plan_id)  # a twin folder there (round 94)
            ):
                self._rejudge(repo, record, plan_id, own, sink)

    def _rejudge(
        self,
        repo: GitRepo,
        record: CommitRecord,
        plan_id: str,
        by_controller: bool,
        sink: EventSink | None,
    ) -> None:
        """Is the plan's folder at ``record`` ambiguous, a folder named as a plan file
        counted as that file (:meth:`_ambiguity`)? Its plan file resolved again if not."""
        state = self.plans.get(plan_id)
        if state is None or state.unsafe:
            return
        was = state.ambiguous
        mode = "100644"
        found = self._ambiguity(
            repo, record, FileChange(state.file, state.blob, state.blob, mode), state, by_controller
        )
        if was and not state.ambiguous:
            self._apply_plan_change(repo, record, found, state.plan_id, by_controller, sink)
            self._release_judged.add(found.path)  # its own change, later in the commit: this

    def _ambiguity(
        self,
        repo: GitRepo,
        record: CommitRecord,
        change: FileChange,
        state: PlanState,
        by_controller: bool,
    ) -> FileChange:
        """Both PLAN.yml and PLAN.yaml in the folder at ``record``? Then the plan is
        E_PLAN_AMBIGUOUS: nothing of it is read or acted on (``state.ambiguous``), and whoever
        touches either file counts as a changer. When one of them goes, the other is taken as
        newly added by this commit (returned), so an approval in it is verified afresh."""
        folder = PurePosixPath(change.path).parent
        names, held, twins = self._claims(repo, record.sha, str(folder), state.plan_id)
        moving = bool(
            self._move_source(repo, record, change)
            or self._moved_away(repo, record, change)
            or self._kept_rename(repo, record, change)  # a merge's too (round 71)
        )
        if not by_controller and (
            len(held) > 1 or state.ambiguous or not moving
        ):  # a status line alone writes nothing, a removal is its maker's: _touchers (r91held2)
            touched = self._touchers(repo, record, change, state.plan_id)
            state.changers = sorted(set(state.changers) | touched)
        self.touch(state.plan_id)
        if len(held) > 1:
            if not state.ambiguous:
                self._problem(state, _ambiguous_note(held, twins))
                # what the hold leaves intact (round 83): the plan's status (a paused run's
                # pause), its version and its open request, taken back at the release; a
                # link's hold before it found them first (round 87)
                state.held_from = state.held_from or _held_from(state)
            state.ambiguous = True
            state.status = state.file_status = state.request = None
            state.hash = state.frozen_hash = state.blob = None
            state.risk = state.estimate = None  # of neither file: none is read (round 69)
            state.last_commit = record.sha
            return change
        if not state.ambiguous:
            return change  # a rename between the two names: one file at a time
        state.ambiguous = False
        present = [str(folder / name) for name in PLAN_FILES if name in names]
        blobs = ((path, repo.blob_sha(record.sha, path)) for path in present)
        path, blob = next(((p, b) for p, b in blobs if b), (change.path, None))
        state.file = path
        kept, state.held_from = state.held_from or {}, None
        self._carry_held_side(state.plan_id, kept)
        if self._released is None:
            self._released = {}
        # the statuses set while held in any plan file of the folder (or a twin folder's),
        # each judged at the release as its own commit (rounds 84-87), whichever file stays
        self._released[state.plan_id] = kept
        if kept.get("blob") and (kept.get("file") == path or self._same_version(repo, kept, blob)):
            # the release (round 83): the plan goes on from the version, status and request
            # the hold found (a paused run is still paused, never a plan "from nothing" whose
            # gate approval reads as a first one), its file judged as changed from there; the
            # folder's other file too when it holds that version (round 87: a byte copy of the
            # plan kept as PLAN.yaml is the plan renamed, its status set by whoever set it)
            state.status, state.file_status = kept.get("status"), kept.get("file_status")
            state.request, state.blob = kept.get("request"), kept["blob"]
            return FileChange(path, kept["blob"], blob, "100644")
        return FileChange(path, None, blob, "100644")

    def _claims(
        self, repo: GitRepo, sha: str, folder: str, plan_id: str
    ) -> tuple[list[str], list[str], list[str]]:
        """(``folder``'s names at ``sha``, every entry claiming its plan file's place, the
        claims of folders one with it): more than one claim is E_PLAN_AMBIGUOUS. Read from
        :meth:`_claim_sets`, the one rule the held decisions are kept by too."""
        names, own, twins, split = self._claim_sets(repo, sha, folder, plan_id)
        return names, [*own, *twins, *split], twins

    def _claim_sets(
        self, repo: GitRepo, sha: str, folder: str, plan_id: str, walk: bool = False
    ) -> tuple[list[str], list[str], list[str], list[str]]:
        """What claims ``plan_id``'s plan file place at ``sha``, the ONE rule of which files
        are this plan's (round 88): (``folder``'s names, the claims among them, the claims in
        folders one with it on some checkout, the paths above it git for Windows or another
        spelling of the plans folder writes into it). The hold reads it (:meth:`_claims`:
        more than one is E_PLAN_AMBIGUOUS) and so does the bookkeeping of the statuses set
        while held (:meth:`_plan_files`, :meth:`_file_owners`): the next spelling the naming
        rule learns holds the plan and keeps its decisions at once."""
        # one listing of the folder, its plan file's names compared case-insensitively: a
        # folder (or file) under either name in any case counts as that file (rounds 69, 71)
        names = repo.names_in(sha, folder)
        own = plan_file_claims(names)
        twins = [  # the plan files of folders one with this one on some checkout (round 75),
            # each listed at ``sha`` (a plan folder the index dropped since: round 93)
            f"{twin}/{name}"
            for twin in self._twin_folders(repo, sha, plan_id)
            for name in plan_file_claims(repo.names_in(sha, twin))
        ]
        split = [  # a file above that git for Windows writes into the folder (round 77), or
            # one below another spelling of the plans folder (``PLANS/x/``: round 84)
            path
            for path, name in self._split_files(repo, sha, plan_id, walk).items()
            if plan_file_claims([name])
        ]
        return names, own, twins, split

    def _plan_files(self, repo: GitRepo, sha: str, plan_id: str, walk: bool = False) -> list[str]:
        """Every path at ``sha`` that is ``plan_id``'s plan file or claims its place, by the
        rule its hold is found by (:meth:`_claim_sets`): its folder's claims (``PLAN.yaml``,
        ``plan.yml``, ``PLAN<U+200C>.yml``), a twin folder's (``plans/KC/``, ``plans/x<U+200C>/``,
        8.3 names), a split name's or another plans folder spelling's (``plans/x\\PLAN.yml``,
        ``PLANS/x/``, ``plans./x/``, ``plans /x/``)."""
        _, own, twins, split = self._claim_sets(repo, sha, plan_id, plan_id, walk)
        return [*(f"{plan_id}/{name}" for name in own), *twins, *split]

    def _file_owners(
        self,
        repo: GitRepo,
        sha: str,
        path: str,
        which: Callable[[PlanState], bool] | None = None,
        unknown: bool = False,
    ) -> list[str]:
        """The plans (of those ``which`` keeps) whose plan file ``path`` is at ``sha``
        (:meth:`_plan_files`, the hold's own rule): those whose folder is, split as git for
        Windows splits it, one with the path's folder on some checkout (:meth:`_folder_twins`),
        confirmed by their claims. With ``unknown``, the plan folder the path lands on below
        the plans folder as written (:meth:`_landed_plan`) counts too when the index has no
        plan there yet (a merged branch read before the scan's commits make it: round 89)."""
        parts = path_parts(path)
        if len(parts) < 2 or not plan_file_claims([parts[-1]]):
            return []
        folder = "/".join(parts[:-1])
        landed = self._landed_plan(path) if unknown else None
        found = [
            plan_id
            for plan_id in sorted(
                {folder, *self._folder_twins(folder), *([landed] if landed else [])}
            )
            if (plan_id in self.plans and (which is None or which(self.plans[plan_id])))
            or plan_id == landed
        ]
        walk = "\\" in path or spelled_under(path, self.plans_dir)
        return [p for p in found if path in self._plan_files(repo, sha, p, walk)]

    def _landed_plan(self, path: str) -> str | None:
        """The plan id of the folder the plan file ``path`` lands on, below the plans folder
        as written, on a checkout that writes it elsewhere than written (:func:`path_parts`:
        ``plans/x\\PLAN.yml``; :func:`spelled_under`: ``PLANS/x/PLAN.yml``, ``plans./x/``):
        ``plans/x``; None when it lands on no plan folder."""
        parts = path_parts(path)
        top = [] if self.plans_dir in ("", ".") else path_parts(self.plans_dir)
        if len(parts) < len(top) + 2 or (
            top and not same_path("/".join(parts[: len(top)]), self.plans_dir)
        ):
            return None
        return plan_id_of("/".join([*top, *parts[len(top) : -1], "PLAN.yml"]), self.plans_dir)

    def _held_owners(
        self, repo: GitRepo, record: CommitRecord, change: FileChange
    ) -> list[PlanState]:
        """The plans held E_PLAN_AMBIGUOUS (what the hold found kept) whose plan file the
        regular file ``change`` names is as ``record`` leaves it, or as its first parent had
        it when ``record`` removed it (:meth:`_file_owners`): a status set in it is a status
        set while held. A link or gitlink sets no status (its own hold is E_UNSAFE_PATH)."""
        sha = record.sha
        if change.new_blob is None:
            if not record.parents:
                return []
            sha = record.parents[0]
        elif change.mode not in _FILE_MODES:
            return []
        found = self._file_owners(repo, sha, change.path, _twin_held)
        return [self.plans[plan_id] for plan_id in found]

    def _sole_file(self, repo: GitRepo, record: CommitRecord, plan_id: str) -> str | None:
        """The regular plan file (``PLAN.yml`` or ``PLAN.yaml``, a ``100644``/``100755``
        file) that alone claims ``plan_id``'s plan file place at ``record``: no link, no
        gitlink, no twin, no other claim beside it. Else None; "" when every claim is a
        regular plan file of the folder and there are two (twins: E_PLAN_AMBIGUOUS, no
        E_UNSAFE_PATH with no link left; round 87, linkrename)."""
        _, held, _ = self._claims(repo, record.sha, plan_id, plan_id)
        if not held or any(name not in PLAN_FILES for name in held):
            return None
        paths = [str(PurePosixPath(plan_id) / name) for name in held]
        if any(repo.mode_of(record.sha, path) not in _FILE_MODES for path in paths):
            return None
        return paths[0] if len(paths) == 1 else ""

    def _same_version(self, repo: GitRepo, kept: dict[str, Any], blob: str | None) -> bool:
        """Does ``blob`` (the plan file a release leaves) hold the version the hold found?"""
        facts = self.facts(repo, blob)
        return facts is not None and facts.hash is not None and facts.hash == kept.get("hash")

    def _status_only(self, repo: GitRepo, record: CommitRecord, change: FileChange) -> bool:
        """Whether ``record`` changed the plan file ``change`` names by its status alone (a
        plain status line, the hashed content kept: :meth:`_plan_file_verdict`), which
        writes nothing, held or not (round 83: an approver's status edit while a twin held
        the plan made her its writer, and every later approval of hers ``E_SELF_APPROVAL``)."""
        if not change.old_blob or change.old_blob == change.new_blob:
            return False
        if not any(c.path == change.path for c in record.changes):
            return False
        return self._plan_file_verdict(repo, record, change) is None

    def _held_decision(
        self,
        repo: GitRepo,
        record: CommitRecord,
        change: FileChange,
        state: PlanState,
        by_controller: bool,
    ) -> None:
        """A human commit changed the held plan's file (round 83): the blob is noted as last
        seen while held, and a status it set as a decision made while held (its commit, the
        status, the blob it left and the time its signing key must have been valid then:
        :meth:`signed_at`). The release judges every such decision as its own commit's, in
        commit order (:meth:`_held_steps`, :meth:`_held_maker`), never the releasing one's:
        an approval refused, a withdrawal counted or ignored by its own maker (round 84). A
        hold collapses none of them (round 85: Alice's ``rejected`` followed, still while
        held, by Mallory's ``pending_approval`` was lost, and Bob's approval ran the plan);
        bounded by :data:`_HELD_DECISIONS` (:func:`_keep_decisions`). Every plan file of the
        folder is the plan's while held (round 87: a twin ``PLAN.yaml`` committed
        ``approved`` by the agent was credited to Alice who released the hold; Alice's
        ``rejected`` in a byte-exact twin was lost with it): a status set in any of them, and
        in any file the hold's own rule counts as the plan's (:meth:`_held_owners`: a twin
        folder's, ``PLANS/x/``, ``plans/x\\PLAN.yml``; round 88), is kept with its file and
        version by every held plan whose file it is."""
        if state.held_from is None or by_controller:
            return
        owners = {state.plan_id: state}
        owners.update((each.plan_id, each) for each in self._held_owners(repo, record, change))
        self._held_note(repo, record, change, list(owners.values()))

    def _held_note(
        self, repo: GitRepo, record: CommitRecord, change: FileChange, owners: list[PlanState]
    ) -> None:
        """``change`` (a human commit's) seen by each held plan of ``owners`` whose plan file
        it is (:meth:`_held_owners`), a status it set kept as a decision made while held.
        Only a regular file's blob is read: a gitlink names a commit the store may not hold
        (round 90: every pass stopped E_GIT at the agent's gitlink under ``plans/``)."""
        if not owners:
            return
        new = self.facts(repo, change.new_blob) if change.mode in _FILE_MODES else None
        old = None
        if change.old_blob is not None and record.parents:
            was_mode = change.old_mode
            if was_mode == "?":
                was_mode = repo.mode_of(record.parents[0], change.path) or ""
            if was_mode in _FILE_MODES:
                old = self.facts(repo, change.old_blob)
        for each in owners:
            kept = each.held_from or {}
            # a new file (a twin made while held) is set from the status the hold found
            was = old.status if old is not None else kept.get("file_status")
            decision: dict[str, Any] | None = None
            if new is not None and new.status != was:
                decision = {
                    "commit": record.sha,
                    "status": new.status,
                    "blob": change.new_blob,
                    "at": self.signed_at(record),
                    "file": change.path,
                    "hash": new.hash,
                }
            self._held_seen(each, change, decision)
        if owners:
            self._held_noted.add(change.path)

    def _held_elsewhere(self, repo: GitRepo, record: CommitRecord, by_controller: bool) -> None:
        """After ``record``'s plans are judged (a hold it made too): each change no held plan
        of its own path saw (:meth:`_held_decision`) that is a held plan's file by the hold's
        rule (:meth:`_held_owners`: ``PLANS/x/PLAN.yml``, ``plans/x\\PLAN.yml``,
        ``plans/x/plan.yml``, a folder ``plans/x<U+200C>/``; round 88) is seen by it, a status
        it set a decision made while held, as one in the plan's own file is."""
        if by_controller:
            return
        for change in record.changes:
            if change.path not in self._held_noted:
                self._held_note(repo, record, change, self._held_owners(repo, record, change))

    def _held_seen(
        self, state: PlanState, change: FileChange, decision: dict[str, Any] | None
    ) -> None:
        """``change`` seen while ``state`` is held: the blob its file was left at (``seen``
        for the file the hold found, ``files`` for the others) and its status ``decision``."""
        kept = state.held_from or {}
        self.touch(state.plan_id)
        decisions = list(kept.get("decisions") or ())
        if decision is not None:
            decisions = _keep_decisions([*decisions, dict(decision)])
        if change.path == kept.get("file"):
            state.held_from = {**kept, "seen": change.new_blob, "decisions": decisions}
            return
        files = {**(kept.get("files") or {}), change.path: change.new_blob}
        state.held_from = {**kept, "files": files, "decisions": decisions}

    def _held_maker(
        self,
        repo: GitRepo,
        record: CommitRecord,
        change: FileChange,
        new: BlobFacts,
        kept: dict[str, Any] | None,
    ) -> CommitRecord:
        """Whose status change the release ``record`` of a hold applies (round 84): the
        last status a human set while the plan was held (:meth:`_held_decision`; the earlier
        ones judged before it, :meth:`_held_steps`), the release leaving the file as that
        commit left it, is that commit's, read again by its sha (its author, committer,
        dates, trailers and signature: every identity rule as for any commit); anything
        else is the releasing commit's own."""
        decision = _held_left(kept, change, new)
        return record if decision is None else self._held_commit(repo, decision)

    def _held_commit(self, repo: GitRepo, decision: dict[str, Any]) -> CommitRecord:
        """The commit that made a decision while held, its key's time the hold saw."""
        maker = repo.commit(str(decision["commit"]))
        if decision.get("at") is not None:
            self._decided_at = (maker.sha, float(decision["at"]))
        return maker

    def _held_steps(
        self,
        repo: GitRepo,
        state: PlanState,
        record: CommitRecord,
        old: BlobFacts | None,
        kept: dict[str, Any] | None,
        judge: tuple[FileChange, BlobFacts, int | None, EventSink | None, PlanState | None],
    ) -> BlobFacts | None:
        """The statuses set while held (round 85), but the last one when the release leaves
        the file as it set it (:meth:`_held_maker` judges that one), each judged at the
        release ``record`` as its own commit, in commit order, exactly as with no hold: a
        transition from the status the step before it left (an approval refused
        ``E_PLAN_AMBIGUOUS`` by its maker, a withdrawal by an entitled maker kept whatever
        came after it). Returns ``old`` as the last of them left the file's status, from
        which the release's own change (judged by :meth:`_held_maker`) is read."""
        change, new, since, sink, snapshot = judge
        decisions = list((kept or {}).get("decisions") or ())
        left = _held_left_at(kept, change, new)
        if left is not None:
            # the release leaves its file as it was set: judged after, as the file's change;
            # a withdrawal of another version there (round 89: Alice's ``rejected`` of v2 in
            # the twin ``PLANS/x/PLAN.yml``, moved over the plan by ``git mv -f``, read as a
            # new life of the path "from nothing") still vetoes the version it withdrew
            last = decisions.pop(left)
            facts = self.facts(repo, last.get("blob")) or new
            if old is None or (facts.hash and old.hash and facts.hash != old.hash):
                self._held_veto(state, repo, last, facts.hash)
        for decision in decisions:
            facts = self.facts(repo, decision.get("blob")) or new
            if old is None or (facts.hash and old.hash and facts.hash != old.hash):
                # set in a plan file of another version than the one judged here (a twin
                # file, round 87), or the release brought the plan from nothing: a withdrawal
                # still vetoes the version it withdrew, as a merged branch's does (round 86)
                self._held_veto(state, repo, decision, facts.hash)
                continue
            step = replace(facts, status=decision["status"])
            path = str(decision.get("file") or change.path)
            here = FileChange(path, change.old_blob, decision.get("blob"), change.mode)
            maker = self._held_commit(repo, decision)
            step = self._merger_status(repo, maker, here, step)  # a merge's: round 120
            try:
                if state.status == "approved" and step.status != old.status:
                    made = self._lapse_maker(repo, maker, here)
                    self._note_decision_lapse(repo, state.request, maker, here.path, made)
                    self._note_lapse(state.request, made)
                self._human_commit(
                    state,
                    maker,
                    here,
                    old,
                    step,
                    (False, False, since, False),
                    sink,
                    snapshot,
                )
            finally:
                self._decided_at = None
            self._held_request(state, maker, record)
            old = replace(old, status=decision["status"])
        return old

    def _held_veto(
        self, state: PlanState, repo: GitRepo, decision: dict[str, Any], plan_hash: str | None
    ) -> None:
        """A withdrawal set while held (``decision``) of the version ``plan_hash``, another
        than the one the release judges from: it vetoes that version by hash when its maker
        may withdraw it (:meth:`_side_veto`), whichever file the release leaves."""
        if decision["status"] in ("rejected", "aborted"):
            maker = repo.commit(str(decision["commit"]))
            floor = float(decision.get("at") or 0)
            self._side_veto(state.plan_id, maker, decision["status"], plan_hash, floor)

    def _held_vetoes(self, repo: GitRepo, plan_id: str, kept: dict[str, Any] | None) -> None:
        """A plan gone at its release (every plan file removed): each withdrawal set while
        held, in any of its files (round 87), still vetoes by hash the version it withdrew
        when its maker may withdraw it, as a merged branch's does (:meth:`_side_veto`)."""
        for decision in (kept or {}).get("decisions") or ():
            if decision.get("status") in ("rejected", "aborted"):
                facts = self.facts(repo, decision.get("blob"))
                maker = repo.commit(str(decision["commit"]))
                floor = float(decision.get("at") or 0)
                plan_hash = facts.hash if facts is not None else decision.get("hash")
                self._side_veto(plan_id, maker, str(decision["status"]), plan_hash, floor)

    def _held_request(self, state: PlanState, maker: CommitRecord, record: CommitRecord) -> None:
        """An approval request the release ``record`` applied that ``maker`` made while the
        plan was held (:meth:`_held_maker`) is a decision made while held (``held``: refused
        ``E_PLAN_AMBIGUOUS`` by its own author, the plan back where the hold found it)."""
        request = state.request
        if maker.sha == record.sha or request is None or request.get("commit") != maker.sha:
            return
        state.request = {**request, "held": True}
        state.note(
            f"{maker.sha[:12]} approval request ({request['kind']}) by "
            f"{maker.author.email}, made while the plan was held E_PLAN_AMBIGUOUS"
        )

    def _changers(
        self, repo: GitRepo, record: CommitRecord, change: FileChange, new: BlobFacts
    ) -> tuple[set[str], bool]:
        """Identities that changed the hashed content here (or in the merged branch), and
        whether a merge commit itself changed it (an "evil" merge)."""
        own = self.identities(record)
        if not record.is_merge:
            return own, False
        found: set[str] = set()
        evil = True
        for parent in record.parents[1:]:
            theirs = repo.blob_sha(parent, change.path)
            # Not evil when the result's hashed content is the merged branch's: a status,
            # frozen or comment change (or a clean 3-way merge with the controller's freeze
            # on the first parent) is not content the merger wrote.
            if theirs == change.new_blob or _same_hash(self.facts(repo, theirs), new):
                evil = False
            for commit in repo.range_log(record.parents[0], parent, [change.path]):
                if any(
                    self._wrote_content(repo, commit, c) and not self._merged_move(repo, commit, c)
                    for c in commit.changes
                ):
                    found |= self.identities(commit)
            if new.hash is not None:
                found |= self._producers(repo, parent, change.path, new.hash, record)
        found.discard(self.controller_email)
        return (found | own if evil else found), evil

    def _source_authors(self, repo: GitRepo, record: CommitRecord) -> set[str]:
        """Who wrote the plan the controller's ``convert`` commit turned into PLAN.yml: the
        authors and committers of every commit that changed the source it removed."""
        found: set[str] = set()
        for change in record.changes:
            if change.new_blob is None and path_name(change.path) in SOURCE_FILES:
                found |= self.authors.get(_blob_key(change.old_blob or ""), set())
                out = repo.run(
                    "log",
                    "--no-show-signature",
                    "--format=%ae%x00%ce%x00",
                    record.parents[0],
                    "--",
                    change.path,
                )
                found |= {approvals.normalize_identity(p) for p in out.split("\0") if p.strip()}
        found.discard(self.controller_email)
        return found

    def merged_authors(self, repo: GitRepo, since: str | None, until: str) -> None:
        """Authors of every plan content produced on branches merged into the first-parent
        line after ``since``: the author index never forgets whoever produced a content, even
        when the merge brought nothing new because the first parent made the same change
        (git's default history simplification would hide that side). What they made counts
        from the merge that brought it (:meth:`flush_side_made`)."""
        self.flush_side_made()  # an earlier call's, not yet applied: they came before
        # an earlier call's withdrawals not yet applied: placed on another line's positions,
        # applied at the end (:meth:`apply_side_withdrawals`)
        self._side = [(_AT_END, *entry[1:]) for entry in self._side]
        moves: list[tuple[list[tuple[str, str]], list[tuple[str, str]]]] = []
        #: this call's merged commits under the controller's name not its own, and why (the
        #: audit flags them: round 66, a look-alike ``complete`` on a review branch)
        self.side_disowned: list[tuple[CommitRecord, str]] = []
        # the paths the first-parent line is read by, the plans folder's spellings found in
        # every commit's tree (round 85: ``PLANS/pm/NOTES.md`` on a merged branch is a writer)
        merges = repo.merges_after(since, until)
        spelled = repo.folder_spellings(since, until, self.plans_dir, merged=True) if merges else []
        paths = history_paths(self.plans_dir, spelled)
        merged = repo.merged_in(since, until, paths)
        if self.keeps_merged_in:  # merged_back_runs reads them again
            self._merged_in_read = (since, until, merged)
        for commit in merged:
            who = self.identities(commit)
            left = self._left(repo, commit)
            # Under the controller's name is enough here: a side freeze only ever makes a
            # version older (max_age) and approvals of it later (the date rule), never the
            # reverse, so a forged one can refuse a plan, not let one run; and a new state
            # directory adopts first-parent commits only.
            ours = commit.author.email.lower() == self.controller_email
            why = self.side_disowned_why(repo, commit) if ours else None
            if why is not None:
                self.side_disowned.append((commit, why))
            for change in commit.changes:
                self._side_withdrawal(repo, commit, change)
                self._side_lapse(repo, commit, change)
                if ours:
                    self._side_freeze(repo, commit, change)
                self._side_writes(repo, commit, change, who, left)
            self._side_claim_removals(repo, commit, who)
            moves += _removed_and_written(
                [c for c in commit.changes if c.new_blob is None or self._writes_plan(repo, c)]
            )
        for merge in repo.merges_merged_in(since, until, paths):
            self._side_merge_writes(repo, merge)
        if merges:
            self._merge_claim_removals(repo, since, until, paths)
        self._follow_merged_moves(repo, [*moves, *self._merge_moves(repo, since, until)])
        self._place_side_made(repo, since, until)

    def _side_claim_removals(self, repo: GitRepo, commit: CommitRecord, who: set[str]) -> None:
        """A merged branch's commit that removes (or moves away) an entry which, in its
        parent's own tree, was one of two or more claims on a plan's plan file place by the
        hold's rule (:meth:`_file_owners`, :meth:`_claim_sets`: ``PLAN.yaml`` beside
        ``PLAN.yml``, a twin folder, a folder ``PLAN.yml/``, a split name, another plans
        folder spelling) chose the content left: its makers write that plan's folder and the
        versions its claims hold after it, as :meth:`_touchers` makes a first-parent commit's
        removal its maker's, whether or not the line ever held the plan (round 96: the twin
        added and deleted on the branch, Mallory's ``--no-ff`` merge showing nothing of it,
        Bob's deletion made him no writer and his approval ran the plan). Only a commit that
        removes a claim-named entry under the plans folder costs a listing, of its parent's
        tree (a branch of 1,000 ordinary commits lists none)."""
        claims = sorted(
            {
                claim
                for change in commit.changes
                if change.new_blob is None
                for claim in [_claim_entry(change.path)]
                if claim is not None
            }
        )
        if claims and commit.parents:
            self._claims_removed(repo, commit.parents[0], commit.sha, claims, who)

    def _merge_claim_removals(
        self, repo: GitRepo, since: str | None, until: str, paths: Sequence[str]
    ) -> None:
        """A merge (on the first-parent line or a merged branch) whose own resolution leaves
        out an entry that a merged parent's tree held as one of a plan's claims (by the hold's
        rule: :meth:`_claims_removed`) chose the content left, as a commit deleting it does
        (:meth:`_side_claim_removals`): its makers are writers of that plan's folder and of
        the version left (round 97: the agent's branch added a twin folder ``PLAN.yml/`` of
        Bob's plan, Bob's ``merge --no-commit`` then ``git rm`` (or ``-s ours``) left it out,
        neither parent deleted it, and his approval ran the plan). The parents compared are
        the merged ones (every parent of a merge on a merged branch: its first parent is a
        branch too); a removal git's clean join made (another parent lacks the entry and
        git's merge of the two leaves it out, no conflict there: :func:`_joined_away`, every
        merge base of a criss-cross joined as git joins them, round 98) is that parent's
        deleter's, not the merger's.
        Cost: one ``diff-tree --stdin -m`` of every merge against its parents, deletions
        under the plans folder's spellings alone; only a merge that removes a claim-named
        entry is read further (a merge of 1,000 ordinary commits lists no tree)."""
        spec = f"{since}..{until}" if since else until
        heads = repo.run("rev-list", "--merges", spec).split()
        if not heads:
            return
        listed = repo.run(
            "-c", "core.quotePath=false", "diff-tree", "--stdin", "-m", "-r", "-z",
            "--no-renames", "--no-abbrev", "--name-only", "--diff-filter=D", "--", *paths,
            input=("\n".join(heads) + "\n").encode(),
        )  # fmt: skip
        suspects: set[str] = set()
        at, known = None, set(heads)
        for entry in listed.split("\0"):
            if entry in known:
                at = entry
            elif at is not None and _claim_entry(entry) is not None:
                suspects.add(at)
        if not suspects:
            return
        line = set(repo.run("rev-list", "--first-parent", spec).split())
        for sha in [head for head in heads if head in suspects]:
            merge = repo.commit(sha)
            merged = merge.parents[1:] if sha in line else merge.parents
            for parent in merged:
                gone = repo.run(
                    "-c", "core.quotePath=false", "diff-tree", "-r", "-z", "--no-renames",
                    "--name-only", "--diff-filter=D", parent, sha, "--", *paths,
                ).split("\0")  # fmt: skip
                named = [path for path in gone if _claim_entry(path) is not None]
                if not named:
                    continue
                joins = {  # where another parent lacks an entry, git's join may have removed it
                    other: _merge_of(repo, [parent, other])
                    for other in merge.parents
                    if other != parent
                }
                claims = sorted(
                    {
                        claim
                        for path in named
                        for claim in [_claim_entry(path)]
                        if claim is not None and not _joined_away(repo, joins, path)
                    }
                )
                if claims:
                    self._claims_removed(repo, parent, sha, claims, self.identities(merge))

    def _claims_removed(
        self, repo: GitRepo, parent: str, sha: str, claims: Sequence[str], who: set[str]
    ) -> None:
        """``sha`` (made by ``who``) left out ``claims``, entries ``parent``'s tree held: each
        that was one of two or more claims on a plan's place there (by the hold's rule) makes
        ``who`` writers of that plan's folder and of the versions its claims hold in ``sha``."""
        makers = who - {self.controller_email}
        for claim in claims:
            if repo.mode_of(sha, claim):
                continue  # the entry stays (one file of a folder ``PLAN.yml/`` removed)
            for owner in self._file_owners(repo, parent, claim, unknown=True):
                if len(self._plan_files(repo, parent, owner, walk=True)) < 2:
                    continue  # its only claim: no hold, no content chosen
                self._folder_writers(PurePosixPath(owner), makers)
                for path in self._plan_files(repo, sha, owner, walk=True):
                    blob = repo.blob_sha(sha, path)
                    facts = self.facts(repo, blob) if blob else None
                    if facts is not None and facts.hash is not None:
                        self._add_authors(facts.hash, makers)  # the version chosen

    def _side_merge_writes(self, repo: GitRepo, merge: CommitRecord) -> None:
        """A merge on a merged branch writes what it did not bring (:meth:`_brought`: not a
        side's blob, not git's clean join, not a hands-off settlement), as a merge on the
        first-parent line does: its makers are writers of those bytes (round 68: Alice's
        merge of two agent branches, line 5 written by her hand, merged into main by the
        agent, made her no writer of the note: only the merged commits' makers counted)."""
        who, left = self.identities(merge), self._left(repo, merge)
        for change in merge.changes:
            if not self._brought(repo, merge, change):
                self._side_writes(repo, merge, change, who, left)

    def _side_writes(
        self,
        repo: GitRepo,
        commit: CommitRecord,
        change: FileChange,
        who: set[str],
        left: set[str],
    ) -> None:
        """``who`` wrote ``change`` in ``commit`` on a merged branch: a draft's or note's
        bytes, a plan file in the folders above (round 41), a plan's content (a merge's only
        when no parent held it: a joined status or comment is no writing)."""
        side_plan = plan_id_of(change.path, self.plans_dir)
        change = self._move_source(repo, commit, change) or change  # a move writes nothing
        if path_name(change.path) not in PLAN_FILES:
            if side_plan is None and not self._status_claim(repo, commit, change):
                self._blob_writers(repo, change, who, left, commit.sha)  # side draft
            return
        if side_plan is None:
            return
        self._plan_file_writers(repo, commit, change, side_plan, who, moved=True)
        if _unsafe_why(change) or not self._changed_content(repo, change):
            return  # a status or comment edit (an approval) writes no content
        if commit.is_merge and (
            not change.new_blob
            or not self._new_content(repo, commit.parents, change.path, change.new_blob)
        ):
            return  # a merge's removal, or content a parent held, is no writing of content
        facts = self.facts(repo, change.new_blob)
        if facts is not None and facts.hash is not None:
            self._add_authors(facts.hash, who)
            self._produced(facts.hash, who, left, commit.sha, change.path, side_plan)

    def _merge_moves(
        self, repo: GitRepo, since: str | None, until: str
    ) -> list[tuple[list[tuple[str, str]], list[tuple[str, str]]]]:
        """Per merge after ``since`` (on the first-parent line or a merged branch): the plan
        files some parent held that the merge lacks, and the plan files it holds with content
        no parent held (written by the merge itself: ``git log --cc``), each (path, blob).
        Round 66: the agent's ``merge --no-commit`` of Alice's draft branch moved her plan
        with one param more; against its first parent the plan was new, with no source."""
        if not repo.merges_after(since, until):
            return []
        spec = f"{since}..{until}" if since else until
        scope = [self.plans_dir] if self.plans_dir != "." else []
        out = repo.run(
            "-c", "core.quotePath=false", "log", "--merges", "--cc", "--raw", "--no-renames",
            "--no-abbrev", "--no-ext-diff", "--no-textconv", "--format=%x01%H %P", spec,
            "--", *scope,
        )  # fmt: skip
        found = []
        for chunk in out.split("\x01")[1:]:
            head, *rows = chunk.strip("\n").split("\n")
            merge, *parents = head.split()
            written = [
                (path, meta.split()[-2])
                for meta, _, path in (row.partition("\t") for row in rows if row.startswith("::"))
                if _is_plan_or_source(path) and meta.split()[-2].strip("0")
            ]
            written = [row for row in written if self._new_content(repo, parents, *row)]
            if not written:
                continue
            gone: dict[str, str] = {}
            for parent in parents:
                listed = repo.run(
                    "-c", "core.quotePath=false", "diff-tree", "-r", "--no-renames",
                    "--no-abbrev", "--diff-filter=D", parent, merge, "--", *scope,
                )  # fmt: skip
                for meta, _, path in (row.partition("\t") for row in listed.splitlines()):
                    if _is_plan_or_source(path):
                        gone.setdefault(path, meta.split()[2])
            found.append((sorted(gone.items()), written))
        return found

    def _new_content(self, repo: GitRepo, parents: Sequence[str], path: str, blob: str) -> bool:
        """Whether a merge's plan file holds content no parent held at ``path`` (not a status
        or comment joined: an approval merged is no writing)."""
        made = self.facts(repo, blob)
        if made is None or made.hash is None:
            return True
        return all(
            not _same_hash(self.facts(repo, repo.blob_sha(parent, path)), made)
            for parent in parents
        )

    def _follow_merged_moves(
        self,
        repo: GitRepo,
        moves: list[tuple[list[tuple[str, str]], list[tuple[str, str]]]],
    ) -> None:
        """A plan a merged branch's commit (or a merge) writes, made of a plan file it takes
        away (:data:`likeness.MOVE_KEPT` of either kept in the other, as
        :meth:`_moved_writers` pairs a first-parent commit's), is written by that content's
        writers too (round 66: her plan, brought by the agent's merge on its branch, moved
        there with one param added, kept only the agent as writer). Carried by content hash
        until nothing changes (the merged commits come in no useful order)."""
        pairs: list[tuple[str, str]] = []
        for gone, written in moves:
            texts = _Texts(repo)
            for target in written:
                for source in gone:
                    kept = texts.similarity(source, target)
                    if kept is None or kept >= likeness.MOVE_KEPT:
                        pairs.append((source[1], target[1]))
        for _ in range(len(pairs)):
            if not any([self._carry_content(repo, *pair) for pair in pairs]):
                break

    def _carry_content(self, repo: GitRepo, source: str, target: str) -> bool:
        """Add the writers of ``source``'s bytes and content to ``target``'s content; whether
        that added anyone."""
        made, was = self.facts(repo, target), self.facts(repo, source)
        if made is None or made.hash is None:
            return False
        who = set(self.authors.get(_blob_key(source), frozenset()))
        if was is not None and was.hash is not None:
            who |= self.authors.get(was.hash, frozenset())
        who.discard(self.controller_email)
        new = who - self.authors.get(made.hash, frozenset())
        if new:
            self._add_authors(made.hash, new)
        return bool(new)

    def _side_freeze(self, repo: GitRepo, commit: CommitRecord, change: FileChange) -> None:
        """A freeze under the controller's name on a branch merged back (its commits that a
        rewrite took off the first-parent line and a merge brought back): the version is no
        younger than it, for a new state directory and a fresh clone's audit as for the
        controller that made it (round 13)."""
        if plan_id_of(change.path, self.plans_dir) is None or _unsafe_why(change):
            return
        if path_name(change.path) not in PLAN_FILES:
            return
        facts = self.facts(repo, change.new_blob)
        if facts is not None and facts.hash is not None and facts.frozen_hash == facts.hash:
            self.note_freeze(facts.hash, commit.commit_time, by_controller=True)

    def _side_withdrawal(self, repo: GitRepo, commit: CommitRecord, change: FileChange) -> None:
        """A rejection or abort made on a branch merged into the watched branch: the merge
        may resolve the plan's status to anything (a conflict resolved to ``approved``, a
        fast-forward that puts the withdrawal behind a second parent), and a withdrawal
        still wins in any order of commits (round 8). Kept until the merge that brought it is
        applied on the first-parent line (:meth:`_place_side_made`,
        :meth:`apply_side_withdrawals`: after that merge's own changes, before the line's next
        commit), so it is judged against the plan as that merge left it (round 122)."""
        if change.new_blob is None:
            return
        plan_id = plan_id_of(change.path, self.plans_dir)
        if _unsafe_why(change) or path_name(change.path) not in PLAN_FILES:
            plan_id = None
        # a plan file of a plan by the hold's own rule AT THE COMMIT (round 88:
        # ``PLANS/x/PLAN.yml``, ``plans/x\\PLAN.yml``, ``plans/x/plan.yml`` on the merged
        # branch) is its plan's, whether or not a pass saw the plan held (round 89: the twin
        # added, Alice's ``rejected`` in it and the twin deleted all on the merged branch, or
        # the hold, the merge and the release in one scan): the branch's own tree says so
        parts = path_parts(change.path)
        if plan_id is None and not (parts and plan_file_claims([parts[-1]])):
            return
        facts = self.facts(repo, change.new_blob)
        if facts is None or facts.status not in ("rejected", "aborted"):
            return
        twins: list[str] = []
        if change.mode in _FILE_MODES:
            owned = self._file_owners(repo, commit.sha, change.path, unknown=True)
            twins = [p for p in owned if p != plan_id]
        owners = [*([plan_id] if plan_id else []), *twins]
        if not owners:
            return
        floor = self._ancestor_clock(repo, commit)
        for owner in owners:
            # held at that commit (more than one claim by the one rule): the withdrawal of
            # another version there vetoes it as a held plan's does (apply_side_withdrawals)
            held = len(self._plan_files(repo, commit.sha, owner, walk=True)) > 1
            self._side.append((None, owner, commit, facts.status, facts.hash, floor, held))

    def _side_lapse(self, repo: GitRepo, commit: CommitRecord, change: FileChange) -> None:
        """A decision taken back on a branch merged into the watched branch: a commit there
        set a plan away from ``approved``, and no commit since the decision that set it had
        changed the status (as the controller's start does). It lapsed as one taken back on the
        branch itself does (round 64: approved and reverted on her review branch, merged
        with a merge commit, then cherry-picked onto the branch by the agent, it ran on her
        name). Counted from the merge that brought it in (:meth:`_place_side_made`). A
        commit under the controller's name (its start, brought back by a merge) acted on it.
        The line's open approval lapses (or, for a content change there still saying
        ``approved``, is voided) at that merge, whatever its net diff
        (:meth:`_lapse_side_taken`, round 79)."""
        plan_id = plan_id_of(change.path, self.plans_dir)
        if plan_id is None or path_name(change.path) not in PLAN_FILES or _unsafe_why(change):
            return
        if commit.author.email.lower() == self.controller_email:
            return
        if change.new_blob is None or not commit.parents:
            return
        source: FileChange | None = change
        if change.old_blob is None:  # a move's status is a change of the moved plan's (round 72)
            source = self._move_from(repo, commit, change) or self._rename_from(commit, change)
        if source is None:
            return
        old, new = self.facts(repo, source.old_blob), self.facts(repo, change.new_blob)
        if old is None or new is None or old.status != "approved":
            return
        if new.status == "approved" and _same_hash(old, new):
            return  # a comment, a byte-exact move: nothing taken back
        decided = self._approved_by(repo, commit.parents[0], source.path)
        if decided is None:
            return
        decided_for = plan_id_of(source.path, self.plans_dir) or plan_id  # a move's source
        key = _approval_identity(decided, _decision(decided_for, "approved"))
        taken = f"{_TAKEN}{decided_for}\0{commit.sha}\0{new.status or ''}"
        self._side_lapse_found.append((commit.sha, key, taken))  # the line's open approval
        if new.status == "approved":
            return  # its content changed: the approval voided there (round 79), not taken back
        self._side_lapse_found.append((commit.sha, key, f"{decided.sha} {_hand(decided)}"))
        for who in (decided.author.email, commit.author.email):  # the lapse's author's too
            when = self._lapse_time(commit, who)
            lapse = _lapse_entry(decided.sha, when, {decided.author_time})
            mark = _decision_mark(who, old.hash, "approved")
            self._side_lapse_found.append((commit.sha, mark, f"{_DECIDED}{lapse}"))

    def _approved_by(self, repo: GitRepo, tip: str, path: str) -> CommitRecord | None:
        """The commit in ``tip``'s history that set ``path`` to ``approved`` as it is at
        ``tip`` (its first parent's version says otherwise); None when a commit since
        changed the status, or none of the last 32 changes of the file did."""
        out = repo.run("log", "-n", "32", "--no-show-signature", "--format=%H %P", tip, "--", path)
        for line in out.splitlines():
            sha, *parents = line.split()
            facts = self.facts(repo, repo.blob_sha(sha, path))
            if facts is None or facts.status != "approved":
                return None
            before = self.facts(repo, repo.blob_sha(parents[0], path)) if parents else None
            if before is None or before.status != "approved":
                return repo.commit(sha)
        return None

    def _ancestor_clock(self, repo: GitRepo, commit: CommitRecord) -> float:
        """The time of the newest controller commit that ``commit`` descends from, through
        any parent: git proves ``commit`` was made after it (round 39: a withdrawal inside
        a merged branch, forked from or synced with a controller commit made after its key
        retired, dated back into the key's window). Only a commit the controller knows as
        its own counts (:meth:`_is_controller`): one forged under its name and dated late
        would otherwise void an approver's honest withdrawal."""
        out = repo.run(
            "log",
            "-n",
            "64",
            "--no-show-signature",
            "--format=%H %ct",
            "--fixed-strings",
            "--regexp-ignore-case",
            f"--author=<{self.controller_email}>",
            commit.sha,
        )
        for line in out.splitlines():
            sha, _, when = line.partition(" ")
            if when.isdigit() and (self.own_commit is None or self.own_commit(sha)):
                return float(when)
        return 0.0

    def _side_due(self) -> bool:
        """Whether a merged branch's withdrawal waits for its merge on the line (placed)."""
        return any(entry[0] is not None and entry[0] < _AT_END for entry in self._side)

    def _apply_side_before(self, upto: str, sink: EventSink | None) -> None:
        """Before the line's commit ``upto`` is applied: the withdrawals that merges before
        it brought (merges that changed no plan file, so no commit applied: their branch
        held the line's content, ``-s ours``), each merge's in turn with the makings and
        take-backs it brought first, as the audit reads such a merge (round 122)."""
        stop = self._line_at.get(upto, -1)
        if stop <= 0 or not self._side:
            return
        for position in sorted({e[0] for e in self._side if e[0] is not None and e[0] < stop}):
            self._lapse_taken_to(position, None, None)
            self._flush_side_to(position)
            self._apply_side_at(position, sink)

    def apply_side_withdrawals(
        self, sink: EventSink | None = None, upto: str | None = None
    ) -> None:
        """Apply the withdrawals found on merged branches to the plans they withdraw (the
        version they were made for, by someone entitled to withdraw it), as withdrawals on
        the branch itself are: an approval not acted on lapses, an abort of a run is recorded
        by the controller's abort commit, and the audit hears of each (round 14). ``upto``: a
        commit of the first-parent line just applied, those its merge (or the merges before
        it) brought, in the line's order; None: every one left (the scan's end).

        Round 122 (``merged-draft-rejection-judged-after-submit``): a scan applied them all
        at its end, so a withdrawal was judged against the plan as the scan's LAST commit left
        it, not as the merge that brought it did: the agent's rejection of its draft on a
        branch, merged, then the draft submitted in the same push, was a withdrawal of the
        pending plan ("rejected by agent@example.com"), where a pass between the merge and the
        submission (and the fresh-clone audit, which applies them after each merge) ignored
        it: a draft has no author withdrawers. Each is now applied where its merge is on the
        line (:meth:`_place_side_made`), after that merge's own changes (:meth:`apply`), so a
        cold scan, a live controller whatever its passes, and the audit agree."""
        if upto is None:
            self.flush_side_made()
            self._apply_side_at(None, sink)
        elif self._side:
            stop = self._line_at.get(upto, -1)
            if stop != -1:
                self._apply_side_at(stop, sink)

    def _apply_side_at(self, stop: int | None, sink: EventSink | None) -> None:
        """:meth:`apply_side_withdrawals` of those placed up to the line's position ``stop``
        (None: every one)."""
        if stop is None:
            side, self._side = self._side, []
        else:
            side = [e for e in self._side if e[0] is not None and e[0] <= stop]
            self._side = [e for e in self._side if e[0] is None or e[0] > stop]
        for _, plan_id, commit, status, plan_hash, floor, held in side:
            state = self.plans.get(plan_id)
            if state is None:
                self._side_veto(plan_id, commit, status, plan_hash, floor)
                continue
            if state.held_from is not None and (state.ambiguous or state.unsafe):
                # held (round 86): kept as its own commit's for the release, judged now
                # against what the hold found, as with no hold against the plan then
                self._held_withdrawal(state, commit, status, plan_hash, floor, sink)
                continue
            if plan_hash is not None and plan_hash != state.hash:
                if held:  # set while a twin held the plan on that branch (round 89): it
                    # vetoes the version it withdrew, as a held plan's does (_held_withdrawal)
                    self._side_veto(plan_id, commit, status, plan_hash, floor)
                continue  # a withdrawal of another version of the plan
            if state.status in ("rejected", "aborted", "completed", "failed"):
                continue
            snapshot = PlanState(**asdict(state)) if sink else None
            if not self._side_allowed(state, commit, status, floor, sink, snapshot):
                continue
            self._remember_withdrawal(commit, plan_id)
            self._side_withdrawn(state, commit, status, sink, snapshot)

    def _side_allowed(
        self,
        state: PlanState,
        commit: CommitRecord,
        status: str,
        floor: float,
        sink: EventSink | None,
        snapshot: PlanState | None,
    ) -> bool:
        """May ``commit``'s maker withdraw ``state``'s version (an allowed approver or one of
        its authors, the key judged at the commit's time, never before ``floor``)? When not,
        the withdrawal is ignored and said, as on the branch itself (round 24)."""
        allowed = self.withdrawers(state)
        if self.may_withdraw is None or self.may_withdraw(
            commit, allowed, max(self.signed_at(commit, on_line=False), floor)
        ):
            return True
        text = (
            f"E_APPROVER_NOT_ALLOWED: {self._maker(commit)} set status {status} in "
            f"{commit.sha[:12]} on a merged branch, but only an allowed approver or an author "
            "of the plan may; ignored"
        )
        state.note(text)  # on the row, as one on the line is (round 120: it said nothing)
        self._emit(sink, "withdraw-not-allowed", state, commit, snapshot, text)
        return False

    def _side_withdrawn(
        self,
        state: PlanState,
        commit: CommitRecord,
        status: str,
        sink: EventSink | None,
        snapshot: PlanState | None,
    ) -> None:
        """An entitled withdrawal made on a merged branch applied to ``state``: an approval
        not acted on lapses and the version is vetoed, a run's abort is requested."""
        plan_id, who = state.plan_id, self._maker(commit)
        if state.status == "approved" and state.request is not None:
            self._lapse(state, commit, status)  # back where it was approved (a gate: paused)
        if state.status in ("draft", "pending_approval", "approved", None):
            self._veto(state.hash, commit, plan_id, who, status)
            state.status, state.request = status, None
            state.note(f"{commit.sha[:12]} {who} set status {status} on a merged branch")
            kind = "reject" if status == "rejected" else "abort-request"
        else:
            state.abort_requested, state.abort_by = True, who
            state.request = None  # a gate or resume approval beside it lapses
            state.note(f"{commit.sha[:12]} abort requested by {who} on a merged branch")
            kind = "abort-request"
        self._emit(sink, kind, state, commit, snapshot, who)
        self.touch(plan_id)

    def _held_withdrawal(
        self,
        state: PlanState,
        commit: CommitRecord,
        status: str,
        plan_hash: str | None,
        floor: float,
        sink: EventSink | None,
    ) -> None:
        """A withdrawal a merged branch made, brought while the plan is held (round 86:
        Alice's ``rejected`` on her branch, merged by Mallory while a twin held the plan, was
        judged at the release as the merge's, Mallory's, and ignored; Bob's approval then ran
        the plan). Judged now as with no hold, against what the hold found (its version,
        status and authors, the key at the commit's time): another version's, or one of a
        plan that had ended, is none; one by someone not entitled is ignored and said. An
        entitled one is kept in ``held_from.side`` (its commit, status and version; bounded by
        :data:`_HELD_DECISIONS`) and applied at the release as its own commit's
        (:meth:`_apply_held_side`), whoever merged it or releases the hold."""
        kept = dict(state.held_from or {})
        held_hash, held_status = kept.get("hash"), kept.get("status")
        if held_status in ("rejected", "aborted", "completed", "failed"):
            return
        if plan_hash is not None and held_hash is not None and plan_hash != held_hash:
            # a withdrawal of another version (set in a twin file of it: round 88, ``mv``)
            # vetoes that version by hash when its maker may withdraw it, as a status set
            # while held in such a file by a plain commit does (:meth:`_held_steps`)
            self._side_veto(state.plan_id, commit, status, plan_hash, floor)
            return
        found = replace(state, status=held_status, hash=held_hash, notes=[])
        snapshot = PlanState(**asdict(state)) if sink else None
        if not self._side_allowed(found, commit, status, floor, sink, snapshot):
            return
        side = list(kept.get("side") or ())
        if len(side) >= _HELD_DECISIONS or any(e.get("commit") == commit.sha for e in side):
            return  # every one kept is an entitled withdrawal of that version: one suffices
        side.append({"commit": commit.sha, "status": status, "hash": plan_hash})
        state.held_from = {**kept, "side": side}
        state.note(
            f"{commit.sha[:12]} {self._maker(commit)} set status {status} on a merged "
            "branch while the plan was held; applied at its release"
        )
        self.touch(state.plan_id)

    def _carry_held_side(self, plan_id: str, kept: dict[str, Any]) -> None:
        """The withdrawals merged while held (:meth:`_held_withdrawal`), from the release of
        the hold ``kept`` to :meth:`_apply_plan_change`."""
        if kept.get("side"):
            if self._held_side is None:
                self._held_side = {}
            self._held_side[plan_id] = [dict(e) for e in kept["side"]]

    def _apply_held_side(
        self,
        repo: GitRepo,
        plan_id: str,
        side: list[dict[str, Any]] | None,
        sink: EventSink | None,
    ) -> None:
        """Apply at the release the withdrawals merged branches made while the plan was held
        (:meth:`_held_withdrawal`), each as its own commit's, read again by its sha, exactly
        as :meth:`apply_side_withdrawals` applies one with no hold: the version they were made
        for withdrawn (an approval the release or a status set while held opened lapses, the
        plan ``rejected``; a run's abort requested). The version it withdrew is vetoed by hash
        whatever the release leaves (the plan gone, another version), as a withdrawal of a
        plan no longer there is (:meth:`_side_veto`)."""
        for entry in side or ():
            commit = repo.commit(str(entry["commit"]))
            status, plan_hash = str(entry["status"]), entry.get("hash")
            if plan_hash is not None and plan_hash not in self.started:
                # the version it withdrew, wherever the release leaves the plan (gone, another
                # version, ended while held), as a withdrawal vetoes it with no hold
                self._veto(plan_hash, commit, plan_id, self._maker(commit), status)
            state = self.plans.get(plan_id)
            if state is None or state.status in ("rejected", "aborted", "completed", "failed"):
                continue
            if plan_hash is not None and plan_hash != state.hash:
                continue  # the release brought another version: not this one's
            snapshot = PlanState(**asdict(state)) if sink else None
            self._side_withdrawn(state, commit, status, sink, snapshot)

    def _side_veto(
        self, plan_id: str, commit: CommitRecord, status: str, plan_hash: str | None, floor: float
    ) -> None:
        """A withdrawal made on a merged branch of a plan no longer there (moved or removed
        after it, on that branch or the line): the version it withdrew stays withdrawn by
        hash, wherever it went, as a withdrawal on the line vetoes it (round 79: Bob's reject
        or the author's, then the approved bytes moved byte-exact on the branch, merged,
        ran). Not a version that started: its run is its record."""
        if plan_hash is None or plan_hash in self.started:
            return
        allowed = self.producers_of(plan_hash) or frozenset()
        if self.may_withdraw is not None and not self.may_withdraw(
            commit, allowed, max(self.signed_at(commit, on_line=False), floor)
        ):
            return
        self._veto(plan_hash, commit, plan_id, self._maker(commit), status)

    def _producers(
        self, repo: GitRepo, tip: str, path: str, plan_hash: str, merge: CommitRecord
    ) -> set[str]:
        """Everyone in ``tip``'s whole history who produced ``plan_hash`` at ``path``: a merge
        can bring back content whose commits the branch already holds (``merge -s ours``
        then a re-merge; a plan deleted and merged back), which ``parent..tip`` misses."""
        found: set[str] = set()
        for commit in self._path_log(repo, tip, path, merge):
            for c in commit.changes:
                facts = self.facts(repo, c.new_blob) if c.path == path else None
                made = facts is not None and facts.hash == plan_hash
                # a status change of that content (her approval after a move) makes none, nor a
                # merge that brought it (its sides' commits made it)
                made = made and self._wrote_content(repo, commit, c)
                if made and not self._merged_move(repo, commit, c):  # a move made nothing
                    found |= self.identities(commit)
        return found

    def _path_log(
        self, repo: GitRepo, tip: str, path: str, merge: CommitRecord
    ) -> list[CommitRecord]:
        """``repo.path_log(tip, [path])``, read for every plan file ``merge`` changes at once
        on the first ask: each is a walk of the whole history (50,000 commits: about 1.5 s),
        and git runs them side by side (the same walks, the same answers)."""
        logs: dict[tuple[str, str], list[CommitRecord]] = getattr(self, "_path_logs", {})
        if (tip, path) not in logs:
            from concurrent.futures import ThreadPoolExecutor

            paths = sorted(
                {c.path for c in merge.changes if c.new_blob and path_name(c.path) in PLAN_FILES}
                | {path}
            )
            logs = {}  # only the merge at hand's
            with ThreadPoolExecutor(min(4, len(paths)), thread_name_prefix="paths") as pool:
                for one, found in zip(
                    paths, pool.map(lambda p: repo.path_log(tip, [p]), paths), strict=True
                ):
                    logs[(tip, one)] = found
            self._path_logs = logs
        return logs[(tip, path)]

    def _merged_another_version(
        self,
        repo: GitRepo,
        record: CommitRecord,
        change: FileChange,
        old: BlobFacts | None,
        new: BlobFacts,
        state: PlanState,
    ) -> str | None:
        """Whether a merge that changes a plan's status from its first parent's to S brought
        S from a merged branch that never held it with what the first parent shows:
        ``"version"`` when no merged branch held this very version (plan hash) with S (a pull
        request behind main approving a newer version it never showed: rounds 45-46),
        ``"pause"`` when one did, but for a started run none held it over the pause the first
        parent shows (round 47: a branch cut at gate 2 approving, merged once main had
        answered gate 2 and paused at gate 3, answered gate 3), else None.

        The merge brought S whenever a merged branch holds S in a plan file it changed since
        the merge base that may be this plan: at the plan's path, at a path the merge does
        not hold (a move: its content may be here), or with this very version; whatever the
        merger resolved (a conflict anywhere, ``-X ours``/``-X theirs``: round 48, no
        re-merge of the parents decides it). Only when no merged branch holds S for this
        plan is S the merger's own, as in any commit. A brought S counts only when a merged
        branch held exactly this version with it in a file it changed, at any path: no rename
        pairs are asked (git gives them up past its rename limit, a pathspec hides moves
        across it), so no move hides the branch's version. For a continuation (the plan
        awaiting approval or failed: a gate, an ask, a resume) that file must also hold the
        first parent's ``execution:`` block, whole (the controller's alone: every pause and
        every step of progress rewrites it); the ``approval:`` block is not compared (a
        quorum's ``partial`` commit writes it on main after a pull request is cut)."""
        if new.hash is None or new.status is None:
            return None
        if old is not None and old.status == new.status:
            return None  # the merge did not change the status
        pause: str | None = None
        if state.status in ("awaiting_approval", "failed"):  # a started run, paused
            shown = old if old is not None else self.facts(repo, state.blob)
            pause = shown.execution_digest if shown is not None else ""
        side = self._side_plans(repo, record)
        pauses = side.pauses.get((new.status, new.hash))
        if pauses is not None:  # a merged branch held this very version with S
            return None if pause is None or pause in pauses else "pause"
        # Every file a merged branch holds with S is of another version here: related when it
        # is this plan (its path), or a file the merge does not hold (a move: it may be this)
        paths = side.paths.get(new.status, ())
        related = change.path in paths or side.any_moved(repo, record.sha, new.status)
        return "version" if related else None  # no branch held S for it: the merger's own

    def _side_plans(self, repo: GitRepo, record: CommitRecord) -> _SidePlans:
        """The plan files each merged branch changed since its merge base with the first
        parent (every path, no rename detection), indexed once per merge (a merge approving
        a thousand plans asked git, per plan, for every other plan's path: a million
        lookups, issue 17)."""
        cached: _SidePlans | None = getattr(self, "_side_cache", None)
        if cached is None or cached.merge != record.sha:
            cached = _SidePlans(record.sha)
            seen: set[tuple[str, str]] = set()
            for side in record.parents[1:]:
                base = repo.merge_base(record.parents[0], side)
                for path, blob in repo.changed_files(base, side).items():
                    cached.files.setdefault(path, set()).add(blob)
                    if path_name(path) in PLAN_FILES and (path, blob) not in seen:
                        seen.add((path, blob))
                        cached.add(path, self.facts(repo, blob))
            self._side_cache = cached
        return cached

    def _side_changed(self, repo: GitRepo, record: CommitRecord, path: str) -> bool:
        """Whether a commit of a merged branch changed the hashed content of ``path``."""
        for parent in record.parents[1:]:
            for commit in repo.range_log(record.parents[0], parent, [path]):
                if any(c.path == path and self._changed_content(repo, c) for c in commit.changes):
                    return True
        return False

    def _changed_content(self, repo: GitRepo, change: FileChange) -> bool:
        if path_name(change.path) not in PLAN_FILES:
            return False
        return _content_changed(
            self.facts(repo, change.old_blob), self.facts(repo, change.new_blob), change
        )

    def _controller_commit(
        self,
        repo: GitRepo,
        state: PlanState,
        record: CommitRecord,
        old: BlobFacts | None,
        new: BlobFacts,
        sink: EventSink | None,
        snapshot: PlanState | None,
    ) -> None:
        if state.status == "approved" and new.status == "executing":
            state.approved_hash = new.hash
        event = plan_event(record, state.plan_id)  # one plan's group of a batched commit
        trailers = event.trailers if event is not None else {}
        if event is not None and event.verb == "start":
            state.foreign_event = state.foreign_start = ""  # a run of its own from here
        elif event is not None and event.verb == "fail" and event.trailers.get(CLOSES_START):
            # it closed the run whose erased commits came back as copies (round 112): the
            # copies' start (a person's commit under its name) is no run to wait for now
            state.foreign_event = state.foreign_start = ""
        votes = event is not None and event.verb in ("partial", "refuse")
        state.collected = _collected(repo, state) if votes else None
        state.status = new.status
        named = trailer_values(record, state.plan_id, "Approved-By") if event is not None else []
        named = named or ([trailers["Approved-By"]] if trailers.get("Approved-By") else [])
        if named:  # a quorum's run names every voter (round 117, quorum-approvers-not-shown)
            state.approver, state.approvers = named[0], named
        if new.status in ("awaiting_approval", "failed"):
            # A gate, resume or ask approval answers this pause: like a version's, it must
            # be written after it (an earlier approval cherry-picked back keeps its older
            # author date; round 4). The controller's commit time is its own clock.
            state.version_since = max(state.version_since or 0, record.commit_time)
        if new.status != "approved":
            state.request = None
        if new.status not in ("executing", "awaiting_approval"):
            state.abort_requested = False
        state.note(f"{record.sha[:12]} {event.subject if event else record.subject}")
        if sink:
            sink(HistoryEvent("controller", state.plan_id, record, snapshot, state))
        self._note_if_start(record, state.plan_id, new.hash, event)  # after the sink: the
        # audit reads the starts before this one
        if event is not None and event.verb == "convert" and old is None:
            self._source_rejected(repo, state, record, new, sink)

    def _source_rejected(
        self,
        repo: GitRepo,
        state: PlanState,
        record: CommitRecord,
        new: BlobFacts,
        sink: EventSink | None,
    ) -> None:
        """The plan the ``convert`` commit ``record`` wrote takes what its content would have
        taken had the source's writer committed that PLAN.yml herself (docs/formats.md),
        its rejection too: an entitled rejection committed in the source before its
        conversion (:meth:`source_withdrawal`) is that commit's withdrawal of the plan, as
        if committed in PLAN.yml: the plan ``rejected`` (terminal, whatever the converted
        file says: a conversion writes ``draft`` or ``pending_approval`` only), its version
        vetoed, the decision its maker's (round 120, source-rejection-dropped-at-conversion:
        the status was "not carried over", the plan frozen, and Bob's approval ran it)."""
        folder = PurePosixPath(state.plan_id)
        source = next(
            (
                c.path
                for c in record.changes
                if c.new_blob is None
                and path_name(c.path) in SOURCE_FILES
                and PurePosixPath(c.path).parent == folder
            ),
            None,
        )
        if source is None or not record.parents:
            return
        found = self.source_withdrawal(repo, record.parents[0], source)
        if found is None:
            return
        commit, version = found
        who = self._maker(commit)
        snapshot = PlanState(**asdict(state)) if sink else None
        self._remember_withdrawal(commit, state.plan_id)
        self._veto(version, commit, state.plan_id, who, "rejected", judged=True)
        gone = next(c for c in record.changes if c.path == source)
        if self._source_version(repo, gone.old_blob, source)[1] == version:
            # the version converted is the one rejected: vetoed as the PLAN.yml hashes too
            self._veto(new.hash, commit, state.plan_id, who, "rejected", judged=True)
        state.status, state.request = "rejected", None
        state.note(f"{commit.sha[:12]} {who} set status rejected in {source} before its conversion")
        self._emit(sink, "reject", state, commit, snapshot, who)
        self.touch(state.plan_id)

    def source_withdrawal(
        self, repo: GitRepo, tip: str, source: str
    ) -> tuple[CommitRecord, str] | None:
        """The rejection committed in the plan source ``source`` (``PLAN.md``, ``PLAN.json``
        ...) in ``tip``'s history by someone who may withdraw the version it rejected, had
        it been committed in a PLAN.yml: (that commit, the version's hash as converted), the
        newest such; None when there is none. Judged as :meth:`_human_commit` judges a
        ``rejected``: a draft's by an allowed approver only (a draft has no author
        withdrawers, round 119); a submitted version's (or one first seen ``rejected``) by an
        allowed approver or a producer of that version (the makers of every non-merge commit
        that made its content in the source). A merge's status is its branch's commits'."""
        commits = [c for c in repo.path_log(tip, [source]) if not c.is_merge]
        made: dict[str, set[str] | None] = {}
        for commit in reversed(commits):  # oldest first: who made each content
            change = next((c for c in commit.changes if c.path == source), None)
            if change is None or change.new_blob is None:
                continue
            new = self._source_version(repo, change.new_blob, source)[1]
            old = self._source_version(repo, change.old_blob, source)[1]
            if new is not None and new != old:
                people = self.identities(commit)
                held = made.get(new)
                made[new] = people if held is None else held & people
        for commit in commits:  # newest first
            change = next((c for c in commit.changes if c.path == source), None)
            if change is None or change.new_blob is None:
                continue
            status, version = self._source_version(repo, change.new_blob, source)
            before = self._source_version(repo, change.old_blob, source)[0]
            if status != "rejected" or before == "rejected" or version is None:
                continue
            allowed: Iterable[str] = (
                frozenset() if before == "draft" else frozenset(made.get(version) or ())
            )
            if self.may_withdraw is None or self.may_withdraw(
                commit, allowed, self.signed_at(commit)
            ):
                return commit, version
        return None

    def _source_version(
        self, repo: GitRepo, blob: str | None, source: str
    ) -> tuple[str | None, str | None]:
        """(the status a plan source's version says, the hash of the plan it converts to),
        (None, None) when it does not convert; read once per blob."""
        if blob is None:
            return None, None
        cache: dict[str, tuple[str | None, str | None]] = getattr(self, "_sources_read", {})
        if blob not in cache:
            from controller.plan.convert import convert_text

            found: tuple[str | None, str | None] = (None, None)
            try:
                text = repo.blob(blob).decode("utf-8")
                folder = str(PurePosixPath(source).parent)
                conversion = convert_text(text, path_name(source), nested_base=folder)
                found = (conversion.source_status, hashing.plan_hash(conversion.data))
            except (PlangateError, UnicodeDecodeError, ValueError, TypeError, RecursionError):
                pass
            if len(cache) > 10_000:
                cache.clear()
            cache[blob] = found
            self._sources_read = cache
        return cache[blob]

    def _human_commit(
        self,
        state: PlanState,
        record: CommitRecord,
        change: FileChange,
        old: BlobFacts | None,
        new: BlobFacts,
        changed: tuple[bool, bool, int | None, bool],
        sink: EventSink | None,
        snapshot: PlanState | None,
    ) -> None:
        content_changed, changed_here, since_before, other_pause = changed
        who = self._maker(record)
        if content_changed:
            state.collected = None  # votes are for one hash (SPEC §11)
        if content_changed and state.request and state.request["commit"] != record.sha:
            state.request = {**state.request, "voided_by": record.sha}
        if content_changed and state.status in _APPROVED_STATES:
            self._emit(
                sink,
                "content-after-approval",
                state,
                record,
                snapshot,
                f"{who} changed the content of a {state.status} plan",
            )
        if old is not None and new.owned_digest != old.owned_digest and sink:
            self._emit(
                sink,
                "owned-block-changed",
                state,
                record,
                snapshot,
                f"{who} changed the controller-owned approval/execution blocks",
            )
        old_file_status = old.status if old else None
        if new.status == old_file_status:
            return
        if old is not None and state.status == "approved":
            transition = self._lapse(state, record, new.status)
        else:
            transition = approvals.classify(state.status if old else None, new.status)
        # A plan whose first version on the line already says ``rejected`` (the forge's
        # squash of a pull request that adds it with a reviewer's rejection) is a plan
        # withdrawn, by whoever may withdraw it (its author, an allowed approver): never
        # revived by a later freeze (round 117, ``squash-added-rejected-plan-revived``: it
        # was an illegal transition "from nothing", ignored, and Bob's approval ran it). Not
        # a merge's: it carries the branch's statuses, read there by who made them (round 34:
        # Mallory's move and rejection on a merged branch, not the merger's withdrawal)
        first_rejected = (
            old is None and new.status == "rejected" and not state.status and not record.is_merge
        )
        if first_rejected:
            transition = Transition.LEGAL
        if transition is Transition.NONE:
            return  # unreadable now: keep the effective status
        if transition is Transition.ILLEGAL:
            text = (
                f"E_ILLEGAL_TRANSITION: {who} set status {new.status} "
                f"(from {state.status or 'nothing'}) in {record.sha[:12]}; ignored"
            )
            state.note(text)
            self._emit(sink, "illegal", state, record, snapshot, text)
            return
        withdraw = transition is Transition.ABORT or new.status == "rejected"
        if (
            withdraw
            and self.may_withdraw is not None
            and not self.may_withdraw(record, self.withdrawers(state), self.signed_at(record))
        ):
            text = (
                f"E_APPROVER_NOT_ALLOWED: {who} set status {new.status} in {record.sha[:12]}, "
                "but only an allowed approver or an author of the plan may; ignored"
            )
            state.note(text)
            self._emit(sink, "withdraw-not-allowed", state, record, snapshot, text)
            return
        if withdraw:  # counts whoever put it on the branch, whenever dated (round 117)
            self._remember_withdrawal(record, state.plan_id)
        if withdraw and (state.status in NEVER_STARTED or first_rejected):
            withdrawn_as = "aborted" if transition is Transition.ABORT else str(new.status)
            form = new.form_hash if new.hash else None
            self._veto(new.hash or state.hash, record, state.plan_id, who, withdrawn_as, form)
        state.status = "aborted" if transition is Transition.ABORT else new.status
        if transition in (Transition.APPROVE, Transition.GATE, Transition.RESUME):
            bound, elsewhere = _binding(record, state.plan_id, self.plans_dir)
            made_for = f"{state.plan_id}\0{new.hash}\0{since_before if old is not None else ''}"
            decision = _decision(state.plan_id, new.status)
            replay_of = self._seen_approval(record, decision, made_for)
            mark = _decision_mark(self._maker(record), new.hash, new.status)
            replay_of = replay_of or self._lapsed_decision(record, mark)
            state.request = {
                "identity": _approval_identity(record, decision),
                "decision": mark,
                "commit": record.sha,
                "kind": transition.value,
                "blob": change.new_blob,
                "author": record.author.email,
                "committer": record.committer.email,
                "time": record.commit_time,
                "voided_by": None,
                "changed_in_commit": changed_here,
                "other_pause": other_pause,
                "author_time": record.author_time,
                "merge": record.is_merge,
                "since": since_before if old is not None else None,
                "bound_hash": bound,
                "bound_elsewhere": elsewhere,
                "replay_of": replay_of,
            }
            state.note(f"{record.sha[:12]} approval request ({transition.value}) by {who}")
            self._emit(sink, "request", state, record, snapshot, transition.value)
        elif transition is Transition.ABORT:
            state.abort_requested = True
            state.abort_by = who
            state.note(f"{record.sha[:12]} abort requested by {who}")
            self._emit(sink, "abort-request", state, record, snapshot, who)
        else:
            state.note(f"{record.sha[:12]} {who} set status {new.status}")
            if new.status == "rejected":
                self._emit(sink, "reject", state, record, snapshot, who)

    def _veto(
        self,
        plan_hash: str | None,
        record: CommitRecord,
        plan_id: str,
        who: str,
        status: str,
        form: str | None = None,
        *,
        judged: bool = False,
    ) -> None:
        """Remember a version withdrawn before it ran (rejected, or aborted while its first
        approval waited), by its hash: no approval of it counts again, under any name, as a
        copy, a re-add or a pin (E_VERSION_WITHDRAWN; a veto is not dodged by renaming).
        The version is the one that would freeze and run: vetoed by its hash as written and
        by its hash as frozen (``form``, else the one its facts gave: legacy ``${...}``
        references converted), so every spelling of it is withdrawn (round 120,
        draft-legacy-veto-missed: a legacy draft rejected by Alice was vetoed by its text's
        hash alone; its copy, moved or re-added version froze as ``$<...>`` and ran).
        ``judged``: the maker's right to withdraw this very version was judged already
        (:meth:`source_withdrawal`: its producers are the source's, not the index's).

        An allowed approver's withdrawal vetoes the version everywhere. So does an author's
        when she produced that version (round 23: an agent rejected its plan, then brought
        the version back as a copy, a re-add or a pin, and it ran); a copier produced nothing
        and withdraws nothing (round 16: her rejection of her copy vetoed the original; round
        34, 35).

        Who withdrew is kept (``as``): an approver's veto binds every plan, a parent pinning
        the version too; a producer's binds the version as a plan of hers (a copy, a re-add,
        a parent she wrote pinning it), not a parent someone else wrote that pins it (round
        120, child-author-vetoes-pinning-parent; round 37's ``reject-child``: the writer of a
        pinned child may not withdraw the parent). An approver's withdrawal after a
        producer's is kept beside it (``approver``): the version then binds every parent."""
        if not plan_hash:
            return
        form = form or (self._forms or {}).get(plan_hash)
        keys = [
            h
            for h in dict.fromkeys((plan_hash, form))
            if h and not _approver_veto(self.withdrawn.get(h))
        ]
        if not keys:
            return
        at = self.signed_at(record)
        if (
            not judged
            and self.may_withdraw is not None
            and not self.may_withdraw(record, self.producers_of(plan_hash) or (), at)
        ):
            return  # an author of the plan, not a producer of this version
        approver = self.may_withdraw is None or self.may_withdraw(record, (), at)
        made = {
            "plan": plan_id,
            "commit": record.sha,
            "by": who,
            "time": record.commit_time,
            "status": status,
        }
        for key in keys:
            known = self.withdrawn.get(key)
            if known is not None and not approver:
                continue  # a producer's withdrawal is already kept
            fields = {**made, "as": "approver" if approver else "author"}
            if known is not None:  # a producer's first: hers stays, the approver's beside it
                fields = {**json.loads(known), "approver": made}
            self.withdrawn[key] = self._new_withdrawn[key] = json.dumps(fields)

    @staticmethod
    def _lapse(state: PlanState, record: CommitRecord, status: str | None) -> Transition:
        """The plan stops saying ``approved`` before the controller acted on that approval
        (the controller starts only a plan that still says it): the approval lapses, the
        plan is back where it was approved, and the change is judged from there. So a
        withdrawal wins and no status change can leave an approval nothing acts on."""
        return Lifecycle._lapse_at(state, record.sha, status)

    @staticmethod
    def _lapse_at(state: PlanState, sha: str, status: str | None, where: str = "") -> Transition:
        """:meth:`_lapse` by the commit ``sha`` (``where``: said after it, as where it was made)."""
        request = state.request or {}
        kinds = {t.value: t for t in approvals.APPROVED_FROM}
        kind = kinds.get(str(request.get("kind")), Transition.APPROVE)
        origin, transition = approvals.classify_open(kind, status)
        state.request = None
        state.status = origin
        state.note(
            f"{str(request.get('commit') or '')[:12]} approval ({kind.value}) lapsed: "
            f"{sha[:12]} set status {status}{where} before the controller acted on it"
        )
        return transition

    @staticmethod
    def _emit(
        sink: EventSink | None,
        kind: str,
        state: PlanState,
        record: CommitRecord,
        snapshot: PlanState | None,
        detail: str,
    ) -> None:
        if sink:
            sink(HistoryEvent(kind, state.plan_id, record, snapshot, state, detail))


def _approver_veto(entry: str | None) -> bool:
    """Whether a kept withdrawal (:meth:`Lifecycle._veto`) binds every plan: an allowed
    approver's, or one kept before who withdrew was (an older index: the safe side); no
    withdrawal kept binds nothing."""
    if entry is None:
        return False
    found = json.loads(entry)
    return found.get("as", "approver") == "approver" or "approver" in found


def _carries_approval(source: PlanState, gone: FileChange | None, change: FileChange) -> bool:
    """Whether a move of ``source``'s plan file (``gone``, the content that left) to
    ``change`` carries the first approval ``source`` held open (round 77): the moved bytes
    are exactly those approved (any edit is another version, the mover's writing: rounds
    75-76), and the request is a first approval still standing (not one of a started run's
    pause, nor voided by a later content change)."""
    request = source.request or {}
    return (
        gone is not None
        and gone.old_blob == change.new_blob == source.blob
        and source.status == "approved"
        and request.get("kind") == Transition.APPROVE.value
        and not request.get("voided_by")
    )


def _collected(repo: GitRepo, state: PlanState) -> dict[str, Any] | None:
    """The controller's ``approval:`` block with votes, as it committed it (never a human's)."""
    if state.blob is None:
        return None
    try:
        doc = yamlio.read_yaml(repo.blob(state.blob).decode("utf-8"), state.file).data
    except Exception:
        return None
    block = doc.get("approval") if isinstance(doc, dict) else None
    if not isinstance(block, dict) or not block.get("approvals"):
        return None
    return {k: block.get(k) for k in ("status", "plan_hash", "approvals", "missing")}


#: Seconds a human commit's clock may run ahead of the controller's (clock skew).
CLOCK_SKEW = 300
#: A freeze time that cannot be known: the commit claimed one in the future.
UNKNOWABLE = 0


def _raw_pairs(fields: list[str], i: int) -> tuple[list[tuple[str, str, str, str | None]], int]:
    """``diff-tree -z --raw`` entries from ``fields[i]`` on: (status, source, target or path,
    the source's blob), and where they stop (another commit's id, or the end)."""
    found: list[tuple[str, str, str, str | None]] = []
    while i + 1 < len(fields) and fields[i].startswith(":"):
        meta = fields[i].split()
        status, old = meta[4], meta[2].strip("0") and meta[2]
        if status[0] in "RC" and i + 2 < len(fields):
            found.append((status, fields[i + 1], fields[i + 2], old or None))
            i += 3
        else:
            found.append((status, fields[i + 1], fields[i + 1], old or None))
            i += 2
    return found, i


def _score(status: str) -> int:
    """git's similarity score of a raw status (``R087``: 87; none: 0)."""
    return int(status[1:]) if status[1:].isdigit() else 0


def _kept_copy(row: tuple[str, str, str, str | None]) -> bool:
    """A pairing from a ``--find-copies-harder`` run that counts: anything but a copy, or a
    copy from :data:`COPY_SCORE` on."""
    return row[0][0] != "C" or _score(row[0]) >= COPY_SCORE


def _pairs_nothing(record: CommitRecord) -> bool:
    """git's ``-M -C`` can pair nothing in this commit: its root trees (as the cold scan
    read them) changed nothing outside the plans folder, and inside it the commit only
    added files (no deletion to move from, no changed file to copy from)."""
    return record.outside_quiet and all(c.old_blob is None for c in record.changes)


def _capped(claimed: int, bound: int) -> int:
    """A human freeze time, given a time known to come after it: the claim when it is not
    later than that (plus skew), else :data:`UNKNOWABLE` (a clock that lies about a
    freeze lies about its age: ``max_age`` then fails closed)."""
    if claimed > bound + CLOCK_SKEW:
        return UNKNOWABLE
    return min(claimed, bound)


def _named_plans(record: CommitRecord, plans_dir: str) -> list[tuple[str, str | None]]:
    """The plans (and hashes) a commit's message says it approves: ``Plan-Approved: <plan>
    <hash>`` lines and the ``Plan: <plan>`` / ``Plan-Hash: <hash>`` pairs that ``plangate
    approve`` writes (a squash merge of several such commits names each). Only paths under
    the plans folder count: a line ``Plan: migrate the database`` in prose names nothing."""
    named: list[tuple[str, str | None]] = []
    prefix = "" if plans_dir in ("", ".") else plans_dir.rstrip("/") + "/"
    for line in record.body.split("\n"):
        key, sep, value = line.partition(":")
        key, value = key.strip().lower(), value.strip()
        if not sep or not value:
            continue
        if key == "plan-approved":
            path, _, plan_hash = value.rpartition(" ")
            if path.strip() and plan_hash:
                named.append((path.strip(), plan_hash))
        elif key == "plan" and value.startswith(prefix) and (prefix or " " not in value):
            named.append((value, None))
        elif key == "plan-hash" and named and named[-1][1] is None and value != "none":
            named[-1] = (named[-1][0], value)
    return named


def _approval_identity(record: CommitRecord, decision: str = "") -> str:
    """What git keeps of a commit through every replay (its author, author date, subject),
    and with ``decision`` what it decides: one approval's identity. Without it: every
    decision made under that author, date and subject (see :meth:`Lifecycle._replayed`)."""
    parts = (approvals.normalize_identity(record.author.email), str(record.author_time))
    return _digest("\0".join((*parts, record.subject, *((decision,) if decision else ()))))


def _decision(plan_id: str, status: str | None) -> str:
    """What an approval decides: the plan and the status it sets. The version it is made
    for binds it (``made_for`` in :meth:`Lifecycle._seen_approval`): the same decision for
    another version or pause is that approval brought back (rounds 6, 60, 62)."""
    return "\0".join((plan_id, status or ""))


def _decision_mark(author: str, plan_hash: str | None, status: str | None) -> str:
    """A decision itself, whatever commit carries it (round 65): who made it (her author
    identity), the version (its frozen hash) and the status it sets. Not the plan's path:
    a move keeps the frozen hash, and her decision with it (round 66: the agent moved the
    folder and brought her lapsed approval back onto it). Its entry in the approval
    identities says when it lapsed (:meth:`Lifecycle._mark_decision_lapsed`)."""
    who = approvals.normalize_identity(author)
    return _digest("\0".join(("decision", who, plan_hash or "", status or "")))


def _lapse_entry(sha: str, when: int, made: set[int]) -> str:
    """A lapsed decision's entry: ``"<commit> <lapse time> <carrier dates, comma-joined>"``
    (the newest 8 author dates of commits that carried the decision)."""
    return f"{sha} {when} {','.join(str(t) for t in sorted(made)[-8:])}"


def _lapse_fields(entry: str) -> tuple[str, int, set[int]]:
    """(commit, lapse time (-1 if unreadable), carrier dates) of :func:`_lapse_entry`."""
    sha, when, made = [*entry.split(" ", 2), "", ""][:3]
    dates = {int(t) for t in made.split(",") if t.isdigit()}
    return sha, int(when) if when.isdigit() else -1, dates


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def _hand(record: CommitRecord) -> str:
    """Who put a commit on the branch (its committer), as stored beside an approval
    identity: the hand that carried her decisions (:meth:`Lifecycle._replayed`)."""
    return _digest(approvals.normalize_identity(record.committer.email))[:16]


def _first_hand(hand: str, record: CommitRecord) -> str:
    """The hand stored with an approval identity; an entry from before round 62 names none:
    its author's own (round 60's rule)."""
    return hand or _digest(approvals.normalize_identity(record.author.email))[:16]


#: The time of a lapse another hand made, until a controller commit follows it (round 67):
#: later than any clock, so the reader's clock bounds it (:meth:`Lifecycle._lapsed_decision`)
#: and the next controller commit dates it (:meth:`Lifecycle._bound_open_lapses`).
OPEN = 1 << 62


#: The mark an approval identity's entry carries once its decision lapsed (round 63).
LAPSED = "lapsed"

#: Marks a lapse found on a merged branch as one of a decision (:func:`_decision_mark`).
_DECIDED = "decision:"
#: Marks an entry of the merged branches' lapses that takes back the line's open approval
#: itself ("<plan>\0<side commit>\0<status it set>": :meth:`Lifecycle._lapse_side_taken`).
_TAKEN = "taken:"
#: The line position of a merged branch's withdrawal that an earlier walk of merged branches
#: found and no commit applied (:meth:`Lifecycle.merged_authors`): the scan's end applies it.
#: One the walk found is placed at its merge (:meth:`Lifecycle._place_side_made`; None until).
_AT_END = 1 << 62

#: What an entry holds for "made for" when its decision was read on a merged branch, where
#: the version and pause it was made for are not tracked (round 64): bound to none.
UNBOUND = "-"


def _seen_fields(entry: str) -> tuple[str, str, str, bool]:
    """An approval identity's entry ``"<commit> <made for> <hand>[ lapsed]"``: (first
    commit, what it was made for, its hand: "" in an entry written before round 62, whether
    its decision lapsed)."""
    sha, made, hand, *mark = [*entry.split(" ", 3), "", ""][:4]
    return sha, made, hand, mark == [LAPSED]


def _brought_back(record: CommitRecord) -> bool:
    """git gives a brought-back commit a new committer date; a fresh commit whose author
    and committer dates agree is a new one that happens to share a second and a subject
    with an earlier one (a gate approved in the second its plan was)."""
    return record.commit_time != record.author_time


def _binding(record: CommitRecord, plan_id: str, plans_dir: str) -> tuple[str | None, str | None]:
    """What the approving commit binds itself to: (the hash it names for this plan, the plan
    it names instead when it names plans but not this one). A commit that names what it
    approves approves only that (SPEC §5): moved onto another plan (``git am
    --directory``, a cherry-pick into another folder) it approves nothing there."""
    named = _named_plans(record, plans_dir)
    hashes = [plan_hash for path, plan_hash in named if path == plan_id and plan_hash]
    if hashes:
        return hashes[-1], None
    if named and all(path != plan_id for path, _ in named):
        return None, named[0][0]
    return None, None


#: File names whose text may be a plan under another name or a plan source.
DRAFT_SUFFIXES = frozenset({".yml", ".yaml", ".json", ".md"})

#: A plan's status line as an approval or a withdrawal writes it: ``status: <word>``, the word
#: plain or quoted, one blank after the colon and nothing after the word (a comment, a blank
#: or a tab beside the key or the value is bytes of the writer's: round 76); the old line's
#: indent and its own line end are kept (:func:`_status_line_rewritten`).
_STATUS_LINE = re.compile(rb"(?P<indent> *)status: (?:[a-z_]+|'[a-z_]+'|\"[a-z_]+\")")
#: A line's own end: CR LF, LF, a CR ending the file, or none (the file's last line).
_LINE_END = re.compile(rb"\r?\n?\Z")
_STATUS_PATH = ("plan", "status")


#: :meth:`Lifecycle._plan_file_verdict`'s answers: bytes outside the owned blocks, or inside them
#: alone; and the author index's suffix of a folder's key for the second's committers.
_WRITES, _OWNED, _HELD = "writes", "owned", "@held"
_RANK: dict[str | None, int] = {None: 0, _OWNED: 1, _WRITES: 2}
_PLAIN_MODE = "100644"
_OWNED_KEY = re.compile(rb"(?:approval|execution)[ \t]*:")


def _owned_lines(data: bytes) -> list[bytes]:
    """The lines of a plan file's controller-owned blocks (``approval:``, ``execution:``:
    each top-level key's line and every indented or blank line below it)."""
    return _split_owned(data)[1]


def _set_aside_owned(data: bytes) -> list[bytes]:
    """A plan file's lines without its controller-owned blocks (:func:`_owned_lines`). A line
    at the first column (a comment too) ends a block: what lies there is compared."""
    return _split_owned(data)[0]


def _split_owned(data: bytes) -> tuple[list[bytes], list[bytes]]:
    kept: list[bytes] = []
    owned: list[bytes] = []
    inside = False
    for line in _lf_lines(data):
        if line[:1] not in (b" ", b"\t") and line.strip(b"\r\n"):
            inside = _OWNED_KEY.match(line) is not None
        (owned if inside else kept).append(line)
    return kept, owned


def _status_rewritten(old_lines: list[bytes], new_lines: list[bytes]) -> bool:
    """Whether the new lines are the old ones with nothing but the plan's status changed: one
    line rewritten as a plain status line (``status: approved``, no comment), or the status
    value alone changed in place where the parser reads it (:func:`yamlio.scalar_alone_changed`:
    a flow mapping's ``plan: {name: x, status: approved}``, a key spelled ``"\\x73tatus":`` or
    ``? status``, the value on the next line; exactly what ``plangate approve`` writes). No
    other byte of the file changed (round 75: the value's edit under an escaped or explicit key,
    or on the line after the key, read as its maker's content)."""
    if len(old_lines) == len(new_lines) and _status_line_rewritten(old_lines, new_lines):
        return True
    try:
        before, after = b"".join(old_lines).decode(), b"".join(new_lines).decode()
    except UnicodeDecodeError:
        return False
    return yamlio.scalar_alone_changed(before, after, _STATUS_PATH)


def _status_line_rewritten(old_lines: list[bytes], new_lines: list[bytes]) -> bool:
    """Whether exactly one line changed, rewritten as a plain status line (``status: approved``
    and nothing else), its indent and its own line end the old line's: a CR added to an LF
    line or dropped from a CR LF one is a byte of the writer's (round 77)."""
    changed = [(was, line) for was, line in zip(old_lines, new_lines, strict=True) if line != was]
    if len(changed) != 1:
        return False
    (was, was_end), (line, end) = map(_split_line_end, changed[0])
    plain = _STATUS_LINE.fullmatch(line)
    if plain is None or was[: len(was) - len(was.lstrip(b" "))] != plain["indent"]:
        return False
    return was_end == end


def _split_line_end(line: bytes) -> tuple[bytes, bytes]:
    """A line's text and its own end (:data:`_LINE_END`): ``b"x\\r\\r\\n"`` is ``b"x\\r"``
    ending CR LF."""
    end = _LINE_END.search(line)
    cut = end.start() if end else len(line)
    return line[:cut], line[cut:]


def _lf_lines(data: bytes) -> list[bytes]:
    """``data``'s lines, each with its line feed (a carriage return is a byte of its line)."""
    lines = [line + b"\n" for line in data.split(b"\n")]
    lines[-1] = lines[-1][:-1]
    return lines if lines[-1] else lines[:-1]


def _blob_key(blob: str) -> str:
    """The author index's key for a file's bytes (plan contents are keyed by their hash)."""
    return f"blob:{blob}"


#: ``unsafe_name`` of a path, kept for the paths seen last (a plan's file changes once per
#: step of its life: a cold scan asks five times for each of 10,000 paths).
_unsafe_name = functools.lru_cache(maxsize=1 << 14)(unsafe_name)


def forget_scan_answers() -> None:
    """Drop the answers kept for the paths and names a scan saw last (:func:`_unsafe_name`,
    :func:`_claimed_folder`, :func:`controller.plan.names.fold`): pure functions, asked
    again when a later commit changes a path. After a cold scan of 20,000 plans they held
    16,384 paths each and 20,000 folded names (perf80mem: 8 MB, scattered among the scan's
    dead records, so the memory around them could not be given back)."""
    _unsafe_name.cache_clear()
    _claimed_folder.cache_clear()
    fold.cache_clear()


def _twin_held(state: PlanState) -> bool:
    """Is ``state`` held E_PLAN_AMBIGUOUS with what the hold found kept (round 83)?"""
    return state.ambiguous and state.held_from is not None


def _held_from(state: PlanState) -> dict[str, Any]:
    """What a hold found of the plan (round 83): its file, version, status and open request,
    which its release takes back (a paused run stays the run it was)."""
    return {
        "file": state.file,
        "blob": state.blob,
        "hash": state.hash,
        "seen": state.blob,
        "status": state.status,
        "file_status": state.file_status,
        "request": dict(state.request) if state.request else None,
        "decisions": [],
    }


def _held_left(
    kept: dict[str, Any] | None, change: FileChange, new: BlobFacts
) -> dict[str, Any] | None:
    """The status set while held (:meth:`Lifecycle._held_decision`) that the release
    ``change`` leaves its file at: the last one set in that file (the file the hold found or
    another plan file of the folder, round 87), the file left as that commit left it."""
    at = _held_left_at(kept, change, new)
    return None if at is None or kept is None else dict(kept["decisions"][at])


def _held_left_at(kept: dict[str, Any] | None, change: FileChange, new: BlobFacts) -> int | None:
    """Where :func:`_held_left`'s decision is in the hold's ``decisions``, or None."""
    if kept is None:
        return None
    decisions = kept.get("decisions") or ()
    main = kept.get("file")
    at = next(
        (
            i
            for i in range(len(decisions) - 1, -1, -1)
            if (decisions[i].get("file") or main) == change.path
        ),
        None,
    )
    seen = kept.get("seen") if change.path == main else (kept.get("files") or {}).get(change.path)
    if at is not None and seen == change.new_blob and new.status == decisions[at]["status"]:
        return at
    # the file left holds what another of its plan files held, set while held (round 88: a
    # twin PLAN.yaml committed ``approved``, moved over PLAN.yml by ``git mv -f`` at the
    # release): that content's status was set by the commit that set it in the twin
    for i in range(len(decisions) - 1, -1, -1):
        decision = decisions[i]
        file = decision.get("file") or main
        last = kept.get("seen") if file == main else (kept.get("files") or {}).get(file)
        if (
            file != change.path
            and decision.get("blob") == change.new_blob
            and last == change.new_blob
            and new.status == decision["status"]
        ):
            return i
    return None


#: How many statuses set while a plan is held are kept for its release (round 85): past it,
#: every withdrawal stays and the non-withdrawals but the last are dropped first.
_HELD_DECISIONS = 64


def _keep_decisions(decisions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``decisions`` (commit order) bounded by :data:`_HELD_DECISIONS`: the oldest of the
    non-withdrawals before the last decision dropped first; every withdrawal (``rejected``,
    ``aborted``) and the last decision are kept, so a withdrawal set while held is never lost
    to the statuses set after it (round 85)."""
    while len(decisions) > _HELD_DECISIONS:
        drop = next(
            (
                i
                for i, d in enumerate(decisions[:-1])
                if d.get("status") not in ("rejected", "aborted")
            ),
            None,
        )
        if drop is None:
            break
        del decisions[drop]
    return decisions


def _ambiguous_note(held: list[str], twins: list[str]) -> str:
    """E_PLAN_AMBIGUOUS's note for a folder whose entries ``held`` claim its plan file's
    place, ``twins`` of them in folders one with it on some checkout (round 75)."""
    if not twins:
        return (
            f"E_PLAN_AMBIGUOUS: the folder holds both {' and '.join(held)}; neither is read "
            "or run until one is deleted"
        )
    shown = " and ".join(visible(name) for name in twins)
    return (
        f"E_PLAN_AMBIGUOUS: {shown} is this plan's file on a case-insensitive, HFS+ or NTFS "
        "checkout (its folder and this one are one folder there); neither is read or run "
        "until one folder is deleted or renamed"
    )


def is_log_name(name: str) -> bool:
    """Is ``name`` the log's, in any spelling a checkout makes it (:func:`same_name`)?"""
    return same_name(name, (LOG_NAME,))


@functools.lru_cache(maxsize=1 << 14)
def _claimed_folder(path: str) -> str | None:
    """The folder in which ``path`` (a changed entry: file, symlink or gitlink) claims the
    plan file's place, or None: the folder above its first name that is a plan file's by
    :func:`controller.plan.names.plan_file_claims` (any case, HFS+'s ignored code points, NFC
    or NFD; round 72), the entry's own name included: ``plans/x/plan.yml`` (a symlink),
    ``plans/x/PLAN.YML/notes.md`` -> ``plans/x``; split as git for Windows splits it
    (:func:`controller.plan.names.path_parts`; round 77): ``plans/fy\\PLAN.yml`` -> ``plans/fy``."""
    parts = path_parts(path)
    at = next((i for i, name in enumerate(parts) if plan_file_claims([name])), None)
    return "/".join(parts[:at]) if at else None


def _claim_entry(path: str) -> str | None:
    """The entry claiming a plan file's place that ``path`` (a changed entry) is or lies
    below, as written: ``plans/x/PLAN.yml`` itself, ``plans/YA/PLAN.yml`` of
    ``plans/YA/PLAN.yml/x.txt`` and of ``plans/YA/PLAN.yml/PLAN.yml`` (a folder so named:
    round 94), or None."""
    written = path.split("/")
    at = next(  # the first folder so named: ``plans/YH/PLAN.yml`` of ``.../PLAN.yml/PLAN.yml``
        (i for i, name in enumerate(written[:-1]) if i and plan_file_claims([name])), None
    )
    if at is not None:
        return "/".join(written[: at + 1])
    parts = path_parts(path)
    return path if parts and plan_file_claims([parts[-1]]) else None


def _joined_away(repo: GitRepo, joins: Mapping[str, _Join | None], path: str) -> bool:
    """Whether git's clean join removed ``path`` from a merge: another parent (a key of
    ``joins``, each with git's merge of it and the parent that held ``path``) lacks it, and
    git's merge of the two leaves it out with no conflict there (that parent's line deleted
    it; its deleter chose, not the merger). git's merge decides, not one merge base: in a
    criss-cross its virtual base (the bases joined) may lack what one base held, and git's
    join then keeps the entry (round 98: ``git merge-base`` named a base holding Bob's
    dropped twin claim, the virtual base lacked it, and his drop read as git's)."""
    return any(
        join is not None
        and repo.blob_sha(other, path) is None
        and path not in join[1]
        and not repo.mode_of(join[0], path)
        for other, join in joins.items()
    )


def _in_folder(plan: str, plans_dir: str) -> bool:
    """Is the plan ``plan`` (its folder) under the plans folder ``plans_dir``?"""
    return plan_id_of(f"{plan}/PLAN.yml", plans_dir) == plan


def _log_twin_folder(path: str, plans_dir: str) -> str | None:
    """The plan folder in which ``path`` (a changed entry) is, or lies below, an entry named
    as the folder's log in another spelling (:func:`controller.plan.names.is_log_twin`:
    ``plans/x/execution_log.md``, ``plans/x/EXECUTION_LOG.MD/notes.md`` -> ``plans/x``), or
    None (round 73)."""
    parts = path.split("/")
    at = next((i for i, name in enumerate(parts) if i and is_log_twin(name)), None)
    return None if at is None else plan_id_of("/".join([*parts[:at], LOG_NAME]), plans_dir)


def _unsafe_why(change: FileChange) -> str | None:
    """Why a changed path is no plan to read: a hostile name (control, line-break or invisible
    characters), or a plan file committed as a symlink or a submodule."""
    why = _unsafe_name(change.path)
    linked = change.new_blob is not None and change.mode in NOT_A_FILE
    if why is None and linked and path_name(change.path) in PLAN_FILES:
        why = f"{change.path} is {NOT_A_FILE[change.mode]}, not a plan file; it is not read"
    return why


#: A file's three stages where git's merge conflicted: (base, ours, theirs), each a blob of
#: a regular file or None (none there, or not a file).
_Stages = tuple[str | None, str | None, str | None]
#: git's merge of a merge's parents: (the tree it makes, the stages of each path it conflicted at).
_Join = tuple[str, dict[str, _Stages]]
_FILE_MODES = frozenset({"100644", "100755"})


def _merge_of(repo: GitRepo, parents: Sequence[str]) -> _Join | None:
    """(the tree git's merge of ``parents`` makes, the stages of the paths that conflicted in
    it: the base git used, a criss-cross's virtual one too, and each side's blob, as
    ``git merge`` would leave them in the index); None when git cannot merge them (an
    octopus counts only when it merges cleanly whole, as ``git merge`` takes one)."""
    if len(parents) > 2:
        made = repo.merge_tree(parents)
        return (made[0], {}) if made is not None and made[1] else None
    result = repo.run_raw(
        "merge-tree", "--write-tree", "-z", "--no-messages", "--allow-unrelated-histories",
        *parents, pins=_JOIN_PINS,
    )  # fmt: skip
    out = result.stdout.decode("utf-8", "surrogateescape").split("\0")
    if result.returncode not in (0, 1) or not out[0]:
        return None
    conflicts: dict[str, list[str | None]] = {}
    for entry in itertools.takewhile(bool, out[1:]):
        meta, _, path = entry.partition("\t")
        mode, blob, stage = meta.split(" ")
        stages = conflicts.setdefault(path, [None, None, None])
        stages[int(stage) - 1] = blob if mode in _FILE_MODES else None
    return out[0], {path: (s[0], s[1], s[2]) for path, s in conflicts.items()}


#: Conflicted paths of one merge whose hands-off settlements are asked (:meth:`Lifecycle._settle`).
SETTLE_BUDGET = 64


def _settled(repo: GitRepo, stages: _Stages, made: str) -> bool:
    """Whether ``made`` is one of git's hands-off outcomes of a file it conflicted at: its
    conflict settled for one side or for both (``-X ours``, ``-X theirs``, ``merge=union``;
    the merge commit records no option). Each line of such a file is a side's, written by
    the sides' commits, whose makers stay its writers; the merger only chose among a few
    files git makes. An add/add merges over an empty base, as git's does; a file one side
    deleted has no such outcome."""
    base, ours, theirs = stages
    if ours is None or theirs is None:
        return False
    try:
        texts = [repo.blob(sha) if sha else b"" for sha in (base, ours, theirs)]
        return repo.blob(made) in repo.file_merges(*texts)
    except BlobTooLarge:  # never read: git's merge of it is not asked either
        return False


def _removed_and_written(
    changes: Sequence[FileChange],
) -> list[tuple[list[tuple[str, str]], list[tuple[str, str]]]]:
    """A commit's plan files removed and plan files it writes (added or changed: the caller
    leaves out those whose content kept its hash), each (path, blob), when it has both (a
    possible move)."""
    gone = [(c.path, c.old_blob) for c in changes if c.new_blob is None and c.old_blob]
    made = [(c.path, c.new_blob) for c in changes if c.new_blob and c.new_blob != c.old_blob]
    gone = [row for row in gone if _is_plan_or_source(row[0])]
    made = [row for row in made if _is_plan_or_source(row[0])]
    return [(gone, made)] if gone and made else []


def _sealed(record: CommitRecord) -> bool:
    """Whether a commit carries a ``Controller-Seal:`` trailer (64 hex digits), whatever key
    made it: every controller commit since round 66 does, so a start under the controller's
    name with a seal this controller's key does not verify may be another controller's run
    (:meth:`~controller.service.core.ControllerCore.foreign_run`), while one with none is
    no controller's at all, anyone's commit, which decides nothing (round 67: a forged
    ``executing`` state must neither show as the plan's status nor stop an honest approval)."""
    return hashing.seal_shaped(record.trailers)


def _is_plan_file(path: str) -> bool:
    return path_name(path) in PLAN_FILES


def _is_plan_or_source(path: str) -> bool:
    """A plan file, or a source the controller converts into one (``PLAN.json``)."""
    return path_name(path) in PLAN_FILES or path_name(path) in SOURCE_FILES


#: Leaves (or, for texts that read as no plan, lines) one commit's move detection may compare
#: in all (both sides of each pair counted): about a hundred pairs of 10,000-action plans.
PAIR_BUDGET = 2_000_000


@dataclass
class _SidePlans:
    """The plan files the branches of one merge changed, by what they hold: the pauses
    (``execution:`` digests) of each (status, version) and the paths of each status; and
    whether the merge lacks any of a status's paths (asked once per status). Also every
    file they changed, by blob: what the merge brought rather than wrote."""

    merge: str
    pauses: dict[tuple[str | None, str | None], set[str | None]] = field(default_factory=dict)
    paths: dict[str | None, set[str]] = field(default_factory=dict)
    moved: dict[str | None, bool] = field(default_factory=dict)
    #: Every file a merged branch changed, with the blobs it holds there (brought, not made).
    files: dict[str, set[str]] = field(default_factory=dict)

    def add(self, path: str, facts: BlobFacts | None) -> None:
        if facts is None:
            return
        self.pauses.setdefault((facts.status, facts.hash), set()).add(facts.execution_digest)
        self.paths.setdefault(facts.status, set()).add(path)

    def any_moved(self, repo: GitRepo, merge: str, status: str | None) -> bool:
        """Does the merge lack a path a merged branch holds with ``status``?"""
        if status not in self.moved:
            paths = self.paths.get(status, set())
            self.moved[status] = any(repo.blob_sha(merge, path) is None for path in paths)
        return self.moved[status]


class _Texts:
    """The plan texts one commit's move detection compares, each read and parsed once, and
    the budget of leaves it may compare (round 31)."""

    def __init__(self, repo: GitRepo, commit: str | None = None) -> None:
        self.repo = repo
        self.found: dict[tuple[str, bool], Counter[Any]] = {}
        self.left = PAIR_BUDGET
        #: The plans a NEW plan pins are read as of the commit that writes it (round 62).
        self.pinned = _pin_reader(repo, commit) if commit is not None else None
        #: New plans' blobs pinning a version the commit cannot read (round 63).
        self.unread: set[str] = set()

    def _content(self, blob: str, name: str, new: bool = False) -> Counter[Any]:
        """The leaves of the plan a blob holds (a PLAN.json or other source converted), or,
        for a text that reads as no plan, its lines (each a leaf of weight 1); a new plan's
        pins read as of the commit (their input defaults are what the pinned plan gets)."""
        pinned = self._noting(blob) if new and self.pinned is not None else None
        key = (blob, pinned is not None)
        if key not in self.found:
            try:
                text = self.repo.blob(blob).decode("utf-8", "replace")
            except Exception:  # unreadable, or too large to be read: nothing alike
                text = ""
            self.found[key] = _plan_leaves(text, name, pinned)
        return self.found[key]

    def _noting(self, blob: str) -> likeness.PinReader:
        """The pin reader, noting a pin it cannot read for the new plan ``blob``."""
        reader = self.pinned
        assert reader is not None

        def read(path: str, pin: str) -> dict[str, Any] | None:
            found = reader(path, pin)
            if found is None:
                self.unread.add(blob)
            return found

        return read

    def similarity(self, old: tuple[str, str | None], new: tuple[str, str | None]) -> float | None:
        """How much the new plan is made of the old one by content, both ways
        (:func:`likeness.made_share`, 0 to 1: the share of the old it keeps or the share of
        itself that is the old's, round 57); each side is (path, blob). None once the budget
        is spent, or when the new plan pins a version the commit cannot read (round 63: its
        defaults are unknown): not compared, the safe side."""
        if old[1] is None or new[1] is None:
            return 0.0
        before, after = self._content(old[1], old[0]), self._content(new[1], new[0], new=True)
        if new[1] in self.unread:
            # Round 63's lib-later: the pinned version (her values its defaults) arrived a
            # commit later; what the pin gets is unknown here, so the pair is unjudged.
            return None
        size = before.total() + after.total()
        if self.left < size:
            return None
        self.left -= size
        return likeness.made_share(before, after)


def _pin_reader(repo: GitRepo, commit: str) -> likeness.PinReader:
    """The plan a pin names as of ``commit``, when it hashes to the pin (else None)."""

    def read(path: str, pin: str) -> dict[str, Any] | None:
        for file in PLAN_FILES:
            try:
                sha = repo.blob_sha(commit, f"{path.strip('/')}/{file}")
                if sha is None:
                    continue
                data = yamlio.read_yaml(repo.blob(sha).decode("utf-8"), file).data
            except Exception:  # unreadable, too large, no YAML: not read
                return None
            return data if isinstance(data, dict) and hashing.plan_hash(data) == pin else None
        return None

    return read


def _plan_leaves(text: str, name: str, pinned: likeness.PinReader | None = None) -> Counter[Any]:
    """A plan text's leaves, whatever its spelling or format; its lines if it reads as none."""
    suffix = PurePosixPath(name).suffix.lower()
    try:
        if suffix not in (".yml", ".yaml"):
            from controller.plan.convert import convert_text

            text = convert_text(text, PurePosixPath(name).name, verify=False).text
        doc = yamlio.read_yaml(text, "PLAN.yml").data
        if isinstance(doc, dict):
            return likeness.leaves(doc, pinned)
    except Exception:
        pass
    return Counter((("line",), line) for line in text.splitlines())


def _ends_life(record: CommitRecord, change: FileChange) -> bool:
    """Is this change of a plan's log its removal with the plan's file, in one commit (round
    63: a finished folder emptied, or moved away, for a recurring plan)? That ends the
    path's life (:func:`controller.git.ownrecord.life_of`): no change of the controller's
    record. A log rewritten in place, or removed while a plan stays at the path, still is."""
    folder = change.path.rpartition("/")[0]
    return change.new_blob is None and any(
        other.new_blob is None
        and other.old_blob is not None
        and path_name(other.path) in PLAN_FILES
        and other.path.rpartition("/")[0] == folder
        and not _renamed(record, other)
        for other in record.changes
    )


def _folder_file(folder: str, name: str) -> str:
    return name if folder == "." else f"{folder}/{name}"


def _lineage(versions: Mapping[str, Sequence[str]], start: str) -> Iterator[str]:
    """``start`` and every content it was edited from (:attr:`PlanState.versions`), each
    once."""
    seen: set[str] = set()
    todo = [start]
    while todo:
        plan_hash = todo.pop()
        if plan_hash and plan_hash not in seen:
            seen.add(plan_hash)
            yield plan_hash
            todo.extend(versions.get(plan_hash, ()))


def _renamed(record: CommitRecord, change: FileChange) -> bool:
    """Is ``change`` the removal of a plan file whose folder's other plan file name
    (PLAN.yml <-> PLAN.yaml) ``record`` adds as a plain file? A rename inside the folder,
    with or without an edit, in whichever order the commit lists the two names: a plan's
    identity is its folder, which of its two names holds it is no event of its life
    (round 70; :func:`controller.git.ownrecord.other_name`)."""
    other = other_name(change.path)
    if change.new_blob is not None or change.old_blob is None or other is None:
        return False
    return any(
        c.path == other and c.old_blob is None and c.new_blob is not None and _unsafe_why(c) is None
        for c in record.changes
    )


def _controller_made_by_name(record: CommitRecord, controller_email: str) -> bool:
    """Does ``record`` name the controller as both author and committer, as every commit a
    controller makes does? A copy a person made of one (``cherry-pick``, a rebase, ``am``)
    keeps the author and names her as committer: a person's commit (round 58), never
    another controller's run event (round 112, ``pick-restored-start-stranded``: the copies
    of an erased start read as another controller's run, and the plan waited for good)."""
    return (
        record.author.email.lower() == controller_email
        and record.committer.email.lower() == controller_email
    )


def _closed_elsewhere(record: CommitRecord, plan: str) -> str:
    """What git alone can say of a ``fail`` naming a start it cannot find: the start was
    erased by a rewrite (the branch may hold a person's copies of it, round 112), and only
    the controller's record of its commits (``audit --config``) holds it."""
    said = plan_event(record, plan)
    start = said.trailers.get(CLOSES_START, "") if said is not None else ""
    if not start:
        return ""
    return (
        f" (it closes the run started by {start[:12]}, which this history does not hold: "
        "erased by a rewrite; the controller's record of its commits holds it, "
        "`plangate audit --config`)"
    )
