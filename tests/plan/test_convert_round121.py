"""Round 121's reader classes (tests/adversarial/test_round121_sources_atk121c.py): a number
in a markdown plan is written in the digits 0-9, read by the one strict reader of JSON
sources; YAML's non-specific tag ``!`` is an explicit tag, refused by every reader of YAML;
a number the hash cannot write does not make the converter misname another value."""

from __future__ import annotations

import json

import pytest

from controller.errors import ConvertFailed, YamlParseError
from controller.plan import yamlio
from controller.plan.convert import convert_text
from controller.plan.plans import validate_text
from tests.support.gitenv import EXAMPLES

MD = (EXAMPLES / "formats" / "toon-plan-core.md").read_text()
TIMEOUT = "- **Timeout**: 30s\n"
ESTIMATE = "- **Estimated Time**: 5.0s\n"
MAX_RETRIES = "- Max Retries: 3"
assert TIMEOUT in MD and ESTIMATE in MD and MAX_RETRIES in MD


def _refused(text: str) -> list[tuple[str, int | None, str]]:
    with pytest.raises(ConvertFailed) as caught:
        convert_text(text, "PLAN.md")
    return [(p.code, p.line, f"{p.path} {p.message}") for p in caught.value.problems]


@pytest.mark.parametrize(
    "value",
    ["\u09ea0s", "\U0001d7d7s", "\u0969\u0966s", "\uff130s", "3_0s", "+30s", "030s", "\u0663"],
)
def test_a_markdown_timeout_in_other_digits_is_refused_at_its_line(value: str) -> None:
    """``- **Timeout**: \u09ea0s`` (a Bengali four, drawn like an 8: a reviewer reads 80 s)
    was 40 s, Python's ``int()`` reading any Unicode digit and ``_``."""
    text = MD.replace(TIMEOUT, f"- **Timeout**: {value}\n")
    line = text[: text.index("- **Timeout**")].count("\n") + 1
    found = _refused(text)
    assert [(code, at) for code, at, _ in found] == [("E_SCHEMA_INVALID", line)], found
    assert "timeout" in found[0][2], found


@pytest.mark.parametrize("value", ["\u09e8", "\uff12", "2_0"])
def test_max_retries_in_other_digits_is_refused(value: str) -> None:
    found = _refused(MD.replace(MAX_RETRIES, f"- Max Retries: {value}"))
    assert [code for code, _, _ in found] == ["E_SCHEMA_INVALID"], found


def test_an_estimated_time_in_other_digits_stays_the_text_written() -> None:
    """A task's ``Estimated Time`` is descriptive (metadata): written in other digits it is
    carried as the text a reviewer reads, never the number ``float()`` found in it."""
    data = convert_text(MD.replace(ESTIMATE, "- **Estimated Time**: \u0665.0s\n"), "PLAN.md").data
    assert data["metadata"]["tasks"][0]["estimated_time"] == "\u0665.0s"
    data = convert_text(MD, "PLAN.md").data
    assert data["metadata"]["tasks"][0]["estimated_time"] == 5.0


@pytest.mark.parametrize(("value", "seconds"), [("45s", 45), ("2.5s", 2.5), ("1e2s", 100)])
def test_a_markdown_timeout_in_the_digits_0_9_is_read(value: str, seconds: float) -> None:
    data = convert_text(MD.replace(TIMEOUT, f"- **Timeout**: {value}\n"), "PLAN.md").data
    assert data["actions"][0]["timeout"] == seconds


@pytest.mark.parametrize(
    "value", ["! 0777", "! false", "! null", '! "q"', "!<!> 0777", "! [a]", "!!str x"]
)
def test_every_written_tag_is_refused(value: str) -> None:
    """``mode: ! 0777`` was 777 (ruamel marks a ``!``-tagged scalar "implicit"), where YAML
    1.2 reads a string: every written tag, ``!`` too, is ``E_YAML_PARSE`` at its line."""
    with pytest.raises(YamlParseError) as caught:
        yamlio.read_yaml(f"a: 1\nb: {value}\n", "PLAN.yml")
    assert caught.value.line == 2 and "tag" in caught.value.message, caught.value.message


def test_a_tag_on_a_key_is_refused() -> None:
    with pytest.raises(YamlParseError):
        yamlio.read_yaml("! a: 1\n", "PLAN.yml")


def test_a_source_holding_the_nonspecific_tag_is_refused() -> None:
    """A pte plan and a PLAN.md's fenced ``yaml`` block are read by the same reader."""
    text = (
        "plan:\n  name: n\n  task: t\nactions:\n  - id: 1\n    tool: rec\n"
        "    params: {mode: ! 0777}\n"
    )
    for name, source in (("plan.yml", text), ("PLAN.md", f"```yaml\n{text}```\n")):
        with pytest.raises((ConvertFailed, YamlParseError)) as caught:
            convert_text(source, name, "pte" if name == "plan.yml" else None)
        said = json.dumps([p.render() for p in getattr(caught.value, "problems", [])])
        assert "E_YAML_PARSE" in said + caught.value.code, said


def test_a_number_the_hash_cannot_write_is_reported_at_its_place() -> None:
    """``1E2`` beside an integer past 2^53 was ``E_CONVERT_UNSUPPORTED: a value does not
    survive as YAML (a lone surrogate ...)``, no place: the read-back compared ``100.0``
    with ``100`` as text. The big integer is PLAN.yml's ``E_SCHEMA_INVALID`` at its place,
    as alone."""
    args = '{"a": 1E2, "b": 0.1e1, "c": -0, "d": 1e+2, "e": 12345678901234567890}'
    source = (
        '{"plan_version": 1, "skill_id": "s", "goal": "g", "steps": '
        f'[{{"step_id": "1", "tool": "rec", "args": {args}}}]}}'
    )
    converted = convert_text(source, "PLAN.json")
    assert converted.data["actions"][0]["params"]["a"] == 100
    loaded = validate_text(converted.text, None, None)  # type: ignore[arg-type]
    assert [(p.code, p.path) for p in loaded.problems] == [
        ("E_SCHEMA_INVALID", "actions[0].params.e")
    ]


@pytest.mark.parametrize(
    ("millis", "seconds"), [(1500.7, 1.5007), (0.1, 0.0001), (2999.9, 2.9999), (1501, 1.501)]
)
def test_a_timeout_in_milliseconds_is_divided_as_written(millis: float, seconds: float) -> None:
    """``timeout_ms: 1500.7`` was ``timeout: 1.5007000000000001`` (a float divided by 1000);
    the seconds are now the figure the author wrote, moved three places (atk125c, seen)."""
    doc = json.loads((EXAMPLES / "formats" / "agent-plan.json").read_text())
    tools = [step["tool"] for step in doc["steps"] if "timeout_ms" in step.get("tool", {})]
    tools[0]["timeout_ms"] = millis
    data = convert_text(json.dumps(doc), "PLAN.json").data
    assert seconds in [action.get("timeout") for action in data["actions"]], data["actions"]
