"""The dependency graph of a plan's actions (``needs:``, SPEC §12).

Without ``needs`` anywhere, each action needs the one before it: the plan is a chain and runs
in id order, as before graphs existed. With ``needs`` on any action, an action needs exactly
the ids it lists (none: it may start at once). The graph is fixed when the plan is frozen;
nothing a tool returns can change it, so outputs never choose which actions run.

Pure functions over ``(id, needs)`` pairs; no I/O.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from controller.errors import Problem


@dataclass(frozen=True)
class Graph:
    """Each action's direct needs and transitive needs (ancestors), and a topological order."""

    needs: dict[int, tuple[int, ...]]
    ancestors: Mapping[int, Collection[int]]
    order: tuple[int, ...]
    #: True when some action wrote ``needs:`` (otherwise the plan is a chain).
    explicit: bool

    def dependents(self) -> dict[int, list[int]]:
        """id -> the ids that need it directly."""
        out: dict[int, list[int]] = {i: [] for i in self.needs}
        for action, needed in self.needs.items():
            for n in needed:
                out[n].append(action)
        return out


def direct_needs(actions: Sequence[tuple[int, Sequence[int] | None]]) -> dict[int, tuple[int, ...]]:
    """id -> needed ids; the implicit chain when no action writes ``needs``."""
    if all(needs is None for _, needs in actions):
        ids = [i for i, _ in actions]
        return {i: ((ids[k - 1],) if k else ()) for k, i in enumerate(ids)}
    return {i: tuple(dict.fromkeys(needs or ())) for i, needs in actions}


def build(
    actions: Sequence[tuple[int, Sequence[int] | None]],
) -> tuple[Graph | None, list[Problem]]:
    """The graph, or the problems (unknown ids, self-needs, cycles) as E_ACTION_IDS."""
    needs = direct_needs(actions)
    index = {i: k for k, (i, _) in enumerate(actions)}
    problems = list(_unknown(needs, index))
    if problems:
        return None, problems
    order = _topological(needs)
    if order is None:
        cycle = _cycle(needs)
        where = f"actions[{index[cycle[0]]}].needs"
        shown = " -> ".join(str(i) for i in [*cycle, cycle[0]])
        return None, [Problem("E_ACTION_IDS", f"needs form a cycle: {shown}", where)]
    explicit = any(n is not None for _, n in actions)
    if not explicit:  # a chain: an action's ancestors are the actions before it
        return Graph(needs, _ChainAncestors(order), tuple(order), explicit), []
    ancestors: dict[int, frozenset[int]] = {}
    for action in order:
        found: set[int] = set()
        for n in needs[action]:
            found.add(n)
            found |= ancestors[n]
        ancestors[action] = frozenset(found)
    return Graph(needs, ancestors, tuple(order), explicit), []


class _ChainAncestors(Mapping[int, Collection[int]]):
    """The ancestors of each action of a chain, by position: a 1,000-action chain holds
    500,000 ancestors as sets, built at each validation and each run."""

    def __init__(self, order: Sequence[int]) -> None:
        self._order = tuple(order)
        self._position = {action: k for k, action in enumerate(order)}

    def __getitem__(self, action: int) -> Collection[int]:
        return _Before(self._order, self._position, self._position[action])

    def __iter__(self) -> Iterator[int]:
        return iter(self._order)

    def __len__(self) -> int:
        return len(self._order)


class _Before(Collection[int]):
    """The actions of a chain before position ``end``."""

    def __init__(self, order: tuple[int, ...], position: dict[int, int], end: int) -> None:
        self._order, self._position, self._end = order, position, end

    def __contains__(self, action: object) -> bool:
        at = self._position.get(action) if isinstance(action, int) else None
        return at is not None and at < self._end

    def __iter__(self) -> Iterator[int]:
        return iter(self._order[: self._end])

    def __len__(self) -> int:
        return self._end

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Collection) and set(self) == set(other)

    __hash__ = None  # type: ignore[assignment]


def _unknown(needs: dict[int, tuple[int, ...]], index: dict[int, int]) -> Iterable[Problem]:
    for action, needed in needs.items():
        for n in needed:
            if n not in needs:
                yield Problem(
                    "E_ACTION_IDS",
                    f"action {action} needs action {n}, which does not exist",
                    f"actions[{index[action]}].needs",
                )


def _topological(needs: dict[int, tuple[int, ...]]) -> list[int] | None:
    """Kahn's algorithm, smallest id first among the ready ones; None on a cycle."""
    import heapq

    waiting = {i: len(set(n)) for i, n in needs.items()}
    users: dict[int, list[int]] = {i: [] for i in needs}
    for action, needed in needs.items():
        for n in set(needed):
            users[n].append(action)
    ready = [i for i, count in waiting.items() if count == 0]
    heapq.heapify(ready)
    order: list[int] = []
    while ready:
        action = heapq.heappop(ready)
        order.append(action)
        for user in users[action]:
            waiting[user] -= 1
            if waiting[user] == 0:
                heapq.heappush(ready, user)
    return order if len(order) == len(needs) else None


def _cycle(needs: dict[int, tuple[int, ...]]) -> list[int]:
    """One cycle of a graph that has one, smallest id first."""
    state: dict[int, int] = {}  # 1: on the current path, 2: explored
    for start in sorted(needs):
        stack: list[tuple[int, int]] = [(start, 0)]
        path: list[int] = []
        while stack:
            node, k = stack.pop()
            if k == 0:
                if state.get(node) == 2:
                    continue
                state[node] = 1
                path.append(node)
            children = needs[node]
            if k < len(children):
                stack.append((node, k + 1))
                child = children[k]
                if state.get(child) == 1:
                    cycle = path[path.index(child) :]
                    low = cycle.index(min(cycle))
                    return cycle[low:] + cycle[:low]
                if state.get(child) != 2:
                    stack.append((child, 0))
            else:
                state[node] = 2
                path.pop()
    return []
