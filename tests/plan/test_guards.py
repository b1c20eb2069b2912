"""Data-flow guards (SPEC §16): outside data never reaches a sensitive parameter unguarded.

Validation finds every flow from an untrusted tool output to a parameter (whole values, text
inside longer strings, nested values, through ``inherit`` tools); an unguarded one into a
``sensitive`` parameter is E_UNGUARDED_FLOW. At run time a guard is checked on the resolved
value before the tool runs: a hostile value is E_GUARD_FAILED and the tool is never called.
Everything through the real CLI on a real git repo.
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from controller.plan import plans, yamlio
from tests.support.gitenv import commit_all, run_cli
from tests.support.gitkit import AGENT, ALICE, head_plan

READ = "import json,sys; print(open(sys.argv[1]).read())"
SEND = "import sys; open(sys.argv[1], 'a').write(sys.stdin.read() + '\\n')"
GUARD = "^[^@]+@customer\\.example$"


def config_text(tmp_path: Path, repo: Path) -> str:
    mail, outbox = tmp_path / "mail.json", tmp_path / "outbox.jsonl"
    tools = {
        "read_mail": {"kind": "exec", "argv": [sys.executable, "-c", READ, str(mail)]},
        "send": {
            "kind": "exec",
            "argv": [sys.executable, "-c", SEND, str(outbox)],
            "sensitive": ["to", "cc"],
        },
        "fmt": {"kind": "echo", "output_trust": "inherit"},
        "classify": {"kind": "echo", "output_trust": "trusted"},
    }
    return json.dumps(
        {
            "repo": str(repo),
            "state_dir": str(tmp_path / "state"),
            "approval": {"approvers": ["alice@example.com"]},
            "tools": tools,
        }
    )


def plan(send_params: str, guards: str = "", middle: str = "") -> str:
    return (
        textwrap.dedent(
            """\
        plan:
          name: "Reply"
          task: "Answer the customer"
          status: pending_approval
        available_tools: [{name: read_mail}, {name: send}, {name: fmt}, {name: classify}]
        actions:
          - id: 1
            tool: read_mail
            why: "read the email"
            params: {}
            outputs:
              - {name: sender, path: "$.json.from"}
              - {name: subject, path: "$.json.subject"}
        """
        )
        + middle
        + textwrap.indent(
            textwrap.dedent(
                f"""\
            - id: {2 + middle.count("- id:")}
              tool: send
              why: "reply"
              params: {send_params}
            """
            )
            + guards,
            "  ",
        )
    )


HOP = textwrap.indent(
    textwrap.dedent(
        """\
        - id: 2
          tool: {tool}
          why: "one hop"
          params: {{text: "$<actions[1].outputs.sender>"}}
          outputs: [{{name: out, path: "$.text"}}]
        """
    ),
    "  ",
)


@pytest.fixture
def setup(tmp_path: Path, repo: Path) -> Any:
    config = tmp_path / "plangate.yml"
    config.write_text(config_text(tmp_path, repo))
    return repo, config, tmp_path


def validate(setup: Any, text: str) -> dict[str, Any]:
    repo, config, _ = setup
    path = repo / "plans" / "reply" / "PLAN.yml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    out = run_cli("validate", "--json", "--config", str(config), str(path))
    return json.loads(out.stdout.splitlines()[0]) | {"rc": out.returncode}


UNGUARDED = [
    pytest.param('{to: "$<actions[1].outputs.sender>"}', "", id="whole value"),
    pytest.param('{to: "x", cc: "Bob <$<actions[1].outputs.sender>>"}', "", id="inside a string"),
    pytest.param('{to: ["$<actions[1].outputs.sender>"]}', "", id="in a list"),
    pytest.param('{to: {addr: {email: "$<actions[1].result.json.from>"}}}', "", id="nested result"),
    pytest.param(
        '{to: "$<actions[2].outputs.out>"}', HOP.format(tool="fmt"), id="two hops via inherit"
    ),
    pytest.param(
        '{to: "$<actions[2].outputs.out>"}',
        HOP.format(tool="read_mail").replace("params: {text", "params: {x"),
        id="untrusted tool fed anything",
    ),
]


@pytest.mark.parametrize(("params", "middle"), UNGUARDED)
def test_an_untrusted_flow_into_a_sensitive_param_needs_a_guard(
    setup: Any, params: str, middle: str
) -> None:
    result = validate(setup, plan(params, middle=middle))
    assert result["rc"] == 1 and not result["valid"]
    codes = [e for e in result["errors"] if e["code"] == "E_UNGUARDED_FLOW"]
    assert len(codes) == 1, result["errors"]
    error = codes[0]
    assert error["path"].endswith(".params.to") or error["path"].endswith(".params.cc")
    assert "actions[" in error["message"] and "guard" in error["message"]
    assert error["line"] is not None


@pytest.mark.parametrize(
    ("params", "middle"),
    [
        pytest.param(
            '{to: "$<actions[2].outputs.out>"}',
            HOP.format(tool="classify"),
            id="through a trusted tool",
        ),
        pytest.param(
            '{to: "$<inputs.who>", subject: "$<actions[1].outputs.subject>"}',
            "",
            id="untrusted into a plain param",
        ),
        pytest.param('{to: "ops@customer.example"}', "", id="a literal"),
    ],
)
def test_trusted_or_insensitive_flows_need_no_guard(setup: Any, params: str, middle: str) -> None:
    text = plan(params, middle=middle).replace(
        "actions:\n", "inputs: {who: a@customer.example}\nactions:\n", 1
    )
    result = validate(setup, text)
    assert result["valid"], result["errors"]


def test_a_guard_makes_the_flow_valid_and_show_lists_it(setup: Any) -> None:
    guards = f'  guards:\n    - {{param: to, matches: "{GUARD.replace(chr(92), chr(92) * 2)}"}}\n'
    text = plan(
        '{to: "$<actions[1].outputs.sender>", subject: "$<actions[1].outputs.subject>"}', guards
    )
    assert validate(setup, text)["valid"]
    repo, config, _ = setup
    shown = run_cli("show", "--config", str(config), str(repo / "plans" / "reply")).stdout
    sender = "actions[1].outputs.sender -> action 2 sensitive param to:"
    assert f"{sender} UNTRUSTED (from action 1), guarded" in shown
    assert (
        "actions[1].outputs.subject -> action 2 param subject: UNTRUSTED (from action 1), unguarded"
        in shown
    )
    assert "guard to: matches" in shown


@pytest.mark.parametrize(
    ("guard", "message"),
    [
        ("{param: nope, one_of: [a]}", "does not have"),
        ("{param: to}", "at least one rule"),
        ('{param: to, matches: "(unclosed"}', "regular expression"),
    ],
)
def test_a_guard_that_cannot_work_is_refused(setup: Any, guard: str, message: str) -> None:
    text = plan('{to: "x@customer.example"}', f"  guards: [{guard}]\n")
    result = validate(setup, text)
    assert any(
        e["code"] == "E_SCHEMA_INVALID" and message in e["message"] for e in result["errors"]
    )


def run_plan(setup: Any, sender: str, on_failure: str = "stop") -> dict[str, Any]:
    """Freeze, approve as Alice and run a guarded reply whose sender the email chooses."""
    repo, config, tmp_path = setup
    (tmp_path / "mail.json").write_text(json.dumps({"from": sender, "subject": "Help"}))
    guards = (
        f"  on_failure: {on_failure}\n"
        f'  guards:\n    - {{param: to, matches: "{GUARD.replace(chr(92), chr(92) * 2)}"}}\n'
    )
    path = repo / "plans" / "reply" / "PLAN.yml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(plan('{to: "$<actions[1].outputs.sender>", subject: "Re"}', guards))
    commit_all(repo, "agent: reply plan", AGENT)
    assert run_cli("run", "--once", "--config", str(config)).returncode == 0
    path.write_text(path.read_text().replace("status: pending_approval", "status: approved"))
    commit_all(repo, "approve", ALICE)
    assert run_cli("run", "--once", "--config", str(config)).returncode == 0
    return head_plan(repo, "reply")


@pytest.mark.parametrize(
    "sender",
    [
        "attacker@evil.example",
        "x@customer.example.evil.example",  # the guard is matched in full, not as a prefix
        "x@customer.example\nBcc: a@evil.example",
        "a@customer.example, b@evil.example",
    ],
)
def test_a_hostile_value_is_stopped_before_the_tool_runs(setup: Any, sender: str) -> None:
    state = run_plan(setup, sender)
    assert state["plan"]["status"] == "failed"
    action = state["execution"]["actions"][1]
    assert action["status"] == "failed" and action["error"]["code"] == "E_GUARD_FAILED"
    repo, _, tmp_path = setup
    assert not (tmp_path / "outbox.jsonl").exists()  # nothing was sent
    log = (repo / "plans" / "reply" / "EXECUTION_LOG.md").read_text()
    assert "**Guards:**" in log and "FAILED" in log and "E_GUARD_FAILED" in log
    journal = next((tmp_path / "state" / "journal").rglob("*.jsonl")).read_text()
    ends = [r for r in map(json.loads, journal.splitlines()) if r["t"] == "end"]
    assert ends[-1]["guards"] == [
        {"param": "to", "rule": f"matches {json.dumps(GUARD)}", "ok": False}
    ]


def test_a_value_inside_the_guard_runs_and_the_check_is_recorded(setup: Any) -> None:
    state = run_plan(setup, "dana@customer.example")
    assert state["plan"]["status"] == "completed"
    _, _, tmp_path = setup
    sent = json.loads((tmp_path / "outbox.jsonl").read_text())
    assert sent["to"] == "dana@customer.example"
    log = (setup[0] / "plans" / "reply" / "EXECUTION_LOG.md").read_text()
    assert "passed" in log.split("## Action 2")[1]


def test_on_failure_skip_applies_to_a_failed_guard(setup: Any) -> None:
    state = run_plan(setup, "attacker@evil.example", on_failure="skip")
    assert state["plan"]["status"] == "completed"
    assert state["execution"]["actions"][1]["status"] == "skipped"
    assert not (setup[2] / "outbox.jsonl").exists()


def test_the_catalog_schema_tells_an_editor_about_trust_and_sensitive_params(setup: Any) -> None:
    _, config, _ = setup
    schema = json.loads(run_cli("schema", "--config", str(config)).stdout)
    rules = schema["$defs"]["Action"]["allOf"]  # the general rules, then one per tool
    notes = [r["then"]["description"] for r in rules if "description" in r.get("then", {})]
    assert "output_trust: inherit" in notes
    assert any("sensitive params: to, cc" in note for note in notes)


@pytest.mark.parametrize(
    ("guard", "why"),
    [
        ("{param: n, min: 5, max: 1}", "min 5 is above max 1"),
        ("{param: n, one_of: [7, 9], max: 3}", "none of the one_of values"),
        ('{param: n, one_of: [a, b], matches: "c"}', "none of the one_of values"),
        ('{param: n, matches: "[0-9]+", min: 0}', "matches needs a string"),
    ],
)
def test_a_guard_that_can_never_pass_is_refused(guard: str, why: str) -> None:
    """No value meets every rule: the step could only fail E_GUARD_FAILED, so the plan is
    refused at validation instead of approved and failed later."""
    text = (
        "plan: {name: n, task: t, status: pending_approval}\n"
        "available_tools: [{name: send}]\n"
        "actions:\n"
        f"  - {{id: 1, tool: send, why: w, params: {{n: 1}}, guards: [{guard}]}}\n"
    )
    _model, found = plans.check_document(yamlio.read_yaml(text).data, None)
    assert [(p.code, p.path) for p in found] == [("E_SCHEMA_INVALID", "actions[0].guards[0]")]
    assert why in found[0].message and "never pass" in found[0].message


@pytest.mark.parametrize(
    "guard", ["{param: n, min: 1, max: 1}", "{param: n, one_of: [2, x], max: 3}"]
)
def test_a_narrow_guard_that_can_pass_is_valid(guard: str) -> None:
    text = (
        "plan: {name: n, task: t, status: pending_approval}\n"
        "available_tools: [{name: send}]\n"
        "actions:\n"
        f"  - {{id: 1, tool: send, why: w, params: {{n: 1}}, guards: [{guard}]}}\n"
    )
    assert plans.check_document(yamlio.read_yaml(text).data, None)[1] == []
