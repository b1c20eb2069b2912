"""Round 2, execution side: references and secrets.

References: a value is resolved once and never rescanned, so text that *becomes* a
reference (split over two inputs, assembled from a ``$`` input and literal text, carried in
an input or a tool output) reaches the tool as that literal text, never as a secret; ``$$<``
and the legacy ``${...}`` form stay literal as documented; keys holding ``>`` or ``.`` were
read as the reviewer reads them (since round 56 such input keys are refused outright,
``E_SCHEMA_INVALID``: one name rule for input keys and output names). One repo, one pass,
the recording tool shows what arrived.

Secrets: a tool hands its secret back in an encoding the redactor must catch (SPEC §6:
``***`` "including where a secret value appears inside a tool's output"): base64 of
``user:secret`` at every alignment (HTTP Basic), URL-safe base64, upper-case hex, base32,
and UTF-16 output. Searched in all of git history, the run's log and the state directory.
"""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab
from test_round2_execution_kit import shared

SECRET = "Kq7vXw9pLm2nRt5z"
LEAK = r"""
import base64, json, sys
# changed (fix130s): secret on stdin, argv refuses it
mode, s = sys.argv[1], json.loads(sys.stdin.buffer.read())["s"]
if mode.startswith("basic"):
    pre = {"basic0": "u:", "basic1": "us:", "basic2": "use:"}[mode]
    out = "Authorization: Basic " + base64.b64encode((pre + s).encode()).decode()
elif mode == "b64url":
    out = base64.urlsafe_b64encode(s.encode()).decode()
elif mode == "hexupper":
    out = s.encode().hex().upper()
elif mode == "base32":
    out = base64.b32encode(s.encode()).decode()
if mode == "utf16":
    sys.stdout.buffer.write(("token=" + s + "\n").encode("utf-16-le"))
else:
    print(json.dumps({"v": out}))
"""
#: variant -> (inputs, the param value), and what the tool must receive.
REFS: dict[str, tuple[str | None, str, str]] = {
    "split-over-two-inputs": (
        '{a: "$<secrets", b: ".TOKEN>"}',
        "$<inputs.a>$<inputs.b>",
        "$<secrets.TOKEN>",
    ),
    "dollar-input-then-text": ('{a: "$"}', "$<inputs.a><secrets.TOKEN>", "$<secrets.TOKEN>"),
    "double-dollar-input": ('{a: "$$"}', "$<inputs.a><secrets.TOKEN>", "$$<secrets.TOKEN>"),
    "input-holds-a-reference": ('{a: "$<secrets.TOKEN>"}', "$<inputs.a>", "$<secrets.TOKEN>"),
    "input-holds-a-reference-embedded": (
        '{a: "$<secrets.TOKEN>"}',
        "x$<inputs.a>",
        "x$<secrets.TOKEN>",
    ),
    "escaped": ('{a: "A"}', "$$<inputs.a>", "$<inputs.a>"),
    "triple-dollar": ('{a: "A"}', "$$$<inputs.a>", "$$<inputs.a>"),
    "legacy-secret": (None, "${secrets.TOKEN}", "${secrets.TOKEN}"),
    "output-holds-a-reference": (None, "$<actions[1].outputs.v>", "$<secrets.TOKEN>"),
    "output-holds-a-reference-embedded": (None, "<$<actions[1].outputs.v>>", "<$<secrets.TOKEN>>"),
}
LEAKS = ["basic0", "basic1", "basic2", "b64url", "hexupper", "base32", "utf16"]


def _ref_plan(name: str, inputs: str | None, value: str) -> str:
    inp = f"inputs: {inputs}\n" if inputs else ""
    first = ""
    if name.startswith("output-"):
        first = (
            '  - id: 1\n    tool: out\n    why: "outside data"\n'
            '    outputs: [{name: v, path: "$.json.v"}]\n'
        )
    return (
        f'plan:\n  name: "{name}"\n  task: "references"\n  status: pending_approval\n{inp}'
        "available_tools: [{name: recv}, {name: out}]\nactions:\n"
        + first
        + f'  - id: {2 if first else 1}\n    tool: recv\n    why: "record"\n'
        + f'    params: {{tag: "{name}", v: {json.dumps(value)}}}\n'
    )


def _leak_plan(mode: str) -> str:
    return (
        f'plan:\n  name: "leak-{mode}"\n  task: "secrets"\n  status: pending_approval\n'
        "available_tools: [{name: leak}]\nactions:\n"
        '  - id: 1\n    tool: leak\n    why: "hand the secret back encoded"\n'
        f'    params: {{mode: {mode}, s: "$<secrets.TOKEN>"}}\n'
    )


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "refs", _build)


def _build(root: Path) -> Lab:
    lab = Lab(root)
    (root / "leak.py").write_text(LEAK)
    recv = json.dumps([sys.executable, "-I", "-S", str(lab.recorder), "{tag}", "{v}"])
    out = json.dumps([sys.executable, "-I", "-S", "-c", 'print(\'{"v": "$<secrets.TOKEN>"}\')'])
    # changed (fix130s): secret on stdin, argv refuses it
    leak = json.dumps([sys.executable, "-I", "-S", str(root / "leak.py"), "{mode}"])
    lab.write_config(
        tools=f"recv: {{kind: exec, argv: {recv}, env: {{REC_LOG: {json.dumps(str(lab.log))}}}}}\n"
        f"out: {{kind: exec, argv: {out}}}\nleak: {{kind: exec, argv: {leak}}}\n",
        extra="secrets: {env_prefix: PLANGATE_SECRET_}\n",
    )
    names = []
    for name, (inputs, value, _) in REFS.items():
        lab.write(name, _ref_plan(name, inputs, value))
        names.append(name)
    for mode in LEAKS:
        lab.write(f"leak-{mode}", _leak_plan(mode))
        names.append(f"leak-{mode}")
    lab.commit("plans", AGENT)
    lab.run()  # the controller freezes (legacy references are rewritten here)
    for name in names:
        lab.set_status(name, "approved")
    lab.commit("approve them", ALICE)
    lab.extra_env = {"PLANGATE_SECRET_TOKEN": SECRET}  # type: ignore[attr-defined]
    result = lab.run()
    lab.extra_env = {}  # type: ignore[attr-defined]
    state = "".join(
        p.read_text(errors="replace") for p in (root / "state").rglob("*") if p.is_file()
    )
    lab.written = {  # type: ignore[attr-defined]
        "git": lab.git("log", "--all", "-p", "--text", "--format=%B"),
        "log": result.stdout + result.stderr,
        "state": state,
        "status": lab.cli("status", "--json", "--config", str(lab.config)).stdout,
    }
    return lab


#: inputs holding reference text are E_REF_INVALID since round 116 (unresolved-reference-text:
#: a reviewer reads them as references): the property holds by the refusal
REFUSED_SINCE_116 = {"split-over-two-inputs", "input-holds-a-reference",
                     "input-holds-a-reference-embedded"}  # fmt: skip


@pytest.mark.parametrize("name", list(REFS))
def test_resolved_text_is_never_resolved_again(lab: Lab, name: str) -> None:
    calls = lab.calls(name)
    assert SECRET not in json.dumps(calls)
    if name in REFUSED_SINCE_116:  # reference text in inputs: refused, nothing resolved
        assert calls == [] and "E_REF_INVALID" in lab.codes(name), lab.codes(name)
        return
    assert len(calls) == 1, lab.codes(name)
    assert calls[0]["argv"][1] == REFS[name][2]
    assert SECRET not in json.dumps(calls)


def test_a_dollar_before_a_legacy_reference_is_refused(lab: Lab, tmp_path: Path) -> None:
    """``$${inputs.a}`` was rewritten to ``$$<inputs.a>``, the text ``$<inputs.a>`` (this
    module's ``legacy-escaped`` until round 114): neither ``$`` and the input nor the shell's
    ``${inputs.a}``. Refused since (legacy-ref-after-dollar)."""
    path = tmp_path / "PLAN.yml"
    path.write_text(_ref_plan("legacy-escaped", '{a: "A"}', "$${inputs.a}"), encoding="utf-8")
    result = lab.cli("validate", str(path))
    assert result.returncode != 0, result.stdout
    assert "E_REF_INVALID" in result.stderr + result.stdout


#: Input keys a reference could read two ways: refused since round 56 (one name rule for
#: input keys and output names), where they used to be read by the bracket form.
KEYS_READ_TWO_WAYS = {
    "key-with-gt": ('{"a>b": "GOOD", a: "BAD"}', "$<inputs['a>b']>"),
    "key-with-dot": ('{"a.b": "GOOD", a: {b: "BAD"}}', "$<inputs['a.b']>"),
}


@pytest.mark.parametrize("name", list(KEYS_READ_TWO_WAYS))
def test_an_input_key_a_reference_reads_two_ways_is_refused(
    lab: Lab, name: str, tmp_path: Path
) -> None:
    inputs, value = KEYS_READ_TWO_WAYS[name]
    path = tmp_path / "PLAN.yml"
    path.write_text(_ref_plan(name, inputs, value), encoding="utf-8")
    result = lab.cli("validate", str(path))
    assert result.returncode != 0, result.stdout
    assert "E_SCHEMA_INVALID" in result.stderr + result.stdout
    assert "inputs[" in result.stderr + result.stdout


def _forms(mode: str) -> dict[str, str]:
    """Encoded forms of the secret a redactor must not let through (long enough that no
    chance match is likely)."""
    if mode.startswith("basic"):
        pre = {"basic0": "u:", "basic1": "us:", "basic2": "use:"}[mode]
        whole = base64.b64encode((pre + SECRET).encode()).decode()
        # the characters that depend on the secret alone (skip the prefix's group)
        return {"base64": whole[4:-4]}
    if mode == "b64url":
        return {"base64url": base64.urlsafe_b64encode(SECRET.encode()).decode()[:16]}
    if mode == "hexupper":
        return {"hex": SECRET.encode().hex().upper()[:16]}
    if mode == "base32":
        return {"base32": base64.b32encode(SECRET.encode()).decode()[:16]}
    return {
        "utf16-escaped": "\\u0000".join(SECRET[:6]),
        "utf16-x00": "\\x00".join(SECRET[:6]),
        "utf16-raw": "\x00".join(SECRET[:6]),
    }


@pytest.mark.parametrize("mode", LEAKS)
def test_a_secret_handed_back_encoded_is_never_written(lab: Lab, mode: str) -> None:
    assert lab.status()[f"plans/leak-{mode}"]["status"] == "completed"
    written = lab.written  # type: ignore[attr-defined]
    assert SECRET not in "".join(written.values())
    for form, text in _forms(mode).items():
        where = [k for k, v in written.items() if text in v]
        assert where == [], f"the secret, {form}, is in {where}"
