"""The PLAN.yml model (SPEC §2) as pydantic v2 models, and its JSON Schema.

Structure and types only; rules that span fields (ids in order, declared tools, references,
catalog checks) live in :mod:`controller.plan.plans`. Unknown keys are refused everywhere except
inside ``metadata``, ``inputs`` and ``params``, so a typo such as ``on_faliure`` can never
silently change what runs.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

SUPPORTED_VERSION = 1

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
STATUSES: tuple[str, ...] = Status.__args__  # type: ignore[attr-defined]
OnFailure = Literal["stop", "skip", "retry"]
NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_-]*$"
#: A duration as controller.settings.parse_duration reads it (seconds, or with s/m/h/d/w).
DURATION = r"^\s*[0-9]+(?:\.[0-9]+)?\s*[smhdw]?\s*$"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class PlanHeader(_Strict):
    """The ``plan:`` block: what the plan is for and where it is in its lifecycle."""

    name: str = Field(min_length=1, description="Short human-readable name.")
    task: str = Field(min_length=1, description="What the plan does and why.")
    status: Status = Field(description="Lifecycle state (SPEC §4).")
    created: str | None = Field(None, description="Creation time (not hashed). Quote it.")
    version: int | None = Field(None, ge=1, description="Plan format version (1).")


class AvailableTool(_Strict):
    """A tool the plan may call; it must also be in the controller's catalog to run."""

    name: str = Field(pattern=NAME_PATTERN)
    description: str = ""


class Output(_Strict):
    """A value captured from the tool's result with an RFC 9535 JSONPath query."""

    name: str = Field(pattern=NAME_PATTERN)
    path: str = Field(min_length=1, description="JSONPath over the tool's result, e.g. $.id")
    optional: bool = Field(False, description="No match is not an error (later refs fail).")


class Guard(_Strict):
    """What values a parameter may take at run time (SPEC §16); all given rules must hold."""

    param: str = Field(min_length=1, description="The parameter it guards (a key of params).")
    matches: str | None = Field(
        None, description="A regular expression the whole value must match."
    )
    one_of: list[Any] | None = Field(None, min_length=1, description="The allowed values.")
    min: float | None = Field(None, description="The smallest number allowed.")
    max: float | None = Field(None, description="The largest number allowed.")


class Action(_Strict):
    """One tool call of the frozen sequence."""

    id: int = Field(ge=1, description="1..N in file order.")
    tool: str = Field(min_length=1)
    why: str = Field(min_length=1, description="The intent, for reviewers and auditors.")
    params: dict[str, Any] = Field(default_factory=dict)
    outputs: list[Output] = Field(default_factory=list)
    on_failure: OnFailure = "stop"
    retries: int = Field(3, ge=0, le=100, description="Attempts after the first (retry only).")
    timeout: float | None = Field(None, gt=0, le=86400)
    requires_approval: bool = False
    guards: list[Guard] = Field(
        default_factory=list,
        description="Checks on resolved params before the tool runs (E_GUARD_FAILED).",
    )


class Frozen(_Strict):
    """Written by the controller when it freezes the plan (not hashed)."""

    hash: str = Field(pattern=r"^sha256:[0-9a-f]{64}$")
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

    plan: PlanHeader
    metadata: dict[str, Any] = Field(default_factory=dict)
    inputs: dict[str, Any] = Field(default_factory=dict)
    available_tools: list[AvailableTool] = Field(default_factory=list)
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


def json_schema() -> dict[str, Any]:
    """JSON Schema of PLAN.yml, for editors (yaml-language-server) and other tools."""
    schema = PlanDocument.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "plangate PLAN.yml"
    return schema
