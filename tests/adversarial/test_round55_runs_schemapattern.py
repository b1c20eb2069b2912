# ruff: noqa: E501
"""Round 55 (runs): the catalog's ``params_schema`` read as Python, not as JSON Schema.
docs/configuration.md: ``params_schema`` is "JSON Schema (2020-12) checked statically and
after resolution"; its own example bounds a kubectl deployment name with ``pattern:
"^[a-z-]+$"``. JSON Schema's ``pattern`` is an ECMA-262 regular expression (2020-12
§6.3.3): ``$`` is the end of the string, ``\\d`` is ``[0-9]``, ``\\w`` is
``[A-Za-z0-9_]``, ``\\s`` includes U+FEFF; ``enum``/``const`` compare JSON values
(``true`` is not ``1``). The schema is the operator's last bound on what an output may
put into a tool's params; read with Python's ``re.search``, ``"web\\n"`` matches
``^[a-z-]+$`` and ``\\d``/``\\w`` take any script's digits and letters.

Lab ``sp``: tool ``scale`` (records its call) with ``params_schema`` properties ``name``
(``^[a-z-]+$``), ``num`` (``^\\d+$``), ``word`` (``^\\w+$``), ``tok`` (``^\\S+$``), ``flag``
(``enum: [1]``), ``zero`` (``const: 0``). Per variant two plans: ``lit-*`` writes the value
literally in ``params`` (the static check), ``out-*`` has ``echo`` hand it back and ``scale``
take ``$<actions[1].outputs.v>`` (the check after resolution). Alice approves all; one
pass. Asserted: ``scale`` never ran with the value; the plan was refused E_PARAMS_INVALID (at
validation or before the call). ``ok-*`` controls run.

Broke (8): ``nl``, ``digits``, ``word``, ``bom``, each written literally (``lit-*``: valid,
frozen, run) and handed back by a tool (``out-*``: the check after resolution passed): the
value reached ``scale``. Held: ``enum-bool``, ``const-bool`` (E_PARAMS_INVALID), and the
controls.

Fixed (2026-11-29): the eight breaks. ``pattern`` is matched as ECMA-262 (no flags, not
``u`` mode) through ``controller.plan.regexes``: ``$`` is the end of the string, ``\\d``,
``\\w`` and ``\\s`` the ECMA sets, ``.`` no line terminator, strings as UTF-16 code units,
statically and after resolution (``plans.params_errors``); a pattern whose ECMA meaning has
no translation is refused when the catalog is read (E_CONFIG_INVALID).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, Lab, cases
from test_round2_execution_kit import shared

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "pattern": "^[a-z-]+$"},
        "num": {"type": "string", "pattern": "^\\d+$"},
        "word": {"type": "string", "pattern": "^\\w+$"},
        "tok": {"type": "string", "pattern": "^\\S+$"},
        "flag": {"enum": [1]},
        "zero": {"const": 0},
    },
}
# base id: (param, value, passes)
VALUES: dict[str, tuple[str, Any, bool]] = {
    "nl": ("name", "web\n", False),
    "digits": ("num", "\u0661\u0662", False),
    "word": ("word", "w\u00e9b", False),
    "bom": ("tok", "a\ufeffb", False),
    "enum-bool": ("flag", True, False),
    "const-bool": ("zero", False, False),
    "ok-name": ("name", "web-a", True),
}
VIDS = [f"{k}-{b}" for b in VALUES for k in ("lit", "out")]

BROKEN: dict[str, Any] = {}


def _plan(vid: str) -> str:
    kind, base = vid.split("-", 1)
    param, value, _ = VALUES[base]
    head = f"plan:\n  name: {vid}\n  task: t\n  status: pending_approval\navailable_tools: [{{name: echo}}, {{name: scale}}]\nactions:\n"
    dump = json.dumps(value, ensure_ascii=False)
    if kind == "lit":
        return (
            head
            + f"  - id: 1\n    tool: scale\n    why: w\n    params: {{tag: {vid}, {param}: {dump}}}\n"
        )
    return (
        head
        + f"  - id: 1\n    tool: echo\n    why: w\n    params: {{v: {dump}}}\n    outputs: [{{name: v, path: $.v}}]\n"
        + f'  - id: 2\n    tool: scale\n    why: w\n    params: {{tag: {vid}, {param}: "$<actions[1].outputs.v>"}}\n'
    )


def _build(root: Path) -> Lab:
    lab = Lab(root / "sp")
    argv = json.dumps([sys.executable, str(lab.recorder), "{tag}"])
    lab.write_config(
        tools=f"scale: {{kind: exec, argv: {argv}, env: {{REC_LOG: {json.dumps(str(lab.log))}}}, params_schema: {json.dumps(SCHEMA)}}}\n"
    )
    for vid in VIDS:
        lab.write(vid, _plan(vid))
    lab.commit("plans")
    lab.run()
    for vid in VIDS:
        lab.set_status(vid, "approved")
    lab.commit("approve", ALICE)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r55-schemapattern", _build)


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))
def test_the_schema_bounds_what_reaches_the_tool(lab: Lab, vid: str) -> None:
    param, value, passes = VALUES[vid.split("-", 1)[1]]
    calls = lab.calls(vid)
    text = lab.codes(vid)
    if passes:
        assert len(calls) == 1, text[:1000]
        assert json.loads(calls[0]["stdin"])[param] == value
    else:
        assert calls == [], f"scale ran with {calls[0]['stdin']}"
        assert "E_PARAMS_INVALID" in text, text[:1000]
