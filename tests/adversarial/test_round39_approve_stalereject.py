"""Round 39, does a withdrawal inside a merged branch, made for an older version, veto the
version the branch has when it is merged?

docs/approvals.md: "A rejection or abort inside a merged branch (by someone entitled to
withdraw the version it was made for) wins ... A version still waiting is vetoed"; the
authors who may withdraw are "the producers of the version at stake", and "the author of an
earlier version of a plan may not withdraw a later version someone else made".

Config: the bench's. The agent writes each plan (version 1); the controller freezes it. A
side branch is forked; on it the agent (version 1's producer) sets ``rejected``. On main
Dave (``dave@example.com``, no approver) edits the task (version 2, he its only producer);
the controller freezes version 2. Then Mallory (no approver, no producer of either
version) merges the side branch (Dave's own merge could withdraw version 2: he made it):

- ``sr-ours``: ``git merge -s ours`` (main keeps version 2 ``pending_approval``);
- ``sr-plain``: a plain ``--no-ff`` merge; the status and task lines touch, so Mallory
  resolves the conflict to version 2 ``rejected`` (her merge may not withdraw it);
- ``sr-ctl`` (control): Bob (an approver) rejects version 1 on the side branch, merged
  ``-s ours``: an approver may reject any version, the stale one included; what it vetoes
  is asserted only for the agent's variants.

A pass; Alice approves each plan (reopened by the agent if it reads ``rejected``); a pass.

Asserted (the defence): the agent's rejection of version 1 withdraws nothing of version 2:
Alice's approval runs ``sr-ours`` and ``sr-plain`` once, on version 2.

Results: both held (and ``sr-ctl``: Bob's stale rejection left version 2 waiting). A first
attempt had Dave merge ``sr-plain``: his merge withdrew version 2, which he made (allowed).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOB, MALLORY, Lab, plan_text
from test_round2_execution_kit import shared

DAVE = ("Dave", "dave@example.com")
VIDS = ["sr-ours", "sr-plain"]
FOUND: dict[str, pytest.MarkDecorator] = {}


def _build(root: Path) -> Lab:
    lab = Lab(root)
    for vid in [*VIDS, "sr-ctl"]:
        lab.write(vid, plan_text(vid))
    lab.commit("agent adds plans", AGENT)
    lab.run()
    for vid, who in [("sr-ours", AGENT), ("sr-plain", AGENT), ("sr-ctl", BOB)]:
        lab.git("checkout", "-q", "-b", f"side-{vid}")
        lab.set_status(vid, "rejected")
        lab.commit(f"reject {vid}", who)
        lab.git("checkout", "-q", "main")
        text = lab.read(vid).replace(
            f'task: "attack variant {vid}"', f'task: "attack variant {vid} v2"'
        )
        lab.write(vid, text)
        lab.commit(f"dave edits {vid}", DAVE)
    lab.run()  # freezes version 2
    lab.v2 = {v: lab.plan(v)["frozen"]["hash"] for v in [*VIDS, "sr-ctl"]}  # type: ignore[attr-defined]
    for vid, how in [("sr-ours", "ours"), ("sr-plain", "plain"), ("sr-ctl", "ours")]:
        if how == "ours":
            lab.git(
                "merge",
                "-q",
                "--no-ff",
                "-s",
                "ours",
                "-m",
                f"merge {vid}",
                f"side-{vid}",
                who=MALLORY,
            )
            continue
        v2 = lab.git("show", f"HEAD:plans/{vid}/PLAN.yml")
        lab.git("merge", "-q", "--no-ff", "--no-commit", f"side-{vid}", check=False)
        lab.write(vid, v2)  # the lines touch: Mallory resolves to version 2, ``rejected``
        lab.set_status(vid, "rejected")
        lab.git("add", "-A")
        lab.git("commit", "-q", "-m", f"merge {vid}", who=MALLORY)
    lab.run()
    lab.after_withdraw = {  # type: ignore[attr-defined]
        r["plan"]: r.get("status")
        for r in json.loads(lab.cli("status", "--json", "--config", str(lab.config)).stdout)
    }
    for vid in [*VIDS, "sr-ctl"]:
        if lab.plan(vid)["plan"]["status"] == "rejected":
            lab.set_status(vid, "pending_approval")
            lab.commit(f"agent reopens {vid}", AGENT)
        lab.approve(vid, ALICE)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r39-stalereject", _build)


def _p(vids: list[str]) -> list[Any]:
    return [pytest.param(v, id=v, marks=[FOUND[v]] if v in FOUND else []) for v in vids]


def test_version_two_was_frozen(lab: Lab) -> None:
    assert all(h.startswith("sha256:") for h in lab.v2.values()), lab.v2  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", _p(VIDS))
def test_a_stale_author_rejection_vetoes_nothing_newer(lab: Lab, vid: str) -> None:
    after = lab.after_withdraw  # type: ignore[attr-defined]
    assert after.get(f"plans/{vid}") != "rejected", (after, lab.codes(vid))
    assert len(lab.calls(vid)) == 1, lab.codes(vid)
    assert lab.plan(vid)["approval"]["plan_hash"] == lab.v2[vid], lab.codes(vid)  # type: ignore[attr-defined]
