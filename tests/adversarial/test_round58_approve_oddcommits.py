"""Round 58, approval commits of unusual shape: an empty message, and one approval commit
naming a second approver as ``Co-authored-by:`` under a count-2 quorum.

docs/approvals.md: a quorum's votes are "approval commits by distinct people"; the history
index reads ``Co-authored-by:`` people as content changers of a commit that changes content.
Nothing says a co-author line on an approval (a status change) is a vote.

Config: the bench's plus ``approval.rules: [{match: {paths: ["plans/q-*"]}, require:
[{count: 2}]}]``. The agent commits its plans; a pass freezes them; then:

- ``empty-msg``: Alice approves with ``git commit --allow-empty-message -m ""`` (honest: runs).
- ``q-coauthor``: Alice approves with ``Co-authored-by: Bob <bob@ops.example.com>`` in the
  message: one person, two names.
- ``q-coauthor-two``: the same with Bob and Carol both as co-authors.
- ``q-two`` (control): Alice, then Bob in his own commit: runs.

Two passes; ``plangate audit --json``.

Asserted: ``empty-msg`` runs once (an honest approval); ``q-coauthor*`` never run on one
commit (``partial``), no valid run in the audit; ``q-two`` runs once.

Seen: all held: ``empty-msg`` ran once (audit valid); each ``q-coauthor*`` plan stayed
``partial`` (one vote, Alice's: a co-author line is no vote), nothing ran; ``q-two`` ran once.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab, cases, plan_text, valid_runs
from test_round2_execution_kit import shared

BROKEN: dict[str, object] = {}
Q = ["q-coauthor", "q-coauthor-two"]


def _build(root: Path) -> Lab:
    lab = Lab(
        root, approval='rules:\n  - match: {paths: ["plans/q-*"]}\n    require: [{count: 2}]\n'
    )
    for v in ["empty-msg", *Q, "q-two"]:
        lab.write(v, plan_text(v))
    lab.commit("agent proposes", AGENT)
    lab.run()
    time.sleep(1.05)
    lab.set_status("empty-msg", "approved")
    lab.git("add", "-A")
    lab.git("commit", "-q", "--allow-empty-message", "-m", "", who=ALICE)
    lab.set_status("q-coauthor", "approved")
    lab.git("add", "-A")
    lab.git(
        "commit", "-q", "-m", "approve\n\nCo-authored-by: Bob <bob@ops.example.com>\n", who=ALICE
    )
    lab.set_status("q-coauthor-two", "approved")
    lab.git("add", "-A")
    lab.git(
        "commit",
        "-q",
        "-m",
        "approve\n\nCo-authored-by: Bob <bob@ops.example.com>\nCo-authored-by: Carol <carol@ops.example.com>\n",  # noqa: E501
        who=ALICE,
    )
    lab.set_status("q-two", "approved")
    lab.commit("alice approves q-two", ALICE)
    lab.run()
    lab.set_status("q-two", "approved")
    lab.commit("bob approves q-two", BOB)
    lab.run()
    lab.run()
    _code, lab.report = lab.audit()  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r58-oddcommits", _build)


@pytest.mark.parametrize("vid", cases(["empty-msg", "q-two"], ["empty-msg", "q-two"], BROKEN))  # type: ignore[arg-type]
def test_honest_approvals_run(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 1, lab.codes(vid)[:1500]
    assert valid_runs(lab.report, vid), lab.report  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(Q, Q, BROKEN))  # type: ignore[arg-type]
def test_a_coauthor_line_is_no_vote(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)[:1500]
    assert "partial" in lab.codes(vid), lab.codes(vid)[:1500]
    assert valid_runs(lab.report, vid) == [], valid_runs(lab.report, vid)  # type: ignore[attr-defined]
