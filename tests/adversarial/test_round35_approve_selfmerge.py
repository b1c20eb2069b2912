"""Round 35, self-approval: an approver's own plan text reaching the branch first under the
agent's name, her own commit of it merged afterwards.

docs/approvals.md: a content's authors are "everyone whose commit made a plan hold it", and
"for a merge that brings content in, the merged branch's whole history of that file is
searched"; none of its authors may approve it (``E_SELF_APPROVAL``).

Bob is an approver (``*@ops.example.com``). He writes a plan on his own branch; the agent
copies his text onto main before his branch is merged:

- ``same``: Bob's branch adds ``plans/same``; the agent commits the same bytes at the same
  path on main; the agent merges Bob's branch (``--no-ff``: the merge changes no file);
  Bob approves the plan.
- ``other``: as ``same`` but the agent's copy is at ``plans/other-cp``; Bob's branch (adding
  ``plans/other``) is merged; Bob approves the agent's copy.
- ``ours``: as ``other`` but Bob's branch is merged ``-s ours`` (his file never lands); Bob
  approves the agent's copy.
- ``ctl``: Bob commits his plan on main himself and approves it (control).

Asserted: Bob is an author of the text he wrote: ``E_SELF_APPROVAL``, ``rec`` never runs.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from advkit import AGENT, BOB, Lab, plan_text
from test_round2_execution_kit import shared

#: variant -> the folder Bob approves
APPROVED = {"same": "same", "other": "other-cp", "ours": "ours-cp", "ctl": "ctl"}
FOUND: dict[str, pytest.MarkDecorator] = {}


def _build(root: Path) -> Lab:
    lab = Lab(root)
    lab.run()
    base = lab.head()
    lab.git("checkout", "-q", "-b", "b1")
    lab.write("same", plan_text("same"))
    lab.write("other", plan_text("other"))
    lab.commit("bob adds same and other", BOB)
    lab.git("checkout", "-q", "-b", "b2", base)
    lab.write("ours", plan_text("ours"))
    lab.commit("bob adds ours", BOB)
    lab.git("checkout", "-q", "main")
    time.sleep(1.05)
    lab.write("same", plan_text("same"))
    lab.write("other-cp", plan_text("other"))
    lab.write("ours-cp", plan_text("ours"))
    lab.commit("agent copies bob's text", AGENT)
    lab.git("merge", "-q", "--no-ff", "-m", "merge b1", "b1", who=AGENT)
    lab.git("merge", "-q", "--no-ff", "-s", "ours", "-m", "merge b2", "b2", who=AGENT)
    lab.write("ctl", plan_text("ctl"))
    lab.commit("bob adds ctl", BOB)
    lab.run()
    time.sleep(1.05)
    for slug in APPROVED.values():
        lab.set_status(slug, "approved")
    lab.commit("bob approves", BOB)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r35-selfmerge", _build)


@pytest.mark.parametrize(
    "vid", [pytest.param(v, id=v, marks=[FOUND[v]] if v in FOUND else []) for v in APPROVED]
)
def test_his_own_text_is_his(lab: Lab, vid: str) -> None:
    slug = APPROVED[vid]
    tag = "other" if vid == "other" else vid
    assert lab.calls(tag) == [], lab.codes(slug)
    assert "E_SELF_APPROVAL" in lab.codes(slug), lab.codes(slug)
