"""Round 25, exactly the approved values through a nested plan that stays a ``draft`` and so
is never frozen: its params keep the *legacy* ``${inputs.x}`` form, which only freezing
rewrites to ``$<inputs.x>``; the parent passes tool output holding reference text.

Action 1 (``rec``) is handed ``"$$<secrets.TOKEN>"`` and ``"$$<inputs.y>"`` (literal text) and
echoes them; its outputs ``p`` and ``q`` fill the nested plan's inputs ``x`` and ``z``. The
nested draft ``plans/child`` (pinned by hash) calls ``rec`` with ``a: "$<inputs.x>"``,
``b: "pre $<inputs.x>"``, ``c: "pre $<inputs.z>"``, ``d: "${inputs.x}"`` (legacy, whole
value) and ``e: "pre ${inputs.z} ${plan.name}"`` (legacy, inside text). The controller holds
the secret ``PLANGATE_SECRET_TOKEN``.

Defence asserted: the nested tool gets the output text as data (``$<secrets.TOKEN>``,
``$<inputs.y>``), never the secret and never ``y``'s value; ``${plan.name}`` is the nested
plan's name; the secret appears in no commit; ``plangate show`` lists ``d`` and ``e`` as
references. All held (round 25).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from advkit import AGENT, Lab
from test_round2_execution_kit import shared

SECRET = "Zq8-very-secret-tok3n"

CHILD = """\
plan:
  name: child
  task: nested
  status: draft
inputs:
  x: "dx"
  z: "dz"
available_tools:
  - name: rec
actions:
  - id: 1
    tool: rec
    why: child
    params:
      tag: child
      a: "$<inputs.x>"
      b: "pre $<inputs.x>"
      c: "pre $<inputs.z>"
      d: "${inputs.x}"
      e: "pre ${inputs.z} ${plan.name}"
"""

PARENT = """\
plan:
  name: parent
  task: nests
  status: pending_approval
available_tools:
  - name: rec
actions:
  - id: 1
    tool: rec
    why: src
    params:
      tag: src
      p: "$$<secrets.TOKEN>"
      q: "$$<inputs.y>"
    outputs:
      - {name: p, path: $.json.echo.p}
      - {name: q, path: $.json.echo.q}
  - id: 2
    plan: {path: plans/child, hash: "HASH"}
    why: nest
    inputs: {x: "$<actions[1].outputs.p>", z: "$<actions[1].outputs.q>"}
"""


def _build(root: Path) -> Lab:
    lab = Lab(root)
    lab.extra_env = {"PLANGATE_SECRET_TOKEN": SECRET}
    lab.write("child", CHILD)
    digest = lab.cli("hash", str(lab.repo / "plans/child")).stdout.split()[-1]
    lab.write("parent", PARENT.replace("HASH", digest))
    lab.commit("nested plans", AGENT)
    lab.run()
    lab.approve("parent")
    lab.run()
    lab.gitlog = lab.git("log", "-p", "--all")  # type: ignore[attr-defined]
    lab.show = lab.cli(  # type: ignore[attr-defined]
        "show", str(lab.repo / "plans/parent"), "--config", str(lab.config)
    ).stdout
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r25-nestlegacy", _build)


def test_nested_values_are_data(lab: Lab) -> None:
    calls = lab.calls("child")
    assert len(calls) == 1
    got = json.loads(calls[0]["stdin"])
    assert got == {
        "a": "$<secrets.TOKEN>",
        "b": "pre $<secrets.TOKEN>",
        "c": "pre $<inputs.y>",
        "d": "$<secrets.TOKEN>",
        "e": "pre $<inputs.y> child",
        "tag": "child",
    }


def test_secret_never_committed(lab: Lab) -> None:
    found = SECRET in lab.gitlog  # type: ignore[attr-defined]
    assert not found


def test_show_marks_legacy_refs(lab: Lab) -> None:
    show = lab.show  # type: ignore[attr-defined]
    assert 'param d = "«$<inputs.x>»"' in show
    assert 'param e = "pre «$<inputs.z>» «$<plan.name>»"' in show
