"""Freezing: a pending plan is frozen (its hash written), or marked ``invalid`` with its errors.

In local mode this includes adoption: a pending PLAN.yml an agent wrote but did not commit is
frozen and committed.
"""

from __future__ import annotations

from pathlib import PurePosixPath

from controller.approval import policy
from controller.errors import GitError, PlangateError
from controller.plan import plans, yamlio
from controller.service.committing import Committing, _set_status
from controller.service.core import _Moved


class Freezing(Committing):
    """Freezes pending plans, committed or (local mode) left uncommitted by an agent."""

    def _untracked_plans(self) -> set[str]:
        """Local mode: PLAN.yml files in the working tree that the branch does not hold."""
        if self.config.remote is None:
            return self._scanner.scan(self.index.plans.keys())  # a plan's id is its folder
        return set()

    def _freeze(self, file: str, *, adopt: bool = False) -> None:
        event = {"name": "freeze"}

        def mutate(text: str) -> str | None:
            loaded = plans.validate_text(text, self.repo.path / file, self.config)
            if loaded.status != "pending_approval":
                return None
            facts = (
                policy.frozen_facts(str(PurePosixPath(file).parent), loaded.data, self.config)
                if loaded.valid
                else None
            )
            outcome = plans.freeze_text(loaded, facts=facts)
            if loaded.problems:
                event["name"] = "invalid"
                return _mark_invalid(loaded)
            return outcome.text if outcome.changed or adopt else None

        sha = self._commit_plan(file, event["name"], mutate, None, "", adopt=adopt, event_ref=event)
        if sha is not None:
            self.log.info(
                "plan_" + ("frozen" if event["name"] == "freeze" else "invalid"),
                plan=str(PurePosixPath(file).parent),
                commit=sha,
            )

    def _adopt(self, path: str) -> None:
        """Local mode: freeze (and commit) a pending PLAN.yml an agent wrote but did not commit."""
        file = self.repo.path / path
        if file.is_symlink() or not file.is_file():
            return  # never follow a link or block on a FIFO an agent left in the plans dir
        try:
            loaded = plans.load_plan(file, self.config)  # bounded by limits.max_plan_bytes
        except PlangateError:
            return
        if loaded.status == "pending_approval":
            try:
                self._freeze(path, adopt=True)
            except (GitError, _Moved):
                raise
            except PlangateError as exc:
                self._wait(str(PurePosixPath(path).parent), f"cannot adopt {path}: {exc}")


def _mark_invalid(loaded: plans.LoadedPlan) -> str:
    errors = [{"code": p.code, "message": p.message, "path": p.path} for p in loaded.problems]
    text = _set_status(loaded.text, "invalid")
    return yamlio.set_block(yamlio.read_yaml(text, "PLAN.yml"), "validation", {"errors": errors})
