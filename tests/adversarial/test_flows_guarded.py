"""Property: untrusted data never reaches a sensitive parameter unguarded (SPEC §16).

The attacker writes the tool output (an email, a web page): nested values, values inside
strings, lists with one bad element, look-alike characters, trailing newlines, numbers in
disguise, values that make a guard's pattern backtrack, data that passes through one or two
``inherit`` tools. A plan author may also try to route outside data around a guard. Only the
real CLI and git are used. The defence holds when:

- at validation, every unguarded untrusted flow into a sensitive param is E_UNGUARDED_FLOW;
- at run time, the sensitive tool is never called with a value outside its guard: the
  action fails E_GUARD_FAILED (the recorder shows no call), and other plans carry on.
"""

from __future__ import annotations

import json
import sys
import textwrap
from typing import Any

import pytest

from tests.support.gitenv import git as _git
from tests.support.gitenv import identity
from tests.support.gitenv import run_cli as _run

AGENT = identity("Agent", "agent@example.com")
ALICE = identity("Alice", "alice@example.com")
SOURCE = "import json,sys; print(open(sys.argv[1] + '/' + sys.argv[2] + '.json').read())"
SINK = (
    "import os,sys; "
    "open(os.environ['SINK_LOG'],'a').write(sys.argv[1] + ' ' + sys.stdin.read() + '\\n')"
)
MAIL = r"^[^@\s]+@customer\.example$"

#: name -> (what the source tool returns, the sink's params, its guards)
RUNTIME: dict[str, tuple[Any, str, str]] = {
    "plain": ({"v": "x@evil.example"}, '{to: "$<actions[1].outputs.v>"}', "to-mail"),
    "trailing-newline": (
        {"v": "x@customer.example\n"},
        '{to: "$<actions[1].outputs.v>"}',
        "to-mail",
    ),
    "homoglyph": ({"v": "x@customer.ex\u0430mple"}, '{to: "$<actions[1].outputs.v>"}', "to-mail"),
    "suffix": (
        {"v": "x@customer.example.evil.example"},
        '{to: "$<actions[1].outputs.v>"}',
        "to-mail",
    ),
    "header-injection": (
        {"v": "x@customer.example\r\nBcc: y@evil.example"},
        '{to: "$<actions[1].outputs.v>"}',
        "to-mail",
    ),
    "two-addresses": (
        {"v": "a@customer.example, b@evil.example"},
        '{to: "$<actions[1].outputs.v>"}',
        "to-mail",
    ),
    "nul": (
        {"v": "x@customer.example\u0000@evil.example"},
        '{to: "$<actions[1].outputs.v>"}',
        "to-mail",
    ),
    "list-one-bad": (
        {"v": ["a@customer.example", "b@evil.example"]},
        '{to: "$<actions[1].outputs.v>"}',
        "to-mail",
    ),
    "object-not-string": (
        {"v": {"email": "a@customer.example"}},
        '{to: "$<actions[1].outputs.v>"}',
        "to-mail",
    ),
    "empty-list": ({"v": []}, '{to: "$<actions[1].outputs.v>"}', "to-mail"),
    "inside-string": (
        {"v": "x@evil.example>, <y@customer.example"},
        '{to: "Dear <$<actions[1].outputs.v>>"}',
        "to-dear",
    ),
    "amount-string": ({"v": "100"}, '{amount: "$<actions[1].outputs.v>"}', "amount"),
    "amount-over": ({"v": 500.0001}, '{amount: "$<actions[1].outputs.v>"}', "amount"),
    "amount-negative": ({"v": -1}, '{amount: "$<actions[1].outputs.v>"}', "amount"),
    "amount-bool": ({"v": True}, '{amount: "$<actions[1].outputs.v>"}', "amount"),
    "amount-huge": ({"v": 1e308}, '{amount: "$<actions[1].outputs.v>"}', "amount"),
    "channel-case": ({"v": "OPS"}, '{channel: "$<actions[1].outputs.v>"}', "channel"),
    "channel-number": ({"v": 1}, '{channel: "$<actions[1].outputs.v>"}', "channel"),
    "backtracking": ({"v": "a" * 64 + "!"}, '{to: "$<actions[1].outputs.v>"}', "to-redos"),
    "one-hop": ({"v": "x@evil.example"}, '{to: "$<actions[2].outputs.v>"}', "to-mail"),
    "two-hops": ({"v": "x@evil.example"}, '{to: "$<actions[3].outputs.v>"}', "to-mail"),
}
#: Values that are inside the guard: the sink must run with exactly them.
ALLOWED: dict[str, tuple[Any, str, str]] = {
    "ok-mail": ({"v": "dana@customer.example"}, '{to: "$<actions[1].outputs.v>"}', "to-mail"),
    "ok-amount": ({"v": 500}, '{amount: "$<actions[1].outputs.v>"}', "amount"),
    "ok-channel": ({"v": "ops"}, '{channel: "$<actions[1].outputs.v>"}', "channel"),
}
GUARDS = {
    "to-mail": f"[{{param: to, matches: {json.dumps(MAIL)}}}]",
    "to-dear": "[{param: to, matches: "
    + json.dumps(r"^Dear <[^@<>,\s]+@customer\.example>$")
    + "}]",
    "amount": "[{param: amount, min: 0, max: 500}]",
    "channel": "[{param: channel, one_of: [ops, support]}]",
    "to-redos": "[{param: to, matches: " + json.dumps(r"^(a|aa)+$") + "}]",
}
#: Plans that route outside data to a sensitive param without the guard it needs.
UNGUARDED: dict[str, str] = {
    "guard-on-other-param": '{to: "a@customer.example", cc: "$<actions[1].outputs.v>"}',
    "guard-on-wrong-case": '{To: "x", to: "$<actions[1].outputs.v>"}',
    "deep-nesting": '{to: {a: [{b: ["$<actions[1].outputs.v>"]}]}}',
    "whole-result": '{to: "$<actions[1].result>"}',
    "after-escaped-literal": '{to: "$$<inputs.x> $<actions[1].outputs.v>"}',
    "two-hops-unguarded": '{to: "$<actions[3].outputs.v>"}',
    "url": '{url: "https://$<actions[1].outputs.v>/hook"}',
}
UNGUARDED_GUARDS = {
    "guard-on-other-param": GUARDS["to-mail"],
    "guard-on-wrong-case": "[{param: To, one_of: [x]}]",
}


def _plan(name: str, params: str, guards: str | None) -> str:
    hops = "".join(
        textwrap.dedent(
            f"""\
              - id: {i}
                tool: fmt
                why: "pass it on"
                params: {{v: "$<actions[{i - 1}].outputs.v>"}}
                outputs: [{{name: v, path: "$.v"}}]
            """
        )
        for i in (2, 3)
    )
    sink_id = 4
    guard_line = f"    guards: {guards}\n" if guards else ""
    return (
        textwrap.dedent(
            f"""\
            plan:
              name: {json.dumps(name)}
              task: "attack"
              status: pending_approval
            inputs: {{x: 1}}
            available_tools: [{{name: source}}, {{name: fmt}}, {{name: sink}}]
            actions:
              - id: 1
                tool: source
                why: "read outside data"
                params: {{case: {json.dumps(name)}}}
                outputs: [{{name: v, path: "$.json.v"}}]
            """
        )
        + textwrap.indent(hops, "  ")
        + f'  - id: {sink_id}\n    tool: sink\n    why: "act on it"\n    params: {params}\n'
        + guard_line
    )


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """One repo with a plan per variant: frozen, approved in one commit, run once."""
    root = tmp_path_factory.mktemp("flows")
    repo, payloads = root / "repo", root / "payloads"
    repo.mkdir()
    payloads.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    config = root / "plangate.yml"
    config.write_text(
        json.dumps(
            {
                "repo": str(repo),
                "state_dir": str(root / "state"),
                "approval": {"approvers": ["alice@example.com"]},
                "tools": {
                    "source": {
                        "kind": "exec",
                        "argv": [sys.executable, "-c", SOURCE, str(payloads), "{case}"],
                    },
                    "fmt": {"kind": "echo", "output_trust": "inherit"},
                    "sink": {
                        "kind": "exec",
                        "argv": [sys.executable, "-c", SINK, "call"],
                        "sensitive": ["to", "cc", "amount", "channel", "url"],
                    },
                },
            }
        )
    )
    cases = {**RUNTIME, **ALLOWED}
    for name, (payload, params, guard) in cases.items():
        (payloads / f"{name}.json").write_text(json.dumps(payload))
        folder = repo / "plans" / name
        folder.mkdir(parents=True)
        (folder / "PLAN.yml").write_text(_plan(name, params, GUARDS[guard]))
    for name, params in UNGUARDED.items():
        folder = repo / "plans" / name
        folder.mkdir(parents=True)
        (folder / "PLAN.yml").write_text(_plan(name, params, UNGUARDED_GUARDS.get(name)))
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "agent: plans", env=AGENT)
    env = {"SINK_LOG": str(root / "sink.log")}
    assert (
        _run("run", "--once", "--config", str(config), cwd=root, env=env, timeout=300).returncode
        == 0
    )
    for name in cases:
        path = repo / "plans" / name / "PLAN.yml"
        path.write_text(path.read_text().replace("status: pending_approval", "status: approved", 1))
    _git(repo, "commit", "-q", "-am", "approve all", env=ALICE)
    assert (
        _run("run", "--once", "--config", str(config), cwd=root, env=env, timeout=300).returncode
        == 0
    )
    sink = root / "sink.log"
    calls = sink.read_text().splitlines() if sink.exists() else []
    return {
        "repo": repo,
        "config": config,
        "calls": [json.loads(c.split(" ", 1)[1]) for c in calls],
    }


def _state(lab: dict[str, Any], name: str) -> dict[str, Any]:
    from ruamel.yaml import YAML

    return YAML(typ="safe").load((lab["repo"] / "plans" / name / "PLAN.yml").read_text())


@pytest.mark.parametrize("name", sorted(RUNTIME))
def test_a_hostile_value_never_reaches_the_sensitive_tool(lab: dict[str, Any], name: str) -> None:
    state = _state(lab, name)
    assert state["plan"]["status"] == "failed", state.get("validation") or state.get("execution")
    sink = state["execution"]["actions"][3]
    assert sink["status"] == "failed" and sink["error"]["code"] == "E_GUARD_FAILED"
    payload = RUNTIME[name][0]["v"]
    sent = [value for call in lab["calls"] for value in call.values()]
    assert not any(_carries(value, payload) for value in sent), "the sink ran with it"


def _carries(sent: Any, payload: Any) -> bool:
    if isinstance(sent, str) and isinstance(payload, str):
        return payload in sent
    return json.dumps(sent, sort_keys=True) == json.dumps(payload, sort_keys=True)


@pytest.mark.parametrize("name", sorted(ALLOWED))
def test_values_inside_the_guard_still_run(lab: dict[str, Any], name: str) -> None:
    assert _state(lab, name)["plan"]["status"] == "completed"
    assert ALLOWED[name][0]["v"] in [next(iter(c.values())) for c in lab["calls"]]


@pytest.mark.parametrize("name", sorted(UNGUARDED))
def test_an_unguarded_route_is_refused_at_validation(lab: dict[str, Any], name: str) -> None:
    state = _state(lab, name)
    assert state["plan"]["status"] == "invalid"
    codes = [e["code"] for e in state["validation"]["errors"]]
    assert "E_UNGUARDED_FLOW" in codes, state["validation"]


def test_only_allowed_values_were_ever_sent(lab: dict[str, Any]) -> None:
    assert len(lab["calls"]) == len(ALLOWED)
