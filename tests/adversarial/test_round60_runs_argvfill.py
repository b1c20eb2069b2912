"""Round 60 (runs): an exec tool's argv placeholders filled with placeholder text.

The attack: docs/execution.md: "``argv`` from the catalog, ``{param}`` filled per element"
and plan-format.md: "a resolved value is data and is never scanned again". An argv element
with two placeholders (``--a={a}:{b}``) filled one placeholder after the other (a
``str.replace`` loop, or ``str.format``) reads a value that holds placeholder text as a
placeholder: a tool output ``{b}`` in ``a`` would become ``b``'s value, ``{{b}}`` would lose
a brace, ``{b!r}`` or ``{b[0]}`` would run format's own mini-language. Nobody has handed an
output holding the catalog's own placeholder syntax to a multi-placeholder element.

Lab ``af`` (local mode): catalog ``pair`` (exec: the recorder with argv
``[<tag>, "--a={a}:{b}", "{b}"]``). Per variant, action 1 ``echo`` hands the value back
(output ``o``, ``$.v``), action 2 ``pair`` gets ``a: $<actions[1].outputs.o>``, ``b: B``
(``rev``: ``a: A`` and ``b`` the output; ``lit-*``: the value written in the plan). Alice
approves all; one pass.

Asserted: the tool's argv is exactly the elements with each placeholder replaced once by
its value as text (``--a=<a>:<b>``, ``<b>``), whatever the value holds.

Broke: none. Held: all 14 (each placeholder filled once, the value never read again:
``cross``, ``self``, ``tag``, ``brace2``, ``fmt-conv``, ``fmt-index``, ``fmt-spec``,
``printf``, ``dollar``, ``rev``, ``both``, ``lit-cross``, ``open-brace`` and ``plain``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, Lab, cases, xfail
from test_round2_execution_kit import shared

# id: (a, b, a from the output?, b from the output?)
VARIANTS: dict[str, tuple[str, str, bool, bool]] = {
    "plain": ("x", "B", True, False),
    "cross": ("{b}", "B", True, False),
    "self": ("{a}", "B", True, False),
    "tag": ("{tag}", "B", True, False),
    "brace2": ("{{b}}", "B", True, False),
    "fmt-conv": ("{b!r}", "B", True, False),
    "fmt-index": ("{b[0]}", "B", True, False),
    "fmt-spec": ("{b:>9}", "B", True, False),
    "printf": ("%(b)s", "B", True, False),
    "dollar": ("${b}", "B", True, False),
    "rev": ("A", "{a}", False, True),
    "both": ("{b}", "{a}", True, True),
    "lit-cross": ("{b}", "B", False, False),
    "open-brace": ("{", "}", True, True),
}


def _plan(vid: str, a: str, b: str, a_out: bool, b_out: bool) -> str:
    echo = {"va": a, "vb": b}
    params = {
        "tag": vid,
        "a": "$<actions[1].outputs.oa>" if a_out else a,
        "b": "$<actions[1].outputs.ob>" if b_out else b,
    }
    return (
        f"plan:\n  name: {vid}\n  task: t\n  status: pending_approval\n"
        "available_tools: [{name: echo}, {name: pair}]\nactions:\n"
        f"  - id: 1\n    tool: echo\n    why: hand back\n    params: {json.dumps(echo)}\n"
        "    outputs: [{name: oa, path: $.va}, {name: ob, path: $.vb}]\n"
        f"  - id: 2\n    tool: pair\n    why: use\n    params: {json.dumps(params)}\n"
    )


def _build(root: Path) -> Lab:
    lab = Lab(root / "af")
    argv = [sys.executable, str(lab.recorder), "{tag}", "--a={a}:{b}", "{b}"]
    lab.write_config(
        tools=f"pair: {{kind: exec, argv: {json.dumps(argv)}, "
        f"env: {{REC_LOG: {json.dumps(str(lab.log))}}}}}\n"
    )
    for vid, (a, b, a_out, b_out) in VARIANTS.items():
        lab.write(vid, _plan(vid, a, b, a_out, b_out))
    lab.commit("plans")
    lab.run()
    for vid in VARIANTS:
        lab.set_status(vid, "approved")
    lab.commit("approve", ALICE)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r60-argvfill", _build)


BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(list(VARIANTS), list(VARIANTS), BROKEN))
def test_placeholder_text_is_filled_once(lab: Lab, vid: str) -> None:
    a, b, _, _ = VARIANTS[vid]
    got = lab.calls(vid)
    assert len(got) == 1, (got, lab.codes(vid)[-800:])
    assert got[0]["argv"] == [vid, f"--a={a}:{b}", b], got[0]["argv"]
