"""Round 47, who may make a plan run past a gate: round 45's stale pull request (a branch
whose ``approved`` was written for an earlier state, merged cleanly into a later one) applied
to a PAUSE instead of a version. The version is the same; the pause is not.

Config: the bench's. Each plan ``plans/one/<vid>`` is the agent's: action 1 ``rec`` (tag
``<vid>``), action 2 ``rec`` (tag ``<vid>-2``) with ``requires_approval: true``, action 3
``rec`` (tag ``<vid>-3``) with ``requires_approval: true``. The controller freezes; Alice
approves; the run does action 1 and pauses at gate 2 (``awaiting_approval``). The agent cuts
``pr-<vid>`` from main and sets ``status: approved`` there (a pull request "approve gate 2",
as Bob would review it: its execution block shows the pause before action 2). On main Carol
approves gate 2 herself; the controller runs action 2 and pauses at gate 3 (the plan's status
line reads ``awaiting_approval`` again, as at the branch's merge base). Then Bob merges:

- ``stale``: ``git merge --no-ff pr-<vid>``: git takes the branch's ``approved`` cleanly (main
  left the status line as at the base). Bob reviewed an approval of gate 2, which Carol
  already gave; the merge would approve gate 3, which no merged branch ever showed.
- ``stale-squash-msg``: the same with a merge message naming the plan (``Plan:`` trailer of
  the plan): nothing changes for the rule.
- ``ask-stale``: action 2 calls ``flop`` (records, exits 1) with ``on_failure: ask``; the
  run pauses after its failure; the branch approves that pause (a retry); Carol answers it on
  main, the retry fails, the plan pauses again (``awaiting_approval``); Bob merges the stale
  branch.
- ``resume-stale``: action 2 calls ``flop`` (``on_failure: stop``): the plan ``failed``; the
  branch asks a resume; Carol resumes on main, it fails again (``failed``); Bob merges.
- ``note-gate``: at gate 2, Bob commits ``NOTES.md`` into the plan's folder, then approves
  the gate himself (docs/approvals.md: whoever commits any file into a plan's folder is a
  writer of the plan that folder holds).
- ``note-branch-gate``: the same note on a branch of Bob's that Carol merges, then Bob
  approves the gate.
- ``fresh`` (control): the agent merges main into ``pr-<vid>`` first (the branch then holds
  the pause at gate 3 with ``approved``: what Bob sees is gate 3); Bob merges: a legitimate
  approval of gate 3, action 3 runs once.

Asserted (the defence): a status that git's merge brought from a branch that held it for
ANOTHER pause approves nothing: action 3 (tag ``<vid>-3``) never runs for the stale merges;
``rec`` ran action 2 exactly once (Carol's gate); ``flop`` ran exactly twice for the retry
variants (the first try and Carol's answer). The control runs action 3 once. And a clone's
``plangate check --as bob`` for each branch predicts ``start`` exactly when the controller
then ran the later step.

Seen: BROKE (strict xfails): ``stale``, ``stale-squash-msg``: action 3 ran; the controller
recorded the merge as Bob's gate approval (``approval: {by: bob, gate: true}``) of the pause
before action 3, which the merged branch never held (it held ``approved`` over the pause
before action 2, with the same frozen hash). ``ask-stale``, ``resume-stale``: ``flop`` ran a
third time (the stale merge answered the second failure). ``plangate check`` predicted the
same (it agrees: both wrong), and a fresh clone's ``plangate audit`` calls each of Bob's gate
approvals valid. The control held (action 3 ran once); ``note-gate`` and ``note-branch-gate`` held
(``E_SELF_APPROVAL``, action 2 never ran). Round 45's rule binds a merged
status to the version the branch held; a gate approval or resume is bound to one pause too,
so a status git's merge brought from a branch that held it over another pause (another
``execution`` state) should approve nothing (``E_APPROVAL_REPLAYED``, as an approval dated
before the pause is).

Fixed (round 47, issue 11): in the same rule as rounds 45-46
(``Lifecycle._merged_another_version``), a continuation approval (a gate, an ask, a resume:
the plan ``awaiting_approval`` or ``failed``) that git's merge machinery brought counts only
when a merged branch held this very version with that status AND the first parent's
``execution:`` block, whole, in a plan file it changed since the merge base: the same pause.
Otherwise ``E_APPROVAL_REPLAYED`` ("brings a status its merged branch held over another
pause") and nothing runs: ``stale``, ``stale-squash-msg`` (action 3 never runs),
``ask-stale``, ``resume-stale`` (``flop`` ran twice) hold; ``fresh`` (the branch merged main
first: it holds the gate-3 pause) runs action 3 once. ``plangate check`` (the same
Lifecycle) predicts the same, and a fresh clone's ``plangate audit`` finds no valid gate
approval in the stale merges (tests/approval/test_stale_gate.py). The ``approval:`` block is
not compared (round 45's ``behind-vote``).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import checkkit
import pytest
from advkit import AGENT, ALICE, BOB, CAROL, Lab, plan_text
from test_round2_execution_kit import shared

CASES = ["stale", "stale-squash-msg", "ask-stale", "resume-stale", "fresh"]
NOTES = ["note-gate", "note-branch-gate"]
GATES = ["stale", "stale-squash-msg"]
RETRIES = ["ask-stale", "resume-stale"]

FLOP = (
    "import json, os, sys\n"
    "with open(os.environ['REC_LOG'], 'a') as f:\n"
    "    f.write(json.dumps({'argv': sys.argv[1:], 'stdin': ''}) + '\\n')\n"
    "sys.exit(1)\n"
)

#: Open finds (strict xfails): none since the fix (see the docstring's "Fixed").
FOUND: dict[str, pytest.MarkDecorator] = {}


def _extra(vid: str) -> str:
    if vid in RETRIES:
        fail = "    on_failure: ask\n" if vid == "ask-stale" else ""
        return (
            '  - id: 2\n    tool: flop\n    why: "fails every time"\n'
            + fail
            + f'    params:\n      tag: "{vid}-2"\n'
        )
    return (
        '  - id: 2\n    tool: rec\n    why: "second"\n    requires_approval: true\n'
        f'    params:\n      tag: "{vid}-2"\n'
        '  - id: 3\n    tool: rec\n    why: "third"\n    requires_approval: true\n'
        f'    params:\n      tag: "{vid}-3"\n'
    )


def _text(vid: str) -> str:
    text = plan_text(vid, extra_actions=_extra(vid))
    if vid in RETRIES:
        text = text.replace("  - name: rec\n", "  - name: rec\n  - name: flop\n")
    return text


def _slug(vid: str) -> str:
    return f"one/{vid}"


def _build(root: Path) -> Lab:
    (root / "flop.py").write_text(FLOP)
    argv = json.dumps([sys.executable, str(root / "flop.py"), "{tag}"])
    env = json.dumps(str(root / "ran.log"))
    lab = Lab(root, tools=f"flop: {{kind: exec, argv: {argv}, env: {{REC_LOG: {env}}}}}\n")
    for vid in CASES + NOTES:
        lab.write(_slug(vid), _text(vid))
    lab.commit("agent adds plans", AGENT)
    lab.run()  # freeze
    time.sleep(1.05)
    for vid in CASES + NOTES:
        lab.set_status(_slug(vid), "approved")
    lab.commit("alice approves", ALICE)
    lab.run()  # start, action 1, pause at gate 2
    time.sleep(1.05)
    trace: dict[str, Any] = {}
    for vid in CASES:
        trace[vid] = [lab.plan(_slug(vid))["plan"]["status"]]
        lab.git("checkout", "-q", "-b", f"pr-{vid}", "main")
        lab.set_status(_slug(vid), "approved")
        lab.commit(f"agent asks gate 2 of {vid}", AGENT)
        lab.git("checkout", "-q", "main")
    for vid in CASES:
        lab.set_status(_slug(vid), "approved")
    lab.commit("carol approves gate 2", CAROL)
    # Bob writes a note into a paused plan's folder, then approves its gate
    (lab.repo / "plans" / _slug("note-gate") / "NOTES.md").write_text("looks fine\n")
    lab.commit("bob's note", BOB)
    lab.git("checkout", "-q", "-b", "pr-note", "main")
    (lab.repo / "plans" / _slug("note-branch-gate") / "NOTES.md").write_text("ok\n")
    lab.commit("bob's note on a branch", BOB)
    lab.git("checkout", "-q", "main")
    lab.git("merge", "--no-ff", "-q", "-m", "merge pr-note", "pr-note", who=CAROL)
    time.sleep(1.05)
    for vid in NOTES:
        lab.approve(_slug(vid), BOB, f"bob approves gate 2 of {vid}")
    lab.run()  # action 2, pause at gate 3
    time.sleep(1.05)
    for vid in CASES:
        trace[vid].append(lab.plan(_slug(vid))["plan"]["status"])
    # the fresh branch catches up with main (holds the gate-3 pause with approved)
    lab.git("checkout", "-q", "pr-fresh")
    lab.git("merge", "--no-ff", "-q", "-m", "agent merges main", "main", who=AGENT)
    trace["fresh"].append(lab.plan(_slug("fresh"))["plan"]["status"])
    lab.git("checkout", "-q", "main")
    chk = root / "chk"
    lab.git("clone", "-q", str(lab.repo), str(chk))
    report: dict[str, Any] = {}
    for vid in CASES:
        out = lab.cli(
            "check", "--config", str(lab.config), "--base", "origin/main",
            "--head", f"origin/pr-{vid}", "--as", BOB[1], "--format", "json",
            cwd=chk,
        )  # fmt: skip
        report[vid] = {"out": out.stdout, "err": out.stderr[-2000:], "rc": out.returncode}
    lab.check_report = report  # type: ignore[attr-defined]
    for vid in CASES:
        msg = f"merge pr-{vid}"
        if vid == "stale-squash-msg":
            msg += f"\n\nPlan: plans/{_slug(vid)}"
        out = lab.git("merge", "--no-ff", "-q", "-m", msg, f"pr-{vid}", who=BOB, check=False)
        trace[vid].append(lab.plan(_slug(vid))["plan"]["status"] + " " + out[-200:])
    lab.trace = trace  # type: ignore[attr-defined]
    lab.run()
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r47-stalegate", _build)


def _p(vids: list[str], prefix: str = "") -> list[Any]:
    return [
        pytest.param(v, id=prefix + v, marks=[FOUND[prefix + v]] if prefix + v in FOUND else [])
        for v in vids
    ]


def test_the_bench_reached_the_later_pause_and_merged_approved(lab: Lab) -> None:
    for vid, row in lab.trace.items():  # type: ignore[attr-defined]
        paused = "failed" if vid == "resume-stale" else "awaiting_approval"
        assert row[0] == paused, (vid, row)
        assert row[1] == paused, (vid, row)
        assert row[-1].startswith("approved"), (vid, row)
        if vid not in RETRIES:
            assert len(lab.calls(f"{vid}-2")) == 1, (vid, lab.codes(_slug(vid)))


def test_control_runs_gate_three_once(lab: Lab) -> None:
    assert len(lab.calls("fresh-3")) == 1, lab.codes(_slug("fresh"))


@pytest.mark.parametrize("vid", _p(GATES))
def test_a_stale_gate_approval_approves_no_later_gate(lab: Lab, vid: str) -> None:
    assert lab.calls(f"{vid}-3") == [], lab.codes(_slug(vid))


@pytest.mark.parametrize("vid", _p(NOTES))
def test_a_folder_writer_approves_no_gate(lab: Lab, vid: str) -> None:
    assert lab.calls(f"{vid}-2") == [], lab.codes(_slug(vid))
    assert "E_SELF_APPROVAL" in lab.codes(_slug(vid)), lab.codes(_slug(vid))


@pytest.mark.parametrize("vid", _p(RETRIES))
def test_a_stale_retry_approval_answers_no_later_failure(lab: Lab, vid: str) -> None:
    # the first try, then Carol's answer: the stale merge answered a pause it never saw
    assert len(lab.calls(f"{vid}-2")) == 2, lab.codes(_slug(vid))


def _ran(vid: str, lab: Lab) -> bool:
    if vid in RETRIES:
        return len(lab.calls(f"{vid}-2")) > 2
    return bool(lab.calls(f"{vid}-3"))


@pytest.mark.parametrize("vid", _p(CASES, "check-"))
def test_check_matches_the_controller(lab: Lab, vid: str) -> None:
    mine = checkkit.prediction(lab, vid, _slug(vid))
    predicted = mine.get("outcome") == "start"
    assert predicted == _ran(vid, lab), json.dumps(mine)[:2000]
