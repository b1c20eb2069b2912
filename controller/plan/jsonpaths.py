"""Whether a plan's JSONPath query (an output's ``path:``, an ``expect:`` clause) is RFC 9535.

Plans mostly write plain queries such as ``$.id``, ``$.items[0].name`` or ``$['a b']``. Those
are recognised here by a strict subset of the RFC's grammar, so ``plangate validate`` does not
import the JSONPath library (tens of milliseconds of start-up) for them; anything else, valid
or not, goes to the library, whose message is the error the author sees.
"""

from __future__ import annotations

import re

# $ then any number of: .name / ..name / .* / ..* / [index] / [*] / ['name'] / ["name"], where
# name is ASCII letters, digits and _ not starting with a digit; an index is an integer of at
# most 15 digits (inside I-JSON's range); a quoted name holds no quote, backslash, control
# character or surrogate. Every string this matches is an RFC 9535 query (tests check it
# against the library); no blank space, functions or filters.
_PLAIN = re.compile(
    r"""\$(?:
        \.\.?(?:\*|[A-Za-z_][A-Za-z0-9_]*)
      | \[(?:\*|0|-?[1-9][0-9]{0,14})\]
      | \['[^'\\\x00-\x1f\ud800-\udfff]*'\]
      | \["[^"\\\x00-\x1f\ud800-\udfff]*"\]
    )*""",
    re.VERBOSE,
)


def is_plain_query(path: str) -> bool:
    """Whether ``path`` is in the plain subset (certainly valid, no library needed)."""
    return _PLAIN.fullmatch(path) is not None


#: String literals of a query (in filters and bracketed names): their text is no syntax.
_QUOTED = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")
#: Descendant segments (``..``) a query may hold: each one multiplies the nodes to visit, so
#: ``$..*..*..*`` over a 7 KB result took minutes inside the controller (round 13).
MAX_DESCENDANTS = 1


def query_problem(path: str) -> str | None:
    """Why ``path`` is not an RFC 9535 query (the library's message), or None if it is one.
    A query with more than one descendant segment is refused too (its cost has no bound)."""
    if _QUOTED.sub("", path).count("..") > MAX_DESCENDANTS:
        return (
            f"at most {MAX_DESCENDANTS} descendant segment (..) per query: each one multiplies "
            "the nodes to visit; name the levels you mean"
        )
    if is_plain_query(path):
        return None
    import jsonpath_rfc9535

    try:
        jsonpath_rfc9535.compile(path)
    except Exception as exc:
        return str(exc)
    return None
