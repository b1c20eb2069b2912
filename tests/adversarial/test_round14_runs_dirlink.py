"""Round 14, what is written where: a plan's *folder* swapped for a symbolic link in the
shared working tree (local mode).

docs/plan-format.md: "a FIFO, device or symlink in the working tree is never opened or
followed"; docs/execution.md: plan files are read with ``O_NOFOLLOW`` (a symlinked PLAN.yml
makes the plan wait with E_UNSAFE_PATH); docs/threat-model.md: whoever writes the working
tree cannot reach anything outside it, and since round 4 a conversion "writes only into
folders (never through a link)". Earlier rounds linked the *files* (PLAN.yml,
EXECUTION_LOG.md, a ``step-N`` folder of a conversion); here the plan's own folder is the link.

After Alice approves ``plans/a`` and ``plans/b`` (and the honest ``plans/zz``), before the
pass that starts them, the agent moves each folder out of the repository and leaves a link
in its place (the bytes are unchanged, so the hash still matches):

- ``abs-link``: ``plans/a`` -> ``<lab>/outside-a`` (an absolute path);
- ``rel-link``: ``plans/b`` -> ``../../outside-b/b`` (a relative one).

Defence asserted: nothing is created or changed outside the repository (the folder outside
keeps exactly the one PLAN.yml the agent moved there, byte for byte); the honest plan runs
once; the linked plans run at most once; ``status`` says why they wait.

**Broke** (both, round 14): the controller follows the folder link: it reads PLAN.yml through
it, runs the plan, and writes its files through it, outside the repository: PLAN.yml there is
rewritten (``execution: status: completed``) and an ``EXECUTION_LOG.md`` is created beside
it. The outcome then waits for good ("plans/a/PLAN.yml has uncommitted edits"). With the
controller running as its own user, the agent thereby makes it write into folders outside
the tree that the agent names.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, plan_text
from test_round2_execution_kit import shared

VIDS = {"abs-link": "a", "rel-link": "b"}


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def _build(root: Path) -> Lab:
    lab = Lab(root)
    for slug in ["a", "b", "zz"]:
        lab.write(slug, plan_text(slug))
    lab.commit("plans", AGENT)
    lab.run()
    for slug in ["a", "b", "zz"]:
        lab.set_status(slug, "approved")
    lab.commit("approve them", ALICE)
    out_a = root / "outside-a"
    shutil.move(str(lab.repo / "plans" / "a"), str(out_a))
    os.symlink(str(out_a), str(lab.repo / "plans" / "a"))
    (root / "outside-b").mkdir()
    out_b = root / "outside-b" / "b"
    shutil.move(str(lab.repo / "plans" / "b"), str(out_b))
    os.symlink("../../outside-b/b", str(lab.repo / "plans" / "b"))
    lab.before = {"a": _snapshot(out_a), "b": _snapshot(out_b)}  # type: ignore[attr-defined]
    lab.run()
    lab.run()
    lab.after = {"a": _snapshot(out_a), "b": _snapshot(out_b)}  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r14-dirlink", lambda root: _build(root / "lab"))


# round 14: both broke (BROKE was their strict xfail); fixed since: the working tree's folders
# are opened without following a link (fsutil.open_folder), the plan waits with E_UNSAFE_PATH
@pytest.mark.parametrize("vid", list(VIDS))
def test_nothing_is_written_through_a_linked_plan_folder(lab: Lab, vid: str) -> None:
    slug = VIDS[vid]
    before = lab.before[slug]  # type: ignore[attr-defined]
    after = lab.after[slug]  # type: ignore[attr-defined]
    assert sorted(after) == sorted(before), f"files outside the repo now: {sorted(after)}"
    assert after == before, "PLAN.yml outside the repo was rewritten"


@pytest.mark.parametrize("vid", list(VIDS))
def test_a_linked_plan_folder_runs_at_most_once_and_says_why(lab: Lab, vid: str) -> None:
    slug = VIDS[vid]
    assert len(lab.calls(slug)) <= 1
    row = lab.status()[f"plans/{slug}"]
    if row["status"] != "completed":
        assert row["waiting"] or row["reason"] or row["problem"], row


def test_the_honest_plan_ran_once(lab: Lab) -> None:
    assert len(lab.calls("zz")) == 1, lab.codes("zz")
