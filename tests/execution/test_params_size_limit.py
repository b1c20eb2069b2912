"""A small plan cannot make the controller build or write huge params (issue 11).

References can repeat one large value many times: a 70 KB plan whose 400 references to a
60 KB input resolve to 24 MB of params, written to the journal and the log. Resolved params
are capped by ``limits.max_params_bytes`` (E_LIMIT_EXCEEDED): at validation for what inputs
and plan fields give, at run time for everything (tool outputs), before anything is written.
"""

from __future__ import annotations

import json
import random
import sys
import textwrap
from pathlib import Path

import pytest

from controller.errors import LimitExceeded
from controller.execution.executor import Engine
from controller.plan import refs
from tests.support.executor_kit import journal_records, make_plan, run
from tests.support.gitenv import run_cli

BIG = "A" * 60_000


def amplifying_plan(copies: int) -> str:
    many = "\n".join('      - "$<inputs.big>"' for _ in range(copies))
    return (
        textwrap.dedent(
            """\
        plan:
          name: "amplify"
          task: "one input, many references"
          status: pending_approval
        inputs:
          big: "{big}"
        available_tools:
          - name: echo
        actions:
          - id: 1
            tool: echo
            why: "repeat it"
            params:
              many:
        """
        ).format(big=BIG)
        + many
        + "\n"
    )


def test_a_small_plan_resolving_to_huge_params_is_refused_at_validation(tmp_path: Path) -> None:
    path = tmp_path / "PLAN.yml"
    path.write_text(amplifying_plan(400))
    assert path.stat().st_size < 75_000
    result = run_cli("validate", "--json", str(path))
    assert result.returncode == 1
    (error,) = json.loads(result.stdout)["errors"]
    assert error["code"] == "E_LIMIT_EXCEEDED"
    assert error["path"] == "actions[0].params"
    assert "limits.max_params_bytes" in error["message"]


def test_the_limit_comes_from_the_config(tmp_path: Path) -> None:
    path = tmp_path / "PLAN.yml"
    path.write_text(amplifying_plan(10))  # 600 KB: within the default 1 MiB
    assert run_cli("validate", str(path)).returncode == 0
    config = tmp_path / "plangate.yml"
    config.write_text("tools: {echo: {kind: echo}}\nlimits: {max_params_bytes: 100000}\n")
    result = run_cli("validate", "--json", "--config", str(config), str(path))
    assert json.loads(result.stdout)["errors"][0]["code"] == "E_LIMIT_EXCEEDED"


def test_outputs_repeated_past_the_limit_fail_the_action_before_anything_is_written(
    tmp_path: Path,
) -> None:
    actions = [
        {"id": 1, "tool": "say", "params": {"x": BIG}, "outputs": [{"name": "x", "path": "$.x"}]},
        {"id": 2, "tool": "say", "params": {"many": ["$<actions[1].outputs.x>"] * 400}},
    ]
    config, plan_file = make_plan(tmp_path, actions, {"say": {"kind": "echo"}})
    outcome = run(Engine(config), plan_file)
    assert outcome.status == "failed" and outcome.error is not None
    assert outcome.error.code == "E_LIMIT_EXCEEDED" and outcome.action == 2
    assert not [r for r in journal_records(config, plan_file) if r["t"] == "start" and r["id"] == 2]
    written = sum(p.stat().st_size for p in tmp_path.rglob("*") if p.is_file())
    assert written < 1_000_000, f"{written} bytes written"


@pytest.mark.parametrize(
    "params",
    [
        {"a": "$<inputs.big>"},
        {"a": "x $<inputs.big> y"},
        {"a": ["$<inputs.big>", "$<inputs.big>"]},
        {"a": "$<inputs.list>"},
    ],
)
def test_the_budget_counts_what_references_resolve_to(params: object) -> None:
    ctx = refs.Context(inputs={"big": BIG, "list": [BIG] * 3})
    size = len(json.dumps(refs.resolve(params, ctx), separators=(",", ":")))
    assert size >= 60_000
    assert refs.resolve(params, ctx, size + 1) is not None  # the list: one comma counted twice
    with pytest.raises(LimitExceeded):
        refs.resolve(params, ctx, size - 1)


def _random_value(rng: random.Random, depth: int = 0) -> object:
    pick = rng.random()
    if depth > 3 or pick < 0.3:
        return rng.choice([None, True, False, 0, -1.5, 10**20, 3.0e-7, "", 'a"b\n\x01é\U0001d11e'])
    if pick < 0.65:
        return [_random_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    keys = ["k", "é", '"q', ""]
    return {
        rng.choice(keys) + str(i): _random_value(rng, depth + 1) for i in range(rng.randint(0, 4))
    }


@pytest.mark.parametrize("seed", range(8))
def test_the_budget_is_the_params_compact_json_exactly(seed: int) -> None:
    """Round 122 (static-params-count-scalars): brackets, braces, commas, ``null``,
    ``true`` and numbers written in the plan were never counted, so 3,000 ``[]`` (9,029
    characters of JSON) passed a 4,000 limit. The budget spent is now the length of the
    params as compact JSON (as the tools receive them), to the character."""
    rng = random.Random(seed)
    for _ in range(200):
        params = {"p": _random_value(rng), "q": [_random_value(rng)]}
        budget = refs.Budget(10**9)
        refs.resolve(params, refs.Context(), budget=budget)
        size = len(json.dumps(params, ensure_ascii=False, separators=(",", ":")))
        assert 10**9 - budget.left == size, params


#: static params of few plan characters and many JSON ones (round 122, atk122e)
STATIC = {
    "lists": "[" + ", ".join(["[]"] * 3000) + "]",
    "nulls": "[" + ", ".join(["null"] * 1300) + "]",
    "zeros": "[" + ", ".join(["0"] * 3500) + "]",
    "trues": "[" + ", ".join(["true"] * 3000) + "]",
    "keys": "{" + ", ".join(f"k{i}: 0" for i in range(520)) + "}",
}


@pytest.mark.parametrize("shape", sorted(STATIC))
def test_static_structure_past_the_limit_is_refused_at_validation(
    tmp_path: Path, shape: str
) -> None:
    path = tmp_path / "PLAN.yml"
    path.write_text(amplifying_plan(0).replace("      many:\n", f"      many: {STATIC[shape]}\n"))
    config = tmp_path / "plangate.yml"
    config.write_text("tools: {echo: {kind: echo}}\nlimits: {max_params_bytes: 4000}\n")
    assert run_cli("validate", "--json", str(path)).returncode == 0  # the default limit
    result = run_cli("validate", "--json", "--config", str(config), str(path))
    (error,) = json.loads(result.stdout)["errors"]
    assert error["code"] == "E_LIMIT_EXCEEDED" and error["path"] == "actions[0].params"


def test_an_exec_tool_gets_its_params_as_the_limit_counts_them(tmp_path: Path) -> None:
    """Round 122 (params-limit-counts-compact): stdin was written with ``", "`` and ``": "``,
    so an output of 1,500 zeros (3,001 characters) referenced once reached the tool as
    4,531 characters under a 4,000 limit. stdin is the compact JSON the limit counts."""
    got = tmp_path / "stdin.txt"
    record = f"import sys; open({str(got)!r}, 'w').write(sys.stdin.read())"
    emit = {
        "kind": "exec",
        "argv": [sys.executable, "-c", "print('{\"x\": [' + ', '.join(['0'] * 1500) + ']}')"],
    }
    keep = {"kind": "exec", "argv": [sys.executable, "-c", record]}
    actions = [
        {"id": 1, "tool": "emit", "params": {}, "outputs": [{"name": "x", "path": "$.json.x"}]},
        {"id": 2, "tool": "keep", "params": {"l": "$<actions[1].outputs.x>"}},
    ]
    extra = {"limits": {"max_actions": 10, "max_params_bytes": 4000}}
    config, plan_file = make_plan(
        tmp_path, actions, {"emit": emit, "keep": keep}, extra_config=extra
    )
    outcome = run(Engine(config), plan_file)
    assert outcome.status == "completed", outcome
    text = got.read_text(encoding="utf-8")
    assert text == json.dumps({"l": [0] * 1500}, separators=(",", ":"))
    assert len(text) <= 4000


#: characters whose JSON text is longer than themselves: 2 for a quote, a backslash or a
#: newline, 6 for another control character (round 121, params-limit-counts-unescaped)
ESCAPED = [('"', 2), ("\\", 2), ("\n", 2), ("\x01", 6)]


@pytest.mark.parametrize(("char", "width"), ESCAPED, ids=["quote", "backslash", "lf", "ctrl"])
def test_the_budget_counts_escapes_as_json_writes_them(char: str, width: int) -> None:
    """A value of 1,000 such characters is ``1000 * width + 2`` characters of JSON, as the
    tool's stdin holds it; the raw count (1,000) let the limit be passed up to six times."""
    text = char * 1000
    size = len(json.dumps({"a": text}, ensure_ascii=False, separators=(",", ":")))
    assert size == 1000 * width + 2 + 6
    ctx = refs.Context(inputs={"t": text})
    for params in ({"a": text}, {"a": "$<inputs.t>"}):
        assert refs.resolve(params, ctx, size + 10) is not None
        with pytest.raises(LimitExceeded):
            refs.resolve(params, ctx, size - 10)


def test_a_static_param_of_escapes_past_the_limit_is_refused_at_validation(
    tmp_path: Path,
) -> None:
    path = tmp_path / "PLAN.yml"
    path.write_text(
        amplifying_plan(0).replace("      many:\n", '      many: "' + "\\x01" * 1000 + '"\n')
    )
    config = tmp_path / "plangate.yml"
    config.write_text("tools: {echo: {kind: echo}}\nlimits: {max_params_bytes: 4000}\n")
    assert run_cli("validate", "--json", str(path)).returncode == 0  # the default limit
    result = run_cli("validate", "--json", "--config", str(config), str(path))
    (error,) = json.loads(result.stdout)["errors"]
    assert error["code"] == "E_LIMIT_EXCEEDED" and error["path"] == "actions[0].params"


def test_an_output_of_escapes_past_the_limit_fails_its_action(tmp_path: Path) -> None:
    """2,100 quotes are 4,202 characters of JSON: over a 4,000 limit on one action's outputs,
    so the action that captured them fails before action 2 runs (within 4,500 it runs)."""
    emit = {
        "kind": "exec",
        "argv": [sys.executable, "-c", "import json; print(json.dumps({'x': chr(34) * 2100}))"],
    }
    actions = [
        {"id": 1, "tool": "emit", "params": {}, "outputs": [{"name": "x", "path": "$.json.x"}]},
        {"id": 2, "tool": "say", "params": {"y": "$<actions[1].outputs.x>"}},
    ]
    tools = {"emit": emit, "say": {"kind": "echo"}}
    outcomes = {}
    for limit in (4_500, 4_000):
        root = tmp_path / str(limit)
        root.mkdir()
        extra = {"limits": {"max_actions": 10, "max_params_bytes": limit}}
        config, plan_file = make_plan(root, actions, tools, extra_config=extra)
        outcomes[limit] = run(Engine(config), plan_file)
    assert outcomes[4_500].status == "completed", outcomes[4_500]
    tight = outcomes[4_000]
    assert tight.status == "failed" and tight.error is not None
    assert tight.error.code == "E_LIMIT_EXCEEDED" and tight.action == 1, tight
