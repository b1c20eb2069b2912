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

from collections.abc import Callable, Iterable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import replace
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

from controller.approval import approvals, policy, quorum
from controller.git.history import PlanState, build_request, file_key, folder_key
from controller.plan import nested, profile, yamlio

if TYPE_CHECKING:
    from controller.approval.approvals import ApprovalRequest
    from controller.git.gitrepo import GitRepo
    from controller.settings import Config

Check = Callable[[bytes], tuple[tuple[str, ...], str | None]]
#: Who may withdraw a plan as its author, or a function giving them (:class:`_Authors`).
Authors = Iterable[str] | Callable[[], Iterable[str]]


def decide(
    state: PlanState,
    repo: GitRepo,
    config: Config,
    check: Check,
    *,
    verified_at: int,
    need: policy.Need | None = None,
    authors: Mapping[str, AbstractSet[str]] | None = None,
    withdrawn: Mapping[str, str] | None = None,
    plan_authors: Authors | None = None,
) -> tuple[ApprovalRequest, quorum.Verdict]:
    """The request and its verdict under the config's policy (``need``: already computed
    for the request's version of the plan; ``withdrawn``: the index's vetoed versions;
    ``plan_authors``: who may withdraw this plan as its author,
    :meth:`~controller.git.lifecycle.Lifecycle.withdrawers`, or a function giving them,
    whose own withdrawals of the version bind it: None, any producer's does)."""
    request = build_request(
        state,
        repo,
        check,
        require_signed=config.approval.require_signed,
        allowed_signers=config.approval.allowed_signers,
        verified_at=verified_at,
        authors=authors,
    )
    blob = (state.request or {}).get("blob")
    data = _data_at(repo, blob, state.file)
    own = request.changers  # the parent's own writers, before what it pins is added
    if authors is not None:
        # Approving a parent approves the nested plans it pins: whoever wrote one of them
        # wrote part of what runs (SPEC §12), and may not approve it either.
        # Whoever wrote any file in a pinned folder wrote that plan, as for the plan's own
        # folder (round 23: a note or a draft in a library's folder did not count), and
        # whoever wrote bytes of its plan file beside a status change (round 42: a comment).
        pinned = pinned_writers(data, authors)
        if not pinned <= request.changers:
            request = replace(request, changers=request.changers | frozenset(pinned))
    if withdrawn:
        mine = None if plan_authors is None else _Authors(plan_authors, config)
        vetoes = _vetoes(withdrawn, request, data, verified_at, own, mine)
        if vetoes:
            request = replace(request, withdrawn=vetoes)
    if need is None:
        need = need_at(state, repo, config, blob, data)
    collected = quorum.votes_from(state.collected, request.current_hash)
    # a merge's branch may hold Plan-Approved commits (older index entries: look it up)
    merge = bool((state.request or {}).get("merge", True))
    trailers = (
        trailer_requests(repo, request, config, state.file, check)
        if merge and request.current_hash
        else []
    )
    verdict = quorum.judge(
        request,
        config.approval,
        need,
        quorum.iso(request.commit_time),
        collected=collected,
        trailers=trailers,
        revotes=revotes(repo, request, config, collected, state.file, check),
    )
    return request, verdict


def pinned_writers(data: Any, authors: Mapping[str, AbstractSet[str]]) -> set[str]:
    """Whoever wrote a plan the parent ``data`` pins: its version, any file of its folder,
    any bytes of its plan file (approving a parent approves what it pins: SPEC §12)."""
    return {
        who
        for _, path, pin in nested.pins(data)
        for folder in ["/".join(PurePosixPath(path).parts)]
        for key in (pin, folder_key(folder), file_key(folder))
        for who in authors.get(key, ())
    }


def writers(
    state: PlanState, authors: Mapping[str, AbstractSet[str]], plan_hash: str | None, data: Any
) -> frozenset[str]:
    """Everyone the controller counts as a writer of the plan's version ``plan_hash`` (parsed:
    ``data``) when it judges an approval of it (E_SELF_APPROVAL): its changers, the writers
    of that content on any path and of the plan's folder (carried there by a move or a copy:
    rounds 17, 35, 42), and the writers of what it pins; as :func:`decide` gathers them."""
    found = frozenset(state.changers) | frozenset(authors.get(plan_hash or "", ()))
    return (
        found | authors.get(folder_key(state.plan_id), frozenset()) | pinned_writers(data, authors)
    )


def refused(
    verdict: quorum.Verdict, request: ApprovalRequest, code: str, message: str
) -> quorum.Verdict:
    """``verdict`` turned into a refusal with ``code`` (whatever the approvals said)."""
    decision = approvals.Decision(False, verdict.decision.approver, code, message)
    return replace(
        verdict,
        outcome="refuse",
        decision=decision,
        record=decision.record(request, quorum.iso(request.commit_time)),
    )


def already_executed(
    verdict: quorum.Verdict, request: ApprovalRequest, ran: str | None
) -> quorum.Verdict:
    """An approval of a version that already ran (``ran``: where) is refused, whoever
    approved it: a copy, move or rewritten history of it does not run again."""
    if request.kind is not approvals.Transition.APPROVE or not ran:
        return verdict
    return refused(
        verdict,
        request,
        "E_ALREADY_EXECUTED",
        f"this exact plan (hash {request.current_hash}) already ran here as {ran}; "
        "a copy, move or rewritten history of it does not run again",
    )


def started_in_pass(claims: Mapping[str, str], plan_hash: str | None) -> str | None:
    """Where a plan decided earlier in this pass started ``plan_hash`` (``claims``: hash ->
    plan, in the pass's order of plans: sorted ids), said as :func:`already_executed` says
    where a version ran: the controller and ``plangate check`` refuse a second plan of one
    version alike (SPEC §15, at most once; round 79: check predicted ``start`` for a move's
    byte-exact copy the pass then refused)."""
    claimed = claims.get(plan_hash or "")
    return None if claimed is None else f"{claimed} (started in the same pass)"


def claim_start(claims: dict[str, str], request: ApprovalRequest, plan_id: str) -> None:
    """A first approval of ``plan_id`` starts: its version is claimed for the rest of the
    pass (:func:`started_in_pass`); a gate's or a resume's continues a run, claiming none."""
    if request.kind is approvals.Transition.APPROVE and request.current_hash:
        claims[request.current_hash] = plan_id


def _vetoes(
    withdrawn: Mapping[str, str],
    request: ApprovalRequest,
    data: Any,
    verified_at: int,
    own: AbstractSet[str] = frozenset(),
    plan_authors: _Authors | None = None,
) -> tuple[str, ...]:
    """The withdrawals, made by ``verified_at``, of the approved version or of a version it
    pins (approving a parent approves exactly the plans it pins: SPEC §12). A pinned
    version's producer's withdrawal binds a parent only one of its writers (``own``) is she:
    the writer of a pinned child may not withdraw someone else's parent (round 37,
    ``reject-child``; round 120, child-author-vetoes-pinning-parent); an allowed
    approver's binds every parent. For the plan's own version, a producer's withdrawal
    binds it only where she may withdraw this plan as its author (``plan_authors``)."""
    import json

    found = []
    pins = [(None, request.current_hash)] + [(path, pin) for _, path, pin in nested.pins(data)]
    for path, plan_hash in pins:
        entry = withdrawn.get(plan_hash or "")
        if entry is None:
            continue
        veto = _binding_veto(
            json.loads(entry), verified_at, own if path else None, None if path else plan_authors
        )
        if veto is None:
            continue
        what = f"{veto['plan']} (pinned as {path})" if path else veto["plan"]
        found.append(
            f"{what} was set {veto.get('status', 'rejected')} by {veto['by']} in "
            f"{str(veto['commit'])[:12]}"
        )
    return tuple(found)


def _binding_veto(
    veto: dict[str, Any],
    verified_at: int,
    parent_writers: AbstractSet[str] | None,
    plan_authors: _Authors | None = None,
) -> dict[str, Any] | None:
    """The kept withdrawal (the history index's, :meth:`Lifecycle._veto`) that binds this
    approval, made by ``verified_at`` (after it, the verdict was due: the audit judges each
    run as of its start); ``parent_writers``: the approved parent's own writers when the
    version is one it pins, None for the plan's own version; ``plan_authors``: for the
    plan's own version, who may withdraw this plan as its author (None: any producer).

    A producer's withdrawal (``as: author``) withdrew a version as HER plan: it binds a plan
    of hers, a copy, a re-add or a re-making of it whose authors are hers (rounds 16, 23),
    not a plan someone else made independently. Round 124 (``racer-veto-before-merge``):
    Mallory committed the bytes of an agent's open pull request at her own folder and set her
    copy ``rejected`` before the merge; at that moment she was the version's only producer,
    so her rejection vetoed the agent's plan by hash, and Bob's approval of it after the
    merge was ``E_VERSION_WITHDRAWN``. At the agent's folder its authors are the agent's
    (:meth:`IndexStore.origins_at`), Mallory is none, and her withdrawal binds her copy only.
    An allowed approver's binds every plan holding the version."""
    made = [v for v in (veto, veto.get("approver")) if isinstance(v, dict)]
    made = [v for v in made if int(v.get("time") or 0) <= verified_at]
    for each in made:
        if each.get("as", "approver") == "approver":
            return each  # an allowed approver's binds every plan and every parent
        if parent_writers is None:
            if plan_authors is None or plan_authors.holds(str(each.get("by") or "")):
                return each  # the plan itself: she may withdraw it as its author
            continue
        who = approvals.normalize_identity(str(each.get("by") or ""))
        writers = {approvals.normalize_identity(w) for w in parent_writers}
        if who in writers or approvals.EVERYONE in writers:
            return each  # a parent she wrote herself (round 23: her own pin)
    return None


def binding_withdrawal(
    veto: dict[str, Any], plan_authors: Iterable[str], config: Config, verified_at: int
) -> dict[str, Any] | None:
    """The kept withdrawal ``veto`` of a plan's own version (:meth:`Lifecycle._veto`) as it
    binds a plan whose authors are ``plan_authors`` (:meth:`Lifecycle.withdrawers`): what
    :func:`decide` refuses an approval of it with, and what a status row and MCP ``submit``
    say of it; None when it binds that plan not (a producer's, of a plan not hers)."""
    return _binding_veto(veto, verified_at, None, _Authors(plan_authors, config))


class _Authors:
    """Who may withdraw a plan as its author (:meth:`Lifecycle.withdrawers`), matched as the
    withdrawal rule matches them (:func:`approvals.may_withdraw`: the identity aliases of
    the policy); a set the index could not read whole (a cut co-author list, a history
    followed past the bound) holds everyone: a withdrawal then binds (the safe side).
    ``authors`` may be a function giving them: asked only when a producer's withdrawal of
    the version is there to judge (the common decision has none)."""

    def __init__(self, authors: Authors, config: Config) -> None:
        self.aliases = config.approval.identity_aliases
        self._authors = authors
        self._known: set[str] | None = None

    def holds(self, email: str) -> bool:
        if self._known is None:
            found = set(self._authors() if callable(self._authors) else self._authors)
            if found & {approvals.EVERYONE, approvals.UNFOLLOWED}:
                return True
            self._known = {approvals.canonical(a, self.aliases) for a in found}
        return approvals.canonical(email, self.aliases) in self._known


def _data_at(repo: GitRepo, blob: str | None, file: str) -> Any:
    """The plan version in ``blob``, parsed (None: absent or unreadable, which the §5
    checks refuse anyway)."""
    if blob is None:
        return None
    try:
        return yamlio.read_yaml(repo.blob(blob).decode("utf-8"), file).data
    except Exception:
        return None


def need_at(
    state: PlanState, repo: GitRepo, config: Config, blob: str | None, data: Any = None
) -> policy.Need:
    """What the policy requires of the plan version in ``blob`` (``data``: already parsed)."""
    if data is None:
        data = _data_at(repo, blob, state.file)
    commit = (state.request or {}).get("commit")
    reader = nested_at(repo, str(commit), config) if commit else None
    found = profile.profile_of(state.plan_id, data, config.tools, reader)
    return policy.need_for(found, config.approval)


def nested_at(repo: GitRepo, commit: str, config: Config) -> nested.Reader:
    """Nested plans as the tree of ``commit`` holds them: what that approval approves."""
    return nested.blob_reader(fetch_at(repo, commit), config)


def fetch_at(repo: GitRepo, commit: str) -> nested.Fetch:
    """The tree of ``commit`` as nested plans are read from it (:class:`nested.Fetch`): a
    path's bytes (None: absent or unreadable, which makes a pin unread: high risk, or
    invalid) and a folder's names."""
    return _TreeAt(repo, commit)


class _TreeAt:
    """:func:`fetch_at`'s reader of one commit's tree."""

    def __init__(self, repo: GitRepo, commit: str) -> None:
        self.repo, self.commit = repo, commit

    def __call__(self, path: str) -> bytes | None:
        try:
            sha = self.repo.blob_sha(self.commit, path)
            return self.repo.blob(sha) if sha is not None else None
        except Exception:
            return None

    def names(self, folder: str) -> list[str]:
        try:
            return self.repo.names_in(self.commit, folder)
        except Exception:
            return []


def trailer_requests(
    repo: GitRepo,
    request: ApprovalRequest,
    config: Config,
    file: str | None = None,
    check: Check | None = None,
) -> list[ApprovalRequest]:
    """Commits of the merged branch(es) with ``Plan-Approved: <plan> <hash>`` for this hash,
    each as a request of its signer (unsigned ones too: judge refuses them, check shows why).
    A trailer commit that itself changed the plan's hashed content is an approving commit
    that changes content (refused, as any such approval is): its signer wrote that version,
    whoever the commit names as author."""
    if request.current_hash is None:
        return []
    wanted = quorum.trailer_value(request.plan_id, request.current_hash)
    found = []
    for sha, value, time, author_time in _branch_trailers(repo, request.commit):
        if value != wanted:
            continue
        found.append(_trailer(repo, request, config, sha, time, author_time, file, check))
    return found


def _trailer(
    repo: GitRepo,
    request: ApprovalRequest,
    config: Config,
    sha: str,
    time: int,
    author_time: int,
    file: str | None,
    check: Check | None,
) -> ApprovalRequest:
    signature = repo.verify_commit(sha, config.approval.allowed_signers)
    return quorum.trailer_request(
        request,
        sha,
        time,
        signature.signer if signature.valid else None,
        signature.valid,
        signature.message,
        changed=file is None or check is None or _changes_content(repo, sha, file, check),
        author_time=author_time,
        signer_key=signature.key,
    )


def revotes(
    repo: GitRepo,
    request: ApprovalRequest,
    config: Config,
    collected: list[quorum.Vote],
    file: str | None = None,
    check: Check | None = None,
) -> dict[str, tuple[ApprovalRequest, bool]]:
    """Each collected vote's commit as a request again, to be judged under the policy in
    force now, not the one it was counted under (round 15: a vote counted before
    ``require_signed``, a key revoked, ``allow_self_approval`` turned off, an alias or
    ``identity: committer`` came, kept counting). A ``Plan-Approved:`` commit is its signer's
    request; any other is its author's (or committer's). A vote whose commit cannot be read
    is left out (judge then drops it)."""
    wanted = quorum.trailer_value(request.plan_id, request.current_hash or "")
    found: dict[str, tuple[ApprovalRequest, bool]] = {}
    for vote in collected:
        try:
            record = repo.commit(vote.commit)
        except Exception:
            continue
        if (record.trailers.get(quorum.TRAILER) or "").strip() == wanted:
            trailer = _trailer(
                repo,
                request,
                config,
                record.sha,
                record.commit_time,
                record.author_time,
                file,
                check,
            )
            found[vote.commit] = (trailer, True)
            continue
        signature = (
            repo.verify_commit(record.sha, config.approval.allowed_signers)
            if config.approval.require_signed
            else None
        )
        found[vote.commit] = (
            replace(
                request,
                commit=record.sha,
                kind=approvals.Transition.APPROVE,
                author_email=record.author.email,
                committer_email=record.committer.email,
                commit_time=record.commit_time,
                author_time=record.author_time,
                merge=record.is_merge,
                replay_of=None,
                other_pause=False,
                signature_valid=signature.valid if signature else None,
                signer=signature.signer if signature else None,
                signature_message=signature.message if signature else "",
                signer_key=signature.key if signature else "",
            ),
            False,
        )
    return found


def _changes_content(repo: GitRepo, commit: str, file: str, check: Check) -> bool:
    """Did ``commit`` change the hashed content of ``file`` against any of its parents?"""
    mine = repo.blob_sha(commit, file)
    parents = repo.commit(commit).parents
    if mine is None or not parents:
        return mine is not None
    hashes: dict[str, str | None] = {}

    def hash_of(blob: str) -> str | None:
        if blob not in hashes:
            try:
                hashes[blob] = check(repo.blob(blob))[1]
            except Exception:
                hashes[blob] = None
        return hashes[blob]

    for parent in parents:
        theirs = repo.blob_sha(parent, file)
        if theirs == mine:
            continue
        if theirs is None or hash_of(theirs) is None or hash_of(theirs) != hash_of(mine):
            return True
    return False


#: (repo path, merge commit) -> its branch's Plan-Approved commits: one git log per merge,
#: however many plans the merge approves (a commit id fixes its ancestry).
_TRAILERS: dict[tuple[str, str], list[tuple[str, str, int, int]]] = {}


def _branch_trailers(repo: GitRepo, commit: str) -> list[tuple[str, str, int, int]]:
    key = (str(repo.path), commit)
    if key not in _TRAILERS:
        record = repo.commit(commit)
        found = []
        for parent in record.parents[1:]:
            for item in repo.range_log(record.parents[0], parent, []):
                value = item.trailers.get(quorum.TRAILER)
                if value:
                    found.append((item.sha, value.strip(), item.commit_time, item.author_time))
        if len(_TRAILERS) > 256:
            _TRAILERS.clear()
        _TRAILERS[key] = found
    return _TRAILERS[key]
