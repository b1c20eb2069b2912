"""The run-time caps of a plan run (SPEC §11), and of each nested plan inside it (SPEC §12).

A plan's caps are the smaller of its own ``limits:`` and the config's
(:func:`controller.plan.profile.caps_for`); the engine enforces two of them while it runs:
``max_tool_calls`` (every try of every step, its checks included) and ``max_runtime`` (this
run's wall time, from its start or resume). ``max_actions`` and ``max_cost_usd`` are checked
when the plan is validated (a pinned plan is validated like any plan, with its own limits).

One :class:`CapBudget` per plan being run: the plan's, and one for each nested plan while it
runs, chained to its parent's. Every check walks the chain, so a pinned plan's own limits
bound its part of the run and the parent's still bound the whole: the smaller remaining one
wins (round 54: a pinned plan's ``max_tool_calls: 1`` and ``max_runtime: 1`` were ignored
when it ran nested). The steps reach their budget through their scope, so a nested plan's
actions, their checks and the nested plan's own preconditions go through this one code.

Every wait of a run takes its time from here (round 55: verify polling kept its own
``timeout`` past ``max_runtime``): a tool's and a check tool's timeout
(:meth:`CapBudget.tool_timeout`), a retry's back-off (:meth:`CapBudget.wait`) and verify
polling (:meth:`CapBudget.runtime_left`: the polling stops at the cap, E_LIMIT_EXCEEDED);
no check tool is called once the run time is spent.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from controller.errors import LimitExceeded

if TYPE_CHECKING:
    from controller.plan.profile import Caps

REMEDY = "reduce the plan, or raise the limit in the controller config (limits:)"
NESTED_REMEDY = (
    "the pinned plan's own limits: bound its part of the run; pin a version of it with "
    "higher limits, or make it do less"
)


class CapReached(LimitExceeded):
    """A run-time cap (E_LIMIT_EXCEEDED): it ends the step and the run, whatever the step's
    ``on_failure`` (a ``skip`` never passes a cap), nested or not."""


class CapBudget:
    """The caps of one plan in a run: its tool calls and wall time, and its parent's."""

    def __init__(
        self,
        caps: Caps,
        calls: Callable[[], int],
        lock: threading.Lock,
        *,
        whose: str = "",
        parent: CapBudget | None = None,
    ) -> None:
        self.caps = caps
        #: The tool calls the journal holds for this plan (across resumes), read under ``lock``.
        self.calls = calls
        self.lock = lock
        #: "" for the plan run; ``"nested plan <path>"`` for a pinned plan's part of it.
        self.whose = whose
        self.parent = parent
        #: Check tools' calls made under this budget in this run (preconditions, verify polls).
        self.check_calls = 0
        #: Calls :meth:`take_call` allowed whose start is not journaled yet: parallel steps
        #: racing for the last call each see the others' (round 54's ``par`` made 3 calls
        #: under a cap of 2 when two checks ran before either start was recorded).
        self.taken = 0
        self.started = time.monotonic()

    def nested(self, caps: Caps, calls: Callable[[], int], whose: str) -> CapBudget:
        """The budget of a nested plan starting now: its own caps, under this one's."""
        return CapBudget(caps, calls, self.lock, whose=whose, parent=self)

    def _chain(self) -> list[CapBudget]:
        found: list[CapBudget] = []
        level: CapBudget | None = self
        while level is not None:
            found.append(level)
            level = level.parent
        return found

    # --- tool calls -----------------------------------------------------------------------

    def _over_calls(self, key: object, what: str) -> CapReached | None:
        """The first level whose ``max_tool_calls`` one more call would pass (lock held)."""
        for level in self._chain():
            made = level.calls() + level.check_calls + level.taken
            if made >= level.caps.max_tool_calls:
                return level._error(
                    f"{what} {key} would be tool call {made + 1}{level._of()}, over the cap "
                    f"of {level.caps.max_tool_calls} (limits.max_tool_calls{level._said()}, "
                    "retries and checks included)"
                )
        return None

    def take_call(self, key: object) -> CapReached | None:
        """Why a call of step ``key`` must not be made now (None: it may, and the call is
        held for it at every level until :meth:`call_journaled` says its start is journaled): the
        check and the holding are one step under the lock, so no two steps take the last
        call."""
        with self.lock:
            over = self._over_calls(key, "action")
            if over is None and self.runtime_left() == 0:
                over = self.runtime_exceeded(key)
            if over is None:
                for level in self._chain():
                    level.taken += 1
        return over

    def call_journaled(self) -> None:
        """The start of a call :meth:`take_call` allowed is journaled (or will not be): the
        journal's count holds it now."""
        with self.lock:
            for level in self._chain():
                level.taken -= 1

    def count_check_call(self, key: object) -> None:
        """Count a check tool's call toward ``max_tool_calls`` at every level; raise
        E_LIMIT_EXCEEDED instead of making one past a cap (round 21) or once the run time is
        spent (round 55). Counted for this run: a resumed run counts its actions' calls
        again, not its checks'."""
        with self.lock:
            over = self._over_calls(key, "a check of action")
            if over is not None:
                raise over
            if self.runtime_left() == 0:
                raise self.runtime_exceeded(key)
            for level in self._chain():
                level.check_calls += 1

    # --- wall time ------------------------------------------------------------------------

    def _left(self) -> float | None:
        if self.caps.max_runtime is None:
            return None
        return max(0.0, self.caps.max_runtime - (time.monotonic() - self.started))

    def runtime_left(self) -> float | None:
        """The run time the tightest level leaves (None: no level caps it)."""
        found = [left for left in (level._left() for level in self._chain()) if left is not None]
        return min(found) if found else None

    def runtime_exceeded(self, key: object) -> CapReached:
        """The error of the level whose run time is spent (the innermost first)."""
        chain = self._chain()
        level = next((lv for lv in chain if lv._left() == 0), chain[-1])
        ran = time.monotonic() - level.started
        cap = level.caps.max_runtime if level.caps.max_runtime is not None else 0.0
        return level._error(
            f"the run{level._of()} has taken {ran:.1f} s at action {key}, over the cap of "
            f"{cap:g} s (limits.max_runtime{level._said()})"
        )

    def tool_timeout(self, seconds: float) -> float:
        """A tool's timeout (an action's or a check's), shortened to the run time the caps
        leave."""
        left = self.runtime_left()
        return seconds if left is None else max(0.001, min(seconds, left))

    def wait(self, seconds: float) -> float:
        """A wait the engine makes (a retry's back-off), shortened to the run time the caps
        leave: the step after it then finds the run time spent (round 55)."""
        left = self.runtime_left()
        return seconds if left is None else min(seconds, left)

    # --- messages -------------------------------------------------------------------------

    def _of(self) -> str:
        return f" of {self.whose}" if self.whose else ""

    def _said(self) -> str:
        return f" of {self.whose}: its own and the controller's, the smaller" if self.whose else ""

    def _error(self, message: str) -> CapReached:
        return CapReached(message, remedy=NESTED_REMEDY if self.whose else REMEDY)
