"""Round 38, one hostile tool output never starves the pass (time bound): the node budget of
round 37 is per *evaluation* of a query, and nothing bounds how many evaluations one small
result gets.

One evaluation of an output query (or an ``expect`` clause) may make 250,000 nodes; a union
of six wildcards over the exec result, filtered (``$[*,*,*,*,*,*][?@ == K]``: six times the
20,000 elements of ``json``), makes about 120,000 candidates and returns nothing (or a few
numbers), so neither the node budget nor the outputs' size bound (``limits.max_params_bytes``)
applies. Nothing bounds how many evaluations one result gets: an action declares as many
outputs (or ``verify`` clauses) as the plan size allows. By hand, 200 outputs
``$.json..[?count(@.*) > K]`` over a 50 KB result made one ``run --once`` take 12.5 s instead
of 0.3 s; a 1 MiB plan holds over 10,000 such outputs (the whole pass, every other plan
waiting behind it, for the better part of an hour), all from one small tool result.

One lab; ``emit`` is an exec tool printing ``[0, ..., 0, 7]`` (20,000 numbers, 40 KB: the data a
tool brings in, the attacker's); each plan is one ``emit`` action, approved by Alice with the
honest ``zz`` in one commit, one pass:

- ``many-outputs``: 16 optional outputs, each ``$[*,...x6][?@ == K]`` (K distinct, no
  match): about 2 million nodes for one 40 KB result;
- ``many-expects``: ``verify: {expect: [...]}`` over the action's own result with 16 clauses
  ``{path: $[*,...x6][?@ == 7], not_equals: K}`` (six 7s: each holds; all are evaluated);
- ``one-output``, ``one-expect`` (controls): one such output / clause: complete;
- ``many-guards`` (the contrast, held): a ``sink`` action whose param is the 40 KB stdout,
  with 300 guards ``matches: '([0-9]|[, ]|\\[|\\])*'`` (each holds alone): the guards of
  one call share 0.5 s (round 20), so it fails ``E_GUARD_FAILED`` ("could not be checked
  within 0.5 s").

Asserted: ``many-outputs`` and ``many-expects`` fail with ``E_LIMIT_EXCEEDED`` (a budget of
query work per result, as ``match()``/``search()`` already share 0.5 s per result; the
verify may also say ``E_VERIFY_FAILED``), the controls complete, and the honest ``zz``
ran once in the same pass.

**Broke** (round 38): ``many-outputs`` and ``many-expects`` complete (each about 3 s of the pass
here, the honest ``zz`` recorded after them); the pass pays every evaluation in full (no
duration is asserted: the test checks that no per-result budget refused the work). Should: count
the nodes of all the queries evaluated over one result (or one action try) against one budget
and fail ``E_LIMIT_EXCEEDED`` past it.

Fixed (round 38, the same session): the queries over one result share one budget
(``jsonpaths.sharing``: ``MAX_NODES`` nodes, filter candidates tested included, and 0.5 s of
``match()``/``search()``): all the outputs of one action's result together (past it the action
fails ``E_LIMIT_EXCEEDED``), all the ``expect`` clauses of one check or verify poll together
(past it the check fails with its own code, ``E_VERIFY_FAILED`` / ``E_PRECONDITION_FAILED``,
saying the query budget was spent, the clauses left unchecked). ``find()`` alone still gets a
budget of its own.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, plan_text
from test_round2_execution_kit import shared

ZEROS = 20000
WIDE = "[" + ",".join(["*"] * 6) + "]"
COUNT = 16
GUARDS = 300


def _query(value: str) -> str:
    return f"${WIDE}[?@ == {value}]"


def _plan(slug: str, body: str) -> str:
    return (
        f"plan:\n  name: {slug}\n  task: t\n  status: pending_approval\n"
        "available_tools: [{name: emit}]\n"
        "actions:\n  - id: 1\n    tool: emit\n    why: w\n    params: {}\n" + body
    )


def _outputs(count: int) -> str:
    rows = [
        f"      - {{name: o{i}, path: '{_query(str(1000 + i))}', optional: true}}"
        for i in range(count)
    ]
    return "    outputs:\n" + "\n".join(rows) + "\n"


def _expects(count: int) -> str:
    rows = [f"        - {{path: '{_query('7')}', not_equals: {1000 + i}}}" for i in range(count)]
    return "    verify:\n      expect:\n" + "\n".join(rows) + "\n"


PLANS = {
    "many-outputs": _outputs(COUNT),
    "many-expects": _expects(COUNT),
    "one-output": _outputs(1),
    "one-expect": _expects(1),
}


def _build(root: Path) -> Lab:
    root.mkdir(parents=True)
    doc = root / "doc.json"
    doc.write_text(json.dumps([0] * (ZEROS - 1) + [7]))
    emit = root / "emit.py"
    emit.write_text("import sys\nsys.stdout.write(open(sys.argv[1]).read())\n")
    argv = json.dumps([sys.executable, str(emit), str(doc)])
    lab = Lab(
        root / "lab",
        tools=f"emit: {{kind: exec, argv: {argv}}}\nsink: {{kind: exec, argv: [/bin/true]}}\n",
    )
    for slug, body in PLANS.items():
        lab.write(slug, _plan(slug, body))
    guards = "\n".join(
        "      - {param: p, matches: '([0-9]|[, ]|\\[|\\])*'}" for _ in range(GUARDS)
    )
    lab.write(
        "many-guards",
        "plan:\n  name: many-guards\n  task: t\n  status: pending_approval\n"
        "available_tools: [{name: emit}, {name: sink}]\n"
        "actions:\n  - id: 1\n    tool: emit\n    why: w\n    params: {}\n"
        "  - id: 2\n    tool: sink\n    why: w\n    needs: [1]\n"
        "    params: {p: '$<actions[1].result.stdout>'}\n"
        f"    guards:\n{guards}\n",
    )
    lab.write("zz", plan_text("zz"))
    lab.commit("plans", AGENT)
    lab.run()
    for slug in [*PLANS, "many-guards", "zz"]:
        lab.set_status(slug, "approved")
    lab.commit("approve", ALICE)
    lab.run(timeout=300)
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r38-runs-querywork", lambda root: _build(root / "q"))


@pytest.mark.parametrize(
    ("slug", "codes"),
    [
        pytest.param("many-outputs", ("E_LIMIT_EXCEEDED",), id="many-outputs"),
        pytest.param(
            "many-expects",
            ("E_LIMIT_EXCEEDED", "E_VERIFY_FAILED"),
            id="many-expects",
        ),
    ],
)
def test_query_work_per_result_bounded(lab: Lab, slug: str, codes: tuple[str, ...]) -> None:
    execution = lab.plan(slug).get("execution") or {}
    said = lab.codes(slug)
    assert execution.get("status") == "failed", execution.get("status")
    assert any(code in said for code in codes), said[-600:]


@pytest.mark.parametrize("slug", ["one-output", "one-expect"])
def test_one_evaluation_runs(lab: Lab, slug: str) -> None:
    assert (lab.plan(slug).get("execution") or {}).get("status") == "completed"


def test_many_guards_share_one_time_bound(lab: Lab) -> None:
    """The contrast: guards over one call already share one bound (round 20)."""
    assert (lab.plan("many-guards").get("execution") or {}).get("status") == "failed"
    said = lab.codes("many-guards")
    assert "E_GUARD_FAILED" in said
    assert "could not be checked within" in said


def test_honest_plan_ran(lab: Lab) -> None:
    assert len(lab.calls("zz")) == 1
    assert (lab.plan("zz").get("execution") or {}).get("status") == "completed"
