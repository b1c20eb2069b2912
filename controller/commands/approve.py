"""``plangate approve PATH [--sign] [-m NOTE]``: approve a plan by committing its status.

Also the shared helper behind ``reject`` and ``abort``: read the plan as committed at HEAD,
change ``plan.status`` round-trip (nothing else in the file moves), and commit only that file
as the current git user, without touching the index or working tree beyond that one file.
The commit is the approval request; the controller verifies it against history (SPEC §5).
"""

from __future__ import annotations

from pathlib import Path

from controller.display import visible
from controller.errors import IllegalTransition, PlangateError, UsageError

#: status a human command sets -> statuses it may be set from (SPEC §4)
ALLOWED_FROM = {
    "approved": ("pending_approval", "awaiting_approval", "failed"),
    "rejected": ("pending_approval",),
    "aborted": ("executing", "awaiting_approval"),
}
VERBS = {"approved": "approve", "rejected": "reject", "aborted": "abort"}


def approve(
    *, config_path: str | None, path: str, sign: bool, note: str | None, trailer: bool = False
) -> int:
    if trailer:
        return commit_trailer(path, note=note)
    return commit_status(path, "approved", note=note, sign=sign)


def commit_trailer(path: str, *, note: str | None) -> int:
    """``approve --trailer``: an empty, signed commit ``Plan-Approved: <plan> <hash>`` on the
    current branch (a pull request's), counted as the signer's approval when the branch is
    merged (SPEC §11). The plan's status is not changed."""
    from controller.git.gitrepo import GitRepo
    from controller.plan import plans

    plan_file = plans.plan_file_in(Path(path)).resolve()
    if not plan_file.is_file():
        raise UsageError(f"{path}: no PLAN.yml there", remedy="give a plan folder or its PLAN.yml")
    repo = GitRepo.containing(plan_file.parent)
    rel = plan_file.relative_to(repo.path.resolve()).as_posix()
    head = repo.rev("HEAD")
    committed = repo.read_file(head, rel) if head else None
    if committed is None or head is None:
        raise UsageError(f"{rel} is not committed", remedy="commit the plan first")
    text = committed.decode("utf-8")
    _refuse_uncommitted(text, plan_file.read_text(encoding="utf-8"), rel)
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
        raise PlangateError(f"{branch} moved while committing", remedy="run the command again")
    print(
        f"approved {visible(plan_id)} {loaded.hash} in signed commit {sha[:12]} on "
        f"{visible(branch)}; it counts once the branch is merged"
    )
    return 0


def commit_status(path: str, status: str, *, note: str | None, sign: bool = False) -> int:
    from controller.git.gitrepo import GitRepo
    from controller.plan import plans, yamlio

    plan_file = plans.plan_file_in(Path(path)).resolve()
    if not plan_file.is_file():
        raise UsageError(f"{path}: no PLAN.yml there", remedy="give a plan folder or its PLAN.yml")
    repo = GitRepo.containing(plan_file.parent)
    rel = plan_file.relative_to(repo.path.resolve()).as_posix()
    branch = repo.current_branch()
    head = repo.rev("HEAD")
    committed = repo.read_file(head, rel) if head else None
    if committed is None or head is None:
        raise UsageError(f"{rel} is not committed", remedy="commit the plan first")
    text = committed.decode("utf-8")
    on_disk = plan_file.read_text(encoding="utf-8")
    _refuse_uncommitted(text, on_disk, rel)
    loaded = plans.validate_text(text, Path(rel))
    _check_transition(loaded, status, rel)
    new_text = yamlio.set_scalar(yamlio.read_yaml(text, rel), ("plan", "status"), status)
    plan_id = str(Path(rel).parent)
    message = _message(status, plan_id, loaded.hash, note)
    sha = repo.commit_files(
        branch=branch,
        parent=head,
        files={rel: new_text.encode()},
        message=message,
        author=repo.user("AUTHOR"),
        committer=repo.user("COMMITTER"),
        sign=sign,
    )
    if sha is None:
        raise PlangateError(f"{branch} moved while committing", remedy="run the command again")
    disk_text = on_disk if on_disk != text else new_text
    if on_disk != text:  # keep the engine's uncommitted execution block, change only the status
        disk_text = yamlio.set_scalar(yamlio.read_yaml(on_disk, rel), ("plan", "status"), status)
    plan_file.write_text(disk_text, encoding="utf-8")
    repo.set_index_entries({rel: new_text.encode()})
    # the folder and the branch are anyone's text; the status is the past tense of the verb
    print(
        f"{status} {visible(plan_id)} in {sha[:12]} on {visible(branch)}"
        + ("" if status != "approved" else "; push it if the controller watches a remote")
    )
    return 0


def _refuse_uncommitted(committed: str, on_disk: str, rel: str) -> None:
    from controller.plan import yamlio

    def core(text: str) -> str:
        try:
            return yamlio.set_block(yamlio.read_yaml(text, rel), "execution", None)
        except PlangateError:
            return text

    if core(committed) != core(on_disk):
        raise UsageError(
            f"{rel} has uncommitted edits; approving would not cover what you see",
            remedy="commit or discard the edits first, then run the command again",
        )


def _check_transition(loaded: object, status: str, rel: str) -> None:
    from controller.errors import PlanHashMismatch, PlanNotFrozen

    current = getattr(loaded, "status", None)
    if current not in ALLOWED_FROM[status]:
        raise IllegalTransition(
            f"{rel} is {current}; {VERBS[status]} works on a plan that is "
            + " or ".join(ALLOWED_FROM[status])
        )
    if status == "approved":
        frozen = getattr(loaded, "frozen_hash", None)
        if frozen is None:
            raise PlanNotFrozen(f"{rel} is not frozen yet; wait for the controller to freeze it")
        if frozen != getattr(loaded, "hash", None):
            raise PlanHashMismatch(f"{rel} changed after it was frozen")


def _message(status: str, plan_id: str, plan_hash: str | None, note: str | None) -> str:
    text = f"{VERBS[status]} {plan_id}\n\n"
    if note:
        text += note.strip() + "\n\n"
    return text + f"Plan: {plan_id}\nPlan-Hash: {plan_hash or 'none'}\nPlan-Status: {status}\n"
