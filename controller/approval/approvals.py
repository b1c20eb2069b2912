"""The approval rules (SPEC §5) and the human side of the lifecycle (SPEC §4), as pure data.

Nothing here reads git or files: :mod:`controller.git.history` gathers the facts about an
approval request into an :class:`ApprovalRequest`, and :func:`verify_approval` returns a
:class:`Decision`. The same functions serve the live controller and ``plangate audit``, so
the two can never disagree about what a valid approval is.
"""

from __future__ import annotations

import fnmatch
import functools
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum

from controller.display import HIDDEN
from controller.settings import ApprovalSettings, IdentityAliases

#: Status changes a commit not authored by the controller may make (SPEC §4).
#: ``None`` is "the plan did not exist on the branch before this commit". ``draft`` ->
#: ``rejected`` extends SPEC §4: a withdrawal by someone entitled counts whatever its form,
#: and a plan whose first version says ``rejected`` is rejected, so a draft an approver or
#: its author rejects is rejected too and its version vetoed like any other withdrawal's
#: (round 119, draft-rejection-ignored: it was illegal and ignored, and the agent submitted
#: that very version and Bob's approval ran it).
HUMAN_TRANSITIONS: dict[str | None, frozenset[str]] = {
    None: frozenset({"draft", "pending_approval", "approved"}),
    "draft": frozenset({"pending_approval", "rejected"}),
    "pending_approval": frozenset({"draft", "approved", "rejected"}),
    "invalid": frozenset({"draft", "pending_approval"}),
    "awaiting_approval": frozenset({"approved", "aborted", "rejected"}),
    "failed": frozenset({"approved", "aborted", "rejected"}),
    "executing": frozenset({"aborted", "rejected"}),
}

#: Statuses of a plan that has started. Withdrawing it (``aborted``, or ``rejected`` by
#: another word) stops it: the controller records ``aborted`` and nothing more runs; a
#: ``failed`` plan withdrawn so is never resumed.
STARTED = frozenset({"executing", "awaiting_approval", "failed"})

#: Statuses only the controller writes: a human commit setting them is always illegal.
CONTROLLER_ONLY = frozenset(
    {"invalid", "executing", "awaiting_approval", "completed", "failed", "aborted"}
)


class Transition(Enum):
    NONE = "none"  # the status did not change
    LEGAL = "legal"  # e.g. draft -> pending_approval, draft/pending_approval -> rejected
    APPROVE = "approve"  # pending_approval (or a new plan) -> approved
    GATE = "gate"  # awaiting_approval -> approved: approve the paused action
    RESUME = "resume"  # failed -> approved: resume at the first unfinished action
    ABORT = "abort"  # a started (or approved) plan -> aborted/rejected: it ends aborted
    ILLEGAL = "illegal"


def classify(old: str | None, new: str | None) -> Transition:
    """What a human commit that moved a plan from ``old`` to ``new`` asks for."""
    if old == new or new is None:
        return Transition.NONE
    if new not in HUMAN_TRANSITIONS.get(old, frozenset()):
        return Transition.ILLEGAL
    if new == "approved":
        return {"awaiting_approval": Transition.GATE, "failed": Transition.RESUME}.get(
            old or "", Transition.APPROVE
        )
    if new == "aborted" or (new == "rejected" and old in STARTED):
        return Transition.ABORT
    return Transition.LEGAL


#: Where an approval was made, by its kind: where it returns when it lapses.
APPROVED_FROM = {
    Transition.APPROVE: "pending_approval",
    Transition.GATE: "awaiting_approval",
    Transition.RESUME: "failed",
}


def classify_open(kind: Transition, new: str | None) -> tuple[str, Transition]:
    """A human commit moves a plan away from ``approved`` before the controller acted on
    that approval (of ``kind``): the approval lapses (the controller only acts on a plan
    that still says ``approved``), and the change is judged from where the approval was
    made, which is returned with it. Aborting an approved plan counts even before it
    started: an approval nobody acted on yet is withdrawn like a run (SPEC §4)."""
    origin = APPROVED_FROM.get(kind, "pending_approval")
    if new == "aborted":
        return origin, Transition.ABORT
    return origin, classify(origin, new)


#: Characters git strips from the ends of a name or email (its "crud").
_CRUD = " .,:;<>\"\\'" + "".join(chr(c) for c in range(33))
#: The key of a co-author credit in any spelling: any case, a hyphen, another dash, a blank
#: or nothing between its words, blanks before its colon (read in :func:`credit_keys`'s
#: folded text: NFKC, invisible characters dropped, so fullwidth letters and a NBSP count).
_CREDIT_KEY = re.compile(
    r"co[\s\-\u2010-\u2015\u2212]?authored[\s\-\u2010-\u2015\u2212]?by\s*:", re.IGNORECASE
)
#: Anything but printable ASCII and the tab: a line needing the folded reading.
_NOT_PLAIN_LINE = re.compile(r"[^\x20-\x7e\t]")
_BRACKETED = re.compile(r"<([^<>]*)>")


@functools.lru_cache(maxsize=1 << 12)  # pure; a scan asks it of every commit's author
def normalize_identity(email: str) -> str:
    """One spelling per mailbox: Unicode NFKC and case-folded (``ＡＬＩＣＥ`` is ``alice``;
    José in NFD is José in NFC), git's stripping of surrounding punctuation
    (``<alice@example.com>``, ``alice@example.com.``), and RFC 5322's spellings of one
    addr-spec reduced to it: comments, folding white space, quotes and quoted pairs are no
    part of the mailbox (``alice(work)@example.com``, ``"alice"@example.com`` and
    ``al\\ice@example.com`` are ``alice@example.com``), a source route dropped
    (``@relay.example:alice@example.com``), and the domain's IDNA spellings made one
    (:func:`_domain_spelled_once`). Reducing more spellings to one
    person is the safe direction everywhere: one person's approvals count once and never as
    someone else's, and an author is recognised under any spelling of her mailbox. What
    still is no plain address afterwards (a quoted local part with a blank in it) is refused
    by :func:`is_address`. Invisible characters (controls, format and every other
    default-ignorable character: ``bo\\u034fb`` is ``bob``) are dropped first."""
    text = HIDDEN.sub("", unicodedata.normalize("NFKC", email))  # invisible: no part of it
    if _SPECIAL.search(text):
        text = _addr_spec(text)
    text = _ROUTE.sub("", text.strip(_CRUD))
    return _domain_spelled_once(unicodedata.normalize("NFKC", text.casefold()))


#: RFC 5322's obsolete source route before an address (``@relay.example:alice@example.com``).
_ROUTE = re.compile(r"^@[^:@]*(?:,@[^:@]*)*:")
#: The dots IDNA (UTS 46) maps to a full stop that NFKC keeps (U+FF61 becomes U+3002).
_IDEOGRAPHIC_DOTS = str.maketrans({"\u3002": ".", "\uff0e": ".", "\uff61": "."})


def _domain_spelled_once(address: str) -> str:
    """The domain of an address in one spelling: IDNA's dots as ``.`` and each ``xn--``
    label (an A-label) as the Unicode it encodes (U-label), so ``dora@xn--bcher-kva.example``
    and ``dora@bücher.example``, or ``alice@example。com`` and ``alice@example.com``, are
    one mailbox (round 18). A label that is no valid punycode stays as written. What a label
    decodes to is reduced as the address was (NFKC, case, invisible characters, IDNA's dots,
    labels within) until nothing changes: one spelling however often it is applied (round 31:
    a signing key listed as ``alice@xn--example-6z6c.com``, ``example`` + U+200B, was no key
    of Alice's, while her commits under that spelling, reduced twice on their way, were)."""
    local, at, domain = address.rpartition("@")
    if not at:
        return address
    for _ in range(8):  # each round decodes labels into shorter ones: few can change it
        before = domain
        domain = domain.translate(_IDEOGRAPHIC_DOTS)
        if "xn--" not in domain:
            break
        domain = ".".join(_u_label(label) for label in domain.split("."))
        domain = HIDDEN.sub("", unicodedata.normalize("NFKC", domain.casefold()))
        if domain == before:
            break
    return f"{local}@{domain}"


def _u_label(label: str) -> str:
    if not label.startswith("xn--"):
        return label
    try:
        decoded = label[4:].encode("ascii").decode("punycode")
    except (UnicodeError, ValueError):
        return label
    return unicodedata.normalize("NFKC", decoded.casefold())


#: What only RFC 5322's other spellings of an address contain: comments, quotes, quoted
#: pairs, folding white space.
_SPECIAL = re.compile(r'[()"\\\s]')
#: Characters no plain mailbox has (RFC 5322 specials other than ``@`` and ``.``, blanks).
_NOT_PLAIN = re.compile(r'[\s\x00-\x1f\x7f()<>\[\]:;,\\"]')


def _addr_spec(text: str) -> str:
    """``text`` with its comments (nested, with quoted pairs) and unquoted white space
    removed, quoted strings replaced by their content and quoted pairs by the character
    they quote: the mailbox it names. An unclosed comment or quote runs to the end."""
    out: list[str] = []
    depth, quoted, i = 0, False, 0
    while i < len(text):
        char = text[i]
        if char == "\\" and i + 1 < len(text):
            if not depth:
                out.append(text[i + 1])
            i += 2
            continue
        if depth:
            depth += {"(": 1, ")": -1}.get(char, 0)
        elif quoted:
            quoted = char != '"'
            if quoted:
                out.append(char)
        elif char == '"':
            quoted = True
        elif char == "(":
            depth = 1
        elif not char.isspace():
            out.append(char)
        i += 1
    return "".join(out)


def is_address(email: str) -> bool:
    """A plain mailbox: exactly one ``@`` with a non-empty local part and domain, and no
    blank, RFC 5322 special or invisible character (see :func:`normalize_identity`); anything
    else never approves or withdraws (``*@ops.example.com`` would match
    ``x@evil.org@ops.example.com``, since ``*`` matches ``@`` too; ``bob`` with a zero-width
    space in it looks like ``bob``)."""
    local, at, domain = email.partition("@")
    if not (at and local and domain and "@" not in domain) or _NOT_PLAIN.search(email):
        return False
    if HIDDEN.search(email):  # an address not normalised: invisible characters
        return False
    return all(char.isascii() or unicodedata.category(char)[0] not in "CZ" for char in email)


def canonical(email: str, aliases: IdentityAliases | None = None) -> str:
    """The person behind an address: normalised, then ``approval.identity_aliases``
    applied (``+tag`` addressing for the listed domains, declared equivalences)."""
    address = normalize_identity(email)
    if aliases is None:
        return address
    address = _untagged(address, aliases)
    for people in aliases.people:
        names = [normalize_identity(p) for p in people]
        if address in names:
            return names[0]
    return address


def _untagged(address: str, aliases: IdentityAliases) -> str:
    """``local@domain`` for a normalised ``local+tag@domain`` that ``plus_tags`` covers."""
    local, at, domain = address.partition("@")
    if at and "+" in local:
        untagged = f"{local.split('+', 1)[0]}@{domain}"
        if any(fnmatch.fnmatchcase(untagged, normalize_identity(p)) for p in aliases.plus_tags):
            return untagged
    return address


def credit_keys(line: str) -> list[tuple[int, int]]:
    """Where ``line`` holds the key of a ``Co-authored-by:`` credit, as (start, end) spans of
    ``line`` (end: just past its colon). The key counts anywhere (round 128: only at a line's
    start, after blanks, it credited anyone; in a subject, after ``> `` or ``- ``, after other
    words, after a no-break or zero-width space it named nobody), in any case and spelling
    (:data:`_CREDIT_KEY`), read after NFKC with invisible characters dropped: the one reader
    of the key, which :func:`coauthors` reads credits with and
    :func:`controller.git.message.one_line` defuses quoted text with."""
    if not _NOT_PLAIN_LINE.search(line):
        return [(m.start(), m.end()) for m in _CREDIT_KEY.finditer(line)]
    if not _CREDIT_KEY.search(HIDDEN.sub("", unicodedata.normalize("NFKC", line))):
        return []  # the usual line: no key however folded (character by character below)
    folded: list[str] = []
    where: list[int] = []
    for at, char in enumerate(line):
        for piece in HIDDEN.sub("", unicodedata.normalize("NFKC", char)):
            folded.append(piece)
            where.append(at)
    text = "".join(folded)
    return [(where[m.start()], where[m.end() - 1] + 1) for m in _CREDIT_KEY.finditer(text)]


def coauthors(message: str) -> list[str]:
    """Emails of every ``Co-authored-by:`` credit of a commit message (its subject and
    body), in any spelling of the key and anywhere in the message (:func:`credit_keys`): not
    only git's trailer block or a line's start (a reviewer may credit a co-author that git
    would not parse as a trailer, quoted, in a list, in the subject, after other words;
    counting more authors is safe). The value is the rest of the line after the key, with
    the continuation lines git unfolds."""
    found: list[str] = []
    lines = message.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    for index, line in enumerate(lines):
        keys = credit_keys(line)
        if not keys:
            continue
        value = line[keys[0][1] :]  # the later keys' values are in it: all its addresses
        # git unfolds a trailer's continuation lines (round 20: `Bob` then ` <bob@...>`)
        for more in lines[index + 1 :]:
            if not more[:1].isspace() or not more.strip():
                break
            value += " " + more.strip()
        for address in _addresses(value.strip()):
            if address not in found:
                found.append(address)
    return found


def message_of(subject: str, body: str) -> str:
    """A commit's whole message from git's ``%s`` (its first paragraph as one line) and
    ``%b`` (the rest): what :func:`coauthors` reads."""
    return f"{subject}\n\n{body}" if body else subject


#: A word with an ``@`` in it, anywhere in a co-author value.
_ADDRESS_WORD = re.compile(r"[^\s<>,;\"'()]+@[^\s<>,;\"'()]+")


def _addresses(value: str) -> list[str]:
    """Every address a co-author value names: what each ``<...>`` holds and every word with
    an ``@``, ``mailto:`` dropped; the whole value when it names none. A value naming
    several people (``Carl <c@x>, Bob <b@y>``) or spelling one oddly (``<Bob> b@y``,
    ``"Bob <x>" <b@y>``) credits each of them: counting more authors is safe (round 20)."""
    named = [*_BRACKETED.findall(value), *_ADDRESS_WORD.findall(value)] or [value]
    out = []
    for address in named:
        address = address.strip()
        if address.lower().startswith("mailto:"):
            address = address[len("mailto:") :]
        if address:
            out.append(normalize_identity(address))
    return out


def approver_allowed(
    email: str, patterns: Iterable[str], aliases: IdentityAliases | None = None
) -> bool:
    """Glob patterns on the normalised email; an empty list allows nobody. An address that
    is not exactly ``local@domain`` is never allowed (see :func:`is_address`). The list
    holds the person behind ``email`` when a pattern matches any address they are known by
    (:func:`spellings`), or a listed address (no wildcard) is one of theirs: the
    one membership test of ``approvers`` and of every group, for the controller, ``status``,
    ``check`` and the audit alike."""
    address = normalize_identity(email)
    if not is_address(address):
        return False
    me, known = canonical(address, aliases), spellings(address, aliases)
    for pattern in patterns:
        if _GLOB.search(pattern):  # a glob is matched as written: `*+ci@x` is no `*@x`
            if any(fnmatch.fnmatchcase(c, normalize_identity(pattern)) for c in known):
                return True
        elif canonical(pattern, aliases) == me or normalize_identity(pattern) in known:
            return True
    return False


#: What makes an approver pattern a glob (fnmatch's wildcards).
_GLOB = re.compile(r"[*?\[]")


def spellings(email: str, aliases: IdentityAliases | None = None) -> frozenset[str]:
    """Every address the person behind ``email`` is known by: the address normalised, its
    ``+tag``-free form where ``plus_tags`` covers it, the person's canonical address and
    every address of each ``identity_aliases.people`` entry naming any of those. A list of
    approver patterns (``approval.approvers``, a group) holds the person when it holds any
    of them (round 129's ``alsecC``: ``a.smith@corp.example``, listed in ``sec``, is Alice's
    alias; Alice under either address is in ``sec``)."""
    address = normalize_identity(email)
    if aliases is None:
        return frozenset({address})
    known = {address, _untagged(address, aliases), canonical(address, aliases)}
    for people in aliases.people:
        names = {normalize_identity(p) for p in people}
        if names & known:
            known |= names
    return frozenset(known)


def may_withdraw(email: str, authors: Iterable[str], policy: ApprovalSettings) -> bool:
    """May this identity reject or abort the plan (SPEC §4)? Only an allowed approver or an
    author of the plan (who may withdraw it)."""
    if approver_allowed(email, policy.approvers, policy.identity_aliases):
        return True
    who = canonical(email, policy.identity_aliases)
    return is_address(who) and who in {canonical(a, policy.identity_aliases) for a in authors}


@dataclass(frozen=True)
class ApprovalRequest:
    """The facts about one approving commit that §5 needs, gathered from history."""

    plan_id: str
    commit: str
    kind: Transition
    author_email: str
    committer_email: str
    commit_time: int
    #: Codes of the plan's validation problems at the approving commit (empty: valid).
    problems: tuple[str, ...]
    current_hash: str | None
    frozen_hash: str | None
    #: The approving commit itself changed the hashed content (or an evil merge did).
    changed_in_commit: bool
    #: Identities (emails) of every commit that changed the plan's hashed content.
    changers: frozenset[str]
    #: When frozen.hash took its current value (commit time), for max_age.
    frozen_since: int | None = None
    #: For a gate approval or a resume: the hash the earlier approval was for.
    approved_hash: str | None = None
    signature_valid: bool | None = None
    signer: str | None = None
    signature_message: str = ""
    #: The fingerprint of the key that made the good signature (SHA256:...), if known.
    signer_key: str = ""
    #: Set when a later commit voided the request before the controller acted.
    voided_by: str | None = None
    #: The verifier's own clock (the live controller: now; the audit: the start commit's
    #: time). ``max_age`` counts up to the later of this and the approving commit's time,
    #: because commit times come from the approver's clock and can be backdated.
    verified_at: int | None = None
    #: When the approving commit was authored (git keeps it through cherry-pick, am, rebase).
    author_time: int | None = None
    #: The earliest time the approved version can have existed, from what the controller
    #: trusts: the controller's own commits before it (its clock) and the content commit.
    version_since: int | None = None
    #: The approving commit is a merge (its version is bound by its second parent).
    merge: bool = False
    #: An earlier approval on the branch with this one's identity (author, time, subject).
    replay_of: str | None = None
    #: The hash a ``Plan-Approved: <plan> <hash>`` trailer of the commit names for this plan.
    bound_hash: str | None = None
    #: The plan the commit's trailers name when they do not name this one.
    bound_elsewhere: str | None = None
    #: The withdrawals of this version, or of a version it pins, made before it was
    #: verified ("<plan> was rejected by <who> in <commit>"): a veto no new name lifts.
    withdrawn: tuple[str, ...] = ()
    #: A merge brought the status from a branch that held this version with it over another
    #: pause of the started run (an earlier gate or failure): not an answer to this one.
    other_pause: bool = False
    #: The approving commit set the status while the plan was held ``E_PLAN_AMBIGUOUS`` (a
    #: twin of its folder or file stood): it approves nothing, once the hold ends too.
    held: bool = False


@dataclass(frozen=True)
class Decision:
    valid: bool
    approver: str
    code: str | None = None
    message: str = ""
    signer: str | None = None

    def record(self, request: ApprovalRequest, at: str) -> dict[str, object]:
        """The ``approval:`` block the controller writes (SPEC §5)."""
        if self.valid:
            block: dict[str, object] = {
                "status": "approved",
                "by": self.approver,
                "at": at,
                "commit": request.commit,
                "plan_hash": request.current_hash,
                "signature": self.signer,
            }
            if request.kind is Transition.GATE:
                block["gate"] = True
            if request.kind is Transition.RESUME:
                block["resume"] = True
            return block
        return {
            "status": "refused",
            "code": self.code,
            "message": self.message,
            "by": self.approver,
            "commit": request.commit,
        }


def approver_of(request: ApprovalRequest, policy: ApprovalSettings) -> str:
    return request.committer_email if policy.identity == "committer" else request.author_email


def verify_approval(request: ApprovalRequest, policy: ApprovalSettings) -> Decision:
    """Apply every rule of §5 in order; the first failure is the refusal."""
    approver = approver_of(request, policy)
    for check in (
        _check_held,
        _check_void,
        _check_frozen,
        _check_withdrawn,
        _check_replay,
        _check_approver,
        _check_self,
        _check_signed,
        _check_age,
    ):
        refusal = check(request, policy, approver)
        if refusal is not None:
            code, message = refusal
            return Decision(False, approver, code, message, request.signer)
    return Decision(True, approver, signer=request.signer if request.signature_valid else None)


Refusal = tuple[str, str] | None


def _check_held(request: ApprovalRequest, policy: ApprovalSettings, approver: str) -> Refusal:
    """A decision made while the plan was held ``E_PLAN_AMBIGUOUS`` approves nothing: what
    its approver saw may have been the twin's file (round 83; rounds 74 and 80 for a first
    approval). The hold's release puts the plan back where the hold found it, a paused run
    at its pause, and this refusal sends it back there: a new approval answers it."""
    if request.held:
        return (
            "E_PLAN_AMBIGUOUS",
            f"{request.commit[:12]} set the status while the plan was held E_PLAN_AMBIGUOUS "
            "(a twin of its folder or file stood, so neither was read): it approves nothing; "
            "approve again now that the plan is no longer held",
        )
    return None


def _check_void(request: ApprovalRequest, policy: ApprovalSettings, approver: str) -> Refusal:
    if request.voided_by:
        return (
            "E_PLAN_HASH_MISMATCH",
            f"the plan's content changed in {request.voided_by[:12]} after it was approved",
        )
    return None


def _check_withdrawn(request: ApprovalRequest, policy: ApprovalSettings, approver: str) -> Refusal:
    if request.withdrawn and request.kind is Transition.APPROVE:
        return (
            "E_VERSION_WITHDRAWN",
            f"this exact version was withdrawn before it ran: {'; '.join(request.withdrawn)}; "
            "a copy, a re-add or a pin of it is not approved again (change the plan to submit "
            "a new version)",
        )
    return None


def _check_frozen(request: ApprovalRequest, policy: ApprovalSettings, approver: str) -> Refusal:
    if request.problems:
        return (
            "E_PLAN_NOT_FROZEN",
            f"the plan does not validate ({', '.join(sorted(set(request.problems)))})",
        )
    if request.frozen_hash is None:
        return ("E_PLAN_NOT_FROZEN", "the plan has no frozen.hash; it was never frozen")
    if request.current_hash != request.frozen_hash:
        return (
            "E_PLAN_HASH_MISMATCH",
            f"the plan hashes to {request.current_hash} but frozen.hash is "
            f"{request.frozen_hash}: it changed after it was frozen",
        )
    if request.changed_in_commit:
        if request.merge:
            return (
                "E_PLAN_HASH_MISMATCH",
                f"the merge {request.commit[:12]} approves content its merged branch did not "
                "hold with that status (an evil merge, or a pull request behind the branch "
                "approving a newer version it never showed): approve the current version",
            )
        return (
            "E_PLAN_HASH_MISMATCH",
            f"the approving commit {request.commit[:12]} also changed the plan's content",
        )
    if request.approved_hash is not None and request.approved_hash != request.current_hash:
        return (
            "E_PLAN_HASH_MISMATCH",
            "the plan changed since it was first approved; a gate or resume approval "
            "needs the same hash",
        )
    return None


def _check_replay(request: ApprovalRequest, policy: ApprovalSettings, approver: str) -> Refusal:
    """An approval approves the version it was made for (SPEC §5): a commit brought back by
    git (cherry-pick, am, rebase, a revert of a revert) keeps its author date, which then
    precedes the version it would approve. A continuation (a gate, an ask, a resume) is made
    for one pause of the run: a merge that brought it from a branch holding another pause
    (round 47) is that approval carried to a pause it was not made for."""
    if request.other_pause:
        return (
            "E_APPROVAL_REPLAYED",
            f"the merge {request.commit[:12]} brings a status its merged branch held over "
            "another pause of this run (an earlier gate or failure, already answered): "
            "approve the pause the plan is at",
        )
    if request.bound_hash is not None and request.bound_hash != request.current_hash:
        return (
            "E_APPROVAL_REPLAYED",
            f"{request.commit[:12]} approves {request.bound_hash} (its Plan-Approved trailer), "
            f"not this version {request.current_hash}",
        )
    if request.bound_elsewhere is not None:
        return (
            "E_APPROVAL_REPLAYED",
            f"{request.commit[:12]} names {request.bound_elsewhere} as what it approves (its "
            "Plan:/Plan-Approved: trailers), not this plan",
        )
    if request.replay_of is not None:
        return (
            "E_APPROVAL_REPLAYED",
            f"{request.commit[:12]} repeats the approval {request.replay_of[:12]} (a copy of "
            "it: its author, time and subject brought back for another version or pause, or "
            "moved onto another plan by another hand than the one that put it on the branch; "
            "or the same decision of the same person on this version, dated not after it was "
            "taken back, committed by another hand): an approval counts once, in the commit "
            "that made it. To approve, approve again in a new commit: one dated after this "
            "refusal counts, whoever commits it (the forge's web editor too), and one you "
            "commit yourself counts at once",
        )
    # a merge too (round 18: ``merge -C`` or ``rebase -r`` rebuilds an approver's old merge
    # with her author and date over an agent's branch): a merge is written after its parents
    if request.author_time is None or request.version_since is None:
        return None
    if request.author_time < request.version_since:
        return (
            "E_APPROVAL_REPLAYED",
            f"{request.commit[:12]} was written before this version of the plan existed "
            "(a cherry-picked, rebased or re-applied approval of an earlier version)",
        )
    if request.author_time == request.version_since and not _own_hand(request, policy):
        # git dates are whole seconds: an approval authored in the second this version (or
        # this pause) came to be cannot be ordered after it by its date. Committed by its
        # author, it is her decision on what she saw; put on the branch by another hand (a
        # cherry-pick, am or rebase keeps her author date), it may be her decision on the
        # version before (round 104: replayed in the second of the freeze, pause or
        # failure). A trailer proves nothing here: whoever writes the commit writes its
        # message (round 106)
        return (
            "E_APPROVAL_REPLAYED",
            f"{request.commit[:12]} was written in the same second this version of the plan "
            "(or this pause of its run) came to be, and committed by another hand than its "
            "author's: git's dates cannot tell it was made for this version, not the one "
            "before (a cherry-picked or re-applied approval). Approve again in a new commit",
        )
    return None


def _own_hand(request: ApprovalRequest, policy: ApprovalSettings) -> bool:
    """The approving commit was committed by the approver herself (``git commit``,
    ``plangate approve``), not applied by someone else (cherry-pick, am, rebase, a forge's
    merge). Under ``identity: committer`` the committer IS the approver: always hers."""
    if policy.identity == "committer":
        return True
    return normalize_identity(request.author_email) == normalize_identity(request.committer_email)


def _check_approver(request: ApprovalRequest, policy: ApprovalSettings, approver: str) -> Refusal:
    if not approver_allowed(approver, policy.approvers, policy.identity_aliases):
        allowed = ", ".join(policy.approvers) or "nobody (approval.approvers is empty)"
        return (
            "E_APPROVER_NOT_ALLOWED",
            f"{approver} ({policy.identity} of {request.commit[:12]}) is not an approver; "
            f"allowed: {allowed}",
        )
    return None


def _check_self(request: ApprovalRequest, policy: ApprovalSettings, approver: str) -> Refusal:
    if policy.allow_self_approval:
        return None
    aliases = policy.identity_aliases
    if canonical(approver, aliases) in {canonical(c, aliases) for c in request.changers}:
        return (
            "E_SELF_APPROVAL",
            f"{approver} wrote or changed this plan's content and cannot approve it",
        )
    if EVERYONE in request.changers:
        return (
            "E_SELF_APPROVAL",
            "a commit that wrote this content has a message over 1 MiB, whose co-authors "
            "cannot all be read: nobody may approve this version (write it again in a commit "
            "with a shorter message)",
        )
    if UNFOLLOWED in request.changers:
        return (
            "E_SELF_APPROVAL",
            "this plan was made from text whose history goes back further than the index "
            f"follows it ({FOLLOWED_BOUND}): anyone may have written it, so nobody may approve "
            "this version (write the plan anew in one commit, not carried through that "
            "chain of copies, moves and edits)",
        )
    signed = sorted(
        key
        for key in (c[len(KEY_PREFIX) :] for c in request.changers if c.startswith(KEY_PREFIX))
        if holds(approver, key, policy, None) or _same_key(key, request)
    )
    if signed:
        from controller.approval.signers import describe_key

        return (
            "E_SELF_APPROVAL",
            f"{approver}'s key {describe_key(signed[0])} signed a commit that wrote or changed "
            "this plan's content (whatever name it carried): its signer cannot approve it",
        )
    return None


def _same_key(key: str, request: ApprovalRequest) -> bool:
    """Whether ``key`` is the key that signed the approval itself (a certified key that
    signed content without its certificate is still the approver's)."""
    if not request.signature_valid or not request.signer_key or not key:
        return False
    from controller.approval.signers import key_fingerprint

    mine = key_fingerprint(request.signer_key)
    return bool(mine) and key_fingerprint(key) == mine


def signed_by(who: str, signing_key: str, policy: ApprovalSettings, at: float) -> bool:
    """Whether a commit whose good signature is by ``signing_key`` was signed by ``who``
    with a key allowed_signers lets sign git commits at ``at`` (the verifier's clock)."""
    return holds(who, signing_key, policy, at)


def holds(who: str, signing_key: str, policy: ApprovalSettings, at: float | None) -> bool:
    """Whether ``who`` (by alias too) holds the signing key ``signing_key`` (a fingerprint,
    or ``cert:<certificate>`` for a key a CA certified) by ``policy.allowed_signers``
    (:func:`signers.key_holders`, the one place that maps keys to people). ``at``: the key
    must sign git commits then (the verifier's clock); None: who wrote content (every key
    that names her, retired or not)."""
    if policy.allowed_signers is None or not signing_key:
        return False
    from controller.approval.signers import key_holders

    aliases = policy.identity_aliases
    me = canonical(who, aliases)
    for principal, pattern in key_holders(policy.allowed_signers, signing_key, at):
        if pattern:
            if fnmatch.fnmatchcase(me, canonical(principal, aliases)) or fnmatch.fnmatchcase(
                who, principal
            ):
                return True
        elif canonical(principal, aliases) == me:
            return True
    return False


#: Among a content's writers: a commit whose co-authors could not all be read (its message
#: was cut at records.MAX_MESSAGE), so anyone may have written it.
EVERYONE = "*"
#: Among a content's writers: it was made from text followed back past the index's bound
#: (controller.git.lifecycle.FOLLOW_HOPS), whose first writers are unknown: the approval
#: fails safe, as for EVERYONE (round 54).
UNFOLLOWED = "*unfollowed"
#: The bound named in the refusal (kept in step with controller.git.lifecycle).
FOLLOWED_BOUND = "16 copies, moves or rewrites, or 256 edits of one path"

#: How the history index names a commit's signing key among its makers' identities.
KEY_PREFIX = "key:"


def usable_keys(who: str, policy: ApprovalSettings, at: float) -> frozenset[str]:
    """The fingerprints of the keys allowed_signers lets ``who`` sign git commits with at
    ``at`` (``plangate check`` predicts the merge's signature from them)."""
    return _keys_of(who, policy, at)


def _keys_of(who: str, policy: ApprovalSettings, at: float | None = None) -> frozenset[str]:
    """The fingerprints of the keys ``policy.allowed_signers`` lists for ``who`` (by alias
    too; certificates are judged one by one by :func:`holds`). ``at``: only the keys that
    may sign git commits then (None: every key, as for who wrote content: a retired key
    still names its holder)."""
    if policy.allowed_signers is None:
        return frozenset()
    from controller.approval.signers import signer_keys

    aliases = policy.identity_aliases
    me = canonical(who, aliases)
    return frozenset(
        entry.fingerprint
        for entry in signer_keys(policy.allowed_signers)
        if not entry.cert_authority
        and (at is None or entry.usable(at))
        and any(
            fnmatch.fnmatchcase(me, canonical(p, aliases)) or fnmatch.fnmatchcase(who, p)
            for p in entry.principals
        )
    )


def _check_signed(request: ApprovalRequest, policy: ApprovalSettings, approver: str) -> Refusal:
    if not policy.require_signed:
        return None
    if not request.signature_valid or not request.signer:
        return (
            "E_SIGNATURE_INVALID",
            f"git verify-commit refused {request.commit[:12]}: "
            f"{request.signature_message or 'no valid signature'}",
        )
    if not approver_allowed(request.signer, policy.approvers, policy.identity_aliases):
        return ("E_SIGNATURE_INVALID", f"signed by {request.signer}, who is not an approver")
    aliases = policy.identity_aliases
    if canonical(request.signer, aliases) != canonical(approver, aliases):
        return (
            "E_SIGNATURE_INVALID",
            f"signed by {request.signer} but the approver identity is {approver}",
        )
    # git judged the key's valid-after/valid-before at the commit's own date, which its
    # signer sets (round 16): the key must be usable at the verifier's clock too
    at = request.verified_at or request.commit_time
    if policy.allowed_signers is not None and not holds(
        request.signer, request.signer_key, policy, at
    ):
        from controller.approval.signers import CERT_PREFIX, describe_key

        certified = request.signer_key.startswith(CERT_PREFIX)
        return (
            "E_SIGNATURE_INVALID",
            f"{request.commit[:12]} is signed with "
            f"{describe_key(request.signer_key) or 'an unnamed key'}, which allowed_signers "
            f"does not let {request.signer} sign git commits with now (valid-after/"
            "valid-before are judged at the verifier's clock, not the commit's date"
            + (
                "; a certificate counts only as a user certificate valid now, with no "
                "critical option, for a principal its cert-authority line allows)"
                if certified
                else ")"
            ),
        )
    return None


def _span(seconds: float) -> str:
    """A duration as a person reads it: ``5 s``, ``12 min``, ``3.0 h`` (a max_age of
    seconds read "0.0 h" in the refusal)."""
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def _check_age(request: ApprovalRequest, policy: ApprovalSettings, approver: str) -> Refusal:
    if policy.max_age is None or request.frozen_since is None:
        return None
    if request.frozen_since == 0:
        return (
            "E_PLAN_EXPIRED",
            "frozen.hash was committed with a time after the controller's clock: its age "
            "cannot be known; let the controller freeze the plan (submit it unfrozen)",
        )
    verified = max(request.commit_time, request.verified_at or 0)
    # A freeze time after the verification is a clock that lies: never younger than "now".
    age = verified - min(request.frozen_since, verified)
    if age > policy.max_age:
        return (
            "E_PLAN_EXPIRED",
            f"the plan was frozen {_span(age)} before its approval was verified; "
            f"approval.max_age is {_span(policy.max_age)}",
        )
    return None
