"""Round 25, one hostile plan never stalls or crashes the pass: large params (600 KB, from a
plan input, under ``limits.max_params_bytes``) written on the stdin of exec tools that do not
read it the way the controller expects.

- ``nr``: the tool prints its JSON result and closes stdin at once, without reading it (the
  controller's write meets a closed pipe);
- ``nr2``: the tool writes 300 KB to stdout (more than a pipe buffer) before it reads stdin
  (both sides would block if the controller wrote all of stdin before reading stdout).

Both tools have ``timeout: 5``; an honest ``zz`` is approved in the same commit. Defence
asserted: the pass exits 0 without a traceback; each tool was called once and its plan ended
(``completed`` or ``failed`` with an E_ code, never stuck ``executing``), the call ending on
its own and not at its tool's timeout (no ``E_TIMEOUT``: a controller blocked on the pipe
would only have been freed by the timeout); ``zz`` ran once and completed. No timing is
asserted (the project asserts none). All held (round 25).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, plan_text
from test_round2_execution_kit import shared

TOOLS = {
    "nr": "import sys, os\nsys.stdout.write('{\"ok\": true}')\nsys.stdout.flush()\nos.close(0)\n",
    "nr2": "import sys\nsys.stdout.write('x' * 300000)\nsys.stdout.flush()\nsys.stdin.read()\n",
}


def _build(root: Path) -> Lab:
    py = json.dumps(sys.executable)
    tools = ""
    for name, code in TOOLS.items():
        (root / f"{name}.py").write_text(code)
        script = json.dumps(str(root / f"{name}.py"))
        tools += f"{name}: {{kind: exec, argv: [{py}, {script}], timeout: 5}}\n"
    lab = Lab(root, tools=tools)
    big = "B" * 600000
    for name in TOOLS:
        extra = (
            f"  - id: 2\n    tool: {name}\n    why: big stdin\n"
            '    params: {blob: "$<inputs.big>"}\n'
        )
        text = plan_text(name, extra_actions=extra).replace(
            "  - name: rec\n", f"  - name: rec\n  - name: {name}\n"
        )
        lab.write(name, text + f'inputs:\n  big: "{big}"\n')
    lab.write("zz", plan_text("zz"))
    lab.commit("plans", AGENT)
    lab.run()
    for slug in [*TOOLS, "zz"]:
        lab.set_status(slug, "approved")
    lab.commit("approve", ALICE)
    result = lab.run(check=False)
    lab.ok = (result.returncode, "Traceback" in result.stderr)  # type: ignore[attr-defined]
    lab.st = {s: lab.status()[f"plans/{s}"] for s in [*TOOLS, "zz"]}  # type: ignore[attr-defined]
    lab.tool_steps = {s: lab.plan(s)["execution"]["actions"][1] for s in TOOLS}  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r25-stdin", _build)


@pytest.mark.parametrize("vid", list(TOOLS))
def test_pass_goes_on(lab: Lab, vid: str) -> None:
    assert lab.ok == (0, False)  # type: ignore[attr-defined]
    assert len(lab.calls(vid)) == 1
    row = lab.st[vid]  # type: ignore[attr-defined]
    assert row["status"] == "completed" or (
        row["status"] == "failed" and "E_" in (row.get("reason") or "")
    )
    # the call ended on its own: a pass blocked on the pipe would end it at its timeout
    step = lab.tool_steps[vid]  # type: ignore[attr-defined]
    assert step["id"] == 2 and step["status"] in ("succeeded", "failed"), step
    assert (step.get("error") or {}).get("code") != "E_TIMEOUT", step
    assert "E_TIMEOUT" not in (row.get("reason") or ""), row
    assert lab.st["zz"]["status"] == "completed" and len(lab.calls("zz")) == 1  # type: ignore[attr-defined]
