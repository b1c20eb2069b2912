"""Round 47, hostile tool output never crashes or stalls the pass: a ``python`` tool's RETURN
VALUE (the python kind's result is no text to cut, unlike exec stdout) of types JSON has no
form for, or types ``json.dumps`` writes as something else.

Lab ``pr`` (local mode, ``python_path`` holds ``ptools``): ``big`` returns ``{"v": "x" * n}``;
``odd`` returns ``{"v": <value>}`` per kind: ``bytes``, ``set``, a ``tuple``, a ``Decimal``, a
``date``, a float subclass whose ``repr`` says ``1e999``, a list holding itself, ``nan``, a
generator; or a mapping with a ``True`` / ``None`` key. Each plan: action 1 (output ``o`` =
``$.v``, optional; ``on_failure: skip``), action 2 ``rec``. A control ``ctl``. Alice approves
all; one pass.

Asserted: the pass exits 0 with no traceback; ``ctl`` ran once; action 1 of
``big`` (5,000,000 characters) fails with a code naming the size bound; every type JSON has
no form for is ``E_TOOL_OUTPUT_INVALID``; ``tuple`` hands on the list ``[1, 2]`` and the float
subclass its value ``2.5`` (never the ``1e999`` its repr claims). All held (round 47).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from advkit import ALICE, Lab, plan_text
from test_round2_execution_kit import shared

PTOOLS = """\
import datetime, decimal
class F(float):
    def __repr__(self):
        return "1e999"
def big(n, **kw):
    return {"v": "x" * n}
def odd(kind, **kw):
    if kind == "bytes": return {"v": b"abc"}
    if kind == "set": return {"v": {1, 2}}
    if kind == "tuple": return {"v": (1, 2)}
    if kind == "dec": return {"v": decimal.Decimal("1.1")}
    if kind == "date": return {"v": datetime.date(2020, 1, 1)}
    if kind == "floatsub": return {"v": F(2.5)}
    if kind == "rec":
        loop = []
        loop.append(loop)
        return {"v": loop}
    if kind == "nan": return {"v": float("nan")}
    if kind == "gen": return {"v": (i for i in range(3))}
    if kind == "boolkey": return {True: 1}
    if kind == "nonekey": return {None: 1}
    return {"v": kind}
"""
INVALID = ["bytes", "set", "dec", "date", "rec", "nan", "gen", "boolkey", "nonekey"]
PASSED = {"tuple": [1, 2], "floatsub": 2.5}


def _plan(tag: str, tool: str, params: str) -> str:
    return f"""plan:
  name: {tag}
  task: t
  status: pending_approval
available_tools: [{{name: {tool}}}, {{name: rec}}]
actions:
  - id: 1
    tool: {tool}
    why: w
    params: {params}
    outputs: [{{name: o, path: $.v, optional: true}}]
    on_failure: skip
  - id: 2
    tool: rec
    why: r
    params: {{tag: {tag}, o: "$<actions[1].outputs.o>"}}
"""


def _build(root: Path) -> Lab:
    mods = root / "mods"
    mods.mkdir()
    (mods / "ptools.py").write_text(PTOOLS)
    lab = Lab(
        root / "pr",
        extra=f"python_path: [{json.dumps(str(mods))}]\n",
        tools="big: {kind: python, target: 'ptools:big', timeout: 60}\n"
        "odd: {kind: python, target: 'ptools:odd'}\n",
    )
    lab.write("big", _plan("big", "big", "{n: 5000000}"))
    for k in [*INVALID, *PASSED]:
        lab.write(f"o-{k}", _plan(f"o-{k}", "odd", "{kind: " + k + "}"))
    lab.write("ctl", plan_text("ctl"))
    lab.commit("plans")
    lab.run()
    for s in ["big", "ctl", *[f"o-{k}" for k in [*INVALID, *PASSED]]]:
        lab.set_status(s, "approved")
    lab.commit("approve", ALICE)
    r = lab.run(check=False)
    lab.result = {"rc": r.returncode, "stderr": r.stderr}  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r47-pyreturns", _build)


def _first(lab: Lab, slug: str) -> dict:
    acts = (lab.plan(slug).get("execution") or {}).get("actions") or []
    return acts[0] if acts else {}


def test_the_pass_went_on(lab: Lab) -> None:
    res = lab.result  # type: ignore[attr-defined]
    assert res["rc"] == 0 and "Traceback" not in res["stderr"], res["stderr"][-2000:]
    assert len(lab.calls("ctl")) == 1


def test_a_huge_return_value_is_refused_by_its_bound(lab: Lab) -> None:
    err = _first(lab, "big").get("error") or {}
    assert str(err.get("code", "")).startswith("E_"), err
    assert len(lab.read("big")) < 100_000


@pytest.mark.parametrize("kind", INVALID)
def test_a_value_json_has_no_form_for_is_refused(lab: Lab, kind: str) -> None:
    err = _first(lab, f"o-{kind}").get("error") or {}
    assert err.get("code") == "E_TOOL_OUTPUT_INVALID", err
    assert len(lab.calls(f"o-{kind}")) <= 1


@pytest.mark.parametrize("kind", list(PASSED))
def test_a_value_is_handed_on_as_its_value(lab: Lab, kind: str) -> None:
    calls = lab.calls(f"o-{kind}")
    assert len(calls) == 1
    assert json.loads(calls[0]["stdin"])["o"] == PASSED[kind]
