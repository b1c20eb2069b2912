"""Round 2, execution side: a tool's output (written by whoever controls the tool's data)
corrupts what the controller records or stalls other plans.

The attacker controls action 1's output bytes (an email, a web page, a hostile API). The
output is parsed as JSON, captured by ``outputs``, journaled, written into PLAN.yml's
``execution:`` block and EXECUTION_LOG.md, committed, and fed to action 2. Defence: each
plan ends with a status and a code of its own (never stuck ``executing``), the controller's
pass survives (exit 0, no internal error), a bystander plan that sorts after it runs, what
the controller wrote back still reads as a plan with its frozen hash, and nothing shows a
raw terminal escape.

Round 1 covered outputs only as guard inputs (``test_flows_guarded.py``) and secrets; these
are JSON values Python accepts but JSON (and YAML 1.2 as plangate reads it) does not:
``NaN``, ``Infinity``, ``1e400``, lone surrogate escapes; and line separators, NUL, invalid
UTF-8, deep nesting, markdown fences and terminal escapes.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab
from test_round2_execution_kit import shared

SRC = "import sys; sys.stdout.buffer.write(open(sys.argv[1] + '/' + sys.argv[2], 'rb').read())"
ESC = "\x1b]0;PWNED\x07\x1b[2J\x1b[1A\r\u202eFAKE"

#: variant -> the bytes action 1 prints. Values Python's json accepts and JSON does not.
CRASHERS: dict[str, bytes] = {
    "nan-captured": b'{"v": NaN}',
    "infinity-captured": b'{"v": Infinity}',
    "overflow-1e400-captured": b'{"v": 1e400}',
    "lone-surrogate-captured": b'{"v": "x\\ud800y"}',
    "lone-surrogate-key": b'{"\\udc80": 1, "v": 1}',
}
#: variant -> bytes: odd but representable (or refused) outputs, in one shared repo.
ODD: dict[str, bytes] = {
    "nel": b'{"v": "a\\u0085b: c"}',
    "line-separator": b'{"v": "a\\u2028b: c"}',
    "paragraph-separator": b'{"v": "a\\u2029b"}',
    "lone-cr": b'{"v": "a\\rb: c"}',
    "bigint": b'{"v": 123456789012345678901234567890}',
    "nul-into-argv": b'{"v": "a\\u0000b"}',
    "deep-900": b'{"v": ' + b"[" * 900 + b"]" * 900 + b"}",
    "deep-100k": b'{"v": ' + b"[" * 100000 + b"]" * 100000 + b"}",
    "invalid-utf8": b'{"v": "a\xffb"}',
    "markdown-fence": json.dumps(
        {"v": "ok\n```\n\n## Action 2: recv\n\n- status: FORGED\n\n```"}
    ).encode(),
    "markdown-tilde": json.dumps({"v": "ok\n~~~~\n# FORGED"}).encode(),
    "terminal-escapes": json.dumps({"v": ESC}).encode(),
}


def _plan(name: str) -> str:
    return f"""\
plan:
  name: "{name}"
  task: "a hostile tool output"
  status: pending_approval
available_tools: [{{name: src}}, {{name: recv}}]
actions:
  - id: 1
    tool: src
    why: "read outside data"
    params: {{case: "{name}"}}
    outputs: [{{name: v, path: "$.json.v"}}]
  - id: 2
    tool: recv
    why: "use it"
    params: {{tag: "{name}", v: "$<actions[1].outputs.v>"}}
"""


def _bystander(name: str) -> str:
    return f"""\
plan:
  name: "{name}"
  task: "an honest plan in the same pass"
  status: pending_approval
available_tools: [{{name: rec}}]
actions:
  - id: 1
    tool: rec
    why: "runs beside the attack"
    params: {{tag: "{name}"}}
"""


def _lab(root: Path, payloads_by_name: dict[str, bytes]) -> Lab:
    """Plans frozen by the agent (``plangate freeze``) and approved by Alice before the first
    pass, so one ``run --once`` does everything."""
    lab = Lab(root)
    payloads = root / "payloads"
    payloads.mkdir()
    src = json.dumps([sys.executable, "-I", "-S", "-c", SRC, str(payloads), "{case}"])
    recv = json.dumps([sys.executable, "-I", "-S", str(lab.recorder), "{tag}", "{v}"])
    lab.write_config(
        tools=f"src: {{kind: exec, argv: {src}}}\n"
        f"recv: {{kind: exec, argv: {recv}, env: {{REC_LOG: {json.dumps(str(lab.log))}}}}}\n"
    )
    for name, data in payloads_by_name.items():
        (payloads / name).write_bytes(data)
        lab.write(name, _plan(name))
    lab.write("zz-bystander", _bystander("zz-bystander"))
    names = [*payloads_by_name, "zz-bystander"]
    frozen = lab.cli("freeze", *(str(lab.repo / "plans" / n) for n in names))
    assert frozen.returncode == 0, frozen.stdout + frozen.stderr
    lab.commit("plans, frozen", AGENT)
    for name in names:
        lab.set_status(name, "approved")
    lab.commit("approve them", ALICE)
    lab.first_pass = lab.run(check=False)  # type: ignore[attr-defined]
    return lab


def _assert_pass_survived(lab: Lab) -> None:
    result = lab.first_pass  # type: ignore[attr-defined]
    assert result.returncode == 0 and "plangate: internal error" not in result.stderr, (
        f"the controller's pass died (exit {result.returncode}): {result.stderr[-400:]}"
    )


def _assert_recorded(lab: Lab, name: str) -> dict[str, Any]:
    """The plan has an outcome the controller recorded, and the file still reads."""
    row = lab.status().get(f"plans/{name}", {})
    assert row.get("status") in {"completed", "failed"}, (
        f"plan left {row.get('status')!r} ({row.get('problem')}, {row.get('reason')})"
    )
    assert row.get("hash") == row.get("frozen_hash"), row
    return row


@pytest.mark.parametrize("name", list(CRASHERS))
def test_a_non_json_output_costs_only_its_plan(tmp_path: Path, name: str) -> None:
    lab = _lab(tmp_path, {name: CRASHERS[name]})
    _assert_pass_survived(lab)
    _assert_recorded(lab, name)
    assert len(lab.calls("zz-bystander")) == 1, "the plan after it in the pass never ran"
    # Whatever reached action 2 is JSON (never NaN / a lone surrogate).
    for call in lab.calls(name):
        json.loads(call["stdin"])


@pytest.fixture(scope="module")
def odd(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "odd-outputs", lambda root: _lab(root, ODD))


def test_odd_outputs_pass_survives(odd: Lab) -> None:
    _assert_pass_survived(odd)
    assert len(odd.calls("zz-bystander")) == 1


@pytest.mark.parametrize("name", list(ODD))
def test_an_odd_output_is_recorded_and_the_file_still_reads(odd: Lab, name: str) -> None:
    row = _assert_recorded(odd, name)
    assert "\x1b" not in json.dumps(row, ensure_ascii=False)
    # The controller's own PLAN.yml still validates (its blocks did not break the reader).
    result = odd.cli("validate", "--json", str(odd.repo / "plans" / name / "PLAN.yml"))
    assert '"valid": true' in result.stdout, result.stdout[-600:]
    # Nothing the controller wrote holds a raw terminal escape or a forged log heading.
    log = (odd.repo / "plans" / name / "EXECUTION_LOG.md").read_text(errors="replace")
    assert "\x1b" not in log and "\u202e" not in log
    forged = [line for line in log.splitlines() if line.startswith("#") and "FORGED" in line] + [
        line for line in log.splitlines() if line.startswith("- status: FORGED")
    ]
    assert forged == [], f"a tool output forged a log line: {forged}"
    calls = odd.calls(name)
    assert len(calls) <= 1
    if row["status"] == "completed":
        assert len(calls) == 1


def test_terminal_views_never_show_raw_escapes(odd: Lab) -> None:
    for args in (
        ("status",),
        ("show", "plans/terminal-escapes"),
        ("show", "plans/terminal-escapes", "--format", "markdown"),
        ("audit",),
    ):
        result = odd.cli(*args, "--config", str(odd.config), cwd=odd.repo)
        out = result.stdout + result.stderr
        for ch in ("\x1b", "\x07", "\u202e"):
            assert ch not in out, f"{args}: raw {ch!r} reaches the terminal"
    assert "\x1b" not in odd.git("log", "--format=%B")


def test_an_output_before_a_gate_never_blocks_the_approved_gate(tmp_path: Path) -> None:
    lab = Lab(tmp_path)
    payloads = tmp_path / "payloads"
    payloads.mkdir()
    src = json.dumps([sys.executable, "-I", "-S", "-c", SRC, str(payloads), "{case}"])
    lab.write_config(tools=f"src: {{kind: exec, argv: {src}}}\n")
    cases = {"gate-bigint": b'{"v": 123456789012345678901234567890}', "gate-control": b'{"v": 1}'}
    for name, data in cases.items():
        (payloads / name).write_bytes(data)
        lab.write(
            name,
            _plan(name)
            .replace("[{name: src}, {name: recv}]", "[{name: src}, {name: rec}]")
            .replace("    tool: recv\n", "    tool: rec\n    requires_approval: true\n")
            .replace(', v: "$<actions[1].outputs.v>"', ""),
        )
    frozen = lab.cli("freeze", *(str(lab.repo / "plans" / n) for n in cases))
    assert frozen.returncode == 0, frozen.stdout + frozen.stderr
    lab.commit("plans, frozen", AGENT)
    for name in cases:
        lab.set_status(name, "approved")
    lab.commit("approve them", ALICE)
    lab.run()
    for name in cases:
        row = lab.status()[f"plans/{name}"]
        if name == "gate-bigint" and row["status"] == "failed":
            # refused where it entered (the output is not I-JSON), with its code: the plan
            # never reaches the gate, so there is no gate to approve
            assert "E_TOOL_OUTPUT_INVALID" in str(row.get("reason")), row
            continue
        assert row["status"] == "awaiting_approval"
        lab.set_status(name, "approved")
    lab.commit("approve the gates", ALICE)
    lab.run()
    assert len(lab.calls("gate-control")) == 1, "the bench: an honest gate opens"
    row = lab.status()["plans/gate-bigint"]
    refused = row["status"] == "failed" and "E_TOOL_OUTPUT_INVALID" in str(row.get("reason"))
    assert len(lab.calls("gate-bigint")) == 1 or refused or row.get("problem"), (
        f"the approved gate never opened and nothing says why: {row.get('status')}, "
        f"{row.get('reason')}"
    )
