"""Property: a frozen hash runs at most once per controller (SPEC §15 E_ALREADY_EXECUTED; §6
crash safety: a run whose journal is missing treats every started action as in doubt).

Attacks after a plan ran: copy it to a new folder (as is, reformatted, with other metadata or
``created``, nested deeper), move it, delete and re-add it, revert the controller's start and
complete commits (Alice reverting, so the revert is an approval request), rewrite history
with ``reset --hard`` to before the run, hide the run behind ``git replace``. And a crash in
the middle of a non-idempotent action followed by a journal deleted, emptied, or the whole
state directory deleted. Defence: the tool has run exactly once; the replays are refused
E_ALREADY_EXECUTED (the crash: E_ACTION_IN_DOUBT).
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, cases, plan_text, play
from test_round2_execution_kit import shared

Step = Callable[[Lab, str], None]


def submit(lab: Lab, vid: str) -> None:
    lab.write(vid, plan_text(vid))
    lab.commit(f"add {vid}", AGENT)


def approve(lab: Lab, vid: str) -> None:
    lab.approve(vid, ALICE)


def _pending_copy(text: str) -> str:
    """The plan as submitted: controller blocks dropped, status pending_approval."""
    head = text.split("\napproval:")[0].split("\nexecution:")[0]
    return head.replace("status: completed", "status: pending_approval", 1).rstrip("\n") + "\n"


def copy_to(where: str, mutate: Callable[[str], str] = lambda t: t, move: bool = False) -> Step:
    def step(lab: Lab, vid: str) -> None:
        text = mutate(_pending_copy(deleted.get(vid) or lab.read(vid)))
        lab.write(where.format(vid=vid), text)
        if move:
            lab.git("rm", "-q", "-r", f"plans/{vid}")
        lab.commit(f"copy {vid}", AGENT)

    return step


def approve_at(where: str) -> Step:
    def step(lab: Lab, vid: str) -> None:
        lab.approve(where.format(vid=vid), ALICE)

    return step


deleted: dict[str, str] = {}


def delete(lab: Lab, vid: str) -> None:
    deleted[vid] = lab.read(vid)
    lab.git("rm", "-q", "-r", f"plans/{vid}")
    lab.commit(f"delete {vid}", AGENT)


def revert_run(lab: Lab, vid: str) -> None:
    """Alice reverts the controller's complete and start commits: the plan is `approved` again."""
    rows = lab.log_rows("%H%x00%s%x01")
    for commit, subject in rows:
        if subject in (f"plangate: complete plans/{vid}", f"plangate: start plans/{vid}"):
            lab.git("revert", "--no-edit", commit, who=ALICE)


def _reformat(text: str) -> str:
    return "# copied for a second run\n" + text.replace("  - id: 1\n", "  - id: 1    # again\n")


def _metadata(text: str) -> str:
    return text + "metadata: {ticket: OPS-2}\n"


def _created(text: str) -> str:
    return text.replace(
        "  status: pending_approval",
        '  status: pending_approval\n  created: "2030-01-01T00:00:00Z"',
    )


COPY = "{vid}-copy"
ATTACKS: dict[str, list[Step]] = {
    "copy": [submit, approve, copy_to(COPY), approve_at(COPY)],
    "copy-reformatted": [submit, approve, copy_to(COPY, _reformat), approve_at(COPY)],
    "copy-other-metadata": [submit, approve, copy_to(COPY, _metadata), approve_at(COPY)],
    "copy-other-created": [submit, approve, copy_to(COPY, _created), approve_at(COPY)],
    "copy-nested": [submit, approve, copy_to("deep/{vid}"), approve_at("deep/{vid}")],
    "copy-approved-at-birth": [
        submit,
        approve,
        copy_to(COPY, lambda t: t.replace("pending_approval", "approved", 1)),
        None,
    ],
    "move": [submit, approve, copy_to(COPY, move=True), approve_at(COPY)],
    "delete-and-readd": [submit, approve, delete, copy_to("{vid}"), approve],
    "revert-the-run": [submit, approve, revert_run],
}


def _approved_slug(vid: str) -> str:
    if vid.startswith(("copy", "move")):
        return f"deep/{vid}" if vid == "copy-nested" else f"{vid}-copy"
    return vid


def _build_lab(root: Path) -> Lab:
    lab = Lab(root)
    play(lab, ATTACKS)
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "adv-once", _build_lab)


#: Every variant held since the controller records each frozen hash it started (issue 11).
BROKEN: dict[str, object] = {}


@pytest.mark.parametrize("vid", cases(list(ATTACKS), list(ATTACKS), BROKEN))
def test_a_plan_that_ran_never_runs_again(lab: Lab, vid: str) -> None:
    assert len(lab.calls(vid)) == 1, f"ran {len(lab.calls(vid))} times"
    assert "E_ALREADY_EXECUTED" in lab.codes(_approved_slug(vid)) or vid == "revert-the-run"


# -- history rewritten under the controller: each in a repo of its own -------------------


def _ran_once(tmp: Path, vid: str) -> Lab:
    lab = Lab(tmp)
    submit(lab, vid)
    lab.run()
    approve(lab, vid)
    lab.run()
    assert len(lab.calls(vid)) == 1
    return lab


def test_reset_hard_to_before_the_run_does_not_run_it_again(tmp_path: Path) -> None:
    lab = _ran_once(tmp_path, "reset")
    approval = lab.log_rows("%H%x00%s%x01")
    before_start = next(h for h, s in approval if s == "approve reset")
    lab.git("reset", "-q", "--hard", before_start)
    lab.run()
    assert len(lab.calls("reset")) == 1, "the rewritten history ran the plan again"


def test_git_replace_hiding_the_run_does_not_run_it_again(tmp_path: Path) -> None:
    vid = "replace"
    lab = _ran_once(tmp_path, vid)
    approval = next(h for h, s in lab.log_rows("%H%x00%s%x01") if s == f"approve {vid}")
    lab.git("replace", lab.head(), approval)
    lab.git("reset", "-q", "--hard")
    lab.run()
    assert len(lab.calls(vid)) == 1, "the replaced history ran the plan again"


# -- a crash mid-action, then the journal goes missing ------------------------------------

KILLER = """\
import json, os, signal, sys
data = sys.stdin.read()
with open(os.environ["REC_LOG"], "a") as f:
    f.write(json.dumps({"argv": sys.argv[1:], "stdin": data}) + "\\n")
if not os.path.exists(sys.argv[2]):
    open(sys.argv[2], "w").close()
    os.kill(os.getppid(), signal.SIGKILL)
print("{}")
"""

LOSSES = {
    "journal-deleted": lambda state: shutil.rmtree(state / "journal"),
    "journal-emptied": lambda state: [
        p.write_text("") for p in (state / "journal").rglob("*.jsonl")
    ],
    "state-dir-deleted": lambda state: shutil.rmtree(state),
}


@pytest.mark.parametrize(
    "loss",
    [
        "journal-deleted",
        "journal-emptied",
        "state-dir-deleted",
    ],
)
def test_a_lost_journal_never_runs_a_started_action_twice(tmp_path: Path, loss: str) -> None:
    lab = Lab(tmp_path)
    killer = tmp_path / "killer.py"
    killer.write_text(KILLER)
    argv = json.dumps([sys.executable, "-I", "-S", str(killer), "{tag}", str(tmp_path / "killed")])
    env = json.dumps(str(lab.log))
    lab.write_config(tools=f"killer: {{kind: exec, argv: {argv}, env: {{REC_LOG: {env}}}}}\n")
    lab.write(loss, plan_text(loss).replace("rec", "killer"))
    lab.commit("add", AGENT)
    lab.run()
    lab.approve(loss, ALICE)
    crashed = lab.run(check=False)
    assert crashed.returncode != 0 and len(lab.calls(loss)) == 1, (
        "the bench did not crash mid-action"
    )
    (lab.root / "state" / "lock").unlink(missing_ok=True)
    LOSSES[loss](lab.state)
    lab.run(take_over=loss == "state-dir-deleted")  # lost for good: told (round 70)
    lab.run()
    assert len(lab.calls(loss)) == 1, "a non-idempotent action ran twice"
    assert "E_ACTION_IN_DOUBT" in lab.codes(loss)
