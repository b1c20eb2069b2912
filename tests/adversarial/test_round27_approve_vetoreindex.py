"""Round 27, who may reject and who may approve: what the controller honoured, after its history
index is rebuilt (a veto; an erased writer).

docs/approvals.md ("State and speed"): the history index ``<state_dir>/index.sqlite``
"remembers the last processed commit ... Deleting the file is always safe". Config: the
bench's (approvers Alice and ``*@ops.example.com``). The agent writes the plans; the controller
freezes them. Carol (ops) rejects ``plain``, Bob (ops) rejects ``left``; the controller passes
(both ``rejected``). The operator sets ``approvers: [alice, carol@ops.example.com]`` (Bob has
left; Carol stays); the controller passes (records the policy). Alice sets ``approved`` on
both (ignored, ``E_ILLEGAL_TRANSITION``: the vetoes stand, as round 27's ``vetopolicy``
``seen`` showed); the controller passes. The operator deletes ``index.sqlite``; the
controller passes; Alice sets ``pending_approval`` and ``approved`` again on both; the
controller passes.

- ``plain``: Carol's veto (she is still an approver);
- ``left``: Bob's veto (made while he was an approver).
- ``chk``: Bob's veto too; before the rebuild, a pull request ``pr-chk`` sets ``approved``
  (the agent) and ``plangate check --base main --head pr-chk --as alice@example.com`` is
  recorded (never merged): asserted it predicts no ``start`` (the controller keeps the veto).

- ``ew-kept`` / ``ew-rebuilt`` (self-approval): Carol (ops) commits, as drafts at
  ``plans/<vid>-draft``, the exact content of two plans; the controller passes (it sees her
  commit); the agent ``reset --hard``s it away (no controller commit is erased); the agent
  adds ``plans/ew-kept`` with that content, the controller freezes it and Carol approves it
  (before the rebuild); ``plans/ew-rebuilt`` is added, frozen and approved by Carol after the
  rebuild. docs: the index "never forgets who produced a content ... through rewrites".
  Asserted: neither runs (``E_SELF_APPROVAL``).

- ``wd-kept`` / ``wd-rebuilt`` (withdrawn version): Bob rejects both; the controller passes;
  the agent ``reset --hard``s the rejection away, then deletes both plans (the hold ends);
  ``wd-kept`` is added back (same text), frozen and approved by Alice before the rebuild,
  ``wd-rebuilt`` after it. Asserted: neither runs (``E_VERSION_WITHDRAWN``).

Asserted: ``plain`` and ``left`` stay vetoed: the tool never runs, no ``plangate: start``.
The verdict is a function of git history and config, not of whether the index was rebuilt.

Results: ``plain`` and ``chk`` held (check: ``status: rejected``, ``outcome: none``).
``left`` BROKE (strict xfail): in the first pass after the rebuild the controller commits
``plangate: start plans/left`` on Alice's earlier approval commit (the one it had ignored as
``E_ILLEGAL_TRANSITION`` from ``rejected``) and the tool runs once: Bob's rejection is judged
under today's config and dropped. Before the rebuild the same history and config kept the
plan ``rejected``. ``ew-kept`` held (``E_SELF_APPROVAL``); ``ew-rebuilt`` BROKE (strict
xfail): after the rebuild Carol's approval of the content she wrote starts it and it runs once.
``wd-kept`` held (``E_VERSION_WITHDRAWN``); ``wd-rebuilt`` BROKE (strict xfail): after the
rebuild Alice's approval of the version Bob withdrew starts it and it runs once.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, CAROL, Lab, plan_text
from test_round2_execution_kit import shared

WD = ["wd-kept", "wd-rebuilt"]


def _build(root: Path) -> Lab:
    lab = Lab(root)
    for vid in ["plain", "left", "chk", *WD]:
        lab.write(vid, plan_text(vid))
    lab.commit("agent writes the plans", AGENT)
    lab.run()  # freeze
    time.sleep(1.05)
    before = lab.head()
    for vid in WD:
        lab.set_status(vid, "rejected")
    lab.commit("bob rejects the wd plans", BOB)
    lab.run()  # the controller sees Bob's rejections
    lab.git("reset", "-q", "--hard", before)  # the agent erases them
    lab.run()
    lab.git("rm", "-q", "-r", *(f"plans/{v}" for v in WD))
    lab.commit("agent deletes the wd plans", AGENT)
    lab.run()
    lab.write("wd-kept", plan_text("wd-kept"))
    lab.commit("agent re-adds wd-kept", AGENT)
    lab.run()
    time.sleep(1.05)
    lab.approve("wd-kept", ALICE)
    lab.run()
    lab.set_status("plain", "rejected")
    lab.commit("carol rejects plain", CAROL)
    lab.set_status("left", "rejected")
    lab.commit("bob rejects left", BOB)
    lab.set_status("chk", "rejected")
    lab.commit("bob rejects chk", BOB)
    lab.run()
    text = lab.config.read_text()
    old = '["alice@example.com", "*@ops.example.com"]'
    assert old in text
    lab.config.write_text(text.replace(old, '["alice@example.com", "carol@ops.example.com"]'))
    lab.run()  # records the new policy
    # Carol drafts the exact content of two later plans; the agent erases her commit
    for vid in ["ew-kept", "ew-rebuilt"]:
        lab.write(f"{vid}-draft", plan_text(vid, status="draft"))
    lab.commit("carol drafts", CAROL)
    lab.run()  # the controller sees Carol's commit
    lab.git("reset", "-q", "--hard", "HEAD~1")
    lab.run()
    lab.write("ew-kept", plan_text("ew-kept"))
    lab.commit("agent adds ew-kept", AGENT)
    lab.run()  # freeze
    time.sleep(1.05)
    lab.approve("ew-kept", CAROL)
    lab.run()
    time.sleep(1.05)
    lab.git("checkout", "-q", "-b", "pr-chk")
    lab.set_status("chk", "approved")
    lab.commit("agent sets approved on chk", AGENT)
    lab.git("checkout", "-q", "main")
    out = lab.cli(
        "check", "--config", str(lab.config), "--base", "main", "--head", "pr-chk",
        "--as", ALICE[1], "--format", "json", cwd=lab.repo,
    )  # fmt: skip
    rows = [p for p in json.loads(out.stdout or "{}").get("plans", []) if p["plan"] == "plans/chk"]
    lab.chk = rows[0] if rows else {"raw": out.stdout[-2000:] + out.stderr[-2000:]}  # type: ignore[attr-defined]
    for vid in ["plain", "left"]:
        lab.set_status(vid, "approved")
        lab.commit(f"alice approves {vid}", ALICE)
    lab.run()
    seen = {v: (len(lab.calls(v)), lab.started(v)) for v in ["plain", "left"]}
    (lab.state / "index.sqlite").unlink()
    lab.run()
    lab.write("wd-rebuilt", plan_text("wd-rebuilt"))
    lab.write("ew-rebuilt", plan_text("ew-rebuilt"))
    lab.commit("agent adds ew-rebuilt", AGENT)
    lab.run()  # freeze
    time.sleep(1.05)
    lab.approve("ew-rebuilt", CAROL)
    lab.approve("wd-rebuilt", ALICE)
    time.sleep(1.05)
    for vid in ["plain", "left"]:
        lab.set_status(vid, "pending_approval")
        lab.commit(f"alice resets {vid}", ALICE)
        lab.set_status(vid, "approved")
        lab.commit(f"alice approves {vid} again", ALICE)
    lab.run()
    lab.run()
    lab.before_rebuild = seen  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r27-vetoreindex", _build)


#: What round 27 broke (strict xfails until fixed in the same round; kept as the record).
FOUND: dict[str, pytest.MarkDecorator] = {
    "wd-rebuilt": pytest.mark.xfail(
        strict=True,
        raises=AssertionError,
        reason="round 27: after index.sqlite is deleted the index forgets a version Bob "
        "withdrew in a commit the controller saw before the agent erased it (twin wd-kept: "
        "E_VERSION_WITHDRAWN); the version re-added under its name runs on Alice's approval",
    ),
    "ew-rebuilt": pytest.mark.xfail(
        strict=True,
        raises=AssertionError,
        reason="round 27: after index.sqlite is deleted the index forgets that Carol wrote "
        "the exact content in a commit the controller saw on the branch before the agent "
        "erased it (the kept index refuses her E_SELF_APPROVAL, twin ew-kept): Carol's "
        "approval of her own content runs it",
    ),
    "left": pytest.mark.xfail(
        strict=True,
        raises=AssertionError,
        reason="round 27: after index.sqlite is deleted (documented safe) the rebuilt index "
        "judges Bob's rejection, made while he was an approver and honoured until then, by "
        "today's config: it is ignored and Alice's approval runs the vetoed plan",
    ),
}


def _p(vids: list[str]) -> list[Any]:
    return [pytest.param(v, id=v, marks=[]) for v in vids]


@pytest.mark.parametrize("vid", _p(["plain", "left"]))
def test_veto_survives_an_index_rebuild(lab: Lab, vid: str) -> None:
    assert lab.before_rebuild[vid] == (0, False)  # type: ignore[attr-defined]
    assert lab.calls(vid) == [], lab.codes(vid)
    assert not lab.started(vid), lab.codes(vid)


def test_check_keeps_the_veto_the_controller_keeps(lab: Lab) -> None:
    row = lab.chk  # type: ignore[attr-defined]
    assert row.get("outcome") not in (None, "start"), row


@pytest.mark.parametrize("vid", _p(["ew-kept", "ew-rebuilt"]))
def test_an_erased_writer_stays_a_writer(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)
    assert not lab.started(vid), lab.codes(vid)


@pytest.mark.parametrize("vid", _p(WD))
def test_an_erased_withdrawal_stays_a_withdrawal(lab: Lab, vid: str) -> None:
    assert lab.calls(vid) == [], lab.codes(vid)
    assert not lab.started(vid), lab.codes(vid)
