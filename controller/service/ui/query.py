"""The page's query strings: the one reader of every route's ``?...`` and of the overview's
``?status=S&page=N``.

Each route names the parameters it reads (:data:`TAKES`: the overview ``status`` and
``page``, every other route none). A query that does not fit is refused, never answered as
if it did (round 126, ``api-overview-query-not-checked``: ``/api/?status=pending-approval``
answered 200 with an empty section of that "status", so a script read "nothing waits" while
55 plans waited; ``?page=-1`` and ``?page=abc`` answered page 1, a huge page
``page: 1000000`` of 1). Refusals are :class:`~controller.errors.UsageError` (``E_USAGE``),
located at ``<path>?<parameter>``, naming the values there are: the route answers 400, under
``/api`` the one error shape, elsewhere an HTML page.

The rules: a parameter the route does not read, one given twice, one whose
percent-encoding is not UTF-8, or more than :data:`MAX_FIELDS` fields is refused;
``status`` is a status the overview shows (a plan status, its own ``unknown`` and
``unreadable`` sections, any other a row shows now), spelled as ``plangate status`` spells
it; ``page`` is a whole number from 1 to the status's last page and needs ``status`` (it
pages through one status).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from dataclasses import dataclass
from urllib.parse import parse_qsl

from controller.display import shorten
from controller.errors import UsageError

#: The parameters each route reads ("/" is the overview; the others read none).
TAKES: dict[str, tuple[str, ...]] = {"/": ("status", "page")}
#: More fields than any route reads, so a query of thousands is refused unparsed.
MAX_FIELDS = 8
_DIGITS = re.compile(r"[0-9]+")
#: A page number longer than this is past any last page (and never handed to ``int``).
_MAX_PAGE_DIGITS = 9


def _shown(value: str) -> str:
    """A value as a message quotes it: ``repr`` (a NUL, a newline shown as escapes), cut."""
    return shorten(repr(value), 80)


def params(raw: str, route: str, where: str) -> dict[str, str]:
    """The parameters of ``raw`` (a query string, no ``?``) for ``route`` (a key of
    :data:`TAKES`), each once; ``where`` (the path asked) locates a refusal."""
    takes = TAKES.get(route, ())
    try:
        fields = parse_qsl(raw, keep_blank_values=True, errors="strict", max_num_fields=MAX_FIELDS)
    except UnicodeDecodeError:
        raise UsageError(
            "the query's percent-encoding is not UTF-8",
            path=f"{where}?",
            remedy=_takes_remedy(takes),
        ) from None
    except ValueError:  # parse_qsl: more than max_num_fields
        raise UsageError(
            f"the query has more than {MAX_FIELDS} parameters",
            path=f"{where}?",
            remedy=_takes_remedy(takes),
        ) from None
    found: dict[str, str] = {}
    for name, value in fields:
        if name not in takes:
            raise UsageError(
                f"{_shown(name)} is no parameter of this page",
                path=f"{where}?{shorten(name, 80)}",
                remedy=_takes_remedy(takes),
            )
        if name in found:
            raise UsageError(
                f"{name} is given twice", path=f"{where}?{name}", remedy=f"give {name} once"
            )
        found[name] = value
    return found


def _takes_remedy(takes: tuple[str, ...]) -> str:
    if not takes:
        return "drop the query: this page reads no parameter"
    return "this page reads only " + " and ".join(f"?{name}=" for name in takes)


@dataclass(frozen=True)
class OverviewQuery:
    """What the overview was asked: one status (None: every status) and a page of it."""

    status: str | None = None
    page: int = 1
    #: the path asked (``/`` or ``/api/``), for the refusals' location
    where: str = "/"
    #: the page as asked (a refusal quotes it: a number too long to be one is never parsed)
    asked_page: str = "1"

    @classmethod
    def read(cls, raw: str, where: str) -> OverviewQuery:
        """The query's syntax; :meth:`check` holds it against the snapshot's statuses."""
        found = params(raw, "/", where)
        status = found.get("status")
        if status is not None and not status:
            raise UsageError(
                "status is empty",
                path=f"{where}?status",
                remedy="give a status (e.g. ?status=pending_approval), or leave status out "
                "for every status",
            )
        page_text = found.get("page")
        if page_text is None:
            return cls(status, 1, where)
        if status is None:
            raise UsageError(
                "page pages through one status: no status is given",
                path=f"{where}?page",
                remedy="give the status too (?status=pending_approval&page=2), or leave page out",
            )
        return cls(status, _page_number(page_text, where), where, page_text)

    def check(self, statuses: Collection[str], pages: Callable[[str], int]) -> None:
        """Is the status one the overview shows (``statuses``) and the page one of its
        ``pages(status)``? Read against one snapshot, the one the answer is built from."""
        if self.status is None:
            return
        if self.status not in statuses:
            raise UsageError(
                f"status {_shown(self.status)} is no status the overview shows",
                path=f"{self.where}?status",
                remedy=f"give one of {', '.join(statuses)} (as `plangate status` spells them), "
                "or leave status out for every status",
            )
        last = pages(self.status)
        if self.page > last:
            raise UsageError(
                f"page {shorten(self.asked_page, 40)} is past the last page of status "
                f"{self.status} ({last})",
                path=f"{self.where}?page",
                remedy=f"give a page from 1 to {last}, or leave page out for the first",
            )


#: ``page`` above every last page: a number too long to be one (never parsed whole)
PAST_ANY = 10**_MAX_PAGE_DIGITS


def _page_number(text: str, where: str) -> int:
    if not _DIGITS.fullmatch(text) or not text.strip("0"):
        raise UsageError(
            f"page {_shown(text)} is no page number",
            path=f"{where}?page",
            remedy="give a whole number from 1 (?page=2), or leave page out for the first",
        )
    return PAST_ANY if len(text.lstrip("0")) > _MAX_PAGE_DIGITS else int(text)
