"""A plan's risk, estimate and caps (SPEC §11): what reviewers and the policy weigh.

A plan's *risk* is the highest ``risk`` of the catalog tools it calls; its *estimate* sums the
catalog ``estimate`` of every call it may make, retries counted at their maximum. Both are
computed from the plan's data and the controller's catalog, never taken from the file: the
``frozen:`` block shows them to reviewers, but a plan author can write anything there.

*Caps* are the plan's own ``limits:`` (hashed) and the config's ``limits:``; for each the
smaller wins. :func:`cap_problems` says which caps a plan exceeds at freeze: the actions it
has, its estimated cost and seconds; tool calls (retries included) and the real run time are
counted by the engine while it runs.

The plan is read as data (not the schema model) so that every step that calls a tool counts:
actions, their fallbacks, preconditions and verify checks, wherever the schema puts them.
A nested plan's steps count too (SPEC §12: approving the parent approves exactly the pinned
version, so its tools are what the approver approves): the caller hands in a reader of
pinned plans (:mod:`controller.plan.nested`: the working tree, or a commit's tree). A pin
that cannot be read, or does not hash to its pin, makes the plan ``high`` risk: whoever
approves must not be asked for fewer approvals because a file was missing. Pure apart from
what the reader reads.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from controller.plan.nested import Reader
    from controller.settings import Limits, ToolSpec

RISKS = ("low", "medium", "high")
DEFAULT_RISK = "medium"
DEFAULT_RETRIES = 3
#: Keys whose values are the author's data, never steps (a param may be named ``tool``).
_DATA_KEYS = frozenset({"params", "inputs", "metadata", "outputs", "expect", "guards"})
#: Top-level blocks written by the controller or free-form: no steps there.
_NOT_STEPS = frozenset({"frozen", "approval", "execution", "validation", "metadata", "inputs"})


@dataclass(frozen=True)
class Estimate:
    seconds: float = 0.0
    cost_usd: float = 0.0

    def as_dict(self) -> dict[str, float]:
        return {"seconds": round(self.seconds, 3), "cost_usd": round(self.cost_usd, 6)}


@dataclass(frozen=True)
class Profile:
    """What the policy and the caps look at in one plan."""

    plan_id: str
    tools: frozenset[str]
    risk: str
    estimate: Estimate
    actions: int
    #: Most tool calls a run can make (every retry and fallback taken).
    max_calls: int
    #: Outside data reaches a ``sensitive`` param somewhere (guarded or not, SPEC §16).
    untrusted_to_sensitive: bool = False
    #: The nested plans counted in (their paths), and those that could not be read.
    nested: tuple[str, ...] = ()
    unread: tuple[str, ...] = ()


def risk_rank(risk: str) -> int:
    return RISKS.index(risk) if risk in RISKS else RISKS.index(DEFAULT_RISK)


def profile_of(
    plan_id: str, data: Any, catalog: Mapping[str, ToolSpec], nested: Reader | None = None
) -> Profile:
    """The profile of a plan's parsed data under ``catalog`` (tools it lacks: medium, free),
    its nested plans read by ``nested`` (none: every pin counts as unread)."""
    children, unread = _children(data, nested)
    calls = _all_calls(data, children)
    tools = frozenset(tool for tool, _ in calls)
    risk = max((_risk(catalog.get(t)) for t in tools), key=risk_rank, default="low")
    if unread:
        risk = "high"
    return Profile(
        plan_id,
        tools,
        risk,
        _estimate(calls, catalog),
        sum(_count_actions(d) for d in (data, *children.values())),
        sum(count for _, count in calls),
        _untrusted_to_sensitive(data, catalog, children),
        tuple(sorted(_paths(data, children))),
        tuple(sorted(set(unread))),
    )


def size_of(
    data: Any, catalog: Mapping[str, ToolSpec], nested: Reader | None = None
) -> tuple[int, Estimate]:
    """The actions and the estimate of a plan with its nested plans: what :func:`cap_problems`
    weighs, without the rest of the profile (its data flows cost as much as all of it)."""
    children, _ = _children(data, nested)
    actions = sum(_count_actions(d) for d in (data, *children.values()))
    return actions, _estimate(_all_calls(data, children), catalog)


def _all_calls(data: Any, children: Mapping[int, Any]) -> list[tuple[str, int]]:
    calls = list(_calls(data))
    for child in children.values():
        calls += _calls(child)
    return calls


def _estimate(calls: list[tuple[str, int]], catalog: Mapping[str, ToolSpec]) -> Estimate:
    seconds = cost = 0.0
    for tool, count in calls:
        estimate = getattr(catalog.get(tool), "estimate", None)
        if estimate is not None:
            seconds += estimate.seconds * count
            cost += estimate.cost_usd * count
    return Estimate(seconds, cost)


def _count_actions(data: Any) -> int:
    actions = data.get("actions") if isinstance(data, dict) else None
    return len(actions) if isinstance(actions, list) else 0


def _children(data: Any, reader: Reader | None) -> tuple[dict[int, dict[str, Any]], list[str]]:
    """Parent action id -> the pinned plan's data; and the paths that could not be read."""
    from controller.plan.nested import pins

    children: dict[int, dict[str, Any]] = {}
    unread: list[str] = []
    for action, path, pin in pins(data):
        child = reader(path, pin) if reader is not None else None
        if child is None:
            unread.append(path)
        else:
            children[action] = child
    return children, unread


def _paths(data: Any, children: Mapping[int, Any]) -> set[str]:
    from controller.plan.nested import pins

    return {path for action, path, _ in pins(data) if action in children}


def _untrusted_to_sensitive(
    data: Any, catalog: Mapping[str, ToolSpec], children: Mapping[int, dict[str, Any]]
) -> bool:
    from controller.plan.flows import untrusted_to_sensitive_in_data

    return untrusted_to_sensitive_in_data(data, dict(catalog), children)


def _risk(spec: ToolSpec | None) -> str:
    return spec.risk if spec is not None else DEFAULT_RISK


def _calls(data: Any) -> Iterator[tuple[str, int]]:
    """(tool, most calls) for every step of the plan that calls a tool."""
    if not isinstance(data, dict):
        return
    # the plan's on_failure applies to every step without its own (round 17: a plan-level
    # retry was estimated as one call, and the cap let 21 paid calls run)
    default = data.get("on_failure")
    for key, value in data.items():
        if key == "preconditions" and isinstance(value, list):
            yield from _checks(value, 1)  # the plan's own: checked once, before any action
        elif key not in _NOT_STEPS:
            yield from _steps(value, default)


def _steps(value: Any, default: Any = None, times: int = 1) -> Iterator[tuple[str, int]]:
    """(tool, most calls) of the steps in ``value``, each run at most ``times`` times over.

    A step's checks (its preconditions, its verify's polls) are made on every try of the
    step: they count its tries over (round 21: a precondition under `retry: {attempts: 5}`
    was estimated as one call and made six). Its fallback steps run once after its tries."""
    if isinstance(value, list):
        for item in value:
            yield from _steps(item, default, times)
        return
    if not isinstance(value, dict):
        return
    tool = value.get("tool")
    tries = times * (1 + _retries(value, default)) if isinstance(tool, str) else times
    if isinstance(tool, str):
        yield tool, tries
    for key, item in value.items():
        if key == "verify" and isinstance(item, dict) and isinstance(item.get("tool"), str):
            yield item["tool"], tries * _polls(item)  # polled until it holds or its timeout
        elif key == "preconditions" and isinstance(item, list):
            yield from _checks(item, tries)
        elif key not in _DATA_KEYS:
            yield from _steps(item, default, times)


def _checks(preconditions: list[Any], times: int) -> Iterator[tuple[str, int]]:
    """Each precondition's tool, called once per try of what it guards (``times``)."""
    for pre in preconditions:
        if isinstance(pre, dict) and isinstance(pre.get("tool"), str):
            yield pre["tool"], times


#: Seconds between polls of a verify tool when the plan gives no interval.
VERIFY_INTERVAL = 5.0


def _polls(verify: dict[str, Any]) -> int:
    """The most calls a verify tool's polling makes: one, then one per interval until its
    timeout (round 17: estimated as one call, it was called 14 times)."""
    timeout, interval = verify.get("timeout"), verify.get("interval")
    if not isinstance(timeout, int | float) or isinstance(timeout, bool) or timeout <= 0:
        return 1
    if not isinstance(interval, int | float) or isinstance(interval, bool) or interval <= 0:
        interval = VERIFY_INTERVAL
    return 1 + min(int(timeout / interval) + 1, 100_000)


def _retries(step: dict[str, Any], default: Any = None) -> int:
    if (step.get("on_failure") or default) != "retry":
        return 0
    retry = step.get("retry")
    if isinstance(retry, dict) and _is_count(retry.get("attempts")):
        return int(retry["attempts"])
    return int(step["retries"]) if _is_count(step.get("retries")) else DEFAULT_RETRIES


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 1000


# --- caps -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Caps:
    """The limits in force for one plan: the smaller of the plan's and the config's."""

    max_actions: int
    max_tool_calls: int
    max_cost_usd: float | None
    max_runtime: float | None


CAP_KEYS = ("max_actions", "max_tool_calls", "max_cost_usd", "max_runtime")


def caps_for(data: Any, limits: Limits | None) -> Caps:
    """The config's limits, lowered by the plan's own ``limits:`` where it says less."""
    own = data.get("limits") if isinstance(data, dict) else None
    own = own if isinstance(own, dict) else {}
    values: dict[str, Any] = {}
    for key in CAP_KEYS:
        mine = getattr(limits, key, None) if limits is not None else _DEFAULTS[key]
        theirs = own.get(key)
        if key == "max_runtime" and isinstance(theirs, str):
            theirs = _seconds(theirs)
        if not isinstance(theirs, int | float) or isinstance(theirs, bool):
            theirs = None
        candidates = [v for v in (mine, theirs) if v is not None]
        values[key] = min(candidates) if candidates else None
    return Caps(**values)


_DEFAULTS: dict[str, Any] = {
    "max_actions": 500,
    "max_tool_calls": 1000,
    "max_cost_usd": None,
    "max_runtime": None,
}


def _seconds(text: str) -> float | None:
    from controller.settings import parse_duration

    try:
        return parse_duration(text)
    except ValueError:
        return None


@dataclass(frozen=True)
class CapExceeded:
    key: str
    what: str
    amount: float
    cap: float

    @property
    def message(self) -> str:
        return (
            f"{self.what} {_number(self.amount)}, over the cap of {_number(self.cap)} "
            f"(limits.{self.key}: the smaller of the plan's and the controller's)"
        )


def cap_problems(actions: int, estimate: Estimate, caps: Caps) -> list[CapExceeded]:
    """The caps a plan exceeds before it runs (tool calls are counted at run time); its
    ``actions`` and ``estimate`` as :func:`size_of` gives them."""
    found = []
    checks: list[tuple[str, str, float, float | None]] = [
        ("max_actions", "the plan has actions:", actions, caps.max_actions),
        ("max_cost_usd", "the estimated cost in USD is", estimate.cost_usd, caps.max_cost_usd),
        ("max_runtime", "the estimated run time in seconds is", estimate.seconds,
         caps.max_runtime),
    ]  # fmt: skip
    for key, what, amount, cap in checks:
        if cap is not None and amount > cap:
            found.append(CapExceeded(key, what, amount, cap))
    return found


def _number(value: float) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def frozen_facts(profile: Profile) -> dict[str, Any]:
    """What ``frozen:`` shows of the profile (not hashed; recomputed wherever it matters)."""
    return {"risk": profile.risk, "estimate": profile.estimate.as_dict()}
