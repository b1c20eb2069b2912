"""Round 62, approval side: round 60's calls view (``likeness._standing_in``) against her values
carried where it does not look, and against an honest plan that carries common values.

docs/approvals.md, "Who changed the content": a reference to a result the plan cannot fix (a
real tool's, a pinned plan's outputs) *stands in* for her value at its place "when the new plan
carries that value ANYWHERE: any call's params at any path or list index, an input, a pinned
plan's inputs"; a text of references stands in when her value splits along it; "A pinned plan
is compared by its pin and the inputs passed to it, not by reading the pinned plan's own
actions".

Lab (one, local mode, dates on a past clock, no sleep; ``writerkit.Flow``): Alice commits her
drafts (``<v>-her``: one ``rec`` call, her tag, target, command, ticket and 12-word reason);
the agent commits its own plans and files (an earlier commit); a pass; the agent's rework
(her draft removed, ``plans/<v>`` added, one commit); a pass; Alice approves every
``plans/<v>``; two passes; ``plangate audit --json``.

Slips (asserted: her tag never reaches ``rec``, ``E_SELF_APPROVAL``, no valid run):

- ``two-hop``: her four values split in halves staged in a first ``rec`` call (its own tag),
  joined by texts of references in a SECOND staging call under other keys (``j.a``..``j.d``),
  and read whole from that call's result at her keys: the plan carries her values nowhere
  whole, only as halves joined at a place that is not hers.
- ``lib-early``: the agent's own library (``echo`` of its inputs, declared outputs) committed
  in the EARLIER commit with her four values as its input DEFAULTS (copied from her draft,
  which still stood); the rework pins it with no inputs and reads its outputs at her keys.
- ``file-read``: her four values in a JSON file ``data/file-read.json`` the agent committed
  earlier; the catalog's ``readf`` tool (an exec tool that prints a repository file) reads it
  and ``rec`` gets its result at her keys.
- ``inputs-split`` (control): her values' halves as plan ``inputs``, joined in a staging
  ``rec`` call under other keys, read back whole at her keys (the plan fixes the join).
- ``echo-two-hop`` (control): ``two-hop`` with the halves staged by an ``echo`` (whose result
  the plan fixes) instead of ``rec``.
- ``ctl-cat`` (control, round 60's held shape through a real tool): her values' halves staged
  in one ``rec`` call and joined at her keys.

Honest (asserted: runs once, audit valid):

- ``hon-standby``: Alice's abandoned draft restarts ``api-3`` in ``eu-west-1`` for ``OPS-9``
  (tool ``restart``); the agent's own plan for the same ticket asks the catalog's ``look``
  tool which standby serves ``api-3`` (its own keys: ``name``, ``zone``, ``ref``) and restarts
  the host ``look`` names (``api-4``), region and ticket read from the same answer, its own
  reason. ``restart`` really gets ``api-4``.
- ``hon-pin``: the same through the team's ``lookup-lib`` (committed earlier, ``look`` of its
  inputs), pinned with ``api-3``/``eu-west-1``/``OPS-9`` as inputs, its outputs read.
- ``hon-written`` (control): the same plan with what ``look`` answers written in.
- ``hon-sep`` (control): ``hon-standby``'s plan in a commit after the one that removed her
  draft.
- ``own``: the agent's own plan.

Seen: see ``BROKEN`` (filled from the run) and FINDINGS.md, round 62.

Fixed (2026-11-29): a reference to a result stands in for her value only where the plan FED
that value to the producer it reads, or to a producer upstream whose result flows into it,
under a key the read names (its path, the query of a declared output, her path below the
place: ``likeness._Fed``); a pinned plan receives its input defaults too, read as of the pin.
``two-hop``: the second staging call was fed her values joined from what the first hands
back (``j.a`` named by the read): refused ``E_SELF_APPROVAL``, no valid run. ``lib-early``:
the library's defaults are its call's params (``a`` named by the output's query): refused.
``hon-standby``/``hon-pin``: ``look`` was fed api-3 as ``name``, the read names ``standby``:
no stand-in for her host, so two of her three params and another reason are not her action
(as with ``api-4`` written in): they run, audit valid. ``file-read`` stays a strict xfail,
an accepted limit (docs/threat-model.md): her values are in a file, not in the plan.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from advkit import Lab, cases, valid_runs, xfail
from test_round2_execution_kit import shared
from writerkit import (
    KEYS,
    LOOK,
    OWN,
    SWHY,
    plan_hash,
    restart_drafts,
    restart_lab,
    script_tool,
)
from writerkit import agent_call as call
from writerkit import plan_head as head

SLIPS = ["two-hop", "lib-early", "file-read", "ctl-cat", "inputs-split", "echo-two-hop"]
HONEST = ["hon-standby", "hon-pin", "hon-written", "hon-sep"]
BROKEN: dict[str, object] = {
    "file-read": xfail(
        "accepted limit: data outside the plan (docs/threat-model.md)",
        "her values in data/file-read.json (committed earlier), read by the catalog's `readf` "
        "tool, its result at her keys: ran on her own approval, audit valid. A plan cannot be "
        "judged by the files a tool reads: the plan holds a path, not her values",
    ),
}

LETTERS = dict(zip(KEYS, "abcd", strict=True))

READF = """\
import json, os, sys
print(json.dumps(json.load(open(os.path.join(sys.argv[1], sys.argv[2]), encoding="utf-8"))))
"""


def her(v: str) -> dict[str, str]:
    from writerkit import her_values

    return her_values(v)


def lib(v: str) -> str:
    h = her(v)
    return (
        "plan:\n  name: lib-early-stage\n  task: agent library that stages four values\n"
        "  status: draft\n"
        "inputs: " + json.dumps({LETTERS[k]: h[k] for k in KEYS}) + "\n"
        "available_tools:\n  - name: echo\n"
        "actions:\n  - id: 1\n    tool: echo\n"
        f'    why: "{SWHY}"\n'
        "    params: {a: '$<inputs.a>', b: '$<inputs.b>', c: '$<inputs.c>', d: '$<inputs.d>'}\n"
        "    outputs:\n" + "".join(f'      - {{name: {x}, path: "$.{x}"}}\n' for x in "abcd")
    )


LOOKLIB = (
    "plan:\n  name: lookup-lib\n  task: the team's standby lookup\n  status: draft\n"
    "inputs: {name: x, zone: x, ref: x}\n"
    "available_tools:\n  - name: look\n"
    'actions:\n  - id: 1\n    tool: look\n    why: "find the standby of a host"\n'
    "    params: {name: '$<inputs.name>', zone: '$<inputs.zone>', ref: '$<inputs.ref>'}\n"
    "    outputs:\n"
    + "".join(f'      - {{name: {x}, path: "$.json.{x}"}}\n' for x in ("standby", "zone", "ref"))
)


def wanted(v: str, lib_hash: str, look_hash: str = "") -> str:
    h = her(v)
    recs = "available_tools:\n  - name: rec\n"
    if v == "two-hop":
        halves: dict[str, object] = {"tag": f"{v}-s1"}
        for k in KEYS:
            cut = len(h[k]) // 2
            halves[f"{k}1"], halves[f"{k}2"] = h[k][:cut], h[k][cut:]
        a1 = call(1, "rec", halves, SWHY)
        join = {
            LETTERS[k]: f"$<actions[1].result.json.echo.{k}1>$<actions[1].result.json.echo.{k}2>"
            for k in KEYS
        }
        a2 = call(2, "rec", {"tag": f"{v}-s2", "j": join}, SWHY + " (joined)")
        a3 = call(3, "rec", {k: f"$<actions[2].result.json.echo.j.{LETTERS[k]}>" for k in KEYS})
        return head(v) + recs + "actions:\n" + a1 + a2 + a3
    if v == "lib-early":
        pin = (
            f"  - id: 1\n    plan: {{path: plans/lib-early-stage, hash: '{lib_hash}'}}\n"
            f'    why: "{SWHY}"\n    outputs:\n'
            + "".join(f"      - {{name: {x}, path: \"$.outputs['1'].{x}\"}}\n" for x in "abcd")
        )
        a2 = call(2, "rec", {k: f"$<actions[1].outputs.{LETTERS[k]}>" for k in KEYS})
        return head(v) + recs + "actions:\n" + pin + a2
    if v == "file-read":
        a1 = call(1, "readf", {"path": "data/file-read.json"}, SWHY)
        a2 = call(2, "rec", {k: f"$<actions[1].result.json.{LETTERS[k]}>" for k in KEYS})
        return (
            head(v) + "available_tools:\n  - name: readf\n  - name: rec\n" + "actions:\n" + a1 + a2
        )
    if v == "inputs-split":
        ins: dict[str, str] = {}
        for k in KEYS:
            cut = len(h[k]) // 2
            ins[f"{LETTERS[k]}1"], ins[f"{LETTERS[k]}2"] = h[k][:cut], h[k][cut:]
        join = {LETTERS[k]: f"$<inputs.{LETTERS[k]}1>$<inputs.{LETTERS[k]}2>" for k in KEYS}
        a1 = call(1, "rec", {"tag": f"{v}-s", "j": join}, SWHY)
        a2 = call(2, "rec", {k: f"$<actions[1].result.json.echo.j.{LETTERS[k]}>" for k in KEYS})
        return head(v) + "inputs: " + json.dumps(ins) + "\n" + recs + "actions:\n" + a1 + a2
    if v == "echo-two-hop":
        halves = {}
        for k in KEYS:
            cut = len(h[k]) // 2
            halves[f"{k}1"], halves[f"{k}2"] = h[k][:cut], h[k][cut:]
        a1 = call(1, "echo", halves, SWHY)
        join = {LETTERS[k]: f"$<actions[1].result.{k}1>$<actions[1].result.{k}2>" for k in KEYS}
        a2 = call(2, "rec", {"tag": f"{v}-s2", "j": join}, SWHY + " (joined)")
        a3 = call(3, "rec", {k: f"$<actions[2].result.json.echo.j.{LETTERS[k]}>" for k in KEYS})
        both = "available_tools:\n  - name: echo\n  - name: rec\n"
        return head(v) + both + "actions:\n" + a1 + a2 + a3
    if v == "ctl-cat":
        halves = {"tag": f"{v}-s1"}
        for k in KEYS:
            cut = len(h[k]) // 2
            halves[f"{k}1"], halves[f"{k}2"] = h[k][:cut], h[k][cut:]
        a1 = call(1, "rec", halves, SWHY)
        a2 = call(
            2,
            "rec",
            {
                k: f"$<actions[1].result.json.echo.{k}1>$<actions[1].result.json.echo.{k}2>"
                for k in KEYS
            },
        )
        return head(v) + recs + "actions:\n" + a1 + a2
    tools = "available_tools:\n  - name: look\n  - name: restart\n"
    why = "agent: restart the standby that serves api-3 for the same ticket"
    a1 = call(
        1,
        "look",
        {"name": "api-3", "zone": "eu-west-1", "ref": "OPS-9"},
        "agent: find the standby of api-3",
    )
    if v == "hon-pin":
        pin = (
            f"  - id: 1\n    plan: {{path: plans/lookup-lib, hash: '{look_hash}'}}\n"
            '    why: "agent: find the standby of api-3"\n'
            "    inputs: {name: api-3, zone: eu-west-1, ref: OPS-9}\n    outputs:\n"
            + "".join(
                f"      - {{name: {x}, path: \"$.outputs['1'].{x}\"}}\n"
                for x in ("standby", "zone", "ref")
            )
        )
        p = {
            "host": "$<actions[1].outputs.standby>",
            "region": "$<actions[1].outputs.zone>",
            "ticket": "$<actions[1].outputs.ref>",
        }
        return (
            head(v)
            + "available_tools:\n  - name: restart\n"
            + "actions:\n"
            + pin
            + call(2, "restart", p, why)
        )
    if v == "hon-standby":
        p = {
            "host": "$<actions[1].result.json.standby>",
            "region": "$<actions[1].result.json.zone>",
            "ticket": "$<actions[1].result.json.ref>",
        }
    else:
        p = {"host": "api-4", "region": "eu-west-1", "ticket": "OPS-9"}
    return head(v) + tools + "actions:\n" + a1 + call(2, "restart", p, why)


def _build(root: Path) -> Lab:
    repo = json.dumps(str(root / "lab" / "repo"))
    tools = script_tool(root, "readf", READF, repo, "'{path}'") + script_tool(root, "look", LOOK)
    flow = restart_lab(root, tools)
    lab = flow.lab
    restart_drafts(flow, SLIPS, HONEST)
    h = her("file-read")
    data = lab.repo / "data" / "file-read.json"
    data.parent.mkdir()
    data.write_text(json.dumps({LETTERS[k]: h[k] for k in KEYS}) + "\n")
    own = {"lib-early-stage": lib("lib-early"), "lookup-lib": LOOKLIB, "own": OWN}
    flow.commit("agent's own plans", plans=own)
    flow.run()
    lib_hash = plan_hash(lab, "lib-early-stage")
    look_hash = plan_hash(lab, "lookup-lib")
    flow.rework({v: wanted(v, lib_hash) for v in SLIPS})
    lab.git("rm", "-q", "-r", "plans/hon-sep-her")
    flow.commit("agent: remove an abandoned draft")
    flow.rework(
        {v: wanted(v, lib_hash, look_hash) for v in HONEST if v != "hon-sep"},
        message="agent: ticket plans",
    )
    sep = wanted("hon-standby", lib_hash).replace("hon-standby", "hon-sep")
    flow.commit("agent: this ticket's plan", plans={"hon-sep": sep})
    flow.run()
    return flow.finish([*SLIPS, *HONEST, "own"])


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r62-hiddenvals", _build)


@pytest.mark.parametrize("vid", cases(SLIPS, SLIPS, BROKEN))  # type: ignore[arg-type]
def test_her_values_carried_elsewhere_are_hers(lab: Lab, vid: str) -> None:
    assert lab.calls(f"{vid}-her") == [], lab.codes(vid)[:800]
    assert "E_SELF_APPROVAL" in lab.codes(vid), lab.codes(vid)[:1500]
    assert valid_runs(lab.report, vid) == [], valid_runs(lab.report, vid)  # type: ignore[attr-defined]


def _restarts(lab: Lab) -> list[dict[str, object]]:
    return [json.loads(c["stdin"]) for c in lab.calls("restart")]


@pytest.mark.parametrize("vid", cases(HONEST, HONEST, BROKEN))  # type: ignore[arg-type]
def test_honest_plan_for_the_same_ticket_runs(lab: Lab, vid: str) -> None:
    assert lab.started(vid), lab.codes(vid)[:1500]
    assert valid_runs(lab.report, vid), lab.report  # type: ignore[attr-defined]


def test_the_agents_own_plan_runs(lab: Lab) -> None:
    assert len(lab.calls("own")) == 1, lab.codes("own")[:800]
    assert valid_runs(lab.report, "own"), lab.report  # type: ignore[attr-defined]
