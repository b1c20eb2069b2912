"""What an agent may do through ``plangate mcp`` (SPEC §14), as plain functions over data.

An agent can read the catalog, validate plan text in any format of SPEC §13, submit a plan
(committed as the agent's configured identity, on the watched branch or on a new branch for
a pull request), read a plan's status and its run's outputs and log, and wait for its
status to change. It can never approve, reject or abort: nothing here writes a status
other than the ``draft``/``pending_approval`` of a submission, and every commit is authored
by ``agent.identity``, so the controller's self-approval rule keeps the agent from
approving its own plan even through git.

Local mode only: the watched working tree of ``repo``. The MCP glue lives in
:mod:`controller.service.mcpserver`.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from controller.errors import (
    ERROR_CLASSES,
    ConfigInvalid,
    GitError,
    IllegalTransition,
    PlangateError,
    PlanTooLarge,
    Problem,
    UnsafePath,
    UsageError,
    VersionWithdrawn,
    YamlParseError,
    error_for,
)
from controller.git import sharedwrite
from controller.service.statedir import finish_a_dead_controllers_index
from controller.settings.values import is_branch_name

if TYPE_CHECKING:
    from controller.git.gitrepo import GitRepo
    from controller.service.reconcile import Controller
    from controller.settings import Config

SLUG = re.compile(r"^[a-z0-9][a-z0-9._-]{0,62}(/[a-z0-9][a-z0-9._-]{0,62}){0,3}$")


def slug_rule(slug: str, branch_prefix: str | None, plans_dir: str = "plans") -> None:
    """``submit``'s one rule for a slug, which becomes the folder ``plans/<slug>`` and, with
    ``pull_request`` (``branch_prefix`` given), the branch ``<branch_prefix><slug>``:
    lower-case letters, digits, ``. _ -``, ``/`` between parts; for a branch also each part a
    name git takes for a branch's (``git check-ref-format``: no ``..``, no part ending in
    ``.lock`` or ``.``). ``E_USAGE`` naming the slug otherwise: git refuses such a branch for
    good, so "submit again" could never work (round 93, ``submit-refname-remedy``: ``x.lock``
    and ``t.`` answered ``E_GIT`` "kept moving while committing"). The remedy's example is
    fixed, never made from the slug: an answer that echoed the slug would answer a right and
    a wrong guess of a secret differently (rounds 62, 63, 70: the oracle)."""
    folder = SLUG.match(slug) is not None and ".." not in slug
    if not folder:
        raise UsageError(
            f"slug {slug!r} is not a plan folder name",
            path="slug",  # the argument refused (round 127: `path: null`)
            quotes=(repr(slug),),
            remedy="use lower-case letters, digits, . _ - (and / for nesting), e.g. rotate-keys",
        )
    parts = slug.split("/")
    if parts[0] == plans_dir.rstrip("/").rpartition("/")[2] and len(parts) > 1:
        # an agent that names the path (``plans/x``) meant the folder ``x``: written as
        # asked it became ``plans/plans/x``, a plan nobody looks for
        raise UsageError(
            f"slug {slug!r} starts with the plans folder; the slug is the folder inside it",
            path="slug",
            quotes=(repr(slug),),
            remedy="give the folder's name without the leading plans/, e.g. rotate-keys",
        )
    if branch_prefix is not None and (
        any(part.endswith((".", ".lock")) for part in parts)
        or not is_branch_name(f"{branch_prefix}{slug}")
    ):
        raise UsageError(
            f"slug {slug!r} is no branch name git takes (pull_request: true makes the branch "
            f"{branch_prefix}<slug>)",
            path="slug",
            quotes=(repr(slug),),
            remedy="end each part of the slug in a letter, a digit, _ or - (never . or .lock), "
            "e.g. rotate-keys; or submit without pull_request",
        )


SUBMITTABLE = ("draft", "pending_approval")
#: The statuses a submission may replace: those SPEC §4 lets an author move on from.
#: ``rejected`` is terminal (round 118, submit-over-rejected-never-frozen: the new version
#: was committed over it, and the controller ignored it for good, E_ILLEGAL_TRANSITION).
RESUBMITTABLE = ("draft", "pending_approval", "invalid")
CONTROLLER_BLOCKS = ("frozen", "approval", "execution", "validation")
MAX_LOG_CHARS = 64_000
#: Keys of ``validate``/``submit`` answers that quote the agent's own text (its plan as
#: converted, the problems of it, the format it named): built with only the catalog's parts
#: redacted (:meth:`AgentApi._answered`), and passed on as written by the server (round 61:
#: masking the agent's text where it equals a secret confirms a guess of the secret).
OWN_TEXT = ("errors", "plan_yml", "format", "nested")
#: Keys of ``log`` answers that are the controller's own record of the run, passed on as
#: it committed them (round 64): written through the redactor where they hold the
#: controller's material and as written where they quote the author (a ``why``, a literal
#: param), they are in the agent's repository already; redacted again, the author's text
#: equal to a secret came back ``***`` for a right guess only.
AS_RECORDED = ("execution", "outputs", "execution_log")
#: An answer's key (taken out by the server) naming, by key, the values that are the agent's
#: own text or the plan's as its author wrote it (a path or status the agent sent, a status
#: row's repository text): a value that IS one of them is passed on as written, everything
#: else (tool outputs above all) redacted (``mcpserver._kept``, round 62).
OWN_QUOTES = "_own"
MAX_WAIT = 600.0


class AgentApi:
    """The agent's operations on one controller config (one repository)."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self._repo: GitRepo | None = None
        #: One submission commits at a time: an agent's calls sent together run at once
        #: (the server answers each in a thread), and each one's compare-and-swap of the
        #: branch lost to the others' (round 80: two of eight submits sent together were
        #: refused "main kept moving").
        self._committing = threading.Lock()

    # --- reading the catalog and checking plans ---------------------------------------

    def catalog(self) -> dict[str, Any]:
        """The tools a plan may call, as :func:`controller.plan.catalog.agent_catalog`
        describes them: every value the controller's records hide written ``***``."""
        from controller.execution.secrets import redactor_for
        from controller.plan.catalog import agent_catalog

        return agent_catalog(self.config, redactor_for(self.config))

    def validate(
        self, plan: str, fmt: str | None = None, slug: str | None = None
    ) -> dict[str, Any]:
        """Errors with code, location, line and remedy; ``plan_yml`` when it was converted.
        ``slug``: the folder ``submit`` would write it to (``submit``'s rule for a slug), whose
        ``approval.rules`` answer ``approvals_needed``; without one, the answer says which
        ``paths`` rules the folder could bring in (round 122)."""
        plan_id = None
        if slug is not None:
            slug_rule(slug, None, self.config.plans_dir)
            plan_id = self._plan_id(slug)
        try:
            text, source_format, nested = to_plan_yml(plan, fmt, self.config, plan_id)
        except PlangateError as exc:
            # the format it was read as, whatever the conversion's outcome (round 127)
            found = exc.source_format or fmt
            return {"valid": False, "format": found, "hash": None, "errors": _errors(exc)}
        loaded = _validate(text, self.config, nested)
        out: dict[str, Any] = {
            "valid": loaded.valid,
            "format": source_format,
            "hash": loaded.hash if loaded.valid else None,
            "errors": self._answered(loaded.problems),
        }
        if source_format != "plan.yml":
            out["plan_yml"] = text  # the lines of the errors are this text's
        if nested:
            out["nested"] = _nested_answer(nested, with_text=True)
        if loaded.valid:
            with _beside(nested):
                out.update(self._facts(plan_id, loaded.data))
        return out

    def _answered(self, problems: list[Problem]) -> list[dict[str, Any]]:
        """The problems of the agent's plan as it reads them: its own text as written, the
        catalog's parts of a message (a ``params_schema``) redacted (round 49)."""
        from controller.execution.secrets import redactor_for

        redact = redactor_for(self.config).text
        return [_with_remedy(p.answered(redact)) for p in problems]

    # --- submitting -------------------------------------------------------------------

    def submit(
        self,
        plan: str,
        slug: str,
        fmt: str | None = None,
        pull_request: bool = False,
        note: str | None = None,
    ) -> dict[str, Any]:
        identity = self.config.agent.identity
        if identity is None:
            raise ConfigInvalid(
                "agent.identity is not set: submissions are committed as the agent",
                path="agent.identity",
                remedy="set agent: {identity: {name: ..., email: ...}} in plangate.yml",
            )
        prefix = self.config.agent.branch_prefix if pull_request else None
        slug_rule(slug, prefix, self.config.plans_dir)
        folder = self._plan_id(slug)  # no folder a reader refuses (``x/execution_log.md``)
        text, source_format, nested = to_plan_yml(plan, fmt, self.config, folder)
        loaded = _validate(text, self.config, nested)
        if not loaded.valid:
            errors = self._answered(loaded.problems)
            return {
                "ok": False,
                "submitted": False,
                "valid": False,
                "format": source_format,
                "errors": errors,
                **({"plan_yml": text} if text is not plan else {}),
                **({"nested": _nested_answer(nested, with_text=True)} if nested else {}),
            }
        status = checked_status(text)
        rel = f"{self.config.plans_dir.rstrip('/')}/{slug}/PLAN.yml"
        self._check_withdrawn(loaded.hash, rel)
        commit, branch, rel = self._commit(rel, text, nested, slug, pull_request, note, identity)
        with _beside(nested):
            facts = self._facts(str(Path(rel).parent), _data(text), identity.email)
        return {
            "ok": True,
            "submitted": True,
            "path": str(Path(rel).parent),
            "file": rel,
            "hash": loaded.hash,
            "status": status,
            "format": source_format,
            "commit": commit,
            OWN_QUOTES: {"path": (str(Path(rel).parent),), "file": (rel,)},
            "branch": branch,
            "pull_request": pull_request,
            **({"nested": _nested_answer(nested, with_text=False)} if nested else {}),
            **facts,
        }

    def _check_withdrawn(self, plan_hash: str, rel: str) -> None:
        """E_VERSION_WITHDRAWN, nothing committed, for a version someone withdrew before it
        ran (rejected, or aborted), under any slug, with or without its ``frozen:`` block:
        no approval of it counts again (round 118, submit-withdrawn-version-accepted: it was
        committed ``pending_approval``, frozen and left waiting for an approval that the
        controller refuses). The controller's own lookup, by the version's hash."""
        self.repo()  # local mode only, before the controller reads anything
        with self._reader() as controller:
            withdrawal = controller.withdrawal(plan_hash, str(PurePosixPath(rel).parent))
        if withdrawal is None:
            return
        raise VersionWithdrawn(
            f"this exact version ({plan_hash}) was {withdrawal.get('status')} in "
            f"{withdrawal.get('plan')} ({str(withdrawal.get('commit'))[:12]} by "
            f"{withdrawal.get('by')}) before it ran: under any name it is not approved again",
            path=rel,
            quotes=(rel,),
            remedy="change what the reviewer objected to and submit that new version "
            "(`status` of the withdrawn plan gives who and why in its `reason`)",
        )

    def _commit(
        self,
        rel: str,
        text: str,
        nested: dict[str, str],
        slug: str,
        pull_request: bool,
        note: str | None,
        identity: Any,
    ) -> tuple[str, str, str]:
        """(the commit, its branch, the file written): the folder's plan file as every
        reader finds it (a ``PLAN.yaml`` is replaced, never given a ``PLAN.yml`` beside it,
        round 68), else ``rel``; its nested plans' files (``nested``) in the same commit,
        each under the checks of the plan file's (round 127: MCP refused a ``nested_plan``
        step "pass -o DIR", an option no tool takes). E_ATTRIBUTE_UNSUPPORTED, nothing
        committed, for a text git would not give back from its checkout under the folder's
        attributes
        (:meth:`~controller.git.worktree.WorkTree.check_checkouts`; round 79: a ``\\`` in
        a ``SHIFT-JIS`` folder came back ``¥``, the file modified right after the submit)."""
        from controller.git.gitrepo import Person

        repo = self.repo()
        watched = repo.current_branch()
        branch = f"{self.config.agent.branch_prefix}{slug}" if pull_request else watched
        data = text.encode("utf-8")
        children = {file: body.encode("utf-8") for file, body in nested.items()}
        person = Person(identity.name, identity.email)
        message = submission_message(str(Path(rel).parent), note, identity.name, identity.email)
        folder = str(Path(rel).parent)
        with self._committing:
            if not pull_request:
                sharedwrite.recover(repo)  # a killed server's unfinished writes, first
                finish_a_dead_controllers_index(self.config, repo)  # and a killed controller's
            return self._commit_once(repo, rel, folder, data, children, branch, watched, person,
                                     message, pull_request)  # fmt: skip

    def _commit_once(
        self,
        repo: GitRepo,
        rel: str,
        folder: str,
        data: bytes,
        children: dict[str, bytes],
        branch: str,
        watched: str,
        person: Any,
        message: str,
        pull_request: bool,
    ) -> tuple[str, str, str]:
        """The submission's commit, on the branch as it is now: read again and tried again
        when someone else (the controller's pass, a person) moved the branch meanwhile, with
        a short wait between tries (at most about 4 s in all)."""
        for attempt in range(8):
            if attempt:
                time.sleep(min(0.025 * 2**attempt, 1.0))
            parent, old = self._parent(repo, branch, watched)
            rel = self._plan_file(repo, parent, folder) or rel
            self._check_own_folder(repo, parent, folder)
            files = {rel: data}
            for file, body in children.items():  # each nested plan's file as every reader's
                place = file.rsplit("/", 1)[0]
                files[self._plan_file(repo, parent, place) or file] = body
            for file in files:
                self._check_nested(repo, parent, file.rsplit("/", 1)[0], pull_request)
                self._check_claims(repo, parent, file)
                self._check_replaceable(repo, parent, file)
            # a text its checkout would not give back is never committed (round 79): the
            # one rule of every text the controller turns into a blob
            repo.check_checkouts(files)
            if not pull_request:
                for file in files:
                    self._check_worktree(repo, file)
                if all(repo.read_file(parent, file) == body for file, body in files.items()):
                    # the branch holds this very plan already (a submit answered nothing,
                    # killed after its commit, sent again): nothing to commit twice
                    return parent, branch, rel
                # the one writer of the shared working tree (controller.git.sharedwrite):
                # index.lock held from before the branch moves until the index and the
                # tree hold the submission; a killed server's writes finished by the next
                sha = sharedwrite.commit_checked_out(
                    repo, branch=branch, parent=parent, files=files, message=message,
                    author=person, committer=person,
                )  # fmt: skip
            else:
                sha = repo.commit_files(
                    branch=branch,
                    parent=parent,
                    files=files,
                    message=message,
                    author=person,
                    committer=person,
                    old=old,  # the branch is made by this commit, after every check
                )
            if sha is not None:
                if not pull_request:
                    for file, body in files.items():
                        self._sync_worktree(repo, watched, file, sha, body)
                return sha, branch, rel
        raise GitError(f"{branch} kept moving while committing", remedy="submit again")

    @staticmethod
    def _sync_worktree(repo: GitRepo, watched: str, rel: str, sha: str, data: bytes) -> None:
        """Bring the watched working tree and index to the plan as the branch head has it.
        A running controller may already have committed on top of the submission (frozen
        it) and written its own version: writing the submitted bytes then would leave the
        tree behind the branch, as an edit nobody made (the plan would wait for it forever).
        So the tree gets the head's version, and the head is read again after the write: a
        commit that landed meanwhile is written too (both writers then agree)."""
        for _ in range(10):
            head = repo.branch_head(watched)
            if head == sha:
                return  # written with the commit, under its index.lock
            if head is not None and not repo.checked_out_at(watched, head):
                return  # the checkout left the branch: nothing written there (round 116)
            want = data if head == sha or head is None else repo.read_file(head, rel)
            modes = repo.file_modes(head, [rel])  # the branch's mode of it (round 87)
            repo.write_worktree({rel: want}, modes)
            repo.set_index_entries({rel: want}, modes=modes)
            if repo.branch_head(watched) == head:
                return

    @staticmethod
    def _parent(repo: GitRepo, branch: str, watched: str) -> tuple[str, str]:
        """(the commit a submission on ``branch`` goes on top of, what ``branch`` points at
        now: the zero id for a pull request's branch not made yet). The branch is made by the
        submission's own commit, never before its checks (round 123,
        ``refused-pr-submit-leaves-branch``: a refused submission left ``<prefix><slug>``
        behind, and a later branch name under it could never be made)."""
        head = repo.branch_head(watched)
        if head is None:
            raise GitError(
                f"the watched branch {watched} has no commit yet",
                remedy="make a first commit in the plans repo",
            )
        if branch == watched:
            return head, head
        existing = repo.branch_head(branch)
        if existing is not None:
            return existing, existing
        clash = repo.ref_clash(f"refs/heads/{branch}")
        if clash is not None:
            raise UsageError(
                f"the branch {branch} cannot be made: the branch {clash} is in its way "
                "(git keeps no branch inside another's name)",
                quotes=(branch, clash),
                remedy=f"delete the branch {clash} if it is stale (`git branch -D {clash}`), "
                "or submit under another slug",
            )
        return head, "0" * 40

    def _check_nested(self, repo: GitRepo, parent: str, folder: str, pull_request: bool) -> None:
        """E_UNSAFE_PATH, nothing committed, for a folder in a repository of its own below the
        plans folder: a gitlink on its way in the branch, or (a submission written into the
        shared working tree) a folder there holding a ``.git`` (round 91: ``submit`` replaced
        a submodule's gitlink and wrote into its checkout, or into a ``git init``'ed folder),
        :func:`controller.git.planstate.nested_refusal`, as ``convert`` and every reader."""
        from controller.git.planstate import nested_refusal

        refused = nested_refusal(
            folder,
            self.config.plans_dir,
            lambda place: repo.mode_of(parent, place),
            None if pull_request else repo.path,
        )
        if refused is not None:
            raise refused

    def _check_own_folder(self, repo: GitRepo, parent: str, folder: str) -> None:
        """E_USAGE, nothing committed, unless the plan's folder is its own (round 104): no
        folder above it holds a plan file or a source, nor one that is the same folder on
        some checkout (round 106: ``done./x`` IS ``done/x`` on NTFS, ``cap/x`` is under
        ``Cap`` on a case-blind one; :func:`~controller.plan.names.twin_folders`); the folder
        holds no source (a ``PLAN.json`` & co. is the plan's text there, converted by the
        controller: a submitted PLAN.yml beside it would run while the source said another
        plan); and a folder that holds no plan yet holds none below it (round 106: ``x``
        submitted around the plan ``x/y``). A plan's nested plans are written below it by
        the conversion of its own source; ``/`` groups plans under folders that hold none."""
        from controller.plan.names import PLAN_FILES, SOURCE_FILES, same_name, twin_folders

        plans_dir = self.config.plans_dir.rstrip("/")
        parts = folder[len(plans_dir) + 1 :].split("/")

        def listed(place: str) -> list[str]:
            return repo.names_in(parent, place)

        for depth in range(1, len(parts)):
            above = "/".join([plans_dir, *parts[:depth]])
            for place in (above, *twin_folders(above, listed, plans_dir)):
                if _holds_plan(listed(place)):
                    raise _not_own(
                        f"{place} is a plan's folder: a submission inside it would put "
                        "another plan among that plan's files"
                        + ("" if place == above else f" (it is {above} on some checkouts)"),
                        quotes=(place, above),
                    )
        here = listed(folder)
        if any(same_name(name, SOURCE_FILES) for name in here):
            raise _not_own(
                f"{folder} holds a plan source the controller converts to its PLAN.yml: "
                "a submitted PLAN.yml beside it would run while the source says another plan",
                quotes=(folder,),
                remedy="change the plan by editing its source (PLAN.json, PLAN.toon or "
                "PLAN.md) in a commit, or submit under a slug of its own",
            )
        if not _holds_plan(here):
            below = [
                path
                for path, _ in repo.ls_files(parent, [f"{folder}/"])
                if same_name(path.rsplit("/", 1)[-1], (*PLAN_FILES, *SOURCE_FILES))
            ]
            if below:
                inner = below[0].rsplit("/", 1)[0]
                raise _not_own(
                    f"{folder} holds the plan {inner} below it: a new plan there would hold "
                    "another plan's files",
                    quotes=(folder, inner),
                )

    @staticmethod
    def _check_claims(repo: GitRepo, parent: str, rel: str) -> None:
        """E_PLAN_AMBIGUOUS, nothing committed, when the folder would hold the plan file
        beside another entry claiming its place (:func:`controller.plan.names.ambiguous_claims`
        over the folder's listing and the file written: a folder ``plan.yml/`` or
        ``PLAN.YAML/``, a symlink or gitlink ``plan.yml``): the controller would read and run
        neither (round 72: ``submit`` committed ``PLAN.yml`` beside such a claim and answered
        ``pending_approval``)."""
        from controller.errors import PlanAmbiguous
        from controller.plan.names import ambiguous_claims

        folder, _, name = rel.rpartition("/")
        both = ambiguous_claims({*repo.names_in(parent, folder), name})
        if both is not None:
            raise PlanAmbiguous(
                f"{folder} holds {' and '.join(n for n in both if n != name)}, which claims the "
                f"place of its plan file {name}: neither would be read or run",
                quotes=(folder,),
                remedy="submit under a new slug, or delete the other entry first",
            )

    @staticmethod
    def _check_replaceable(repo: GitRepo, parent: str, rel: str) -> None:
        from controller.plan.plans import validate_text

        committed = repo.read_file(parent, rel)
        if committed is None:
            return
        mode = repo.mode_of(parent, rel)
        if mode not in ("100644", "100755"):  # a symlink: its target's name is no plan
            raise UnsafePath(
                f"{rel} is a {'symlink' if mode == '120000' else 'non-file entry'} in the "
                "branch, not a plan file: a submission replaces only a plan file, and the "
                "controller reads no plan through a link",
                quotes=(rel,),
                remedy="submit under a new slug, or delete the entry first",
            )
        current = validate_text(committed.decode("utf-8", "replace"), Path(rel)).status
        if current not in RESUBMITTABLE:
            raise IllegalTransition(
                f"{rel} is {current}; a submission may replace only a plan that is "
                + ", ".join(RESUBMITTABLE)
                + (" (a rejection is final: the controller takes no new version there)"
                   if current == "rejected" else ""),
                path=rel,
                quotes=(rel,),
                remedy="submit under a new slug",
            )  # fmt: skip

    @staticmethod
    def _check_worktree(repo: GitRepo, rel: str) -> None:
        modified, untracked = repo.worktree_changes([rel])
        if modified or untracked:
            raise UsageError(
                f"{rel} has uncommitted changes in the watched working tree",
                remedy="someone is editing it by hand: submit under another slug, or ask them "
                "to commit or discard their edits",
            )

    # --- following a plan -------------------------------------------------------------

    def status(self, path: str | None = None) -> dict[str, Any]:
        plan_id = self._plan_id(path) if path is not None else None
        with self._reader() as controller:
            rows = controller.status(reasons=True, plan=plan_id)  # `plangate status --json`'s
        if plan_id is not None and not rows:
            if not self.config.is_remote:  # why none, as log and wait find it (round 98:
                repo = self.repo()  # plans/P beside plans/p, E_USAGE here, ambiguous there)
                self._plan_file(repo, repo.branch_head(repo.current_branch()), plan_id)
            raise UsageError(
                f"no plan {plan_id} on the watched branch",
                remedy="submit it first, or check the path",
                quotes=(plan_id,),
            )
        return {"plans": rows, OWN_QUOTES: {"plans": [_repository_text(r) for r in rows]}}

    @contextmanager
    def _reader(self) -> Iterator[Controller]:
        """A controller that only reads (no lock): its status rows are the plan's status for
        every answer here, ``status``, ``log`` and ``wait`` alike."""
        from controller.service.reconcile import Controller

        controller = Controller(self.config, lock=False)
        try:
            yield controller
        finally:
            controller.close()

    def log(self, path: str) -> dict[str, Any]:
        """The plan's status as the controller reads it (its status row's, round 81), the
        file's as committed, its run (outputs per action) and EXECUTION_LOG.md as the
        controller committed them. The row decides first whether the file is read at all:
        a plan it holds unread (a link, a gitlink) is refused with the row's code, as
        ``wait`` refuses it; one it does not read (over ``limits.max_plan_bytes``, not UTF-8,
        no YAML mapping) is answered ``unreadable`` with the row's code in ``problems`` and
        its ``file_status: null``, the file never read here (round 127,
        mcp-log-unreadable-plan-uncoded: ``log`` read the file itself and answered
        ``problems: []`` and the status a 1.1 MB file spelled)."""
        plan_id = self._plan_id(path)
        repo = self.repo()
        head = repo.branch_head(repo.current_branch())
        file = self._plan_file(repo, head, plan_id)
        with self._reader() as controller:
            rows = controller.status(reasons=True, plan=plan_id)
        row = rows[0] if rows else {}
        _refuse_held(row, plan_id)
        unread = _unread_problem(row)  # a plan file, or a source that does not convert
        if unread is not None:
            return self._unread_log(plan_id, row, unread)
        if not (head and file) or repo.blob_sha(head, file) is None:
            raise UsageError(
                f"no plan {plan_id} on the watched branch",
                remedy="check the path",
                quotes=(plan_id,),
            )
        from controller.plan import yamlio

        raw = repo.read_file(head, file) or b""
        data = yamlio.read_yaml(raw.decode("utf-8", "replace"), plan_id).data
        record = self._record(repo, head, str(file), data)
        text = record.log
        cut = text is not None and len(text) > MAX_LOG_CHARS
        execution = record.blocks.get("execution")
        status, file_status = row.get("status"), _status_of(data)
        ignored = _ignored_status(row, file_status)
        return {
            "path": plan_id,
            "status": status,
            "file_status": file_status,
            "execution": execution,
            "outputs": _outputs(execution),
            "execution_log": text[:MAX_LOG_CHARS] if text is not None else None,
            "execution_log_truncated": cut,
            "problems": [*record.notes, *ignored],
            OWN_QUOTES: {
                "path": (plan_id,),
                "status": (status,),
                "file_status": (file_status,),
                "problems": tuple(ignored),
            },
        }

    @staticmethod
    def _unread_log(plan_id: str, row: dict[str, Any], unread: str) -> dict[str, Any]:
        """``log`` of a plan whose file the controller does not read: the row's status, its
        ``file_status`` (null: no status was read) and its code, nothing read again."""
        return {
            "path": plan_id,
            "status": row.get("status"),
            "file_status": row.get("file_status"),
            "execution": None,
            "outputs": {},
            "execution_log": None,
            "execution_log_truncated": False,
            "problems": [unread],
            OWN_QUOTES: {
                "path": (plan_id,),
                "status": (row.get("status"),),
                "file_status": (row.get("file_status"),),
                "problems": (unread,),  # the file's problem: the row's author text (round 63)
            },
        }

    def _record(self, repo: GitRepo, head: str, plan_file: str, data: Any) -> Any:
        """The plan's record as the controller's own commits wrote it, a later version by
        anyone else flagged (round 61: :func:`controller.git.ownrecord.shown_record`)."""
        from controller.git.ownrecord import OWNED, shown_record
        from controller.service.statedir import is_own_commit

        def git(*args: str) -> str | None:
            try:
                return repo.run(*args)
            except PlangateError:
                return None

        branch = {k: data.get(k) for k in OWNED} if isinstance(data, dict) else {}
        is_own = is_own_commit(self.config)
        return shown_record(git, head, plan_file, is_own, branch, plans_dir=self.config.plans_dir)

    def wait(
        self,
        path: str,
        timeout: float = 60.0,
        status: str | None = None,
        stop: threading.Event | None = None,
    ) -> dict[str, Any]:
        """Until the plan's status (the controller's judged one, :meth:`_controller_status`)
        differs from ``status`` (default: its status now), or ``timeout`` seconds (at most
        600), or ``stop`` is set (the MCP call was cancelled: round 97, it polled on to its
        timeout). An approval request no pass has decided yet is no change: the answer's
        ``approval_requested`` says one is open (round 118)."""
        plan_id = self._plan_id(path)
        return self._wait(plan_id, timeout, status, stop or threading.Event())

    def _wait(
        self, plan_id: str, timeout: float, status: str | None, stop: threading.Event
    ) -> dict[str, Any]:
        repo = self.repo()
        head = repo.branch_head(repo.current_branch())
        current, asked = self._judged(plan_id)
        _waitable(status, current)
        since = status if status is not None else current
        start = time.monotonic()
        deadline = start + max(0.0, min(float(timeout), MAX_WAIT))
        while current == since and time.monotonic() < deadline and not stop.is_set():
            stop.wait(0.2)
            moved = repo.branch_head(repo.current_branch())
            if moved != head:  # the status is the history's: read again when it grows
                head, (current, asked) = moved, self._judged(plan_id)
        return {
            "path": plan_id,
            "status": current,
            "previous": since,
            "changed": current != since,
            "approval_requested": asked,
            "waited": round(time.monotonic() - start, 3),
            OWN_QUOTES: _waited_own(plan_id, current, since),
        }

    def _judged(self, plan_id: str) -> tuple[str | None, bool]:
        """:meth:`_controller_status` by a reader opened now: a reader is a snapshot of the
        state directory (the index copied, the controller's commits read once), and one kept
        across a wait read the controller's later commits as no one's (its start, made
        after the snapshot, left the plan where Alice's request had put it)."""
        with self._reader() as controller:
            return self._controller_status(plan_id, controller)

    def _controller_status(self, plan_id: str, controller: Controller) -> tuple[str | None, bool]:
        """The plan's status as the controller has judged it, and whether an approval request
        no pass has decided yet is open. The status row's (MCP ``status``'s, ``plangate
        status``'s), never the file's: a status the controller ignored (round 81: ``completed``
        committed mid-run by someone else, ``E_ILLEGAL_TRANSITION``) is none of the plan's
        (``wait`` answered it ``changed`` while the run went on); and an open request is not
        yet a status (:func:`controller.git.lifecycle.judged_status`; round 118: the agent's
        own ``approved`` was answered ``changed`` before the pass refused it)."""
        from controller.git.lifecycle import judged_status

        repo = self.repo()
        # the folder's file as every reader finds it: E_PLAN_AMBIGUOUS is the answer, never
        # "no status" (round 69: wait read that as a change, or waited it out silently)
        self._plan_file(repo, repo.branch_head(repo.current_branch()), plan_id)
        row = _row_of(controller, plan_id)
        if row.get("held"):  # round 91: wait answered "status null", no code
            rows = controller.status(reasons=True, plan=plan_id)  # the reason, as log's
            _refuse_held(rows[0] if rows else row, plan_id)
        state = controller.index.plans.get(plan_id)
        if state is None or row.get("status") != state.status:
            return row.get("status"), False  # a row of its own (another host's run, left)
        judged = judged_status(state)
        return judged, judged != state.status

    def _plan_file(self, repo: GitRepo, head: str | None, plan_id: str) -> str | None:
        """The plan's file on the branch, found as every reader finds it (``PLAN.yml`` or
        ``PLAN.yaml``: :func:`controller.git.planstate.plan_file_of`)."""
        from controller.git.planstate import plan_file_of, refuse_twin

        if head is None:
            return None
        # one listing: a folder under a plan file's name, in any case, counts as that file
        found = plan_file_of(plan_id, repo.names_in(head, plan_id))
        names = lambda folder: repo.names_in(head, folder)  # noqa: E731
        refuse_twin(plan_id, names, self.config.plans_dir)  # rounds 75, 76
        return found

    def _plan_id(self, path: str) -> str:
        """The plan id ``path`` names, by the rule the controller finds plans by: any folder
        under the plans folder whose path :func:`controller.plan.plans.unsafe_name` passes
        (round 70: MCP took only lower-case paths, ``submit``'s slug rule, and answered
        "not a plan path" for plans the controller froze and ran, ``plans/Deploy``)."""
        from controller.errors import UnsafePath
        from controller.plan.plans import PLAN_FILES, unsafe_name

        plans_dir = self.config.plans_dir.rstrip("/")
        text = self._in_repo(path, plans_dir).rstrip("/")  # never trimmed: "plans/x " (r75)
        named = next((n for n in PLAN_FILES if text.endswith(f"/{n}")), None)
        text = text.removesuffix(f"/{named}") if named else text  # a plan's file names it
        plan_id = text if text.startswith(f"{plans_dir}/") else f"{plans_dir}/{text}"
        if not _plain_folders(plan_id[len(plans_dir) + 1 :]):
            raise UsageError(
                f"{path!r} is not a plan path",
                remedy="e.g. plans/rotate-keys",
                quotes=(repr(path),),
            )
        why = unsafe_name(f"{plan_id}/{PLAN_FILES[0]}")
        if why is not None:
            raise UnsafePath(f"{plan_id!r}: {why}", quotes=(repr(plan_id),))
        if named is not None:
            self._check_file_named(plan_id, named)
        return plan_id

    def _in_repo(self, path: str, plans_dir: str) -> str:
        """``path`` as a path in the repository: a relative one as written, an absolute one
        by the CLI's rule (:func:`controller.fsutil.path_in_repo`: the part after the
        repository, as written) and under the plans folder. Round 98: ``strip("/")`` read
        ``<repo>/plans/p`` as the plan ``plans/<repo>/plans/p`` (``wait`` answered it
        gone, ``status: null``), and ``/plans/p`` as ``plans/p``: an absolute path outside
        the repository, or inside it but not under the plans folder, names no plan."""
        if not path.startswith("/"):
            return path
        from controller.fsutil import path_in_repo

        rel = None if self.config.is_remote else path_in_repo(path, self.config.repo_path())
        if rel is None or not rel.startswith(f"{plans_dir}/"):
            where = "outside the repository" if rel is None else "outside the plans folder"
            raise UsageError(
                f"{path!r} is {where}: no plan path",
                remedy=f"name the plan by its path in the repository, e.g. {plans_dir}/rotate-keys",
                quotes=(repr(path),),
            )
        return rel

    def _check_file_named(self, plan_id: str, name: str) -> None:
        """A path naming the plan's file (``plans/x/PLAN.yml``) is read as its folder; where
        the branch holds a FOLDER of that name, the path names no plan: a folder named as a
        plan file is none (round 69: :func:`controller.plan.plans.plan_named_folder`;
        it was read as the parent's file, and answered that plan's record)."""
        from controller.errors import UnsafePath
        from controller.plan.plans import plan_named_folder

        if self.config.is_remote:
            return
        repo = self.repo()
        head = repo.branch_head(repo.current_branch())
        file = f"{plan_id}/{name}"
        if head is not None and repo.is_tree(head, file):
            why = plan_named_folder(f"{file}/{name}") or ""
            raise UnsafePath(f"{file}: {why}", quotes=(file,))

    # --- helpers ------------------------------------------------------------------------

    def repo(self) -> GitRepo:
        if self.config.is_remote:
            raise ConfigInvalid(
                "plangate mcp works on a local-mode repository (`repo:`) for now",
                path="remote",
                remedy="run plangate mcp against a clone's config with `repo:`, and push",
            )
        if self._repo is None:
            from controller.git.gitrepo import GitRepo

            self._repo = GitRepo(self.config.repo_path())
            # a server killed between a submission's commit and its tree and index writes:
            # this start finishes them (controller.git.sharedwrite)
            sharedwrite.recover(self._repo)
        return self._repo

    def _facts(self, plan_id: str | None, data: Any, author: str | None = None) -> dict[str, Any]:
        """Risk, estimate and the approvals the policy asks for (as the controller will
        record them in ``frozen:``). ``plan_id`` None: a plan with no folder yet, whose
        answer names each ``paths`` rule its folder could bring in (``by_path``)."""
        from controller.approval.policy import describe_record, frozen_facts, unplaced_facts

        if plan_id is None:
            facts = unplaced_facts(data, self.config)
        else:
            facts = frozen_facts(plan_id, data, self.config)
        policy = facts.get("policy")
        by_path = facts.get("by_path")
        summary = describe_record(policy) if isinstance(policy, dict) else None
        if isinstance(by_path, list) and by_path and isinstance(policy, dict):
            # the folder decides: each paths rule it could bring in, never "no rule matches"
            for entry in by_path:
                entry["summary"] = describe_record(entry["policy"])
            where = "; ".join(f"{e['summary']} under {' or '.join(e['paths'])}" for e in by_path)
            summary = (
                f"depends on the folder: {where}; elsewhere "
                f"{describe_record(policy, default='the default')}; give `slug` for the "
                "answer at its folder"
            )
        needed: dict[str, Any] = {
            "policy": policy,
            "summary": summary,
            **({"by_path": by_path} if by_path else {}),
            "approvers": list(self.config.approval.approvers),
            "how": "people allowed by approval.approvers set plan.status: approved in a "
            "commit (`plangate approve PATH`) after the controller froze the plan",
        }
        if author is not None and not self.config.approval.allow_self_approval:
            needed["not_from"] = [author]
        return {
            "risk": facts.get("risk"),
            "estimate": facts.get("estimate"),
            "approvals_needed": needed,
        }

    def close(self) -> None:
        if self._repo is not None:
            self._repo.close()


def _plain_folders(rel: str) -> bool:
    """Is ``rel`` a path of folder names, none of them empty, ``.`` or ``..`` (a path that
    names the folder it writes, as git's do)?"""
    return all(part not in ("", ".", "..") for part in rel.split("/"))


def submission_message(plan_dir: str, note: str | None, name: str, email: str) -> str:
    """The submission commit's message, built from parts like the controller's own
    (:func:`controller.git.message.commit_message`): the agent's ``note`` is free text inside
    one paragraph that starts with the fixed ``Submitted through ...``, so no line of it can be
    a trailer or a ``Co-authored-by:`` (which would make someone else an author of the plan)."""
    from controller.git.message import commit_message

    body = f"Submitted through plangate mcp by {name} <{email}>."
    if note and note.strip():
        body += f" Note: {note}"  # the body is cut at message.BODY_CHARS with the rest
    return commit_message(f"Submit plan {plan_dir}", body, []).rstrip("\n") + "\n"


def to_plan_yml(
    plan: str, fmt: str | None, config: Config, folder: str | None = None
) -> tuple[str, str, dict[str, str]]:
    """The PLAN.yml text of ``plan``, the format it was written in (``plan.yml`` when it
    already is one: kept byte for byte, comments included), and its nested plans' PLAN.yml
    texts by file (an ActionPlan's ``nested_plan`` steps, written under ``folder``, the
    plan's own, as the daemon's conversion of a source there writes them: ``step-N``).
    Without ``folder`` (``validate`` with no ``slug``) a nested plan is refused with what
    to give. Text over the size of a plan file is E_PLAN_TOO_LARGE before it is read, as
    ``plangate validate`` says of the file: limits.max_plan_bytes, or a source file's limit
    when ``fmt`` names a source. A refusal after the format was known carries it
    (``source_format``; round 127)."""
    from controller.plan.convert import convert_text
    from controller.plan.discovery import MAX_SOURCE_BYTES
    from controller.plan.plans import size_problem

    limit = None if fmt in (None, "plan.yml") else MAX_SOURCE_BYTES
    oversize = size_problem(plan, config, limit)
    if oversize is not None:
        raise PlanTooLarge(oversize.message)

    try:
        if fmt in (None, "plan.yml") and _is_plan_yml(plan):
            return plan, "plan.yml", {}
    except PlangateError as exc:  # a PLAN.yml YAML cannot read: that format's error
        exc.source_format = "plan.yml"
        raise
    if fmt == "plan.yml":
        raise UsageError(
            "not a PLAN.yml: no top-level plan: and actions:",
            remedy="send PLAN.yml text, or leave format out to convert",
        )
    # the header says where the text came from (a user's trial: it named `plangate convert`
    # and a placeholder source for a plan that came in through MCP)
    conversion = convert_text(
        plan, "the submitted text", fmt, folder, by="plangate mcp `submit`", unplaced=UNPLACED
    )
    nested = {f"{child}/PLAN.yml": text for child, text in conversion.children}
    return conversion.text, conversion.format, nested


#: A nested plan ``validate`` was given no folder for: what an agent gives over MCP.
UNPLACED = (
    "a nested plan is written under its parent plan's folder (plans/<slug>/step-N), "
    "which `validate` knows only from `slug`",
    "call validate again with `slug` (the one you will submit it under); `submit` writes "
    "the nested plans under plans/<slug>/step-N in the same commit",
)


#: A PLAN.yml's two top-level keys, as lines: text holding both is meant as one.
_PLAN_YML_KEYS = (re.compile(r"^plan:", re.M), re.compile(r"^actions:", re.M))


def _is_plan_yml(text: str) -> bool:
    """Is ``text`` a PLAN.yml? One with top-level ``plan:`` and ``actions:`` lines that YAML
    cannot read is its YAML error at its line, as ``plangate validate`` says of the file
    (round 111: a 5001-digit number made it "not a plan: expected one JSON object")."""
    from controller.plan import yamlio

    try:
        data = yamlio.read_yaml(text, "<plan>").data
    except YamlParseError:
        if all(key.search(text) for key in _PLAN_YML_KEYS):
            raise
        return False
    except PlangateError:
        return False
    return (
        isinstance(data, dict)
        and {"plan", "actions"} <= set(data)
        and not set(CONTROLLER_BLOCKS) & set(data)
        and "${" not in text
    )


def checked_status(text: str) -> str:
    from controller.plan import yamlio

    status = _status_of(yamlio.read_yaml(text, "<plan>").data)
    if status not in SUBMITTABLE:
        raise IllegalTransition(
            f"a submitted plan is draft or pending_approval, not {status}",
            remedy="set plan.status: pending_approval; approval is a human's commit",
        )
    return status


def _validate(text: str, config: Config, nested: dict[str, str] | None = None) -> Any:
    """The plan checked as the controller will check it, its nested plans read as written."""
    from controller.plan.plans import validate_text

    with _beside(nested):
        return validate_text(text, Path("PLAN.yml"), config)


def _beside(nested: dict[str, str] | None) -> Any:
    """Nested plans read inside the block as their files will be written beside the plan
    (:func:`controller.plan.nested.writing`, as a source's conversion is read): its check,
    hash and risk are the ones the controller will find (round 127)."""
    from controller.plan import nested as nested_plans

    return nested_plans.writing({f: body.encode("utf-8") for f, body in (nested or {}).items()})


def _nested_answer(nested: dict[str, str], with_text: bool) -> list[dict[str, Any]]:
    """The nested plans of an answer: each one's folder and file (and, from ``validate``,
    its PLAN.yml text, the agent's own as converted)."""
    return [
        {"path": file.rsplit("/", 1)[0], "file": file, **({"plan_yml": body} if with_text else {})}
        for file, body in nested.items()
    ]


def _data(text: str) -> Any:
    from controller.plan import yamlio

    return yamlio.read_yaml(text, "<plan>").data


def _status_of(data: Any) -> str | None:
    plan = data.get("plan") if isinstance(data, dict) else None
    status = plan.get("status") if isinstance(plan, dict) else None
    return status if isinstance(status, str) else None


def _row_of(controller: Controller, plan_id: str) -> dict[str, Any]:
    """The plan's status row (``{}``: the branch shows no such plan)."""
    rows = controller.status(plan=plan_id)
    return rows[0] if rows else {}


def _refuse_held(row: dict[str, Any], plan_id: str) -> None:
    """The code of a plan the branch holds unread (a gitlink, a link: its row's ``held``),
    raised: what ``log`` and ``wait`` answer, as ``status`` shows it, never "absent" or a
    status of none (round 91: ``wait`` of a gitlink answered ``status: null``)."""
    held = row.get("held")
    if held:
        said = row.get("reason") or held
        raise error_for(held, said.removeprefix(f"{held}: "), plan_id, (plan_id,))


def _unread_problem(row: dict[str, Any]) -> str | None:
    """``CODE: message`` of a row whose file the controller does not read (``unreadable``:
    its ``problem``), as the row's ``reason`` says it; None for a file it reads."""
    problem = row.get("problem")
    if row.get("status") != "unreadable" or not isinstance(problem, dict):
        return None
    return f"{problem.get('code')}: {problem.get('message')}"


def _ignored_status(row: dict[str, Any], file_status: str | None) -> list[str]:
    """The row's note on the file's status where the controller did not take it (its
    status is another): the history's ``E_ILLEGAL_TRANSITION: <who> set status <it> ...;
    ignored``, as the row quotes it (round 81: ``log`` answered that status as the plan's)."""
    if not row or file_status is None or file_status == row.get("status"):
        return []
    said = f" set status {file_status} "
    notes = row.get("notes") or []
    return [n for n in notes if n.startswith("E_ILLEGAL_TRANSITION") and said in n][-1:]


def _waited_own(plan_id: str, current: str | None, since: str | None) -> dict[str, Any]:
    """What of a ``wait`` answer is the author's text: the path, and both statuses, the
    one the agent sent and the plan's as committed (round 63: a status set to a guess of a
    secret came back ``***`` from ``log`` and ``wait``, as ``status``'s ``file_status`` did)."""
    return {"path": (plan_id,), "status": (current,), "previous": (since,)}


def _outputs(execution: Any) -> dict[str, Any]:
    actions = execution.get("actions") if isinstance(execution, dict) else None
    return {
        str(a.get("id")): a.get("outputs")
        for a in actions or []
        if isinstance(a, dict) and a.get("outputs") is not None
    }


def _with_remedy(problem: Problem) -> dict[str, Any]:
    """A problem as MCP answers it: its own remedy (the located one a reader gave it, round
    116: the generic one of its code had replaced it), else its code's."""
    cls = ERROR_CLASSES.get(problem.code)
    found = problem.to_json()
    return {**found, "remedy": problem.remedy or (cls.remedy if cls else found.get("remedy"))}


def _repository_text(row: dict[str, Any]) -> dict[str, Any]:
    """What of a status row is the repository's text as its writers wrote it, which an agent
    reads in git anyway: the row builder's one classification of its fields
    (:func:`controller.service.reconcile.author_text`: the path, the statuses, the history's
    notes, an invalid or unreadable plan's problem; round 63 added ``file_status`` and
    ``problem``, which a field list here had left out)."""
    from controller.service.reconcile import author_text

    return author_text(row)


def _errors(exc: PlangateError) -> list[dict[str, Any]]:
    problems = getattr(exc, "problems", None)
    if problems:
        return [_with_remedy(p) for p in problems]
    return [
        {
            "code": exc.code,
            "message": exc.message,
            "path": exc.path or None,
            "line": exc.line,
            "remedy": exc.remedy or None,
        }
    ]


def _holds_plan(names: list[str]) -> bool:
    """A folder's entries hold a plan file or a plan source (any case, any spelling one
    with it on some checkout: :func:`controller.plan.names.same_name`)."""
    from controller.plan.names import SOURCE_FILES, plan_file_claims, same_name

    return bool(plan_file_claims(names)) or any(same_name(n, SOURCE_FILES) for n in names)


def _not_own(message: str, quotes: tuple[str, ...], remedy: str | None = None) -> UsageError:
    """The refusal of a slug whose folder is not its own: the paths it names are the
    agent's own text (kept as written in the answer; round 62)."""
    return UsageError(
        message,
        quotes=quotes,
        remedy=remedy
        or "submit under a slug of its own (a folder that holds no plan, above or below), "
        "e.g. rotate-keys or team/rotate-keys",
    )


def _waitable(status: str | None, current: str | None) -> None:
    """A ``status`` to wait from is a plan status as the controller's rows spell it, or the
    plan's status now (an ``unreadable`` row's included); None is the status now. Round
    126: ``pending-approval``, ``PENDING_APPROVAL`` or ``bogus`` answered ``changed: true``
    at once, an agent's typo read as a change."""
    from controller.plan.shape import STATUSES

    if status is None or status == current or status in STATUSES:
        return
    from controller.display import shorten

    said = shorten(repr(status), 80)
    raise UsageError(
        f"status {said} is no plan status",
        path="status",
        remedy=f"give one of {', '.join(STATUSES)} (as `status` answers them), or leave "
        "status out to wait from the plan's status now",
        quotes=(said,),
    )
