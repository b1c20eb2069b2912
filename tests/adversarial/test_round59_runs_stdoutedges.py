"""Round 59 (runs): an exec tool's stdout that is JSON only after a lenient reading.

The attack: docs/execution.md step 5: "The JSON text of an exec or http result is read
exactly or not at all". A tool (outside data) prints a JSON document wrapped in bytes JSON
does not allow around a text (RFC 8259: only space, tab, LF and CR are whitespace): a form
feed, a no-break space, U+2028, an information separator, a NUL after it, a second document
(NDJSON) or trailing text. A reader that ``strip()``s with Python's wider idea of
whitespace, or stops at the first document, hands a value to the next action that the
exact reading never yields: ``$.json.v`` must then match nothing (``json`` is not the
document), action 2 never runs and the plan fails ``E_OUTPUT_MISSING``.

Lab ``so`` (local mode): tool ``emit`` (exec) writes the bytes its param ``hex`` names to
stdout; action 1 ``emit`` with output ``o`` = ``$.json.v``; action 2 ``rec`` gets
``v: $<actions[1].outputs.o>``. Alice approves every plan; one pass. Controls: ``ws-json``
(JSON's own whitespace around the document: space, tab, CR LF) and ``plain`` are read.

Asserted: each attack variant: action 2 never ran, the plan failed; the controls: action 2
got ``1``.

Broke: none. Held: all 9 attacks (each ``E_OUTPUT_MISSING``, action 2 never ran) and both
controls.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, Lab, cases
from test_round2_execution_kit import shared

EMIT = """\
import json, sys
params = json.loads(sys.stdin.read())
sys.stdout.buffer.write(bytes.fromhex(params["hex"]))
"""

DOC = '{"v": 1}'
ATTACKS: dict[str, bytes] = {
    "formfeed-lead": b"\x0c" + DOC.encode(),
    "vtab-trail": DOC.encode() + b"\x0b",
    "nbsp-lead": "\u00a0".encode() + DOC.encode(),
    "ls-trail": DOC.encode() + "\u2028".encode(),
    "sep-trail": DOC.encode() + b"\x1e",
    "nul-trail": DOC.encode() + b"\x00",
    "ndjson": (DOC + "\n" + '{"v": 2}' + "\n").encode(),
    "text-trail": (DOC + " ok").encode(),
    "nel-lead": "\u0085".encode() + DOC.encode(),
}
CONTROLS: dict[str, bytes] = {
    "plain": DOC.encode(),
    "ws-json": b" \t\r\n" + DOC.encode() + b"\r\n \t",
}


def _plan(vid: str, raw: bytes) -> str:
    return (
        f"plan:\n  name: {vid}\n  task: t\n  status: pending_approval\n"
        "available_tools: [{name: emit}, {name: rec}]\nactions:\n"
        f"  - id: 1\n    tool: emit\n    why: emit\n    params: {{hex: {raw.hex()}}}\n"
        "    outputs: [{name: o, path: $.json.v}]\n"
        f"  - id: 2\n    tool: rec\n    why: use\n"
        f'    params: {{tag: {vid}-2, v: "$<actions[1].outputs.o>"}}\n'
    )


def _build(root: Path) -> Lab:
    (root / "emit.py").write_text(EMIT)
    argv = json.dumps([sys.executable, str(root / "emit.py")])
    lab = Lab(root / "so", tools=f"emit: {{kind: exec, argv: {argv}}}\n")
    for vid, raw in {**ATTACKS, **CONTROLS}.items():
        lab.write(vid, _plan(vid, raw))
    lab.commit("plans")
    lab.run()
    for vid in {**ATTACKS, **CONTROLS}:
        lab.set_status(vid, "approved")
    lab.commit("approve", ALICE)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r59-stdoutedges", _build)


BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", list(CONTROLS))
def test_json_whitespace_is_read(lab: Lab, vid: str) -> None:
    got = lab.calls(f"{vid}-2")
    assert len(got) == 1 and json.loads(got[0]["stdin"])["v"] == 1, (got, lab.codes(vid)[-800:])


@pytest.mark.parametrize("vid", cases(list(ATTACKS), list(ATTACKS), BROKEN))
def test_not_json_exactly_fills_nothing(lab: Lab, vid: str) -> None:
    got = lab.calls(f"{vid}-2")
    assert got == [], got
    assert lab.plan(vid)["plan"]["status"] == "failed", lab.codes(vid)[-1200:]
