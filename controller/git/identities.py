"""The controller's identity changes along history (round 126).

An operator may change the controller's ``identity`` (a restart, the state directory kept).
Its first ``plangate: record policy`` commit under the new identity then names the old one in
a ``Previous-Identity:`` trailer: the identity its own previous record named, which its state
directory's record of the commits it made holds. That record commit is the only thing in git
that ties the two identities together; every reader that follows the controller through
history (``plangate audit``'s timeline, the history index's cold scan) reads the links here,
so the old identity's commits stay the controller's for their stretch of history and the new
identity's are its own from the link on.

The links are read by their place on the first-parent line, newest first, from the identity
the controller has at the head (:func:`followed_back`), as the controller reads its own
history: each stretch of history has the identity in force there, so an identity that comes
back (A, B, A) is followed stretch by stretch (round 127: a list of identities cannot hold one
twice). The identity at the head is the config's once the controller recorded under it;
before (the config just edited, no pass since), the one its last record names by its record
of the commits it made (:func:`recorded_identity`), which its next record links to the
config's.

A link counts when it is a sealed record commit (:func:`recorded.recorded_hash`) made by the
identity its policy names, naming another identity before it, and, with the controller's
record of its commits, one the controller made. By git alone it is read by its shape, as every
controller commit is: a seal can only be checked with the key (``require_signed`` makes the
commits checkable by git alone).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from controller.approval import recorded

if TYPE_CHECKING:
    from controller.git.gitrepo import GitRepo

#: (the identity before, the identity the record commit takes), by record commit.
Links = dict[str, tuple[str, str]]


def identity_links(
    repo: GitRepo, head: str, own_commit: Callable[[str], bool] | None = None
) -> Links:
    """The controller's identity changes on ``head``'s first-parent line, oldest first (one
    ``git rev-list --grep``; a history whose identity never changed has none)."""
    grep = f"--grep={recorded.PREVIOUS_IDENTITY}:"
    shas = repo.run("rev-list", "--first-parent", "--fixed-strings", grep, head).split()
    links: Links = {}
    for sha in reversed(shas):
        record = repo.commit(sha)
        new = record.author.email.lower()
        was = (record.trailers.get(recorded.PREVIOUS_IDENTITY) or "").strip().lower()
        if not was or was == new or (own_commit is not None and not own_commit(sha)):
            continue
        sealed = recorded.recorded_hash(
            record.subject, record.trailers, record.author.email, record.committer.email, new
        )
        if sealed is not None and _names(repo, sha) == new:
            links[sha] = (was, new)
    return links


def _names(repo: GitRepo, sha: str) -> str | None:
    """The identity the policy recorded at ``sha`` names (None: no readable record)."""
    doc = recorded.parse_blob(repo, repo.blob_sha(sha, recorded.POLICY_PATH))
    identity = (doc or {}).get("identity")
    email = identity.get("email") if isinstance(identity, dict) else None
    return email.lower() if isinstance(email, str) else None


def followed_back(links: Links, today: str) -> tuple[str, Links]:
    """The identity the controller had at the start of history and the links that took it to
    ``today`` (its identity at the head), each in its stretch of the first-parent line: the
    links read newest first, each one that takes the identity in force there giving the one
    it changed from to the history before it, as the controller reads its own history
    (:meth:`~controller.service.core.ControllerCore._named_history`). An identity taken back
    (A, B, A; A, B, C, A) is followed stretch by stretch (round 127: a list of identities
    started the walk at B and read A's first stretch as anyone's); any other link is
    someone's claim."""
    identity, kept = today, []
    for sha in reversed(list(links)):
        if links[sha][1] == identity:
            kept.append(sha)
            identity = links[sha][0]
    return identity, {sha: links[sha] for sha in reversed(kept)}


def onward(links: Links, identity: str) -> str:
    """The identity at the head of a controller that had ``identity`` at some point
    (``plangate audit --controller``): the links read oldest first from it on."""
    for was, new in links.values():
        if was == identity:
            identity = new
    return identity


def stretches(start: str, links: Links) -> list[tuple[str | None, str]]:
    """(the commit it starts at, None for the start of history; the identity) of each stretch
    of :func:`followed_back`'s walk, oldest first."""
    return [(None, start)] + [(sha, new) for sha, (_was, new) in links.items()]


def recorded_identity(
    repo: GitRepo, head: str, today: str, own_commit: Callable[[str], bool] | None = None
) -> str:
    """The identity history holds for the controller at ``head`` when its config names
    ``today``: the identity its last record names, by its record of the commits it made
    (``own_commit``): ``today`` once it recorded under it; before (the config changed, no pass
    since), the one its next record names as ``Previous-Identity:``. By git alone, ``today``:
    a seal-shaped record of another identity's may be anyone's (an agent's, made before the
    controller's first pass), and the config names the controller. One ``git rev-list`` of
    the record commits, read newest first up to the controller's last."""
    if own_commit is None:
        return today
    grep = f"--grep={recorded.RECORD_SUBJECT}"
    shas = repo.run("rev-list", "--first-parent", "--fixed-strings", grep, head).split()
    for sha in shas:  # newest first
        named = _record_of(repo, sha) if own_commit(sha) else None
        if named is not None:
            return named
    return today


def _record_of(repo: GitRepo, sha: str) -> str | None:
    """The identity a sealed record commit at ``sha`` was made by and names (None: no such
    record)."""
    record = repo.commit(sha)
    made_by = record.author.email.lower()
    sealed = recorded.recorded_hash(
        record.subject, record.trailers, record.author.email, record.committer.email, made_by
    )
    return made_by if sealed is not None and _names(repo, sha) == made_by else None
