"""Round 53 (runs): hard links in the shared working tree. SPEC §15: the controller "never
follows a symlink or opens a non-regular file in the plans tree"; rounds 12 and 14 swapped
files and folders for symlinks, FIFOs and folders. A hard link is a regular file
(``O_NOFOLLOW`` and ``fstat`` cannot tell it), so a controller that writes a plan's files in
place (``O_TRUNC``) would write through it into a file outside the tree.

Lab ``hl`` (local mode; the test runs as a user that may link any file, as an agent running
as the controller's user could). Action 1 of each plan is ``hl``, an exec tool the agent's
plan calls, which rewires the plan's own folder mid-run; action 2 is ``rec``:

- ``log``: ``EXECUTION_LOG.md`` made a hard link to ``outside/victim-log.txt``.
- ``plan``: ``PLAN.yml`` replaced by a hard link to ``outside/victim-plan.txt`` holding the
  same bytes (so the plan still reads as itself).
- ``both``: the two at once.

Asserted per variant: the files outside the tree keep their bytes (the controller replaced
the links by renames, never wrote through them), action 2 ran once, the plan completed, and
the outcome commit holds the controller's record, not the victim's bytes. All held.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from advkit import ALICE, Lab
from test_round2_execution_kit import shared

HL = r"""import os, shutil, sys
mode, folder, outside = sys.argv[1], sys.argv[2], sys.argv[3]
sys.stdin.read()
if mode in ("log", "both"):
    v = os.path.join(outside, f"{mode}-victim-log.txt")
    with open(v, "w") as f:
        f.write("VICTIM LOG\n")
    p = os.path.join(folder, "EXECUTION_LOG.md")
    if os.path.lexists(p):
        os.unlink(p)
    os.link(v, p)
if mode in ("plan", "both"):
    v = os.path.join(outside, f"{mode}-victim-plan.txt")
    p = os.path.join(folder, "PLAN.yml")
    shutil.copyfile(p, v)
    os.unlink(p)
    os.link(v, p)
print("{}")
"""
MODES = ["log", "plan", "both"]


def _build(root: Path) -> Lab:
    outside = root / "outside"
    outside.mkdir()
    (root / "hl.py").write_text(HL)
    argv = [sys.executable, str(root / "hl.py"), "{mode}", "{folder}", str(outside)]
    lab = Lab(root / "hl", tools=f"hl: {{kind: exec, argv: {json.dumps(argv)}}}\n")
    for mode in MODES:
        folder = json.dumps(str(lab.repo / "plans" / mode))
        lab.write(
            mode,
            f"plan:\n  name: {mode}\n  task: t\n  status: pending_approval\n"
            "available_tools: [{name: hl}, {name: rec}]\nactions:\n"
            f"  - {{id: 1, tool: hl, why: w, params: {{mode: {mode}, folder: {folder}}}}}\n"
            f"  - {{id: 2, tool: rec, why: w, params: {{tag: {mode}-2}}}}\n",
        )
    lab.commit("plans")
    lab.run()
    for mode in MODES:
        lab.set_status(mode, "approved")
    lab.commit("approve", ALICE)
    lab.run()
    lab.victims = {p.name: p.read_text() for p in outside.iterdir()}  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r53-hardlink", _build)


@pytest.mark.parametrize("mode", MODES)
def test_nothing_is_written_through_a_hard_link(lab: Lab, mode: str) -> None:
    victims = lab.victims  # type: ignore[attr-defined]
    if mode in ("log", "both"):
        assert victims[f"{mode}-victim-log.txt"] == "VICTIM LOG\n"
    if mode in ("plan", "both"):
        text = victims[f"{mode}-victim-plan.txt"]
        assert "status: executing" in text and "completed" not in text, text[-600:]
    assert len(lab.calls(f"{mode}-2")) == 1
    plan = lab.plan(mode)
    assert plan["plan"]["status"] == "completed", plan["plan"]
    log = lab.git("show", f"HEAD:plans/{mode}/EXECUTION_LOG.md")
    assert "VICTIM" not in log and "# " in log
