"""Round 79 (runs): tool outputs that look like plan text.

SPEC §15 and docs/plan-format.md ("References"): "a resolved value is data and is never
scanned again, so a tool's output can fill a parameter but can never become a reference, an
action or a tool"; docs/execution.md: output over the limits is ``E_TOOL_OUTPUT_INVALID`` or
``E_LIMIT_EXCEEDED``; secrets never reach git.

Lab (one, local mode). The catalog adds ``out`` (an exec tool, ``output_trust: trusted`` so
every flow is allowed, printing on stdout what its mode says, given the plan secret ``TOK`` on
stdin). One plan per variant, three actions: ``1`` calls ``rec`` with tag ``<vid>-a`` (no
reference); ``2`` calls ``out`` (mode = the variant), output ``v`` at ``$.json.v``; ``3``
calls ``rec`` with tag ``<vid>-b``, ``got: $<actions[2].outputs.v>`` (the whole value) and
``txt: "x $<actions[2].outputs.v> y"`` (inside a string). The plans also carry
``inputs: {k: kval}``. Alice approves all in one commit; two passes (the second must run
nothing again); a fresh-clone ``plangate audit --json``.

CONTROLS (complete, ``got`` is the output as the tool printed it): ``plain`` (``"hello"``),
``obj`` (``{"a": [1, 2]}``), ``unicode`` (``"é✓𝄞"``).

ATTACKS (outputs that re-parse as plan text; each must stay data, ``got`` equal to the
printed value, never resolved): ``refsec`` ``"$<secrets.TOK>"``, ``refin`` ``"$<inputs.k>"``,
``refact`` ``"$<actions[2].outputs.v>"``, ``refdd`` ``"$$<secrets.TOK>"``, ``legacy``
``"${secrets.TOK}"``, ``legin`` ``"${inputs.k}"``, ``envname`` ``"$PLANGATE_SECRET_TOK"``,
``envbare`` ``"PLANGATE_SECRET_TOK"``, ``yamlre`` (a YAML plan text adding action 9 ``rec``),
``jsonre`` (a JSON text ``{"tag": ...-9}``), ``actobj`` (an object shaped like an action with
tool ``rec`` and tag ``<vid>-9``); outputs past the limits or not JSON text git can hold
(each may fail the plan with its code, action 3 never called with a cut or changed value):
``dupkey`` (``{"v": "a", "v": "b"}`` as raw JSON), ``big`` (a 3 MB string), ``deep`` (5,000
nested lists), ``bigint`` (a 6,000-digit number), ``nul`` (``"a\\u0000b"``), ``surr`` (a lone
surrogate ``"\\ud800"``), ``nan`` (``NaN``), ``many`` (a list of 60,000 items); secrets:
``secret`` (the output IS the secret's value), ``secretpart`` (``pre-<secret>-post``).

Per variant: ``once`` (``<vid>-a`` called exactly once; ``<vid>-b`` at most once; no other
``<vid>-*`` tag ever called: no action 9), ``data`` (when ``<vid>-b`` ran, ``got`` is the
printed value itself and ``txt`` holds its text: no reference resolved, no secret
substituted), ``end`` (the plan ended ``completed`` or ``failed`` with an output code, never
left running; controls ``completed``), ``secret`` (the secret's value is in no commit of the
branch, no ``status`` row and, except where the tool itself printed it to ``rec``, in no
``rec`` input), ``audit`` (one valid run of every plan in the fresh clone).

Seen (round 79): nothing broken (120 ids held). Every reference-shaped output (``$<secrets>``,
``$<inputs>``, ``$<actions>``, ``$$<``, legacy ``${...}``, ``$PLANGATE_SECRET_TOK``) reached
``rec`` as the literal text, whole and inside a string, no secret substituted; YAML and JSON
plan text and an action-shaped object stayed data (no action 9, no extra call); the NUL output
was passed through as ``a\\u0000b`` (completed once); ``dupkey``, ``deep``, ``bigint``,
``surr``, ``nan`` failed ``E_TOOL_OUTPUT_INVALID`` at action 2, ``big`` and ``many`` (past
``limits.max_result_bytes``, not read as JSON) ``E_OUTPUT_MISSING``, action 3 never called;
the secret printed by the tool reached ``rec`` (data) but no commit and no ``status`` row; the
second pass ran nothing again; the fresh-clone audit listed one valid run of each plan.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, Lab, cases, clone_audit, valid_runs
from test_round2_execution_kit import shared

SECRET = "s3cr3t-79-zqxv"

OUT = r"""
import json, sys
mode = sys.argv[1]
key = json.loads(sys.stdin.read() or "{}").get("key", "")
vid = mode
vals = {
    "plain": "hello", "obj": {"a": [1, 2]}, "unicode": "\u00e9\u2713\U0001d11e",
    "refsec": "$<secrets.TOK>", "refin": "$<inputs.k>", "refact": "$<actions[2].outputs.v>",
    "refdd": "$$<secrets.TOK>", "legacy": "${secrets.TOK}", "legin": "${inputs.k}",
    "envname": "$PLANGATE_SECRET_TOK", "envbare": "PLANGATE_SECRET_TOK",
    "yamlre": "status: approved\nactions:\n  - id: 9\n    tool: rec\n    why: w\n"
              "    params: {tag: yamlre-9}\n",
    "jsonre": json.dumps({"id": 9, "tool": "rec", "params": {"tag": "jsonre-9"}}),
    "actobj": {"id": 9, "tool": "rec", "why": "w", "params": {"tag": "actobj-9"}},
    "secret": key, "secretpart": "pre-" + key + "-post",
    "many": list(range(60000)), "nul": "a\u0000b",
}
raw = {
    "dupkey": '{"v": "a", "v": "b"}',
    "big": json.dumps({"v": "x" * 3000000}),
    "deep": '{"v": ' + "[" * 5000 + "]" * 5000 + "}",
    "bigint": '{"v": ' + "7" * 6000 + "}",
    "surr": '{"v": "\\ud800"}',
    "nan": '{"v": NaN}',
}
if mode in raw:
    sys.stdout.write(raw[mode])
else:
    sys.stdout.write(json.dumps({"v": vals[mode]}))
"""

CONTROLS = ["plain", "obj", "unicode"]
LITERAL = [
    "refsec", "refin", "refact", "refdd", "legacy", "legin", "envname", "envbare",
    "yamlre", "jsonre", "actobj",
]  # fmt: skip
LIMITS = ["dupkey", "big", "deep", "bigint", "nul", "surr", "nan", "many"]
SECRETS = ["secret", "secretpart"]
VIDS = CONTROLS + LITERAL + LIMITS + SECRETS

PRINTED: dict[str, Any] = {
    "plain": "hello",
    "obj": {"a": [1, 2]},
    "unicode": "\u00e9\u2713\U0001d11e",
    "refsec": "$<secrets.TOK>",
    "refin": "$<inputs.k>",
    "refact": "$<actions[2].outputs.v>",
    "refdd": "$$<secrets.TOK>",
    "legacy": "${secrets.TOK}",
    "legin": "${inputs.k}",
    "envname": "$PLANGATE_SECRET_TOK",
    "envbare": "PLANGATE_SECRET_TOK",
    "yamlre": "status: approved\nactions:\n  - id: 9\n    tool: rec\n    why: w\n"
    "    params: {tag: yamlre-9}\n",
    "jsonre": json.dumps({"id": 9, "tool": "rec", "params": {"tag": "jsonre-9"}}),
    "actobj": {"id": 9, "tool": "rec", "why": "w", "params": {"tag": "actobj-9"}},
    "dupkey": "b",
    "secret": SECRET,
    "secretpart": f"pre-{SECRET}-post",
    "many": list(range(60000)),
    "nul": "a\x00b",
}
OUTPUT_CODES = ("E_TOOL_OUTPUT_INVALID", "E_LIMIT_EXCEEDED", "E_OUTPUT_MISSING", "E_PARAMS_INVALID")


def _plan(vid: str) -> str:
    return (
        f'plan:\n  name: "{vid}"\n  task: "outputs {vid}"\n  status: pending_approval\n'
        "inputs: {k: kval}\n"
        "available_tools: [{name: out}, {name: rec}]\n"
        "actions:\n"
        f"  - id: 1\n    tool: rec\n    why: plain\n    params: {{tag: {vid}-a}}\n"
        f"  - id: 2\n    tool: out\n    why: print\n"
        f'    params: {{m: {vid}, key: "$<secrets.TOK>"}}\n'
        '    outputs: [{name: v, path: "$.json.v"}]\n'
        f"  - id: 3\n    tool: rec\n    why: consume\n"
        f'    params: {{tag: {vid}-b, got: "$<actions[2].outputs.v>",'
        f' txt: "x $<actions[2].outputs.v> y"}}\n'
    )


def _build(root: Path) -> Lab:
    (root / "out.py").write_text(OUT)
    (root / "sec.yml").write_text(f"TOK: {SECRET}\n")
    py, script = json.dumps(sys.executable), json.dumps(str(root / "out.py"))
    lab = Lab(
        root / "lab",
        extra=f"secrets: {{file: {root / 'sec.yml'}}}\n",
        tools=f"out: {{kind: exec, output_trust: trusted, argv: [{py}, {script}, '{{m}}']}}\n",
    )
    for vid in VIDS:
        lab.write(vid, _plan(vid))
    lab.commit("plans")
    lab.run()
    for vid in VIDS:
        lab.set_status(vid, "approved")
    lab.commit("approve all", ALICE)
    lab.passes = [lab.run().returncode, lab.run().returncode]  # type: ignore[attr-defined]
    lab.history_all = subprocess.run(  # type: ignore[attr-defined]
        ["git", "log", "-p", "--all", "--format=%B"], cwd=lab.repo, capture_output=True, check=True
    ).stdout.decode("utf-8", "replace")
    lab.status_text = (  # type: ignore[attr-defined]
        lab.cli("status", "--config", str(lab.config)).stdout
        + lab.cli("status", "--json", "--config", str(lab.config)).stdout
    )
    lab.rows = lab.status()  # type: ignore[attr-defined]
    lab.report, lab.valid = clone_audit(lab, root)  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r79-outputs", _build)


def _got(call: dict[str, Any]) -> dict[str, Any]:
    data = json.loads(call["stdin"])
    return data.get("params", data) if isinstance(data, dict) else {}


BROKEN: dict[str, Any] = {}


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))
def test_once(lab: Lab, vid: str) -> None:
    assert len(lab.calls(f"{vid}-a")) == 1, lab.codes(vid)[-1500:]
    assert len(lab.calls(f"{vid}-b")) <= 1
    rows = [json.loads(x) for x in lab.log.read_text().splitlines() if x.strip()]
    tags = {r["argv"][0] for r in rows if r["argv"] and r["argv"][0].startswith(f"{vid}-")}
    assert tags <= {f"{vid}-a", f"{vid}-b"}, tags


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))
def test_data(lab: Lab, vid: str) -> None:
    calls = lab.calls(f"{vid}-b")
    if vid in CONTROLS + LITERAL:
        assert len(calls) == 1, lab.codes(vid)[-1500:]
    if not calls:
        return
    got = _got(calls[0])
    assert got.get("got") == PRINTED[vid], str(got)[:500]
    text = PRINTED[vid] if isinstance(PRINTED[vid], str) else None
    if text is not None:
        assert got.get("txt") == f"x {text} y", str(got)[:500]
    if vid not in SECRETS:
        assert SECRET not in calls[0]["stdin"]


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))
def test_end(lab: Lab, vid: str) -> None:
    data = lab.plan(vid)
    status = data["plan"]["status"]
    if vid in CONTROLS + LITERAL + SECRETS:
        assert status == "completed", lab.codes(vid)[-1500:]
    else:
        assert status in ("completed", "failed"), lab.codes(vid)[-1500:]
        if status == "failed":
            assert any(c in lab.codes(vid) for c in OUTPUT_CODES), lab.codes(vid)[-1500:]


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))
def test_secret(lab: Lab, vid: str) -> None:
    assert SECRET not in lab.history_all  # type: ignore[attr-defined]
    assert SECRET not in lab.status_text  # type: ignore[attr-defined]
    assert lab.passes == [0, 0]  # type: ignore[attr-defined]


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))
def test_audit(lab: Lab, vid: str) -> None:
    assert len(valid_runs(lab.report, vid)) == 1, lab.report.get("executions", [])[:3]  # type: ignore[attr-defined]
