"""The controller's seal key (``<state_dir>/commit.key``) is a credential: whoever reads it
can seal commits as the controller (docs/operations.md). A tool run as the service user can
read the state directory; what it prints of the key must never reach git (SPEC §6, §15)."""

from __future__ import annotations

import base64
import json
import os
import sys
from pathlib import Path

from controller.settings import config_from_data
from controller.settings.credentials import seal_key_of
from tests.support.gitenv import ALICE, commit_all, git, run_cli
from tests.support.gitkit import edit_status, write_plan

#: A tool that prints a file (and a second copy base64-encoded, as a tool might).
READER = (
    "import base64, json, sys; t = open(sys.argv[1]).read().strip(); "
    "print(json.dumps({'text': t, 'b64': base64.b64encode(t.encode()).decode()}))"
)

PLAN = """\
plan:
  name: Read a file
  task: show the key file
  status: pending_approval
available_tools:
  - name: show
actions:
  - id: 1
    tool: show
    why: read it
    params:
      path: "{path}"
"""


def test_a_tool_printing_the_seal_key_commits_it_nowhere(repo: Path) -> None:
    state = repo.parent / "state"
    config = repo.parent / "plangate.yml"
    config.write_text(
        json.dumps(
            {
                "repo": str(repo),
                "state_dir": str(state),
                "approval": {"approvers": [ALICE[1]]},
                "tools": {
                    "show": {"kind": "exec", "argv": [sys.executable, "-c", READER, "{path}"]}
                },
            }
        )
    )
    key_file = state / "commit.key"
    write_plan(repo, "peek", PLAN.format(path=key_file))
    commit_all(repo, "agent: peek")
    assert run_cli("--config", str(config), "run", "--once", cwd=repo).returncode == 0
    key = key_file.read_text().strip()  # made on the first start
    assert len(key) == 64
    edit_status(repo, "peek", "approved")
    commit_all(repo, "approve peek", ALICE)
    assert run_cli("--config", str(config), "run", "--once", cwd=repo).returncode == 0
    log = (repo / "plans" / "peek" / "EXECUTION_LOG.md").read_text()
    assert "completed" in git(repo, "show", "HEAD:plans/peek/PLAN.yml")
    assert "***" in log  # the tool did print it, and it was hidden
    history = git(repo, "log", "--all", "-p", "--format=%H%n%B")
    assert key not in history and key[:32] not in history
    assert base64.b64encode(key.encode()).decode()[:40] not in history


def test_the_seal_key_is_read_only_when_it_is_a_key(tmp_path: Path) -> None:
    """A missing, cut or non-regular ``commit.key`` is nothing to hide (the controller
    refuses to start on it elsewhere); a key the controller made is."""
    state = tmp_path / "state"
    state.mkdir()
    config = config_from_data(
        {"repo": str(tmp_path), "state_dir": str(state)}, tmp_path / "plangate.yml"
    )
    assert seal_key_of(config) == set()
    (state / "commit.key").write_text("abc\n")
    assert seal_key_of(config) == set()
    key = "0123456789abcdef" * 4
    (state / "commit.key").write_text(key + "\n")
    assert seal_key_of(config) == {key}
    (state / "commit.key").unlink()
    os.mkfifo(state / "commit.key")  # opened without blocking: no hang
    assert seal_key_of(config) == set()


def test_the_seal_key_is_hidden_as_written_and_in_its_whole_encodings() -> None:
    """The key is hidden by a literal search (no configured secret: the redactor's other
    views stay off for every record): as its file spells it, upper-cased, JSON- and
    URL-escaped, and in the hex, base64 and base32 of its bytes at any alignment."""
    from controller.execution.secrets import Redactor

    key = "0123456789abcdef" * 4
    redactor = Redactor((), literal={key})
    raw = key.encode()
    for written in (
        key,
        key.upper(),
        raw.hex(),
        base64.b64encode(raw).decode(),
        base64.b64encode(b"x" + raw).decode(),
        base64.b32encode(raw).decode(),
        json.dumps({"k": key}),
    ):
        shown = redactor.text(f"key: {written} .")
        assert key[8:40] not in shown and written[8:40] not in shown, written
        assert "***" in shown
    assert redactor.text("no key here") == "no key here"
    assert redactor.data({"out": [key, 1]}) == {"out": ["***", 1]}
