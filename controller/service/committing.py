"""Every commit the controller makes: a PLAN.yml edit (and its log) with trailers, off-index.

:meth:`Committing._commit_plan` reads the file as committed, applies an edit, writes the
message (``plangate: <event> <plan>`` and the ``Plan``/``Plan-Hash``/``Plan-Status``/
``Approved-By``/``Approval-Commit``/``Controller`` trailers, secrets redacted), moves the branch
by compare-and-swap (and pushes, in remote mode) and applies the commit to the history index.
The edits themselves (status, approval block) are the small functions below.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path, PurePosixPath
from typing import Any

from controller import fsutil
from controller.approval import policy, recorded
from controller.errors import (
    AttributeUnsupported,
    PlangateError,
    PushHeld,
    PushRefused,
    StorageFailed,
    storage_failed,
)
from controller.git.gitrepo import (
    CommitRecord,
    FileChange,
    IndexHold,
    blob_id,
    parse_trailers,
)
from controller.git.history import PlanState
from controller.git.lifecycle import takes_over
from controller.git.message import MAX_MESSAGE_BYTES, SEAL_BYTES
from controller.git.planstate import LOG_NAME
from controller.git.records import EVENT_TRAILER, plan_text
from controller.plan import plans, yamlio
from controller.service import notify
from controller.service.core import ControllerCore, _events, _Moved, _Wait

#: Records of one policy by one process before it gives up (``policy_contested``).
MAX_RECORDS = 5

#: A run's events (its start, checkpoints, outcomes): under the controller's name but not
#: made by this controller, after its start, they say the run is not its own to go on with.
RUN_EVENTS = frozenset({"start", "checkpoint", "complete", "fail", "abort", "await-approval"})
#: How many of its own latest commits the controller remembers (their parents and paths).
MADE_KEPT = 512


class Committing(ControllerCore):
    """Reading committed plans and committing the controller's edits to them."""

    #: (config, its policy file's bytes, their Policy-Hash): computed once per config
    _policy_cache: tuple[object, bytes, str] | None = None
    #: (head, Policy-Hash) last found recorded: nothing to look up until either changes
    _policy_seen: tuple[str, str] = ("", "")
    #: a landed commit's files are not all in the working tree or index yet (a full disk)
    _tree_lags: bool = False

    def policy_in_force(self) -> tuple[bytes, str]:
        """The recorded form of the config in force: (file bytes, ``Policy-Hash``)."""
        cached = self._policy_cache
        if cached is None or cached[0] is not self.config:
            data = recorded.policy_bytes(self.config)
            cached = self._policy_cache = (self.config, data, recorded.hash_of(data))
        return cached[1], cached[2]

    def _record_policy(self) -> None:
        """Commit the policy in force when the controller's last own record (its own
        ``plangate: record policy`` commit, as the history index follows it) is another
        one: first pass, a new config. That commit is made even when the file already holds
        the bytes (round 61: whoever commits them first records nothing; the commit's tree
        then equals its parent's). The file is also written back when someone else changed
        or deleted it. Bounded (``_contested``): never a commit war. One lookup per pass that
        found a new head."""
        data, digest = self.policy_in_force()
        if self._policy_seen == (self._head, digest):
            return
        own = self._own_record()
        blob = self.repo.blob_sha(self._head, recorded.POLICY_PATH)
        owned, held = own == blob_id(data), blob == blob_id(data)
        made = not (owned and held) and not self._contested(digest)  # bounded, as ever
        if made:
            self._policy_records[digest] = self._policy_records.get(digest, 0) + 1
            previous = self._previous_record(own)
            before = recorded.parse_blob(self.repo, previous)
            changed = recorded.differences(before, recorded.parse(data) or {})
            was = self._identity_changed_from(before)
            message = self._policy_message(digest, changed, was)
            worktree = self._policy_path_safe()
            self._write({recorded.POLICY_PATH: data}, self._head, message, worktree=worktree)
            self.log.info("policy_recorded", hash=digest, changed=changed, commit=self._head)
            if was is not None and previous != own:
                self._read_history_again(was)
        if self._policy_seen[1] != digest:  # once per config: what the audit will judge by
            self.log.info("policy_in_force", hash=digest, recorded=owned or made, committed=made)
        self._policy_seen = (self._head, digest)

    def _previous_record(self, own: str | None) -> str | None:
        """The blob of the controller's last own policy record on the branch at ``_head``,
        by its state directory's record of the commits it made, whatever identity it had
        then (``own``, the history index's, without that record). The index is a cache
        that follows today's identity and the links history holds: rebuilt in the restart
        that changes the identity (a ``plans_dir`` change, an upgrade, a deleted index
        file), it knew no record of the old identity's, and the first record under the new
        one named none (round 127, identity-change-with-move-unlinked). Its newest record
        commit there whose file holds the policy its ``Policy-Hash:`` names; a record of
        anyone else's is no link of the controller's (the agent's seal-shaped one, made
        first under the new identity, round 127 lab g)."""
        if not self.own_commits.known:
            return own
        grep = f"--grep={recorded.RECORD_SUBJECT}"
        shas = self.repo.run("rev-list", "--first-parent", "--fixed-strings", grep, self._head)
        for sha in shas.split():
            if sha in self.own_commits:
                blob = self._record_of(sha)
                if blob is not None:
                    return blob
        return None

    def _record_of(self, sha: str) -> str | None:
        """The policy blob ``sha`` records, when it is a record commit by the identity it
        was made under (author and committer) holding the policy it names; else None."""
        record = self.repo.commit(sha)
        who = record.author.email
        named = recorded.recorded_hash(
            record.subject, record.trailers, who, record.committer.email, who
        )
        blob = self.repo.blob_sha(sha, recorded.POLICY_PATH) if named else None
        try:
            held = blob is not None and recorded.hash_of(self.repo.blob(blob)) == named
        except PlangateError:  # no longer readable (too large, pruned): no record
            held = False
        return blob if held else None

    def _identity_changed_from(self, before: dict[str, Any] | None) -> str | None:
        """The identity the controller's previous record named, when today's is another
        (:data:`recorded.PREVIOUS_IDENTITY`: how the readers follow it across the change)."""
        was = _identity_of(before)
        if was and was.lower() != self.config.identity.email.lower():
            return was
        return None

    def _read_history_again(self, was: str) -> None:
        """The history index was read without the identity link just written (rebuilt
        under the new identity before it: the old identity's commits read as anyone's,
        its runs and records not the controller's): it is read again from the branch, as
        any later rebuild reads it, and the pass decides from that (``_Moved``)."""
        self.log.info(
            "history_reread",
            previous_identity=was,
            identity=self.config.identity.email,
            reason="the history index was rebuilt before the identity change was recorded",
        )
        self.index.reset()
        self.index.rebuilds += 1
        raise _Moved

    def _own_record(self) -> str | None:
        """The blob of the controller's last own policy record on the branch at ``_head``
        (None: none yet): the history index follows them (``withdraw_policy``)."""
        if self.index.meta("last_commit") != self._head:
            self.index.scan(self.repo, self._head)
        return self.index.meta("withdraw_policy") or None

    def _contested(self, digest: str) -> bool:
        """Has this process recorded this policy again and again (something else, such as a
        second controller with another config, keeps replacing it)? Then it stops, once."""
        count = self._policy_records.get(digest, 0)
        if count == MAX_RECORDS:
            self._policy_records[digest] = count + 1
            self.log.error(
                "policy_contested",
                hash=digest,
                remedy=f"something keeps replacing {recorded.POLICY_PATH} (another controller "
                "on this branch with another config?): give every controller the same config",
            )
        return count >= MAX_RECORDS

    def _policy_message(self, digest: str, changed: list[str], was: str | None = None) -> str:
        """The record commit's message; ``was``: the identity its own last record named, when
        the config's identity changed since (:data:`recorded.PREVIOUS_IDENTITY`: how the
        audit follows the controller across the change, round 126)."""
        from controller.git.message import commit_message

        body = "The controller's effective policy: " + ", ".join(changed or ["restored"])
        trailers = [("Policy-Hash", digest), ("Controller", self.commit_controller())]
        if was:
            trailers.append((recorded.PREVIOUS_IDENTITY, was))
        return commit_message(recorded.RECORD_SUBJECT, body, trailers)

    def _policy_path_safe(self) -> bool:
        """May the policy file be written into the working tree? Not through a link or onto
        something that is not a plain file (the tree is anyone's: never followed)."""
        file = self.repo.path / recorded.POLICY_PATH
        if file.parent.is_symlink() or file.is_symlink():
            return False
        if file.parent.exists() and not file.parent.is_dir():
            return False
        return not file.exists() or file.is_file()

    def _read_committed(self, file: str, head: str) -> bytes | None:
        """``file`` at ``head``; from the blob the index holds when it was scanned to there."""
        state = self.index.plans.get(str(PurePosixPath(file).parent))
        if (
            state is not None
            and state.file == file
            and state.blob is not None
            and self.index.meta("last_commit") == head
        ):
            return self.repo.blob(state.blob)
        return self.repo.read_file(head, file)

    def _check_uncommitted(
        self, state: PlanState, head: str, execution: dict[str, Any] | None = None
    ) -> None:
        """Wait when the working-tree PLAN.yml differs from HEAD by more than the engine's
        ``execution:`` block (``execution``: the block the engine wrote last, if known), or
        its index entry from HEAD's (:meth:`_check_staged`). The file is read as git would
        store it (:meth:`_worktree_bytes`): what git calls clean is."""
        try:
            self._check_worktree_file(state, head, execution)
        except _Wait:
            # an edit staged in the index (the working file as staged) is named as staged:
            # discarding the edit, the other wait's remedy, leaves the entry (round 124)
            self._check_staged(state, head)
            raise
        self._check_staged(state, head)

    def _check_staged(self, state: PlanState, head: str) -> None:
        """Wait when the index's entry of the plan file is not the committed one (local
        mode): a staged edit or removal (``git rm --cached``, the file left as it is) is an
        uncommitted change as an edit of the file is, and the controller's index write would
        discard it (round 116, staged-removal-discarded: the outcome put the removed entry
        back, ``git status`` clean). An entry naming the blob the controller's own last
        commit of the file left (``controller_blob``) is no one's change: its bytes are in
        history, and an index left behind when HEAD moved on without it (a commit made
        through another index file, round 66's restart) holds it."""
        if self.config.remote is not None:
            return
        sha = self._blob_at_index(head, state.file)
        if sha is None or self.repo.index_holds(state.file, sha):
            return
        if state.controller_blob and self.repo.index_holds(state.file, state.controller_blob):
            return
        raise _Wait(
            f"{state.file} has uncommitted changes staged in the index (git diff --cached -- "
            f"{state.file}); plangate will not overwrite them (commit them, or unstage them: "
            f"git restore --staged -- {state.file}; or discard them: git restore --staged "
            f"--worktree -- {state.file})"
        )

    def _check_worktree_file(
        self, state: PlanState, head: str, execution: dict[str, Any] | None
    ) -> None:
        committed = self._read_committed(state.file, head)
        try:
            raw = fsutil.read_regular(self.repo.path / state.file, root=self.repo.path)
            if (
                committed is not None
                and execution is not None
                and raw.decode("utf-8", "replace")
                == _with_execution(committed.decode("utf-8", "replace"), execution)
            ):
                return  # the engine's own last write, as it wrote it: git is not asked
            if committed is not None and self.repo.holds_own_checkout(state.file, raw, committed):
                return  # as this process's commit of it left it (a run writes nothing there)
            on_disk = self._worktree_bytes(state.file, committed, raw).decode("utf-8", "replace")
        except OSError:
            return
        except AttributeUnsupported as exc:  # round 76: an encoding it cannot apply
            raise _Wait(f"{exc.code}: {exc.message}; {exc.remedy}") from None
        except PlangateError as exc:  # a symlink or FIFO where PLAN.yml was: never followed
            raise _Wait(f"{exc.code}: {exc.message}; restore {state.file}") from None
        if committed is not None and on_disk == committed.decode("utf-8", "replace"):
            return  # the usual case, without parsing either
        if (
            committed is not None
            and execution is not None
            and on_disk == _with_execution(committed.decode("utf-8", "replace"), execution)
        ):
            return  # the engine's own last write: the file on disk is not parsed
        if committed is None or _without_execution(on_disk) != _without_execution(
            committed.decode("utf-8", "replace")
        ):
            if self._holds_own_blob(state, raw):
                return  # the controller's own last commit of the file: no one's change
            raise _Wait(
                f"{state.file} has uncommitted edits; plangate will not overwrite them "
                "(commit or discard them)"
            )

    def _holds_own_blob(self, state: PlanState, raw: bytes) -> bool:
        """Are ``raw``, the working tree's bytes of the plan file, as git would store them,
        the blob the controller's own last commit of the file left (``controller_blob``, in
        the history index: known after a restart)? Then they are no one's edit, as that
        blob's index entry is (:meth:`_check_staged`): history holds them, and an outcome
        writing over them loses nothing. A commit of the file made through another index
        file (``GIT_INDEX_FILE``) moves HEAD and leaves the working file, as the shared
        index, on the controller's bytes (round 120, own-index-commit-waits: the outcome
        waited "uncommitted edits" on them for good)."""
        if not state.controller_blob:
            return False
        try:
            own = self.repo.blob(state.controller_blob)
            return self._worktree_bytes(state.file, own, raw) == own
        except (PlangateError, OSError):
            return False

    def _worktree_bytes(
        self, file: str, committed: bytes | None = None, raw: bytes | None = None
    ) -> bytes:
        """The working tree's ``file`` as git would store it (its built-in conversions,
        :meth:`~controller.git.worktree.WorkTree.as_committed`; round 75: a ``.gitattributes``
        ``eol=crlf`` left every plan waiting on edits nobody made; round 76: ``ident`` and
        ``working-tree-encoding`` too). Never through a link. ``raw``: the bytes already
        read (the outcome's check reads them first: a run's file differs from its commit by
        the engine's ``execution:`` block, and asking ``git check-attr`` for each of a
        1,000-plan burst doubled the daemon's git children). Bytes equal to ``committed``
        stand for it only as git would call them clean (round 78:
        :meth:`~controller.git.worktree.WorkTree.as_git_compares`). An adoption reads its file
        as ``git add`` would store it instead (:meth:`Freezing._as_added`)."""
        if raw is None:
            raw = fsutil.read_regular(self.repo.path / file, root=self.repo.path)
        return self.repo.as_git_compares(file, raw, committed)

    def _commit_plan(
        self,
        file: str,
        event: str,
        mutate: Callable[[str], str | None],
        plan_hash: str | None,
        body: str,
        *,
        approved_by: str | None = None,
        approval_commit: str | None = None,
        trailers: dict[str, str] | None = None,
        adopt: bytes | None = None,
        base: str | None = None,
        extra: dict[str, bytes] | None = None,
        event_ref: dict[str, str] | None = None,
        on_commit: Callable[[str], None] | None = None,
        before_index: Callable[[], None] | None = None,
        after: Callable[[str], None] | None = None,
        on_drop: Callable[[bool], None] | None = None,
        executed: tuple[str, str] | None = None,
        before_ref: Callable[[str], None] | None = None,
        write_plan: bool = True,
        quotes: tuple[str, ...] = (),
    ) -> str | None:
        """Commit an edit of one plan's file; during a batching pass, the edit may wait for
        the batch's commit (returns :data:`PENDING`; ``on_commit``, ``before_index`` and
        ``after(sha)`` run when it is made, ``before_ref(sha)`` before the branch moves to it;
        ``on_drop(retry)`` when a waiting edit is not
        committed: ``retry`` when nothing of it was written). ``executed``: (frozen hash, plan
        id) a start records as executed, durably, once on the branch and before any
        ``before_index`` (local mode). ``write_plan`` False: the commit records the event
        (message, trailers, ``extra``) without writing the plan file (round 42: the outcome
        of a run whose path holds another plan now). ``quotes``: the plan author's text the
        body quotes (an error's :meth:`~controller.errors.PlangateError.quoted`), kept as
        written in the message (round 65). ``adopt``: an uncommitted file's bytes as ``git
        add`` would store them, the very bytes the adoption judged (round 78), edited and
        committed."""
        head = self._head
        if base is not None:  # the caller knows the text to edit (an outcome: what ran)
            base_text: str | None = base
        elif adopt is not None:
            # read once (bounded, never through a link), as git would store it: what was
            # validated is what is committed, and the working tree reads clean after
            base_text = adopt.decode()
        else:
            data = self._read_committed(file, head)
            base_text = None if data is None else data.decode("utf-8")
        if base_text is None:
            return None
        if write_plan and base is None:  # a given base is the controller's own text (what ran)
            # a run's events leave execution: to the run's rules (round 52: a resume after a
            # loss goes on only when the branch's block is the record, else fails closed)
            keys = ("approval",) if event in RUN_EVENTS else ("execution", "approval")
            base_text = self._from_own_record(file, base_text, keys)
        new_text = mutate(base_text)
        if new_text is None or (new_text == base_text and adopt is None and not extra):
            return None
        if event_ref is not None:
            event = event_ref["name"]
        # what the message and the notification say (status, hash, blocks): a parse, no
        # validation (the text is the controller's edit of a plan already decided on)
        status = plans.parse_text(new_text, Path(file), self.config)
        plan_id = str(PurePosixPath(file).parent)
        approvers = _approvers(approved_by, status.block("approval"))
        message = self._message(
            event,
            plan_id,
            plan_hash or status.hash,
            status.status,
            body,
            approvers,
            approval_commit,
            trailers,
            quotes,
        )
        files: dict[str, bytes | None] = dict(extra or {})
        if write_plan:
            files = {file: new_text.encode("utf-8"), **files}
        if not files:
            return None
        entry = _Entry(
            plan_id,
            files,
            message,
            self._trailers(
                plan_hash or status.hash, status.status, approvers, approval_commit, trailers
            ),
            event,
            body,
            status,
            plan_hash or status.hash,
            on_commit,
            before_index,
            after,
            on_drop,
            executed=executed,
            before_ref=before_ref,
            quotes=quotes,
        )
        if self._batch is not None and (self._batch.entries or not self._batch.first_alone):
            self._batch.entries.append(entry)
            if not self._batch.hold and self._batch.due():
                self._flush()
            return PENDING
        if self._batch is not None:
            self._batch.first_alone = False  # this one could start an action: never waits
        return self._commit_entries([entry])

    def _from_own_record(self, file: str, text: str, keys: tuple[str, ...]) -> str:
        """``text`` with its ``execution:``/``approval:`` blocks as the controller's own
        commits of ``file`` at ``_head`` recorded them (none: removed), before any edit of
        it (round 62): a block someone else wrote after the freeze (an agent's "succeeded",
        a rewritten error, an approval) is never carried forward in the controller's own
        commit (a refusal, a vote), where every reader would take it for its record. A block
        the edit then writes (a vote's approval, an outcome) is its own. ``keys``: the
        blocks to take from the record (a run's events: ``approval`` only)."""
        from controller.git.ownrecord import owned_blocks, recorded_blocks
        from controller.service.statedir import is_own_commit

        if self._read_unowned(file, text):
            return text  # the index read this very version: it holds no such block
        held = owned_blocks(text, PurePosixPath(file).name)
        if not held or not any(held.get(key) for key in keys):
            return text  # nothing to carry (no record to restore either: a removal stays)
        if self._own_record_unchanged(file):
            return text  # the branch holds this file as our own last commit of it wrote it
        is_own = is_own_commit(self.config, self.own_commits)
        record = recorded_blocks(self._git_or_none, self._head or self.head(), file, is_own)
        changed = {key: record.get(key) for key in keys if held.get(key) != record.get(key)}
        if not changed:
            return text
        try:
            return yamlio.set_blocks(text, changed, file)
        except PlangateError:
            return text  # not an editable mapping: the edit itself will refuse it

    def _read_unowned(self, file: str, text: str) -> bool:
        """Did the history index read exactly this text at ``file`` and find no
        ``execution:``/``approval:`` block in it? Its blob id binds the bytes, so the index's
        parse answers and the text is not parsed again (issue 17: a burst's thousand texts
        outgrow the parse cache, and each was parsed twice)."""
        from controller.git.objects import blob_id

        state = self.index.plans.get(str(PurePosixPath(file).parent))
        if state is None or state.owned or state.file != file or state.blob is None:
            return False
        return state.blob == blob_id(text.encode("utf-8"))

    def _own_record_unchanged(self, file: str) -> bool:
        """Is ``file`` at ``_head`` as this process's own last commit of it wrote it, every
        commit since being this process's own too (none of which wrote it)? Then that commit
        is the controller's record of the file, in its current life, and the blocks the file
        holds are the record's: no `git log` of the path is needed (issue 17: a burst's
        outcome commits each read the path's history, 20% of the daemon's time in a
        1,000-plan merge). Any commit of someone else's on the way: False, and the history
        is read as ever."""
        commit, wrote = self._head, self._last_made.get(file)
        for _ in range(len(self._made)):
            if wrote is None or commit not in self._made:
                return False
            if commit == wrote:
                return True
            parent, paths = self._made[commit]
            if file in paths:
                return False
            commit = parent
        return False

    def _note_made(self, sha: str, parent: str, files: dict[str, bytes | None]) -> None:
        """Remember a commit this process made (the last :data:`MADE_KEPT`)."""
        self._made[sha] = (parent, frozenset(files))
        for path in files:
            self._last_made[path] = sha
        while len(self._made) > MADE_KEPT:
            oldest = next(iter(self._made))
            for path in self._made.pop(oldest)[1]:
                if self._last_made.get(path) == oldest:
                    del self._last_made[path]

    # --- several plans' events in one commit (docs/formats.md, "Controller commits") ------

    def _batching(self, *, first_alone: bool, least: int | None = None) -> None:
        """From now until :meth:`_flush` (the end of the pass), events are committed together:
        when the oldest waits ``execution.batch_window`` or ``BATCH_MAX`` are waiting.
        ``first_alone``: the first event is committed at once (a lone approval never waits
        for a batch)."""
        self._batch = _Batch(
            first_alone=first_alone,
            least=BATCH_MIN if least is None else least,
            window=self.config.execution.batch_window,
        )

    def _flush(self, *, stop: bool = False) -> None:
        """Commit the waiting events (one commit), with the outcomes of runs that ended
        meanwhile (:meth:`_join_finished`); ``stop``: and stop batching."""
        batch = self._batch
        if batch is None:
            return
        batch.hold = True  # the outcomes joining do not flush the batch themselves
        try:
            joined = self._join_finished()
        finally:
            batch.hold = False
        entries, batch.entries, batch.since = batch.entries, [], None
        if stop:
            self._batch = None
        if not entries:
            return
        try:
            self._commit_entries(entries, 2 if joined else batch.least)
        except _Moved:
            _dropped(entries, retry=True)
            raise
        except BaseException:
            _dropped(entries, retry=False)
            raise

    def _join_finished(self) -> int:
        """Stage the outcomes waiting for a commit into the batch (how many);
        :class:`~controller.service.outcomes.Outcomes` has them."""
        return 0

    def _drop_batch(self) -> None:
        """The branch moved or a pass failed: nothing waiting is committed (the next pass
        decides again from the new history; an outcome waits for the next commit)."""
        if self._batch is not None:
            _dropped(self._batch.entries, retry=True)
        self._batch = None

    def _commit_entries(self, entries: list[_Entry], least: int = 2) -> str:
        folders = self._folders_on_branch([path for e in entries for path in e.files])
        tree_only: set[str] = set()  # logs committed, their checkout left out
        for entry in entries:  # a log the branch has no room for is left out, the event is not
            for path in [p for p in entry.files if PurePosixPath(p).name == LOG_NAME]:
                why = self._unwritable({path: entry.files[path]}, folders)
                if why is None:
                    continue
                if path in folders:  # a folder on the branch: the commit would delete it
                    del entry.files[path]
                    self.log.warning("log_not_written", plan=entry.plan_id, reason=why)
                else:  # only the working tree is in the way (a FIFO, a folder, a link on the
                    # way): the commit holds the log, the tree keeps what is there (round
                    # 106: the record lost its log); the checkout never opens or replaces it
                    self.log.warning("log_not_checked_out", plan=entry.plan_id, reason=why)
                    tree_only.add(path)
        blocked = [
            (e, why)
            for e in entries
            if (why := self._unwritable(_without(e.files, tree_only), folders)) is not None
        ]
        if blocked:  # only those plans wait; the others are committed as ever
            for entry, why in blocked:
                self._wait(entry.plan_id, why)
            _dropped([entry for entry, _ in blocked], retry=True)
            entries = [e for e in entries if all(e is not b for b, _ in blocked)]
            if not entries:
                return self._head
        if 1 < len(entries) < least:  # a few: as many commits, each read as before
            return [self._commit_entries([entry]) for entry in entries][-1]
        message = entries[0].message if len(entries) == 1 else self._batch_message(entries)
        if len(entries) > 1 and len(message.encode("utf-8")) > MAX_MESSAGE_BYTES - SEAL_BYTES:
            half = len(entries) // 2  # a message stays within 64 KiB: the batch in parts
            return [self._commit_entries(part) for part in (entries[:half], entries[half:])][-1]
        files: dict[str, bytes | None] = {}
        for entry in entries:
            files.update(entry.files)

        made: list[str] = []

        def on_commit(sha: str) -> None:
            made.append(sha)
            with self.index.jobs_together():  # the batch's job rows: one fsync
                for entry in entries:
                    if entry.on_commit is not None:
                        entry.on_commit(sha)

        def before_ref(sha: str) -> None:  # the commit is made, the branch not moved yet
            with self.index.jobs_together():  # the batch's job rows: one fsync
                for entry in entries:
                    if entry.before_ref is not None:
                        entry.before_ref(sha)

        def before_index() -> None:  # local mode: the branch has the commit
            executed = [entry.executed for entry in entries if entry.executed is not None]
            if executed:  # durable before any of them is published (at most once)
                self.state.record_executed_many(executed, made[-1])
            for entry in entries:
                if entry.before_index is not None:
                    entry.before_index()

        def set_aside(sha: str, exc: PushRefused) -> None:  # one plan's event, refused
            if len(entries) == 1:
                self._set_aside(entries[0].plan_id, entries[0].event, sha, exc)

        # a run's record (its log; a run event's plan file, whose execution: block) is
        # written over nobody's bytes unsaved (round 122: _save_displaced)
        displace = [
            path
            for entry in entries
            for path in entry.files
            if path not in tree_only
            and (PurePosixPath(path).name == LOG_NAME or entry.event in RUN_EVENTS)
        ]
        try:
            sha = self._write(
                files,
                self._head,
                message,
                on_commit,
                before_index,
                before_ref,
                refused=set_aside,
                displace=displace,
            )
        except PushRefused as exc:
            if len(entries) > 1:  # a batch: one plan per commit, so only the refusing one waits
                self.log.warning("batch_refused", plans=len(entries), reason=exc.reason)
                return [self._commit_entries([entry]) for entry in entries][-1]
            _dropped(entries, retry=False)  # its plan waits (set aside); the pass goes on
            return self._head
        except (OSError, StorageFailed) as exc:
            if made:  # on the branch: the files it wrote lag (recovered as after a kill)
                raise
            return self._not_written(entries, exc)
        for entry in entries:
            entry.committed = True
        published = [e.plan_id for e in entries if self._publishes_refused(e.plan_id, e.event)]
        if published:  # a commit of a refused plan went through: it waits no more
            self.refused.release(published)
            self.log.info("refusal_cleared", plans=published)
        with self.index.jobs_together():
            for entry in entries:
                self._notify(entry, sha)
                if entry.after is not None:
                    entry.after(sha)
        return sha

    def _not_written(self, entries: list[_Entry], exc: OSError | StorageFailed) -> str:
        """A write of this commit failed before the branch moved (round 56: a full disk, a
        file size limit, a damaged journal entry; the pass died with ``OSError``): a batch is
        tried one plan per commit, and a plan whose own commit cannot be written waits with
        a coded error (E_STORAGE) while the others go on."""
        if len(entries) > 1:
            return [self._commit_entries([entry]) for entry in entries][-1]
        error = (
            exc
            if isinstance(exc, StorageFailed)
            else storage_failed(
                f"the commit of {entries[0].plan_id} (objects under {self.repo.git_dir})", exc
            )
        )
        self.log.error("commit_not_written", plan=entries[0].plan_id, error=str(error))
        self._wait(entries[0].plan_id, f"{error}; {error.remedy}")
        _dropped(entries, retry=False)
        return self._head

    def _folders_on_branch(self, paths: list[str]) -> set[str]:
        """Which of ``paths`` are folders on the branch (asked together: a batch's files)."""
        return self.repo.trees_among(self._head, paths) if self._head else set()

    def _unwritable(
        self, files: dict[str, bytes | None], folders: set[str] | None = None
    ) -> str | None:
        """Why a file of this event cannot be written without destroying something (None:
        it can): a folder where the file goes, on the branch (the commit would delete what
        it holds) or in the working tree (the write would fail half done, leaving the tree
        and index stale), or a FIFO or device there. The plan waits with E_UNSAFE_PATH until
        it is gone; nothing is committed for it meanwhile (round 12)."""
        import os
        import stat

        for path, data in files.items():
            if data is None:
                continue
            local = self.repo.path / path
            try:
                os.close(fsutil.open_folder(self.repo.path, local.parent))
            except FileNotFoundError:
                pass  # the folder is made when the file is written
            except PlangateError as exc:  # a link or file where a folder on the way should be
                return f"{exc.code}: {exc.message}"
            except OSError as exc:
                return f"E_UNSAFE_PATH: {path}: {exc.strerror}"
            try:
                mode = os.lstat(local).st_mode
            except FileNotFoundError:
                mode = None
            except OSError as exc:
                return f"E_UNSAFE_PATH: {path}: {exc.strerror}"
            if mode is not None and not (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
                return (
                    f"E_UNSAFE_PATH: {path} is a folder or special file in the working tree; "
                    "plangate never writes over it (remove it)"
                )
            if path in (self._folders_on_branch([path]) if folders is None else folders):
                return (
                    f"E_UNSAFE_PATH: {path} is a folder on the branch; plangate never writes "
                    "a file over it, which would delete what it holds (remove it)"
                )
        return None

    def _batch_message(self, entries: list[_Entry]) -> str:
        """One trailer group per plan, each redacted around its own plan's quotes (round 66:
        a batched outcome's ``Plan-Note`` was redacted whole, unlike the commit of its own)."""
        from controller.errors import redacted_around
        from controller.execution.secrets import redactor_for
        from controller.git.message import GIT_TRAILERS, batch_message, note, one_line

        text = redactor_for(self.config).text
        groups = []
        for entry in entries:

            def redact(value: str, quotes: tuple[str, ...] = entry.quotes) -> str:
                return redacted_around(value, quotes, text)

            extra = [(EVENT_TRAILER, entry.event)]
            if entry.body.strip():  # cut as a commit's body is (round 38)
                extra.append(("Plan-Note", note(entry.body, redact)))
            theirs = [
                (k, v if k in GIT_TRAILERS else one_line(v, redact)) for k, v in entry.trailers
            ]
            groups.append([("Plan", plan_text(entry.plan_id)), *extra, *theirs])
        shared = [("Controller", self.commit_controller())]
        return batch_message(groups, shared)  # each group redacted above, by its own quotes

    def _notify(self, entry: _Entry, sha: str) -> None:
        """Queue the notify: message for a commit just made (never waits for the network),
        its message in the recorded form the commit gives it (``entry.quotes``, round 66)."""
        event, plan_id, plan, body = entry.event, entry.plan_id, entry.status, entry.body
        name = notify.EVENTS.get(event)
        if event == "freeze" and plan.status == "pending_approval":
            name = "awaiting-approval"
        if name is None or (not self.config.notify.urls and not self.config.notify.url_env):
            return
        approval = plan.block("approval")
        approvers = _posted_approvers(approval)
        by = approval.get("by") if isinstance(approval.get("by"), str) else None
        if name == "partial" and approvers:
            by = approvers[-1]  # who just voted (round 117: the post named nobody)
        policy_block = plan.block("frozen").get("policy")
        needs = ""
        if name == "awaiting-approval" and isinstance(policy_block, dict):
            needs = "needs " + policy.describe_record(policy_block)
        self.notifier.send(
            name,
            plan_id,
            quotes=entry.quotes,
            hash=entry.plan_hash,
            status=plan.status,
            commit=sha,
            by=by,
            approvers=approvers or None,
            missing=approval.get("missing") if name == "partial" else None,
            message=body or None,
            needs=needs or None,
            controller=self.instance_id(),
        )

    def _message(
        self,
        event: str,
        plan_id: str,
        plan_hash: str | None,
        status: str | None,
        body: str,
        approved_by: Sequence[str],
        approval_commit: str | None,
        extra_trailers: dict[str, str] | None = None,
        quotes: tuple[str, ...] = (),
    ) -> str:
        from controller.errors import redacted_around
        from controller.execution.secrets import redactor_for
        from controller.git.message import commit_message

        named = plan_text(plan_id)  # one injective text for the path (round 50)
        trailers = [("Plan", named)]
        trailers += self._trailers(plan_hash, status, approved_by, approval_commit, extra_trailers)
        # Two controllers making the same decision in the same second would otherwise create
        # byte-identical commits, and each would take the other's start commit for its own.
        trailers.append(("Controller", self.commit_controller()))
        # Every value on one line, hidden characters (NUL, which git refuses, line breaks that
        # would start a forged trailer) escaped: controller.git.message.
        text = redactor_for(self.config).text

        def redact(value: str) -> str:  # the author's text the body quotes as written
            return redacted_around(value, quotes, text)

        return commit_message(f"plangate: {event} {named}", body, trailers, redact)

    @staticmethod
    def _trailers(
        plan_hash: str | None,
        status: str | None,
        approved_by: Sequence[str],
        approval_commit: str | None,
        extra_trailers: dict[str, str] | None,
    ) -> list[tuple[str, str]]:
        """One plan's trailers after ``Plan:`` (a commit's, or its group in a batch): one
        ``Approved-By:`` per approver (:func:`_approvers`)."""
        trailers = [("Plan-Hash", plan_hash or "none"), ("Plan-Status", status or "unknown")]
        trailers += [("Approved-By", who) for who in approved_by]
        if approval_commit:
            trailers.append(("Approval-Commit", approval_commit))
        return trailers + list((extra_trailers or {}).items())  # one line each: commit_message

    def _write(
        self,
        files: dict[str, bytes | None],
        head: str,
        message: str,
        on_commit: Callable[[str], None] | None = None,
        before_index: Callable[[], None] | None = None,
        before_ref: Callable[[str], None] | None = None,
        *,
        worktree: bool = True,
        refused: Callable[[str, PushRefused], None] | None = None,
        displace: Collection[str] = (),
    ) -> str:
        holds: list[IndexHold] = []
        # the mode each file keeps in the commit (100644 or 100755, never normalised: round
        # 87), the index entries and the working-tree files given the same
        modes: dict[str, int] = {}
        if self.config.remote is None and worktree:
            self._catch_up_tree()  # before its note is replaced by this commit's
            modes = self.repo.file_modes(head, list(files))
            # a crash before the writes: recover_index
            self.repo.note_index_update(files, head, modes)

            def hold(sha: str) -> None:
                """index.lock, from before the branch moves until the index holds the
                commit's entries: a human's `git commit` between the two would build its
                tree from the older entries and take the controller's change back. Under
                it, before the branch moves, what the commit's checkout would write over
                that is nobody's record is saved (:meth:`_save_displaced`)."""
                holds.append(self.repo.hold_index(files, modes))
                self._save_displaced(sha, head, files, displace)

            before_ref = hold if before_ref is None else _then(before_ref, hold)  # last
        written: list[str] = []  # the message as sealed: what the index reads (round 98)
        try:
            sha = self.repo.commit_files(
                branch=self.branch,
                parent=head,
                files=files,
                message=message,
                author=self.identity,
                before_ref=_then(self.own_commits.record, before_ref),  # its own, by record
                seal=partial(self._sealed, parent=head, kept=written),  # and by seal
            )
            if sha is None:
                raise _Moved
            if self.repo.forged_shared:  # the shared store kept planted bytes (round 60)
                self._warn_forged(self.repo.forged_shared, commit=sha, files=sorted(files))
            if on_commit is not None:
                on_commit(sha)
            if self.config.remote is None:
                write = partial(self.repo.write_worktree, modes=modes)
                lagging = worktree and not (
                    self._checkout_follows(sha, files) and self._write_tree(write, files)
                )
                if before_index is not None:
                    before_index()
                if worktree and not lagging:
                    index = partial(
                        self.repo.set_index_entries, hold=holds[0], stored=True, modes=modes
                    )
                    self._write_tree(index, files)  # the commit stored the blobs
        finally:
            for held in holds:
                held.release()  # unless written: nothing landed, or the tree lags
        if self.config.remote is not None:
            try:
                pushed = self.pushed(head, new=True)
            except PushHeld:  # on the remote, but another process put it there (round 91)
                self._disown_start(sha)
                raise
            except PushRefused as exc:  # the remote's hook or policy declined it (round 40)
                if refused is not None:  # set aside before it leaves the local branch
                    refused(sha, exc)
                self.repo.update_ref(f"refs/heads/{self.branch}", head, sha)
                raise
            if not pushed:
                self.repo.update_ref(f"refs/heads/{self.branch}", head, sha)
                raise _Moved
        self._note_made(sha, head, files)
        self._index_own_commit(sha, head, files, written[-1] if written else message)
        self._sources.advance(head, sha, files)
        self._head = sha
        return sha

    def _save_displaced(
        self, sha: str, head: str, files: dict[str, bytes | None], paths: Collection[str]
    ) -> None:
        """Save what the checkout of the commit ``sha`` (on ``head``) would write over at
        ``paths`` (a run's record: its log, a run event's plan file) that is not what the
        controller itself last left there: a person's or an agent's edit of the working-tree
        file, a staged one, a link or FIFO put there (round 122, ``log-edit-overwritten``).
        The bytes go to ``.git/plangate-displaced/<plan folder>/<stamp>-<commit>/``
        (:mod:`controller.git.displaced`), each plan's are logged (``worktree_displaced``)
        and its status row names them (``displaced``). Nothing when the checkout is not on
        the branch at ``head`` (nothing is written there then) or holds the controller's
        own bytes. A copy that cannot be written stops the commit (OSError: it waits,
        E_STORAGE) rather than lose the bytes."""
        from controller.git import displaced

        at = {path: files[path] for path in paths if path in files}
        if not at or not self.repo.checked_out_at(self.branch, head):
            return
        found = self.repo.displaced_versions(at, head, self._own_blob, self._blob_at_index)
        if not found:
            return
        stamp = displaced.stamp_name(sha)
        saved: dict[str, list[str]] = {}
        for path, suffix, data in found:
            folder, _, name = path.rpartition("/")
            target = displaced.save(self.repo.git_dir, folder, stamp, name + suffix, data)
            saved.setdefault(folder, []).append(displaced.shown(target, self.repo.path))
        for folder, names in saved.items():
            self.log.warning("worktree_displaced", plan=folder, commit=sha, saved=names)

    def _own_blob(self, path: str) -> str | None:
        """The blob the controller's own last commit of ``path`` left (this process's last
        commit of it; else, after a restart, the plan file's ``controller_blob`` or the log
        its own last commit wrote, :func:`~controller.git.ownrecord.last_own`)."""
        made = self._last_made.get(path)
        if made is not None:
            return self.repo.blob_sha(made, path)
        folder = str(PurePosixPath(path).parent)
        state = self.index.plans.get(folder)
        if state is not None and state.file == path:
            return state.controller_blob or None
        if PurePosixPath(path).name != LOG_NAME:
            return None
        from controller.git.ownrecord import last_own, life_of, written
        from controller.service.statedir import is_own_commit

        try:
            head = self._head or self.head()
            is_own = is_own_commit(self.config, self.own_commits)
            plan_file = state.file if state is not None else f"{folder}/PLAN.yml"
            log = life_of(self._git_or_none, head, plan_file, is_own).log
            found = last_own(log, is_own)
            record = next((r for r in log if found is not None and r.sha == found[0]), None)
            own = None if record is None else written(self._git_or_none, record, path)
        except PlangateError:
            return None
        return None if own is None else blob_id(own.encode("utf-8", "surrogateescape"))

    def _disown_start(self, sha: str) -> None:
        """A commit of ours the remote already held (:class:`PushHeld`) is no start of ours:
        the job row written before its branch moved goes, so no pass takes the run for its
        own (whoever pushed it runs it)."""
        for plan_id, row in self.index.jobs().items():
            if isinstance(row, dict) and row.get("start") == sha:
                self.index.set_job(plan_id, None)
                self.log.error("start_not_ours", plan=plan_id, start=sha)

    def _sealed(self, tree: str, message: str, *, parent: str, kept: list[str]) -> str:
        """The message with its seal (a restored backup knows its commits by it), kept for
        the index: it reads the commit as a scan would, sealed (an unsealed commit in the
        record is one trust on first use adopted: ``Lifecycle.unproven``)."""
        kept.append(self.commit_seal.seal(tree, parent, message))
        return kept[-1]

    def _write_tree(
        self, write: Callable[[dict[str, bytes | None]], None], files: dict[str, bytes | None]
    ) -> bool:
        """One write of a landed commit's files into the working tree or the index; a failed
        one (a full disk) is noted, as a kill there is, and made good by the next pass
        (:meth:`_catch_up_tree`): the commit is on the branch, the pass goes on (round 56)."""
        try:
            write(files)
            return True
        except OSError as exc:
            self.log.error("worktree_not_written", files=sorted(files), error=str(exc))
            self._tree_lags = True
            return False

    def _checkout_follows(self, sha: str, files: dict[str, bytes | None]) -> bool:
        """Is the shared checkout on the watched branch at ``sha``, the commit just made
        (asked under the ``index.lock`` held since before the branch moved)? When it left
        the branch during a run (a tool's ``git checkout -b side``, ``--detach``), the
        commit is on the branch alone: neither the working tree nor the index of that
        checkout is written, so nothing of the controller's waits there for the next plain
        ``git commit`` and nobody's file at those paths is overwritten (round 116,
        outcome-staged-on-foreign-checkout). The note kept for a kill stays: the next
        commit's catch-up writes what the checkout's HEAD holds by then (a switch back with
        ``git switch`` has git itself check the files out)."""
        if self.repo.checked_out_at(self.branch, sha):
            return True
        self.log.warning(
            "worktree_not_written",
            files=sorted(files),
            reason=f"the working tree is not on {self.branch} at {sha[:12]}",
        )
        self._tree_lags = True
        return False

    def _catch_up_tree(self) -> None:
        """Write what a landed commit could not write into the working tree and the index
        (:meth:`_write_tree`), from the note kept for a kill (``recover_index``)."""
        if not self._tree_lags or self.config.remote is not None:
            return
        try:
            self.repo.recover_index()
        except (OSError, PlangateError) as exc:
            self.log.error("worktree_not_written", error=str(exc))
            return
        self._tree_lags = False

    def _blob_at_index(self, commit: str, path: str) -> str | None:
        """``path``'s blob at ``commit``, the commit the index was scanned to: a plan file's
        is the one the index holds (no lookup through git for each plan of a batch)."""
        state = self.index.plans.get(str(PurePosixPath(path).parent))
        if state is not None and state.file == path and state.blob is not None:
            return state.blob
        return self.repo.blob_sha(commit, path)

    def _index_own_commit(
        self, sha: str, parent: str, files: dict[str, bytes | None], message: str
    ) -> None:
        """Apply our own commit to the index without asking git what we just did."""
        if self.index.meta("last_commit") != parent:
            self.index.scan(self.repo, sha)
            return
        policy = files.get(recorded.POLICY_PATH)
        if policy is not None:  # withdrawals from here on are judged by it (round 27)
            self.index.record_policy(blob_id(policy))
        now = self.repo.commit_time(sha)  # the commit's own date, as a scan reads it
        changes = [
            FileChange(
                path, self._blob_at_index(parent, path), None if data is None else blob_id(data)
            )
            for path, data in files.items()
        ]
        subject, _, rest = message.partition("\n")
        record = CommitRecord(
            sha,
            (parent,),
            self.identity,
            self.identity,
            now,
            now,
            subject,
            parse_trailers(rest),
            changes,
            rest.strip("\n"),
        )
        self.index.apply(self.repo, record)
        self.index.save(sha)

    def _taken_over(self, plan_id: str, start: str, head: str) -> str | None:
        """Has the branch moved this run on without this controller (round 51)? A commit
        after ``start`` under the controller's name that this controller did not make (by its
        record: a rebuilt host with a new state directory, another controller, or a human
        forging the name) with an end of the run another controller can make (a ``fail``, an
        ``abort`` the plan's file at that commit shows, of the run's version: the one rule the
        history index reads too, :func:`~controller.git.lifecycle.shows_end`, rounds 67-68;
        progress it did not make is anyone's, round 66), or a later
        start of the plan by anyone: the run is no longer this controller's to continue or
        to record. Says what the branch shows (None: still ours to run). Costs
        nothing while the plan's last commit, as the history index knows it, is the start
        (the common case: nobody touched the plan since) and the index noted no such commit
        naming the plan since (``PlanState.foreign_event``: one that changes no file of the
        plan, only its EXECUTION_LOG.md or a file beside it, leaves the last commit at the
        start); otherwise one path-limited log of the commits since the start. A forged
        ``fail`` or ``abort`` the file shows also stops the run (fails closed)."""
        state = self.index.plans.get(plan_id)
        foreign = state.foreign_event if state is not None else ""
        if foreign and self._moved_on_by(self.repo.commit(foreign), plan_id):
            return (
                f"a run event of the plan in {foreign[:12]} under the controller's "
                "name, made by not this controller (by its record)"
            )
        if state is not None and state.last_commit == start and not foreign:
            return None
        email = self.config.identity.email.lower()
        for record in self.repo.first_parent_log(start, head, [plan_id], newest_first=True):
            event = _events(record).get(plan_id)
            if not event or record.author.email.lower() != email:
                continue
            own = record.sha in self.own_commits
            if not own and event in RUN_EVENTS and self._another_holders(record):
                # round 94: another holder of a copy of the state directory (its key, or a
                # new one) claimed, moved on or ended the run: never this process's to record
                return (
                    f"{event} in {record.sha[:12]} ({record.subject}), made by another "
                    "process (sealed, not in this controller's record)"
                )
            moved = takes_over(event, own) if own else self._moved_on_by(record, plan_id)
            if moved:
                who = "this controller" if own else "not this controller (by its record)"
                return f"{event} in {record.sha[:12]} ({record.subject}), made by {who}"
        return None

    def _moved_on_by(self, record: CommitRecord, plan_id: str) -> bool:
        """Did a commit under the controller's name that it did not make move the plan's run
        on? Only as the history index reads it (round 68: the file at that commit shows the
        end, of the run's version; :meth:`~controller.git.lifecycle.Lifecycle.moved_on_by`):
        a trailer alone leaves the run going on."""
        state = self.index.plans.get(plan_id)
        job = self.index.jobs().get(plan_id) or {}
        version = job.get("plan_hash") or (state.hash if state is not None else None)
        return self.index.moved_on_by(self.repo, record, plan_id, version)

    def _drop_if_taken_over(self, plan_id: str, start: str, head: str) -> bool:
        """Drop the job (nothing more runs, nothing is committed for it) when the branch no
        longer shows its run as this controller's (:meth:`_taken_over`); True when dropped."""
        found = self._taken_over(plan_id, start, head)
        if found is None:
            return False
        self.index.set_job(plan_id, None)
        state = self.index.plans.get(plan_id)
        self.log.warning(
            "run_taken_over",
            plan=plan_id,
            start=start,
            status=state.status if state is not None else None,
            file_status=state.file_status if state is not None else None,
            found=found,
            reason="a commit after this run's start under the controller's name, which this "
            "controller did not make, recorded an outcome of the plan or moved it on (another "
            "host, a rebuilt state directory, or a forged commit): the run is dropped, "
            "nothing more runs and nothing is committed for it",
        )
        return True


#: What :meth:`Committing._commit_plan` returns for an edit waiting for its batch's commit.
PENDING = "pending"
#: How many events one commit holds (how long the oldest waits for others:
#: ``execution.batch_window``).
BATCH_MAX = 250
#: Fewer events than this waiting at the end of a pass are committed one by one (a batch
#: pays off in bursts); outcomes that finished together share a commit from two on.
BATCH_MIN = 8


@dataclass
class _Entry:
    """One plan's event, ready to commit alone or in a batch."""

    plan_id: str
    files: dict[str, bytes | None]
    message: str  # as a commit of its own
    trailers: list[tuple[str, str]]  # its group's, after Plan: and Plan-Event:
    event: str
    body: str
    status: Any
    plan_hash: str | None
    on_commit: Callable[[str], None] | None
    before_index: Callable[[], None] | None
    after: Callable[[str], None] | None
    #: called once if it is never committed: ``on_drop(retry)``, retry when nothing was written
    on_drop: Callable[[bool], None] | None = None
    #: (frozen hash, plan id) this start records as executed (local mode)
    executed: tuple[str, str] | None = None
    committed: bool = False
    #: called with the commit before the branch moves to it (a start's journal record)
    before_ref: Callable[[str], None] | None = None
    #: the plan author's text its body quotes, kept as written (round 65; notify: round 66)
    quotes: tuple[str, ...] = ()


def _then(
    first: Callable[[str], None], second: Callable[[str], None] | None
) -> Callable[[str], None]:
    if second is None:
        return first

    def both(sha: str) -> None:
        first(sha)
        second(sha)

    return both


def _dropped(entries: list[_Entry], *, retry: bool) -> None:
    for entry in entries:
        if not entry.committed and entry.on_drop is not None:
            drop, entry.on_drop = entry.on_drop, None
            drop(retry)


@dataclass
class _Batch:
    first_alone: bool
    #: fewer waiting events than this are committed one by one
    least: int = BATCH_MIN
    window: float = 0.2
    entries: list[_Entry] = field(default_factory=list)
    since: float | None = None
    #: outcomes are joining the batch: no flush until they are in
    hold: bool = False

    def due(self) -> bool:
        now = time.monotonic()
        if self.since is None:
            self.since = now
        return len(self.entries) >= BATCH_MAX or now - self.since >= self.window


def _without_execution(text: str) -> str:
    try:
        return yamlio.set_block(yamlio.read_yaml(text, "PLAN.yml"), "execution", None)
    except PlangateError:
        return text


def _with_execution(text: str, execution: dict[str, Any]) -> str | None:
    try:  # compared with the engine's last write (itself unchecked), never written
        doc = yamlio.read_yaml(text, "PLAN.yml")
        return yamlio.set_block(doc, "execution", execution, checked=False)
    except PlangateError:
        return None


def _set_status(text: str, status: str) -> str:
    return yamlio.set_scalar(yamlio.read_yaml(text, "PLAN.yml"), ("plan", "status"), status)


def _set_approval(record: dict[str, Any], status: str) -> Callable[[str], str | None]:
    def mutate(text: str) -> str | None:
        doc = yamlio.read_yaml(text, "PLAN.yml")
        plan = doc.data.get("plan") if isinstance(doc.data, dict) else None
        if not isinstance(plan, dict) or plan.get("status") != "approved":
            return None  # no longer an approval request: the next pass decides again
        return yamlio.edit(doc, {"approval": record}, {("plan", "status"): status})

    return mutate


def aborted_by(state: PlanState) -> dict[str, str] | None:
    """The ``Aborted-By:`` trailer of an abort commit: who asked for it."""
    return {"Aborted-By": state.abort_by} if state.abort_by else None


def _without(files: dict[str, bytes | None], paths: set[str]) -> dict[str, bytes | None]:
    return {path: data for path, data in files.items() if path not in paths} if paths else files


def _approvers(approved_by: str | None, approval: dict[str, Any]) -> tuple[str, ...]:
    """Whom a commit's ``Approved-By:`` trailers name: ``approved_by`` (the approval that met
    the policy) first, as a one-approver commit names it (every reader of one trailer reads
    the same), then each other approver the plan's ``approval:`` block counted for it
    (:func:`~controller.approval.quorum.approvers_of`; round 117,
    quorum-approvers-not-shown: a quorum's start and outcome commits named the last voter
    alone). Only when the block is that approval's (a gate's approver is no quorum's)."""
    from controller.approval.quorum import approvers_of

    if not approved_by:
        return ()
    if approval.get("by") != approved_by:
        return (approved_by,)
    return (approved_by, *(who for who in approvers_of(approval) if who != approved_by))


def _posted_approvers(approval: dict[str, Any]) -> list[str]:
    """The ``approvers`` a post names: those an approved run rests on (``by`` first), or a
    ``partial`` vote's counted votes so far (the newest last); none for other blocks (a
    refusal names its refused approver in ``by``, as before)."""
    from controller.approval.quorum import approvers_of

    return approvers_of(approval) if approval.get("status") in ("approved", "partial") else []


def _identity_of(policy: dict[str, Any] | None) -> str | None:
    """The controller identity a recorded policy names (None: none readable)."""
    identity = (policy or {}).get("identity")
    email = identity.get("email") if isinstance(identity, dict) else None
    return email if isinstance(email, str) and email else None
