"""Round 40, exactly the approved values reach the tool, and the controller's commits hold only
its own bytes: values that look like the catalog's placeholders, tool output that looks like a
reference travelling through a nested plan's inputs, and plan folders named like git pathspec
magic in a shared working tree. All held.

One lab. Exec tools whose catalog ``argv`` element holds two placeholders (``{a}:{b}``,
``{b}:{a}``) or a placeholder after text (``--x={a}``, ``{tag}{a}``); ``emit`` prints its
param with ``@`` turned into ``$``. Plans approved by Alice in one commit, one pass:

- ``ph-a-holds-b``: ``a: "{b}"``, ``b: X`` into ``{a}:{b}``: the tool gets ``{b}:X``, never
  ``X:X`` (a placeholder filled from a value filled before it);
- ``ph-b-holds-a``: the other order (``{b}:{a}`` with ``b: "{a}"``): ``{a}:X``;
- ``ph-from-output``: ``a`` is an earlier echo action's output ``{b}``: ``{b}:X``;
- ``ph-self``: ``a: "{tag}"`` into ``--x={a}`` and ``{tag}{a}``: ``--x={tag}``, ``<tag>{tag}``;
- ``ph-chain``: ``tag: "{a}"``, ``a: "{b}"``: argv ``["{a}", "{b}:X"]``;
- ``nest-ref``: ``emit`` outputs the text ``$<secrets.TOKEN>``, passed as a nested plan's
  input; the nested action's params ``$<inputs.x>``, ``pre $<inputs.x>`` and a parent input
  ``q $<...outputs.o> $<plan.name>`` reach ``rec`` as that literal text (never the secret);
- ``glob-*``: plan folders ``[ab]``, ``x*``, ``y?``, ``:(glob)z`` approved and run while the
  working tree holds uncommitted edits of ``plans/a``, ``b``, ``xa``, ``yb`` (what those
  names match as pathspecs): each ran, and no commit of the controller after the approval
  touches the neighbours (their edits stay uncommitted).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from advkit import AGENT, ALICE, BOT, Lab, plan_text
from test_round2_execution_kit import shared

SECRET = "S3cretValue99"
GLOBS = {
    "glob-brackets": "[ab]",
    "glob-star": "x*",
    "glob-question": "y?",
    "glob-magic": ":(glob)z",
}
NEIGHBOURS = ["a", "b", "xa", "yb"]


def _plan(slug: str, tool: str, params: str, pre: str = "") -> str:
    return (
        f"plan:\n  name: {slug}\n  task: t\n  status: pending_approval\n"
        f"available_tools: [{{name: {tool}}}, {{name: echo}}]\n"
        f"actions:\n{pre}  - id: {2 if pre else 1}\n    tool: {tool}\n    why: w\n"
        f"    params: {params}\n"
    )


PRE = (
    "  - id: 1\n    tool: echo\n    why: w\n    params: {v: '{b}'}\n"
    "    outputs: [{name: o, path: $.v}]\n"
)
PH = {
    "ph-a-holds-b": ("mix1", "{tag: ph-a-holds-b, a: '{b}', b: X}", "", ["{b}:X"]),
    "ph-b-holds-a": ("mix2", "{tag: ph-b-holds-a, a: X, b: '{a}'}", "", ["{a}:X"]),
    "ph-from-output": (
        "mix1",
        "{tag: ph-from-output, a: '$<actions[1].outputs.o>', b: X}",
        PRE,
        ["{b}:X"],
    ),
    "ph-self": ("mix3", "{tag: ph-self, a: '{tag}'}", "", ["--x={tag}", "ph-self{tag}"]),
    "ph-chain": ("mix1", "{tag: '{a}', a: '{b}', b: X}", "", ["{b}:X"]),
}
LIB = (
    "plan:\n  name: lib\n  task: t\n  status: draft\navailable_tools: [{name: rec}]\n"
    "inputs: {x: none, y: none}\n"
    "actions:\n  - id: 1\n    tool: rec\n    why: w\n"
    "    params: {tag: nest-ref, a: '$<inputs.x>', b: 'pre $<inputs.x>', c: '$<inputs.y>'}\n"
)


def _parent(pin: str) -> str:
    return (
        "plan:\n  name: parent\n  task: t\n  status: pending_approval\n"
        "available_tools: [{name: emit}]\n"
        "actions:\n  - id: 1\n    tool: emit\n    why: w\n    params: {s: '@<secrets.TOKEN>'}\n"
        "    outputs: [{name: o, path: $.json.v}]\n"
        f"  - id: 2\n    plan: {{path: plans/lib, hash: '{pin}'}}\n    why: w\n"
        "    inputs: {x: '$<actions[1].outputs.o>', y: 'q $<actions[1].outputs.o> $<plan.name>'}\n"
    )


def _build(root: Path) -> Lab:
    lab = Lab(root)
    py, rec, log = sys.executable, str(lab.recorder), json.dumps(str(lab.log))
    (root / "emit.py").write_text(
        "import json, sys\nprint(json.dumps({'v': sys.argv[1].replace('@', '$')}))\n"
    )

    def exec_tool(name: str, argv: list[str]) -> str:
        return f"{name}: {{kind: exec, argv: {json.dumps(argv)}, env: {{REC_LOG: {log}}}}}\n"

    lab.write_config(
        tools=exec_tool("mix1", [py, rec, "{tag}", "{a}:{b}"])
        + exec_tool("mix2", [py, rec, "{tag}", "{b}:{a}"])
        + exec_tool("mix3", [py, rec, "{tag}", "--x={a}", "{tag}{a}"])
        + exec_tool("emit", [py, str(root / "emit.py"), "{s}"])
    )
    for slug, (tool, params, pre, _) in PH.items():
        lab.write(slug, _plan(slug, tool, params, pre))
    lab.write("lib", LIB)
    for i, name in enumerate([*GLOBS.values(), *NEIGHBOURS]):
        lab.write(name, plan_text(f"g{i}", name=f"g{i}"))
    lab.commit("plans", AGENT)
    pin = lab.cli("hash", str(lab.repo / "plans" / "lib")).stdout.split()[0]
    lab.write("parent", _parent(pin))
    lab.commit("parent", AGENT)
    lab.run()
    for slug in [*PH, "parent", *GLOBS.values()]:
        lab.set_status(slug, "approved")
    lab.approved = lab.commit("approve them", ALICE)  # type: ignore[attr-defined]
    for name in NEIGHBOURS:  # a shared working tree: uncommitted edits beside the globs
        path = lab.repo / "plans" / name / "PLAN.yml"
        path.write_text(path.read_text().replace("record that", "EDITED record that"))
    lab.extra_env = {"PLANGATE_SECRET_TOKEN": SECRET}  # type: ignore[attr-defined]
    lab.run()
    lab.extra_env = {}  # type: ignore[attr-defined]
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r40-values", lambda root: _build(root / "lab"))


def _argv(lab: Lab, tag: str) -> list[str]:
    calls: list[dict[str, Any]] = lab.calls(tag)
    assert len(calls) == 1, calls
    return list(calls[0]["argv"][1:])


@pytest.mark.parametrize("slug", list(PH))
def test_a_placeholder_is_filled_once_from_its_own_value(lab: Lab, slug: str) -> None:
    tag = "{a}" if slug == "ph-chain" else slug
    assert _argv(lab, tag) == PH[slug][3]


def test_tool_output_through_nested_inputs_stays_text(lab: Lab) -> None:
    calls = lab.calls("nest-ref")
    assert len(calls) == 1, calls
    got = json.loads(calls[0]["stdin"])
    assert got["a"] == "$<secrets.TOKEN>"
    assert got["b"] == "pre $<secrets.TOKEN>"
    assert got["c"] == "q $<secrets.TOKEN> parent"
    assert SECRET not in calls[0]["stdin"]


@pytest.mark.parametrize("name", list(GLOBS.values()), ids=list(GLOBS))
def test_a_pathspec_named_folder_commits_only_itself(lab: Lab, name: str) -> None:
    assert lab.status()[f"plans/{name}"]["status"] == "completed", lab.codes(name)
    touched = lab.git(
        "log",
        "--format=",
        "--name-only",
        f"--author={BOT[1]}",
        f"{lab.approved}..HEAD",  # type: ignore[attr-defined]
    )
    assert not {f"plans/{n}/PLAN.yml" for n in NEIGHBOURS} & set(touched.split())
    dirty = lab.git("status", "--porcelain")
    assert all(f"plans/{n}/PLAN.yml" in dirty for n in NEIGHBOURS), dirty
