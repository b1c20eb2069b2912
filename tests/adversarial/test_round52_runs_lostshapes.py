"""Round 52 (runs): failure shapes before a gate, after a state-directory loss (no forgery).

Lab ``ls`` (local mode; ``boom`` is an exec tool that records its call and exits 1): two
plans, each paused at a gate with a failure handled before it:

- ``fb``: action 1 ``boom`` with ``on_failure: fallback`` and one fallback step ``1.1``
  (``rec``); action 2 ``rec`` gated.
- ``rt``: action 1 ``boom`` with ``on_failure: skip``; action 2 ``rec``; action 3 ``rec``
  gated.

Alice approves; each pauses at its gate. The whole state directory is gone; Bob approves
both gates; two passes.

Asserted: nothing that ran before the gate runs again (``boom`` once, the fallback step
once, ``rt-2`` once); the gated action runs once; both complete. All held.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from advkit import ALICE, BOB, Lab
from test_round2_execution_kit import shared

BOOM = """\
import json, os, sys
data = sys.stdin.read()
with open(os.environ["REC_LOG"], "a", encoding="utf-8") as f:
    f.write(json.dumps({"argv": sys.argv[1:], "stdin": data}) + "\\n")
sys.exit(1)
"""

ACTIONS = {
    "fb": """\
  - id: 1
    tool: boom
    why: w
    params: {tag: fb-1}
    on_failure: fallback
    fallback:
      - {id: "1.1", tool: rec, why: fb, params: {tag: fb-1f}}
  - {id: 2, tool: rec, why: w, requires_approval: true, params: {tag: fb-2}}
""",
    "rt": """\
  - {id: 1, tool: boom, why: w, on_failure: skip, params: {tag: rt-1}}
  - {id: 2, tool: rec, why: w, params: {tag: rt-2}}
  - {id: 3, tool: rec, why: w, requires_approval: true, params: {tag: rt-3}}
""",
}
ONCE = {"fb": ["fb-1", "fb-1f", "fb-2"], "rt": ["rt-1", "rt-2", "rt-3"]}


def _build(root: Path) -> Lab:
    (root / "boom.py").write_text(BOOM)
    py = json.dumps(sys.executable)
    lab = Lab(
        root / "ls",
        tools=f"boom: {{kind: exec, argv: [{py}, {json.dumps(str(root / 'boom.py'))}, "
        f"'{{tag}}'], env: {{REC_LOG: {json.dumps(str(root / 'ls' / 'ran.log'))}}}}}\n",
    )
    for tag, actions in ACTIONS.items():
        lab.write(
            tag,
            f"plan:\n  name: {tag}\n  task: t\n  status: pending_approval\n"
            "available_tools: [{name: rec}, {name: boom}]\nactions:\n" + actions,
        )
    lab.commit("plans")
    lab.run()
    for tag in ACTIONS:
        lab.set_status(tag, "approved")
    lab.commit("approve", ALICE)
    lab.run()
    lab.paused = {t: lab.plan(t)["plan"]["status"] for t in ACTIONS}  # type: ignore[attr-defined]
    shutil.rmtree(lab.state)
    for tag in ACTIONS:
        lab.set_status(tag, "approved")
    lab.commit("gates", BOB)
    lab.run(take_over=True)  # the state directory lost for good: told (round 70)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r52-lostshapes", _build)


@pytest.mark.parametrize("tag", list(ACTIONS))
def test_nothing_runs_twice_and_the_gate_goes_on(lab: Lab, tag: str) -> None:
    assert lab.paused[tag] == "awaiting_approval", lab.paused  # type: ignore[attr-defined]
    for name in ONCE[tag]:
        assert len(lab.calls(name)) == 1, (name, lab.calls(name))
    assert lab.plan(tag)["plan"]["status"] == "completed"
