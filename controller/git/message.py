"""Commit messages the controller writes: untrusted text can never form a trailer line.

A controller commit's trailers (``Plan:``, ``Plan-Hash:``, ``Plan-Status:``,
``Approved-By:``, ...) are what history, the audit and people read to learn what happened. The
text put into a message comes partly from others: the plan's folder name, a git identity, an
error quoting a tool's stderr. :func:`commit_message` builds every message from parts, so
none of that text can start a line of its own: each value is written on one line (redacted
first, then every line break and other hidden character shown as its escape, see
:mod:`controller.display`), the body is one paragraph, and the trailer block, always the last
paragraph, holds only the keys the controller passes in. Identity trailers
(:data:`IDENTITY_TRAILERS`) are not redacted: they name a git identity already in history.

Messages are bounded too (round 38: the ``plangate: fail`` commit of a verify naming 3,000
clauses carried the whole 470 KB error in its body, in history for good): the body, and a
batch's ``Plan-Note:``, keep at most :data:`BODY_CHARS` characters (cut with ``…`` after
redaction, as PLAN.yml and the journal keep an error), and no message passes
:data:`MAX_MESSAGE_BYTES` (a batch that would is committed in parts).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from controller.display import visible

#: Trailers naming who did something (a git identity read from history: the approval's or
#: the withdrawal's commit). Not redacted (round 43): the identity is already in history,
#: so hiding it hides nothing, and over-hiding (a word the redactor takes for a credential)
#: rewrote ``Approved-By: carol@...`` as ``***@...``, and ``status`` with it, while PLAN.yml
#: and the audit named Carol. Every other value stays redacted; still one line.
IDENTITY_TRAILERS = frozenset({"Approved-By", "Aborted-By"})
#: Trailers whose values the controller takes from git or makes itself (a plan's path, a
#: hash, a commit id, a state word, its instance id): not redacted either (round 45: a path
#: ``plans/postgres-upgrade`` or a commit id holding ``12345`` was written ``***`` when a
#: catalog credential was ``postgres`` or ``12345``, and the audit flagged the controller's
#: own commits). They come from history, so hiding them hides nothing.
GIT_TRAILERS = IDENTITY_TRAILERS | frozenset(
    {
        "Plan",
        "Plan-Hash",
        "Plan-Status",
        "Plan-Event",
        "Approval-Commit",
        "Run-Start",
        "Policy-Hash",
        "Controller",
    }
)


def one_line(text: str, redact: Callable[[str], str] | None = None) -> str:
    """``text`` redacted, then with no character that any tool could take as a line break
    (LF, CR, VT, FF, NEL, U+2028, U+2029, ...) or that could hide text: all shown escaped,
    and no ``Co-authored-by:`` credit (:func:`defused`)."""
    return defused(visible(redact(text) if redact else text))


def defused(text: str) -> str:
    """``text`` with the colon of every ``Co-authored-by:`` key in it, in any spelling and
    place (:func:`controller.approval.approvals.credit_keys`, the one reader of credits), shown
    as its escape (``Co-authored-by\\x3a``): a credit counts anywhere in a message (round
    128), so text quoted into a message (an agent's note, a tool's error, a person's reason)
    credits nobody as an author of what the commit changes."""
    if "uthored" not in text.casefold() and text.isascii():
        return text  # the usual text: no key in any spelling (one with others is read below)
    from controller.approval.approvals import credit_keys  # lazily: the CLI starts fast

    for _start, end in reversed(credit_keys(text)):
        colon = text[end - 1]
        shown = "\\x3a" if colon == ":" else f"\\u{ord(colon):04x}"
        text = text[: end - 1] + shown + text[end:]
    return text


def paragraph(text: str, redact: Callable[[str], str] | None = None) -> str:
    """Free text (an error) as one line: runs of whitespace, line breaks included, become one
    space; other hidden characters are escaped."""
    return one_line(" ".join((redact(text) if redact else text).split()))


#: Characters of a message's body (or a ``Plan-Note:``) kept; the rest is cut with ``…``.
BODY_CHARS = 2000
#: No commit message the controller writes is longer (bytes, UTF-8): ``max_result_bytes``.
MAX_MESSAGE_BYTES = 65_536
#: Bytes kept for the ``Controller-Seal:`` line added once the tree is known
#: (controller.service.statedir.CommitSeal): the key, ": ", 64 hex digits and a newline.
SEAL_BYTES = len("Controller-Seal: ") + 64 + 1


def note(text: str, redact: Callable[[str], str] | None = None, limit: int = BODY_CHARS) -> str:
    """Free text (an error) as one line (:func:`paragraph`), cut at ``limit`` characters."""
    from controller.display import shorten

    return shorten(paragraph(text, redact), limit)


def commit_message(
    subject: str,
    body: str,
    trailers: Sequence[tuple[str, str]],
    redact: Callable[[str], str] | None = None,
) -> str:
    """``subject``, a blank line, ``body`` as one paragraph (if any), a blank line and one
    ``Key: value`` line per trailer. Values may be anyone's text; keys and the subject must be
    the caller's (fixed words and a plan's path). The body and every trailer but
    :data:`GIT_TRAILERS` are redacted; everything is written on one line."""
    for key, _ in trailers:
        if not key.replace("-", "").isalnum() or not key.isascii():
            raise ValueError(f"not a trailer key: {key!r}")
    head = one_line(subject) + "\n\n"  # the caller's: fixed words and a plan's path (git's)
    tail = "".join(
        f"{key}: {one_line(value, None if key in GIT_TRAILERS else redact)}\n"
        for key, value in trailers
    )
    if not body.strip():
        return head + tail
    text = note(body, redact)
    room = MAX_MESSAGE_BYTES - SEAL_BYTES - len((head + tail).encode("utf-8")) - 2
    while text and len(text.encode("utf-8")) > room:  # long subject and trailers: less body
        limit = max(0, min(len(text) - 2, room // 4))
        text = note(body, redact, limit) if limit else ""
    return head + (text + "\n\n" if text else "") + tail


def batch_message(
    groups: Sequence[Sequence[tuple[str, str]]],
    shared: Sequence[tuple[str, str]],
    redact: Callable[[str], str] | None = None,
) -> str:
    """A commit recording several plans' events: subject ``plangate: <event> <n> plans``
    (``plangate: <n> plan events`` when they differ), no body, and one trailer group per plan
    (``Plan:`` first, then its ``Plan-Event:`` and the rest), then the ``shared`` trailers.
    Values are written as :func:`commit_message` writes them."""
    events = {value for group in groups for key, value in group if key == "Plan-Event"}
    count = len(groups)
    subject = (
        f"plangate: {next(iter(events))} {count} plans"
        if len(events) == 1
        else f"plangate: {count} plan events"
    )
    trailers = [item for group in groups for item in group]
    return commit_message(subject, "", [*trailers, *shared], redact)


#: A line of a trailer block: ``Key: value`` (git's rule for a token: letters, digits, ``-``).
_TRAILER_LINE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9-]*:\s")


def decision_note(subject: str, body: str, limit: int = 500) -> str | None:
    """What a person's decision commit says in words (a rejection's or an abort's reason): its
    body without the trailer block (``plangate reject -m`` writes the reason there), else its
    subject (a hand-made commit's one line), as one line of at most ``limit`` characters
    (:func:`note`); None when it says nothing. The person's text as they committed it, which
    everyone who reads the branch reads anyway."""
    paragraphs = [p for p in body.strip().split("\n\n") if p.strip()]
    if paragraphs and all(_TRAILER_LINE.match(ln) for ln in paragraphs[-1].splitlines()):
        paragraphs.pop()
    text = note(" ".join(paragraphs or [subject]), limit=limit)
    return text or None
