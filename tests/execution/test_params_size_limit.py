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
    size = len(json.dumps(refs.resolve(params, ctx), ensure_ascii=False))
    assert size >= 60_000
    assert refs.resolve(params, ctx, size) is not None
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
    resolved params as the exec tool's stdin writes them (``, `` and ``: ``; the http
    tool's compact body is never longer), to the character, references included."""
    rng = random.Random(seed)
    for _ in range(200):
        params = {"p": _random_value(rng), "q": [_random_value(rng)], "r": "$<inputs.x>"}
        ctx = refs.Context(inputs={"x": _random_value(rng)})
        budget = refs.Budget(10**9)
        resolved = refs.resolve(params, ctx, budget=budget)
        assert 10**9 - budget.left == len(json.dumps(resolved, ensure_ascii=False)), params


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


@pytest.mark.parametrize(("zeros", "runs"), [(1000, True), (1500, False)])
def test_an_exec_tool_never_gets_more_than_the_limit_on_stdin(
    tmp_path: Path, zeros: int, runs: bool
) -> None:
    """Round 122 (params-limit-counts-compact): resolved params were counted as compact JSON
    while the exec tool's stdin is written with ``", "`` and ``": "``, so an output of 1,500
    zeros (3,001 characters) referenced once reached the tool as 4,531 characters under a
    4,000 limit. The count is now stdin's: 1,000 zeros (3,009 on stdin) run, 1,500 fail the
    action ``E_LIMIT_EXCEEDED`` before the call."""
    got = tmp_path / "stdin.txt"
    record = f"import sys; open({str(got)!r}, 'w').write(sys.stdin.read())"
    out = '{"x": [' + ", ".join(["0"] * zeros) + "]}"
    emit = {"kind": "exec", "argv": [sys.executable, "-c", f"print({out!r})"]}
    keep = {"kind": "exec", "argv": [sys.executable, "-c", record]}
    actions = [
        {"id": 1, "tool": "emit", "params": {}, "outputs": [{"name": "x", "path": "$.json.x"}]},
        {"id": 2, "tool": "keep", "params": {"l": "$<actions[1].outputs.x>"}},
    ]
    extra = {"limits": {"max_actions": 10, "max_params_bytes": 4000}}
    tools = {"emit": emit, "keep": keep}
    config, plan_file = make_plan(tmp_path, actions, tools, extra_config=extra)
    outcome = run(Engine(config), plan_file)
    if runs:
        assert outcome.status == "completed", outcome
        assert len(got.read_text(encoding="utf-8")) <= 4000
    else:
        assert outcome.status == "failed" and outcome.error is not None, outcome
        assert outcome.error.code == "E_LIMIT_EXCEEDED" and outcome.action == 2, outcome
        assert not got.exists()


# -- round 124: every place the run resolves params, not only an action's own ---------------
#: A check tool and a plain one (checks must be idempotent and low-risk).
SITE_CONFIG = (
    "tools: {ok: {kind: echo, idempotent: true, risk: low}, emit: {kind: echo}}\n"
    "limits: {max_params_bytes: 4000}\n"
)
CHECK = "{tool: ok, params: {s: VALUE}, expect: {path: $.s, equals: x}}"
#: Each place the run hands a tool (or a pinned plan) params, as a plan writes it (``VALUE``
#: the value under test) and where validation reports it.
SITES: dict[str, tuple[str, str]] = {
    "plan-precondition": (f"preconditions:\n  - {CHECK}\n", "preconditions[0].params"),
    "precondition": (
        f"    preconditions:\n      - {CHECK}\n",
        "actions[0].preconditions[0].params",
    ),
    "verify": (
        "    verify: {tool: ok, params: {s: VALUE}, expect: {path: $.s, equals: x}, "
        "timeout: 1, interval: 1}\n",
        "actions[0].verify.params",
    ),
    "fallback": (
        "    on_failure: fallback\n"
        "    fallback: [{id: '1.1', tool: emit, why: w, params: {s: VALUE}}]\n",
        "actions[0].fallback[0].params",
    ),
    "fallback-precondition": (
        "    on_failure: fallback\n"
        f"    fallback: [{{id: '1.1', tool: emit, why: w, preconditions: [{CHECK}]}}]\n",
        "actions[0].fallback[0].preconditions[0].params",
    ),
    "fallback-verify": (
        "    on_failure: fallback\n"
        "    fallback: [{id: '1.1', tool: emit, why: w, verify: {tool: ok, params: {s: VALUE}, "
        "expect: {path: $.s, equals: x}, timeout: 1, interval: 1}}]\n",
        "actions[0].fallback[0].verify.params",
    ),
    # a pinned plan's inputs: the value itself, and the value its action uses twice
    "nested-inputs": ("", "actions[1].inputs"),
    "nested-used-twice": ("", "actions[1].inputs"),
}
#: A pinned plan whose action takes input ``a`` once, and one that takes it twice.
KID = """\
plan: {{name: kid, task: t, status: draft}}
inputs: {{a: ""}}
available_tools: [{{name: emit}}]
actions:
  - {{id: 1, tool: emit, why: w, params: {{s: "{use}"}}}}
"""


def _value(kind: str, n: int) -> tuple[str, str, str]:
    """(the value, the plan's ``inputs:`` line, its task) making ``n`` characters once
    resolved: a literal, ``$<inputs.m>`` or ``$<plan.task>``."""
    if kind == "literal":
        return "d" * n, "", "t"
    if kind == "inputs":
        return '"$<inputs.m>"', f"inputs: {{m: {'b' * n}}}\n", "t"
    return '"$<plan.task>"', "", "b" * n


def _site_plan(tmp_path: Path, site: str, kind: str, n: int) -> Path:
    """A plan with ``site`` holding a value of ``2 n`` characters (``n`` given to a pinned
    plan that uses it twice), every other value small."""
    repo = tmp_path / "repo"
    value, inputs, task = _value(kind, n)
    twice = "d" * (2 * n) if kind == "literal" else value[:-1] + value[1:]  # "$<x>$<x>"
    text = f"plan: {{name: p, task: {task}, status: draft}}\n{inputs}"
    text += "available_tools: [{name: ok}, {name: emit}]\n"
    where, _ = SITES[site]
    if site == "plan-precondition":
        text += where.replace("VALUE", twice)
    text += "actions:\n  - id: 1\n    tool: emit\n    why: w\n"
    if not site.startswith(("nested", "plan-")):
        text += where.replace("VALUE", twice)
    if site.startswith("nested"):
        use = "$<inputs.a>$<inputs.a>" if site == "nested-used-twice" else "$<inputs.a>"
        kid = repo / "plans" / "kid"
        kid.mkdir(parents=True)
        (kid / "PLAN.yml").write_text(KID.format(use=use))
        pin = run_cli("hash", str(kid / "PLAN.yml")).stdout.split()[-1]
        given = value if site == "nested-used-twice" else twice
        text += (
            f'  - id: 2\n    plan: {{path: plans/kid, hash: "{pin}"}}\n    why: w\n'
            f"    inputs: {{a: {given}}}\n"
        )
    folder = repo / "plans" / "p"
    folder.mkdir(parents=True)
    (folder / "PLAN.yml").write_text(text)
    (tmp_path / "plangate.yml").write_text(f"repo: {repo}\n" + SITE_CONFIG)
    return folder / "PLAN.yml"


def _validate(tmp_path: Path, path: Path) -> tuple[int, list[dict[str, str]]]:
    config = str(tmp_path / "plangate.yml")
    result = run_cli("validate", "--json", "--config", config, str(path))
    return result.returncode, json.loads(result.stdout)["errors"]


@pytest.mark.parametrize("kind", ["literal", "inputs", "task"])
@pytest.mark.parametrize("site", sorted(SITES))
def test_static_params_past_the_limit_are_refused_at_validation_wherever_they_go(
    tmp_path: Path, site: str, kind: str
) -> None:
    """Round 124 (static-params-outside-action-checked-at-run): an action's own params of
    literals, ``$<inputs.*>`` and ``$<plan.task>`` past the limit were refused at
    validation, but the same in a fallback step's, a precondition's or a verify check's
    params, or a pinned plan's inputs (or what its params make of them), validated and ran:
    the step failed only when its turn came, after earlier actions ran. Every place the run
    resolves is now counted at validation, and reported where it is."""
    code, errors = _validate(tmp_path, _site_plan(tmp_path, site, kind, 2100))
    assert code == 1, errors
    assert [(e["code"], e["path"]) for e in errors] == [("E_LIMIT_EXCEEDED", SITES[site][1])]
    assert "more than 4000 characters of JSON" in errors[0]["message"]
    assert "limits.max_params_bytes" in errors[0]["message"] + errors[0]["remedy"]
    if site == "nested-used-twice":  # which of the pinned plan's params, with these inputs
        assert errors[0]["message"].startswith("nested plan plans/kid, actions[0].params")


@pytest.mark.parametrize("site", sorted(SITES))
def test_static_params_within_the_limit_validate_wherever_they_go(
    tmp_path: Path, site: str
) -> None:
    """The control: the same places with 1,900 characters where 2,100 were refused."""
    code, errors = _validate(tmp_path, _site_plan(tmp_path, site, "inputs", 1900))
    assert (code, errors) == (0, [])


def test_a_static_param_past_the_limit_is_refused_by_freeze_too(tmp_path: Path) -> None:
    """``freeze`` (and so the controller's pass, ``check`` and MCP ``validate``/``submit``,
    which share the validator) refuses what ``validate`` does: nothing is frozen."""
    path = _site_plan(tmp_path, "fallback", "inputs", 2100)
    before = path.read_text()
    result = run_cli("freeze", "--config", str(tmp_path / "plangate.yml"), str(path))
    assert result.returncode == 1
    assert "E_LIMIT_EXCEEDED" in result.stdout + result.stderr
    assert path.read_text() == before
