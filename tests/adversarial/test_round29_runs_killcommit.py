# ruff: noqa: E501
"""Round 29, at most once and never a silent wedge, across a controller killed (SIGKILL) right
after its ``plangate: start`` commit and a commit someone makes *before* the controller is
restarted.

Round 28 fixed the stale working tree a killed controller leaves behind: the *next
controller* writes back the files nobody touched since. Here somebody touches them first: the
agent, sharing the checkout, runs its usual ``git add -A && git commit`` (its own unrelated
work) while the daemon is down, so the stale, pre-start ``PLAN.yml`` (``status: approved``, no
``execution:`` block, the same hash) is committed over the controller's start commit.

Each lab plays the scenario twice (victims ``t0k*``, ``t1k*``; four times while the break
was open: the outcome also raced inside the killed controller, about two scenarios in three
wedged; since the fix every one holds), and the defence must hold for every victim. Each scenario kills passes (a new approved plan each) until one is killed
right after the start commit while the index and the working tree still hold the approved
``PLAN.yml`` and nothing else differs (``git status`` is exactly ``M  plans/<victim>/PLAN.yml``
after a 1.1 s settle: a git child of the killed controller may still finish); then the agent
commits, then a pass runs (every victim sees at least four). At the end a bystander plan
``zz`` is written, approved by Alice, and two more passes run.

``commit`` lab (the agent's ``add -A`` commits the stale file as it is):

- ``commit-a-runs-once``: asserted: the victim's ``rec`` ran exactly once (the journaled,
  approved, committed start is resumed, as a mid-run commit to the unhashed blocks is in round
  3/11) and the plan ends ``completed`` in ``status``.
- ``commit-a-not-silent``: asserted: if the plan is not finished, ``status`` says why
  (``problem``/``reason``/``waiting`` non-empty), never a bare ``executing`` with
  ``running: false``.
- ``commit-a-bystander``: asserted: ``zz`` ran once and is ``completed``.

``edit`` lab (the agent's ``add -A`` also adds ``extra: EVIL`` to the victim's params):

- ``edit-no-evil``: asserted: ``rec`` never got ``EVIL``.
- ``edit-not-silent``: as ``commit-a-not-silent``.
- ``edit-bystander``: as ``commit-a-bystander``.

**Broke** (round 29): ``commit-a-runs-once``, ``commit-a-not-silent``, ``edit-not-silent``:
after the agent's commit the plan stays ``executing`` for good; its action never runs (0 calls)
and no outcome is ever committed; ``status`` shows ``executing``, ``running: false``,
``problem``/``reason``/``waiting`` null and ``file_status: approved``; no ``E_`` code anywhere.
The fresh-clone audit lists the start with no outcome. Held: ``*-bystander``, ``edit-no-evil``.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BenchError, Lab, plan_text
from test_round2_execution_kit import shared
from test_round28_runs_killwrite import _killed_pass

from tests.support.gitenv import remove_stale_index_lock

#: Scenarios per lab: the wedge follows about two kills in three (a race inside the killed
#: controller's bookkeeping this bench cannot see); the defence must hold in every one.
TRIES = 2  # was 4 while the wedge reproduced 60% of the time; it holds every time now

#: What round 29 broke: fixed the same hour (a start writes its job row before the branch
#: moves; status names a run file that no longer hashes to the approval). Kept as the record.
BROKE = pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="round 29: a commit of the stale working tree made after a SIGKILL right after the start commit, before the restart, wedges the plan in executing for good (never run, no outcome, no E_ code)",
)


def _killed_stale(lab: Lab, prefix: str) -> str:
    """Kill passes (a new approved plan each) until one is killed right after its start
    commit while the index and the working tree still hold the approved (pre-start)
    PLAN.yml and nothing else differs (no temp file)."""
    for attempt in range(10):
        name = f"{prefix}k{attempt}"
        lab.write(name, plan_text(name))
        lab.commit(f"plan {name}")
        lab.run()
        lab.approve(name)
        subject = _killed_pass(lab, 1)
        time.sleep(
            1.1
        )  # a git child of the killed controller may still finish its write; the agent commits in a later second
        stale = lab.git("status", "--porcelain", "--untracked-files=all")
        if subject == f"plangate: start plans/{name}" and stale == f"M  plans/{name}/PLAN.yml\n":
            return name
        lab.run()
    raise BenchError("no kill left the approved file in the working tree")


def _build(root: Path, edit: bool) -> Lab:
    lab = Lab(root)
    lab.victims = []  # type: ignore[attr-defined]
    for tries in range(TRIES):
        victim = _killed_stale(lab, f"t{tries}")
        if edit:
            text = lab.read(victim).replace(
                f'tag: "{victim}"', f'tag: "{victim}"\n      extra: "EVIL"'
            )
            lab.write(victim, text)
        remove_stale_index_lock(lab.repo)  # git's advice, followed: no git process runs
        lab.commit("agent: wip (git add -A)", AGENT)
        lab.run()
        lab.victims.append(victim)  # type: ignore[attr-defined]
    lab.write("zz", plan_text("zz"))
    lab.commit("plan zz", AGENT)
    lab.run()
    lab.approve("zz", ALICE)
    lab.run()
    lab.run()
    return lab


@pytest.fixture(scope="module")
def commit_lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r29-killcommit", lambda root: _build(root, False))


@pytest.fixture(scope="module")
def edit_lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r29-killedit", lambda root: _build(root, True))


def _row(lab: Lab, victim: str) -> dict:
    return lab.status()[f"plans/{victim}"]


def _not_silent(lab: Lab) -> None:
    for victim in lab.victims:  # type: ignore[attr-defined]
        row = _row(lab, victim)
        if row["status"] not in ("completed", "failed", "aborted"):
            assert row["running"] or row["problem"] or row["reason"] or row["waiting"], row


def test_commit_a_runs_once(commit_lab: Lab) -> None:
    lab = commit_lab
    for victim in lab.victims:  # type: ignore[attr-defined]
        assert len(lab.calls(victim)) == 1, (victim, lab.calls(victim))
        assert _row(lab, victim)["status"] == "completed", _row(lab, victim)


def test_commit_a_not_silent(commit_lab: Lab) -> None:
    _not_silent(commit_lab)


def test_commit_a_bystander(commit_lab: Lab) -> None:
    assert len(commit_lab.calls("zz")) == 1
    assert commit_lab.status()["plans/zz"]["status"] == "completed"


def test_edit_no_evil(edit_lab: Lab) -> None:
    for victim in edit_lab.victims:  # type: ignore[attr-defined]
        calls = edit_lab.calls(victim)
        assert len(calls) <= 1
        assert all("EVIL" not in c["stdin"] for c in calls), calls


def test_edit_not_silent(edit_lab: Lab) -> None:
    _not_silent(edit_lab)


def test_edit_bystander(edit_lab: Lab) -> None:
    assert len(edit_lab.calls("zz")) == 1
    assert edit_lab.status()["plans/zz"]["status"] == "completed"
