"""Round 43, exactly the approved values across a gate: an earlier action's output that holds
a secret reaches the gated action as the literal text ``***``.

Lab ``g`` (local mode), ``secrets.file`` holding ``TOK``; each plan's action 1 hands
``s: "$<secrets.TOK>"`` to ``echo`` and declares the output ``x: $.s`` (a login step handing
back a session token is the real-world shape); action 2 calls ``rec`` with
``q: "$<actions[1].outputs.x>"`` (whole value) and ``r: "<x> tail"`` (inside text):

- ``gated``: action 2 has ``requires_approval: true``; the run pauses (``awaiting_approval``),
  Bob approves the gate (``status: approved``), the next pass runs action 2;
- ``plain`` (control): no gate, both actions run in one pass.

Asserted: ``rec`` ran once and got ``q`` equal to the secret and ``r`` to the secret then
`` tail``: what the approved references resolve to; the secret in no commit.

Broke (round 43): ``gated``: after the gate ``rec`` got ``q: "***"``, ``r: "*** tail"``: the
outputs are read back from the (redacted) journal on the resume, so a gated action never gets
an earlier output that held a secret (docs/execution.md lists this only for a crash replay;
here it is the ordinary path of every gate, and the gate preview shows ``***`` too). The
controller should resume with the real value (kept outside git, as the secret itself is), or
refuse a plan whose gated action reads an output a secret may reach.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from advkit import ALICE, BOB, Lab
from test_round2_execution_kit import shared

SECRET = "Kp4Rt7Wy2Zx9Qm"


def _plan(vid: str) -> str:
    gate = "    requires_approval: true\n" if vid == "gated" else ""
    return f"""\
plan:
  name: "{vid}"
  task: "token across a gate"
  status: pending_approval
available_tools:
  - name: echo
  - name: rec
actions:
  - id: 1
    tool: echo
    why: "log in"
    params: {{s: "$<secrets.TOK>"}}
    outputs:
      - {{name: x, path: "$.s"}}
  - id: 2
    tool: rec
    why: "use the session"
{gate}    params:
      tag: "{vid}"
      q: "$<actions[1].outputs.x>"
      r: "$<actions[1].outputs.x> tail"
"""


def _build(root: Path) -> Lab:
    (root / "g").mkdir()
    secrets = root / "secrets.yml"
    secrets.write_text(f"TOK: {SECRET}\n")
    lab = Lab(root / "g", extra=f"secrets: {{file: {secrets}}}\n")
    for vid in ("gated", "plain"):
        lab.write(vid, _plan(vid))
    lab.commit("plans")
    lab.run()
    for vid in ("gated", "plain"):
        lab.set_status(vid, "approved")
    lab.commit("approve", ALICE)
    lab.run()
    lab.approve("gated", BOB, "approve the gate")
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r43-gatereplay", _build)


@pytest.mark.parametrize(
    "vid",
    [
        pytest.param(
            "gated",
            marks=pytest.mark.xfail(
                strict=True,
                raises=AssertionError,
                reason="round 43: a gated action gets an earlier output holding a secret as '***'",
            ),
        ),
        "plain",
    ],
)
def test_the_approved_reference_reaches_the_tool(lab: Lab, vid: str) -> None:
    assert (lab.plan(vid).get("execution") or {}).get("status") == "completed"
    assert SECRET not in lab.git("log", "--all", "-p")
    calls = lab.calls(vid)
    assert len(calls) == 1, calls
    got = json.loads(calls[0]["stdin"])
    assert got["q"] == SECRET and got["r"] == f"{SECRET} tail", got
