"""``plangate approve PATH [--sign] [-m NOTE]``: approve a plan by committing its status.

Also the shared helper behind ``reject`` and ``abort``: read the plan as committed at HEAD,
change ``plan.status`` round-trip (nothing else in the file moves), and commit only that file
as the current git user, without touching the index or working tree beyond that one file.
The commit is the approval request; the controller verifies it against history (SPEC §5).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from controller.display import visible
from controller.errors import (
    GitError,
    IllegalTransition,
    PlangateError,
    PlanHashMismatch,
    UsageError,
)

if TYPE_CHECKING:
    from controller.git.gitrepo import GitRepo
    from controller.plan.plans import LoadedPlan
    from controller.settings import Config


def approve(
    *,
    config_path: str | None,
    path: str,
    sign: bool,
    note: str | None,
    trailer: bool = False,
    force: bool = False,
) -> int:
    if trailer:
        return commit_trailer(path, note=note)
    return commit_status(
        path, "approved", note=note, sign=sign, config_path=config_path, force=force
    )


def _not_there(
    path: str, plan_file: Path, watched: Path | None = None, verb: str = "approve"
) -> UsageError:
    """The error for a plan file not in the working tree: the branch's copy left out
    (:func:`~controller.commands._shared.left_out`, its remedy ending in ``verb``: round 116,
    refusal-text-wrong-verb), else "no PLAN.yml"."""
    from controller.commands._shared import left_out

    held = left_out(plan_file, watched, f"read it, then {verb}")
    if held is not None:
        return held
    return UsageError(f"{path}: no PLAN.yml there", remedy="give a plan folder or its PLAN.yml")


def commit_trailer(path: str, *, note: str | None) -> int:
    """``approve --trailer``: an empty, signed commit ``Plan-Approved: <plan> <hash>`` on the
    current branch (a pull request's), counted as the signer's approval when the branch is
    merged (SPEC §11). The plan's status is not changed."""
    from controller.git.gitrepo import GitRepo
    from controller.plan import plans

    plan_file = named_plan_file(path)
    if not plan_file.is_file():
        raise _not_there(path, plan_file)
    repo = GitRepo.containing(plan_file.parent)
    rel = plan_file.relative_to(repo.path.resolve()).as_posix()
    head = repo.rev("HEAD")
    committed = repo.read_file(head, rel) if head else None
    if committed is None or head is None:
        raise UsageError(f"{rel} is not committed", remedy="commit the plan first")
    text = committed.decode("utf-8")
    _refuse_uncommitted(repo, text, _on_disk(repo, plan_file, rel, committed), rel, "approve")
    loaded = plans.validate_text(text, Path(rel))
    if loaded.status not in ("pending_approval", "approved"):
        raise IllegalTransition(
            f"{rel} is {loaded.status}; a trailer approval is for a plan that is "
            "pending_approval (or set approved on this branch)"
        )
    if loaded.status != "approved":
        _check_transition(loaded, "approved", rel)
    plan_id = str(Path(rel).parent)
    body = f"{note.strip()}\n\n" if note else ""
    message = f"approve {plan_id} (trailer)\n\n{body}Plan-Approved: {plan_id} {loaded.hash}\n"
    branch = repo.current_branch()
    sha = repo.commit_files(
        branch=branch,
        parent=head,
        files={},
        message=message,
        author=repo.user("AUTHOR"),
        committer=repo.user("COMMITTER"),
        sign=True,
    )
    if sha is None:
        raise GitError(f"{branch} moved while committing", remedy="run the command again")
    print(
        f"approved {visible(plan_id)} {loaded.hash} in signed commit {sha[:12]} on "
        f"{visible(branch)}; it counts once the branch is merged"
    )
    return 0


def commit_status(
    path: str,
    status: str,
    *,
    note: str | None,
    sign: bool = False,
    config_path: str | None = None,
    force: bool = False,
) -> int:
    from controller.approval.precheck import VERBS
    from controller.commands._shared import optional_config
    from controller.git import sharedwrite
    from controller.git.gitrepo import GitRepo
    from controller.plan import plans, yamlio

    config = optional_config(config_path)
    plan_file = named_plan_file(
        path,
        config.plans_dir if config is not None else "plans",
        config.repo if config is not None else None,
    )
    if not plan_file.is_file():
        raise _not_there(
            path, plan_file, config.repo if config is not None else None, VERBS[status]
        )
    repo = GitRepo.containing(plan_file.parent)
    if config is not None:  # a killed controller's index.lock, first (its next start's work)
        from controller.service.statedir import finish_a_dead_controllers_index

        finish_a_dead_controllers_index(config, repo)
    rel = plan_file.relative_to(repo.path.resolve()).as_posix()
    branch = repo.current_branch()
    reviewed: str | None = None  # the version the first attempt read: the one she approves
    for _attempt in range(COMMIT_ATTEMPTS):
        head = repo.rev("HEAD")
        committed = repo.read_file(head, rel) if head else None
        if committed is None or head is None:
            raise UsageError(f"{rel} is not committed", remedy="commit the plan first")
        text = committed.decode("utf-8")
        loaded = plans.validate_text(text, Path(rel))
        plan_id = str(Path(rel).parent)
        version = loaded.hash or ""
        if reviewed is None:
            reviewed = version
        elif version != reviewed:
            # the branch moved under the command and brought another version: what she
            # read is no longer what the commit would approve; never carried over
            raise PlanHashMismatch(
                f"{visible(plan_id)} changed on {visible(branch)} while committing "
                f"({reviewed[:12]} -> {version[:12]}); nothing committed",
                remedy="review the new version (plangate show) and run the command again",
            )
        on_disk = _on_disk(repo, plan_file, rel, committed)
        _refuse_uncommitted(repo, text, on_disk, rel, VERBS[status])
        if config is not None and not force:
            # the status the controller holds: a withdrawal it ignored (its author was not
            # entitled) leaves the plan where it was (round 28: approve refused a plan the
            # controller showed waiting for an approval)
            authors, held = _history(repo, head, config, plan_id, status)
            _check_transition(loaded, status, plan_id, held)
            _precheck(repo, config, plan_id, status, authors)
        else:
            _check_transition(loaded, status, plan_id)
        new_text = yamlio.set_scalar(yamlio.read_yaml(text, rel), ("plan", "status"), status)
        message = _message(status, plan_id, loaded.hash, note)
        repo.check_checkouts({rel: new_text.encode()})  # given back by its checkout (round 79)
        disk_text = on_disk if on_disk != text else new_text
        if on_disk != text:  # keep the engine's uncommitted execution block, change the status
            disk_text = yamlio.set_scalar(
                yamlio.read_yaml(on_disk, rel), ("plan", "status"), status
            )
        # the one writer of a shared working tree (controller.git.sharedwrite): index.lock
        # held from before the branch moves until the index and the tree hold the commit
        sha = sharedwrite.commit_checked_out(
            repo,
            branch=branch,
            parent=head,
            files={rel: new_text.encode()},
            message=message,
            author=repo.user("AUTHOR"),
            committer=repo.user("COMMITTER"),
            sign=sign,
            tree_files={rel: disk_text.encode("utf-8")},  # as git would check it out
        )
        if sha is not None:
            break
        # the branch moved (the controller's or an agent's commit): read it again and try
        # once more, on the same version only (above)
    else:
        raise GitError(
            f"{branch} kept moving while committing ({COMMIT_ATTEMPTS} tries); nothing committed",
            remedy="run the command again",
        )
    # the folder and the branch are anyone's text
    print(f"{DONE[status]} {visible(plan_id)} in {sha[:12]} on {visible(branch)}{NEXT[status]}")
    return 0


#: tries of ``approve``/``reject``/``abort`` when the branch moves under the commit (a
#: controller in local mode commits often); each reads the branch again and commits only
#: onto the version the first read
COMMIT_ATTEMPTS = 5

#: what the commit is, in the user's words: the controller decides what it does
DONE = {"approved": "approved", "rejected": "rejected", "aborted": "abort requested for"}
NEXT = {
    "approved": "; push it if the controller watches a remote",
    "rejected": "",
    "aborted": "; the controller stops it before its next action (push it if it watches a remote)",
}


def named_plan_file(path: str, plans_dir: str = "plans", watched: Path | None = None) -> Path:
    """The plan file ``path`` names, never reached through a symbolic link below its
    repository: in a shared working tree an agent could point ``approve plans/x`` at another
    plan, or at a plan in its own clone, and the approver would sign what she never
    reviewed (round 12); never in a folder the controller holds for its name (round 75:
    ``reject "plans/a-sp "`` committed a rejection git's subject showed as ``plans/a-sp``'s)
    or for a claim or a twin folder at any level under ``plans_dir`` (round 76: ``reject
    plans/F`` beside ``plans/f`` committed into a plan every reader holds
    E_PLAN_AMBIGUOUS)."""

    from controller.errors import UnsafePath
    from controller.plan import plans

    plan_file = Path(os.path.abspath(plans.plan_file_in(Path(path))))
    held = plans.name_problem(plan_file)
    if held is not None:
        folder = plans.repo_path(plan_file.parent)
        raise UnsafePath(f"{folder!r}: {held.message}", quotes=(repr(folder),))
    held = plans.held_problem(plan_file, plans_dir)
    if held is not None:
        from controller.errors import error_for

        folder = plans.repo_path(plan_file.parent)
        raise error_for(held.code, f"{folder!r}: {held.message}", quotes=(repr(folder),))
    roots = [p for p in plan_file.parents if os.path.lexists(p / ".git")]
    if roots:
        here = roots[0]
        for part in plan_file.relative_to(roots[0]).parts:
            here = here / part
            if here.is_symlink():
                raise UnsafePath(
                    f"{here} is a symbolic link: plangate acts on the plan at the path you "
                    "name, never through a link (someone who writes the working tree could "
                    "point it at another plan or repository)",
                    remedy="look at the plan (plangate show) and name its real folder",
                )
    from controller.commands._shared import refuse_nested

    refuse_nested(path, plan_file, plans_dir, watched)
    return plan_file.resolve()


def _history(
    repo: GitRepo, head: str, config: Config, plan_id: str, status: str
) -> tuple[list[str], str | None]:
    """Who counts as the plan's author for ``status`` and the status the controller holds,
    from the history the controller reads (:func:`~controller.commands._shared.read_history`,
    withdrawals judged by the policy recorded when they were made): for an approval, every
    writer it counts (E_SELF_APPROVAL: writers carried in by a move or a copy, of its folder,
    of what it pins: round 43); for a rejection or an abort, the originators of the version
    at stake and of those it was edited from (``Lifecycle.withdrawers``: a mover or a copier
    made nothing afresh and withdraws nothing, rounds 34, 35, 43; anyone's copy leaves its
    author his right, round 119)."""
    from controller.approval.verdicts import writers
    from controller.commands._shared import read_history

    with read_history(repo, config, head) as index:
        state = index.plans.get(plan_id)
        if state is None:
            return [], None
        if status != "approved":
            return sorted(index.withdrawers(state)), state.status
        data = _parsed(repo, state.blob, state.file)
        return sorted(writers(state, index.authors, state.hash, data)), state.status


def _parsed(repo: GitRepo, blob: str | None, file: str) -> object:
    from controller.plan import yamlio

    if blob is None:
        return None
    try:
        return yamlio.read_yaml(repo.blob(blob).decode("utf-8"), file).data
    except Exception:  # unreadable: pins nothing (the controller refuses it anyway)
        return None


def _precheck(repo: GitRepo, config: Config, plan_id: str, status: str, authors: list[str]) -> None:
    """Say now what the controller would refuse or ignore (``--force`` skips this)."""
    from controller.approval.precheck import policy_problem

    user = repo.user("COMMITTER" if config.approval.identity == "committer" else "AUTHOR")
    verdict = policy_problem(plan_id, status, user.email, authors, config.approval)
    if verdict is not None:
        raise _error(verdict)


def _error(verdict: object) -> PlangateError:
    from controller.approval.precheck import Verdict
    from controller.errors import error_for

    assert isinstance(verdict, Verdict)
    err = error_for(verdict.code, verdict.message)
    err.remedy = verdict.remedy  # type: ignore[misc]
    return err


def _on_disk(repo: GitRepo, plan_file: Path, rel: str, committed: bytes) -> str:
    """The file's text byte for byte as git would store it (round 55: ``read_text`` turned
    CRLF line ends into LF, so every committed CRLF plan read as edited), through git's
    built-in conversions (round 75: a ``.gitattributes`` ``eol=crlf`` checkout, which ``git
    status`` calls clean, read as edited; round 76: ``ident``, ``working-tree-encoding``).
    Bytes that are no UTF-8 even so (an encoding's rules broken) read as an edit; the
    committed bytes themselves stand for the commit only where git calls them clean (round
    78: SHIFT-JIS reads the blob's ``\\`` back as ``¥``; ``WorkTree.as_git_compares``)."""
    raw = plan_file.read_bytes()
    return repo.as_git_compares(rel, raw, committed).decode("utf-8", "replace")


def _refuse_uncommitted(repo: GitRepo, committed: str, on_disk: str, rel: str, verb: str) -> None:
    """Refuse a file that differs from its commit, in the words of the command asked (round
    116, refusal-text-wrong-verb: ``reject`` answered "approving would not cover what you
    see"); an edit an index bit hides from ``git status`` names the bit and how to clear it
    (round 116, hidden-index-bit-remedy-unworkable: "commit or discard the edits" could not
    be followed where git status is clean and ``git checkout --`` leaves the file)."""
    from controller.plan import yamlio

    def core(text: str) -> str:
        try:
            return yamlio.set_block(yamlio.read_yaml(text, rel), "execution", None)
        except PlangateError:
            return text

    if core(committed) == core(on_disk):
        return
    doing = GERUNDS[verb]
    bit = repo.hiding_bit(rel)
    if bit is not None:
        raise UsageError(
            f"{rel} has uncommitted edits that `git status` does not show: its index entry is "
            f"marked {bit}; {doing} would not cover what you see",
            remedy=f"clear the bit (`git update-index --no-{bit} -- {rel}`), then commit or "
            f"discard the edits (`git checkout -- {rel}`), then {verb} again",
            quotes=(rel,),
        )
    raise UsageError(
        f"{rel} has uncommitted edits; {doing} would not cover what you see",
        remedy=f"commit or discard the edits first (`git checkout -- {rel}`), then {verb} again",
        quotes=(rel,),
    )


#: each command's own word for what it does (its refusals speak of it, never of approving)
GERUNDS = {"approve": "approving", "reject": "rejecting", "abort": "aborting"}


def _check_transition(
    loaded: LoadedPlan, status: str, plan_id: str, held: str | None = None
) -> None:
    """``held``: the status the controller holds, when history was read (else the file's)."""
    from controller.approval.precheck import transition_problem
    from controller.errors import PlanHashMismatch, PlanNotFrozen

    verdict = transition_problem(plan_id, held or loaded.status, status)
    if verdict is not None:
        raise _error(verdict)
    if status == "approved":
        if loaded.frozen_hash is None:
            raise PlanNotFrozen(
                f"{plan_id} is not frozen yet; wait for the controller to freeze it"
            )
        if loaded.frozen_hash != loaded.hash:
            raise PlanHashMismatch(f"{plan_id} changed after it was frozen")


def _message(status: str, plan_id: str, plan_hash: str | None, note: str | None) -> str:
    from controller.approval.precheck import VERBS

    text = f"{VERBS[status]} {plan_id}\n\n"
    if note:
        text += note.strip() + "\n\n"
    return text + f"Plan: {plan_id}\nPlan-Hash: {plan_hash or 'none'}\nPlan-Status: {status}\n"
