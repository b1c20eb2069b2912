"""Property: rejections and aborts count only from allowed approvers or the plan's authors
(SPEC §4: from anyone else they are ignored and reported E_APPROVER_NOT_ALLOWED).

Attacks: Mallory (neither approver nor author) rejects a pending plan or aborts a plan paused
at its gate: as herself, with ``Co-authored-by: Alice``, under the display name "Alice", via
``plangate reject`` / ``plangate abort`` as her git user. Defence: ignored and reported; Alice
can still approve and the plan runs. Controls: Alice's and the author's own reject/abort do
count (the plan never runs, or stops at the gate).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, MALLORY, Lab, cases, plan_text, play
from test_round2_execution_kit import shared

GATED = (
    plan_text("{tag}")
    + """\
  - id: 2
    tool: rec
    why: "after a second look"
    requires_approval: true
    params:
      tag: "{tag}-gated"
"""
)


def submit(lab: Lab, vid: str) -> None:
    lab.write(vid, GATED.replace("{tag}", vid) if "abort" in vid else plan_text(vid))
    lab.commit(f"add {vid}", AGENT)


def approve(lab: Lab, vid: str) -> None:
    lab.approve(vid, ALICE)


def set_by(status: str, who: tuple[str, str], message: str = "") -> object:
    def step(lab: Lab, vid: str) -> None:
        lab.set_status(vid, status)
        lab.commit(f"{status} {vid}" + (f"\n\n{message}" if message else ""), who)

    return step


def via_cli(command: str, who: tuple[str, str]) -> object:
    def step(lab: Lab, vid: str) -> None:
        lab.git("config", "user.name", who[0])
        lab.git("config", "user.email", who[1])
        # --force: the attacker commits whatever the pre-check says (the controller decides)
        args = [command, "--force", "--config", str(lab.config), f"plans/{vid}"]
        if command == "reject":
            args += ["-m", "no"]
        result = lab.cli(*args, cwd=lab.repo)
        lab.git("config", "--unset", "user.name")
        lab.git("config", "--unset", "user.email")
        assert result.returncode in (0, 1, 2), result.stderr
        lab.cli_result = result  # type: ignore[attr-defined]

    return step


COAUTHOR = "Co-authored-by: Alice <alice@example.com>"
# variant -> steps; "reject-*" are pending plans, "abort-*" are paused at their gate.
IGNORED = {
    "reject-by-mallory": [submit, set_by("rejected", MALLORY), approve],
    "reject-by-mallory-coauthor-alice": [submit, set_by("rejected", MALLORY, COAUTHOR), approve],
    "reject-by-mallory-named-alice": [
        submit,
        set_by("rejected", ("Alice", "mallory@example.com")),
        approve,
    ],
    "reject-by-mallory-cli": [submit, via_cli("reject", MALLORY), approve],
    "reject-by-bot-lookalike": [
        submit,
        set_by("rejected", ("plangate", "plangate@localhost.evil")),
        approve,
    ],
    "abort-by-mallory": [submit, approve, set_by("aborted", MALLORY), approve],
    "abort-by-mallory-coauthor-alice": [
        submit,
        approve,
        set_by("aborted", MALLORY, COAUTHOR),
        approve,
    ],
    "abort-by-mallory-cli": [submit, approve, via_cli("abort", MALLORY), approve],
}
COUNTED = {
    "reject-by-alice": [submit, set_by("rejected", ALICE), approve],
    "reject-by-author": [submit, set_by("rejected", AGENT), approve],
    "reject-by-glob-approver": [
        submit,
        set_by("rejected", ("Bob", "BOB@OPS.EXAMPLE.COM")),
        approve,
    ],
    "abort-by-alice": [submit, approve, set_by("aborted", ALICE), approve],
    "abort-by-author": [submit, approve, set_by("aborted", AGENT), approve],
}
#: Every variant held since withdrawals are checked against approvers and authors (issue 11).
BROKEN: dict[str, object] = {}


def _build_lab(root: Path) -> Lab:
    lab = Lab(root)
    play(lab, {**IGNORED, **COUNTED})
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "adv-rights", _build_lab)


@pytest.mark.parametrize("vid", cases(list(IGNORED), list(IGNORED), BROKEN))
def test_a_stranger_cannot_reject_or_abort(lab: Lab, vid: str) -> None:
    target = f"{vid}-gated" if vid.startswith("abort") else vid
    assert len(lab.calls(target)) == 1, (
        f"{lab.plan(vid)['plan']['status']}: Alice's approval was lost"
    )
    assert "E_APPROVER_NOT_ALLOWED" in json.dumps(lab.status()[f"plans/{vid}"])


@pytest.mark.parametrize("vid", list(COUNTED))
def test_an_approver_or_author_can_reject_or_abort(lab: Lab, vid: str) -> None:
    target = f"{vid}-gated" if vid.startswith("abort") else vid
    assert lab.calls(target) == []
    assert lab.status()[f"plans/{vid}"]["status"] in ("rejected", "aborted")
