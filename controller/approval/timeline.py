"""The recorded policy through history: which policy was in force at each commit (SPEC §11).

``plangate audit`` replays the branch's first-parent history; this module follows
``.plangate/policy.json`` along it (:mod:`controller.approval.recorded`). A version counts as
the policy in force only when the controller committed it: authored and committed by the
controller's identity with a ``Controller-Seal:`` of the seal's form (round 94; with
``require_signed`` in force, validly signed too), parseable, canonical. Any
other change is a finding and changes nothing: a human who edits, forges or deletes the
file, or a merge that brings another version in, does not change how the audit judges.

Which identity is the controller's: the config's when the audit has one, or the one the
auditor names (``--controller``); otherwise the one the recorded versions name (a version
committed by anyone but the identity it names is flagged by the walk and never in force).
Only a version its identity committed as a sealed record (:func:`_records`) claims that
identity once any version is one: an unsealed edit of the file, or one committed by another
hand, names nobody (round 110: an agent's later unsealed commit naming another identity
stopped every fresh-clone audit). When sealed records name more than one identity, git alone
cannot tell which is the controller (an agent can commit a self-consistent, seal-shaped
policy naming itself before the controller's first pass, and an operator may change the
controller's identity): the audit refuses to guess and asks for one.

An identity change is followed (round 126): the controller's first record under its new
identity names the old one (``Previous-Identity:``); such a record, sealed and made by the
identity its policy names (and, with the controller's record of its commits, one it made),
links the two (:mod:`controller.git.identities`). From the identity at the head (the
config's, or before the controller's first pass under it the one its last record names, with
a note; ``--controller``'s, followed on) the links are followed back stretch by stretch,
newest first (round 127: an identity that came back, A -> B -> A); the walk starts with the
first stretch's identity and takes the next one at each link followed
(:attr:`Timeline.identities`), which the audit's replay follows.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from controller.approval import recorded
from controller.display import visible
from controller.errors import ConfigInvalid
from controller.git.gitrepo import CommitRecord, GitRepo
from controller.git.identities import (
    Links,
    followed_back,
    identity_links,
    onward,
    recorded_identity,
    stretches,
)
from controller.settings import Config


@dataclass
class Version:
    """One recorded policy: its hash, document, the config that judges like it, where."""

    hash: str
    doc: dict[str, Any]
    config: Config
    commit: str


@dataclass
class Timeline:
    """The policy in force while the audit walks history, and the findings about the file."""

    repo: GitRepo
    #: The audit's config (None: git alone).
    given: Config | None
    identity: str
    plans_dir: str
    #: The policy in force (None before the first recorded version).
    current: Version | None = None
    #: Every version the controller recorded so far, by hash.
    seen: dict[str, Version] = field(default_factory=dict)
    findings: list[dict[str, str]] = field(default_factory=list)
    #: What the audit reports beside its findings (the report's notes): a twin of the record
    #: (:meth:`_twin`), which changes no verdict.
    notes: list[dict[str, str]] = field(default_factory=list)
    _signers: tempfile.TemporaryDirectory[str] | None = None
    #: Judges history before the first recorded version (no config: the first version).
    fallback: Config | None = None
    #: The controller's record of the commits it made (``audit --config`` with its state
    #: directory): a record commit it lacks is anyone's, never in force. None: git alone.
    own_commit: Callable[[str], bool] | None = None
    #: Where the recorded plans folder changed: (record commit, its ``plans_dir``), oldest
    #: first, the first record included (``plangate audit`` reads each stretch of history
    #: with the folder recorded for it: round 125).
    folders: list[tuple[str, str]] = field(default_factory=list)
    #: Where the controller's identity changed: (record commit, the identity it took), oldest
    #: first. A change is a sealed record commit made by the identity its policy names,
    #: naming in ``Previous-Identity:`` the identity in force then (with the controller's
    #: record of its commits: one it made): :meth:`_follow_identity` (round 126).
    identities: list[tuple[str, str]] = field(default_factory=list)
    #: The identity changes along history, by record commit: the identity each one takes
    #: (:func:`~controller.git.identities.identity_links`).
    links: dict[str, tuple[str, str]] = field(default_factory=dict)

    @classmethod
    def open(
        cls,
        repo: GitRepo,
        config: Config | None,
        head: str,
        controller: str | None = None,
        own_commit: Callable[[str], bool] | None = None,
    ) -> Timeline:
        """Find the controller's identity and plans folder: the config's, or (git alone) the
        one identity the recorded versions name (``controller``: that one). Either is followed
        through its recorded identity changes stretch by stretch
        (:mod:`controller.git.identities`): history is read from the first stretch's identity
        on. ``own_commit``: the controller's record of the commits it made (None: git
        alone)."""
        links = identity_links(repo, head, own_commit)
        if config is not None:  # the config names them: no walk of the versions needed
            return cls._of_config(repo, config, head, links, own_commit)
        timeline = cls(repo, None, "", "", own_commit=own_commit)
        wanted = controller.strip().lower() if controller else None
        walk = _walk_from(links, wanted) if wanted else []
        chain = list(dict.fromkeys(identity for _sha, identity in walk))
        #: identity -> (its first version, commit), and its first version it committed itself
        named: dict[str, tuple[Config, str]] = {}
        own: dict[str, Config] = {}
        for record in policy_log(repo, head):
            blob = _new_blob(record) if record.changes else repo.blob_sha(record.sha, _FILE)
            doc = recorded.parse_blob(repo, blob)
            if doc is None:
                continue
            try:  # a version no config can be made of is flagged by the walk; skip it here
                version = timeline._config(doc)
            except Exception:
                continue
            identity = version.identity.email.lower()
            if wanted is not None and identity not in chain:
                continue
            named.setdefault(identity, (version, record.sha))
            if _records(record, identity):
                own.setdefault(identity, version)
        if own:  # round 110: a version no identity sealed as its own record claims nothing
            named = {who: claim for who, claim in named.items() if who in own}
        if wanted is not None:  # one controller under each name of its chain: the first
            named = dict(sorted(named.items(), key=lambda claim: chain.index(claim[0]))[:1])
        if len(named) > 1:
            timeline.close()
            claims = ", ".join(f"{who} (first at {sha[:12]})" for who, (_, sha) in named.items())
            raise ConfigInvalid(
                f"the recorded policies name more than one controller identity: {claims}; "
                "git alone cannot tell which one is the controller",
                remedy="pass --controller EMAIL (the controller's git identity) or --config",
            )
        if not named:
            timeline.close()
            raise ConfigInvalid(
                "no config found, and the branch holds no recorded policy "
                f"({recorded.POLICY_PATH})"
                + (f" naming {wanted}" if wanted else "")
                + " to judge its history by",
                remedy="pass --config (or set PLANGATE_CONFIG), or run a controller that "
                "records its policy first",
            )
        ((identity, (first, _sha)),) = named.items()
        # History before the controller's first record is judged by the first version the
        # controller itself committed (one someone else committed is only a claim).
        timeline.fallback = own.get(identity, first)
        timeline.identity, timeline.plans_dir = identity, timeline.fallback.plans_dir
        # the walk from the first stretch of the identity chosen (none without --controller)
        at = next((i for i, (_sha, who) in enumerate(walk) if who == identity), len(walk))
        timeline.links = {sha: links[sha] for sha, _who in walk[at + 1 :] if sha is not None}
        return timeline

    @classmethod
    def _of_config(
        cls,
        repo: GitRepo,
        config: Config,
        head: str,
        links: Links,
        own_commit: Callable[[str], bool] | None,
    ) -> Timeline:
        """The timeline of ``audit --config``: the config's identity at the head (or, before
        the controller's first pass under it, the one its last record names by its record of
        its commits: :func:`~controller.git.identities.recorded_identity`, with a note),
        followed back stretch by stretch (:func:`~controller.git.identities.followed_back`)."""
        given = config.identity.email.lower()
        today = recorded_identity(repo, head, given, own_commit)
        start, followed = followed_back(links, today)
        timeline = cls(repo, config, start, config.plans_dir, own_commit=own_commit)
        timeline.fallback, timeline.links = config, followed
        if today != given:
            timeline.notes.append(_unrecorded_note(given, today))
        # history before the controller's first record is judged by the config it had then,
        # which that record holds (round 128: today's config judged it, so an approver added
        # since made a rejection the controller ignored count, and a lowered size limit read
        # the plan versions it had run as too large); none yet: the config it will record
        timeline.fallback = timeline._first_recorded(head) or config
        return timeline

    def _first_recorded(self, head: str) -> Config | None:
        """The config of the first policy the controller recorded on ``head``'s line, as the
        walk (:meth:`apply`) takes it (None: none yet). The walk is dry: it leaves the
        timeline as it found it (the version's signers copy stays in :attr:`_signers`)."""
        identity, notes = self.identity, list(self.notes)
        first = None
        try:
            for record in policy_log(self.repo, head):
                self.apply(record)
                if self.current is not None:
                    first = self.current
                    break
        finally:
            self.identity, self.notes, self.current, self.seen = identity, notes, None, {}
            self.findings, self.folders, self.identities = [], [], []
        return first.config if first is not None else None

    def close(self) -> None:
        if self._signers is not None:
            self._signers.cleanup()
            self._signers = None

    @property
    def in_force(self) -> Config:
        """The config that judges as the policy in force did."""
        if self.current is not None:
            return self.current.config
        assert self.fallback is not None
        return self.fallback

    # --- walking ----------------------------------------------------------------------

    def apply(self, record: CommitRecord) -> None:
        """A first-parent commit: a record commit of the controller's records the policy its
        ``Policy-Hash:`` names, whether or not it changes the file (round 61); any other
        change of the file is a finding and records nothing."""
        self._follow_identity(record)
        author, committer = record.author.email, record.committer.email
        named = recorded.recorded_hash(
            record.subject, record.trailers, author, committer, self.identity
        )
        changes = [c for c in record.changes if c.path == recorded.POLICY_PATH]
        if named is not None and self.own_commit is not None and not self.own_commit(record.sha):
            self._disowned(record, bool(changes))
        elif named is not None:
            blob = changes[0].new_blob if changes else self.repo.blob_sha(record.sha, _FILE)
            self._record(record, blob, named)
        else:  # a look-alike with no seal: judged as a record would be, never in force
            named = recorded.claimed_hash(
                record.subject, record.trailers, author, committer, self.identity
            )
            if named is not None:
                blob = changes[0].new_blob if changes else self.repo.blob_sha(record.sha, _FILE)
                self._record(record, blob, named, sealed=False, changed=bool(changes))
            elif changes:
                self._changed(record, changes[0].new_blob)
        for change in record.changes:  # whoever commits it: the controller writes none
            if change.new_blob is not None and recorded.is_twin(change.path):
                self._twin(record, change.path)

    def _follow_identity(self, record: CommitRecord) -> None:
        """A record commit of the controller's made under its new identity, naming the one in
        force as its previous (``Previous-Identity:``): from it on, the controller's commits
        are the new identity's (round 126: the audit read one identity for the whole
        history, flagging the other's commits and missing its runs)."""
        link = self.links.get(record.sha)
        if link is None or link[0] != self.identity:
            return
        if self.in_force.approval.require_signed:  # as its record is read (:meth:`_record`)
            allowed = self.in_force.approval.allowed_signers
            if not self.repo.verify_commit(record.sha, allowed).valid:
                return
        self.identity = link[1]
        self.identities.append((record.sha, link[1]))

    def _twin(self, record: CommitRecord, path: str) -> None:
        """An entry that IS the recorded policy on a folding checkout (:func:`recorded.is_twin`):
        someone else's policy at the record's place there, reported ``policy-changed`` with
        its commit. A note, not a finding: git holds the record's own path untouched, every
        verdict follows the controller's record commits, and only a reader of such a
        checkout's file is shown the twin (round 75)."""
        self.notes.append(
            {
                "kind": "policy-changed",
                "plan": recorded.POLICY_PATH,
                "commit": record.sha,
                "detail": f"{record.author.email} committed {visible(path)} in {record.sha[:12]}, "
                f"which is {recorded.POLICY_PATH} on a case-insensitive, HFS+ or NTFS checkout; "
                "only the controller records its policy (ignored: the audit judges by the "
                "controller's record commits)",
            }
        )

    def _changed(self, record: CommitRecord, blob: str | None) -> None:
        """A change of the file in no record commit of the controller's: flagged."""
        who = record.author.email
        what = "deleted" if blob is None else "changed"
        if who.lower() != self.identity:
            detail = f"{who} {what} {recorded.POLICY_PATH}; only the controller records its policy"
        elif record.committer.email.lower() != self.identity:
            detail = (
                f"{recorded.POLICY_PATH} {what} under the controller's name but committed by "
                f"{record.committer.email}; only the controller's own record commits record it"
            )
        elif blob is None:
            detail = f"the controller never deletes {recorded.POLICY_PATH}"
        else:
            detail = (
                f"{recorded.POLICY_PATH} {what} in no record commit ({recorded.RECORD_SUBJECT} "
                "with its Policy-Hash); only those record the policy"
            )
        self._flag(
            record,
            "policy-changed",
            detail + " (ignored: the audit keeps judging by the controller's record)",
        )

    def _disowned(self, record: CommitRecord, changed: bool) -> None:
        """A record commit, seal and all, that the controller's record of the commits it made
        lacks (``audit --config``): anyone's replay or forgery of one, flagged and never in
        force, as the live controller reads it (round 112: P1's record replayed under the
        controller's name after P2 removed Dave let the audit count Dave's rejection and call
        Alice's approval illegal and the controller's start unapproved)."""
        self._flag(
            record,
            "policy-changed" if changed else "forged-controller",
            f"a {recorded.RECORD_SUBJECT} commit under the controller's name that is not in its "
            "record of the commits it made (<state_dir>/commits): a replayed or forged record "
            "(ignored: the audit keeps judging by the controller's record)",
        )

    def _unsealed(self, record: CommitRecord, changed: bool) -> None:
        """A record commit's look-alike under the controller's full identity with no
        ``Controller-Seal:`` of the seal's form, which every controller commit carries since
        round 66: anyone's commit (a forged record), flagged and never in force, as an
        unsealed run event is no controller's (round 94: the audit judged a rejection by
        the forgery's policy and called the controller's run invalid). ``policy-changed``
        when it changes the file, ``forged-controller`` when it only claims to record."""
        self._flag(
            record,
            "policy-changed" if changed else "forged-controller",
            f"a {recorded.RECORD_SUBJECT} commit under the controller's name with no "
            "Controller-Seal: (every controller commit carries one since round 66): a forged "
            "record (ignored: the audit keeps judging by the controller's record)",
        )

    def _record(
        self,
        record: CommitRecord,
        blob: str | None,
        named: str,
        *,
        sealed: bool = True,
        changed: bool = False,
    ) -> None:
        """A record commit of the controller's: the file there is the policy it records.
        ``sealed`` False: its unsealed look-alike, flagged for what its file is as a record
        would be, and otherwise as a forged record (:meth:`_unsealed`), never in force."""
        if self.in_force.approval.require_signed:
            signature = self.repo.verify_commit(record.sha, self.in_force.approval.allowed_signers)
            if not signature.valid:
                self._flag(
                    record,
                    "forged-controller",
                    f"a record of {recorded.POLICY_PATH} claims the controller identity but is "
                    f"not validly signed ({signature.message}); ignored",
                )
                return
        if blob is None:
            what = f"the controller never deletes {recorded.POLICY_PATH}"
            self._flag(record, "policy-changed", what)
            return
        doc = recorded.parse_blob(self.repo, blob)
        if doc is None:
            self._flag(
                record,
                "policy-unreadable",
                f"{recorded.POLICY_PATH} is not a policy the controller writes "
                "(canonical JSON of a known version); ignored",
            )
            return
        digest = recorded.hash_of(self.repo.blob(blob))  # read: a record is small
        if named != digest:  # the controller names what it writes: no record of either
            self._flag(
                record,
                "policy-hash-mismatch",
                f"the commit names Policy-Hash {named}, the file hashes to {digest}; ignored",
            )
            return
        if not sealed:
            self._unsealed(record, changed)
            return
        version = self.seen.get(digest)
        if version is None:
            try:
                version = Version(digest, doc, self._config(doc), record.sha)
            except Exception as exc:  # a document no config can be made of
                self._flag(record, "policy-unreadable", f"cannot judge by it: {exc}")
                return
            self.seen[digest] = version
        if self.current is None or self.current.config.plans_dir != version.config.plans_dir:
            self.folders.append((record.sha, version.config.plans_dir))
        self.current = version

    def for_start(
        self, record: CommitRecord, trailers: dict[str, str] | None = None
    ) -> tuple[Config, str | None]:
        """The policy a start commit names (``Policy-Hash:``; in a batched commit, the plan's
        own trailer group), checked against the policy in force; returns the config to judge
        its approval by and the hash."""
        named = ((trailers or record.trailers).get("Policy-Hash") or "").strip() or None
        current = self.current
        if named is None:
            if current is not None:
                self._flag(
                    record,
                    "policy-hash-mismatch",
                    f"a start without Policy-Hash while {current.hash} was recorded",
                )
            return self.in_force, None
        if current is None or named != current.hash:
            held = current.hash if current is not None else "no recorded policy"
            self._flag(
                record,
                "policy-hash-mismatch",
                f"the start names Policy-Hash {named}, but the policy recorded at that point "
                f"is {held}",
            )
            version = self.seen.get(named)
            return (version.config if version else self.in_force), named
        return current.config, named

    def differs_from_config(self) -> list[str]:
        """With a config: which keys of today's config differ from the last recorded policy."""
        if self.given is None or self.current is None:
            return []
        return recorded.differences(self.current.doc, recorded.policy_document(self.given))

    # --- helpers ----------------------------------------------------------------------

    def _config(self, doc: dict[str, Any]) -> Config:
        if self._signers is None:
            self._signers = tempfile.TemporaryDirectory(prefix="plangate-audit-")
        return recorded.config_of(doc, Path(self._signers.name))

    def _flag(self, record: CommitRecord, kind: str, detail: str) -> None:
        self.findings.append(
            {"plan": recorded.POLICY_PATH, "commit": record.sha, "kind": kind, "detail": detail}
        )


_FILE = recorded.POLICY_PATH


def _walk_from(links: Links, wanted: str) -> list[tuple[str | None, str]]:
    """The stretches of the controller that had ``wanted`` at some point (``--controller``):
    from the identity the links take it to at the head, followed back; a ``wanted`` that
    walk does not reach is taken as the identity at the head."""
    start, followed = followed_back(links, onward(links, wanted))
    walk = stretches(start, followed)
    if all(identity != wanted for _sha, identity in walk):
        walk = stretches(*followed_back(links, wanted))
    return walk


def _unrecorded_note(given: str, today: str) -> dict[str, str]:
    """The note of an ``audit --config`` whose config names an identity no record of the
    controller's names yet (the config changed, no pass since)."""
    return {
        "kind": "identity-unrecorded",
        "detail": f"today's config names the controller identity {given}, but the "
        f"controller's last record names {today}: history is read as {today}'s up to the "
        f"head (the controller links {given} to it on its next pass: Previous-Identity:)",
    }


def policy_log(repo: GitRepo, head: str) -> list[CommitRecord]:
    """``head``'s first-parent commits that change the policy file or are record commits by
    their subject (whose tree may equal their parent's: round 61), oldest first; who made
    them is the reader's to judge."""
    logged = list(repo.first_parent_log(None, head, [_FILE]))
    seen = {record.sha for record in logged}
    quiet = [sha for sha in record_commits(repo, head) if sha not in seen]
    if not quiet:
        return logged
    line = repo.run("rev-list", "--first-parent", "--reverse", head).split()
    rank = {sha: i for i, sha in enumerate(line)}
    found = logged + [repo.commit(sha) for sha in quiet]
    return sorted(found, key=lambda record: rank.get(record.sha, -1))


def record_commits(repo: GitRepo, head: str) -> list[str]:
    """``head``'s first-parent commits whose message holds the record subject."""
    grep = f"--grep={recorded.RECORD_SUBJECT}"
    return repo.run("rev-list", "--first-parent", "--fixed-strings", grep, head).split()


def _records(record: CommitRecord, identity: str) -> bool:
    """Is ``record`` a record commit under ``identity`` (subject, trailer, both names)?"""
    author, committer = record.author.email, record.committer.email
    named = recorded.recorded_hash(record.subject, record.trailers, author, committer, identity)
    return named is not None


def _new_blob(record: CommitRecord) -> str | None:
    for change in record.changes:
        if change.path == recorded.POLICY_PATH:
            return change.new_blob
    return None
