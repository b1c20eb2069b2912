# ruff: noqa: E501
"""Round 48, secrets never reaching git or status output, through the parsed RESULT and an
output handed on: the exec tool ``emit`` gets ``key: $<secrets.TOK>`` (``TOK:
Zq8Wx3Yv7Ut2``) and prints one JSON object whose string value ``v`` (or, for ``*-key``, a
mapping key) holds the secret with a control or an invisible character between its halves:
BEL, DEL, SI, U+200B, or (control) NUL. Action 1 declares ``out`` at ``$.json.v``; action 2
(``rec``) gets ``x: $<actions[1].outputs.out>``. Alice approves all; one pass.

Asserted per variant: the committed history about the plan (its files' diffs and the
controller's commit messages) and ``plangate status --json``, with the JSON/YAML escapes of
those characters read as the characters and the characters dropped (as a terminal or
``jq -r`` draws them), never show the secret.

Held: ``nul-val``, ``nul-key`` (masked everywhere; the tool of action 2 gets the tool's own
value, as designed). Broke (round 48): ``bel``, ``del``, ``si``, ``zwsp``, each ``-val`` and
``-key``: stdout, the ``json`` result (value or key), the output ``out`` in EXECUTION_LOG.md
and in PLAN.yml's ``execution.actions[0].outputs`` and action 2's recorded params ``x`` all
hold ``Zq8Wx3\\u0007Yv7Ut2`` (``\\u007f``, ``\\u000f``, ``\\u200b``): the whole secret with
one character a terminal draws as nothing between its halves. The redactor should read a
secret across characters that draw nothing (C0 controls other than line ends, DEL,
format characters) as it already does across a NUL.

Fixed (round 48, issue 11): a NUL was masked because the escape view reads text with NULs
as UTF-16 read as UTF-8 and searches it with the NULs dropped; the other characters had no
such path. Now the terminal view draws every string (raw, and as the escape view decodes
it: ``\\u0007`` in JSON) on a line model where every character of
``controller.display.HIDDEN`` draws nothing, and the redactor's walk of JSON data sends
every string value and mapping key through it. Every variant holds.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from advkit import ALICE, Lab
from test_round2_execution_kit import shared

S = "Zq8Wx3Yv7Ut2"
EMIT = r"""import json, sys
sys.stdin.read()
sep = {"bel": "\x07", "del": "\x7f", "si": "\x0f", "zwsp": "\u200b", "nul": "\x00"}[sys.argv[1]]
s = "Zq8Wx3" + sep + "Yv7Ut2"
if sys.argv[2] == "key":
    print(json.dumps({"v": "plain", "m": {s: 1}}))
else:
    print(json.dumps({"v": s}))
"""
SEPS = ["bel", "del", "si", "zwsp", "nul"]
VIDS = [f"{s}-{w}" for s in SEPS for w in ("val", "key")]
BROKEN: dict[str, str] = {}  # round 48's breaks: fixed (see the docstring)
INVISIBLE = [
    "\\u0007",
    "\\x07",
    "\\a",
    "\\u007f",
    "\\x7f",
    "\\u000f",
    "\\x0f",
    "\\u200b",
    "\\u200B",
    "\\u0000",
    "\\x00",
    "\\0",
]
INVISIBLE += ["\x07", "\x7f", "\x0f", "\u200b", "\x00"]


def _build(root: Path) -> Lab:
    (root / "emit.py").write_text(EMIT)
    (root / "sec.yml").write_text(f"TOK: {S}\n")
    py = json.dumps(sys.executable)
    lab = Lab(
        root / "tr",
        extra=f"secrets: {{file: {root / 'sec.yml'}}}\n",
        tools=f"emit: {{kind: exec, argv: [{py}, {json.dumps(str(root / 'emit.py'))}, '{{s}}', '{{w}}']}}\n",
    )
    for vid in VIDS:
        sep, where = vid.split("-")
        lab.write(
            vid,
            f"plan:\n  name: {vid}\n  task: t\n  status: pending_approval\n"
            "available_tools: [{name: emit}, {name: rec}]\nactions:\n  - id: 1\n    tool: emit\n    why: w\n"
            f'    params: {{s: {sep}, w: {where}, key: "$<secrets.TOK>"}}\n'
            '    outputs: [{name: out, path: "$.json.v"}]\n'
            "  - id: 2\n    tool: rec\n    why: w\n    needs: [1]\n"
            f'    params: {{tag: {vid}, x: "$<actions[1].outputs.out>"}}\n',
        )
    lab.commit("plans")
    lab.run()
    for vid in VIDS:
        lab.set_status(vid, "approved")
    lab.commit("approve", ALICE)
    lab.run()
    lab.status_json = lab.cli("status", "--json", "--config", str(lab.config)).stdout  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r48-termresult", _build)


def drawn(text: str) -> str:
    for esc in INVISIBLE:
        text = text.replace(esc, "")
    return text


def _marks(vid: str) -> list[pytest.MarkDecorator]:
    if vid in BROKEN:
        return [
            pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"round 48: {BROKEN[vid]}")
        ]
    return []


@pytest.mark.parametrize("vid", [pytest.param(v, id=v, marks=_marks(v)) for v in VIDS])
def test_a_split_secret_in_the_result_is_not_written(lab: Lab, vid: str) -> None:
    history = drawn(lab.history(vid))
    assert S not in history, [line[:200] for line in history.splitlines() if S in line][:4]
    rows = [json.dumps(r) for r in json.loads(lab.status_json) if r.get("plan") == f"plans/{vid}"]  # type: ignore[attr-defined]
    assert S not in drawn("\n".join(rows)), rows


def test_the_bench_ran(lab: Lab) -> None:
    assert lab.calls("nul-val"), "action 2 ran with the output"
