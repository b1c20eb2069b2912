"""Agents and editors can see the catalog: `plangate tools` and `plangate schema --config`."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from controller.plan import yamlio
from tests.support.gitenv import run_cli
from tests.support.plan_factory import BASE_TEXT

CONFIG = """\
tools:
  echo: {kind: echo, description: "Returns its params"}
  scale:
    kind: exec
    description: "Scale a deployment"
    argv: ["kubectl", "scale", "deploy/{name}", "--replicas={replicas}"]
    idempotent: true
    timeout: 30
    env: {KUBE_TOKEN: "do-not-show-me"}
    params_schema:
      type: object
      properties: {name: {type: string, pattern: "^[a-z-]+$"}, replicas: {type: integer}}
      required: [name]
      additionalProperties: false
"""


@pytest.fixture
def config(tmp_path: Path) -> Path:
    path = tmp_path / "plangate.yml"
    path.write_text(CONFIG)
    return path


def test_tools_lists_the_catalog(config: Path) -> None:
    result = run_cli("tools", "--json", "--config", str(config))
    assert result.returncode == 0, result.stderr
    tools = {t["name"]: t for t in json.loads(result.stdout)}
    assert set(tools) == {"echo", "scale"}
    scale = tools["scale"]
    assert scale["kind"] == "exec" and scale["description"] == "Scale a deployment"
    assert scale["idempotent"] is True and scale["timeout"] == 30
    assert scale["params_schema"]["required"] == ["name"]
    assert {"risk", "estimate", "maps_to"} <= set(scale)
    assert "kubectl scale" in scale["maps_to"]
    text = run_cli("tools", "--config", str(config))
    assert text.returncode == 0 and "scale (exec): Scale a deployment" in text.stdout
    assert "do-not-show-me" not in result.stdout + text.stdout  # env may hold credentials


def test_schema_for_a_catalog_flags_wrong_tools_and_params(config: Path) -> None:
    result = run_cli("schema", "--config", str(config))
    assert result.returncode == 0, result.stderr
    validator = jsonschema.Draft202012Validator(json.loads(result.stdout))
    good = yamlio.read_yaml(BASE_TEXT).data
    good["actions"].append(
        {"id": 3, "tool": "scale", "why": "w", "params": {"name": "web", "replicas": 2}}
    )
    assert list(validator.iter_errors(good)) == []
    wrong_tool = json.loads(json.dumps(good))
    wrong_tool["actions"][0]["tool"] = "ecko"
    assert any("ecko" in e.message for e in validator.iter_errors(wrong_tool))
    wrong_param = json.loads(json.dumps(good))
    wrong_param["actions"][2]["params"] = {"name": "Web!", "replicas": "two", "extra": 1}
    errors = list(validator.iter_errors(wrong_param))
    assert errors, "a param that breaks the tool's params_schema must be flagged"
    # a reference is known only at run time: accepted where the value goes
    with_ref = json.loads(json.dumps(good))
    with_ref["actions"][2]["params"]["replicas"] = "$<inputs.count>"
    assert list(validator.iter_errors(with_ref)) == []
    # the general schema's rules across fields hold too (round 62: the catalog's branches
    # replaced them): tool or plan, inputs only with plan, no reference in a params key
    for change in [
        {"tool": None},
        {"inputs": {"a": 1}},
        {"on_failure": "fallback"},
        {"params": {"$<inputs.count>": 1}},
    ]:
        shape = json.loads(json.dumps(good))
        shape["actions"][0].update(change)
        assert list(validator.iter_errors(shape)), change
    # without a config: the general schema, any tool name
    general = jsonschema.Draft202012Validator(json.loads(run_cli("schema").stdout))
    assert list(general.iter_errors(wrong_tool)) == []
