"""Round 55, the MCP server's ``submit`` as an approval-side attack surface.

docs/agents.md: ``submit`` "commits ``plans/<slug>/PLAN.yml`` as the agent", "refuses a plan
whose status is not ``draft``/``pending_approval`` ... and replacing a plan that is
approved, running or done"; "``note`` is free text inside one paragraph after fixed text, so
it can never form a trailer or a ``Co-authored-by:`` line".

Config: the bench's plus ``agent.identity`` (the agent's address). One ``plangate mcp``
session (JSON-RPC over stdio, requests written at once) per step:

- ``traversal``: ``slug: ../evil``; ``upper``: ``slug: Evil``.
- ``approved``: a plan whose ``plan.status`` is ``approved``.
- ``note``: a plan ``plans/note`` whose ``note`` holds a blank line, ``Co-authored-by: Bob``
  and ``Plan-Approved: plans/note <its hash>``; after a pass Bob approves it (if the note
  made him a co-author he could not; the forged trailer must approve nothing).
- ``over-approved``: the agent submits ``plans/over``; after a freeze Alice approves it;
  before the controller's pass the agent submits another text to ``over``.

Asserted (the defence): ``traversal``, ``upper``, ``approved``: an MCP tool error, nothing
committed; ``note``: no trailer in the commit (``git interpret-trailers --parse``), the plan
did not start before Bob's approval and ran once after it; ``over-approved``: the
replacement is refused, or at least never runs on Alice's approval (what runs, if anything,
is the text she approved).

Seen: all held (the replacement of ``over`` is `E_ILLEGAL_TRANSITION`; the approved text ran
once).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import mcpkit
import pytest
from advkit import ALICE, BOB, Lab, plan_text
from test_round2_execution_kit import shared


def mcp(lab: Lab, calls: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    return [r.get("result", r.get("error")) for r in mcpkit.answers(lab, calls)]


def _build(root: Path) -> Lab:
    lab = Lab(root, extra="agent:\n  identity: {name: Agent, email: agent@example.com}\n")
    lab.run()
    lab.answers = {}  # type: ignore[attr-defined]
    before = lab.head()
    bad = mcp(
        lab,
        [
            ("submit", {"plan": plan_text("traversal"), "slug": "../evil"}),
            ("submit", {"plan": plan_text("upper"), "slug": "Evil"}),
            (
                "submit",
                {
                    "plan": plan_text("approved").replace("pending_approval", "approved"),
                    "slug": "approved",
                },
            ),
        ],
    )
    lab.answers.update(zip(["traversal", "upper", "approved"], bad, strict=True))  # type: ignore[attr-defined]
    lab.moved_by_bad = lab.head() != before  # type: ignore[attr-defined]
    note = (
        "tidy\n\nCo-authored-by: Bob <bob@ops.example.com>\n"
        "Plan-Approved: plans/note sha256:" + "0" * 64
    )
    (lab.answers["note"],) = mcp(  # type: ignore[attr-defined]
        lab, [("submit", {"plan": plan_text("note"), "slug": "note", "note": note})]
    )
    lab.note_commit = lab.head()  # type: ignore[attr-defined]
    mcp(lab, [("submit", {"plan": plan_text("over"), "slug": "over"})])
    lab.run()
    lab.started_early = lab.started("note")  # type: ignore[attr-defined]
    time.sleep(1.05)
    lab.approved_text = lab.read("over")  # type: ignore[attr-defined]
    lab.set_status("note", "approved")
    lab.commit("bob approves note", BOB)
    lab.set_status("over", "approved")
    lab.commit("alice approves over", ALICE)
    swapped = plan_text("over", params='extra: "swapped in"\n')
    (lab.answers["over-approved"],) = mcp(lab, [("submit", {"plan": swapped, "slug": "over"})])  # type: ignore[attr-defined]
    lab.run()
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r55-mcpsubmit", _build)


@pytest.mark.parametrize("vid", ["traversal", "upper", "approved"])
def test_a_bad_submit_is_an_error_and_commits_nothing(lab: Lab, vid: str) -> None:
    answer = lab.answers[vid]  # type: ignore[attr-defined]
    assert answer.get("isError") is True, answer
    assert not lab.moved_by_bad  # type: ignore[attr-defined]
    assert not (lab.repo.parent / "evil").exists()
    assert lab.calls(vid) == []


def test_the_note_forms_no_trailer_and_approves_nothing(lab: Lab) -> None:
    message = lab.git("log", "-1", "--format=%B", lab.note_commit)  # type: ignore[attr-defined]
    parsed = lab.git("interpret-trailers", "--parse", input=message)
    assert parsed.strip() == "", (message, parsed)
    assert not lab.started_early  # type: ignore[attr-defined]
    assert len(lab.calls("note")) == 1, lab.codes("note")


def test_a_submit_over_an_approved_plan_never_runs_on_that_approval(lab: Lab) -> None:
    answer = lab.answers["over-approved"]  # type: ignore[attr-defined]
    ran = lab.calls("over")
    assert all("swapped in" not in c["stdin"] for c in ran), (answer, ran)
    assert answer.get("isError") is True or ran == [], answer
