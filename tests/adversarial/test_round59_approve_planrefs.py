"""Round 59, self-approval: an approver's call carried into a new plan through reference
roots and shapes round 58's ``likeness.calls_view`` may not resolve.

docs/approvals.md, "Who changed the content": plans are compared by the CALLS they make,
"every ``$<inputs.K>`` or ``${inputs.K}`` is read as the plan's input it names". The plan
format has other static places a param can be filled from (docs/plan-format.md,
"References"): ``$<plan.name>``/``$<plan.task>`` (and legacy ``${plan.x}``), a path INTO an
input (``$<inputs.p.K>``, ``$<inputs.p[0]>``), a reference inside a longer string
(``"bil$<inputs.k>"``), and the result of an ``echo`` action (the catalog tool that returns
its params) whose params hold her values at other places (nested under one key, or split
over two echo actions).

Lab: the bench's config. Alice commits ``plans/<v>-her``: one action calling ``rec`` with her
tag, a 12-word ``why`` and three params (target, command, ticket). The agent then, in ONE
commit that removes her folder, adds ``plans/<v>`` whose ``rec`` call resolves to her exact
params, with the agent's own ``why`` (a 12-word reason of its own) in every action:

- ``plan-name``: ``tag: "$<plan.name>"`` (plan.name is her tag), ``command: "$<plan.task>"``
  (plan.task is her command); target and ticket literal.
- ``legacy-plan``: the same in the legacy ``${plan.name}``/``${plan.task}`` spelling.
- ``interp``: every value written as its first three characters then ``$<inputs.K>`` holding
  the rest.
- ``inputs-path``: one input ``p`` holding her params as a mapping, ``$<inputs.p.K>``.
- ``inputs-list``: one input ``p`` holding her four values as a list, ``$<inputs.p[i]>``.
- ``echo-nest``: action 1 ``echo`` with ``{p: {her params}}``, action 2 ``rec`` with
  ``$<actions[1].result.p.K>``.
- ``echo-split``: two ``echo`` actions with two of her params each, ``rec`` reading both.
- ``move`` (control): her plan moved with a param added: refused.
- ``own`` (control): the agent's own plan, approved by Alice: runs once.

A pass; Alice approves each new plan; two passes; ``plangate audit --json`` (fresh clone,
no config).

Asserted (the defence): her tag never reaches ``rec``, the plan is refused
``E_SELF_APPROVAL``, the audit lists no valid run.

Seen: ``plan-name``, ``legacy-plan``, ``inputs-list``, ``echo-nest`` and ``echo-split``
broke: ``rec`` got her exact tag, target, command and ticket on her own approval
(``completed``, approver alice) and the fresh-clone audit lists each run valid. The calls
view resolves ``$<inputs.K>`` as a whole input (and, it seems, a path into a mapping input
and text around a reference: ``interp`` and ``inputs-path`` held, ``E_SELF_APPROVAL``), but not
``$<plan.name>``/``$<plan.task>`` (nor their legacy form), not an index into a list input, and
an ``echo`` action is matched with hers only when it says her params at their own keys
(round 58's ``echo-out``): nested under one key, or split over two echo actions, none of her
call is found. Held: ``interp``, ``inputs-path``, ``move`` (``E_SELF_APPROVAL``), ``own`` ran once.
Also seen (``test_round59_approve_legacyaudit.py``): the audit flags the controller's own freeze
of ``legacy-plan`` (``${plan.name}`` rewritten) as ``controller-unexplained``.
Fix direction: resolve every static reference root in the calls view (``plan.name``,
``plan.task``, any path into an input), and read an ``echo`` action's result paths as the
values its params hold at those paths.

Fixed (2026-11-29): the calls view compares what each call RECEIVES
(``likeness.calls_view``, ``_Known``): every reference the plan alone fixes is resolved by the
reference grammar (``refs.parse``, legacy ``${...}`` read as the freeze converts it):
``plan.name``/``plan.task``, any path or index into an input, and an ``echo`` action's
result (its params, resolved in turn). Each broken variant is her call again, ``rec`` never
gets her tag, ``E_SELF_APPROVAL``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from advkit import Lab, cases, valid_runs
from test_round2_execution_kit import shared
from writerkit import KEYS, OWN, Flow, her_drafts, reworked
from writerkit import her_cleanup as hers
from writerkit import her_values as vals

VIDS = [
    "plan-name",
    "legacy-plan",
    "interp",
    "inputs-path",
    "inputs-list",
    "echo-nest",
    "echo-split",
    "move",
]
BROKEN: dict[str, object] = {}

AWHY = "agent: run the maintenance step that the ticket below describes in full detail"


def head(name: str, task: str, inputs: str = "") -> str:
    return f'plan:\n  name: "{name}"\n  task: "{task}"\n  status: pending_approval\n' + inputs


def rec_action(i: int, params: dict[str, str]) -> str:
    return f'  - id: {i}\n    tool: rec\n    why: "{AWHY}"\n    params:\n' + "".join(
        f'      {k}: "{val}"\n' for k, val in params.items()
    )


def wanted(v: str, kind: str | None = None) -> str:
    her = vals(v)
    shape = kind or v
    tools = "available_tools:\n  - name: rec\n"
    if shape in ("plan-name", "legacy-plan"):
        form = "${{plan.{}}}" if shape == "legacy-plan" else "$<plan.{}>"
        params = dict(her, tag=form.format("name"), command=form.format("task"))
        return head(her["tag"], her["command"]) + tools + "actions:\n" + rec_action(1, params)
    if shape == "interp":
        inputs = "inputs:\n" + "".join(f'  {k}: "{her[k][3:]}"\n' for k in KEYS)
        params = {k: f"{her[k][:3]}$<inputs.{k}>" for k in KEYS}
        return head(v, "agent task") + inputs + tools + "actions:\n" + rec_action(1, params)
    if shape == "inputs-path":
        inputs = "inputs:\n  p:\n" + "".join(f'    {k}: "{her[k]}"\n' for k in KEYS)
        params = {k: f"$<inputs.p.{k}>" for k in KEYS}
        return head(v, "agent task") + inputs + tools + "actions:\n" + rec_action(1, params)
    if shape == "inputs-list":
        inputs = "inputs:\n  p:\n" + "".join(f'    - "{her[k]}"\n' for k in KEYS)
        params = {k: f"$<inputs.p[{i}]>" for i, k in enumerate(KEYS)}
        return head(v, "agent task") + inputs + tools + "actions:\n" + rec_action(1, params)
    if shape == "echo-nest":
        echo = (
            "  - id: 1\n    tool: echo\n"
            '    why: "agent: stage the values the next step reads from its result"\n'
            "    params:\n      p:\n" + "".join(f'        {k}: "{her[k]}"\n' for k in KEYS)
        )
        params = {k: f"$<actions[1].result.p.{k}>" for k in KEYS}
        return (
            head(v, "agent task")
            + "available_tools:\n  - name: echo\n  - name: rec\n"
            + "actions:\n"
            + echo
            + rec_action(2, params)
        )
    if shape == "echo-split":
        out = ""
        for i, ks in ((1, KEYS[:2]), (2, KEYS[2:])):
            out += (
                f"  - id: {i}\n    tool: echo\n"
                f'    why: "agent: stage part {i} of the values the last step reads"\n'
                "    params:\n" + "".join(f'      {k}: "{her[k]}"\n' for k in ks)
            )
        params = {k: f"$<actions[{1 if k in KEYS[:2] else 2}].result.{k}>" for k in KEYS}
        return (
            head(v, "agent task")
            + "available_tools:\n  - name: echo\n  - name: rec\n"
            + "actions:\n"
            + out
            + rec_action(3, params)
        )
    if shape == "move":
        return hers(v) + '      region: "eu-west-1"\n'
    raise KeyError(v)


def _build(root: Path) -> Lab:
    plans = {v: wanted(v) for v in VIDS}
    return reworked(
        Flow(Lab(root)), her_drafts(VIDS), {"own": OWN}, lambda f: f.rework(plans), [*VIDS, "own"]
    )


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r59-planrefs", _build)


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))  # type: ignore[arg-type]
def test_her_call_through_other_references_is_hers(lab: Lab, vid: str) -> None:
    assert lab.calls(f"{vid}-her") == [], lab.codes(vid)[:800]
    assert "E_SELF_APPROVAL" in lab.codes(vid), lab.codes(vid)[:1500]
    assert valid_runs(lab.report, vid) == [], valid_runs(lab.report, vid)  # type: ignore[attr-defined]


def test_the_agents_own_plan_runs(lab: Lab) -> None:
    assert len(lab.calls("own")) == 1, lab.codes("own")[:800]
    assert valid_runs(lab.report, "own"), lab.report  # type: ignore[attr-defined]
