"""Plans whose file cannot carry a status: the controller says so instead of staying silent.

A plan the controller cannot freeze ends ``status: invalid`` with its ``validation.errors``
(:func:`controller.plan.plans.invalid_text`). Some files cannot hold that status at all:
not UTF-8, over ``limits.max_plan_bytes``, not YAML (a tab in the indentation), a list or a
JSON/flow mapping at the top level. For those the controller logs ``plan_unreadable`` once
per version of the file, ``plangate status`` shows them as ``unreadable`` with the code,
message and line, and the metrics count them under ``plangate_plans{status="unreadable"}``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from controller.errors import BlobTooLarge, Problem
from controller.plan import plans

if TYPE_CHECKING:
    from controller.settings import Config

UNREADABLE = "unreadable"


def blocker_of(data: bytes, file: str, config: Config) -> Problem | None:
    """Why a status cannot be written into this version of ``file`` (None: it can)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Problem("E_YAML_PARSE", f"not UTF-8 text (byte {exc.start})", "", None)
    return plans.status_blocker(plans.validate_text(text, Path(file), config))


class UnreadablePlans:
    """The last verdict per plan, keyed by the blob it was made for (each version once)."""

    def __init__(self, config: Config, log: Any) -> None:
        self.config = config
        self.log = log
        self._verdicts: dict[str, tuple[str | None, Problem | None]] = {}

    def judge(
        self, plan_id: str, file: str, blob: str | None, read: Callable[[], bytes | None]
    ) -> Problem | None:
        """The verdict for this version of the file, computed once per blob."""
        seen = self._verdicts.get(plan_id)
        if seen is not None and seen[0] == blob:
            return seen[1]
        try:
            data = read()
        except BlobTooLarge as exc:  # never read: its size was asked first (round 31)
            verdict: Problem | None = plans.too_large(exc.size, self.config.limits.max_plan_bytes)
        else:
            verdict = None if data is None else blocker_of(data, file, self.config)
        self._verdicts[plan_id] = (blob, verdict)
        return verdict

    def report(self, plan_id: str, file: str, blob: str | None, problem: Problem) -> None:
        """Record and log (once per version) that this plan's file cannot carry a status."""
        seen = self._verdicts.get(plan_id)
        self._verdicts[plan_id] = (blob, problem)
        if seen == (blob, problem):
            return
        self.log.warning(
            "plan_unreadable",
            plan=plan_id,
            file=file,
            code=problem.code,
            reason=problem.message,
            line=problem.line,
            remedy="fix the file and commit it; the controller cannot write status: invalid "
            "into it",
        )

    def forget(self, plan_id: str) -> None:
        self._verdicts.pop(plan_id, None)
