"""Round 60, self-approval: an approver's call carried into a new plan through a result the
round-59 calls view does not read: a declared ``outputs`` query, a REAL tool's result, a
pinned plan's result.

docs/approvals.md, "Who changed the content": each call is read "as what its tool RECEIVES":
``$<inputs...>``, ``$<plan.name>``/``$<plan.task>`` and "the result of an ``echo`` action
(``$<actions[1].result.p.k>`` reads what its params hold there)" are resolved; "a reference
to a real tool's output ... stays as written". The plan format has other ways to read a
value the plan itself wrote (docs/plan-format.md): an action's declared ``outputs`` (an
RFC 9535 query over its result, read as ``$<actions[N].outputs.NAME>``), the result of an
exec tool that answers with its own stdin (the bench's ``rec`` prints
``{"ok": true, "echo": <its params>}``, so its result holds ``json.echo``), and a pinned
plan's result (``{plan, hash, outputs: {"<id>": {...}}}``) whose inputs the parent passes.

Lab: the bench's config. Alice commits ``plans/<v>-her``: one ``rec`` call with her tag, a
12-word ``why`` and three params (target, command, ticket). The agent commits its own
library ``plans/lib-stage`` (status draft: an ``echo`` of four inputs ``a``..``d`` with one
declared output each). Then, in ONE agent commit that removes her folders, it adds
``plans/<v>`` whose last ``rec`` call receives her exact params, with its own 12-word
``why`` in every action:

- ``echo-out``: action 1 ``echo`` with ``p: {her params}`` declaring outputs ``$.p.<k>``;
  ``rec`` reads ``$<actions[1].outputs.<k>>``.
- ``echo-out-br``: the same with the outputs in bracket form ``$['p']['<k>']``.
- ``exec-res``: action 1 is ``rec`` itself (tag ``<v>-stage``) with ``p: {her params}``;
  action 2 ``rec`` reads ``$<actions[1].result.json.echo.p.<k>>``.
- ``exec-out``: the same, read through declared outputs ``$.json.echo.p.<k>``.
- ``exec-list``: action 1 ``rec`` with ``vals: [her 4 values]``; action 2 reads
  ``$<actions[1].result.json.echo.vals[i]>``.
- ``lib-in``: action 1 pins ``plans/lib-stage`` passing her four values as inputs
  ``a``..``d``; action 2 reads the nested outputs (parent outputs ``$.outputs['1'].<x>``).
- ``exec-why``: ``exec-res`` with HER 12-word ``why`` on the second ``rec`` call.
- ``exec-half``: only command and ticket staged in the first ``rec`` call; her tag and
  target written literally in the second.
- ``echo-cat`` (round 59's text filling, through two echo results): each value split in two
  halves over two ``echo`` actions, ``rec`` gets ``"$<actions[1].result.k>$<actions[2].result.k>"``.
- ``move`` (control): her plan moved with a param added: refused.
- ``own`` (control): the agent's own plan, approved by Alice: runs once.

A pass; Alice approves each new plan; two passes; ``plangate audit --json`` (fresh clone
with the lab's history, no config). Fake commit dates, no sleeping.

Asserted (the defence): her tag never reaches ``rec``, the plan is refused
``E_SELF_APPROVAL``, the audit lists no valid run.

Seen: ``echo-out``, ``echo-out-br``, ``exec-res``, ``exec-out``, ``exec-list``, ``exec-why``,
``exec-half`` and ``lib-in`` broke (``exec-why`` even with her reason kept word for word:
by the documented rule a kept ``why`` is at most half the evidence, the rest unread;
``exec-half`` with her tag and target written literally, half her params):
``rec`` got her exact tag, target, command and ticket on her own approval (``completed``,
approver alice) and the fresh-clone audit lists each run valid, no finding. The calls view
resolves an ``echo`` action's ``result`` paths (``echo-cat``, her halves joined in a text, held:
``E_SELF_APPROVAL``), but not the same values read through declared ``outputs`` queries, nor
values the plan itself wrote into a real tool's params (the exec result answers with them),
nor a pinned library's outputs fed by inputs the parent passes. Held: ``echo-cat``, ``move``
(``E_SELF_APPROVAL``); ``own`` ran once, valid.
Fix direction: resolve declared ``outputs`` of an action whose result the plan fixes (echo,
a pinned plan of echoes) as the query reads its params; and, since a real tool's result may
hand its params back, count her values found anywhere in the plan's params (any path, any
action, any pinned plan's inputs) as her call's evidence, not only at her keys.

Fixed (2026-11-29): the calls view evaluates an ``echo`` action's declared ``outputs`` on
its known result with the run's JSONPath engine (``echo-out``, ``echo-out-br``), and a
reference to a result the plan cannot fix (a real tool's, a pinned plan's outputs) stands in
for her value at its place when the new plan carries that value anywhere (any call's params,
an input, a pinned plan's inputs): ``exec-res``, ``exec-out``, ``exec-list``, ``exec-why``,
``exec-half`` and ``lib-in`` are 0.76-0.95 hers and refused ``E_SELF_APPROVAL``, the audit
lists no valid run. ``own`` still runs once, valid.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from advkit import Lab, cases, valid_runs
from test_round2_execution_kit import shared
from writerkit import KEYS, OWN, WHY, Flow, her_drafts, plan_hash, reworked
from writerkit import her_cleanup as hers
from writerkit import her_values as vals

VIDS = [
    "echo-out",
    "echo-out-br",
    "exec-res",
    "exec-out",
    "exec-list",
    "lib-in",
    "echo-cat",
    "exec-why",
    "exec-half",
    "move",
]
BROKEN: dict[str, object] = {}

AWHY = "agent: run the maintenance step that the ticket below describes in full detail"
SWHY = "agent: stage the values that the next step of this plan reads back"
LETTERS = dict(zip(KEYS, "abcd", strict=True))


def head(name: str) -> str:
    return f'plan:\n  name: "{name}"\n  task: "agent task {name}"\n  status: pending_approval\n'


def rec_action(i: int, params: dict[str, str], why: str = AWHY) -> str:
    return f'  - id: {i}\n    tool: rec\n    why: "{why}"\n    params:\n' + "".join(
        f"      {k}: '{val}'\n" for k, val in params.items()
    )


def outputs(paths: dict[str, str]) -> str:
    return "    outputs:\n" + "".join(
        f'      - {{name: {k}, path: "{p}"}}\n' for k, p in paths.items()
    )


LIB = (
    "plan:\n  name: lib-stage\n  task: agent library that stages four values\n  status: draft\n"
    "inputs: {a: x, b: x, c: x, d: x}\n"
    "available_tools:\n  - name: echo\n"
    "actions:\n  - id: 1\n    tool: echo\n"
    f'    why: "{SWHY}"\n'
    "    params: {a: '$<inputs.a>', b: '$<inputs.b>', c: '$<inputs.c>', d: '$<inputs.d>'}\n"
    + outputs({x: f"$.{x}" for x in "abcd"})
)


def wanted(v: str, lib_hash: str) -> str:
    her = vals(v)
    both = "available_tools:\n  - name: echo\n  - name: rec\n"
    recs = "available_tools:\n  - name: rec\n"
    nested = "    params:\n      p:\n" + "".join(f"        {k}: '{her[k]}'\n" for k in KEYS)
    if v in ("echo-out", "echo-out-br"):
        form = "$.p.{}" if v == "echo-out" else "$['p']['{}']"
        echo = f'  - id: 1\n    tool: echo\n    why: "{SWHY}"\n' + nested
        echo += outputs({k: form.format(k) for k in KEYS})
        params = {k: f"$<actions[1].outputs.{k}>" for k in KEYS}
        return head(v) + both + "actions:\n" + echo + rec_action(2, params)
    if v in ("exec-res", "exec-out", "exec-why", "exec-half"):
        staged = KEYS[2:] if v == "exec-half" else KEYS
        stage = f'  - id: 1\n    tool: rec\n    why: "{SWHY}"\n'
        stage += f"    params:\n      tag: '{v}-stage'\n      p:\n"
        stage += "".join(f"        {k}: '{her[k]}'\n" for k in staged)
        if v == "exec-why":
            params = {k: f"$<actions[1].result.json.echo.p.{k}>" for k in KEYS}
            return head(v) + recs + "actions:\n" + stage + rec_action(2, params, WHY)
        if v == "exec-half":
            params = {k: her[k] for k in KEYS[:2]}
            params.update({k: f"$<actions[1].result.json.echo.p.{k}>" for k in staged})
            return head(v) + recs + "actions:\n" + stage + rec_action(2, params)
        if v == "exec-out":
            stage += outputs({k: f"$.json.echo.p.{k}" for k in KEYS})
            params = {k: f"$<actions[1].outputs.{k}>" for k in KEYS}
        else:
            params = {k: f"$<actions[1].result.json.echo.p.{k}>" for k in KEYS}
        return head(v) + recs + "actions:\n" + stage + rec_action(2, params)
    if v == "exec-list":
        stage = f'  - id: 1\n    tool: rec\n    why: "{SWHY}"\n'
        stage += f"    params:\n      tag: '{v}-stage'\n      vals:\n"
        stage += "".join(f"        - '{her[k]}'\n" for k in KEYS)
        params = {k: f"$<actions[1].result.json.echo.vals[{i}]>" for i, k in enumerate(KEYS)}
        return head(v) + recs + "actions:\n" + stage + rec_action(2, params)
    if v == "lib-in":
        pin = (
            f"  - id: 1\n    plan: {{path: plans/lib-stage, hash: '{lib_hash}'}}\n"
            f'    why: "{SWHY}"\n    inputs:\n'
            + "".join(f"      {LETTERS[k]}: '{her[k]}'\n" for k in KEYS)
            + outputs({LETTERS[k]: f"$.outputs['1'].{LETTERS[k]}" for k in KEYS})
        )
        params = {k: f"$<actions[1].outputs.{LETTERS[k]}>" for k in KEYS}
        return head(v) + recs + "actions:\n" + pin + rec_action(2, params)
    if v == "echo-cat":
        out = ""
        for i, part in ((1, 0), (2, 1)):
            out += f'  - id: {i}\n    tool: echo\n    why: "{SWHY} (part {i})"\n    params:\n'
            for k in KEYS:
                cut = len(her[k]) // 2
                out += f"      {k}: '{her[k][:cut] if part == 0 else her[k][cut:]}'\n"
        params = {k: f"$<actions[1].result.{k}>$<actions[2].result.{k}>" for k in KEYS}
        return head(v) + both + "actions:\n" + out + rec_action(3, params)
    if v == "move":
        return hers(v) + '      region: "eu-west-1"\n'
    raise KeyError(v)


def _rework(flow: Flow) -> None:
    lib_hash = plan_hash(flow.lab, "lib-stage")
    flow.rework({v: wanted(v, lib_hash) for v in VIDS})


def _build(root: Path) -> Lab:
    own = {"lib-stage": LIB, "own": OWN}
    flow = Flow(Lab(root), past=True)
    return reworked(flow, her_drafts(VIDS), own, _rework, [*VIDS, "own"])


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r60-stageout", _build)


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))  # type: ignore[arg-type]
def test_her_call_read_back_from_a_result_is_hers(lab: Lab, vid: str) -> None:
    assert lab.calls(f"{vid}-her") == [], lab.codes(vid)[:800]
    assert "E_SELF_APPROVAL" in lab.codes(vid), lab.codes(vid)[:1500]
    assert valid_runs(lab.report, vid) == [], valid_runs(lab.report, vid)  # type: ignore[attr-defined]


def test_the_agents_own_plan_runs(lab: Lab) -> None:
    assert len(lab.calls("own")) == 1, lab.codes("own")[:800]
    assert valid_runs(lab.report, "own"), lab.report  # type: ignore[attr-defined]
