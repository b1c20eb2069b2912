"""The controller's state and plumbing, shared by every duty of the reconcile pass.

:class:`ControllerCore` owns the state directory and its lock, the repository (the working
tree, or in remote mode the controller's bare clone), the history index, the watched branch,
the locks and the bookkeeping of running and waiting plans. The duties build on it:
:mod:`~controller.service.committing`, :mod:`~controller.service.freezing`,
:mod:`~controller.service.deciding`, :mod:`~controller.service.starting` and
:mod:`~controller.service.outcomes`; :mod:`~controller.service.reconcile` puts them together.
"""

from __future__ import annotations

import contextlib
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from itertools import takewhile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from controller.errors import (
    ConfigInvalid,
    FirstParentSwapped,
    GitError,
    HistoryRewritten,
    PlangateError,
    PushRefused,
    StorageFailed,
    remedy_for,
)
from controller.git.gitrepo import (
    CommitRecord,
    GitRepo,
    Person,
    remote_auth,
)
from controller.git.history import HistoryIndex, RecordedPolicies, plan_id_of, withdraw_rule
from controller.git.identities import identity_links
from controller.git.ownrecord import (
    EXECUTION_EVENTS,
    Recorded,
    commit_records,
    own_record,
    unpublished_tail,
)
from controller.git.planstate import path_name
from controller.git.store import forged_object
from controller.plan.names import PLAN_FILES
from controller.service.sources import SourceFinder
from controller.service.statedir import (
    CommitSeal,
    Holds,
    OwnCommits,
    PassFailure,
    Refusals,
    StateDir,
    refuse_reachable,
)
from controller.service.unreadable import UnreadablePlans
from controller.service.untracked import UntrackedScanner
from controller.settings import Config

if TYPE_CHECKING:
    from controller.git.conversion import Conversion
    from controller.git.planstate import PlanState

MAX_PASSES = 5
#: after a push lost with the remote's tip unmoved: the waits before each look at it again
_UNMOVED_WAIT = (0.05, 0.25, 0.7)
REMOTE = "origin"
#: A plan whose commit the remote refused is tried again on a process's first pass, after a
#: config change, and every this many passes of a daemon (never on every pass: a forge's
#: push protection refuses the same bytes again).
REFUSED_RETRY_PASSES = 100
#: A plan's statuses that say its current version (frozen hash) ran (round 73).
RAN_STATUSES = frozenset({"executing", "completed", "failed", "awaiting_approval"})


#: How a held run's erased commits came back (:attr:`ControllerCore._merged_back`).
MERGED, COPIED = "merge", "copies"


@dataclass
class Job:
    """An approved plan whose start commit is on the branch (pushed, in remote mode)."""

    plan_id: str
    plan_file: Path
    plan_hash: str
    approval: dict[str, Any]
    gate_approved: int | None = None
    resume: bool = False
    #: A gate, ask or resume approval: the run goes on from one the controller paused or
    #: failed (after a loss, from its own record of it: Outcomes._record_source).
    continued: bool = False
    #: Its records' conversions (plan file, log) as the pass asked them at its start (round
    #: 80: the form of the controller's marks); None: asked when the run renders them.
    conversions: dict[str, Conversion] | None = field(default=None, compare=False)


class _Moved(Exception):
    """The branch moved under a commit: re-evaluate from the new history."""


class _Wait(Exception):
    """A human's uncommitted edits block a write to this plan."""


class _Log:
    """structlog's ``plangate`` logger, imported at its first use: a read-only command that
    logs nothing (``status``) starts without structlog (about 65 ms of imports)."""

    def __init__(self) -> None:
        self._logger: Any = None

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        if self._logger is None:
            import structlog

            if not structlog.is_configured():  # a read-only command: never onto stdout,
                from controller import logs  # where its output (--json) goes

                logs.configure()
            self._logger = structlog.get_logger("plangate")
        return getattr(self._logger, name)


def _log() -> Any:
    return _Log()


def iso(ts: int | float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class ControllerCore:
    """One controller over one plans repository; holds the state-directory lock if asked."""

    def __init__(self, config: Config, *, lock: bool = True, take_over: bool = False) -> None:
        #: (the config given, the copy of its allowed-signers file in force): pin_signers
        self._pinned: tuple[Config, Path] | None = None
        self.config = config
        #: ``run --take-over``: a new state directory may adopt another key's sealed commits.
        self.take_over = take_over
        if lock:  # the controller itself (read-only commands only look)
            refuse_reachable(config)
        self.state = StateDir(config.state_path()).ensure()
        if lock:
            self.state.acquire()
        else:  # a reader: what it computes stays in its own copies (round 60)
            self.state = self.state.read_only()
        self.identity = Person(config.identity.name, config.identity.email)
        self._executed: dict[str, dict[str, str]] | None = None
        #: Seconds an uncommitted plan file must stay untouched before the daemon adopts it
        #: (0: at once, as ``run --once`` does); adopt_due: when a young one is ripe.
        self.adopt_settle = 0.0
        self.adopt_due: float | None = None
        #: The commits this controller made (SPEC §15), recorded before each branch move.
        self.own_commits = OwnCommits(self.state.commits_file)
        #: The key that seals each of its commits: a restored copy of the state knows them.
        self.commit_seal = CommitSeal(self.state.commit_key_file)
        #: Remote mode: when the remote was last read (monotonic clock).
        self.fetched_at = 0.0
        #: Plans whose controller commits a rewrite of the branch erased (SPEC §15).
        self.holds = Holds(self.state.held_file)
        #: Plans whose controller commit the remote refused (round 40): they wait, alone.
        self.refused = Refusals(self.state.refused_file)
        #: Why the last pass stopped, while passes fail (``status`` says it, round 124);
        #: whether this process knows the record is gone (None: not looked yet).
        self.pass_failure = PassFailure(self.state.pass_failed_file)
        self._pass_failure_gone: bool | None = None
        #: Passes so far, and the refused plans this pass tries again (:meth:`_aside_due`).
        self._passes = 0
        self._retry_refused: set[str] = set()
        #: Plans set aside again during this reconcile (their retry was refused once more).
        self._refused_now: set[str] = set()
        self._refused_config: object = None
        self._lock = threading.RLock()
        #: Guards _running and _abort only: a worker starting a job must not wait for a pass.
        self._jobs_lock = threading.Lock()
        self._running: set[str] = set()
        self._abort: set[str] = set()
        self._dispatch: Callable[[Job], None] | None = None
        self._dispatched: set[str] = set()
        #: Runs that ended, waiting for their outcome commit (Outcomes._record_outcome).
        self._finished: list[Any] = []
        #: Started plans not dispatched (run --once): the pass returns them.
        self._started: list[Job] = []
        #: Events waiting to be committed together (Committing._batching), or None.
        self._batch: Any = None
        #: The commits this process made, newest last: sha -> (parent, the paths written);
        #: and which of them last wrote each path (Committing._own_record_unchanged).
        self._made: dict[str, tuple[str, frozenset[str]]] = {}
        self._last_made: dict[str, str] = {}
        #: Plans whose job the next pass looks at (None: every job, see _owned_jobs).
        self._recheck: set[str] | None = None
        self._recheck_rebuilds = 0
        #: Plans whose run file no longer hashes to the approval: the file's stat when it
        #: was refused (the plan is offered again only once the file changes).
        self._refused_files: dict[str, tuple[int, int, int] | None] = {}
        self._waiting: dict[str, str] = {}
        #: Held plans whose erased commits came back in a form the controller did not make:
        #: beside the branch's line (a merge's second parent, round 111) or as copies on it
        #: (a cherry-pick, a rebase, ``git am``; round 112): plan id -> (those commits, how);
        #: the pass closes their run
        #: (:meth:`~controller.service.starting.Starting._close_merged_back`).
        self._merged_back: dict[str, tuple[list[str], str]] = {}
        #: Commits under its name that end with a seal copied from one of its own (replays).
        self._seal_copies: dict[str, bool] = {}
        #: A first start's sealed commits reachable from the head (:meth:`_sealed_reachable`).
        self._sealed_seen: list[tuple[str, str]] | None = None
        #: Parentless commits under the controller's name on the line (:meth:`_named_history`).
        self._roots: set[str] = set()
        #: The identity each of those commits was the controller's under (its stretch).
        self._named_as: dict[str, str] = {}
        #: Frozen hashes this pass decided to start (their commit may wait for the batch):
        #: hash -> plan id. Cleared at the end of every pass, when they are in ``executed``.
        self._claims: dict[str, str] = {}
        self._repo: GitRepo | None = None
        self._nested_tip: _BranchTip | None = None  # how nested plans are read (the tip)
        self._index: HistoryIndex | None = None
        self._branch: str | None = None
        self._head = ""
        self._instance: str | None = None
        #: this process's own part of the ``Controller:`` trailer (round 91, twinrun): a
        #: random token made when the controller is, never stored, so no other process (a
        #: copy of this state directory, the same state restored, another host with the same
        #: commit key) can make a byte-identical commit (:meth:`commit_controller`)
        self._process_token = secrets.token_hex(8)
        #: commits this process adopted by their seal (:meth:`_adopt_sealed`): another
        #: holder's, never a run this state directory's record hands down (round 93)
        self.restored_seals: set[str] = set()
        self._on_branch: set[str] = set()
        #: how often this process recorded each policy (service.committing: no commit war)
        self._policy_records: dict[str, int] = {}
        self._seen_rebuilds = 0
        #: index.rebuilds when orphaned runs were last looked for (-1: never)
        self._orphans_seen = -1
        #: (plan, frozen hash) of the job rows whose journal was looked at for a tool a dead
        #: controller left running (Starting._stop_left_tools: once per process and run)
        self._left_seen: set[tuple[str, str]] = set()
        #: index.rebuilds when lost executed records were last looked for (-1: never)
        self._executed_seen = -1
        #: index.rebuilds when starts erased unseen were last looked for (-1: never)
        self._erased_seen = -1
        self._scanner = UntrackedScanner(config.repo_path(), config.plans_dir)
        self._sources = SourceFinder(config.plans_dir, canon=self._held_id)
        self.last_error: str | None = None
        self._notifier: Any = None
        self._retired_notifiers: list[Any] = []  # a reload's old URLs, drained at exit
        #: Why the last status() could not read history (it then shows the index as it was).
        self.status_error: PlangateError | None = None
        self.log = _log()
        #: plans whose file cannot carry a status (:mod:`controller.service.unreadable`)
        self.unreadable = UnreadablePlans(config, self.log)
        if lock:  # the controller decides by one reading of the file from the start
            with contextlib.suppress(ConfigInvalid):  # said by the first pass: it stops
                self.pin_signers()

    # --- the config in force ------------------------------------------------------------

    @property
    def config(self) -> Config:
        """The config in force: the one given (start, SIGHUP), its allowed-signers file as
        the controller last read it (:meth:`pin_signers`)."""
        return self._config

    @config.setter
    def config(self, given: Config) -> None:
        self._given = self._config = given  # its signers file is read by the next pass

    def pin_signers(self) -> None:
        """Read the allowed-signers file once for a pass: the config in force names a copy
        of its bytes in the state directory (:func:`~controller.settings.signersfile.
        pin_signers`), so the policy the pass records and names in its starts, and every
        signature it checks, read one text (round 125: ``git verify-commit`` read the file
        afresh while the record kept the text of the config's first pass). The config in
        force stays the same object while the text does (its policy is not computed
        again). Unreadable: ``E_CONFIG_INVALID``, and the pass decides nothing."""
        from controller.settings.signersfile import read_signers, signers_copy, with_signers

        given = self._given
        path = given.approval.allowed_signers
        if path is None:
            self._config = given
            return
        copy = signers_copy(read_signers(path), self.state.policies_dir)
        was = self._pinned if self._config is not given else None  # None: not pinned yet
        if was is not None and was[0] is given:
            if was[1] == copy:
                return
            self.log.info("signers_changed", file=str(path), copy=copy.name)
        self._pinned, self._config = (given, copy), with_signers(given, copy)

    # --- plumbing -----------------------------------------------------------------------

    def _held_id(self, folder: str) -> str:
        """A plan folder's path as the index's plan holds it (else ``folder``): the source
        finder and the untracked scan keep every plan folder's path, each an equal string of
        its own before (perf85mem: 2 MB of 20,000 plans after the pass)."""
        state = self.index.plans.get(folder)
        return state.plan_id if state is not None else folder

    @property
    def repo(self) -> GitRepo:
        if self._repo is None:
            self._repo = self._open_repo()
            self._repo.timeout = self.config.execution.git_timeout
            self._repo.read_signatures = self.config.approval.allowed_signers is not None
            self._read_nested_from_tip(self._repo)
            if self.state.locked:  # the controller: its own index.lock, known after a crash
                self._repo.index_lock_note = self.state.index_lock_note
                if self._repo.recover_index():
                    self.log.warning("index_lock.released", reason="left by a crashed controller")
                if self.config.remote is None:  # the watched repo's refs (a clone's: below)
                    self._repo.ref_lock_note = self.state.ref_lock_note
                    locks = self._repo.recover_ref_locks()
                    if locks:
                        self.log.warning(
                            "ref_lock.released", locks=locks, reason="left by a killed controller"
                        )
                self.finish_shared_writes()
                removed = self._repo.remove_stray_temps(self.config.plans_dir)
                if removed:
                    self.log.warning("temp_files.removed", count=removed, reason="a killed write")
        return self._repo

    def finish_shared_writes(self) -> None:
        """Local mode: the working-tree and index writes a ``plangate mcp`` submit or a
        ``plangate approve`` killed after its commit left undone, finished, and the
        ``.git/index.lock`` it held removed (:func:`controller.git.sharedwrite.recover`; round
        83). Nothing while one is still writing."""
        from controller.git import sharedwrite

        if self.config.remote is not None or self._repo is None:
            return
        if not (self._repo.git_dir / sharedwrite.NOTE).exists():
            return
        try:
            released = sharedwrite.recover(GitRepo(self.config.repo_path()))
        except (OSError, PlangateError) as exc:
            self.log.error("worktree_not_written", error=str(exc))
            return
        if released:
            self.log.warning("index_lock.released", reason="left by a killed plangate writer")

    def _open_repo(self) -> GitRepo:
        if self.config.remote is None:
            # the controller reads history only from objects named by their content (round
            # 53): its own store, filled by fetching from the repository
            store = self.state.store_dir if self.state.locked else None
            return GitRepo(self.config.repo_path(), store=store)
        clone = self.state.clone_dir
        # the URL's userinfo reaches git through its environment, never a command line
        # (round 128): git is given the URL without it
        url, auth = remote_auth(self.config.remote.url)
        if clone.exists():  # the controller's own clone: never read while shallow (round 79)
            repo = GitRepo(clone, fetches=True, auth=auth)
            try:
                repo.check_complete()
            except GitError:
                repo.close()
                raise
            if self.state.locked:  # its own clone: a lock left there is a killed pass's
                removed = repo.clear_own_locks()
                if removed:
                    self.log.warning("clone_lock.released", locks=removed, clone=str(clone))
                repo.forget_remote_userinfo(REMOTE)  # a clone made before round 128
            return repo
        repo = GitRepo.clone_bare(url, clone, self.config.remote.branch, auth)
        repo.run("remote", "set-url", REMOTE, url)
        return repo

    def _read_nested_from_tip(self, repo: GitRepo) -> None:
        """The controller reads nested plans from its branch tip's tree, never from a working
        tree: a remote-mode clone has none, and in local mode the working tree is the agent's
        to write (round 109: an uncommitted child hashing to the pin started its parent, an
        uncommitted edit refused her approval)."""
        from controller.plan import nested

        self._nested_tip = _BranchTip(repo, lambda: self.branch)
        nested.read_tree_of(self.config.repo_path(), self._nested_tip)

    @property
    def executed(self) -> dict[str, dict[str, str]]:
        """Every frozen hash this controller started (read once from the state directory)."""
        if self._executed is None:
            self._executed = self.state.executed()
        return self._executed

    @property
    def index(self) -> HistoryIndex:
        if self._index is None:
            self._require_commit_key()
            self._index = HistoryIndex(
                self.state.index_file,
                plans_dir=self.config.plans_dir,
                controller_email=self.config.identity.email,
                may_withdraw=withdraw_rule(self.config.approval),
                clock=time.time,
                max_plan_bytes=self.config.limits.max_plan_bytes,
                own_commit=self._own_commit_check(),
                on_trust=self.own_commits.on_trust if self._own_commit_check() else None,
                memory=self.state.memory_file,
            )
            # the writers it keeps include signing keys only where signatures are read: a
            # change of that setting rebuilds it (authors and first freezes are kept)
            reads = "1" if self.repo.read_signatures else "0"
            if self._index.meta("signatures") not in (None, reads):
                self._index.reset()
            self._index.set_meta("signatures", reads)
            # a plans folder's whole history is read, as `check` and the audit read it: a
            # plans_dir change rebuilds the index (round 125: the rows of the old folder
            # stayed, "waiting for an approval" the controller no longer read, and the new
            # folder's commits before the restart were never read)
            if self._index.meta("plans_dir") != self.config.plans_dir and _other_folder(
                self._index, self.config.plans_dir
            ):
                self._index.reset()
            self._index.set_meta("plans_dir", self.config.plans_dir)
            self._index.on_problem = self._plan_problem
            # a reader (`status`) that scans first records the holds as the controller would:
            # the rebuilt index no longer shows the rewrite to whoever scans next
            self._index.on_rewrite = self._history_rewritten
            # who may reject or abort follows the policy recorded when they did (round 27)
            policies = RecordedPolicies(
                self.config, self.state.policies_dir, self._own_commit_check
            )
            policies.attach(self._index, self.repo)
            try:
                self._adopt_history()
            except BaseException:
                # refused (round 70/72): the next pass (the daemon's) asks again, never
                # reading the branch with a record it did not make
                index, self._index = self._index, None
                index.close()
                raise
        return self._index

    def _own_commit_check(self) -> Callable[[str], bool] | None:
        """How the history index tells the controller's commits from commits under its name:
        the record in the state directory (:class:`OwnCommits`). The controller adopts the
        branch's history on its first run with this state directory; a read-only command
        before any controller ran trusts the name."""
        own = self.own_commits
        if not own.known and not self.state.locked:
            return None
        return own.__contains__

    def _adopt_history(self) -> None:
        """First run with this state directory: what it takes as its own, before any scan.
        A ``commit.key`` that verifies commits on the branch (the key put back alone) makes
        the record: the commits it verifies, as a restored record knows them (round 71: the
        agent's seal-shaped forgeries beside them were adopted too). Otherwise the commits
        under the controller's identity so far (trust on first use, logged; refused first
        when another key sealed some, until ``--take-over``). Later runs: the sealed ones
        its record lacks (:meth:`_adopt_sealed`)."""
        if not self.state.locked:
            return
        if self.own_commits.known:
            self._adopt_sealed()
            return
        try:
            shas = self._named_history()
        except GitError:
            shas = []  # no commits yet: nothing to adopt
        self._sealed_seen = None
        self._refuse_seals_off_the_line(shas)
        keyed = self._keyed_history(shas)
        taken: list[tuple[str, str, str]] = []
        if keyed is None:
            self._refuse_sealed_by_another(shas)
            taken = self._refuse_unattributed_records(shas)
        elsewhere = self._starts_on_other_branches()  # read first: a failure asks again
        # never a parentless commit (round 73): the controller commits only on top of its
        # branch, so a root commit under its name is someone's squash of the line
        adopted = [sha for sha in (shas if keyed is None else keyed) if sha not in self._roots]
        self.own_commits.adopt(adopted, on_trust=keyed is None)
        # the key from the record's first day: a record is never without its key (round 67)
        self.commit_seal.key(create=True)
        if keyed is not None:
            self._started_by(keyed)  # as a restored record's sealed commits (_adopt_sealed)
        self._learn_started(elsewhere)
        if taken:  # --take-over of a line whose runs no commit of its own shows (round 73)
            self._runs_recorded_in_files(taken)
        log = self.log.warning if shas else self.log.info  # a new repository: nothing to trust
        log(
            "own_commits_adopted",
            count=len(adopted),
            by="its commit.key" if keyed is not None else "trust on first use",
            not_adopted=len(shas) - len(adopted),
            file=str(self.own_commits.path),
        )

    def _starts_on_other_branches(self) -> list[tuple[str, str, str]]:
        """(frozen hash, plan, start commit) of each run started under the controller's name
        on the repository's other branches (local mode: its ``refs/heads/*``; remote mode:
        the remote's heads, fetched aside, :meth:`~controller.git.refs.Refs.heads_aside`),
        in commits the watched branch does not hold, oldest first. A new state directory
        lost ``executed.jsonl`` and reads one branch: a rebuilt host set to watch another
        branch (``remote.branch``, a new remote's mirror) ran again a version that had run
        on the old one (round 126, atk126d ``takeover-on-new-branch-reruns``). A start
        counts by git alone (:func:`~controller.git.lifecycle.named_starts`: the name as
        author and committer, and a seal), as after a restore; a forged one only refuses
        that version (fails closed). One fetch and one ``git log --grep`` on a first start,
        never per pass."""
        from controller.git.lifecycle import START_MENTIONS, named_starts

        try:
            head = self.head()
        except GitError:
            return []  # no branch to read yet: nothing ran anywhere this controller reads
        remote = REMOTE if self.config.remote is not None else None
        email = self.config.identity.email
        try:
            tips = self.repo.heads_aside(remote)
            found = [
                (plan_hash, plan, record.sha)
                for record in self.repo.log_mentioning(tips, head, START_MENTIONS)
                for plan_hash, plan in named_starts(record, email, None)
            ]
        finally:
            with contextlib.suppress(GitError):  # a ref left there is read again, harmless
                self.repo.drop_heads_aside(remote)
        return found[::-1]

    def _learn_started(self, found: list[tuple[str, str, str]]) -> None:
        """Record as executed each frozen hash :meth:`_starts_on_other_branches` found."""
        learned = [
            (plan_hash, plan, sha)
            for plan_hash, plan, sha in found
            if self._note_executed(plan_hash, plan, sha)
        ]
        if learned:
            self.log.warning(
                "starts_elsewhere_learned",
                runs=len(learned),
                plans=[f"{plan} (start {sha[:12]})" for _, plan, sha in learned],
                reason="versions this controller's name started on other branches of the "
                "repository count as executed: none of them runs again here (SPEC §15)",
            )

    def _note_executed(self, plan_hash: str, plan_id: str, sha: str) -> bool:
        """Record ``plan_hash`` as executed (started as ``plan_id`` in ``sha``) unless it is."""
        if not plan_hash or plan_hash == "none" or plan_hash in self.executed:
            return False
        self.executed[plan_hash] = {"plan": plan_id, "start": sha}
        self.state.record_executed(plan_hash, plan_id, sha)
        return True

    def _keyed_history(self, shas: list[str]) -> list[str] | None:
        """Of ``shas`` (newest first), what this state's key made: the commits it verifies,
        and the unsealed ones older than the oldest of them (history from before plangate
        sealed its commits, which the lost record held too). A commit under the controller's
        name whose seal the key rejects, or unsealed after its first seal, is anyone's.
        None when there is no key or it verifies none (trust on first use decides)."""
        if not shas or self.commit_seal.key() is None:
            return None
        sealed = set(self._sealed_candidates(shas))
        mine = [sha for sha in shas if sha in sealed and self._sealed_by_us(sha)]
        if not mine:
            return None
        before = shas[shas.index(mine[-1]) + 1 :]
        return mine + [sha for sha in before if sha not in sealed and sha not in self._roots]

    def _refuse_sealed_by_another(self, shas: list[str]) -> None:
        """E_STORAGE on the first start of a state directory when the branch holds sealed
        commits under the controller's name that its key (if any) did not make (round 70): an
        empty state directory cannot tell its own lost state from a second controller
        started by mistake, which would adopt the first's runs and fail them in doubt. The
        operator says which: restore that state, or ``run --take-over`` (logged)."""
        candidates = self._sealed_candidates(shas)
        newest = next((sha for sha in candidates if self._was_sealed(sha)), None)
        if newest is None:
            return  # history from before sealing
        if self.take_over:
            self.log.warning("own_commits_taken_over", count=len(shas), newest=newest[:12])
            return
        raise StorageFailed(
            f"the state directory {self.state.path} is new, and the branch holds commits under "
            f"the controller's name sealed by another state directory's key (the newest: "
            f"{newest[:12]}): either its state was lost, or another controller runs on this "
            "branch; nothing is adopted",
            remedy="restore the state directory that made them (with its commit.key; "
            "docs/operations.md, Restore); or, only when that state is lost for good and no "
            "other controller runs on this branch, take them over once: plangate run "
            "--take-over",
        )

    def _refuse_unattributed_records(self, shas: list[str]) -> list[tuple[str, str, str]]:
        """A first start whose key (if any) verifies no commit on the branch, and no seal on
        the line (round 70's refusal did not fire, or was taken over), when the head's plan
        files carry the controller's records that no commit it can take for its own made
        (round 73: the agent's squash of the whole history into one parentless commit, its
        files still ``completed`` and ``awaiting_approval``, was taken by trust on first use;
        an approval of a completed plan ran it again, a gate approval ran action 1 again).

        - ``commit.key`` alone (it sealed this controller's commits, and verifies none here):
          the branch holding commits under the controller's name or plan files with
          ``frozen:`` / ``execution:`` records means its line is gone: ``E_HISTORY_REWRITTEN``;
        - a new state directory: files recording runs (an ``execution:`` block beside a plan
          status only a version that ran has: :meth:`_runs_in_files`) whose plan no commit
          under the controller's name with a parent changed (history from before sealing, an
          upgrade, made each run's records in such commits) are a squash of a sealed line:
          ``E_STORAGE`` (round 74: one unsealed empty commit under its name on the squash
          passed for an upgrade). (A plan the agent commits with a forged block and
          ``pending_approval``, round 61, is no run: it starts.)

        What a file records is what it PARSES to, at every plan file name (round 74: keys
        quoted, ``execution :``, an indented document, ``PLAN.yaml`` passed a line pattern);
        :meth:`_plan_files_naming` only narrows which files are read. ``--take-over`` accepts
        either knowingly: then the runs the files record are returned as (frozen hash, plan
        id, head) for :meth:`_runs_recorded_in_files`; [] when the start goes on as before."""
        if self._sealed_candidates(shas):
            return []  # round 70's refusal decided (here: taken over)
        keyed_alone = self.commit_seal.key() is not None
        listed = self._plan_files_naming(("frozen",) if keyed_alone else ())
        if listed and not keyed_alone:  # the plans whose records an upgrade's commits made
            made = self._plans_changed_by([sha for sha in shas if sha not in self._roots])
            listed = [p for p in listed if plan_id_of(p, self.config.plans_dir) not in made]
        if not listed and not (keyed_alone and shas):
            return []  # a new repository (or no branch to read yet: the pass says why)
        head = self.head()
        records = self._recording_files(listed, head) if keyed_alone and not shas else []
        asked = listed and (self.take_over or not keyed_alone)  # the key: refused at once
        runs = self._runs_in_files(listed, head) if asked else []
        if keyed_alone and (shas or records):
            self.log.error("own_line_gone", head=head[:12], named=len(shas), files=len(records))
            what = (
                f"{len(shas)} commit(s) under the controller's name (none sealed by it)"
                if shas
                else f"{len(records)} plan file(s) with the controller's frozen:/execution: "
                "records (no commit of the controller's made them)"
            )
            error: PlangateError = HistoryRewritten(
                f"the state directory {self.state.path} holds only its commit.key, which "
                f"verifies no commit on the branch ({head[:12]}), and the branch holds {what}: "
                "this controller's line is gone from the branch (replaced: a squash of the "
                "history into new commits, a reset, a force push); nothing is adopted, decided "
                "or committed",
                remedy="put the line back: move the branch to its old tip (the reflog, a "
                "clone, the forge's record of the force push) and start again with the key "
                "(docs/operations.md, A squashed line); or, only when that line is lost for "
                "good and no other controller runs on this branch, start over knowingly: "
                "plangate run --once --take-over (every run the plan files record then counts "
                "as executed: nothing of it runs again)",
            )
        elif runs:
            self.log.error("own_line_squashed", head=head[:12], runs=len(runs))
            error = StorageFailed(
                f"the state directory {self.state.path} is new, and the branch's plan files "
                f"record runs of the controller's ({len(runs)} plan(s) whose file at "
                f"{head[:12]} says its version ran, e.g. {runs[0][1]}) that no commit under "
                f"its name ({self.config.identity.email}) made: a squash of its history (one "
                "commit of the branch's tree), a change of the config's `identity` (the runs "
                "were committed under the old one), or another repository's files; nothing is "
                "adopted",
                remedy="put the history back (the branch's old tip, with the state directory "
                "that made it: docs/operations.md, A squashed line); or, only when it is lost "
                "for good and no other controller runs on this branch, take the branch as it "
                "is knowingly: plangate run --once --take-over (every run the plan files "
                "record then counts as executed: nothing of it runs again)",
            )
        else:
            return []  # a new repository, or nothing of the controller's in its files
        if not self.take_over:
            raise error
        self.log.warning("unattributed_records_taken_over", head=head[:12], runs=len(runs))
        return runs

    def _plan_files_naming(self, keys: tuple[str, ...]) -> list[str]:
        """The plan files (``PLAN.yml``, ``PLAN.yaml``) at the head that may hold an
        ``execution:`` block (or a top-level key of ``keys``): one ``git grep`` of the tree for
        the key's letters or a backslash. YAML spells a key otherwise only through escapes
        (``"\\x65xecution"``) or aliases of text holding it, so no file that parses to one is
        left out. A failing ``git grep`` refuses the start (``E_GIT``): unread is not empty."""
        try:
            head = self.head()
        except GitError:
            return []  # no tree yet
        patterns = [arg for key in ("execution", *keys, "\\") for arg in ("-e", key)]
        result = self.repo.run_raw(
            "grep", "-l", "-z", "-F", *patterns, head, "--", self.config.plans_dir
        )
        told = [line for line in result.stderr.decode("utf-8", "replace").splitlines() if line]
        if result.returncode == 1 and all(line.startswith("warning: ") for line in told):
            # nothing matches; a warning is no failure (git cannot open a ``.gitattributes``
            # under a folder name longer than the file system takes: round 11's long names)
            return []
        if result.returncode != 0:
            raise GitError(
                f"cannot read the plan files at {head[:12]} for the controller's records "
                f"(git grep: {result.stderr.decode('utf-8', 'replace').strip()[:300]}); a first "
                "start does not adopt a branch it could not read",
                remedy="see git's message; repair the repository (git fsck), then run again",
            )
        names = result.stdout.decode("utf-8", "surrogateescape").split("\0")
        files = (name.partition(":")[2] for name in names if name)
        return [path for path in files if path_name(path) in PLAN_FILES]

    def _plans_changed_by(self, shas: list[str]) -> set[str]:
        """The plans (ids) whose folder (plan file, log) one of ``shas`` changed against its
        first parent: the records an upgrade's controller commits made (one ``git log`` of
        those commits alone)."""
        if not shas:
            return set()
        out = self.repo.run(
            "log", "--no-walk=unsorted", "--stdin", "--format=", "--name-only", "--no-renames",
            "--diff-merges=first-parent", "--", self.config.plans_dir,
            input="\n".join(shas).encode("ascii") + b"\n",
        )  # fmt: skip
        found = (plan_id_of(path, self.config.plans_dir) for path in out.splitlines() if path)
        return {plan_id for plan_id in found if plan_id is not None}

    def _recording_files(self, paths: list[str], head: str) -> list[str]:
        """Of ``paths``, the plan files at ``head`` with a ``frozen`` or ``execution`` key."""
        return [
            path
            for path, _, data in self._parsed_plan_files(paths, head)
            if "frozen" in data or "execution" in data
        ]

    def _parsed_plan_files(
        self, paths: list[str], head: str
    ) -> Iterator[tuple[str, str, dict[str, Any]]]:
        """(path, plan id, document) of each plan file of ``paths`` at ``head`` that parses to
        a mapping (the controller's own reader; one it cannot read is skipped: no plan)."""
        from controller.plan import yamlio

        for path in paths:
            plan_id = plan_id_of(path, self.config.plans_dir)
            try:
                raw = self.repo.read_file(head, path)
                data = yamlio.read_yaml((raw or b"").decode("utf-8"), path).data
            except (PlangateError, UnicodeDecodeError, ValueError):
                continue
            if plan_id is not None and isinstance(data, dict):
                yield path, plan_id, data

    def _runs_in_files(self, paths: list[str], head: str) -> list[tuple[str, str, str]]:
        """Of the plan files ``paths`` at ``head``, those whose version says it ran: an
        ``execution:`` block beside a plan status only a run gives (``executing``,
        ``completed``, ``failed``, ``awaiting_approval``; ``aborted`` once started), which a
        freeze never keeps for a new version (its status is ``pending_approval``). As
        (frozen hash, plan id, head)."""
        found = []
        for _, plan_id, data in self._parsed_plan_files(paths, head):
            plan, frozen, execution = (data.get(k) for k in ("plan", "frozen", "execution"))
            status = plan.get("status") if isinstance(plan, dict) else None
            plan_hash = frozen.get("hash") if isinstance(frozen, dict) else None
            if not isinstance(execution, dict) or not isinstance(plan_hash, str):
                continue
            if status in RAN_STATUSES or (status == "aborted" and execution.get("started_at")):
                found.append((plan_hash, plan_id, head))
        return found

    def _runs_recorded_in_files(self, runs: list[tuple[str, str, str]]) -> None:
        """After ``--take-over`` of a line whose runs no commit of the controller's shows:
        every frozen hash whose file says it ran counts as executed, as a take-over's adopted
        starts do (SPEC §15): an approval of it is refused ``E_ALREADY_EXECUTED``, never run."""
        for plan_hash, plan_id, head in runs:
            if plan_hash in self.executed:
                continue
            self.executed[plan_hash] = {"plan": plan_id, "start": head}
            self.state.record_executed(plan_hash, plan_id, head)
            self.log.warning("run_recorded_in_file", plan=plan_id, hash=plan_hash)

    def _sealed_candidates(self, shas: list[str]) -> list[str]:
        """Of ``shas`` (newest first), those whose message has a seal line."""
        if not shas:
            return []
        sealed = {sha for sha, _ in self._sealed_reachable()}
        return [sha for sha in shas if sha in sealed]

    def _sealed_reachable(self) -> list[tuple[str, str]]:
        """Every commit reachable from the head whose message has a seal line, wherever it
        stands (not only on the first-parent line), newest first, as (sha, author email):
        one ``git log`` on a first start, kept for the rest of it."""
        if self._sealed_seen is None:
            out = self.repo.run(
                "log", f"--grep=^{CommitSeal.TRAILER}: ", "--format=%H%x00%ae", self.head()
            )
            self._sealed_seen = [
                (sha, who.lower())
                for sha, _, who in (line.partition("\0") for line in out.splitlines())
            ]
        return self._sealed_seen

    def _refuse_seals_off_the_line(self, shas: list[str]) -> None:
        """E_HISTORY_REWRITTEN on the first start of a state directory (new, or holding only
        its ``commit.key``) when a sealed commit under the controller's name is reachable from
        the head but not on its first-parent line (round 72). The controller only ever commits
        on its branch's first-parent line: such a commit means the line was rewritten, most
        often a "foxtrot" (the branch merged INTO another line, fast-forwarded to the merge),
        which puts every seal behind a second parent. A first start reads only the first-parent
        line: it would find no seal (no round-70 refusal), adopt what the rewriter made under
        the controller's name on the new line, and judge the controller's completions and
        pauses as the merger's (completed plans rerun on an approval, a paused gate failed).
        The live controller holds the same branch (:class:`FirstParentSwapped`); a first start
        refuses it, with or without ``--take-over`` (which decides who made the sealed
        commits, never whose line the branch is), until the line is put back."""
        try:  # (run whatever the line holds: a foxtrot may leave none of its commits on it)
            reachable = self._sealed_reachable()
        except GitError:
            return
        email = self.config.identity.email.lower()
        on_line = set(shas)
        off = (sha for sha, who in reachable if who == email and sha not in on_line)
        newest = next((sha for sha in off if self._was_sealed(sha)), None)
        if newest is None:
            return
        head = self.head()
        self.log.error("seals_off_the_line", newest=newest[:12], head=head[:12])
        raise FirstParentSwapped(
            f"the state directory {self.state.path} has no record of its commits yet, and the "
            f"branch's first-parent line no longer holds the controller's sealed commits: "
            f"{newest[:12]} (the newest of them) is reachable from {head[:12]} only behind a "
            "second parent. The controller commits only on its branch's first-parent line, so "
            "the line was rewritten (a merge of the branch into another line, fast-forwarded: "
            "a foxtrot); nothing is adopted, decided or committed, with or without --take-over",
            remedy="put the branch's line back: move it to the tip whose first-parent line "
            f"holds {newest[:12]} (the merge's second parent; the reflog has it) and merge "
            "the other line again with a merge commit (docs/operations.md, A new state "
            "directory); then start again: with the state directory that made those commits "
            "restored (docs/operations.md, Restore), or with its commit.key alone, or, only "
            "when that state is lost for good and no other controller runs on this branch, "
            "knowingly: plangate run --take-over",
        )

    def _require_commit_key(self) -> None:
        """E_STORAGE when ``commit.key`` is missing beside a record of commits this controller
        sealed (round 67): a state directory restored without its key. A new key would read
        every commit it made after the copy as a stranger's (a finished gated action ran
        again on an approval already in the history), so nothing starts or reads it until
        the key is back, or replaced knowingly. A brand-new state directory, or a record
        made before plangate sealed its commits (an upgrade), makes its key as before."""
        if self.commit_seal.key() is not None:
            return
        recorded = self.own_commits.ordered()
        if recorded and not self._was_sealed(recorded[-1]):
            return  # the record predates the seal: the upgrade makes the key
        if not recorded and not self.state.holds_runs():
            return  # nothing made here yet
        what = f"{len(recorded)} commit(s) in {self.own_commits.path}" if recorded else "runs"
        raise StorageFailed(
            f"{self.commit_seal.path} is missing beside a record of this controller's work "
            f"({what}): the state directory was restored without it, and the commits it "
            "sealed after the copy would read as a stranger's",
            remedy="restore commit.key from the same backup (mode 0600); to start over "
            "knowingly with a new key instead, write one (docs/operations.md, Restore): the "
            "runs its commits show after the copy then wait as another controller's",
        )

    def _was_sealed(self, sha: str) -> bool:
        """Does the recorded commit ``sha`` carry a seal (so a key made it)? Unreadable: yes
        (fails closed: the start is refused, never a key made over a record)."""
        try:
            message = self.repo.run("cat-file", "commit", sha).partition("\n\n")[2]
        except GitError:
            return True
        last = message.rstrip("\n").rpartition("\n")[2]
        return last.startswith(f"{CommitSeal.TRAILER}: ")

    def _adopt_sealed(self) -> None:
        """A record older than the branch (the state directory restored from a backup, or
        a copy): the first-parent commits under the controller's identity newer than the
        newest one it recorded that carry a seal made with this state's key
        (:class:`CommitSeal`) are this controller's, made after the copy. They are recorded
        as its own, and each run they started as executed, before any scan judges them
        (round 66: taken for a stranger's, its completed plans read as waiting, and an
        approval a status asked for ran a gated action again). A commit under its name
        without that seal stays anyone's.

        Finding any also says the state directory is older than the branch, its journals
        with it (round 72: a point-in-time snapshot taken mid-burst, its journal of a run
        begun after the copy saying no action began, ran that action a second time): noted
        durably before the commits are recorded, and every run still open on the branch has
        its journal set aside before a pass decides or runs anything
        (:meth:`~controller.service.starting.Starting._distrust_older_journals`)."""
        if self.commit_seal.key() is None:
            return  # it never sealed a commit: nothing on the branch can be its own unknown
        try:  # newest first, down to the newest it recorded: what it made after the copy
            missing = list(takewhile(self._not_recorded, self._named_history()))
        except GitError:
            return
        sealed = self._not_replays([sha for sha in missing if self._sealed_by_us(sha)])
        if not sealed:
            return
        # before the record: once recorded, nothing on the branch would show it again
        self.state.mark_older_than_branch(
            {"at": iso(time.time()), "commits": [sha[:12] for sha in sealed[::-1]]}
        )
        self.own_commits.record_many(sealed[::-1])  # oldest first, as the record goes on
        self.restored_seals.update(sealed)  # no run event of them is inherited (round 93)
        self._rescan_adopted(sealed[-1])
        started = self._started_by(sealed)
        self.log.warning(
            "own_commits_restored",
            count=len(sealed),
            commits=[sha[:12] for sha in sealed[::-1]],
            runs=len(started),
            reason="the state directory is older than the branch (restored from a backup?): "
            "commits this controller sealed after its record ends are its own again; every "
            "run they started counts as executed",
        )

    def _not_replays(self, sealed: list[str]) -> list[str]:
        """Of ``sealed`` (commits its key verifies that its record lacks), those that copy no
        commit it recorded. A copy with the tree, first parent and message of one of its own
        carries that commit's very seal, yet the controller made it under no other id: it
        records every commit before the branch moves to it (round 122, atk122d
        ``replayed-start-hold-unrestorable``: its erased start cherry-picked back under its
        name was adopted, and the hold then named both siblings, which no tip holds). Such
        an original sits in the record after the newest commit of it still on the branch
        (its first parent is the copy's); a commit made after a copy of the state directory
        copies none of them."""
        if not sealed:
            return sealed
        repo, head = self.repo, self.head()
        erased = unpublished_tail(self.own_commits.ordered(), lambda s: repo.is_ancestor(s, head))
        seals = {
            r.trailers.get(CommitSeal.TRAILER) for r in commit_records(self._git_or_none, erased)
        }
        copies = [
            sha for sha in sealed if repo.commit(sha).trailers.get(CommitSeal.TRAILER) in seals
        ]
        if copies:
            self.log.warning(
                "own_commit_copies",
                commits=[sha[:12] for sha in copies],
                reason="copies of commits this controller made (same tree, parent and message, "
                "another id): anyone's commits, never its own",
            )
        return [sha for sha in sealed if sha not in copies]

    def _rescan_adopted(self, oldest: str) -> None:
        """The history index read the commits just adopted by their seal (from ``oldest``
        on) as commits under the controller's name it did not make (a copy of the state
        directory whose clone had fetched them: another holder's start, claim or outcome,
        round 93): it reads the branch again, now knowing them for its own (its job rows
        kept). A restored index that never saw them keeps what it read."""
        index = self._index
        if index is None:
            return
        last = index.meta("last_commit")
        try:
            if last and self.repo.is_ancestor(oldest, last):
                index.reset()
                index.rebuilds += 1
                self.log.warning("index_rescanned", since=oldest[:12], tip=last[:12])
        except GitError:
            return

    def _not_recorded(self, sha: str) -> bool:
        return sha not in self.own_commits

    def _sealed_by_us(self, sha: str) -> bool:
        """Does commit ``sha`` carry a seal made with this state's key over its tree, its
        first parent and its message, with the controller as its committer? (git's own
        rewrites keep tree, parent and message and write whoever ran them as committer:
        the agent's ``git commit --amend --no-edit`` of the controller's start, round 58,
        is no commit of the controller's, sealed or not.)"""
        tree, parent, committer, message = _sealed_parts(self.repo.run("cat-file", "commit", sha))
        email = committer.rpartition("<")[2].partition(">")[0].strip().lower()
        if email != self._named_as.get(sha, self.config.identity.email.lower()):
            return False
        return self.commit_seal.verify(tree, parent, message)

    def _started_by(self, shas: list[str]) -> list[str]:
        """Record as executed the frozen hash of every plan whose ``start`` is in ``shas``
        (SPEC §15: a restored ``executed.jsonl`` lacks the runs started after the copy)."""
        from controller.git.records import plan_event, record_events

        started = []
        for sha in shas:
            record = self.repo.commit(sha)
            for plan_id, event in record_events(record).items():
                found = plan_event(record, plan_id) if event == "start" else None
                plan_hash = found.trailers.get("Plan-Hash", "") if found else ""
                if self._note_executed(plan_hash, plan_id, sha):
                    started.append(plan_hash)
        return started

    def _named_history(self) -> list[str]:
        """First-parent commits of the watched branch under the controller's identity where
        they stand (the parentless ones among them noted in :attr:`_roots`: the controller
        never makes one): today's, and before each linked change of it
        (``Previous-Identity:``, :mod:`controller.git.identities`) the one it changed from, in
        that identity's stretch, as the history index and the audit follow it (round 127: a
        new state directory after a change took the old identity's policy records for
        anyone's, and a copy of a version run under the folder they named ran again). Read
        newest first, so an identity taken back (A, B, A) is followed stretch by stretch. A
        link counts by its shape on trust on first use, as every commit under the name does;
        with the state's ``commit.key``, only one it sealed."""
        head = self.head()
        out = self.repo.run("log", "--first-parent", "--format=%H%x00%ae%x00%P", head)
        keyed = self.commit_seal.key() is not None
        links = identity_links(self.repo, head, self._link_sealed_by_us if keyed else None)
        identity = self.config.identity.email.lower()
        found, roots, named = [], set(), {}
        for line in out.splitlines():
            sha, _, rest = line.partition("\0")
            who, _, parents = rest.partition("\0")
            if who.lower() == identity:
                found.append(sha)
                named[sha] = identity
                if not parents.strip():
                    roots.add(sha)
            if sha in links and links[sha][1] == identity:
                identity = links[sha][0]  # older commits: the identity it changed from
        self._roots, self._named_as = roots, named
        return found

    def _link_sealed_by_us(self, sha: str) -> bool:
        """Is the identity link ``sha`` sealed with this state's key, by the identity it
        takes (its author) as committer?"""
        self._named_as[sha] = self.repo.run("log", "-1", "--format=%ae", sha).strip().lower()
        return self._sealed_by_us(sha)

    def _history_rewritten(self, repo: GitRepo, last: str, head: str) -> None:
        """The branch no longer holds ``last``, the tip the index had seen: it was reset,
        rebased or force-pushed. Plans whose controller commits (by record, not by name) are
        gone with it are held: the history that proved what an approval of them must follow
        (a freeze, a pause, an abort, a start) is no longer there (SPEC §15)."""
        if not self.own_commits.known:
            return  # no record of this controller's commits yet: nothing it made can be gone
        plans_dir = self.config.plans_dir
        found: dict[str, list[str]] = {}
        try:
            for record in repo.first_parent_log(head, last, [plans_dir]):
                if record.sha not in self.own_commits:
                    for withdrawn in self._withdrawals(repo, record):
                        found.setdefault(withdrawn, []).append(record.sha)
                    continue
                events = _events(record)
                for change in record.changes:
                    plan_id = plan_id_of(change.path, plans_dir)
                    if plan_id is None or events.get(plan_id) in REDECIDED:
                        continue
                    if record.sha not in found.get(plan_id, []):
                        found.setdefault(plan_id, []).append(record.sha)
        except GitError as exc:  # `last` itself is gone (pruned): nothing left to compare
            if self.state.locked:
                self.log.error("history_rewritten", last=last, head=head, reason=str(exc))
            return
        if found:
            self.holds.hold(found, head, iso(time.time()))
        if self.state.locked:  # a reader's stdout is its report (`status --json`)
            log = self.log.error if found else self.log.warning
            log("history_rewritten", last=last, head=head, held=sorted(found))

    def hold_erased_own(self, head: str, plan_id: str | None = None) -> dict[str, list[str]]:
        """Hold the plans (or only ``plan_id``) whose commits the controller recorded after
        its newest one still on the branch are gone (round 59): its record of its commits
        (``<state_dir>/commits``) outlives the history index and the journals, so a reset
        that erased its last record of a plan is seen even when the index, rebuilt from the
        branch alone, no longer knows the tip it had seen. Asked after such a loss, before
        the plan goes on from its own last record; what it held, by plan."""
        if not self.own_commits.known:
            return {}
        repo = self.repo
        tail = unpublished_tail(self.own_commits.ordered(), lambda sha: repo.is_ancestor(sha, head))
        refused = {str(entry.get("commit")) for entry in self.refused.load().values()}
        found: dict[str, list[str]] = {}
        for record in commit_records(self._git_or_none, [s for s in tail if s not in refused]):
            for erased in self._plans_of_own(record):
                if plan_id in (None, erased) and record.sha not in found.get(erased, []):
                    found.setdefault(erased, []).append(record.sha)
        if found:
            self.holds.hold(found, head, iso(time.time()))
            self.log.error("history_rewritten", head=head, held=sorted(found), by="own record")
        return found

    def _plans_of_own(self, record: CommitRecord) -> list[str]:
        """The plans a commit of the controller's recorded, as :meth:`_history_rewritten`
        reads them (a refusal or a vote is decided again: not a record to lose)."""
        events = _events(record)
        found = []
        for change in record.changes:
            plan_id = plan_id_of(change.path, self.config.plans_dir)
            if plan_id is not None and events.get(plan_id) not in REDECIDED:
                found.append(plan_id)
        return found

    def _git_or_none(self, *args: str) -> str | None:
        """git's stdout in the repository, None when it fails (:mod:`controller.git.ownrecord`)."""
        try:
            return self.repo.run(*args)
        except PlangateError:
            return None

    def _withdrawals(self, repo: GitRepo, record: CommitRecord) -> list[str]:
        """The plans an erased commit rejected or aborted: the controller saw a withdrawal
        that the rewritten branch no longer shows, and a withdrawal wins (round 7)."""
        found = []
        for change in record.changes:
            plan_id = plan_id_of(change.path, self.config.plans_dir)
            if plan_id is None or change.new_blob is None:
                continue
            try:
                facts = self.index.facts(repo, change.new_blob)
            except PlangateError:
                continue
            if facts is not None and facts.status in ("rejected", "aborted"):
                found.append(plan_id)
        return found

    def _release_holds(self) -> None:
        """Let go of held plans whose erased commits are all on the branch again, or that are
        gone from the branch (a plan added again under the name is frozen anew)."""
        if not self.holds:
            return
        done = []
        self._merged_back = {}
        for plan_id, entry in list(self.holds.load().items()):
            shas = [str(sha) for sha in entry.get("commits") or []]  # type: ignore[attr-defined]
            if plan_id not in self.index.plans:
                done.append(plan_id)
                self.log.info("hold_released", plan=plan_id, reason="the plan left the branch")
            elif all(self.repo.is_ancestor(sha, self._head) for sha in shas):
                aside = [sha for sha in shas if not self._on_line(sha, self._head)]
                if aside:  # back through a merge: the scan never reads them (round 111)
                    self._merged_back[plan_id] = (aside, MERGED)
                    continue
                done.append(plan_id)
                self.log.info("hold_released", plan=plan_id, reason="its commits are back")
            elif self._copied_back(plan_id, shas, str(entry.get("head") or "")):
                self._merged_back[plan_id] = (shas, COPIED)
        if done:
            self.holds.release(done)
            for plan_id in done:
                self._job_ended(plan_id)  # a run the hold kept is taken up again

    def _copied_back(self, plan_id: str, shas: list[str], held_at: str) -> bool:
        """Are a held plan's erased commits back as copies (round 112,
        ``pick-restored-start-stranded``): after the hold (the branch has grown from the
        head it was held at), the plan file on the branch holds the very bytes one of them
        wrote, while they are not on it themselves? A ``git cherry-pick``, a rebase or ``git
        am`` of them onto the line the controller held makes such copies: a person's
        commits (round 58), never the controller's start or pause. A rewrite that makes the
        copy in the same stroke (an amend of the tip, round 69) is not a restore: the plan
        stays held until the controller's own commits are back (its remedy)."""
        state = self.index.plans.get(plan_id)
        if state is None or not state.file or not state.blob or not held_at:
            return False
        if held_at == self._head or not self.repo.is_ancestor(held_at, self._head):
            return False
        if self.repo.blob_sha(held_at, state.file) == state.blob:
            return False  # the file has not changed since the hold
        return any(self.repo.blob_sha(sha, state.file) == state.blob for sha in shas)

    def _on_line(self, sha: str, head: str) -> bool:
        """Is ``sha`` on the branch's line, the first parents from ``head`` (which the history
        index reads), not only behind a merge's other parent? Asked when a hold's commits
        are back: the walk stops at ``sha``'s parents."""
        found = self._git_or_none("rev-list", "--first-parent", head, "--not", f"{sha}^@")
        return found is not None and sha in found.split()

    def _plan_problem(self, plan_id: str, note: str) -> None:
        self.log.warning("plan_problem", plan=plan_id, reason=note)

    @property
    def branch(self) -> str:
        if self._branch is None:
            self._branch = self._watched_branch()
        return self._branch

    def _watched_branch(self) -> str:
        if self.config.remote is not None:
            return self.config.remote.branch
        current = self.repo.current_branch()
        remembered = self.index.meta("branch")
        if remembered and remembered != current:
            raise GitError(
                f"the working tree is on branch {current}, but plangate watches {remembered}",
                remedy=f"git switch {remembered} (plangate watches one branch; its index "
                f"remembers what it saw on {remembered}: rejections, approvals, authors)",
            )
        self.index.set_meta("branch", current)
        return current

    def instance_id(self) -> str:
        """This controller's id (random, kept in the state directory), e.g. ``host/3f2a9c1b``."""
        if self._instance is None:
            import secrets
            import socket

            found = self.index.meta("instance")
            if found is None:
                found = secrets.token_hex(4)
                self.index.set_meta("instance", found)
            self._instance = f"{socket.gethostname()}/{found}"
        return self._instance

    def commit_controller(self) -> str:
        """The ``Controller:`` trailer of every commit this process makes: the instance id and
        this process's random token, e.g. ``host/3f2a9c1b/5e0c71d2a4b9e3f1`` (round 91,
        twinrun: two controllers sharing an instance id, a failover's copy of the state
        directory, made the very same start commit in the same second from the same parent;
        the second push found it on the remote, "up to date", and both ran the plan)."""
        return f"{self.instance_id()}/{self._process_token}"

    @property
    def notifier(self) -> Any:
        """The notify: sender for the config in force (a reload brings new URLs)."""
        from controller.execution.secrets import redact_text
        from controller.service.notify import Notifier

        if self._notifier is None or self._notifier.settings != self.config.notify:
            if self._notifier is not None:  # its queued posts still go (drained at exit)
                self._notifier.finish()
                self._retired_notifiers.append(self._notifier)
            config = self.config
            self._notifier = Notifier(config.notify, lambda text: redact_text(config, text))
        return self._notifier

    def close(self) -> None:
        notifiers = [*self._retired_notifiers, *([self._notifier] if self._notifier else [])]
        if notifiers:  # queued posts go out (bounded) or are logged dropped: round 116
            from controller.service.notify import close_all

            close_all(notifiers)
        if self._index is not None:
            self._index.close()
        if self._repo is not None:
            from controller.plan import nested

            if self._nested_tip is not None:
                nested.forget_tree_of(self.config.repo_path(), self._nested_tip)
                self._nested_tip = None
            self._repo.close()
        self.state.release()

    def head(self) -> str:
        sha = self.repo.branch_head(self.branch)
        if self.repo.forged_shared:
            self._warn_forged(self.repo.forged_shared)
        if sha is None:
            raise GitError(f"branch {self.branch} has no commits yet", remedy="commit something")
        return sha

    def _warn_forged(self, shas: list[str], **where: object) -> None:
        """The shared store shadows objects the branch names (the intake's spot check), or
        kept planted bytes under the names of objects the controller just wrote there (its
        read-back, round 60): the controller reads its own copies and goes on (nothing it
        runs comes from the shared store; an approval whose objects do not hash stops the
        pass), but the operator hears of it, loudly, since every other git reader of the
        checkout sees the forgery (round 58). ``where``: the commit and files concerned."""
        forged = forged_object(shas[0], self.repo.common_dir / "objects", shas[1:])
        self.log.error(
            "shared_store.forged",
            code=forged.code,
            objects=list(shas),
            error=forged.message,
            remedy=forged.remedy,
            **where,
        )
        shas.clear()

    def running(self) -> set[str]:
        with self._jobs_lock:
            return set(self._running)

    def _sync(self) -> str:
        if self.config.remote is None:
            self.repo.check_health()
            return self.head()
        remote_head = self.repo.fetch(REMOTE, self.branch)
        self.fetched_at = time.monotonic()
        local = self.repo.rev(f"refs/heads/{self.branch}")
        if local == remote_head:
            return local
        if local is not None and self.repo.is_ancestor(remote_head, local):
            if self._rewound(remote_head, local):
                return remote_head  # the remote lost history: never pushed back (round 100)
            if self._left_start(remote_head, local):
                return remote_head  # decided again by this process (round 92, heirrun)
            try:
                if self.pushed(remote_head):  # our commit from before a crash
                    return local
            except PushRefused as exc:  # the remote will not take it: its plans wait
                self._refused_left(remote_head, local, exc)
                return remote_head
            raise _Moved
        # Fast-forward; or drop our unpushed commits after a rejected push (never published).
        self.repo.update_ref(f"refs/heads/{self.branch}", remote_head, None)
        return remote_head

    def pushed(self, onto: str, *, new: bool = False) -> bool:
        """Push the branch, made on the remote's tip ``onto``; False when another push won
        (the remote's tip moved). git turns a push down as a lost race also when it cannot
        lock the remote's ref; a lock another push holds lets go within moments, moving the
        tip. One still unmoved after a short wait, the push tried again, is no race: a git
        process killed on the remote's host left its lock (over ``file://`` the remote's
        ``receive-pack`` is the controller's own child), or the ref cannot be written there:
        ``E_GIT`` with git's words. Before (CI, 2026-12-04: a controller killed inside its
        push left the remote's ``HEAD.lock``), every later pass of both controllers made its
        commit, lost, dropped it and went on: ``run --once`` exited 0 with nothing said, and
        the runs stayed ``executing``. ``new``: as :meth:`Refs.push`."""
        if self.repo.push(REMOTE, self.branch, new=new):
            return True
        for delay in _UNMOVED_WAIT:
            if self.repo.remote_tip(REMOTE, self.branch) != onto:
                return False  # another push won
            time.sleep(delay)
        if self.repo.push(REMOTE, self.branch, new=new):  # the lock's holder let go, unmoved
            return True
        if self.repo.remote_tip(REMOTE, self.branch) != onto:
            return False
        raise GitError(
            f"git push {REMOTE}: the remote turned the push to {self.branch} down as a lost "
            f"race, yet its tip stayed {onto[:12]}: nothing else moved it "
            f"(git: {self.repo.push_lost})",
            remedy="the remote cannot write its branch: when git says a lock file exists "
            'there ("cannot lock ref", "Unable to create ... .lock": File exists), a git '
            "process killed on the remote's host left it; with no push running there, remove "
            "the file it names (docs/operations.md, Troubleshoot). The commits wait in the "
            "controller's clone; the next pass pushes them",
        )

    def _rewound(self, remote_head: str, local: str) -> bool:
        """Does the clone hold, above the remote's tip, a commit this process's controller did
        not make (not in its record, or adopted there on trust, from the branch)? Such a
        commit reached the clone only from the remote, so the remote has lost it: its history
        was rewound (a force-push). The controller pushes only commits it made: these leave
        the clone, and the pass goes on from what the remote holds, a rewrite as the history
        index reads one; True when dropped. Round 100 (atk100a): the remote set back to before
        Alice's vote, the pass pushed its clone's old tip back, and her erased vote counted
        towards a quorum with Bob's."""
        own = self.own_commits
        above = self.repo.run("rev-list", f"{remote_head}..{local}").split()
        foreign = [sha for sha in above if sha not in own or own.on_trust(sha)]
        if not foreign:
            return False
        self.repo.update_ref(f"refs/heads/{self.branch}", remote_head, local)
        self.log.warning(
            "remote_rewound",
            dropped=local,
            tip=remote_head,
            commits=len(above),
            not_ours=len(foreign),
            reason="the remote's branch no longer holds commits this clone took from it (a "
            "force-push): they are not pushed back; the pass goes on from the remote's tip",
        )
        return True

    def _left_start(self, remote_head: str, local: str) -> bool:
        """Commits of ours left above the remote's tip holding a start (a pass killed after
        its start commit, before its push) are never pushed: they leave the local branch as
        a lost race's commit does, their job rows go (:meth:`_forget_unlanded`: a start not
        on the branch), and the pass decides the plan again, with a start commit of this
        process's own (its token, :meth:`commit_controller`); True when dropped. A start no
        process pushed is no run of anyone yet, and one this process did not make must not
        become its run by its push: a copy of the state directory (a failover's) holds the
        same commit and job row, and every holder pushing it took it for its own (round 92,
        heirrun: the tool ran once per holder, even one after the other). Made again, each
        holder's start has its own bytes, and the push race decides (round 91). Commits
        above the tip without a start (an outcome whose push failed) and this process's own
        (its token: a push it has yet to win) are pushed as before."""
        starts: list[str] = []
        mine = self.commit_controller()
        try:
            for record in self.repo.first_parent_log(remote_head, local, [self.config.plans_dir]):
                if record.trailers.get("Controller") == mine:
                    continue  # this process's own, its push yet to win
                starts += [p for p, event in _events(record).items() if p and event == "start"]
        except GitError:
            return False
        if not starts:
            return False
        self.repo.update_ref(f"refs/heads/{self.branch}", remote_head, local)
        self.log.warning(
            "start_left_dropped",
            plans=sorted(set(starts)),
            dropped=local,
            tip=remote_head,
            reason="a start commit left above the remote's tip (a pass killed before its "
            "push) is not pushed: it leaves the clone, and the plan is decided again",
        )
        return True

    def _refused_left(self, remote_head: str, local: str, exc: PushRefused) -> None:
        """Commits of ours left above the remote's tip (from before a crash, or an older
        version) that the remote refuses: each of their plans is set aside, then they leave
        the local branch, as a lost race's commit does (the job rows keep the runs)."""
        plans: dict[str, str] = {}
        try:
            for record in self.repo.first_parent_log(remote_head, local, [self.config.plans_dir]):
                for plan_id, event in _events(record).items():
                    if plan_id:
                        plans.setdefault(plan_id, f"{event}\0{record.sha}")
        except GitError:
            pass
        for plan_id, found in sorted(plans.items()):
            event, _, sha = found.partition("\0")
            self._set_aside(plan_id, event, sha, exc)
        self.repo.update_ref(f"refs/heads/{self.branch}", remote_head, local)

    def _set_aside(self, plan_id: str, event: str, sha: str, exc: PushRefused) -> None:
        """The remote refused ``event`` of ``plan_id`` (commit ``sha``): record it durably
        (``status`` shows it under ``waiting``); the plan waits until :meth:`_aside_due`."""
        from controller.execution.secrets import redact_text

        reason = redact_text(self.config, exc.reason)
        self.refused.refuse(plan_id, event, reason, sha, iso(time.time()))
        self._refused_now.add(plan_id)
        self.log.error(
            "push_refused",
            plan=plan_id,
            event_name=event,
            commit=sha,
            reason=reason,
            remedy=refused_remedy(plan_id, event),
        )

    def _next_pass(self) -> None:
        """A pass begins: the refused plans it tries again (first pass of this process, a
        config change, or every :data:`REFUSED_RETRY_PASSES` passes)."""
        self._passes += 1
        changed = self._refused_config is not self.config
        self._refused_config = self.config
        due = changed or self._passes == 1 or self._passes % REFUSED_RETRY_PASSES == 0
        self._retry_refused = set(self.refused.load()) if due and self.refused else set()
        self._refused_now = set()

    def _publishes_refused(self, plan_id: str, event: str) -> bool:
        """Does a published commit of ``event`` settle the plan's refused entry? A decision
        event (start, freeze, refuse, ...) is decided again, so any commit of the plan does;
        a refused outcome records a run that happened: only an outcome commit settles it (a
        new plan's freeze at the same path does not, round 42)."""
        entry = self.refused.get(plan_id)
        if entry is None:
            return False
        return str(entry.get("event") or "") not in OUTCOME_EVENTS or event in OUTCOME_EVENTS

    def _release_unneeded(self) -> None:
        """After a pass that retried refused plans: a refused decision event (start, freeze,
        refuse, partial...) is decided again from the branch on the retry; when that pass
        committed nothing for the plan (rejected, withdrawn or aborted meanwhile, or at
        another version: it needs that commit no more) and no job of ours is left, the entry
        is dropped (round 42: a rejected plan's refused start stayed, and ``status`` told the
        operator to retry a plan that can never start). A refused outcome stays until it is
        published: the run happened."""
        if not self._retry_refused:
            return
        entries = self.refused.load()
        jobs = self.index.jobs()
        unneeded = [
            plan_id
            for plan_id in sorted(self._retry_refused - self._refused_now)
            if plan_id in entries
            and str(entries[plan_id].get("event") or "") not in OUTCOME_EVENTS
            and plan_id not in jobs
        ]
        self._retry_refused -= set(unneeded)
        if unneeded:
            self.refused.release(unneeded)
            self.log.info(
                "refusal_cleared",
                plans=unneeded,
                reason="decided again: the plan needs the refused commit no more",
            )

    def _aside(self, plan_id: str) -> bool:
        """Is the plan set aside after a refusal, and not tried again in this pass?"""
        return plan_id not in self._retry_refused and plan_id in self.refused

    def _aside_plan(self, state: PlanState) -> bool:
        """Is the branch's plan set aside (:meth:`_aside`)? Not when what waits is the
        refused outcome of an earlier run at its path and the branch holds another plan
        there (round 42): that plan is judged on its own."""
        if not self._aside(state.plan_id):
            return False
        entry = self.refused.get(state.plan_id) or {}
        job = self.index.jobs().get(state.plan_id) or {}
        return not (
            str(entry.get("event") or "") in OUTCOME_EVENTS
            and holds_another(state, str(job.get("plan_hash") or ""))
        )

    @contextlib.contextmanager
    def recording_pass(self, *, clear: bool = True) -> Iterator[None]:
        """Note in the state directory why the work inside stopped (an error it raises), or,
        with ``clear``, that it completed: what ``status`` says of a controller whose passes
        fail (:class:`~controller.service.statedir.PassFailure`). Only the state lock's
        holder writes it; a note that cannot be written never hides the pass's own error."""
        try:
            yield
        except BaseException as exc:
            if isinstance(exc, Exception) and not isinstance(exc, _Moved | _Wait):
                self._note_pass_failed(exc)
            raise
        if clear and self.state.locked and self._pass_failure_gone is not True:
            try:
                self.pass_failure.clear()
                self._pass_failure_gone = True
            except OSError as exc:
                self.log.warning("pass_failure.not_cleared", error=str(exc))

    def _note_pass_failed(self, exc: Exception) -> None:
        if not self.state.locked:
            return
        if isinstance(exc, PlangateError):
            code, message = exc.code, f"{exc.path}: {exc.message}" if exc.path else exc.message
            remedy = exc.remedy or remedy_for(exc.code)
        else:  # a fault of plangate's own: the daemon logs it (reconcile.crashed) and retries
            code, message = "E_INTERNAL", f"{type(exc).__name__}: {exc}"
            remedy = "a fault in plangate: see the controller's log and report it"
        try:
            from controller.execution.secrets import redact_text

            message, remedy = redact_text(self.config, message), redact_text(self.config, remedy)
        except PlangateError:
            pass  # no secrets to read: nothing they could hide
        try:
            self.pass_failure.record(code, message, remedy, iso(time.time()))
            self._pass_failure_gone = False
        except (OSError, PlangateError) as error:
            self.log.warning("pass_failure.not_noted", error=str(error))

    def refused_reason(self, plan_id: str) -> str | None:
        """What ``status`` says of a plan whose commit the remote refused (None: none)."""
        entry = self.refused.get(plan_id)
        if entry is None:
            return None
        event = str(entry.get("event") or "commit")
        what = "outcome" if event in OUTCOME_EVENTS else f"{event} commit"
        commit, remedy = str(entry.get("commit"))[:12], refused_remedy(plan_id, event)
        return (
            f"E_GIT: the remote refused the {what} of {plan_id} ({commit}, since "
            f"{entry.get('since')}): {entry.get('reason')}; {remedy}"
        )

    def _job_ended(self, plan_id: str) -> None:
        """A run ended (from a worker): the next pass looks at its job again, if it is left
        (:meth:`~controller.service.starting.Starting._owned_jobs`)."""
        with self._jobs_lock:
            if self._recheck is not None:
                self._recheck.add(plan_id)

    def own_execution_record(self, file: str, rev: str) -> Recorded | None:
        """The controller's record of a plan's ``execution:`` block up to ``rev``: the file
        at its last commit of it that wrote the block, its own by its record of the commits
        it made (never by name; :mod:`controller.git.ownrecord`, as ``show`` reads it).
        Read only after a loss (round 52): one path-limited log and one read. None too when
        a later commit of the plan by that record is gone from the branch (round 59): the
        plan is held, the record to go on from is not the last one."""
        plan_id = plan_id_of(file, self.config.plans_dir)
        if plan_id is not None and self.hold_erased_own(self._head or self.head(), plan_id):
            return None
        return own_record(
            self._git_or_none,
            rev,
            file,
            lambda record: record.sha in self.own_commits,
            events=EXECUTION_EVENTS,
        )

    def foreign_run(self, state: PlanState) -> str | None:
        """Why this controller may not decide the plan (None: it may): its current version's
        latest start (a first start, a gate resume, a later start) is a commit under the
        controller's name that carries a seal this controller did not make (not in its
        record, which holds every commit its key verifies): another controller, started by
        mistake with its own state directory, or the old key of a state directory started
        over with a new one, moved the run on (round 67: a first start of a version it
        never ran; round 68: a resume of a run this controller began, whose gate the branch
        shows passed). Nothing runs and nothing is committed for it; ``status`` shows this
        under ``waiting``. An unsealed start is no controller's (the lifecycle never notes
        one: anyone's commit, the take-over's case)."""
        sha, _, plan_hash = state.foreign_start.partition(" ")
        if not sha:
            return None
        if plan_hash and plan_hash != state.hash:
            return None  # a run of another version: the plan was changed since
        if self._copies_own_seal(sha):
            return None  # a replay of its own sealed commit: anyone's, no controller's
        return (
            f"its run was last started by {sha[:12]} under the controller's name, a commit this "
            "controller did not make (not in its record, no seal its commit.key verifies): "
            "another controller or a lost key; this one decides and runs nothing of it. Stop "
            "the other controller (one state directory per repository), or restore the "
            "commit.key of the state directory that made the commit"
        )

    def _copies_own_seal(self, sha: str) -> bool:
        """Is commit ``sha``'s seal this controller's own: one its key verifies (the agent's
        ``git commit --amend --no-edit`` of its start keeps tree, parent and message, round
        58), or the very message of a commit it made (a replay of its own start onto another
        tree or parent, round 67's F3)? Its seal is no other key's: the commit is anyone's
        (a rewrite's hold or the take-over says what happens). Read once per commit."""
        if sha not in self._seal_copies:
            self._seal_copies[sha] = self._seal_copied(sha)
        return self._seal_copies[sha]

    def _seal_copied(self, sha: str) -> bool:
        try:
            tree, parent, _, message = _sealed_parts(self.repo.run("cat-file", "commit", sha))
            last = message.rstrip("\n").rpartition("\n")[2]
            if not last.startswith(f"{CommitSeal.TRAILER}: "):
                return False
            if self.commit_seal.verify(tree, parent, message):
                return True  # this key's own seal, rewritten by someone (round 58's amend)
            out = self.repo.run("log", "-F", f"--grep={last}", "--format=%H", self.head())
            own = [other for other in out.split() if other != sha and other in self.own_commits]
            return any(self._commit_message(other) == message for other in own)
        except GitError:
            return False

    def _another_holders(self, record: CommitRecord) -> bool:
        """Is ``record`` (a commit under the controller's name) a run event another holder
        made: not in this controller's record, and sealed either with this state's key
        (another holder of a copy of its state directory, round 93) or with a seal of the
        right shape that no key here verifies and that copies no seal of this controller's
        own commits (round 94, rekeyheir: a copy of the state directory started with a new
        ``commit.key``, the old state alongside; or another controller)? Such a commit is
        never "no claim": the run is someone else's, or unknowable. An unsealed commit, or
        one carrying a seal this controller made (a replay of its own message, edited or
        not), is anyone's (round 66)."""
        if record.sha in self.own_commits:
            return False
        if self._sealed_by_us(record.sha):
            return True
        seal = record.trailers.get(CommitSeal.TRAILER, "")
        if len(seal) != 64 or any(c not in "0123456789abcdef" for c in seal):
            return False
        if self._copies_own_seal(record.sha):
            return False
        try:  # this controller's own seal under another message: the agent's edit of it
            out = self.repo.run(
                "log", "-F", f"--grep={CommitSeal.TRAILER}: {seal}", "--format=%H", self.head()
            )
        except GitError:
            return True  # unreadable: someone else's (fails closed: the run is not taken)
        return not any(other in self.own_commits for other in out.split() if other != record.sha)

    def _commit_message(self, sha: str) -> str:
        return self.repo.run("cat-file", "commit", sha).partition("\n\n")[2]

    def _wait(self, plan_id: str, reason: str) -> None:
        if self._waiting.get(plan_id) != reason:
            self.log.warning("plan_waiting", plan=plan_id, reason=reason)
        self._waiting[plan_id] = reason


def _sealed_parts(raw: str) -> tuple[str, str, str, str]:
    """What a seal covers, and who committed, from ``git cat-file commit``'s text: the tree,
    the first parent, the committer line and the message."""
    headers, _, message = raw.partition("\n\n")
    fields = [line.partition(" ") for line in headers.splitlines()]

    def first(name: str) -> str:
        return next((value for key, _, value in fields if key == name), "")

    return first("tree"), first("parent"), first("committer"), message


def holds_another(state: PlanState | None, plan_hash: str) -> bool:
    """Does the branch hold, at a started run's path, another plan than the version that
    run started (``plan_hash``)? Its folder was removed and a new plan put there (round 42):
    a valid plan of another hash that is not that run's version in a run state (an edit of
    the running plan in place keeps it ``executing``: round 3/33, written over with what
    ran). Its outcome commit records the run without writing the plan file."""
    if state is None or not state.hash or not plan_hash or state.hash == plan_hash:
        return False
    if state.status is None:
        return False  # an illegal edit or a file with no valid status: the run's to write
    running = state.status in ("executing", "awaiting_approval")
    return not (running and state.approved_hash in (None, plan_hash))


#: The controller's events that record a run's outcome (or its pause at a gate): the ones
#: that write the plan's ``execution:`` block.
OUTCOME_EVENTS = EXECUTION_EVENTS


def refused_remedy(plan_id: str, event: str = "complete") -> str:
    if event not in OUTCOME_EVENTS:
        return (
            f"fix the forge's rule or what the commit holds, then `plangate run --once` "
            f"retries; {plan_id} waits, nothing else does"
        )
    return (
        f"fix the forge's rule or the tool's output, then `plangate run --once` retries "
        f"(the run is not repeated: its journal replays the outcome); {plan_id} waits, "
        "nothing else does"
    )


#: Controller events a pass decides again from the history that remains: their commits may
#: vanish in a rewrite without a hold (a refusal's reason is still in history).
REDECIDED = frozenset({"refuse", "partial"})


def _events(record: CommitRecord) -> dict[str, str]:
    """Plan id -> the controller's event in its commit (``plangate: <event> <plan>``, or a
    batch's ``Plan-Event:`` trailers), as :func:`controller.git.records.record_events` reads
    the plans' names back."""
    from controller.git.records import record_events

    return record_events(record)


def _stat_key(path: Path) -> tuple[int, int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def _job_data(job: Job) -> dict[str, Any]:
    data = asdict(job)
    data["plan_file"] = str(job.plan_file)
    del data["conversions"]  # the pass's answer, never kept in the job row
    return data


def _job_of(plan_id: str, plan_file: Path, data: dict[str, Any]) -> Job:
    """The job a job row describes (a row written before ``continued`` was kept: a gate or
    resume approval's, as the row says)."""
    gate, resume = data.get("gate_approved"), bool(data.get("resume"))
    continued = data.get("continued")
    return Job(
        plan_id,
        plan_file,
        data["plan_hash"],
        data["approval"],
        gate,
        resume,
        bool(continued) if continued is not None else gate is not None or resume,
    )


class _BranchTip:
    """A bare clone's tree as nested plans are read from it (:class:`nested.Fetch`): the
    branch's tip when asked, so a pass reads what its last commit holds; :meth:`at` reads
    a commit of the run's own history (:class:`nested.History`)."""

    def __init__(self, repo: GitRepo, branch: Callable[[], str], commit: str | None = None) -> None:
        self.repo, self.branch = repo, branch  # asked when read: a pass names a bad HEAD first
        self.commit = commit

    def at(self, commit: str) -> _BranchTip:
        """The tree of ``commit`` (a start commit the run's journal names), read alike."""
        return _BranchTip(self.repo, self.branch, commit)

    def _tree(self) -> Any:
        from controller.approval.verdicts import fetch_at

        tip = self.commit if self.commit is not None else self.repo.branch_head(self.branch())
        return fetch_at(self.repo, tip) if tip is not None else None

    def __call__(self, path: str) -> bytes | None:
        tree = self._tree()
        if tree is None:
            return None
        self._no_link(tree.commit, path)
        return tree(path)

    def names(self, folder: str) -> list[str]:
        tree = self._tree()
        if tree is None:
            return []
        self._no_link(tree.commit, folder)
        return tree.names(folder)

    def _no_link(self, commit: str, path: str) -> None:
        """A symlink on the way is never followed, as on disk (its blob is its target)."""
        from controller.errors import UnsafePath

        parts = path.split("/")
        for end in range(1, len(parts) + 1):
            where = "/".join(parts[:end])
            if self.repo.mode_of(commit, where) == "120000":
                raise UnsafePath(
                    f"nested plan: {where} is a symlink on the branch; plangate never follows one"
                )


def _other_folder(index: HistoryIndex, plans_dir: str) -> bool:
    """Was ``index`` read with another plans folder than ``plans_dir``: the one it names,
    or (an index from before it named one) a plan it holds outside ``plans_dir``?"""
    if index.meta("plans_dir") is not None:
        return True
    return any(plan_id_of(f"{plan}/PLAN.yml", plans_dir) != plan for plan in index.plans)
