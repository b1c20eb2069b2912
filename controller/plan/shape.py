"""The usual plan's shape, checked without pydantic (issue 17: ``plangate validate`` start-up).

:mod:`controller.plan.schema` is the plan's schema: pydantic models, whose import and
first build are most of a short ``validate`` (about 100 ms of 150). Most plans use a
small part of it: actions with a tool, params and outputs. :func:`plain_document` checks
that part in plain Python and returns read-only stand-ins of the models with the same
attributes and defaults, so the rules across fields (:func:`controller.plan.plans.
check_rules`) run on them unchanged.

It never reports an error itself: anything outside that part, or anything the schema
would refuse, returns None and the document goes through the pydantic models, which give
every ``E_...`` problem as before. It is only ever a "yes, the schema accepts this"
answered faster; ``tests/plan/test_shape.py`` checks it against the models.

The constants here are the schema's (it imports them from this module), so that reading
them costs no pydantic either. So are the rules a tool call's params meet that both
``validate --config`` and ``schema --config`` read (round 63): what a reference is
(:data:`REFERENCE_VALUE`, :func:`with_references`) and which tools may check
(:func:`can_check`).
"""

from __future__ import annotations

import re
from typing import Any, Literal, get_args
from urllib.parse import unquote, urldefrag, urljoin

from controller.plan import schemarefs

SUPPORTED_VERSION = 1
#: The largest integer plain JSON data holds exactly (RFC 8785 hashes a double): validate
#: refuses any integer beyond ±MAX_SAFE_INT; the schema bounds every integer field with it.
MAX_SAFE_INT = 2**53 - 1
Status = Literal[
    "draft",
    "pending_approval",
    "invalid",
    "approved",
    "rejected",
    "executing",
    "awaiting_approval",
    "completed",
    "failed",
    "aborted",
]
OnFailure = Literal["stop", "skip", "retry", "fallback", "ask"]
PlanOnFailure = Literal["stop", "skip", "retry", "ask"]
#: The same as tuples, for plain checks (the schema's models use the Literal types).
STATUSES: tuple[str, ...] = get_args(Status)
ON_FAILURE: tuple[str, ...] = get_args(OnFailure)
PLAN_ON_FAILURE: tuple[str, ...] = get_args(PlanOnFailure)
#: Tags of the two forms of ``expect`` (dropped from error locations, see plans.py).
EXPECT_TAGS = ("expect-one", "expect-all")
NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_-]*$"
#: A guard's rules: a guard gives at least one (schema.py's JSON Schema and guards.py).
GUARD_RULES = ("matches", "one_of", "min", "max")
#: The keys that set a step's retries: they only count with ``on_failure: retry``.
RETRY_KEYS = ("retry", "retries")
#: What a nested plan's action (``plan:``) may not have: tool-call keys, and the failure
#: modes its own actions take (nested.py's checks and schema.py's JSON Schema).
NESTED_NOT_EMPTY = ("params", "preconditions", "guards")
NESTED_NOT_GIVEN = ("timeout", "idempotent")
NESTED_NOT_FAILING = ("retry", "ask")
#: How every RFC 9535 query starts: the root ``$``, then nothing, blank space, ``.`` or ``[``
#: (the grammar's prefix; jsonpaths.query_problem refuses whatever does not match it, as
#: tests/plan/test_jsonpaths.py checks). The schema's ``pattern`` for output and ``expect``
#: paths (round 62); read alike by ECMA-262 and Python (a final line break is matched by the
#: class, never by ``$`` alone).
QUERY_START = r"^\$(?:[ \t\n\r.\[]|$)"
#: A ``$<`` not written ``$$<``: text the resolver reads as a reference (a malformed one
#: counts). Mapping keys never hold one (rules._keys_with_refs; the schema's
#: ``propertyNames`` for params, round 62): keys are used as written, never resolved.
REF_IN_TEXT = r"(?:^|[^$])\$<"
#: A value written where a tool's param goes that holds a reference: it stands for any value
#: (known at run time, checked then), at any depth of a structured param: the ``--config``
#: schema and validate (plans.static_params_errors) both check params against
#: :func:`with_references` of the tool's ``params_schema``, and both read REF_IN_TEXT, so
#: ``$$<`` (the text ``$<``) is no reference and is checked as text (round 63).
REFERENCE_VALUE: dict[str, Any] = {"type": "string", "pattern": REF_IN_TEXT}
#: A legacy reference the freeze rewrites to ``$<...>`` in an action's params, whole
#: (:func:`controller.plan.refs.convert_legacy`: ``${inputs.x}``, ``${plan.x}``,
#: ``${approval.x}``, ``${actions[N].outputs.x}``, the reference grammar's segments, no brace
#: inside), not written after a ``$`` (``$${`` is refused, refs.legacy_uncarried). Written
#: for ECMA-262 and Python alike; tests/plan/test_refs.py checks it against the rewrite.
LEGACY_REF_IN_TEXT = (
    r"(?:^|[^$])\$\{(?:actions\[[0-9]+\]|inputs|plan|approval)"
    r"(?:\.[A-Za-z_][A-Za-z0-9_-]*|\[[0-9]+\]"
    r"|\['(?:(?!'\])[^{}])*'\]"
    r'|\["(?:(?!"\])[^{}])*"\])*'
    r"\}"
)
#: The reference of an action's params, where validate reads a legacy ``${...}`` as the
#: reference the freeze makes of it ("checks such a plan as if converted",
#: plans.convert_legacy_params): the ``--config`` schema's action branches (round 125). A
#: fallback step's or a check's params are not converted: :data:`REFERENCE_VALUE` there.
ACTION_REFERENCE_VALUE: dict[str, Any] = {
    "type": "string",
    "pattern": f"{REF_IN_TEXT}|{LEGACY_REF_IN_TEXT}",
}
#: Keywords whose subschemas check a part of the value (a property, an item): a reference
#: may stand for that part. Subschemas of the keywords in _SAME_VALUE check the value itself.
_PART_ONE = ("additionalProperties", "unevaluatedProperties", "items", "additionalItems")
_PART_ONE_MORE = ("contains", "unevaluatedItems")
_PART_MAPS = ("properties", "patternProperties")
_SAME_VALUE_LISTS = ("allOf", "anyOf", "oneOf")
_SAME_VALUE_ONE = ("if", "then", "else")
_SAME_VALUE_MAPS = ("dependentSchemas", "$defs", "definitions")
#: A check tool (verify, preconditions) is idempotent and of this risk (rules.
#: check_tool_problems, E_CHECK_TOOL; the ``--config`` schema's enum of check tools).
CHECK_TOOL_RISK = "low"
#: NAME_PATTERN as the schema's regex engine reads it: ``$`` is the very end (Python's
#: ``$`` would also match before a final line break), hence fullmatch without anchors.
_NAME = re.compile(NAME_PATTERN[1:-1])

# The keys handled here, a subset of each model's fields: any other key goes to pydantic.
PLAN_KEYS = frozenset({"plan", "metadata", "inputs", "available_tools", "on_failure", "actions"})
HEADER_KEYS = frozenset({"name", "task", "status", "created", "version"})
TOOL_KEYS = frozenset({"name", "description"})
ACTION_KEYS = frozenset(
    {"id", "tool", "why", "params", "needs", "outputs", "on_failure", "requires_approval"}
    | {"idempotent"}
)
OUTPUT_KEYS = frozenset({"name", "path", "optional"})


class Plain:
    """A stand-in of a schema model: its fields as attributes (``fields``: those given)."""

    def __init__(self, **values: Any) -> None:
        self.__dict__.update(values)

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in self.__dict__.items())
        return f"{type(self).__name__}({inner})"


class PlainHeader(Plain):
    name: str
    task: str
    status: str
    created: str | None
    version: int | None


class PlainTool(Plain):
    name: str
    description: str


class PlainOutput(Plain):
    name: str
    path: str
    optional: bool


class PlainAction(Plain):
    """An action of the usual form: a tool call with params and outputs."""

    id: int
    tool: str
    why: str
    params: dict[str, Any]
    outputs: list[PlainOutput]


class PlainDocument(Plain):
    plan: PlainHeader
    metadata: dict[str, Any]
    inputs: dict[str, Any]
    available_tools: list[PlainTool]
    actions: list[PlainAction]
    on_failure: str


def _text(value: Any, min_length: int = 0) -> bool:
    return type(value) is str and len(value) >= min_length


def _mapping(value: Any) -> bool:
    """``dict[str, Any]`` in strict mode: a dict with string keys."""
    return type(value) is dict and all(type(k) is str for k in value)


def _name(value: Any) -> bool:
    return type(value) is str and _NAME.fullmatch(value) is not None


def _header(raw: Any) -> PlainHeader | None:
    if type(raw) is not dict or not raw.keys() <= HEADER_KEYS:
        return None
    name, task, status = raw.get("name"), raw.get("task"), raw.get("status")
    created, version = raw.get("created"), raw.get("version")
    if not (_text(name, 1) and _text(task, 1) and type(status) is str and status in STATUSES):
        return None
    if not (created is None or _text(created)):
        return None
    if not (version is None or (type(version) is int and 1 <= version <= SUPPORTED_VERSION)):
        return None
    return PlainHeader(name=name, task=task, status=status, created=created, version=version)


def _tool(raw: Any) -> PlainTool | None:
    if type(raw) is not dict or not raw.keys() <= TOOL_KEYS or not _name(raw.get("name")):
        return None
    description = raw.get("description", "")
    if not _text(description):
        return None
    return PlainTool(name=raw["name"], description=description)


def _output(raw: Any) -> PlainOutput | None:
    if type(raw) is not dict or not raw.keys() <= OUTPUT_KEYS:
        return None
    name, path, optional = raw.get("name"), raw.get("path"), raw.get("optional", False)
    if not (_name(name) and _text(path, 1) and type(optional) is bool):
        return None
    return PlainOutput(name=name, path=path, optional=optional)


def _action(raw: Any) -> PlainAction | None:
    if type(raw) is not dict or not raw.keys() <= ACTION_KEYS:
        return None
    ident, tool, why = raw.get("id"), raw.get("tool"), raw.get("why")
    if not (type(ident) is int and ident >= 1 and _text(tool, 1) and _text(why, 1)):
        return None
    params = raw.get("params", {})
    needs = raw.get("needs")
    on_failure = raw.get("on_failure")
    requires_approval = raw.get("requires_approval", False)
    idempotent = raw.get("idempotent")
    outputs_raw = raw.get("outputs", [])
    if not (
        _mapping(params)
        and (needs is None or (type(needs) is list and all(type(n) is int for n in needs)))
        and (on_failure is None or (type(on_failure) is str and on_failure in ON_FAILURE))
        and type(requires_approval) is bool
        and (idempotent is None or type(idempotent) is bool)
        and type(outputs_raw) is list
    ):
        return None
    outputs = [_output(o) for o in outputs_raw]
    if any(o is None for o in outputs):
        return None
    return PlainAction(
        id=ident,
        tool=tool,
        why=why,
        params=dict(params),
        retries=None,
        retry=None,
        timeout=None,
        idempotent=idempotent,
        guards=[],
        plan=None,
        inputs=None,
        needs=list(needs) if needs is not None else None,
        outputs=outputs,
        on_failure=on_failure,
        requires_approval=requires_approval,
        preconditions=[],
        verify=None,
        fallback=[],
    )


def plain_document(data: Any) -> PlainDocument | None:
    """Stand-ins of the models the schema would build from ``data``, or None when ``data``
    uses a part of the schema not handled here or would not pass it."""
    if type(data) is not dict or not data.keys() <= PLAN_KEYS:
        return None
    header = _header(data.get("plan"))
    metadata, inputs = data.get("metadata", {}), data.get("inputs", {})
    tools_raw, actions_raw = data.get("available_tools", []), data.get("actions")
    on_failure = data.get("on_failure", "stop")
    if header is None or not (_mapping(metadata) and _mapping(inputs)):
        return None
    if not all(_name(key) for key in inputs):  # one rule for input keys and output names
        return None
    if type(on_failure) is not str or on_failure not in PLAN_ON_FAILURE:
        return None
    if type(tools_raw) is not list or type(actions_raw) is not list or not actions_raw:
        return None
    tools = [_tool(t) for t in tools_raw]
    actions = [_action(a) for a in actions_raw]
    if any(t is None for t in tools) or any(a is None for a in actions):
        return None
    return PlainDocument(
        plan=header,
        metadata=dict(metadata),
        inputs=dict(inputs),
        available_tools=tools,
        preconditions=[],
        on_failure=on_failure,
        actions=actions,
        limits=None,
        frozen=None,
        approval=None,
        execution=None,
        validation=None,
    )


def can_check(idempotent: bool, risk: str | None) -> bool:
    """Whether a catalog tool may be a check tool (no risk given counts as low)."""
    return idempotent and risk in (None, CHECK_TOOL_RISK)


def with_references(params_schema: Any, reference: dict[str, Any] = REFERENCE_VALUE) -> Any:
    """A tool's ``params_schema`` where ``reference`` may stand for any part of the params,
    at any depth: each subschema of a part becomes ``anyOf: [reference, it]``. ``false``
    stays (no reference makes an unexpected key expected) and ``not`` is kept as written (a
    reference read as text rarely meets what it refuses). The published schema's reference
    is :data:`REFERENCE_VALUE`; validate's, the strings it read as references (plans.py)."""
    if type(params_schema) is not dict:
        return params_schema
    return _wrapped(_repointed(params_schema), reference)


def _wrapped(params_schema: Any, reference: dict[str, Any]) -> Any:
    if type(params_schema) is not dict:
        return params_schema
    return _with_references(params_schema, reference)


def _with_references(params_schema: dict[str, Any], reference: dict[str, Any]) -> Any:
    def part(sub: Any) -> Any:
        if type(sub) is not dict:
            return sub  # true takes a reference already; false must not
        return {"anyOf": [reference, _wrapped(sub, reference)]}

    def same(sub: Any) -> Any:
        return _wrapped(sub, reference)

    out = dict(params_schema)
    for key in _PART_ONE + _PART_ONE_MORE:
        if type(out.get(key)) is list:  # items as a list: a tuple's (before 2020-12)
            out[key] = [part(sub) for sub in out[key]]
        elif key in out:
            out[key] = part(out[key])
    for key in _PART_MAPS:
        if type(out.get(key)) is dict:
            out[key] = {name: part(sub) for name, sub in out[key].items()}
    if type(out.get("prefixItems")) is list:
        out["prefixItems"] = [part(sub) for sub in out["prefixItems"]]
    for key in _SAME_VALUE_LISTS:
        if type(out.get(key)) is list:
            out[key] = [same(sub) for sub in out[key]]
    for key in _SAME_VALUE_ONE:
        if key in out:
            out[key] = same(out[key])
    for key in _SAME_VALUE_MAPS:
        if type(out.get(key)) is dict:
            out[key] = {name: same(sub) for name, sub in out[key].items()}
    return out


def _repointed(schema: dict[str, Any]) -> Any:
    """``schema`` with each JSON Pointer reference (``#/properties/w/properties/n``) written
    as it reads once each part is wrapped (``#/properties/w/anyOf/1/properties/n``), so it
    resolves where JSON Schema 2020-12 resolves it in the schema as written (round 67: a
    pointer INTO a wrapped part reached nowhere; the config check resolves both forms,
    :func:`controller.plan.schemarefs.foreign_references`)."""
    resources = dict(schemarefs.resources(schema))

    def moved(ref: str, base: str, here: Any) -> str:
        address, hash_, fragment = ref.partition("#")
        if not hash_ or not fragment.startswith("/"):
            return ref  # no pointer: a whole resource or an anchor, never moved
        target = here if not address else resources.get(urldefrag(urljoin(base, address))[0])
        return f"{address}#/" + "/".join(_moved_segments(target, fragment[1:].split("/")))

    return schemarefs.rewritten(schema, moved)


def _moved_segments(node: Any, segments: list[str]) -> list[str]:
    """A pointer's raw segments (as written, escapes kept) from ``node`` of the schema as
    written to the same place in :func:`_with_references` of it: ``anyOf/1`` inserted where
    the pointer goes on INTO a wrapped part (one that ends at a part names its wrapper,
    which takes a reference as the part does). Past a keyword never wrapped, as written."""
    out: list[str] = []
    i = 0
    while i < len(segments) and type(node) is dict:
        key = _segment(segments[i])
        after = segments[i + 1] if i + 1 < len(segments) else None
        step = _step(key, node.get(key), after)
        if step is None:
            break
        taken, node, part = step
        out += segments[i : i + taken]
        i += taken
        if part and i < len(segments) and type(node) is dict:
            out += ["anyOf", "1"]
    return out + segments[i:]


def _step(key: str, value: Any, after: str | None) -> tuple[int, Any, bool] | None:
    """(segments taken, the subschema reached, whether it is a wrapped part) for a pointer
    at ``key`` (``after`` the next segment), as :func:`_with_references` walks; None where
    it does not."""
    parts = (*_PART_ONE, *_PART_ONE_MORE)
    if key in parts and type(value) is not list:
        return 1, value, True
    if type(value) is list and key in (*parts, "prefixItems", *_SAME_VALUE_LISTS):
        index = _segment(after) if after is not None else ""
        if not index.isdigit() or int(index) >= len(value):
            return None
        return 2, value[int(index)], key not in _SAME_VALUE_LISTS
    if type(value) is dict and key in (*_PART_MAPS, *_SAME_VALUE_MAPS) and after is not None:
        return 2, value.get(_segment(after)), key in _PART_MAPS
    if key in _SAME_VALUE_ONE:
        return 1, value, False
    return None


def _segment(raw: str) -> str:
    """A JSON Pointer segment of a URI fragment as the key it names (RFC 6901, RFC 3986)."""
    return unquote(raw).replace("~1", "/").replace("~0", "~")
