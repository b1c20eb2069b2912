"""Round 24, a withdrawn version brought back in another spelling (same hash, other bytes).

Round 23 made a version's rejection by its author (or an approver) veto that version
"wherever it is": a copy, a re-add, a pin (``E_VERSION_WITHDRAWN``). The hash is of the parsed
plan, so flow style, another key order, a comment or ``1.0`` for ``1`` give the same version
in other bytes. Config: the bench's. The agent writes ``plans/wd-<vid>`` (``plan_text``); the
controller freezes it; a withdrawal follows (a second passes between steps); then the agent
commits the same version respelled, ``pending_approval``; the controller freezes it; Alice
approves it (each build step checks the respelled copy hashes to the withdrawn version):

- ``exact``: the agent rejects; an exact copy (the frozen file's bytes with ``status:
  pending_approval``) at ``plans/wd-exact-copy`` (control: round 23's ``cp-author``);
- ``flow``: the agent rejects; the copy in flow style at ``plans/wd-flow-copy``;
- ``comment``: the agent rejects; the plan's text plus a comment line;
- ``reorder``: the agent rejects; the top-level keys in another order, block style;
- ``bob-flow``: Bob (an approver) rejects; flow copy;
- ``readd-flow``: the agent rejects, deletes the folder, and adds the version again in flow
  style at the same path;
- ``abort-flow``: Alice approves and, in the same push, the agent aborts; flow copy;
- ``pin-flow``: the agent rejects; a flow-style copy as a library (``draft``) at
  ``plans/wd-pin-flow-lib``, pinned by the agent's parent ``plans/wd-pin-flow-copy``; Alice
  approves the parent.

Asserted: ``rec`` never runs for the version (``wd-<vid>``), the copy (or parent) is not
started, and it is refused ``E_VERSION_WITHDRAWN``.

Results: every variant held.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from advkit import AGENT, ALICE, BOB, Lab, plan_text
from test_round2_execution_kit import shared

VIDS = ["exact", "flow", "comment", "reorder", "bob-flow", "readd-flow", "abort-flow", "pin-flow"]


def _flow(tag: str, status: str) -> str:
    return (
        f'actions: [{{id: 1, tool: rec, why: "record that variant {tag} ran", '
        f'params: {{tag: "{tag}"}}}}]\n'
        "available_tools: [{name: rec}]\n"
        f'plan: {{status: {status}, task: "attack variant {tag}", name: "{tag}"}}\n'
    )


def _reorder(tag: str) -> str:
    text = plan_text(tag)
    head, rest = text.split("available_tools:", 1)
    return "available_tools:" + rest + head


def _copy(lab: Lab, vid: str) -> str:
    tag = f"wd-{vid}"
    if vid == "exact":
        return lab.git("show", f"HEAD:plans/{tag}/PLAN.yml").replace(
            "status: rejected", "status: pending_approval"
        )
    if vid == "comment":
        return plan_text(tag) + "# the same plan, once more\n"
    if vid == "reorder":
        return _reorder(tag)
    return _flow(tag, "draft" if vid == "pin-flow" else "pending_approval")


def _hash(lab: Lab, slug: str) -> str:
    result = lab.cli("hash", "--config", str(lab.config), f"plans/{slug}", cwd=lab.repo)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout.strip().split()[-1]


def _target(vid: str) -> str:
    if vid == "readd-flow":
        return f"wd-{vid}"
    if vid == "pin-flow":
        return f"wd-{vid}-lib"
    return f"wd-{vid}-copy"


def _build(root: Path) -> Lab:
    lab = Lab(root)
    for v in VIDS:
        lab.write(f"wd-{v}", plan_text(f"wd-{v}"))
    lab.commit("agent adds plans", AGENT)
    lab.run()  # freeze
    time.sleep(1.05)
    digests = {v: _hash(lab, f"wd-{v}") for v in VIDS}
    for v in VIDS:
        if v == "abort-flow":
            lab.approve(f"wd-{v}", ALICE)
    for v in VIDS:
        if v == "abort-flow":
            lab.set_status(f"wd-{v}", "aborted")
            lab.commit("agent aborts", AGENT)
        elif v == "bob-flow":
            lab.set_status(f"wd-{v}", "rejected")
            lab.commit("bob rejects", BOB)
        else:
            lab.set_status(f"wd-{v}", "rejected")
            lab.commit(f"agent rejects {v}", AGENT)
    lab.run()
    time.sleep(1.05)
    lab.git("rm", "-q", "-r", "plans/wd-readd-flow")
    lab.commit("agent deletes readd-flow", AGENT)
    lab.run()
    time.sleep(1.05)
    for v in VIDS:
        lab.write(_target(v), _copy(lab, v))
        assert _hash(lab, _target(v)) == digests[v], v
    lab.commit("agent brings the versions back", AGENT)
    lib = _hash(lab, "wd-pin-flow-lib")
    lab.write(
        "wd-pin-flow-copy",
        'plan:\n  name: "wd-pin-flow-parent"\n  task: "parent"\n  status: pending_approval\n'
        "available_tools:\n  - name: rec\n"
        'actions:\n  - id: 1\n    tool: rec\n    why: parent\n    params: {tag: "wd-pin-flow-p"}\n'
        f'  - id: 2\n    plan: {{path: plans/wd-pin-flow-lib, hash: "{lib}"}}\n    why: lib\n',
    )
    lab.commit("agent adds a parent", AGENT)
    lab.run()  # freeze the copies
    time.sleep(1.05)
    for v in VIDS:
        slug = f"wd-{v}" if v == "readd-flow" else f"wd-{v}-copy"
        path = lab.repo / "plans" / slug / "PLAN.yml"
        text = path.read_text()
        assert text.count("status: pending_approval") == 1, (v, text)
        path.write_text(text.replace("status: pending_approval", "status: approved"))
    lab.commit("alice approves the copies", ALICE)
    lab.run()
    return lab


@pytest.fixture(scope="module")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Lab:
    return shared(tmp_path_factory, "r24-respelledveto", _build)


BROKEN: dict[str, pytest.MarkDecorator] = {}


@pytest.mark.parametrize(
    "vid", [pytest.param(v, id=v, marks=[BROKEN[v]] if v in BROKEN else []) for v in VIDS]
)
def test_a_withdrawn_version_respelled_stays_withdrawn(lab: Lab, vid: str) -> None:
    slug = f"wd-{vid}" if vid == "readd-flow" else f"wd-{vid}-copy"
    assert lab.plan(slug).get("frozen"), lab.codes(slug)
    assert lab.calls(f"wd-{vid}") == [], lab.codes(slug)
    assert not lab.started(slug), lab.codes(slug)
    assert lab.refusal(slug) == "E_VERSION_WITHDRAWN", lab.codes(slug)
