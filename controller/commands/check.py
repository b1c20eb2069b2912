"""``plangate check [--base REF] [--head REF] [--as EMAIL] [--format text|json|markdown]``.

For CI on a pull request (SPEC §11): what merging ``head`` into ``base`` would make the
controller do with each plan the range changes. The merge is *simulated*: git computes the
merged tree (``git merge-tree``) and writes an unreachable merge commit authored by ``--as``
(the person who would merge; no ref moves, nothing is pushed); the history up to it is
scanned into an in-memory index, and each plan's approval request is decided by
:func:`controller.approval.verdicts.decide`, the very function the controller uses. So the
prediction is the controller's decision, for the history as it is now.

Per plan: valid or not (with the problems), frozen or not, risk, estimate, what the policy
requires, which approvals would count, which would be refused (with the code), what would
still be missing, and the outcome: ``start``, ``partial``, ``refuse``, ``freeze`` (a pending
plan the controller would freeze first), ``invalid``, ``held`` (a plan the controller reads
no file of: E_PLAN_AMBIGUOUS, E_UNSAFE_PATH, as its status row says), or ``none`` (nothing to
decide).

Exit codes: 0 when every changed plan is valid; 1 when one is invalid or would be refused; 2
for a usage, config or git error (a merge with conflicts cannot be predicted).
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from controller.display import visible

if TYPE_CHECKING:
    from controller.git.gitrepo import GitRepo
    from controller.settings import Config

UNKNOWN_MERGER = "merger@unknown.invalid"


def check(
    *,
    config_path: str | None,
    base: str | None,
    head: str,
    as_email: str | None,
    fmt: str,
) -> int:
    from controller.commands._shared import printed, required_config, signers_pinned
    from controller.git.gitrepo import GitRepo

    given = required_config(config_path)
    as_email = _mailbox(as_email) if as_email is not None else None
    repo = GitRepo.containing(Path.cwd())
    try:
        # allowed_signers read once, as the controller's next pass reads it (round 125)
        with signers_pinned(given) as config:
            report = predict(
                repo,
                config,
                _branch_first(repo, base or _default_base(config)),
                _branch_first(repo, head),
                as_email,
            )
    finally:
        repo.close()
    own = [q for p in report["plans"] for q in p.pop(OWN, ())]
    # problems quote the catalog (round 49), and the plans' own text as written (round 62):
    # each value before any format escapes it, so every format quotes alike (round 64)
    print(render(_shown(report, lambda text: printed(text, own)), fmt))
    # the merge commit's outcome decides (``fast_forward`` informs: a merge that is itself
    # the approval, docs/approvals.md, is no approval fast-forwarded)
    bad = any(p["outcome"] in ("invalid", "refuse") or not p["valid"] for p in report["plans"])
    return 1 if bad else 0


def _shown(value: Any, show: Callable[[str], str]) -> Any:
    """The report with every string as ``show`` prints it: the plans' own text matched as
    the report holds it, not as a format spells it (round 64: markdown's escapes broke the
    match, and a status equal to a secret came back ``***`` in markdown only)."""
    if isinstance(value, str):
        return show(value)
    if isinstance(value, dict):
        return {k: _shown(v, show) for k, v in value.items()}
    return [_shown(v, show) for v in value] if isinstance(value, list) else value


def _mailbox(value: str) -> str:
    """The merger's mailbox from ``--as``: an address, or git's ``Name <address>`` (round
    26: the whole value was taken for an address no commit can carry, so the writer of a
    plan was not recognised as its merger). Anything else is a usage error."""
    from email.utils import parseaddr

    from controller.errors import UsageError

    _, address = parseaddr(value)
    if not address or address.count("@") != 1 or any(c.isspace() for c in address):
        raise UsageError(
            f"--as {value!r} names no mailbox",
            remedy="pass the merger's address (--as carol@example.com) or git's form "
            "(--as 'Carol <carol@example.com>')",
        )
    return address


def _default_base(config: Config) -> str:
    return f"origin/{config.remote.branch}" if config.remote is not None else "main"


def _branch_first(repo: GitRepo, name: str) -> str:
    """``name`` as a branch when one has it (``refs/heads/<name>``, then
    ``refs/remotes/<name>``): git's own lookup takes a tag first, and anyone who can push
    a tag named ``main`` or ``origin/main`` would choose what check compares with (round 12)."""
    if name.startswith("refs/"):
        return name
    for ref in (f"refs/heads/{name}", f"refs/remotes/{name}"):
        if repo.rev(ref) is not None:
            return ref
    return name


#: A plan report's key (taken out before rendering) listing the plan's own text it quotes.
OWN = "_own"


def predict(
    repo: GitRepo, config: Config, base: str, head: str, as_email: str | None
) -> dict[str, Any]:
    """The report: {base, head, merger, plans: [one dict per changed plan]}: the merge
    commit's prediction, and where ``head`` can fast-forward ``base`` and the fast-forward
    makes the controller decide a plan otherwise, that prediction too (:func:`_fast_forward`)."""
    from controller.errors import UsageError

    base_sha, head_sha = repo.rev(base), repo.rev(head)
    if base_sha is None or head_sha is None:
        missing = base if base_sha is None else head
        raise UsageError(f"{missing}: no such commit", remedy="pass --base/--head a branch or sha")
    repo.check_complete()  # a shallow clone hides who wrote what (round 19), as for audit
    merger = as_email or UNKNOWN_MERGER
    merge = _simulated_merge(repo, base_sha, head_sha, merger)
    report: dict[str, Any] = {"base": base_sha, "head": head_sha, "merger": as_email}
    found, assumed = _predict_at(repo, config, base_sha, head_sha, merge, as_email)
    if assumed is not None:
        report["merge_signature"] = assumed
    if found and base_sha != head_sha and repo.is_ancestor(base_sha, head_sha):
        ahead, _ = _predict_at(repo, config, base_sha, head_sha, head_sha, as_email)
        _fast_forward(found, ahead)
    return {**report, "plans": found}


#: What a plan's fast-forward prediction shows where it differs from the merge commit's.
_FF_KEYS = ("outcome", "counted", "refused", "missing")


def _fast_forward(found: list[dict[str, Any]], ahead: list[dict[str, Any]]) -> None:
    """Add to each plan report the fast-forward's prediction where it differs (round 97:
    an approval authored before the freeze, fast-forwarded, is first-parent and
    ``E_APPROVAL_REPLAYED``; the same commit brought by a merge commit is the merge's and
    counts: check predicted the merge commit alone and said ``start``)."""
    by_plan = {p["plan"]: p for p in ahead}
    for report in found:
        other = by_plan.get(report["plan"])
        if other is None or other.get("outcome") == report.get("outcome"):
            continue
        report["fast_forward"] = {key: other[key] for key in _FF_KEYS if key in other}
        report[OWN] = [*report.get(OWN, ()), *other.get(OWN, ())]


def _predict_at(
    repo: GitRepo,
    config: Config,
    base_sha: str,
    head_sha: str,
    tip: str,
    as_email: str | None,
) -> tuple[list[dict[str, Any]], str | None]:
    """The plan reports for the branch landed as ``tip`` (the simulated merge commit, or
    ``head`` itself: a fast-forward), and the merge signature assumed (None: none)."""
    from controller.commands._shared import read_history
    from controller.git.history import plan_id_of

    repo.read_signatures = config.approval.allowed_signers is not None
    assumed, real = None, repo
    if config.approval.require_signed and tip != head_sha:
        # the simulated merge is unsigned; the real one is signed by the merger (round 22:
        # every prediction under require_signed was a refusal the controller never made)
        signature, assumed = _merge_signature(config, as_email)
        repo = _SignedMerge(repo, tip, signature)  # type: ignore[assignment]
    own_commit = None
    if config.approval.require_signed:
        # the controller knows its commits by its record; here, under require_signed, its
        # commits are the ones it signed: an unsigned commit under its name is anyone's
        # (round 19: a forged "partial" carrying a vote check counted)
        signers = config.approval.allowed_signers
        own_commit = functools.cache(lambda sha: real.verify_commit(sha, signers).valid)
    plans_dir = config.plans_dir.strip("/") or "."
    names = repo.run("diff", "--name-only", "-z", base_sha, tip, "--", plans_dir)
    changed = {p for n in names.split("\0") if n and (p := plan_id_of(n, plans_dir))}
    ids = sorted(changed | _trailer_plans(repo, base_sha, head_sha))
    if not ids and not _folders_of(names):
        return [], assumed
    # the history the controller reads, whole (round 43: only these plans' own paths missed
    # writers, runs and first freezes carried in from other paths); who may reject or abort
    # follows the policy recorded when they did (round 28); the runs its start commits record
    # (index.ran_as: the controller reads them the same way, round 50)
    with read_history(repo, config, tip, own_commit=own_commit) as index:
        _note_starts_elsewhere(real, config, tip, index)
        sources = _sources(repo, config, index, tip, names)
        ignored = _sources_beside(repo, index, tip, names)
        ids = sorted({*ids, *sources, *ignored})
        beside = _same_versions(index, ids)
        cached = _Blobs(repo, [index.plans[i].blob for i in [*ids, *beside] if i in index.plans])
        claims: dict[str, str] = {}  # the pass's starts so far, in its order (sorted ids)
        found = [
            sources[pid]
            if pid in sources
            else _plan_report(cached, config, index, pid, tip, as_email, claims)
            for pid in sorted({*ids, *beside})
        ]
    for report in found:
        for source in ignored.get(report["plan"], ()):
            report.setdefault("warnings", []).append(_beside_warning(source, report))
    return [report for report in found if report["plan"] in ids], assumed


def _note_starts_elsewhere(repo: GitRepo, config: Config, tip: str, index: Any) -> None:
    """Note in ``index`` the starts under the controller's name on the clone's other
    branches (``refs/heads``, ``refs/remotes``) that ``tip`` does not hold, by git alone
    (its name as author and committer, and a seal), as a controller with a new state
    directory learns them on its first start (round 126: a version that ran on another
    branch is refused ``E_ALREADY_EXECUTED``). One ``git log --grep``. A branch the clone
    has not fetched is not read: fetch them all first (``git fetch origin``)."""
    from controller.git.lifecycle import START_MENTIONS, named_starts

    records = list(repo.log_mentioning(repo.branch_tips(), tip, START_MENTIONS))
    for record in reversed(records):  # oldest first: the first start is the one kept
        for plan_hash, plan in named_starts(record, config.identity.email, None):
            index.note_start(plan_hash, plan, record.sha)


def _sources_beside(repo: Any, index: Any, tip: str, names: str) -> dict[str, list[str]]:
    """Plan id -> the sources (``PLAN.md`` & co.) the range adds or changes in a folder whose
    plan is its PLAN.yml at ``tip``: never converted nor run, while a forge renders the
    source for the reviewer (round 121, ``check-silent-on-source-beside-plan``: a PLAN.md
    beside a PLAN.yml saying another param was checked as the PLAN.yml alone, and one edited
    after its conversion not at all). ``validate`` of such a source warns the same
    (:func:`controller.plan.discovery.discovery_warning`)."""
    from controller.service.sources import is_source

    found: dict[str, list[str]] = {}
    for name in sorted(n for n in names.split("\0") if n and is_source(n)):
        folder = str(PurePosixPath(name).parent)
        if folder in index.plans and repo.blob_sha(tip, name) is not None:
            found.setdefault(folder, []).append(name)
    return found


def _beside_warning(source: str, report: dict[str, Any]) -> str:
    plan_file = PurePosixPath(str(report.get("file") or "PLAN.yml")).name
    return (
        f"{PurePosixPath(source).name} is beside {plan_file}: the controller runs "
        f"{plan_file} and converts no source in its folder; the source is not the plan "
        "(a forge renders it, but nothing of it runs)"
    )


def _same_versions(index: Any, ids: list[str]) -> list[str]:
    """Plans the merge leaves alone that hold an open request for a version a reported plan
    holds: the pass decides them too, in its order, and the first to start claims the
    version (round 79: a copy beside its approved source). Decided, not reported."""
    hashes = {index.plans[i].hash for i in ids if i in index.plans} - {None}
    if not hashes:
        return []
    return [
        pid
        for pid, state in index.plans.items()
        if state.request is not None and state.hash in hashes and pid not in ids
    ]


def _merge_signature(config: Config, as_email: str | None) -> tuple[Any, str]:
    """What ``git verify-commit`` will say of the merge ``--as`` makes under
    ``require_signed``, and the assumption in words. The merger signs with one of the keys
    allowed_signers lets them sign git commits with now; git names as the signer what the
    file's first valid line for that key names first (:func:`signers.git_signer`), which
    the controller then judges as it judges any signature. A key for which git would name
    the merger is preferred (which key she picks changes no other verdict: every key of a
    content's writer makes her a writer); without one, a certificate a ``cert-authority``
    line valid now allows for her address (:func:`signers.assumed_certificate`), which git
    names her for. Unsigned when there is neither, or no ``--as``."""
    from controller.approval.approvals import canonical, usable_keys
    from controller.approval.signers import assumed_certificate, describe_key, git_signer
    from controller.git.signing import Signature

    if as_email is None:
        text = "unknown (no --as): predicted unsigned"
        return Signature(False, None, "the merger is unknown: pass --as"), text
    now = time.time()
    signers_file = config.approval.allowed_signers
    keys = sorted(usable_keys(as_email, config.approval, now))
    found = {key: git_signer(signers_file, key, now) for key in keys} if signers_file else {}
    named: dict[str, str] = {key: who for key, who in found.items() if who}
    aliases = config.approval.identity_aliases
    me = canonical(as_email, aliases)
    certified = assumed_certificate(signers_file, as_email, now) if signers_file else None
    if certified and not any(canonical(who, aliases) == me for who in named.values()):
        # no listed key of hers that git names her for: a certificate a cert-authority line
        # allows for her address (round 30), which git names her for
        text = f"assumed signed by {as_email} with {describe_key(certified)}"
        return Signature(True, as_email, "predicted: " + text, "ssh", certified), text
    if not named:
        text = f"allowed_signers lists no key {as_email} may sign git commits with now"
        return Signature(False, None, text), f"{text}: predicted unsigned"
    key = next((k for k, who in named.items() if canonical(who, aliases) == me), next(iter(named)))
    signer = named[key]
    text = f"assumed signed by {as_email} with a key allowed_signers lists ({key})"
    if canonical(signer, aliases) != me:
        text += f", which git will name as {signer}"
    return Signature(True, signer, "predicted: " + text, "ssh", key), text


class _SignedMerge:
    """The repo, with the simulated merge's signature the one the merger will make."""

    def __init__(self, repo: GitRepo, merge: str, signature: Any) -> None:
        self._repo, self._merge, self._signature = repo, merge, signature

    def verify_commit(self, sha: str, allowed_signers: Path | None) -> Any:
        if sha == self._merge:
            return self._signature
        return self._repo.verify_commit(sha, allowed_signers)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._repo, name)


class _Blobs:
    """The repo, with the plan versions a report reads fetched in one ``cat-file --batch``."""

    def __init__(self, repo: GitRepo, shas: list[str | None]) -> None:
        self._repo = repo
        self._data = repo.blobs([s for s in shas if s])

    def blob(self, sha: str) -> bytes:
        found = self._data.get(sha)
        return found if found is not None else self._repo.blob(sha)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._repo, name)


def _trailer_plans(repo: GitRepo, base: str, head: str) -> set[str]:
    """Plans named by ``Plan-Approved:`` commits of the range (they change no file)."""
    from controller.approval.quorum import TRAILER

    found = set()
    for commit in repo.range_log(base, head, []):
        value = commit.trailers.get(TRAILER, "").split()
        if len(value) == 2:
            found.add(value[0])
    return found


def _simulated_merge(repo: GitRepo, base: str, head: str, merger: str) -> str:
    from controller.errors import GitError

    merged = repo.merge_tree([base, head])  # the controller's own simulation of a merge
    if merged is None or not merged[1]:
        raise GitError(
            f"merging {head[:12]} into {base[:12]} has conflicts; nothing can be predicted",
            remedy="rebase the pull request on its base branch",
        )
    tree = merged[0]
    now = str(int(time.time()))
    env = {
        "GIT_AUTHOR_NAME": "merger",
        "GIT_AUTHOR_EMAIL": merger,
        "GIT_COMMITTER_NAME": "merger",
        "GIT_COMMITTER_EMAIL": merger,
        "GIT_AUTHOR_DATE": f"{now} +0000",
        "GIT_COMMITTER_DATE": f"{now} +0000",
    }
    message = b"plangate check: simulated merge\n"
    return repo.run("commit-tree", tree, "-p", base, "-p", head, input=message, env=env).strip()


def _plan_report(
    repo: Any,
    config: Config,
    index: Any,
    plan_id: str,
    merge: str,
    as_email: str | None,
    claims: dict[str, str],
) -> dict[str, Any]:
    from controller.approval import policy, quorum
    from controller.approval.verdicts import fetch_at, nested_at
    from controller.plan import nested, plans, profile

    state = index.plans.get(plan_id)
    if state is None:
        return {"plan": plan_id, "outcome": "none", "valid": True, "note": "not a plan here"}
    held = _held(repo, state, merge)
    if held is not None:
        return _unread_report(plan_id, state.file, held, "held")
    data = repo.blob(state.blob) if state.blob else b""
    with nested.reading_from(fetch_at(repo, merge)):  # nested plans as the merge holds them
        loaded = plans.validate_text(data.decode("utf-8", "replace"), Path(state.file), config)
    reader = nested_at(repo, merge, config)
    found = profile.profile_of(plan_id, loaded.data, config.tools, reader)
    need = policy.need_for(found, config.approval)
    report: dict[str, Any] = {
        "plan": plan_id,
        "file": state.file,
        "status": state.status,
        "valid": not loaded.problems,
        "problems": [
            {"code": p.code, "message": p.message, "path": p.path} for p in loaded.problems
        ],
        # the plan's own text the report quotes: printed as written (round 62)
        OWN: [plan_id, state.file, str(state.status or "")]
        + [q for p in loaded.problems for q in p.own_text()],
        "hash": loaded.hash,
        "frozen": loaded.frozen_hash is not None and loaded.frozen_hash == loaded.hash,
        "risk": found.risk,
        "estimate": found.estimate.as_dict(),
        "needs": need.describe(),
        "counted": [],
        "refused": [],
        "missing": "",
    }
    if state.request is not None:
        same = state.request.get("blob") == state.blob
        known = (data, (tuple(p.code for p in loaded.problems), loaded.hash))
        decided = _decided(
            repo, config, state, as_email, need if same else None, known, index, claims
        )
        return {**report, **decided}
    if state.status == "pending_approval" and not report["frozen"]:
        report["outcome"] = "invalid" if loaded.problems else "freeze"
    else:
        report["outcome"] = "none"
    votes = quorum.votes_from(state.collected, loaded.hash)
    report["counted"] = [v.as_dict() for v in votes]
    if state.status == "pending_approval" and report["frozen"]:
        report["missing"] = "a commit (or the merge) that sets status: approved; signed "
        report["missing"] += "Plan-Approved: commits count only with it"
    return report


def _folders_of(names: str) -> set[str]:
    """Every folder holding a path of ``git diff --name-only -z``'s answer ``names``."""
    found: set[str] = set()
    for name in names.split("\0"):
        parts = name.split("/")[:-1]
        found |= {"/".join(parts[:depth]) for depth in range(1, len(parts) + 1)}
    return found


def _sources(
    repo: Any, config: Config, index: Any, merge: str, names: str
) -> dict[str, dict[str, Any]]:
    """A report for each plan source (``PLAN.json`` & co.) in a folder the range changes,
    with no plan of the index there: as the daemon treats it after the merge
    (:func:`controller.service.sources.source_outcome`, what its status row says): ``held``
    when its folder holds it (a claim or a second source beside it: round 74, check listed
    none), ``invalid`` when it does not convert or converts to an invalid plan, else
    ``convert`` (the controller commits its PLAN.yml, then freezes it)."""
    from controller.service.sources import Converted, SourceFinder, source_outcome

    changed = _folders_of(names)
    finder = SourceFinder(config.plans_dir.strip("/") or ".")
    found = finder.committed(repo, merge)
    reports: dict[str, dict[str, Any]] = {}
    written: dict[str, tuple[Converted, bytes]] = {}  # the plan files converted so far
    # in the pass's order (sorted: a parent before the folders below it): a folder whose
    # PLAN.yml a conversion before it writes (a parent's nested step) is that plan, and its
    # own source a note beside it (round 122, nested-source-kid-mispredicted)
    for pid, source in sorted(found.items()):
        if pid not in changed or pid in index.plans:
            continue
        by = written.get(f"{pid}/PLAN.yml")
        if by is not None:
            reports[pid] = _written_report(repo, config, merge, pid, source, *by)
            continue
        outcome = source_outcome(finder, repo, merge, pid, source)
        if isinstance(outcome, Converted):
            written.update((f, (outcome, d)) for f, d in outcome.files.items() if d is not None)
        reports[pid] = _source_report(repo, config, merge, pid, source, outcome)
    return reports


def _written_report(
    repo: Any, config: Config, merge: str, plan_id: str, source: str, by: Any, data: bytes
) -> dict[str, Any]:
    """The report of a source folder whose PLAN.yml the conversion of another source (``by``:
    a parent's nested step) writes first: that plan file, as the daemon then reads it (a
    nested plan ``draft``: no approval is decided), with a warning that the folder's own
    source is a note beside it; never ``convert`` of that source, with a hash nothing
    freezes (round 122, nested-source-kid-mispredicted)."""
    from controller.approval.verdicts import fetch_at
    from controller.plan import nested, plans

    file = f"{plan_id}/PLAN.yml"
    with nested.reading_from(fetch_at(repo, merge)), nested.writing(by.files):
        loaded = plans.validate_text(data.decode("utf-8"), Path(file), config)
    made = f"the conversion of {by.source} writes {file} (hash {loaded.hash}), a nested plan"
    return {
        "plan": plan_id,
        "file": file,
        "status": loaded.status,
        "valid": not loaded.problems,
        "problems": [
            {"code": p.code, "message": p.message, "path": p.path} for p in loaded.problems
        ],
        OWN: [plan_id, file, by.source, source]
        + [q for p in loaded.problems for q in p.own_text()],
        "hash": loaded.hash,
        "outcome": "none",
        "note": f"{made} it pins (status {loaded.status})",
        "warnings": [_beside_warning(source, {"file": file})],
    }


def _source_report(
    repo: Any, config: Config, merge: str, plan_id: str, source: str, outcome: Any
) -> dict[str, Any]:
    from controller.approval.verdicts import fetch_at
    from controller.errors import Problem
    from controller.plan import nested, plans

    if isinstance(outcome, Problem):
        held = not source or outcome.code in ("E_PLAN_AMBIGUOUS", "E_UNSAFE_PATH")
        return _unread_report(plan_id, source or None, outcome, "held" if held else "invalid")
    # its nested plans as the merge holds them, with what its convert commit writes (round
    # 121: a converted nested step was "does not exist" here, and the daemon ran it)
    with nested.reading_from(fetch_at(repo, merge)), nested.writing(outcome.files):
        loaded = plans.validate_text(outcome.plan_text, Path(f"{plan_id}/PLAN.yml"), config)
    if loaded.problems:
        return _unread_report(plan_id, source, loaded.problems[0], "invalid", loaded.problems)
    note = f"{PurePosixPath(source).name} converts to PLAN.yml (hash {loaded.hash})"
    return {
        "plan": plan_id,
        "file": source,
        "status": None,
        "valid": True,
        "problems": [],
        OWN: [plan_id, source],
        "outcome": "convert",
        "note": note,
    }


def _unread_report(
    plan_id: str, file: str | None, problem: Any, outcome: str, problems: Any = None
) -> dict[str, Any]:
    """The report of a plan no file of which is read as a plan: its problems, the first one
    as its note."""
    listed = problems or [problem]
    return {
        "plan": plan_id,
        "file": file,
        "status": None,
        "valid": False,
        "problems": [{"code": p.code, "message": p.message, "path": p.path} for p in listed],
        OWN: [plan_id, *([file] if file else []), *(q for p in listed for q in p.own_text())],
        "outcome": outcome,
        "note": f"{problem.code}: {problem.message}",
    }


def _held(repo: Any, state: Any, merge: str) -> Any:
    """The problem for which the controller reads no file of the plan at the merge, as its
    status row names it (E_PLAN_AMBIGUOUS, E_UNSAFE_PATH), or None. The index's word first
    (an entry claiming the plan file's place, a link at it, a refused name); then the
    merge's listing of the folder through the claim rule every reader applies
    (:func:`controller.plan.names.plan_file_claims`, :meth:`GitRepo.names_in`), and the
    plan id rule (round 72: check read a held plan's missing text as "the file must be a
    mapping", E_SCHEMA_INVALID, or said ``start`` for a plan beside a symlink or gitlink
    claim, where every other reader said E_PLAN_AMBIGUOUS)."""
    from controller.errors import Problem
    from controller.plan.plans import ambiguity, unsafe_name

    if state.ambiguous or state.unsafe:
        code = "E_PLAN_AMBIGUOUS" if state.ambiguous else "E_UNSAFE_PATH"
        note = next((n for n in reversed(state.notes) if n.startswith(code)), None)
        return Problem(code, note.removeprefix(f"{code}: ") if note else "no file is read")
    why = unsafe_name(state.file)
    if why is not None:
        return Problem("E_UNSAFE_PATH", why)
    try:
        listed = repo.names_in(merge, state.plan_id)
    except Exception:
        return None
    return ambiguity(listed, state.plan_id)


def _decided(
    repo: Any,
    config: Config,
    state: Any,
    as_email: str | None,
    need: Any,
    known: tuple[bytes, tuple[tuple[str, ...], str | None]],
    index: Any,
    claims: dict[str, str],
) -> dict[str, Any]:
    """The controller's verdict on ``state``'s open request; a start claims its version
    for the plans the pass decides after it (``claims``: :func:`verdicts.claim_start`)."""
    from controller.approval import verdicts
    from controller.plan import plans

    def check_text(data: bytes) -> tuple[tuple[str, ...], str | None]:
        if data == known[0]:
            return known[1]
        loaded = plans.validate_text(data.decode("utf-8", "replace"), Path(state.file), config)
        return tuple(p.code for p in loaded.problems), loaded.hash

    request, verdict = verdicts.decide(
        state,
        repo,
        config,
        check_text,
        verified_at=int(time.time()),
        need=need,
        authors=index.authors,
        withdrawn=index.withdrawn,
        plan_authors=lambda: index.withdrawers(state),
    )
    # as the controller: a version that already ran (on any path), or that a plan decided
    # before this one in the pass starts, does not run again
    ran = index.ran_as(request.current_hash)
    ran = ran or verdicts.started_in_pass(claims, request.current_hash)
    verdict = verdicts.already_executed(verdict, request, ran)
    if verdict.outcome == "start":
        verdicts.claim_start(claims, request, state.plan_id)
    refused = [
        {"by": r.by, "commit": r.commit, "code": r.code, "message": r.message}
        for r in verdict.rejected
    ]
    if not verdict.decision.valid:
        refused.append(
            {
                "by": verdict.decision.approver if as_email else "the merger (unknown: pass --as)",
                "commit": "(the merge)",
                "code": verdict.decision.code or "",
                "message": _unknown_merger(verdict.decision.message, as_email),
            }
        )
    counted = [
        {**v.as_dict(), "commit": "(the merge)" if v.commit == request.commit else v.commit}
        for v in verdict.votes
    ]
    return {
        "outcome": verdict.outcome,
        "counted": counted,
        "refused": refused,
        "missing": verdict.missing,
    }


def _unknown_merger(message: str, as_email: str | None) -> str:
    """A refusal of the placeholder merger names who would have to merge, not the placeholder."""
    if as_email is not None or UNKNOWN_MERGER not in message:
        return message
    return message.replace(UNKNOWN_MERGER, "the merger") + (
        " (pass --as EMAIL to predict a merge by that person)"
    )


# --- output -----------------------------------------------------------------------------

_OUTCOMES = {
    "start": "merging starts it",
    "partial": "merging records a partial approval; it needs more",
    "refuse": "merging is refused as an approval",
    "freeze": "merging submits it; the controller freezes it, then it needs approvals",
    "invalid": "merging submits an invalid plan; the controller marks it invalid",
    "none": "merging changes it; no approval is decided",
    "held": "merging leaves it held: the controller reads and runs no file of it",
    "convert": "merging submits a plan source: the controller converts it to PLAN.yml, "
    "freezes it, then it needs approvals",
}


def render(report: dict[str, Any], fmt: str) -> str:
    if fmt == "json":
        return json.dumps(report, indent=2)
    if fmt == "markdown":
        return _markdown(report)
    return _text(report)


def _commit_ref(commit: str) -> str:
    return visible(commit) if commit.startswith("(") else f"({visible(commit)})"


def _text(report: dict[str, Any]) -> str:
    lines = []
    for p in report["plans"]:
        lines.append(f"{visible(p['plan'])}: {_OUTCOMES.get(p['outcome'], p['outcome'])}")
        lines += [f"  {line}" for line in _details(p)]
        lines += [f"  warning: {visible(w)}" for w in p.get("warnings", ())]
    if not lines:
        return "no plan changes in this range"
    if report.get("merge_signature"):
        lines.insert(0, f"merge signature: {visible(report['merge_signature'])}")
    return "\n".join(lines)


def _details(p: dict[str, Any]) -> list[str]:
    if p.get("note"):
        return [str(p["note"])]
    valid = "valid" if p["valid"] else "INVALID"
    frozen = "frozen" if p["frozen"] else "not frozen"
    lines = [
        f"{valid}, {frozen}, hash {visible(str(p['hash']))}",
        f"risk {p['risk']}, estimate {p['estimate']['seconds']:g} s "
        f"${p['estimate']['cost_usd']:.2f}, needs {visible(p['needs'])}",
    ]
    lines += [f"problem {q['code']} at {visible(q['path'])}: {visible(q['message'])}"
              for q in p["problems"]]  # fmt: skip
    lines += [f"counts: {visible(v['by'])} {_commit_ref(v['commit'])}" for v in p["counted"]]
    lines += [
        f"refused: {visible(r['by'])} {_commit_ref(r['commit'])} "
        f"{r['code']}: {visible(r['message'])}"
        for r in p["refused"]
    ]
    if p["missing"]:
        lines.append(f"still missing: {visible(p['missing'])}")
    return lines + _fast_forward_details(p.get("fast_forward"))


def _fast_forward_details(ff: dict[str, Any] | None) -> list[str]:
    """The fast-forward's prediction, where it differs from the merge commit's."""
    if not ff:
        return []
    outcome = _OUTCOMES.get(ff["outcome"], ff["outcome"])
    lines = [f"if fast-forwarded (no merge commit) instead: {outcome}"]
    lines += [
        f"  refused: {visible(r['by'])} {_commit_ref(r['commit'])} "
        f"{r['code']}: {visible(r['message'])}"
        for r in ff.get("refused", ())
    ]
    return lines


def _md(text: str) -> str:
    """Plan and git text inside a markdown table cell: escaped, no markup, no line breaks."""
    out = visible(text)
    for ch in "\\`*_{}[]<>()#+!|~":
        out = out.replace(ch, "\\" + ch)
    return out.replace("\n", " ")


def _markdown(report: dict[str, Any]) -> str:
    lines = ["### plangate check", ""]
    if not report["plans"]:
        return "\n".join([*lines, "No plan changes in this pull request."])
    lines += ["| plan | valid | frozen | risk | estimate | needs | merging |", "|---" * 7 + "|"]
    for p in report["plans"]:
        if p.get("note"):
            valid = "" if p["valid"] else "**no**"
            said = p["note"]
            if p["outcome"] != "none":  # held: the outcome, then the controller's word why
                said = f"{_OUTCOMES[p['outcome']]}: {said}"
            lines.append(f"| {_md(p['plan'])} | {valid} | | | | | {_md(said)} |")
            continue
        estimate = f"{p['estimate']['seconds']:g} s, ${p['estimate']['cost_usd']:.2f}"
        lines.append(
            f"| {_md(p['plan'])} | {'yes' if p['valid'] else '**no**'} | "
            f"{'yes' if p['frozen'] else 'no'} | {p['risk']} | {estimate} | "
            f"{_md(p['needs'])} | {_md(_OUTCOMES.get(p['outcome'], p['outcome']))} |"
        )
    if report.get("merge_signature"):
        lines += ["", f"Merge signature: {_md(report['merge_signature'])}"]
    for p in report["plans"]:
        details = [] if p.get("note") else _details(p)[2:]
        details += [f"warning: {w}" for w in p.get("warnings", ())]
        if details:
            lines += ["", f"**{_md(p['plan'])}**", ""] + [f"- {_md(d)}" for d in details]
    return "\n".join(lines)
