"""A secret never reaches the command line of a process the controller starts (round 128,
``secret-in-exec-argv``, fix129s).

An exec tool's argv is ``/proc/<pid>/cmdline``, readable by every process and user of the
host; the cgroup shim (``/bin/sh -c``) carries the same elements. A call whose argv element a
reference fills with a secret (``$<secrets.*>`` whole, inside text, inside a list or mapping,
a structured secret's field, an output holding one; an action's, a fallback's or a check's
tool) is refused with E_PARAMS_INVALID before anything starts. The author's own text is never
judged (a literal equal to a secret runs: a refusal would be an oracle for a guess).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from controller.execution.executor import Engine
from controller.plan.flows import secrets_into_argv
from controller.settings import config_from_data
from tests.support.executor_kit import PY, execution, journal_records, make_plan, run

SECRET = "Zq8Lm3Xv7Tp2Wd9Hc"
PW = "Hk4Rw9Tz2Lp6Qx8Vm"

#: records its argv (and its own /proc/self/cmdline) to ``$REC``, prints a small result
RECORD = (
    "import json, os, sys; sys.stdin.read(); "
    "open(os.environ['REC'], 'a').write(json.dumps([sys.argv[1:], "
    "open('/proc/self/cmdline').read()]) + '\\n'); print(json.dumps({'x': 'ok'}))"
)

#: prints ``{"v": <param s>}``: an output that holds what it was given
ECHO_S = "import json, sys; print(json.dumps({'v': json.load(sys.stdin)['s']}))"


@pytest.fixture
def secrets(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> dict[str, Any]:
    monkeypatch.setenv("PLANGATE_SECRET_A", SECRET)
    (tmp_path / "sec.yml").write_text(f"MAP: {{user: app, password: {PW}}}\n")
    return {"secrets": {"file": str(tmp_path / "sec.yml")}}


def _tools(rec: Path) -> dict[str, Any]:
    env = {"REC": str(rec)}
    return {
        "ax": {"kind": "exec", "argv": [PY, "-c", RECORD, "{s}"], "env": env},
        "ay": {"kind": "exec", "argv": [PY, "-c", RECORD, "--password={s}"], "env": env},
        "ck": {
            "kind": "exec",
            "argv": [PY, "-c", RECORD, "{s}"],
            "env": env,
            "idempotent": True,
            "risk": "low",
        },
        "pt": {"kind": "exec", "argv": [PY, "-c", RECORD], "env": env},
        "out": {"kind": "exec", "argv": [PY, "-c", ECHO_S]},
        "bad": {"kind": "exec", "argv": [PY, "-c", "import sys; sys.exit(3)"]},
    }


def _ran(rec: Path) -> list[Any]:
    return [json.loads(x) for x in rec.read_text().splitlines()] if rec.exists() else []


WAYS: dict[str, list[dict[str, Any]]] = {
    "whole": [{"id": 1, "tool": "ax", "params": {"s": "$<secrets.A>"}}],
    "in-text": [{"id": 1, "tool": "ax", "params": {"s": "t=$<secrets.A>;"}}],
    "flag": [{"id": 1, "tool": "ay", "params": {"s": "$<secrets.A>"}}],
    "list": [{"id": 1, "tool": "ax", "params": {"s": ["x", "$<secrets.A>"]}}],
    "mapping": [{"id": 1, "tool": "ax", "params": {"s": {"k": "$<secrets.A>"}}}],
    "structured": [{"id": 1, "tool": "ax", "params": {"s": "$<secrets.MAP>"}}],
    "output": [
        {
            "id": 1,
            "tool": "out",
            "params": {"s": "$<secrets.A>"},
            "outputs": [{"name": "o", "path": "$.json.v"}],
        },
        {"id": 2, "tool": "ax", "params": {"s": "pre-$<actions[1].outputs.o>"}},
    ],
    "precondition": [
        {
            "id": 1,
            "tool": "pt",
            "params": {"s": "plain"},
            "preconditions": [
                {
                    "tool": "ck",
                    "params": {"s": "$<secrets.A>"},
                    "expect": {"path": "$.json.x", "equals": "ok"},
                }
            ],
        }
    ],
    "fallback": [
        {
            "id": 1,
            "tool": "bad",
            "on_failure": "fallback",
            "fallback": [{"id": "1.1", "tool": "ax", "why": "w", "params": {"s": "$<secrets.A>"}}],
        }
    ],
}


@pytest.mark.parametrize("way", list(WAYS))
def test_a_secret_into_argv_is_refused_before_anything_starts(
    tmp_path: Path, secrets: dict[str, Any], way: str
) -> None:
    rec = tmp_path / "rec.log"
    tools = _tools(rec)
    config, plan_file = make_plan(tmp_path, WAYS[way], tools, extra_config=secrets)
    outcome = run(Engine(config), plan_file)
    assert outcome.status == "failed", outcome
    # a check tool's refusal is its precondition's failure, naming the tool's code
    code = "E_PRECONDITION_FAILED" if way == "precondition" else "E_PARAMS_INVALID"
    assert outcome.error is not None and outcome.error.code == code
    assert "E_PARAMS_INVALID" in f"{outcome.error.code} {outcome.error.message}"
    assert "would hold a secret" in outcome.error.message
    assert SECRET not in outcome.error.message and PW not in outcome.error.message
    for argv, cmdline in _ran(rec):
        assert SECRET not in json.dumps(argv) + cmdline and PW not in json.dumps(argv) + cmdline
    # refused before anything started: the tool never ran; the journal ends the call
    if way in ("whole", "in-text", "flag", "list", "mapping", "structured"):
        assert not _ran(rec)
        ends = [r for r in journal_records(config, plan_file) if r["t"] == "end"]
        assert [e["error"]["code"] for e in ends] == ["E_PARAMS_INVALID"], ends
    actions = execution(plan_file)["actions"]
    assert any((a.get("error") or {}).get("code") == code for a in actions)


def test_the_authors_literal_equal_to_a_secret_runs_no_oracle(
    tmp_path: Path, secrets: dict[str, Any]
) -> None:
    """The plan's own text is never searched for a secret (rounds 64-67): a literal equal to
    a secret reaches argv as written, as a wrong guess would, so the outcome tells the
    author nothing; a plain literal and a secret on stdin alone run too."""
    rec = tmp_path / "rec.log"
    actions = [
        {"id": 1, "tool": "ax", "params": {"s": SECRET}},
        {"id": 2, "tool": "ax", "params": {"s": "not-the-secret"}},
        {"id": 3, "tool": "pt", "params": {"s": "$<secrets.A>"}},
        {"id": 4, "tool": "ax", "params": {"s": "$$<secrets.A>"}},
    ]
    config, plan_file = make_plan(tmp_path, actions, _tools(rec), extra_config=secrets)
    assert run(Engine(config), plan_file).status == "completed"
    got = [argv for argv, _ in _ran(rec)]
    assert got == [[SECRET], ["not-the-secret"], [], ["$<secrets.A>"]]


def test_a_catalog_literal_beside_a_placeholder_is_the_operators(
    tmp_path: Path, secrets: dict[str, Any]
) -> None:
    """Only what a reference brings in is judged: an element holding the catalog's own text
    (here a config credential in a URL) and a placeholder filled with plain text runs."""
    rec = tmp_path / "rec.log"
    tools = _tools(rec)
    tools["ax"]["argv"] = [PY, "-c", RECORD, "https://u:" + PW + "@h/{s}"]
    actions = [{"id": 1, "tool": "ax", "params": {"s": "path"}}]
    config, plan_file = make_plan(tmp_path, actions, tools, extra_config=secrets)
    assert run(Engine(config), plan_file).status == "completed"
    assert [argv for argv, _ in _ran(rec)] == [[f"https://u:{PW}@h/path"]]


def test_validate_warns_of_a_secret_placed_into_argv(tmp_path: Path) -> None:
    config = config_from_data(
        {"repo": str(tmp_path), "tools": _tools(tmp_path / "rec.log")}, tmp_path / "p.yml"
    )
    data = {
        "actions": [
            {"id": 1, "tool": "ax", "params": {"s": ["$<secrets.A>"], "t": "$<secrets.B>"}},
            {"id": 2, "tool": "pt", "params": {"s": "$<secrets.A>"}},
            {"id": 3, "tool": "ax", "params": {"s": "${secrets.A}"}},  # legacy: text
            {
                "id": 4,
                "tool": "pt",
                "verify": {"tool": "ck", "params": {"s": "x$<secrets.C>"}},
                "fallback": [{"id": "4.1", "tool": "ay", "params": {"s": "$<secrets.D>"}}],
            },
        ]
    }
    said = secrets_into_argv(data, config.tools)
    assert len(said) == 3, said
    assert said[0].startswith("action 1 (ax): param 's' takes $<secrets.A>")
    assert said[1].startswith("action 4 verify (ck): param 's' takes $<secrets.C>")
    assert said[2].startswith("action 4.1 (ay): param 's' takes $<secrets.D>")
    assert all("E_PARAMS_INVALID" in s for s in said)


def test_validate_cli_prints_the_warning(tmp_path: Path) -> None:
    cfg = tmp_path / "plangate.yml"
    cfg.write_text(
        json.dumps(
            {
                "repo": str(tmp_path),
                "tools": {"ax": {"kind": "exec", "argv": ["/bin/echo", "{s}"]}},
            }
        )
    )
    plan = tmp_path / "plans" / "p" / "PLAN.yml"
    plan.parent.mkdir(parents=True)
    plan.write_text(
        "plan: {name: p, task: t, status: pending_approval}\n"
        "available_tools: [{name: ax}]\n"
        "actions:\n  - {id: 1, tool: ax, why: w, params: {s: '$<secrets.A>'}}\n"
    )
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    got = subprocess.run(
        [PY, "-m", "controller", "validate", "--json", "--config", str(cfg), str(plan)],
        capture_output=True,
        text=True,
        check=False,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert got.returncode == 0, got.stderr
    record = json.loads(got.stdout)
    assert record["valid"] is True
    assert any("$<secrets.A> into the tool's argv" in w for w in record["warnings"]), record


@pytest.mark.parametrize("given", ["$<secrets.A>", SECRET], ids=["secret", "literal"])
def test_a_nested_plans_input_keeps_its_provenance(
    tmp_path: Path, secrets: dict[str, Any], given: str
) -> None:
    """A nested plan's input filled by the parent's ``$<secrets.A>`` and placed into the
    child's argv is refused; filled by the parent's literal (equal to the secret), it is the
    author's text (rounds 66-67) and runs."""
    from tests.execution.test_executor_nested import write_child

    rec = tmp_path / "rec.log"
    child = {
        "plan": {"name": "Child", "task": "t", "status": "draft"},
        "inputs": {"x": "d"},
        "available_tools": [{"name": "ax"}],
        "actions": [{"id": 1, "tool": "ax", "why": "w", "params": {"s": "$<inputs.x>"}}],
    }
    pin = write_child(tmp_path, child, "common/child")
    actions = [
        {"id": 1, "plan": {"path": "plans/common/child", "hash": pin}, "inputs": {"x": given}}
    ]
    config, plan_file = make_plan(tmp_path, actions, _tools(rec), extra_config=secrets)
    outcome = run(Engine(config), plan_file)
    if given == SECRET:
        assert outcome.status == "completed", outcome
        assert [argv for argv, _ in _ran(rec)] == [[SECRET]]
    else:
        assert outcome.status == "failed" and outcome.error is not None
        assert "E_PARAMS_INVALID" in f"{outcome.error.code} {outcome.error.message}"
        assert not _ran(rec)
