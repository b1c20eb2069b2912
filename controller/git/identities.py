"""The controller's identity changes along history (round 126).

An operator may change the controller's ``identity`` (a restart, the state directory kept).
Its first ``plangate: record policy`` commit under the new identity then names the old one in
a ``Previous-Identity:`` trailer: the identity its own previous record named, which its state
directory's record of the commits it made holds. That record commit is the only thing in git
that ties the two identities together; every reader that follows the controller through
history (``plangate audit``'s timeline, the history index's cold scan) reads the links here,
so the old identity's commits stay the controller's for their stretch of history and the new
identity's are its own from the link on.

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


def identity_chain(links: Links, identity: str, *, onward: bool = True) -> list[str]:
    """The controller's identities in the order it had them, ``identity`` among them: the
    links followed back from ``identity`` and (``onward``) on from it. A config's identity
    is today's: nothing follows it (``onward`` False: a link from it is someone's claim)."""
    chain = [identity]
    grown = True
    while grown:
        grown = False
        for was, new in links.values():
            if new == chain[0] and was not in chain:
                chain.insert(0, was)
                grown = True
            elif onward and was == chain[-1] and new not in chain:
                chain.append(new)
                grown = True
    return chain


def in_chain(links: Links, chain: list[str]) -> Links:
    """The links between two identities of ``chain`` (any other is someone's claim)."""
    return {sha: link for sha, link in links.items() if link[0] in chain and link[1] in chain}
