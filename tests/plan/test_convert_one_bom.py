"""A plan source's reader reads past one byte order mark, never two (round 128, atk128b,
``mcp-double-bom-plan-yml-read-as-pte``).

``read_source`` took a leading U+FEFF off and handed the rest to the YAML reader, which reads
past another one itself (libyaml skips a U+FEFF at a line's start): a PLAN.yml written with
two BOMs, ``E_YAML_PARSE`` to ``validate``, ``hash`` and ``show`` of the file, converted as a
valid ``pte`` plan (comments dropped) for ``plangate convert`` and MCP ``validate``. Now a YAML
file is read as the PLAN.yml reader reads it (its own one BOM), every other reading without
one BOM, and a second one is refused. The CLI runs are real ``plangate`` processes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from controller.errors import ParseNonJson, YamlParseError
from controller.plan import yamlio
from controller.plan.convert import convert_text
from tests.support.gitenv import run_cli
from tests.support.plantext import greet_plan

BASE = greet_plan("Greet", "Say hello", '"world"   # a comment pte drops')
PLAN_CONTRACT = json.dumps(
    {"plan_version": 1, "goal": "g", "steps": [{"step_id": "s1", "tool": "greet", "args": {}}]}
)
PTE_JSON = json.dumps(
    {
        "plan": {"name": "n", "task": "t"},
        "actions": [{"id": 1, "tool": "greet", "why": "w", "params": {}}],
    }
)
MARKDOWN = (
    "# md\n\n## Objective\n\ngreet\n\n## Steps\n\n### Step 1: Greet\n\n"
    '- **Action**: greet\n- **Parameters**: {"who": "x"}\n'
)


TEXTS = {"yaml": BASE, "plan-contract": PLAN_CONTRACT, "pte-json": PTE_JSON, "md": MARKDOWN}
#: (text, name): every reader but YAML's (a markdown file holds a markdown plan)
NOT_YAML = [
    *(pytest.param(t, n, id=f"{k}-{n}") for k, t in TEXTS.items() for n in ("text", "PLAN.json")),
    pytest.param(MARKDOWN, "PLAN.md", id="md-PLAN.md"),
]


@pytest.mark.parametrize(("text", "name"), NOT_YAML)
def test_one_bom_reads_as_none_and_a_second_is_refused(text: str, name: str) -> None:
    plain = convert_text(text, name)
    assert convert_text("\ufeff" + text, name).text == plain.text
    for boms in (2, 3):
        with pytest.raises(ParseNonJson, match="second byte order mark"):
            convert_text("\ufeff" * boms + text, name)


@pytest.mark.parametrize("boms", [0, 1, 2, 3])
@pytest.mark.parametrize("text", [BASE, PTE_JSON], ids=["yaml", "pte-json"])
def test_a_yaml_file_is_read_as_the_plan_yml_reader_reads_it(text: str, boms: int) -> None:
    """Whatever the PLAN.yml reader makes of the text, the YAML source reader makes the
    same: the same data, or the same E_YAML_PARSE."""
    given = "\ufeff" * boms + text
    try:
        data = yamlio.read_yaml(given, "PLAN.yml").data
    except YamlParseError as refused:
        with pytest.raises(YamlParseError) as caught:
            convert_text(given, "PLAN.yml")
        assert caught.value.message == refused.message
        return
    assert convert_text(given, "PLAN.yml").data == convert_text(text, "PLAN.yml").data
    assert data == yamlio.read_yaml(text, "PLAN.yml").data


def test_convert_of_a_two_bom_plan_yml_is_validates_yaml_error(tmp_path: Path) -> None:
    path = tmp_path / "plans" / "x" / "PLAN.yml"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"\xef\xbb\xbf\xef\xbb\xbf" + BASE.encode())
    checked = json.loads(run_cli("validate", "--json", str(path)).stdout)
    assert [e["code"] for e in checked["errors"]] == ["E_YAML_PARSE"], checked
    converted = run_cli("convert", "--json", str(path))
    assert converted.returncode != 0, converted
    answer = json.loads(converted.stdout.splitlines()[0])
    assert (answer["ok"], answer["code"]) == (False, "E_YAML_PARSE"), answer
    assert answer["line"] == checked["errors"][0]["line"], (answer, checked)
