"""Hostile names and plan files (SPEC §1, §7, §10, §15; issue 11).

- No untrusted text can form a trailer line of a controller commit: messages are built from
  parts (controller.git.message), read back here by real ``git interpret-trailers``.
- A plan folder named with a control, line-break or invisible character is E_UNSAFE_PATH:
  recorded, never run; honest plans beside it run.
- Two plan files in one folder are E_PLAN_AMBIGUOUS for validate, show, hash and freeze.
"""

from __future__ import annotations

import json
import subprocess
import textwrap
from pathlib import Path

import pytest

from controller.git.message import commit_message
from tests.support.gitenv import commit_all, git, run_cli

BREAKS = {
    "lf": "\n",
    "blank-line": "\n\n",
    "cr": "\r",
    "crlf": "\r\n",
    "vt": "\x0b",
    "ff": "\x0c",
    "nel": "\x85",
    "ls": "\u2028",
    "ps": "\u2029",
    "nul": "\x00",
    "ansi": "\x1b[2K\n",
}


def parsed_trailers(repo: Path, message: str) -> list[tuple[str, str]]:
    out = subprocess.run(
        ["git", "interpret-trailers", "--parse"],
        input=message.encode(),
        capture_output=True,
        cwd=repo,
        check=True,
    ).stdout.decode()
    return [tuple(line.split(": ", 1)) for line in out.splitlines()]  # type: ignore[misc]


@pytest.mark.parametrize("brk", list(BREAKS))
def test_no_value_can_form_a_trailer_line(repo: Path, brk: str) -> None:
    evil = f"x{BREAKS[brk]}Approved-By: mallory@evil.example{BREAKS[brk]}Plan-Status: completed"
    message = commit_message(
        f"plangate: freeze plans/{evil}",
        f"tool said: {evil}",
        [("Plan", f"plans/{evil}"), ("Plan-Status", "frozen"), ("Approved-By", evil)],
    )
    trailers = parsed_trailers(repo, message)
    assert [key for key, _ in trailers] == ["Plan", "Plan-Status", "Approved-By"]
    assert dict(trailers)["Plan-Status"] == "frozen"
    assert message.count("\n") == 7  # subject, blank line, body, blank line, 3 trailers
    for char in "\r\x0b\x0c\x85\u2028\u2029\x00\x1b":
        assert char not in message


def test_trailer_keys_are_the_callers_only() -> None:
    with pytest.raises(ValueError):
        commit_message("s", "", [("Plan\nApproved-By", "x")])


PLAN = textwrap.dedent(
    """\
    plan:
      name: "{name}"
      task: "names"
      status: pending_approval
    available_tools:
      - name: greet
    actions:
      - id: 1
        tool: greet
        why: "say hello"
        params: {{who: "{name}"}}
    """
)


@pytest.fixture
def lab(tmp_path: Path, repo: Path) -> Path:
    config = tmp_path / "plangate.yml"
    config.write_text(
        f"repo: {repo}\nstate_dir: {tmp_path / 'state'}\n"
        "approval: {approvers: [alice@example.com]}\ntools: {greet: {kind: echo}}\n"
    )
    return config


def run_once(config: Path) -> None:
    result = run_cli("run", "--once", "--config", str(config), timeout=120)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr[-2000:]


def approve_all(repo: Path) -> None:
    for path in (repo / "plans").rglob("PLAN.y*ml"):
        path.write_text(path.read_text().replace("status: pending_approval", "status: approved"))
    commit_all(repo, "approve", ("Alice", "alice@example.com"))


def test_hostile_folder_names_are_unsafe_and_never_run(repo: Path, lab: Path) -> None:
    names = {brk: f"x{char}Approved-By: m-{brk}@evil.example" for brk, char in BREAKS.items()}
    names["bidi"] = "deploy\u202eyrros"
    names["trailing-blank"] = "calm "  # one folder with plans/calm on NTFS
    names["leading-blank"] = " honest"
    names["nbsp"] = "hon\u00a0est"
    names.pop("nul")  # git cannot store a NUL in a path
    for brk, name in names.items():
        folder = repo / "plans" / name
        folder.mkdir(parents=True)
        (folder / "PLAN.yml").write_text(PLAN.format(name=brk))
    for honest in ("honest", "calm"):
        (repo / "plans" / honest).mkdir()
        (repo / "plans" / honest / "PLAN.yml").write_text(PLAN.format(name=honest))
    commit_all(repo, "plans")
    run_once(lab)
    approve_all(repo)
    run_once(lab)
    rows = json.loads(run_cli("status", "--json", "--config", str(lab)).stdout)
    by_plan = {row["plan"]: row for row in rows}
    assert by_plan["plans/honest"]["status"] == "completed"
    # beside its NTFS twin ``plans/calm `` the base is held too, never run (round 75)
    calm = by_plan["plans/calm"]
    assert calm["status"] != "completed" and "E_PLAN_AMBIGUOUS" in json.dumps(calm), calm
    for name in names.values():
        row = by_plan[f"plans/{name}"]
        assert row["status"] is None
        assert any(note.startswith("E_UNSAFE_PATH") for note in row["notes"])
    log = git(repo, "log", "--format=%an%x00%B%x01")
    for entry in log.split("\x01"):
        author, _, body = entry.strip("\n").partition("\0")
        if author == "plangate":
            assert "evil.example" not in body
            assert body.startswith("plangate: ") and "plans/honest" in body


@pytest.mark.parametrize("command", ["validate", "show", "hash", "freeze"])
@pytest.mark.parametrize("target", ["folder", "PLAN.yml", "PLAN.yaml"])
def test_two_plan_files_in_one_folder_are_ambiguous(
    tmp_path: Path, command: str, target: str
) -> None:
    folder = tmp_path / "plans" / "twin"
    folder.mkdir(parents=True)
    (folder / "PLAN.yml").write_text(PLAN.format(name="yml"))
    (folder / "PLAN.yaml").write_text(PLAN.format(name="yaml"))
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    path = folder if target == "folder" else folder / target
    result = run_cli(command, str(path))
    assert result.returncode == 1
    assert "E_PLAN_AMBIGUOUS" in result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before  # nothing frozen
