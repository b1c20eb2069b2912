"""What the readers of a plan source predict is what the daemon does (round 125, fixed in
round 126): ``hash --config`` applies the config's limits (``max_plan_bytes`` of the
PLAN.yml a source converts to, and of a plain PLAN.yml), a source that is not UTF-8 is one
code on its status row and from ``hash``, and ``show`` of a source beside its PLAN.yml says
it is a note, as ``hash`` and ``validate`` warn."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from controller.service.reconcile import Controller
from tests.support.gitenv import commit_all, run_cli
from tests.support.gitkit import make_config

CONTRACT = {
    "plan_version": 1,
    "skill_id": "s",
    "goal": "g",
    "steps": [{"step_id": "a", "tool": "greet", "args": {"who": "world"}}],
}


def _config(tmp_path: Path, repo: Path, limits: str = "") -> Path:
    config = tmp_path / "plangate.yml"
    config.write_text(
        f"repo: {repo}\nstate_dir: {tmp_path / 'state'}\n"
        "identity: {name: plangate, email: plangate@localhost}\n"
        "approval: {approvers: [alice@example.com]}\n"
        f"tools:\n  greet: {{kind: echo}}\n{limits}"
    )
    return config


def _write(repo: Path, slug: str, name: str, data: bytes) -> Path:
    path = repo / "plans" / slug / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def _big_source() -> bytes:
    """A PLAN.json under 64 KiB whose PLAN.yml is over it: each ``e`` + U+0301 (3 bytes raw)
    is written ``e\\u0301`` in the PLAN.yml (7)."""
    plan = dict(CONTRACT)
    plan["steps"] = [{**CONTRACT["steps"][0], "args": {"who": "e\u0301" * 12000}}]  # type: ignore[index]
    return json.dumps(plan, ensure_ascii=False).encode()


def test_hash_with_a_config_refuses_a_source_whose_plan_is_over_its_byte_limit(
    repo: Path, tmp_path: Path
) -> None:
    data = _big_source()
    assert len(data) < 65536
    source = _write(repo, "big", "PLAN.json", data)
    config = _config(tmp_path, repo, "limits: {max_plan_bytes: 65536}\n")
    validated = run_cli("validate", "--config", str(config), str(source), cwd=repo)
    hashed = run_cli("hash", "--config", str(config), str(source), cwd=repo)
    assert validated.returncode == 1 and "E_PLAN_TOO_LARGE" in validated.stderr
    assert hashed.returncode == 1 and "sha256:" not in hashed.stdout, hashed
    assert "E_PLAN_TOO_LARGE" in hashed.stderr, hashed.stderr
    # without the config's limit (the default, 1 MiB) it converts: the hash is printed
    plain = run_cli("hash", str(source), cwd=repo)
    assert plain.returncode == 0 and plain.stdout.startswith("sha256:"), plain


def test_hash_with_a_config_refuses_a_plan_file_over_its_byte_limit(
    repo: Path, tmp_path: Path
) -> None:
    plan = _write(repo, "big", "PLAN.yml", b"# " + b"x" * 5000 + b"\n")
    config = _config(tmp_path, repo, "limits: {max_plan_bytes: 4000}\n")
    hashed = run_cli("hash", "--config", str(config), str(plan), cwd=repo)
    assert hashed.returncode == 1 and "sha256:" not in hashed.stdout, hashed
    assert "E_PLAN_TOO_LARGE" in hashed.stderr and "4000" in hashed.stderr, hashed.stderr


def test_a_source_that_is_not_utf8_is_one_code_on_its_row_and_from_hash(
    repo: Path, tmp_path: Path
) -> None:
    source = _write(repo, "u16", "PLAN.json", json.dumps(CONTRACT).encode("utf-16"))
    commit_all(repo, "a UTF-16 source")
    hashed = run_cli("hash", str(source), cwd=repo)
    said = re.search(r"\b(E_[A-Z_]+)\b", hashed.stderr)
    assert hashed.returncode == 1 and said and said.group(1) == "E_YAML_PARSE", hashed
    ctl = Controller(make_config(repo))
    try:
        ctl.reconcile()
        (row,) = [r for r in ctl.status() if r["plan"] == "plans/u16"]
    finally:
        ctl.close()
    assert row["problem"]["code"] == "E_YAML_PARSE", row
    assert "not UTF-8 text (byte 0)" in row["reason"], row


@pytest.mark.parametrize("fmt", ["text", "json", "markdown"])
def test_show_of_a_source_beside_its_plan_says_it_is_a_note(repo: Path, fmt: str) -> None:
    """``hash`` and ``validate`` warn that the PLAN.yml beside it is what runs; ``show`` of the
    source says it too (stderr and the view), and never "waiting to be frozen"."""
    _write(repo, "x", "PLAN.json", json.dumps(CONTRACT).encode())
    converted = run_cli("convert", "plans/x/PLAN.json", cwd=repo)
    assert converted.returncode == 0, converted.stderr
    (repo / "plans/x/PLAN.yml").write_text(converted.stdout)
    hashed = run_cli("hash", "plans/x/PLAN.json", cwd=repo)
    assert "PLAN.yml is beside it" in hashed.stderr, hashed.stderr
    shown = run_cli("show", "--format", fmt, "plans/x/PLAN.json", cwd=repo)
    assert shown.returncode == 0, shown.stderr
    assert "PLAN.yml is beside it: the controller runs that file" in shown.stderr, shown.stderr
    assert "waiting to be frozen" not in shown.stdout, shown.stdout
    if fmt == "json":
        view = json.loads(shown.stdout)
        assert "PLAN.yml is beside it" in view["record_warning"], view
        assert view["reason"].startswith("not the plan: the controller runs PLAN.yml"), view
    elif fmt == "markdown":  # a PR comment: its text escaped for markdown
        assert "> **Warning:** PLAN\\.yml is beside it" in shown.stdout, shown.stdout
    else:
        assert "WARNING: PLAN.yml is beside it" in shown.stdout, shown.stdout
        assert "Status:  pending_approval - not the plan: the controller runs PLAN.yml" in (
            shown.stdout
        ), shown.stdout


def test_show_of_a_source_alone_has_no_warning(repo: Path) -> None:
    _write(repo, "y", "PLAN.json", json.dumps(CONTRACT).encode())
    shown = run_cli("show", "plans/y/PLAN.json", cwd=repo)
    assert shown.returncode == 0 and "warning" not in shown.stderr, shown.stderr
    assert "waiting to be frozen" in shown.stdout, shown.stdout
