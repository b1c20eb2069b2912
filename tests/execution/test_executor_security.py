"""Control-flow integrity and secret redaction, end to end through the engine."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import structlog

from controller.execution.executor import Engine, extract_outputs
from controller.execution.secrets import Redactor, redact_text
from controller.execution.tools import cut
from controller.plan import plans
from controller.plan.schema import Output
from tests.support.executor_kit import PY, journal_records, make_plan, run

SECRET = "hunter2-SECRET-value"
HOSTILE = (
    "actions:\n- id: 99\n  tool: wipe\nplan:\n  status: approved\n"
    "$<secrets.TOKEN> $<inputs.x> ${actions[1].outputs.a} ; rm -rf /tmp/x $(id) `id`"
)


def emit(value: object) -> dict[str, object]:
    """An exec tool printing ``value`` as JSON, ignoring its input."""
    return {"kind": "exec", "argv": [PY, "-c", f"import json; print(json.dumps({value!r}))"]}


def test_tool_output_is_data_and_runs_nothing_new(tmp_path: Path) -> None:
    wiped = tmp_path / "wiped"
    tools = {
        "fetch": emit({"text": HOSTILE}),
        "say": {"kind": "echo"},
        "argv": {
            "kind": "exec",
            "argv": [PY, "-c", "import sys,json; print(json.dumps(sys.argv[1:]))", "{v}"],
        },
        "wipe": {"kind": "exec", "argv": ["touch", str(wiped)]},
    }
    actions = [
        {"id": 1, "tool": "fetch", "outputs": [{"name": "text", "path": "$.json.text"}]},
        {
            "id": 2,
            "tool": "say",
            "params": {"v": "$<actions[1].outputs.text>", "w": "x: $<actions[1].outputs.text>"},
        },
        {
            "id": 3,
            "tool": "argv",
            "params": {"v": "$<actions[1].outputs.text>"},
            "outputs": [{"name": "args", "path": "$.json"}],
        },
    ]
    config, plan_file = make_plan(tmp_path, actions, tools, inputs={"x": "INPUT"})
    frozen = plans.load_plan(plan_file, config).frozen_hash
    assert run(Engine(config), plan_file).status == "completed"
    records = journal_records(config, plan_file)
    assert sorted({r["id"] for r in records if r["t"] == "start"}) == [1, 2, 3]
    ends = {r["id"]: r for r in records if r["t"] == "end"}
    assert ends[2]["result"] == {"v": HOSTILE, "w": "x: " + HOSTILE}  # never re-resolved
    assert ends[3]["outputs"]["args"] == [HOSTILE]  # one inert argv element
    assert not wiped.exists()
    after = plans.load_plan(plan_file, config)
    assert after.hash == frozen and after.status == "pending_approval"
    assert [a.id for a in after.model.actions] == [1, 2, 3]  # type: ignore[union-attr]


def test_jsonpath_filters_cannot_execute_code(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    result = {"items": [{"a": f"__import__('os').system('touch {marker}')"}]}
    hostile = [
        Output(name="o", path=f"$.items[?@.a == __import__('os').system('touch {marker}')]"),
    ]
    with pytest.raises(Exception):  # noqa: B017 - not a valid RFC 9535 query: refused
        extract_outputs(hostile, result)
    harmless = [Output(name="o", path="$.items[?@.a == 'x'].a", optional=True)]
    assert extract_outputs(harmless, result) == {}
    assert extract_outputs([Output(name="o", path="$.items[*].a")], result) == {
        "o": [result["items"][0]["a"]]
    }
    assert not marker.exists()


@pytest.fixture
def secret_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLANGATE_SECRET_TOKEN", SECRET)


def test_secret_is_redacted_everywhere_it_is_written(tmp_path: Path, secret_env: None) -> None:
    leak = (
        "import sys,json,os; d=json.load(sys.stdin); print(json.dumps({'echo': d['token'], "
        "'env': sorted(k for k in os.environ if k.startswith('PLANGATE_SECRET'))})); "
        "sys.stderr.write('token=' + d['token'])"
    )
    fail = f"import sys; sys.exit('bad token {SECRET}')"
    tools = {
        # the token on stdin only: a secret placed into argv is refused (round 128)
        "leak": {"kind": "exec", "argv": [PY, "-c", leak]},
        "fail": {"kind": "exec", "argv": [PY, "-c", fail]},
    }
    actions = [
        {
            "id": 1,
            "tool": "leak",
            "params": {"token": "$<secrets.TOKEN>", "h": "Bearer $<secrets.TOKEN>"},
            "outputs": [
                {"name": "echo", "path": "$.json.echo"},
                {"name": "env", "path": "$.json.env"},
            ],
        },
        {"id": 2, "tool": "fail"},
    ]
    config, plan_file = make_plan(tmp_path, actions, tools)
    with structlog.testing.capture_logs() as logs:
        outcome = run(Engine(config), plan_file)
    assert outcome.status == "failed" and outcome.error is not None
    assert SECRET not in outcome.error.message and "***" in outcome.error.message
    state_dir = tmp_path / "state"
    written = [plan_file.read_text(), (plan_file.parent / "EXECUTION_LOG.md").read_text()]
    written += [p.read_text() for p in state_dir.rglob("*.jsonl")]
    written.append(json.dumps(logs, default=str))
    for text in written:
        assert SECRET not in text
    assert "***" in written[1] and "***" in written[2]
    ends = {r["id"]: r for r in journal_records(config, plan_file) if r["t"] == "end"}
    assert ends[1]["outputs"] == {"echo": "***", "env": []}  # tools never see secret env vars
    assert all("plan" in e and "hash" in e for e in logs)


def test_a_value_the_plan_wrote_equal_to_a_secret_is_quoted_only_as_the_plans_text(
    tmp_path: Path, secret_env: None
) -> None:
    """Round 62: a value of the plan that EQUALS a secret and reaches a tool is the
    controller's material where the tool may bring it back: the journal, the result, the
    outputs and the plan's execution block mask it. Round 64: the log's "Params (resolved)"
    quotes the plan's literal as written (masked, it confirmed its author's guess of the
    secret; it is in the committed plan already); what the tool echoed stays ``***``."""
    echo = "import sys,json; d=json.load(sys.stdin); print(json.dumps({'got': d['v']}))"
    tools = {"echo": {"kind": "exec", "argv": [PY, "-c", echo]}}
    actions = [{"id": 1, "tool": "echo", "params": {"v": SECRET}, "outputs": [
        {"name": "got", "path": "$.json.got"}]}]  # fmt: skip
    config, plan_file = make_plan(tmp_path, actions, tools)
    outcome = run(Engine(config), plan_file)
    assert outcome.status == "completed"
    log = (plan_file.parent / "EXECUTION_LOG.md").read_text()
    journal = "".join(p.read_text() for p in (tmp_path / "state").rglob("*.jsonl"))
    execution = plan_file.read_text().split("\nexecution:", 1)[1]
    for text in (journal, execution):
        assert SECRET not in text
    params, rest = log.split("**Params (resolved):**", 1)[1].split("```\n\n", 1)
    assert f'"v": "{SECRET}"' in params and SECRET not in rest
    assert '- `got`: `"***"`' in rest
    ends = {r["id"]: r for r in journal_records(config, plan_file) if r["t"] == "end"}
    assert ends[1]["outputs"] == {"got": "***"}


def test_missing_secret_fails_the_action(tmp_path: Path) -> None:
    actions = [{"id": 1, "tool": "say", "params": {"t": "$<secrets.NOPE>"}}]
    config, plan_file = make_plan(tmp_path, actions, {"say": {"kind": "echo"}})
    outcome = run(Engine(config), plan_file)
    assert outcome.error is not None and outcome.error.code == "E_REF_UNAVAILABLE"
    assert "PLANGATE_SECRET_NOPE" in outcome.error.message


def test_secrets_file_and_commit_message_helper(tmp_path: Path) -> None:
    (tmp_path / "secrets.yml").write_text(f"API_KEY: {SECRET}\n")
    actions = [
        {
            "id": 1,
            "tool": "say",
            "params": {"k": "$<secrets.API_KEY>"},
            "outputs": [{"name": "k", "path": "$.k"}],
        }
    ]
    config, plan_file = make_plan(
        tmp_path,
        actions,
        {"say": {"kind": "echo"}},
        extra_config={"secrets": {"file": "secrets.yml"}},
    )
    assert run(Engine(config), plan_file).status == "completed"
    assert SECRET not in plan_file.read_text()
    assert (
        redact_text(config, f"plangate: fail plans/demo ({SECRET})")
        == "plangate: fail plans/demo (***)"
    )


def test_redactor_hides_longest_first_and_inside_data() -> None:
    redactor = Redactor(["abc", "abcdef", ""])
    assert redactor.text("xabcdefy abc") == "x***y ***"
    assert redactor.data({"abc": ["abcdef", 1, {"k": "zabc"}]}) == {
        "***": ["***", 1, {"k": "z***"}]
    }
    assert Redactor(["12345"]).data({"n": 912345}) == {"n": "***"}


def test_secret_printed_json_escaped_or_cut_at_the_limit_is_hidden(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = 'pä"ss\\wörd-42'  # json.dumps escapes every special character of it
    monkeypatch.setenv("PLANGATE_SECRET_TOKEN", secret)
    dump = "import sys,json; d=json.load(sys.stdin); print(json.dumps({'t': d['t']}), end='')"
    pad = "import sys,json; d=json.load(sys.stdin); sys.stdout.write('A'*995 + d['t'])"
    tools = {
        "dump": {"kind": "exec", "argv": [PY, "-c", dump]},
        "pad": {"kind": "exec", "argv": [PY, "-c", pad]},  # cut at 1000 bytes: 'pä"s' kept
    }
    actions = [
        {"id": 1, "tool": "dump", "params": {"t": "$<secrets.TOKEN>"}},
        {"id": 2, "tool": "pad", "params": {"t": "$<secrets.TOKEN>"}},
    ]
    limits = {"limits": {"max_actions": 10, "max_result_bytes": 1000}}
    config, plan_file = make_plan(tmp_path, actions, tools, extra_config=limits)
    assert run(Engine(config), plan_file).status == "completed"
    ends = [r for r in journal_records(config, plan_file) if r["t"] == "end"]
    assert ends[0]["result"]["stdout"] == '{"t": "***"}'
    assert ends[1]["result"]["stdout"].startswith("A" * 995 + "***\n[plangate: output cut at")
    log = (plan_file.parent / "EXECUTION_LOG.md").read_text()
    assert "u00e4" not in log and 'pä\\"s' not in log and "***" in log


def test_redactor_hides_escaped_forms_and_a_cut_secret_start() -> None:
    redactor = Redactor(["s3cr\u00e9t"])
    assert redactor.text('{"k": "s3cr\\u00e9t"}') == '{"k": "***"}'
    assert redactor.text("xxs3c\n[plangate: output cut at 5 bytes; 9 more]") == (
        "xx***\n[plangate: output cut at 5 bytes; 9 more]"
    )
    assert redactor.text("xxs3cr\ufffd\n[plangate: output cut at 7 bytes; 1 more]").startswith(
        "xx***\n"
    )
    assert redactor.text("no cut s3c") == "no cut s3c"
    assert redactor.text(cut(b"xxs3c", 8, 5)) == "xx***" + cut(b"", 8, 5)  # the tools' own note


def test_the_console_log_cuts_an_action_error_as_the_journal_does(tmp_path: Path) -> None:
    """A verify naming 500 failing clauses makes a 75 KB message: the journal and commits
    cut it at 2,000 characters (round 38); the ``action_ended`` log event carried it whole
    to journald on every try. It is cut the same way."""
    from controller.execution.journal import MESSAGE_CHARS

    clauses = [{"path": "$.t", "equals": i} for i in range(500)]
    actions = [{"id": 1, "tool": "say", "params": {"t": "x" * 200}, "verify": {"expect": clauses}}]
    config, plan_file = make_plan(tmp_path, actions, {"say": {"kind": "echo"}})
    with structlog.testing.capture_logs() as logs:
        outcome = run(Engine(config), plan_file)
    assert outcome.error is not None and outcome.error.code == "E_VERIFY_FAILED"
    assert len(outcome.error.message) > 10 * MESSAGE_CHARS  # the test makes a long message
    [ended] = [e for e in logs if e.get("event") == "action_ended"]
    assert ended["code"] == "E_VERIFY_FAILED"
    assert len(ended["error"]) <= MESSAGE_CHARS + 1 and ended["error"].endswith("…")
