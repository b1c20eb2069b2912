"""Round 46 (issue 11): keys of one mapping that read the same once secrets are masked (a key
holding a secret, in any spelling the redactor reads, and a key written ``***``) are never
merged: the recorded view keeps every member, each masked one of them under a placeholder of
its own, and a query or a check reads such a mapping only by the names the tool gave its
other keys. A wildcard, a descendant segment, a filter or a placeholder that reaches a member
under a masked key fails closed (``E_TOOL_OUTPUT_INVALID``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from controller.errors import PlangateError, ToolOutputInvalid
from controller.execution import checks
from controller.execution.executor import Engine
from controller.execution.results import extract_outputs
from controller.execution.secrets import Redactor
from controller.plan.jsonpaths import MaskedAlike
from controller.plan.schema import Output, Verify
from tests.support.executor_kit import PY, execution, journal_records, make_plan, run

SECRET = "Zq8Wx3Yv7Ut2-round46"
OTHER = "Kp4Rt7Wn2Qs9-round46"
REDACTOR = Redactor([SECRET, OTHER])


@pytest.fixture
def secret_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLANGATE_SECRET_TOK", SECRET)


def _one(path: str, result: object, redactor: Redactor = REDACTOR) -> object:
    found = extract_outputs([Output(name="o", path=path)], result, redact=redactor.view)
    return found["o"]


def test_the_recorded_view_keeps_every_member() -> None:
    result = {"***": 1, SECRET: 2, SECRET.lower(): 3, "x": 4}
    shown = REDACTOR.data(result)
    assert type(shown) is dict  # plain data: what the journal and PLAN.yml are written from
    assert list(shown.items()) == [("***", 1), ("***~1", 2), ("***~2", 3), ("x", 4)]
    # a placeholder never takes the name of another key of the mapping
    shown = REDACTOR.data({SECRET: 1, "***~1": 2, "***": 3})
    assert list(shown.items()) == [("***~2", 1), ("***~1", 2), ("***", 3)]
    assert SECRET not in json.dumps(shown)
    # keys that do not read alike are as before
    assert REDACTOR.data({SECRET: 1, "a": 2}) == {"***": 1, "a": 2}
    view = REDACTOR.view(result)
    assert isinstance(view, MaskedAlike) and view.masked == {"***~1", "***~2"}
    assert type(REDACTOR.view({SECRET: 1, "a": 2})) is dict


@pytest.mark.parametrize("first", [True, False])
def test_a_name_selects_the_key_the_tool_wrote_by_that_name(first: bool) -> None:
    members = [("***", {"v": "safe"}), (SECRET, {"v": "EVIL"})]
    result = {"k": dict(members if first else members[::-1]), "n": 1}
    assert _one("$.k['***'].v", result) == "safe"  # whatever the order of the keys
    assert _one("$.n", result) == 1


@pytest.mark.parametrize(
    "path",
    [
        "$.k.*",
        "$.k[*]",
        "$..v",
        "$.k[?@.v == 'EVIL']",
        "$.k['***~1']",
        "$.k['***~2']",
        "$..*",
    ],
)
def test_anything_else_reaching_a_masked_member_fails_closed(path: str) -> None:
    result = {"k": {SECRET: {"v": "EVIL"}, "***": {"w": "safe"}, OTHER.lower(): "x"}}
    with pytest.raises(ToolOutputInvalid) as raised:
        _one(path, result)
    message = raised.value.message
    assert "two keys of one mapping" in message and "read the same" in message
    assert SECRET not in message and "***~" not in message.replace(path, "")  # no key printed


def test_no_alike_keys_no_change() -> None:
    """Round 43's rule stands for a mapping whose masked keys read like no other key."""
    result = {"k": {SECRET: "a", "b": "c"}}
    assert _one("$.k['***']", result) == "a"
    assert _one("$.k.*", result) == ["a", "c"]


def test_the_order_of_alike_keys_never_chooses_a_value() -> None:
    members = [(SECRET, "safe"), (SECRET.lower(), "EVIL")]
    for path in ("$.k['***']", "$.k.*", "$.k['***~1']"):
        outcomes = set()
        for order in (members, members[::-1]):
            try:
                outcomes.add(json.dumps(_one(path, {"k": dict(order)})))
            except PlangateError as exc:  # the outcome is the error's code
                outcomes.add(exc.code)
        assert len(outcomes) == 1, (path, outcomes)


def test_the_outcome_is_a_function_of_the_record() -> None:
    """Two results whose keys hold different secrets but are recorded alike are read alike:
    the failure tells nothing the record does not show."""
    for path in ("$.k['***']", "$.k.*", "$.k.a"):
        seen = []
        for key in (SECRET, OTHER):
            result = {"k": {key: 1, "***": 2, "a": 3}}
            try:
                seen.append(json.dumps(_one(path, result)))
            except ToolOutputInvalid as exc:
                seen.append(exc.message)
        assert seen[0] == seen[1], path


def test_a_check_never_reads_fewer_values_than_the_tool_returned() -> None:
    result = {"web": "ok", SECRET: "failed", SECRET.lower(): "ok"}
    spec = Verify.model_validate({"expect": {"path": "$.*", "equals": ["ok", "ok"]}})
    found = checks.verify_result(spec, REDACTOR.view(result))
    assert not found.ok
    assert "could not be evaluated" in found.failures[0]
    # over the recorded data without the marks, the wildcard reads all three values
    plain = checks.verify_result(spec, REDACTOR.data(result))
    assert not plain.ok and "failed" in plain.failures[0]
    by_name = Verify.model_validate({"expect": {"path": "$.web", "equals": "ok"}})
    assert checks.verify_result(by_name, REDACTOR.view(result)).ok


def test_a_run_over_alike_keys(tmp_path: Path, secret_env: None) -> None:
    """End to end: the key written ``***`` is read by name; ``*`` fails closed and so does a
    verify over every value; the record holds every member, no secret."""
    script = tmp_path / "alike.py"
    script.write_text(
        "import json, sys\n"
        "s = json.load(sys.stdin)['s']\n"
        "print(json.dumps({s: 'failed', '***': 'ok', s.lower(): 'ok'}))\n"
    )
    tools = {
        "alike": {"kind": "exec", "argv": [PY, str(script)]},
        "echo": {"kind": "echo"},
    }
    actions = [
        {
            "id": 1,
            "tool": "alike",
            "params": {"s": "$<secrets.TOK>"},
            "outputs": [{"name": "o", "path": "$.json['***']"}],
        },
        {
            "id": 2,
            "tool": "alike",
            "on_failure": "skip",
            "params": {"s": "$<secrets.TOK>"},
            "outputs": [{"name": "all", "path": "$.json.*"}],
        },
        {
            "id": 3,
            "tool": "alike",
            "on_failure": "skip",
            "params": {"s": "$<secrets.TOK>"},
            "verify": {"expect": {"path": "$.json.*", "equals": ["ok", "ok"]}},
        },
        {"id": 4, "tool": "echo", "params": {"o": "$<actions[1].outputs.o>"}},
    ]
    config, plan_file = make_plan(tmp_path, actions, tools)
    run(Engine(config), plan_file)
    done = execution(plan_file)["actions"]
    assert [a["status"] for a in done] == ["succeeded", "skipped", "skipped", "succeeded"]
    assert "E_TOOL_OUTPUT_INVALID" in json.dumps(done[1])
    assert "E_VERIFY_FAILED" in json.dumps(done[2])
    records = journal_records(config, plan_file)
    ends = {r["id"]: r for r in records if r["t"] == "end"}
    assert ends[4]["result"] == {"o": "ok"}
    assert list(ends[1]["result"]["json"].items()) == [
        ("***~1", "failed"),
        ("***", "ok"),
        ("***~2", "ok"),
    ]
    assert SECRET not in json.dumps(records) and SECRET not in plan_file.read_text()
