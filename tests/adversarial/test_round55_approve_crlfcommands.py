"""Round 55, `plangate approve`/`reject`/`abort` refuse every committed plan whose file has
CRLF line ends: "has uncommitted edits" with a clean working tree.

docs/approvals.md, "Human commands": the commands "refuse a plan with uncommitted edits, a
wrong current status, or (approve) a plan that is not frozen". The controller freezes, runs
and records CRLF plans (a plan written on Windows, or by an editor that keeps CRLF), and a
hand-made approval of one runs; but the commands call the committed, unmodified file
edited (``git status`` is clean, ``git diff`` empty), so the approver cannot approve with
the documented command and cannot WITHDRAW: ``plangate reject`` and ``plangate abort`` fail
the same way, while another approver's approval would still run the plan.

Config: the bench's (no config given to the commands). The agent commits ``plans/<v>``; the
controller freezes them; Alice (in the repo, as herself) runs:

- ``approve``: ``plangate approve plans/approve`` on a CRLF plan; ``mixed``: the same on a
  plan whose first three lines end in CRLF, the rest LF.
- ``reject``: ``plangate reject plans/reject -m "not this week"`` on a CRLF plan.
- ``abort``: a CRLF plan with a gate before action 2, approved by hand (status bytes
  replaced, CRLF kept), paused at the gate: ``plangate abort plans/abort``.
- ``lf-approve``, ``lf-reject`` (controls): the same commands on LF plans.
- ``hand`` (control): a CRLF plan approved by hand: the controller runs it.

Asserted (the promise): each command exits 0 and commits its status; after a pass the plan
ran (approve), is ``rejected`` (reject) or ``aborted`` with action 2 never run (abort).

Seen: ``approve``, ``mixed``, ``reject``, ``abort`` broke (exit 2, ``E_USAGE: ... has
uncommitted edits; approving would not cover what you see``, also for reject and abort,
nothing committed); the controls held (``hand`` ran: the controller takes the plan).

Fixed (2026-11-29): the commands read the plan file byte for byte, as git stores it
(``read_text`` turned CRLF into LF, so every committed CRLF plan read as edited;
``controller/commands/approve.py`` ``_on_disk``). All four hold.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BenchError, Lab, cases, plan_text
from test_round2_execution_kit import shared

PLANGATE = str(Path(sys.executable).with_name("plangate"))
VIDS = ["approve", "mixed", "reject", "abort", "lf-approve", "lf-reject"]
BROKEN: dict[str, object] = {}  # fixed (see the docstring)
GATE = """\
  - id: 2
    tool: rec
    why: "gated step"
    requires_approval: true
    params:
      tag: "abort"
      step: 2
"""


def _text(v: str) -> str:
    text = plan_text(v, extra_actions=GATE if v == "abort" else "")
    if v == "mixed":
        return text.replace("\n", "\r\n", 3)
    if v.startswith("lf-"):
        return text
    return text.replace("\n", "\r\n")


def _by_hand(lab: Lab, v: str) -> None:
    path = lab.repo / "plans" / v / "PLAN.yml"
    data = path.read_bytes()
    if b"status: pending_approval\r\n" not in data:
        raise BenchError(f"{v}: no CRLF status line: {data[:200]!r}")
    path.write_bytes(data.replace(b"pending_approval", b"approved", 1))


def _build(root: Path) -> Lab:
    lab = Lab(root)
    for v in [*VIDS, "hand"]:
        lab.write(v, _text(v))
    lab.commit("agent: plans", AGENT)
    lab.run()
    time.sleep(1.05)
    _by_hand(lab, "abort")
    _by_hand(lab, "hand")
    lab.commit("alice approves by hand", ALICE)
    lab.run()
    if lab.status()["plans/abort"]["status"] != "awaiting_approval":
        raise BenchError(f"abort did not pause: {lab.codes('abort')[:400]}")
    lab.answers = {}  # type: ignore[attr-defined]
    for v in VIDS:
        command = v.removeprefix("lf-")
        command = "approve" if command == "mixed" else command
        args = [PLANGATE, command, f"plans/{v}"]
        if command == "reject":
            args += ["-m", "not this week"]
        before = lab.head()
        done = subprocess.run(
            args, cwd=lab.repo, env=lab.env(ALICE), capture_output=True, text=True
        )
        lab.answers[v] = (done.returncode, done.stdout + done.stderr, lab.head() != before)  # type: ignore[attr-defined]
    lab.clean = lab.git("status", "--porcelain")  # type: ignore[attr-defined]
    lab.run()
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r55-crlfcommands", _build)


def test_the_controller_takes_a_crlf_plan_approved_by_hand(lab: Lab) -> None:
    assert len(lab.calls("hand")) == 1, lab.codes("hand")
    assert lab.clean == "", lab.clean  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))  # type: ignore[arg-type]
def test_the_command_works_on_a_committed_plan(lab: Lab, vid: str) -> None:
    code, said, committed = lab.answers[vid]  # type: ignore[attr-defined]
    assert code == 0 and committed, said
    status = lab.status()[f"plans/{vid}"]["status"]
    if vid.endswith("approve") or vid == "mixed":
        assert len(lab.calls(vid)) == 1, lab.codes(vid)
    elif vid.endswith("reject"):
        assert status == "rejected" and lab.calls(vid) == [], lab.codes(vid)
    else:
        assert status == "aborted", lab.codes(vid)
        assert [c for c in lab.calls(vid) if '"step"' in c["stdin"]] == [], lab.codes(vid)
