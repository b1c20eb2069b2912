"""Round 52 (runs): hostile bytes in a paused plan's committed ``execution:`` block after a
journal loss (the round-45 recovery reads that block as "the truth for what already ran").

Lab ``rb`` (local mode): four plans, each action 1 ``rec`` (``who: real@example.net``, output
``who``) then action 2 ``rec`` gated with ``to: $<actions[1].outputs.who>``. Alice approves;
each pauses at the gate. The agent then commits an edit of action 1's recorded output
``who`` in every ``execution:`` block, and a new plan ``other``:

- ``deep``: a flow list nested 3,000 levels;
- ``alias``: a "billion laughs" of YAML anchors (10^9 leaves);
- ``wide``: a 3 MiB string (the file over ``limits.max_plan_bytes``);
- ``big``: a 700 KB string (the file under the limit).

The whole journal folder is then gone; Bob approves every gate; a pass; Alice approves
``other``; a pass.

Asserted: each pass exits 0 without a traceback; ``other`` ran once; no gated action ran
with anything but ``real@example.net`` (or at all). Held: the passes, ``deep``, ``alias``,
``wide`` (reported unreadable, E_YAML_PARSE / E_PLAN_TOO_LARGE; the gate waits, nothing
runs, ``other`` runs).

Broke (strict xfail): ``big``: the gated action ran with ``to`` = the agent's 700 KB string,
read from the edited record, although the controller itself never records an output longer
than 200 characters of JSON uncut (docs/execution.md: a value the record shows cut is "not
known" and a reference to it fails E_ACTION_IN_DOUBT): a record value no controller could
have written was taken as the truth (a variant of test_round52_runs_forgedrecord.py).

Fixed (2026-11-29): after a journal loss the run goes on only from the controller's own
record (the ``execution:`` block of its last commit of the plan that wrote it) and only when
the branch's block is that record; ``big``'s is not: it fails E_ACTION_IN_DOUBT, the gated
action never runs (``PlanRun._committed_record``).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab, plan_text
from test_round2_execution_kit import shared

VARIANTS = ["deep", "alias", "wide", "big"]
LINE = "      who: real@example.net"


def _plan(tag: str) -> str:
    return f"""\
plan:
  name: {tag}
  task: t
  status: pending_approval
available_tools: [{{name: rec}}]
actions:
  - id: 1
    tool: rec
    why: read
    params: {{tag: {tag}-1, who: real@example.net}}
    outputs: [{{name: who, path: $.json.echo.who}}]
  - id: 2
    tool: rec
    why: send
    requires_approval: true
    params: {{tag: {tag}-2, to: "$<actions[1].outputs.who>"}}
"""


def _bomb(vid: str) -> str:
    if vid == "deep":
        return "      who: " + "[" * 3000 + "]" * 3000
    if vid == "wide":
        return "      who: '" + "A" * (3 * 1024 * 1024) + "'"
    if vid == "big":
        return "      who: '" + "B" * (700 * 1024) + "'"
    rows = ["      who: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for i in range(1, 9):
        rows.append(f"      o{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]")
    return "\n".join(rows)


def _build(root: Path) -> Lab:
    lab = Lab(root / "rb")
    for vid in VARIANTS:
        lab.write(vid, _plan(vid))
    lab.commit("plans")
    lab.run()
    for vid in VARIANTS:
        lab.set_status(vid, "approved")
    lab.commit("approve", ALICE)
    lab.run()
    for vid in VARIANTS:
        path = lab.repo / "plans" / vid / "PLAN.yml"
        text = path.read_text(encoding="utf-8")
        assert LINE in text
        path.write_text(text.replace(LINE, _bomb(vid), 1), encoding="utf-8")
    lab.write("other", plan_text("other"))
    lab.commit("tidy the records", AGENT)
    shutil.rmtree(lab.state / "journal")
    for vid in VARIANTS:
        lab.set_status(vid, "approved")
    lab.commit("gates", BOB)
    lab.passes = [lab.run(check=False)]  # type: ignore[attr-defined]
    lab.set_status("other", "approved")
    lab.commit("approve other", ALICE)
    lab.passes.append(lab.run(check=False))  # type: ignore[attr-defined]
    lab.passes = [(p.returncode, "Traceback" in p.stderr) for p in lab.passes]  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r52-recordbombs", _build)


def test_the_passes_finish_and_other_runs(lab: Lab) -> None:
    assert lab.passes == [(0, False), (0, False)], lab.passes  # type: ignore[attr-defined]
    assert len(lab.calls("other")) == 1, lab.calls("other")


@pytest.mark.parametrize("vid", VARIANTS)
def test_the_gated_action_never_gets_the_bomb(lab: Lab, vid: str) -> None:
    assert len(lab.calls(f"{vid}-1")) == 1
    sent = lab.calls(f"{vid}-2")
    assert len(sent) <= 1, len(sent)
    for call in sent:
        assert '"to": "real@example.net"' in call["stdin"], call["stdin"][:300]
