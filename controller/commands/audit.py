"""``plangate audit [--json]``: check every execution in git history against its approval.

Reads git history alone (see :mod:`controller.approval.audit`); exit 1 when anything is flagged.
Without a config it audits the repository around the current folder by the policies the
controller recorded there (``.plangate/policy.json``); with one, it also says when today's
config differs from the last recorded policy, and knows the controller's commits by its
record in the config's state directory (``<state_dir>/commits``) when there is one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from controller.display import visible

if TYPE_CHECKING:
    from controller.git.gitrepo import GitRepo


def audit(*, config_path: str | None, as_json: bool, controller: str | None = None) -> int:
    from controller.approval.audit import audit_repo
    from controller.commands._shared import optional_config, own_commits, signers_pinned
    from controller.errors import GitError
    from controller.git.gitrepo import GitRepo

    config = optional_config(config_path)
    if config is None:  # git alone: the repository around the current folder
        repo = _repo_here()
        head = repo.rev("HEAD")
    elif config.remote is not None:
        clone = config.state_path() / "clone"
        if not clone.is_dir():
            raise GitError(
                f"remote mode: the controller's clone {clone} does not exist yet",
                remedy="run `plangate run --once` with this config first, or audit a clone "
                "of the remote with a local-mode config (repo: <the clone>)",
            )
        repo = GitRepo(clone)
        head = repo.rev(f"refs/heads/{config.remote.branch}")
    else:
        repo = GitRepo(config.repo_path())
        head = repo.rev("HEAD")
    if head is None:
        raise GitError("the repository has no commits to audit")
    if config is None:
        report = audit_repo(repo, config, head, controller, own_commits(config))
    else:  # allowed_signers read once, as a controller pass reads it (round 125)
        with signers_pinned(config) as pinned:
            report = audit_repo(repo, pinned, head, controller, own_commits(config))
    if as_json:
        print(json.dumps(report.to_json(), indent=2))
    else:
        _print(report)
    return 0 if report.ok else 1


def _repo_here() -> GitRepo:
    from controller.errors import ConfigInvalid, NotInWorkTree
    from controller.git.gitrepo import GitRepo

    try:
        return GitRepo.containing(Path.cwd())
    except NotInWorkTree:
        raise ConfigInvalid(
            "no config found, and the current folder is not inside a git working tree",
            remedy="run `plangate audit` inside a clone of the plans repository (it reads "
            "the recorded policy), or pass --config",
        ) from None


def _print(report: object) -> None:
    """One line per execution and per finding; every value from git escaped (controller.display)."""
    from controller.approval.audit import AuditReport

    assert isinstance(report, AuditReport)
    for ex in report.executions:
        verdict = "valid" if ex.approval_valid and ex.hash_ok else f"INVALID {ex.code or ''}"
        kind = (
            f" ({ex.approval_kind})" if ex.approval_kind and ex.approval_kind != "approve" else ""
        )
        by = f" by {ex.aborted_by}" if ex.aborted_by else ""
        print(
            visible(
                f"{ex.plan}: start {ex.start_commit[:12]} at {ex.started_at or '?'} approved"
                f"{kind} by {ex.approver or '?'} in {(ex.approval_commit or '?')[:12]}: "
                f"{verdict} -> {ex.outcome or 'running'}{by}"
            )
        )
    for d in report.decisions:
        what = "rejected" if d["kind"] == "reject" else "abort requested"
        said = f": {d['reason']}" if d.get("reason") else ""
        line = f"{d['plan']}: {what} by {d['by']} in {str(d['commit'])[:12]} at {d['at']}{said}"
        print(visible(line))
    for f in report.findings:
        print(visible(f"FLAG {f['kind']}: {f['plan']} at {f['commit'][:12]}: {f['detail']}"))
    for note in report.notes:
        print(visible(f"note: {note['detail']}"))
    print("audit: ok" if report.ok else f"audit: {len(report.findings)} finding(s)")
