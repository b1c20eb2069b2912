"""``plangate audit``: re-derive, from git history alone, whether every execution was allowed.

No state directory is needed. The branch's first-parent history is replayed through a fresh
in-memory :class:`controller.git.history.HistoryIndex`; every approval request is kept as
the index held it *at the commit where it was made* (with the identities that had changed
the plan by then) and judged by :func:`controller.approval.verdicts.decide`, the controller's
own path (§5 rules and §11 quorum), and every controller commit is checked against it (the
controller's run records a merge brings back beside the line, a start erased by a reset and
merged back with the run gone on from it, are read before that merge: round 122,
:meth:`~controller.git.lifecycle.Lifecycle.apply_merged_back`):

- a ``start`` must rest on a valid approval whose commit its ``Approval-Commit`` trailer
  names, and the content it starts must hash to the approved hash;
- an outcome (``complete``, ``fail``, ``await-approval``, ``abort``) must follow a start;
- with ``approval.require_signed``, controller commits must be signed too (otherwise anyone
  can forge the controller's identity);
- a commit under the controller's identity that it did not make is anyone's commit and
  ``controller-unexplained``: with its record of its commits (``audit --config`` and its
  state directory: ``<state_dir>/commits``) one the record lacks; by git alone one that
  records an event with no cause on the branch: an outcome of a plan the controller had
  not started, an ``abort`` no abort request asked for, or a run event with no
  ``Controller-Seal:``, which every controller commit carries (rounds 65-66, 69;
  :meth:`~controller.git.lifecycle.Lifecycle.disowned`); on the line and on merged
  branches alike;
- every controller commit must be one the controller makes: subject
  ``plangate: <event> <plan id>``, a status that event sets, and no change to the plan's
  hashed content except a freeze's conversion of legacy references and a ``convert`` that
  creates a plan from its PLAN.json & co. (``controller-unexplained`` otherwise: someone
  wrote as the controller);
- a human commit must not set a controller-only status, edit the ``approval``/``execution``
  blocks or EXECUTION_LOG.md, or change the content of an approved plan.

Each approval is judged by the policy in force when the controller started the run: the
version of ``.plangate/policy.json`` its start commit names (``Policy-Hash:``), as the
controller's record commits (``plangate: record policy``, sealed: round 94) recorded it
along history (:mod:`controller.approval.timeline`, which also flags every other change of
that file and every unsealed look-alike of a record).
So the audit needs no config (a fresh clone is enough), and an approver who left or a tool
retired since does not flag the runs they took part in.
History from before the first recorded policy is judged by the config (without one: by the
first recorded policy).
Each recorded plans folder (``plans_dir``) is read from the start of history up to the
record that replaced it for the last time, today's to the end (:func:`folder_ends`), as the
controller reads it (a ``plans_dir`` change rebuilds its index): the runs under either folder
are listed and judged, a status set by hand under the old folder while it was read is
flagged, and the old folder's files after the change are no plans. One replay per folder
(:func:`_by_folder`; a history whose folder never changed is replayed once, as before:
round 125, the audit read one folder for the whole history).

The controller's identity follows its recorded changes too (round 126: the audit read one
identity for the whole history): the timeline switches at each record that names the
previous identity (:meth:`~controller.approval.timeline.Timeline._follow_identity`) and the
replay's index takes the controller's commits as that identity's from there on.

Anything else is a finding; ``plangate audit`` exits 1 when there is one.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

from controller.approval import approvals, recorded, verdicts
from controller.approval.timeline import Timeline
from controller.errors import PlanTooLarge
from controller.git.gitrepo import CommitRecord, GitRepo
from controller.git.history import (
    LOG_NAME,
    HistoryEvent,
    HistoryIndex,
    PlanState,
    changed_plan_ids,
    history_paths,
    plan_id_of,
    withdraw_rule,
)
from controller.git.lifecycle import START_MENTIONS, named_starts
from controller.git.message import decision_note
from controller.git.prefetch import _Prefetcher
from controller.git.records import (
    CLOSES_START,
    EVENT_STATUS,
    RUN_START,
    PlanEvent,
    plan_event,
    record_events,
    status_unexplained,
)
from controller.plan import nested, plans
from controller.settings import Config

OUTCOME_EVENTS = ("complete", "fail", "await-approval", "abort", "checkpoint")


@dataclass
class Execution:
    plan: str
    start_commit: str
    approval_commit: str | None
    approver: str | None
    approval_valid: bool
    code: str | None = None
    message: str = ""
    hash_ok: bool = True
    outcome: str | None = None
    #: the hash that was started (and approved, when ``hash_ok``)
    plan_hash: str | None = None
    #: what the approval was: ``approve`` (a first approval), ``gate`` or ``resume``
    approval_kind: str | None = None
    approved_at: str | None = None
    started_at: str | None = None
    finished_at: str | None = None
    outcome_commit: str | None = None
    #: who asked for the abort (the controller's abort commit says it in ``Aborted-By:``)
    aborted_by: str | None = None
    #: the recorded policy the approval was judged by (the start's ``Policy-Hash:``)
    policy_hash: str | None = None
    #: the plan's authors as the approval was judged (none of them may approve it, SPEC §5):
    #: who wrote it, seen by an auditor without reading every commit (a user's trial)
    authors: list[str] = field(default_factory=list)


@dataclass
class AuditReport:
    executions: list[Execution] = field(default_factory=list)
    findings: list[dict[str, str]] = field(default_factory=list)
    #: rejections and abort requests: ``{kind, plan, commit, by, at}``
    decisions: list[dict[str, str | None]] = field(default_factory=list)
    #: what is worth knowing but not wrong: ``{kind, detail}`` (today's config differs)
    notes: list[dict[str, str]] = field(default_factory=list)
    #: the policies the controller recorded: ``{hash, commit}``, oldest first
    policies: list[dict[str, str]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.findings

    def to_json(self) -> dict[str, Any]:
        from dataclasses import asdict

        return {
            "ok": self.ok,
            "executions": [asdict(e) for e in self.executions],
            "decisions": self.decisions,
            "findings": self.findings,
            "notes": self.notes,
            "policies": self.policies,
        }


class Auditor:
    """Consumes history events and keeps the verdicts."""

    def __init__(self, repo: GitRepo, timeline: Timeline) -> None:
        self.repo = repo
        self.timeline = timeline
        self.report = AuditReport()
        #: per plan, its open approval request as the history index held it then
        self.requests: dict[str, PlanState] = {}
        self.open: dict[str, Execution] = {}
        self.index: HistoryIndex | None = None

    @property
    def config(self) -> Config:
        """The policy in force at the commit being replayed."""
        return self.timeline.in_force

    def flag(self, event: HistoryEvent, kind: str, detail: str) -> None:
        self.report.findings.append(
            {"plan": event.plan_id, "commit": event.commit.sha, "kind": kind, "detail": detail}
        )

    def disowned(self, record: CommitRecord, why: str | None) -> None:
        """A commit under the controller's name that is not its own (``why``: by its record,
        or an abort no request asked for): ``controller-unexplained`` at each plan it
        changes or names; the index reads it as anyone's commit (round 65)."""
        if why is None:
            return
        folder = self.timeline.plans_dir
        named = {p for p in record_events(record) if plan_id_of(f"{p}/{LOG_NAME}", folder) == p}
        named |= changed_plan_ids([record], folder)
        for plan_id in sorted(named) or [""]:
            self.report.findings.append(
                {
                    "plan": plan_id,
                    "commit": record.sha,
                    "kind": "controller-unexplained",
                    "detail": f"a commit under the controller's identity that it did not "
                    f"make: {why}",
                }
            )

    def side_disowned(self, found: list[tuple[CommitRecord, str]]) -> None:
        """The same for the commits of a merged branch (round 66: a look-alike ``complete``
        on Alice's review branch, merged with her approval, left no mark)."""
        for record, why in found:
            self.disowned(record, f"{why} (on a merged branch)")

    def __call__(self, event: HistoryEvent) -> None:
        if event.kind == "request":
            self._verify(event)
        elif event.kind == "controller":
            self._controller(event)
        elif event.kind in ("reject", "abort-request"):
            self.report.decisions.append(
                {
                    "kind": event.kind,
                    "plan": event.plan_id,
                    "commit": event.commit.sha,
                    "by": event.detail,
                    "at": _iso(event.commit.commit_time),
                    # what they wrote (`plangate reject -m`), as the branch has it
                    "reason": decision_note(event.commit.subject, event.commit.body),
                }
            )
        else:
            self.flag(event, event.kind, event.detail)

    def _verify(self, event: HistoryEvent) -> None:
        """An approval request: kept as the index held it; judged when a start follows it
        (by the policy that start names, as the controller judged it then)."""
        assert event.after is not None
        state = event.after
        self.requests[event.plan_id] = dataclasses.replace(
            state,
            changers=list(state.changers),
            request=dict(state.request or {}),
            notes=[],
        )

    def _controller(self, event: HistoryEvent) -> None:
        commit = event.commit
        if self.config.approval.require_signed:
            signature = self.repo.verify_commit(commit.sha, self.config.approval.allowed_signers)
            if not signature.valid:
                self.flag(
                    event,
                    "forged-controller",
                    f"commit claims the controller identity but is not validly signed "
                    f"({signature.message})",
                )
        said = plan_event(commit, event.plan_id)  # its own group in a batched commit
        if said is None:
            what = f"no single Plan: group names {event.plan_id}"
            self.flag(event, "controller-unexplained", f"batched commit: {what}")
            return
        if said.trailers.get(RUN_START):
            self._run_record(event, said)
            return
        unexplained = self._unexplained(event, said)
        if unexplained:
            self.flag(event, "controller-unexplained", unexplained)
        if said.verb == "start":
            self._start(event, said)
        elif said.verb in OUTCOME_EVENTS:
            self._outcome(event, said)

    def _run_record(self, event: HistoryEvent, said: PlanEvent) -> None:
        """An outcome commit that records a run without writing its plan file (round 42:
        the run's path holds another plan since): the outcome of the open run it names in
        ``Run-Start:``, as the controller reads it; anything else is unexplained."""
        running = self.open.get(event.plan_id)
        start = said.trailers.get(RUN_START, "")
        if said.verb not in OUTCOME_EVENTS or running is None or running.start_commit != start:
            self.flag(
                event,
                "controller-unexplained",
                f"{said.subject!r} records a run ({RUN_START}: {start[:12]}) that is not the "
                f"open run of {event.plan_id}",
            )
            return
        self._outcome(event, said)

    def _unexplained(self, event: HistoryEvent, said: PlanEvent) -> str | None:
        """Why this commit under the controller's identity is not one the controller makes."""
        after, before = event.after, event.before
        assert after is not None
        verb = said.verb
        named = said.plan  # the path its subject or Plan: group names, read back
        if verb == "convert" and before is None and event.plan_id.startswith(f"{named}/"):
            named = event.plan_id  # a nested plan the conversion created under its parent
        if named != event.plan_id or verb not in EVENT_STATUS:
            where = "Plan-Event" if said.batched else "subject"
            return f"{where} {said.subject!r} is not a plangate event for {event.plan_id}"
        cannot = status_unexplained(verb, after.file_status)
        if cannot:
            return cannot
        moved = self._mode_changed(event, verb)
        if moved:
            return moved
        if before is None or before.blob is None or before.hash == after.hash:
            return None
        if verb == "freeze" and self._same_content(before.blob, after.blob, after.file):
            return None  # legacy ${...} references converted to $<...>
        running = self.open.get(event.plan_id)
        if running is not None and running.plan_hash == after.hash and verb != "start":
            return None  # writes back the version that ran over a change made meanwhile
        return f"a {verb} commit changed the plan's content ({before.hash} -> {after.hash})"

    def _mode_changed(self, event: HistoryEvent, verb: str) -> str | None:
        """A commit under the controller's identity that gave the plan file another mode
        than its parent held: the controller keeps each file's mode (round 87: ``100755``
        written back as ``100644`` made the next approver's ``git add`` a writer's change),
        so a changed mode is a change it did not make."""
        before, after, commit = event.before, event.after, event.commit
        if before is None or after is None or before.file != after.file or not commit.parents:
            return None
        was = self.repo.mode_of(commit.parents[0], after.file)
        now = self.repo.mode_of(commit.sha, after.file)
        if was is None or now is None or was == now:
            return None
        return f"a {verb} commit changed the mode of {after.file} ({was} -> {now})"

    def _same_content(self, old: str, new: str | None, file: str) -> bool:
        """Equal hashes once legacy references count as converted (as freezing does: round
        59 found the raw text's hash compared, so every converting freeze was flagged)."""
        if new is None:
            return False
        try:
            hashes = {
                plans.frozen_form_hash(
                    plans.validate_text(self.repo.blob(b).decode("utf-8", "replace"), Path(file))
                )
                for b in (old, new)
            }
        except PlanTooLarge:  # never read: no plan anyway
            return False
        return len(hashes) == 1 and None not in hashes

    def _start(self, event: HistoryEvent, said: PlanEvent) -> None:
        trailer = said.trailers.get("Approval-Commit")
        config, policy_hash = self.timeline.for_start(event.commit, said.trailers)
        state = self.requests.pop(event.plan_id, None)
        execution = Execution(event.plan_id, event.commit.sha, trailer, None, False)
        assert event.after is not None
        execution.plan_hash = event.after.hash
        execution.started_at = _iso(event.commit.commit_time)
        execution.policy_hash = policy_hash
        self.report.executions.append(execution)
        self.open[event.plan_id] = execution
        earlier = self.index.ran_as(execution.plan_hash) if self.index is not None else None
        if state is None or not state.request:
            execution.message = "no approval request precedes this start"
            self.flag(event, "start-without-approval", execution.message)
            self._started_twice(event, execution, earlier)
            return
        # The start commit's time is the controller's clock when it decided (§5 max_age),
        # and its tree what the controller read: the plans a pin names are read there, never
        # in the checkout the audit runs in (round 85: a run killed, then its nested plan
        # broken, was audited as a start on an invalid plan).
        with nested.reading_from(verdicts.fetch_at(self.repo, event.commit.sha)):
            request, verdict = verdicts.decide(
                state,
                self.repo,
                config,
                _checker(state.file, config),
                verified_at=event.commit.commit_time,
                authors=self.index.authors if self.index is not None else None,
                withdrawn=self.index.withdrawn if self.index is not None else None,
                plan_authors=None if self.index is None else partial(self.index.withdrawers, state),
            )
        execution.approval_kind = request.kind.value
        execution.authors = sorted(request.changers)
        execution.approved_at = _iso(request.commit_time)
        execution.approver = verdict.approver if verdict.outcome == "start" else None
        execution.approver = execution.approver or verdict.decision.approver
        execution.approval_valid = verdict.outcome == "start"
        execution.code, execution.message = verdict.decision.code, verdict.decision.message
        if verdict.outcome == "partial":
            execution.message = f"the approvals do not meet the policy: needs {verdict.missing}"
        if request.commit != trailer:
            self.flag(
                event,
                "start-without-approval",
                f"Approval-Commit {trailer} is not the approval request {request.commit}",
            )
        if not execution.approval_valid:
            self.flag(
                event,
                "start-without-approval",
                f"the approval {request.commit[:12]} was not valid: "
                f"{execution.code or 'quorum'}: {execution.message}",
            )
        if request.kind is approvals.Transition.APPROVE:  # a gate or resume continues a run
            self._started_twice(event, execution, earlier)
        if event.after.hash != request.current_hash:
            execution.hash_ok = False
            self.flag(
                event,
                "hash-mismatch",
                f"started content hashes to {event.after.hash}, approved was "
                f"{request.current_hash}",
            )

    def _started_twice(
        self, event: HistoryEvent, execution: Execution, earlier: str | None
    ) -> None:
        """A new run (not a gate or resume of one) of a frozen hash that already started on
        the branch, on any path: the controller refuses it (E_ALREADY_EXECUTED, SPEC §15), so
        this start is not valid (round 50: a controller with a new state directory ran a
        copy, and the audit listed the second start as valid)."""
        if earlier is None:
            return
        text = (
            f"frozen hash {execution.plan_hash} already started as {earlier}; a version runs "
            "at most once (E_ALREADY_EXECUTED)"
        )
        if execution.approval_valid:
            execution.approval_valid = False
            execution.code, execution.message = "E_ALREADY_EXECUTED", text
        self.flag(event, "started-twice", text)

    def _outcome(self, event: HistoryEvent, said: PlanEvent) -> None:
        verb = said.verb
        execution = self.open.get(event.plan_id)
        if execution is None:
            before = event.before
            if (
                verb == "abort"
                and before is not None
                and (before.abort_requested or before.status == "aborted")
            ):
                return  # the controller records an abort of a plan withdrawn before it ran
            index = self.index
            if index is not None and index.closes_start(self.repo, event.commit, event.plan_id):
                return  # closes a run whose start stands beside the line (round 112)
            start = said.trailers.get(CLOSES_START, "")
            erased = (
                f" (it closes the run started by {start[:12]}, which this history does not "
                "hold: erased by a rewrite)"
                if start
                else ""
            )
            self.flag(event, "outcome-without-start", f"{verb} without a start commit{erased}")
            return
        execution.outcome = verb
        execution.outcome_commit = event.commit.sha
        if verb != "checkpoint":  # a run that paused at a gate ended there too
            execution.finished_at = _iso(event.commit.commit_time)
        if verb == "abort":
            execution.aborted_by = said.trailers.get("Aborted-By")
        if verb != "checkpoint" and verb != "await-approval":
            self.open.pop(event.plan_id, None)


def _iso(ts: int) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _checker(file: str, config: Config) -> Callable[[bytes], tuple[tuple[str, ...], str | None]]:
    def check(data: bytes) -> tuple[tuple[str, ...], str | None]:
        loaded = plans.validate_text(data.decode("utf-8", "replace"), Path(file), config)
        return tuple(p.code for p in loaded.problems), loaded.hash

    return check


#: The subjects of the controller's outcome commits (``plangate: <verb> <plan>``).
_OUTCOME_VERBS = ("complete", "fail", "abort", "await-approval")


def _with_run_records(repo: GitRepo, head: str, records: list[Any]) -> list[Any]:
    """``records`` with, in their places on the first-parent line, the commits that name a
    ``Run-Start:`` and that the path-limited log leaves out because they change no file
    under the plans folder (round 44): a run's outcome recorded while its path holds another
    plan, where the log could not be written (a folder, FIFO or the same bytes at the log's
    name; the controller never writes over them). The controller takes such a run as
    ended: the audit reads it from the message too (who made it is judged as ever). So
    are the controller's policy record commits that change no file (round 61: the file
    already held the bytes it records), and any commit whose subject records a run's
    outcome (round 94, heiroutcome: a second ``complete`` of one run, its files the bytes
    the first wrote, changed no file and was never read: the audit found nothing)."""
    rows = repo.run(
        "rev-list", "--first-parent", "--fixed-strings", f"--grep={RUN_START}:",
        f"--grep={recorded.RECORD_SUBJECT}", *(f"--grep=plangate: {verb} " for verb in
        _OUTCOME_VERBS), head,
    ).split()  # fmt: skip
    logged = {r.sha for r in records}
    quiet = [sha for sha in rows if sha not in logged]
    if not quiet:
        return records
    line = repo.run("rev-list", "--first-parent", "--reverse", head).split()
    rank = {sha: i for i, sha in enumerate(line)}
    items = [(rank[r.sha], r) for r in records] + [(rank[sha], repo.commit(sha)) for sha in quiet]
    return [item for _, item in sorted(items, key=lambda pair: pair[0])]


def _with_quiet_merges(repo: GitRepo, head: str, records: list[Any]) -> list[Any]:
    """``records`` with, in their places on the first-parent line, the merges the
    path-limited log leaves out because they change nothing under the plans folder
    (``git merge -s ours``), each as (its first parent, itself): their branches may hold
    rejections and aborts, which the controller's scan reads from every merge (round 24:
    the audit never listed them)."""
    rows = repo.run("rev-list", "--first-parent", "--merges", "--parents", head).splitlines()
    logged = {r.sha for r in records}
    quiet = [(shas[1], shas[0]) for shas in (row.split() for row in rows)
             if len(shas) >= 3 and shas[0] not in logged]  # fmt: skip
    if not quiet:
        return records
    line = repo.run("rev-list", "--first-parent", "--reverse", head).split()
    rank = {sha: i for i, sha in enumerate(line)}
    items = [(rank[r.sha], r) for r in records] + [(rank[pair[1]], pair) for pair in quiet]
    return [item for _, item in sorted(items, key=lambda pair: pair[0])]


def audit_repo(
    repo: GitRepo,
    config: Config | None,
    head: str,
    controller: str | None = None,
    own_commit: Callable[[str], bool] | None = None,
) -> AuditReport:
    """Replay ``head``'s first-parent history; ``config`` None: judge by git alone
    (``controller``: the controller's identity, when the auditor names it). ``own_commit``:
    the controller's record of the commits it made (``audit --config`` with its state
    directory), which tells its commits as the live controller does; None: by git alone.
    When the recorded ``plans_dir`` changed along history, each recorded plans folder is
    read with its own replay (:func:`_by_folder`)."""
    repo.check_complete()
    timeline = Timeline.open(repo, config, head, controller, own_commit)  # round 112
    repo.read_signatures = (
        config is not None and config.approval.allowed_signers is not None
    ) or timeline.in_force.approval.allowed_signers is not None
    try:
        report, policy_found = _replay(repo, timeline, head, own_commit)
        ends = folder_ends(timeline.folders)
        if ends and ends != {timeline.plans_dir: None}:  # else one plans folder: the common case
            how = (config, controller, own_commit)
            report = _by_folder(repo, how, head, report, policy_found, ends)
        _started_on_other_branches(repo, head, report, _identities_of(timeline))
        return report
    finally:
        timeline.close()


def _identities_of(timeline: Timeline) -> set[str]:
    """Every identity the controller had along the history read (its links followed)."""
    found = {timeline.identity, *(identity for _sha, identity in timeline.identities)}
    found.update(who for pair in timeline.links.values() for who in pair)
    return {who.lower() for who in found if who}


def _started_on_other_branches(
    repo: GitRepo, head: str, report: AuditReport, identities: set[str]
) -> None:
    """A new run of a frozen hash that an earlier start under the controller's name began on
    another branch of the repository (its ``refs/heads/*`` and ``refs/remotes/*``, in commits
    ``head`` does not hold): a version runs at most once across branches (SPEC §15), as the
    controller's first start reads them (round 126, ``takeover-on-new-branch-reruns``;
    ``ControllerCore._starts_on_other_branches``). The audit read one branch: two controllers
    with their own state directories on two branches ran one version twice, and neither
    branch's audit flagged it. A start counts by git alone (:func:`named_starts`: the name as
    author and committer, and a seal), and only when it is older than this branch's start (the
    later run is the second; the other branch's audit flags a later one there; two in the same
    second are both flagged). One
    ``for-each-ref`` and one ``git log --grep``; a clone with one branch reads nothing more."""
    starts = [
        e for e in report.executions
        if e.plan_hash and e.approval_kind in (None, approvals.Transition.APPROVE.value)
    ]  # fmt: skip
    if not starts or not identities:
        return
    listed = repo.run("for-each-ref", "--format=%(objectname)", "refs/heads/", "refs/remotes/")
    tips = sorted(set(listed.split()))
    if not tips:
        return
    elsewhere: dict[str, tuple[int, str, str]] = {}  # hash -> (time, plan, start commit)
    for record in repo.log_mentioning(tips, head, START_MENTIONS):
        for who in identities:
            for plan_hash, plan in named_starts(record, who, None):
                known = elsewhere.get(plan_hash)
                if known is None or record.commit_time < known[0]:
                    elsewhere[plan_hash] = (record.commit_time, plan, record.sha)
    if not elsewhere:
        return
    flagged = {(f["plan"], f["commit"]) for f in report.findings if f["kind"] == "started-twice"}
    for execution in starts:
        other = elsewhere.get(execution.plan_hash or "")
        if other is None or (execution.plan, execution.start_commit) in flagged:
            continue
        if repo.commit(execution.start_commit).commit_time < other[0]:
            continue  # this branch's run came first: the other one is the second (in the
            # same second, which is unknown: both are flagged, the safe side)
        text = (
            f"frozen hash {execution.plan_hash} already started as {other[1]} in "
            f"{other[2][:12]}, a commit of another branch; a version runs at most once "
            "(E_ALREADY_EXECUTED)"
        )
        if execution.approval_valid:
            execution.approval_valid = False
            execution.code, execution.message = "E_ALREADY_EXECUTED", text
        finding = {"plan": execution.plan, "commit": execution.start_commit}
        report.findings.append({**finding, "kind": "started-twice", "detail": text})


def folder_ends(folders: list[tuple[str, str]]) -> dict[str, str | None]:
    """Each recorded plans folder and the record commit where the controller stopped reading
    it for good (None: it is today's): the controller reads its plans folder's whole history
    (a ``plans_dir`` change rebuilds its index), so a folder is read from the start of
    history up to the record that replaced it the last time."""
    ends: dict[str, str | None] = {}
    for at, (_, folder) in enumerate(folders):
        ends[folder] = folders[at + 1][0] if at + 1 < len(folders) else None
    return ends


def _by_folder(
    repo: GitRepo,
    how: tuple[Config | None, str | None, Callable[[str], bool] | None],
    head: str,
    first: AuditReport,
    policy_found: list[dict[str, str]],
    ends: dict[str, str | None],
) -> AuditReport:
    """The report of a history whose recorded ``plans_dir`` changed (round 125: the audit
    read one folder for the whole history, missing every run under the other): one replay
    per recorded folder, each read up to its end (:func:`folder_ends`), merged in history
    order; the policy's own findings and notes, and its list, from the first full walk."""
    config, controller, own_commit = how
    merged = AuditReport(notes=first.notes, policies=first.policies)
    merged.findings = list(policy_found)
    read_in: dict[int, str] = {}  # each execution's folder (by its id)
    for folder, end in ends.items():
        timeline = Timeline.open(repo, config, head, controller, own_commit)
        timeline.plans_dir = folder
        try:
            others = tuple(other for other in ends if other != folder)
            part, _ = _replay(
                repo, timeline, head, own_commit, stop=end, quiet_policy=True, others=others
            )
        finally:
            timeline.close()
        merged.executions += part.executions
        read_in.update((id(execution), folder) for execution in part.executions)
        merged.findings += part.findings
        merged.decisions += part.decisions
    # a folder inside another (``plans`` -> ``plans/ops``) is read by both replays for a while:
    # what both saw is listed once
    line = repo.run("rev-list", "--first-parent", "--reverse", head).split()
    rank = {sha: i for i, sha in enumerate(line)}
    executions = _unique(merged.executions, lambda e: (e.plan, e.start_commit))
    merged.executions = _in_history_order(executions, lambda e: e.start_commit, rank)
    _started_twice_across(merged, read_in)
    findings = _unique(merged.findings, lambda f: tuple(sorted(f.items())))
    merged.findings = _in_history_order(findings, lambda f: f["commit"], rank)
    decisions = _unique(merged.decisions, lambda d: (d["kind"], d["plan"], d["commit"]))
    merged.decisions = _in_history_order(decisions, lambda d: str(d["commit"]), rank)
    return merged


def _unique(items: list[Any], key: Callable[[Any], Any]) -> list[Any]:
    """``items`` without the later of two with the same ``key``, in order."""
    seen: set[Any] = set()
    kept = []
    for item in items:
        if key(item) not in seen:
            seen.add(key(item))
            kept.append(item)
    return kept


def _in_history_order(
    items: list[Any], commit: Callable[[Any], str], rank: dict[str, int]
) -> list[Any]:
    """``items`` ordered by their commit's place on the first-parent line (stable; one on a
    merged branch keeps the place of the item before it in its own list)."""
    keyed, last = [], -1
    for position, item in enumerate(items):
        last = rank.get(commit(item), last)
        keyed.append(((last, position), item))
    return [item for _, item in sorted(keyed, key=lambda pair: pair[0])]


def _started_twice_across(report: AuditReport, read_in: dict[int, str]) -> None:
    """A new run of a frozen hash that already started under another plans folder (a plan
    copied from the old folder to the new one): the controller refuses it
    (E_ALREADY_EXECUTED, its state directory's record of what it started), as a replay of one
    folder does within it (:meth:`Auditor._started_twice`). ``read_in``: each execution's
    folder, by its id (one folder's replay has judged its own)."""
    first: dict[str, Execution] = {}
    flagged = {(f["plan"], f["commit"]) for f in report.findings if f["kind"] == "started-twice"}
    for execution in report.executions:
        earlier = first.setdefault(execution.plan_hash or "", execution)
        if not execution.plan_hash or read_in[id(earlier)] == read_in[id(execution)]:
            continue
        if (execution.plan, execution.start_commit) in flagged:
            continue  # its own folder's replay found an earlier start already
        if execution.approval_kind not in (None, approvals.Transition.APPROVE.value):
            continue  # a gate or resume continues its run
        text = (
            f"frozen hash {execution.plan_hash} already started as {earlier.plan}; a version "
            "runs at most once (E_ALREADY_EXECUTED)"
        )
        if execution.approval_valid:
            execution.approval_valid = False
            execution.code, execution.message = "E_ALREADY_EXECUTED", text
        finding = {"plan": execution.plan, "commit": execution.start_commit}
        report.findings.append({**finding, "kind": "started-twice", "detail": text})


def _replay(
    repo: GitRepo,
    timeline: Timeline,
    head: str,
    own_commit: Callable[[str], bool] | None,
    *,
    stop: str | None = None,
    quiet_policy: bool = False,
    others: tuple[str, ...] = (),
) -> tuple[AuditReport, list[dict[str, str]]]:
    """Replay the history under ``timeline.plans_dir``; from the commit ``stop`` on, only the
    policy record is followed. Returns the report and the findings the policy's own walk
    made (``quiet_policy``: none, and no notes: another replay reports them)."""
    in_force = timeline.in_force
    index = HistoryIndex(
        None,
        plans_dir=timeline.plans_dir,
        controller_email=timeline.identity,
        may_withdraw=withdraw_rule(in_force.approval),
        max_plan_bytes=in_force.limits.max_plan_bytes,
        own_commit=own_commit,
    )
    index.identity_aliases = in_force.approval.identity_aliases  # as the controller's
    index.keeps_merged_in = True  # for the run records a merge brings back (round 122)
    index.other_folders = others  # their plans' events: their own replays' (round 125)
    index.identity_mode = in_force.approval.identity
    auditor = Auditor(repo, timeline)
    auditor.index = index
    timeline.findings = auditor.report.findings  # one list, in the order of history
    auditor.report.notes[:0] = timeline.notes  # what it noted opening (an unrecorded identity)
    timeline.notes = auditor.report.notes
    policy_found: list[dict[str, str]] = []
    # the history the controller's index reads (round 80: the files below a root folder
    # ``plans\``), the plans folder's other spellings (round 84), the policy's record and twins
    spelled = repo.folder_spellings(None, head, timeline.plans_dir)
    paths = [*history_paths(timeline.plans_dir, spelled), recorded.POLICY_PATH]
    paths += recorded.TWIN_SPECS
    records = []
    with _Prefetcher(index, repo) as prefetch:  # plan versions read in bulk, as a scan does
        for record in repo.first_parent_log(None, head, paths, newest_first=True):
            records.append(record)
            prefetch.add(record)
    records.reverse()
    reading = True
    for record in _with_quiet_merges(repo, head, _with_run_records(repo, head, records)):
        if isinstance(record, tuple):  # a merge that changed nothing here: its branch may
            if reading:  # hold withdrawals (round 24)
                index.merged_authors(repo, *record)
                auditor.side_disowned(index.side_disowned)
                index.apply_side_withdrawals(auditor)
            continue
        reading = reading and record.sha != stop
        found, noted = len(auditor.report.findings), len(auditor.report.notes)
        timeline.apply(record)
        index.controller_email = timeline.identity  # it follows an identity change (round 126)
        if quiet_policy:
            del auditor.report.findings[found:], auditor.report.notes[noted:]
        else:
            policy_found += auditor.report.findings[found:]
        if not reading:
            continue
        if timeline.in_force is not in_force:  # who may reject or abort follows the policy
            in_force = timeline.in_force
            index.may_withdraw = withdraw_rule(in_force.approval)
            index.identity_aliases = in_force.approval.identity_aliases
            index.identity_mode = in_force.approval.identity
        if record.is_merge:  # the merged branch's writers and withdrawals, as a scan has them
            index.merged_authors(repo, record.parents[0], record.sha)
            auditor.side_disowned(index.side_disowned)
            index.apply_merged_back(repo, record, auditor)  # a run's start merged back
        auditor.disowned(record, index.disowned(record, repo))  # judged before it applies
        index.apply(repo, record, auditor)
        if record.is_merge:
            index.apply_side_withdrawals(auditor)
    index.close()
    report = auditor.report
    if quiet_policy:
        return report, policy_found
    report.policies = [{"hash": v.hash, "commit": v.commit} for v in timeline.seen.values()]
    changed = timeline.differs_from_config()
    if changed:
        assert timeline.current is not None
        report.notes.append(
            {
                "kind": "config-differs",
                "detail": f"today's config differs from the last recorded policy "
                f"{timeline.current.hash} in {', '.join(changed)} (the controller records "
                "it on its next pass)",
            }
        )
    return report, policy_found
