"""The PLAN.yml model (SPEC §2) as pydantic v2 models, and its JSON Schema.

Structure and types only; rules that span fields (ids in order, declared tools, references,
catalog checks) live in :mod:`controller.plan.plans`. Unknown keys are refused everywhere except
inside ``metadata``, ``inputs`` and ``params``, so a typo such as ``on_faliure`` can never
silently change what runs.

The JSON Schema (:func:`json_schema`, ``plangate schema``) also says the shape rules that
span fields where JSON Schema can (round 61: an agent writes to it): each model's
``json_schema_extra`` is built from the constants its validator or the rules' check reads
(:mod:`controller.plan.shape`), and :data:`NOT_IN_SCHEMA` names what only ``validate``
checks. Every integer field is bounded as plain JSON data is (:class:`_PlanJsonSchema`, round
125).
"""

from typing import Annotated, Any, Literal, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    StringConstraints,
    Tag,
    ValidationError,
    model_serializer,
    model_validator,
)
from pydantic.json_schema import GenerateJsonSchema, JsonDict, JsonSchemaValue, JsonValue
from pydantic_core import core_schema

# The constants live where reading them costs no pydantic (issue 17); named here as before.
from controller.plan.shape import EXPECT_TAGS as EXPECT_TAGS
from controller.plan.shape import GUARD_RULES as GUARD_RULES
from controller.plan.shape import MAX_SAFE_INT as MAX_SAFE_INT
from controller.plan.shape import NAME_PATTERN as NAME_PATTERN
from controller.plan.shape import NESTED_NOT_EMPTY as NESTED_NOT_EMPTY
from controller.plan.shape import NESTED_NOT_FAILING as NESTED_NOT_FAILING
from controller.plan.shape import NESTED_NOT_GIVEN as NESTED_NOT_GIVEN
from controller.plan.shape import QUERY_START as QUERY_START
from controller.plan.shape import REF_IN_TEXT as REF_IN_TEXT
from controller.plan.shape import RETRY_KEYS as RETRY_KEYS
from controller.plan.shape import STATUSES as STATUSES
from controller.plan.shape import SUPPORTED_VERSION as SUPPORTED_VERSION
from controller.plan.shape import OnFailure, PlanOnFailure, Status

FallbackOnFailure = Literal["stop", "skip", "retry"]
#: Tries after the first when neither ``retry:`` nor ``retries:`` says (with on_failure: retry).
DEFAULT_RETRIES = 3
HASH_PATTERN = r"^sha256:[0-9a-f]{64}$"
#: A duration as controller.settings.parse_duration reads it (seconds, or with s/m/h/d/w).
DURATION = r"^\s*[0-9]+(?:\.[0-9]+)?\s*[smhdw]?\s*$"
#: A name a reference reads one way (round 56): an output's and an input key alike, since
#: ``$<inputs.a.b>`` would read an input ``a.b`` as input ``a``'s ``b``.
Name = Annotated[str, StringConstraints(pattern=NAME_PATTERN)]
#: Keys a reference can name: ``propertyNames`` in the JSON Schema (pydantic writes a key
#: pattern as ``patternProperties``, which lets any other key through).
NamedKeys = Annotated[
    dict[Name, Any], Field(json_schema_extra={"propertyNames": {"pattern": NAME_PATTERN}})
]
#: Where ``$<...>`` references are resolved (params, a nested plan's inputs): no mapping key
#: holds one, at any depth (rules._keys_with_refs, E_REF_INVALID): the JSON Schema's
#: ``$defs`` entry of that name, added by :func:`json_schema` (round 62).
REF_FREE_KEYS = "RefFreeKeys"
_REF_FREE_REF: JsonDict = {"$ref": f"#/$defs/{REF_FREE_KEYS}"}
#: A field's mark, made that $ref by json_schema(): pydantic resolves every $ref it writes
#: against its own models' definitions.
_REF_FREE_MARK: JsonDict = {"$comment": REF_FREE_KEYS}
_REF_FREE: JsonDict = {"allOf": [_REF_FREE_MARK]}
#: Lists whose entries are declared once by name (plans._check_tools, _check_outputs): JSON
#: Schema can refuse only two equal entries; two of one name otherwise is in NOT_IN_SCHEMA.
_ONCE: JsonDict = {"uniqueItems": True}


# --- the rules across fields, in the JSON Schema ------------------------------------------
# A model's validator (or a rule of plans.py that refuses the shape with E_SCHEMA_INVALID)
# and its JSON Schema read the same constants here, so the published schema (``plangate
# schema``) refuses what ``validate`` refuses wherever JSON Schema can say it (round 61).
# The rest is in json_schema()'s description and docs/plan-format.md.


def _given(key: str) -> JsonDict:
    """``key`` is written and not null: how the validators read "given" (``is not None``)."""
    return {"required": [key], "properties": {key: {"not": {"type": "null"}}}}


def _is(key: str, value: JsonValue) -> JsonDict:
    return {"required": [key], "properties": {key: {"const": value}}}


def _any_given(keys: tuple[str, ...]) -> JsonDict:
    return {"anyOf": [_given(key) for key in keys]}


def _not_empty(key: str) -> JsonDict:
    """``key`` is a mapping or a list with something in it (Python's truth of the value)."""
    return {"required": [key], "properties": {key: {"minProperties": 1, "minItems": 1}}}


def _each_action(rule: JsonDict) -> JsonDict:
    return {"properties": {"actions": {"items": rule}}}


#: retry:/retries: only count with on_failure: retry (rules._retry_settings).
_RETRY_NEEDS_RETRY: JsonDict = {"if": _any_given(RETRY_KEYS), "then": _is("on_failure", "retry")}
_ONE_RETRY: JsonDict = {"not": {"allOf": [_given(key) for key in RETRY_KEYS]}}
#: A nested plan's action takes none of a tool call's keys (nested._shape).
_NESTED_STEP: JsonDict = {
    "not": {
        "anyOf": [
            *(_not_empty(k) for k in NESTED_NOT_EMPTY),
            *(_given(k) for k in NESTED_NOT_GIVEN),
            {
                "required": ["verify"],
                "properties": {"verify": {"type": "object", **_given("tool")}},
            },
        ]
    },
    "properties": {"on_failure": {"not": {"enum": list(NESTED_NOT_FAILING)}}},
}
#: fallback: steps and on_failure: fallback go together (rules._fallbacks).
_HAS_STEPS: JsonDict = {"required": ["fallback"], "properties": {"fallback": {"minItems": 1}}}


def _no_items() -> list[Any]:
    """A fresh empty list. Default factories are Python functions, not ``list``/``dict``:
    pydantic reads each factory's signature, and a builtin's costs importing and compiling
    the tokenizer (about 8 ms of every ``plangate validate``)."""
    return []


def _no_keys() -> dict[str, Any]:
    """A fresh empty mapping (see :func:`_no_items`)."""
    return {}


class _Strict(BaseModel):
    # defer_build: a model's validator is built on its first use, not at import; the whole
    # plan's tree is then built once, as part of PlanDocument's (about 4 ms of every start).
    model_config = ConfigDict(extra="forbid", strict=True, defer_build=True)


_M = TypeVar("_M", bound=_Strict)
OPERATORS = ("equals", "not_equals", "in_", "matches")


class PlanHeader(_Strict):
    """The ``plan:`` block: what the plan is for and where it is in its lifecycle."""

    name: str = Field(min_length=1, description="Short human-readable name.")
    task: str = Field(min_length=1, description="What the plan does and why.")
    status: Status = Field(description="Lifecycle state (SPEC §4).")
    created: str | None = Field(None, description="Creation time (not hashed). Quote it.")
    version: int | None = Field(
        None,
        ge=1,
        le=SUPPORTED_VERSION,
        description=f"Plan format version: only {SUPPORTED_VERSION} exists.",
    )


class AvailableTool(_Strict):
    """A tool the plan may call; it must also be in the controller's catalog to run."""

    name: str = Field(pattern=NAME_PATTERN)
    description: str = ""


class Output(_Strict):
    """A value captured from the tool's result with an RFC 9535 JSONPath query."""

    name: Name
    path: str = Field(
        min_length=1,
        description="RFC 9535 JSONPath over the tool's result, e.g. $.id",
        json_schema_extra={"pattern": QUERY_START},
    )
    optional: bool = Field(False, description="No match is not an error (later refs fail).")


class Guard(_Strict):
    """What values a parameter may take at run time (SPEC §16); all given rules must hold."""

    model_config = ConfigDict(json_schema_extra=_any_given(GUARD_RULES))

    param: str = Field(min_length=1, description="The parameter it guards (a key of params).")
    matches: str | None = Field(
        None, description="A regular expression the whole value must match."
    )
    one_of: list[Any] | None = Field(None, min_length=1, description="The allowed values.")
    min: float | None = Field(None, description="The smallest number allowed.")
    max: float | None = Field(None, description="The largest number allowed.")


class Expect(_Strict):
    """One condition over a JSON value: an RFC 9535 query and exactly one comparison."""

    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        populate_by_name=True,
        json_schema_extra={"oneOf": [{"required": [k.rstrip("_")]} for k in OPERATORS]},
    )

    path: str = Field(
        min_length=1,
        description="RFC 9535 JSONPath, e.g. $.status",
        json_schema_extra={"pattern": QUERY_START},
    )
    equals: Any = Field(None, description="The query's value equals this.")
    not_equals: Any = Field(None, description="The query's value differs from this.")
    in_: list[Any] | None = Field(None, alias="in", description="The value is one of these.")
    matches: str | None = Field(None, description="The value is a string matching this regex.")

    @model_validator(mode="after")
    def _one_operator(self) -> "Expect":
        given = [k for k in OPERATORS if k in self.model_fields_set]
        if len(given) != 1:
            raise ValueError("write exactly one of equals, not_equals, in, matches")
        return self

    @model_serializer(mode="plain")
    def _as_written(self) -> dict[str, Any]:
        """Only the query and the comparison given (``equals: null`` stays, others go)."""
        name, value = self.operator
        return {"path": self.path, name: value}

    @property
    def operator(self) -> tuple[str, Any]:
        """(``equals`` | ``not_equals`` | ``in`` | ``matches``, the value to compare with)."""
        name = next(k for k in OPERATORS if k in self.model_fields_set)
        return name.rstrip("_"), getattr(self, name)


ExpectClause = Annotated[
    Annotated[Expect, Tag("expect-one")]
    | Annotated[list[Expect], Field(min_length=1), Tag("expect-all")],
    Discriminator(lambda v: "expect-all" if isinstance(v, list) else "expect-one"),
]


class Precondition(_Strict):
    """A check tool called before an action (or the plan) runs; its result must meet expect."""

    tool: str = Field(min_length=1, description="An idempotent, low-risk catalog tool.")
    params: dict[str, Any] = Field(default_factory=_no_keys, json_schema_extra=_REF_FREE)
    expect: ExpectClause
    guards: list[Guard] = Field(
        default_factory=_no_items,
        description="Checks on its resolved params before the check tool runs (E_GUARD_FAILED).",
    )


class Verify(_Strict):
    """After the action succeeded: expect over its result, or poll a check tool until it holds."""

    model_config = ConfigDict(
        json_schema_extra={
            "if": {"not": _given("tool")},
            "then": {
                "not": {
                    "anyOf": [
                        _not_empty("params"),
                        _given("timeout"),
                        _given("interval"),
                        _not_empty("guards"),
                    ]
                }
            },
        }
    )

    tool: str | None = Field(None, min_length=1, description="Poll this check tool.")
    params: dict[str, Any] = Field(default_factory=_no_keys, json_schema_extra=_REF_FREE)
    expect: ExpectClause
    timeout: float | None = Field(None, gt=0, le=86400, description="Seconds to keep polling.")
    interval: float | None = Field(None, gt=0, le=3600, description="Seconds between polls.")
    guards: list[Guard] = Field(
        default_factory=_no_items,
        description="Checks on the verify tool's resolved params before each poll.",
    )

    @model_validator(mode="after")
    def _tool_only(self) -> "Verify":
        if self.tool is None and (self.params or self.timeout or self.interval or self.guards):
            raise ValueError("params, timeout, interval and guards need a verify tool")
        return self


class Retry(_Strict):
    """How ``on_failure: retry`` tries again: each wait is delay × backoff^n, capped."""

    attempts: int = Field(DEFAULT_RETRIES, ge=0, le=100, description="Tries after the first.")
    delay: float = Field(1.0, ge=0, le=3600, description="Seconds before the first retry.")
    max_delay: float = Field(60.0, ge=0, le=86400, description="Longest single wait.")
    backoff: float = Field(2.0, ge=1, le=10, description="Factor between waits.")


class _Step(_Strict):
    """What an action and a fallback step share."""

    why: str = Field(min_length=1, description="The intent, for reviewers and auditors.")
    params: dict[str, Any] = Field(default_factory=_no_keys, json_schema_extra=_REF_FREE)
    retries: int | None = Field(None, ge=0, le=100, description="Legacy: retry.attempts.")
    retry: Retry | None = None
    timeout: float | None = Field(None, gt=0, le=86400)
    idempotent: bool | None = Field(
        None, description="false overrides a catalog idempotent: true (never the reverse)."
    )
    guards: list[Guard] = Field(
        default_factory=_no_items,
        description="Checks on resolved params before the tool runs (E_GUARD_FAILED).",
    )

    @model_validator(mode="after")
    def _one_retry(self) -> "_Step":
        if self.retries is not None and self.retry is not None:
            raise ValueError("write retry: {attempts: N} or the older retries: N, not both")
        return self

    def retry_policy(self, delay: float = 1.0, max_delay: float = 60.0) -> Retry:
        """The retry settings; the older ``retries:`` gets the engine's default waits."""
        if self.retry is not None:
            return self.retry
        attempts = DEFAULT_RETRIES if self.retries is None else self.retries
        return Retry(attempts=attempts, delay=delay, max_delay=max_delay, backoff=2.0)


class FallbackStep(_Step):
    """A step run, in order, instead of an action that failed (``on_failure: fallback``)."""

    model_config = ConfigDict(json_schema_extra={"allOf": [_ONE_RETRY, _RETRY_NEEDS_RETRY]})

    id: str = Field(pattern=r"^[1-9][0-9]*\.[1-9][0-9]*$", description='"<action id>.<n>"')
    tool: str = Field(min_length=1)
    on_failure: FallbackOnFailure = "stop"
    requires_approval: bool = Field(
        False,
        description="Must stay false: a fallback step cannot be gated (E_SCHEMA_INVALID).",
        json_schema_extra={"const": False},
    )
    outputs: list[Output] = Field(default_factory=_no_items, json_schema_extra=_ONCE)
    preconditions: list[Precondition] = Field(default_factory=_no_items)
    verify: Verify | None = None


class NestedPlan(_Strict):
    """Another plan run as one action, pinned to the version with this hash."""

    path: str = Field(min_length=1, description="The plan folder, relative to the repo.")
    hash: str = Field(pattern=HASH_PATTERN, description="Its frozen hash: exactly this runs.")


class Action(_Step):
    """One tool call (or nested plan) of the frozen plan."""

    model_config = ConfigDict(
        json_schema_extra={
            "allOf": [
                {"oneOf": [_given("tool"), _given("plan")]},  # _tool_or_plan
                {"if": _given("inputs"), "then": _given("plan")},
                {"if": _given("plan"), "then": _NESTED_STEP},
                {"if": _is("on_failure", "fallback"), "then": _HAS_STEPS},
                {"if": _HAS_STEPS, "then": _is("on_failure", "fallback")},
                _ONE_RETRY,
                # its own on_failure, when written; without, the plan's (PlanDocument)
                {
                    "if": _any_given(RETRY_KEYS),
                    "then": {"properties": {"on_failure": {"enum": ["retry", None]}}},
                },
            ]
        }
    )

    id: int = Field(ge=1, description="1..N in file order.")
    tool: str | None = Field(None, min_length=1)
    plan: NestedPlan | None = None
    inputs: NamedKeys | None = Field(
        None, description="A nested plan's inputs.", json_schema_extra=_REF_FREE
    )
    needs: list[int] | None = Field(None, description="Actions that must end first (a graph).")
    outputs: list[Output] = Field(default_factory=_no_items, json_schema_extra=_ONCE)
    on_failure: OnFailure | None = Field(None, description="Default: the plan's on_failure.")
    requires_approval: bool = False
    preconditions: list[Precondition] = Field(default_factory=_no_items)
    verify: Verify | None = None
    fallback: list[FallbackStep] = Field(default_factory=_no_items)

    @model_validator(mode="after")
    def _tool_or_plan(self) -> "Action":
        if (self.tool is None) == (self.plan is None):
            raise ValueError("write either tool: or plan: (a nested plan), not both or neither")
        if self.inputs is not None and self.plan is None:
            raise ValueError("inputs: is for a nested plan (plan:)")
        return self


class Frozen(_Strict):
    """Written by the controller when it freezes the plan (not hashed)."""

    hash: str = Field(pattern=HASH_PATTERN)
    at: str
    risk: Literal["low", "medium", "high"] | None = Field(
        None, description="The highest risk of the plan's tools, from the catalog at freeze."
    )
    estimate: dict[str, float] | None = Field(
        None, description="{seconds, cost_usd}: the sum over its calls, retries at maximum."
    )
    policy: dict[str, Any] | None = Field(
        None, description="The approvals the policy required at freeze: {rule, require}."
    )


class PlanLimits(_Strict):
    """Caps the plan sets for itself (hashed); the config's ``limits:`` apply too, the
    smaller wins."""

    max_actions: int | None = Field(None, ge=1)
    max_tool_calls: int | None = Field(None, ge=1, description="Tool calls, retries included.")
    max_cost_usd: float | None = Field(None, ge=0, description="Highest estimated cost.")
    max_runtime: Annotated[float, Field(gt=0)] | Annotated[str, Field(pattern=DURATION)] | None = (
        Field(None, description="Seconds, or a duration such as 90s, 15m, 2h, 1d, a run may take.")
    )


class PlanDocument(_Strict):
    """A whole PLAN.yml."""

    # an action without on_failure fails as the plan does: retries need the plan's retry,
    # and a nested plan's action its own on_failure when the plan's would be retry or ask
    model_config = ConfigDict(
        json_schema_extra={
            "allOf": [
                {
                    "if": {"not": _is("on_failure", "retry")},
                    "then": _each_action(
                        {"if": _any_given(RETRY_KEYS), "then": _given("on_failure")}
                    ),
                },
                {
                    "if": {
                        "required": ["on_failure"],
                        "properties": {"on_failure": {"enum": list(NESTED_NOT_FAILING)}},
                    },
                    "then": _each_action({"if": _given("plan"), "then": _given("on_failure")}),
                },
            ]
        }
    )

    plan: PlanHeader
    metadata: dict[str, Any] = Field(default_factory=_no_keys)
    inputs: NamedKeys = Field(default_factory=_no_keys)
    available_tools: list[AvailableTool] = Field(default_factory=_no_items, json_schema_extra=_ONCE)
    preconditions: list[Precondition] = Field(
        default_factory=_no_items, description="All must hold before the first action runs."
    )
    on_failure: PlanOnFailure = Field("stop", description="Default on_failure of the actions.")
    actions: list[Action] = Field(min_length=1)
    limits: PlanLimits | None = None
    frozen: Frozen | None = None
    approval: dict[str, Any] | None = None
    execution: dict[str, Any] | None = None
    validation: dict[str, Any] | None = None


def parse_document(data: Any) -> tuple[PlanDocument | None, list[dict[str, Any]]]:
    """The model, or the pydantic error records (``loc``, ``type``, ``msg``)."""
    try:
        return PlanDocument.model_validate(data), []
    except ValidationError as exc:
        return None, [dict(e) for e in exc.errors(include_url=False)]


def salvage_document(data: Any) -> PlanDocument | None:
    """A model of the parts of an invalid document that have the right shape.

    Used only to run the cross-field rules (ids, tools, references, catalog params) on a
    document that failed the schema, so that ``validate`` reports every kind of error in
    one run. A field that does not validate is left out (a required one gets a neutral
    placeholder); the schema errors already name it. Never used to freeze or run anything.
    """
    if not isinstance(data, dict):
        return None
    actions = data.get("actions")
    salvaged = [
        _salvage(Action, _salvage_parts(raw), {"id": index + 1, "tool": "", "why": "-"})
        for index, raw in enumerate(actions if isinstance(actions, list) else [])
    ]
    tools = data.get("available_tools")
    header = {"name": "-", "task": "-", "status": "draft"}
    inputs = data.get("inputs")
    return PlanDocument.model_construct(
        plan=_salvage(PlanHeader, data.get("plan"), header) or PlanHeader.model_validate(header),
        inputs=inputs if isinstance(inputs, dict) else {},
        available_tools=[
            t
            for t in (
                # a bare name (reported by the schema) still declares it for the rules
                _salvage(AvailableTool, {"name": raw} if isinstance(raw, str) else raw, None)
                for raw in (tools if isinstance(tools, list) else [])
            )
            if t is not None
        ],
        actions=[a for a in salvaged if a is not None],
    )


def _salvage_parts(raw: Any) -> Any:
    """An action with its outputs and guards salvaged one by one (one bad output must not
    hide the others from the reference checks)."""
    if not isinstance(raw, dict):
        return raw
    parts: dict[str, Any] = dict(raw)
    for key, model in (("outputs", Output), ("guards", Guard)):
        items = raw.get(key)
        if isinstance(items, list):
            found = (_salvage(model, item, {}) for item in items)
            parts[key] = [item for item in found if item is not None]
    return parts


def _salvage(model: type[_M], raw: Any, placeholders: dict[str, Any] | None) -> _M | None:
    """``model`` from ``raw`` with each failing field dropped or set to its placeholder;
    None when ``raw`` is not a mapping or, without placeholders, does not validate."""
    if not isinstance(raw, dict):
        return None
    values = {k: v for k, v in raw.items() if k in model.model_fields}
    for _ in range(len(model.model_fields) + 1):
        try:
            return model.model_validate(values)
        except ValidationError as exc:
            if placeholders is None:
                return None
            for key in {str(e["loc"][0]) for e in exc.errors() if e["loc"]}:
                values.pop(key, None)
                if key in placeholders:
                    values[key] = placeholders[key]
    return None


def allowed_keys(loc: tuple[Any, ...]) -> list[str]:
    """The keys allowed in the mapping at ``loc`` (for "did you mean" hints)."""
    model: type[BaseModel] = PlanDocument
    for part in loc:
        if isinstance(part, int):
            continue
        field = model.model_fields.get(str(part))
        inner = _model_of(field.annotation) if field else None
        if inner is None:
            return []
        model = inner
    return list(model.model_fields)


def _model_of(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()):
        found = _model_of(arg)
        if found:
            return found
    return None


class _PlanJsonSchema(GenerateJsonSchema):
    """pydantic's JSON Schema, every integer field within ±(2^53−1): the rule of plain JSON
    data ``validate`` reads in every value (plans.non_json_problems), said where JSON Schema
    can say it, on each field the models type ``int`` (round 125: ``limits.max_actions:
    1e20``, an action's ``id: 1e300``; JSON Schema counts both integers). A field's own
    tighter bound stays."""

    def int_schema(self, schema: core_schema.IntSchema) -> JsonSchemaValue:
        out = super().int_schema(schema)
        if out.get("exclusiveMaximum", MAX_SAFE_INT + 2) > MAX_SAFE_INT + 1:
            out["maximum"] = min(out.get("maximum", MAX_SAFE_INT), MAX_SAFE_INT)
        if out.get("exclusiveMinimum", -MAX_SAFE_INT - 2) < -MAX_SAFE_INT - 1:
            out["minimum"] = max(out.get("minimum", -MAX_SAFE_INT), -MAX_SAFE_INT)
        return out


def json_schema() -> dict[str, Any]:
    """JSON Schema of PLAN.yml, for editors (yaml-language-server) and other tools."""
    schema = PlanDocument.model_json_schema(schema_generator=_PlanJsonSchema)
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "plangate PLAN.yml"
    schema["description"] = f"A whole PLAN.yml. {NOT_IN_SCHEMA}"
    schema = _marks_as_refs(schema)
    schema.setdefault("$defs", {})[REF_FREE_KEYS] = {
        "description": "No mapping key holds a $<...> reference (write $$< for the text $<).",
        "propertyNames": {"not": {"pattern": REF_IN_TEXT}},
        "additionalProperties": _REF_FREE_REF,
        "items": _REF_FREE_REF,
    }
    return schema


def _marks_as_refs(node: Any) -> Any:
    """``node`` with each :data:`_REF_FREE_MARK` made the $ref to its definition."""
    if node == _REF_FREE_MARK:
        return dict(_REF_FREE_REF)
    if isinstance(node, dict):
        return {key: _marks_as_refs(value) for key, value in node.items()}
    if isinstance(node, list):
        return [_marks_as_refs(value) for value in node]
    return node


#: What ``plangate validate`` checks that JSON Schema cannot say (docs/plan-format.md).
NOT_IN_SCHEMA = (
    "`plangate validate` also checks what JSON Schema cannot say: action ids are 1..N in file "
    "order and fallback ids <id>.1, .2, ...; every tool is in available_tools (and the "
    "controller's catalog, whose params_schema checks the params of every tool call: an "
    "action, a fallback step, a check; a $<...> reference stands for any value at any depth, "
    "in an action's params a legacy ${inputs.x} too, $$< is the text $<); a check tool "
    "(verify, preconditions) is a catalog tool marked idempotent: true and risk: low (with "
    "--config the schema says these two); references $<...> name outputs of actions the step "
    "needs, declared inputs, and no cycle; a guard's param is a key of its step's params, its "
    "bounds or values can pass and its matches compiles; "
    "output paths and expect paths are RFC 9535 JSONPath queries (the schema checks that "
    "they start with $) and expect matches an I-Regexp; tool names in available_tools and "
    "output names in each outputs list are unique (the schema refuses only two equal "
    "entries); references are resolved in values, never in params keys (refused here at "
    "any depth); idempotent: true cannot override a catalog tool that is not idempotent; "
    "an integer beyond ±(2^53-1) in free data (params, inputs, metadata, a guard's bounds: "
    "JSON Schema counts 1e20 an integer; the schema bounds every integer field); the size "
    "limits."
)
