"""The verdict on one approval request, from git: the one path the controller and ``check`` share.

:func:`decide` gathers what :func:`controller.approval.quorum.judge` needs for a plan whose
history holds an open approval request: the §5 facts (:func:`controller.git.history.
build_request`), the plan's risk and tools at the approving commit (its
:class:`~controller.approval.policy.Need`), the votes the controller recorded for this hash
(``PlanState.collected``), and, when the request is a merge, the signed ``Plan-Approved:``
commits of the merged branch. The live controller commits what it returns; ``plangate check``
prints it for a merge that has not happened yet; so the two cannot disagree.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from controller.approval import policy, quorum
from controller.git.history import PlanState, build_request
from controller.plan import profile, yamlio

if TYPE_CHECKING:
    from controller.approval.approvals import ApprovalRequest
    from controller.git.gitrepo import GitRepo
    from controller.settings import Config

Check = Callable[[bytes], tuple[tuple[str, ...], str | None]]


def decide(
    state: PlanState, repo: GitRepo, config: Config, check: Check, *, verified_at: int
) -> tuple[ApprovalRequest, quorum.Verdict]:
    """The request and its verdict under the config's policy."""
    request = build_request(
        state,
        repo,
        check,
        require_signed=config.approval.require_signed,
        allowed_signers=config.approval.allowed_signers,
        verified_at=verified_at,
    )
    need = need_at(state, repo, config, (state.request or {}).get("blob"))
    collected = quorum.votes_from(state.collected, request.current_hash)
    trailers = trailer_requests(repo, request, config) if request.current_hash else []
    verdict = quorum.judge(
        request,
        config.approval,
        need,
        quorum.iso(request.commit_time),
        collected=collected,
        trailers=trailers,
    )
    return request, verdict


def need_at(state: PlanState, repo: GitRepo, config: Config, blob: str | None) -> policy.Need:
    """What the policy requires of the plan version in ``blob``."""
    data: Any = None
    if blob is not None:
        try:
            data = yamlio.read_yaml(repo.blob(blob).decode("utf-8"), state.file).data
        except Exception:
            data = None  # unreadable: the §5 checks refuse it anyway
    found = profile.profile_of(state.plan_id, data, config.tools)
    return policy.need_for(found, config.approval)


def trailer_requests(
    repo: GitRepo, request: ApprovalRequest, config: Config
) -> list[ApprovalRequest]:
    """Commits of the merged branch(es) with ``Plan-Approved: <plan> <hash>`` for this hash,
    each as a request of its signer (unsigned ones too: judge refuses them, check shows why)."""
    record = repo.commit(request.commit)
    if len(record.parents) < 2 or request.current_hash is None:
        return []
    wanted = quorum.trailer_value(request.plan_id, request.current_hash)
    found = []
    for parent in record.parents[1:]:
        for commit in repo.range_log(record.parents[0], parent, []):
            if commit.trailers.get(quorum.TRAILER, "").strip() != wanted:
                continue
            signature = repo.verify_commit(commit.sha, config.approval.allowed_signers)
            found.append(
                quorum.trailer_request(
                    request,
                    commit.sha,
                    commit.commit_time,
                    signature.signer if signature.valid else None,
                    signature.valid,
                    signature.message,
                )
            )
    return found
