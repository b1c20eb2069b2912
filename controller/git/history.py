"""What the watched branch's history says about every plan, kept up to date incrementally.

The branch's first-parent history is read once: each scan looks only at the commits since
the last processed one, which is remembered in the state directory. If that commit is no
longer an ancestor of the branch (upstream history was rewritten) the index is rebuilt from
scratch instead of trusting stale state.

For each commit the scan finds the plan files it changed and applies the lifecycle (§4,
:mod:`~controller.git.lifecycle`) to the per-plan states (:mod:`~controller.git.planstate`),
stored in sqlite (:mod:`~controller.git.indexstore`); plan versions are read ahead in bulk
(:mod:`~controller.git.prefetch`). This module keeps the scan itself and the bridge to the
approval rules (:func:`build_request`).

Deleting the index file is always safe: the next scan rebuilds it from history.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import os
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from collections.abc import Set as AbstractSet
from functools import partial
from pathlib import Path

from controller.approval import approvals
from controller.approval.approvals import Transition
from controller.approval.recorded import POLICY_PATH
from controller.errors import FirstParentSwapped
from controller.git.gitrepo import CommitRecord, GitRepo, Person
from controller.git.identities import Links, followed_back, identity_links, recorded_identity
from controller.git.indexstore import INDEX_VERSION
from controller.git.lifecycle import Lifecycle
from controller.git.planstate import (
    LOG_NAME,
    AuthorIndex,
    BlobFacts,
    EventSink,
    HistoryEvent,
    PlanState,
    changed_plan_ids,
    facts_of,
    file_key,
    folder_key,
    history_paths,
    is_text,
    plan_id_of,
)
from controller.git.prefetch import _Prefetcher
from controller.settings import ApprovalSettings, Config, IdentityAliases

__all__ = [
    "INDEX_VERSION",
    "LOG_NAME",
    "BlobFacts",
    "EventSink",
    "HistoryEvent",
    "HistoryIndex",
    "PlanState",
    "RecordedPolicies",
    "build_request",
    "changed_plan_ids",
    "config_index",
    "facts_of",
    "file_key",
    "is_text",
    "plan_id_of",
    "release_memory",
    "withdraw_rule",
]


#: Commits between two progress reports of a scan.
PROGRESS_EVERY = 500


class HistoryIndex(Lifecycle):
    """The per-plan index, in memory, persisted to sqlite after each scan."""

    #: ``progress(task, done, total)`` during long scans (set by the CLI: controller.progress)
    progress: Callable[[str, int, int | None], None] | None = None
    #: ``on_rewrite(repo, last, head)`` before a rebuild because ``last``, the tip the index
    #: had seen, is no longer on the branch (set by the controller: it holds the plans whose
    #: commits the rewrite erased, controller.service.statedir.Holds)
    on_rewrite: Callable[[GitRepo, str, str], None] | None = None
    #: Who may reject or abort follows the policy in force at each commit (round 27), as
    #: the audit reads it: ``policy_records(repo, since, head)`` lists the controller's own
    #: records of its policy in ``since..head``'s first parents, oldest first, as (commit,
    #: blob); ``rule_for(blob)`` is the withdraw rule of a recorded policy (None: today's
    #: config; a scan judges the history before the first record by that record: round
    #: 128). Unset (tests of the index alone): ``may_withdraw``.
    policy_records: Callable[[GitRepo, str | None, str], list[tuple[str, str]]] | None = None
    rule_for: Callable[[str | None], Callable[[CommitRecord, Iterable[str]], bool]] | None = None
    #: ``aliases_for(blob)``: the ``identity_aliases`` of a recorded policy (None: today's
    #: config), followed as ``rule_for`` is (round 68: who committed a lapse herself).
    aliases_for: Callable[[str | None], IdentityAliases] | None = None
    #: ``mode_for(blob)``: the ``approval.identity`` of a recorded policy, followed alike
    #: (round 116: who made a withdrawal under ``identity: committer``).
    mode_for: Callable[[str | None], str] | None = None
    #: ``folder_for(blob)``: the ``plans_dir`` a recorded policy names (None: unreadable).
    #: A cold scan reads the starts made under the other folders it names (:meth:`scan`).
    folder_for: Callable[[str], str | None] | None = None
    #: ``identity_for(blob)``: the controller identity a recorded policy names, when it is one
    #: of the controller's (its recorded identity changes: :mod:`controller.git.identities`),
    #: else today's. A scan takes the controller's commits as that identity's from its record
    #: on (round 126: a cold scan after an identity change read the old identity's run records
    #: as a person's illegal transitions).
    identity_for: Callable[[str | None], str] | None = None
    #: ``folder_index(folder)``: an index of the history under another plans folder, built
    #: as this one (in memory, no ``folder_index`` of its own): a cold scan reads the
    #: versions withdrawn there (:meth:`_withdrawn_elsewhere`, round 128).
    folder_index: Callable[[str], HistoryIndex] | None = None
    #: How many cold or long scans gave their memory back (the daemon trims after such a
    #: pass too: the rest of the pass frees more).
    compactions = 0
    #: The commit the plans' states were last brought up to (read by other threads).
    scanned_to: str | None = None

    # --- scanning ---------------------------------------------------------------------

    def scan(self, repo: GitRepo, head: str, sink: EventSink | None = None) -> int:
        """Process the commits since the last scan up to ``head``; return how many."""
        last = self.meta("last_commit")
        if last == head:
            self.scanned_to = head
            return 0
        if last and not repo.is_ancestor(last, head):  # also False when `last` is gone
            if self.on_rewrite is not None:
                self.on_rewrite(repo, last, head)
            self.reset()  # upstream history was rewritten: rebuild, never trust stale state
            self.rebuilds += 1
            last = None
        if last and not repo.keeps_read_line(last, head, (self.plans_dir, POLICY_PATH)):
            raise FirstParentSwapped(
                f"the branch's first-parent line no longer runs through {last}, the tip "
                f"the controller last read: {head} is a merge of the branch into another "
                "line, fast-forwarded (a foxtrot); nothing is decided until the line is back"
            )
        # A cold scan finds the commits from the plans folder's raw trees and applies each as
        # soon as its record and its plan versions' facts are in, while the walk goes on
        # (_cold_scan); other scans find them with `git log -- plans/` (the plan versions they
        # name read and parsed in the background meanwhile), then apply them oldest first.
        cold = last is None
        if cold:  # nearly every author key is new: all saved, none listed (perf83mem)
            self._authors_all_dirty = True
            self._seen_from_nothing()
        with _full_collections_held() if cold else contextlib.nullcontext():
            side = list(self._side)
            try:
                walked = self._cold_scan(repo, head, sink) if cold else None
                if walked is not None:
                    records, policies = walked
                    walked = None  # the records die with ``records``, before _compact reloads
                else:
                    if cold:  # git must be asked after all: what the walk applied is undone
                        self._load()
                        self._side = side
                        self._seen_from_nothing()
                    records = self._logged_records(repo, last, head, cold)
                    policies = self._policies(repo, last, head)
                    self.merged_authors(repo, last, head)
                    self.upcoming, self._ahead_at = records, 0
                    for done, record in enumerate(records, 1):
                        self._apply_next(repo, record, sink, policies, done, len(records))
            except BaseException:
                self._load()  # never half a scan in memory: the next one re-applies from `last`
                raise
            finally:
                self.upcoming, self._paired = [], {}
            # the merged branches' withdrawals left: each was applied at its merge (apply)
            # when a commit of the line came at or after it; those of the last merges here
            self.apply_side_withdrawals(sink)
            if cold:  # a version runs at most once, whichever folder it ran in (SPEC §15)
                for plan_hash, plan_id, sha in self._starts_elsewhere(repo, policies, head):
                    self.note_start(plan_hash, plan_id, sha)
                self._withdrawn_elsewhere(repo, policies, head)
            if self.rule_for is not None:
                self._follow_policy(policies.policy)
                self.set_meta("withdraw_policy", policies.policy or "")
            self.save(head)
        self.scanned_to = head
        count = len(records)
        if last is None or count >= RELEASE_AFTER:
            del records
            repo.forget_kept()
            self._compact()
        return count

    def _apply_next(
        self,
        repo: GitRepo,
        record: CommitRecord,
        sink: EventSink | None,
        policies: _Policies,
        done: int,
        total: int | None,
    ) -> None:
        """Apply the scan's ``done``-th commit (of ``total``, when known), in the withdraw
        policy in force there."""
        policies.before(record)
        self.apply(repo, record, sink)
        if self.progress is not None and (
            done % PROGRESS_EVERY == 0 or (total is not None and done == total >= PROGRESS_EVERY)
        ):
            self.progress("indexing history (commits)", done, total)

    def _policies(self, repo: GitRepo, last: str | None, head: str) -> _Policies:
        """Where the withdraw policy in force changes in ``last..head`` (the controller's
        records of its policy, ranked on the first-parent line); the rule in force at
        ``last`` is set meanwhile."""
        if self.rule_for is None or self.policy_records is None:
            return _Policies(self, [], {}, None)
        policy = None
        if last is not None:
            stored = self.meta("withdraw_policy")
            if stored is None:  # an index from before: the policy at `last` is found once
                earlier = self.policy_records(repo, None, last)
                stored = earlier[-1][1] if earlier else ""
            policy = stored or None
        found = self.policy_records(repo, last, head)  # a cold one finds the first identity
        # history before the controller's first record is judged by the config it had then,
        # which that record holds, never today's (round 128: an approver added since made a
        # rejection the controller had ignored count in `check` and a rebuilt index, and one
        # removed since dropped a rejection it had counted); none yet: today's config, which
        # its first pass records before it decides
        first = found[0][1] if policy is None and found else None
        self._follow_policy(policy or first)
        if first is not None and self.identity_for is not None:
            self.controller_email = self.identity_for(None)  # the first stretch's identity
        if not found:
            return _Policies(self, [], {}, policy)
        spec = f"{last}..{head}" if last else head
        line = repo.run("rev-list", "--first-parent", "--reverse", spec).split()
        return _Policies(self, found, {sha: i for i, sha in enumerate(line)}, policy)

    def _starts_elsewhere(
        self, repo: GitRepo, policies: _Policies, head: str
    ) -> list[tuple[str, str, str]]:
        """(frozen hash, plan, start commit) of each run the controller started under a
        plans folder its records name other than this index's, in the stretch of history
        that folder was in force (from its record to the next, the last to ``head``). The
        index reads one folder; a controller given a new folder and a new state directory at
        once lost both the record of what it started (``executed.jsonl``) and the commits
        that show it, and ran a copy of a version that had run under the old folder again
        (round 125, fix126d). A start counts when the controller made it: by its record of
        its commits, or by git alone (the identity it had there as author and committer, and a
        seal); a forged one only refuses a run (fails closed), and only in a stretch of history
        that is past once a later record names another folder."""
        from controller.git.lifecycle import START_MENTIONS, named_starts
        from controller.plan.names import spelled_under

        if self.folder_for is None or not policies.found:
            return []
        stretches: list[tuple[str, str, str, str]] = []
        for at, (sha, blob) in enumerate(policies.found):
            named_folder = self.folder_for(blob)
            folder = (named_folder or "").strip("/") or "."
            until = policies.found[at + 1][0] if at + 1 < len(policies.found) else head
            # the identity the controller had there (fix127i: it may have changed since)
            named = self.identity_for(blob) if self.identity_for else self.controller_email
            if named_folder is not None and folder != self.plans_dir and sha != until:
                stretches.append((sha, until, folder, named))
        found: list[tuple[str, str, str]] = []
        for since, until, folder, named in stretches:
            for record in repo.first_parent_log(since, until, [], mentioning=START_MENTIONS):
                # its record of its commits, else a seal (a new state directory's record
                # adopted today's identity's commits alone; a forged seal only refuses a run)
                own = self.own_commit is not None and self.own_commit(record.sha)
                for plan_hash, plan in named_starts(record, named, True if own else None):
                    if (
                        folder == "."
                        or plan.startswith(f"{folder}/")
                        or spelled_under(plan, folder)
                    ):
                        found.append((plan_hash, plan, record.sha))
        return found

    def _withdrawn_elsewhere(self, repo: GitRepo, policies: _Policies, head: str) -> None:
        """The versions withdrawn under each plans folder the controller's records name other
        than this index's, as the controller read that folder: its whole history up to the
        record that replaced it for the last time (a withdrawal binds the version wherever it
        is copied: SPEC §4). The controller keeps what it saw in its memory across the
        rebuild a ``plans_dir`` change makes; a cold scan without that memory (``check``, a
        new state directory) read only its own folder and took a copy of a version rejected
        under the old one for one nobody withdrew (round 128, ``mov:check``: ``start``
        predicted, the controller refused ``E_VERSION_WITHDRAWN``). One in-memory scan per
        other folder, only when a record names one."""
        if self.folder_for is None or self.folder_index is None or not policies.found:
            return
        ends: dict[str, str] = {}  # folder -> the record that replaced it the last time
        named = [(sha, self.folder_for(blob)) for sha, blob in policies.found]
        for at, (_sha, folder) in enumerate(named):
            if folder is None:
                continue
            folder = folder.strip("/") or "."
            later = next((sha for sha, f in named[at + 1 :] if f is not None), None)
            ends[folder] = later or head
        for folder, end in ends.items():
            if folder == self.plans_dir:
                continue
            other = self.folder_index(folder)
            try:
                other.scan(repo, end)
                for key, made in other.withdrawn.items():
                    if key not in self.withdrawn:
                        self.withdrawn[key] = self._new_withdrawn[key] = made
            finally:
                other.close()

    def record_policy(self, blob: str) -> None:
        """The controller committed this policy record itself (applied without a scan)."""
        if self.rule_for is not None:
            self._follow_policy(blob)
            self.set_meta("withdraw_policy", blob)

    def _follow_policy(self, blob: str | None) -> None:
        assert self.rule_for is not None
        self.may_withdraw = self.rule_for(blob)
        if self.aliases_for is not None:
            self.identity_aliases = self.aliases_for(blob)
        if self.mode_for is not None:
            self.identity_mode = self.mode_for(blob)
        if self.identity_for is not None:
            self.controller_email = self.identity_for(blob)

    def _cold_scan(
        self, repo: GitRepo, head: str, sink: EventSink | None
    ) -> tuple[list[CommitRecord], _Policies] | None:
        """A cold scan: the whole history's plan commits, oldest first, found from the raw
        trees of the plans folder (:meth:`~controller.git.commits.Commits.first_parent_changes`:
        a version of a 10,000-plan folder is read once and only its changed bytes decoded,
        where ``git log -- plans/`` inflates and walks two versions per commit), their plan
        versions read and parsed in the background meanwhile, and each commit applied as
        soon as its record and the facts of its versions are in, while the walk goes on (the
        apply of 50,000 commits ran after the walk, on one core while the other idled).
        Returns the records applied (each as its id alone) and the policies followed. None
        when git must be asked instead: what was applied by then is the caller's to undo.
        With a sink, nothing is applied before the walk is done (it hears each event once)."""
        from concurrent.futures import ThreadPoolExecutor

        def prepare() -> _Policies:  # git's work, while this thread starts the walk
            policies = self._policies(repo, None, head)
            self.merged_authors(repo, None, head)
            return policies

        pending: list[CommitRecord] = []
        applied = 0
        self.upcoming, self._ahead_at = pending, 0  # the pairings asked ahead (Lifecycle)

        def apply_upto(limit: int, total: int | None = None) -> None:
            nonlocal applied
            policies = prepared.result() if applied < limit else None
            while policies is not None and applied < limit:
                applied += 1
                record = pending[applied - 1]
                self._apply_next(repo, record, sink, policies, applied, total)
                # Applied: only its id is read again (the pairings asked ahead find their
                # place by it); its changes die now, not at the scan's end (perf83mem: a
                # 20,000-plan scan's records were 8 MB of its peak).
                pending[applied - 1] = _applied(record)

        with (
            ThreadPoolExecutor(1, thread_name_prefix="scan") as pool,
            _Prefetcher(self, repo) as prefetch,
        ):
            prepared = pool.submit(prepare)

            def on_records(found: list[CommitRecord]) -> None:
                pending.extend(found)
                if sink is None:
                    apply_upto(min(prefetch.ready(), len(pending)))

            walked = repo.first_parent_changes(
                None, head, self.plans_dir, prefetch.add_changes, on_records, keep=False
            )
            policies = prepared.result()
        if walked is None:
            return None
        apply_upto(len(pending))  # every plan version's facts are in now
        if self.progress is not None and len(pending) >= PROGRESS_EVERY:
            self.progress("indexing history (commits)", len(pending), len(pending))
        return pending, policies

    def _logged_records(
        self, repo: GitRepo, last: str | None, head: str, cold: bool
    ) -> list[CommitRecord]:
        """The plan commits after ``last``, oldest first, from ``git log -- plans/`` (and the
        backslash names above it: :func:`controller.git.planstate.history_paths`)."""
        segments = _segments(repo, last, head) if cold else [(last, head)]
        # the plans folder's other spellings, found in the trees as the walk finds them
        paths = history_paths(self.plans_dir, repo.folder_spellings(last, head, self.plans_dir))
        with _Prefetcher(self, repo) as prefetch:

            def collect(segment: tuple[str | None, str]) -> list[CommitRecord]:
                found = []
                for record in repo.first_parent_log(*segment, paths, newest_first=True):
                    found.append(record)
                    prefetch.add(record)
                    if self.progress is not None and len(found) % PROGRESS_EVERY == 0:
                        self.progress("reading history (commits)", len(found), None)
                return found

            if len(segments) == 1:
                parts = [collect(segments[0])]
            else:
                from concurrent.futures import ThreadPoolExecutor

                with ThreadPoolExecutor(len(segments), thread_name_prefix="scan") as pool:
                    parts = list(pool.map(collect, segments))
        return [record for part in parts for record in reversed(part)]

    def _compact(self) -> None:
        """After a cold or long scan: keep only what later scans use, give the rest back.

        No plan version's facts are kept (50,000 plans: 28 MB): the "before" side of a plan's
        next change is read and parsed again then (well under a millisecond). The plans are
        dropped and reloaded as saved, the old copies freed first: the new ones then fill
        whole arenas instead of sitting scattered among the scan's dead records (Python gives
        an arena of small objects back only once all of it is dead), and equal values are
        held once (:meth:`PlanState.share`).
        """
        from controller.git.lifecycle import forget_scan_answers
        from controller.plan.yamlio import forget_parses

        self._facts = {}
        forget_parses()  # the parses of old versions the scan kept (up to 10 MB)
        forget_scan_answers()  # and what it asked of its last 16,384 paths
        self.plans, self.authors, self.approval_ids = {}, AuthorIndex(), {}
        gc.collect()
        self._load()
        release_memory()
        self.compactions += 1


_HELD_LOCK = threading.Lock()
#: How many cold scans hold full collections off, and the thresholds from before the first.
_held: list[tuple[int, ...]] = []


@contextlib.contextmanager
def _full_collections_held() -> Iterator[None]:
    """No full collection of the cyclic garbage collector while a cold scan builds its index:
    each walks every object of the process (the imports' and the scan's growing records),
    and nine of them cost 1.2 s of CPU of a 50,000-commit cold start. The scan makes no
    cycles worth finding meanwhile; young collections still run, and the scan ends with a
    full one (:meth:`HistoryIndex._compact`)."""
    with _HELD_LOCK:
        _held.append(gc.get_threshold())
        if len(_held) == 1:
            young, middle, _ = _held[0]
            gc.set_threshold(young, middle, 2**31 - 1)
    try:
        yield
    finally:
        with _HELD_LOCK:
            saved = _held.pop()
            if not _held:
                gc.set_threshold(*saved)


_NOBODY = Person("", "")


def _applied(record: CommitRecord) -> CommitRecord:
    """What a cold scan keeps of a commit it applied: its id alone."""
    return CommitRecord(record.sha, (), _NOBODY, _NOBODY, 0, 0, "", _NO_TRAILERS, [])


#: Shared by every applied commit's stub, never written.
_NO_TRAILERS: dict[str, str] = {}

#: A scan of this many commits (or any cold one) gives its transient memory back.
RELEASE_AFTER = 1000


class _Policies:
    """The withdraw rule a scan follows (SPEC §4, round 27): :meth:`before` each commit, in
    order, switches to the last of the controller's policy records made before it on the
    first-parent line (a record in a commit that is itself applied takes effect after it);
    ``policy`` is the one in force at the scan's end."""

    def __init__(
        self,
        index: HistoryIndex,
        found: list[tuple[str, str]],
        rank: dict[str, int],
        policy: str | None,
    ) -> None:
        self.index, self.found, self.rank = index, found, rank
        self.at = 0
        self.policy = found[-1][1] if found else policy

    def before(self, record: CommitRecord) -> None:
        if self.at >= len(self.found):
            return
        where = self.rank.get(record.sha, -1)
        switched = None
        while self.at < len(self.found) and self.rank.get(self.found[self.at][0], -1) < where:
            switched = self.found[self.at][1]  # a later record of the same gap wins
            self.at += 1
        if switched is not None:
            self.index._follow_policy(switched)


def release_memory() -> None:
    """Return freed heap memory to the system (glibc ``malloc_trim``): a cold scan's
    transient buffers would otherwise stay in the daemon's RSS for its whole life (10,000
    plans: 91 -> 79 MB). A no-op where there is no glibc."""
    import contextlib
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


#: A cold scan of at least this many first-parent commits is walked in two halves at once.
SPLIT_MIN = 5000


def _segments(repo: GitRepo, last: str | None, head: str) -> list[tuple[str | None, str]]:
    """``last..head`` as ranges oldest first: two halves when long and two CPUs are there."""
    if (os.cpu_count() or 1) < 2:
        return [(last, head)]
    length = repo.first_parent_count(last, head)
    middle = repo.first_parent_at(last, head, length // 2) if length >= SPLIT_MIN else None
    if middle is None:
        return [(last, head)]
    return [(last, middle), (middle, head)]


def build_request(
    state: PlanState,
    repo: GitRepo,
    check: Callable[[bytes], tuple[tuple[str, ...], str | None]],
    *,
    require_signed: bool,
    allowed_signers: Path | None,
    verified_at: int | None = None,
    authors: Mapping[str, AbstractSet[str]] | None = None,
) -> approvals.ApprovalRequest:
    """Gather the facts of the plan's open request for :func:`approvals.verify_approval`.

    ``check`` validates the plan text at the approving commit: (problem codes, hash).
    """
    req = state.request or {}
    problems, current_hash = check(repo.blob(req["blob"]))
    facts = facts_of(repo.blob(req["blob"]))
    signature = repo.verify_commit(req["commit"], allowed_signers) if require_signed else None
    if signature is not None and signature.valid and signature.kind != "ssh":
        # A GPG signature names a user id the key carries, which its owner chose: only the
        # allowed-signers file binds a key to an approver (SPEC §5).
        signature = dataclasses.replace(
            signature,
            valid=False,
            message=f"{signature.message}: a GPG signature binds no key to an approver; "
            "sign approvals with an SSH key listed in approval.allowed_signers",
        )
    return approvals.ApprovalRequest(
        plan_id=state.plan_id,
        commit=req["commit"],
        kind=Transition(req["kind"]),
        author_email=req["author"],
        committer_email=req["committer"],
        commit_time=int(req["time"]),
        problems=problems,
        current_hash=current_hash,
        frozen_hash=facts.frozen_hash,
        changed_in_commit=bool(req.get("changed_in_commit")),
        changers=frozenset(state.changers)
        | frozenset((authors or {}).get(current_hash or "", ()))
        | frozenset((authors or {}).get(folder_key(state.plan_id), ())),
        frozen_since=state.frozen_since,
        approved_hash=state.approved_hash if req["kind"] != "approve" else None,
        signature_valid=signature.valid if signature else None,
        signer=signature.signer if signature else None,
        signature_message=signature.message if signature else "",
        signer_key=signature.key if signature else "",
        voided_by=req.get("voided_by"),
        verified_at=verified_at,
        author_time=req.get("author_time"),
        version_since=req.get("since"),
        merge=bool(req.get("merge")),
        replay_of=req.get("replay_of"),
        bound_hash=req.get("bound_hash"),
        bound_elsewhere=req.get("bound_elsewhere"),
        other_pause=bool(req.get("other_pause")),
        held=bool(req.get("held")),
    )


class RecordedPolicies:
    """Who may reject or abort at each point of history (SPEC §4): the policy the controller
    had recorded (``.plangate/policy.json``, a commit of its own) when the withdrawal was
    made, as the audit reads it; for history before any record the first record (the config the
    controller had then: round 128), today's config while there is none (round 27: a
    rejection by an approver removed before the controller's next pass was ignored, one by
    someone added later counted, and the audit disagreed). :meth:`attach` gives a history
    index the hooks its scan follows (``policy_records``, ``rule_for``)."""

    def __init__(
        self,
        config: Config,
        signers_dir: Path,
        own: Callable[[], Callable[[str], bool] | None],
    ) -> None:
        self.config = config
        #: where a recorded allowed_signers text is written for git to read
        self.signers_dir = signers_dir
        #: the controller's own-commit check (None: a commit under its name is its own)
        self.own = own
        self.repo: GitRepo | None = None
        self._approvals: dict[str, ApprovalSettings] = {}
        #: the controller's identity changes a cold scan followed, each in its stretch, and
        #: the identity it had before them (:meth:`_walk`)
        self._chain_links: Links = {}
        self._first = ""

    def attach(self, index: HistoryIndex, repo: GitRepo) -> None:
        self.repo = repo
        index.policy_records = self.records
        index.rule_for = self.rule
        index.aliases_for = self.aliases
        index.mode_for = self.identity_mode
        index.folder_for = self.plans_dir
        index.identity_for = self.identity
        index.folder_index = partial(self._folder_index, index)

    def _folder_index(self, index: HistoryIndex, folder: str) -> HistoryIndex:
        """An in-memory index of the history under ``folder``, read as ``index`` reads its
        own (the recorded policies followed; no other folder read from it)."""
        other = HistoryIndex(
            None,
            plans_dir=folder,
            controller_email=self.config.identity.email,
            may_withdraw=withdraw_rule(self.config.approval),
            clock=index.clock,
            max_plan_bytes=index.max_plan_bytes,
            own_commit=index.own_commit,
        )
        assert self.repo is not None
        RecordedPolicies(self.config, self.signers_dir, self.own).attach(other, self.repo)
        other.folder_for = other.folder_index = None
        return other

    def records(self, repo: GitRepo, since: str | None, head: str) -> list[tuple[str, str]]:
        """The controller's own records of its policy in ``since..head``'s first parents,
        oldest first, as (commit, blob): its ``plangate: record policy`` commits (author,
        committer and its record of its commits) whose file holds the policy their
        ``Policy-Hash:`` names, changed there or not (round 61: someone who committed those
        bytes first left the controller no change to make). A commit of anyone else that
        changes the file records nothing."""
        from controller.approval import recorded

        if not repo.may_mention(since, head, recorded.RECORD_SUBJECT):
            return []  # a pass's new commits, read in-process: none is a record
        spec = f"{since}..{head}" if since else head
        grep = f"--grep={recorded.RECORD_SUBJECT}"
        shas = repo.run("rev-list", "--first-parent", "--reverse", "--fixed-strings", grep, spec)
        own = self.own()
        identity = self.config.identity.email.lower()
        links: Links = {}
        if since is None:  # a cold scan reads each record under the identity in force then
            identity, links = self._walk(repo, head, own)
        found = []
        for sha in shas.split():
            # git's parse of the trailer block, as every reader of the controller's commits
            # reads it (round 95: a scan of every line of the body took a seal in an earlier
            # paragraph, after a ``---`` line or on a continuation line for the record's)
            record = repo.commit(sha)
            if sha in links and links[sha][0] == identity:
                identity = links[sha][1]  # the controller's record under its new identity
            named = recorded.recorded_hash(
                record.subject, record.trailers, record.author.email, record.committer.email,
                identity,
            )  # fmt: skip
            if named is None or (own is not None and not own(sha)):
                continue
            blob = repo.blob_sha(sha, recorded.POLICY_PATH)
            if blob is not None and self._holds(repo, blob, named):
                found.append((sha, blob))
        return found

    def _holds(self, repo: GitRepo, blob: str, named: str) -> bool:
        """Is ``blob`` a readable record of the policy ``named`` (its ``Policy-Hash``)?"""
        from controller.approval import recorded
        from controller.errors import PlangateError

        try:
            data = repo.blob(blob)
        except PlangateError:
            return False
        return recorded.hash_of(data) == named and self.approval(repo, blob) is not None

    def rule(self, blob: str | None) -> Callable[[CommitRecord, Iterable[str]], bool]:
        """The withdraw rule of a recorded policy (None, or a record no longer readable:
        today's config)."""
        policy = self.approval(self.repo, blob) if blob and self.repo is not None else None
        return withdraw_rule(policy or self.config.approval)

    def aliases(self, blob: str | None) -> IdentityAliases:
        """The ``identity_aliases`` of a recorded policy (None, or a record no longer
        readable: today's config), as :meth:`rule` reads it."""
        policy = self.approval(self.repo, blob) if blob and self.repo is not None else None
        return (policy or self.config.approval).identity_aliases

    def identity_mode(self, blob: str | None) -> str:
        """The ``approval.identity`` of a recorded policy, as :meth:`aliases` reads it."""
        policy = self.approval(self.repo, blob) if blob and self.repo is not None else None
        return (policy or self.config.approval).identity

    def plans_dir(self, blob: str) -> str | None:
        """The ``plans_dir`` a recorded policy names (None: a record no longer readable, or
        of another identity's)."""
        if self.repo is None or self.approval(self.repo, blob) is None:
            return None
        from controller.approval import recorded

        doc = recorded.parse(self.repo.blob(blob))
        folder = doc.get("plans_dir") if doc is not None else None
        return folder if isinstance(folder, str) else None

    def identity(self, blob: str | None) -> str:
        """The controller identity a recorded policy names, when it is one of the controller's
        (today's, or one of its stretches before: :meth:`_walk`); else today's."""
        from controller.approval import recorded

        today = self.config.identity.email.lower()
        if not blob:  # before the first record: the first stretch's (:meth:`_walk`)
            return self._first or today
        if self.repo is None or self.approval(self.repo, blob) is None:
            return today
        doc = recorded.parse(self.repo.blob(blob)) or {}
        email = doc.get("identity", {}).get("email")
        return email.lower() if isinstance(email, str) else today

    def _walk(
        self, repo: GitRepo, head: str, own: Callable[[str], bool] | None
    ) -> tuple[str, Links]:
        """The identity the controller had at the start of history and the identity changes
        that took it to today's, each in its stretch (a cold scan's: later scans read only
        today's identity's records, a record its old identity makes after the change being
        no longer the controller's). Today's is the config's, or before the controller's
        first pass under it, the one its last record names
        (:func:`~controller.git.identities.recorded_identity`: ``check`` with a config just
        changed reads history as the restarted controller does, round 127)."""
        today = recorded_identity(repo, head, self.config.identity.email.lower(), own)
        self._first, self._chain_links = followed_back(identity_links(repo, head, own), today)
        return self._first, self._chain_links

    def _identities(self) -> set[str]:
        """The identities whose records are the controller's: today's and, once a cold scan
        read them, those of its stretches before (:meth:`_walk`)."""
        today = self.config.identity.email.lower()
        return {today, self._first, *(new for _was, new in self._chain_links.values())} - {""}

    def approval(self, repo: GitRepo, blob: str) -> ApprovalSettings | None:
        from controller.approval import recorded
        from controller.errors import PlangateError

        if blob not in self._approvals:
            try:
                doc = recorded.parse(repo.blob(blob))
            except PlangateError:
                doc = None
            email = doc["identity"].get("email", "") if doc is not None else None
            if doc is None or not isinstance(email, str):
                return None
            if email.lower() not in self._identities():
                return None
            self.signers_dir.mkdir(parents=True, exist_ok=True)
            try:
                self._approvals[blob] = recorded.config_of(doc, self.signers_dir).approval
            except Exception:  # a document no config can be made of (pydantic's error)
                return None
        return self._approvals[blob]


def config_index(
    config: Config,
    signers_dir: Path,
    own: Callable[[], Callable[[str], bool] | None],
    repo: GitRepo,
    path: Path | None = None,
    memory: Path | None = None,
) -> HistoryIndex:
    """The history index as the controller builds it for ``config``: the whole first-parent
    history of the branch with its merged branches, plans of any size the config reads,
    the verifier's clock, the controller's commits known by ``own()`` (None: by its name),
    and who may reject or abort following the policy recorded when they did
    (:class:`RecordedPolicies`, recorded policies written below ``signers_dir``). The
    controller keeps it in its state directory (``path``, ``memory``); ``plangate check``,
    ``approve``, ``reject`` and ``abort --config`` build it in memory: one index, so a
    prediction reads the history the controller reads (round 43: check read the judged
    plans' own paths only and missed every writer, run and first freeze carried in from
    another path)."""
    index = HistoryIndex(
        path,
        plans_dir=config.plans_dir,
        controller_email=config.identity.email,
        may_withdraw=withdraw_rule(config.approval),
        clock=time.time,
        max_plan_bytes=config.limits.max_plan_bytes,
        own_commit=own(),
        memory=memory,
    )
    RecordedPolicies(config, signers_dir, own).attach(index, repo)
    return index


def withdraw_rule(policy: ApprovalSettings) -> Callable[..., bool]:
    """Who may reject or abort (SPEC §4): an allowed approver or an author of the plan, by
    the identity ``approval.identity`` names; with ``require_signed``, only in a commit that
    identity signed with a key allowed_signers gives it at ``at`` (the history index passes
    a time history fixes: :meth:`~controller.git.lifecycle.Lifecycle.signed_at`; else the
    clock now)."""

    def allowed(record: CommitRecord, authors: Iterable[str], at: float | None = None) -> bool:
        who = record.committer if policy.identity == "committer" else record.author
        when = time.time() if at is None else at
        if policy.require_signed and not approvals.signed_by(
            who.email, record.signing_key, policy, when
        ):
            return False  # with signatures required, a claimed name withdraws nothing (round 14)
        return approvals.may_withdraw(who.email, authors, policy)

    return allowed
