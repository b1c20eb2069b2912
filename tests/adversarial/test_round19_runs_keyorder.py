# ruff: noqa: E501
"""Round 19, hash vs what reaches the tool: mapping key order outside an action's own params.

Round 18 (``test_round18_runs_keyorder.py``) found that the order of a mapping's keys (outside
the RFC 8785 hash) reached the tool; the fix builds params in the hash's key order. Here the
swapped mapping reaches the tool by the other ways a value gets into a call:

- ``ko-inputs``: ``inputs.steps`` swapped, the action passes ``"$<inputs.steps>"``;
- ``ko-interp``: the same input interpolated in a string (``"run $<inputs.steps> now"``);
- ``ko-pre`` / ``ko-verify``: the mapping in a precondition's / a verify's check-tool params;
- ``ko-fb``: in a fallback step's params (action 1 fails);
- ``ko-list``: a mapping inside a list (``steps: [{first, second}]``);
- ``ko-py``: a ``python`` tool's keyword arguments and the mapping it receives;
- ``ko-nest``: a parent's ``inputs`` override for a pinned nested plan, used there as
  ``"$<inputs.steps>"``.

Each plan: one pass freezes, Alice approves, then the agent commits the same file with the
keys swapped (``second`` before ``first``; ``plangate hash`` unchanged, so the approval still
counts), one pass runs. Asserted (held, all eight): the tool receives the keys in the hash's
order (``{"first":"delete","second":"backup"}`` in argv and on stdin, python keyword
arguments ``steps, tag`` and the mapping ``first, second``).
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, Lab
from test_round2_execution_kit import shared

A = 'steps: {first: "delete", second: "backup"}'
S = 'steps: {second: "backup", first: "delete"}'
AL = '[{first: "delete", second: "backup"}]'
SL = '[{second: "backup", first: "delete"}]'
WANT = '{"first":"delete","second":"backup"}'


def _head(name: str, tools: str = "recv") -> str:
    names = ", ".join("{name: " + t + "}" for t in tools.split(","))
    return (
        f"plan: {{name: {name}, task: t, status: pending_approval}}\navailable_tools: [{names}]\n"
    )


def _act(tag: str, steps: str) -> str:
    return f"actions:\n  - id: 1\n    tool: recv\n    why: w\n    params:\n      tag: {tag}\n      steps: {steps}\n"


PLANS = {
    "ko-inputs": _head("ko-inputs") + f"inputs:\n  {A}\n" + _act("ko-inputs", '"$<inputs.steps>"'),
    "ko-interp": _head("ko-interp")
    + f"inputs:\n  {A}\n"
    + _act("ko-interp", '"run $<inputs.steps> now"'),
    "ko-pre": _head("ko-pre", "recv,recc")
    + f"actions:\n  - id: 1\n    tool: recv\n    why: w\n    params: {{tag: ko-pre-act, steps: x}}\n    preconditions:\n      - tool: recc\n        params:\n          tag: ko-pre\n          {A}\n        expect: {{path: $.json.ok, equals: true}}\n",
    "ko-verify": _head("ko-verify", "recv,recc")
    + f"actions:\n  - id: 1\n    tool: recv\n    why: w\n    params: {{tag: ko-verify-act, steps: x}}\n    verify:\n      tool: recc\n      params:\n        tag: ko-verify\n        {A}\n      expect: {{path: $.json.ok, equals: true}}\n      timeout: 5\n      interval: 1\n",
    "ko-fb": _head("ko-fb", "recv,fail")
    + f'actions:\n  - id: 1\n    tool: fail\n    why: w\n    on_failure: fallback\n    fallback:\n      - id: "1.1"\n        tool: recv\n        why: w\n        params:\n          tag: ko-fb\n          {A}\n',
    "ko-list": _head("ko-list") + _act("ko-list", AL),
    "ko-py": _head("ko-py", "kw")
    + f"actions:\n  - id: 1\n    tool: kw\n    why: w\n    params:\n      tag: ko-py\n      {A}\n",
    "ko-child": _head("ko-child")
    + "inputs:\n  steps: {z: 1}\n"
    + _act("ko-nest", '"$<inputs.steps>"'),
}
RUN = [s for s in PLANS if s != "ko-child"] + ["ko-nest"]


def _build(root: Path) -> Lab:
    py = sys.executable
    pylog = root / "py.log"
    (root / "kwmod.py").write_text(
        textwrap.dedent(f"""
        import json
        def kw(**kw):
            steps = kw.get("steps")
            with open({str(pylog)!r}, "a") as f:
                f.write(json.dumps({{"keys": list(kw), "steps": list(steps) if isinstance(steps, dict) else steps}}) + "\\n")
            return {{"ok": True}}
        """)
    )
    recv = json.dumps([py, str(root / "rec.py"), "{tag}", "{steps}"])
    env = json.dumps(str(root / "ran.log"))
    lab = Lab(
        root,
        tools=f"""recv: {{kind: exec, argv: {recv}, env: {{REC_LOG: {env}}}}}
recc: {{kind: exec, argv: {recv}, env: {{REC_LOG: {env}}}, idempotent: true, risk: low}}
fail: {{kind: exec, argv: ["{py}", "-c", "import sys; sys.exit(3)"]}}
kw: {{kind: python, target: "kwmod:kw"}}
""",
        extra=f"python_path: [{json.dumps(str(root))}]\n",
    )
    for slug, text in PLANS.items():
        lab.write(slug, text)
    lab.commit("plans")
    child = lab.cli("hash", "plans/ko-child", cwd=lab.repo).stdout.strip().split()[-1]
    lab.write(
        "ko-nest",
        _head("ko-nest")
        + f'actions:\n  - id: 1\n    plan: {{path: plans/ko-child, hash: "{child}"}}\n    why: w\n    inputs:\n      {A}\n',
    )
    lab.commit("nest")
    lab.run()
    before = {s: lab.cli("hash", f"plans/{s}", cwd=lab.repo).stdout for s in RUN}
    for slug in RUN:
        path = lab.repo / "plans" / slug / "PLAN.yml"
        path.write_text(path.read_text().replace("status: pending_approval", "status: approved", 1))
    lab.commit("approve all", ALICE)
    for slug in RUN:
        path = lab.repo / "plans" / slug / "PLAN.yml"
        text = path.read_text()
        swapped = text.replace(AL, SL) if slug == "ko-list" else text.replace(A, S)
        assert swapped != text, slug
        path.write_text(swapped)
    lab.commit("reformat", AGENT)
    after = {s: lab.cli("hash", f"plans/{s}", cwd=lab.repo).stdout for s in RUN}
    assert before == after
    lab.run()
    lab.pylog = [json.loads(x) for x in pylog.read_text().splitlines()] if pylog.exists() else []  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r19-keyorder", _build)


def _steps_in_order(call: dict[str, Any]) -> None:
    arg = call["argv"][1]
    assert WANT in arg, arg
    stdin = call["stdin"].replace('\\"', '"')
    assert stdin.index('"first"') < stdin.index('"second"'), stdin


@pytest.mark.parametrize("slug", [s for s in RUN if s != "ko-py"])
def test_a_swapped_mapping_reaches_the_tool_in_the_hash_order(lab: Lab, slug: str) -> None:
    calls = lab.calls(slug)
    assert len(calls) == 1 or (slug == "ko-verify" and len(calls) >= 1), calls
    for call in calls:
        _steps_in_order(call)


def test_python_keyword_arguments_in_the_hash_order(lab: Lab) -> None:
    assert lab.pylog == [{"keys": ["steps", "tag"], "steps": ["first", "second"]}]  # type: ignore[attr-defined]
