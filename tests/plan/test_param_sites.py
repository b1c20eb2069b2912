"""The places the run resolves params (``rules.param_sites``) are every place the schema
says references are resolved (its ``RefFreeKeys`` fields), so the reference rules and the
static size check (``limits.max_params_bytes``, round 124) that walk that one list miss
none: round 124 found a fallback step's, a precondition's, a verify check's and a pinned
plan's values counted only when their turn came at run time.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from controller.plan import refs, rules, schema

#: Every field whose values the run resolves (``json_schema_extra=_REF_FREE``), by model.
RESOLVED_FIELDS = {
    ("Precondition", "params"),
    ("Verify", "params"),
    ("_Step", "params"),
    ("Action", "params"),
    ("FallbackStep", "params"),
    ("Action", "inputs"),
}

CHECK = {"tool": "ok", "params": {"s": 1}, "expect": {"path": "$.s", "equals": 1}}
VERIFY = {**CHECK, "timeout": 1, "interval": 1}
#: A plan that fills every such field, at every depth it can appear.
PLAN: dict[str, Any] = {
    "plan": {"name": "p", "task": "t", "status": "draft"},
    "available_tools": [{"name": "ok"}],
    "preconditions": [CHECK],
    "actions": [
        {
            "id": 1,
            "tool": "ok",
            "why": "w",
            "params": {"s": 1},
            "preconditions": [CHECK],
            "verify": VERIFY,
            "on_failure": "fallback",
            "fallback": [
                {
                    "id": "1.1",
                    "tool": "ok",
                    "why": "w",
                    "params": {"s": 1},
                    "preconditions": [CHECK],
                    "verify": VERIFY,
                }
            ],
        },
        {
            "id": 2,
            "plan": {"path": "plans/kid", "hash": "sha256:" + "0" * 64},
            "why": "w",
            "inputs": {"a": 1},
        },
    ],
}


def _subclasses(cls: type) -> set[type]:
    found = set()
    for sub in cls.__subclasses__():
        found |= {sub} | _subclasses(sub)
    return found


def _resolved(model: type[BaseModel], name: str) -> bool:
    return model.model_fields[name].json_schema_extra == schema._REF_FREE


def test_the_fields_the_run_resolves_are_the_ones_param_sites_knows() -> None:
    """A new field the run resolves must be listed in ``rules.param_sites`` (and here)."""
    found = {
        (model.__name__, name)
        for model in _subclasses(schema._Strict)
        if model.__module__ == schema.__name__
        for name in model.model_fields
        if _resolved(model, name)
    }
    assert found == RESOLVED_FIELDS


def _walk(value: Any, where: tuple[Any, ...]) -> set[str]:
    """The location of every resolved field's value in a model instance."""
    found: set[str] = set()
    if isinstance(value, BaseModel):
        for name in type(value).model_fields:
            item = getattr(value, name)
            if _resolved(type(value), name) and item is not None:
                found.add(refs.format_path((*where, name)))
            found |= _walk(item, (*where, name))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found |= _walk(item, (*where, index))
    return found


def test_param_sites_lists_every_resolved_value_of_a_plan() -> None:
    model = schema.PlanDocument.model_validate(PLAN, strict=False)
    listed = [refs.format_path(where) for _, where, _ in rules.param_sites(model)]
    assert len(listed) == len(set(listed))
    assert set(listed) == _walk(model, ())
    assert set(listed) == {
        "preconditions[0].params",
        "actions[0].params",
        "actions[0].preconditions[0].params",
        "actions[0].verify.params",
        "actions[0].fallback[0].params",
        "actions[0].fallback[0].preconditions[0].params",
        "actions[0].fallback[0].verify.params",
        "actions[1].params",
        "actions[1].inputs",
    }
