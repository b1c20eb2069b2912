"""One time budget for the regular expressions and comparisons of one evaluation.

A single ``matches`` may be cut at its own timeout, but a list of values, many guards or
many ``expect`` clauses multiply it (round 20: 90 list elements at just under 0.1 s each,
60 clauses, a ``one_of`` of 10,000 values against 2,500 outputs). Each evaluation (the
guards of one call, the clauses of one check, the ``one_of`` values a validation tries, a
catalog schema check) runs inside :func:`spending`; every match inside takes the time that
is left as its timeout (:func:`left`), and the evaluation fails closed past the budget.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator

#: Seconds one evaluation may spend on regular expressions and comparisons.
BUDGET = 0.5

_LOCAL = threading.local()


class OverBudget(Exception):
    """The evaluation used up its budget."""


@contextlib.contextmanager
def spending(seconds: float = BUDGET) -> Iterator[None]:
    """Run an evaluation under one budget (nested evaluations share the outer one)."""
    if getattr(_LOCAL, "deadline", None) is not None:
        yield
        return
    _LOCAL.deadline = time.monotonic() + seconds
    try:
        yield
    finally:
        _LOCAL.deadline = None


def left(default: float = BUDGET) -> float:
    """Seconds left in the running evaluation (``default`` outside one); raises
    :class:`OverBudget` when none are."""
    deadline = getattr(_LOCAL, "deadline", None)
    if deadline is None:
        return default
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise OverBudget
    return remaining
