"""Round 117 (atk117c): a TOON line the reader skips as a comment, and a source that is not
UTF-8, refused as every reader refuses them."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.errors import PlangateError
from controller.plan.convert import convert_text
from tests.support.gitenv import run_cli

TOON = """\
plan_version: 1
skill_id: s
goal: g
steps[1]:
  - step_id: "1"
    tool: rec
    args:
      tag: A
{extra}"""


@pytest.mark.parametrize(
    "extra",
    [
        "      #dry_run: false\n",  # a key
        "#x: 1\n",  # at the top
        "      hosts[2]{n,p}:\n        #web,80\n        db,5432\n        x,1\n",  # a row
        "      l[2]:\n        - x\n        #- yy\n        - z\n",  # a list item
    ],
)
def test_a_toon_line_the_reader_skips_as_a_comment_is_refused_at_its_line(extra: str) -> None:
    """``toon-hash-line-dropped``: the reader dropped a line beginning with ``#`` (a key,
    a tabular row, a list item) with no note, while a review shows it as text."""
    text = TOON.format(extra=extra)
    with pytest.raises(PlangateError) as caught:
        convert_text(text, "PLAN.toon")
    line = next(n for n, got in enumerate(text.split("\n"), 1) if got.lstrip().startswith("#"))
    assert caught.value.code == "E_SCHEMA_INVALID", caught.value
    assert f"line {line}," in caught.value.message and "comment" in caught.value.message


def test_a_toon_value_that_holds_a_hash_still_converts() -> None:
    converted = convert_text(TOON.format(extra='      note: "#x"\n      more: a # b\n'), "P.toon")
    assert '"#x"' in converted.text and "a # b" in converted.text


@pytest.mark.parametrize(
    "data",
    [
        '{"plan_version": 1}'.encode("utf-16"),  # a BOM
        '{"goal": "caf\xe9"}'.encode("latin-1"),
    ],
    ids=["utf16-bom", "latin1"],
)
def test_a_source_that_is_not_utf8_is_the_daemons_answer(tmp_path: Path, data: bytes) -> None:
    """``non-utf8-source-usage-error``: ``convert`` said E_USAGE (exit 2) where the daemon
    says E_YAML_PARSE for the same file."""
    (tmp_path / "PLAN.json").write_bytes(data)
    got = run_cli("convert", str(tmp_path / "PLAN.json"), cwd=tmp_path)
    assert got.returncode == 1, got.stderr
    assert "E_YAML_PARSE" in got.stderr and "not UTF-8 text (byte" in got.stderr, got.stderr
    assert "remedy: save it as UTF-8" in got.stderr, got.stderr
