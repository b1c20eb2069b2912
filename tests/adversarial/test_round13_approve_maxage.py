"""Round 13, who may make a plan run: ``max_age`` (SPEC §5: "the plan was frozen no longer ago
than that") dodged by bringing a stale frozen version back under a path, with honest clocks.

Config: ``max_age: 3600`` (seconds). The controller freezes every plan at T0, two hours ago
(the agent's commit and the pass dated so: ``Lab.git_date``); everything after runs at the
clock's time.

- ``readd``: the agent deletes the plan (a pass sees it gone) and commits the same bytes (the
  controller's frozen block of T0) again; Alice approves. The version was frozen by the
  controller at T0, more than ``max_age`` ago; the re-add commit is where ``frozen.hash``
  "took its value" now.
- ``copy``: the agent copies the stale plan's bytes to ``plans/copy`` (a new name, same
  hash); Alice approves the copy.

- ``flip``: the agent sets ``frozen.hash`` to a wrong value and back in two commits (the
  commit where it "took its value" is now); Alice approves.
- ``refreeze``: the agent drops the ``frozen:`` block; the controller freezes the same version
  again (now); Alice approves.

Defence: ``E_PLAN_EXPIRED`` (that exact version was frozen too long ago), nothing runs.
Controls: ``stay`` (approved late where it is) is ``E_PLAN_EXPIRED``; ``fresh`` (added after
the wait) runs once.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, plan_text
from test_round2_approval_authors import shared_lab

FOUND = {  # round 13: broke (strict xfails); fixed since, see BROKEN
    vid: pytest.mark.xfail(
        strict=True,
        raises=AssertionError,
        reason=f"round 13: max_age dodged by {what} of a stale frozen version: it runs on a "
        "late approval",
    )
    for vid, what in (
        ("readd", "a delete and re-add"),
        ("copy", "a copy"),
        ("flip", "frozen.hash set wrong and back"),
        ("refreeze", "the frozen block dropped (the controller freezes it again)"),
    )
}
BROKEN: dict[str, pytest.MarkDecorator] = {}  # every FOUND variant holds now (index freezes)
VIDS = ["readd", "copy", "flip", "refreeze", "stay"]


def _build(root: Path) -> Lab:
    lab = Lab(root, approval="max_age: 3600\n")
    # T0, two hours ago: no sleep, and the fresh control has an hour, not 3 s (it expired
    # under a loaded CI once: six approvals and a pass took longer than that)
    lab.git_date = f"@{int(time.time()) - 7200} +0000"
    for vid in VIDS:
        lab.write(vid, plan_text(vid))
    lab.commit("agent adds plans", AGENT)
    lab.run()  # T0: frozen
    lab.git_date = None
    stale = lab.read("readd")
    lab.git("rm", "-q", "-r", "plans/readd")
    lab.commit("agent deletes readd", AGENT)
    lab.run()
    lab.write("readd", stale)
    lab.commit("agent adds readd again", AGENT)
    shutil.copytree(lab.repo / "plans/copy", lab.repo / "plans/copy2")
    lab.commit("agent copies copy to copy2", AGENT)
    flip = lab.read("flip")
    good = next(line for line in flip.splitlines() if line.startswith("  hash: "))
    lab.write("flip", flip.replace(good, "  hash: sha256:" + "0" * 64))
    lab.commit("agent breaks flip's frozen hash", AGENT)
    lab.write("flip", flip)
    lab.commit("agent restores flip's frozen hash", AGENT)
    refreeze = lab.read("refreeze")
    lab.write("refreeze", refreeze[: refreeze.index("frozen:")])
    lab.commit("agent drops refreeze's frozen block", AGENT)
    lab.write("fresh", plan_text("fresh"))
    lab.commit("agent adds fresh", AGENT)
    lab.run()
    for slug in ("readd", "copy2", "flip", "refreeze", "stay", "fresh"):
        lab.approve(slug, ALICE)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared_lab(tmp_path_factory, "r13-maxage", _build)


@pytest.mark.parametrize("vid", [pytest.param(v, id=v, marks=BROKEN.get(v, [])) for v in VIDS])
def test_a_stale_version_is_expired_wherever_it_is(lab: Lab, vid: str) -> None:
    slug = "copy2" if vid == "copy" else vid
    assert lab.calls(vid) == [], lab.codes(slug)
    assert "E_PLAN_EXPIRED" in lab.codes(slug), lab.codes(slug)


def test_control_fresh_plan_runs_once(lab: Lab) -> None:
    assert len(lab.calls("fresh")) == 1, lab.codes("fresh")
