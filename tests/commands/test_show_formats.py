"""`plangate show --format text|json|toon|markdown`, `--verbose/--quiet`, and the one JSON
error shape of every command's `--json` (SPEC §13, §14)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import toon_format
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from controller.plan import rendering
from controller.plan.plans import validate_text
from tests.support.gitenv import run_cli
from tests.support.plan_factory import BASE_TEXT, write_plan

RUN = """\
execution:
  status: failed
  actions:
    - {id: 1, key: "step:0011223344556677", status: succeeded, attempts: 1, duration_ms: 12,
       outputs: {keys: staging}}
    - {id: 2, key: "step:8899aabbccddeeff", status: failed, attempts: 3, duration_ms: 40,
       error: {code: E_TOOL_FAILED, message: "the key store said no"}}
"""


def test_toon_output_decodes_to_the_json_output(tmp_path: Path) -> None:
    path = write_plan(tmp_path, BASE_TEXT + RUN)
    as_json = run_cli("show", "--format", "json", str(path))
    as_toon = run_cli("show", "--format", "toon", str(path))
    assert as_json.returncode == as_toon.returncode == 0, as_toon.stderr
    data = json.loads(as_json.stdout)
    assert data["hash"].startswith("sha256:") and data["execution"]["status"] == "failed"
    assert toon_format.decode(as_toon.stdout) == data
    assert len(as_toon.stdout) < len(as_json.stdout)  # the point of TOON


_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=30)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=_text.filter(str.strip),
    values=st.dictionaries(
        _text.filter(lambda k: k.strip()),
        st.one_of(
            _text,
            st.integers(-(2**53) + 1, 2**53 - 1),
            st.floats(allow_nan=False, allow_infinity=False),
            st.booleans(),
            st.none(),
            st.lists(_text),
        ),
        max_size=6,
    ),
)
def test_toon_round_trips_any_plan_text(name: str, values: dict[str, object]) -> None:
    data = json.loads(json.dumps({"plan": {"name": name}, "params": values}))
    assert toon_format.decode(rendering.to_toon(data)) == data


def test_text_verbosity_levels(tmp_path: Path) -> None:
    path = write_plan(tmp_path, BASE_TEXT + RUN)
    normal = run_cli("show", str(path)).stdout
    assert "[2] echo - Rotate the first key" in normal
    assert (
        "ran: failed in 40 ms" in normal and "error: E_TOOL_FAILED: the key store said no" in normal
    )
    assert 'outputs: {"keys": "staging"}' in normal
    quiet = run_cli("show", "--quiet", str(path)).stdout.splitlines()
    assert "[1] echo  succeeded" in quiet and "[2] echo  failed" in quiet
    assert not any("param" in line for line in quiet)
    verbose = run_cli("show", "--verbose", str(path)).stdout
    assert '"attempts": 3' in verbose and '"key": "step:8899aabbccddeeff"' in verbose
    assert run_cli("show", "-q", "-v", str(path)).returncode == 2


def test_markdown_is_a_pr_comment_whose_author_text_stays_inert(tmp_path: Path) -> None:
    hostile = BASE_TEXT.replace(
        'why: "List the keys"', 'why: "List | keys\\n# heading <img src=x onerror=alert(1)> ```"'
    ).replace("      limit: 10", '      limit: "```\\n</details>\\u202e"')
    path = write_plan(tmp_path, hostile + RUN)
    result = run_cli("show", "--format", "markdown", str(path))
    assert result.returncode == 0, result.stderr
    md = result.stdout
    assert md.startswith("### Plan: Rotate keys\n")
    rows = [line for line in md.splitlines() if line.startswith("| 1 |")]
    assert len(rows) == 1 and rows[0].count(" | ") == 4  # the | in why did not add a column
    assert "<img" not in md and "\n# heading" not in md and "\u202e" not in md
    # a param cannot close the details or the code block early: it stays inside the fence
    assert md.splitlines().count("</details>") == 1
    assert "\n````json\n" in md  # action 1's block: a fence longer than the ``` inside
    assert "| 2 | echo | Rotate the first key | retry up to 2 times | failed |" in md


def test_show_views_hold_the_same_facts(tmp_path: Path) -> None:
    plan = validate_text(BASE_TEXT, tmp_path / "PLAN.yml")
    view = rendering.plan_view(plan)
    assert view["freeze_state"] == "not frozen" and view["hash"] == plan.hash
    for text in (rendering.to_text(view), rendering.to_markdown(view)):
        assert "Rotate keys" in text and plan.hash in text


# --- the one error shape ------------------------------------------------------------------

SHAPE = {"ok", "code", "message", "path", "line", "remedy"}


@pytest.mark.parametrize(
    "argv",
    [
        ["show", "--json", "{missing}"],
        ["show", "--format", "json", "{missing}"],
        ["validate", "--json", "{missing}"],
        ["convert", "--json", "{missing}"],
        ["show", "--json", "--bogus", "{plan}"],
        ["status", "--json", "--config", "{missing}"],
        ["audit", "--json", "--config", "{missing}"],
        ["show", "--format=json", "{invalid}"],
        ["convert", "--json", "{reply}"],
    ],
)
def test_every_json_error_has_one_shape(argv: list[str], tmp_path: Path) -> None:
    good = write_plan(tmp_path)
    invalid = write_plan(
        tmp_path,
        BASE_TEXT.replace('tool: echo\n    why: "List', 'tool: echo\n    wyh: "List'),
        "bad",
    )
    reply = tmp_path / "reply.md"
    reply.write_text("Here is your plan:\n```json\n{}\n```\n")
    names = {
        "missing": str(tmp_path / "nope.yml"),
        "plan": str(good),
        "invalid": str(invalid),
        "reply": str(reply),
    }
    result = run_cli(*[a.format(**names) for a in argv], cwd=tmp_path)
    assert result.returncode in (1, 2)
    shape = json.loads(result.stdout.strip().splitlines()[-1])
    assert set(shape) >= SHAPE and shape["ok"] is False
    assert shape["code"].startswith("E_") and shape["message"] and shape["remedy"]
    assert "Traceback" not in result.stderr


def test_error_shape_carries_every_problem_and_its_line(tmp_path: Path) -> None:
    bad = write_plan(tmp_path, BASE_TEXT.replace('    why: "List the keys"\n', "    wyh: x\n"))
    shape = json.loads(run_cli("show", "--json", str(bad)).stdout)
    assert shape["code"] == "E_SCHEMA_INVALID"
    lines = {(e["path"], e["line"]) for e in shape["errors"]}
    assert ("actions[0].wyh", BASE_TEXT.splitlines().index('    why: "List the keys"') + 1) in lines
