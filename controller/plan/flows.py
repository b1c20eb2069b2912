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

Every tool call counts, not only the actions': fallback steps, and the check tools of
``preconditions`` and ``verify`` (their params may hold references too; a check's own
``guards`` guard them). A nested plan's ``inputs`` carry the taint of what fills them into
the nested plan: an input filled with outside data is outside data wherever the nested plan
uses it, and reaching a sensitive param there it needs a guard in the nested plan (whose
hash the parent pins). Its result is untrusted when any of its actions' outputs is.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from controller.errors import Problem
from controller.plan import refs

if TYPE_CHECKING:
    from controller.plan.schema import PlanDocument
    from controller.settings import ToolSpec

Origin = int | str | None
#: A reference -> (the source as shown, its untrusted origin or None, where in the plan the
#: author fixes it or None for the param's own place); None: not a flow.
Lookup = Callable[[refs.Ref], "tuple[str, Origin, str | None] | None"]


@dataclass(frozen=True)
class Flow:
    """Data from one source reaching one parameter of one tool call."""

    action: int | str  # a fallback step: "<action>.<n>"; a nested plan's action: "<action>/<id>"
    param: str
    #: The reference as written, e.g. ``actions[2].outputs.sender``.
    source: str
    #: The action whose untrusted output started it (differs from the referenced action
    #: when the data passed through ``inherit`` tools), or None for a trusted source.
    origin: Origin
    trusted: bool
    sensitive: bool
    guarded: bool
    #: Whose param: the step's tool (""), a check (``preconditions[0]``, ``verify``), or a
    #: nested plan's ``inputs``.
    via: str = ""
    #: The tool called with the param (``plan <path>`` for a nested plan's inputs).
    tool: str = ""
    #: Where in the plan the author fixes it (an E_UNGUARDED_FLOW's location).
    where: str = ""

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
            "via": self.via,
            "tool": self.tool,
        }

    def describe(self) -> str:
        return describe_json(self.to_json())


def describe_json(flow: Mapping[str, Any]) -> str:
    """One line for a reader, from :meth:`Flow.to_json`."""
    trust = "trusted" if flow["trusted"] else f"UNTRUSTED (from action {flow['origin']})"
    guard = "guarded" if flow["guarded"] else "unguarded"
    role = "sensitive " if flow["sensitive"] else ""
    via = f" {flow['via']}" if flow.get("via") else ""
    return (
        f"{flow['source']} -> action {flow['action']}{via} {role}param {flow['param']}: "
        f"{trust}, {guard}"
    )


def plan_flows(
    model: Any, tools: Mapping[str, ToolSpec], children: Mapping[int, Any] | None = None
) -> list[Flow]:
    """Every flow into every tool call's params, in action order; ``children``: the nested
    plans' models by parent action id (a nested plan not given taints its result)."""
    origin_of: dict[int, Origin] = {}  # action id -> the untrusted origin of its output

    def lookup(ref: refs.Ref) -> tuple[str, Origin, str | None] | None:
        if ref.root != "actions" or ref.action is None:
            return None
        return _source(ref), origin_of.get(ref.action), None

    flows: list[Flow] = []
    for index, action in enumerate(model.actions):
        base = f"actions[{index}]"
        if getattr(action, "plan", None) is not None:
            found, origin = _nested(action, base, (children or {}).get(action.id), tools, lookup)
            flows += found
        else:
            found = _step(action, action.id, base, tools, lookup)
            flows += found
            origin = _output_origin(action.id, tools.get(action.tool or ""), found)
        for k, step in enumerate(action.fallback):  # fallback steps call tools too (SPEC §12)
            flows += _step(step, step.id, f"{base}.fallback[{k}]", tools, lookup)
        origin_of[action.id] = origin
    return flows


def _source(ref: refs.Ref) -> str:
    return ref.text.removeprefix("$<").removesuffix(">") or f"actions[{ref.action}]"


def _output_origin(action: int | str, spec: ToolSpec | None, flows: list[Flow]) -> Origin:
    trust = getattr(spec, "output_trust", "untrusted")
    if trust == "trusted":
        return None
    if trust == "inherit":  # what it was given, not what its checks read
        return next((f.origin for f in flows if not f.trusted and not f.via), None)
    return action


def _step(
    step: Any, label: int | str, base: str, tools: Mapping[str, Any], lookup: Lookup
) -> list[Flow]:
    """Flows into a step's params and into its checks' params."""
    tool = str(step.tool or "")
    out = _params(
        label, step.params, tool, tools.get(tool), step.guards, "", f"{base}.params", lookup
    )
    checks = [(f"preconditions[{k}]", pre) for k, pre in enumerate(step.preconditions or ())]
    if step.verify is not None and step.verify.tool is not None:
        checks.append(("verify", step.verify))
    for via, check in checks:
        out += _params(
            label, check.params, check.tool, tools.get(check.tool), check.guards, via,
            f"{base}.{via}.params", lookup,
        )  # fmt: skip
    return out


def _params(
    label: int | str,
    params: Mapping[str, Any],
    tool: str,
    spec: ToolSpec | None,
    guards: Any,
    via: str,
    where: str,
    lookup: Lookup,
) -> list[Flow]:
    sensitive = set(getattr(spec, "sensitive", None) or ())
    guarded = {g.param for g in guards or ()}
    out: list[Flow] = []
    for param, value in params.items():
        for ref in _refs_in(value):
            found = lookup(ref)
            if found is None:
                continue
            source, origin, fix_at = found
            out.append(
                Flow(
                    action=label,
                    param=param,
                    source=source,
                    origin=origin,
                    trusted=origin is None,
                    sensitive=param in sensitive,
                    guarded=param in guarded,
                    via=via,
                    tool=tool,
                    where=fix_at or f"{where}.{param}",
                )
            )
    return out


def _nested(
    action: Any, base: str, child: Any, tools: Mapping[str, Any], lookup: Lookup
) -> tuple[list[Flow], Origin]:
    """Flows into a nested plan's inputs, then through them into its tool calls; and the
    origin of its result (untrusted when it cannot be analysed)."""
    tool = f"plan {action.plan.path}"
    into: dict[str, list[Flow]] = {}
    for key, value in (action.inputs or {}).items():
        into[key] = _params(
            action.id, {key: value}, tool, None, (), "inputs", f"{base}.inputs", lookup
        )
    flows = [f for found in into.values() for f in found]
    if child is None:
        return flows, action.id
    tainted = {
        key: next(f for f in found if not f.trusted)
        for key, found in into.items()
        if any(not f.trusted for f in found)
    }
    inner_origin: dict[int, Origin] = {}

    def inner(ref: refs.Ref) -> tuple[str, Origin, str | None] | None:
        if ref.root == "actions" and ref.action is not None:
            return _source(ref), inner_origin.get(ref.action), None
        if ref.root != "inputs":
            return None
        keys = [str(ref.path[0])] if ref.path else sorted(tainted)
        for key in keys:
            if key in tainted:
                flow = tainted[key]
                shown = f"{_source(ref)} (= {flow.source})"
                return shown, flow.origin, f"{base}.inputs.{key}"
        return None

    for k, pre in enumerate(getattr(child, "preconditions", None) or ()):
        via = f"plan preconditions[{k}]"  # the nested plan's own, checked before its actions
        flows += _params(
            action.id, pre.params, pre.tool or "", tools.get(pre.tool or ""), pre.guards, via,
            f"{base}.plan", inner,
        )  # fmt: skip
    for step in child.actions:
        label = f"{action.id}/{step.id}"
        found = _step(step, label, f"{base}.plan", tools, inner)
        flows += found
        origin = _output_origin(label, tools.get(step.tool or ""), found)
        for fallback in step.fallback:
            flows += _step(fallback, f"{action.id}/{fallback.id}", f"{base}.plan", tools, inner)
        inner_origin[step.id] = origin
    return flows, next((o for o in inner_origin.values() if o is not None), None)


def _refs_in(value: Any) -> list[refs.Ref]:
    found: list[refs.Ref] = []
    for _, text in refs.walk_strings(value):
        try:
            found += [p for p in refs.parse(text) if isinstance(p, refs.Ref)]
        except Exception:  # a bad reference is reported by reference validation
            continue
    return found


def unguarded_problems(
    model: PlanDocument, tools: Mapping[str, ToolSpec], children: Mapping[int, Any] | None = None
) -> list[Problem]:
    """E_UNGUARDED_FLOW for each untrusted flow into a sensitive parameter without a guard."""
    return [_problem(f) for f in plan_flows(model, tools, children) if f.unguarded_risk]


def _problem(f: Flow) -> Problem:
    if f.via.startswith("plan "):
        fix = (
            f"add a guard on {f.param!r} to that precondition of the nested plan and pin its "
            "new hash, or fill this input with data that is not outside data"
        )
    elif "/" in str(f.action):
        fix = (
            f"add a guard on {f.param!r} to action {str(f.action).split('/', 1)[1]} of the "
            "nested plan and pin its new hash, or fill this input with data that is not "
            "outside data"
        )
    elif f.via:
        fix = (
            f'add `guards: [{{param: {f.param}, matches: "^...$"}}]` (or one_of/min/max) to '
            f"this {f.via.split('[')[0].removesuffix('s')}"
        )
    else:
        fix = (
            f'add `guards: [{{param: {f.param}, matches: "^...$"}}]` (or one_of/min/max) to '
            "this action"
        )
    where = ""
    if f.via or "/" in str(f.action):
        check = f", {f.via.split('[')[0].removesuffix('s')}" if f.via else ""
        where = f" (action {f.action}{check})"
    return Problem(
        "E_UNGUARDED_FLOW",
        f"untrusted data from action {f.origin} ({f.source}) reaches sensitive param "
        f"{f.param!r} of tool {f.tool!r}{where} without a guard; {fix}, "
        "so the reviewer approves what values may reach it",
        f.where,
    )


def has_untrusted_to_sensitive(
    model: Any, tools: Mapping[str, ToolSpec], children: Mapping[int, Any] | None = None
) -> bool:
    """Whether any untrusted flow reaches a sensitive param (guarded or not): what a policy
    rule ``match: {flows: untrusted_to_sensitive}`` looks for."""
    return any(not f.trusted and f.sensitive for f in plan_flows(model, tools, children))


def untrusted_to_sensitive_in_data(
    data: Any, tools: Mapping[str, ToolSpec], children: Mapping[int, Any] | None = None
) -> bool:
    """:func:`has_untrusted_to_sensitive` over a plan's parsed data (the policy reads plans
    as data: ``plangate check`` and the audit see files the schema may not accept yet);
    ``children``: the nested plans' data by parent action id."""
    model = _DataPlan.of(data)
    if model is None:
        return False
    kids = {k: m for k, v in (children or {}).items() if (m := _DataPlan.of(v)) is not None}
    return has_untrusted_to_sensitive(model, tools, kids)


# --- plans read as data: the attributes the analysis reads, whatever the file holds --------


@dataclass(frozen=True)
class _DataGuard:
    param: str


def _guards(value: Any) -> tuple[_DataGuard, ...]:
    items = value if isinstance(value, list) else []
    return tuple(_DataGuard(str(g.get("param"))) for g in items if isinstance(g, dict))


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


@dataclass(frozen=True)
class _DataCheck:
    tool: str | None
    params: dict[str, Any]
    guards: tuple[_DataGuard, ...]

    @classmethod
    def of(cls, value: Any) -> _DataCheck | None:
        if not isinstance(value, dict):
            return None
        tool = value.get("tool")
        return cls(
            str(tool) if tool is not None else None,
            _mapping(value.get("params")),
            _guards(value.get("guards")),
        )


@dataclass(frozen=True)
class _DataPin:
    path: str


@dataclass(frozen=True)
class _DataStep:
    """An action or fallback step as plain data."""

    id: Any
    tool: str
    params: dict[str, Any]
    guards: tuple[_DataGuard, ...]
    preconditions: tuple[_DataCheck, ...]
    verify: _DataCheck | None
    fallback: tuple[_DataStep, ...] = ()
    plan: _DataPin | None = None
    inputs: dict[str, Any] | None = None

    @classmethod
    def of(cls, action: dict[str, Any]) -> _DataStep:
        number = action.get("id")
        pres = action.get("preconditions")
        fallback = action.get("fallback")
        pin = action.get("plan")
        return cls(
            id=number if isinstance(number, int | str) and not isinstance(number, bool) else -1,
            tool=str(action.get("tool") or ""),
            params=_mapping(action.get("params")),
            guards=_guards(action.get("guards")),
            preconditions=tuple(
                c for c in map(_DataCheck.of, pres if isinstance(pres, list) else []) if c
            ),
            verify=_DataCheck.of(action.get("verify")),
            fallback=tuple(
                cls.of(f) for f in (fallback if isinstance(fallback, list) else [])
                if isinstance(f, dict)
            ),
            plan=_DataPin(str(pin.get("path"))) if isinstance(pin, dict) else None,
            inputs=_mapping(action.get("inputs")),
        )  # fmt: skip


@dataclass(frozen=True)
class _DataPlan:
    actions: list[_DataStep]
    preconditions: tuple[_DataCheck, ...] = ()

    @classmethod
    def of(cls, data: Any) -> _DataPlan | None:
        actions = data.get("actions") if isinstance(data, dict) else None
        if not isinstance(actions, list):
            return None
        pres = data.get("preconditions")
        checks = tuple(c for c in map(_DataCheck.of, pres if isinstance(pres, list) else []) if c)
        return cls([_DataStep.of(a) for a in actions if isinstance(a, dict)], checks)


def secrets_into_argv(data: Any, tools: Mapping[str, ToolSpec]) -> list[str]:
    """Warnings (``validate --config``), one per ``$<secrets.*>`` reference a plan places
    (whole, inside text, inside a list or mapping) into a param its ``exec`` tool's catalog
    ``argv`` takes as a ``{placeholder}``: an action's, a fallback step's, a precondition's
    or verify's check tool. The controller refuses such a call at run time, before anything
    starts (E_PARAMS_INVALID, round 128): a program's arguments are its command line, which
    every process on the host can read. A warning, not a problem: whether a value reaching
    argv holds a secret is known only when it is resolved (an output may carry one too), and
    a plan frozen by an older controller stays the plan it was. The plan read as data (as
    ``validate`` reads it); a nested plan is warned of when it is validated itself."""
    from controller.settings.toolspec import argv_params

    found: list[str] = []

    def call(label: str, via: str, call_data: Any) -> None:
        if not isinstance(call_data, dict):
            return
        name = call_data.get("tool")
        spec = tools.get(name) if isinstance(name, str) else None
        params = call_data.get("params")
        if spec is None or not isinstance(params, dict):
            return
        taken = argv_params(spec)
        for param in sorted(p for p in params if p in taken):
            refs_in = _refs_in(params[param])
            named = sorted({f"$<{_source(r)}>" for r in refs_in if r.root == "secrets"})
            if named:
                found.append(
                    f"{label}{via} ({name}): param {param!r} takes {', '.join(named)} into "
                    "the tool's argv, which every process on the host can read; the "
                    "controller refuses that call at run time (E_PARAMS_INVALID): give the "
                    "secret to a param the catalog does not place into argv (the tool reads "
                    "the params as JSON on stdin)"
                )

    def step(label: str, step_data: Any) -> None:
        if not isinstance(step_data, dict):
            return
        call(label, "", step_data)
        pres = step_data.get("preconditions")
        for k, pre in enumerate(pres if isinstance(pres, list) else ()):
            call(label, f" preconditions[{k}]", pre)
        call(label, " verify", step_data.get("verify"))

    actions = data.get("actions") if isinstance(data, dict) else None
    for action in actions if isinstance(actions, list) else ():
        if not isinstance(action, dict):
            continue
        label = f"action {action.get('id')}"
        step(label, action)
        fallback = action.get("fallback")
        for item in fallback if isinstance(fallback, list) else ():
            step(f"action {item.get('id') if isinstance(item, dict) else '?'}", item)
    return found
