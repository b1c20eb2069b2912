"""Freezing: a pending plan is frozen (its hash written), or marked ``invalid`` with its errors.

In local mode this includes adoption: a pending PLAN.yml an agent wrote but did not commit is
frozen and committed. A plan folder holding a PLAN.json, PLAN.toon or PLAN.md instead is
converted first, in a ``convert`` commit (:mod:`controller.service.sources`). An uncommitted
file is read once, as ``git add`` would store it (its ``working-tree-encoding``, line ends and
``ident``: round 78, an ``ISO-2022-JP`` plan git stores read as raw UTF-8 and never adopted),
and those bytes alone are judged and committed.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any

from controller import fsutil
from controller.approval import policy
from controller.display import visible
from controller.errors import (
    AttributeUnsupported,
    BlobTooLarge,
    GitError,
    PlangateError,
    Problem,
    YamlParseError,
)
from controller.git import conversion
from controller.git.conversion import Conversion
from controller.git.objects import blob_id, file_blob_id
from controller.git.ownrecord import recorded_blocks
from controller.plan import nested, plans, yamlio
from controller.service import sources
from controller.service.committing import Committing
from controller.service.core import _Moved

#: How many bytes of an uncommitted file are read per byte of ``limits.max_plan_bytes`` (of
#: :data:`~controller.plan.discovery.MAX_SOURCE_BYTES`) under a ``working-tree-encoding``:


#: blob id -> the folders of the nested plans a plan's bytes pin (:func:`_pinned_folders`)
_PINNED: dict[str, tuple[str, ...]] = {}


def _pinned_folders(sha: str, read: Callable[[], bytes]) -> tuple[str, ...]:
    """The folders (plain paths under the plans folder) of the nested plans the plan whose
    blob is ``sha`` pins, read once per blob; none for bytes no plan reader takes."""
    if sha in _PINNED:
        return _PINNED[sha]
    try:
        data = yamlio.read_yaml(read().decode("utf-8"), sha).data
        found = tuple(path.rstrip("/") for _, path, _ in nested.pins(data))
    except (PlangateError, UnicodeDecodeError, ValueError):
        found = ()
    safe = tuple(
        path
        for path in found
        if path and not path.startswith("/") and ".." not in PurePosixPath(path).parts
    )
    if len(_PINNED) > 4096:
        _PINNED.clear()
    _PINNED[sha] = safe
    return safe


def _as_pending(loaded: plans.LoadedPlan, path: Path, config: Any) -> plans.LoadedPlan:
    """``loaded`` with its status put back to ``pending_approval`` (a status the index
    ignored, :meth:`Freezing._freeze`), when it is a valid plan whose version is not frozen
    yet; else ``loaded`` as it is (nothing to freeze: no commit)."""
    if loaded.doc is None or not loaded.valid or loaded.frozen_hash == loaded.hash:
        return loaded
    text = yamlio.set_scalar(loaded.doc, ("plan", "status"), "pending_approval")
    pending = plans.validate_text(text, path, config)
    return pending if pending.valid and pending.status == "pending_approval" else loaded


class Freezing(Committing):
    """Freezes pending plans, committed or (local mode) left uncommitted by an agent."""

    def _untracked_plans(self) -> set[str]:
        """Local mode: PLAN.yml files in the working tree that the branch does not hold."""
        if self.config.remote is None and self.config.execution.adopt_untracked:
            # a plan's id is its folder
            return self._scanner.scan(self.index.plans.keys(), self._held_id)
        return set()

    def _freeze(
        self,
        file: str,
        *,
        adopt: bytes | None = None,
        first: bool = False,
        ignored: bool = False,
    ) -> None:
        """Freeze a pending plan, or mark it ``invalid`` with its errors; ``first``: a plan
        that never had a valid status is marked invalid too when it does not validate. A
        file that cannot carry a status is reported (:mod:`controller.service.unreadable`).
        ``adopt``: an uncommitted file's bytes as ``git add`` would store them (the adoption
        read them once: :meth:`_as_added`), frozen and committed. ``ignored``: the plan is
        pending although its file says another status, one the index ignored (a withdrawal
        by someone not entitled, an illegal transition): a version it holds that is not
        frozen yet is frozen all the same, its file's status put back to
        ``pending_approval`` in the freeze commit (round 126, ``undone-edit-gives-
        withdrawal``: Mallory's edit frozen, her ``git revert`` of it and her ignored
        rejection in one push left the agent's version unfrozen under her v2's block, and
        Bob's approval of it was refused ``E_PLAN_HASH_MISMATCH``). Nothing is written when
        the version is frozen already: the ignored status stays, as before."""
        event = {"name": "freeze"}
        plan_id = str(PurePosixPath(file).parent)
        blocked: list[Problem] = []
        hidden = self._review_hidden(file, self._head or self.head())
        if hidden is not None:
            self.unreadable.report(plan_id, file, self._blob_of(file, adopt), hidden)
            return

        def mutate(text: str) -> str | None:
            loaded = plans.validate_text(text, self.repo.path / file, self.config)
            # whether a status can be spliced in; what is written below is read back first
            blocker = plans.status_blocker(loaded, checked=False)
            if blocker is not None:
                blocked.append(blocker)
                return None
            if ignored and loaded.status != "pending_approval":
                loaded = _as_pending(loaded, self.repo.path / file, self.config)
            if loaded.status != "pending_approval" and not (first and loaded.problems):
                return None
            try:
                frozen = edited(loaded)
            except YamlParseError as exc:  # a layout the edit gets wrong (round 74)
                blocked.append(plans.unwritable(loaded, exc))
                return None
            if frozen is not None:  # the author's text its checkout would not give back is
                self.repo.check_checkouts({file: frozen.encode()})  # never frozen (round 79)
            return frozen

        def edited(loaded: plans.LoadedPlan) -> str | None:
            facts = (
                policy.frozen_facts(plan_id, loaded.data, self.config, self.repo.path / file)
                if loaded.valid
                else None
            )
            owned = self._recorded_blocks(file, loaded.data)
            outcome = plans.freeze_text(loaded, facts=facts, owned=owned)
            if loaded.problems:
                event["name"] = "invalid"
                # the validation block through the redactor of every record (round 49)
                from controller.execution.secrets import redactor_for

                redact = redactor_for(self.config).text
                return plans.invalid_text(loaded, self.config.limits.max_plan_bytes, redact=redact)
            return outcome.text if outcome.changed or adopt is not None else None

        def logged(sha: str) -> None:  # when the commit is made (it may wait for a batch)
            name = "plan_" + ("frozen" if event["name"] == "freeze" else "invalid")
            self.log.info(name, plan=plan_id, commit=sha)

        try:
            self._commit_plan(
                file, event["name"], mutate, None, "", adopt=adopt, event_ref=event, after=logged
            )
        except UnicodeDecodeError as exc:
            blocked.append(Problem("E_YAML_PARSE", f"not UTF-8 text (byte {exc.start})"))
        if blocked:
            self.unreadable.report(plan_id, file, self._blob_of(file, adopt), blocked[0])
            return
        self.unreadable.forget(plan_id)

    def _review_hidden(self, file: str, commit: str | None) -> Problem | None:
        """``E_ATTRIBUTE_UNSUPPORTED`` when the ``.gitattributes`` committed in ``commit``
        hide every line of ``file`` from a review (``-diff``, ``binary``, a forge's
        "generated"): such a version is not frozen, and no approval of it counts (round 113,
        ``gitattributes-hides-plan-diff``: git showed "Binary files differ", the plan was
        frozen with no note and ran on the approval). The plan file of each nested plan
        ``file`` pins is part of what an approval approves, and is judged the same way
        (round 121, ``nested-plan-diff-hidden-by-attributes``: a pinned kid whose folder
        said ``PLAN.yml -diff`` ran under the parent's approval)."""
        if commit is None:
            return None
        hidden = self._hidden_from_review(file, commit)
        if hidden is not None:
            return hidden
        for child in self._pinned_files(file, commit):
            hidden = self._hidden_from_review(child, commit, pinned_by=file)
            if hidden is not None:
                return hidden
        return None

    def _hidden_from_review(
        self, file: str, commit: str, *, pinned_by: str | None = None, what: str = "plan file"
    ) -> Problem | None:
        return sources.review_hidden(self.repo, commit, file, pinned_by=pinned_by, what=what)

    def _pinned_files(self, file: str, commit: str) -> list[str]:
        """The plan file of each nested plan ``file`` pins in ``commit`` (its pins read from
        the committed bytes; none when they are no plan)."""
        sha = self.repo.blob_sha(commit, file)
        if sha is None:
            return []
        found = []
        for folder in _pinned_folders(sha, lambda: self.repo.blob(sha)):
            for name in plans.PLAN_FILES:
                child = f"{folder}/{name}"
                if self.repo.blob_sha(commit, child) is not None:
                    found.append(child)
        return found

    def _recorded_blocks(self, file: str, data: Any) -> dict[str, Any] | None:
        """The ``execution:``/``approval:`` blocks of ``file`` as this controller's own
        commits wrote them (round 61: an author's forged record is not frozen in); None when
        the file holds none (nothing forged to keep) or without a record of its commits."""
        held = isinstance(data, dict) and any(data.get(k) for k in plans.OWNED_BLOCKS)
        if not held or not self.own_commits.known:
            return None
        is_own = lambda record: record.sha in self.own_commits  # noqa: E731
        return recorded_blocks(self._git_or_none, self._head or self.head(), file, is_own)

    def _blob_of(self, file: str, adopt: bytes | None) -> str | None:
        if adopt is not None:  # an uncommitted file: the id git would give the bytes it stores
            if len(adopt) > self.config.limits.max_plan_bytes:  # maybe read in part: the file's
                return file_blob_id(self.repo.path / file)
            return blob_id(adopt)
        state = self.index.plans.get(str(PurePosixPath(file).parent))
        return state.blob if state is not None else None

    def _adopt_settled(self, paths: list[str]) -> None:
        """Local mode: adopt each of ``paths`` (uncommitted plan files and sources, left alone
        long enough), their attributes asked of git at once: one ``check-attr`` a pass."""
        conversions = self.repo.conversions(paths)
        for path in paths:
            self._adopt(path, conversions.get(path))

    def _adopt(self, path: str, how: Conversion | None = None) -> None:
        """Local mode: freeze (and commit) a pending PLAN.yml an agent wrote but did not
        commit, judged and committed as ``git add`` would store it (``how``: its conversion,
        if already asked)."""
        file = self.repo.path / path
        if file.is_symlink() or not file.is_file():
            return  # never follow a link or block on a FIFO an agent left in the plans dir
        if sources.is_source(path):
            self._adopt_source(path, file, how)
            return
        plan_id = str(PurePosixPath(path).parent)
        beside = self._claims_beside(path)
        if beside:  # the commit would make the folder E_PLAN_AMBIGUOUS (round 73)
            shown = " and ".join(map(visible, beside))
            self._wait(
                plan_id,
                f"E_PLAN_AMBIGUOUS: {shown} claims the place of {path}: neither would be read "
                "or run; delete or rename it",
            )
            return
        try:
            added = self._as_added(path, self.config.limits.max_plan_bytes, how)
            loaded = plans.load_plan(file, self.config, data=added)
        except AttributeUnsupported as exc:  # bytes `git add` refuses: never stored by a guess
            self._wait(plan_id, f"cannot adopt {path}: {exc}")
            return
        except (OSError, PlangateError):
            return  # gone, or a link or FIFO swapped in since: never followed
        blocker = plans.status_blocker(loaded)
        if blocker is not None:  # not committed: only the log can say so
            self.unreadable.report(plan_id, path, self._blob_of(path, added), blocker)
        elif loaded.status == "pending_approval":
            try:
                self._freeze(path, adopt=added)
            except (GitError, _Moved):
                raise
            except PlangateError as exc:
                self._wait(plan_id, f"cannot adopt {path}: {exc}")

    def _as_added(self, path: str, limit: int, how: Conversion | None) -> bytes:
        """The uncommitted ``path`` as ``git add`` would store it (git's built-in conversions,
        :meth:`~controller.git.worktree.WorkTree.as_committed`), read once: the adoption
        judges these bytes alone and commits them (round 78: its raw bytes, read as UTF-8,
        left a plan git stores in ``ISO-2022-JP``, ``UTF-32``, ``UTF-7`` ... unreadable or
        never pending; the raw reading of a UTF-7 file may say another status than git's).
        Bounded: more than ``limit`` bytes (times :data:`conversion.WIDEST` under an encoding) are
        returned as read, over the limit, never converted. Never through a link.
        :class:`~controller.errors.AttributeUnsupported`: bytes ``git add`` refuses."""
        if how is None:
            how = self.repo.conversions([path])[path]
        bound = limit * conversion.WIDEST if how.encoding else limit
        raw = fsutil.read_regular(self.repo.path / path, bound, root=self.repo.path)
        if len(raw) > bound:
            return raw  # too large in any spelling: its reader says E_PLAN_TOO_LARGE
        return self.repo.as_committed(path, raw, adding=True, how=how)

    # --- plans written in another format (PLAN.json, PLAN.toon, PLAN.md) ----------------

    def _convert_sources(self) -> None:
        """Convert committed sources in folders without PLAN.yml, one convert commit each."""
        for plan_id, source in sorted(self._sources.committed(self.repo, self._head).items()):
            if plans.unsafe_name(source or plan_id) is not None:
                continue  # E_UNSAFE_PATH: recorded by the history index, never read
            if not source:  # beside a claim of PLAN.yml's place, or a second source
                code, why = self._sources.held.get(plan_id, ("E_PLAN_AMBIGUOUS", "keep one"))
                self._wait(plan_id, f"{code}: {why}")
                continue
            blob = self.repo.blob_sha(self._head, source)
            if blob is None or (source, blob) in self._sources.refused:
                continue
            try:
                data = self.repo.blob(blob)
            except BlobTooLarge as exc:  # never read (round 32): only this folder waits
                self._sources.refused[(source, blob)] = str(exc)
                self._wait(plan_id, f"cannot convert {source}: {exc}")
                continue
            self._commit_conversion(plan_id, source, data, blob, True)

    def _adopt_source(self, path: str, file: Path, how: Conversion | None = None) -> None:
        """Local mode: an uncommitted PLAN.json & co. in a folder without PLAN.yml, converted
        from its bytes as ``git add`` would store them (:meth:`_as_added`)."""
        plan_id = str(PurePosixPath(path).parent)
        try:  # every entry of the folder, as the committed sources are judged (round 73)
            verdict = sources.source_verdict(plan_id, os.listdir(file.parent))
        except OSError:
            return
        if verdict is None:
            return  # a plan file is there: the plan is that file
        if verdict[0]:  # beside a claim of PLAN.yml's place, or a second source
            self._wait(plan_id, f"{verdict[0]}: {verdict[1]}")
            return
        if self.repo.blob_sha(self._head, path) is not None:
            return  # committed: converted from the branch, its authors known
        try:  # bounded: never read a huge file whole
            data = self._as_added(path, sources.MAX_SOURCE_BYTES, how)
        except AttributeUnsupported as exc:  # bytes `git add` refuses: never stored by a guess
            self._wait(plan_id, f"cannot adopt {path}: {exc}")
            return
        except (OSError, PlangateError):
            return  # gone, or a link or FIFO swapped in since: never followed
        key = hashlib.sha256(data).hexdigest()
        if (path, key) not in self._sources.refused and self._commit_conversion(
            plan_id, path, data, key, False
        ):
            file.unlink(missing_ok=True)  # the plan is its PLAN.yml from now on

    def _check_writable(self, path: str) -> None:
        """A file a conversion writes (its nested plans' ``step-N/PLAN.yml`` too) must land
        in folders, never through a link or over a file: a ``step-2`` the agent made a
        symlink (committed, or only in the working tree) would send the write into another
        plan or out of the repository. E_UNSAFE_PATH otherwise. The working tree's half: the
        branch's is :func:`controller.service.sources.written_held`, asked before."""
        from controller.errors import UnsafePath

        parts = PurePosixPath(path).parts
        for depth in range(1, len(parts)):
            prefix = "/".join(parts[:depth])
            local = self.repo.path / prefix
            if local.is_symlink() or (local.exists() and not local.is_dir()):
                raise UnsafePath(f"{prefix} is a link or a file in the working tree")
        if (self.repo.path / path).is_symlink():
            raise UnsafePath(f"{path} is a link in the working tree")
        blocked = self._unwritable({path: b""})
        if blocked is not None:  # a folder or special file where the file goes (round 12)
            raise UnsafePath(blocked.removeprefix("E_UNSAFE_PATH: "))
        self._check_unclaimed(path)

    def _check_unclaimed(self, path: str) -> None:
        """A plan file a conversion writes (its nested plans' too) must land in a folder no
        entry of which claims its place (:func:`controller.plan.names.plan_file_claims`, on
        the branch or in the working tree): the folder would be E_PLAN_AMBIGUOUS by the
        controller's own commit, its plan neither read nor run (round 73), as MCP ``submit``
        refuses (:meth:`AgentApi._check_claims`). E_PLAN_AMBIGUOUS, nothing written."""
        from controller.errors import PlanAmbiguous

        pure = PurePosixPath(path)
        if pure.name not in plans.PLAN_FILES:
            return
        folder = str(pure.parent)
        claims = self._claims_beside(path)
        if claims:
            raise PlanAmbiguous(
                f"{folder} holds {' and '.join(map(visible, claims))}, which claims the place "
                f"of the {pure.name} a conversion would write: neither would be read or run",
                quotes=(folder,),
                remedy="delete or rename the other entry, or write the plan in a new folder",
            )

    def _claims_beside(self, path: str) -> list[str]:
        """The entries of ``path``'s folder other than ``path`` itself, on the branch or in
        the working tree, whatever their kind, that claim a plan file's place
        (:func:`controller.plan.names.plan_file_claims`): a plan file written there (an
        adopted one, a converted one) would make the folder E_PLAN_AMBIGUOUS by the
        controller's own commit. The working tree has no index verdict: its listing is read."""
        from controller.plan.names import plan_file_claims

        pure = PurePosixPath(path)
        folder = str(pure.parent)
        names = set(self.repo.names_in(self._head, folder))
        local = self.repo.path / folder
        if local.is_dir() and not local.is_symlink():
            names.update(os.listdir(local))
        names.discard(pure.name)
        return plan_file_claims(names)

    def _commit_conversion(
        self, plan_id: str, source: str, data: bytes, key: str, committed: bool
    ) -> bool:
        """Convert ``source`` and commit its PLAN.yml (and nested plans), then freeze it;
        False when it waits: a conversion error (refused for these bytes), or a file it
        writes landing in a folder one with another plan's or source's folder on some
        checkout (:meth:`~controller.service.sources.SourceFinder.twin_problem`, the rule of
        the status rows and ``check``; not refused: a twin removed releases it)."""
        # a source the committed attributes hide from a review, or committed as a link, is
        # never converted (rounds 121, 122: the rule of its row and `check`); a file the
        # conversion writes that they hide (its PLAN.yml, a nested plan's) is written, and the
        # plan is then held by _review_hidden
        head = self._head or self.head()
        held = sources.source_held(self.repo, head, source)
        if held is not None:
            self._wait(plan_id, f"{held.code}: {held.message}")
            return False
        try:
            converted = sources.convert_source(plan_id, source, data, delete_source=committed)
            self._sources.committed(self.repo, self._head)  # the branch's folders, judged
            twin = self._sources.twin_problem(source, converted.files)
            if twin is not None:
                self._wait(plan_id, f"{twin[0]}: {twin[1]}")
                return False
            # a file it writes over what the branch holds there (the agent's own nested
            # PLAN.yml): the rule of its row and `check` (round 122); not refused, as a twin
            # is not: that entry removed releases it
            written = sources.written_held(self.repo, head, source, converted.files)
            if written is not None:
                self._wait(plan_id, f"{written.code}: {written.message}")
                return False
            for path in converted.files:
                self._check_writable(path)
            self.repo.check_checkouts(converted.files)  # given back by its checkout (round 79)
        except PlangateError as exc:
            self._sources.refused[(source, key)] = str(exc)
            self._wait(plan_id, f"cannot convert {source}: {exc}")
            return False
        plan_file = f"{plan_id}/PLAN.yml"
        loaded = plans.validate_text(converted.plan_text, Path(plan_file), self.config)
        body = f"from {PurePosixPath(source).name} ({converted.format})"
        message = self._message("convert", plan_id, loaded.hash, loaded.status, body, (), None)
        # a rejection an entitled person committed in the source is the plan's (round 120):
        # the history index holds it rejected from the convert commit on; nothing to freeze
        rejected = committed and self.index.source_withdrawal(self.repo, self._head, source)
        sha = self._write(converted.files, self._head, message)
        self._waiting.pop(plan_id, None)
        self.log.info(
            "plan_converted", plan=plan_id, source=source, commit=sha, format=converted.format
        )
        if not rejected:
            self._freeze(plan_file)  # in the same pass, as for a PLAN.yml an agent committed
        return True
