"""Commits as plangate reads them: identities, records, messages and trailers (pure).

:func:`parse_log` reads ``git log -z --raw`` output written with :func:`_log_format`, whose
separators carry a random tag so hostile names, subjects or file names cannot cut or forge a
record; :func:`commit_object` writes a commit object byte for byte as ``git commit-tree``
would (UTF-8, local time zone). No GitPython here: only data in, data out.
"""

from __future__ import annotations

import functools
import os
import re
import secrets
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from controller.display import visible

ZERO = "0" * 40
_RECORD = "\x1e"
_HEADER_END = "\x1d"
_FIELD = "\x1f"
_FIELDS = [
    "%H",
    "%P",
    "%an",
    "%ae",
    "%at",
    "%cn",
    "%ce",
    "%ct",
    "",  # %G? with signatures read (_log_format)
    "",  # %GK
    "%s",
    "%(trailers:only,unfold)",
    "%b",
    "",  # %GG with signatures read: whether the key that signed is a certificate
]
#: Characters git strips from the ends of a name or email ("crud"), or refuses inside one.
_CRUD = frozenset(" .,:;<>\"\\'") | {chr(c) for c in range(33)}
_IDENT_FORBIDDEN = frozenset("<>\n\0")


@dataclass(frozen=True)
class Person:
    name: str
    email: str

    def __str__(self) -> str:
        return f"{self.name} <{self.email}>"


@dataclass(frozen=True)
class FileChange:
    """One file a commit changed relative to its first parent (None: absent on that side)."""

    path: str
    old_blob: str | None
    new_blob: str | None
    #: git's file mode on the new side ("100644", "120000" a symlink, "160000" a gitlink).
    mode: str = ""
    #: What ``mode_of(first parent, path)`` answers, when the reader proved it from the very
    #: trees it read (a cold scan's walk, :func:`controller.git.commits._expand`): the mode,
    #: or "" where the first parent has no file at ``path``; ``"?"``: not known (git log's
    #: records, and every change made from another). Not part of the change's identity.
    old_mode: str = field(default="?", compare=False)
    #: The tree id of the folder holding a file ADDED here, as the cold scan's walk read it
    #: in the new commit (each name on the way the only one so named,
    #: :func:`controller.git.commits._expand`); "" when not known. Not part of its identity.
    folder: str = field(default="", compare=False)


@dataclass
class CommitRecord:
    """A commit as history processing needs it: identities, times, trailers, changed files."""

    sha: str
    parents: tuple[str, ...]
    author: Person
    committer: Person
    author_time: int
    commit_time: int
    subject: str
    trailers: dict[str, str] = field(default_factory=dict)
    changes: list[FileChange] = field(default_factory=list)
    #: The message after the subject (its ``Co-authored-by:`` credits and the subject's make
    #: authors, SPEC §5: :func:`controller.approval.approvals.coauthors`).
    body: str = ""
    #: The fingerprint of the key whose signature on the commit is good (git's ``%GK`` for
    #: ``%G?`` G or U), "" when unsigned or badly signed: whoever holds that key made it.
    signing_key: str = ""
    #: The key that signed is a certified one (ssh-keygen said ``...-CERT key``): the
    #: reader replaces ``signing_key`` with the certificate from the commit's signature
    #: (:func:`controller.approval.signers.certified_key`), which names its holder.
    certified: bool = False
    #: The message was longer than :data:`MAX_MESSAGE` and was cut there: what it says past
    #: the cut (a ``Co-authored-by:`` line) is unknown, so its content has every author.
    oversized: bool = False
    #: A cold scan saw its root tree change nothing outside the plans folder (the walk's
    #: own reading of the root trees); False: not known (git was not asked here).
    outside_quiet: bool = False

    @property
    def is_merge(self) -> bool:
        return len(self.parents) > 1


def parse_trailers(text: str) -> dict[str, str]:
    trailers: dict[str, str] = {}
    for line in text.split("\n"):  # not splitlines(): 0x1c-0x1e and U+2028 are no line ends
        key, sep, value = line.partition(":")
        if sep and key.strip():
            trailers.setdefault(key.strip(), value.strip())
    return trailers


#: The trailer that marks a batched controller commit: one group of trailers per plan, each
#: opened by ``Plan:`` and naming its event (docs/formats.md, "Controller commits").
EVENT_TRAILER = "Plan-Event"
#: On an outcome commit that records a run without writing its plan file (the run's path
#: holds another plan since, round 42): the run's start commit. ``audit`` and scans read it.
RUN_START = "Run-Start"
#: On the ``fail`` that closes a held run whose erased commits came back in a form the
#: controller did not make (a merge's second parent, a person's copies; rounds 111-112):
#: the run's own start commit, which explains the outcome where it is reachable.
CLOSES_START = "Closes-Start"
#: Trailers of a batched commit that belong to every plan in it, not to the group before
#: (``Controller-Seal:``, the last: controller.service.statedir.CommitSeal).
SHARED_TRAILERS = ("Controller", "Controller-Seal")


#: One escape :func:`plan_text` writes: a doubled backslash, or a character's Python escape
#: as :func:`controller.display.visible` writes it (``\t``, ``\x1b``, ``\u0301``, ``\U...``).
_PLAN_ESCAPE = re.compile(r"\\(?:(\\)|([tnr])|x([0-9a-f]{2})|u([0-9a-f]{4})|U([0-9a-f]{8}))")
_CONTROL = {"t": "\t", "n": "\n", "r": "\r"}


def plan_text(plan_id: str) -> str:
    r"""How the controller's commit messages name a plan (the subject ``plangate: <event>
    <plan>``, the ``Plan:`` trailer, each ``Plan:`` group of a batch): the path with each
    backslash doubled, then every character :func:`controller.display.visible` escapes
    written as its escape (round 50, issue 11). Safe to show (no hidden character) and
    injective: ``plans/\u212b`` names the folder U+212B, ``plans/\\u212b`` the folder whose
    name is those six ASCII characters. A path holding no backslash is written as before
    (``visible``'s form), so history written before round 50 reads the same; a path holding
    a backslash was written with it single (``plans/a\b``, now ``plans/a\\b``): see
    :func:`plan_named`. Readers decode with :func:`plan_named`, never compare with a path."""
    return visible(plan_id.replace("\\", "\\\\"))


def plan_named(text: str) -> str:
    r"""The plan path a controller commit's message names (:func:`plan_text` read back).

    Text that :func:`plan_text` cannot have written (a backslash that starts no escape, an
    escape of a character it writes as itself, a hidden character left in) is taken as
    written: what the controller wrote before round 50 for a path holding a backslash
    (``plans/a\b``). The one change for old history: a folder named with a backslash escape
    in its name, written before round 50 as ``visible`` left it (``plans/\u212b``, the same
    text as the folder U+212B's), now reads as the folder the escape stands for."""
    if "\\" not in text:
        return text
    if "\\" in _PLAN_ESCAPE.sub("", text):  # a backslash that starts no escape: old text
        return text
    try:
        path = _PLAN_ESCAPE.sub(_unescaped, text)
    except ValueError:  # \U beyond U+10FFFF
        return text
    return path if plan_text(path) == text else text


def _unescaped(match: re.Match[str]) -> str:
    backslash, control, *codes = match.groups()
    if backslash:
        return "\\"
    if control:
        return _CONTROL[control]
    return chr(int(next(c for c in codes if c), 16))


@dataclass(frozen=True)
class PlanEvent:
    """What a controller commit says about one plan: its event (``start``, ``complete``...),
    the trailers of that plan, the subject a one-plan commit of it would have had, and the
    plan it names (read back with :func:`plan_named`)."""

    verb: str
    trailers: dict[str, str]
    subject: str
    #: The commit records several plans' events (trailer groups).
    batched: bool = False
    #: The plan the subject (or the batch's ``Plan:`` group) names: a path, decoded.
    plan: str = ""


def plan_event(record: CommitRecord, plan_id: str) -> PlanEvent | None:
    """The event a controller commit records for ``plan_id``.

    A one-plan commit (subject ``plangate: <event> <plan>``) gives its event, the plan its
    subject names and the commit's trailers, as before batching. A batched commit (it has a
    ``Plan-Event:`` trailer) gives the ``Plan:`` group of its trailer block that names the
    plan (written with :func:`plan_text`, read back with :func:`plan_named`); None when no
    group, or more than one, names it. Only meaningful for the controller's own commits."""
    if EVENT_TRAILER not in record.trailers:
        verb, plan = subject_event(record.subject)
        return PlanEvent(verb, dict(record.trailers), record.subject, plan=plan)
    found = [(text, items) for plan, text, items in _groups_of(record.body) if plan == plan_id]
    if len(found) != 1:
        return None
    text, items = found[0]
    trailers = dict(items)
    verb = trailers.get(EVENT_TRAILER, "")
    return PlanEvent(verb, trailers, f"plangate: {verb} {text}", batched=True, plan=plan_id)


def subject_event(subject: str) -> tuple[str, str]:
    """(event, plan) a one-plan controller commit's subject ``plangate: <event> <plan>``
    names, the plan read back with :func:`plan_named`; ("", "") for any other subject."""
    words = subject.split(" ", 2)
    if len(words) != 3 or words[0] != "plangate:":
        return "", ""
    return words[1], plan_named(words[2])


#: The statuses each controller event leaves a plan in (see controller.service.reconcile).
EVENT_STATUS: dict[str, frozenset[str]] = {
    "convert": frozenset({"pending_approval", "draft"}),  # a new plan only (audit._unexplained)
    "freeze": frozenset({"pending_approval"}),
    "invalid": frozenset({"invalid"}),
    "refuse": frozenset({"pending_approval", "awaiting_approval", "failed"}),
    "partial": frozenset({"pending_approval"}),
    "start": frozenset({"executing"}),
    "await-approval": frozenset({"awaiting_approval"}),
    "complete": frozenset({"completed"}),
    "fail": frozenset({"failed"}),
    "abort": frozenset({"aborted"}),
    "checkpoint": frozenset({"executing"}),
}
#: Every status some controller event writes (never ``approved`` or ``rejected``: people's).
CONTROLLER_STATUSES: frozenset[str] = frozenset().union(*EVENT_STATUS.values())


def status_unexplained(verb: str, status: str | None) -> str | None:
    """Why a controller commit recording ``verb`` for a plan cannot have left it in
    ``status`` (None: it can): the one rule the audit (``controller-unexplained``) and the
    history index (which then reads the commit as anyone's, round 97) judge a commit under
    the controller's name by. A commit naming no event of the plan can still set no status
    that no controller event sets."""
    allowed = EVENT_STATUS.get(verb)
    if allowed is not None and status not in allowed:
        return f"a {verb} commit cannot set status {status}"
    if allowed is None and status not in CONTROLLER_STATUSES:
        return f"no controller event sets status {status}"
    return None


def record_events(record: CommitRecord) -> dict[str, str]:
    """Plan path -> the controller's event in its commit (``plangate: <event> <plan>``, or
    each ``Plan:`` group's ``Plan-Event:`` in a batch), the paths read back with
    :func:`plan_named`."""
    if f"\n{EVENT_TRAILER}: " in f"\n{record.body}":
        return {
            plan: trailers.get(EVENT_TRAILER, "") for plan, trailers in batch_groups(record.body)
        }
    _, event, plan = [*record.subject.split(" ", 2), "", ""][:3]
    return {plan_named(plan): event}


def batch_groups(body: str) -> list[tuple[str, dict[str, str]]]:
    """The ``Plan:`` groups of a batched commit's trailer block, in order: (plan, trailers),
    the plan read back with :func:`plan_named` (its ``Plan`` trailer as written), the shared
    trailers (``Controller:``...) merged into every group."""
    return [(plan, dict(items)) for plan, _text, items in _groups_of(body)]


def trailer_values(record: CommitRecord, plan_id: str, key: str) -> list[str]:
    """Every value of trailer ``key`` a controller commit gives ``plan_id`` (a one-plan
    commit's trailer block; a batch's ``Plan:`` group naming it), in order: a trailer written
    once per value (``Approved-By:``, one per approver of a quorum, round 117), which
    :attr:`CommitRecord.trailers` and :func:`plan_event` keep the first of."""
    batched = EVENT_TRAILER in record.trailers
    values: list[str] = []
    group: str | None = None
    for line in _trailer_block(record.body).split("\n"):
        name, sep, value = line.partition(":")
        name, value = name.strip(), value.strip()
        if not sep or not name:
            continue
        if name == "Plan":
            group = plan_named(value)
        elif name == key and value and (not batched or group == plan_id):
            values.append(value)
    return values


@functools.lru_cache(maxsize=16)
def _groups_of(body: str) -> tuple[tuple[str, str, tuple[tuple[str, str], ...]], ...]:
    """:func:`batch_groups`, parsed once per message (immutable): each of a batch's plans
    asks for its own group, and parsing them all for each was quadratic in the batch. Each
    group: (the plan's path, its text as written, its trailers)."""
    groups: list[tuple[str, dict[str, str]]] = []
    shared: dict[str, str] = {}
    for line in _trailer_block(body).split("\n"):
        key, sep, value = line.partition(":")
        key, value = key.strip(), value.strip()
        if not sep or not key:
            continue
        if key == "Plan":
            groups.append((value, {"Plan": value}))
        elif key in SHARED_TRAILERS:
            shared.setdefault(key, value)
        elif groups:
            groups[-1][1].setdefault(key, value)
    return tuple(
        (plan_named(text), text, tuple({**trailers, **shared}.items())) for text, trailers in groups
    )


def _trailer_block(body: str) -> str:
    """The last paragraph of a message body (where git and plangate put trailers)."""
    paragraphs = [p for p in body.strip("\n").split("\n\n") if p.strip()]
    return paragraphs[-1] if paragraphs else ""


def _log_format(tag: str, signatures: bool = False) -> str:
    """``git log``'s format: each separator is followed by ``tag``, drawn at random for each
    run (:func:`_new_tag`). Names, subjects, trailers and file names may hold any control
    character, so a bare one could cut a commit in two or forge one; the tag they cannot.

    ``signatures``: also each commit's signature verdict and key (``%G?``, ``%GK``). git then
    runs ssh-keygen for every signed commit (a few ms each), so only where the policy reads
    signatures (``approval.allowed_signers``); unsigned commits cost nothing either way."""
    record, field, end = (f"{sep}{tag}" for sep in (_RECORD, _FIELD, _HEADER_END))
    fields = _FIELDS if not signatures else [*_FIELDS[:8], "%G?", "%GK", *_FIELDS[10:13], "%GG"]
    return f"--format={record}{field.join(fields)}{end}"


def _new_tag() -> str:
    return secrets.token_hex(8)


def _parse_header(header: str, tag: str) -> CommitRecord:
    # git's metadata is bytes: a byte that is not UTF-8 (read with surrogateescape, as paths
    # are) is kept as the text \xNN, so no identity, subject or trailer ever holds a lone
    # surrogate, which no YAML, JSON or file written as UTF-8 could carry (round 25: the
    # controller's record of such an approval made the plan unreadable for good)
    header = _as_text(header)
    sha, parents, an, ae, at, cn, ce, ct, verdict, key, subject, trailers, body, said = (
        header.split(_FIELD + tag, 13)
    )
    oversized = max(len(subject), len(trailers), len(body)) > MAX_MESSAGE
    if oversized:  # round 15: an 8 MB message cost 190 MB to parse, a 39 MB one 530 MB
        subject, trailers, body = subject[:MAX_MESSAGE], trailers[:MAX_MESSAGE], body[:MAX_MESSAGE]
    return CommitRecord(
        sha=sha,
        parents=tuple(parents.split()),
        author=Person(an, ae),
        committer=Person(cn, ce),
        author_time=_time(at),
        commit_time=_time(ct),
        subject=subject,
        trailers=parse_trailers(trailers),
        body=body,
        # G or U: the signature is good for the key it names (who holds that key is the
        # policy's allowed_signers to say, never the commit's)
        signing_key=key.strip() if verdict in ("G", "U") else "",
        oversized=oversized,
        certified=verdict in ("G", "U") and _CERTIFIED.search(said) is not None,
    )


#: What ssh-keygen says of a good signature by a certified key ("with ED25519-CERT key").
_CERTIFIED = re.compile(r" with [A-Z0-9-]+-CERT key SHA256:")


#: The longest subject, trailer block or body of a commit message read (characters): a
#: batched controller commit of BATCH_MAX plans is a few hundred KB; people write less.
MAX_MESSAGE = 1 << 20

#: The latest time a commit may claim: the last second of year 9999 (what a date can show).
LATEST_TIME = 253_402_300_799


def _as_text(text: str) -> str:
    """``text`` with each byte read as a lone surrogate (``surrogateescape``) written as
    ``\\xNN``; the usual text (all UTF-8) is returned as it is."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _time(text: str) -> int:
    """A commit's Unix time as git printed it; 0 when git could not (a commit whose
    ``encoding`` header names a charset like IBM037: git re-encodes its header lines and
    prints every field empty), or when it claims a time before 1970 or after year 9999 (git
    stores any decimal number; round 14: year 3,170,843 and 2^64 + 1 stopped every pass
    where a time became a date). Such a commit is dated 1970, the oldest: it can make nothing
    look younger, and an approval so dated follows no version."""
    try:
        at = int(text)
    except ValueError:
        return 0
    return at if 0 <= at <= LATEST_TIME else 0


def _parse_raw(raw: str) -> list[FileChange]:
    """``-z --raw`` entries: ``:oldmode newmode old new STATUS\\0path\\0``."""
    changes = []
    parts = raw.lstrip("\n\0").split("\0")
    for meta, path in zip(parts[0::2], parts[1::2], strict=False):
        fields = meta.strip().split()
        if len(fields) < 5 or not meta.strip().startswith(":"):
            continue
        old, new = fields[2], fields[3]
        changes.append(
            FileChange(path, None if old == ZERO else old, None if new == ZERO else new, fields[1])
        )
    return changes


def parse_log(output: str, tag: str) -> Iterator[CommitRecord]:
    """The records of ``git log -z --raw`` run with ``_log_format(tag)``."""
    for chunk in output.split(_RECORD + tag):
        record = _parse_chunk(chunk, tag)
        if record is not None:
            yield record


def _parse_chunk(chunk: str, tag: str) -> CommitRecord | None:
    if not chunk.strip("\0\n"):
        return None
    header, _, raw = chunk.partition(_HEADER_END + tag)
    record = _parse_header(header.strip("\0\n"), tag)
    if raw.strip("\0\n"):
        record.changes = _parse_raw(raw)
    return record


def commit_object(
    tree: str,
    parents: Sequence[str],
    message: str,
    author: Person,
    committer: Person,
    now: int | None = None,
) -> bytes:
    """A commit object as ``git commit-tree`` writes it (UTF-8, local time zone), dated
    ``now`` (default: the clock)."""
    stamp = git_date(int(time.time()) if now is None else now)
    lines = [f"tree {tree}", *(f"parent {p}" for p in parents)]
    lines.append(f"author {author.name} <{author.email}> {stamp}")
    lines.append(f"committer {committer.name} <{committer.email}> {stamp}")
    return ("\n".join(lines) + "\n\n" + message).encode("utf-8")


def git_date(now: int) -> str:
    """``now`` as git stores a date: seconds and the local time zone (``1795911606 +0000``)."""
    offset = time.localtime(now).tm_gmtoff // 60
    return f"{now} {'-' if offset < 0 else '+'}{abs(offset) // 60:02d}{abs(offset) % 60:02d}"


def _dated_by_env() -> bool:
    """The environment forces git's dates (``GIT_AUTHOR_DATE``, ``GIT_COMMITTER_DATE``)."""
    return "GIT_AUTHOR_DATE" in os.environ or "GIT_COMMITTER_DATE" in os.environ


def _plain_ident(person: Person) -> bool:
    """True when git would store ``person`` as given (else ``git commit-tree`` cleans it);
    a date forced through the environment also goes through git."""
    if _dated_by_env():
        return False
    for text in (person.name, person.email):
        if not text or text[0] in _CRUD or text[-1] in _CRUD:
            return False
        if any(c in _IDENT_FORBIDDEN for c in text):
            return False
    return True
