"""Scheduling a plan's actions over its ``needs`` graph (SPEC §6, §12).

An action may start once every action it needs is done (succeeded, or skipped); up to
``execution.max_parallel_actions`` run at once in worker threads. Admission happens on the
scheduler's own thread. Among the ready actions, the one with the longest chain of actions
still waiting on it goes first (ties: the smaller id): it keeps every slot busy to the end
(10 chains of 10 on 4 slots take 25 rounds, where id order takes 30: the last two chains
would run alone). Abort and stop requests, gates
(``requires_approval``), a pending ``on_failure: ask`` and an action that failed for good
(without a resume) all stop new admissions; the actions already running end on their own,
then the run returns that outcome. The graph is fixed by the frozen plan: what a tool returns
can fail an action but never choose which actions run.

When a single action is ready and none runs (a chain, the plan without ``needs``), it runs
on the scheduler's thread: a sequential plan costs no thread hand-offs.
"""

from __future__ import annotations

import heapq
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import TYPE_CHECKING, Any, Protocol

from controller.execution.steps import RunOutcome, Step, StepRunner, error_of

if TYPE_CHECKING:
    from controller.execution.journal import ActionKey, Replay
    from controller.plan.graph import Graph
    from controller.plan.schema import Action

#: How often the scheduler looks at abort/stop requests and checkpoints while actions run.
_TICK = 0.05
#: Rank of outcomes when several actions end badly at once: the most final one is reported.
_RANK = {"aborted": 4, "failed": 3, "awaiting_approval": 2, "stopped": 1}


class Host(Protocol):
    """What the scheduler needs of its plan run."""

    state: Replay
    resume: bool
    approval: dict[str, Any]

    def record(self, record: dict[str, Any]) -> None: ...
    def interrupted(self, key: ActionKey, doing: str) -> RunOutcome | None: ...
    def step_of(self, action: Action) -> Step: ...
    def run_step(self, step: Step) -> RunOutcome | None: ...
    def checkpoint(self) -> None: ...


class Scheduler:
    """Runs the actions of one plan run in an order consistent with ``needs``."""

    def __init__(
        self,
        host: Host,
        runner: StepRunner,
        graph: Graph,
        actions: dict[int, Action],
        max_parallel: int,
    ) -> None:
        self.host = host
        self.runner = runner
        self.graph = graph
        self.actions = actions
        self.limit = max(1, max_parallel)
        self.waiting = {i: len(set(n)) for i, n in graph.needs.items()}
        self.users = graph.dependents()
        self.rank = _ranks(graph, self.users)
        self.ready: list[tuple[int, int]] = []  # a heap of (rank, id)
        self.halt: RunOutcome | None = None

    def run(self, gate_approved: ActionKey | None) -> RunOutcome | None:
        """Run every action not yet done; None when all are done."""
        self.gate_approved = gate_approved
        for action in self.graph.order:
            if self.host.state.actions.get(action) and self.host.state.action(action).done:
                self._done(action, initial=True)
        self.ready = [
            (self.rank[i], i)
            for i, count in self.waiting.items()
            if count == 0 and not self._is_done(i)
        ]
        heapq.heapify(self.ready)
        running: dict[Future[RunOutcome | None], int] = {}
        pool: ThreadPoolExecutor | None = None
        try:
            while True:
                admitted = self._admit(self.limit - len(running))
                if len(admitted) == 1 and not running:
                    self._ended(admitted[0], self.host.run_step(self._step(admitted[0])))
                    self.host.checkpoint()
                    continue
                for action in admitted:
                    if pool is None:
                        pool = ThreadPoolExecutor(self.limit, thread_name_prefix="plangate-action")
                    running[pool.submit(self.host.run_step, self._step(action))] = action
                if not running:
                    break
                finished, _ = wait(running, timeout=_TICK, return_when=FIRST_COMPLETED)
                for future in finished:
                    self._ended(running.pop(future), future.result())
                self.host.checkpoint()
        finally:
            if pool is not None:
                pool.shutdown(wait=True)
        return self.halt

    def _step(self, action: int) -> Step:
        return self.host.step_of(self.actions[action])

    def _is_done(self, action: int) -> bool:
        rec = self.host.state.actions.get(action)
        return rec is not None and rec.done

    def _done(self, action: int, *, initial: bool = False) -> None:
        for user in self.users[action]:
            self.waiting[user] -= 1
            if self.waiting[user] == 0 and not initial:
                heapq.heappush(self.ready, (self.rank[user], user))

    def _ended(self, action: int, outcome: RunOutcome | None) -> None:
        if outcome is None and self._is_done(action):
            self._done(action)
        elif outcome is not None:
            self._stop(outcome)

    def _stop(self, outcome: RunOutcome) -> None:
        if self.halt is None or _RANK.get(outcome.status, 0) > _RANK.get(self.halt.status, 0):
            self.halt = outcome

    # --- admission ----------------------------------------------------------------------

    def _admit(self, room: int) -> list[int]:
        """Up to ``room`` ready actions that may start now, longest remaining chain first."""
        admitted: list[int] = []
        while room > len(admitted) and self.ready and self.halt is None:
            action = self.ready[0][1]
            stop = self.host.interrupted(action, "before")
            if stop is None:
                stop = self._gate(self.actions[action])
            if stop is not None:
                self._stop(stop)
                break
            heapq.heappop(self.ready)
            admitted.append(action)
        return admitted

    def _gate(self, action: Action) -> RunOutcome | None:
        """A gate, a pending ask or an earlier final failure that keeps the action waiting."""
        state = self.host.state
        rec = state.actions.get(action.id)
        if action.requires_approval and action.id not in state.gates:
            if self.gate_approved != action.id:
                return RunOutcome("awaiting_approval", None, action.id)
            self.host.record({"t": "gate", "id": action.id})
        if rec is None or rec.open_start:
            return None
        if rec.ask_pending:
            commit = str(self.host.approval.get("commit") or self.host.approval.get("at"))
            if self.gate_approved != action.id or commit in rec.ask_approvals:
                return RunOutcome("awaiting_approval", error_of(rec), action.id)
            self.host.record({"t": "gate", "id": action.id, "ask": rec.asks, "approval": commit})
            return None
        if rec.finally_failed and not self.host.resume:
            return RunOutcome("failed", error_of(rec), action.id)
        return None


def _ranks(graph: Graph, users: dict[int, list[int]]) -> dict[int, int]:
    """id -> minus the number of actions on the longest path from it to an action nothing
    needs (itself included): the heap's order, critical path first."""
    height: dict[int, int] = {}
    for action in reversed(graph.order):
        height[action] = 1 + max((height[u] for u in users[action]), default=0)
    return {action: -h for action, h in height.items()}
