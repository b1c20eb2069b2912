"""Round 58, self-approval: an approver's plan MOVED and RESTRUCTURED into another shape that
runs the same tool call with the same values, so that few of her leaves stay at their place.

docs/approvals.md, "Who changed the content": a new plan takes a removed plan's writers when
it is made of it (``likeness.made_share``, 0.5 both ways), judged over leaves "by their place
in the action": an action of hers counts when its ``why`` (or all else it says) survives in
the action it is matched with, then its unchanged leaves count one by one. The plan format has
other places that make the same tool call with the same values: plan ``inputs`` referenced by
``$<inputs.K>``, the legacy ``${inputs.K}`` form rewritten at freeze, a ``fallback`` step of an
action that fails.

Config: the bench's, plus ``boom`` (an exec tool that always exits 1). Alice commits
``plans/<v>-her``: one action calling ``rec`` with her tag, a 12-word ``why`` and three params
(target, command, ticket). The agent then, in ONE commit that removes her folder, adds
``plans/<v>``:

- ``inputs``: her action, ``why`` unchanged, every param value moved to plan ``inputs`` and
  each param written ``$<inputs.K>``: the tool gets her exact params.
- ``inputs-legacy``: the same in the legacy ``${inputs.K}`` spelling (rewritten at freeze).
- ``inputs-task``: ``inputs`` with her ``why`` moved to ``plan.task`` and the action's ``why``
  a new sentence of the agent's.
- ``fallback``: an agent action calling ``boom`` (``on_failure: fallback``) whose one fallback
  step is her action (``why`` and params unchanged): ``boom`` fails, her call runs.
- ``fallback-inputs``: the fallback step with its params through ``$<inputs.K>``.
- ``move`` (control): her plan moved with one param added: paired, refused.
- ``own`` (control): the agent's own plan, approved by Alice: it runs once.

A pass; Alice approves each new plan; two passes; ``plangate audit --json``.

Asserted (the defence): her tag never reaches ``rec``, the plan is refused ``E_SELF_APPROVAL``,
the audit lists no valid run.

Seen: ``inputs``, ``inputs-legacy``, ``inputs-task``, ``fallback`` and ``fallback-inputs``
broke: ``rec`` got her tag, target, command and ticket exactly as she wrote them, on her own
approval (``completed``, approver alice), and the fresh-clone audit lists each run valid. The
leaves are compared at their place in an action, so a value that moved to ``inputs`` (or an
action that became a fallback step) is no leaf of hers. Held: ``move`` (her plan moved with a
param added: ``E_SELF_APPROVAL``), ``own`` ran once. Fix direction: compare what each tool call
gets (params resolved through static inputs, fallback steps and checks as calls), not leaves at
their place.

Fixed (2026-11-29): plans are compared by the calls they make (``likeness.calls_view``):
every ``$<inputs.K>`` / ``${inputs.K}`` is read as the input it names, a fallback step is a
call of its own. Her values through ``inputs`` are 0.98 hers (0.8 with her ``why`` moved to
``plan.task``: her call survives by its params alone), her action as a fallback step 0.98,
over 0.5: she is a writer of each new plan, ``E_SELF_APPROVAL``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from advkit import Lab, cases, valid_runs
from test_round2_execution_kit import shared
from writerkit import OWN, PARAMS, WHY, Flow, her_drafts, reworked
from writerkit import her_cleanup as hers

VIDS = ["inputs", "inputs-legacy", "inputs-task", "fallback", "fallback-inputs", "move"]
BROKEN: dict[str, object] = {}


def _head(v: str, task: str | None = None, inputs: bool = False) -> str:
    text = (
        "plan:\n"
        f'  name: "{v} cleanup"\n'
        f'  task: "{task or v + ": clean the billing replica"}"\n'
        "  status: pending_approval\n"
    )
    if inputs:
        text += (
            "inputs:\n"
            + f'  tag: "{v}-her"\n'
            + "".join(f'  {k}: "{val}"\n' for k, val in PARAMS.items())
        )
    return text


def _refs(legacy: bool = False, indent: str = "      ") -> str:
    form = "${{inputs.{}}}" if legacy else "$<inputs.{}>"
    return "".join(f'{indent}{k}: "{form.format(k)}"\n' for k in ["tag", *PARAMS])


def _plain(v: str, indent: str = "      ") -> str:
    return f'{indent}tag: "{v}-her"\n' + "".join(
        f'{indent}{k}: "{val}"\n' for k, val in PARAMS.items()
    )


def wanted(v: str) -> str:
    tools = "available_tools:\n  - name: rec\n"
    if v in ("inputs", "inputs-legacy"):
        return (
            _head(v, inputs=True) + tools + "actions:\n  - id: 1\n    tool: rec\n"
            f'    why: "{WHY}"\n    params:\n' + _refs(v == "inputs-legacy")
        )
    if v == "inputs-task":
        return (
            _head(v, task=WHY, inputs=True) + tools + "actions:\n  - id: 1\n    tool: rec\n"
            '    why: "agent: run the cleanup described in the task"\n    params:\n' + _refs()
        )
    if v in ("fallback", "fallback-inputs"):
        params = _refs(indent="          ") if v == "fallback-inputs" else _plain(v, "          ")
        return (
            _head(v, inputs=v == "fallback-inputs")
            + "available_tools:\n  - name: boom\n  - name: rec\n"
            "actions:\n  - id: 1\n    tool: boom\n"
            '    why: "agent: probe the replica lock"\n'
            "    on_failure: fallback\n"
            "    fallback:\n"
            '      - id: "1.1"\n        tool: rec\n'
            f'        why: "{WHY}"\n        params:\n' + params
        )
    if v == "move":
        return hers(v) + '      region: "eu-west-1"\n'
    raise KeyError(v)


def _build(root: Path) -> Lab:
    boom = json.dumps([sys.executable, "-c", "import sys; sys.exit(1)"])
    lab = Lab(root, tools=f"boom: {{kind: exec, argv: {boom}}}\n")
    plans = {v: wanted(v) for v in VIDS}
    return reworked(
        Flow(lab), her_drafts(VIDS), {"own": OWN}, lambda f: f.rework(plans), [*VIDS, "own"]
    )


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r58-restructure", _build)


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))  # type: ignore[arg-type]
def test_her_restructured_plan_is_hers(lab: Lab, vid: str) -> None:
    assert lab.calls(f"{vid}-her") == [], lab.codes(vid)[:800]
    assert "E_SELF_APPROVAL" in lab.codes(vid), lab.codes(vid)[:1500]
    assert valid_runs(lab.report, vid) == [], valid_runs(lab.report, vid)  # type: ignore[attr-defined]


def test_the_agents_own_plan_runs(lab: Lab) -> None:
    assert len(lab.calls("own")) == 1, lab.codes("own")[:800]
    assert valid_runs(lab.report, "own"), lab.report  # type: ignore[attr-defined]
