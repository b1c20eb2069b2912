"""Round 59, self-approval through a pin: an approver's plan made into a LIBRARY (a plan
meant for nesting, ``status: draft``) in the commit that removes her draft, and a new
parent of the agent's that pins it.

docs/approvals.md, "Who changed the content": "A pinned plan is compared by its pin and the
inputs passed to it, not by reading the pinned plan's own actions (its writers count through
the pin, above)"; "approving a parent approves the pinned versions, so whoever committed any
file into a pinned plan's folder is a writer of the parent too"; "A plan's content keeps its
authors by hash"; "Each removed plan's writers go to EVERY plan the commit writes that is
made of it". So the library made of her plan is hers, and through the pin, the parent.

Lab: the bench's config. Alice commits ``plans/<v>-her`` (one ``rec`` action: her tag, a
12-word reason, three params). The agent then removes it and adds ``plans/lib-<v>``
(``status: draft``) and ``plans/<v>``, whose one action pins ``plans/lib-<v>`` at its hash
with the agent's own reason and passes no inputs:

- ``pin-moved``: the library is her plan ``git mv``'d (her exact hashed bytes).
- ``pin-edit``: the library is her plan moved with one param added.
- ``pin-defaults``: the library is the agent's generic ``rec`` call, ``$<inputs.K>`` params,
  whose input DEFAULTS are her four values (so the calls view reads her call).
- ``pin-later``: the library is her plan moved with one param added (one commit), the parent
  pinning it added by the agent in a later commit.
- ``own`` (control): the agent's own plan: runs once on her approval.

A pass; Alice approves each parent; two passes; ``plangate audit --json``.

Asserted (the defence): her tag never reaches ``rec``, the parent is refused
``E_SELF_APPROVAL``, the audit lists no valid run.

Seen: see BROKEN below.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from advkit import AGENT, Lab, cases, valid_runs
from test_round2_execution_kit import shared
from writerkit import KEYS, OWN, Flow, her_drafts, plan_hash, reworked
from writerkit import her_cleanup as ref_hers
from writerkit import her_values as vals

VIDS = ["pin-moved", "pin-edit", "pin-defaults", "pin-later"]
BROKEN: dict[str, object] = {}


def library(v: str) -> str:
    if v == "pin-defaults":
        her = vals(v)
        return (
            'plan:\n  name: "maintenance step"\n  task: "generic maintenance call"\n'
            "  status: draft\ninputs:\n"
            + "".join(f'  {k}: "{her[k]}"\n' for k in KEYS)
            + "available_tools:\n  - name: rec\nactions:\n  - id: 1\n    tool: rec\n"
            '    why: "agent: one maintenance call, values from the inputs"\n    params:\n'
            + "".join(f'      {k}: "$<inputs.{k}>"\n' for k in KEYS)
        )
    text = ref_hers(v).replace("status: pending_approval", "status: draft", 1)
    if v in ("pin-edit", "pin-later"):
        text += '      region: "eu-west-1"\n'
    return text


def parent(v: str, lib_hash: str) -> str:
    return (
        f'plan:\n  name: "{v} parent"\n  task: "agent: run the maintenance library"\n'
        "  status: pending_approval\nactions:\n  - id: 1\n"
        f'    plan: {{path: plans/lib-{v}, hash: "{lib_hash}"}}\n'
        '    why: "agent: run the maintenance library exactly as pinned here"\n'
    )


def _lib(lab: Lab, v: str) -> str:
    if v == "pin-moved":
        (lab.repo / "plans" / f"lib-{v}").mkdir(parents=True, exist_ok=True)
        lab.git("mv", f"plans/{v}-her/PLAN.yml", f"plans/lib-{v}/PLAN.yml")
        lab.set_status(f"lib-{v}", "draft")
    else:
        lab.git("rm", "-q", "-r", f"plans/{v}-her")
        lab.write(f"lib-{v}", library(v))
    return plan_hash(lab, f"lib-{v}")


def _rework(flow: Flow) -> None:
    hashes = {v: _lib(flow.lab, v) for v in VIDS}
    now = {v: parent(v, hashes[v]) for v in VIDS if v != "pin-later"}
    flow.commit("agent turns the drafts into libraries", AGENT, now)
    flow.run()
    later = {"pin-later": parent("pin-later", hashes["pin-later"])}
    flow.commit("agent: a plan that runs the library", AGENT, later)


def _build(root: Path) -> Lab:
    drafts = her_drafts(VIDS)
    return reworked(Flow(Lab(root)), drafts, {"own": OWN}, _rework, [*VIDS, "own"])


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r59-pinlib", _build)


@pytest.mark.parametrize("vid", cases(VIDS, VIDS, BROKEN))  # type: ignore[arg-type]
def test_her_plan_as_a_pinned_library_is_hers(lab: Lab, vid: str) -> None:
    assert lab.calls(f"{vid}-her") == [], lab.codes(vid)[:800]
    assert "E_SELF_APPROVAL" in lab.codes(vid), lab.codes(vid)[:1500]
    assert valid_runs(lab.report, vid) == [], valid_runs(lab.report, vid)  # type: ignore[attr-defined]


def test_the_agents_own_plan_runs(lab: Lab) -> None:
    assert len(lab.calls("own")) == 1, lab.codes("own")[:800]
    assert valid_runs(lab.report, "own"), lab.report  # type: ignore[attr-defined]
