# ruff: noqa: E501
"""Round 20, one hostile plan or tool output never starves the pass: the *total* time the
controller spends checking values in its own process, outside every tool's timeout.

Round 13 (``test_round13_runs_jsonpath.py``) bounded JSONPath queries: ``match()``/``search()``
calls over one result share 0.5 s, then ``E_LIMIT_EXCEEDED`` (held here too: 20 outputs each
with a ReDoS ``match()`` filter end after 0.6 s). The other checks the controller runs on
resolved values are bounded per check only (docs/plan-format.md: a guard's ``matches`` "a
check that takes over 0.1 s ... fails"), or not at all (``one_of``), and nothing bounds their
sum. ``execution.max_concurrent_plans`` is 1 by default and ``limits.max_runtime`` is null,
so while one plan's checks run, no other plan of the pass starts, and an abort is not read.

``emit`` is an exec tool printing ``{"list": [<n> strings of <l> "a">], "ones": [1, ...]}``;
action 2 (``rec``) takes one of those lists as its param ``v``. The guard pattern
``(?:(?=(?:a|aa)+!)|)a*`` (Python syntax, as guards are) *matches* every string of ``a``, each
in under 0.1 s (about 0.03 s for 26 characters: the lookahead backtracks, then fails), so no
single check is cut. The ``expect`` pattern ``(a|aa)+b|.*`` is an I-Regexp (expect patterns
are) with the same behaviour.

- ``guard-list`` (this module): one guard ``{param: v, matches: PAT}`` on a list output of
  90 strings of 26 ``a``: the list, chosen by whoever writes the tool's output, is checked
  element by element (docs: "A list value must pass element by element") with no total
  bound. About 3 s here (unloaded); linear in the list's length (by hand: 100 guards x 4 elements, 15 s).
- ``one-of`` (this module): ``{param: v, one_of: [2 x 10,000, 1]}`` (a 20 KB allow-list)
  over a list output of 2,500 ``1``: each element is compared with the listed values one by
  one, n x m JSON comparisons (by hand: 3,000 x 100,001 took 49 s, the pass with it).
- ``guard-many`` (``test_round20_runs_expectcost.py``): 20 guards on one param (docs: "several
  guards may name one parameter: all must hold"), a list of 5 strings: 100 checks of 0.03 s.
- ``expect-many`` (``test_round20_runs_expectcost.py``): action 1's ``verify: {expect: [...]}``
  with 60 clauses ``{path: $.json.list[0], matches: "(a|aa)+b|.*"}`` over a 26-character
  string: each clause succeeds slowly, none is cut.

Each lab: one pass freezes, Alice approves every plan in one commit, one pass runs them
(the honest ``zz`` sorts last). Asserted (the defence, one time budget of 0.5 s per
evaluation, docs/plan-format.md): the pass exits 0 and each hostile plan ended, as the budget
ends it, not as a check run to the end would: ``guard-list`` and ``guard-many`` fail at
action 2 with ``E_GUARD_FAILED`` "could not be checked within 0.5 s", ``expect-many`` fails
at action 1 with ``E_VERIFY_FAILED`` "the clauses took over 0.5 s together", and ``rec``
never ran for any of them (every check there succeeds slowly: run to the end they pass, and
``rec`` runs). ``one-of`` is compared by hashing; its verdict is the same either way (the
value is allowed: the plan completes and ``rec`` runs once), so nothing but its time shows
that defence, and no time is asserted (the project asserts none). The honest plan runs once.
**Broke** (round 20): all four run their checks to the end (2.5-3 s unloaded, 5-8 s beside
another lab, at these sizes, growing with the list's length or the number of checks) and
then pass.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from advkit import ALICE, Lab, plan_text
from test_round2_execution_kit import shared

PAT = r"(?:(?=(?:a|aa)+!)|)a*"
IPAT = "(a|aa)+b|.*"
#: how the budget ends each hostile plan: (the run's status, the failed action, its code,
#: the budget's words); one-of's verdict does not depend on the budget (None: it completes)
ENDS: dict[str, tuple[str, int, str, str] | None] = {
    "guard-list": ("failed", 2, "E_GUARD_FAILED", "could not be checked within 0.5 s"),
    "guard-many": ("failed", 2, "E_GUARD_FAILED", "could not be checked within 0.5 s"),
    "expect-many": ("failed", 1, "E_VERIFY_FAILED", "the clauses took over 0.5 s together"),
    "one-of": None,
}

EMIT = """\
import json, sys
n, l = int(sys.argv[1]), int(sys.argv[2])
print(json.dumps({"list": ["a" * l] * (n if l > 1 else 0), "ones": [1] * (n if l == 1 else 1)}, separators=(",", ":")))
"""


def _plan(slug: str, n: int, length: int, v: str, a1: str = "", a2: str = "") -> str:
    return f"""\
plan:
  name: {slug}
  task: "checks over a tool's output"
  status: pending_approval
available_tools: [{{name: emit}}, {{name: rec}}]
actions:
  - id: 1
    tool: emit
    why: "produce a list"
    params: {{n: "{n}", l: "{length}"}}
    outputs: [{{name: l, path: "$.json.list"}}, {{name: o, path: "$.json.ones"}}]
{a1}  - id: 2
    tool: rec
    why: "record that {slug} went on"
    params: {{tag: {slug}, v: "$<actions[1].outputs.{v}>"}}
{a2}"""


def _guards(count: int) -> str:
    return (
        "    guards: [" + ", ".join([f"{{param: v, matches: {json.dumps(PAT)}}}"] * count) + "]\n"
    )


VARIANTS: dict[str, str] = {
    "guard-list": _plan("guard-list", 90, 26, "l", a2=_guards(1)),
    "one-of": _plan(
        "one-of",
        2500,
        1,
        "o",
        a2="    guards: [{param: v, one_of: " + json.dumps([2] * 10000 + [1]) + "}]\n",
    ),
    "guard-many": _plan("guard-many", 5, 26, "l", a2=_guards(20)),
    "expect-many": _plan(
        "expect-many",
        1,
        26,
        "l",
        a1="    verify: {expect: ["
        + ", ".join([f"{{path: '$.json.list[0]', matches: {json.dumps(IPAT)}}}"] * 60)
        + "]}\n",
    ),
}


def build(root: Path, slugs: list[str]) -> Lab:
    root.mkdir(parents=True, exist_ok=True)
    (root / "emit.py").write_text(EMIT)
    argv = json.dumps([sys.executable, str(root / "emit.py"), "{n}", "{l}"])
    lab = Lab(root, tools=f"emit: {{kind: exec, argv: {argv}, idempotent: true, risk: low}}\n")
    for slug in slugs:
        lab.write(slug, VARIANTS[slug])
    lab.write("zz", plan_text("zz"))
    lab.commit("plans")
    lab.run()
    for slug in [*slugs, "zz"]:
        lab.set_status(slug, "approved")
    lab.commit("approve all", ALICE)
    result = lab.run(timeout=240, check=False)
    lab.pass_rc = result.returncode  # type: ignore[attr-defined]
    states: dict[str, str] = {}
    executions: dict[str, dict[str, Any]] = {}
    for slug in slugs:
        execution = lab.plan(slug).get("execution") or {}
        states[slug] = str(execution.get("status"))
        executions[slug] = execution
    lab.states = states  # type: ignore[attr-defined]
    lab.executions = executions  # type: ignore[attr-defined]
    return lab


HERE = ["guard-list", "one-of"]
#: round 20: broke; fixed since (guards and expect clauses share one time budget per
#: evaluation, one_of is a set): no marker is left
FOUND = pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="round 20: the controller's checks on resolved values (guards, expect) have no total time bound",
)


def check(lab: Lab, slug: str) -> None:
    assert lab.pass_rc == 0  # type: ignore[attr-defined]
    assert lab.states[slug] not in ("executing", "None"), lab.states  # type: ignore[attr-defined]
    execution = lab.executions[slug]  # type: ignore[attr-defined]
    ends = ENDS[slug]
    if ends is None:  # compared by hashing: the same verdict as comparing one by one
        assert execution["status"] == "completed", execution
        assert len(lab.calls(slug)) == 1
        return
    status, failed, code, words = ends
    assert execution["status"] == status, execution
    action = next(a for a in execution["actions"] if a["id"] == failed)
    error = action.get("error") or {}
    assert action["status"] == "failed" and error.get("code") == code, execution
    assert words in error.get("message", ""), error
    assert lab.calls(slug) == [], f"{slug}: rec ran, its checks were not cut"


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r20-checkcost", lambda root: build(root / "lab", HERE))


@pytest.mark.parametrize("slug", [pytest.param(s, id=s) for s in HERE])
def test_checks_on_values_are_bounded_in_total(lab: Lab, slug: str) -> None:
    check(lab, slug)


def test_the_honest_plan_ran_once(lab: Lab) -> None:
    assert len(lab.calls("zz")) == 1
    assert lab.status()["plans/zz"]["status"] == "completed"
