"""Round 43: what reads a tool's result reads it as recorded (secrets masked): output
queries, ``expect``, guards; the real values cross a pause sealed in the journal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from controller.errors import GuardFailed
from controller.execution.executor import Engine
from controller.execution.results import extract_outputs
from controller.execution.secrets import Redactor
from controller.execution.steps import guarded, journaled
from controller.plan import refs
from controller.plan.schema import Guard, Output
from tests.support.executor_kit import PY, execution, journal_records, make_plan, run

SECRET = "Zq8Wx3Yv7Ut2-round43"
REDACTOR = Redactor([SECRET])
REDACTOR.seal_key = bytes(range(32))


def _keyed(values: list[str], key: bytes) -> Redactor:
    made = Redactor(values)
    made.seal_key = key
    return made


def _outputs(*paths: str) -> list[Output]:
    return [Output(name=f"o{n}", path=p, optional=True) for n, p in enumerate(paths)]


def test_output_filters_never_test_a_secret() -> None:
    result = {"w": [{"s": SECRET, "n": "hit"}], "ps": [{"p": "Z.*", "c": "hitZ"}]}
    oracles = _outputs(
        "$.w[?match(@.s, 'Z.*')].n",
        "$.w[?search(@.s, 'Zq8W')].n",  # I-Regexp: ^ would be a character
        "$.w[?@.s > 'Y' && @.s < 'a'].n",
        f"$.w[?length(@.s) == {len(SECRET)}].n",
        "$.ps[?match($.w[0].s, @.p)].c",
    )
    assert extract_outputs(oracles, result, redact=REDACTOR.data) == {}
    # without the redactor (the old behaviour) every one of them held: the test is real
    assert len(extract_outputs(oracles, result)) == 5


def test_a_selected_value_is_the_tools_own() -> None:
    """The nodes are chosen over the recorded result; their values are the tool's, so a
    later action gets the secret the tool handed back (recorded as ``***``)."""
    result = {"s": SECRET, "w": [{"s": SECRET, "n": "plain"}], "k": {"a": 1, SECRET: 2}}
    found = extract_outputs(
        [
            Output(name="s", path="$.s"),
            Output(name="all", path="$.w[*]"),
            Output(name="n", path="$.w[?@.n == 'plain'].s"),
            Output(name="k", path="$.k"),
            Output(name="masked_key", path="$.k['***']"),
        ],
        result,
        redact=REDACTOR.data,
    )
    assert found["s"] == SECRET
    assert found["all"] == [{"s": SECRET, "n": "plain"}]
    assert found["n"] == [SECRET]
    assert found["k"] == {"a": 1, SECRET: 2}
    assert found["masked_key"] == 2  # a key the redactor changed still maps by its place
    assert REDACTOR.data(found)["s"] == "***"


def test_a_key_collision_selects_the_key_of_that_name() -> None:
    """Round 46: the two keys are kept apart (the masked one as ``***~1``); the query naming
    ``***`` gets the value of the key the tool wrote as ``***``, never the other's (before,
    the recorded mapping kept the last of the two, and its value was handed on)."""
    result = {"k": {"***": "plain", SECRET: "other"}}
    for redact in (REDACTOR.data, REDACTOR.view):
        found = extract_outputs([Output(name="v", path="$.k['***']")], result, redact=redact)
        assert found == {"v": "plain"}


def test_the_outputs_limit_counts_what_is_recorded() -> None:
    result = {"s": SECRET}  # 30 characters of JSON; recorded {"s": "***"}: 13
    found = extract_outputs([Output(name="s", path="$.s")], result, 20, REDACTOR.data)
    assert found == {"s": SECRET}


def test_guards_of_a_check_test_values_as_recorded() -> None:
    ctx = refs.Context(secret=lambda name: SECRET)
    rules = [Guard(param="s", matches="Z.*")]
    resolve = guarded(ctx, rules, "check", REDACTOR.data)
    with pytest.raises(GuardFailed) as failed:
        resolve({"s": "$<secrets.TOK>"})
    assert SECRET not in failed.value.message
    assert guarded(ctx, [Guard(param="s", matches=r"\*\*\*")], "check", REDACTOR.data)(
        {"s": "$<secrets.TOK>"}
    ) == {"s": SECRET}  # the check tool still gets the real value


def test_seal_key_is_made_once_and_kept(tmp_path: Path) -> None:
    from controller.execution.secrets import seal_key

    path = tmp_path / "state" / "seal.key"
    first = seal_key(path)
    assert len(first) == 32 and seal_key(path) == first
    assert path.stat().st_mode & 0o777 == 0o600


def test_seal_round_trip_and_other_secrets() -> None:
    value = {"outputs": {"x": SECRET, "f": -0.0, "e": 1e300}, "result": [1, "a\u2028b"]}
    sealed = REDACTOR.seal(value)
    assert sealed is not None and SECRET not in sealed
    assert REDACTOR.unseal(sealed) == value
    assert REDACTOR.seal(value) != sealed  # a fresh nonce every time
    with pytest.raises(ValueError):
        _keyed([SECRET], bytes(32)).unseal(sealed)  # another state directory's key
    # round 44: another secret added (or one renamed) leaves the seal readable
    assert _keyed([SECRET, "unrelated-value-77"], bytes(range(32))).unseal(sealed) == value
    with pytest.raises(ValueError):
        REDACTOR.unseal(sealed[:-4] + "AAAA")
    assert Redactor([]).seal(value) is None
    assert Redactor([SECRET]).seal(value) is None  # no key: nothing sealed
    record = {"outputs": {"x": "***"}, "result": None, "sealed": sealed}
    assert journaled(REDACTOR, record) == (value["outputs"], value["result"])
    assert journaled(_keyed([SECRET], bytes(32)), record) == ({"x": "***"}, None)
    assert journaled(REDACTOR, {"outputs": {"x": 1}}) == ({"x": 1}, None)


@pytest.fixture
def secret_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLANGATE_SECRET_TOK", SECRET)


def _recorder(target: Path) -> dict[str, object]:
    code = (
        "import sys,json; d=sys.stdin.read(); "
        f"open({str(target)!r},'a').write(d+'\\n'); print('{{}}')"
    )
    return {"kind": "exec", "argv": [PY, "-c", code]}


def test_a_gated_action_gets_the_real_output(tmp_path: Path, secret_env: None) -> None:
    got = tmp_path / "got.jsonl"
    actions = [
        {
            "id": 1,
            "tool": "echo",
            "params": {"s": "$<secrets.TOK>"},
            "outputs": [{"name": "x", "path": "$.s"}],
        },
        {
            "id": 2,
            "tool": "rec",
            "requires_approval": True,
            "params": {"q": "$<actions[1].outputs.x>", "r": "$<actions[1].result.s> tail"},
        },
    ]
    tools = {"echo": {"kind": "echo"}, "rec": _recorder(got)}
    config, plan_file = make_plan(tmp_path, actions, tools)
    assert run(Engine(config), plan_file).status == "awaiting_approval"
    assert run(Engine(config), plan_file, gate_approved=2).status == "completed"
    assert json.loads(got.read_text()) == {"q": SECRET, "r": f"{SECRET} tail"}
    records = journal_records(config, plan_file)
    text = json.dumps(records)
    assert SECRET not in text and "sealed" in text
    assert SECRET not in plan_file.read_text()
    assert execution(plan_file)["actions"][0]["outputs"] == {"x": "***"}


def test_guards_of_an_action_never_test_a_secret(tmp_path: Path, secret_env: None) -> None:
    actions = [
        {
            "id": n,
            "tool": "echo",
            "on_failure": "skip",
            "params": {"s": "$<secrets.TOK>"},
            "guards": [{"param": "s", "matches": f"{guess}.*"}],
        }
        for n, guess in ((1, "Z"), (2, "Y"))
    ]
    config, plan_file = make_plan(tmp_path, actions, {"echo": {"kind": "echo"}})
    assert run(Engine(config), plan_file).status == "completed"
    states = [a["status"] for a in execution(plan_file)["actions"]]
    assert states == ["skipped", "skipped"]


def test_expect_reads_the_result_as_recorded(tmp_path: Path, secret_env: None) -> None:
    actions = [
        {
            "id": 1,
            "tool": "echo",
            "on_failure": "skip",
            "params": {"s": "$<secrets.TOK>"},
            "verify": {"expect": {"path": "$.s", "matches": "Z.*"}},
        },
        {
            "id": 2,
            "tool": "echo",
            "params": {"s": "$<secrets.TOK>"},
            "verify": {"expect": {"path": "$.s", "equals": "***"}},
        },
    ]
    config, plan_file = make_plan(tmp_path, actions, {"echo": {"kind": "echo"}})
    assert run(Engine(config), plan_file).status == "completed"
    assert [a["status"] for a in execution(plan_file)["actions"]] == ["skipped", "succeeded"]
