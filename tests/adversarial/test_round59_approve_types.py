"""Round 59, self-approval: an approver's call respelled with other JSON types that an exec
tool's argv renders the same (``replicas: 0`` -> ``replicas: "0"``, ``force: true`` ->
``force: "true"``).

docs/approvals.md, "Who changed the content": plans are compared as the hash reads them, as
leaves (a path and its canonical JSON value), by the calls they make; an action of hers
counts when its ``why`` survives or "everything else it says (its params, a pinned plan)"
is unchanged. docs/configuration.md: an exec tool's ``argv`` element ``{param}`` is filled
with the param (``"--replicas={replicas}"``): the command line is text, so the number ``0``
and the string ``"0"`` make the same command.

Lab: the bench's config plus ``scale`` (an exec tool recording its argv, like the docs'
``kubectl scale deploy/{name} --replicas={replicas}``, with ``--force={force}``). Alice
commits ``plans/<v>-her``: one ``scale`` call (her tag, ``name: billing-api``,
``replicas: 0``, ``force: true``, a 12-word reason). The agent then, in ONE commit that
removes her folder, adds ``plans/<v>``:

- ``ty-str``: her call with ``replicas`` and ``force`` quoted (strings), the agent's reason.
- ``ty-str-why``: the same with her reason kept.
- ``ty-list``: her ``hosts: ["db1", "db2"]`` written as the string ``'["db1","db2"]'`` (the
  compact JSON text argv renders a list as), the agent's reason; all else hers.
- ``ty-obj``: her ``opts: {drain: true}`` written as the string ``'{"drain":true}'``, the
  agent's reason; all else hers.
- ``ty-move`` (control): her plan moved with one param added: refused.
- ``own`` (control): the agent's own ``scale`` call: runs once on her approval.

A pass; Alice approves each; two passes; ``plangate audit --json``.

Asserted (the defence): her command line never reaches ``scale``, ``E_SELF_APPROVAL``, no
valid run.

Seen: ``ty-str``, ``ty-list`` and ``ty-obj`` broke: ``scale`` got ``ty-str-her
deploy/billing-api --replicas=0 --force=true ...`` (``--hosts=["db1","db2"]``,
``--opts={"drain":true}``: her list and mapping as the strings the argv renders them as) on
her own approval (``completed``, approver alice), the fresh-clone audit lists
the run valid. The exec tool renders an int and a bool as their JSON text (the agent's own
call got ``--replicas=2 --force=false --hosts=["w1"] --opts={"drain":false}``), so her command
line ran; the calls view compares
canonical JSON values, where ``"0"`` is not ``0``, and with another reason no leaf of her
action counts. Held: ``ty-str-why`` (her reason kept: ``E_SELF_APPROVAL``), ``ty-move``, ``own``
ran once. Fix direction: compare an exec call's params as the tool gets them (a scalar by the
text ``argv`` renders), or count a scalar respelled as another JSON type as unchanged.

Fixed (2026-11-29): a call's params are read as the tool receives them
(``likeness.received``): a string that is the compact JSON text of a number, boolean, null,
list or mapping (what an exec tool's argv renders that value as) is that value. The history
holds no config, so every tool's params are read so (the safe direction). Her command line
respelled is her call again: ``E_SELF_APPROVAL``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from advkit import Lab, cases, valid_runs
from test_round2_execution_kit import shared
from writerkit import Flow, her_drafts, reworked

VIDS = ["ty-str", "ty-str-why", "ty-list", "ty-obj", "ty-move"]
BROKEN: dict[str, object] = {}

WHY = "alice: scale the billing api to zero before the ledger migration tonight"
AWHY = "agent: apply the scaling change that the migration runbook asks for now"


OWN = (
    "plan:\n  name: own\n  task: t\n  status: pending_approval\n"
    "available_tools: [{name: scale}]\nactions:\n  - id: 1\n    tool: scale\n"
    "    why: agent's own\n    params: {tag: own, name: web, replicas: 2, force: false,"
    " hosts: [w1], opts: {drain: false}}\n"
)


def call(v: str, why: str, quoted: bool, extra: str = "", shape: str = "") -> str:
    q = '"' if quoted else ""
    hosts = '\'["db1","db2"]\'' if shape == "list" else '["db1", "db2"]'
    opts = "'{\"drain\":true}'" if shape == "obj" else "{drain: true}"
    return (
        f'plan:\n  name: "{v} scale"\n  task: "{v}: scale before the migration"\n'
        "  status: pending_approval\navailable_tools:\n  - name: scale\nactions:\n"
        f'  - id: 1\n    tool: scale\n    why: "{why}"\n    params:\n'
        f'      tag: "{v}-her"\n      name: "billing-api"\n'
        f"      replicas: {q}0{q}\n      force: {q}true{q}\n"
        f"      hosts: {hosts}\n      opts: {opts}\n" + extra
    )


def wanted(v: str) -> str:
    if v == "ty-str":
        return call(v, AWHY, True)
    if v == "ty-str-why":
        return call(v, WHY, True)
    if v == "ty-list":
        return call(v, AWHY, False, shape="list")
    if v == "ty-obj":
        return call(v, AWHY, False, shape="obj")
    if v == "ty-move":
        return call(v, WHY, False, '      region: "eu-west-1"\n')
    raise KeyError(v)


def _build(root: Path) -> Lab:
    rec = root / "rec.py"
    argv = json.dumps(
        [
            sys.executable,
            str(rec),
            "{tag}",
            "deploy/{name}",
            "--replicas={replicas}",
            "--force={force}",
            "--hosts={hosts}",
            "--opts={opts}",
        ]
    )
    log = json.dumps(str(root / "ran.log"))
    lab = Lab(root, tools=f"scale: {{kind: exec, argv: {argv}, env: {{REC_LOG: {log}}}}}\n")
    plans = {v: wanted(v) for v in VIDS}
    drafts = her_drafts(VIDS, lambda v: call(v, WHY, False))
    return reworked(Flow(lab), drafts, {"own": OWN}, lambda f: f.rework(plans), [*VIDS, "own"])


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r59-types", _build)


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))  # type: ignore[arg-type]
def test_her_call_respelled_with_other_types_is_hers(lab: Lab, vid: str) -> None:
    assert lab.calls(f"{vid}-her") == [], lab.codes(vid)[:800]
    assert "E_SELF_APPROVAL" in lab.codes(vid), lab.codes(vid)[:1500]
    assert valid_runs(lab.report, vid) == [], valid_runs(lab.report, vid)  # type: ignore[attr-defined]


def test_the_agents_own_plan_runs(lab: Lab) -> None:
    assert len(lab.calls("own")) == 1, lab.codes("own")[:800]
    assert valid_runs(lab.report, "own"), lab.report  # type: ignore[attr-defined]
