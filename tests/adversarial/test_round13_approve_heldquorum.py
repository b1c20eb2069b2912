"""Round 13, who may make a plan run: the ``heldgone`` replay (a rewrite erases the
controller's freeze of version 2, a pass sees the plan deleted so its hold ends, the agent
adds version 2 back and cherry-picks Alice's approval of version 1), where the approval
carries what should bind it anyway.

Config: a plan under ``plans/two/**`` needs two approvals, any other one.

- ``two/seen``: Alice's approval of version 1 *was seen* by a pass (recorded ``partial``), so
  its identity (author, date, subject, plan) is spent on version 1. After the rewrite and
  the deletion the agent replays it onto version 2 and Bob approves version 2: if the
  replayed vote counts, two "approvals" start a version Alice never saw.
- ``pa``: Alice approved version 1 with ``plangate approve`` (``Plan-Hash:`` names version
  1's hash); never seen by a pass, replayed the same way.

Defence: nothing runs; ``E_APPROVAL_REPLAYED`` (or Bob's approval left ``partial``).
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab, plan_text
from test_round2_approval_authors import shared_lab

RULES = "rules:\n  - match: {paths: ['plans/two/**']}\n    require: [{count: 2}]\n"
SLUGS = {"seen": "two/seen", "pa": "pa"}


def _v(tag: str, n: int) -> str:
    return plan_text(tag, params=f'note: "v{n}"\n')


def _build(root: Path) -> Lab:
    lab = Lab(root, approval=RULES)
    lab.write("base", plan_text("base"))
    lab.commit("agent adds base", AGENT)
    lab.run()
    pre = lab.head()
    time.sleep(1.1)
    for tag, slug in SLUGS.items():
        lab.write(slug, _v(tag, 1))
    lab.commit("agent adds version 1", AGENT)
    lab.run()  # F
    time.sleep(1.1)
    a_seen = lab.approve("two/seen", ALICE)
    lab.run()  # partial: Alice's vote seen
    seen_tip = lab.head()
    subprocess.run(
        [sys.executable, "-m", "controller", "approve", "--config", str(lab.config), "plans/pa"],
        cwd=lab.repo,
        env=lab.env(ALICE),
        capture_output=True,
        text=True,
        check=True,
    )
    a_pa = lab.head()
    lab.git("reset", "-q", "--hard", seen_tip)  # erases only Alice's unseen approval of pa
    time.sleep(1.1)
    for tag, slug in SLUGS.items():
        lab.write(slug, _v(tag, 2))
    lab.commit("agent writes version 2", AGENT)
    lab.run()  # FV2
    v2 = {slug: lab.read(slug) for slug in SLUGS.values()}
    lab.git("reset", "-q", "--hard", pre)  # the rewrite: holds
    lab.run()  # the plans are gone: holds end
    time.sleep(1.1)
    for slug, text in v2.items():
        lab.write(slug, text)
    lab.commit("agent adds version 2 again", AGENT)
    lab.git("cherry-pick", a_seen, who=AGENT)
    lab.git("cherry-pick", a_pa, who=AGENT)
    lab.run()
    lab.approve("two/seen", BOB)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared_lab(tmp_path_factory, "r13-heldquorum", _build)


@pytest.mark.parametrize("tag", list(SLUGS))
def test_a_bound_approval_of_version_one_never_runs_version_two(lab: Lab, tag: str) -> None:
    slug = SLUGS[tag]
    assert lab.calls(tag) == [], lab.codes(slug)
    assert not lab.started(slug), lab.codes(slug)
    assert "E_APPROVAL_REPLAYED" in lab.codes(slug) or "partial" in lab.codes(slug), lab.codes(slug)
