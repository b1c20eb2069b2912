"""Round 51, self-approval: an approver's plan written again by someone else in another
spelling that hashes the same (flow style, keys reordered, a comment, JSON), at a new path.

docs/approvals.md: "The index never forgets who produced a content: it keeps, per hash,
everyone who ever wrote that exact hashed content on any path". ``plangate hash`` gives the
same ``sha256`` for a YAML file in block style and the same mapping in flow style with its
keys in another order and a comment line.

Config: the bench's. Alice (an allowed approver) commits each ``plans/r/<vid>/PLAN.yml``
(``draft``: her plan). Then the agent, in its own commits:

- ``respell``: writes ``plans/r/<vid>2/PLAN.yml`` as the same mapping, lists in flow style,
  keys reordered, a comment on top, ``status: pending_approval`` (same hash).
- ``respell-json``: the same mapping as ``plans/r/<vid>2/PLAN.json``.
- ``respell-edit``: ``respell``, then a later commit edits ``plan.task`` in place (a new
  version; the folder's writers should still include Alice's by the first version).
- ``respell-pin``: ``respell`` as a library; the agent's parent ``plans/r/<vid>-parent``
  pins it by hash; Alice approves the parent.

The controller freezes; Alice approves each new plan (the parent for ``respell-pin``) in one
commit; two passes.

Asserted (the defence): ``E_SELF_APPROVAL``, ``rec`` never runs, the fresh-clone audit lists
no run.

Seen: all held (``E_SELF_APPROVAL``, no run, the audit lists none).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, Lab, plan_text
from test_round2_execution_kit import shared

CASES = ["respell", "respell-json", "respell-edit", "respell-pin"]
FOUND: dict[str, pytest.MarkDecorator] = {}
PARENT = """\
plan:
  name: "{vid}-parent"
  task: "run the library"
  status: pending_approval
actions:
  - id: 1
    plan: {{path: plans/r/{vid}2, hash: "{digest}"}}
    why: "run the child"
"""


def _flow(vid: str) -> str:
    return (
        "# reviewed copy\n"
        "plan:\n"
        f'  task: "attack variant {vid}"\n'
        f"  name: {vid}\n"
        "  status: pending_approval\n"
        "available_tools: [{name: rec}]\n"
        f'actions: [{{id: 1, tool: rec, why: "record that variant {vid} ran", '
        f'params: {{tag: "{vid}"}}}}]\n'
    )


def _json(vid: str) -> str:
    return json.dumps(
        {
            "actions": [
                {"id": 1, "tool": "rec", "why": f"record that variant {vid} ran",
                 "params": {"tag": vid}}
            ],
            "available_tools": [{"name": "rec"}],
            "plan": {"name": vid, "task": f"attack variant {vid}", "status": "pending_approval"},
        },
        indent=1,
    )  # fmt: skip


def _approved(vid: str) -> str:
    return f"r/{vid}-parent" if vid == "respell-pin" else f"r/{vid}2"


def _build(root: Path) -> Lab:
    lab = Lab(root)
    for vid in CASES:
        lab.write(f"r/{vid}", plan_text(vid, status="draft"))
    lab.commit("alice writes her plans", ALICE)
    lab.run()
    for vid in CASES:
        if vid == "respell-json":
            lab.write(f"r/{vid}2", _json(vid), filename="PLAN.json")
        else:
            lab.write(f"r/{vid}2", _flow(vid))
        lab.commit(f"agent writes {vid}2", AGENT)
    lab.run()
    file = lab.repo / "plans/r/respell-edit2/PLAN.yml"
    file.write_text(file.read_text().replace("attack variant", "tidied attack variant"))
    lab.commit("agent edits respell-edit2", AGENT)
    digest = lab.cli("hash", "plans/r/respell-pin2", cwd=lab.repo).stdout.strip().split()[-1]
    lab.write("r/respell-pin-parent", PARENT.format(vid="respell-pin", digest=digest))
    lab.commit("agent pins the library", AGENT)
    lab.run()
    time.sleep(1.05)
    for vid in CASES:
        lab.set_status(_approved(vid), "approved")
    lab.commit("alice approves", ALICE)
    lab.run()
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r51-respell", _build)


def _p(vids: list[str]) -> list[object]:
    return [pytest.param(v, id=v, marks=[FOUND[v]] if v in FOUND else []) for v in vids]


def test_the_respelled_copies_hash_the_same(lab: Lab) -> None:
    for vid in ["respell", "respell-json", "respell-pin"]:
        mine = lab.cli("hash", f"plans/r/{vid}", cwd=lab.repo).stdout.split()
        theirs = lab.cli("hash", f"plans/r/{vid}2", cwd=lab.repo).stdout.split()
        assert mine and mine[-1:] == theirs[-1:], (vid, mine, theirs)


@pytest.mark.parametrize("vid", _p(CASES))
def test_her_respelled_plan_is_not_hers_to_approve(lab: Lab, vid: str) -> None:
    slug = _approved(vid)
    assert lab.calls(vid) == [], lab.codes(slug)
    assert "E_SELF_APPROVAL" in lab.codes(slug), lab.codes(slug)


@pytest.mark.parametrize("vid", _p(CASES))
def test_the_audit_lists_no_run(lab: Lab, vid: str) -> None:
    _code, report = lab.audit()
    runs = [e for e in report.get("executions", []) if e.get("plan") == f"plans/{_approved(vid)}"]
    assert runs == [], runs
