"""An agent's ``note`` on ``submit`` is free text in the commit body, never a trailer.

A ``Co-authored-by:`` line makes its address an author of the plan (SPEC §5), so a note that
forged one would make the approver a co-author and their approval self-approval. The message
is built from parts (:func:`controller.git.message.commit_message`): whatever line breaks or
hidden characters the note holds, it stays inside one paragraph that starts with fixed text.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.approval.approvals import coauthors
from controller.service.agentapi import AgentApi, submission_message
from controller.settings import config_from_data
from tests.support.gitenv import git

AGENT = ("Agent Smith", "agent@example.com")
FORGED = "Co-authored-by: Alice <alice@example.com>"
NOTES = {
    "lf": f"x\n{FORGED}",
    "blank-line": f"x\n\n{FORGED}",
    "alone": FORGED,
    "crlf": f"x\r\n\r\n{FORGED}\r\nApproved-By: alice@example.com",
    "lone-cr": f"x\r{FORGED}",
    "vt-ff": f"x\x0b{FORGED}\x0cPlan-Status: approved",
    "nel": f"x\x85{FORGED}",
    "line-separator": f"x\u2028{FORGED}\u2029Plan-Hash: sha256:00",
    "leading-space": f"x\n   {FORGED}",
    "trailer-block": f"ok\n\nSigned-off-by: Bob <bob@example.com>\n{FORGED}",
    "inline": f"thanks {FORGED}",
    "fullwidth": "x \uff23o-authored-by\uff1a Alice <alice@example.com> " + FORGED,
}

PLAN = """\
plan:
  name: "Greet"
  task: "Say hello"
  status: pending_approval
available_tools:
  - name: greet
actions:
  - id: 1
    tool: greet
    why: "Greet"
    params: {name: world}
"""


def _trailers(repo: Path, message: str) -> str:
    return git(repo, "interpret-trailers", "--parse", data=message.encode()).strip()


@pytest.mark.parametrize("name", list(NOTES))
def test_a_note_never_makes_a_trailer_or_a_co_author(repo: Path, name: str) -> None:
    message = submission_message("plans/greet", NOTES[name], *AGENT)
    assert coauthors(message) == []
    assert _trailers(repo, message) == ""
    assert message.startswith("Submit plan plans/greet\n\nSubmitted through plangate mcp by ")
    # kept as text a reader sees, on no line of its own, its colon escaped: a credit counts
    # anywhere in a message (round 128), so the note's would make Alice an author
    assert "Co-authored-by\\x3a Alice" in message


def test_a_plain_note_is_kept_as_written() -> None:
    message = submission_message("plans/greet", "for review", *AGENT)
    assert message == (
        "Submit plan plans/greet\n\n"
        "Submitted through plangate mcp by Agent Smith <agent@example.com>. Note: for review\n"
    )
    assert submission_message("plans/greet", None, *AGENT).count("\n") == 3


def test_submit_commits_the_note_without_forging_a_co_author(repo: Path, tmp_path: Path) -> None:
    config = config_from_data(
        {
            "repo": str(repo),
            "state_dir": str(tmp_path / "state"),
            "tools": {"greet": {"kind": "echo"}},
            "agent": {"identity": {"name": AGENT[0], "email": AGENT[1]}},
        },
        tmp_path / "plangate.yml",
    )
    api = AgentApi(config)
    try:
        done = api.submit(PLAN, "greet", note=NOTES["lf"])
    finally:
        api.close()
    assert done["submitted"] is True
    body = git(repo, "log", "-1", "--format=%B", done["commit"])
    assert coauthors(body) == []
    assert git(repo, "log", "-1", "--format=%(trailers)", done["commit"]).strip() == ""
    assert git(repo, "log", "-1", "--format=%ae", done["commit"]).strip() == AGENT[1]
