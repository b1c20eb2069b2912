"""Round 45 (issue 11): a guard reads a value as recorded (secrets masked, round 43), so where
the redaction changed that value, the tool would get something the guard never judged: the
guard fails closed (``E_GUARD_FAILED``, and the log says why). An output query's filter treats
a value the redaction changed as not matching."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from controller.errors import GuardFailed
from controller.execution.executor import Engine
from controller.execution.results import changed_by_redaction, extract_outputs
from controller.execution.secrets import Redactor
from controller.plan import guards
from controller.plan.schema import Guard, Output
from tests.support.executor_kit import PY, execution, make_plan, run

SECRET = "Zq8Wx3Yv7Ut2-round45"
REDACTOR = Redactor([SECRET])
PATTERN = r"^[^@\s]+@customer\.example$"
#: Outside data wrapping the secret's characters around an attacker's address: recorded as
#: ``***@customer.example``, which passes the guard; the real value does not.
WRAPPED = SECRET[0] + "<evil@attacker.example>" + "<b>".join(SECRET[1:]) + "@customer.example"


def test_the_masked_view_of_wrapped_data_passes_the_pattern() -> None:
    """The bench: without the round 45 rule the guard held for this value."""
    seen = REDACTOR.data(WRAPPED)
    assert seen != WRAPPED and "attacker" not in seen
    assert guards.check_values([Guard(param="to", matches=PATTERN)], {"to": seen}, "a") == [
        {"param": "to", "rule": f"matches {json.dumps(PATTERN)}", "ok": True}
    ]


def test_a_guard_over_a_value_holding_a_secrets_text_fails_closed() -> None:
    rules = [Guard(param="to", matches=PATTERN)]
    real = {"to": WRAPPED}
    with pytest.raises(GuardFailed) as failed:
        guards.check_values(rules, REDACTOR.data(real), "action 2", real)
    error = failed.value
    assert "held a secret's text" in error.message and "held a secret's text" in error.remedy
    assert error.checks[-1]["ok"] is False and error.checks[-1]["held_secret"] is True
    for text in (error.message, json.dumps(error.checks)):
        assert SECRET not in text and "attacker" not in text
    # the same guard over a clean value passes, as before
    clean = {"to": "ops@customer.example"}
    assert guards.check_values(rules, REDACTOR.data(clean), "action 2", clean)[0]["ok"]
    # a list: one changed element fails the whole value closed
    both = {"to": ["ops@customer.example", WRAPPED]}
    with pytest.raises(GuardFailed):
        guards.check_values(rules, REDACTOR.data(both), "action 2", both)


def test_a_param_written_as_one_secret_is_judged_masked_as_before() -> None:
    """``s: "$<secrets.TOK>"`` is knowingly that secret: the guard reads ``***`` (round 43)."""
    rules = [Guard(param="s", matches=r"\*\*\*")]
    real = {"s": SECRET}
    written = {"s": "$<secrets.TOK>"}
    assert guards.check_values(rules, REDACTOR.data(real), "a", real, written)[0]["ok"]
    with pytest.raises(GuardFailed):  # the same text reached through anything else: closed
        guards.check_values(rules, REDACTOR.data(real), "a", real, {"s": "$<inputs.s>"})


def test_a_filter_never_selects_what_the_redaction_changed() -> None:
    result = {"list": [{"a": "ops@customer.example"}, {"a": WRAPPED}]}
    path = "$.list[?match(@.a, '[^@ ]+@customer[.]example')].a"
    found = extract_outputs([Output(name="to", path=path)], result, redact=REDACTOR.data)
    assert found == {"to": ["ops@customer.example"]}
    # without the redactor both match (the filter reads the real values): the bench is real
    assert (
        len(
            extract_outputs(
                [Output(name="to", path=path)], {"list": [{"a": "x@customer.example"}] * 2}
            )["to"]
        )
        == 2
    )
    # a filter that reads only unchanged values still selects an element holding a secret
    mixed = {"w": [{"s": SECRET, "n": "plain"}]}
    kept = extract_outputs(
        [Output(name="s", path="$.w[?@.n == 'plain'].s")], mixed, redact=REDACTOR.data
    )
    assert kept == {"s": [SECRET]}
    # a filter reading a changed value through the root is void too
    rooted = {"me": WRAPPED, "w": [{"a": "***@customer.example", "n": 1}]}
    assert (
        extract_outputs(
            [Output(name="n", path="$.w[?@.a == $.me].n", optional=True)],
            rooted,
            redact=REDACTOR.data,
        )
        == {}
    )


def test_changed_by_redaction_marks_the_changed_values_and_their_holders() -> None:
    raw = {"a": [{"s": SECRET}, {"n": "plain"}], "b": {"c": 1}}
    seen = REDACTOR.data(raw)
    changed = changed_by_redaction(seen, raw)
    assert {id(seen), id(seen["a"]), id(seen["a"][0]), id(seen["a"][0]["s"])} <= changed
    assert id(seen["b"]) not in changed and id(seen["a"][1]) not in changed
    # a list the redaction folded into one string (a secret split over its elements)
    folded = {"a": ["x", SECRET]}
    shown_folded = REDACTOR.data(folded)
    assert id(shown_folded["a"]) in changed_by_redaction(shown_folded, folded)
    # a mapping whose keys the redaction changed counts as changed whole
    keyed = {"k": {SECRET: "v"}, "b": {"c": 1}}
    shown = REDACTOR.data(keyed)
    assert id(shown["k"]) in changed_by_redaction(shown, keyed)
    assert changed_by_redaction(raw, raw) == frozenset()


def _plan(tmp_path: Path, value: str) -> tuple[Path, Path, object]:
    got = tmp_path / "got.jsonl"
    code = (
        f"import sys,json; d=sys.stdin.read(); open({str(got)!r},'a').write(d+'\\n'); print('{{}}')"
    )
    actions = [
        {
            "id": 1,
            "tool": "echo",
            "params": {"from": value},
            "outputs": [{"name": "f", "path": "$.from"}],
        },
        {
            "id": 2,
            "tool": "rec",
            "params": {"to": "$<actions[1].outputs.f>"},
            "guards": [{"param": "to", "matches": PATTERN}],
        },
    ]
    tools = {"echo": {"kind": "echo"}, "rec": {"kind": "exec", "argv": [PY, "-c", code]}}
    config, plan_file = make_plan(tmp_path, actions, tools)
    return got, plan_file, config


def test_a_run_fails_the_guard_closed_and_the_log_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PLANGATE_SECRET_TOK", SECRET)
    got, plan_file, config = _plan(tmp_path, WRAPPED)
    outcome = run(Engine(config), plan_file)  # type: ignore[arg-type]
    assert outcome.status == "failed"
    assert not got.exists()  # the tool never got the wrapped value
    second = execution(plan_file)["actions"][1]
    assert second["status"] == "failed" and second["error"]["code"] == "E_GUARD_FAILED"
    log = (plan_file.parent / "EXECUTION_LOG.md").read_text()
    assert "FAILED closed (the value held a secret's text" in log
    # the plan itself writes the value here: action 1's params quote it as the plan wrote
    # it (round 64: the author's text); what the run made of it is never quoted
    start = log.index("**Params (resolved):**")  # action 1's
    end = log.index("```\n\n", start)
    before, params, rest = log[:start], log[start:end], log[end:]
    assert json.dumps(WRAPPED) in params
    for text in (before, rest, json.dumps(execution(plan_file))):
        assert SECRET not in text and "attacker" not in text


def test_a_run_passes_the_same_guard_over_a_clean_value(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PLANGATE_SECRET_TOK", SECRET)
    got, plan_file, config = _plan(tmp_path, "ops@customer.example")
    assert run(Engine(config), plan_file).status == "completed"  # type: ignore[arg-type]
    assert json.loads(got.read_text()) == {"to": "ops@customer.example"}
