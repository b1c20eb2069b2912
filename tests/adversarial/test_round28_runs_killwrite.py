# ruff: noqa: E501
"""Round 28, at most once and how it is recorded, across a controller killed (SIGKILL) right
after it moved the branch to one of its own commits, before it brought the shared working
tree up to that commit.

Each variant has its own small lab (a kill is per pass). The bench starts ``plangate run
--once`` as a child process, watches ``.git/refs/heads/main`` in a busy loop, and SIGKILLs
the controller as soon as the branch has moved ``N`` times in that pass; then it runs normal
passes (a restarted daemon) and asserts:

- ``kill-after-start``: plan ``v`` approved by Alice; the controller is killed right after
  its ``plangate: start plans/v`` commit (the index has the start version, the working tree
  still the approved one). Two passes follow. Asserted: ``rec`` ran exactly once, the plan is
  ``completed`` in ``status`` (its outcome committed), and the working tree agrees with HEAD.
- ``kill-after-outcome``: the controller is killed right after its ``plangate: complete
  plans/<victim>`` commit. One pass follows. Asserted (``-once``): ``rec`` ran once and the plan is
  ``completed``; (``-tree``): the working tree agrees with HEAD (no stale ``executing``
  PLAN.yml that the next ``git commit -a``/``add -A`` of the agent or an approver would commit
  as theirs).
- ``kill-after-policy``: a new plan, the first pass killed right after its first commit
  (``plangate: record policy`` in a fresh repository, else ``plangate: freeze``). One pass
  follows. Asserted: the working tree agrees with HEAD (no deleted ``.plangate/policy.json``,
  stale PLAN.yml or ``.*.tmp`` left for the approver's ``git add -A`` to commit).

The kill races the controller's own tree update, so the two ``-tree``/``-policy`` labs kill
passes (a new plan each) until one is killed while the tree still differs from the branch,
then run the next pass.

Also here, exactly the approved values, what ``show`` displays vs what runs (one shared lab):

- ``esc-odd``: a param ``"$$$<inputs.k>"``: the tool gets ``$$<inputs.k>`` (a literal ``$``
  then the escape), and ``show`` writes it as text, not as a reference.
- ``esc-input-data``: an input whose value is ``"$$<inputs.k>"`` passed as ``$<inputs.e>``:
  the tool gets it unchanged (data is never unescaped or resolved again).
- ``esc-output-data``: an ``echo`` result ``$<inputs.k>`` passed on: the tool gets the text.
- ``num-respell``: after Alice approved ``a: 100, b: 0`` the agent commits ``a: 100.0, b:
  -0.0`` (the same hash): the tool gets ``100`` and ``0`` (argv and stdin).

Held: ``kill-after-outcome-once``, ``esc-*``, ``num-respell``. **Broke** (round 28; fixed:
the controller notes each commit's files, its parent and what the working tree held before
the branch moves, and the next controller writes back the files nobody touched since; a
start's journal record is written before the branch moves to it):
``kill-after-start`` (the next pass adopts the run, runs the action, writes the outcome into
the stale working-tree file and then refuses to commit it: "plans/v/PLAN.yml has uncommitted
edits; plangate will not overwrite them (commit or discard them)"; the plan stays
``executing`` in git for good though its action ran, until a human discards the controller's
own write), ``kill-after-outcome-tree`` and ``kill-after-policy`` (the stale working-tree
files are never brought back to HEAD; the next human ``add -A`` commits the controller's
half-written bytes as the human's, which the audit then reports against them).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BenchError, Lab, plan_text
from test_round2_execution_kit import shared

from tests.support.gitenv import remove_stale_index_lock

#: What round 28 broke (kill-after-start, -outcome-tree, -policy): fixed the same hour
#: (recover_index writes the noted files back, the start's journal record precedes the
#: branch move); kept as the record, applied to nothing.
BROKE = pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="round 28: a controller SIGKILLed between moving the branch and updating the shared working tree leaves stale files the next pass never reconciles",
)


def _killed_pass(lab: Lab, moves: int) -> str:
    """One ``run --once`` pass SIGKILLed right after the branch moved ``moves`` times; returns
    the subject of the commit the branch was left on."""
    env = lab.env()
    env["REC_LOG"] = str(lab.log)
    ref = lab.repo / ".git" / "refs" / "heads" / "main"
    last = ref.read_text().strip()
    # On a loaded machine the watcher, one busy loop among many, could be off the CPU while
    # the controller moved on past the commit (rounds 30, 34: no kill landed in six tries):
    # the watcher runs ahead of the controller in the scheduler (raised if it may, else the
    # controller lowered), so the kill lands right after the move, as on a quiet machine.
    before = os.getpriority(os.PRIO_PROCESS, 0)
    try:
        os.setpriority(os.PRIO_PROCESS, 0, before - 10)
        lower = 10  # the controller (which inherits it) back at the usual priority
    except OSError:
        lower = 5
    argv = [sys.executable, "-m", "controller", "run", "--once", "--config", str(lab.config)]
    try:
        proc = subprocess.Popen(
            ["nice", "-n", str(lower), *argv],
            cwd=lab.root,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        seen = _watch(proc, ref, last, moves)
    finally:
        os.setpriority(os.PRIO_PROCESS, 0, before)
    if seen != moves:
        raise BenchError(f"the pass ended after {seen} branch moves, before the kill")
    return lab.git("log", "-1", "--format=%s").strip()


def _watch(proc: subprocess.Popen[bytes], ref: Path, last: str, moves: int) -> int:
    """Busy-watch ``ref``; SIGKILL ``proc`` once it moved ``moves`` times; the moves seen."""
    seen, deadline = 0, time.monotonic() + 60
    while proc.poll() is None and time.monotonic() < deadline:
        try:
            now = ref.read_text().strip()
        except OSError:
            continue
        if now and now != last:
            seen, last = seen + 1, now
            if seen == moves:
                os.kill(proc.pid, signal.SIGKILL)
                break
    proc.wait()
    return seen


def killed_start(
    lab: Lab,
    slug_of: Callable[[int], str],
    text_of: Callable[[int], str],
    *,
    clean_tree: bool = True,
    tries: int = 6,
) -> int:
    """Plans written, frozen and approved one after another until a pass is SIGKILLed right
    after its start commit (rounds 30, 33, 34): the branch on ``plangate: start plans/<slug>``,
    with ``clean_tree`` the tree exactly ``M  plans/<slug>/PLAN.yml``. The ``index.lock`` the
    killed controller held (from before the branch moved until the index has the commit) is
    removed, as git's message tells the agent whose next command meets it. Returns the
    attempt that landed (BenchError when none did)."""
    for attempt in range(tries):
        slug = slug_of(attempt)
        lab.write(slug, text_of(attempt))
        lab.commit(f"plan {slug}")
        lab.run()
        lab.approve(slug, ALICE)
        killed_at = _killed_pass(lab, 1)
        time.sleep(1.1)  # a git child of the killed controller may still finish
        tree = lab.git("status", "--porcelain", "--untracked-files=all").strip()
        if killed_at == f"plangate: start plans/{slug}" and (
            not clean_tree or tree == f"M  plans/{slug}/PLAN.yml"
        ):
            remove_stale_index_lock(lab.repo)
            return attempt
        lab.run()
    raise BenchError("no kill landed right after a start commit")


def _killed_before_tree(lab: Lab, moves: int, slug: str, approve: bool) -> str:
    """Kill passes (a new plan each time) until one is killed while the working tree still
    differs from the commit the branch was left on (the kill came before the controller
    updated the tree); returns that commit's subject."""
    for attempt in range(6):
        name = f"{slug}{attempt}"
        lab.write(name, plan_text(name))
        lab.commit(f"plan {name}")
        if approve:
            lab.run()
            lab.approve(name)
        subject = _killed_pass(lab, moves)
        if lab.git("status", "--porcelain", "--untracked-files=all"):
            lab.victim = name  # type: ignore[attr-defined]
            return subject
        lab.run()
    raise BenchError("no kill landed before the working tree was updated")


def _tree_clean(lab: Lab) -> str:
    return lab.git("status", "--porcelain", "--untracked-files=all")


def _approved_lab(root: Path) -> Lab:
    lab = Lab(root)
    lab.write("v", plan_text("v"))
    lab.commit("plan")
    lab.run()
    lab.approve("v")
    return lab


@pytest.fixture(scope="module")
def after_start(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    def build(root: Path) -> Lab:
        lab = _approved_lab(root)
        lab.killed_at = _killed_pass(lab, 1)  # type: ignore[attr-defined]
        lab.run()
        lab.run()
        return lab

    return shared(tmp_path_factory, "r28-killstart", build)


@pytest.fixture(scope="module")
def after_outcome(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    def build(root: Path) -> Lab:
        lab = Lab(root)
        lab.killed_at = _killed_before_tree(lab, 2, "o", True)  # type: ignore[attr-defined]
        lab.run()
        return lab

    return shared(tmp_path_factory, "r28-killoutcome", build)


@pytest.fixture(scope="module")
def after_policy(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    def build(root: Path) -> Lab:
        lab = Lab(root)
        lab.killed_at = _killed_before_tree(lab, 1, "p", False)  # type: ignore[attr-defined]
        lab.run()
        return lab

    return shared(tmp_path_factory, "r28-killpolicy", build)


def test_kill_after_start(after_start: Lab) -> None:
    lab = after_start
    assert lab.killed_at == "plangate: start plans/v"  # type: ignore[attr-defined]
    assert len(lab.calls("v")) == 1
    row = lab.status()["plans/v"]
    assert row["status"] == "completed", row
    assert _tree_clean(lab) == ""


def test_kill_after_outcome_once(after_outcome: Lab) -> None:
    lab = after_outcome
    victim = lab.victim  # type: ignore[attr-defined]
    assert lab.killed_at == f"plangate: complete plans/{victim}"  # type: ignore[attr-defined]
    assert len(lab.calls(victim)) == 1
    assert lab.status()[f"plans/{victim}"]["status"] == "completed"


def test_kill_after_outcome_tree(after_outcome: Lab) -> None:
    assert _tree_clean(after_outcome) == ""


def test_kill_after_policy(after_policy: Lab) -> None:
    lab = after_policy
    assert lab.killed_at.startswith(("plangate: record policy", "plangate: freeze"))  # type: ignore[attr-defined]
    assert _tree_clean(lab) == ""


# -- exactly the approved values ---------------------------------------------------------

ESC = {
    "esc-odd": ('"$$$<inputs.k>"', "$$<inputs.k>"),
    "esc-input-data": ('"$<inputs.e>"', "$$<inputs.k>"),
    "esc-output-data": ('"$<actions[1].result.v>"', "$<inputs.k>"),
}


def _esc_plan(tag: str, value: str) -> str:
    return f"""plan:
  name: {tag}
  task: t
  status: pending_approval
inputs:
  k: KV
  e: "$$<inputs.k>"
available_tools: [{{name: rec}}, {{name: echo}}, {{name: two}}]
actions:
  - {{id: 1, tool: echo, why: w, params: {{v: "$$<inputs.k>"}}}}
  - {{id: 2, tool: rec, why: w, params: {{tag: {tag}, a: {value}}}}}
"""


@pytest.fixture(scope="module")
def values(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    def build(root: Path) -> Lab:
        rec = json.dumps([sys.executable, str(root / "rec.py"), "{tag}", "{a}:{b}"])
        lab = Lab(
            root,
            tools=f"two: {{kind: exec, argv: {rec}, env: {{REC_LOG: {json.dumps(str(root / 'ran.log'))}}}}}\n",
        )
        for tag, (value, _) in ESC.items():
            lab.write(tag, _esc_plan(tag, value))
        lab.write(
            "num-respell",
            "plan:\n  name: num\n  task: t\n  status: pending_approval\navailable_tools: [{name: two}]\n"
            "actions:\n  - {id: 1, tool: two, why: w, params: {tag: num-respell, a: 100, b: 0}}\n",
        )
        lab.write("zz", plan_text("zz"))
        lab.commit("plans")
        lab.run()
        for slug in (*ESC, "num-respell", "zz"):
            lab.set_status(slug, "approved")
        lab.commit("approve", ALICE)
        lab.shows = {  # type: ignore[attr-defined]
            tag: lab.cli("show", str(lab.repo / "plans" / tag), "--config", str(lab.config)).stdout
            for tag in ESC
        }
        text = lab.read("num-respell").replace("a: 100, b: 0", "a: 100.0, b: -0.0")
        lab.write("num-respell", text)
        lab.commit("respell the numbers", AGENT)
        lab.run()
        return lab

    return shared(tmp_path_factory, "r28-values", build)


@pytest.mark.parametrize("tag", list(ESC))
def test_escapes_reach_the_tool_as_shown(values: Lab, tag: str) -> None:
    calls = values.calls(tag)
    assert len(calls) == 1
    assert json.loads(calls[0]["stdin"])["a"] == ESC[tag][1]
    shown = [line for line in values.shows[tag].splitlines() if "param a =" in line]  # type: ignore[attr-defined]
    assert shown, values.shows[tag]  # type: ignore[attr-defined]
    if tag == "esc-odd":
        assert "«" not in shown[0]


def test_num_respell(values: Lab) -> None:
    calls = values.calls("num-respell")
    assert len(calls) == 1
    assert calls[0]["argv"] == ["num-respell", "100:0"]
    assert json.loads(calls[0]["stdin"]) == {"a": 100, "b": 0, "tag": "num-respell"}
    assert len(values.calls("zz")) == 1
