"""Round 69 (issue 11): every answer quotes the paths the asker named, and those derived
from them, as written; the redactor masks only the controller's material
(``_shared.printed``, ``_shared.asker_paths``; docs/threat-model.md, rounds 61-63 and 69).
A path holding a guess of a secret came back ``***`` for the right guess only."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.support.gitenv import run_cli

SECRET = "Qv7Rrm2Kp9Lw"  # a value of the secrets file
WRONG = SECRET[:-1] + "x"  # a guess of its shape
PLAN = (
    "plan:\n  name: p\n  task: t\n  status: pending_approval\n"
    "available_tools: [{name: t1}]\n"
    "actions:\n  - {id: 1, tool: t1, why: w, params: {x: 'no', y: 'no'}}\n"
)
BAD_SOURCE = '{"goal": "g", "steps": [{"tool": "t1", "args": {"x": "no"}}]}'
SOURCE = Path(__file__).resolve().parents[2] / "examples/formats/agent-plan.json"


def _lab(tmp_path: Path, quoted: str = "ok") -> tuple[str, Path]:
    """A plans repo whose catalog's pattern and enum quote ``quoted`` (round 49: the secret;
    a config whose catalog holds one is refused at load since round 71)."""
    repo = tmp_path / "repo"
    (repo / "plans").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (tmp_path / "sec.yml").write_text(f"TOK: {SECRET}\n")
    config = tmp_path / "plangate.yml"
    config.write_text(
        f"repo: {repo}\nsecrets: {{file: {tmp_path / 'sec.yml'}}}\n"
        "approval:\n  approvers: [alice@example.com]\n"
        "tools:\n"
        f"  t1: {{kind: echo, params_schema: {{type: object, properties: "
        f"{{x: {{type: string, pattern: '^{quoted}$'}}, y: {{enum: ['{quoted}', b]}}}}}}}}\n"
    )
    return str(config), repo


def _answers(tmp_path: Path, guess: str) -> dict[str, str]:
    config, repo = _lab(tmp_path)
    outside = tmp_path / guess / "PLAN.yml"
    outside.parent.mkdir()
    outside.write_text(PLAN)
    (repo / "plans" / f"dir-{guess}" / "PLAN.yml").mkdir(parents=True)
    (tmp_path / f"{guess}.json").write_text(SOURCE.read_text())
    (tmp_path / f"bad-{guess}.json").write_text(BAD_SOURCE)
    calls = {
        "warning": ("validate", "--json", str(outside)),
        "folder": ("show", f"plans/dir-{guess}"),
        "source": ("convert", "--json", str(tmp_path / f"{guess}.json")),
        "schema": ("convert", "--json", str(tmp_path / f"bad-{guess}.json")),
        "out": ("convert", "-o", str(tmp_path / f"out-{guess}"), str(tmp_path / f"{guess}.json")),
    }
    return {
        name: (lambda r: f"{r.returncode}\n{r.stdout}{r.stderr}")(
            run_cli(*args, "--config", config, cwd=repo)
        ).replace(str(tmp_path), "<tmp>")
        for name, args in calls.items()
    }


def test_a_right_and_a_wrong_guess_in_a_named_path_are_answered_alike(tmp_path: Path) -> None:
    right = _answers(tmp_path / "r", SECRET)
    wrong = _answers(tmp_path / "w", WRONG)
    for name, text in right.items():
        assert "Traceback" not in text, text
        assert _as_g(text, SECRET) == _as_g(wrong[name], WRONG), name
    assert f"expected <tmp>/repo/plans/{SECRET}/PLAN.yml" in right["warning"]
    assert f"plans/dir-{SECRET}: a folder without PLAN.yml" in right["folder"]
    assert f'"source": "<tmp>/{SECRET}.json"' in right["source"]
    assert f'"message": "<tmp>/bad-{SECRET}.json: E_SCHEMA_INVALID' in right["schema"]
    assert f"<tmp>/out-{SECRET}/{SECRET.lower()} is outside" in right["out"]  # its slug too


def _as_g(text: str, guess: str) -> str:
    return text.replace(guess, "G").replace(guess.lower(), "G")


def test_a_catalog_value_equal_to_a_named_path_stays_hidden(tmp_path: Path) -> None:
    """The asker's path is kept where the answer quotes it, never where the catalog's
    problems do. Since round 71 a catalog holding the secret (a pattern and an enum) is
    refused at load, before any path is read: every command answers E_CONFIG_INVALID naming
    the schema's places, never the value (the rule of the catalog's quotes beside the
    asker's is held in tests/plan/test_plans.py)."""
    config, repo = _lab(tmp_path, SECRET)
    plan = repo / "plans" / SECRET / "PLAN.yml"
    plan.parent.mkdir()
    plan.write_text(PLAN)
    cwd = repo / "plans"
    for args in (("validate", "--json", SECRET), ("show", SECRET), ("freeze", SECRET)):
        result = run_cli(*args, "--config", config, cwd=cwd)
        out = result.stdout + result.stderr
        assert result.returncode == 2 and "E_CONFIG_INVALID" in out, (args, out)
        assert "tools.t1.params_schema.properties.x.pattern" in out, (args, out)
        assert SECRET not in out, (args, out)


def test_the_asker_paths_are_whole_paths_in_the_forms_answers_quote(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from controller.commands import _shared

    (tmp_path / "plans" / "seo").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    _shared.asked(["plans/seo", "-", ""])
    try:
        forms = set(_shared.asker_paths())
    finally:
        _shared.forget_config()
    assert {"plans/seo", "plans/seo/PLAN.yml", str(tmp_path / "plans/seo/PLAN.yml")} <= forms
    assert "/seo/PLAN.yml" in forms  # the end of the path validate says it expects
    assert "seo" not in forms and "-" not in forms and "" not in forms  # never a bare segment
