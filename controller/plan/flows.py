"""Data-flow analysis: where outside data can reach a parameter that steers an effect (§16).

Plan-then-execute fixes *which* actions run; a tool's output still fills later parameters,
and whoever wrote that output (an email's sender, a web page) chooses the value. The catalog
says which tools produce outside data (``output_trust``) and which parameters steer effects
(``sensitive``); this module finds every *flow*: a reference, anywhere inside a parameter
(whole values, text inside longer strings, nested lists and mappings), to the output or
result of an action whose output is untrusted.

Trust of an action's output, by its tool's ``output_trust``:

- ``untrusted`` (the default): always untrusted;
- ``trusted``: always trusted, whatever it was given (the operator vouches for the tool);
- ``inherit``: as trusted as its inputs: untrusted as soon as one of its params carries an
  untrusted flow (a formatter or a calculator passes outside data through).

Inputs, the plan's own fields, the approval and secrets are written or chosen by people the
approval covers, so they are trusted. Pure: data in, data out; no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from controller.errors import Problem
from controller.plan import refs

if TYPE_CHECKING:
    from controller.plan.schema import Action, FallbackStep, PlanDocument
    from controller.settings import ToolSpec


@dataclass(frozen=True)
class Flow:
    """Data from one source reaching one parameter of one action."""

    action: int | str  # a fallback step: "<action>.<n>"
    param: str
    #: The reference as written, e.g. ``actions[2].outputs.sender``.
    source: str
    #: The action whose untrusted output started it (differs from the referenced action
    #: when the data passed through ``inherit`` tools), or None for a trusted source.
    origin: int | None
    trusted: bool
    sensitive: bool
    guarded: bool

    @property
    def unguarded_risk(self) -> bool:
        return not self.trusted and self.sensitive and not self.guarded

    def to_json(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "param": self.param,
            "source": self.source,
            "origin": self.origin,
            "trusted": self.trusted,
            "sensitive": self.sensitive,
            "guarded": self.guarded,
        }

    def describe(self) -> str:
        trust = "trusted" if self.trusted else f"UNTRUSTED (from action {self.origin})"
        guard = "guarded" if self.guarded else "unguarded"
        role = "sensitive " if self.sensitive else ""
        return f"{self.source} -> action {self.action} {role}param {self.param}: {trust}, {guard}"


def plan_flows(model: PlanDocument, tools: dict[str, ToolSpec]) -> list[Flow]:
    """Every flow into every action's params, in action order."""
    origin_of: dict[int, int | None] = {}  # action id -> the untrusted origin of its output
    flows: list[Flow] = []
    for action in model.actions:
        spec = tools.get(action.tool) if action.tool else None
        found = list(_action_flows(action, spec, origin_of))
        flows += found
        for step in action.fallback:  # fallback steps call tools too (SPEC §12)
            flows += _action_flows(step, tools.get(step.tool), origin_of)
        origin_of[action.id] = _output_origin(action, spec, found)
    return flows


def _output_origin(action: Action, spec: ToolSpec | None, flows: list[Flow]) -> int | None:
    trust = getattr(spec, "output_trust", "untrusted")
    if trust == "trusted":
        return None
    if trust == "inherit":
        return next((f.origin for f in flows if not f.trusted), None)
    return action.id


def _action_flows(
    action: Action | FallbackStep, spec: ToolSpec | None, origin_of: dict[int, int | None]
) -> list[Flow]:
    sensitive = set(getattr(spec, "sensitive", None) or ())
    guarded = {g.param for g in getattr(action, "guards", None) or ()}
    out: list[Flow] = []
    for param, value in action.params.items():
        for ref in _refs_in(value):
            if ref.root != "actions" or ref.action is None:
                continue
            origin = origin_of.get(ref.action)
            out.append(
                Flow(
                    action=action.id,
                    param=param,
                    source=ref.text.removeprefix("$<").removesuffix(">")
                    or f"actions[{ref.action}]",
                    origin=origin,
                    trusted=origin is None,
                    sensitive=param in sensitive,
                    guarded=param in guarded,
                )
            )
    return out


def _refs_in(value: Any) -> list[refs.Ref]:
    found: list[refs.Ref] = []
    for _, text in refs.walk_strings(value):
        try:
            found += [p for p in refs.parse(text) if isinstance(p, refs.Ref)]
        except Exception:  # a bad reference is reported by reference validation
            continue
    return found


def unguarded_problems(model: PlanDocument, tools: dict[str, ToolSpec]) -> list[Problem]:
    """E_UNGUARDED_FLOW for each untrusted flow into a sensitive parameter without a guard."""
    index: dict[int | str, str] = {}
    tool: dict[int | str, str] = {}
    for i, a in enumerate(model.actions):
        index[a.id], tool[a.id] = f"actions[{i}]", a.tool or ""
        for k, step in enumerate(a.fallback):
            index[step.id], tool[step.id] = f"actions[{i}].fallback[{k}]", step.tool
    return [
        Problem(
            "E_UNGUARDED_FLOW",
            f"untrusted data from action {f.origin} ({f.source}) reaches sensitive param "
            f"{f.param!r} of tool {tool[f.action]!r} without a guard; add "
            f'`guards: [{{param: {f.param}, matches: "^...$"}}]` (or one_of/min/max) to this '
            "action, so the reviewer approves what values may reach it",
            f"{index[f.action]}.params.{f.param}",
        )
        for f in plan_flows(model, tools)
        if f.unguarded_risk
    ]


def has_untrusted_to_sensitive(model: PlanDocument, tools: dict[str, ToolSpec]) -> bool:
    """Whether any untrusted flow reaches a sensitive param (guarded or not): what a policy
    rule ``match: {flows: untrusted_to_sensitive}`` looks for."""
    return any(not f.trusted and f.sensitive for f in plan_flows(model, tools))


def untrusted_to_sensitive_in_data(data: Any, tools: dict[str, ToolSpec]) -> bool:
    """:func:`has_untrusted_to_sensitive` over a plan's parsed data (the policy reads plans
    as data: ``plangate check`` and the audit see files the schema may not accept yet)."""
    actions = data.get("actions") if isinstance(data, dict) else None
    if not isinstance(actions, list):
        return False
    views = [_ActionView.of(a) for a in actions if isinstance(a, dict)]
    return has_untrusted_to_sensitive(_PlanView(views), tools)  # type: ignore[arg-type]


@dataclass(frozen=True)
class _GuardView:
    param: str


@dataclass(frozen=True)
class _ActionView:
    """An action as plain data, with the attributes the analysis reads."""

    id: int
    tool: str
    params: dict[str, Any]
    guards: tuple[_GuardView, ...]
    fallback: tuple[Any, ...] = ()

    @classmethod
    def of(cls, action: dict[str, Any]) -> _ActionView:
        params, guards, number = action.get("params"), action.get("guards"), action.get("id")
        return cls(
            id=number if isinstance(number, int) else -1,
            tool=str(action.get("tool", "")),
            params=params if isinstance(params, dict) else {},
            guards=tuple(
                _GuardView(str(g.get("param")))
                for g in (guards if isinstance(guards, list) else [])
                if isinstance(g, dict)
            ),
        )


@dataclass(frozen=True)
class _PlanView:
    actions: list[_ActionView]
